//! Size caps of a stored record, applied to its JSON before it goes to D1 (whose rows, strings and BLOBs stop at
//! 2,000,000 bytes: a record over it would fail its chunk's batch). Metadata may be 2 MiB (`METADATA_MAX_BYTES`)
//! and is copied into a record more than once (the description at the top and inside `LSP3Profile` /
//! `LSP4Metadata`, the full-text row), so every part is bounded:
//!
//! - every string is cut (on a char boundary) to its field's bound: names, symbols and link titles
//!   [`MAX_NAME_BYTES`], descriptions [`MAX_DESCRIPTION_BYTES`], tags [`MAX_TAG_BYTES`], anything else (URLs,
//!   unknown fields) [`MAX_STRING_BYTES`] — so a `data:` image URL a record keeps (`MAX_DATA_URL`) stays whole;
//! - arrays and objects keep their first [`MAX_ENTRIES`] entries, nesting stops at [`MAX_DEPTH`], an object key
//!   longer than [`MAX_NAME_BYTES`] drops its entry;
//! - the whole record JSON stays within [`MAX_RECORD_BYTES`]: the record's own fields are measured first, the
//!   parsed metadata (`LSP3Profile` / `LSP4Metadata`) gets what is left, then `metadataRaw` — kept whole or not at
//!   all (cut JSON text is useless).
//!
//! A record that lost anything says so: `metadataTruncated: true`. The full-text row is made of the record's
//! name, symbol, description and tags cut the same way ([`capped_text`], [`capped_tags`]), so it is bounded too
//! (≈ 22 KiB).

use serde_json::{Map, Value};

/// Largest record JSON stored (the `records.record` column): far under D1's 2,000,000-byte row limit.
pub(crate) const MAX_RECORD_BYTES: usize = 64 * 1024;
/// Largest name, symbol, link title or object key.
pub(crate) const MAX_NAME_BYTES: usize = 1024;
/// Largest description.
pub(crate) const MAX_DESCRIPTION_BYTES: usize = 16 * 1024;
/// Largest tag.
pub(crate) const MAX_TAG_BYTES: usize = 128;
/// Largest other string (URLs, unknown fields).
pub(crate) const MAX_STRING_BYTES: usize = 4096;
/// Entries kept per array or object.
pub(crate) const MAX_ENTRIES: usize = 32;
/// Deepest nesting kept (the record itself is depth 0); deeper values become `null`.
pub(crate) const MAX_DEPTH: usize = 8;
/// Largest JSON of one of the record's own fields but the description (`links`, `tags`, …), so that none of them
/// starves the others.
pub(crate) const MAX_FIELD_BYTES: usize = 8 * 1024;
/// Largest `metadataRaw` kept (whole or not at all).
pub(crate) const MAX_RAW_BYTES: usize = 8 * 1024;

/// The flag a record that lost anything carries.
pub(crate) const TRUNCATED: &str = "metadataTruncated";
/// Fields measured last, in this order: they get what the record's own fields leave.
const BULK: &[&str] = &["LSP3Profile", "LSP4Metadata", "metadataRaw"];
/// Room kept for the flag and the closing brace.
const RESERVE: usize = 32;
/// An entry is only started with at least this much room (a key, a colon and a short value).
const MIN_ENTRY: usize = 16;

/// The bound of a string under `key` (`inherited`: the bound of the array it is in).
fn bound(key: Option<&str>, inherited: usize) -> usize {
    match key {
        Some("name" | "symbol" | "title" | "LSP4TokenName" | "LSP4TokenSymbol") => MAX_NAME_BYTES,
        Some("description") => MAX_DESCRIPTION_BYTES,
        Some("tags") => MAX_TAG_BYTES,
        // checked whole before (see `cap`)
        Some("metadataRaw") => usize::MAX,
        Some(_) => MAX_STRING_BYTES,
        None => inherited,
    }
}

