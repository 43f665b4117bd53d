//! LSP2 ERC725Y JSON Schema: VerifiableURI values and data keys.
//!
//! Spec: <https://github.com/lukso-network/LIPs/blob/main/LSPs/LSP-2-ERC725YJSONSchema.md>

pub mod data_keys;
mod key_name;
mod verifiable_uri;

pub use key_name::{array_element_key, encode_array_element_key, encode_array_length, encode_key_name};
#[cfg(feature = "wasm-lite")]
pub(crate) use key_name::{known_is_array, known_key, known_names};
pub use verifiable_uri::{
    Content, ECDSA, KECCAK256_BYTES, KECCAK256_UTF8, NO_VERIFICATION, UriFormat, VerifiableUri,
    VerificationMethod, decode_verifiable_uri, encode_verifiable_uri, encode_with_method,
    verifiable_uri_head, verify,
};
