// Runs a command with the local stack (anvil + Worker) up, passing its coordinates in PROFILE_RELAYER_E2E
// (JSON: workerUrl, apiKey, rpcUrl, chainId); stops the stack afterwards and exits with the command's status.
//   node scripts/with-stack.mjs cargo test --target wasm32-unknown-unknown --features wasm --test wasm_clients
import { spawn } from 'node:child_process';
import { startStack } from './stack.mjs';

const [cmd, ...args] = process.argv.slice(2);
const stack = await startStack({ vars: { LOOKUP_CACHE_SECONDS: '0' } });
let code = 1;
try {
  const e2e = JSON.stringify({ workerUrl: stack.workerUrl, apiKey: stack.apiKey, rpcUrl: stack.chain.rpcUrl, chainId: stack.chain.chainId });
  const child = spawn(cmd, args, { stdio: 'inherit', env: { ...process.env, PROFILE_RELAYER_E2E: e2e } });
  code = await new Promise((resolve) => child.on('exit', (c) => resolve(c ?? 1)));
} finally {
  await stack.stop();
}
process.exit(code);
