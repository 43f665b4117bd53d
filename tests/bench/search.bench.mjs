// Search benchmark: typo-tolerant search on the built-in D1 backend (POST /1/indexes/:index/query, as algoliasearch
// sends it) over seeded profile records (names of made-up words, descriptions from a common-word pool), seeded
// straight into the local D1 (tests/e2e/helpers/search-seed.mjs, not through the indexer).
//
// Query set: records drawn at random; one word of the name (5+ letters; the first or the last, in turn) misspelled
// by a deletion, insertion, substitution or transposition (never of the first letter), or a substitution of the
// first letter (which counts two typos), in turn; the query is the whole name with that word. Hit
// rate at 1 = the record is the first hit. Every other query also sends the misspelled word alone (a prefix; the
// name words repeat across records, so it is right when the first hit's name holds the intended word). Latency = wall time per query from this process (sequential), p50/p99.
//
//   source scripts/setup.sh && cd tests && node bench/search.bench.mjs [--quick]
//   --quick: 10k records, 100 queries, fails below the hit-rate floor (the test command runs it).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startStack } from '../../scripts/stack.mjs';
import { executeSql, profileRecord, seedSql } from '../e2e/helpers/search-seed.mjs';

const quick = process.argv.includes('--quick');
const SIZES = quick ? [10_000] : [10_000, 100_000];
const QUERIES = quick ? 100 : 400;
const FLOOR = 0.9;
const SINGLE_FLOOR = 0.75;
const INDEX = 'dev_local_universal_profiles';

// a deterministic generator (mulberry32)
let seed = 0x5eed;
const random = () => {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const pick = (xs) => xs[Math.floor(random() * xs.length)];
const ONSETS = [
  'b',
  'br',
  'c',
  'ch',
  'd',
  'dr',
  'f',
  'g',
  'gr',
  'h',
  'j',
  'k',
  'kr',
  'l',
  'm',
  'n',
  'p',
  'pr',
  'qu',
  'r',
  's',
  'sh',
  'st',
  't',
  'tr',
  'v',
  'w',
  'z',
];
const VOWELS = ['a', 'e', 'i', 'o', 'u', 'ai', 'ea', 'io', 'ou', 'y'];
const CODAS = ['', '', 'n', 'r', 'l', 's', 'x', 'm', 'th', 'nd'];
const word = (syllables) => Array.from({ length: syllables }, () => pick(ONSETS) + pick(VOWELS) + pick(CODAS)).join('');
const pool = (n, syllables) => {
  const set = new Set();
  while (set.size < n) set.add(word(syllables()));
  return [...set];
};
const FIRST = pool(20_000, () => 2 + Math.floor(random() * 2));
const LAST = pool(30_000, () => 2 + Math.floor(random() * 3));
const COMMON = pool(2_000, () => 1 + Math.floor(random() * 2));
const address = (n) => `0x${n.toString(16).padStart(40, '0')}`;
const makeRecord = (n) =>
  profileRecord({
    address: address(n),
    name: `${pick(FIRST)} ${pick(LAST)}`,
    description: Array.from({ length: 6 + Math.floor(random() * 10) }, () => pick(COMMON)).join(' '),
    updatedAt: n,
  });

const LETTERS = 'abcdefghijklmnopqrstuvwxyz';
const KINDS = ['deletion', 'insertion', 'substitution', 'transposition', 'first letter'];
function misspell(w, kind) {
  const i = 1 + Math.floor(random() * (w.length - 2)); // never the first letter; leaves a next letter
  const other = (c) => {
    for (;;) {
      const x = pick(LETTERS);
      if (x !== c) return x;
    }
  };
  switch (kind) {
    case 'deletion':
      return w.slice(0, i) + w.slice(i + 1);
    case 'insertion':
      return w.slice(0, i) + other(w[i]) + w.slice(i);
    case 'substitution':
      return w.slice(0, i) + other(w[i]) + w.slice(i + 1);
    case 'first letter':
      return other(w[0]) + w.slice(1);
    default:
      return w[i] === w[i + 1] ? w.slice(0, i) + other(w[i]) + w.slice(i + 1) : w.slice(0, i) + w[i + 1] + w[i] + w.slice(i + 2);
  }
}
const percentile = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];

