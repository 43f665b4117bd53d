// Compiles test contracts with solc from npm (the version pinned in tests/package.json): the attacker contracts of
// tests/fixtures/attackers/*.sol (their Solidity source is the whole definition of what each attack does) and the
// contracts of tests/fixtures/lukso/*.sol made of LUKSO's own sources.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const solc = require('solc');
const fixtures = (sub) => fileURLToPath(new URL(`../../fixtures/${sub}/`, import.meta.url));
const modules = fileURLToPath(new URL('../../node_modules/', import.meta.url));

/** Imports read from the npm packages in tests/node_modules (solc's import callback). */
const fromModules = (path) => {
  try {
    return { contents: readFileSync(modules + path, 'utf8') };
  } catch (e) {
    return { error: String(e) };
  }
};

/** Compiles `<dir><name>.sol`; `{ abi, bytecode }` of its contract `<name>`. */
function compile(dir, name) {
  const file = `${name}.sol`;
  const input = {
    language: 'Solidity',
    sources: { [file]: { content: readFileSync(dir + file, 'utf8') } },
    settings: { optimizer: { enabled: true, runs: 200 }, outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input), { import: fromModules }));
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length) throw new Error(`${file}: ${errors.map((e) => e.formattedMessage).join('\n')}`);
  const contract = output.contracts[file][name];
  return { abi: contract.abi, bytecode: `0x${contract.evm.bytecode.object}` };
}

/** Compiles `tests/fixtures/attackers/<name>.sol`; `{ abi, bytecode }` of its contract `<name>`. */
export const compileAttacker = (name) => compile(fixtures('attackers'), name);

/**
 * Compiles `tests/fixtures/lukso/<name>.sol`, a contract made of LUKSO's own Solidity sources (imported from the npm
 * packages); `{ abi, bytecode }` of its contract `<name>`.
 */
export const compileLukso = (name) => compile(fixtures('lukso'), name);
