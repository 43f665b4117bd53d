// Starts the local dev stack and keeps it running until Ctrl-C. Ports: CHAIN_PORT (default 8545).
import { mkdirSync, writeFileSync } from 'node:fs';
import { LUKSO_CONTRACTS, startChain } from './chain.mjs';

const chainPort = Number(process.env.CHAIN_PORT ?? 8545);
const chain = await startChain({ port: chainPort });

mkdirSync(new URL('../.dev/', import.meta.url), { recursive: true });
writeFileSync(new URL('../.dev/credentials.json', import.meta.url), JSON.stringify({
  rpcUrl: chain.rpcUrl,
  chainId: chain.chainId,
  // anvil's public development accounts: for the local chain only
  relayerAccount: chain.accounts[0],
}, null, 2) + '\n');

console.log(`
profile-relayer dev stack
  chain      ${chain.rpcUrl} (anvil, chain id ${chain.chainId})
${LUKSO_CONTRACTS.map(([name, address]) => `             ${address}  ${name}`).join('\n')}
  npm pkg    pkg/ (import 'profile-relayer' after \`npm install ./pkg\`)
  details    .dev/credentials.json

  try:  curl -s -X POST -H 'content-type: application/json' \\
          --data '{"jsonrpc":"2.0","id":1,"method":"eth_getCode","params":["0x2300000A84D25dF63081feAa37ba6b62C4c89a30","latest"]}' \\
          ${chain.rpcUrl}

Ctrl-C stops everything.`);

let stopping = false;
async function shutdown() {
  if (stopping) return;
  stopping = true;
  console.log('\nstopping…');
  await chain.stop();
  process.exit(0);
}
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
chain.process.once('exit', (code) => {
  if (!stopping) {
    console.error(`anvil exited unexpectedly (${code})`);
    process.exit(1);
  }
});
