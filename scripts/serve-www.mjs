// Serves the demo dApp (www/) and the npm package's web build (/pkg/…) on 127.0.0.1, plus /config.json with the
// service coordinates. Development only: the page receives a development API key. /vendor/@noble/{curves,hashes}/…
// serves the ES modules of those two packages (tests/node_modules, installed by scripts/setup.sh) for the page's
// demo signer; extensionless module paths resolve to `.js`, as the packages' own imports are written.
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const VENDOR = { '@noble/curves': join(root, 'tests/node_modules/@noble/curves/esm'), '@noble/hashes': join(root, 'tests/node_modules/@noble/hashes/esm') };

/** The file behind `/vendor/<package>/<path>` (one of VENDOR), or undefined. */
async function vendorFile(path) {
  const entry = Object.entries(VENDOR).find(([name]) => path.startsWith(`/vendor/${name}/`));
  if (!entry) return undefined;
  const [name, base] = entry;
  const file = normalize(join(base, path.slice(`/vendor/${name}/`.length)));
  if (!file.startsWith(base + '/')) return undefined;
  try {
    return await readFile(extname(file) ? file : `${file}.js`);
  } catch {
    return undefined;
  }
}

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.wasm': 'application/wasm',
  '.json': 'application/json',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
};

export async function serveWww({ port = 0, config }) {
  const server = createServer(async (req, res) => {
    const path = new URL(req.url, 'http://x').pathname;
    if (path === '/config.json') {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(config));
      return;
    }
    if (path.startsWith('/vendor/')) {
      const found = await vendorFile(path);
      if (!found) return res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      res.writeHead(200, { 'content-type': 'text/javascript', 'cache-control': 'no-cache' }).end(found);
      return;
    }
    const [base, rel] = path.startsWith('/pkg/') ? [join(root, 'pkg'), path.slice(5)] : [join(root, 'www'), path === '/' ? 'index.html' : path.slice(1)];
    const file = normalize(join(base, rel));
    if (!file.startsWith(base)) return res.writeHead(403).end();
    try {
      const body = await readFile(file);
      res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-cache' }).end(body);
    } catch {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    }
  });
  await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((r) => server.close(r)) };
}
