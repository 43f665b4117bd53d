// Deploying as an operator does: `npm ci` at the root (on Linux, macOS or Windows), then `wrangler deploy --env
// mainnet|testnet`, whose [build] command is scripts/build-worker.sh. The build must install only what it needs —
// never Chromium, chromedriver, anvil, schemathesis or the test packages — and the lock file must hold every
// platform's optional packages (workerd and esbuild ship one binary per platform).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtemp, mkdir, writeFile, readFile, readdir, symlink, copyFile, rm, chmod } from 'node:fs/promises';
import { tmpdir, homedir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const run = promisify(execFile);
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const toolsHome = process.env.PR_TOOLS_HOME ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'profile-relayer');

// Tools the deploy path must never call: each shim records its name and fails.
const FORBIDDEN = ['apt-get', 'sudo', 'pip', 'pip3', 'python3', 'chromium', 'chromedriver', 'anvil', 'st', 'npm', 'npx'];

async function shimmedEnv() {
  const dir = await mkdtemp(join(tmpdir(), 'deploy-'));
  const bin = join(dir, 'bin');
  const log = join(dir, 'calls.log');
  await mkdir(bin);
  for (const name of FORBIDDEN) {
    const shim = join(bin, name);
    await writeFile(shim, `#!/bin/sh\necho ${name} "$@" >> '${log}'\nexit 1\n`);
    await chmod(shim, 0o755);
  }
  // A tools cache holding only what a deployer would have built once: the cargo-installed tools.
  const home = join(dir, 'tools');
  await mkdir(home);
  await symlink(join(toolsHome, 'cargo-tools'), join(home, 'cargo-tools'));
  const env = { ...process.env, PATH: `${bin}:${process.env.PATH}`, PR_TOOLS_HOME: home };
  for (const name of ['WASM_BINDGEN_BIN', 'WASM_OPT_BIN', 'ANVIL_BIN', 'SCHEMATHESIS_BIN', 'CHROMEDRIVER']) delete env[name];
  const calls = async () => (await readFile(log, 'utf8').catch(() => '')).trim();
  return { dir, home, env, calls };
}

test('the Worker build set-up installs and calls nothing but the build tools', async () => {
  const { dir, home, env, calls } = await shimmedEnv();
  try {
    const { stdout } = await run(
      'bash',
      ['-c', 'source scripts/setup-build.sh >/dev/null && echo "$WASM_BINDGEN_BIN" && echo "$WORKER_BUILD_VERSION" && worker-build --version'],
      { cwd: root, env },
    );
    const [bindgen, pinned, version] = stdout.trim().split('\n');
    assert.equal(bindgen, join(home, 'cargo-tools', 'bin', 'wasm-bindgen'));
    assert.equal(version, pinned, 'worker-build on PATH is not the pinned version');
    assert.equal(await calls(), '', 'the build set-up called a test tool');
    assert.deepEqual((await readdir(home)).sort(), ['cargo-tools'], 'the build set-up installed more than the build needs');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

for (const network of ['mainnet', 'testnet']) {
  test(`wrangler deploy --dry-run --env ${network}: builds and validates without the test toolchain`, async () => {
    const { dir, env, calls } = await shimmedEnv();
    try {
      const wrangler = join(root, 'node_modules', 'wrangler', 'bin', 'wrangler.js');
      const { stdout, stderr } = await run(process.execPath, [wrangler, 'deploy', '--dry-run', '--env', network, '--outdir', join(dir, 'out')], {
        cwd: root,
        env,
        maxBuffer: 16 << 20,
      });
      assert.match(stdout, /--dry-run: exiting now/);
      assert.doesNotMatch(stdout + stderr, /WARNING/, 'wrangler warns about the configuration');
      const chainId = network === 'mainnet' ? '42' : '4201';
      assert.match(stdout, new RegExp(`env\\.CHAIN_ID \\("${chainId}"\\)`));
      for (const binding of ['env.RELAYER', 'env.METER', 'env.RATE_LIMITER', 'env.API_KEYS', 'env.PROFILES', 'env.DB', 'env.IPFS']) {
        assert.ok(stdout.includes(binding), `${binding} missing from the ${network} bindings`);
      }
      assert.equal(await calls(), '', 'deploying called a test tool');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
}

test('the root lock file installs with `npm ci` on Linux, macOS and Windows', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'lock-'));
  try {
    for (const file of ['package.json', 'package-lock.json']) await copyFile(join(root, file), join(dir, file));
    for (const [os, cpu, workerd] of [
      ['linux', 'x64', 'linux-64'],
      ['linux', 'arm64', 'linux-arm64'],
      ['darwin', 'arm64', 'darwin-arm64'],
      ['darwin', 'x64', 'darwin-64'],
      ['win32', 'x64', 'windows-64'],
    ]) {
      const { stdout } = await run('npm', ['ci', '--dry-run', '--ignore-scripts', '--no-audit', '--no-fund', `--os=${os}`, `--cpu=${cpu}`], {
        cwd: dir,
        maxBuffer: 16 << 20,
      });
      assert.match(stdout, new RegExp(`add @cloudflare/workerd-${workerd} `), `${os}/${cpu}: workerd's binary package`);
      assert.match(stdout, new RegExp(`add @esbuild/${os === 'win32' ? 'win32' : os}-${cpu} `), `${os}/${cpu}: esbuild's binary package`);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('engines: the root package asks for the Node that wrangler needs', async () => {
  const ours = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')).engines?.node;
  const wranglers = JSON.parse(await readFile(join(root, 'node_modules', 'wrangler', 'package.json'), 'utf8')).engines.node;
  const minimum = (range) =>
    range
      .match(/>=\s*(\d+)\.(\d+)(?:\.(\d+))?/)
      .slice(1)
      .map((n) => Number(n ?? 0));
  assert.ok(ours, 'package.json has no engines.node');
  const [a, b] = [minimum(ours), minimum(wranglers)];
  const cmp = a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
  assert.ok(cmp >= 0, `engines.node ${ours} allows a Node older than wrangler's ${wranglers}`);
  const lock = JSON.parse(await readFile(join(root, 'package-lock.json'), 'utf8'));
  assert.equal(lock.packages[''].engines?.node, ours, 'package-lock.json is stale: run npm install --package-lock-only');
});
