//! wasm-bindgen tests of the JS API, run in headless Chromium.
#![cfg(all(target_arch = "wasm32", feature = "wasm"))]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    missing_docs
)]

wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

#[path = "wasm/common.rs"]
mod common;

use wasm_bindgen_test::wasm_bindgen_test;

// the browser's own crypto.getRandomValues backs generateSalt
#[wasm_bindgen_test]
fn runs_in_a_browser_window() {
    let window = web_sys::window().expect("a browser window");
    assert!(window.crypto().is_ok());
}
