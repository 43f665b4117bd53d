// The local stack: anvil with the LUKSO contracts + the Worker in workerd (`wrangler dev`), with a fresh funded
// relayer key, an admin token and a development API key. Used by scripts/dev.mjs and the end-to-end tests.
import { execFile, spawn } from 'node:child_process';
import { createServer as createNetServer } from 'node:net';
import { createHash, randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { installLuksoContracts, startChain } from './chain.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const testsRequire = createRequire(join(root, 'tests/package.json'));
const { privateKeyToAccount } = await import(testsRequire.resolve('viem/accounts'));

/** A port the OS reports free right now (bind to port 0, read it, release it). */
export const freePort = () =>
  new Promise((resolve, reject) => {
    const probe = createNetServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });

async function waitFor(url, timeoutMs, child) {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (child.exitCode !== null) throw new Error(`wrangler exited (${child.exitCode})`);
    try {
      const res = await fetch(url);
      if (res.ok) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms`);
}

/**
 * The arguments of `node` that start `wrangler dev` on 127.0.0.1 at `port` (its inspector at `inspectorPort`),
 * without the interactive session. Optional: envFile (`--env-file`, the secrets), stateDir (`--persist-to`, the
 * local KV, D1 and Durable Objects), testScheduled (`--test-scheduled`: the `/__scheduled` route), logLevel
 * (`--log-level`) and vars (each one a `--var name:value`). Used by startStack and by the tests that start a Worker
 * of their own.
 */
export function wranglerDevArgs({ port, inspectorPort, envFile, stateDir, testScheduled = false, logLevel, vars = {} }) {
  return [
    join(root, 'node_modules/wrangler/bin/wrangler.js'),
    'dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(port),
    '--inspector-port',
    String(inspectorPort),
    ...(envFile === undefined ? [] : ['--env-file', envFile]),
    ...(stateDir === undefined ? [] : ['--persist-to', stateDir]),
    '--show-interactive-dev-session=false',
    ...(testScheduled ? ['--test-scheduled'] : []),
    ...(logLevel === undefined ? [] : ['--log-level', logLevel]),
    ...Object.entries(vars).flatMap(([k, v]) => ['--var', `${k}:${v}`]),
  ];
}

/** Funds `address` on the local chain. */
export async function fund(chain, address, wei = 10n ** 20n) {
  await chain.rpc('anvil_setBalance', [address, '0x' + wei.toString(16)]);
}

/**
 * Applies the D1 migrations not applied yet (`wrangler d1 migrations apply DB --local`) to the local state in
 * `stateDir`, as a deployment runs `wrangler d1 migrations apply DB --remote` before `wrangler deploy`.
 */
export async function applyMigrations(stateDir) {
  await promisify(execFile)(
    process.execPath,
    [join(root, 'node_modules/wrangler/bin/wrangler.js'), 'd1', 'migrations', 'apply', 'DB', '--local', '--persist-to', stateDir],
    { cwd: root, env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CI: 'true' } },
  );
}

const migrationsDir = join(root, 'worker/migrations');

/** The files of worker/migrations/ that wrangler applies, in the order it applies them. */
const migrationFiles = () =>
  readdirSync(migrationsDir)
    .filter((f) => f.endsWith('.sql'))
    .sort();

/**
 * The local D1 state of a new deployment (every migration applied by `applyMigrations`, nothing else), made once per
 * content of worker/migrations/ and wrangler's version and kept in the temporary directory: a stack whose state
 * directory is new starts from a copy of it instead of running wrangler once more (seconds of CPU per stack). A
 * state directory that holds anything already (a test's older schema) is migrated as a deployment is.
 */
async function migratedState() {
  const hash = createHash('sha256').update(readFileSync(join(root, 'node_modules/wrangler/package.json')));
  for (const name of migrationFiles()) hash.update(name).update(readFileSync(join(migrationsDir, name)));
  const dir = join(tmpdir(), `profile-relayer-migrated-${hash.digest('hex').slice(0, 16)}`);
  if (existsSync(join(dir, 'complete'))) return dir;
  const work = mkdtempSync(join(tmpdir(), 'profile-relayer-migrating-'));
  try {
    await applyMigrations(join(work, 'state'));
    writeFileSync(join(work, 'complete'), '');
    renameSync(work, dir);
  } catch (e) {
    rmSync(work, { recursive: true, force: true });
    if (!existsSync(join(dir, 'complete'))) throw e; // else another process made it first
  }
  return dir;
}

/**
 * The names in the `d1_migrations` table of the local D1 in `stateDir` (what `wrangler d1 migrations apply` compares
 * with worker/migrations/), read from its SQLite file while no workerd has it open; undefined when there is no such
 * database or table yet.
 */
async function appliedMigrations(stateDir) {
  const dir = join(stateDir, 'v3', 'd1', 'miniflare-D1DatabaseObject');
  // one database file per D1 binding (named by a hash), beside miniflare's own metadata.sqlite
  const files = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.sqlite') && f !== 'metadata.sqlite') : [];
  if (files.length !== 1) return undefined;
  const { DatabaseSync } = await sqlite();
  const db = new DatabaseSync(join(dir, files[0]), { readOnly: true });
  try {
    return db
      .prepare('SELECT name FROM d1_migrations ORDER BY id')
      .all()
      .map((row) => row.name);
  } catch {
    return undefined; // no migrations table: wrangler decides
  } finally {
    db.close();
  }
}

/** `node:sqlite`, imported without its one-line experimental warning in every test's output. */
async function sqlite() {
  const emit = process.emitWarning;
  process.emitWarning = (warning, ...rest) => (/SQLite/.test(String(warning)) ? undefined : emit.call(process, warning, ...rest));
  try {
    return await import('node:sqlite');
  } finally {
    process.emitWarning = emit;
  }
}

/**
 * Applies the migrations to `stateDir`: from the copy of a migrated new state when the directory is new or empty;
 * nothing when its D1 lists every file of worker/migrations/ as applied already (a restarted Worker's state: the same
 * answer wrangler would reach, without its seconds of CPU); else with wrangler, as a deployment applies them.
 */
async function migrateState(stateDir) {
  if (existsSync(stateDir) && readdirSync(stateDir).length > 0) {
    const applied = await appliedMigrations(stateDir);
    const files = migrationFiles();
    if (applied && applied.length === files.length && applied.every((name, i) => name === files[i])) return;
    return applyMigrations(stateDir);
  }
  cpSync(join(await migratedState(), 'state', 'v3', 'd1'), join(stateDir, 'v3', 'd1'), { recursive: true });
}

/**
 * A local stack serves one developer (or one test) from one client address with one key: the fair shares
 * (docs/gasless.md#fair-shares) are the whole caps there unless `vars` set them (tests/e2e/sponsorship.test.mjs does).
 */
export const WHOLE_SHARES = {
  FAIR_SHARE_PERCENT: '100',
  KEY_SHARE_PERCENT: '100',
  TRUSTED_RESERVE_PERCENT: '0',
  MAX_REGISTRATIONS_PER_KEY_PER_DAY: '1000000',
  MAX_REGISTRATIONS_PER_CLIENT_PER_DAY: '1000000',
};

/**
 * Starts chain + Worker. Options: chainPort, chainId (of the relayer's chain, default 31337), workerPort (0 =
 * random), vars (extra Worker vars), log, extraChains: more anvil chains (each with the LUKSO contracts) served by
 * the same Worker, `[{ chainId, indexPrefix, ...CHAINS fields }]`; with them the Worker gets a `CHAINS` var listing
 * the relayer's chain (prefix `vars.INDEX_PREFIX` or dev_local) and these, and `stack.chains` lists all of them.
 * captureLogs: the Worker's log lines (console output) are kept in `stack.logs` (the last 5,000).
 * followChain: false (tests) sets INDEXER_INTERVAL_SECONDS=0, so the indexer follows the chain only when a test runs
 * it (reported receipts are still indexed at once); true (the dev stack) keeps wrangler.toml's interval.
 */
export async function startStack({
  chainPort = 0,
  chainId = 31337,
  workerPort = 0,
  vars = {},
  secrets = {},
  log = false,
  stateDir,
  extraChains = [],
  followChain = false,
  captureLogs = false,
} = {}) {
  const chain = await startChain({ port: chainPort, chainId });
  const others = [];
  try {
    for (const extra of extraChains) others.push(await startChain({ chainId: extra.chainId }));
  } catch (e) {
    await Promise.all([chain, ...others].map((c) => c.stop()));
    throw e;
  }
  if (others.length) {
    vars = {
      CHAINS: JSON.stringify([
        { chainId: chain.chainId, rpcUrl: chain.rpcUrl, indexPrefix: vars.INDEX_PREFIX ?? 'dev_local' },
        ...extraChains.map((extra, i) => ({ ...extra, rpcUrl: others[i].rpcUrl })),
      ]),
      ...vars,
    };
  }
  const relayerKey = '0x' + randomBytes(32).toString('hex');
  const relayer = privateKeyToAccount(relayerKey);
  await fund(chain, relayer.address);
  const adminToken = randomBytes(24).toString('hex');

  const dir = mkdtempSync(join(tmpdir(), 'profile-relayer-'));
  const envFile = join(dir, 'worker.env');
  const extra = Object.entries(secrets)
    .map(([k, v]) => `${k}=${v}\n`)
    .join('');
  writeFileSync(envFile, `RELAYER_PRIVATE_KEY=${relayerKey}\nADMIN_TOKEN=${adminToken}\n${extra}`, { mode: 0o600 });
  const state = stateDir ?? join(dir, 'state');
  const stack = { logs: [] };
  let child;
  let exited;
  let stderr = '';
  // wrangler dev on the chain with the persisted state (KV, D1, Durable Objects): started here and by restartWorker,
  // after the D1 migrations (worker/migrations), applied as a deployment applies them
  const launch = async (port, extraVars = {}, migrations = true) => {
    if (migrations) await migrateState(state);
    const inspectorPort = await freePort();
    const quiet = followChain ? {} : { INDEXER_INTERVAL_SECONDS: '0' };
    const allVars = { RPC_URL: chain.rpcUrl, CHAIN_ID: String(chain.chainId), ...WHOLE_SHARES, ...quiet, ...vars, ...extraVars };
    const args = wranglerDevArgs({
      port,
      inspectorPort,
      envFile,
      stateDir: state,
      testScheduled: true,
      logLevel: log ? 'info' : captureLogs ? 'log' : 'warn',
      vars: allVars,
    });
    child = spawn(process.execPath, args, {
      cwd: root,
      detached: true, // own process group: stop() ends wrangler and its workerd children together
      stdio: ['ignore', log ? 'inherit' : captureLogs ? 'pipe' : 'ignore', log ? 'inherit' : 'pipe'],
      env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CLOUDFLARE_CF_FETCH_ENABLED: 'false' },
    });
    stderr = '';
    child.stderr?.on('data', (d) => (stderr = (stderr + d).slice(-4000)));
    if (captureLogs) {
      let partial = '';
      child.stdout.on('data', (d) => {
        const lines = (partial + d).split('\n');
        partial = lines.pop();
        stack.logs.push(...lines);
        if (stack.logs.length > 5000) stack.logs.splice(0, stack.logs.length - 5000);
      });
    }
    exited = new Promise((resolve) => child.once('exit', resolve));
    stack.workerUrl = `http://127.0.0.1:${port}`;
    await waitFor(`${stack.workerUrl}/health`, 180_000, child);
    // a port free a moment ago may have gone to another stack's Worker meanwhile (two stacks starting at once on a
    // busy machine), which then answered /health while this wrangler was failing to bind it: only this stack's
    // Worker knows its admin token
    const mine = await fetch(`${stack.workerUrl}/admin/api-keys`, { headers: { authorization: `Bearer ${adminToken}` } }).catch((e) => e);
    await mine.body?.cancel();
    if (mine.status !== 200) {
      throw new Error(`Address already in use: port ${port} answers for another Worker (admin check: ${mine.status ?? mine.message})`);
    }
  };

  const stopWorker = async () => {
    if (child && child.exitCode === null) {
      try {
        process.kill(-child.pid, 'SIGINT');
      } catch {
        // already gone
      }
      const timer = setTimeout(() => {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }, 5000);
      await exited;
      clearTimeout(timer);
      // wrangler has exited; wait for the rest of its process group (workerd) to let go of its sockets
      const group = child.pid;
      for (let i = 0; i < 100; i++) {
        try {
          process.kill(-group, 0);
        } catch {
          break;
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  };
  const stop = async () => {
    await stopWorker();
    await chain.stop();
    for (const other of others) await other.stop();
    rmSync(dir, { recursive: true, force: true });
  };

  // a port free a moment ago may be taken meanwhile (another stack's workerd on a busy machine): fresh ports, 3 tries
  for (let attempt = 1; ; attempt++) {
    try {
      await launch(workerPort || (await freePort()));
      break;
    } catch (e) {
      const detail = `${e.message}\n${stderr}`;
      await stopWorker();
      if (workerPort || attempt >= 3 || !/Address already in use/.test(detail)) {
        await stop();
        throw new Error(detail);
      }
      await new Promise((r) => setTimeout(r, 1000));
    }
  }

  /**
   * Stops the Worker and starts it again on the same chain and persisted state (a new workerd: Durable Objects are
   * constructed anew), on a new port: read `stack.workerUrl` afterwards. `vars` override the Worker vars;
   * `migrate: false` starts it without applying the D1 migrations first.
   */
  const restartWorker = async ({ vars: extraVars = {}, migrate = true } = {}) => {
    await stopWorker();
    // a busy machine may still hold one of workerd's internal sockets for a moment: try again on fresh ports
    for (let attempt = 1; ; attempt++) {
      try {
        await launch(await freePort(), extraVars, migrate);
        return;
      } catch (e) {
        await stopWorker();
        if (attempt >= 3) throw new Error(`${e.message}\n${stderr}`);
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  };

  const admin = (method, path, body) =>
    fetch(`${stack.workerUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: body && JSON.stringify(body),
    });
  const created = await (await admin('POST', '/admin/api-keys', { name: 'development' })).json();
  if (!created.apiKey) {
    await stop();
    throw new Error(`could not create the development API key: ${JSON.stringify(created)}`);
  }

  /** Restarts anvil on the same port (fresh state), reinstalls the contracts and funds the relayer again. */
  const restartChain = async () => {
    await chain.stop();
    const again = await startChain({ port: chain.port });
    Object.assign(chain, again);
    await installLuksoContracts(chain.rpc);
    await fund(chain, relayer.address);
  };

  return Object.assign(stack, {
    chain,
    chains: [chain, ...others],
    adminToken,
    relayerKey,
    apiKey: created.apiKey,
    apiKeyId: created.id,
    relayerAddress: relayer.address,
    admin,
    stop,
    stopWorker,
    restartWorker,
    restartChain,
  });
}
