//! LSP3 / LSP4 metadata documents: the spec examples parse, keep unknown fields and hash as uploaded.

use profile_relayer::{
    hex::to_hex,
    lsp2::{Content, encode_verifiable_uri},
    lsp3::{Image, Lsp3ProfileJson},
    lsp4::{AttributeValue, Lsp4MetadataJson},
};
use serde_json::Value;

fn vector(id: &str) -> String {
    let file: Value = serde_json::from_str(include_str!("../fixtures/vectors/verifiable-uri.json")).unwrap();
    let case = file["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id)
        .unwrap();
    case["input"]["content"].as_str().unwrap().to_owned()
}

#[test]
fn lsp3_spec_example() {
    let text = vector("J1");
    let doc = Lsp3ProfileJson::from_slice(text.as_bytes()).unwrap();
    assert_eq!(doc.profile.name.as_deref(), Some("frozeman"));
    let images = doc.profile.profile_image.as_ref().unwrap();
    assert_eq!(images.len(), 2);
    assert!(matches!(&images[0], Image::File(f) if f.width == Some(1800)));
    assert!(matches!(&images[1], Image::Nft(n) if n.token_id.is_some()));
    // serialising the parsed document gives the same JSON value back
    let back: Value = serde_json::to_value(&doc).unwrap();
    assert_eq!(back, serde_json::from_str::<Value>(&text).unwrap());
    // and the VerifiableURI hashes the uploaded bytes
    assert_eq!(
        to_hex(encode_verifiable_uri(Content::Text(&text), "ipfs://QmTestCid")),
        "0x00006f357c6a0020761675e063a95c4ea92ed0a77d6a3c2ba3661bc78e39521c558453f56eb7b467697066733a2f2f516d54657374436964"
    );
}

#[test]
fn lsp4_spec_example_with_attributes() {
    let text = vector("J2");
    let doc = Lsp4MetadataJson::from_slice(text.as_bytes()).unwrap();
    let attrs = doc.metadata.attributes.as_ref().unwrap();
    assert!(matches!(attrs[2].value, AttributeValue::Bool(true)));
    assert!(matches!(attrs[0].value, AttributeValue::String(ref s) if s == "LSP"));
    assert!(matches!(attrs[3].value, AttributeValue::Number(ref n) if n.as_f64() == Some(1.5)));
    assert_eq!(doc.metadata.images.as_ref().unwrap()[0].len(), 1);
    let back: Value = serde_json::to_value(&doc).unwrap();
    assert_eq!(back, serde_json::from_str::<Value>(&text).unwrap());
}

#[test]
fn unknown_fields_survive() {
    let text = r#"{"LSP3Profile":{"name":"a","x-custom":{"n":1},"links":[{"title":"t","url":"u","rel":"me"}]},"version":2}"#;
    let doc = Lsp3ProfileJson::from_slice(text.as_bytes()).unwrap();
    assert_eq!(doc.profile.extra["x-custom"]["n"], 1);
    assert_eq!(
        serde_json::to_value(&doc).unwrap(),
        serde_json::from_str::<Value>(text).unwrap()
    );
    assert_eq!(
        Lsp3ProfileJson::from_slice(b"{}").unwrap_err().code(),
        "INVALID_METADATA"
    );
    assert_eq!(
        Lsp4MetadataJson::from_slice(b"[1]").unwrap_err().code(),
        "INVALID_METADATA"
    );
}

mod properties {
    use profile_relayer::{lsp3::Lsp3ProfileJson, lsp4::Lsp4MetadataJson};
    use proptest::prelude::*;
    use serde_json::{Value, json};

    /// Arbitrary JSON, biased towards the keys LSP3/LSP4 readers look at.
    fn json_value() -> impl Strategy<Value = Value> {
        let key = prop_oneof![
            Just("name".to_owned()),
            Just("description".to_owned()),
            Just("links".to_owned()),
            Just("tags".to_owned()),
            Just("profileImage".to_owned()),
            Just("images".to_owned()),
            Just("icon".to_owned()),
            Just("url".to_owned()),
            Just("verification".to_owned()),
            Just("attributes".to_owned()),
            "[a-z]{1,8}",
        ];
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<f64>().prop_map(|f| json!(f)),
            ".{0,20}".prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 64, 6, move |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                proptest::collection::btree_map(key.clone(), inner, 0..6)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        // hostile metadata never panics the parsers; what they accept serializes again
        #[test]
        fn metadata_parsers_never_panic(inner in json_value(), raw in ".{0,60}") {
            for doc in [json!({ "LSP3Profile": &inner }), json!({ "LSP4Metadata": &inner }), inner] {
                let bytes = serde_json::to_vec(&doc).unwrap();
                if let Ok(p) = Lsp3ProfileJson::from_slice(&bytes) {
                    serde_json::to_vec(&p).unwrap();
                }
                if let Ok(m) = Lsp4MetadataJson::from_slice(&bytes) {
                    serde_json::to_vec(&m).unwrap();
                }
            }
            let _ = Lsp3ProfileJson::from_slice(raw.as_bytes());
            let _ = Lsp4MetadataJson::from_slice(raw.as_bytes());
        }
    }
}
