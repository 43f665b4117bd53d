// Uploads through `POST /api/v0/add` (multipart, one file), as a dApp with an API key or the wallet with a token.
import assert from 'node:assert/strict';

/**
 * POSTs `bytes` as the form's `file` with `Authorization: Bearer <token>`: the response. `type` is the declared media
 * type, `name` the file name (none: the browser's default), `headers` more request headers.
 */
export function postUpload(workerUrl, token, bytes, { type = '', name, headers = {} } = {}) {
  const form = new FormData();
  const blob = new Blob([bytes], { type });
  if (name === undefined) form.append('file', blob);
  else form.append('file', blob, name);
  return fetch(`${workerUrl}/api/v0/add`, { method: 'POST', headers: { authorization: `Bearer ${token}`, ...headers }, body: form });
}

/** Uploads `bytes` with the stack's API key, asserting 200: the CID. */
export async function upload(stack, bytes, type = '', name = 'file') {
  const res = await postUpload(stack.workerUrl, stack.apiKey, bytes, { type, name });
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  return body.Hash;
}
