// The npm package's typed clients against the real Worker (wrangler dev + anvil), in Node.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as sdk from 'profile-relayer';
import { startStack } from '../../scripts/stack.mjs';
import { tokenBucket } from './helpers/bucket.mjs';

let stack;
let relayer;
let lookup;
before(async () => {
  stack = await startStack({ vars: { LOOKUP_CACHE_SECONDS: '0' } });
  relayer = new sdk.RelayerClient({ baseUrl: stack.workerUrl, apiKey: stack.apiKey });
  lookup = new sdk.LookupClient({ baseUrl: stack.workerUrl, apiKey: stack.apiKey });
});
after(async () => {
  await stack?.stop();
});

const controller = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';

test('createProfile: upload, VerifiableURI, prediction, deploy — the answered address is the prediction', async () => {
  const metadata = { LSP3Profile: { name: 'Client Made', description: 'through RelayerClient.createProfile', tags: ['sdk'], links: [] } };
  const created = await relayer.createProfile({ metadata, controllers: [controller] });
  assert.equal(created.pending, false);
  assert.match(created.transactionHash, /^0x[0-9a-f]{64}$/);
  const predicted = sdk.predictProfileAddress({ salt: created.salt, postDeploymentCallData: created.postDeploymentCallData });
  assert.equal(created.universalProfileAddress, predicted.universalProfile);
  const decoded = sdk.decodeVerifiableUri(created.lsp3Profile);
  assert.equal(decoded.url, `ipfs://${created.metadataCid}`);
  // the uploaded bytes come back verified
  const bytes = await lookup.ipfs(created.metadataCid);
  assert.equal(sdk.verifyVerifiableUri(created.lsp3Profile, bytes), true);
  const status = await relayer.profileStatus(created.universalProfileAddress);
  assert.equal(status.deployed, true);
  assert.equal(status.quota.total, 20_000_000);
  const registered = await relayer.registerProfile(created.universalProfileAddress);
  assert.equal(registered.newlyRegistered, false);
  // lookup reads it through (indexed on demand) and search finds it
  const record = await lookup.address(31337, created.universalProfileAddress);
  assert.equal(record.name, 'Client Made');
  assert.equal(record.metadataStatus, 'verified');
  const found = await lookup.search(31337, 'client made', { hitsPerPage: 5 });
  assert.equal(found.profiles.hits[0].address, created.universalProfileAddress);
  const [assets, profiles] = await lookup.stats(31337);
  assert.equal(assets.name, 'dev_local_assets');
  assert.ok(profiles.entries >= 1);
  assert.equal((await lookup.indexer(31337)).chainId, 31337);
  const viaAlgoliaRoute = await lookup.searchIndex(profiles.name, 'client', { hitsPerPage: 3 });
  assert.equal(viaAlgoliaRoute.hits[0].address, created.universalProfileAddress);
  assert.equal(viaAlgoliaRoute.hitsPerPage, 3);
});

test('deployProfile (Form 1 and Form 2) and upload', async () => {
  const form1 = await relayer.deployProfile({ lsp6ControllerAddress: [controller] });
  assert.match(form1.universalProfileAddress, /^0x[0-9a-fA-F]{40}$/);
  const { postDeploymentCallData } = sdk.profileDataFromControllers([controller]);
  const salt = sdk.generateSalt();
  const form2 = await relayer.deployProfile({ salt, postDeploymentCallData });
  assert.equal(form2.universalProfileAddress, sdk.predictProfileAddress({ salt, postDeploymentCallData }).universalProfile);
  const up = await lookup.upload({ hello: 'world' });
  assert.equal(up.cid, sdk.computeCid(new TextEncoder().encode('{"hello":"world"}')));
  assert.equal(up.url, `ipfs://${up.cid}`);
});

