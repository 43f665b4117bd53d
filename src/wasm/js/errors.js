// The package's error class: every function throws (every promise rejects with) a `ProfileRelayerError`.
// Imported by the wasm (src/wasm/error.rs) to build its errors, and re-exported by every entry of the package.

/**
 * Whether `value` is an error thrown by this package: an `Error` named `ProfileRelayerError` with a string `code`.
 * `instanceof ProfileRelayerError` answers the same, so errors of another copy of the package (e.g. the lite and the
 * full entry in one app) are recognised too.
 * @param {unknown} value
 * @returns {boolean}
 */
export function isProfileRelayerError(value) {
  return value instanceof Error && value.name === 'ProfileRelayerError' && typeof value.code === 'string';
}

export class ProfileRelayerError extends Error {
  /**
   * @param {string} message
   * @param {string} code a core code (`ProfileRelayerErrorCode`) or a service / client code
   * @param {{ cause?: unknown }} [options]
   */
  constructor(message, code, options) {
    super(message, options);
    this.name = 'ProfileRelayerError';
    this.code = code;
  }

  /** @param {unknown} value */
  static [Symbol.hasInstance](value) {
    return isProfileRelayerError(value);
  }
}

/**
 * A `ProfileRelayerError` with its optional fields: the HTTP `status`, `retryAfter` (seconds) and the `cause`
 * (each left out when `undefined`).
 * @param {string} message
 * @param {string} code
 * @param {number} [status]
 * @param {number} [retryAfter]
 * @param {unknown} [cause]
 */
export function newError(message, code, status, retryAfter, cause) {
  const error = new ProfileRelayerError(message, code, cause === undefined ? undefined : { cause });
  if (status !== undefined) error.status = status;
  if (retryAfter !== undefined) error.retryAfter = retryAfter;
  return error;
}
