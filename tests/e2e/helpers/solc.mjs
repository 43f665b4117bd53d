// Compiles the attacker contracts of tests/fixtures/attackers/*.sol with solc from npm (the version pinned in
// tests/package.json): their Solidity source is the whole definition of what each attack does.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const solc = require('solc');
const dir = fileURLToPath(new URL('../../fixtures/attackers/', import.meta.url));

/** Compiles `tests/fixtures/attackers/<name>.sol`; `{ abi, bytecode }` of its contract `<name>`. */
export function compileAttacker(name) {
  const file = `${name}.sol`;
  const input = {
    language: 'Solidity',
    sources: { [file]: { content: readFileSync(dir + file, 'utf8') } },
    settings: { optimizer: { enabled: true, runs: 200 }, outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input)));
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length) throw new Error(`${file}: ${errors.map((e) => e.formattedMessage).join('\n')}`);
  const contract = output.contracts[file][name];
  return { abi: contract.abi, bytecode: `0x${contract.evm.bytecode.object}` };
}
