// A claims worker process for worker.test.mjs:
//   node claim_worker.mjs HOLDER TTL_MS [stale]
// Claims pending operations and finishes each under its claim token, in a
// transaction that also logs the finish.  A "stale" worker first claims a
// batch, waits until other workers have taken all of it over (its claims
// expired), and then tries to finish it: each finish must be refused.
// Prints {"holder", "finished", "refused"} as JSON.
import pg from 'pg';
import { FencingError, claim, translatingErrors } from 'caio';

const [holder, ttlArg, mode] = process.argv.slice(2);
const ttlMs = Number(ttlArg);
const pool = new pg.Pool({ max: 2 });
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
let finished = 0;
let refused = 0;

async function finish(job) {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await translatingErrors(async () => {
      await client.query(
        `UPDATE operations SET state = 'done', result = $1,
                claim_holder = NULL, claim_expires_at = NULL, claim_token = $2
          WHERE id = $3`, [holder, job.claim_token, job.id]);
      await client.query('INSERT INTO finishes (id, holder, token) VALUES ($1, $2, $3)',
        [job.id, holder, job.claim_token]);
    });
    await client.query('COMMIT');
    finished++;
  } catch (e) {
    await client.query('ROLLBACK');
    if (!(e instanceof FencingError)) throw e;
    refused++;                       // taken over: not ours any more
  } finally {
    client.release();
  }
}

if (mode === 'stale') {
  const jobs = await claim(pool, 'operations', holder, ttlMs, { max: 5, filter: "state = 'pending'" });
  const ids = jobs.map((j) => j.id);
  for (let i = 0; i < 200; i++) {   // until every row has a newer token (or 10 s)
    const { rows } = await pool.query(
      `SELECT count(*)::int AS n FROM operations o, unnest($1::bigint[], $2::bigint[]) AS m(id, token)
        WHERE o.id = m.id AND o.claim_token > m.token`,
      [ids, jobs.map((j) => j.claim_token)]);
    if (rows[0].n === ids.length) break;
    await sleep(50);
  }
  for (const job of jobs) await finish(job);
}
for (;;) {
  const jobs = await claim(pool, 'operations', holder, ttlMs, { max: 5, filter: "state = 'pending'" });
  if (jobs.length === 0) {
    // A row another worker holds under a live claim is not claimable yet,
    // but is not done either: stay until none is pending, so that the
    // stale worker's rows are taken over once its claims expire.
    const { rows } = await pool.query(`SELECT count(*)::int AS n FROM operations WHERE state = 'pending'`);
    if (rows[0].n === 0) break;
    await sleep(50);
    continue;
  }
  for (const job of jobs) await finish(job);
}
await pool.end();
console.log(JSON.stringify({ holder, finished, refused }));
