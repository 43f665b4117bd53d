//! Shared pieces of the LSP3 / LSP4 metadata JSON: links, images, assets, verification. Unknown fields are kept
//! in `extra` so that a document survives a parse → serialize round trip.

use serde::{Deserialize, Serialize, de::DeserializeOwned};
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
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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

/// The JSON shapes of these pieces as their serde derives read them (an `Option` field may be absent or `null`;
/// unknown fields are kept, so allowed): what the wasm clients check a document against without serde.
pub mod shapes {
    use crate::json_shape::{Shape, field, optional};

    /// A [`super::Verification`].
    pub const VERIFICATION: Shape = Shape::Struct(&[&[
        field("method", Shape::Str),
        field("data", Shape::Str),
        optional("source", Shape::Nullable(&Shape::Str)),
    ]]);
    /// A [`super::Link`].
    pub const LINK: Shape = Shape::Struct(&[&[field("title", Shape::Str), field("url", Shape::Str)]]);
    /// A [`super::NftReference`].
    pub const NFT: Shape = Shape::Struct(&[&[
        field("address", Shape::Str),
        optional("tokenId", Shape::Nullable(&Shape::Str)),
    ]]);
    /// An [`super::Image`]: an image file or an NFT.
    pub const IMAGE: Shape = Shape::OneOf(&[
        Shape::Struct(&[&[
            optional("width", Shape::Nullable(&Shape::Uint)),
            optional("height", Shape::Nullable(&Shape::Uint)),
            field("url", Shape::Str),
            optional("verification", Shape::Nullable(&VERIFICATION)),
        ]]),
        NFT,
    ]);
    /// An [`super::Asset`]: a file or an NFT.
    pub const ASSET: Shape = Shape::OneOf(&[
        Shape::Struct(&[&[
            field("url", Shape::Str),
            optional("fileType", Shape::Nullable(&Shape::Str)),
            optional("verification", Shape::Nullable(&VERIFICATION)),
        ]]),
        NFT,
    ]);
}

/// At most this many dropped paths are listed in a [`Lenient`] (a document with thousands of bad entries still
/// gives a small report).
pub const MAX_DROPPED: usize = 32;

/// A document parsed tolerantly: what parsed, and the JSON paths of what did not (`links[1]`, `profileImage`, …).
#[derive(Debug, Clone, PartialEq)]
pub struct Lenient<T> {
    /// Everything that parsed.
    pub value: T,
    /// Paths of the entries or fields dropped because they did not parse (at most [`MAX_DROPPED`]).
    pub dropped: Vec<String>,
}

/// Collects the paths of dropped entries while a document is taken apart field by field.
#[derive(Debug, Default)]
pub(crate) struct Dropper {
    dropped: Vec<String>,
}

impl Dropper {
    pub(crate) fn drop_path(&mut self, path: impl FnOnce() -> String) {
        if self.dropped.len() < MAX_DROPPED {
            self.dropped.push(path());
        }
    }

    pub(crate) fn finish<T>(self, value: T) -> Lenient<T> {
        Lenient {
            value,
            dropped: self.dropped,
        }
    }

    /// Removes `key` from `obj` and parses it; `null` is absent, anything that does not parse is dropped.
    pub(crate) fn field<T: DeserializeOwned>(
        &mut self,
        obj: &mut Map<String, Value>,
        key: &str,
    ) -> Option<T> {
        match obj.remove(key)? {
            Value::Null => None,
            v => serde_json::from_value(v)
                .map_err(|_| self.drop_path(|| key.to_owned()))
                .ok(),
        }
    }

    /// Removes the list `key` from `obj` and parses each entry on its own: entries that do not parse are dropped,
    /// the others kept (a value that is not a list is dropped whole).
    pub(crate) fn list<T: DeserializeOwned>(
        &mut self,
        obj: &mut Map<String, Value>,
        key: &str,
    ) -> Option<Vec<T>> {
        match obj.remove(key)? {
            Value::Null => None,
            Value::Array(items) => Some(self.entries(items, key)),
            _ => {
                self.drop_path(|| key.to_owned());
                None
            }
        }
    }

    /// Parses each item on its own, dropping (and naming as `path[i]`) those that do not parse.
    pub(crate) fn entries<T: DeserializeOwned>(&mut self, items: Vec<Value>, path: &str) -> Vec<T> {
        items
            .into_iter()
            .enumerate()
            .filter_map(|(i, item)| {
                serde_json::from_value(item)
                    .map_err(|_| self.drop_path(|| format!("{path}[{i}]")))
                    .ok()
            })
            .collect()
    }
}

/// The JSON text of a document when it is at most `max_bytes` long (kept next to a lossy parse).
#[must_use]
pub fn raw_json(value: &Value, max_bytes: usize) -> Option<String> {
    serde_json::to_string(value).ok().filter(|s| s.len() <= max_bytes)
}
