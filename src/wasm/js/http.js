// The clients' one `fetch` per request (src/wasm/clients/http.rs): transport options, retries on 429 / 503 after
// `Retry-After`, and the whole body read here so that a call is a single await.

/** The most seconds a `Retry-After` is read as (a day): a larger or far-future value is read as this. */
const MAX_RETRY_AFTER = 86400;

/**
 * Seconds to wait from a `Retry-After` value (RFC 9110 §10.2.3): delay-seconds (digits), or an HTTP-date — the
 * seconds from `now` until it, 0 for a date past; `null` for anything else (absent, negative, garbage). At most a day.
 * @param {string | null} value
 * @param {number} now milliseconds since the epoch
 * @returns {number | null}
 */
export function retryAfterSeconds(value, now) {
  if (value === null) return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Math.min(Number(text), MAX_RETRY_AFTER);
  // an HTTP-date names its weekday and GMT (IMF-fixdate, RFC 850, asctime): not any text Date.parse takes
  if (!/^[A-Za-z]{3}/.test(text)) return null;
  // asctime names no zone and is GMT: said, or the engine reads it as local time
  const at = Date.parse(/GMT$/i.test(text) ? text : `${text} GMT`);
  if (Number.isNaN(at)) return null;
  return Math.min(Math.max(0, Math.ceil((at - now) / 1000)), MAX_RETRY_AFTER);
}

/**
 * `fetch` (or `t.fetch`) and the whole body: resolves to `[status, retryAfter | null, body]` — `retryAfter` the
 * seconds of the answer's `Retry-After` ({@link retryAfterSeconds}), the body a string, or a `Uint8Array` for a
 * successful `binary` request; rejects when the service cannot be reached, the attempt timed out or one of
 * `t.signals` (the client's and the call's) aborted — before anything is sent when one is aborted already, and at
 * once when one aborts during a retry's wait, whether or not `t.fetch` honours it. A 429 or 503 is retried up to
 * `t.retries` times after its `Retry-After` (else 0.5 s, 1 s, 2 s, …) when that wait is at most `t.maxRetryDelay`
 * seconds (default 60).
 * @param {string} method
 * @param {string} url
 * @param {string | undefined} auth a bearer token
 * @param {unknown} body
 * @param {boolean} json send `body` as JSON
 * @param {boolean} binary read a successful body as bytes
 * @param {{ fetch?: typeof fetch, signals?: AbortSignal[], timeout?: number, retries?: number, maxRetryDelay?: number, prefer?: string }} [t]
 */
export function prFetch(method, url, auth, body, json, binary, t) {
  const headers = {};
  if (auth) headers.authorization = 'Bearer ' + auth;
  if (json) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(body);
  }
  t = t || {};
  if (t.prefer) headers.prefer = t.prefer;
  const send = t.fetch || fetch;
  const user = t.signals || [];
  const aborted = () => user.find((s) => s.aborted);
  /** Calls `then` once one of `signals` aborts, with its reason; returns what stops listening. */
  const onAbort = (signals, then) => {
    const forward = (e) => {
      stop();
      then(e.target.reason);
    };
    const stop = () => {
      for (const s of signals) s.removeEventListener('abort', forward);
    };
    for (const s of signals) s.addEventListener('abort', forward, { once: true });
    return stop;
  };
  const attempt = (n) => {
    const gone = aborted();
    if (gone) return Promise.reject(gone.reason);
    const timeout = t.timeout ? AbortSignal.timeout(t.timeout) : undefined;
    const signals = [...user, timeout].filter(Boolean);
    let signal = signals[0];
    let done = () => {};
    if (signals.length > 1 && AbortSignal.any) signal = AbortSignal.any(signals);
    else if (signals.length > 1) {
      const c = new AbortController();
      // the client's signal outlives the request: its listener goes with the request
      done = onAbort(signals, (reason) => c.abort(reason));
      signal = c.signal;
    }
    return send(url, { method, headers, body, signal })
      .then((r) => (binary && r.ok ? r.arrayBuffer().then((b) => new Uint8Array(b)) : r.text()).then((text) => [r, text]))
      .finally(done)
      .then(([r, text]) => {
        const after = retryAfterSeconds(r.headers.get('retry-after'), Date.now());
        const wait = after ?? 2 ** n / 2;
        if ((r.status === 429 || r.status === 503) && n < (t.retries || 0) && wait <= (t.maxRetryDelay ?? 60))
          return new Promise((resolve, reject) => {
            const gone = aborted();
            if (gone) return reject(gone.reason);
            const stop = onAbort(user, (reason) => {
              clearTimeout(id);
              reject(reason);
            });
            const id = setTimeout(() => {
              stop();
              resolve(attempt(n + 1));
            }, wait * 1000);
          });
        return [r.status, after, text];
      });
  };
  return attempt(0);
}
