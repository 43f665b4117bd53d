#!/usr/bin/env node
// The import structure of the two crates, counted from their `use crate::…` / `use super::…` lines and inline
// `crate::…` paths: which module uses which, the import cycles (strongly connected components), the imports from
// outside `routes` into it (upward: the dispatcher is above every feature module), and the spec modules of the core
// that use the wire layer (`api`) or the bindings (`wasm`). Test modules — a `mod` item, inline or a file, under a
// `#[cfg(…)]` that names `test` outside a `not(…)`: `cfg(test)`, `cfg(all(test, …))`, `cfg(any(test, …))` — are
// left out. ARCHITECTURE.md quotes its output.
//
//   node scripts/imports.mjs            figures
//   node scripts/imports.mjs --edges    also every edge (module -> module)
//   node scripts/imports.mjs --check    figures, then exit 1 naming what breaks a rule below, or when ARCHITECTURE.md
//                                       does not quote these figures (the test command runs it)
//   node scripts/imports.mjs --update   figures, written into ARCHITECTURE.md (between the imports.mjs markers)

/**
 * The largest import cycle `--check` allows in the Worker, in modules: 0, no cycle at all (issue 41 took the read
 * side's, the relayer's and the ground floor's apart). The other rules have no figure: nothing imports the
 * dispatcher (`routes`), and no spec module of the core imports `api` or `wasm`.
 */
const MAX_WORKER_CYCLE = 0;

import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

function files(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return files(path);
    return name.endsWith('.rs') ? [path] : [];
  });
}

/** `worker/src/indexer/writer.rs` → `indexer::writer`; `mod.rs`, `lib.rs` name their folder / the crate. */
function moduleOf(srcDir, file) {
  const parts = relative(srcDir, file).split(sep);
  const last = parts.pop().replace(/\.rs$/, '');
  if (last !== 'mod' && last !== 'lib') parts.push(last);
  return parts.join('::') || 'crate';
}

/** The source without comments and string literals (their text is not code). */
function code(text) {
  // one pass, so that whichever starts first wins: a `/*` inside a doc comment or a string is no block comment
  return text.replace(/\/\/[^\n]*|\/\*[\s\S]*?\*\/|\br(#*)"[\s\S]*?"\1|b?"(?:[^"\\]|\\[\s\S])*"|b?'(?:[^'\\\n]|\\[^\n]{1,10}?)'/g, (m) =>
    m.startsWith('/') ? ' ' : '""',
  );
}

/** The index just past the bracket that closes the one at `open` (`(`, `[` or `{`). */
function closing(text, open) {
  const [o, c] = { '(': '()', '[': '[]', '{': '{}' }[text[open]];
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === o) depth++;
    else if (text[i] === c && --depth === 0) return i + 1;
  }
  return text.length;
}

