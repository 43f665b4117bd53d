//! What happens if a panic slips through anyway. On stable Rust the Worker is built with `panic=abort`: a panic
//! ends the wasm instance, and the request being served would never get an answer ("the Worker's code had hung").
//! This module tracks which request's future is being polled; the panic hook reports that request's id to the
//! entry module (`worker/js/entry.mjs`, `globalThis.__profileRelayerPanic`) before the abort, which answers it with
//! a 500 JSON `INTERNAL_ERROR` and replays the other idempotent requests of the instance on a fresh one.

use core::{
    cell::Cell,
    future::Future,
    pin::Pin,
    task::{Context, Poll},
};
use std::sync::Once;

use wasm_bindgen::{JsCast, JsValue};
use worker::Request;

thread_local! {
    static CURRENT: Cell<u32> = const { Cell::new(0) };
}

/// The id of the request whose future is being polled (0 outside a request).
pub fn current() -> u32 {
    CURRENT.with(Cell::get)
}

/// The id the entry module gave the request (0 when it came another way).
pub fn request_id(req: &Request) -> u32 {
    req.headers()
        .get("x-profile-relayer-request")
        .ok()
        .flatten()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// Installs the reporting panic hook once, in front of the one workers-rs installs.
pub fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            report(CURRENT.with(Cell::get));
            previous(info);
        }));
    });
}

fn report(id: u32) {
    let Ok(callback) = js_sys::Reflect::get(&js_sys::global(), &JsValue::from_str("__profileRelayerPanic"))
    else {
        return;
    };
    if let Some(callback) = callback.dyn_ref::<js_sys::Function>() {
        let _ = callback.call1(&JsValue::UNDEFINED, &JsValue::from(id));
    }
}

/// A request's future, marked as the current request while it is polled.
pub struct Tracked<F> {
    id: u32,
    inner: Pin<Box<F>>,
}

impl<F> core::fmt::Debug for Tracked<F> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Tracked").field("id", &self.id).finish()
    }
}

impl<F> Tracked<F> {
    /// Wraps `inner`.
    pub fn new(id: u32, inner: F) -> Self {
        Self {
            id,
            inner: Box::pin(inner),
        }
    }
}

impl<F: Future> Future for Tracked<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let id = self.id;
        let previous = CURRENT.with(|c| c.replace(id));
        let out = self.inner.as_mut().poll(cx);
        CURRENT.with(|c| c.set(previous));
        out
    }
}
