// What the client's modules share: the shapes of node-postgres objects it
// uses (structural, so that the typings need no @types/pg), how values go
// into SQL (always as parameters) and how results come back (as text, so
// that an application's own type parsers change nothing here).

import { translateError } from './errors.js';

/** A query as node-postgres takes it. */
export interface QueryArgs {
  text: string;
  values?: unknown[];
}

/** Anything that runs a query: a `pg.Pool`, a `pg.Client`, a `PoolClient`. */
export interface Queryable {
  query(config: QueryArgs): Promise<{ rows: any[] }>;
}

/** A client checked out of a pool (`pg.PoolClient`). */
export interface PoolClientLike extends Queryable {
  release(destroy?: Error | boolean): void;
  on(event: 'error', listener: (error: Error) => void): unknown;
  removeListener(event: 'error', listener: (error: Error) => void): unknown;
}

/** A pool of connections (`pg.Pool`). */
export interface PoolLike extends Queryable {
  connect(): Promise<PoolClientLike>;
}

/** The identity of a lease, as caio's functions take it. */
export interface LeaseRef {
  resource: string;
  holder: string;
  token: bigint;
}

/** Runs a query; caio's refusals come out as CaioError subclasses. */
export async function run(db: Queryable, text: string, values: unknown[]): Promise<any[]> {
  try {
    return (await db.query({ text, values })).rows;
  } catch (error) {
    throw translateError(error);
  }
}

/** SQL for an interval of $n milliseconds. */
export const interval = (n: number): string => `($${n}::float8 * interval '1 millisecond')`;

/** SQL for a caio_lease made of parameters $n (resource), $n+1 (holder) and
 * $n+2 (token); caio ignores the times of a lease argument. */
export const leaseArg = (n: number): string =>
  `ROW($${n}::text, $${n + 1}::text, $${n + 2}::bigint, NULL, NULL)::caio_lease`;

/** The parameters for leaseArg(). */
export const leaseValues = (lease: LeaseRef): unknown[] => [
  lease.resource,
  lease.holder,
  bigintParam('token', lease.token),
];

/** A duration in milliseconds, checked to be a finite number (caio itself
 * refuses zero, negative and absurd values with 22023). */
export function msParam(name: string, value: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new TypeError(`${name} must be a finite number of milliseconds, not ${String(value)}`);
  }
  return value;
}

/** An int8 as the text the server reads: a bigint, a safe integer, or the
 * digits of one. */
export function bigintParam(name: string, value: bigint | number | string): string {
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  if (typeof value === 'string' && /^-?[0-9]+$/.test(value)) return value;
  throw new TypeError(`${name} must be a bigint or a safe integer, not ${String(value)}`);
}

/** A quoted SQL identifier. */
export function quoteIdent(name: string): string {
  if (typeof name !== 'string' || name === '' || name.includes('\0')) {
    throw new TypeError(`not a valid SQL identifier: ${JSON.stringify(name)}`);
  }
  return '"' + name.replace(/"/g, '""') + '"';
}

/** SQL for a timestamptz column as milliseconds since the epoch, in text. */
export const epochMs = (column: string): string =>
  `(extract(epoch FROM ${column}) * 1000)::text`;

/** A Date from epochMs()'s text. */
export const dateOf = (text: string): Date => new Date(Math.floor(Number(text)));
