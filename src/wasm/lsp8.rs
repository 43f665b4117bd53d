//! LSP8 bindings: token ids.

use js_sys::JsString;
use wasm_bindgen::prelude::*;

use super::{
    JsResult,
    error::{outcome, returned},
    io::{self, hex_js},
};
use crate::{
    Error,
    lsp8::{self, TokenIdFormat},
};

/// An LSP8 token id as bytes32 in `format` (0 number, 1 string, 2 address, 3 unique id, 4 hash, 100–104 mixed).
///
/// # Errors
/// `UNKNOWN_ENUM_VALUE` for an unknown format, `INVALID_TOKEN_ID` for a value that is not of the format.
// Throws by `error::returned` rather than returning a `Result` (the cheaper success path; see there): `value` is
// owned for that, moved into the work.
#[wasm_bindgen(js_name = encodeTokenId, unchecked_return_type = "Hex")]
pub fn encode_token_id(
    format: f64,
    #[wasm_bindgen(unchecked_param_type = "string")] value: JsValue,
) -> JsString {
    returned(outcome(move || token_id(format, value)))
}

/// [`encode_token_id`]'s work.
fn token_id(format: f64, value: JsValue) -> JsResult<JsString> {
    // a number parameter (no crossing to read it): JS converts the argument with `Number(…)`, which gives NaN
    // for anything but a number or a numeric string, refused here with the fractions and the out-of-range values
    let format = if format.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(&format) {
        // exact: an integer in u32 range
        TokenIdFormat::from_u64(format as u64)?
    } else {
        return Err(Error::InvalidArgument(
            "format: expected a token id format (0–4, 100–104)".into(),
        ));
    };
    let id = io::with_args(|args| lsp8::encode_token_id(format, &args.text("value", &value)?))?;
    Ok(hex_js(id.as_slice()))
}
