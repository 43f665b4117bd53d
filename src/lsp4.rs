//! LSP4 Digital Asset Metadata: the JSON document and the token type.
//!
//! Spec: <https://github.com/lukso-network/LIPs/blob/main/LSPs/LSP-4-DigitalAsset-Metadata.md>

use alloy_primitives::{B256, U256};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value};

pub use crate::metadata::{Asset, Image, Lenient, Link, Verification};
use crate::{Error, Result, metadata::Dropper};

/// The document behind the `LSP4Metadata` VerifiableURI: `{"LSP4Metadata": {…}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Lsp4MetadataJson {
    /// The metadata.
    #[serde(rename = "LSP4Metadata")]
    pub metadata: Lsp4Metadata,
    /// Unknown top-level fields, preserved.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Asset (or token id) metadata.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Lsp4Metadata {
    /// Name, if not given by `LSP4TokenName`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Links.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub links: Option<Vec<Link>>,
    /// One icon in several sizes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icon: Option<Vec<Image>>,
    /// Images, each in several sizes; `images[0]` is the main image.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub images: Option<Vec<Vec<Image>>>,
    /// Further files or NFTs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assets: Option<Vec<Asset>>,
    /// Attributes (traits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attributes: Option<Vec<Attribute>>,
    /// Unknown fields, preserved.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `{"key": …, "value": …, "type": "string" | "number" | "boolean"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Attribute {
    /// Attribute name.
    pub key: String,
    /// Attribute value.
    pub value: AttributeValue,
    /// Declared type.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Unknown fields, preserved.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A string, number or boolean attribute value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum AttributeValue {
    /// Boolean.
    Bool(bool),
    /// Number (kept as written).
    Number(Number),
    /// String.
    String(String),
}

impl Lsp4MetadataJson {
    /// Parses an LSP4 metadata document.
    ///
    /// # Errors
    /// [`Error::InvalidMetadata`].
    pub fn from_slice(bytes: &[u8]) -> Result<Self> {
        serde_json::from_slice(bytes).map_err(|e| Error::InvalidMetadata(format!("LSP4Metadata: {e}")))
    }

    /// Parses an LSP4 metadata document tolerantly: a field or list entry that does not parse (an attribute
    /// whose value is an object, an image without url, an `images` entry that is not a list) is dropped and named
    /// in [`Lenient::dropped`]; everything else is kept.
    ///
    /// # Errors
    /// [`Error::InvalidMetadata`] when the bytes are not JSON or hold no `LSP4Metadata` object.
    pub fn from_slice_lenient(bytes: &[u8]) -> Result<Lenient<Self>> {
        let value: Value = serde_json::from_slice(bytes)
            .map_err(|e| Error::InvalidMetadata(format!("LSP4Metadata: {e}")))?;
        Self::from_value_lenient(value)
    }

    /// [`Lsp4MetadataJson::from_slice_lenient`] on an already parsed document.
    ///
    /// # Errors
    /// [`Error::InvalidMetadata`] when the document holds no `LSP4Metadata` object.
    pub fn from_value_lenient(value: Value) -> Result<Lenient<Self>> {
        let Value::Object(mut extra) = value else {
            return Err(Error::InvalidMetadata(
                "LSP4Metadata: the document is not a JSON object".into(),
            ));
        };
        let Some(Value::Object(mut obj)) = extra.remove("LSP4Metadata") else {
            return Err(Error::InvalidMetadata(
                "LSP4Metadata: no \"LSP4Metadata\" object".into(),
            ));
        };
        let mut d = Dropper::default();
        let images = match obj.remove("images") {
            None | Some(Value::Null) => None,
            Some(Value::Array(sets)) => Some(
                sets.into_iter()
                    .enumerate()
                    .filter_map(|(i, set)| match set {
                        Value::Array(sizes) => Some(d.entries(sizes, &format!("images[{i}]"))),
                        _ => {
                            d.drop_path(|| format!("images[{i}]"));
                            None
                        }
                    })
                    .collect(),
            ),
            Some(_) => {
                d.drop_path(|| "images".to_owned());
                None
            }
        };
        let metadata = Lsp4Metadata {
            name: d.field(&mut obj, "name"),
            description: d.field(&mut obj, "description"),
            links: d.list(&mut obj, "links"),
            icon: d.list(&mut obj, "icon"),
            images,
            assets: d.list(&mut obj, "assets"),
            attributes: d.list(&mut obj, "attributes"),
            extra: obj,
        };
        Ok(d.finish(Self { metadata, extra }))
    }
}

/// `LSP4TokenType` (uint256).
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TokenType {
    /// 0: a fungible LSP7 token; `LSP4Metadata` describes the token.
    Token,
    /// 1: an NFT (LSP7 with 0 decimals, or an LSP8 describing one item).
    Nft,
    /// 2: an LSP8 collection; each token id has its own metadata.
    Collection,
}

impl TokenType {
    /// The integer value.
    #[must_use]
    pub const fn value(self) -> u8 {
        match self {
            Self::Token => 0,
            Self::Nft => 1,
            Self::Collection => 2,
        }
    }

    /// The 32-byte ERC725Y value.
    #[must_use]
    pub fn to_bytes32(self) -> B256 {
        B256::from(U256::from(self.value()))
    }

