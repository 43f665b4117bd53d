// Starts the local dev stack (anvil + LUKSO contracts + the Worker in workerd) and keeps it running until Ctrl-C.
// Ports: CHAIN_PORT (default 8545), WORKER_PORT (default 8787).
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { LUKSO_CONTRACTS } from './chain.mjs';
import { serveWww } from './serve-www.mjs';
import { startStack } from './stack.mjs';

// the shared secret of upload tokens (the wallet's HS256 JWT for POST /api/v0/add), fresh for each stack
const uploadJwtSecret = randomBytes(32).toString('hex');
const stack = await startStack({
  chainPort: Number(process.env.CHAIN_PORT ?? 8545),
  workerPort: Number(process.env.WORKER_PORT ?? 8787),
  secrets: { UPLOAD_JWT_SECRET: uploadJwtSecret },
  // as in production: the indexer object follows the chain every INDEXER_INTERVAL_SECONDS, no manual runs
  followChain: true,
});
const { chain, workerUrl, apiKey, adminToken, relayerAddress } = stack;
const www = await serveWww({
  port: Number(process.env.WWW_PORT ?? 8080),
  config: { workerUrl, apiKey, chainId: chain.chainId, rpcUrl: chain.rpcUrl },
});

mkdirSync(new URL('../.dev/', import.meta.url), { recursive: true });
writeFileSync(
  new URL('../.dev/credentials.json', import.meta.url),
  JSON.stringify(
    {
      workerUrl,
      rpcUrl: chain.rpcUrl,
      chainId: chain.chainId,
      apiKey,
      adminToken,
      uploadJwtSecret,
      relayerAddress,
    },
    null,
    2,
  ) + '\n',
  { mode: 0o600 },
);

console.log(`
profile-relayer dev stack
  dApp       ${www.url}   (www/: create a profile, look up, search)
  worker     ${workerUrl}   (wrangler dev / workerd; OpenAPI at ${workerUrl}/openapi.json)
  chain      ${chain.rpcUrl}   (anvil, chain id ${chain.chainId}; relayer ${relayerAddress}, funded)
${LUKSO_CONTRACTS.map(([name, address]) => `             ${address}  ${name}`).join('\n')}
  api key    ${apiKey}
  admin      ${adminToken}
  upload jwt secret in .dev/credentials.json (uploadJwtSecret)
  npm pkg    pkg/
  saved in   .dev/credentials.json

  try:  curl -s -X POST ${workerUrl}/api/universal-profile \\
          -H 'authorization: Bearer ${apiKey}' -H 'content-type: application/json' \\
          --data '{"lsp6ControllerAddress":["0x70997970C51812dc3A010C7d01b50e0d17dc79C8"]}'

Ctrl-C stops everything.`);

let stopping = false;
async function shutdown() {
  if (stopping) return;
  stopping = true;
  console.log('\nstopping…');
  await www.close();
  await stack.stop();
  process.exit(0);
}
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
