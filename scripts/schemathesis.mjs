// Checks the Worker against its OpenAPI document with schemathesis (pinned in scripts/setup.sh, installed in
// $PR_TOOLS_HOME/venv): starts the local stack (anvil + the Worker in `wrangler dev`), puts some real things on it
// (a profile, LSP7 and LSP8 contracts, uploads), writes sample values for the formats a pattern cannot express
// (EIP-55 addresses, VerifiableURIs, ABI calldata, CIDs) and runs `st run` with every check on, a fixed seed and
// a bounded number of examples. The API key and the admin token go to their security schemes
// (tests/schemathesis/schemathesis.toml); the hooks there keep the run from revoking the keys it uses.
//   node scripts/schemathesis.mjs [extra `st run` arguments]
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startStack } from './stack.mjs';
import { waitForReceipt } from './chain.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const testsRequire = createRequire(join(root, 'tests/package.json'));
const { concat, encodeAbiParameters, encodeDeployData, encodeFunctionData, getAddress, keccak256, parseAbiParameters, stringToHex, toHex } = await import(
  testsRequire.resolve('viem')
);
const LSP7 = testsRequire('@lukso/lsp7-contracts/artifacts/LSP7Mintable.json');
const LSP8 = testsRequire('@lukso/lsp8-contracts/artifacts/LSP8Mintable.json');
const OWNER = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266'; // anvil's unlocked dev account

const st = process.env.SCHEMATHESIS_BIN ?? 'st';
const MAX_EXAMPLES = '20';
const SEED = '20260101';
// a guard against a hung run, not a verdict on speed: far above any run measured (≈ 100 s on a quiet machine, about
// twice that beside a heavy build)
const TIME_LIMIT_S = 900;

// deterministic "random" bytes, so that a run can be repeated
const bytes = (label, i, n = 32) => keccak256(stringToHex(`${label}:${i}`)).slice(0, 2 + 2 * n);

async function check(res, what) {
  if (!res.ok) throw new Error(`${what}: HTTP ${res.status} ${await res.text()}`);
  return res.json();
}

/** Puts real things on the stack and returns the sample values for the hooks. */
async function prepare(stack) {
  const api = (path, init = {}) => fetch(`${stack.workerUrl}${path}`, { ...init, headers: { authorization: `Bearer ${stack.apiKey}`, ...init.headers } });
  const send = async (tx) => {
    const hash = await stack.chain.rpc('eth_sendTransaction', [{ from: OWNER, gas: '0x989680', ...tx }]);
    const receipt = await waitForReceipt(stack.chain.rpc, hash);
    if (receipt.status !== '0x1') throw new Error(`transaction ${hash} reverted`);
    return receipt;
  };

  // a key of its own with a rate limit the run cannot exhaust
  const key = await check(await stack.admin('POST', '/admin/api-keys', { name: 'schemathesis', rateLimitPerMinute: 1000000 }), 'create the API key');

  const cids = [];
  for (const [name, body, type] of [
    ['profile.json', JSON.stringify({ LSP3Profile: { name: 'Schemathesis', description: 'fuzzing', tags: [], links: [] } }), 'application/json'],
    ['image.png', new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3, 4]), 'image/png'],
    ['empty.txt', new Uint8Array(), 'text/plain'],
  ]) {
    const form = new FormData();
    form.append('file', new Blob([body], { type }), name);
    cids.push((await check(await api('/api/v0/add', { method: 'POST', body: form }), `upload ${name}`)).Hash);
  }
  // CIDs the store does not have (dag-pb, so paths below them are allowed)
  for (const cid of ['QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG', 'bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi']) {
    cids.push(cid, `${cid}/readme`, `${cid}/wiki/index.html`);
  }

  const verifiableUris = [];
  for (let i = 0; i < 12; i++) {
    const content = JSON.stringify({ LSP3Profile: { name: `sample ${i}` } });
    const url = [`ipfs://${cids[0]}`, `https://example.com/${i}.json`, `data:application/json,${encodeURIComponent(content)}`][i % 3];
    const method = i % 2 ? '0x6f357c6a' : '0x8019f9b1';
    verifiableUris.push(concat(['0x0000', method, '0x0020', keccak256(stringToHex(content)), stringToHex(url)]));
  }
  verifiableUris.push(concat(['0x0000', '0xdeadbeef', '0x0004', '0x01020304', stringToHex('ipfs://unknown-method')]));
  verifiableUris.push(concat(['0x6f357c6a', bytes('legacy', 0), stringToHex(`ipfs://${cids[0]}`)])); // legacy JSONURL

  const calldatas = [];
  for (let i = 0; i < 12; i++) {
    const keys = Array.from({ length: i % 4 }, (_, j) => bytes(`key${i}`, j));
    const values = keys.map((_, j) => bytes(`value${i}`, j, (i * 7 + j * 5) % 40));
    calldatas.push(encodeAbiParameters(parseAbiParameters('bytes32[], bytes[]'), [keys, values]));
  }

  // a profile deployed through the API (form 2, so that its address is the same every run)
  const deployed = await check(
    await api('/api/universal-profile', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ salt: bytes('salt', 0), postDeploymentCallData: calldatas[1] }),
    }),
    'deploy a profile',
  );
  // LSP7 and LSP8 contracts, one token minted
  const lsp7 = getAddress(
    (await send({ data: encodeDeployData({ abi: LSP7.abi, bytecode: LSP7.bytecode, args: ['Sample Coin', 'SMPL', OWNER, 0n, false] }) })).contractAddress,
  );
  await send({ to: lsp7, data: encodeFunctionData({ abi: LSP7.abi, functionName: 'mint', args: [OWNER, 1000n, true, '0x'] }) });
  const lsp8 = getAddress(
    (await send({ data: encodeDeployData({ abi: LSP8.abi, bytecode: LSP8.bytecode, args: ['Sample Cards', 'CARD', OWNER, 2n, 0n] }) })).contractAddress,
  );
  await send({ to: lsp8, data: encodeFunctionData({ abi: LSP8.abi, functionName: 'mint', args: [OWNER, toHex(1n, { size: 32 }), true, '0x'] }) });

  // addresses in all three accepted spellings, each address in one only (controllers must differ); the hooks draw
  // half of them from those that exist
  const known = [deployed.universalProfileAddress, deployed.keyManagerAddress, lsp7.toLowerCase(), lsp8];
  const other = [];
  for (let i = 0; i < 60; i++) {
    const address = getAddress(bytes('address', i, 20));
    other.push([address, address.toLowerCase(), `0x${address.slice(2).toUpperCase()}`][i % 3]);
  }

  return { key, samples: { addresses: { known, other }, verifiableUris, calldatas, cids } };
}

