// Type-checked with `tsc --noEmit` (tests/tsconfig.json): the generated declarations are complete and precise.
import * as lite from 'profile-relayer/lite';
import { decodePermissionsObject, luksoConstants } from 'profile-relayer';
import { recoverQuotaSigner, recoverRelayCallSigner } from 'profile-relayer/recover';
import {
  type Address,
  type DecodedVerifiableUri,
  type Hex,
  type PredictedAddresses,
  type ProfileData,
  type ProfileRelayerError,
  type ProfileRelayerErrorCode,
  type ServiceErrorCode,
  type CreateProfileResult,
  type IndexRecord,
  type NotIndexed,
  type QuotaMessage,
  type RelayCallInput,
  LookupClient,
  RelayerClient,
  decodePostDeploymentCallData,
  decodeVerifiableUri,
  encodeArrayElementKey,
  encodeDeployCalldata,
  encodeKeyName,
  encodePostDeploymentCallData,
  encodeVerifiableUri,
  errorCodes,
  generateSalt,
  isProfileRelayerError,
  predictProfileAddress,
  profileDataFromControllers,
  verifyVerifiableUri,
  relayCallDigest,
  encodeExecuteRelayCall,
  quotaMessage,
  decodeRelayCallRevert,
  encodeSetData,
  encodeSetDataBatch,
  fetchRelayCallParams,
  type ExecuteResponse,
  type QuotaResponse,
  type TransactionStatus,
  type TransactionState,
  type RelayCallParams,
} from 'profile-relayer';
import initWeb, { encodeKeyName as webEncodeKeyName } from 'profile-relayer/web';

const value: Hex = encodeVerifiableUri('{"LSP3Profile":{}}', 'ipfs://QmX');
const fromBytes: Hex = encodeVerifiableUri(new Uint8Array([1, 2, 3]), 'ipfs://QmY');
const decoded: DecodedVerifiableUri = decodeVerifiableUri(value);
const format: 'verifiableUri' | 'legacy' = decoded.format;
const ok: boolean = verifyVerifiableUri(fromBytes, new Uint8Array([1, 2, 3]));
const key: Hex = encodeKeyName('LSP5ReceivedAssetsMap:<address>', ['0xcafecafecafecafecafecafecafecafecafecafe']);
const element: Hex = encodeArrayElementKey('AddressPermissions[]', 2n ** 64n);
const controller: Address = '0xcafecafecafecafecafecafecafecafecafecafe';
const data: ProfileData = profileDataFromControllers([controller], value);
const calldata: Hex = encodePostDeploymentCallData(data.keys, data.values);
const { keys, values }: { keys: Hex[]; values: Hex[] } = decodePostDeploymentCallData(calldata);
const salt: Hex = generateSalt();
const predicted: PredictedAddresses = predictProfileAddress({ salt, postDeploymentCallData: calldata, network: 4201 });
const up: Address = predicted.universalProfile;
const tx: Hex = encodeDeployCalldata({
  salt,
  postDeploymentCallData: calldata,
  network: {
    factory: controller,
    universalProfileInit: controller,
    keyManagerInit: controller,
    postDeploymentModule: controller,
  },
});

try {
  decodeVerifiableUri('0x');
} catch (e: unknown) {
  // docs/sdk.md's example: the guard narrows `unknown` (no cast)
  if (isProfileRelayerError(e)) console.log(e.code);
  if (isProfileRelayerError(e)) {
    const err: ProfileRelayerError = e;
    const code: ProfileRelayerErrorCode | ServiceErrorCode = err.code;
    const status: number | undefined = err.status;
    console.log(status, err.retryAfter);
    const known: ProfileRelayerErrorCode[] = errorCodes();
    console.log(code, known.length);
  }
}

