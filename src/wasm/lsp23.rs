//! LSP23 bindings: the data of a new profile, `postDeploymentCallData`, address prediction, deployment calldata.

use alloy_primitives::{Address, B256, Bytes};
use js_sys::{Array, JsString};
use wasm_bindgen::{JsCast, prelude::*};

use super::{
    HexJs, JsResult, NetworkInputJs,
    args::{Fields, at_index, hex_array, push_hex, reject_unknown_keys},
    io::{self, Obj, address_arg, array_arg, ascii, fixed_arg, hex_arg, hex_js, object},
};
use crate::{
    Error, lsp23,
    networks::{Lsp23Constants, Network},
};

fn keys_values(keys: &JsValue, values: &JsValue) -> JsResult<(Vec<B256>, Vec<Bytes>)> {
    let keys = array_arg("keys", keys)?
        .iter()
        .map(|k| fixed_arg::<32>("keys", &k).map(B256::from))
        .collect::<Result<Vec<_>, _>>()?;
    let values = array_arg("values", values)?
        .iter()
        .map(|v| hex_arg("values", &v).map(Bytes::from))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((keys, values))
}

/// `abi.encode(bytes32[] keys, bytes[] values)`: the LSP23 `postDeploymentCallData`.
#[wasm_bindgen(js_name = encodePostDeploymentCallData, unchecked_return_type = "Hex")]
pub fn encode_post_deployment_calldata(
    #[wasm_bindgen(unchecked_param_type = "Hex[]")] keys: &JsValue,
    #[wasm_bindgen(unchecked_param_type = "Hex[]")] values: &JsValue,
) -> JsResult<JsString> {
    let (keys, values) = keys_values(keys, values)?;
    Ok(hex_js(&lsp23::encode_post_deployment_calldata(&keys, &values)?))
}

fn keys_values_object(data: &lsp23::ProfileData) -> Obj {
    let o = object();
    o.put("keys", &hex_array(data.keys.iter().map(B256::as_slice)).into());
    o.put(
        "values",
        &hex_array(data.values.iter().map(|v| v.as_ref())).into(),
    );
    o
}

/// Decodes and validates `postDeploymentCallData` (canonical ABI, as many values as keys).
#[wasm_bindgen(js_name = decodePostDeploymentCallData, unchecked_return_type = "DataKeysValues")]
pub fn decode_post_deployment_calldata(
    #[wasm_bindgen(unchecked_param_type = "Hex")] calldata: &JsValue,
) -> JsResult<JsValue> {
    let data = lsp23::decode_post_deployment_calldata(&hex_arg("postDeploymentCallData", calldata)?)?;
    Ok(keys_values_object(&data).into())
}

/// The data a profile created from controller addresses gets (relayer deploy Form 1): LSP3Profile, the universal
/// receiver delegate and its permissions, each controller's permissions and `AddressPermissions[]`.
#[wasm_bindgen(js_name = profileDataFromControllers, unchecked_return_type = "ProfileData")]
pub fn profile_data_from_controllers(
    #[wasm_bindgen(unchecked_param_type = "Address[]")] controllers: &JsValue,
    #[wasm_bindgen(js_name = lsp3Profile)] lsp3_profile: Option<HexJs>,
    network: Option<NetworkInputJs>,
) -> JsResult<JsValue> {
    let controllers = array_arg("controllers", controllers)?
        .iter()
        .map(|c| address_arg("controllers", &c))
        .collect::<Result<Vec<_>, _>>()?;
    let lsp3 = match lsp3_profile.map(JsValue::from) {
        Some(v) if !(v.is_undefined() || v.is_null()) => Some(hex_arg("lsp3Profile", &v)?),
        _ => None,
    };
    let constants = network_constants(network.map(Into::into))?;
    let data = lsp23::profile_data_from_controllers(&controllers, lsp3.as_deref(), &constants)?;
    let o = keys_values_object(&data);
    o.put(
        "postDeploymentCallData",
        &hex_js(&data.to_post_deployment_calldata()?),
    );
    Ok(o.into())
}

const CUSTOM_NETWORK_KEYS: &[&str] = &[
    "factory",
    "universalProfileInit",
    "keyManagerInit",
    "postDeploymentModule",
    "universalReceiverDelegate",
];

/// The LSP23 constants of an optional `NetworkInput` argument (mainnet when absent).
pub(crate) fn network_constants(network: Option<JsValue>) -> JsResult<Lsp23Constants> {
    match network {
        Some(n) => network_of(&n),
        None => Ok(Network::Mainnet.constants()),
    }
}

/// `"mainnet"`, `"testnet"`, a chain id, custom constants, or absent (mainnet).
fn network_of(n: &JsValue) -> JsResult<Lsp23Constants> {
    if n.is_undefined() || n.is_null() {
        return Ok(Network::Mainnet.constants());
    }
    if let Some(name) = n.as_string() {
        return Ok(Network::parse(&name)?.constants());
    }
    if let Some(id) = n.as_f64() {
        if id.fract() == 0.0 && (0.0..1e15).contains(&id) {
            // exact: an integer below 2^53
            return Ok(Network::from_chain_id(id as u64)?.constants());
        }
        return Err(Error::UnknownNetwork(io::number_text(n)));
    }
    if !n.is_object() || Array::is_array(n) {
        return Err(Error::InvalidArgument(
            "network: expected \"mainnet\", \"testnet\", a chain id or { factory, universalProfileInit, \
             keyManagerInit, postDeploymentModule, universalReceiverDelegate? }"
                .into(),
        ));
    }
    reject_unknown_keys(n, CUSTOM_NETWORK_KEYS, "network")?;
    let o: &Obj = n.unchecked_ref();
    let address = |key: &'static str| -> JsResult<Option<Address>> {
        let v = o.field(key);
        if v.is_undefined() || v.is_null() {
            return Ok(None);
        }
        address_arg(&format!("network.{key}"), &v).map(Some)
    };
    let required = |key: &'static str| -> JsResult<Address> {
        address(key)?.ok_or_else(|| Error::InvalidArgument(format!("network: missing field `{key}`")))
    };
    Ok(Lsp23Constants {
        factory: required("factory")?,
        universal_profile_init: required("universalProfileInit")?,
        key_manager_init: required("keyManagerInit")?,
        post_deployment_module: required("postDeploymentModule")?,
        universal_receiver_delegate: address("universalReceiverDelegate")?
            .unwrap_or(Lsp23Constants::V0_14_0.universal_receiver_delegate),
    })
}

