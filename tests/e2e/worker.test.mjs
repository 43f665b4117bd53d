// The relayer Worker end to end: HTTP against `wrangler dev` (workerd, local KV and Durable Objects) and anvil with
// the real LUKSO contracts, both started and stopped here. On-chain results are checked independently with viem.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { decodeFunctionResult, encodeFunctionData, parseAbi } from 'viem';
import * as sdk from 'profile-relayer';
import { startStack } from '../../scripts/stack.mjs';
import { tokenBucket } from './helpers/bucket.mjs';

const upAbi = parseAbi(['function owner() view returns (address)', 'function getDataBatch(bytes32[] keys) view returns (bytes[] values)']);
let stack;
before(async () => {
  stack = await startStack();
});
after(async () => {
  await stack?.stop();
});

function api(path, { method = 'POST', body, key = stack.apiKey, headers = {} } = {}) {
  return fetch(`${stack.workerUrl}${path}`, {
    method,
    headers: {
      ...(key ? { authorization: `Bearer ${key}` } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
}

async function json(res, status) {
  const body = await res.json();
  assert.equal(res.status, status, JSON.stringify(body));
  return body;
}

async function call(to, functionName, args = []) {
  const data = encodeFunctionData({ abi: upAbi, functionName, args });
  const result = await stack.chain.rpc('eth_call', [{ to, data }, 'latest']);
  return decodeFunctionResult({ abi: upAbi, functionName, data: result });
}

async function assertError(res, status, code) {
  const body = await json(res, status);
  assert.deepEqual(Object.keys(body), ['error']);
  assert.equal(body.error.code, code, body.error.message);
  assert.equal(typeof body.error.message, 'string');
  for (const secret of [stack.apiKey, stack.adminToken]) assert.ok(!JSON.stringify(body).includes(secret));
  return body;
}

const controller = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';

test('Form 1: controllers + LSP3 profile → a profile whose data and owner are right', async () => {
  const lsp3Profile = sdk.encodeVerifiableUri('{"LSP3Profile":{"name":"form1"}}', 'ipfs://QmForm1');
  const body = await json(await api('/api/universal-profile', { body: { lsp6ControllerAddress: [controller], lsp3Profile } }), 200);
  assert.match(body.transactionHash, /^0x[0-9a-f]{64}$/);
  const up = body.universalProfileAddress;
  assert.equal(await call(up, 'owner'), body.keyManagerAddress);
  const expected = sdk.profileDataFromControllers([controller], lsp3Profile);
  assert.deepEqual(await call(up, 'getDataBatch', [expected.keys]), expected.values);
  const receipt = await stack.chain.rpc('eth_getTransactionReceipt', [body.transactionHash]);
  assert.equal(receipt.status, '0x1');
  assert.equal(receipt.from.toLowerCase(), stack.relayerAddress.toLowerCase());
});

test('Form 2: the answered address is the client-side prediction; redeploying sends nothing', async () => {
  const { postDeploymentCallData } = sdk.profileDataFromControllers([controller]);
  const salt = sdk.generateSalt();
  const predicted = sdk.predictProfileAddress({ salt, postDeploymentCallData });
  const body = await json(await api('/api/universal-profile', { body: { salt, postDeploymentCallData } }), 200);
  assert.equal(body.universalProfileAddress, predicted.universalProfile);
  assert.equal(body.keyManagerAddress, predicted.keyManager);
  assert.equal(await call(predicted.universalProfile, 'owner'), predicted.keyManager);

  const nonceBefore = await stack.chain.rpc('eth_getTransactionCount', [stack.relayerAddress, 'latest']);
  const again = await json(await api('/api/universal-profile', { body: { salt, postDeploymentCallData } }), 200);
  assert.deepEqual(again, { ...body, transactionHash: null });
  assert.equal(await stack.chain.rpc('eth_getTransactionCount', [stack.relayerAddress, 'latest']), nonceBefore, 'no gas burnt');

  const status = await json(await api(`/api/universal-profile/${predicted.universalProfile}`, { method: 'GET' }), 200);
  assert.equal(status.deployed, true);
  assert.equal(status.registered, true);
  assert.equal(status.deploymentTransaction, body.transactionHash);
  assert.equal(status.quota.total, 20_000_000);
});

test('register: a profile, twice, a contract that is not a profile, an address without code', async () => {
  const { postDeploymentCallData } = sdk.profileDataFromControllers([controller]);
  const salt = sdk.generateSalt();
  const up = sdk.predictProfileAddress({ salt, postDeploymentCallData }).universalProfile;
  // deployed behind the relayer's back, straight through the factory
  const hash = await stack.chain.rpc('eth_sendTransaction', [
    {
      from: '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266',
      to: '0x2300000A84D25dF63081feAa37ba6b62C4c89a30',
      data: sdk.encodeDeployCalldata({ salt, postDeploymentCallData }),
      gas: '0x1c9c380',
    },
  ]);
  assert.ok(hash);
  const first = await json(await api('/api/universal-profile/register', { body: { universalProfileAddress: up } }), 200);
  assert.equal(first.universalProfileAddress, up);
  assert.equal(first.newlyRegistered, true);
  assert.deepEqual(Object.keys(first.quota).sort(), ['remaining', 'resetDate', 'total', 'unit', 'used']);
  assert.equal(first.quota.total, 20_000_000);
  assert.equal(first.quota.unit, 'gas');
  assert.equal(first.quota.remaining, first.quota.total - first.quota.used);
  const reset = new Date(first.quota.resetDate * 1000);
  assert.equal(reset.getUTCDate(), 1);
  assert.equal(reset.getUTCHours(), 0);
  const twice = await json(await api('/api/users', { body: { universalProfileAddress: up } }), 200);
  assert.equal(twice.newlyRegistered, false);
  await assertError(
    await api('/api/universal-profile/register', { body: { universalProfileAddress: '0x2300000A84D25dF63081feAa37ba6b62C4c89a30' } }),
    404,
    'NOT_A_UNIVERSAL_PROFILE',
  );
  await assertError(
    await api('/api/universal-profile/register', { body: { universalProfileAddress: '0x000000000000000000000000000000000000dEaD' } }),
    404,
    'PROFILE_NOT_FOUND',
  );
  await assertError(await api('/api/universal-profile/0x000000000000000000000000000000000000dEaD', { method: 'GET' }), 404, 'PROFILE_NOT_FOUND');
});

test('every error status, with a JSON body and a specific code', async () => {
  const good = { lsp6ControllerAddress: [controller] };
  // 401
  await assertError(await api('/api/universal-profile', { body: good, key: null }), 401, 'MISSING_API_KEY');
  await assertError(await api('/api/universal-profile', { body: good, key: 'nope' }), 401, 'INVALID_API_KEY');
  await assertError(await api('/api/universal-profile', { body: good, key: 'prk_' + 'ab'.repeat(32) }), 401, 'INVALID_API_KEY');
  await assertError(await api('/api/universal-profile', { body: good, headers: { authorization: 'Basic abc' } }), 401, 'INVALID_API_KEY');
  // 403: scope, revoked
  const registerOnly = await json(await stack.admin('POST', '/admin/api-keys', { name: 'register only', scopes: ['register'] }), 201);
  await assertError(await api('/api/universal-profile', { body: good, key: registerOnly.apiKey }), 403, 'INSUFFICIENT_SCOPE');
  const revoked = await json(await stack.admin('DELETE', `/admin/api-keys/${registerOnly.id}`), 200);
  assert.ok(revoked.revokedAt > 0);
  await assertError(
    await api('/api/universal-profile/register', { body: { universalProfileAddress: controller }, key: registerOnly.apiKey }),
    403,
    'API_KEY_REVOKED',
  );
  // 400: bodies
  const salt = '0x' + '11'.repeat(32);
  const calldata = sdk.encodePostDeploymentCallData([], []);
  const cases = [
    [{ salt, postDeploymentCallData: calldata, lsp6ControllerAddress: [controller] }, 'INVALID_DEPLOY_FORM'],
    [{}, 'INVALID_DEPLOY_FORM'],
    [{ salt }, 'MISSING_FIELD'],
    [{ salt, postDeploymentCallData: calldata, extra: 1 }, 'UNKNOWN_FIELD'],
    [{ salt: '0xzz', postDeploymentCallData: calldata }, 'INVALID_HEX'],
    [{ salt: '0x1111', postDeploymentCallData: calldata }, 'INVALID_LENGTH'],
    [{ salt, postDeploymentCallData: '0xdeadbeef' }, 'INVALID_ABI'],
    [{ lsp6ControllerAddress: ['0x70997970c51812DC3A010C7d01b50e0d17dc79C8'] }, 'INVALID_ADDRESS'],
    [{ lsp6ControllerAddress: [] }, 'INVALID_CONTROLLERS'],
    [{ lsp6ControllerAddress: [controller], lsp3Profile: '0x0000' }, 'TRUNCATED_VERIFIABLE_URI'],
    ['{"salt":', 'INVALID_JSON'],
  ];
  for (const [body, code] of cases) await assertError(await api('/api/universal-profile', { body }), 400, code);
  await assertError(
    await api('/api/universal-profile', { body: JSON.stringify(good), headers: { 'content-type': 'text/plain' } }),
    400,
    'UNSUPPORTED_CONTENT_TYPE',
  );
  await assertError(
    await api('/api/universal-profile', { body: { lsp6ControllerAddress: [controller], lsp3Profile: '0x' + '00'.repeat(70_000) } }),
    413,
    'BODY_TOO_LARGE',
  );
  await assertError(await api('/api/universal-profile/register', { body: { universalProfileAddress: '0x12' } }), 400, 'INVALID_ADDRESS');
  // 404 / 405
  await assertError(await api('/nope', { method: 'GET' }), 404, 'NOT_FOUND');
  const notAllowed = await api('/api/universal-profile', { method: 'DELETE' });
  assert.equal(notAllowed.headers.get('allow'), 'OPTIONS, POST');
  await assertError(notAllowed, 405, 'METHOD_NOT_ALLOWED');
  // a method the runtime does not know is not GET
  const query = await api('/admin/api-keys', { method: 'QUERY', key: stack.adminToken });
  assert.equal(query.headers.get('allow'), 'GET, OPTIONS, POST');
  await assertError(query, 405, 'METHOD_NOT_ALLOWED');
  await assertError(await stack.admin('DELETE', '/admin/api-keys/0000000000000000'), 404, 'API_KEY_NOT_FOUND');
  // admin auth
  await assertError(await api('/admin/api-keys', { method: 'GET', key: stack.apiKey }), 401, 'INVALID_ADMIN_TOKEN');
  await assertError(await stack.admin('POST', '/admin/api-keys', { name: 'x', scopes: ['root'] }), 400, 'INVALID_FIELD_TYPE');
  // 429 with Retry-After (a token back every 30 s: asked until refused, which it must be once the bucket cannot have
  // refilled)
  const limited = await json(await stack.admin('POST', '/admin/api-keys', { name: 'slow', rateLimitPerMinute: 2 }), 201);
  const bucket = tokenBucket({ limit: 2 });
  for (let i = 0; ; i++) {
    assert.ok(i < 10, 'never refused');
    const res = await api('/api/universal-profile/register', { body: {}, key: limited.apiKey });
    if (bucket.check(res.status, { allowed: 400, what: `request ${i}` })) {
      await assertError(res, 400, 'MISSING_FIELD');
      continue;
    }
    assert.ok(Number(res.headers.get('retry-after')) >= 1);
    await assertError(res, 429, 'RATE_LIMITED');
    break;
  }
});

test('CORS: preflights are answered and responses carry the headers browsers need', async () => {
  const pre = await fetch(`${stack.workerUrl}/api/universal-profile`, {
    method: 'OPTIONS',
    headers: { origin: 'http://127.0.0.1:5173', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' },
  });
  assert.equal(pre.status, 200);
  assert.equal(pre.headers.get('access-control-allow-origin'), '*');
  assert.match(pre.headers.get('access-control-allow-headers'), /authorization/);
  const res = await api('/nope', { method: 'GET' });
  assert.equal(res.headers.get('access-control-allow-origin'), '*');
  assert.match(res.headers.get('access-control-expose-headers'), /retry-after/);
});

test('admin: keys are listed without secrets and stored only hashed', async () => {
  const { apiKeys } = await json(await stack.admin('GET', '/admin/api-keys'), 200);
  assert.ok(apiKeys.some((k) => k.id === stack.apiKeyId && k.name === 'development'));
  const listing = JSON.stringify(apiKeys);
  assert.ok(!listing.includes('prk_'), 'no key material in the listing');
  assert.ok(!listing.includes(stack.apiKey.slice(4)));
});

test('20 concurrent deploys: all mined, distinct addresses, consecutive nonces', async () => {
  const start = BigInt(await stack.chain.rpc('eth_getTransactionCount', [stack.relayerAddress, 'latest']));
  const results = await Promise.all(
    Array.from({ length: 20 }, () => api('/api/universal-profile', { body: { lsp6ControllerAddress: [controller] } }).then((r) => json(r, 200))),
  );
  const addresses = new Set(results.map((r) => r.universalProfileAddress));
  assert.equal(addresses.size, 20);
  for (const r of results) {
    assert.notEqual(await stack.chain.rpc('eth_getCode', [r.universalProfileAddress, 'latest']), '0x');
    assert.equal(await call(r.universalProfileAddress, 'owner'), r.keyManagerAddress);
  }
  const end = BigInt(await stack.chain.rpc('eth_getTransactionCount', [stack.relayerAddress, 'latest']));
  assert.equal(end - start, 20n, 'one transaction each, no failed or duplicate nonces');
});

test('OpenAPI document is served and lists every route', async () => {
  const doc = await json(await api('/openapi.json', { method: 'GET', key: null }), 200);
  assert.match(doc.openapi, /^3\.1/);
  for (const path of [
    '/api/universal-profile',
    '/api/universal-profile/register',
    '/api/users',
    '/api/universal-profile/{address}',
    '/admin/api-keys',
    '/admin/api-keys/{id}',
    '/health',
    '/openapi.json',
  ]) {
    assert.ok(doc.paths[path], path);
  }
  // narrowed to this deployment
  assert.deepEqual(doc.servers, [{ url: stack.workerUrl, description: 'this deployment' }]);
  assert.deepEqual(doc.components.schemas.ChainId.enum, [stack.chain.chainId, `0x${stack.chain.chainId.toString(16)}`]);
  assert.deepEqual(doc.components.schemas.IndexName.enum, ['dev_local_universal_profiles', 'dev_local_assets']);
});
