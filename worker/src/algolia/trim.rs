//! Records pushed to Algolia must stay under its record size limit (10 KB on most plans): a record over
//! `ALGOLIA_MAX_RECORD_BYTES` loses its largest optional fields first (raw metadata, descriptions, links,
//! attributes, …), then the largest remaining field that is not an identity field, until it fits.

use serde_json::{Map, Value};

/// Fields dropped first, in this order.
const DROP_FIRST: &[&str] = &[
    "raw",
    "rawMetadata",
    "LSP3Profile",
    "LSP4Metadata",
    "metadata",
    "description",
    "attributes",
    "links",
    "images",
    "assets",
    "icon",
    "icons",
    "backgroundImage",
    "profileImage",
    "tags",
    "LSP4Creators",
];

/// Fields never dropped: without them the record is useless.
const KEEP: &[&str] = &[
    "objectID", "address", "chainId", "kind", "type", "name", "symbol", "tokenId",
];

fn size(record: &Map<String, Value>) -> usize {
    serde_json::to_string(record).map_or(usize::MAX, |s| s.len())
}

/// The record trimmed to at most `max` bytes of JSON, `None` when even its identity fields are larger.
pub fn trim(record: &Value, max: usize) -> Option<Value> {
    let Value::Object(record) = record else {
        return None;
    };
    let mut record = record.clone();
    for field in DROP_FIRST {
        if size(&record) <= max {
            return Some(Value::Object(record));
        }
        record.remove(*field);
    }
    while size(&record) > max {
        let largest = record
            .iter()
            .filter(|(k, _)| !KEEP.contains(&k.as_str()))
            .max_by_key(|(_, v)| serde_json::to_string(v).map_or(usize::MAX, |s| s.len()))
            .map(|(k, _)| k.clone())?;
        record.remove(&largest);
    }
    Some(Value::Object(record))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn small_records_are_unchanged() {
        let r = json!({ "objectID": "0x1", "name": "a", "description": "short" });
        assert_eq!(trim(&r, 1000), Some(r));
    }

    #[test]
    fn large_fields_go_first_and_identity_stays() {
        let r = json!({
            "objectID": "0x1", "name": "n", "type": "LSP7DigitalAsset",
            "description": "d".repeat(5000), "links": ["l".repeat(100)], "hasTokenName": true,
            "custom": "c".repeat(300),
        });
        let t = trim(&r, 1000).unwrap();
        assert!(t.get("description").is_none());
        assert_eq!(t["links"], r["links"]);
        assert_eq!(t["custom"], r["custom"]);
        assert!(serde_json::to_string(&t).unwrap().len() <= 1000);
        // then the largest other field
        let t = trim(&r, 250).unwrap();
        assert!(t.get("custom").is_none() && t.get("links").is_none());
        assert_eq!(t["hasTokenName"], true);
        assert_eq!(t["type"], "LSP7DigitalAsset");
        // identity fields alone over the limit: rejected
        let huge = json!({ "objectID": "0x1", "name": "n".repeat(500) });
        assert_eq!(trim(&huge, 100), None);
        assert_eq!(trim(&json!([1]), 100), None);
    }

    #[cfg(not(target_arch = "wasm32"))]
    proptest::proptest! {
        #[test]
        fn trimmed_records_fit(fields in proptest::collection::btree_map("[a-zA-Z]{1,12}", "\\PC{0,400}", 0..20), max in 50usize..3000) {
            let mut record: Map<String, Value> = fields.into_iter().map(|(k, v)| (k, Value::String(v))).collect();
            record.insert("objectID".into(), Value::String("0x1".into()));
            if let Some(t) = trim(&Value::Object(record.clone()), max) {
                proptest::prop_assert!(serde_json::to_string(&t).unwrap().len() <= max);
                proptest::prop_assert_eq!(&t["objectID"], "0x1");
            }
        }
    }
}
