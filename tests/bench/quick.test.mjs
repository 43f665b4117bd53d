// Every benchmark of BENCHMARKS.md in its quick form (small counts, the same checks of the outputs: indexes hold
// exactly what was deployed, answers equal the peer's, quotas add up), so that none of them rots. A test file of
// the `node --test` step rather than a step after it: the benchmarks then run beside the other files instead of
// after all of them (the signer pool's run mostly waits for 6-second blocks). Quick figures are a smoke test, not a
// measurement: the full runs are in BENCHMARKS.md, each with its command.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const tests = fileURLToPath(new URL('..', import.meta.url));

const QUICK_RUNS = [
  ['bench/sdk.bench.mjs'],
  ['bench/relayer.bench.mjs'],
  ['bench/signers.bench.mjs'],
  ['bench/execute.bench.mjs'],
  ['bench/indexer.bench.mjs'],
  ['bench/indexer.bench.mjs', '--backfill'],
  ['bench/freshness.bench.mjs'],
  ['bench/search.bench.mjs'],
  ['bench/ipfs-relay.bench.mjs'],
];

/** Runs `node <args>` in tests/; its exit code and the output of both streams, interleaved as written. */
function run(args) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: tests, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal, output }));
  });
}

for (const args of QUICK_RUNS) {
  const command = ['node', ...args, '--quick'].join(' ');
  test(command, async (t) => {
    const { code, signal, output } = await run([...args, '--quick']);
    const lines = output.trimEnd().split('\n');
    assert.equal(code, 0, `${command} exited with ${code ?? signal}:\n${lines.slice(-60).join('\n')}`);
    // the run's last lines (its summary) in the test report
    for (const line of lines.slice(-12)) t.diagnostic(line);
  });
}