/** Whether a `cfg` predicate names `test` outside a `not(…)`: `test`, `all(test, …)`, `any(test, …)`. */
function namesTest(predicate) {
  let rest = predicate;
  for (let m = /\bnot\s*\(/.exec(rest); m; m = /\bnot\s*\(/.exec(rest)) {
    const open = m.index + m[0].length - 1;
    rest = rest.slice(0, m.index) + rest.slice(closing(rest, open));
  }
  return /\btest\b/.test(rest);
}

/**
 * The code without its test modules, and the names of the test modules it declares as files (`mod tests;`): what
 * tests import is no part of the structure.
 */
function withoutTests(text) {
  let out = text;
  const fileModules = [];
  const cfg = /#\s*\[\s*cfg\s*\(/g;
  for (let m = cfg.exec(out); m; m = cfg.exec(out)) {
    const open = m.index + m[0].length - 1;
    const afterPredicate = closing(out, open);
    if (!namesTest(out.slice(open + 1, afterPredicate - 1))) continue;
    // the attribute's `]`, then other attributes, then the item
    let i = out.indexOf(']', afterPredicate) + 1;
    for (;;) {
      const attribute = /^\s*#\s*\[/.exec(out.slice(i));
      if (!attribute) break;
      i = closing(out, i + attribute[0].length - 1);
    }
    const rest = out.slice(i);
    const item = /^\s*(?:pub(?:\s*\([^)]*\))?\s+)?(?:mod\s+(\w+)\s*([{;])|use\b[^;]*;)/.exec(rest);
    if (!item) continue; // another test-only item (a function, an `impl`): what it names is counted
    let end = i + item[0].length;
    if (item[2] === '{') end = closing(out, end - 1);
    else if (item[2] === ';') fileModules.push(item[1]);
    out = out.slice(0, m.index) + out.slice(end);
    cfg.lastIndex = m.index;
  }
  return { code: out, fileModules };
}

/** Expands a use tree (`a::{b, c::{d}}`) into paths. */
function expand(tree) {
  tree = tree.trim();
  const brace = tree.indexOf('{');
  if (brace < 0) return [tree.replace(/\s+as\s+\w+$/, '')];
  const prefix = tree.slice(0, brace);
  const inner = tree.slice(brace + 1, tree.lastIndexOf('}'));
  const items = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < inner.length; i++) {
    if (inner[i] === '{') depth++;
    else if (inner[i] === '}') depth--;
    else if (inner[i] === ',' && depth === 0) {
      items.push(inner.slice(start, i));
      start = i + 1;
    }
  }
  items.push(inner.slice(start));
  return items.filter((s) => s.trim()).flatMap((item) => expand(prefix + item.trim()));
}

const inside = (module, top) => module === top || module.startsWith(`${top}::`);

function crateGraph(srcDir) {
  const sources = new Map(files(srcDir).map((f) => [moduleOf(srcDir, f), withoutTests(code(readFileSync(f, 'utf8')))]));
  // the files of test modules (`#[cfg(test)] mod wire;` in lib.rs: `wire`, `wire::generate`, …) are left out whole
  const testModules = [...sources].flatMap(([module, { fileModules }]) => fileModules.map((name) => (module === 'crate' ? name : `${module}::${name}`)));
  const modules = new Map([...sources].filter(([module]) => !testModules.some((t) => inside(module, t))));
  const known = new Set(modules.keys());
  /** The longest known module that `path` (`a::b::c`, from the crate root) lies in. */
  const resolve = (path) => {
    const parts = path.split('::').filter((p) => p && p !== 'self');
    for (let n = parts.length; n > 0; n--) {
      const candidate = parts.slice(0, n).join('::');
      if (known.has(candidate)) return candidate;
    }
    return null;
  };
  const edges = new Map();
  for (const [module, { code: text }] of modules) {
    const targets = new Set();
    const here = module === 'crate' ? [] : module.split('::');
    const parentOf = (parts) => parts.slice(0, -1);
    // a file module's `super` is its parent; `mod.rs` is the folder's module, whose `super` is the folder's parent
    const absolute = (path) => {
      let base = [];
      let rest = path.split('::');
      if (rest[0] === 'crate') rest = rest.slice(1);
      else if (rest[0] === 'super') {
        base = here;
        while (rest[0] === 'super') {
          base = parentOf(base);
          rest = rest.slice(1);
        }
      } else if (rest[0] === 'self') {
        base = here;
        rest = rest.slice(1);
      } else return null;
      return [...base, ...rest].join('::');
    };
    for (const m of text.matchAll(/\buse\s+((?:crate|super|self)\b[^;]*);/g)) {
      for (const path of expand(m[1].replace(/\s+/g, ' '))) {
        const target = resolve(absolute(path.replace(/\s/g, '')) ?? '');
        if (target && target !== module) targets.add(target);
      }
    }
    for (const m of text.matchAll(/(?<![\w:])((?:crate|super)(?:::\w+)+)/g)) {
      const target = resolve(absolute(m[1]) ?? '');
      if (target && target !== module) targets.add(target);
    }
    edges.set(module, targets);
  }
  return edges;
}

/** Tarjan's strongly connected components with more than one module. */
function cycles(edges) {
  let index = 0;
  const stack = [];
  const on = new Set();
  const idx = new Map();
  const low = new Map();
  const out = [];
  const visit = (v) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) === idx.get(v)) {
      const component = [];
      let w;
      do {
        w = stack.pop();
        on.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) out.push(component.sort());
    }
  };
  for (const v of edges.keys()) if (!idx.has(v)) visit(v);
  return out.sort((a, b) => b.length - a.length);
}

