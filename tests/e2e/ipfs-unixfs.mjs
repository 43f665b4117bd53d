// UnixFS content and trustless-gateway CARs for the IPFS tests, made with IPFS's own JS libraries (not this
// project's code): ipfs-unixfs-importer builds the DAG, @ipld/dag-pb reads it back to pick the blocks a gateway
// sends, @ipld/car writes the CAR.
import { importer } from 'ipfs-unixfs-importer';
import { fixedSize } from 'ipfs-unixfs-importer/chunker';
import { CarWriter } from '@ipld/car';
import * as dagPb from '@ipld/dag-pb';
import { CID } from 'multiformats/cid';

/** Every block made so far, by CID text. */
export const blocks = new Map();
const store = {
  put: async (cid, bytes) => {
    blocks.set(cid.toString(), bytes);
    return cid;
  },
};

/**
 * Imports files (`[{ path, content }]`; one file without a path for a bare file) and answers the root CID and the
 * CID of each path. `cidVersion: 0` gives `Qm…` CIDs with dag-pb leaves (as LUKSO's uploads); `chunkSize` the
 * leaf size; `shardSplitThresholdBytes` makes directories above it HAMT-sharded.
 */
export async function addUnixfs(files, { cidVersion = 1, chunkSize = 256 * 1024, wrap = files.length > 1 || !!files[0].path, shardSplitThresholdBytes } = {}) {
  const entries = [];
  for await (const entry of importer(files, store, {
    cidVersion,
    rawLeaves: cidVersion > 0,
    chunker: fixedSize({ chunkSize }),
    wrapWithDirectory: wrap,
    shardSplitThresholdBytes,
  }))
    entries.push(entry);
  const root = entries.at(-1).cid;
  return { root, cids: Object.fromEntries(entries.map((e) => [e.path, e.cid])) };
}

/** The bytes of the block `cid` names. */
export const block = (cid) => blocks.get(cid.toString());

/** The blocks of `cid` and everything below it, depth-first. */
export function subtree(cid, out = []) {
  out.push(cid);
  if (cid.code === dagPb.code) for (const link of dagPb.decode(block(cid)).Links) subtree(link.Hash, out);
  return out;
}

/**
 * The CIDs a trustless gateway sends for `/ipfs/<root>/<path>?dag-scope=entity`: the directories along the path,
 * then the whole file. `undefined` when the path names nothing.
 */
export function entityBlocks(root, path) {
  const out = [];
  let cid = root;
  for (const segment of path) {
    out.push(cid);
    const link = dagPb.decode(block(cid)).Links.find((l) => l.Name === segment);
    if (!link) return undefined;
    cid = link.Hash;
  }
  return [...out, ...subtree(cid)];
}

/** A CARv1 of the blocks `cids` (with `root` as its root), written by @ipld/car. */
export async function carOf(root, cids, { replace = new Map() } = {}) {
  const { writer, out } = CarWriter.create([root]);
  const chunks = [];
  const done = (async () => {
    for await (const c of out) chunks.push(c);
  })();
  for (const cid of cids) await writer.put({ cid, bytes: replace.get(cid.toString()) ?? block(cid) });
  await writer.close();
  await done;
  return Buffer.concat(chunks);
}

/** `/ipfs/<cid>/<path>?…` → the CID and the decoded path segments. */
export function parseIpfsUrl(url) {
  const [cidText, ...path] = url
    .replace(/^\/ipfs\//, '')
    .split('?')[0]
    .split('/')
    .filter(Boolean);
  return { root: CID.parse(cidText), path: path.map(decodeURIComponent), query: new URL(url, 'http://x').searchParams };
}

export { CID };
