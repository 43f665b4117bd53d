//! Browser / Node bindings. Thin: every function converts JS values, calls the core and converts back. Errors
//! become JS `Error` objects with `name = "ProfileRelayerError"` and a string `code`.
//!
//! Three builds of the npm package come from this module:
//! - feature `wasm-lite` (`profile-relayer/lite`): the encodings: VerifiableURI, data keys, LSP6 permissions,
//!   LSP8 token ids, LSP23 data and prediction, LSP25 relay-call digests and calldata, LSP15 quota messages.
//!   Hashing is keccak256 only.
//! - feature `wasm` (`profile-relayer`): the above plus the typed API clients (`RelayerClient`, `LookupClient`),
//!   IPFS CIDs and LSP25 revert decoding.
//! - feature `wasm-recover` (`profile-relayer/recover`, built with `wasm-lite`): the encodings plus LSP25 / LSP15
//!   signer recovery (secp256k1), which the clients don't need.
//!
//! Strings and results cross the boundary through `io` (native string writes and reads, objects built with
//! cached keys), not through serde.

//! One module per standard, as the core is split: `lsp2` (VerifiableURI, data keys), `lsp6` (permissions), `lsp8`
//! (token ids), `lsp23` (deployment), `lsp25` (relay calls), `lsp15` (quota messages), `ipfs` (CIDs, full build);
//! the generic argument readers in `args`, the boundary in `io`, the error class in `error`, and the clients with
//! their inputs and transport in `clients/` (full build). The JS they import is in `js/`.

mod args;
#[cfg(feature = "wasm")]
mod clients;
#[cfg(feature = "wasm")]
mod constants;
mod error;
mod io;
#[cfg(feature = "wasm")]
mod ipfs;
mod lsp15;
mod lsp2;
mod lsp23;
mod lsp25;
mod lsp6;
mod lsp8;
mod types;

#[cfg(feature = "wasm")]
pub use self::clients::inputs::{ExecuteInput, QuotaInput, RelayCallParams, RelayCallParamsInput};
#[cfg(feature = "wasm")]
pub use self::clients::{LookupClient, RelayerClient, fetch_relay_call_params};
#[cfg(feature = "wasm")]
pub use self::constants::lukso_constants;
pub use self::error::is_profile_relayer_error;
#[cfg(feature = "wasm")]
pub use self::ipfs::{compute_cid, verify_cid};
#[cfg(feature = "wasm")]
pub use self::lsp2::decode_data_source_with_hash;
pub use self::lsp2::{
    decode_verifiable_uri, encode_array_element_key, encode_key_name, encode_key_names,
    encode_verifiable_uri, encode_verifiable_uri_data, verify_verifiable_uri,
};
#[cfg(feature = "wasm")]
pub use self::lsp6::decode_permissions_object;
pub use self::lsp6::{decode_permissions, encode_permissions};
pub use self::lsp8::encode_token_id;
#[cfg(feature = "wasm-recover")]
pub use self::lsp15::recover_quota_signer;
pub use self::lsp15::{QuotaMessage, quota_message};
pub use self::lsp23::{
    decode_post_deployment_calldata, encode_deploy_calldata, encode_post_deployment_calldata, generate_salt,
    predict_profile_address, predict_profile_addresses, profile_data_from_controllers,
};
#[cfg(feature = "wasm-recover")]
pub use self::lsp25::recover_relay_call_signer;
pub use self::lsp25::{
    DecodedRevert, ExecuteRelayCallInput, RelayCallInput, encode_execute_relay_call,
    encode_relay_call_message, relay_call_digest,
};
#[cfg(feature = "wasm")]
pub use self::lsp25::{decode_relay_call_revert, encode_set_data, encode_set_data_batch};
pub use self::types::{
    CustomNetwork, DataKeyValue, DataKeysValues, DecodedVerifiableUri, DeploymentInput, PredictedAddresses,
    ProfileData,
};

use wasm_bindgen::prelude::*;

use crate::Error;

type JsResult<T> = Result<T, Error>;

/// The global allocator of the npm builds: talc instead of the standard library's dlmalloc (BENCHMARKS.md#bundle-size).
#[cfg(all(
    target_arch = "wasm32",
    target_os = "unknown",
    not(target_feature = "atomics")
))]
#[global_allocator]
static ALLOCATOR: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();

#[wasm_bindgen(typescript_custom_section)]
const TS_TYPES: &'static str = r#"
/** `0x`-prefixed hex. */
export type Hex = `0x${string}`;
/** `0x`-prefixed 20-byte address; mixed case must be a valid EIP-55 checksum. */
export type Address = `0x${string}`;
/** Bytes: a `Uint8Array` (a Node `Buffer`), an `ArrayBuffer`, or another typed array or `DataView` (its bytes). */
export type ContentBytes = Uint8Array | ArrayBuffer | ArrayBufferView;
/** The error every function of this package throws (every promise rejects with); `instanceof` recognises those of
 * another copy of the package too. */
export declare class ProfileRelayerError extends Error {
  constructor(message: string, code: ProfileRelayerErrorCode | ServiceErrorCode, options?: { cause?: unknown });
  name: "ProfileRelayerError";
  /** A core code, or (from the clients of the full package) the service's code, `NETWORK_ERROR`, … */
  code: ProfileRelayerErrorCode | ServiceErrorCode;
  /** HTTP status, for errors answered by the service. */
  status?: number;
  /** Seconds to wait, when the service sent `Retry-After` (429, 503, 504). */
  retryAfter?: number;
}
/** Whether `value` is an error thrown by this package (what `instanceof ProfileRelayerError` answers). */
export function isProfileRelayerError(value: unknown): value is ProfileRelayerError;
/** A LUKSO network: name, chain id, or custom LSP23 constants (e.g. a local chain). */
export type NetworkInput = "mainnet" | "testnet" | 42 | 4201 | CustomNetwork;
/** An entry of `encodeKeyNames`: a key name, or a name with its dynamic parts (as in erc725.js `getData`). */
export type KeyNameInput = string | { keyName: string; dynamicKeyParts?: string | string[] };
"#;

/// `ProfileRelayerErrorCode`: generated from the core's code table.
#[wasm_bindgen(typescript_custom_section)]
const TS_ERROR_CODES: &'static str = crate::error::ERROR_CODE_TS;

/// The lite and recover entries' `ServiceErrorCode`: the clients' own codes (generated).
#[cfg(not(feature = "wasm"))]
#[wasm_bindgen(typescript_custom_section)]
const TS_LITE: &'static str = crate::api::codes::CLIENT_CODE_TS;

#[wasm_bindgen]
extern "C" {
    /// `NetworkInput` on the JS side.
    #[wasm_bindgen(typescript_type = "NetworkInput")]
    pub type NetworkInputJs;
    /// `string | string[]` on the JS side (dynamic key parts).
    #[wasm_bindgen(typescript_type = "string | string[]")]
    pub type KeyPartsJs;
    /// `Hex` on the JS side.
    #[wasm_bindgen(typescript_type = "Hex")]
    pub type HexJs;
}

/// Every error code, in declaration order.
#[wasm_bindgen(js_name = errorCodes, unchecked_return_type = "ProfileRelayerErrorCode[]")]
pub fn error_codes() -> Vec<String> {
    Error::ALL_CODES.iter().map(|c| (*c).to_owned()).collect()
}
