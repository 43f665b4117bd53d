// Typo-tolerant, Algolia-ranked search on the built-in D1 backend, driven by the official algoliasearch v5 client
// (and the /v1/:chainId/search route): typos of every kind, the prefix on the last word, typoTolerance
// true/false/min/strict, minWordSizefor1Typo/minWordSizefor2Typos, the ranking criteria in order, _rankingInfo and
// honest exhaustive flags. The records are seeded straight into the stack's local D1 (helpers/search-seed.mjs).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { algoliasearch } from 'algoliasearch';
import { getAddress } from 'viem';
import { startStack } from '../../scripts/stack.mjs';
import { executeSql, profileRecord, seedSql } from './helpers/search-seed.mjs';

const PROFILES = 'dev_local_universal_profiles';
const stateDir = mkdtempSync(join(tmpdir(), 'search-typos-state-'));
const address = (n) => getAddress(`0x${n.toString(16).padStart(40, 'a')}`);
const people = {
  realclient: { name: 'realclient studio', description: 'we build wallets' },
  hostile: { name: 'after hostile takeover', description: 'a band' },
  nameZ: { name: 'zephyrine', description: 'lore keeper', updatedAt: 1 },
  descZ: { name: 'someone else', description: 'zephyrine lore', updatedAt: 9 },
  kestrelInDescription: { name: 'bird watcher', description: 'kestrel', updatedAt: 1 },
  kestral: { name: 'kestral', description: '', updatedAt: 5 },
  gestral: { name: 'gestral', description: '', updatedAt: 9 },
  far: { name: 'orchid and some other words then velvet', updatedAt: 9 },
  near: { name: 'orchid velvet', updatedAt: 1 },
  older: { name: 'quillon', updatedAt: 1 },
  newer: { name: 'quillon', updatedAt: 2 },
  tagged: { name: 'plain', tags: ['moonstone'] },
};
const ids = Object.fromEntries(Object.keys(people).map((k, i) => [k, address(i + 1)]));

let stack;
let client;
before(async () => {
  stack = await startStack({ stateDir, vars: { LOOKUP_RATE_LIMIT_PER_MINUTE: '100000', LOOKUP_CACHE_SECONDS: '0' } });
  // the first search creates the tables
  assert.equal((await fetch(`${stack.workerUrl}/v1/31337/search?q=x`)).status, 200);
  await executeSql(
    stateDir,
    seedSql(
      PROFILES,
      Object.entries(people).map(([k, p]) => profileRecord({ address: ids[k], ...p })),
    ),
  );
  const { host } = new URL(stack.workerUrl);
  client = algoliasearch('TESTAPPID', 'any-search-key', { hosts: [{ url: host, protocol: 'http', accept: 'readWrite' }] });
});
after(async () => {
  await stack?.stop();
  rmSync(stateDir, { recursive: true, force: true });
});

const query = (query, params = {}) => client.searchSingleIndex({ indexName: PROFILES, searchParams: { query, ...params } });
const found = async (q, params) => (await query(q, params)).hits.map((h) => h.objectID);
const first = async (q, params) => (await found(q, params))[0];

test('one typo from 4 characters, two from 8: deletion, insertion, substitution, transposition, first letter', async () => {
  // the measurements: these found nothing before
  for (const q of ['realclient', 'realclien', 'realclinet', 'reaclient', 'realcliient', 'realclxent', 'eealclient']) {
    assert.equal(await first(q), ids.realclient, q);
  }
  assert.equal(await first('hostlie'), ids.hostile);
  assert.equal(await first('after hostlie'), ids.hostile);
  // two typos in a word of 8 or more
  assert.equal(await first('raelclinet'), ids.realclient);
  // three is too many; a 3-letter word gets none ("bnad" has 4: one typo finds "band")
  assert.deepEqual(await found('rae1cl1net'), []);
  assert.deepEqual(await found('bnd '), []);
  assert.equal(await first('bnad '), ids.hostile);
});

test('the last word is a prefix, with typos counted against the start of a word', async () => {
  assert.equal(await first('realcl'), ids.realclient);
  assert.equal(await first('after host'), ids.hostile);
  assert.equal(await first('realcil'), ids.realclient); // a typo in the prefix
  // not the last word: a whole word is needed
  assert.deepEqual(await found('realcl studio'), []);
  // a trailing space ends the prefix
  assert.deepEqual(await found('realcl '), []);
});

