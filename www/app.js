// The demo dApp: plain ES modules, the npm package's `web` build, no framework. Configuration (service URL,
// chain id, JSON-RPC URL, a development API key) comes from /config.json, written by the dev server.
import init, {
  LookupClient,
  RelayerClient,
  decodeVerifiableUri,
  encodeKeyName,
  encodeSetData,
  encodeVerifiableUri,
  fetchRelayCallParams,
  generateSalt,
  predictProfileAddress,
  profileDataFromControllers,
} from '/pkg/web/profile_relayer.js';
import { secp256k1 } from '@noble/curves/secp256k1';
import { keccak_256 } from '@noble/hashes/sha3';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils';

const $ = (id) => document.getElementById(id);
const config = await (await fetch('/config.json')).json();
await init();
const relayer = new RelayerClient({ baseUrl: config.workerUrl, apiKey: config.apiKey });
const lookup = new LookupClient({ baseUrl: config.workerUrl, apiKey: config.apiKey });
$('chain-id').textContent = config.chainId;
$('service-url').textContent = config.workerUrl;

// DEMO KEY: a controller key generated in this page's memory, so that the demo can sign gasless edits without a
// wallet. It is never stored or sent anywhere; a real dApp asks the user's wallet (e.g. the UP browser extension).
const demoKey = secp256k1.utils.randomPrivateKey();
const demoAddress = `0x${bytesToHex(keccak_256(secp256k1.getPublicKey(demoKey, false).slice(1)).slice(-20))}`;
/** Signs a 32-byte hash raw with the demo key: r ‖ s ‖ v (27/28), low s, RFC 6979 (what viem's `sign({ hash })` does). */
function demoSign(hash) {
  const signature = secp256k1.sign(hexToBytes(hash.slice(2)), demoKey, { lowS: true });
  return `0x${signature.toCompactHex()}${(27 + signature.recovery).toString(16)}`;
}
/** `personal_sign` of a quota message with the demo key: the message's EIP-191 hash, signed raw. */
const demoSignQuota = (_message, quotaMessage) => demoSign(quotaMessage.hash);
$('demo-address').textContent = demoAddress;
$('controller').value = demoAddress;

/** A sentence for every error the SDK or the service can produce. */
function describe(error) {
  const code = error?.code;
  const wait = error?.retryAfter ? ` Try again in ${error.retryAfter} s.` : '';
  switch (code) {
    case 'NETWORK_ERROR':
      return 'The service cannot be reached. Check your connection and try again.';
    case 'MISSING_API_KEY':
    case 'INVALID_API_KEY':
      return "This app's API key is not accepted by the relayer (401).";
    case 'API_KEY_REVOKED':
      return "This app's API key was revoked (403).";
    case 'INSUFFICIENT_SCOPE':
      return "This app's API key may not do that (403).";
    case 'RATE_LIMITED':
      return `Too many requests (429).${wait}`;
    case 'RPC_UNAVAILABLE':
      return `The blockchain node is unavailable right now (503).${wait}`;
    case 'INSUFFICIENT_FUNDS':
      return `The relayer cannot pay for transactions right now (503).${wait}`;
    case 'GATEWAY_TIMEOUT':
      return `IPFS did not answer in time (504).${wait}`;
    case 'NOT_FOUND':
    case 'PROFILE_NOT_FOUND':
      return 'Nothing was found at that address.';
    case 'INVALID_ADDRESS':
      return `That is not a valid address: ${error.message}`;
    case 'INVALID_IMAGE':
      return error.message;
    case 'BODY_TOO_LARGE':
      return 'The file is too large.';
    case 'PREDICTION_MISMATCH':
      return 'The relayer deployed at an unexpected address; nothing is trusted.';
    case 'NOT_A_CONTROLLER':
      return 'The demo key is not a controller of this profile (401).';
    case 'NOT_AUTHORISED':
      return 'The demo key lacks a permission on this profile (403).';
    case 'PROFILE_NOT_REGISTERED':
      return 'This profile is not registered with the relayer (404).';
    case 'QUOTA_EXCEEDED':
      return `The profile's monthly gas quota is used up (429).${wait}`;
    case 'DAILY_GAS_CEILING':
      return `The relayer reached its daily gas ceiling (503).${wait}`;
    case 'INVALID_RELAY_NONCE':
      return 'Another edit used the same nonce first; try again.';
    default:
      return code ? `${error.message} (${code})` : String(error?.message ?? error);
  }
}

