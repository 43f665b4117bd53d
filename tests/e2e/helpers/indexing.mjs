// What the indexing end-to-end tests share, on a stack from scripts/stack.mjs: uploads through /api/v0/add,
// VerifiableURIs of uploaded metadata, transactions from anvil's unlocked account, profiles deployed through the
// relayer and indexer runs (the cron through wrangler's /__scheduled, or /admin/indexer/run until caught up).
import assert from 'node:assert/strict';
import { encodeDeployData, getAddress } from 'viem';
import * as sdk from 'profile-relayer';
import { waitForReceipt } from '../../../scripts/chain.mjs';
import { upload as uploadCid } from './upload.mjs';
import { deployProfile as deployWith } from './profile.mjs';

/** anvil's first unlocked dev account: sends the test transactions. */
export const OWNER = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
/** The controller of the profiles the tests deploy (anvil's second dev account). */
export const CONTROLLER = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';

/** The helpers, on the stack `getStack()` answers (started in a `before` hook, so read when called). */
export function indexing(getStack) {
  const url = (path) => `${getStack().workerUrl}${path}`;

  /** GET `path`, asserting `status`; the parsed body. */
  const get = async (path, status = 200) => {
    const res = await fetch(url(path));
    const body = await res.json();
    assert.equal(res.status, status, `${path}: ${JSON.stringify(body)}`);
    return body;
  };

  /** Uploads bytes (text as `application/json`); the CID. */
  const upload = (data) =>
    typeof data === 'string' ? uploadCid(getStack(), data, 'application/json', 'metadata.json') : uploadCid(getStack(), data, '', 'file');

  /** `obj` as JSON, uploaded: its VerifiableURI (`ipfs://<cid>`). */
  const metadataUri = async (obj) => {
    const json = JSON.stringify(obj);
    return sdk.encodeVerifiableUri(json, `ipfs://${await upload(json)}`);
  };

  /** Sends a transaction from OWNER and waits for its successful receipt. */
  const send = async (tx) => {
    const { chain } = getStack();
    const hash = await chain.rpc('eth_sendTransaction', [{ from: OWNER, gas: '0x989680', ...tx }]);
    const receipt = await waitForReceipt(chain.rpc, hash);
    assert.equal(receipt.status, '0x1');
    return receipt;
  };

  /** Deploys `artifact` (an npm artifact: abi, bytecode) with `args` from OWNER; its checksummed address. */
  const deploy = async (artifact, args) => {
    const receipt = await send({ data: encodeDeployData({ abi: artifact.abi, bytecode: artifact.bytecode, args }) });
    return getAddress(receipt.contractAddress);
  };

  /** Deploys a profile controlled by CONTROLLER through the relayer (with `lsp3Profile` when given); the answer. */
  const deployProfile = (lsp3Profile) => deployWith(getStack(), [CONTROLLER], lsp3Profile);

  /** Fires the cron once (wrangler's /__scheduled). */
  const runCron = async () => {
    const res = await fetch(url(`/__scheduled?cron=${encodeURIComponent('* * * * *')}`));
    assert.equal(res.status, 200, await res.text());
  };

  /** Runs the indexer (/admin/indexer/run) until it reaches the head, at most 10 times; the last run's stats. */
  const runIndexerUntilCaughtUp = async () => {
    for (let i = 0; i < 10; i++) {
      const res = await getStack().admin('POST', '/admin/indexer/run');
      const stats = await res.json();
      assert.equal(res.status, 200, JSON.stringify(stats));
      if (stats.toBlock >= stats.headBlock) return stats;
    }
    throw new Error('the indexer did not catch up in 10 runs');
  };

  return { get, upload, metadataUri, send, deploy, deployProfile, runCron, runIndexerUntilCaughtUp };
}
