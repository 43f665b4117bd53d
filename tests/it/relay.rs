//! LSP25 relay calls and LSP15 quota messages against `tests/fixtures/vectors/lsp25-lsp15.json` (ethers 6
//! signatures from the reference documents): digests, encoded messages and calldata byte for byte, and the
//! signer recovered from each signature. `tests/npm/lsp25.test.mjs` re-signs the same cases with viem.

use alloy_primitives::{Address, Bytes, U256};
use profile_relayer::{
    api::{ExecuteRequest, QuotaRequest},
    hex::{parse_address, parse_hex, parse_uint256, to_hex},
    lsp15::{QuotaScheme, quota_message, quota_signing_hash, recover_quota_signer},
    lsp25::{
        Nonce, RelayCall, ValidityTimestamps, decode_execute_relay_call, execute_relay_call_batch_calldata,
        parse_signature,
    },
};
use serde_json::{Value, json};

fn file() -> Value {
    serde_json::from_str(include_str!("../fixtures/vectors/lsp25-lsp15.json")).unwrap()
}

fn s(v: &Value) -> &str {
    v.as_str().unwrap_or_else(|| panic!("expected a string, got {v}"))
}

fn relay_call(c: &Value) -> RelayCall {
    RelayCall {
        nonce: parse_uint256("nonce", s(&c["nonce"])).unwrap(),
        validity_timestamps: ValidityTimestamps(
            parse_uint256("validityTimestamps", s(&c["validityTimestamps"])).unwrap(),
        ),
        value: parse_uint256("value", s(&c["value"])).unwrap(),
        payload: Bytes::from(parse_hex("payload", s(&c["payload"])).unwrap()),
    }
}

#[test]
fn relay_call_vectors() {
    let file = file();
    let cases = file["relayCalls"].as_array().unwrap();
    assert_eq!(cases.len(), 4);
    for c in cases {
        let id = s(&c["id"]);
        let km = parse_address("keyManager", s(&c["keyManager"])).unwrap();
        let chain_id = c["chainId"].as_u64().unwrap();
        let call = relay_call(c);
        if let Some(msg) = c.get("encodedMessage") {
            assert_eq!(
                to_hex(call.encoded_message(chain_id)),
                s(msg),
                "{id} encodedMessage"
            );
        }
        assert_eq!(
            call.digest(km, chain_id).to_string(),
            s(&c["digest"]),
            "{id} digest"
        );
        let sig = parse_signature("signature", &parse_hex("signature", s(&c["signature"])).unwrap()).unwrap();
        let signer: Address = s(&c["signer"]).parse().unwrap();
        assert_eq!(
            call.recover_signer(km, chain_id, &sig).unwrap(),
            signer,
            "{id} signer"
        );
        // the same signature for another chain or KeyManager recovers someone else
        assert_ne!(
            call.recover_signer(km, chain_id + 1, &sig).unwrap(),
            signer,
            "{id}"
        );
        assert_ne!(
            call.recover_signer(Address::ZERO, chain_id, &sig).unwrap(),
            signer,
            "{id}"
        );
        if let Some(calldata) = c.get("calldata") {
            // executeRelayCall carries no value: it is the transaction's msg.value
            let data = call.execute_relay_call_calldata(&sig);
            assert_eq!(to_hex(&data), s(calldata), "{id} calldata");
            let (sig2, decoded) = decode_execute_relay_call(&data).unwrap();
            assert_eq!(sig2, sig);
            assert_eq!(
                decoded,
                RelayCall {
                    value: U256::ZERO,
                    ..call.clone()
                }
            );
        }
    }
}

#[test]
fn r2_nonce_and_validity_halves() {
    let file = file();
    let r2 = relay_call(&file["relayCalls"][1]);
    let nonce = Nonce(r2.nonce);
    assert_eq!((nonce.channel(), nonce.id()), (5, 1));
    assert_eq!(Nonce::new(5, 1), nonce);
    assert_eq!(
        r2.validity_timestamps,
        ValidityTimestamps::new(1_700_000_000, 1_800_000_000)
    );
    assert!(!r2.validity_timestamps.admits(1_699_999_999));
    assert!(r2.validity_timestamps.admits(1_750_000_000));
    assert!(!r2.validity_timestamps.admits(1_800_000_001));
}

