// A local EVM chain for development and tests: anvil on 127.0.0.1 with the real LUKSO contracts (npm artifacts of
// @lukso/*-contracts, and LIP-26's follower registry) at their canonical mainnet addresses, so predictions made with
// the built-in constants hold and the wallet's follower reads work.
//
//   import { startChain } from './chain.mjs';
//   const chain = await startChain({ port: 8545 });   // { rpcUrl, chainId, accounts, rpc(), stop() }
//
// Run directly (`node scripts/chain.mjs [port]`) it starts the chain and keeps it up until Ctrl-C.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(new URL('../tests/package.json', import.meta.url));

/**
 * The LUKSO contracts and where they live on LUKSO mainnet and testnet. The implementations are the
 * `@lukso/lsp-smart-contracts` release artifacts whose runtime code those addresses hold on chain (each address =
 * CREATE2 of the artifact's creation code through Nick's factory with salt 0xfeed…feed): v0.14.0, what this
 * relayer's predictions use, and v0.12.1, what LUKSO's own relayer deploys with. (The split 0.15.5 packages hold
 * other code: installing them there would make a chain no real network is.)
 */
export const LUKSO_CONTRACTS = [
  ['LSP23LinkedContractsFactory', '0x2300000A84D25dF63081feAa37ba6b62C4c89a30', '@lukso/lsp23-contracts/artifacts/LSP23LinkedContractsFactory.json'],
  [
    'UniversalProfileInitPostDeploymentModule',
    '0x000000000066093407b6704B89793beFfD0D8F00',
    '@lukso/lsp23-contracts/artifacts/UniversalProfileInitPostDeploymentModule.json',
  ],
  ['UniversalProfileInit v0.14.0', '0x3024D38EA2434BA6635003Dc1BDC0daB5882ED4F', 'lsp-smart-contracts-0.14.0/artifacts/UniversalProfileInit.json'],
  ['LSP6KeyManagerInit v0.14.0', '0x2Fe3AeD98684E7351aD2D408A43cE09a738BF8a4', 'lsp-smart-contracts-0.14.0/artifacts/LSP6KeyManagerInit.json'],
  [
    'LSP1UniversalReceiverDelegateUP v0.14.0',
    '0x7870C5B8BC9572A8001C3f96f7ff59961B23500D',
    'lsp-smart-contracts-0.14.0/artifacts/LSP1UniversalReceiverDelegateUP.json',
  ],
  ['UniversalProfileInit v0.12.1', '0x52c90985AF970D4E0DC26Cb5D052505278aF32A9', 'lsp-smart-contracts-0.12.1/artifacts/UniversalProfileInit.json'],
  ['LSP6KeyManagerInit v0.12.1', '0xa75684d7D048704a2DB851D05Ba0c3cbe226264C', 'lsp-smart-contracts-0.12.1/artifacts/LSP6KeyManagerInit.json'],
  [
    'LSP1UniversalReceiverDelegateUP v0.12.1',
    '0xA5467dfe7019bF2C7C5F7A707711B9d4cAD118c8',
    'lsp-smart-contracts-0.12.1/artifacts/LSP1UniversalReceiverDelegateUP.json',
  ],
];

/** anvil's well-known development accounts (mnemonic "test test … junk"); never use them on a real network. */
export const DEV_ACCOUNTS = [
  { address: '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266', privateKey: '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80' },
  { address: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8', privateKey: '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d' },
];

function anvilBinary() {
  if (process.env.ANVIL_BIN && existsSync(process.env.ANVIL_BIN)) return process.env.ANVIL_BIN;
  const cache = process.env.PR_TOOLS_HOME ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'profile-relayer');
  const bin = join(cache, 'npm-tools/node_modules/@foundry-rs/anvil-linux-amd64/bin/anvil');
  if (!existsSync(bin)) throw new Error(`anvil not found at ${bin}: run scripts/setup.sh first`);
  return bin;
}

