//! Integration tests: the shared reference vectors as table tests.
#![cfg(not(target_arch = "wasm32"))]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    missing_docs
)]

mod metadata;
mod relay;
mod vectors;
