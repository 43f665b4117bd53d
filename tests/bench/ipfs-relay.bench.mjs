// The IPFS relay side by side with LUKSO's (`lukso-network/service-ipfs-proxy`, a Worker), both in `wrangler dev` on
// the same workerd, both against one local TLS gateway serving raw blocks of 1 KB, 100 KB and 1 MB, and UnixFS files
// of the same sizes (`Qm…`, 256 KiB dag-pb leaves, made by ipfs-unixfs-importer): LUKSO's relay gets their bytes,
// ours their CAR (depth-first, as a trustless gateway sends it). Ours runs twice, paired in the same rounds: streaming
// while it verifies (IPFS_STREAM_MIN_BYTES=0: every size streams) and verifying whole before answering
// (IPFS_STREAM_MIN_BYTES above every size); with the configured default (256 KiB) every row here is read whole (a
// gateway answer declared shorter than 16 × IPFS_STREAM_MIN_BYTES is), so "whole" is the default's figure.
//
//   source scripts/setup.sh && cd tests && node bench/ipfs-relay.bench.mjs [--lukso <checkout>] [--rounds N]
//     [--only 1KB|100KB|1MB|1KBUnixFS|100KBUnixFS|1MBUnixFS] [--gap <ms before each request>]
//     [--var NAME=VALUE …] (more vars for both of our stacks, e.g. --var IPFS_MISS_RATE_LIMIT_PER_MINUTE=0)
//     (BENCH_LOG=1: our Worker's log on stdout)
//   ... ipfs-relay.bench.mjs --quick   (the test command's smoke run: 3 rounds, same checks; without --lukso it runs
//     against a stand-in for LUKSO's relay: a Worker of a few lines that races the two upstreams and streams the
//     winner's body through unverified, as LUKSO's does, so that it needs neither LUKSO's code nor the network)
//
// LUKSO's relay hard-codes `https://` upstreams, so the gateway speaks TLS with a certificate from a throwaway CA made
// here with openssl (in a temp dir, deleted at the end) and trusted by both workerd processes through
// NODE_EXTRA_CA_CERTS (miniflare passes the file's certificates to workerd as trusted certificates). Both relays
// race two upstreams (LUKSO: its Infura and Pinata gateways; ours: IPFS_GATEWAYS with two entries), both pointed at
// the same gateway. LUKSO's code is not part of this repository: pass a checkout of it with --lukso (default: the
// mirror at /work/.mirror); its npm dependencies are installed into a temp dir outside the repository.
//
// Cold: a fresh block every iteration (nobody has fetched it: the relay must go to the gateway). Warm: the same block
// again (ours: from R2; LUKSO's: from the gateway again, it keeps nothing). The relays take turns going first (the
// order rotates every iteration) so that load on the machine hits them alike; ratios are given as p50 over p50 and
// as the median of the per-iteration ratios (paired).
// Bounded: --rounds iterations per size and kind (default 40), and a 10 minute deadline.
import { spawn, execFileSync } from 'node:child_process';
import { Agent as HttpsAgent, createServer as createHttpsServer, get as httpsGet } from 'node:https';
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { CID } from 'multiformats/cid';
import { freePort, startStack, wranglerDevArgs } from '../../scripts/stack.mjs';
import { sha256 } from 'multiformats/hashes/sha2';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const QUICK = process.argv.includes('--quick');
const ROUNDS = Number(arg('--rounds', QUICK ? 3 : 40));
// idle time before each request (ms): background work of one request (our R2 write) then does not land in the next
const GAP = Number(arg('--gap', 0));
const LUKSO = arg('--lukso', QUICK ? undefined : '/work/.mirror/lukso-network+service-ipfs-proxy/repo');
const SIZES = [
  ['1 KB', 1024],
  ['100 KB', 100 * 1024],
  ['1 MB', 1024 * 1024],
  ['1 KB UnixFS', 1024, 'unixfs'],
  ['100 KB UnixFS', 100 * 1024, 'unixfs'],
  ['1 MB UnixFS', 1024 * 1024, 'unixfs'],
].filter(([label]) => !arg('--only') || arg('--only') === label.replaceAll(' ', ''));
const deadline = Date.now() + 10 * 60_000;
// --var NAME=VALUE (repeatable): vars of both of our stacks
const extraVars = Object.fromEntries(
  process.argv.flatMap((a, i) => (a === '--var' && process.argv[i + 1]?.includes('=') ? [process.argv[i + 1].split(/=(.*)/s).slice(0, 2)] : [])),
);

const tmp = mkdtempSync(join(tmpdir(), 'ipfs-relay-bench-'));
const cleanup = [];
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));

