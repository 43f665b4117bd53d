// The package's types as a CommonJS TypeScript project finds them (`module: node16`, a package.json without
// `"type": "module"`, as NestJS and many Node servers are): `require` loads the Node build (CommonJS), and its
// declarations must be the ones TypeScript reads as CommonJS — an ES module's declarations there are TS1479
// ("the current file is a CommonJS module whose imports will produce 'require' calls; however, the referenced file
// is an ECMAScript module"). The same project's `.mts` file reads the ES module's. Every entry, `--strict`,
// `skipLibCheck: false`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

const tests = fileURLToPath(new URL('../', import.meta.url));

const USE = `import { encodeKeyName, isProfileRelayerError } from 'profile-relayer';
import { encodeVerifiableUri } from 'profile-relayer/lite';
import { recoverQuotaSigner } from 'profile-relayer/recover';
import { encodeKeyName as nodeKeyName } from 'profile-relayer/node';

const key: \`0x\${string}\` = encodeKeyName('LSP3Profile');
const value: string = encodeVerifiableUri('{}', 'ipfs://x');
const same: boolean = key === nodeKeyName('LSP3Profile');
try {
  recoverQuotaSigner('0x0000000000000000000000000000000000000000', 0, '0x');
} catch (e) {
  if (isProfileRelayerError(e)) console.log(e.code, value, same);
}
`;

/** Type-checks `files` (name → source) in a project of `packageType` under `module`; tsc's output. */
function tsc(name, packageType, module, files) {
  const dir = join(tests, 'output', name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, private: true, type: packageType }));
  for (const [file, source] of Object.entries(files)) writeFileSync(join(dir, file), source);
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module,
        moduleResolution: module,
        strict: true,
        noEmit: true,
        skipLibCheck: false,
        types: [],
        lib: ['ES2022', 'DOM'],
      },
      files: Object.keys(files),
    }),
  );
  try {
    execFileSync(process.execPath, [join(tests, 'node_modules/typescript/bin/tsc'), '-p', dir], { encoding: 'utf8' });
    return '';
  } catch (e) {
    return `${e.stdout}${e.stderr}`;
  }
}

test('a CommonJS TypeScript project (module node16) type-checks every entry, and its .mts file too', () => {
  const out = tsc('types-cjs', 'commonjs', 'node16', { 'index.ts': USE, 'esm.mts': USE });
  assert.equal(out, '', `CommonJS project:\n${out}`);
});

test('an ES module TypeScript project (module node16 and nodenext) type-checks every entry', () => {
  for (const module of ['node16', 'nodenext']) {
    const out = tsc(`types-esm-${module}`, 'module', module, { 'index.ts': USE });
    assert.equal(out, '', `ES module project, ${module}:\n${out}`);
  }
});
