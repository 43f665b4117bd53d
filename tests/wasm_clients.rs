//! The typed clients compiled to wasm, in headless Chromium, against the real Worker and chain started by
//! `scripts/with-stack.mjs` (their coordinates arrive at build time in `PROFILE_RELAYER_E2E`). Signatures are the
//! viem-made reference vectors (`tests/fixtures/vectors/lsp25-lsp15.json`); signing flows run in `tests/e2e/relay-client`.
#![cfg(all(target_arch = "wasm32", feature = "wasm"))]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    missing_docs
)]

use js_sys::{Promise, Reflect, Uint8Array};
use profile_relayer::wasm::{LookupClient, RelayerClient, decode_verifiable_uri, predict_profile_address};
use serde_json::{Value, json};
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

fn e2e() -> Value {
    // a missing stack is a failure, not a skip: run through scripts/with-stack.mjs
    let Some(text) = option_env!("PROFILE_RELAYER_E2E") else {
        panic!("PROFILE_RELAYER_E2E is not set: run through `node scripts/with-stack.mjs cargo test …`")
    };
    serde_json::from_str(text).unwrap()
}

fn js(v: &Value) -> JsValue {
    use serde::Serialize;
    v.serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .unwrap()
}

fn get(obj: &JsValue, key: &str) -> JsValue {
    Reflect::get(obj, &JsValue::from_str(key)).unwrap()
}

async fn wait(p: Promise) -> Result<JsValue, JsValue> {
    JsFuture::from(p).await
}

#[wasm_bindgen_test]
async fn create_profile_then_look_it_up_from_a_browser() {
    let cfg = e2e();
    let options = json!({ "baseUrl": cfg["workerUrl"], "apiKey": cfg["apiKey"] });
    let relayer = RelayerClient::new(js(&options)).unwrap();
    let lookup = LookupClient::new(js(&options)).unwrap();
    let input = json!({
        "metadata": { "LSP3Profile": { "name": "Browser Made", "description": "from Chromium", "links": [], "tags": [] } },
        "controllers": ["0x70997970C51812dc3A010C7d01b50e0d17dc79C8"],
    });
    let created = wait(relayer.create_profile(js(&input), JsValue::UNDEFINED))
        .await
        .unwrap();
    let up = get(&created, "universalProfileAddress").as_string().unwrap();
    let predicted = predict_profile_address(&js(&json!({
        "salt": get(&created, "salt").as_string(),
        "postDeploymentCallData": get(&created, "postDeploymentCallData").as_string(),
    })))
    .unwrap();
    assert_eq!(get(&predicted, "universalProfile").as_string().unwrap(), up);
    let uri = decode_verifiable_uri(&get(&created, "lsp3Profile")).unwrap();
    let cid = get(&created, "metadataCid").as_string().unwrap();
    assert_eq!(get(&uri, "url").as_string().unwrap(), format!("ipfs://{cid}"));

    let bytes: Uint8Array = wait(lookup.ipfs(cid.into(), JsValue::UNDEFINED))
        .await
        .unwrap()
        .into();
    assert!(
        String::from_utf8(bytes.to_vec())
            .unwrap()
            .contains("Browser Made")
    );
    let record = wait(lookup.address(31337.into(), up.clone().into(), JsValue::UNDEFINED))
        .await
        .unwrap();
    assert_eq!(get(&record, "name").as_string().unwrap(), "Browser Made");
    assert_eq!(get(&record, "metadataStatus").as_string().unwrap(), "verified");
    let status = wait(relayer.profile_status(up.into(), JsValue::UNDEFINED))
        .await
        .unwrap();
    assert_eq!(get(&status, "deployed").as_bool(), Some(true));
}

#[wasm_bindgen_test]
async fn service_errors_reach_the_browser_with_code_and_status() {
    let cfg = e2e();
    let relayer = RelayerClient::new(js(
        &json!({ "baseUrl": cfg["workerUrl"], "apiKey": format!("prk_{}", "0".repeat(64)) }),
    ))
    .unwrap();
    let err = wait(relayer.deploy_profile(
        js(&json!({ "lsp6ControllerAddress": ["0x70997970C51812dc3A010C7d01b50e0d17dc79C8"] })),
        JsValue::UNDEFINED,
    ))
    .await
    .unwrap_err();
    assert_eq!(get(&err, "code").as_string().unwrap(), "INVALID_API_KEY");
    assert_eq!(get(&err, "status").as_f64(), Some(401.0));
    let offline = LookupClient::new(js(&json!({ "baseUrl": "http://127.0.0.1:9" }))).unwrap();
    let err = wait(offline.stats(31337.into(), JsValue::UNDEFINED))
        .await
        .unwrap_err();
    assert_eq!(get(&err, "code").as_string().unwrap(), "NETWORK_ERROR");
}

