// Seeds search records straight into a stack's local D1 (wrangler d1 execute on its persisted state), as the
// indexer's writer stores them (a `records` row and its `records_fts` row): the search tests and the search
// benchmark need many records with chosen names fast, which the indexer (real contracts, real metadata) cannot give.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const root = new URL('../../..', import.meta.url).pathname;
const quote = (v) => (v === null || v === undefined ? 'NULL' : typeof v === 'number' ? String(v) : `'${String(v).replaceAll("'", "''")}'`);
const text = (v) => (Array.isArray(v) ? v.join(' ') : (v ?? ''));

/** A profile record: `{ address, name, description?, tags?, updatedAt? }` → the stored record. */
export function profileRecord({ address, name, description = '', tags = [], updatedAt = 0 }) {
  return {
    objectID: address,
    address,
    type: 'UniversalProfile',
    kind: 'UniversalProfile',
    name,
    description,
    tags,
    hasProfileName: Boolean(name),
    updatedAt,
  };
}

/** The SQL inserting `records` (stored shape) into `index`, in multi-row statements. */
export function seedSql(index, records) {
  const lines = [];
  for (let i = 0; i < records.length; i += 50) {
    const chunk = records.slice(i, i + 50);
    lines.push(
      `INSERT OR REPLACE INTO records (index_name, object_id, address, token_id, kind, record, indexed_block, updated_at) VALUES ${chunk
        .map((r) => `(${[index, r.objectID, r.address.toLowerCase(), null, r.kind, JSON.stringify(r), 1, r.updatedAt ?? 0].map(quote).join(', ')})`)
        .join(', ')};`,
    );
    lines.push(
      `INSERT INTO records_fts (index_name, object_id, name, symbol, description, tags, address) VALUES ${chunk
        .map((r) => `(${[index, r.objectID, text(r.name), text(r.symbol), text(r.description), text(r.tags), r.address.toLowerCase()].map(quote).join(', ')})`)
        .join(', ')};`,
    );
  }
  return lines.join('\n');
}

/** Runs SQL on the stack's local D1 (the Worker must have created its tables: call any search route first). */
export async function executeSql(stateDir, sql) {
  const dir = mkdtempSync(join(tmpdir(), 'search-seed-'));
  const file = join(dir, 'seed.sql');
  writeFileSync(file, sql);
  try {
    await promisify(execFile)(
      process.execPath,
      [join(root, 'node_modules/wrangler/bin/wrangler.js'), 'd1', 'execute', 'DB', '--local', '--persist-to', stateDir, '--file', file, '--yes'],
      { cwd: root, env: { ...process.env, WRANGLER_SEND_METRICS: 'false' }, maxBuffer: 64 * 1024 * 1024 },
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
