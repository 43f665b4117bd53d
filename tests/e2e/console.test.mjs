// The operator console (GET /admin) in the system Chromium (Playwright's driver), against the real stack (anvil +
// wrangler dev): strict headers, a wrong token refused, balance and charts equal to the chain and the JSON routes
// after deploys on three different days (the Worker's test clock, CLOCK_OFFSET_SECONDS), a key created (its secret
// shown once and working), given a budget and revoked (then refused), the token never in a cookie or Web Storage.
// Also the read-only route behind the charts (GET /admin/usage) and PATCH /admin/api-keys/{id}, with bad input.
// Screenshots: into a temporary folder on every run; with UPDATE_SCREENSHOTS=1 also into docs/console/ (docs/operations.md).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startStack } from '../../scripts/stack.mjs';
import { launchChromium } from '../helpers/chromium.mjs';
import { CONTROLLER, indexing } from './helpers/indexing.mjs';

const DAY = 86_400;
const docs = fileURLToPath(new URL('../../docs/console/', import.meta.url));
const shots = mkdtempSync(join(tmpdir(), 'console-shots-'));

let stack;
let browser;
before(async () => {
  stack = await startStack({ vars: { LOOKUP_CACHE_SECONDS: '0', CLOCK_OFFSET_SECONDS: String(-2 * DAY) } });
  browser = await launchChromium(chromium);
});
after(async () => {
  await browser?.close();
  await stack?.stop();
  rmSync(shots, { recursive: true, force: true });
});
const { deployProfile, runIndexerUntilCaughtUp } = indexing(() => stack);

const json = async (res, status = 200) => {
  const body = await res.json();
  assert.equal(res.status, status, JSON.stringify(body));
  return body;
};

/** The gas a deploy's receipt used. */
const gasOf = async (deployed) => {
  const receipt = await stack.chain.rpc('eth_getTransactionReceipt', [deployed.transactionHash]);
  return Number(BigInt(receipt.gasUsed));
};

/** Saves a screenshot of `page` as `name` (always in a temporary folder; in docs/console/ when asked). */
async function screenshot(page, name) {
  const file = join(shots, name);
  // a key shown once is masked: even a throwaway local key never goes into the repository
  await page.screenshot({ path: file, fullPage: true, mask: [page.locator('#created-secret')] });
  assert.ok(statSync(file).size > 5_000, `${name} is a real picture`);
  if (process.env.UPDATE_SCREENSHOTS === '1') copyFileSync(file, join(docs, name));
}

// gas per day: one deploy two days ago, one yesterday, two today (the Worker's clock moved by CLOCK_OFFSET_SECONDS)
const spent = [];
test('deploys on three days', async () => {
  spent.push(await gasOf(await deployProfile()));
  await stack.restartWorker({ vars: { CLOCK_OFFSET_SECONDS: String(-DAY) } });
  spent.push(await gasOf(await deployProfile()));
  await stack.restartWorker({ vars: { CLOCK_OFFSET_SECONDS: '0' } });
  spent.push((await gasOf(await deployProfile())) + (await gasOf(await deployProfile())));
  await runIndexerUntilCaughtUp();
});

