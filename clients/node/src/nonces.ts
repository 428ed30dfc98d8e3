// Nonce reservation (EVM accounts): helpers that run on the caller's own
// client, inside its transaction, so that a reservation rolls back with the
// transaction that records what the nonce is for.

import {
  type LeaseRef,
  type Queryable,
  bigintParam,
  leaseArg,
  leaseValues,
  run,
} from './sql.js';

/** The states of a reservation that caio_nonce_mark moves it to. */
export type NonceState = 'signed' | 'broadcast' | 'mined' | 'dropped' | 'released';

type Int8 = bigint | number;

// A lease argument at $n, or NULL, with its parameters.
function optionalLease(n: number, lease: LeaseRef | null | undefined): [string, unknown[]] {
  return lease ? [leaseArg(n), leaseValues(lease)] : ['NULL::caio_lease', []];
}

/** Reserves the next nonce of (chainId, address), under `lease` when one is
 * given (its token must be the newest for its resource): the nonce, a
 * bigint.  Reserve in the transaction that records the payment: a rollback
 * gives the nonce back. */
export async function reserveNonce(client: Queryable, chainId: Int8, address: string,
  lease?: LeaseRef | null): Promise<bigint> {
  const [arg, values] = optionalLease(3, lease);
  const rows = await run(client,
    `SELECT caio_nonce_reserve($1::bigint, $2::text, ${arg})::text AS nonce`,
    [bigintParam('chainId', chainId), address, ...values]);
  return BigInt(rows[0].nonce);
}

export interface MarkOptions {
  /** The transaction's hash, once it is known. */
  txHash?: string | null;
  /** The lease the nonce was reserved under (needed then). */
  lease?: LeaseRef | null;
}

/** Moves a reservation forward: reserved → signed → broadcast → mined or
 * dropped; one never broadcast can be released. */
export async function markNonce(client: Queryable, chainId: Int8, address: string, nonce: Int8,
  state: NonceState, { txHash = null, lease = null }: MarkOptions = {}): Promise<void> {
  const [arg, values] = optionalLease(6, lease);
  await run(client,
    `SELECT caio_nonce_mark($1::bigint, $2::text, $3::bigint, $4::text, $5::text, ${arg})`,
    [bigintParam('chainId', chainId), address, bigintParam('nonce', nonce), state, txHash, ...values]);
}

/** Tells caio the chain's transaction count for the address (read from a
 * node, `eth_getTransactionCount(address, "latest")`): the next nonce that
 * reserveNonce() hands out.  A wallet whose nonces went under a lease is
 * synced under that lease (the current one on the same resource); without
 * one, only a superuser may sync it (caio 0.7.0). */
export async function syncNonce(client: Queryable, chainId: Int8, address: string,
  chainCount: Int8, lease?: LeaseRef | null): Promise<bigint> {
  // Without a lease, the three-argument form: a role granted only that one
  // (caio before 0.7.0) can still sync the wallets it may.
  const [arg, values] = lease ? [`, ${leaseArg(4)}`, leaseValues(lease)] : ['', []];
  const rows = await run(client,
    `SELECT caio_nonce_sync($1::bigint, $2::text, $3::bigint${arg})::text AS next`,
    [bigintParam('chainId', chainId), address, bigintParam('chainCount', chainCount), ...values]);
  return BigInt(rows[0].next);
}

/** Hands an unused nonce (reserved without a lease) back: true when it was
 * released. */
export async function releaseNonce(client: Queryable, chainId: Int8, address: string,
  nonce: Int8): Promise<boolean> {
  const rows = await run(client,
    'SELECT caio_nonce_release($1::bigint, $2::text, $3::bigint) AS released',
    [bigintParam('chainId', chainId), address, bigintParam('nonce', nonce)]);
  return rows[0].released === true;
}
