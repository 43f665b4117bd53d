// The SDK reference's examples (docs/sdk.md), as written, type-check against the package's declarations under
// `tsc --strict` with `skipLibCheck: false` and no `esnext` lib (tests/tsconfig.json): every ```js block of the page
// becomes a module of its own; the few names the examples leave to the reader (a wallet
// `account`, a `profile` address, …) are declared once, globally, with the types a dApp would have.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

const tests = fileURLToPath(new URL('../', import.meta.url));
const doc = readFileSync(new URL('../../docs/sdk.md', import.meta.url), 'utf8');

const GLOBALS = `import type { Address, Hex } from 'profile-relayer';
declare global {
  const keyManager: Address, profile: Address, up: Address, payload: Hex, nonce: bigint, json: string, url: string;
  /** a viem local account */
  const account: {
    address: Address;
    sign(args: { hash: Hex }): Promise<Hex>;
    signMessage(args: { message: string | { raw: Hex } }): Promise<Hex>;
  };
  const process: { env: Record<string, string | undefined> };
}
export {};
`;

test("docs/sdk.md: the SDK reference's examples type-check (tsc --strict, skipLibCheck false)", () => {
  assert.ok(doc.startsWith('# SDK (npm)\n'), 'docs/sdk.md is not the SDK reference');
  const blocks = [...doc.matchAll(/\n```(?:js|ts)\n([\s\S]*?)\n```/g)].map((m) => m[1]);
  assert.ok(blocks.length >= 4, `only ${blocks.length} examples found`);
  const dir = join(tests, 'output', 'sdk-doc-types');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'globals.d.ts'), GLOBALS);
  const files = blocks.map((code, i) => {
    const file = `example${i + 1}.ts`;
    // a module each (its own top-level names), even when the example imports nothing
    writeFileSync(join(dir, file), `${code}\nexport {};\n`);
    return file;
  });
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      extends: '../../tsconfig.json',
      compilerOptions: { noUnusedLocals: false },
      files: ['globals.d.ts', ...files],
    }),
  );
  let out = '';
  try {
    execFileSync(process.execPath, [join(tests, 'node_modules/typescript/bin/tsc'), '-p', dir], { encoding: 'utf8' });
  } catch (e) {
    out = `${e.stdout}${e.stderr}`;
  }
  assert.equal(out, '', `docs/sdk.md's examples do not type-check:\n${out}`);
});