const call: RelayCallInput = { keyManager: controller, chainId: 42, nonce: 5n << 128n, payload: '0x7f23690c' };
const digest: Hex = relayCallDigest({ ...call, validityTimestamps: '0x0', value: 0 });
const relayCalldata: Hex = encodeExecuteRelayCall({ signature: digest, nonce: '7', payload: call.payload });
const relaySigner: Address = recoverRelayCallSigner(call, digest);
const quota: QuotaMessage = quotaMessage(controller, 1_700_000_000);
const quotaSigner: Address = recoverQuotaSigner(controller, 1_700_000_000n, quota.hash, 'text');
const revertName: string = decodeRelayCallRevert('0x').name;
console.log(relayCalldata, relaySigner, quotaSigner, revertName);
// the packed message is hex (viem `signMessage({ message: { raw } })`), the text one a string
const packedMessage: Hex = quotaMessage(controller, 1).message;
const textMessage: string = quotaMessage(controller, 1, 'text').message;
// @ts-expect-error: the text message is not hex
const textAsHex: Hex = quotaMessage(controller, 1, 'text').message;
console.log(packedMessage, textMessage, textAsHex);
// @ts-expect-error: the quota scheme is "packed" or "text"
quotaMessage(controller, 1, 'utf8');

// @ts-expect-error: the network must be one of the declared names / chain ids / constants
predictProfileAddress({ salt, postDeploymentCallData: calldata, network: 'goerli' });
// @ts-expect-error: content is a string or a Uint8Array
encodeVerifiableUri(42, 'ipfs://x');
// @ts-expect-error: implementations is a closed set
predictProfileAddress({ salt, postDeploymentCallData: calldata, implementations: 'v9' });

async function clients(): Promise<[CreateProfileResult, IndexRecord | NotIndexed]> {
  const relayer = new RelayerClient({ baseUrl: 'http://127.0.0.1:8787', apiKey: 'prk_…' });
  const lookup = new LookupClient({
    baseUrl: 'http://127.0.0.1:8787',
    timeout: 5000,
    retries: 2,
    maxRetryDelay: 10,
    signal: new AbortController().signal,
    fetch: (url, init) => fetch(url, init),
  });
  // @ts-expect-error: timeout is milliseconds, a number
  new LookupClient({ baseUrl: 'x', timeout: '5s' });
  const created = await relayer.createProfile({ metadata: { LSP3Profile: { name: 'x' } }, controllers: [controller] });
  const deployed: Address = (await relayer.deployProfile({ lsp6ControllerAddress: [controller] })).universalProfileAddress;
  const quota: number | undefined = (await relayer.registerProfile(deployed)).quota.remaining;
  const record = await lookup.address(42, created.universalProfileAddress);
  const hits = (await lookup.search(42, 'alice', { hitsPerPage: 5 })).profiles.hits;
  // options are optional, as at run time
  const first = (await lookup.search(42, 'alice')).assets.hits;
  const indexed = await lookup.searchIndex('profiles', 'alice');
  console.log(first.length, indexed.hits.length);
  // `using` frees the client's wasm memory (no esnext.disposable lib needed to type it)
  lookup[Symbol.dispose]();
  const [, profiles] = await lookup.stats(42);
  const lag: number | null = (await lookup.indexer(42)).lag;
  console.log(profiles.entries, lag);
  const bytes: Uint8Array = await lookup.ipfs('bafy');
  const cid: string = (await lookup.upload(bytes)).cid;
  // @ts-expect-error: deployProfile takes one of the two forms
  await relayer.deployProfile({ salt: '0x00' });
  console.log(quota, hits.length, cid);
  return [created, record];
}

