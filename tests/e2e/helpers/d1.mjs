// SQL on a stack's local D1: `wrangler d1 execute` on the state directory the stack persists to (scripts/stack.mjs).
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const root = fileURLToPath(new URL('../../..', import.meta.url));

/** Runs `sql` (one statement or several) on the local D1 persisted in `stateDir`; the rows of the last statement. */
export async function d1(stateDir, sql) {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [join(root, 'node_modules/wrangler/bin/wrangler.js'), 'd1', 'execute', 'DB', '--local', '--persist-to', stateDir, '--json', '--command', sql],
    { cwd: root, env: { ...process.env, WRANGLER_SEND_METRICS: 'false' }, maxBuffer: 64 * 1024 * 1024 },
  );
  return JSON.parse(stdout).at(-1).results;
}
