//! Shared pieces of the LSP3 / LSP4 metadata JSON: links, images, assets, verification. Unknown fields are kept
//! in `extra` so that a document survives a parse → serialize round trip.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// `{"method": "keccak256(bytes)", "data": "0x…"}` (or `ecdsa` with a `source`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verification {
    /// `keccak256(bytes)`, `keccak256(utf8)` or `ecdsa`.
    pub method: String,
    /// The hash (or the signer address for `ecdsa`).
    pub data: String,
    /// URL of the signature, for `ecdsa`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Unknown fields, preserved.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `{"title": …, "url": …}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Link {
    /// Link text.
    pub title: String,
    /// Target URL.
    pub url: String,
    /// Unknown fields, preserved.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// An image file in one size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImageFile {
    /// Width in pixels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub width: Option<u64>,
    /// Height in pixels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub height: Option<u64>,
    /// Where the file is.
    pub url: String,
    /// How to verify the file's bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verification: Option<Verification>,
    /// Unknown fields, preserved.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// An asset file (3D model, video, …).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AssetFile {
    /// Where the file is.
    pub url: String,
    /// MIME type or extension.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_type: Option<String>,
    /// How to verify the file's bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verification: Option<Verification>,
    /// Unknown fields, preserved.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// An NFT used as an image or asset: an LSP7 contract, or an LSP8 contract and token id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NftReference {
    /// The asset contract.
    pub address: String,
    /// The LSP8 token id (bytes32 hex).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_id: Option<String>,
    /// Unknown fields, preserved.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// An entry of `profileImage`, `backgroundImage`, `icon` or `images[i]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Image {
    /// A file.
    File(ImageFile),
    /// An NFT.
    Nft(NftReference),
}

/// An entry of `avatar` or `assets`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Asset {
    /// A file.
    File(AssetFile),
    /// An NFT.
    Nft(NftReference),
}

impl Image {
    /// The URL of a file image.
    #[must_use]
    pub fn url(&self) -> Option<&str> {
        match self {
            Self::File(f) => Some(&f.url),
            Self::Nft(_) => None,
        }
    }
}
