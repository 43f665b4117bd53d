//! Checks of the JS-facing API, shared by the Node and the headless Chromium suites.

use js_sys::{Array, Reflect, Uint8Array};
use profile_relayer::wasm::*;
use serde_json::Value;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::wasm_bindgen_test;

fn vectors(text: &str) -> Vec<Value> {
    let file: Value = serde_json::from_str(text).unwrap();
    file["cases"].as_array().unwrap().clone()
}

fn js(v: &Value) -> JsValue {
    use serde::Serialize;
    v.serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .unwrap()
}

fn get(obj: &JsValue, key: &str) -> String {
    Reflect::get(obj, &JsValue::from_str(key))
        .unwrap()
        .as_string()
        .unwrap()
}

/// Calls an export that throws from inside the wasm (`encodeTokenId`, `encodePermissions`,
/// `encodeArrayElementKey`: they return their value, not a `Result`) the way JS does, the thrown error as `Err`: a
/// one-shot closure called through `Function.prototype.call`, whose exception js-sys catches (the closure's frames
/// are left behind by the throw: one closure per call, and only a few calls in these tests).
fn catching(f: impl FnOnce() -> js_sys::JsString + 'static) -> Result<js_sys::JsString, JsValue> {
    let f = wasm_bindgen::closure::Closure::once_into_js(f);
    f.unchecked_ref::<js_sys::Function>()
        .call0(&JsValue::UNDEFINED)
        .map(JsCast::unchecked_into)
}

fn code(err: JsValue) -> String {
    assert!(err.is_instance_of::<js_sys::Error>(), "not an Error: {err:?}");
    assert!(is_profile_relayer_error(&err));
    assert_eq!(err.unchecked_ref::<js_sys::Error>().name(), "ProfileRelayerError");
    get(&err, "code")
}

#[wasm_bindgen_test]
fn verifiable_uri_vectors() {
    for case in vectors(include_str!("../fixtures/vectors/verifiable-uri.json")) {
        let id = case["id"].as_str().unwrap();
        let input = &case["input"];
        match case["function"].as_str().unwrap() {
            "encodeVerifiableUri" => {
                let content = match input.get("content") {
                    Some(text) => js(text),
                    None => {
                        let hex = input["contentHex"].as_str().unwrap();
                        Uint8Array::from(profile_relayer::hex::parse_hex("x", hex).unwrap().as_slice()).into()
                    }
                };
                let value: JsValue = encode_verifiable_uri(&content, &js(&input["url"]))
                    .unwrap()
                    .into();
                assert_eq!(
                    value.as_string().unwrap(),
                    case["expected"].as_str().unwrap().to_lowercase(),
                    "{id}"
                );
                assert!(verify_verifiable_uri(&value, &content).unwrap(), "{id} verifies");
                let decoded = decode_verifiable_uri(&value).unwrap();
                assert_eq!(
                    get(&decoded, "url"),
                    case["decoded"]["url"].as_str().unwrap(),
                    "{id}"
                );
                assert_eq!(
                    get(&decoded, "hash"),
                    case["decoded"]["hash"].as_str().unwrap(),
                    "{id}"
                );
            }
            _ => {
                let decoded = decode_verifiable_uri(&js(input)).unwrap();
                for field in ["method", "hash", "url"] {
                    assert_eq!(
                        get(&decoded, field),
                        case["expected"][field].as_str().unwrap(),
                        "{id} {field}"
                    );
                }
            }
        }
    }
}

#[wasm_bindgen_test]
fn data_key_vectors() {
    for case in vectors(include_str!("../fixtures/vectors/data-keys.json")) {
        let input = &case["input"];
        let name = input["name"].as_str().unwrap();
        let name = JsValue::from_str(name);
        let key = if case["function"] == "encodeKeyName" {
            let parts = input.get("dynamicKeyParts").map(|p| js(p).unchecked_into());
            encode_key_name(&name, parts).unwrap()
        } else {
            let index = js(&input["index"]);
            catching(move || encode_array_element_key(name, index)).unwrap()
        };
        assert_eq!(
            String::from(key),
            case["expected"].as_str().unwrap().to_lowercase(),
            "{}",
            case["id"]
        );
    }
    let big = js_sys::BigInt::from(1u128 << 64);
    assert_eq!(
        String::from(
            catching(move || encode_array_element_key("AddressPermissions[]".into(), big.into())).unwrap()
        ),
        "0xdf30dba06db6a30e65354d9a64c6098600000000000000010000000000000000"
    );
}