test('GET /admin/usage: gas per day and per key, bounded', async () => {
  assert.equal((await fetch(`${stack.workerUrl}/admin/usage`)).status, 401);
  for (const bad of ['0', '91', 'x', '-1', '1.5', '', '5.0', '05', '%2B5', '7&days=7']) {
    const body = await json(await stack.admin('GET', `/admin/usage?days=${bad}`), 400);
    assert.equal(body.error.code, 'INVALID_PARAMETER');
  }
  const usage = await json(await stack.admin('GET', '/admin/usage?days=7'));
  assert.equal(usage.chainId, 31337);
  assert.equal(usage.days.length, 7);
  const today = Math.floor(Date.now() / 1000 / DAY) * DAY;
  assert.deepEqual(
    usage.days.map((d) => d.start),
    [6, 5, 4, 3, 2, 1, 0].map((back) => today - back * DAY),
  );
  assert.equal(usage.days[6].date, new Date(today * 1000).toISOString().slice(0, 10));
  // the relayer's daily meter: each day's receipts, nothing on the other days
  assert.deepEqual(
    usage.days.map((d) => d.gasUsed),
    [0, 0, 0, 0, ...spent],
  );
  const relayer = await json(await stack.admin('GET', '/admin/relayer'));
  assert.equal(usage.days[6].gasUsed, relayer.today.gasUsed);
  // per key: this month's deploy gas, as the key list says
  const keys = (await json(await stack.admin('GET', '/admin/api-keys'))).apiKeys;
  const dev = usage.keys.find((k) => k.id === stack.apiKeyId);
  const listed = keys.find((k) => k.id === stack.apiKeyId);
  assert.equal(dev.gasUsed, listed.gasUsedThisMonth);
  assert.equal(dev.gasBudget, listed.gasBudgetPerMonth);
  assert.ok(dev.gasUsed >= spent[2], 'today’s deploys are on the key');
  assert.equal(usage.keys.length, keys.length);
});

test('PATCH /admin/api-keys/{id}: bad input changes nothing', async () => {
  const path = `/admin/api-keys/${stack.apiKeyId}`;
  assert.equal((await fetch(`${stack.workerUrl}${path}`, { method: 'PATCH', body: '{"gasBudgetPerMonth":1}' })).status, 401);
  for (const [body, code] of [
    [{}, 'MISSING_FIELD'],
    [{ gasBudgetPerMonth: -1 }, 'INVALID_FIELD_TYPE'],
    [{ gasBudgetPerMonth: 2 ** 53 }, 'INVALID_FIELD_TYPE'],
    [{ gasBudgetPerMonth: '5' }, 'INVALID_FIELD_TYPE'],
    [{ rateLimitPerMinute: 0 }, 'INVALID_FIELD_TYPE'],
    [{ name: '   ' }, 'INVALID_FIELD_TYPE'],
    [{ scopes: [] }, 'INVALID_FIELD_TYPE'],
    [{ revokedAt: null }, 'UNKNOWN_FIELD'],
    // one bad field: the good one is not written either
    [{ name: 'renamed', gasBudgetPerMonth: -5 }, 'INVALID_FIELD_TYPE'],
  ]) {
    const answer = await json(await stack.admin('PATCH', path, body), 400);
    assert.equal(answer.error.code, code, JSON.stringify(body));
  }
  assert.equal((await json(await stack.admin('PATCH', '/admin/api-keys/0123456789abcdef', { name: 'x' }), 404)).error.code, 'API_KEY_NOT_FOUND');
  assert.equal((await json(await stack.admin('PATCH', '/admin/api-keys/..%2Fx', { name: 'x' }), 404)).error.code, 'API_KEY_NOT_FOUND');
  const key = (await json(await stack.admin('GET', '/admin/api-keys'))).apiKeys.find((k) => k.id === stack.apiKeyId);
  assert.equal(key.name, 'development');

  // a budget below one deploy: the key's next deploy is refused before anything is sent; null restores the default
  assert.equal((await json(await stack.admin('PATCH', path, { gasBudgetPerMonth: 1 }))).gasBudgetPerMonth, 1);
  const nonce = await stack.chain.rpc('eth_getTransactionCount', [stack.relayerAddress, 'latest']);
  const refused = await fetch(`${stack.workerUrl}/api/universal-profile`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ lsp6ControllerAddress: [CONTROLLER] }),
  });
  assert.equal((await json(refused, 429)).error.code, 'GAS_BUDGET_EXCEEDED');
  assert.equal(await stack.chain.rpc('eth_getTransactionCount', [stack.relayerAddress, 'pending']), nonce);
  const restored = await json(await stack.admin('PATCH', path, { gasBudgetPerMonth: null }));
  assert.equal(restored.gasBudgetPerMonth, undefined);
  assert.equal(restored.name, 'development');
});

