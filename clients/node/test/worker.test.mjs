// A worker loop with claim() and a fenced finish, in several processes at
// once, one of them finishing late after its claims were taken over: no
// operation is finished twice, every one is finished, the late finishes
// are refused.  Checked in the database afterwards.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { freshPool, runNode } from './helpers.mjs';

const DB = 'caio_node_workers';
const OPERATIONS = 300;
let pool;
before(async () => {
  pool = await freshPool(DB);
  await pool.query(`CREATE TABLE operations (id bigint PRIMARY KEY, state text NOT NULL DEFAULT 'pending',
                                             result text);
                    INSERT INTO operations (id) SELECT generate_series(1, ${OPERATIONS});
                    SELECT caio_claimable('operations');
                    CREATE INDEX ON operations (id) WHERE state = 'pending';
                    CREATE TABLE finishes (id bigint NOT NULL, holder text NOT NULL, token bigint NOT NULL,
                                           at timestamptz NOT NULL DEFAULT clock_timestamp());`);
});
after(async () => { await pool.end(); });

test('several worker processes: every operation finished exactly once, late finishes refused', async (t) => {
  const worker = new URL('claim_worker.mjs', import.meta.url).pathname;
  // The stale worker's first claim must come before the others start: had
  // they claimed every pending row first, it would have had nothing to
  // finish late (a CI run saw that: 0 finished, 0 refused).
  const stale = runNode(worker, ['stale-worker', '300', 'stale'], DB);
  for (let i = 0; ; i++) {
    const { rows: [{ n }] } = await pool.query(
      "SELECT count(*)::int AS n FROM operations WHERE claim_holder = 'stale-worker'");
    if (n === 5) break;
    assert.ok(i < 1000, 'the stale worker claimed its 5 rows within 20 s');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const runs = [stale, ...[1, 2, 3, 4].map((n) => runNode(worker, [`worker-${n}`, '300'], DB))];
  const results = [];
  for (const { code, stdout, stderr } of await Promise.all(runs)) {
    assert.equal(code, 0, stderr);
    results.push(JSON.parse(stdout));
  }
  t.diagnostic(results.map((r) => `${r.holder}: ${r.finished} finished, ${r.refused} refused`).join('; '));
  const finished = results.reduce((n, r) => n + r.finished, 0);
  assert.equal(finished, OPERATIONS);
  assert.ok(results[0].refused >= 5, 'the stale worker\'s 5 late finishes were refused');
  const { rows: [check] } = await pool.query(`
    SELECT (SELECT count(*) FROM operations WHERE state = 'done')::int AS done,
           (SELECT count(*) FROM finishes)::int AS logged,
           (SELECT count(*) FROM (SELECT id FROM finishes GROUP BY id HAVING count(*) > 1) d)::int AS twice,
           (SELECT count(*) FROM operations o JOIN finishes f USING (id)
             WHERE o.result IS DISTINCT FROM f.holder OR o.claim_token <> f.token)::int AS mismatched,
           (SELECT count(*) FROM operations WHERE claim_holder IS NOT NULL)::int AS still_claimed`);
  assert.deepEqual(check, { done: OPERATIONS, logged: OPERATIONS, twice: 0, mismatched: 0, still_claimed: 0 });
});