#[wasm_bindgen_test]
fn prediction_vectors() {
    for case in vectors(include_str!("../fixtures/vectors/lsp23-address.json")) {
        let p = predict_profile_address(&js(&case["input"])).unwrap();
        assert_eq!(
            get(&p, "universalProfile"),
            case["expected"]["universalProfile"].as_str().unwrap()
        );
        assert_eq!(
            get(&p, "keyManager"),
            case["expected"]["keyManager"].as_str().unwrap()
        );
    }
}

#[wasm_bindgen_test]
fn calldata_vectors() {
    for case in vectors(include_str!("../fixtures/vectors/post-deployment-calldata.json")) {
        let keys = js(&case["input"]["keys"]);
        let hex: JsValue = encode_post_deployment_calldata(&keys, &js(&case["input"]["values"]))
            .unwrap()
            .into();
        assert_eq!(hex.as_string().unwrap(), case["expected"].as_str().unwrap());
        let decoded = decode_post_deployment_calldata(&hex).unwrap();
        let got = Array::from(&Reflect::get(&decoded, &JsValue::from_str("keys")).unwrap());
        assert_eq!(got.length(), Array::from(&keys).length());
    }
}

#[wasm_bindgen_test]
fn invalid_inputs_throw_coded_errors() {
    for case in vectors(include_str!("../fixtures/vectors/invalid-inputs.json")) {
        let id = case["id"].as_str().unwrap();
        let args: Vec<JsValue> = case["args"].as_array().unwrap().iter().map(js).collect();
        let result: Result<JsValue, JsValue> = match case["function"].as_str().unwrap() {
            "decodeVerifiableUri" => decode_verifiable_uri(&args[0]).map_err(Into::into),
            "encodeVerifiableUri" => encode_verifiable_uri(&args[0], &args[1])
                .map(Into::into)
                .map_err(Into::into),
            "predictProfileAddress" => predict_profile_address(&args[0]).map_err(Into::into),
            "decodePostDeploymentCallData" => decode_post_deployment_calldata(&args[0]).map_err(Into::into),
            "encodePostDeploymentCallData" => encode_post_deployment_calldata(&args[0], &args[1])
                .map(Into::into)
                .map_err(Into::into),
            "encodeKeyName" => encode_key_name(&args[0], args.get(1).cloned().map(JsCast::unchecked_into))
                .map(Into::into)
                .map_err(Into::into),
            "encodeArrayElementKey" => {
                let (name, index) = (args[0].clone(), args[1].clone());
                catching(move || encode_array_element_key(name, index)).map(Into::into)
            }
            other => panic!("{other}"),
        };
        let err = result.expect_err(id);
        let thrown = code(err);
        assert!(
            error_codes().contains(&thrown),
            "{id}: {thrown} is not in errorCodes()"
        );
    }
}

#[wasm_bindgen_test]
fn errors_and_salts() {
    let err: JsValue = encode_verifiable_uri(&JsValue::from_f64(42.0), &"ipfs://x".into())
        .unwrap_err()
        .into();
    assert_eq!(code(err), "INVALID_CONTENT");
    let err: JsValue = predict_profile_address(&JsValue::from_str("nope"))
        .unwrap_err()
        .into();
    assert_eq!(code(err), "INVALID_ARGUMENT");
    assert!(!is_profile_relayer_error(&js_sys::Error::new("other").into()));
    let (a, b) = (
        String::from(generate_salt().unwrap()),
        String::from(generate_salt().unwrap()),
    );
    assert_eq!(a.len(), 66);
    assert_ne!(a, b);
}
