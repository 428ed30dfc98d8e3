// The snippet runs unchanged but for the constructors, in a fresh
// database, and prints 1n, null, 2n, null.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { freshDatabase, runNode } from './helpers.mjs';

test('the lesson snippet prints 1n, null, 2n, null', async () => {
  const database = await freshDatabase('caio_node_snippet');
  const { code, stdout, stderr } = await runNode(new URL('snippet.mjs', import.meta.url).pathname, [], database);
  assert.equal(stderr, '');
  assert.equal(code, 0);
  assert.equal(stdout, '1n\nnull\n2n\nnull\n');
});
