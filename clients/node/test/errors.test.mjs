// caio's refusals come out as CaioError subclasses with the SQLSTATE, table,
// detail and the original error; anything else passes through unchanged.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import {
  CaioError, FencingError, LockManager, MissingTokenError, NotOnThisNodeError,
  VersionConflictError, markNonce, reserveNonce, translateError, translatingErrors,
} from 'caio';
import { freshPool } from './helpers.mjs';

let pool;
let locks;
before(async () => {
  pool = await freshPool('caio_node_errors');
  locks = new LockManager(pool);
  await pool.query(`CREATE TABLE transfers (id int PRIMARY KEY, wallet text NOT NULL, state text,
                                            fence_token bigint);
                    SELECT caio_protect('transfers', 'fence_token', 'wallet', 'send:');
                    CREATE TABLE accounts (id int PRIMARY KEY, balance int, version int NOT NULL);
                    SELECT caio_versioned('accounts', 'version');
                    INSERT INTO accounts VALUES (1, 100, 1);`);
});
after(async () => { await pool.end(); });

test('LK001: a write under a superseded token is a FencingError', async () => {
  const a = await locks.acquire('send:w1', 'worker-a', 30_000);
  await pool.query("INSERT INTO transfers VALUES (1, 'w1', 'new', $1)", [a.token]);
  await pool.query("SELECT caio_clock_advance('31 seconds')");
  const b = await locks.acquire('send:w1', 'worker-b', 30_000);
  await pool.query('SELECT caio_clock_reset()');
  const error = await translatingErrors(() => pool.query(
    "UPDATE transfers SET state = 'sent', fence_token = $1 WHERE id = 1", [a.token])).catch((e) => e);
  assert.ok(error instanceof FencingError);
  assert.ok(error instanceof CaioError);
  assert.ok(error instanceof Error);
  assert.equal(error.name, 'FencingError');
  assert.equal(error.sqlstate, 'LK001');
  assert.equal(error.table, 'transfers');
  assert.equal(error.schema, 'public');
  assert.match(error.message, /transfers/);
  assert.match(error.detail, new RegExp(`token ${a.token}.*${b.token}`));
  assert.ok(error.hint);
  assert.ok(error.original instanceof pg.DatabaseError);
  assert.equal(error.cause, error.original);
  assert.equal(error.original.code, 'LK001');
});

test('LK003: a write that names no token is a MissingTokenError', async () => {
  await assert.rejects(
    translatingErrors(() => pool.query("UPDATE transfers SET state = 'x' WHERE id = 1")),
    (e) => e instanceof MissingTokenError && e.sqlstate === 'LK003' && e.table === 'transfers');
});

test('LK002: a stale version is a VersionConflictError', async () => {
  await assert.rejects(
    translatingErrors(() => pool.query('UPDATE accounts SET balance = 0, version = 1 WHERE id = 1')),
    (e) => e instanceof VersionConflictError && e.sqlstate === 'LK002' && e.table === 'accounts'
      && /version/.test(e.detail));
});

test('LK004 (Citus: not on this node) is a NotOnThisNodeError', () => {
  // Only a Citus worker raises it; the mapping is the same for any pg error.
  const original = new pg.DatabaseError('caio\'s state does not live on this node', 0, 'error');
  original.code = 'LK004';
  const error = translateError(original);
  assert.ok(error instanceof NotOnThisNodeError && error instanceof CaioError);
  assert.equal(error.sqlstate, 'LK004');
  assert.equal(error.original, original);
});

test('the client\'s own calls raise the mapped errors', async () => {
  const address = '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed';
  const a = await locks.acquire('send:' + address, 'worker-a', 30_000);
  const nonce = await reserveNonce(pool, 1, address, a);
  await pool.query("SELECT caio_clock_advance('31 seconds')");
  await locks.acquire('send:' + address, 'worker-b', 30_000);
  await pool.query('SELECT caio_clock_reset()');
  await assert.rejects(markNonce(pool, 1, address, nonce, 'signed', { lease: a }),
    (e) => e instanceof FencingError && /not current/.test(e.message));
  await assert.rejects(markNonce(pool, 1, address, nonce, 'signed'),
    (e) => e instanceof MissingTokenError);
});

test('other errors pass through unchanged', async () => {
  const unique = await translatingErrors(() => pool.query(
    "INSERT INTO accounts VALUES (1, 0, 1)")).catch((e) => e);
  assert.ok(unique instanceof pg.DatabaseError);
  assert.ok(!(unique instanceof CaioError));
  assert.equal(unique.code, '23505');
  // caio's own argument checks keep PostgreSQL's codes.
  await assert.rejects(locks.acquire('send:x', 'worker-a', 0),
    (e) => e instanceof pg.DatabaseError && e.code === '22023');
  await assert.rejects(locks.acquire('', 'worker-a', 1000),
    (e) => e instanceof pg.DatabaseError && e.code === '22023');
  await assert.rejects(locks.acquire('send:x', 'worker-a', Number.NaN), TypeError);
  const plain = new Error('not from the server');
  assert.equal(translateError(plain), plain);
  assert.equal(translateError('a string'), 'a string');
  assert.equal(translateError(undefined), undefined);
});