test('the page: strict headers, nothing inline, only its own files', async () => {
  const res = await fetch(`${stack.workerUrl}/admin/`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type'), /^text\/html/);
  const csp = res.headers.get('content-security-policy');
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /script-src 'self'(;|$)/);
  assert.match(csp, /frame-ancestors 'none'/);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
  assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
  assert.equal(res.headers.get('referrer-policy'), 'no-referrer');
  assert.equal(res.headers.get('x-frame-options'), 'DENY');
  assert.equal(res.headers.get('set-cookie'), null);
  const html = await res.text();
  assert.ok(!html.includes(stack.adminToken));
  const script = await fetch(`${stack.workerUrl}/admin/assets/console.js`);
  assert.match(script.headers.get('content-type'), /^text\/javascript/);
  assert.equal(script.headers.get('content-security-policy'), csp);
  for (const path of ['/admin/assets/nope.js', '/admin/assets/..%2F..%2Fwrangler.toml', '/admin/assets/']) {
    assert.equal((await fetch(`${stack.workerUrl}${path}`)).status, 404, path);
  }
  assert.equal((await fetch(`${stack.workerUrl}/admin/assets/console.js`, { method: 'POST' })).status, 405);
});

test('the console: wrong token, balance, charts, keys created / budgeted / revoked, token kept in memory only', async () => {
  const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
  const page = await context.newPage();
  const violations = [];
  page.on('console', (m) => {
    // the wrong token's 401 and a missing webhook route's 404 are reported by Chromium as failed loads: expected
    if (m.type() === 'error' && !/^Failed to load resource: the server responded with a status of 40[14]/.test(m.text())) violations.push(m.text());
  });
  page.on('pageerror', (e) => violations.push(e.message));
  try {
    await page.goto(`${stack.workerUrl}/admin/`);

    // a wrong token: an error, no dashboard
    await page.fill('#token', 'not-the-admin-token-at-all');
    await page.click('#login button[type=submit]');
    await page.waitForSelector('#login-error:not([hidden])');
    assert.match(await page.textContent('#login-error'), /wrong admin token/i);
    assert.equal(await page.isVisible('#dashboard'), false);

    await page.fill('#token', stack.adminToken);
    await page.click('#login button[type=submit]');
    await page.waitForSelector('body[data-loaded]');
    assert.equal(await page.isVisible('#login'), false);

    // balance: the chain's, in LYX with 4 decimals
    const wei = BigInt(await stack.chain.rpc('eth_getBalance', [stack.relayerAddress, 'latest']));
    const frac = String(((wei % 10n ** 18n) * 10_000n) / 10n ** 18n).padStart(4, '0');
    const lyx = `${(wei / 10n ** 18n).toLocaleString('en-US')}.${frac}`;
    const facts = await page.textContent('#relayer-facts');
    assert.ok(facts.includes(`${lyx} LYX`), `${lyx} in ${facts}`);
    assert.ok(facts.toLowerCase().includes(stack.relayerAddress.toLowerCase()), 'the signer');
    // pending transactions: none (every deploy above is mined), from GET /admin/relayer/transactions
    assert.equal(await page.textContent('#pending [data-state=empty]'), 'No pending transactions.');

    // gas per day: 30 bars, the last three days' heights are the receipts' gas
    const bars = await page.$$eval('#chart-days rect.bar', (rects) =>
      rects.map((r) => [r.dataset.date, Number(r.dataset.gas), Number(r.getAttribute('height'))]),
    );
    assert.equal(bars.length, 30);
    assert.deepEqual(
      bars.slice(-3).map((b) => b[1]),
      spent,
    );
    assert.ok(bars.slice(0, -3).every((b) => b[1] === 0 && b[2] === 0));
    const tallest = Math.max(...spent);
    for (const [, gas, height] of bars.slice(-3)) assert.ok(Math.abs(height - (gas / tallest) * 180) < 0.2, 'bar height ∝ gas');
    // gas per key: the development key's bar
    const usage = await json(await stack.admin('GET', '/admin/usage'));
    const devGas = usage.keys.find((k) => k.id === stack.apiKeyId).gasUsed;
    assert.equal(Number(await page.getAttribute(`#chart-keys rect[data-key="${stack.apiKeyId}"]`, 'data-gas')), devGas);

    // indexer lag per chain; webhook deliveries rendered (or "not available" where the route does not exist)
    assert.match(await page.textContent('#indexer-table tr[data-chain="31337"] [data-field=lag]'), /^\d+$/);
    assert.match(await page.textContent('#deliveries [data-field=webhook-url]'), /No operator webhook is set/);
    await screenshot(page, 'overview.png');

    // create a key: the secret once, and it works
    await page.fill('#new-name', 'console test');
    await page.uncheck('#create-key input[value=upload]');
    await page.fill('#new-budget', '1234567');
    await page.click('#create-key button[type=submit]');
    await page.waitForSelector('#created:not([hidden])');
    const secret = (await page.textContent('#created-secret')).trim();
    assert.match(secret, /^prk_[0-9a-f]{64}$/);
    const created = (await json(await stack.admin('GET', '/admin/api-keys'))).apiKeys.find((k) => k.name === 'console test');
    assert.deepEqual(created.scopes, ['deploy', 'register']);
    assert.equal(created.gasBudgetPerMonth, 1234567);
    const asKey = () =>
      fetch(`${stack.workerUrl}/api/universal-profile/0x0000000000000000000000000000000000000001`, { headers: { authorization: `Bearer ${secret}` } });
    assert.equal((await asKey()).status, 404, 'the new key authenticates (no such profile)');
    await page.waitForSelector(`#key-table tr[data-key="${created.id}"]`);
    await screenshot(page, 'keys.png');
    await page.click('#created-dismiss');
    assert.ok(!(await page.content()).includes(secret), 'the secret is gone from the page');

    // a budget
    const row = `#key-table tr[data-key="${created.id}"]`;
    await page.fill(`${row} input[type=number]`, '555555');
    await page.click(`${row} button[data-action=budget]`);
    await page.waitForFunction((sel) => document.querySelector(sel)?.value === '555555' && document.body.dataset.loaded, `${row} input[type=number]`);
    for (let i = 0; ; i++) {
      const key = (await json(await stack.admin('GET', '/admin/api-keys'))).apiKeys.find((k) => k.id === created.id);
      if (key.gasBudgetPerMonth === 555555) break;
      assert.ok(i < 20, 'the budget is stored');
      await new Promise((r) => setTimeout(r, 250));
    }

    // revoke (after the confirmation), then the key is refused
    page.once('dialog', (d) => d.accept());
    await page.click(`${row} button[data-action=revoke]`);
    await page.waitForSelector(`${row}.revoked`);
    assert.equal((await json(await asKey(), 403)).error.code, 'API_KEY_REVOKED', 'the revoked key is refused');
    assert.equal(await page.isDisabled(`${row} button[data-action=budget]`), true);
    const patched = await stack.admin('PATCH', `/admin/api-keys/${created.id}`, { gasBudgetPerMonth: 1 });
    assert.equal((await json(patched, 403)).error.code, 'API_KEY_REVOKED', 'a revoked key is not changed');

    // the token: in no cookie, no Web Storage, not in the page
    assert.equal(await page.evaluate(() => document.cookie), '');
    assert.deepEqual(await context.cookies(), []);
    const stored = await page.evaluate(() => JSON.stringify([{ ...localStorage }, { ...sessionStorage }]));
    assert.equal(stored, '[{},{}]');
    assert.ok(!(await page.content()).includes(stack.adminToken));

    // log out: the token is forgotten, the next admin action needs it again
    await page.click('#logout');
    assert.equal(await page.isVisible('#login'), true);
    assert.equal(await page.isVisible('#dashboard'), false);
    assert.deepEqual(violations, [], 'no CSP violation, no script error');
  } finally {
    await context.close();
  }
});