#[test]
fn execute_request_from_the_lsp15_body_gives_the_vector_calldata() {
    let file = file();
    let r1 = &file["relayCalls"][0];
    // the body as the LUKSO docs send it: nonce as a number, validityTimestamps "0x0"
    let body = json!({
        "address": "0xBB645D97B0c7D101ca0d73131e521fe89B463BFD",
        "transaction": { "abi": r1["payload"], "signature": r1["signature"], "nonce": 0, "validityTimestamps": "0x0" },
    });
    let req = ExecuteRequest::from_json(&body.to_string(), 1024).unwrap();
    assert_eq!(to_hex(req.calldata()), s(&r1["calldata"]));
    let km = parse_address("km", s(&r1["keyManager"])).unwrap();
    assert_eq!(
        req.recover_signer(km, 42).unwrap(),
        s(&r1["signer"]).parse::<Address>().unwrap()
    );
    // v = 0/1 is accepted and normalised to 27/28 in the calldata
    let mut sig01 = s(&r1["signature"]).to_owned();
    sig01.replace_range(sig01.len() - 2.., "01");
    let body = json!({
        "address": "0xbb645d97b0c7d101ca0d73131e521fe89b463bfd",
        "transaction": { "abi": r1["payload"], "signature": sig01, "nonce": "0" },
    });
    assert_eq!(
        to_hex(
            ExecuteRequest::from_json(&body.to_string(), 1024)
                .unwrap()
                .calldata()
        ),
        s(&r1["calldata"])
    );

    // a batch of R1 and R2 (R2 carries 1 LYX of value)
    let r2 = &file["relayCalls"][1];
    let sig = |c: &Value| parse_signature("s", &parse_hex("s", s(&c["signature"])).unwrap()).unwrap();
    let batch = execute_relay_call_batch_calldata(&[(sig(r1), relay_call(r1)), (sig(r2), relay_call(r2))]);
    assert_eq!(to_hex(&batch[..4]), "0xa20856a5");
}

#[test]
fn quota_vectors() {
    let file = file();
    let cases = file["quota"].as_array().unwrap();
    assert_eq!(cases.len(), 4);
    for c in cases {
        let id = s(&c["id"]);
        let scheme = QuotaScheme::parse(s(&c["scheme"])).unwrap();
        let given = s(&c["address"]);
        let up = parse_address("address", given).unwrap();
        let ts = c["timestamp"].as_u64().unwrap();
        let message = quota_message(scheme, up, given, ts);
        let expected_message = match scheme {
            QuotaScheme::Packed => to_hex(&message),
            QuotaScheme::Text => String::from_utf8(message).unwrap(),
        };
        assert_eq!(expected_message, s(&c["message"]), "{id} message");
        if let Some(hash) = c.get("hash") {
            assert_eq!(
                quota_signing_hash(scheme, up, given, ts).to_string(),
                s(hash),
                "{id} hash"
            );
        }
        let sig = parse_signature("signature", &parse_hex("signature", s(&c["signature"])).unwrap()).unwrap();
        let signer: Address = s(&c["signer"]).parse().unwrap();
        assert_eq!(
            recover_quota_signer(scheme, up, given, ts, &sig).unwrap(),
            signer,
            "{id}"
        );
        assert_ne!(
            recover_quota_signer(scheme, up, given, ts + 1, &sig).unwrap(),
            signer,
            "{id}"
        );

        // the same through the request body: exactly one candidate is the signer, under the vector's scheme
        let body = json!({ "address": given, "timestamp": ts, "signature": c["signature"] });
        let req = QuotaRequest::from_json(&body.to_string()).unwrap();
        let hits: Vec<_> = req
            .signer_candidates()
            .unwrap()
            .into_iter()
            .filter(|(_, a)| *a == signer)
            .collect();
        assert_eq!(hits, vec![(scheme, signer)], "{id}");
    }
    // the text scheme signs the address as given: the lower-case spelling is another message
    let qb = &cases[1];
    let given = s(&qb["address"]).to_lowercase();
    let sig = parse_signature("s", &parse_hex("s", s(&qb["signature"])).unwrap()).unwrap();
    let up = parse_address("a", &given).unwrap();
    assert_ne!(
        recover_quota_signer(QuotaScheme::Text, up, &given, 1_656_408_193, &sig).unwrap(),
        s(&qb["signer"]).parse::<Address>().unwrap()
    );
}
