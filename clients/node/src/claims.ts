// Work claims: claim() runs caio_claim on the caller's own client (inside
// its transaction, if it has one open).

import { type Queryable, interval, msParam, quoteIdent, run } from './sql.js';

export interface ClaimOptions {
  /** How many rows to claim at most (default 1). */
  max?: number;
  /** Which rows may be claimed: one boolean SQL expression over the table's
   * columns, e.g. `"state = 'pending'"` (caio checks it; it runs with the
   * caller's privileges). */
  filter?: string | null;
  /** Which rows come first: one sort list over the table's columns, e.g.
   * `'priority DESC, run_at, id'` (caio 0.6.0's `order_by`). */
  orderBy?: string | null;
}

/** A claimed row: the table's columns, `claim_token` as a bigint. */
export type Claimed<Row extends object = Record<string, unknown>> =
  Omit<Row, 'claim_token'> & { claim_token: bigint };

// The claim token also as text, under a name no table column is expected to
// have, so that it is exact whatever parser the application set for int8.
const TOKEN = 'caio$claim_token';

/**
 * Claims up to `max` rows of `table` (prepared by caio_claimable) that
 * nobody holds a live claim on and that match `filter`, without waiting on
 * rows others are claiming; each row comes back with its new claim_token (a
 * bigint).  `table` is one identifier, quoted as it is (`'operations'`), or
 * `[schema, table]`.  Other int8 columns come back as the client parses
 * them (text, by default).
 */
export async function claim<Row extends object = Record<string, unknown>>(
  client: Queryable, table: string | readonly [string, string], holder: string, ttlMs: number,
  { max = 1, filter = null, orderBy = null }: ClaimOptions = {}): Promise<Claimed<Row>[]> {
  const name = typeof table === 'string'
    ? quoteIdent(table)
    : `${quoteIdent(table[0])}.${quoteIdent(table[1])}`;
  const values: unknown[] = [holder, msParam('ttlMs', ttlMs), max, filter];
  let order = '';
  if (orderBy !== null && orderBy !== undefined) {
    values.push(orderBy);
    order = ', order_by => $5::text';
  }
  const rows = await run(client,
    `SELECT c.*, c.claim_token::text AS "${TOKEN}"
       FROM caio_claim(NULL::${name}, $1::text, ${interval(2)}, $3::int, $4::text${order}) c`,
    values);
  return rows.map((row) => {
    const { [TOKEN]: token, ...rest } = row;
    return { ...rest, claim_token: BigInt(token) } as Claimed<Row>;
  });
}
