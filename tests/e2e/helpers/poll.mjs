// Waiting for what the stack does in the background (receipts, alarms, logs, deliveries).
import assert from 'node:assert/strict';

/**
 * Calls `f` until it answers something truthy, and answers that; fails naming `what` (and `detail()`, when given)
 * once `timeoutMs` have passed. `f` may be async.
 */
export async function until(what, f, { timeoutMs = 20_000, intervalMs = 200, detail } = {}) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const found = await f();
    if (found) return found;
    if (Date.now() > end) assert.fail(`not within ${timeoutMs} ms: ${what}${detail ? `\n${detail()}` : ''}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
