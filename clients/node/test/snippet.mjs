// The lesson's snippet, verbatim but for its two constructors
// (new MemoryLockManager(clock) -> new LockManager(pool),
//  new FakeClock() -> new TestClock(pool)), in the database PGDATABASE names.
import pg from 'pg';
import { LockManager, TestClock } from 'caio';

const pool = new pg.Pool();
const clock = new TestClock(pool);
const locks = new LockManager(pool);

const a = await locks.acquire('send:0xabc', 'worker-a', 30_000); // A holds the lease
console.log(a?.token); // 1n
console.log(await locks.acquire('send:0xabc', 'worker-b', 30_000)); // null
await clock.advance(31_000); // A pauses longer than its lease
const b = await locks.acquire('send:0xabc', 'worker-b', 30_000); // B takes over
console.log(b?.token); // 2n
console.log(a && (await locks.renew(a, 30_000))); // null

await clock.reset();
await pool.end();
