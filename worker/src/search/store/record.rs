//! A record as the search store keeps it: the typed record the indexer built ([`Record`]), the row the `records`
//! table and the full-text index get for it ([`SearchRow`]) and its JSON within the caps of [`super::super::caps`]
//! ([`Stored`]). Pure: the SQL that writes and reads them is [`super`]'s.

use alloy_primitives::B256;
use profile_relayer::api::records::{AssetRecord, ProfileRecord, RecordHeader, RecordStamp, TokenRecord};
use serde_json::Value;

use crate::search::caps;

/// A record the indexer built, by kind.
#[derive(Debug, Clone, PartialEq)]
pub enum Record {
    Profile(ProfileRecord),
    Asset(AssetRecord),
    Token(TokenRecord),
}

impl Record {
    /// Who the record is.
    pub fn header(&self) -> &RecordHeader {
        match self {
            Self::Profile(r) => &r.header,
            Self::Asset(r) => &r.header,
            Self::Token(r) => &r.header,
        }
    }

    /// When it was read.
    pub fn stamp(&self) -> &RecordStamp {
        match self {
            Self::Profile(r) => &r.stamp,
            Self::Asset(r) => &r.stamp,
            Self::Token(r) => &r.stamp,
        }
    }

    /// The token id of a token record.
    pub fn token_id(&self) -> Option<B256> {
        match self {
            Self::Token(r) => Some(r.token_id),
            Self::Profile(_) | Self::Asset(_) => None,
        }
    }

    /// The row the `records` table and the full-text index get for it.
    pub fn row(&self) -> SearchRow {
        let header = self.header();
        let (name, symbol, description, tags) = match self {
            Self::Profile(r) => (&r.name, &None, &r.description, r.tags.as_slice()),
            Self::Asset(r) => (&r.name, &r.symbol, &r.description, [].as_slice()),
            Self::Token(r) => (&r.name, &None, &r.description, [].as_slice()),
        };
        let text = |key: &str, value: &Option<String>| {
            value
                .as_deref()
                .map_or_else(String::new, |v| caps::capped_text(key, v))
        };
        SearchRow {
            object_id: header.object_id.clone(),
            address: header.address.to_lowercase(),
            token_id: self.token_id().map(|t| t.to_string()),
            kind: header.kind.clone(),
            indexed_block: self.stamp().indexed_block,
            name: text("name", name),
            symbol: text("symbol", symbol),
            description: text("description", description),
            tags: caps::capped_tags(tags).join(" "),
        }
    }
}

/// What the `records` table and the full-text index hold of a record besides its JSON: its identity and its
/// text, cut as the stored JSON is ([`caps`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchRow {
    pub object_id: String,
    /// Lower case.
    pub address: String,
    pub token_id: Option<String>,
    pub kind: String,
    pub indexed_block: u64,
    pub name: String,
    pub symbol: String,
    pub description: String,
    /// Space-separated.
    pub tags: String,
}

/// A record as it is stored: the typed record, its row and its JSON within the caps of [`caps`] (what D1 keeps,
/// the lookup routes answer and Algolia gets).
#[derive(Debug, Clone)]
pub struct Stored {
    pub record: Record,
    pub row: SearchRow,
    json: Value,
}

impl Stored {
    pub fn new(record: Record) -> Self {
        let mut json = match &record {
            Record::Profile(r) => serde_json::to_value(r),
            Record::Asset(r) => serde_json::to_value(r),
            Record::Token(r) => serde_json::to_value(r),
        }
        .unwrap_or(Value::Null);
        caps::cap(&mut json);
        Self {
            row: record.row(),
            record,
            json,
        }
    }

