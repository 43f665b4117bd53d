//! Records pushed to Algolia must stay under its record size limit (10 KB on most plans). A record over
//! `ALGOLIA_MAX_RECORD_BYTES` loses what clients show least first — raw metadata, descriptions (top level and inside
//! `LSP3Profile` / `LSP4Metadata`), attributes, links, tags, then the images' verification data and all but the first
//! size of each image, then the largest remaining field — and never what a search hit displays: the identity fields,
//! `name`, `symbol`, `LSP4TokenName`, `LSP4TokenSymbol`, the image URLs, and `LSP3Profile` / `LSP4Metadata` with their
//! `name` and images. A record whose display fields alone are too large is not pushed.

use serde_json::{Map, Value};

/// Top-level fields dropped first, in this order.
const DROP_FIRST: &[&str] = &[
    "metadataRaw",
    "raw",
    "rawMetadata",
    "metadataDropped",
    "metadataError",
    "description",
    "attributes",
    "links",
    "tokens",
    "LSP4Creators",
    "tags",
];

/// The nested metadata objects, kept (reduced) because clients read their name and images.
const NESTED: &[&str] = &["LSP3Profile", "LSP4Metadata"];

/// Fields of a nested metadata object dropped first, in this order.
const NESTED_DROP_FIRST: &[&str] = &["description", "attributes", "assets", "links", "tags", "avatar"];

/// Image lists of a nested metadata object (arrays of `{url, width, height, verification}`).
const IMAGES: &[&str] = &["profileImage", "backgroundImage", "icon", "images"];

/// Fields never dropped: what a hit displays, and the record's identity.
const KEEP: &[&str] = &[
    "objectID",
    "address",
    "chainId",
    "kind",
    "type",
    "LSPStandard",
    "tokenId",
    "name",
    "symbol",
    "LSP4TokenName",
    "LSP4TokenSymbol",
    "profileImageUrl",
    "backgroundImageUrl",
    "iconUrl",
    "imageUrl",
    "LSP3Profile",
    "LSP4Metadata",
];

fn size(record: &Map<String, Value>) -> usize {
    serde_json::to_string(record).map_or(usize::MAX, |s| s.len())
}

/// Applies `change` to each nested metadata object of `record`.
fn each_nested(record: &mut Map<String, Value>, mut change: impl FnMut(&mut Map<String, Value>)) {
    for key in NESTED {
        if let Some(Value::Object(nested)) = record.get_mut(*key) {
            change(nested);
        }
    }
}

/// Every image entry (`{url, …}`) of the nested objects' image lists; `images` may be a list of lists (LSP4).
fn each_image_list(record: &mut Map<String, Value>, mut change: impl FnMut(&mut Vec<Value>)) {
    each_nested(record, |nested| {
        for key in IMAGES {
            match nested.get_mut(*key) {
                Some(Value::Array(list)) if list.iter().all(Value::is_array) => {
                    for inner in list.iter_mut() {
                        if let Value::Array(inner) = inner {
                            change(inner);
                        }
                    }
                }
                Some(Value::Array(list)) => change(list),
                _ => {}
            }
        }
    });
}

