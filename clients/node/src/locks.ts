// Leases: LockManager (acquire, renew, release, and a lease kept alive while
// work runs: lease() and withLease()) and TestClock, over caio's functions.

import { LeaseBusyError, LeaseLostError } from './errors.js';
import {
  type PoolClientLike,
  type PoolLike,
  type Queryable,
  dateOf,
  epochMs,
  interval,
  leaseArg,
  leaseValues,
  msParam,
  run,
} from './sql.js';

/** A lease as caio grants it.  `token` is a bigint: caio's tokens pass 2^47
 * after a failover epoch, and a JavaScript number is exact only to 2^53. */
export interface Lease {
  readonly resource: string;
  readonly holder: string;
  readonly token: bigint;
  readonly acquiredAt: Date;
  readonly expiresAt: Date;
}

export interface AcquireOptions {
  /** How long to wait for another holder's lease to end (default 0: try once). */
  waitMs?: number;
}

export interface KeepAliveOptions extends AcquireOptions {
  /** How often the lease is renewed while it is held (default: a third of
   * the ttl). */
  renewEveryMs?: number;
  /** The client whose transaction the work under the lease runs in (a
   * `PoolClient` after `BEGIN`): the lease is released on it, inside that
   * transaction, so that it ends when the work commits (and expires by
   * itself if the transaction rolls back; a failed transaction holds no
   * lock any more, and the release then runs elsewhere).  A write under the
   * lease holds caio's lock on the resource until its transaction ends: a
   * release on any other connection would wait for a COMMIT that comes only
   * after it. */
  client?: Queryable;
}

// The lease's columns, all as text (so that an application's own type
// parsers change nothing), and how long the lease has left, counted from
// when the statement reached the server: the time the statement took (a
// wait) plus the time from now to the expiry, both by the server's clock.
const LEASE_COLUMNS = `l.resource, l.holder, l.token::text AS token,
  ${epochMs('l.acquired_at')} AS acquired_at, ${epochMs('l.expires_at')} AS expires_at,
  (extract(epoch FROM (l.expires_at - caio_now()) + (clock_timestamp() - statement_timestamp()))
   * 1000)::text AS left_ms`;

interface Granted {
  lease: Lease;
  leftMs: number;
}

function granted(rows: any[]): Granted | null {
  const row = rows[0];
  if (!row || row.token === null) return null;
  return {
    lease: {
      resource: row.resource,
      holder: row.holder,
      token: BigInt(row.token),
      acquiredAt: dateOf(row.acquired_at),
      expiresAt: dateOf(row.expires_at),
    },
    leftMs: Number(row.left_ms),
  };
}

async function acquireOn(
  db: Queryable, resource: string, holder: string, ttlMs: number, waitMs: number,
): Promise<Granted | null> {
  return granted(await run(db,
    `SELECT ${LEASE_COLUMNS} FROM caio_acquire($1::text, $2::text, ${interval(3)}, ${interval(4)}) l`,
    [resource, holder, msParam('ttlMs', ttlMs), msParam('waitMs', waitMs)]));
}

async function renewOn(db: Queryable, lease: Lease, ttlMs: number): Promise<Granted | null> {
  return granted(await run(db,
    `SELECT ${LEASE_COLUMNS} FROM caio_renew(${leaseArg(1)}, ${interval(4)}) l`,
    [...leaseValues(lease), msParam('ttlMs', ttlMs)]));
}

async function releaseOn(db: Queryable, lease: Lease): Promise<boolean> {
  const rows = await run(db, `SELECT caio_release(${leaseArg(1)}) AS released`, leaseValues(lease));
  return rows[0].released === true;
}

const now = (): number => performance.now();

function isPool(db: Queryable): db is PoolLike {
  // A pg.Pool has connect() and counts its clients; a pg.Client's connect()
  // connects the client itself.
  return typeof (db as PoolLike).connect === 'function' && 'totalCount' in db;
}