function show(message, isError = false) {
  $('status').textContent = message;
  $('status').className = isError ? 'error' : '';
}

async function busy(button, work) {
  button.disabled = true;
  try {
    return await work();
  } catch (e) {
    show(describe(e), true);
    return undefined;
  } finally {
    button.disabled = false;
  }
}

const gatewayUrl = (url) =>
  url?.startsWith('ipfs://') ? `${config.workerUrl}/ipfs/${url.slice(7)}` : url?.startsWith('/ipfs/') ? `${config.workerUrl}${url}` : url;

async function imageEntry(file) {
  if (!file.type.startsWith('image/')) throw Object.assign(new Error(`"${file.name}" is not an image.`), { code: 'INVALID_IMAGE' });
  const bytes = new Uint8Array(await file.arrayBuffer());
  let bitmap;
  try {
    bitmap = await createImageBitmap(new Blob([bytes], { type: file.type }));
  } catch {
    throw Object.assign(new Error(`"${file.name}" cannot be read as an image.`), { code: 'INVALID_IMAGE' });
  }
  const { url } = await lookup.upload(bytes);
  // the keccak256(bytes) of the file, as LSP3 images carry it
  const hash = decodeVerifiableUri(encodeVerifiableUri(bytes, url)).hash;
  return { width: bitmap.width, height: bitmap.height, url, verification: { method: 'keccak256(bytes)', data: hash } };
}

let prepared;
/** The profile deployed from this page: address, its LSP3 metadata and controller. */
let current;
$('create-form').addEventListener('submit', (event) => {
  event.preventDefault();
  busy($('prepare'), async () => {
    const name = $('name').value.trim();
    if (!name) throw Object.assign(new Error('Give the profile a name.'), { code: 'INVALID_INPUT' });
    const links = $('links')
      .value.split('\n')
      .map((l) => l.trim())
      .filter(Boolean)
      .map((line) => {
        const [title, url] = line.includes('|') ? line.split('|').map((s) => s.trim()) : [line, line];
        return { title, url };
      });
    const profile = {
      name,
      description: $('description').value.trim(),
      tags: $('tags')
        .value.split(',')
        .map((t) => t.trim())
        .filter(Boolean),
      links,
      profileImage: [],
      backgroundImage: [],
    };
    const file = $('avatar').files[0];
    if (file) profile.profileImage.push(await imageEntry(file));
    const json = JSON.stringify({ LSP3Profile: profile });
    const { url } = await lookup.upload(json);
    const lsp3Profile = encodeVerifiableUri(json, url);
    const data = profileDataFromControllers([$('controller').value.trim()], lsp3Profile);
    const salt = generateSalt();
    const predicted = predictProfileAddress({ salt, postDeploymentCallData: data.postDeploymentCallData });
    prepared = { salt, postDeploymentCallData: data.postDeploymentCallData, predicted, profile, controller: $('controller').value.trim() };
    $('metadata-url').textContent = url;
    $('verifiable-uri').textContent = lsp3Profile;
    $('predicted').textContent = predicted.universalProfile;
    $('prepared').hidden = false;
    show('Metadata uploaded. Check the predicted address, then deploy.');
    $('deploy').focus();
  });
});

