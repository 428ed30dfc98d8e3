/**
 * caio's refusals as JavaScript errors.
 *
 * A refusal is an ordinary PostgreSQL error with one of caio's SQLSTATEs
 * (LK001 to LK004).  {@link translateError} turns a `pg` error with one of
 * those codes into the matching {@link CaioError} subclass and returns any
 * other value unchanged; {@link translatingErrors} does the same around the
 * application's own queries.  The client's own calls (acquire, renew,
 * release, the nonce and claim helpers) translate their errors themselves.
 */

/** The fields of a node-postgres `DatabaseError` that caio's errors keep. */
export interface PgErrorLike {
  message: string;
  code?: string;
  table?: string;
  schema?: string;
  detail?: string;
  hint?: string;
}

/** A refusal from caio: `sqlstate`, `table` (and `schema`), `detail` and
 * `hint` come from the server's error; `original` (also `cause`) is the
 * node-postgres error it was made from. */
export class CaioError extends Error {
  readonly sqlstate: string;
  readonly table: string | undefined;
  readonly schema: string | undefined;
  readonly detail: string | undefined;
  readonly hint: string | undefined;
  readonly original: PgErrorLike;

  constructor(original: PgErrorLike) {
    super(original.message, { cause: original });
    this.name = new.target.name;
    this.sqlstate = original.code ?? '';
    this.table = original.table;
    this.schema = original.schema;
    this.detail = original.detail;
    this.hint = original.hint;
    this.original = original;
  }
}

/** LK001: the token is not the newest for its resource: the lease or claim
 * was superseded or released.  Stop working on the resource. */
export class FencingError extends CaioError {}

/** LK002: a versioned row changed since it was read.  Re-read, retry. */
export class VersionConflictError extends CaioError {}

/** LK003: a write to a protected row named no token (a bug in the code path
 * that wrote it). */
export class MissingTokenError extends CaioError {}

/** LK004: (Citus) caio's state does not live on this node: call caio on the
 * coordinator. */
export class NotOnThisNodeError extends CaioError {}

const ERRORS: Record<string, new (original: PgErrorLike) => CaioError> = {
  LK001: FencingError,
  LK002: VersionConflictError,
  LK003: MissingTokenError,
  LK004: NotOnThisNodeError,
};

function isPgError(error: unknown): error is PgErrorLike & { code: string } {
  return (
    error instanceof Error &&
    typeof (error as { code?: unknown }).code === 'string' &&
    !(error instanceof CaioError)
  );
}

/** The {@link CaioError} that a node-postgres error with one of caio's
 * SQLSTATEs stands for; anything else is returned as it is. */
export function translateError(error: unknown): unknown {
  if (isPgError(error)) {
    const Class = ERRORS[error.code];
    if (Class) return new Class(error);
  }
  return error;
}

/** Runs `work` (the application's own queries) and rethrows caio's refusals
 * as {@link CaioError} subclasses; other errors pass through unchanged:
 *
 *     await translatingErrors(() =>
 *       client.query('UPDATE transfers SET state = $1, fence_token = $2 WHERE id = $3',
 *                    ['sent', lease.token, id]));
 */
export async function translatingErrors<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw translateError(error);
  }
}

/** withLease() could not acquire the lease within `waitMs`: another holder
 * has it.  `fn` was not called. */
export class LeaseBusyError extends Error {
  readonly resource: string;
  readonly holder: string;

  constructor(resource: string, holder: string) {
    super(`another holder has the lease on "${resource}"`);
    this.name = 'LeaseBusyError';
    this.resource = resource;
    this.holder = holder;
  }
}

/** Why a held lease's signal was aborted: `reason` is `'lost'` (a renewal
 * returned null: the lease expired, was released or taken over),
 * `'failed'` (a renewal failed: `cause` has its error) or `'unreachable'`
 * (no renewal reached the server before the lease would have expired).
 * In each case the lease can no longer be known to be held. */
export class LeaseLostError extends Error {
  readonly resource: string;
  readonly holder: string;
  readonly token: bigint;
  readonly reason: 'lost' | 'failed' | 'unreachable';

  constructor(
    lease: { resource: string; holder: string; token: bigint },
    reason: 'lost' | 'failed' | 'unreachable',
    cause?: unknown,
  ) {
    const why = {
      lost: 'it expired, was released or was taken over',
      failed: 'a renewal failed',
      unreachable: 'no renewal reached the server before it would expire',
    }[reason];
    super(`lease on "${lease.resource}" (token ${lease.token}) is no longer held: ${why}`,
      cause === undefined ? undefined : { cause });
    this.name = 'LeaseLostError';
    this.resource = lease.resource;
    this.holder = lease.holder;
    this.token = lease.token;
    this.reason = reason;
  }
}