/** Minimal JSON-RPC client over fetch. */
export function rpcClient(rpcUrl) {
  let id = 0;
  return async function rpc(method, params = []) {
    const res = await fetch(rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params }),
    });
    const body = await res.json();
    if (body.error) {
      const err = new Error(`${method}: ${body.error.message}`);
      err.rpcError = body.error;
      throw err;
    }
    return body.result;
  };
}

/** Polls for a receipt (anvil can answer null for a moment even with automine). */
export async function waitForReceipt(rpc, hash, timeoutMs = 10_000) {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    const receipt = await rpc('eth_getTransactionReceipt', [hash]);
    if (receipt) return receipt;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no receipt for ${hash} after ${timeoutMs} ms`);
}

/** Installs the LUKSO contracts at their canonical addresses (anvil_setCode with the npm runtime bytecode). */
export async function installLuksoContracts(rpc) {
  for (const [name, address, artifact] of LUKSO_CONTRACTS) {
    const { deployedBytecode } = require(artifact);
    await rpc('anvil_setCode', [address, deployedBytecode]);
    const code = await rpc('eth_getCode', [address, 'latest']);
    if (code.toLowerCase() !== deployedBytecode.toLowerCase()) throw new Error(`${name}: code was not installed`);
  }
  await installFollowerRegistry(rpc);
}

/**
 * LUKSO's LSP26 follower registry at its official address, from the creation data LIP-26 prints (the CREATE2
 * address of that init code through Nick's factory is the registry's: tests/e2e/chain-lsp26.test.mjs). Its runtime
 * code is what running the init code answers (it has no constructor arguments and no immutables), set without a
 * transaction: no block is mined and no account's nonce moves.
 */
export const FOLLOWER_REGISTRY = require('../scripts/contracts/lsp26-follower-system.json');

async function installFollowerRegistry(rpc) {
  const { address, initCode } = FOLLOWER_REGISTRY;
  const runtime = await rpc('eth_call', [{ data: initCode, gas: '0xdbba0' }, 'latest']);
  if (runtime.length < 100) throw new Error('LSP26FollowerSystem: its init code answered no runtime code');
  await rpc('anvil_setCode', [address, runtime]);
  if ((await rpc('eth_getCode', [address, 'latest'])).toLowerCase() !== runtime.toLowerCase()) throw new Error('LSP26FollowerSystem: code was not installed');
}

/**
 * Starts anvil on 127.0.0.1 and installs the contracts. `port: 0` picks a free port.
 * @returns {Promise<{rpcUrl: string, chainId: number, port: number, accounts: typeof DEV_ACCOUNTS, rpc: Function, stop: () => Promise<void>}>}
 */
export async function startChain({ port = 0, chainId = 31337, log = false } = {}) {
  for (let attempt = 0; attempt < 5; attempt++) {
    const p = port || 20000 + Math.floor(Math.random() * 30000);
    const child = spawn(anvilBinary(), ['--host', '127.0.0.1', '--port', String(p), '--chain-id', String(chainId), ...(log ? [] : ['--silent'])], {
      stdio: ['ignore', log ? 'inherit' : 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise((resolve) => child.once('exit', resolve));
    const rpcUrl = `http://127.0.0.1:${p}`;
    const rpc = rpcClient(rpcUrl);
    const stop = async () => {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
    };
    let up = false;
    for (let i = 0; i < 100 && child.exitCode === null; i++) {
      try {
        await rpc('eth_chainId');
        up = true;
        break;
      } catch {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    if (!up) {
      await stop();
      if (port) throw new Error(`anvil did not start on ${rpcUrl}: ${stderr.trim()}`);
      continue; // port taken: try another
    }
    try {
      await installLuksoContracts(rpc);
    } catch (e) {
      await stop();
      throw e;
    }
    return { rpcUrl, chainId, port: p, accounts: DEV_ACCOUNTS, rpc, stop, process: child };
  }
  throw new Error('could not start anvil on a free port');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const chain = await startChain({ port: Number(process.argv[2] ?? 8545) });
  console.log(`anvil ${chain.rpcUrl} (chain id ${chain.chainId}) with the LUKSO contracts at their canonical addresses`);
  const shutdown = async () => {
    await chain.stop();
    process.exit(0);
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
}
