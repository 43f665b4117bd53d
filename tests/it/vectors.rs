//! Every case of `tests/fixtures/vectors/*.json` (erc725.js / viem reference output), run against the native API.
//! The same files are run against the npm package by `tests/npm/vectors.test.mjs`.

use alloy_primitives::{B256, Bytes};
use profile_relayer::{
    Error,
    hex::{parse_fixed, parse_hex, to_hex},
    lsp2::{
        Content, decode_verifiable_uri, encode_array_element_key, encode_key_name, encode_verifiable_uri,
    },
    lsp23::{decode_post_deployment_calldata, encode_post_deployment_calldata, predict_addresses},
    networks::Network,
};
use serde_json::{Value, json};

fn load(name: &str) -> Value {
    let text = match name {
        "verifiable-uri" => include_str!("../fixtures/vectors/verifiable-uri.json"),
        "data-keys" => include_str!("../fixtures/vectors/data-keys.json"),
        "post-deployment-calldata" => include_str!("../fixtures/vectors/post-deployment-calldata.json"),
        "lsp23-address" => include_str!("../fixtures/vectors/lsp23-address.json"),
        "invalid-inputs" => include_str!("../fixtures/vectors/invalid-inputs.json"),
        _ => unreachable!(),
    };
    serde_json::from_str(text).unwrap()
}

fn cases(file: &Value) -> &Vec<Value> {
    file["cases"].as_array().unwrap()
}

fn s(v: &Value) -> &str {
    v.as_str().unwrap_or_else(|| panic!("expected a string, got {v}"))
}

fn decode_json(hex: &str) -> Result<Value, Error> {
    let d = decode_verifiable_uri(&parse_hex("value", hex)?)?;
    Ok(json!({ "method": to_hex(d.method), "hash": to_hex(&d.data), "url": d.url }))
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array().unwrap().iter().map(|x| s(x).to_owned()).collect()
}

fn keys_values(keys: &[String], values: &[String]) -> Result<String, Error> {
    let keys = keys
        .iter()
        .map(|k| parse_fixed::<32>("keys", k))
        .collect::<Result<Vec<B256>, _>>()?;
    let values = values
        .iter()
        .map(|v| parse_hex("values", v).map(Bytes::from))
        .collect::<Result<Vec<Bytes>, _>>()?;
    Ok(to_hex(encode_post_deployment_calldata(&keys, &values)?))
}

fn predict(input: &Value) -> Result<Value, Error> {
    let salt = parse_fixed::<32>("salt", s(&input["salt"]))?;
    let calldata = parse_hex("postDeploymentCallData", s(&input["postDeploymentCallData"]))?;
    let network = Network::parse(s(&input["network"]))?;
    let p = predict_addresses(salt, &calldata, &network.constants())?;
    Ok(json!({
        "universalProfile": p.universal_profile.to_checksum(None),
        "keyManager": p.key_manager.to_checksum(None),
        "generatedSalt": p.generated_salt.to_string(),
    }))
}

#[test]
fn verifiable_uri() {
    let file = load("verifiable-uri");
    let mut n = 0;
    for case in cases(&file) {
        let id = s(&case["id"]);
        match s(&case["function"]) {
            "encodeVerifiableUri" => {
                let input = &case["input"];
                let url = s(&input["url"]);
                let encoded = if let Some(text) = input.get("content") {
                    encode_verifiable_uri(Content::Text(s(text)), url)
                } else {
                    let bytes = parse_hex("content", s(&input["contentHex"])).unwrap();
                    encode_verifiable_uri(Content::Bytes(&bytes), url)
                };
                assert_eq!(to_hex(&encoded), s(&case["expected"]).to_lowercase(), "{id}");
                assert_eq!(
                    decode_json(&to_hex(&encoded)).unwrap(),
                    case["decoded"],
                    "{id} decoded"
                );
            }
            "decodeVerifiableUri" => {
                assert_eq!(decode_json(s(&case["input"])).unwrap(), case["expected"], "{id}");
            }
            other => panic!("{id}: unexpected function {other}"),
        }
        n += 1;
    }
    assert_eq!(n, 25);
}