// 1. a throwaway CA and a certificate for 127.0.0.1 / localhost signed by it
const ssl = (...args) => execFileSync('openssl', args, { cwd: tmp, stdio: ['ignore', 'ignore', 'pipe'] });
ssl(
  'req',
  '-x509',
  '-newkey',
  'ec',
  '-pkeyopt',
  'ec_paramgen_curve:P-256',
  '-nodes',
  '-keyout',
  'ca.key',
  '-out',
  'ca.pem',
  '-days',
  '1',
  '-subj',
  '/CN=ipfs-relay-bench throwaway CA',
);
ssl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'gw.key', '-out', 'gw.csr', '-subj', '/CN=127.0.0.1');
writeFileSync(
  join(tmp, 'ext.cnf'),
  'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n',
);
ssl('x509', '-req', '-in', 'gw.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'gw.pem', '-days', '1', '-extfile', 'ext.cnf');
// trusted by the workerd processes started below, next to what NODE_EXTRA_CA_CERTS already named (a machine behind
// a TLS-intercepting proxy needs its CA for npm); read by miniflare when it starts workerd
const inherited = process.env.NODE_EXTRA_CA_CERTS;
const caBundle = join(tmp, 'ca-bundle.pem');
writeFileSync(caBundle, `${inherited && existsSync(inherited) ? readFileSync(inherited, 'utf8') : ''}\n${readFileSync(join(tmp, 'ca.pem'), 'utf8')}`);
process.env.NODE_EXTRA_CA_CERTS = caBundle;
// this process's own fetch reads NODE_EXTRA_CA_CERTS only at start-up: the direct baseline uses node:https with the CA
const directAgent = new HttpsAgent({ keepAlive: true, ca: readFileSync(join(tmp, 'ca.pem')) });
const direct = (cid, size) =>
  new Promise((resolve, reject) => {
    const t0 = performance.now();
    httpsGet(`https://${gatewayHost}/ipfs/${cid}`, { agent: directAgent }, (res) => {
      let n = 0;
      res.on('data', (d) => (n += d.length));
      res.on('end', () => (n === size ? resolve(performance.now() - t0) : reject(new Error(`direct: ${n} bytes`))));
    }).on('error', reject);
  });

// 2. the gateway: raw blocks by CID, like a trustless gateway would answer them
const blocks = new Map();
// UnixFS files by CID: their bytes and their CAR
const unixfs = new Map();
let gatewayHits = 0;
const gateway = createHttpsServer({ key: readFileSync(join(tmp, 'gw.key')), cert: readFileSync(join(tmp, 'gw.pem')) }, (req, res) => {
  gatewayHits++;
  const [path, query = ''] = req.url.replace(/^\/ipfs\//, '').split('?');
  const file = unixfs.get(path);
  if (file) {
    // a trustless gateway: the CAR when asked for one (ours), the file's bytes otherwise (LUKSO's)
    const body = query.includes('format=car') ? file.car : file.bytes;
    const type = query.includes('format=car') ? 'application/vnd.ipld.car; version=1; order=dfs; dups=y' : 'application/octet-stream';
    return res.writeHead(200, { 'content-type': type, 'content-length': body.length }).end(body);
  }
  const bytes = blocks.get(path);
  if (!bytes) return res.writeHead(404).end('not found');
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': bytes.length }).end(bytes);
});
await new Promise((r) => gateway.listen(0, '127.0.0.1', r));
const gatewayHost = `127.0.0.1:${gateway.address().port}`;
cleanup.push(
  () =>
    new Promise((r) => {
      gateway.closeAllConnections();
      gateway.close(r);
    }),
);

async function waitUp(url, child, timeoutMs = 180_000) {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (child.exitCode !== null) throw new Error(`wrangler exited (${child.exitCode})`);
    try {
      await (await fetch(url)).arrayBuffer();
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  throw new Error(`${url} did not answer in time`);
}

// the stand-in for LUKSO's relay (--quick without --lukso): the same race of two upstreams, the winner streamed through
const STAND_IN = `export default {
  async fetch(req, env) {
    const path = new URL(req.url).pathname;
    if (!path.startsWith('/ipfs/')) return new Response('stand-in');
    const upstream = (host) => fetch('https://' + host + path).then((r) => (r.ok ? r : Promise.reject(new Error(String(r.status)))));
    const res = await Promise.any([upstream(env.INFURA_GATEWAY_HOSTNAME), upstream(env.PINATA_GATEWAY)]);
    return new Response(res.body, { headers: { 'content-type': res.headers.get('content-type') ?? 'application/octet-stream' } });
  },
};
`;

// 3. LUKSO's relay: its source copied into a temp dir, its three runtime dependencies installed there, and run by
// this repository's wrangler (the same workerd as ours)
async function startLukso() {
  const dir = join(tmp, 'lukso');
  mkdirSync(dir);
  if (!LUKSO) {
    mkdirSync(join(dir, 'src'));
    writeFileSync(join(dir, 'src/index.js'), STAND_IN);
  } else if (existsSync(join(LUKSO, 'src'))) {
    cpSync(join(LUKSO, 'src'), join(dir, 'src'), { recursive: true });
  } else {
    // a bare mirror: export src/ from its HEAD
    execFileSync('sh', ['-c', `git --git-dir="${LUKSO}" archive HEAD src | tar -x -C "${dir}"`]);
  }
  if (LUKSO)
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({
        name: 'lukso-ipfs-proxy-bench',
        private: true,
        // the ranges of its package.json (its yarn.lock's @picojs/pico 0.3.1 is no longer published: 0.3.4 is used)
        dependencies: { '@picojs/pico': '^0.3.1', '@tsndr/cloudflare-worker-jwt': '^2.2.5', 'date-fns': '^2.30.0' },
      }),
    );
  if (LUKSO)
    execFileSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], {
      cwd: dir,
      stdio: 'inherit',
      env: { ...process.env, NODE_EXTRA_CA_CERTS: inherited ?? '' },
    });
  // its wrangler.toml, for wrangler 4 (`node_compat` became the `nodejs_compat` flag)
  writeFileSync(
    join(dir, 'wrangler.toml'),
    'name = "lukso-ipfs-proxy"\nmain = "src/index.js"\ncompatibility_date = "2023-07-01"\ncompatibility_flags = ["nodejs_compat"]\n',
  );
  const port = await freePort();
  const vars = {
    INFURA_GATEWAY_HOSTNAME: gatewayHost,
    INFURA_PROJECT_ID: 'bench',
    INFURA_API_KEY: 'bench',
    PINATA_GATEWAY: gatewayHost,
    PINATA_TOKEN: 'bench',
  };
  const child = spawn(process.execPath, wranglerDevArgs({ port, inspectorPort: await freePort(), stateDir: join(dir, 'state'), logLevel: 'error', vars }), {
    cwd: dir,
    detached: true,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, WRANGLER_SEND_METRICS: 'false' },
  });
  const url = `http://127.0.0.1:${port}`;
  cleanup.push(async () => {
    try {
      process.kill(-child.pid, 'SIGINT');
    } catch {
      /* gone */
    }
    await new Promise((r) => (child.exitCode !== null ? r() : child.once('exit', r)));
  });
  await waitUp(`${url}/`, child);
  return url;
}

