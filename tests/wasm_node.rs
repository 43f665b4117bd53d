//! wasm-bindgen tests of the JS API, run in Node.
#![cfg(all(target_arch = "wasm32", feature = "wasm"))]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    missing_docs
)]

#[path = "wasm/common.rs"]
mod common;
