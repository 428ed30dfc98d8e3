// The Node.js programs of doc/payments.md and doc/clients.md, run as the
// docs show them: each ```js block whose opening comment names its file
// (`// ... node NAME.mjs`) is a program, and is followed by a block that starts with the
// command (`$ node NAME.mjs ARGS`) and shows what it prints.  Each runs in
// a fresh database set up by the doc's own SQL block for it, and must print
// exactly that.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { test } from 'node:test';
import pg from 'pg';
import { freshDatabase, runNode } from './helpers.mjs';

const root = new URL('../../../', import.meta.url);
const work = new URL('../dist/doc-examples/', import.meta.url);   // inside the package: 'caio' resolves

// Which SQL block of its doc sets up the database for a program (none: a
// database with caio alone).
const SETUP = {
  'claims_worker.mjs': /CREATE TABLE operations/,
  'hot_wallet.mjs': /CREATE TABLE transfers/,
  'report.mjs': /CREATE TABLE reports/,
};

function examples(doc) {
  const text = readFileSync(new URL(doc, root), 'utf8');
  const blocks = [...text.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map((m) => ({ lang: m[1], body: m[2] }));
  const found = [];
  blocks.forEach((block, i) => {
    // A program names itself in its opening comment; other blocks are fragments.
    const opening = block.body.match(/^(\/\/.*\n)+/)?.[0] ?? '';
    const name = opening.match(/\bnode (\w+\.mjs)/)?.[1];
    if (block.lang !== 'js' || !name) return;
    const output = blocks[i + 1];
    const command = output?.body.match(/^\$ node (\S+)(.*)\n/);
    assert.ok(command && command[1] === name, `${doc}: ${name} is not followed by its run ($ node ${name} ...)`);
    const setup = SETUP[name] && blocks.find((b) => b.lang === 'sql' && SETUP[name].test(b.body));
    found.push({
      doc, name, source: block.body, setup: setup?.body,
      args: command[2].trim().split(/\s+/).filter(Boolean),
      expected: output.body.slice(command[0].length),
    });
  });
  return found;
}

const all = [...examples('doc/payments.md'), ...examples('doc/clients.md')];

test('the docs have Node.js examples to run', () => {
  assert.ok(all.length >= 3, all.map((e) => e.name).join(', '));
});

for (const example of all) {
  test(`${example.doc}: ${['node', example.name, ...example.args].join(' ')}`, async () => {
    const database = await freshDatabase('caio_node_doc');
    if (example.setup) {
      const client = new pg.Client({ database });
      await client.connect();
      try {
        await client.query(example.setup);
      } finally {
        await client.end();
      }
    }
    mkdirSync(work, { recursive: true });
    const file = new URL(example.name, work).pathname;
    writeFileSync(file, example.source);
    const { code, stdout, stderr } = await runNode(file, example.args, database);
    assert.equal(stderr, '');
    assert.equal(code, 0);
    assert.equal(stdout, example.expected);
  });
}
