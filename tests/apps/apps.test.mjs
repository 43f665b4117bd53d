// The npm package as a new user gets it: `npm pack` of pkg/ installed into small sample apps that configure nothing
// about wasm (tests/apps/<app>/), each built with its tool and run where it runs — Vite (dev server and build),
// webpack 5 (5.99 and the latest), esbuild, Node, Bun and Deno (ESM and CommonJS), Cloudflare Workers (wrangler
// dev), Next.js (app router: a prerendered server component, a route handler, a client component) — the browser apps
// in headless Chromium. Every app runs probe.js (or its CommonJS twin) and the answers are compared here with
// erc725.js and viem.
//
// The apps' tool installs are cached in their node_modules/ (reinstalled when their package.json changes); the
// package's tarball is packed and installed again on every run. `cd tests && node --test apps/apps.test.mjs`
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { encodeAbiParameters, getCreate2Address, keccak256 } from 'viem';
import { encodeKeyName } from '@erc725/erc725.js';
import { freePort, wranglerDevArgs } from '../../scripts/stack.mjs';
import { launchChromium } from '../helpers/chromium.mjs';

const apps = fileURLToPath(new URL('.', import.meta.url));
const root = fileURLToPath(new URL('../../', import.meta.url));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const run = (cmd, args, cwd) => execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

// the LSP23 prediction as viem users write it (LUKSO's recipe, mainnet v0.14 implementations)
const C = {
  factory: '0x2300000A84D25dF63081feAa37ba6b62C4c89a30',
  upImpl: '0x3024D38EA2434BA6635003Dc1BDC0daB5882ED4F',
  kmImpl: '0x2Fe3AeD98684E7351aD2D408A43cE09a738BF8a4',
  module: '0x000000000066093407b6704B89793beFfD0D8F00',
};
const initCodeHash = (impl) => keccak256(`0x3d602d80600a3d3981f3363d3d373d3d3d363d73${impl.slice(2).toLowerCase()}5af43d82803e903d91602b57fd5bf3`);
function viemPredict(salt, calldata) {
  const generatedSalt = keccak256(
    encodeAbiParameters(
      [{ type: 'bytes32' }, { type: 'address' }, { type: 'bytes' }, { type: 'bool' }, { type: 'bytes' }, { type: 'address' }, { type: 'bytes' }],
      [salt, C.kmImpl, '0xc4d66de8', true, '0x', C.module, calldata],
    ),
  );
  const universalProfile = getCreate2Address({ from: C.factory, salt: generatedSalt, bytecodeHash: initCodeHash(C.upImpl) });
  const keyManager = getCreate2Address({ from: C.factory, salt: keccak256(universalProfile), bytecodeHash: initCodeHash(C.kmImpl) });
  return { universalProfile, keyManager };
}

/** Checks one app's answers (probe.js) against erc725.js and viem. */
function check(app, r) {
  assert.equal(r.key, encodeKeyName('LSP3Profile'), `${app}: encodeKeyName('LSP3Profile')`);
  assert.equal(r.liteKey, encodeKeyName('LSP5ReceivedAssets[]'), `${app}: lite encodeKeyName`);
  // the calldata holds the LSP3Profile key, the controller and the URD; the addresses are viem's for that calldata
  assert.match(r.postDeploymentCallData, /^0x[0-9a-f]{1000,}$/);
  assert.ok(r.postDeploymentCallData.includes(encodeKeyName('LSP3Profile').slice(2)), `${app}: calldata sets LSP3Profile`);
  assert.ok(r.postDeploymentCallData.includes('cafe'.repeat(10)), `${app}: calldata has the controller`);
  const expected = viemPredict(r.salt, r.postDeploymentCallData);
  assert.deepEqual({ universalProfile: r.universalProfile, keyManager: r.keyManager }, expected, `${app}: prediction`);
  assert.deepEqual(r.error, { isError: true, name: 'ProfileRelayerError', code: 'TRUNCATED_VERIFIABLE_URI' }, `${app}: error`);
  assert.equal(r.clients, 'function', `${app}: the full entry has the clients`);
}

