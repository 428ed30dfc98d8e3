// The package also loads with require() (CommonJS), with the same classes.
const assert = require('node:assert/strict');
const { test } = require('node:test');

test('require("caio") gives the CommonJS build', async () => {
  const caio = require('caio');
  for (const name of ['LockManager', 'TestClock', 'HeldLease', 'CaioError', 'FencingError',
    'VersionConflictError', 'MissingTokenError', 'NotOnThisNodeError', 'LeaseBusyError',
    'LeaseLostError', 'translateError', 'translatingErrors', 'reserveNonce', 'markNonce',
    'syncNonce', 'releaseNonce', 'claim']) {
    assert.equal(typeof caio[name], 'function', name);
  }
  assert.match(require.resolve('caio'), /dist[\\/]cjs[\\/]index\.js$/);
  const esm = await import('caio');
  assert.deepEqual(Object.keys(esm).sort(), Object.keys(caio).sort());
  const e = caio.translateError(Object.assign(new Error('refused'), { code: 'LK002' }));
  assert.ok(e instanceof caio.VersionConflictError);
});
