//! The package's error: `ProfileRelayerError`, the class of `js/errors.js` (re-exported by every entry), and the
//! conversion of a core [`Error`] into one, thrown by wasm-bindgen's glue for every export returning a `Result`.

use wasm_bindgen::prelude::*;

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