/** A static file server of `dir` on 127.0.0.1 (with `page` at `/` if given). */
async function serve(dir, page) {
  const types = { '.js': 'text/javascript', '.wasm': 'application/wasm', '.html': 'text/html', '.css': 'text/css' };
  const server = createServer(async (req, res) => {
    const path = new URL(req.url, 'http://x').pathname;
    if (path === '/' && page) return res.writeHead(200, { 'content-type': 'text/html' }).end(page);
    const file = normalize(join(dir, path === '/' ? 'index.html' : path));
    if (!file.startsWith(dir)) return res.writeHead(403).end();
    try {
      const body = await readFile(file);
      res.writeHead(200, { 'content-type': types[extname(file)] ?? 'application/octet-stream' }).end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${server.address().port}/`, close: () => new Promise((r) => server.close(r)) };
}

/** A child process in its own process group, its output kept; `ready` resolves when `pattern` is printed. */
function start(cmd, args, cwd, pattern) {
  const child = spawn(cmd, args, {
    cwd,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CLOUDFLARE_CF_FETCH_ENABLED: 'false', NO_COLOR: '1', FORCE_COLOR: '0' },
  });
  let output = '';
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const ready = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${cmd} ${args.join(' ')}: not ready in 120 s\n${output}`)), 120_000);
    const onData = (d) => {
      output += d;
      if (pattern.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${cmd} ${args.join(' ')} exited (${code})\n${output}`));
    });
  });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    try {
      process.kill(-child.pid, 'SIGTERM');
    } catch {
      return;
    }
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // gone
      }
    }, 5000);
    await exited;
    clearTimeout(timer);
  };
  return { ready, stop, output: () => output };
}

/**
 * A server started on a port free a moment ago: `args(port, inspector)` its arguments. A port another process takes
 * in between (an outgoing connection's ephemeral port, on a busy machine) is no failure of the app: fresh ports,
 * 3 tries. Resolves to `{ port, dev }` once `pattern` is printed.
 */
async function startOnFreePort(args, cwd, pattern) {
  for (let attempt = 1; ; attempt++) {
    const [port, inspector] = [await freePort(), await freePort()];
    const dev = start(process.execPath, args(port, inspector), cwd, pattern);
    try {
      await dev.ready;
      closers.push(dev.stop);
      return { port, dev };
    } catch (e) {
      await dev.stop();
      if (attempt >= 3 || !/address already in use|EADDRINUSE|is already in use/i.test(e.message)) throw e;
    }
  }
}

let browser;
const closers = [];
/** Loads `url` in Chromium and returns the page's `window.__result`, failing on any page error. */
async function inBrowser(app, url) {
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  // failed loads by their URL (Chromium's console names no URL), but for the favicon no app has
  page.on('console', (m) => m.type() === 'error' && !m.text().startsWith('Failed to load resource') && errors.push(m.text()));
  page.on('response', (r) => r.status() >= 400 && !r.url().endsWith('/favicon.ico') && errors.push(`${r.status()} ${r.url()}`));
  page.on('requestfailed', (r) => errors.push(`${r.failure()?.errorText} ${r.url()}`));
  try {
    await page.goto(url);
    await page
      .waitForFunction(() => window.__result, null, { timeout: 30_000 })
      .catch((e) => {
        throw new Error(`${app}: no result in the page (${errors.join('; ')}): ${e.message}`);
      });
    const result = await page.evaluate(() => window.__result);
    assert.deepEqual(errors, [], `${app}: page errors`);
    return result;
  } finally {
    await page.close();
  }
}

before(async () => {
  // the package as published: `npm pack` of pkg/ (what `files` and `exports` let through)
  const pack = join(apps, '.pack');
  rmSync(pack, { recursive: true, force: true });
  mkdirSync(pack);
  run(npm, ['pack', '--silent', '--pack-destination', pack], join(root, 'pkg'));
  const [tarball] = readdirSync(pack).filter((f) => f.endsWith('.tgz'));
  for (const app of ['vite', 'webpack-5.99', 'webpack-latest', 'esbuild', 'node', 'workers', 'next', 'bun', 'deno']) {
    const dir = join(apps, app);
    // the app's own tools, pinned by its package-lock.json: installed once per content of its package.json and lock
    // (cached in its node_modules/)
    const lock = join(dir, 'package-lock.json');
    const stamp = join(dir, 'node_modules', '.apps-test-stamp');
    const hash = createHash('sha256')
      .update(readFileSync(join(dir, 'package.json')))
      .update(existsSync(lock) ? readFileSync(lock) : '')
      .digest('hex');
    if (!existsSync(stamp) || readFileSync(stamp, 'utf8') !== hash) {
      rmSync(join(dir, 'node_modules'), { recursive: true, force: true });
      if (existsSync(lock)) run(npm, ['ci', '--no-audit', '--no-fund', '--loglevel=error'], dir);
      mkdirSync(join(dir, 'node_modules'), { recursive: true });
      writeFileSync(stamp, hash);
    }
    if (app === 'bun' || app === 'deno') continue; // only the runtime: it runs the node app
    // the package: the tarball of this run (a tarball of the same version is not reinstalled unless removed first)
    rmSync(join(dir, 'node_modules', 'profile-relayer'), { recursive: true, force: true });
    run(npm, ['install', '--no-save', '--no-audit', '--no-fund', '--loglevel=error', join(pack, tarball)], dir);
    // src/ is not in git for every app (Next keeps its pages in app/): made here
    mkdirSync(join(dir, 'src'), { recursive: true });
    copyFileSync(join(apps, 'probe.js'), join(dir, 'src', 'probe.js'));
  }
  browser = await launchChromium(chromium);
});
after(async () => {
  for (const close of closers.reverse()) await close();
  await browser?.close();
});

test('Node: ESM import and CommonJS require of the installed package', () => {
  const dir = join(apps, 'node');
  check('node ESM', JSON.parse(run(process.execPath, ['src/index.mjs'], dir)));
  check('node CJS', JSON.parse(run(process.execPath, ['src/index.cjs'], dir)));
});

test('Bun: the node app, import and require', () => {
  const dir = join(apps, 'node');
  const bun = join(apps, 'bun', 'node_modules', '.bin', 'bun');
  check('bun ESM', JSON.parse(run(bun, ['src/index.mjs'], dir)));
  check('bun CJS', JSON.parse(run(bun, ['src/index.cjs'], dir)));
});

test('Deno: the node app, import and require (npm package through node_modules)', () => {
  const dir = join(apps, 'node');
  const deno = join(apps, 'deno', 'node_modules', '.bin', 'deno');
  process.env.DENO_NO_UPDATE_CHECK = '1';
  const args = ['run', '--no-lock', '--allow-read', '--allow-env'];
  check('deno ESM', JSON.parse(run(deno, [...args, 'src/index.mjs'], dir)));
  check('deno CJS', JSON.parse(run(deno, [...args, 'src/index.cjs'], dir)));
});

test('esbuild: --bundle --format=esm, no loader for .wasm, in Chromium', async () => {
  const dir = join(apps, 'esbuild');
  rmSync(join(dir, 'dist'), { recursive: true, force: true });
  run(npm, ['run', '--silent', 'build'], dir); // esbuild src/index.js --bundle --format=esm --outdir=dist
  const site = await serve(join(dir, 'dist'), '<!doctype html><script type="module" src="/index.js"></script>');
  closers.push(site.close);
  check('esbuild', await inBrowser('esbuild', site.url));
});

for (const version of ['5.99', 'latest']) {
  test(`webpack ${version}: no config, no experiments, in Chromium`, async () => {
    const dir = join(apps, `webpack-${version}`);
    rmSync(join(dir, 'dist'), { recursive: true, force: true });
    const out = run(process.execPath, ['node_modules/webpack-cli/bin/cli.js'], dir);
    assert.doesNotMatch(out, /ERROR|WebAssembly/, out);
    const site = await serve(join(dir, 'dist'), '<!doctype html><script src="/main.js"></script>');
    closers.push(site.close);
    check(`webpack ${version}`, await inBrowser(`webpack ${version}`, site.url));
  });
}

test('Vite: build, served, in Chromium', async () => {
  const dir = join(apps, 'vite');
  rmSync(join(dir, 'dist'), { recursive: true, force: true });
  run(process.execPath, ['node_modules/vite/bin/vite.js', 'build'], dir);
  const site = await serve(join(dir, 'dist'));
  closers.push(site.close);
  check('vite build', await inBrowser('vite build', site.url));
});

test('Vite: dev server (dependency pre-bundling), in Chromium', async () => {
  const dir = join(apps, 'vite');
  // the optimizer's cache would keep the previous run's package
  rmSync(join(dir, 'node_modules', '.vite'), { recursive: true, force: true });
  const { port } = await startOnFreePort(
    (port) => ['node_modules/vite/bin/vite.js', '--host', '127.0.0.1', '--port', String(port), '--strictPort'],
    dir,
    /Local:/,
  );
  check('vite dev', await inBrowser('vite dev', `http://127.0.0.1:${port}/`));
});

test('Cloudflare Workers: wrangler dev (workerd) resolves the workerd condition', async () => {
  const dir = join(apps, 'workers');
  const { port, dev } = await startOnFreePort((port, inspectorPort) => wranglerDevArgs({ port, inspectorPort }), dir, /Ready on/);
  const res = await fetch(`http://127.0.0.1:${port}/`);
  const text = await res.text();
  assert.equal(res.status, 200, `${text}\n${dev.output()}`);
  check('workers', JSON.parse(text));
});

test('Next.js app router: prerendered server component, route handler, client component', async () => {
  const dir = join(apps, 'next');
  rmSync(join(dir, '.next'), { recursive: true, force: true });
  const env = { ...process.env, NEXT_TELEMETRY_DISABLED: '1' };
  execFileSync(process.execPath, ['node_modules/next/dist/bin/next', 'build'], { cwd: dir, env, stdio: 'pipe' });
  const { port, dev: server } = await startOnFreePort(
    (port) => ['node_modules/next/dist/bin/next', 'start', '-H', '127.0.0.1', '-p', String(port)],
    dir,
    /Ready in/,
  );
  const origin = `http://127.0.0.1:${port}`;
  const res = await fetch(`${origin}/api/probe`);
  assert.equal(res.status, 200, server.output());
  check('next route handler', await res.json());
  const page = await browser.newPage();
  try {
    await page.goto(origin);
    check('next server component', JSON.parse(await page.textContent('#server')));
  } finally {
    await page.close();
  }
  check('next client component', await inBrowser('next client component', `${origin}/client`));
});
