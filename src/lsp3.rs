//! LSP3 Profile Metadata JSON.
//!
//! Spec: <https://github.com/lukso-network/LIPs/blob/main/LSPs/LSP-3-Profile-Metadata.md>

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use crate::metadata::{Asset, Image, Link, Verification};
use crate::{Error, Result};

/// The document behind the `LSP3Profile` VerifiableURI: `{"LSP3Profile": {…}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Lsp3ProfileJson {
    /// The profile.
    #[serde(rename = "LSP3Profile")]
    pub profile: Lsp3Profile,
    /// Unknown top-level fields, preserved.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The profile fields. All optional in practice; lists keep the difference between absent and empty.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Lsp3Profile {
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Links.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub links: Option<Vec<Link>>,
    /// Tags.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
    /// Avatars (3D files or NFTs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub avatar: Option<Vec<Asset>>,
    /// The profile image in several sizes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile_image: Option<Vec<Image>>,
    /// The background image in several sizes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub background_image: Option<Vec<Image>>,
    /// Unknown fields, preserved.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Lsp3ProfileJson {
    /// Parses an LSP3 profile document.
    ///
    /// # Errors
    /// [`Error::InvalidMetadata`].
    pub fn from_slice(bytes: &[u8]) -> Result<Self> {
        serde_json::from_slice(bytes).map_err(|e| Error::InvalidMetadata(format!("LSP3Profile: {e}")))
    }
}
