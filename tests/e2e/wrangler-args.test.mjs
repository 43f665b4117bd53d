// The `wrangler dev` command line of scripts/stack.mjs, which the stack and the tests that start a Worker of their
// own (indexer-resume, the sample apps) share: each caller's options give the list it wrote out before.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { wranglerDevArgs } from '../../scripts/stack.mjs';

const wrangler = join(fileURLToPath(new URL('../..', import.meta.url)), 'node_modules/wrangler/bin/wrangler.js');

test('the stack: secrets, persisted state, scheduled route, log level and every var', () => {
  const args = wranglerDevArgs({
    port: 8787,
    inspectorPort: 9229,
    envFile: '/tmp/x/worker.env',
    stateDir: '/tmp/x/state',
    testScheduled: true,
    logLevel: 'warn',
    vars: { RPC_URL: 'http://127.0.0.1:8545', CHAIN_ID: '31337', CHAINS: '[{"a":"b:c"}]' },
  });
  assert.deepEqual(args, [
    wrangler,
    'dev',
    '--ip',
    '127.0.0.1',
    '--port',
    '8787',
    '--inspector-port',
    '9229',
    '--env-file',
    '/tmp/x/worker.env',
    '--persist-to',
    '/tmp/x/state',
    '--show-interactive-dev-session=false',
    '--test-scheduled',
    '--log-level',
    'warn',
    '--var',
    'RPC_URL:http://127.0.0.1:8545',
    '--var',
    'CHAIN_ID:31337',
    '--var',
    'CHAINS:[{"a":"b:c"}]',
  ]);
});

test('a bare Worker (the sample app): ports and no interactive session, nothing else', () => {
  assert.deepEqual(wranglerDevArgs({ port: 1, inspectorPort: 2 }), [
    wrangler,
    'dev',
    '--ip',
    '127.0.0.1',
    '--port',
    '1',
    '--inspector-port',
    '2',
    '--show-interactive-dev-session=false',
  ]);
});

test('an empty value is passed on, not dropped', () => {
  const args = wranglerDevArgs({ port: 1, inspectorPort: 2, stateDir: '', logLevel: 'log', vars: { EMPTY: '' } });
  assert.deepEqual(args.slice(8), ['--persist-to', '', '--show-interactive-dev-session=false', '--log-level', 'log', '--var', 'EMPTY:']);
});
