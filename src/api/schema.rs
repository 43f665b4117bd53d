//! JSON Schemas of the wire types (feature `schema`): the Worker's OpenAPI document takes its
//! `components.schemas` from the types' `schemars::JsonSchema` derives (see the Worker's `wire` tests, which
//! generate it). Never compiled into the npm bundles.
//!
//! The wire types hold foreign values (`alloy_primitives::Address`, `B256`) or strings with a fixed form; the
//! types here name those forms, so that the derives reference them (`$ref`) as shared components of the document.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};

/// Declares a schema-only type named `$name` whose schema is `$schema` (a shared component of the document).
macro_rules! named_schema {
    ($(#[doc = $doc:literal])* $name:ident = $schema:tt) => {
        $(#[doc = $doc])*
        #[derive(Debug)]
        pub struct $name;

        impl JsonSchema for $name {
            fn schema_name() -> Cow<'static, str> {
                Cow::Borrowed(stringify!($name))
            }

            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                json_schema!($schema)
            }
        }
    };
}

named_schema! {
    /// An address as answered: EIP-55.
    Address = {
        "type": "string",
        "pattern": "^0x[0-9a-fA-F]{40}$",
        "format": "eth-address",
        "description": "A 20-byte address, `0x` + 40 hex digits: all lower-case, all upper-case, or mixed case with a valid EIP-55 checksum (a mixed-case address with a wrong checksum is answered 400 INVALID_ADDRESS). Answers always use the EIP-55 form.",
        "examples": ["0x70997970C51812dc3A010C7d01b50e0d17dc79C8"]
    }
}

named_schema! {
    /// 32 bytes as answered (`B256`): lower-case hex.
    Hash = {
        "type": "string",
        "pattern": "^0x[0-9a-f]{64}$",
        "description": "32 bytes, lower-case hex"
    }
}

named_schema! {
    /// An API key's public id.
    ApiKeyId = {
        "type": "string",
        "pattern": "^[0-9a-f]{16}$",
        "description": "An API key's public id: 16 lower-case hex digits"
    }
}

named_schema! {
    /// An instant as answered: ISO 8601 in UTC.
    DateTime = {
        "type": "string",
        "format": "date-time"
    }
}

/// The `error` object of the service's own errors: an [`super::ErrorDetail`] whose code is one the service
/// declares ([`super::codes::ServiceCode`] or a core error's code, [`crate::Error::ALL_CODES`]), sorted.
pub fn service_error(generator: &mut SchemaGenerator) -> Schema {
    let mut codes: Vec<&str> = super::codes::ServiceCode::ALL
        .iter()
        .map(|c| c.as_str())
        .chain(crate::Error::ALL_CODES.iter().copied())
        .collect();
    codes.sort_unstable();
    codes.dedup();
    let detail = generator.subschema_for::<super::ErrorDetail>();
    json_schema!({
        "allOf": [detail, { "properties": { "code": { "enum": codes } } }]
    })
}

/// The hits of the Algolia-compatible routes (`#/components/schemas/AlgoliaHit`: a record with Algolia's
/// highlighting).
pub fn algolia_hits(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "array", "items": { "$ref": "#/components/schemas/AlgoliaHit" } })
}

/// A search record of any kind: what the lookup API answers for an address and its search's hits.
#[derive(Debug)]
pub struct Record;

impl JsonSchema for Record {
    fn schema_name() -> Cow<'static, str> {
        Cow::Borrowed("Record")
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        use super::records::{AssetRecord, ProfileRecord, TokenRecord};
        let kinds = [
            generator.subschema_for::<ProfileRecord>(),
            generator.subschema_for::<AssetRecord>(),
            generator.subschema_for::<TokenRecord>(),
        ];
        json_schema!({
            "description": "A search record, in the shape clients of LUKSO's api.universalprofile.cloud read: a profile, an asset (LSP7 or LSP8 collection) or an LSP8 token. Image URLs are absolute (PUBLIC_BASE_URL + /image/<cid> for ipfs:// images), \"\" when there is none. Metadata is parsed tolerantly: entries that do not parse are left out and named in metadataDropped, and the raw JSON is kept in metadataRaw (at most 8 KiB). Stored records are capped (strings cut, at most 32 entries per list, at most 64 KiB of JSON; see docs/lookup.md); a record that lost anything has metadataTruncated: true.",
            "anyOf": kinds
        })
    }
}