// the encodings-only entry: typed the same, plus the batch calls; no clients
function liteEntry(): [Hex[], Address] {
  const keys: Hex[] = lite.encodeKeyNames(['LSP3Profile', { keyName: 'AddressPermissions:Permissions:<address>', dynamicKeyParts: controller }]);
  const single: Hex = lite.encodeKeyName('AddressPermissions:Permissions:<address>', controller);
  const { key, value }: { key: Hex; value: Hex } = lite.encodeVerifiableUriData('LSP3Profile', '{}', 'ipfs://QmX');
  lite.encodeVerifiableUriData('MyMap:<address>', new Uint8Array([1]), 'ipfs://QmY', [controller]);
  // a JSON value, as erc725.js takes it (hashed as its JSON.stringify text), and erc725.js's permissions object
  lite.encodeVerifiableUriData('LSP3Profile', { LSP3Profile: {} }, 'ipfs://QmX');
  const permissions: Hex = lite.encodePermissions({ SETDATA: true, CALL: false });
  void permissions;
  // permission names are known: a misspelt one is a type error, as with erc725.js
  // @ts-expect-error: SETDAT is no permission
  lite.encodePermissions({ SETDAT: true });
  const granted: Record<string, boolean> = { SETDATA: true };
  lite.encodePermissions(granted);
  lite.encodePermissions(['SETDATA', 'CALL'] as const);
  const names: lite.PermissionName[] = lite.decodePermissions(permissions);
  const all: boolean = decodePermissionsObject(permissions).SUPER_SETDATA;
  void names;
  void all;
  // the constants are typed by name: a known name is a Hex (also under noUncheckedIndexedAccess), a misspelt one an error
  const constants = luksoConstants();
  const profileKey: Hex = constants.dataKeys.LSP3Profile;
  const prefix: Hex = constants.dataKeyPrefixes['AddressPermissions:Permissions'];
  const setData: Hex = constants.permissions.SETDATA;
  const lsp0: Hex = constants.interfaceIds.LSP0ERC725Account;
  // @ts-expect-error: LSP3Profil is no data key
  void constants.dataKeys.LSP3Profil;
  void [profileKey, prefix, setData, lsp0];
  // bytes of any kind: an ArrayBuffer or a DataView is hashed as its bytes
  lite.encodeVerifiableUri(new ArrayBuffer(2), 'ipfs://QmX');
  lite.encodeVerifiableUri(new DataView(new ArrayBuffer(2)), 'ipfs://QmX');
  // @ts-expect-error: content is a string, a Uint8Array or a JSON object
  lite.encodeVerifiableUriData('LSP3Profile', 42, 'ipfs://QmX');
  const [p]: PredictedAddresses[] = lite.predictProfileAddresses([{ salt, postDeploymentCallData: calldata }]);
  // @ts-expect-error: the lite entry has no clients
  new lite.RelayerClient({ baseUrl: 'x', apiKey: 'y' });
  // @ts-expect-error: an entry is a name or { keyName, dynamicKeyParts }
  lite.encodeKeyNames([{ name: 'LSP3Profile' }]);
  return [[...keys, single, key, value], p.universalProfile];
}

async function web(): Promise<Hex> {
  await initWeb();
  return webEncodeKeyName('LSP3Profile') as Hex;
}

async function relay(): Promise<[ExecuteResponse, QuotaResponse, TransactionStatus]> {
  // no API key: the LSP15 routes take none
  const relayer = new RelayerClient({ baseUrl: 'http://127.0.0.1:8787' });
  const params: RelayCallParams = await fetchRelayCallParams({ rpcUrl: 'http://127.0.0.1:8545', address: controller, controller });
  const payload: Hex = encodeSetData(encodeKeyName('LSP3Profile'), '0xc0ffee');
  const batch: Hex = encodeSetDataBatch([encodeKeyName('LSP3Profile')], ['0x']);
  const sign = async (digest: Hex): Promise<Hex> => digest;
  const sent = await relayer.execute({ ...params, address: controller, payload, sign });
  const ready = await relayer.execute({ address: controller, nonce: 1n, validityTimestamps: '0x0', payload: batch, signature: sent.transactionHash });
  const state: TransactionState | undefined = ready.status;
  const gas: number | undefined = sent.gasUsed;
  const left = await relayer.quota({ address: controller, sign: (message: string, m: QuotaMessage) => (m.scheme === 'packed' ? message : m.hash) as Hex });
  const total: number | undefined = left.totalQuota;
  const status = await relayer.transaction(sent.transactionHash);
  const charged: number | null = status.charged;
  // @ts-expect-error: quota units are a closed set
  const unit: 'eth' = left.unit;
  // @ts-expect-error: nonce is required
  await relayer.execute({ address: controller, payload, sign });
  console.log(state, gas, total, charged, unit);
  return [sent, left, status];
}

export { clients, relay, element, format, keys, liteEntry, ok, tx, up, values, key, web };