    /// Reads the ERC725Y value (32 bytes, uint256).
    ///
    /// # Errors
    /// [`Error::InvalidLength`] or [`Error::UnknownEnumValue`].
    pub fn from_value(value: &[u8]) -> Result<Self> {
        let n = uint256_value("LSP4TokenType", value)?;
        match u64::try_from(n) {
            Ok(0) => Ok(Self::Token),
            Ok(1) => Ok(Self::Nft),
            Ok(2) => Ok(Self::Collection),
            _ => Err(Error::UnknownEnumValue {
                kind: "LSP4TokenType".into(),
                value: n.to_string(),
            }),
        }
    }
}

pub(crate) fn uint256_value(field: &str, value: &[u8]) -> Result<U256> {
    if value.len() != 32 {
        return Err(Error::InvalidLength {
            field: field.to_owned(),
            expected: 32,
            got: value.len(),
        });
    }
    Ok(U256::from_be_slice(value))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn lenient_metadata_keeps_what_parses() {
        let image = json!({ "width": 10, "height": 10, "url": "ipfs://bafkreia" });
        let doc = json!({ "LSP4Metadata": {
            "name": "Coin",
            "description": ["not", "a", "string"],
            "icon": [image, { "width": 1 }],
            "images": [[image, 7], "not a list", [image]],
            "attributes": [{ "key": "a", "value": 1, "type": "number" }, { "key": "b", "value": { "x": 1 } }, { "value": true }, { "key": "c", "value": false }],
            "assets": [{ "url": "ipfs://x", "fileType": "glb" }, 3],
            "links": [{ "title": "x", "url": "https://x" }],
        } });
        let parsed = Lsp4MetadataJson::from_value_lenient(doc).unwrap();
        let m = &parsed.value.metadata;
        assert_eq!(m.name.as_deref(), Some("Coin"));
        assert_eq!(m.description, None);
        assert_eq!(m.icon.as_ref().unwrap().len(), 1);
        let images = m.images.as_ref().unwrap();
        assert_eq!(images.iter().map(Vec::len).collect::<Vec<_>>(), [1, 1]);
        let keys: Vec<&str> = m
            .attributes
            .as_ref()
            .unwrap()
            .iter()
            .map(|a| a.key.as_str())
            .collect();
        assert_eq!(keys, ["a", "c"]);
        assert_eq!(m.assets.as_ref().unwrap().len(), 1);
        assert_eq!(m.links.as_ref().unwrap().len(), 1);
        assert_eq!(
            parsed.dropped,
            [
                "images[0][1]",
                "images[1]",
                "description",
                "icon[1]",
                "assets[1]",
                "attributes[1]",
                "attributes[2]"
            ]
        );
    }

    #[test]
    fn lenient_metadata_errors_and_clean_documents() {
        assert_eq!(
            Lsp4MetadataJson::from_slice_lenient(br#"{"LSP3Profile":{}}"#)
                .unwrap_err()
                .code(),
            "INVALID_METADATA"
        );
        let clean = br#"{"LSP4Metadata":{"name":"n","links":[],"icon":[],"images":[[{"width":1,"height":1,"url":"ipfs://x"}]],"assets":[],"attributes":[{"key":"k","value":"v","type":"string"}]}}"#;
        let parsed = Lsp4MetadataJson::from_slice_lenient(clean).unwrap();
        assert!(parsed.dropped.is_empty());
        assert_eq!(parsed.value, Lsp4MetadataJson::from_slice(clean).unwrap());
        // the list of dropped paths is bounded
        let many: Vec<Value> = (0..500).map(|_| json!(1)).collect();
        let parsed =
            Lsp4MetadataJson::from_value_lenient(json!({ "LSP4Metadata": { "attributes": many } })).unwrap();
        assert_eq!(parsed.dropped.len(), crate::metadata::MAX_DROPPED);
    }

    #[cfg(not(target_arch = "wasm32"))]
    proptest::proptest! {
        #[test]
        fn lenient_metadata_never_panics(body in "\\PC{0,300}") {
            let _ = Lsp4MetadataJson::from_slice_lenient(body.as_bytes());
            let _ = Lsp4MetadataJson::from_slice_lenient(format!("{{\"LSP4Metadata\":{body}}}").as_bytes());
        }

        // attributes: each good one is kept, each bad one dropped, whatever the mix
        #[test]
        fn lenient_attributes(mask in proptest::collection::vec(proptest::bool::ANY, 0..20)) {
            let attributes: Vec<Value> = mask.iter().enumerate()
                .map(|(i, g)| if *g { json!({ "key": format!("k{i}"), "value": i }) } else { json!({ "key": i, "value": [] }) })
                .collect();
            let parsed = Lsp4MetadataJson::from_value_lenient(json!({ "LSP4Metadata": { "attributes": attributes } })).unwrap();
            let kept = parsed.value.metadata.attributes.unwrap_or_default().len();
            proptest::prop_assert_eq!(kept, mask.iter().filter(|g| **g).count());
            proptest::prop_assert_eq!(parsed.dropped.len(), mask.iter().filter(|g| !**g).count());
        }
    }

    #[test]
    fn token_type_values() {
        for t in [TokenType::Token, TokenType::Nft, TokenType::Collection] {
            assert_eq!(TokenType::from_value(t.to_bytes32().as_slice()).unwrap(), t);
        }
        assert_eq!(
            TokenType::from_value(&[0; 31]).unwrap_err().code(),
            "INVALID_LENGTH"
        );
        let mut big = [0xffu8; 32];
        assert_eq!(
            TokenType::from_value(&big).unwrap_err().code(),
            "UNKNOWN_ENUM_VALUE"
        );
        big = [0; 32];
        big[0] = 1;
        big[31] = 1;
        assert!(TokenType::from_value(&big).is_err());
    }
}