fn vector(kind: &str) -> Value {
    let all: Value = serde_json::from_str(include_str!("fixtures/vectors/lsp25-lsp15.json")).unwrap();
    all[kind][0].clone()
}

#[wasm_bindgen_test]
async fn relay_clients_from_a_browser_digest_chain_reads_and_refusals() {
    use profile_relayer::wasm::fetch_relay_call_params;
    use std::{cell::RefCell, rc::Rc};
    use wasm_bindgen::{JsCast, closure::Closure};

    let cfg = e2e();
    // no API key: the LSP15 routes take none
    let relayer = RelayerClient::new(js(&json!({ "baseUrl": cfg["workerUrl"] }))).unwrap();

    // the sign callback receives the LSP25 digest of the reference vector (made with viem) and its signature is sent;
    // the profile is not registered here, so the service refuses it (after the body passed its checks)
    let call = vector("relayCalls");
    let seen = Rc::new(RefCell::new(Vec::<String>::new()));
    let (seen_in, signature) = (seen.clone(), call["signature"].as_str().unwrap().to_owned());
    let sign = Closure::<dyn Fn(String) -> JsValue>::new(move |digest: String| {
        seen_in.borrow_mut().push(digest);
        JsValue::from_str(&signature)
    });
    let input = js(&json!({
        "address": "0xBB645D97B0c7D101ca0d73131e521fe89B463BFD",
        "keyManager": call["keyManager"], "chainId": call["chainId"], "nonce": call["nonce"],
        "payload": call["payload"],
    }));
    Reflect::set(&input, &"sign".into(), sign.as_ref().unchecked_ref()).unwrap();
    let err = wait(relayer.execute(input, JsValue::UNDEFINED))
        .await
        .unwrap_err();
    assert_eq!(seen.borrow().as_slice(), [call["digest"].as_str().unwrap()]);
    assert_eq!(get(&err, "code").as_string().unwrap(), "PROFILE_NOT_REGISTERED");
    assert_eq!(get(&err, "status").as_f64(), Some(404.0));

    // a viem quota signature of 2022: outside the service's window
    let q = vector("quota");
    let err = wait(relayer.quota(
        js(&json!({
            "address": q["address"], "timestamp": q["timestamp"], "signature": q["signature"], "scheme": q["scheme"],
        })),
        JsValue::UNDEFINED,
    ))
    .await
    .unwrap_err();
    assert_eq!(get(&err, "code").as_string().unwrap(), "TIMESTAMP_OUT_OF_WINDOW");
    assert_eq!(get(&err, "status").as_f64(), Some(401.0));

    let err = wait(relayer.transaction(format!("0x{}", "ab".repeat(32)).into(), JsValue::UNDEFINED))
        .await
        .unwrap_err();
    assert_eq!(get(&err, "code").as_string().unwrap(), "TRANSACTION_NOT_FOUND");

    // chain reads for a fresh profile: its KeyManager, the chain id and nonce 0 of its controller
    let keyed = RelayerClient::new(js(
        &json!({ "baseUrl": cfg["workerUrl"], "apiKey": cfg["apiKey"] }),
    ))
    .unwrap();
    let controller = q["signer"].as_str().unwrap();
    let deployed = wait(keyed.deploy_profile(
        js(&json!({ "lsp6ControllerAddress": [controller] })),
        JsValue::UNDEFINED,
    ))
    .await
    .unwrap();
    let params = wait(fetch_relay_call_params(js(&json!({
        "rpcUrl": cfg["rpcUrl"], "address": get(&deployed, "universalProfileAddress").as_string(), "controller": controller,
    }))))
    .await
    .unwrap();
    assert_eq!(
        get(&params, "keyManager").as_string(),
        get(&deployed, "keyManagerAddress").as_string()
    );
    assert_eq!(get(&params, "chainId").as_f64(), cfg["chainId"].as_f64());
    assert_eq!(get(&params, "nonce").as_string().unwrap(), "0");
}
