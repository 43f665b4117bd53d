// Runs test files with node:test's `run()`, in the order given, `--concurrency N` at a time (default 3): what
// `node --test --test-concurrency=N <files>` does, except that `node --test` sorts its file arguments (they are glob
// patterns), so a list of the longest files first ends up alphabetical and a long file can start last and run alone
// at the end. The report is node's own (spec on a terminal, TAP otherwise); the exit code is 1 when a test failed.
//
//   node run.mjs --concurrency 3 e2e/reorg.test.mjs npm/throws.test.mjs …
import { resolve } from 'node:path';
import { run } from 'node:test';
import { spec, tap } from 'node:test/reporters';

const args = process.argv.slice(2);
let concurrency = 3;
const at = args.indexOf('--concurrency');
if (at >= 0) {
  concurrency = Number(args[at + 1]);
  args.splice(at, 2);
}
if (!Number.isInteger(concurrency) || concurrency < 1 || args.length === 0) {
  console.error('usage: node run.mjs [--concurrency N] <test file>…');
  process.exit(2);
}

const stream = run({ files: args.map((f) => resolve(f)), concurrency });
// any failed test (a failed subtest fails its parents too; a cancelled one is reported as failed)
stream.on('test:fail', () => {
  process.exitCode = 1;
});
stream.compose(process.stdout.isTTY ? new spec() : tap).pipe(process.stdout);
