// The clients' one `fetch` per request (src/wasm/clients/http.rs): transport options, retries on 429 / 503 after
// `Retry-After`, and the whole body read here so that a call is a single await.

/**
 * `fetch` (or `t.fetch`) and the whole body: resolves to `[status, retryAfter | null, body]`, the body a string, or a
 * `Uint8Array` for a successful `binary` request; rejects when the service cannot be reached, the attempt timed out
 * or the signal aborted. A 429 or 503 is retried up to `t.retries` times after its `Retry-After` (else 0.5 s, 1 s,
 * 2 s, …) when that wait is at most `t.maxRetryDelay` seconds (default 60).
 * @param {string} method
 * @param {string} url
 * @param {string | undefined} auth a bearer token
 * @param {unknown} body
 * @param {boolean} json send `body` as JSON
 * @param {boolean} binary read a successful body as bytes
 * @param {{ fetch?: typeof fetch, signal?: AbortSignal, timeout?: number, retries?: number, maxRetryDelay?: number }} [t]
 */
export function prFetch(method, url, auth, body, json, binary, t) {
  const headers = {};
  if (auth) headers.authorization = 'Bearer ' + auth;
  if (json) { headers['content-type'] = 'application/json'; body = JSON.stringify(body); }
  t = t || {};
  const send = t.fetch || fetch;
  const attempt = (n) => {
    const signals = [t.signal, t.timeout && AbortSignal.timeout(t.timeout)].filter(Boolean);
    let signal = signals[0];
    if (signals.length > 1 && AbortSignal.any) signal = AbortSignal.any(signals);
    else if (signals.length > 1) {
      const c = new AbortController();
      for (const s of signals) s.addEventListener('abort', () => c.abort(s.reason), { once: true });
      signal = c.signal;
    }
    return send(url, { method, headers, body, signal }).then((r) =>
      (binary && r.ok ? r.arrayBuffer().then((b) => new Uint8Array(b)) : r.text()).then((text) => {
        const after = r.headers.get('retry-after');
        const wait = after !== null && /^\s*\d+\s*$/.test(after) ? +after : 2 ** n / 2;
        if ((r.status === 429 || r.status === 503) && n < (t.retries || 0) && wait <= (t.maxRetryDelay ?? 60))
          return new Promise((resolve, reject) => {
            const abort = () => { clearTimeout(id); reject(t.signal.reason); };
            const id = setTimeout(() => { t.signal?.removeEventListener('abort', abort); resolve(attempt(n + 1)); }, wait * 1000);
            t.signal?.addEventListener('abort', abort, { once: true });
          });
        return [r.status, after, text];
      }));
  };
  return attempt(0);
}