$('deploy').addEventListener('click', () =>
  busy($('deploy'), async () => {
    if (!prepared) return;
    show('Deploying…');
    const answer = await relayer.deployProfile({ salt: prepared.salt, postDeploymentCallData: prepared.postDeploymentCallData });
    if (answer.universalProfileAddress !== prepared.predicted.universalProfile) {
      throw Object.assign(new Error('unexpected address'), { code: 'PREDICTION_MISMATCH' });
    }
    const status = await relayer.profileStatus(answer.universalProfileAddress);
    const record = await lookup.address(config.chainId, answer.universalProfileAddress);
    $('profile').hidden = false;
    renderRecord($('profile-card'), record, status);
    current = { address: answer.universalProfileAddress, profile: prepared.profile, controller: prepared.controller };
    // gasless edits are signed by the demo key: offered when it is the profile's controller
    $('gasless').hidden = current.controller.toLowerCase() !== demoAddress;
    $('gasless-result').hidden = true;
    $('new-name').value = prepared.profile.name;
    show(status.deployed ? 'Your profile is deployed.' : 'Sent; the profile will appear once the transaction is mined.');
    $('profile').scrollIntoView();
  }),
);

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const gas = (n) => n.toLocaleString('en');

$('rename-form').addEventListener('submit', (event) => {
  event.preventDefault();
  busy($('rename'), async () => {
    if (!current) return;
    const name = $('new-name').value.trim();
    if (!name) throw Object.assign(new Error('Give the profile a name.'), { code: 'INVALID_INPUT' });
    const up = current.address;
    show('Uploading the new metadata…');
    const profile = { ...current.profile, name };
    const json = JSON.stringify({ LSP3Profile: profile });
    const { url } = await lookup.upload(json);
    const payload = encodeSetData(encodeKeyName('LSP3Profile'), encodeVerifiableUri(json, url));
    const before = await relayer.quota({ address: up, sign: demoSignQuota });
    // KeyManager, chain id and the demo key's next nonce, read from the chain
    const params = await fetchRelayCallParams({ rpcUrl: config.rpcUrl, address: up, controller: demoAddress });
    show('Signing with the demo key and relaying (no gas from you)…');
    const answer = await relayer.execute({ ...params, address: up, payload, sign: demoSign });
    $('gasless-result').hidden = false;
    $('gasless-tx').textContent = answer.transactionHash;
    let tx = await relayer.transaction(answer.transactionHash);
    for (let i = 0; tx.status === 'pending' && i < 60; i++) {
      $('gasless-status').textContent = 'pending…';
      await sleep(1000);
      tx = await relayer.transaction(answer.transactionHash);
    }
    $('gasless-status').textContent =
      tx.status === 'mined' || tx.status === 'reverted'
        ? `${tx.status} in block ${tx.blockNumber} · gas used ${gas(tx.gasUsed)} · charged ${gas(tx.charged ?? 0)}`
        : tx.status + (tx.replacedBy ? ` by ${tx.replacedBy}` : '');
    const after = await relayer.quota({ address: up, sign: demoSignQuota });
    $('gasless-quota').textContent = `${gas(before.quota)} → ${gas(after.quota)} gas left (−${gas(before.quota - after.quota)})`;
    if (tx.status !== 'mined') throw Object.assign(new Error(`The transaction is ${tx.status}.`), { code: 'TRANSACTION_NOT_MINED' });
    current.profile = profile;
    // the transaction is mined, so the new name is on chain; the lookup record follows when the indexer reaches
    // this block, so the card shows the name just written
    const record = await lookup.address(config.chainId, up);
    renderRecord($('profile-card'), { ...record, name, description: profile.description }, { quota: { remaining: after.quota, total: after.totalQuota } });
    show(
      `Renamed to "${name}" without gas: the relayer paid and charged ${gas(tx.charged ?? 0)} gas to the profile's quota. ` +
        'Search results follow once the indexer reaches this block.',
    );
  });
});

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'onclick') node.addEventListener('click', v);
    else node.setAttribute(k, v);
  }
  node.append(...children.filter((c) => c !== undefined && c !== null));
  return node;
}