/**
 * Leases over caio, through a `pg.Pool` (or any client for acquire, renew
 * and release alone):
 *
 *     const locks = new LockManager(pool);
 *     const a = await locks.acquire('send:0xabc', 'worker-a', 30_000); // a.token === 1n
 */
export class LockManager {
  readonly pool: Queryable;

  constructor(pool: Queryable) {
    this.pool = pool;
  }

  /** The new lease, or null when another holder has a live one and `waitMs`
   * ran out.  The same holder acquiring again gets its own lease back (same
   * token) with the expiry extended. */
  async acquire(resource: string, holder: string, ttlMs: number,
    { waitMs = 0 }: AcquireOptions = {}): Promise<Lease | null> {
    return (await acquireOn(this.pool, resource, holder, ttlMs, waitMs))?.lease ?? null;
  }

  /** The lease with its new expiry, or null when it is lost (expired,
   * released or superseded). */
  async renew(lease: Lease, ttlMs: number): Promise<Lease | null> {
    return (await renewOn(this.pool, lease, ttlMs))?.lease ?? null;
  }

  /** True when this released the lease, false when it was already lost. */
  async release(lease: Lease): Promise<boolean> {
    return releaseOn(this.pool, lease);
  }

  /** The live lease of a resource, or null. */
  async leaseOf(resource: string): Promise<Lease | null> {
    return granted(await run(this.pool,
      `SELECT ${LEASE_COLUMNS} FROM caio_lease_of($1::text) l`, [resource]))?.lease ?? null;
  }

  /**
   * Acquires a lease and keeps it alive until it is released: a
   * {@link HeldLease}, or null when another holder has the lease.  The
   * renewals run on a connection of their own, checked out of the pool when
   * the first one is due (a lease released sooner needs no second
   * connection) and kept until the lease is released.  Works with
   * `await using`:
   *
   *     await using held = await locks.lease('report:daily', 'worker-a', 10_000);
   *     if (held) await work(held.signal);
   */
  async lease(resource: string, holder: string, ttlMs: number,
    { waitMs = 0, renewEveryMs, client }: KeepAliveOptions = {}): Promise<HeldLease | null> {
    const pool = this.pool;
    if (!isPool(pool)) {
      throw new TypeError('a lease kept alive needs a pg.Pool: its renewals use a connection of their own');
    }
    msParam('ttlMs', ttlMs);
    const every = renewEveryMs === undefined ? ttlMs / 3 : msParam('renewEveryMs', renewEveryMs);
    const sentAt = now();
    const got = await acquireOn(pool, resource, holder, ttlMs, waitMs);
    if (got === null) return null;
    return new HeldLease(pool, got.lease, ttlMs, every, sentAt + got.leftMs, client);
  }

  /**
   * Acquires the lease, calls `fn(lease, signal)`, renews the lease in the
   * background while `fn` runs (on a connection of its own, every third of
   * the ttl), aborts `signal` as soon as a renewal returns null, fails, or
   * cannot reach the server before the lease would expire, and releases the
   * lease at the end, also when `fn` throws.  Resolves to what `fn` returns;
   * throws {@link LeaseBusyError} (without calling `fn`) when another holder
   * kept the lease for `waitMs`.
   */
  async withLease<T>(resource: string, holder: string, ttlMs: number,
    fn: (lease: HeldLease, signal: AbortSignal) => T | Promise<T>,
    options: KeepAliveOptions = {}): Promise<T> {
    const held = await this.lease(resource, holder, ttlMs, options);
    if (held === null) throw new LeaseBusyError(resource, holder);
    let result: T;
    try {
      result = await fn(held, held.signal);
    } catch (error) {
      await held.release().catch(() => false);   // fn's error is the one to see
      throw error;
    }
    await held.release();
    return result;
  }
}

/**
 * A lease kept alive in the background: it is itself a {@link Lease} (the
 * latest renewal's), with the `signal` that aborts when the lease can no
 * longer be known to be held, with a {@link LeaseLostError} as its reason.
 */
