//! A record as an Algolia hit: `attributesToRetrieve` applied and `_highlightResult` added.

use serde_json::{Map, Value};

use super::{highlight, params::Params};

/// The attributes highlighted by default: the searchable ones.
pub const SEARCHABLE: &[&str] = &["name", "symbol", "description", "tags", "address"];

impl Params {
    /// A record as a hit: `attributesToRetrieve` applied (`objectID` always kept) and `_highlightResult` added.
    pub fn hit(&self, record: Value) -> Value {
        let groups: Vec<Vec<String>> = highlight::query_words(&self.query)
            .into_iter()
            .map(|w| vec![w])
            .collect();
        self.ranked_hit(record, &groups, None)
    }

    /// [`Params::hit`] of a ranked search: each query word highlighted by its group of terms (the word, then the
    /// words it matched with typos), `_rankingInfo` added when given.
    pub fn ranked_hit(&self, record: Value, groups: &[Vec<String>], ranking_info: Option<Value>) -> Value {
        let Value::Object(mut record) = record else {
            return record;
        };
        let mut highlights = Map::new();
        let highlighted: Vec<String> = match &self.attributes_to_highlight {
            Some(list) if list.iter().any(|a| a == "*") => record.keys().cloned().collect(),
            Some(list) => list.clone(),
            None => SEARCHABLE.iter().map(|s| (*s).to_owned()).collect(),
        };
        for attr in &highlighted {
            let result = match record.get(attr) {
                Some(Value::String(text)) => {
                    highlight::highlight_groups(text, groups, &self.pre_tag, &self.post_tag)
                }
                Some(Value::Array(items)) if items.iter().all(Value::is_string) => Value::Array(
                    items
                        .iter()
                        .filter_map(Value::as_str)
                        .map(|text| highlight::highlight_groups(text, groups, &self.pre_tag, &self.post_tag))
                        .collect(),
                ),
                _ => continue,
            };
            highlights.insert(attr.clone(), result);
        }
        if let Some(keep) = &self.attributes_to_retrieve
            && !keep.iter().any(|a| a == "*")
        {
            record.retain(|k, _| k == "objectID" || keep.iter().any(|a| a == k));
        }
        record.insert("_highlightResult".into(), Value::Object(highlights));
        if let Some(info) = ranking_info {
            record.insert("_rankingInfo".into(), info);
        }
        Value::Object(record)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::search::engine::params::{Params, tests::body};

    #[test]
    fn hits_get_highlights_and_retrieved_attributes() {
        let p = Params::from_body(&body(json!({
            "query": "ali", "attributesToRetrieve": ["name"], "highlightPreTag": "[", "highlightPostTag": "]"
        })))
        .unwrap();
        let hit =
            p.hit(json!({ "objectID": "0x1", "name": "Alice <b>", "tags": ["x", "alpha"], "kind": "k" }));
        assert_eq!(hit["name"], "Alice <b>");
        assert!(hit.get("kind").is_none() && hit.get("tags").is_none());
        assert_eq!(hit["objectID"], "0x1");
        assert_eq!(hit["_highlightResult"]["name"]["value"], "[Ali]ce &lt;b&gt;");
        assert_eq!(hit["_highlightResult"]["tags"][1]["matchLevel"], "none");
    }
}
