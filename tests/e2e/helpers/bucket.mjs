// The Worker's rate limits and budgets are token buckets refilled continuously (worker/src/ratelimit.rs): what a
// test may assert about one depends on how long its requests took. This is the test's bound on such a bucket,
// measured on the test's side (the same clock as the Worker's), so that a verdict holds at any machine speed.
import assert from 'node:assert/strict';

/**
 * A bucket of `limit` tokens a `perSeconds`, holding `tokens` (default: full) when this is called, before the first
 * request it counts. `take(n)` records what the Worker gave out. `mustAllow(cost)`: the tokens it held at the start
 * cover `cost` without any refill (a request that must pass). `mustRefuse(cost)`: not even the most it can have
 * refilled by now covers `cost` (a request that must be refused; ask once its answer is in). Between the two, either
 * verdict is right and `check` accepts both.
 */
export function tokenBucket({ limit, perSeconds = 60, tokens = limit }) {
  const started = Date.now();
  let taken = 0;
  /** The most the bucket can hold now: the start plus the refill of the time elapsed (1 ms of clock rounding). */
  const most = () => tokens + ((Date.now() + 1 - started) / 1000) * (limit / perSeconds) - taken;
  const bucket = {
    take(n = 1) {
      taken += n;
    },
    mustAllow: (cost = 1) => tokens - taken >= cost,
    mustRefuse: (cost = 1) => most() < cost,
    most,
    /**
     * Checks a request of `cost` answered `status` (429 the refusal, `allowed` the status of a request that passed)
     * against the bound, and takes its tokens when it passed (`spent`, default `cost`); whether it passed.
     */
    check(status, { cost = 1, spent = cost, allowed = 200, what = 'the request' } = {}) {
      if (bucket.mustAllow(cost)) assert.equal(status, allowed, `${what}: the bucket held ${cost} without any refill`);
      else if (bucket.mustRefuse(cost)) assert.equal(status, 429, `${what}: the bucket cannot have refilled ${cost}`);
      else assert.ok(status === allowed || status === 429, `${what}: ${status}`);
      if (status !== 429) bucket.take(spent);
      return status !== 429;
    },
  };
  return bucket;
}
