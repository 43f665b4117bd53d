#![doc = include_str!("../README.md")]
#![cfg_attr(not(test), warn(unused_crate_dependencies))]

pub mod api;
pub mod erc165;
pub mod erc725y;
mod error;
pub mod genuine;
pub mod hex;
pub mod ipfs;
pub mod json_shape;
pub mod lsp15;
pub mod lsp2;
pub mod lsp23;
pub mod lsp25;
pub mod lsp26;
pub mod lsp3;
pub mod lsp4;
pub mod lsp6;
pub mod lsp7;
pub mod lsp8;
pub mod metadata;
pub mod networks;
#[cfg(feature = "wasm-lite")]
pub mod wasm;

pub(crate) use error::Quoted;
pub use error::{ERROR_CODE_TS, Error, Result};

// only here to select getrandom 0.2's JS backend for k256's rand_core on wasm32-unknown-unknown (see Cargo.toml)
#[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
use getrandom_02 as _;
