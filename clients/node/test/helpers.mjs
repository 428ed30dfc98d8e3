// What the tests share: a fresh database with caio for each test file, on
// the server the PG* environment variables name (test/pgenv.sh's).
import { spawn } from 'node:child_process';
import pg from 'pg';

/** Drops and creates the database `name` with caio in it; its name. */
export async function freshDatabase(name) {
  const admin = new pg.Client({ database: process.env.PGDATABASE || 'postgres' });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const client = new pg.Client({ database: name });
  await client.connect();
  await client.query('SET client_min_messages = warning');
  await client.query('CREATE EXTENSION caio');
  await client.end();
  return name;
}

/** A pool on a fresh database. */
export async function freshPool(name, options = {}) {
  await freshDatabase(name);
  return new pg.Pool({ database: name, ...options });
}

/** One value of a one-row query. */
export async function value(db, text, values = []) {
  const { rows } = await db.query({ text, values, rowMode: 'array' });
  return rows[0][0];
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs `node file args...` with PGDATABASE set to `database`: its exit
 * code, stdout and stderr. */
export function runNode(file, args, database, cwd) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [file, ...args], {
      cwd,
      env: { ...process.env, PGDATABASE: database },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
