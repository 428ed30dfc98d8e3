// Nonce and claim helpers run on the caller's client, inside its transaction.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  FencingError, LockManager, MissingTokenError, claim, markNonce, releaseNonce, reserveNonce,
  syncNonce, translatingErrors,
} from 'caio';
import { freshPool, value } from './helpers.mjs';

const ADDRESS = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
let pool;
before(async () => {
  pool = await freshPool('caio_node_claims');
  await pool.query(`CREATE SCHEMA "Work Queue";
                    CREATE TABLE "Work Queue"."Jobs ""A""" (id int PRIMARY KEY, priority int NOT NULL,
                                                            state text NOT NULL DEFAULT 'pending');
                    INSERT INTO "Work Queue"."Jobs ""A""" (id, priority)
                         SELECT g, g % 3 FROM generate_series(1, 12) g;
                    SELECT caio_claimable('"Work Queue"."Jobs ""A"""');
                    CREATE TABLE operations (id bigint PRIMARY KEY, state text NOT NULL DEFAULT 'pending');
                    INSERT INTO operations (id) SELECT generate_series(1, 5);
                    SELECT caio_claimable('operations');`);
});
after(async () => { await pool.end(); });

async function inTransaction(work) {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (e) {
    await client.query('ROLLBACK');
    throw e;
  } finally {
    client.release();
  }
}

test('nonces: reserve in a transaction (a rollback gives it back), mark, sync, release', async () => {
  const locks = new LockManager(pool);
  const lease = await locks.acquire('send:' + ADDRESS.toLowerCase(), 'worker-a', 30_000);
  await assert.rejects(inTransaction(async (client) => {
    assert.equal(await reserveNonce(client, 1, ADDRESS, lease), 0n);
    throw new Error('rolled back');
  }), /rolled back/);
  const nonce = await inTransaction((client) => reserveNonce(client, 1n, ADDRESS, lease));
  assert.equal(nonce, 0n, 'the rolled-back reservation gave nonce 0 back');
  await markNonce(pool, 1, ADDRESS, nonce, 'signed', { lease });
  await markNonce(pool, 1, ADDRESS, nonce, 'broadcast', { txHash: '0x' + 'ab'.repeat(32), lease });
  assert.equal(await value(pool, 'SELECT state || \' \' || tx_hash FROM caio_nonces WHERE nonce = 0'),
    'broadcast 0x' + 'ab'.repeat(32));
  assert.equal(await syncNonce(pool, 1, ADDRESS, 1, lease), 1n, "synced under the wallet's lease");
  assert.equal(await value(pool, 'SELECT state FROM caio_nonces WHERE nonce = 0'), 'mined');
  // Without a lease: reserve, hand back, and the next reservation reuses it.
  const other = '0x' + '1'.repeat(40);
  assert.equal(await reserveNonce(pool, 5, other), 0n);
  assert.equal(await reserveNonce(pool, 5, other, null), 1n);
  assert.equal(await releaseNonce(pool, 5, other, 0n), true);
  assert.equal(await reserveNonce(pool, 5, other), 0n);
  assert.equal(await syncNonce(pool, 5, other, 10n), 10n);
  await assert.rejects(reserveNonce(pool, 1, '0xnot-an-address'), (e) => e.code === '22P02');
  await assert.rejects(reserveNonce(pool, 2 ** 53, other), TypeError);
});

test('claim: max, filter, identifiers quoted, claim_token a bigint, fenced finish', async () => {
  const table = ['Work Queue', 'Jobs "A"'];
  const rows = await claim(pool, table, 'worker-a', 30_000, { max: 3, filter: 'priority = 0' });
  assert.equal(rows.length, 3);
  for (const row of rows) {
    assert.equal(row.priority, 0);
    assert.equal(typeof row.claim_token, 'bigint');
    assert.equal(row.claim_holder, 'worker-a');
    assert.ok(row.claim_expires_at instanceof Date);
    assert.ok(!('caio$claim_token' in row));
  }
  const [job] = rows;
  await translatingErrors(() => pool.query(
    `UPDATE "Work Queue"."Jobs ""A""" SET state = 'done', claim_holder = NULL, claim_expires_at = NULL,
            claim_token = $1 WHERE id = $2`, [job.claim_token, job.id]));
  await assert.rejects(translatingErrors(() => pool.query(
    `UPDATE "Work Queue"."Jobs ""A""" SET state = 'again', claim_token = $1 WHERE id = $2`,
    [job.claim_token, job.id])), FencingError);
  await assert.rejects(translatingErrors(() => pool.query(
    `UPDATE "Work Queue"."Jobs ""A""" SET state = 'x' WHERE id = $1`, [rows[1].id])), MissingTokenError);
  // One claim by default; none left that match: an empty list.
  assert.equal((await claim(pool, table, 'worker-b', 30_000, { filter: 'priority = 1' })).length, 1);
  const pending = "priority = 0 AND state = 'pending'";
  assert.equal((await claim(pool, table, 'worker-b', 30_000, { max: 10, filter: pending })).length, 1);
  assert.equal((await claim(pool, table, 'worker-b', 30_000, { max: 10, filter: pending })).length, 0);
  // A filter is a value (a parameter), never pasted: caio checks it.
  await assert.rejects(claim(pool, 'operations', 'w', 1000, { filter: "true); DROP TABLE operations; --" }),
    (e) => e.code === '42601');
  await assert.rejects(claim(pool, 'no such table', 'w', 1000), (e) => e.code === '42704');   // NULL::"no such table": no such type
  // int8 columns other than claim_token come as the client parses them.
  const [op] = await claim(pool, 'operations', 'worker-a', 30_000);
  assert.equal(op.id, '1');
  // Inside the caller's transaction: a rollback undoes the claim.
  await assert.rejects(inTransaction(async (client) => {
    assert.equal((await claim(client, 'operations', 'worker-b', 30_000, { max: 10 })).length, 4);
    throw new Error('rolled back');
  }), /rolled back/);
  assert.equal(await value(pool, "SELECT count(*)::int FROM operations WHERE claim_holder = 'worker-b'"), 0);
});

test('claim with orderBy (caio_claim\'s order_by)', async (t) => {
  const hasOrderBy = await value(pool,
    `SELECT 'order_by' = ANY (proargnames) FROM pg_proc WHERE proname = 'caio_claim'`);
  if (!hasOrderBy) {
    t.skip('this caio has no caio_claim(..., order_by): runs once the claim-order branch is merged');
    return;
  }
  await pool.query(`CREATE TABLE queue (id int PRIMARY KEY, priority int NOT NULL);
                    INSERT INTO queue SELECT g, (g * 7) % 5 FROM generate_series(1, 20) g;
                    SELECT caio_claimable('queue');`);
  const rows = await claim(pool, 'queue', 'worker-a', 30_000, { max: 5, orderBy: 'priority DESC, id' });
  assert.deepEqual(rows.map((r) => [r.priority, r.id]), [[4, 2], [4, 7], [4, 12], [4, 17], [3, 4]]);
  const next = await claim(pool, 'queue', 'worker-b', 30_000, { max: 2, orderBy: 'id DESC', filter: 'priority < 3' });
  assert.deepEqual(next.map((r) => r.id), [20, 18]);
  await assert.rejects(claim(pool, 'queue', 'w', 1000, { orderBy: 'id; DROP TABLE queue' }),
    (e) => e.code === '42601');
});