const stack = await startStack({ vars: { LOOKUP_CACHE_SECONDS: '0', ADMIN_FAILURES_PER_MINUTE: '1000000', PUBLIC_RATE_LIMIT_PER_MINUTE: '1000000' } });
const dir = mkdtempSync(join(tmpdir(), 'profile-relayer-schemathesis-'));
let code = 1;
try {
  const { key, samples } = await prepare(stack);
  const samplesFile = join(dir, 'samples.json');
  writeFileSync(samplesFile, JSON.stringify(samples, null, 1));
  const args = [
    '--config-file',
    join(root, 'tests/schemathesis/schemathesis.toml'),
    'run',
    `${stack.workerUrl}/openapi.json`,
    '--checks',
    'all',
    '--max-examples',
    MAX_EXAMPLES,
    '--seed',
    SEED,
    '--request-timeout',
    '30',
    '--no-color',
    ...process.argv.slice(2),
  ];
  const child = spawn(st, args, {
    cwd: root,
    stdio: 'inherit',
    env: {
      ...process.env,
      PR_API_KEY: key.apiKey,
      PR_ADMIN_TOKEN: stack.adminToken,
      PR_WORKER_URL: stack.workerUrl,
      PR_PROTECTED_KEY_IDS: [key.id, stack.apiKeyId].join(','),
      PR_SCHEMATHESIS_SAMPLES: samplesFile,
    },
  });
  // bounded in time whatever happens (TIME_LIMIT_S)
  const timer = setTimeout(() => {
    console.error(`schemathesis did not finish within ${TIME_LIMIT_S} s`);
    child.kill('SIGTERM');
  }, TIME_LIMIT_S * 1000);
  code = await new Promise((resolve) => {
    child.on('error', (e) => {
      console.error(`cannot run ${st} (scripts/setup.sh installs it and sets SCHEMATHESIS_BIN): ${e.message}`);
      resolve(1);
    });
    child.on('exit', (c) => resolve(c ?? 1));
  });
  clearTimeout(timer);
  // the hooks keep the run from revoking the keys it uses: make sure
  const { apiKeys } = await check(await stack.admin('GET', '/admin/api-keys'), 'list the API keys');
  const revoked = apiKeys.filter((k) => [key.id, stack.apiKeyId].includes(k.id) && k.revokedAt !== undefined);
  if (revoked.length > 0) {
    console.error(`the run revoked the API keys it uses: ${revoked.map((k) => k.id).join(', ')}`);
    code ||= 1;
  }
} finally {
  await stack.stop();
  rmSync(dir, { recursive: true, force: true });
}
process.exit(code);
