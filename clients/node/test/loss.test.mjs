// A lease that is lost aborts withLease's signal: taken over (through the
// test clock), within one renewal period; the server gone (its renewal
// connection terminated, or no answer at all), before the ttl ends.  The
// storage refuses the late write in any case.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { FencingError, LeaseLostError, LockManager, TestClock, translatingErrors } from 'caio';
import { freshPool, sleep, value } from './helpers.mjs';

const DB = 'caio_node_loss';
let pool;
before(async () => {
  pool = await freshPool(DB);
  await pool.query(`CREATE TABLE jobs (id int PRIMARY KEY, result text, fence_token bigint);
                    INSERT INTO jobs VALUES (1, NULL, NULL);
                    SELECT caio_protect('jobs', 'fence_token', 'id', 'job:')`);
});
after(async () => { await pool.end(); });

/** Resolves to performance.now() when the signal aborts. */
const aborted = (signal) => new Promise((resolve) => {
  signal.addEventListener('abort', () => resolve(performance.now()), { once: true });
});

test('a takeover through the test clock aborts the signal within one renewal period', async (t) => {
  const locks = new LockManager(pool);
  const clock = new TestClock(pool);
  const ttl = 3000;
  const every = ttl / 3;
  try {
    await locks.withLease('job:1', 'worker-a', ttl, async (lease, signal) => {
      await pool.query('UPDATE jobs SET result = $1, fence_token = $2 WHERE id = 1', ['a', lease.token]);
      const abort = aborted(signal);
      await clock.advance(ttl + 1000);                 // worker-a "pauses" past its lease
      const b = await locks.acquire('job:1', 'worker-b', 60_000);
      const takenAt = performance.now();
      assert.ok(b.token > lease.token);
      const abortAt = await abort;
      t.diagnostic(`aborted ${Math.round(abortAt - takenAt)} ms after the takeover (renewal every ${every} ms)`);
      assert.ok(abortAt - takenAt <= every + 500,   // one renewal period, plus the renewal's round trip
        `aborted ${Math.round(abortAt - takenAt)} ms after the takeover (renewal period ${every} ms)`);
      assert.ok(signal.reason instanceof LeaseLostError);
      assert.equal(signal.reason.reason, 'lost');
      assert.equal(signal.reason.token, lease.token);
      // The storage refuses worker-a's late write whatever the client noticed.
      await assert.rejects(
        translatingErrors(() => pool.query(
          'UPDATE jobs SET result = $1, fence_token = $2 WHERE id = 1', ['late', lease.token])),
        (e) => e instanceof FencingError && e.sqlstate === 'LK001' && e.table === 'jobs');
      await pool.query('UPDATE jobs SET result = $1, fence_token = $2 WHERE id = 1', ['b', b.token]);
      await locks.release(b);
    }, { waitMs: 0 });
  } finally {
    await clock.reset();
  }
  assert.equal(await value(pool, 'SELECT result FROM jobs WHERE id = 1'), 'b');
});

test('the renewal connection terminated: the signal aborts before the ttl ends', async (t) => {
  // The lease's own pool, named so that its connection can be found.
  const leasePool = new pg.Pool({ database: DB, application_name: 'caio-node-renewal' });
  leasePool.on('error', () => {});   // as an application does: an idle client's error is the pool's
  const locks = new LockManager(leasePool);
  const ttl = 3000;
  try {
    await locks.withLease('job:terminate', 'worker-a', ttl, async (lease, signal) => {
      const abort = aborted(signal);
      await sleep(ttl / 3 + 300);                    // the first renewal checked its connection out
      const killedAt = performance.now();
      const killed = await value(pool, `SELECT count(pg_terminate_backend(pid))::int FROM pg_stat_activity
                                         WHERE application_name = 'caio-node-renewal'`);
      assert.equal(killed, 1);
      const abortAt = await abort;
      t.diagnostic(`aborted ${Math.round(abortAt - killedAt)} ms after pg_terminate_backend (ttl ${ttl} ms)`);
      assert.ok(abortAt - killedAt < ttl, `aborted after ${Math.round(abortAt - killedAt)} ms`);
      assert.equal(signal.reason.reason, 'failed');
    });
  } finally {
    await leasePool.end();
  }
  // Nobody released it (the connection was gone): it expires by itself.
  assert.equal((await new LockManager(pool).leaseOf('job:terminate'))?.holder, 'worker-a');
});

/** A TCP proxy to the server's Unix socket that can stop passing anything on
 * (a server that no longer answers) and be killed, with a pool through it. */
async function proxy() {
  const target = `${process.env.PGHOST}/.s.PGSQL.${process.env.PGPORT || 5432}`;
  const sockets = new Set();
  let frozen = false;
  const server = net.createServer((client) => {
    const upstream = net.connect(target);
    for (const [from, to] of [[client, upstream], [upstream, client]]) {
      sockets.add(from);
      from.on('data', (data) => { if (!frozen) to.write(data); });
      from.on('error', () => {});
      from.on('close', () => to.destroy());
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const pool = new pg.Pool({ database: DB, host: '127.0.0.1', port: server.address().port });
  pool.on('error', () => {});   // as an application does: an idle client's error is the pool's
  return {
    pool,
    freeze() { frozen = true; },
    kill() { server.close(); for (const s of sockets) s.destroy(); },
  };
}

test('a server that stops answering: the signal aborts before the ttl ends', async (t) => {
  const p = await proxy();
  const locks = new LockManager(p.pool);
  const ttl = 1500;
  let renewedUntil;
  try {
    const started = performance.now();
    const outcome = await locks.withLease('job:silent', 'worker-a', ttl, async (lease, signal) => {
      const abort = aborted(signal);
      await sleep(ttl / 3 + 200);                    // one renewal got through
      renewedUntil = lease.expiresAt;
      p.freeze();
      const frozenAt = performance.now();
      const abortAt = await abort;
      t.diagnostic(`aborted ${Math.round(abortAt - frozenAt)} ms after the freeze (ttl ${ttl} ms): ${signal.reason.reason}`);
      assert.equal(signal.reason.reason, 'unreachable');
      // The last renewal was sent before the freeze: its lease ends at most
      // a ttl later, and the signal must abort before that.
      assert.ok(abortAt - frozenAt < ttl, `aborted ${Math.round(abortAt - frozenAt)} ms after the freeze`);
      return 'stopped';
    });
    assert.equal(outcome, 'stopped');                // and the release did not hang
    assert.ok(performance.now() - started < 3 * ttl);
  } finally {
    p.kill();
    await p.pool.end();
  }
  assert.ok(renewedUntil);
});

test('a server that goes away (proxy killed): the signal aborts before the ttl ends', async (t) => {
  const p = await proxy();
  const locks = new LockManager(p.pool);
  const ttl = 3000;
  try {
    await locks.withLease('job:gone', 'worker-a', ttl, async (lease, signal) => {
      const abort = aborted(signal);
      await sleep(200);                              // before the first renewal: its connect fails
      const killedAt = performance.now();
      p.kill();
      const abortAt = await abort;
      t.diagnostic(`aborted ${Math.round(abortAt - killedAt)} ms after the kill (ttl ${ttl} ms): ${signal.reason.reason}`);
      assert.ok(abortAt - killedAt < ttl, `aborted ${Math.round(abortAt - killedAt)} ms after the kill`);
      assert.ok(['failed', 'unreachable'].includes(signal.reason.reason));
    });
  } finally {
    await p.pool.end();
  }
});