const DEPLOYMENT_KEYS: &[&str] = &["salt", "postDeploymentCallData", "network", "implementations"];

fn deployment_args(input: &JsValue) -> JsResult<(B256, Vec<u8>, Lsp23Constants)> {
    if !input.is_object() {
        return Err(Error::InvalidArgument(
            "expected an object {salt, postDeploymentCallData, network?}".into(),
        ));
    }
    // which fields are there, and no unknown one, in one call instead of ≈ 15 (3–4 % of a prediction)
    let fields = Fields::of(input, DEPLOYMENT_KEYS, "input")?;
    let read = |key: &'static str| fields.get(key);
    let required = |key: &'static str| -> JsResult<JsValue> {
        read(key).ok_or_else(|| Error::InvalidArgument(format!("input: missing field `{key}`")))
    };
    let salt = B256::from(fixed_arg::<32>("salt", &required("salt")?)?);
    let calldata = hex_arg("postDeploymentCallData", &required("postDeploymentCallData")?)?;
    let network = read("network");
    let constants = match &network {
        Some(n) => network_of(n)?,
        None => Network::Mainnet.constants(),
    };
    let Some(implementations) = read("implementations") else {
        return Ok((salt, calldata, constants));
    };
    let constants = match implementations.as_string().as_deref() {
        Some("v0.14.0") => constants,
        Some("v0.12.1") if network.as_ref().is_some_and(JsValue::is_object) => {
            return Err(Error::InvalidArgument(
                "implementations only applies to named networks; give the addresses in network".into(),
            ));
        }
        Some("v0.12.1") => Lsp23Constants::V0_12_1,
        _ => {
            return Err(Error::InvalidArgument(
                "input: implementations must be \"v0.14.0\" or \"v0.12.1\"".into(),
            ));
        }
    };
    Ok((salt, calldata, constants))
}

fn prediction_object(p: &lsp23::Prediction) -> JsValue {
    // one JS string for the three results, sliced into an object literal in JS: one crossing for the whole result
    let (up, km) = (
        p.universal_profile.to_checksum_buffer(None),
        p.key_manager.to_checksum_buffer(None),
    );
    let mut text = Vec::with_capacity(42 + 42 + 66);
    text.extend_from_slice(up.as_str().as_bytes());
    text.extend_from_slice(km.as_str().as_bytes());
    push_hex(&mut text, p.generated_salt.as_slice());
    io::predicted(&ascii(&text))
}

/// Predicts the Universal Profile and KeyManager addresses (EIP-55) an LSP23 deployment creates.
///
/// # Errors
/// The `ProfileRelayerError` the JS function throws.
#[wasm_bindgen(js_name = predictProfileAddress, unchecked_return_type = "PredictedAddresses")]
pub fn predict_profile_address(
    #[wasm_bindgen(unchecked_param_type = "DeploymentInput")] input: &JsValue,
) -> JsResult<JsValue> {
    let (salt, calldata, constants) = deployment_args(input)?;
    Ok(prediction_object(&lsp23::predict_addresses(
        salt, &calldata, &constants,
    )?))
}

/// `predictProfileAddress` for many deployments in one call (e.g. candidate salts). Throws for the first
/// invalid entry, naming its index.
#[wasm_bindgen(js_name = predictProfileAddresses, unchecked_return_type = "PredictedAddresses[]")]
pub fn predict_profile_addresses(
    #[wasm_bindgen(unchecked_param_type = "DeploymentInput[]")] inputs: &JsValue,
) -> Result<Array, JsValue> {
    let list = array_arg("inputs", inputs)?;
    let out = Array::new_with_length(list.length());
    for (i, input) in list.iter().enumerate() {
        let p = deployment_args(&input)
            .and_then(|(salt, calldata, constants)| lsp23::predict_addresses(salt, &calldata, &constants))
            .map_err(|e| at_index("inputs", i, e))?;
        out.set(i as u32, prediction_object(&p));
    }
    Ok(out)
}

/// The `deployERC1167Proxies(…)` calldata for the LSP23 factory (what a relayer sends).
#[wasm_bindgen(js_name = encodeDeployCalldata, unchecked_return_type = "Hex")]
pub fn encode_deploy_calldata(
    #[wasm_bindgen(unchecked_param_type = "DeploymentInput")] input: &JsValue,
) -> JsResult<JsString> {
    let (salt, calldata, constants) = deployment_args(input)?;
    Ok(hex_js(&lsp23::deploy_erc1167_proxies_calldata(
        salt, &calldata, &constants,
    )?))
}

/// A random 32-byte salt (`crypto.getRandomValues`).
#[wasm_bindgen(js_name = generateSalt, unchecked_return_type = "Hex")]
pub fn generate_salt() -> JsResult<JsString> {
    Ok(hex_js(lsp23::generate_salt()?.as_slice()))
}
