// The Node client's overhead (test/bench/node_client.sh runs this): the same
// job done through the client and written by hand with pg, at each worker
// count, in the database PGDATABASE names (a fresh one with caio in it).
// The job: take the lease of an account, write to its row under the lease's
// token (a fenced write), release the lease.  Each worker has an account of
// its own, so that workers contend for the server, not for one lease.
//   client: locks.withLease(resource, holder, 30 s, fn) with fn's UPDATE
//           on the pool (withLease checks out a connection of its own for
//           the lease: acquire, the keep-alive, release);
//   by hand: caio_acquire, the UPDATE, caio_release, each a pool.query.
// Both run over one pg.Pool of 2 connections per worker.  Each run lasts
// BENCH_SECONDS (default 4) after a 1 s warm-up; the two alternate within a
// round, BENCH_ROUNDS rounds (default 3); the table shows each side's
// median ops/s and the median of the rounds' ratios (client / by hand).
import pg from 'pg';
import { LockManager } from 'caio';

const seconds = Number(process.env.BENCH_SECONDS || 4);
const rounds = Number(process.env.BENCH_ROUNDS || 3);
const workerCounts = (process.env.BENCH_WORKERS || '1 8').split(/\s+/).filter(Boolean).map(Number);
const UPDATE = 'UPDATE accounts SET balance = balance + 1, fence_token = $1 WHERE id = $2';

const setup = new pg.Client();
await setup.connect();
await setup.query(`CREATE TABLE accounts (id int PRIMARY KEY, balance bigint NOT NULL DEFAULT 0,
                                          fence_token bigint);
                   INSERT INTO accounts (id) SELECT generate_series(1, ${Math.max(...workerCounts)});
                   SELECT caio_protect('accounts', 'fence_token', 'id', 'account:');`);

// One operation of each kind, for worker w.
const kinds = {
  client: (pool, locks, w) => locks.withLease(`account:${w}`, `worker-${w}`, 30_000,
    (lease) => pool.query(UPDATE, [lease.token, w])),
  'by hand': async (pool, _locks, w) => {
    const { rows } = await pool.query(
      "SELECT token FROM caio_acquire($1, $2, '30 seconds')", [`account:${w}`, `worker-${w}`]);
    const token = rows[0].token;   // int8 as a string, node-postgres's default
    if (token === null) throw new Error('the lease is held by another');
    await pool.query(UPDATE, [token, w]);
    await pool.query('SELECT caio_release(ROW($1::text, $2::text, $3::bigint, NULL, NULL)::caio_lease)',
      [`account:${w}`, `worker-${w}`, token]);
  },
};

// ops/s of `kind` with `workers` workers for `ms` milliseconds.
async function measure(kind, workers, ms) {
  const pool = new pg.Pool({ max: 2 * workers });
  const locks = new LockManager(pool);
  let ops = 0;
  const until = performance.now() + ms;
  await Promise.all(Array.from({ length: workers }, async (_, i) => {
    while (performance.now() < until) {
      await kinds[kind](pool, locks, i + 1);
      ops++;
    }
  }));
  await pool.end();
  return ops / (ms / 1000);
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const lines = [];
for (const workers of workerCounts) {
  const results = { client: [], 'by hand': [] };
  const ratios = [];
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? ['by hand', 'client'] : ['client', 'by hand'];
    for (const kind of order) {
      await measure(kind, workers, 1000);                  // warm-up
      results[kind].push(await measure(kind, workers, seconds * 1000));
    }
    ratios.push(results.client.at(-1) / results['by hand'].at(-1));
  }
  lines.push([workers, median(results.client), median(results['by hand']), median(ratios)]);
}
const { rows: [check] } = await setup.query('SELECT sum(balance)::text AS writes FROM accounts');
await setup.end();

console.log(`caio Node client: withLease + a fenced UPDATE + release, against the same by hand with pg`);
console.log(`(${seconds} s a run, ${rounds} rounds, medians; node ${process.version}; ${check.writes} fenced writes in all)`);
console.log('| workers | client ops/s | by hand ops/s | client / by hand |');
console.log('|---:|---:|---:|---:|');
for (const [workers, client, byHand, ratio] of lines) {
  console.log(`| ${workers} | ${Math.round(client)} | ${Math.round(byHand)} | ${ratio.toFixed(2)} |`);
}
