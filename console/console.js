// The operator console: reads the Worker's admin JSON routes with the admin token the operator types in. The token
// lives in this module's memory only (never a cookie, never Web Storage) and goes out only as
// `Authorization: Bearer …` to this origin. Every value is put into the page as text (no HTML is built from data).

const SVG = 'http://www.w3.org/2000/svg';
let token = null;

const $ = (id) => document.getElementById(id);

/** A request to an admin route of this Worker; the parsed JSON answer, or an Error with `status` and `code`. */
async function api(method, path, body) {
  const headers = { authorization: `Bearer ${token}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'omit',
    cache: 'no-store',
    referrerPolicy: 'no-referrer',
  });
  const text = await res.text();
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    // not JSON: reported below by status
  }
  if (!res.ok) {
    const error = new Error(json?.error?.message ?? json?.message ?? `${method} ${path}: HTTP ${res.status}`);
    error.status = res.status;
    error.code = json?.error?.code ?? json?.code;
    throw error;
  }
  return json;
}

/** An element with attributes and children (strings become text nodes). */
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v !== undefined && v !== null && v !== false) node.setAttribute(k, v === true ? '' : String(v));
  }
  for (const child of children.flat()) {
    if (child !== undefined && child !== null) node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  for (const child of children) node.append(child instanceof Node ? child : String(child));
  return node;
}

const number = (n) => (typeof n === 'number' ? n.toLocaleString('en-US') : '—');

/** Wei (decimal string) as LYX with 4 decimals, exact (BigInt). */
export function formatWei(wei) {
  if (typeof wei !== 'string' || !/^[0-9]+$/.test(wei)) return '—';
  const value = BigInt(wei);
  const unit = 10n ** 18n;
  const whole = value / unit;
  const frac = ((value % unit) * 10000n) / unit;
  return `${whole.toLocaleString('en-US')}.${frac.toString().padStart(4, '0')} LYX`;
}

/** Large gas figures short: 1.2M, 35k. */
export function shortGas(n) {
  if (n >= 1e9) return `${(n / 1e9).toFixed(1)}G`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(0)}k`;
  return String(n);
}

function showError(message) {
  const box = $('error');
  box.textContent = message;
  box.hidden = !message;
}

function facts(list, rows) {
  list.replaceChildren(...rows.flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v)]));
}

/** A table of objects: the columns are their keys (the first 8 met), values shown as text. */
function genericTable(rows) {
  const columns = [];
  for (const row of rows) {
    for (const k of Object.keys(row)) if (!columns.includes(k) && columns.length < 8) columns.push(k);
  }
  const cell = (v) => (v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v));
  return el(
    'table',
    {},
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        columns.map((c) => el('th', {}, c)),
      ),
    ),
    el(
      'tbody',
      {},
      rows.map((row) =>
        el(
          'tr',
          {},
          columns.map((c) => el('td', {}, cell(row[c]))),
        ),
      ),
    ),
  );
}