    /// Its JSON within the caps: what D1 keeps, the lookup routes answer and Algolia gets.
    pub fn json(&self) -> &Value {
        &self.json
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use alloy_primitives::Address;
    use profile_relayer::{
        api::records::{AssetData, MetadataInfo, Stamp},
        lsp3::Lsp3ProfileJson,
        lsp4::Lsp4MetadataJson,
        lsp8::TokenIdFormat,
    };
    use serde_json::json;

    use super::*;

    const STAMP: Stamp = Stamp {
        chain_id: 42,
        block: 7,
        now: 1_711_015_200,
    };

    fn address() -> Address {
        "0x77ae93d6fabcc1369ee3fa3651e55a2f2e136bcc".parse().unwrap()
    }

    fn profile(name: &str, description: &str, tags: &[String]) -> Record {
        let lsp3 = Lsp3ProfileJson::from_value_lenient(
            json!({ "LSP3Profile": { "name": name, "description": description, "tags": tags } }),
        )
        .unwrap()
        .value
        .profile;
        Record::Profile(ProfileRecord::new(
            address(),
            STAMP,
            Some(lsp3),
            MetadataInfo::default(),
            "",
        ))
    }

    fn asset(name: &str, symbol: &str, description: &str) -> Record {
        let lsp4 = Lsp4MetadataJson::from_value_lenient(
            json!({ "LSP4Metadata": { "name": "ignored", "description": description } }),
        )
        .unwrap()
        .value
        .metadata;
        let data = AssetData {
            name: Some(name.to_owned()),
            symbol: Some(symbol.to_owned()),
            ..AssetData::default()
        };
        Record::Asset(AssetRecord::new(
            address(),
            false,
            STAMP,
            data,
            Some(lsp4),
            MetadataInfo::default(),
            "",
        ))
    }

    fn token(name: &str, description: &str) -> Record {
        let lsp4 = Lsp4MetadataJson::from_value_lenient(
            json!({ "LSP4Metadata": { "name": name, "description": description } }),
        )
        .unwrap()
        .value
        .metadata;
        Record::Token(TokenRecord::new(
            address(),
            B256::with_last_byte(9),
            TokenIdFormat::Number,
            STAMP,
            Some(lsp4),
            MetadataInfo::default(),
            "",
        ))
    }

    /// The row as it was read from the stored JSON by field name before records were typed: what the typed row
    /// must stay equal to.
    fn row_of_json(json: &Value) -> SearchRow {
        let text = |field: &str| match json.get(field).unwrap_or(&Value::Null) {
            Value::String(s) => s.clone(),
            Value::Array(items) => items
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(" "),
            _ => String::new(),
        };
        SearchRow {
            object_id: text("objectID"),
            address: text("address").to_lowercase(),
            token_id: json.get("tokenId").and_then(Value::as_str).map(str::to_owned),
            kind: text("kind"),
            indexed_block: json.get("indexedBlock").and_then(Value::as_u64).unwrap_or(0),
            name: text("name"),
            symbol: text("symbol"),
            description: text("description"),
            tags: text("tags"),
        }
    }

    #[test]
    fn the_row_of_each_kind_comes_from_its_type() {
        let id = address().to_checksum(None);
        let lower = id.to_lowercase();
        let row = profile("Alice", "about", &["a".into(), "b c".into()]).row();
        assert_eq!(
            row,
            SearchRow {
                object_id: id.clone(),
                address: lower.clone(),
                token_id: None,
                kind: "LSP0ERC725Account".into(),
                indexed_block: 7,
                name: "Alice".into(),
                symbol: String::new(),
                description: "about".into(),
                tags: "a b c".into(),
            }
        );
        let row = asset("Coin", "C", "a coin").row();
        assert_eq!(
            (
                row.object_id.as_str(),
                row.kind.as_str(),
                row.name.as_str(),
                row.symbol.as_str()
            ),
            (id.as_str(), "LSP7DigitalAsset", "Coin", "C")
        );
        assert_eq!(
            (row.description.as_str(), row.tags.as_str(), row.token_id),
            ("a coin", "", None)
        );
        let row = token("Coin #9", "one coin").row();
        let token_id = B256::with_last_byte(9).to_string();
        assert_eq!(row.object_id, format!("{id}:{token_id}"));
        assert_eq!(row.address, lower);
        assert_eq!(row.token_id.as_deref(), Some(token_id.as_str()));
        assert_eq!(
            (
                row.kind.as_str(),
                row.name.as_str(),
                row.symbol.as_str(),
                row.description.as_str()
            ),
            ("LSP8Token", "Coin #9", "", "one coin")
        );
        // the stored JSON is the record's own serialization
        for record in [profile("A", "", &[]), asset("B", "b", ""), token("C", "")] {
            let stored = Stored::new(record.clone());
            assert_eq!(stored.row, row_of_json(&stored.json));
            assert_eq!(stored.json["objectID"], record.header().object_id.as_str());
        }
    }

    #[test]
    fn huge_texts_are_cut_as_the_stored_json_cuts_them() {
        let tags: Vec<String> = (0..100).map(|i| format!("{i}{}", "t\"".repeat(300))).collect();
        let long = "é\u{1}x".repeat(20_000);
        for record in [
            profile(&long, &long, &tags),
            asset(&long, &long, &long),
            token(&long, &long),
        ] {
            let stored = Stored::new(record);
            assert_eq!(stored.json[caps::TRUNCATED], true);
            assert_eq!(stored.row, row_of_json(&stored.json));
            assert!(stored.row.name.len() < caps::MAX_NAME_BYTES);
            assert!(stored.row.description.len() < caps::MAX_DESCRIPTION_BYTES);
        }
    }

    #[cfg(not(target_arch = "wasm32"))]
    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
        #[test]
        fn typed_rows_equal_the_capped_json(
            name in "[a-z\"\\\u{1}é😀 ]{0,8}", n in 0usize..3000,
            description in "[a-z\"\u{1}é ]{0,8}", d in 0usize..6000,
            tags in proptest::collection::vec("[a-z\"é]{0,40}", 0..60),
        ) {
            let name = name.repeat(n);
            let description = description.repeat(d);
            for record in [profile(&name, &description, &tags), asset(&name, &description, &description), token(&name, &description)] {
                let stored = Stored::new(record);
                proptest::prop_assert_eq!(&stored.row, &row_of_json(&stored.json));
            }
        }
    }
}