const report = [];
/** What breaks a rule, one line each (`--check`). */
const failures = [];
const edgeLines = [];
for (const [name, dir] of [
  ['worker', 'worker/src'],
  ['core', 'src'],
]) {
  const edges = crateGraph(join(root, dir));
  const count = [...edges.values()].reduce((n, t) => n + t.size, 0);
  const sccs = cycles(edges);
  report.push(`${name} (${dir}): ${edges.size} modules, ${count} imports between them`);
  report.push(`  cycles: ${sccs.length}${sccs.length ? `; largest ${sccs[0].length} modules` : ''}`);
  for (const c of sccs) report.push(`    [${c.length}] ${c.join(', ')}`);
  if (name === 'worker') {
    const upward = [...edges].flatMap(([from, to]) => (inside(from, 'routes') ? [] : [...to].filter((t) => inside(t, 'routes')).map((t) => `${from} -> ${t}`)));
    report.push(`  imports into routes from outside it: ${upward.length}`);
    for (const e of upward) report.push(`    ${e}`);
    for (const e of upward) failures.push(`worker: ${e} imports the dispatcher (nothing may)`);
    for (const c of sccs.filter((c) => c.length > MAX_WORKER_CYCLE)) {
      failures.push(`worker: a ${c.length}-module cycle, above MAX_WORKER_CYCLE = ${MAX_WORKER_CYCLE}: ${c.join(', ')}`);
    }
    const throughDispatcher = sccs.some((c) => c.includes('routes'));
    report.push(`  a cycle through the dispatcher (routes): ${throughDispatcher ? 'yes' : 'no'}`);
  } else {
    const spec = [...edges].flatMap(([from, to]) =>
      /^(lsp\d+|erc\d+|metadata|hex|ipfs|networks)(::|$)/.test(from)
        ? [...to].filter((t) => inside(t, 'api') || inside(t, 'wasm')).map((t) => `${from} -> ${t}`)
        : [],
    );
    report.push(`  spec modules importing api/wasm: ${spec.length}`);
    for (const e of spec) report.push(`    ${e}`);
    for (const e of spec) failures.push(`core: ${e} (a spec module may import neither api nor wasm)`);
  }
  for (const [from, to] of edges) for (const t of to) edgeLines.push(`    ${name}: ${from} -> ${t}`);
}
console.log(report.join('\n'));
if (process.argv.includes('--edges')) console.log(edgeLines.join('\n'));

// ARCHITECTURE.md quotes the figures between two markers, as a fenced block with the command that made them
const architecturePath = join(root, 'ARCHITECTURE.md');
const architecture = readFileSync(architecturePath, 'utf8');
const BEGIN = '<!-- imports.mjs: begin (node scripts/imports.mjs --update writes this block) -->';
const END = '<!-- imports.mjs: end -->';
const quoted = `${BEGIN}\n\`\`\`text\n$ node scripts/imports.mjs\n${report.join('\n')}\n\`\`\`\n${END}`;
const [before, rest] = architecture.split(BEGIN);
const after = rest?.split(END)[1];
if (after === undefined) failures.push(`ARCHITECTURE.md has no block between "${BEGIN}" and "${END}"`);
else if (process.argv.includes('--update')) writeFileSync(architecturePath, before + quoted + after);
else if (before + quoted + after !== architecture) {
  failures.push('ARCHITECTURE.md quotes other figures than these (node scripts/imports.mjs --update writes them)');
}
if (process.argv.includes('--check')) {
  if (failures.length) {
    console.error(`\nimports.mjs --check: ${failures.length} rule(s) broken:\n${failures.map((f) => `  ${f}`).join('\n')}`);
    process.exit(1);
  }
  console.log(
    `\nimports.mjs --check: ok (no import into routes, no spec module importing api/wasm, ${MAX_WORKER_CYCLE ? `Worker cycles ≤ ${MAX_WORKER_CYCLE} modules` : 'no Worker cycle'}, ARCHITECTURE.md quotes these figures)`,
  );
}