/// Bytes of `c` in JSON text (serde_json's escapes).
fn escaped_len(c: char) -> usize {
    match c {
        '"' | '\\' | '\u{08}' | '\u{0c}' | '\n' | '\r' | '\t' => 2,
        c if (c as u32) < 0x20 => 6,
        c => c.len_utf8(),
    }
}

/// Bytes of `s` as a JSON string, quotes included.
fn string_len(s: &str) -> usize {
    s.chars().map(escaped_len).sum::<usize>() + 2
}

/// Cuts `s` so that it takes at most `max` bytes as a JSON string (quotes included); whether it was cut.
fn cut_string(s: &mut String, max: usize) -> bool {
    let mut used = 2;
    let mut end = None;
    for (i, c) in s.char_indices() {
        used += escaped_len(c);
        if used > max {
            end = Some(i);
            break;
        }
    }
    match end {
        Some(i) => {
            s.truncate(i);
            true
        }
        None => false,
    }
}

/// Caps `value` in place within `budget` bytes of JSON (decreased by what it takes); whether anything was cut.
/// The caller leaves at least [`MIN_ENTRY`] bytes, enough for any scalar but a long number.
fn cap_value(value: &mut Value, limit: usize, depth: usize, budget: &mut usize) -> bool {
    match value {
        Value::Null | Value::Bool(_) | Value::Number(_) => {
            let len = value.to_string().len();
            if len > *budget {
                *value = Value::Null;
                *budget = budget.saturating_sub(4);
                return true;
            }
            *budget -= len;
            false
        }
        Value::String(s) => {
            let cut = cut_string(s, limit.min(*budget));
            *budget = budget.saturating_sub(string_len(s));
            cut
        }
        Value::Array(_) | Value::Object(_) if depth >= MAX_DEPTH => {
            *value = Value::Null;
            *budget = budget.saturating_sub(4);
            true
        }
        Value::Array(items) => {
            *budget = budget.saturating_sub(2);
            let mut cut = false;
            let mut keep = items.len();
            for (i, item) in items.iter_mut().enumerate() {
                if i >= MAX_ENTRIES || *budget < MIN_ENTRY {
                    keep = i;
                    break;
                }
                *budget -= 1; // the comma
                cut |= cap_value(item, limit, depth + 1, budget);
            }
            if keep < items.len() {
                items.truncate(keep);
                cut = true;
            }
            cut
        }
        Value::Object(map) => {
            *budget = budget.saturating_sub(2);
            cap_object(map, |_| true, limit, depth, budget)
        }
    }
}

/// Caps the entries of `map` that `select` picks, in order, within `budget`; entries that do not fit are removed.
fn cap_object(
    map: &mut Map<String, Value>,
    select: impl Fn(&str) -> bool,
    limit: usize,
    depth: usize,
    budget: &mut usize,
) -> bool {
    let mut cut = false;
    let mut entries = 0;
    let mut gone: Vec<String> = Vec::new();
    for (key, value) in map.iter_mut().filter(|(k, _)| select(k)) {
        let key_len = string_len(key) + 2; // quotes, colon, comma
        if entries >= MAX_ENTRIES || key_len > MAX_NAME_BYTES || *budget < key_len + MIN_ENTRY {
            gone.push(key.clone());
            continue;
        }
        entries += 1;
        *budget -= key_len;
        // the record's own fields each get a share; nested values and the bulk fields what is left
        let share = match key.as_str() {
            _ if depth > 0 || BULK.contains(&key.as_str()) => usize::MAX,
            "description" => MAX_DESCRIPTION_BYTES,
            _ => MAX_FIELD_BYTES,
        };
        let mut field = (*budget).min(share);
        let before = field;
        cut |= cap_value(value, bound(Some(key), limit), depth + 1, &mut field);
        *budget -= before - field;
    }
    for key in &gone {
        map.shift_remove(key);
    }
    cut || !gone.is_empty()
}

