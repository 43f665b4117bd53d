// A node's partial outage, for the relayer's fault tests: an HTTP server on 127.0.0.1 in front of the real node
// (anvil) that forwards every JSON-RPC call to it, except the methods listed in `down`, which get a JSON-RPC error
// (-32603, as a node behind a failing load balancer answers) — in a batch, only those calls. It keeps the calls it
// was asked, to tell what the Worker has done: `calls(method)` lists the `params` of each, oldest first.
import { createServer } from 'node:http';

/** Starts the proxy in front of `target` (a JSON-RPC URL); `{ url, down: Set, calls(method), stop() }`. */
export async function rpcOutage(target) {
  const down = new Set();
  const asked = [];
  const answer = async (call) => {
    asked.push(call);
    if (down.has(call.method)) {
      return { jsonrpc: '2.0', id: call.id ?? null, error: { code: -32603, message: `${call.method}: injected outage` } };
    }
    const res = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(call) });
    return res.json();
  };
  const server = createServer(async (req, res) => {
    try {
      const chunks = [];
      for await (const chunk of req) chunks.push(chunk);
      const body = JSON.parse(Buffer.concat(chunks).toString());
      const out = Array.isArray(body) ? await Promise.all(body.map(answer)) : await answer(body);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(out));
    } catch (e) {
      res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(String(e));
    }
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    down,
    calls: (method) => asked.filter((c) => c.method === method).map((c) => c.params),
    stop: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