/** Vertical bars: one per day, labelled every 5th day. */
function dayChart(days) {
  const width = 900;
  const height = 220;
  const pad = { left: 48, right: 8, top: 10, bottom: 30 };
  const max = Math.max(1, ...days.map((d) => d.gasUsed));
  const plotW = width - pad.left - pad.right;
  const plotH = height - pad.top - pad.bottom;
  const step = plotW / Math.max(1, days.length);
  const chart = svg('svg', { viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': 'gas spent per day' });
  chart.append(svg('line', { class: 'axis', x1: pad.left, y1: pad.top + plotH, x2: width - pad.right, y2: pad.top + plotH }));
  for (const frac of [0, 0.5, 1]) {
    const y = pad.top + plotH * (1 - frac);
    chart.append(svg('text', { x: pad.left - 4, y: y + 3, 'text-anchor': 'end' }, shortGas(Math.round(max * frac))));
  }
  days.forEach((d, i) => {
    const h = (d.gasUsed / max) * plotH;
    const bar = svg('rect', {
      class: 'bar',
      x: (pad.left + i * step + step * 0.15).toFixed(1),
      y: (pad.top + plotH - h).toFixed(1),
      width: (step * 0.7).toFixed(1),
      height: h.toFixed(1),
      'data-date': d.date,
      'data-gas': d.gasUsed,
    });
    bar.append(svg('title', {}, `${d.date}: ${number(d.gasUsed)} gas`));
    chart.append(bar);
    if (i % 5 === 0 || i === days.length - 1) {
      chart.append(svg('text', { x: (pad.left + i * step + step / 2).toFixed(1), y: height - 10, 'text-anchor': 'middle' }, d.date.slice(5)));
    }
  });
  return chart;
}

/** Horizontal bars: one per key, against its budget. */
function keyChart(keys) {
  const shown = keys.filter((k) => !k.revoked || k.gasUsed > 0);
  if (shown.length === 0) return el('p', { class: 'muted' }, 'No API keys.');
  const width = 900;
  const row = 22;
  const labelW = 180;
  const height = shown.length * row + 10;
  const max = Math.max(1, ...shown.map((k) => k.gasUsed));
  const chart = svg('svg', { viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': 'deploy gas per API key' });
  shown.forEach((k, i) => {
    const y = 5 + i * row;
    const w = (k.gasUsed / max) * (width - labelW - 160);
    chart.append(svg('text', { x: labelW - 6, y: y + 14, 'text-anchor': 'end' }, `${k.name} (${k.id.slice(0, 6)}…)`));
    const bar = svg('rect', { class: 'bar key', x: labelW, y: y + 3, width: w.toFixed(1), height: row - 8, 'data-key': k.id, 'data-gas': k.gasUsed });
    bar.append(svg('title', {}, `${k.name}: ${number(k.gasUsed)} of ${number(k.gasBudget)} gas`));
    chart.append(bar);
    chart.append(svg('text', { x: labelW + w + 6, y: y + 14 }, `${shortGas(k.gasUsed)} / ${shortGas(k.gasBudget)}`));
  });
  return chart;
}

function renderRelayer(relayer) {
  const age = relayer.pending.oldestAgeSeconds;
  facts($('relayer-facts'), [
    ['chain', String(relayer.chainId)],
    ['signer', relayer.signer],
    ['balance', formatWei(relayer.balance)],
    ['gas today', `${number(relayer.today.gasUsed)} used · ${number(relayer.today.gasReserved)} reserved · ceiling ${number(relayer.today.ceiling)}`],
    ['gas this month', number(relayer.month.gasUsed)],
    ['pending transactions', `${relayer.pending.count}${age == null ? '' : ` (oldest ${age} s)`}`],
  ]);
  const signers = $('signers');
  if (Array.isArray(relayer.signers)) {
    const rows = relayer.signers.map((s) => (typeof s.balance === 'string' ? { ...s, balance: formatWei(s.balance) } : s));
    signers.replaceChildren(el('h3', {}, 'Signers'), genericTable(rows));
  } else {
    signers.replaceChildren();
  }
}

/** Every signer's pending transactions (GET /admin/relayer/transactions?state=pending). */
function renderPending(answer) {
  const list = answer?.transactions ?? [];
  const head = el(
    'tr',
    {},
    ['hash', 'signer', 'nonce', 'kind', 'profile', 'first sent', 'fee bumps'].map((c) => el('th', {}, c)),
  );
  const rows = list.map((t) =>
    el(
      'tr',
      { 'data-hash': t.hash, class: t.cancelled ? 'revoked' : undefined },
      el('td', {}, el('code', {}, t.hash)),
      el('td', {}, el('code', {}, t.signer)),
      el('td', { 'data-field': 'nonce' }, String(t.nonce)),
      el('td', {}, t.cancelled ? `${t.kind} (cancelled)` : t.kind),
      el('td', {}, t.profile ? el('code', {}, t.profile) : '—'),
      el('td', {}, t.firstSentAt == null ? '—' : new Date(t.firstSentAt * 1000).toISOString()),
      el('td', {}, String(t.feeBumps)),
    ),
  );
  const note = answer?.truncated
    ? el('p', { class: 'muted', 'data-field': 'truncated' }, `Only the ${answer.limitPerSigner} lowest nonces of each signer are listed.`)
    : null;
  $('pending').replaceChildren(
    list.length
      ? el('table', { id: 'pending-table' }, el('thead', {}, head), el('tbody', {}, rows))
      : el('p', { class: 'muted', 'data-state': 'empty' }, 'No pending transactions.'),
    ...(note ? [note] : []),
  );
}

function renderKeys(keys) {
  const head = el(
    'tr',
    {},
    ['name', 'id', 'scopes', 'rate / min', 'used this month', 'budget / month', ''].map((c) => el('th', {}, c)),
  );
  const rows = keys.map((k) => {
    const revoked = k.revokedAt != null;
    const budget = el('input', { type: 'number', min: 0, step: 1, value: k.gasBudgetPerMonth, 'aria-label': `budget of ${k.name}` });
    const set = el('button', { type: 'button', 'data-action': 'budget', disabled: revoked }, 'Set budget');
    set.addEventListener('click', () => act(() => api('PATCH', `/admin/api-keys/${k.id}`, { gasBudgetPerMonth: Number(budget.value) })));
    const revoke = el('button', { type: 'button', 'data-action': 'revoke', disabled: revoked }, revoked ? 'Revoked' : 'Revoke');
    revoke.addEventListener('click', () => {
      if (window.confirm(`Revoke ${k.name} (${k.id})? Its next request is refused.`)) {
        act(() => api('DELETE', `/admin/api-keys/${k.id}`));
      }
    });
    return el(
      'tr',
      { 'data-key': k.id, class: revoked ? 'revoked' : undefined },
      el('td', {}, k.name),
      el('td', {}, el('code', {}, k.id)),
      el('td', {}, k.scopes.join(', ')),
      el('td', {}, number(k.rateLimitPerMinute)),
      el('td', { 'data-field': 'used' }, number(k.gasUsedThisMonth)),
      el('td', { 'data-field': 'budget' }, budget, ' ', set),
      el('td', {}, revoke),
    );
  });
  $('key-table').replaceChildren(el('thead', {}, head), el('tbody', {}, rows));
}

async function renderDeliveries() {
  const box = $('deliveries');
  try {
    // the operator's webhook (balance alerts); each key's own log is at /admin/api-keys/{id}/webhook/deliveries
    const answer = await api('GET', '/admin/webhook/deliveries?limit=20');
    const rows = (answer?.deliveries ?? []).map((d) => ({
      type: d.type,
      state: d.state,
      attempts: d.attempts,
      lastStatus: d.lastStatus ?? d.lastError ?? '',
      created: new Date(d.createdAt * 1000).toISOString(),
      nextAttempt: d.nextAttemptAt ? new Date(d.nextAttemptAt * 1000).toISOString() : '',
    }));
    const where = el(
      'p',
      { class: 'muted', 'data-field': 'webhook-url' },
      answer?.url ? `Operator webhook: ${answer.url}` : 'No operator webhook is set (POST /admin/webhook).',
    );
    box.replaceChildren(where, rows.length ? genericTable(rows) : el('p', { class: 'muted' }, 'No deliveries yet.'));
  } catch (e) {
    if (e.status !== 404) throw e;
    box.replaceChildren(el('p', { class: 'muted', 'data-state': 'unavailable' }, 'Webhook deliveries: not available on this deployment.'));
  }
}

async function renderIndexer() {
  const health = await (await fetch('/health', { cache: 'no-store' })).json();
  const rows = await Promise.all(
    (health.chains ?? []).map(async (chainId) => {
      try {
        const res = await fetch(`/v1/${chainId}/indexer`, { cache: 'no-store' });
        const s = await res.json();
        if (!res.ok) return el('tr', {}, el('td', {}, String(chainId)), el('td', { colspan: 4 }, s?.error?.message ?? `HTTP ${res.status}`));
        return el(
          'tr',
          { 'data-chain': chainId },
          el('td', {}, String(chainId)),
          el('td', {}, number(s.lastIndexedBlock)),
          el('td', {}, number(s.headBlock)),
          el('td', { 'data-field': 'lag' }, number(s.lag)),
          el('td', {}, number(s.unindexable)),
        );
      } catch (e) {
        return el('tr', {}, el('td', {}, String(chainId)), el('td', { colspan: 4 }, e.message));
      }
    }),
  );
  const head = el(
    'tr',
    {},
    ['chain', 'last indexed block', 'head', 'lag (blocks)', 'unindexable'].map((c) => el('th', {}, c)),
  );
  $('indexer-table').replaceChildren(el('thead', {}, head), el('tbody', {}, rows));
}

/** Reads everything and draws it. */
async function refresh() {
  const [relayer, usage, keys, pending] = await Promise.all([
    api('GET', '/admin/relayer'),
    api('GET', '/admin/usage?days=30'),
    api('GET', '/admin/api-keys'),
    api('GET', '/admin/relayer/transactions?state=pending'),
  ]);
  renderRelayer(relayer);
  renderPending(pending);
  $('chart-days').replaceChildren(dayChart(usage.days));
  $('chart-keys').replaceChildren(keyChart(usage.keys));
  renderKeys(keys.apiKeys);
  await Promise.all([renderDeliveries(), renderIndexer()]);
  document.body.dataset.loaded = String(Date.now());
}

/** Runs an admin action, then reads everything again; errors are shown, never thrown. */
async function act(action) {
  showError('');
  try {
    await action();
    await refresh();
  } catch (e) {
    if (e.status === 401) return logout('The admin token was refused.');
    showError(e.message);
  }
}

function logout(message) {
  token = null;
  $('dashboard').hidden = true;
  $('session').hidden = true;
  $('login').hidden = false;
  $('created').hidden = true;
  $('created-secret').textContent = '';
  const box = $('login-error');
  box.textContent = message ?? '';
  box.hidden = !message;
}

$('login').addEventListener('submit', async (event) => {
  event.preventDefault();
  const input = $('token');
  token = input.value.trim();
  input.value = '';
  $('login-error').hidden = true;
  try {
    await api('GET', '/admin/relayer');
  } catch (e) {
    return logout(e.status === 401 ? 'Wrong admin token.' : e.status === 429 ? `Too many wrong tokens: ${e.message}` : e.message);
  }
  $('login').hidden = true;
  $('dashboard').hidden = false;
  $('session').hidden = false;
  await act(async () => {});
});

$('create-key').addEventListener('submit', (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  const body = {
    name: $('new-name').value,
    scopes: [...form.querySelectorAll('input[name=scope]:checked')].map((c) => c.value),
  };
  if ($('new-budget').value !== '') body.gasBudgetPerMonth = Number($('new-budget').value);
  act(async () => {
    const created = await api('POST', '/admin/api-keys', body);
    $('created-secret').textContent = created.apiKey;
    $('created').hidden = false;
    $('new-name').value = '';
  });
});

$('created-dismiss').addEventListener('click', () => {
  $('created-secret').textContent = '';
  $('created').hidden = true;
});
$('refresh').addEventListener('click', () => act(async () => {}));
$('logout').addEventListener('click', () => logout());
