// withLease keeps a short lease alive while fn runs, and releases it after.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { LeaseBusyError, LockManager } from 'caio';
import { freshPool, sleep } from './helpers.mjs';

let pool;
before(async () => { pool = await freshPool('caio_node_keepalive'); });
after(async () => { await pool.end(); });

test('a 1 s lease is held for 3 s while fn runs; another holder is refused meanwhile; released after', async () => {
  const locks = new LockManager(pool);
  const started = performance.now();
  let refusals = 0;
  const result = await locks.withLease('job:keepalive', 'worker-a', 1000, async (lease, signal) => {
    assert.equal(lease.token, 1n);
    while (performance.now() - started < 3000) {
      await sleep(250);
      assert.equal(await locks.acquire('job:keepalive', 'worker-b', 1000), null);
      refusals++;
      assert.equal(signal.aborted, false);
      const live = await locks.leaseOf('job:keepalive');
      assert.equal(live.holder, 'worker-a');
      assert.equal(live.token, 1n);
    }
    assert.equal(lease.token, 1n, 'renewing keeps the token');
    assert.ok(lease.expiresAt > lease.acquiredAt);
    return 'done';
  });
  assert.equal(result, 'done');
  assert.ok(performance.now() - started >= 3000);
  assert.ok(refusals >= 10, `${refusals} refusals`);
  assert.equal(await locks.leaseOf('job:keepalive'), null, 'released at the end');
  const b = await locks.acquire('job:keepalive', 'worker-b', 1000);
  assert.equal(b.token, 2n);
  assert.equal(await locks.release(b), true);
});

test('the lease is released when fn throws, and fn\'s error comes out', async () => {
  const locks = new LockManager(pool);
  await assert.rejects(
    locks.withLease('job:throws', 'worker-a', 5000, async () => { throw new Error('boom'); }),
    /boom/);
  assert.equal(await locks.leaseOf('job:throws'), null);
});

test('withLease throws LeaseBusyError without calling fn when another holds the lease', async () => {
  const locks = new LockManager(pool);
  const other = await locks.acquire('job:busy', 'worker-b', 30_000);
  let called = false;
  const started = performance.now();
  await assert.rejects(
    locks.withLease('job:busy', 'worker-a', 1000, () => { called = true; }, { waitMs: 300 }),
    (e) => e instanceof LeaseBusyError && e.resource === 'job:busy');
  assert.ok(performance.now() - started >= 250, 'waited for waitMs');
  assert.equal(called, false);
  assert.equal(await locks.release(other), true);
  // Released meanwhile: a waiting withLease gets it.
  const again = await locks.acquire('job:busy', 'worker-b', 30_000);
  setTimeout(() => void locks.release(again), 200);
  const token = await locks.withLease('job:busy', 'worker-a', 1000, (l) => l.token, { waitMs: 5000 });
  assert.ok(token > again.token);
});

test('lease() and Symbol.asyncDispose: held until disposed', async () => {
  const locks = new LockManager(pool);
  const held = await locks.lease('job:dispose', 'worker-a', 1000);
  assert.ok(held);
  assert.equal(typeof held[Symbol.asyncDispose], 'function');
  await sleep(1500);
  assert.equal(held.lost, false);
  assert.equal((await locks.leaseOf('job:dispose')).token, held.token);
  await held[Symbol.asyncDispose]();
  assert.equal(await locks.leaseOf('job:dispose'), null);
  assert.equal(await held.release(), true, 'releasing twice is harmless');
  assert.equal(await locks.lease('job:dispose', 'worker-b', 1000).then(async (h) => {
    await h.release(); return h.holder;
  }), 'worker-b');
});

test('a lease kept alive needs a pool', async () => {
  const client = await pool.connect();
  try {
    await assert.rejects(new LockManager(client).withLease('job:x', 'w', 1000, () => {}), TypeError);
  } finally {
    client.release();
  }
});
