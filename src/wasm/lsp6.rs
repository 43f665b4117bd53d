//! LSP6 bindings: permissions.

use js_sys::{Array, JsString};
use wasm_bindgen::prelude::*;

use super::{
    JsResult,
    io::{self, array_arg, fixed_arg, hex_js, interned},
};
use crate::{Error, lsp6::Permissions};

/// The bytes32 value of a set of LSP6 permissions (`"SETDATA"`, `"ALL_PERMISSIONS"`, …).
///
/// # Errors
/// The `ProfileRelayerError` the JS function throws.
#[wasm_bindgen(js_name = encodePermissions, unchecked_return_type = "Hex")]
pub fn encode_permissions(
    #[wasm_bindgen(unchecked_param_type = "string[]")] names: &JsValue,
) -> JsResult<JsString> {
    // each name read into the scratch area and combined as it comes: no `String` per name
    let names = array_arg("names", names)?;
    let permissions = io::with_args(|args| {
        names.iter().try_fold(Permissions::default(), |acc, name| {
            let name = Permissions::from_name(&args.text("names", &name)?)?;
            Ok::<_, Error>(Permissions::combine(&[acc, name]))
        })
    })?;
    Ok(hex_js(permissions.to_bytes32().as_slice()))
}

/// The names of the LSP6 permissions set in a bytes32 value.
#[wasm_bindgen(js_name = decodePermissions, unchecked_return_type = "string[]")]
pub fn decode_permissions(#[wasm_bindgen(unchecked_param_type = "Hex")] value: &JsValue) -> JsResult<Array> {
    let p = Permissions::from_bytes32(fixed_arg::<32>("permissions", value)?.into());
    Ok(p.names().into_iter().map(interned).collect())
}
