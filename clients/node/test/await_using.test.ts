// Compiled by tsc (tsconfig.test.json), which checks the typings against
// @types/pg as an application would use them and turns `await using` into
// what Node 20 runs: a held lease is released at the end of its block.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import {
  type Claimed, type Lease, CaioError, FencingError, HeldLease, LockManager, TestClock, claim,
  markNonce, reserveNonce, translateError,
} from 'caio';
// @ts-ignore: a JavaScript module without typings
import { freshPool } from '../../test/helpers.mjs';

let pool: pg.Pool;
before(async () => { pool = await freshPool('caio_node_using'); });
after(async () => { await pool.end(); });

test('await using releases a held lease at the end of the block', async () => {
  const locks = new LockManager(pool);
  let token: bigint | undefined;
  {
    await using held = await locks.lease('report:daily', 'worker-a', 1000);
    assert.ok(held instanceof HeldLease);
    token = held.token;
    const lease: Lease = held;             // a held lease is a Lease
    assert.equal((await locks.leaseOf('report:daily'))?.token, lease.token);
  }
  assert.equal(token, 1n);
  assert.equal(await locks.leaseOf('report:daily'), null);
  {
    await using busy = await locks.lease('report:daily', 'worker-b', 1000);
    await using refused = await locks.lease('report:daily', 'worker-c', 1000);
    assert.ok(busy);
    assert.equal(refused, null);           // `await using` takes null as well
  }
  assert.equal(await locks.leaseOf('report:daily'), null);
});

test('the typings fit node-postgres', async () => {
  const clock = new TestClock(pool);
  const now: Date = await clock.now();
  assert.ok(now instanceof Date);
  const client: pg.PoolClient = await pool.connect();
  try {
    await client.query('CREATE TABLE jobs (id int PRIMARY KEY, state text NOT NULL)');
    await client.query("INSERT INTO jobs VALUES (1, 'pending')");
    await client.query("SELECT caio_claimable('jobs')");
    type Job = { id: number; state: string; claim_token: string };
    const jobs: Claimed<Job>[] = await claim<Job>(client, 'jobs', 'worker-a', 1000, { max: 1 });
    const token: bigint = jobs[0].claim_token;
    assert.equal(token, 3n);               // after the two leases above
    const nonce: bigint = await reserveNonce(client, 1n, '0x' + 'a'.repeat(40));
    await markNonce(client, 1, '0x' + 'a'.repeat(40), nonce, 'released');
  } finally {
    client.release();
  }
  const e = translateError(Object.assign(new Error('x'), { code: 'LK001' }));
  assert.ok(e instanceof FencingError && e instanceof CaioError);
});