/// `text` as a capped record holds it under the record's own field `key` (`name`, `symbol`, `description`): cut
/// like [`cap`] cuts it. (The record's own fields come first and within their shares, so the record's budget never
/// cuts these further.)
pub(crate) fn capped_text(key: &str, text: &str) -> String {
    let mut text = text.to_owned();
    cut_string(&mut text, bound(Some(key), MAX_STRING_BYTES));
    text
}

/// Tags as a capped record holds them: the first [`MAX_ENTRIES`], each cut to [`MAX_TAG_BYTES`].
pub(crate) fn capped_tags(tags: &[String]) -> Vec<String> {
    tags.iter()
        .take(MAX_ENTRIES)
        .map(|tag| capped_text("tags", tag))
        .collect()
}

/// Caps a record (see the module's documentation); whether anything was cut (then `metadataTruncated` is set).
pub(crate) fn cap(record: &mut Value) -> bool {
    let Value::Object(map) = record else {
        return false;
    };
    let mut budget = MAX_RECORD_BYTES - RESERVE - 2;
    let mut cut = map.remove(TRUNCATED).is_some_and(|v| v == Value::Bool(true));
    cut |= cap_object(map, |k| !BULK.contains(&k), MAX_STRING_BYTES, 0, &mut budget);
    for bulk in BULK {
        let raw = *bulk == "metadataRaw";
        let fits = match map.get(*bulk) {
            None => continue,
            // the raw JSON text is kept whole or not at all
            Some(Value::String(s)) if raw => {
                let len = string_len(s);
                len <= MAX_RAW_BYTES + 2 && len + string_len(bulk) + 2 + MIN_ENTRY <= budget
            }
            Some(_) => true,
        };
        if !fits {
            map.shift_remove(*bulk);
            cut = true;
            continue;
        }
        cut |= cap_object(map, |k| k == *bulk, MAX_STRING_BYTES, 0, &mut budget);
    }
    if cut {
        map.insert(TRUNCATED.to_owned(), Value::Bool(true));
    }
    cut
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use serde_json::json;

    use super::*;

    fn size(v: &Value) -> usize {
        serde_json::to_string(v).unwrap().len()
    }

    #[test]
    fn small_records_are_unchanged() {
        let mut r = json!({
            "objectID": "0x1", "name": "Alice", "description": "hi \"there\"\n", "tags": ["a", "b"],
            "links": [{ "title": "x", "url": "https://x" }], "LSP3Profile": { "name": "Alice", "n": 1.5, "z": null },
            "metadataRaw": "{\"LSP3Profile\":{}}",
        });
        let before = r.clone();
        assert!(!cap(&mut r));
        assert_eq!(r, before);
    }

    #[test]
    fn huge_fields_are_cut_and_flagged() {
        let description = "é".repeat(1_000_000); // 2 MB, 2-byte chars: cuts must land on char boundaries
        let mut r = json!({
            "objectID": "0x1", "name": "N".repeat(5000), "description": description,
            "tags": vec!["t".repeat(500); 1000], "links": vec![json!({ "title": "x", "url": "u".repeat(10_000) }); 100],
            "metadataUrl": format!("data:application/json,{}", "x".repeat(3_000_000)),
            "LSP3Profile": { "description": description, "deep": [[[[[[[[[[[1]]]]]]]]]]] },
            "metadataRaw": "r".repeat(100_000),
        });
        assert!(cap(&mut r));
        assert!(size(&r) <= MAX_RECORD_BYTES, "{}", size(&r));
        assert_eq!(r[TRUNCATED], true);
        assert_eq!(r["objectID"], "0x1");
        assert_eq!(r["name"].as_str().unwrap().len(), MAX_NAME_BYTES - 2);
        let d = r["description"].as_str().unwrap();
        assert!(
            d.len() <= MAX_DESCRIPTION_BYTES && d.len() > MAX_DESCRIPTION_BYTES - 4,
            "{}",
            d.len()
        );
        assert!(d.chars().all(|c| c == 'é'));
        assert_eq!(r["tags"].as_array().unwrap().len(), MAX_ENTRIES);
        assert_eq!(r["tags"][0].as_str().unwrap().len(), MAX_TAG_BYTES - 2);
        assert!(r["metadataUrl"].as_str().unwrap().len() <= MAX_STRING_BYTES);
        // the raw JSON does not fit: gone, not cut
        assert!(r.get("metadataRaw").is_none());
        // the record's own fields came first, each within its share; the parsed metadata got what was left
        assert!(size(&r["links"]) <= MAX_FIELD_BYTES);
        let inner = r["LSP3Profile"]["description"].as_str().unwrap();
        assert!(inner.len() > MAX_DESCRIPTION_BYTES / 2, "{}", inner.len());
    }

    #[test]
    fn nesting_and_keys_are_bounded() {
        let mut deep = json!(1);
        for _ in 0..20 {
            deep = json!([deep]);
        }
        let long_key = "k".repeat(MAX_NAME_BYTES);
        let mut r = json!({ "objectID": "0x1", "deep": deep, "obj": { long_key.clone(): 1, "ok": 2 } });
        assert!(cap(&mut r));
        let mut v = &r["deep"];
        let mut depth = 1;
        while let Value::Array(a) = v {
            v = &a[0];
            depth += 1;
        }
        assert_eq!(*v, Value::Null);
        assert_eq!(depth, MAX_DEPTH);
        assert!(r["obj"].get(&long_key).is_none());
        assert_eq!(r["obj"]["ok"], 2);
    }

    #[test]
    fn control_characters_are_measured_escaped() {
        // each U+0001 is 6 bytes of JSON: the cut counts the escaped size
        let mut r = json!({ "objectID": "0x1", "description": "\u{1}".repeat(100_000) });
        assert!(cap(&mut r));
        let s = serde_json::to_string(&r["description"]).unwrap();
        assert!(s.len() <= MAX_DESCRIPTION_BYTES, "{}", s.len());
    }

    #[cfg(not(target_arch = "wasm32"))]
    mod props {
        use proptest::prelude::*;
        use serde_json::{Value, json};

        use super::{super::*, size};

        fn key() -> impl Strategy<Value = String> {
            prop_oneof![
                Just("name".to_owned()),
                Just("description".to_owned()),
                Just("tags".to_owned()),
                Just("links".to_owned()),
                Just("LSP3Profile".to_owned()),
                Just("LSP4Metadata".to_owned()),
                Just("metadataRaw".to_owned()),
                Just(TRUNCATED.to_owned()),
                "[a-zA-Z]{1,12}",
                "k{1000,1100}",
            ]
        }

        fn json_value() -> impl Strategy<Value = Value> {
            let leaf = prop_oneof![
                Just(Value::Null),
                any::<bool>().prop_map(Value::Bool),
                any::<i64>().prop_map(|n| json!(n)),
                any::<f64>()
                    .prop_filter("finite", |f| f.is_finite())
                    .prop_map(|f| json!(f)),
                // long strings, some with characters JSON escapes
                ("[a-z\"\\\\\u{1}é😀]{0,8}", 0usize..20_000)
                    .prop_map(|(s, n)| Value::String(s.repeat(n / 8 + 1))),
            ];
            leaf.prop_recursive(12, 400, 48, |inner| {
                prop_oneof![
                    prop::collection::vec(inner.clone(), 0..48).prop_map(Value::Array),
                    prop::collection::vec((key(), inner), 0..48)
                        .prop_map(|entries| Value::Object(entries.into_iter().collect())),
                ]
            })
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(64))]
            #[test]
            fn any_capped_record_fits(entries in prop::collection::vec((key(), json_value()), 0..24)) {
                let mut record = Value::Object(entries.into_iter().collect());
                let cut = cap(&mut record);
                prop_assert!(size(&record) <= MAX_RECORD_BYTES, "{} bytes", size(&record));
                prop_assert_eq!(record.get(TRUNCATED) == Some(&Value::Bool(true)), cut);
                // a capped record stays as it is
                let again = record.clone();
                cap(&mut record);
                prop_assert_eq!(record, again);
            }
        }
    }
}
