//! The package's error: `ProfileRelayerError`, the class of `js/errors.js` (re-exported by every entry), and the
//! conversion of a core [`Error`] into one, thrown by wasm-bindgen's glue for every export returning a `Result`.

use std::cell::Cell;

use wasm_bindgen::{JsCast, prelude::*};

use crate::Error;

#[wasm_bindgen(module = "/src/wasm/js/errors.js")]
extern "C" {
    /// The package's error class (`src/wasm/js/errors.js`), re-exported by the package (its TypeScript declaration
    /// is `TS_TYPES`'s); a class is not called, so this import is never used from Rust.
    #[allow(dead_code)]
    #[wasm_bindgen(js_name = ProfileRelayerError, reexport, skip_typescript)]
    fn profile_relayer_error_class();

    /// Whether `value` is an error thrown by this package (what `instanceof ProfileRelayerError` answers).
    #[wasm_bindgen(js_name = isProfileRelayerError, reexport, skip_typescript)]
    pub fn is_profile_relayer_error(value: &JsValue) -> bool;

    /// A `ProfileRelayerError` with its optional fields (`status`, `retryAfter`, `cause`: left out when absent).
    #[wasm_bindgen(js_name = newError)]
    pub(crate) fn new_error(
        message: &str,
        code: &str,
        status: Option<u16>,
        retry_after: Option<u32>,
        cause: &JsValue,
    ) -> JsValue;
}

impl From<Error> for JsValue {
    fn from(e: Error) -> Self {
        new_error(&e.to_string(), e.code(), None, None, &Self::UNDEFINED)
    }
}

thread_local! {
    /// Whether the `JsValue` an export's work just returned is a `ProfileRelayerError` to throw (see [`outcome`]).
    static FAILED: Cell<bool> = const { Cell::new(false) };
}

/// Runs an export's work and gives its result as one `JsValue` — the value, or the error as a `ProfileRelayerError`
/// — with the kind noted aside, for [`returned`]. Out of line (`scripts/build-pkg.sh` keeps wasm-opt from inlining
/// it too), so that every Rust value of the work, the owned arguments moved into `work` included, is dropped when it
/// returns, and its frame (the `Result`, the work's locals) is off the shadow stack before the export throws.
#[inline(never)]
pub(crate) fn outcome<T: Into<JsValue>>(work: impl FnOnce() -> Result<T, Error>) -> JsValue {
    match work() {
        Ok(value) => value.into(),
        Err(error) => {
            FAILED.set(true);
            error.into()
        }
    }
}

/// The value [`outcome`] gave, or throws it if it is the error: the cheaper success path of the hottest calls, for
/// exports that return their value rather than a `Result` (whose return, a multi-value array in JS and a slot of
/// wasm-bindgen's externref table read back and freed by a second call, was ≈ 25 % of the cheapest;
/// BENCHMARKS.md#wasm-boundary).
///
/// The JS exception leaves the wasm frames without their epilogues, so the export must hold nothing when it
/// throws: its work done by a function that has returned (every Rust value dropped), no `Result` or other value in
/// memory (its frame would stay on the shadow stack), no borrowed (`&JsValue`) argument (wasm-bindgen keeps those on
/// a stack of its externref table that only the export's epilogue pops; owned ones are moved into the work, not
/// borrowed by it from the export's frame).
/// `tests/npm/throws.test.mjs` throws from these exports 100,000 times and checks that the module still answers: a
/// `Result` returned through memory broke it within that many throws ("memory access out of bounds").
#[inline(always)]
pub(crate) fn returned<T: JsCast>(value: JsValue) -> T {
    if FAILED.replace(false) {
        throw(value)
    }
    value.unchecked_into()
}

/// Throws `error`, see [`returned`].
#[cold]
#[inline(never)]
fn throw(error: JsValue) -> ! {
    wasm_bindgen::throw_val(error)
}