let ours;
let buffered;
let lukso;
try {
  const gateways = `https://${gatewayHost},https://localhost:${gateway.address().port}`;
  const stack = await startStack({ log: !!process.env.BENCH_LOG, vars: { IPFS_GATEWAYS: gateways, IPFS_STREAM_MIN_BYTES: '0', ...extraVars } });
  cleanup.push(() => stack.stop());
  ours = stack.workerUrl;
  const whole = await startStack({ vars: { IPFS_GATEWAYS: gateways, IPFS_STREAM_MIN_BYTES: String(2 ** 40), ...extraVars } });
  cleanup.push(() => whole.stop());
  buffered = whole.workerUrl;
  lukso = await startLukso();

  const encodings = new Set();
  const get = async (base, cid, size) => {
    if (GAP) await new Promise((r) => setTimeout(r, GAP));
    const t0 = performance.now();
    const res = await fetch(`${base}/ipfs/${cid}`);
    const body = new Uint8Array(await res.arrayBuffer());
    const ms = performance.now() - t0;
    encodings.add(
      `${base === ours ? 'ours' : base === buffered ? 'ours (whole)' : LUKSO ? 'LUKSO' : 'stand-in'}: ${res.headers.get('content-encoding') ?? 'identity'}`,
    );
    assert.equal(res.status, 200, `${base}: ${res.status} ${new TextDecoder().decode(body.slice(0, 200))}`);
    assert.equal(body.length, size);
    assert.ok(Buffer.from(body).equals(blocks.get(cid) ?? unixfs.get(cid)?.bytes), `${base}: the bytes of ${cid}`);
    return ms;
  };
  const { addUnixfs, blocks: importedBlocks, carOf, subtree } = await import('../e2e/ipfs-unixfs.mjs');
  const fresh = async (size, kind) => {
    if (kind === 'unixfs') {
      const bytes = randomBytes(size);
      const { root } = await addUnixfs([{ content: bytes }], { cidVersion: 0 });
      const cids = subtree(root);
      unixfs.set(root.toString(), { bytes, car: await carOf(root, cids) });
      // the gateway serves the file and its CAR: the importer's copy of its blocks is let go (kept, 60 rounds of
      // 1 MB files held ≈ 200 MB in this process, whose garbage collection then landed in the timings)
      for (const cid of cids) importedBlocks.delete(cid.toString());
      return root.toString();
    }
    const bytes = randomBytes(size);
    const cid = CID.createV1(0x55, await sha256.digest(bytes)).toString();
    blocks.set(cid, bytes);
    return cid;
  };
  const pct = (xs, p) => {
    const s = [...xs].sort((a, b) => a - b);
    return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
  };

  // warm-up: both relays compile and open their connections
  for (let i = 0; i < (QUICK ? 2 : 5); i++) {
    const cid = await fresh(1024);
    await get(ours, cid, 1024);
    await get(buffered, cid, 1024);
    await get(lukso, cid, 1024);
    await direct(cid, 1024);
  }

  const median = (xs) => pct(xs, 50);
  const rows = [];
  for (const [label, size, kind] of SIZES) {
    const t = { direct: [], stream: [], whole: [], lukso: [], oursWarm: [], luksoWarm: [] };
    const warmCid = await fresh(size, kind);
    await get(ours, warmCid, size);
    await new Promise((r) => setTimeout(r, 200)); // the background R2 write
    const relays = [
      [ours, 'stream'],
      [buffered, 'whole'],
      [lukso, 'lukso'],
    ];
    for (let i = 0; i < ROUNDS && Date.now() < deadline; i++) {
      // a fresh block for each relay: none gets one another has just pulled through the gateway
      const order = [...relays.slice(i % 3), ...relays.slice(0, i % 3)];
      // made before any is timed (making a UnixFS file and its CAR is work for this process)
      const cids = [];
      for (let k = 0; k < order.length; k++) cids.push(await fresh(size, kind));
      for (const [k, [base, key]] of order.entries()) t[key].push(await get(base, cids[k], size));
      t.direct.push(await direct(cids.at(-1), size));
      const warm =
        i % 2 === 0
          ? [
              [ours, 'oursWarm'],
              [lukso, 'luksoWarm'],
            ]
          : [
              [lukso, 'luksoWarm'],
              [ours, 'oursWarm'],
            ];
      for (const [base, key] of warm) t[key].push(await get(base, warmCid, size));
      // the round's content is let go (the warm block is kept)
      for (const cid of cids) {
        blocks.delete(cid);
        unixfs.delete(cid);
      }
    }
    const hitsBefore = gatewayHits;
    await get(ours, warmCid, size);
    assert.equal(gatewayHits, hitsBefore, 'our warm fetch is served from R2');
    const f = (xs) => `${pct(xs, 50).toFixed(1)} / ${pct(xs, 95).toFixed(1)}`;
    const ratio = (a, b) => `${(pct(a, 50) / pct(b, 50)).toFixed(2)} (${median(a.map((x, i) => x / b[i])).toFixed(2)})`;
    rows.push([
      label,
      t.stream.length,
      f(t.stream),
      f(t.whole),
      f(t.lukso),
      ratio(t.stream, t.lukso),
      ratio(t.whole, t.lukso),
      ratio(t.stream, t.whole),
      f(t.oursWarm),
      f(t.luksoWarm),
      (pct(t.oursWarm, 50) / pct(t.luksoWarm, 50)).toFixed(2),
      f(t.direct),
    ]);
    blocks.clear();
    unixfs.clear();
  }
  if (QUICK) console.log('quick run (smoke test: small counts, figures not comparable with BENCHMARKS.md)');
  const peer = LUKSO ? "LUKSO's service-ipfs-proxy" : "a stand-in for LUKSO's relay (race + unverified stream)";
  console.log(`IPFS relay vs ${peer} (wrangler dev, one local TLS gateway), ms p50 / p95:`);
  const them = LUKSO ? 'LUKSO' : 'stand-in';
  console.log(
    `| content | n | ours cold, streamed | ours cold, whole | ${them} cold | streamed / ${them} (paired) | whole / ${them} (paired) | streamed / whole (paired) | ours warm | ${them} warm | warm ratio | gateway directly |`,
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) console.log(`| ${r.join(' | ')} |`);
  console.log(`content encodings seen: ${[...encodings].join(', ')}`);
} finally {
  for (const c of cleanup.reverse()) await c();
  directAgent.destroy();
}
