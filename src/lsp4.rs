//! LSP4 Digital Asset Metadata: the JSON document and the token type.
//!
//! Spec: <https://github.com/lukso-network/LIPs/blob/main/LSPs/LSP-4-DigitalAsset-Metadata.md>

use alloy_primitives::{B256, U256};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value};

pub use crate::metadata::{Asset, Image, Link, Verification};
use crate::{Error, Result};

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
}

/// `LSP4TokenType` (uint256).
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
    use super::*;

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