export class HeldLease implements Lease {
  /** Aborted when a renewal returns null, fails, or does not reach the
   * server before the lease would expire. */
  readonly signal: AbortSignal;
  #controller = new AbortController();
  #pool: PoolLike;
  #client: PoolClientLike | null = null;   // the renewals' connection, once checked out
  #work: Queryable | undefined;            // the client whose transaction gets the release
  #lease: Lease;
  #ttlMs: number;
  #everyMs: number;
  #deadline: number;              // performance.now() by which the lease has surely expired
  #renewTimer: NodeJS.Timeout | undefined;
  #deadlineTimer: NodeJS.Timeout | undefined;
  #renewing: Promise<void> | undefined;
  #released: Promise<boolean> | undefined;
  #wake: (() => void) | undefined;   // ends a wait of release() when the signal aborts
  #onError = (error: Error): void => this.#lose('failed', error);

  /** @internal Use LockManager.lease() or withLease(). */
  constructor(pool: PoolLike, lease: Lease, ttlMs: number, everyMs: number, deadline: number,
    work?: Queryable) {
    this.signal = this.#controller.signal;
    this.#pool = pool;
    this.#work = work;
    this.#lease = lease;
    this.#ttlMs = ttlMs;
    this.#everyMs = everyMs;
    this.#deadline = deadline;
    this.#armDeadline();
    this.#schedule();
  }

