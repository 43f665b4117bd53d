// Relay calls are answered once sent (202); a test that reads the mined answer asks to wait for the receipt.

/**
 * The `Prefer` header of a relay call that waits for its receipt, as long as the relayer waits: it caps the wait at
 * its DEPLOY_WAIT_SECONDS — the wait every answer had before relay calls were answered on send.
 */
export const WAIT_FOR_RECEIPT = { prefer: 'wait=60' };

/** {@link WAIT_FOR_RECEIPT} for a request to `/api/execute`, no header for another path. */
export const waitFor = (path) => (path === '/api/execute' ? WAIT_FOR_RECEIPT : {});