#[test]
fn data_keys() {
    let file = load("data-keys");
    for case in cases(&file) {
        let id = s(&case["id"]);
        let input = &case["input"];
        let key = match s(&case["function"]) {
            "encodeKeyName" => {
                let parts = input.get("dynamicKeyParts").map(strings).unwrap_or_default();
                encode_key_name(s(&input["name"]), &parts).unwrap()
            }
            "encodeArrayElementKey" => {
                encode_array_element_key(s(&input["name"]), u128::from(input["index"].as_u64().unwrap()))
                    .unwrap()
            }
            other => panic!("{id}: unexpected function {other}"),
        };
        assert_eq!(key.to_string(), s(&case["expected"]).to_lowercase(), "{id}");
    }
    // the "notPinned" 2^64 index, which a JS number cannot carry
    let key = encode_array_element_key("AddressPermissions[]", 1 << 64).unwrap();
    assert_eq!(
        key.to_string(),
        "0xdf30dba06db6a30e65354d9a64c6098600000000000000010000000000000000"
    );
}

#[test]
fn post_deployment_calldata() {
    let file = load("post-deployment-calldata");
    for case in cases(&file) {
        let id = s(&case["id"]);
        let keys = strings(&case["input"]["keys"]);
        let values = strings(&case["input"]["values"]);
        let encoded = keys_values(&keys, &values).unwrap();
        assert_eq!(encoded, s(&case["expected"]).to_lowercase(), "{id}");
        assert_eq!(
            alloy_primitives::keccak256(parse_hex("x", &encoded).unwrap()).to_string(),
            s(&case["keccak256"])
        );
        let decoded = decode_post_deployment_calldata(&parse_hex("x", &encoded).unwrap()).unwrap();
        let dk: Vec<String> = decoded.keys.iter().map(ToString::to_string).collect();
        let dv: Vec<String> = decoded.values.iter().map(to_hex).collect();
        assert_eq!(
            dk,
            keys.iter().map(|k| k.to_lowercase()).collect::<Vec<_>>(),
            "{id} keys"
        );
        assert_eq!(
            dv,
            values.iter().map(|v| v.to_lowercase()).collect::<Vec<_>>(),
            "{id} values"
        );
    }
}

#[test]
fn lsp23_address() {
    let file = load("lsp23-address");
    for case in cases(&file) {
        let id = s(&case["id"]);
        let got = predict(&case["input"]).unwrap();
        assert_eq!(
            got["universalProfile"], case["expected"]["universalProfile"],
            "{id}"
        );
        assert_eq!(got["keyManager"], case["expected"]["keyManager"], "{id}");
        if let Some(gs) = case["intermediate"].get("generatedSalt") {
            assert_eq!(&got["generatedSalt"], gs, "{id} generatedSalt");
        }
    }
}

/// The native counterpart of each JS call; `None` for arguments only JS can express (e.g. a number as content).
fn call(function: &str, args: &[Value]) -> Option<Result<Value, Error>> {
    Some(match function {
        "decodeVerifiableUri" => decode_json(args[0].as_str()?),
        "encodeVerifiableUri" => Ok(json!(to_hex(encode_verifiable_uri(
            Content::Text(args[0].as_str()?),
            s(&args[1])
        )))),
        "predictProfileAddress" => predict(&args[0]),
        "decodePostDeploymentCallData" => parse_hex("calldata", s(&args[0]))
            .and_then(|b| decode_post_deployment_calldata(&b))
            .map(|d| json!(d.keys.len())),
        "encodePostDeploymentCallData" => {
            keys_values(&strings(&args[0]), &strings(&args[1])).map(Value::from)
        }
        "encodeKeyName" => {
            let parts = args.get(1).map(strings).unwrap_or_default();
            encode_key_name(s(&args[0]), &parts).map(|k| json!(k.to_string()))
        }
        "encodeArrayElementKey" => {
            let index = args[1].as_u64()?;
            encode_array_element_key(s(&args[0]), u128::from(index)).map(|k| json!(k.to_string()))
        }
        other => panic!("unexpected function {other}"),
    })
}

#[test]
fn invalid_inputs_are_rejected() {
    let file = load("invalid-inputs");
    let mut native = 0;
    for case in cases(&file) {
        let id = s(&case["id"]);
        let args = case["args"].as_array().unwrap();
        match call(s(&case["function"]), args) {
            Some(Ok(v)) => panic!("{id} ({}) was accepted: {v}", s(&case["reason"])),
            Some(Err(e)) => {
                assert!(!e.code().is_empty() && !e.to_string().is_empty(), "{id}");
                native += 1;
            }
            None => {} // JS-only argument types: covered by the npm tests
        }
    }
    assert!(native >= 40, "only {native} cases ran natively");
}
