// withLease around work done in a transaction of a client checked out of
// the pool (the fourth security review's F4): a fenced write there holds
// caio's lock on the resource until the transaction ends, so a release on
// any other connection waits for a COMMIT that comes only after withLease
// returns.  With `client`, the release runs in that transaction.  Each test
// fails, rather than hangs until the lease's deadline, when the pattern
// takes more than a few seconds.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { LockManager, TestClock } from 'caio';
import { freshPool, value } from './helpers.mjs';

const LIMIT_MS = 5000;   // the pattern takes milliseconds; the leases last 30 s
let pool;
before(async () => {
  pool = await freshPool('caio_node_in_tx');
  await pool.query(`CREATE TABLE jobs (name text PRIMARY KEY, fence_token bigint);
                    SELECT caio_protect('jobs', 'fence_token', 'name', 'job:')`);
});
after(async () => { await pool.end(); });

/** What `work` resolves to; rejects when it takes more than LIMIT_MS, after
 * ending the sessions of the database that wait for a lock (so that the
 * test run ends). */
async function finishes(work) {
  const LATE = Symbol('late');
  let timer;
  const late = new Promise((resolve) => { timer = setTimeout(() => resolve(LATE), LIMIT_MS); });
  const outcome = await Promise.race([work(), late]).finally(() => clearTimeout(timer));
  if (outcome !== LATE) return outcome;
  const { rows } = await pool.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
    WHERE datname = current_database() AND wait_event_type = 'Lock'`);
  throw new assert.AssertionError({
    message: `the pattern did not end within ${LIMIT_MS} ms (${rows.length} sessions waiting for a lock)`,
  });
}

/** A client checked out of the pool, released after `fn` (destroyed if it
 * failed, so that a broken transaction goes no further). */
async function withClient(fn) {
  const client = await pool.connect();
  let broken;
  try {
    return await fn(client);
  } catch (error) {
    broken = error;
    throw error;
  } finally {
    client.release(broken);
  }
}

test('a fenced write in the client\'s transaction: released there, the lease ends at COMMIT', async () => {
  const locks = new LockManager(pool);
  await withClient((client) => finishes(async () => {
    await client.query('BEGIN');
    const token = await locks.withLease('job:a', 'worker-a', 30_000, async (lease) => {
      await client.query('INSERT INTO jobs VALUES ($1, $2)', ['a', lease.token]);
      return lease.token;
    }, { client });
    const live = await locks.leaseOf('job:a');          // not committed yet: still held
    assert.equal(live?.token, token);
    assert.equal(await locks.acquire('job:a', 'worker-b', 30_000), null);
    await client.query('COMMIT');
    assert.equal(await locks.leaseOf('job:a'), null);
    const b = await locks.acquire('job:a', 'worker-b', 30_000);
    assert.ok(b.token > token);
    assert.equal(await value(pool, "SELECT fence_token::text FROM jobs WHERE name = 'a'"), String(token));
  }));
});

test('lease() with client: release() in the transaction; a ROLLBACK leaves the lease to expire', async () => {
  const locks = new LockManager(pool);
  const clock = new TestClock(pool);
  try {
    await withClient((client) => finishes(async () => {
      await client.query('BEGIN');
      const held = await locks.lease('job:b', 'worker-a', 30_000, { client });
      await client.query('INSERT INTO jobs VALUES ($1, $2)', ['b', held.token]);
      assert.equal(await held.release(), true);
      await client.query('ROLLBACK');
      const live = await locks.leaseOf('job:b');       // the release rolled back too
      assert.equal(live?.token, held.token);
      assert.equal(await locks.acquire('job:b', 'worker-b', 30_000), null);
      assert.equal((await locks.acquire('job:b', 'worker-a', 30_000)).token, held.token);
      await clock.advance(31_000);
      assert.ok((await locks.acquire('job:b', 'worker-b', 30_000)).token > held.token);
    }));
  } finally {
    await clock.reset();
  }
  assert.equal(await value(pool, "SELECT count(*)::int FROM jobs WHERE name = 'b'"), 0);
});

test('a failed transaction refuses the release: it runs elsewhere, at once; fn\'s error comes out', async () => {
  const locks = new LockManager(pool);
  await withClient((client) => finishes(async () => {
    await client.query('BEGIN');
    await assert.rejects(locks.withLease('job:c', 'worker-a', 30_000, async (lease) => {
      await client.query('INSERT INTO jobs VALUES ($1, $2)', ['c', lease.token]);
      await client.query('SELECT 1 / 0');
    }, { client }), /division by zero/);
    assert.equal(await locks.leaseOf('job:c'), null);   // released before the ROLLBACK
    await client.query('ROLLBACK');
  }));
});
