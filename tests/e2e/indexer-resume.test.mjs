// A run killed half-way loses nothing already written: profiles are deployed, one of them with metadata that
// never arrives; the Worker (workerd) is killed while the run waits for it; a new Worker on the same persisted
// state still has every record written before the kill and the cursor where it was, and the next run completes
// the rest (the one that hung included, once its server answers).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as sdk from 'profile-relayer';
import { freePort, startStack, wranglerDevArgs } from '../../scripts/stack.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const CONTROLLER = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
const VARS = {
  LOOKUP_CACHE_SECONDS: '0',
  METADATA_ALLOW_HTTP: 'true',
  METADATA_TIMEOUT_SECONDS: '120',
  INDEXER_CONCURRENCY: '1',
  LOOKUP_RATE_LIMIT_PER_MINUTE: '0',
};

const hang = { released: false, waiting: [], arrived: 0 };
let server;
let stack;
let second;
const stateDir = mkdtempSync(join(tmpdir(), 'indexer-resume-'));

before(async () => {
  server = createServer((req, res) => {
    const name = decodeURIComponent(req.url.slice(1));
    const answer = () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ LSP3Profile: { name, description: 'resume' } }));
    if (name === 'Resume Hanging' && !hang.released) {
      hang.arrived += 1;
      return hang.waiting.push(answer);
    }
    answer();
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  stack = await startStack({ stateDir, vars: VARS });
});
after(async () => {
  await second?.stop();
  await stack?.stop();
  server?.closeAllConnections();
  server?.close();
  rmSync(stateDir, { recursive: true, force: true });
});

/** A second Worker (wrangler dev) on the first one's persisted state and chain. */
async function startWorkerAgain() {
  const dir = mkdtempSync(join(tmpdir(), 'indexer-resume-env-'));
  const envFile = join(dir, 'worker.env');
  writeFileSync(envFile, `RELAYER_PRIVATE_KEY=0x${randomBytes(32).toString('hex')}\nADMIN_TOKEN=${stack.adminToken}\n`, { mode: 0o600 });
  const port = await freePort();
  const vars = { RPC_URL: stack.chain.rpcUrl, CHAIN_ID: '31337', ...VARS };
  const child = spawn(
    process.execPath,
    wranglerDevArgs({ port, inspectorPort: await freePort(), envFile, stateDir, testScheduled: true, logLevel: 'warn', vars }),
    { cwd: root, detached: true, stdio: 'ignore', env: { ...process.env, WRANGLER_SEND_METRICS: 'false' } },
  );
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${url}/health`)).ok) break;
    } catch {
      // not up yet
    }
    if (i > 600 || child.exitCode !== null) throw new Error('the second Worker did not start');
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    url,
    stop: async () => {
      if (child.exitCode === null) {
        process.kill(-child.pid, 'SIGKILL');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const names = (body) => body.profiles.hits.map((h) => h.name).sort();

test('a run killed half-way loses nothing already written; the next run completes the range', async () => {
  const deployed = [];
  for (const name of ['Resume One', 'Resume Two', 'Resume Three', 'Resume Four', 'Resume Hanging', 'Resume Six', 'Resume Seven']) {
    const json = JSON.stringify({ LSP3Profile: { name, description: 'resume' } });
    const url = `http://127.0.0.1:${server.address().port}/${encodeURIComponent(name)}`;
    const res = await fetch(`${stack.workerUrl}/api/universal-profile`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ lsp6ControllerAddress: [CONTROLLER], lsp3Profile: sdk.encodeVerifiableUri(json, url) }),
    });
    assert.equal(res.status, 200);
    deployed.push((await res.json()).universalProfileAddress);
  }
  // the relayer reported each deploy: the indexer object's own fetch of the hanging metadata arrives first
  for (let i = 0; hang.arrived < 1; i++) {
    assert.ok(i < 400, 'the reported profiles were not indexed');
    await new Promise((r) => setTimeout(r, 50));
  }
  // the cron run: it indexes the first chunks, then waits for the hanging metadata too
  const running = fetch(`${stack.workerUrl}/__scheduled?cron=${encodeURIComponent('* * * * *')}`).catch(() => null);
  for (let i = 0; hang.arrived < 2; i++) {
    assert.ok(i < 400, 'the run never reached the hanging profile');
    await new Promise((r) => setTimeout(r, 50));
  }
  const search = async (base) => (await fetch(`${base}/v1/31337/search?q=resume&hitsPerPage=50`)).json();
  const stats = async (base) => (await fetch(`${base}/v1/31337/indexer`)).json();
  const written = names(await search(stack.workerUrl));
  const cursor = (await stats(stack.workerUrl)).lastIndexedBlock;
  assert.ok(written.length >= 1, 'some records were written before the hang');
  assert.ok(!written.includes('Resume Hanging'));
  assert.ok(cursor > 0, 'the cursor moved with the written chunk');
  // kill the Worker mid-run
  await stack.stopWorker();
  await running;

  second = await startWorkerAgain();
  // the restarted Worker may already be at work (what the relayer reported is indexed again): nothing may be lost,
  // more may come
  const kept = names(await search(second.url));
  for (const name of written) assert.ok(kept.includes(name), `${name}, written before the kill, is still there`);
  assert.ok((await stats(second.url)).lastIndexedBlock >= cursor, 'the cursor did not move back');

  hang.released = true;
  for (const answer of hang.waiting.splice(0)) answer();
  const res = await fetch(`${second.url}/__scheduled?cron=${encodeURIComponent('* * * * *')}`);
  assert.equal(res.status, 200);
  const all = names(await search(second.url));
  assert.deepEqual(all, ['Resume Four', 'Resume Hanging', 'Resume One', 'Resume Seven', 'Resume Six', 'Resume Three', 'Resume Two']);
  const after = await stats(second.url);
  assert.equal(after.lag, 0, JSON.stringify(after));
  for (const address of deployed) {
    const record = await (await fetch(`${second.url}/v1/31337/address/${address}`)).json();
    assert.equal(record.metadataStatus, 'verified', JSON.stringify(record));
  }
});
