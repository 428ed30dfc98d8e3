// Tokens are bigint end to end: above 2^53 (epoch 64: 64 * 2^47 + n) they
// round-trip exactly through acquire, renew, a fenced write, nonces, claims.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { FencingError, LockManager, claim, reserveNonce, translatingErrors } from 'caio';
import { freshPool, value } from './helpers.mjs';

let pool;
before(async () => {
  pool = await freshPool('caio_node_bigint');
  // Each call starts a new token epoch; the 64th's tokens start at 2^53 + 1.
  await pool.query('SELECT count(caio_start_token_epoch()) FROM generate_series(1, 64)');
  await pool.query(`CREATE TABLE items (id int PRIMARY KEY, note text, fence_token bigint);
                    INSERT INTO items VALUES (1, NULL, NULL);
                    SELECT caio_protect('items', 'fence_token', 'id', 'item:');
                    CREATE TABLE jobs (id int PRIMARY KEY, state text NOT NULL DEFAULT 'pending');
                    INSERT INTO jobs (id) VALUES (1), (2);
                    SELECT caio_claimable('jobs');`);
});
after(async () => { await pool.end(); });

test('a lease token above 2^53 round-trips exactly', async () => {
  const locks = new LockManager(pool);
  const lease = await locks.acquire('item:1', 'worker-a', 30_000);
  assert.equal(typeof lease.token, 'bigint');
  assert.equal(lease.token, 2n ** 53n + 1n);
  assert.ok(lease.token > BigInt(Number.MAX_SAFE_INTEGER) + 1n);
  assert.equal(lease.token.toString(),
    await value(pool, "SELECT token::text FROM caio_lease_of('item:1')"));
  const renewed = await locks.renew(lease, 30_000);
  assert.equal(renewed.token, lease.token);
  // The token as a JavaScript number is another token (2^53), refused.
  assert.notEqual(BigInt(Number(lease.token)), lease.token);
  await assert.rejects(translatingErrors(() => pool.query(
    'UPDATE items SET note = $1, fence_token = $2 WHERE id = 1', ['x', Number(lease.token)])),
    (e) => e instanceof FencingError);
  await translatingErrors(() => pool.query(
    'UPDATE items SET note = $1, fence_token = $2 WHERE id = 1', ['exact', lease.token]));
  assert.equal(await value(pool, 'SELECT fence_token::text FROM items WHERE id = 1'), lease.token.toString());
  const held = await locks.withLease('item:2', 'worker-a', 30_000, (l) => l.token);
  assert.equal(held, 2n ** 53n + 2n);
  assert.equal(await locks.release(renewed), true);
});

test('claim tokens and nonces come back as exact bigints', async () => {
  const rows = await claim(pool, 'jobs', 'worker-a', 30_000, { max: 2 });
  assert.equal(rows.length, 2);
  for (const row of rows) {
    assert.equal(typeof row.claim_token, 'bigint');
    assert.ok(row.claim_token > 2n ** 53n);
    assert.equal(row.claim_token.toString(),
      await value(pool, 'SELECT claim_token::text FROM jobs WHERE id = $1', [row.id]));
  }
  const nonce = await reserveNonce(pool, 1, '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed');
  assert.equal(nonce, 0n);
});