test('errors: validation before sending, service codes with status, network failures', async () => {
  await assert.rejects(
    relayer.deployProfile({ salt: '0x12', postDeploymentCallData: '0x' }),
    (e) => e instanceof Error && e.code === 'INVALID_LENGTH' && e.status === undefined,
  );
  await assert.rejects(
    relayer.registerProfile('0x000000000000000000000000000000000000dEaD'),
    (e) => e.code === 'PROFILE_NOT_FOUND' && e.status === 404 && sdk.isProfileRelayerError(e),
  );
  const bad = new sdk.RelayerClient({ baseUrl: stack.workerUrl, apiKey: 'prk_' + '00'.repeat(32) });
  await assert.rejects(bad.deployProfile({ lsp6ControllerAddress: [controller] }), (e) => e.code === 'INVALID_API_KEY' && e.status === 401);
  assert.equal((await lookup.address(31337, '0x000000000000000000000000000000000000dEaD')).LSPStandard, 'EOA');
  await assert.rejects(lookup.ipfs('not-a-cid'), (e) => e.code === 'INVALID_CID');
  const offline = new sdk.LookupClient({ baseUrl: 'http://127.0.0.1:9' });
  await assert.rejects(offline.stats(31337), (e) => e.code === 'NETWORK_ERROR' && e.status === undefined);
  assert.throws(
    () => new sdk.RelayerClient({ baseUrl: 'ftp://x', apiKey: 'k' }),
    (e) => e.code === 'INVALID_ARGUMENT',
  );
  const noKey = new sdk.LookupClient({ baseUrl: stack.workerUrl });
  await assert.rejects(noKey.upload('x'), (e) => e.code === 'INVALID_ARGUMENT');
  // 429 carries retryAfter (a token back every minute: asked until refused, which it must be once the bucket cannot
  // have refilled)
  const { apiKey } = await (await stack.admin('POST', '/admin/api-keys', { name: 'slow', rateLimitPerMinute: 1 })).json();
  const slow = new sdk.RelayerClient({ baseUrl: stack.workerUrl, apiKey });
  const bucket = tokenBucket({ limit: 1 });
  await slow
    .profileStatus(sdk.predictProfileAddress({ salt: sdk.generateSalt(), postDeploymentCallData: sdk.encodePostDeploymentCallData([], []) }).universalProfile)
    .catch(() => {});
  bucket.take();
  for (let i = 0; ; i++) {
    assert.ok(i < 10, 'never refused');
    const refused = await slow.profileStatus(controller).then(
      () => null,
      (e) => e,
    );
    if (refused?.code === 'RATE_LIMITED') {
      assert.ok(refused.status === 429 && refused.retryAfter > 0, String(refused));
      break;
    }
    assert.ok(!bucket.mustRefuse(), `not refused: ${refused?.code}`);
    bucket.take();
  }
});

test('answers of another shape than their type are INVALID_RESPONSE, naming the field', async () => {
  // a server that is not a profile-relayer: each path answers a body of the wrong shape
  const { createServer } = await import('node:http');
  const up = '0xBB645D97B0c7D101ca0d73131e521fe89B463BFD';
  const status = {
    universalProfileAddress: up,
    deployed: true,
    registered: false,
    pendingTransaction: null,
    deploymentTransaction: null,
    registeredAt: null,
    quota: null,
  };
  const bodies = {
    [`/api/universal-profile/${up}`]: { ...status, registeredAt: '12' },
    '/v1/42/stats': [{ name: 'a', entries: 1 }],
    '/v1/42/indexer': 'not json',
    [`/api/transaction/0x${'11'.repeat(32)}`]: {
      hash: `0x${'11'.repeat(32)}`,
      kind: 'execute',
      profile: up,
      status: 'exploded',
      replacedBy: null,
      blockNumber: null,
      gasUsed: null,
      charged: null,
    },
  };
  const server = createServer((req, res) => {
    const body = bodies[req.url];
    res.writeHead(body === undefined ? 404 : 200, { 'content-type': 'application/json' });
    res.end(typeof body === 'string' ? body : JSON.stringify(body ?? {}));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const baseUrl = `http://127.0.0.1:${server.address().port}`;
    const relayer = new sdk.RelayerClient({ baseUrl, apiKey: 'k' });
    const lookup = new sdk.LookupClient({ baseUrl });
    const invalid = (pattern) => (e) => e.name === 'ProfileRelayerError' && e.code === 'INVALID_RESPONSE' && e.status === 200 && pattern.test(e.message);
    await assert.rejects(relayer.profileStatus(up), invalid(/registeredAt: expected a non-negative integer/));
    await assert.rejects(lookup.stats(42), invalid(/expected an array of the documented length/));
    await assert.rejects(lookup.indexer(42), invalid(/not JSON/));
    await assert.rejects(relayer.transaction(`0x${'11'.repeat(32)}`), invalid(/status: expected one of/));
    // the same answer with the right shape is returned as it came (unknown fields kept)
    bodies[`/api/universal-profile/${up}`] = { ...status, newField: 1 };
    assert.deepEqual(await relayer.profileStatus(up), { ...status, newField: 1 });
  } finally {
    server.close();
  }
});