function renderRecord(container, record, status) {
  container.replaceChildren();
  const image = record.profileImageUrl ?? record.imageUrl ?? record.iconUrl;
  const body = el(
    'div',
    {},
    el('h3', { 'data-testid': 'record-name' }, record.name ?? '(no name)'),
    el(
      'p',
      {},
      el('span', { class: 'badge' }, record.kind),
      record.symbol ? el('span', { class: 'badge' }, record.symbol) : null,
      el('span', { class: 'badge', title: 'metadata verification' }, record.metadataStatus),
    ),
    record.description ? el('p', {}, record.description) : null,
    el(
      'p',
      {},
      el('code', { 'data-testid': 'record-address' }, record.address),
      record.tokenId ? el('span', {}, ` token ${record.tokenIdText ?? record.tokenId}`) : null,
    ),
  );
  if (status?.quota) {
    body.append(
      el(
        'p',
        { 'data-testid': 'quota' },
        `Gas quota: ${status.quota.remaining.toLocaleString('en')} of ${status.quota.total.toLocaleString('en')} left this month`,
      ),
    );
  }
  if (record.tags?.length) body.append(el('p', {}, ...record.tags.map((t) => el('span', { class: 'badge' }, `#${t}`))));
  if (record.tokens?.length) {
    body.append(
      el('h4', {}, 'Tokens'),
      el(
        'ul',
        { class: 'tokens' },
        ...record.tokens.map((t) =>
          el('li', {}, `${t.name ?? t.tokenId} `, el('button', { type: 'button', onclick: () => showToken(record.address, t.tokenId) }, 'Open')),
        ),
      ),
    );
  }
  container.append(image ? el('img', { src: gatewayUrl(image), alt: `Image of ${record.name ?? record.address}` }) : el('img', { alt: '' }), body);
}

async function showLookup(address) {
  const result = $('lookup-result');
  result.replaceChildren(el('p', {}, 'Looking up…'));
  try {
    const record = await lookup.address(config.chainId, address);
    const card = el('div', { class: 'card', 'data-testid': 'lookup-card' });
    renderRecord(card, record);
    result.replaceChildren(card);
    show('');
  } catch (e) {
    result.replaceChildren();
    show(describe(e), true);
  }
}

async function showToken(address, tokenId) {
  try {
    const record = await lookup.token(config.chainId, address, tokenId);
    const card = el('div', { class: 'card', 'data-testid': 'token-card' });
    renderRecord(card, record);
    $('lookup-result').append(card);
  } catch (e) {
    show(describe(e), true);
  }
}

$('lookup-form').addEventListener('submit', (event) => {
  event.preventDefault();
  showLookup($('lookup-address').value.trim());
});

let searchTimer;
let indexNames;
let searchSeq = 0;
$('search-input').addEventListener('input', () => {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(async () => {
    const q = $('search-input').value.trim();
    const seq = ++searchSeq;
    if (!q) return $('search-results').replaceChildren();
    try {
      // the Algolia-compatible route, one query per index (names from /v1/:chainId/stats: [assets, profiles])
      indexNames ??= (await lookup.stats(config.chainId)).map((i) => i.name);
      const results = await Promise.all(indexNames.map((name) => lookup.searchIndex(name, q, { hitsPerPage: 8 })));
      if (seq !== searchSeq) return; // an older answer arriving late
      const hits = results.flatMap((r) => r.hits);
      $('search-results').replaceChildren(
        ...(hits.length
          ? hits.map((h) =>
              el(
                'li',
                {},
                `${h.name ?? h.address} `,
                el('span', { class: 'badge' }, h.kind),
                el(
                  'button',
                  {
                    type: 'button',
                    onclick: () => {
                      $('lookup-address').value = h.address;
                      showLookup(h.address);
                    },
                  },
                  'Open',
                ),
              ),
            )
          : [el('li', {}, 'No results.')]),
      );
    } catch (e) {
      show(describe(e), true);
    }
  }, 200);
});
