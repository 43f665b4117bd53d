// For tests on mocked timers: what runs between two ticks of the mocked clock.

/** Lets the promise jobs queued so far run (and those they queue): a few turns of the event loop, no timer. */
export const settle = async () => {
  for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
};