  get resource(): string { return this.#lease.resource; }
  get holder(): string { return this.#lease.holder; }
  get token(): bigint { return this.#lease.token; }
  get acquiredAt(): Date { return this.#lease.acquiredAt; }
  get expiresAt(): Date { return this.#lease.expiresAt; }
  /** The lease as of its latest renewal, as a plain object. */
  get lease(): Lease { return this.#lease; }
  /** True once the signal is aborted. */
  get lost(): boolean { return this.signal.aborted; }

  #schedule(): void {
    this.#renewTimer = setTimeout(() => { this.#renewing = this.#renew(); }, this.#everyMs);
  }

  #armDeadline(): void {
    clearTimeout(this.#deadlineTimer);
    this.#deadlineTimer = setTimeout(() => this.#lose('unreachable'),
      Math.max(0, this.#deadline - now()));
  }

  // The renewals' own connection, checked out of the pool the first time.
  async #connection(): Promise<PoolClientLike> {
    if (this.#client !== null) return this.#client;
    const client = await this.#pool.connect();
    if (this.signal.aborted || this.#released !== undefined) {
      client.release();           // too late: nothing to renew any more
      throw new Error('caio: the lease ended while its connection was being made');
    }
    client.on('error', this.#onError);
    this.#client = client;
    return client;
  }

  async #renew(): Promise<void> {
    if (this.signal.aborted || this.#released !== undefined) return;
    const sentAt = now();
    let got: Granted | null;
    try {
      got = await renewOn(await this.#connection(), this.#lease, this.#ttlMs);
    } catch (error) {
      this.#lose('failed', error);
      return;
    }
    if (this.signal.aborted || this.#released !== undefined) return;
    if (got === null) {
      this.#lose('lost');
      return;
    }
    this.#lease = got.lease;
    this.#deadline = sentAt + got.leftMs;
    this.#armDeadline();
    this.#schedule();
  }

  // The lease can no longer be known to be held: abort the signal, stop
  // renewing, and let go of the connection (a broken one is destroyed).
  #lose(reason: 'lost' | 'failed' | 'unreachable', cause?: unknown): void {
    if (this.signal.aborted) return;
    this.#controller.abort(new LeaseLostError(this.#lease, reason, cause));
    this.#wake?.();
    this.#giveBack(reason === 'lost' ? undefined : new Error(`caio: lease connection ${reason}`));
  }

  #giveBack(broken?: Error): void {
    clearTimeout(this.#renewTimer);
    clearTimeout(this.#deadlineTimer);
    const client = this.#client;
    if (client === null) return;
    this.#client = null;
    if (broken) {
      client.release(broken);   // destroyed: a query still waiting on it fails
      // pg may still report the broken connection's end: keep listening.
    } else {
      client.removeListener('error', this.#onError);
      client.release();
    }
  }

  /**
   * Stops renewing and releases the lease: true when this released it,
   * false when it was already lost (or the server could not be reached
   * before the lease would expire by itself).  Releasing twice is harmless.
   */
  release(): Promise<boolean> {
    this.#released ??= this.#release();
    return this.#released;
  }

  // Resolves to what `work` resolves to, or to undefined as soon as the
  // signal aborts (the deadline passed, the connection broke).
  #untilAborted<T>(work: Promise<T>): Promise<T | undefined> {
    if (this.signal.aborted) return Promise.resolve(undefined);
    return new Promise<T | undefined>((resolve, reject) => {
      this.#wake = () => resolve(undefined);
      work.then(resolve, reject).finally(() => { this.#wake = undefined; });
    });
  }

  async #release(): Promise<boolean> {
    clearTimeout(this.#renewTimer);
    // A renewal under way ends first (or the deadline ends it).
    if (this.#renewing) await this.#untilAborted(this.#renewing);
    if (this.signal.aborted) return false;
    // The deadline stays armed: a server that does not answer before the
    // lease would expire anyway aborts the signal and ends the wait.
    const released = this.#releaseSomewhere();
    try {
      const outcome = await this.#untilAborted(released);
      if (outcome === undefined) {
        released.catch(() => undefined);
        return false;
      }
      this.#giveBack();
      return outcome;
    } catch (error) {
      if (this.signal.aborted) return false;   // the connection broke meanwhile
      this.#giveBack(error instanceof Error ? error : new Error(String(error)));
      throw error;
    }
  }

  // On the work's client, in its transaction, when there is one: a write
  // under the lease there holds caio's lock until that transaction ends.  A
  // transaction that failed refuses it (25P02), but the server let go of its
  // locks at the error, so another connection can release at once.
  async #releaseSomewhere(): Promise<boolean> {
    if (this.#work !== undefined) {
      try {
        return await releaseOn(this.#work, this.#lease);
      } catch (error) {
        if ((error as { code?: unknown }).code !== '25P02') throw error;
      }
    }
    return releaseOn(this.#client ?? this.#pool, this.#lease);
  }

  /** `await using held = await locks.lease(...)` releases it at the end of
   * the block. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.release();
  }
}

/**
 * caio's test clock (`caio_clock_set`, `caio_clock_advance`,
 * `caio_clock_reset`): it moves the clock every caio function in the
 * database reads, for every session at once.  Superusers, or a role granted
 * the functions.  Each call resolves to the clock's new time.
 */
export class TestClock {
  readonly pool: Queryable;

  constructor(pool: Queryable) {
    this.pool = pool;
  }

  async #at(sql: string, values: unknown[]): Promise<Date> {
    const rows = await run(this.pool, `SELECT ${epochMs(sql)} AS at`, values);
    return dateOf(rows[0].at);
  }

  /** Freezes caio's clock at `date`. */
  set(date: Date): Promise<Date> {
    if (!(date instanceof Date) || Number.isNaN(date.getTime())) {
      throw new TypeError('TestClock.set needs a valid Date');
    }
    return this.#at('caio_clock_set($1::timestamptz)', [date.toISOString()]);
  }

  /** Moves caio's clock forward by `ms` milliseconds (and freezes it there). */
  advance(ms: number): Promise<Date> {
    return this.#at(`caio_clock_advance(${interval(1)})`, [msParam('ms', ms)]);
  }

  /** Lets caio's clock run with the server's again. */
  reset(): Promise<Date> {
    return this.#at('caio_clock_reset()', []);
  }

  /** caio's clock now. */
  now(): Promise<Date> {
    return this.#at('caio_now()', []);
  }
}
