// caio's client for node-postgres: leases kept alive while work runs,
// caio's refusals as errors, nonce and claim helpers.  See doc/clients.md.

export {
  CaioError,
  FencingError,
  VersionConflictError,
  MissingTokenError,
  NotOnThisNodeError,
  LeaseBusyError,
  LeaseLostError,
  translateError,
  translatingErrors,
  type PgErrorLike,
} from './errors.js';
export {
  LockManager,
  HeldLease,
  TestClock,
  type Lease,
  type AcquireOptions,
  type KeepAliveOptions,
} from './locks.js';
export {
  reserveNonce,
  markNonce,
  syncNonce,
  releaseNonce,
  type NonceState,
  type MarkOptions,
} from './nonces.js';
export { claim, type ClaimOptions, type Claimed } from './claims.js';
export type { Queryable, PoolLike, PoolClientLike, LeaseRef, QueryArgs } from './sql.js';
