//! LSP6 bindings: permissions.

use js_sys::{Array, JsString};
use wasm_bindgen::{JsCast, prelude::*};

use super::{
    JsResult,
    error::{outcome, returned},
    io::{self, array_arg, fixed_arg, hex_js, interned},
};
use crate::{Error, lsp6::Permissions};

/// The bytes32 value of a set of LSP6 permissions: an array of names (`["SETDATA", "CALL"]`), or erc725.js's object
/// (`{ SETDATA: true, CALL: true }`: `ALL_PERMISSIONS` applied first, then each name in order, `true` setting and
/// `false` clearing its bits, as erc725.js `encodePermissions` does).
///
/// # Errors
/// The `ProfileRelayerError` the JS function throws.
// throws by `error::returned` (the cheaper success path; `names` owned for it)
#[wasm_bindgen(js_name = encodePermissions, unchecked_return_type = "Hex")]
pub fn encode_permissions(
    #[wasm_bindgen(unchecked_param_type = "readonly string[] | PermissionsObject")] names: JsValue,
) -> JsString {
    returned(outcome(move || permissions_value(&names)))
}

/// [`encode_permissions`]'s work.
fn permissions_value(names: &JsValue) -> JsResult<JsString> {
    if !js_sys::Array::is_array(names) && names.is_object() {
        return Ok(hex_js(permissions_of_object(names)?.to_bytes32().as_slice()));
    }
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

/// erc725.js's permissions object (out of line: the array form is the hot one): `ALL_PERMISSIONS` first, then the other names in order (`true` sets, `false` clears).
#[inline(never)]
fn permissions_of_object(object: &JsValue) -> JsResult<Permissions> {
    let keys = js_sys::Object::keys(object.unchecked_ref::<js_sys::Object>());
    let mut bits = Permissions::default().to_bytes32();
    let all = JsValue::from_str("ALL_PERMISSIONS");
    let ordered = std::iter::once(all.clone()).chain(keys.iter().filter(|k| *k != all));
    for key in ordered {
        let value = js_sys::Reflect::get(object, &key).unwrap_or(JsValue::UNDEFINED);
        let name = key.as_string().unwrap_or_default();
        if value.is_undefined() && name == "ALL_PERMISSIONS" {
            continue;
        }
        let permission = Permissions::from_name(&name)?.to_bytes32();
        match value.as_bool() {
            Some(true) => bits |= permission,
            Some(false) => bits &= !permission,
            None => {
                return Err(Error::InvalidArgument(format!(
                    "permissions.{name}: expected true or false"
                )));
            }
        }
    }
    Ok(Permissions::from_bytes32(bits))
}

/// The names of the LSP6 permissions set in a bytes32 value.
#[wasm_bindgen(js_name = decodePermissions, unchecked_return_type = "PermissionName[]")]
pub fn decode_permissions(#[wasm_bindgen(unchecked_param_type = "Hex")] value: &JsValue) -> JsResult<Array> {
    let p = Permissions::from_bytes32(fixed_arg::<32>("permissions", value)?.into());
    Ok(p.names().into_iter().map(interned).collect())
}

/// The LSP6 permissions of a bytes32 value (full entry) as erc725.js's object: every permission name (and `ALL_PERMISSIONS`,
/// true when all its bits are set) to whether it is set (erc725.js `decodePermissions`).
///
/// # Errors
/// `INVALID_HEX` / `INVALID_LENGTH` for a value that is not 32 bytes of hex.
#[cfg(feature = "wasm")]
#[wasm_bindgen(js_name = decodePermissionsObject, unchecked_return_type = "Required<PermissionsObject>")]
pub fn decode_permissions_object(
    #[wasm_bindgen(unchecked_param_type = "Hex")] value: &JsValue,
) -> JsResult<JsValue> {
    let bits = fixed_arg::<32>("permissions", value)?;
    let o = io::object();
    let names = crate::lsp6::NAMED
        .iter()
        .chain([("ALL_PERMISSIONS", Permissions::ALL_PERMISSIONS)].iter());
    for (name, permission) in names {
        let want = permission.to_bytes32();
        let set = alloy_primitives::B256::from(bits) & want == want;
        io::with_interned(name, |k| o.set(k, &JsValue::from_bool(set)));
    }
    Ok(o.into())
}

#[wasm_bindgen(typescript_custom_section)]
const TS_PERMISSIONS: &'static str = r#"
/** erc725.js's permissions object: a permission name (`"SETDATA"`, `"ALL_PERMISSIONS"`, …) to whether it is set. */
export type PermissionsObject = { [name in PermissionName]?: boolean };
"#;

/// `PermissionName`: generated from the core's permission table.
#[wasm_bindgen(typescript_custom_section)]
const TS_PERMISSION_NAMES: &'static str = crate::lsp6::PERMISSION_NAME_TS;