/// The record trimmed to at most `max` bytes of JSON, `None` when even its display fields are larger.
pub fn trim(record: &Value, max: usize) -> Option<Value> {
    let Value::Object(record) = record else {
        return None;
    };
    let mut record = record.clone();
    let fits = |r: &Map<String, Value>| size(r) <= max;
    for field in DROP_FIRST {
        if fits(&record) {
            return Some(Value::Object(record));
        }
        record.remove(*field);
    }
    for field in NESTED_DROP_FIRST {
        if fits(&record) {
            return Some(Value::Object(record));
        }
        each_nested(&mut record, |nested| {
            nested.remove(*field);
        });
    }
    // the images' hashes, then all but the first size of each image
    if !fits(&record) {
        each_image_list(&mut record, |list| {
            for image in list.iter_mut() {
                if let Value::Object(image) = image {
                    image.remove("verification");
                }
            }
        });
    }
    if !fits(&record) {
        each_image_list(&mut record, |list| list.truncate(1));
    }
    // then anything else a nested object holds besides its name and images
    if !fits(&record) {
        each_nested(&mut record, |nested| {
            nested.retain(|k, _| k == "name" || IMAGES.contains(&k.as_str()));
        });
    }
    while !fits(&record) {
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
        let t = trim(&r, 200).unwrap();
        assert!(t.get("custom").is_none() && t.get("links").is_none());
        assert_eq!(t["hasTokenName"], true);
        assert_eq!(t["type"], "LSP7DigitalAsset");
        // identity fields alone over the limit: rejected
        let huge = json!({ "objectID": "0x1", "name": "n".repeat(500) });
        assert_eq!(trim(&huge, 100), None);
        assert_eq!(trim(&json!([1]), 100), None);
    }

    /// A profile with a 6,000-character bio, several image sizes with their hashes and many links: the pushed
    /// record keeps `LSP3Profile.name`, the first size of each image with its URL, and the top-level image URLs.
    #[test]
    fn a_long_profile_keeps_its_name_and_images() {
        let image = |w: u32| {
            json!({"url": format!("https://relay.example/ipfs/bafy{w}"), "width": w, "height": w,
            "verification": {"method": "keccak256(bytes)", "data": format!("0x{}", "ab".repeat(32))}})
        };
        let bio = "b".repeat(6000);
        let tags = vec!["t"; 20];
        let links = vec![json!({"title": "x", "url": "https://x"}); 20];
        let r = json!({
            "objectID": "0x1", "address": "0x1", "type": "LSP0ERC725Account", "name": "Alice",
            "description": bio, "tags": tags, "links": links,
            "profileImageUrl": "https://relay.example/image/bafy640?width=320",
            "LSP3Profile": {"name": "Alice", "description": bio, "links": links,
                "tags": tags, "profileImage": [image(640), image(320), image(180), image(64)],
                "backgroundImage": [image(1800), image(1024)]},
        });
        for max in [10_000, 2_000, 900] {
            let t = trim(&r, max).unwrap();
            assert!(serde_json::to_string(&t).unwrap().len() <= max, "{max}");
            assert_eq!(t["LSP3Profile"]["name"], "Alice", "{max}");
            assert_eq!(t["name"], "Alice");
            assert_eq!(t["profileImageUrl"], r["profileImageUrl"]);
            assert_eq!(
                t["LSP3Profile"]["profileImage"][0]["url"], r["LSP3Profile"]["profileImage"][0]["url"],
                "{max}"
            );
            assert_eq!(
                t["LSP3Profile"]["backgroundImage"][0]["url"],
                r["LSP3Profile"]["backgroundImage"][0]["url"]
            );
        }
        // at 10,000 bytes only the bios and lists go: every image size stays, with its hash
        let t = trim(&r, 10_000).unwrap();
        assert_eq!(t["LSP3Profile"]["profileImage"], r["LSP3Profile"]["profileImage"]);
        // LSP4 `images` is a list of lists
        let asset = json!({"objectID": "0x2", "name": "Coin", "LSP4TokenName": "Coin", "LSP4TokenSymbol": "C",
            "LSP4Metadata": {"name": "Coin", "description": bio, "images": [[image(1024), image(512)], [image(256)]],
                "icon": [image(64), image(32)]}});
        let t = trim(&asset, 450).unwrap();
        assert!(serde_json::to_string(&t).unwrap().len() <= 450);
        assert_eq!(t["LSP4TokenName"], "Coin");
        assert_eq!(t["LSP4Metadata"]["name"], "Coin");
        assert_eq!(
            t["LSP4Metadata"]["images"][0][0]["url"],
            asset["LSP4Metadata"]["images"][0][0]["url"]
        );
        assert_eq!(
            t["LSP4Metadata"]["icon"][0]["url"],
            asset["LSP4Metadata"]["icon"][0]["url"]
        );
        // display fields alone over the limit: not pushed
        assert_eq!(trim(&r, 200), None);
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