const stateDir = mkdtempSync(join(tmpdir(), 'search-bench-'));
const stack = await startStack({ stateDir, vars: { LOOKUP_RATE_LIMIT_PER_MINUTE: '100000000', LOOKUP_CACHE_SECONDS: '0' } });
const records = [];
const search = async (query) => {
  const res = await fetch(`${stack.workerUrl}/1/indexes/${INDEX}/query`, {
    method: 'POST',
    body: JSON.stringify({ query, hitsPerPage: 5, attributesToHighlight: [] }),
  });
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  return body;
};
const rows = [];
try {
  assert.equal((await fetch(`${stack.workerUrl}/v1/31337/search?q=x`)).status, 200); // creates the tables
  for (const size of SIZES) {
    const started = Date.now();
    const fresh = [];
    while (records.length < size) {
      const r = makeRecord(records.length + 1);
      records.push(r);
      fresh.push(r);
    }
    for (let i = 0; i < fresh.length; i += 20_000) await executeSql(stateDir, seedSql(INDEX, fresh.slice(i, i + 20_000)));
    const seedMs = Date.now() - started;
    await search('warmup');
    const times = [];
    const server = [];
    const perKind = Object.fromEntries(KINDS.map((k) => [k, { hits: 0, n: 0 }]));
    let hits = 0;
    let exhaustiveTypo = 0;
    const single = [];
    let singleHits = 0;
    for (let q = 0; q < QUERIES; q++) {
      const target = pick(records);
      const words = target.name.split(' ');
      // the first or the last word (the prefix), in turn
      const at = q % 2 ? words.findLastIndex((w) => w.length >= 5) : words.findIndex((w) => w.length >= 5);
      const kind = KINDS[q % KINDS.length];
      if (at >= 0) words[at] = misspell(words[at], kind);
      const t0 = performance.now();
      const body = await search(words.join(' '));
      times.push(performance.now() - t0);
      server.push(body.processingTimeMS);
      const hit = body.hits[0]?.objectID === target.objectID;
      // every other query: the misspelled word alone (a prefix); right when the first hit's name has the word
      if (q % 4 >= 2 && at >= 0) {
        const original = target.name.split(' ')[at];
        const t1 = performance.now();
        const alone = await search(words[at]);
        single.push(performance.now() - t1);
        singleHits += alone.hits[0]?.name.split(' ').includes(original) ?? false;
      }
      hits += hit;
      exhaustiveTypo += body.exhaustive?.typo === true;
      perKind[kind].n++;
      perKind[kind].hits += hit;
    }
    const rate = hits / QUERIES;
    rows.push({
      size,
      rate,
      perKind,
      singleRate: singleHits / single.length,
      singleN: single.length,
      single50: percentile(single, 50),
      single99: percentile(single, 99),
      p50: percentile(times, 50),
      p99: percentile(times, 99),
      s50: percentile(server, 50),
      s99: percentile(server, 99),
      seedMs,
      exhaustiveTypo,
    });
    assert.ok(rate >= FLOOR, `hit rate at 1 ${rate} below the floor ${FLOOR} at ${size} records`);
    assert.ok(singleHits / single.length >= SINGLE_FLOOR, `one-word hit rate ${singleHits / single.length} below ${SINGLE_FLOOR}`);
  }
} finally {
  await stack.stop();
  rmSync(stateDir, { recursive: true, force: true });
}
console.log(`| records | queries | hit rate at 1 | ${KINDS.join(' | ')} | p50 ms | p99 ms | server p50 / p99 ms | exhaustive.typo | seeding |`);
console.log(`| --- | --- | --- | ${KINDS.map(() => '---').join(' | ')} | --- | --- | --- | --- | --- |`);
for (const r of rows) {
  const kinds = KINDS.map((k) => `${((100 * r.perKind[k].hits) / r.perKind[k].n).toFixed(1)} %`).join(' | ');
  console.log(
    `| ${r.size.toLocaleString('en')} | ${QUERIES} | **${(100 * r.rate).toFixed(1)} %** | ${kinds} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.s50} / ${r.s99} | ${r.exhaustiveTypo} of ${QUERIES} | ${(r.seedMs / 1000).toFixed(1)} s |`,
  );
}
console.log('\n| records | one-word queries | first hit has the word | p50 ms | p99 ms |\n| --- | --- | --- | --- | --- |');
for (const r of rows) {
  console.log(
    `| ${r.size.toLocaleString('en')} | ${r.singleN} | **${(100 * r.singleRate).toFixed(1)} %** | ${r.single50.toFixed(1)} | ${r.single99.toFixed(1)} |`,
  );
}