test('ranking: fewer typos first, then proximity, attribute (name before description), exactness, custom', async () => {
  const info = (r) => Object.fromEntries(r.hits.map((h) => [h.objectID, h._rankingInfo]));
  // "kestral": exact in a name, one typo in a description, a first-letter typo (counts 2) in a name
  const r = await query('kestral ', { getRankingInfo: true });
  assert.deepEqual(
    r.hits.map((h) => h.objectID),
    [ids.kestral, ids.kestrelInDescription, ids.gestral],
  );
  assert.deepEqual(
    [ids.kestral, ids.kestrelInDescription, ids.gestral].map((id) => info(r)[id].nbTypos),
    [0, 1, 2],
  );
  assert.equal(info(r)[ids.kestral].nbExactWords, 1);
  assert.equal(info(r)[ids.kestrelInDescription].firstMatchedWord, 2000); // description, first word
  // a typo'd hit is highlighted on the whole word, listed under the query word
  const bird = r.hits.find((h) => h.objectID === ids.kestrelInDescription);
  assert.equal(bird._highlightResult.description.value, '<em>kestrel</em>');
  assert.deepEqual(bird._highlightResult.description.matchedWords, ['kestral']);
  // without getRankingInfo there is none
  assert.equal((await query('kestral')).hits[0]._rankingInfo, undefined);
  // attribute: the name before the description, although the description's record is newer
  assert.deepEqual(await found('zephyrine'), [ids.nameZ, ids.descZ]);
  // proximity: the words side by side first, although the other record is newer
  const p = await query('orchid velvet', { getRankingInfo: true });
  assert.deepEqual(
    p.hits.map((h) => h.objectID),
    [ids.near, ids.far],
  );
  assert.ok(p.hits[0]._rankingInfo.proximityDistance < p.hits[1]._rankingInfo.proximityDistance);
  // custom tie-break: the most recently updated first
  assert.deepEqual(await found('quillon'), [ids.newer, ids.older]);
  // tags are searchable too
  assert.equal(await first('moonston'), ids.tagged);
});

test('typoTolerance false, min and strict; minWordSizefor1Typo and minWordSizefor2Typos', async () => {
  assert.deepEqual(await found('kestral ', { typoTolerance: false }), [ids.kestral]);
  assert.deepEqual(await found('hostlie', { typoTolerance: false }), []);
  assert.deepEqual(await found('kestral ', { typoTolerance: 'min' }), [ids.kestral]);
  assert.deepEqual(await found('kestral ', { typoTolerance: 'strict' }), [ids.kestral, ids.kestrelInDescription]);
  assert.equal((await query('kestral ', { typoTolerance: 'strict' })).nbHits, 2);
  assert.equal((await query('kestral ', { typoTolerance: 'min' })).nbHits, 1);
  // min with no exact hit keeps the fewest typos (one each; the name before the description)
  assert.deepEqual(await found('kestrol ', { typoTolerance: 'min' }), [ids.kestral, ids.kestrelInDescription]);
  // word sizes
  assert.deepEqual(await found('hostlie', { minWordSizefor1Typo: 8 }), []);
  assert.equal(await first('hostlie', { minWordSizefor1Typo: 7 }), ids.hostile);
  assert.deepEqual(await found('raelclinet', { minWordSizefor2Typos: 11 }), []);
  assert.equal(await first('bnd ', { minWordSizefor1Typo: 3 }), ids.hostile);
  // the v4 params string carries them too
  const legacy = async (params) => {
    const res = await fetch(`${stack.workerUrl}/1/indexes/*/queries`, {
      method: 'POST',
      body: JSON.stringify({ requests: [{ indexName: PROFILES, params }] }),
    });
    return (await res.json()).results[0].hits.map((h) => h.objectID);
  };
  assert.deepEqual(await legacy('query=hostlie&typoTolerance=false'), []);
  assert.deepEqual(await legacy('query=hostlie&typoTolerance=true'), [ids.hostile]);
  await assert.rejects(query('x', { typoTolerance: 'maybe' }), (e) => e.status === 400);
});

test('addresses match exactly, checksummed or lower case, never with a typo', async () => {
  const a = ids.hostile;
  assert.deepEqual(await found(a), [a]);
  assert.deepEqual(await found(a.toLowerCase()), [a]);
  const wrong = `${a.slice(0, -1)}${a.endsWith('0') ? '1' : '0'}`;
  assert.deepEqual(await found(wrong), []);
});

test('exhaustive flags: typo true only when every word within its typos was considered', async () => {
  // one-typo words (4 to 7 letters) look up every one-edit neighbour: complete
  const one = await query('after hostlie');
  assert.equal(one.hits[0].objectID, ids.hostile);
  assert.equal(one.exhaustive.typo, true);
  assert.equal(one.exhaustiveTypo, true);
  // two-typo words read the terms by their first half: not every two-typo term is reached
  const two = await query('raelclinet');
  assert.equal(two.exhaustive.typo, false);
  assert.equal(two.exhaustiveTypo, false);
  assert.equal(two.exhaustive.nbHits, true);
  assert.equal((await query('raelclinet', { typoTolerance: false })).exhaustive.typo, true);
});

test('/v1/:chainId/search forgives typos too', async () => {
  const body = await (await fetch(`${stack.workerUrl}/v1/31337/search?q=realclinet`)).json();
  assert.equal(body.profiles.hits[0].objectID, ids.realclient);
  assert.equal(body.profiles.nbHits, 1);
  const none = await (await fetch(`${stack.workerUrl}/v1/31337/search?q=zzzzqqq`)).json();
  assert.equal(none.profiles.nbHits, 0);
});
