//! Algolia's filter syntax (`filters`, `facetFilters`, `numericFilters`) parsed into a small expression tree
//! ([`parse`] in [`parser`]), which the store ([`super::store::Sql::condition`]) binds as SQL.
//!
//! Supported: `attr:value`, `attr:"quoted value"`, `attr:true`, `attr:1 TO 5`, `attr > 3` (`<`, `<=`, `=`, `!=`,
//! `>=`, `>`), `AND`, `OR`, `NOT`, parentheses; `facetFilters` as arrays (outer AND, inner OR, `attr:-value`
//! negates); `numericFilters` likewise. Input length, nesting depth and the number of conditions are bounded.

mod parser;
pub mod tree;

use serde_json::Value;

use self::tree::{Result, any_of, err};
pub use self::{
    parser::parse,
    tree::{Filter, FilterError, Op, attribute, check_size},
};

/// A list parameter (`facetFilters`, `numericFilters`): a JSON array (outer AND, inner OR), a JSON array as text
/// (as inside `params`), or one filter string.
fn list<'a>(value: &'a Value, name: &str) -> Result<Vec<Vec<&'a str>>> {
    let as_strings = |items: &'a [Value]| -> Result<Vec<&'a str>> {
        items
            .iter()
            .map(|v| {
                v.as_str()
                    .map_or_else(|| err(format!("{name} must hold strings")), Ok)
            })
            .collect()
    };
    match value {
        Value::Null => Ok(Vec::new()),
        // an empty string is no filter, as with Algolia
        Value::String(s) if s.trim().is_empty() => Ok(Vec::new()),
        Value::String(s) => Ok(vec![vec![s.as_str()]]),
        Value::Array(items) => items
            .iter()
            .map(|item| match item {
                Value::String(s) => Ok(vec![s.as_str()]),
                Value::Array(inner) => as_strings(inner),
                _ => err(format!("{name} must be an array of strings or arrays of strings")),
            })
            .collect(),
        _ => err(format!("{name} must be an array")),
    }
}

/// `facetFilters`: `["type:LSP7", ["a:1", "a:2"]]`, `attr:-value` negates (`attr:\-value` is a literal `-`).
pub fn facet_filters(value: &Value) -> Result<Option<Filter>> {
    let groups = list(value, "facetFilters")?;
    let mut all = Vec::new();
    for group in groups {
        let mut any = Vec::new();
        for item in group {
            let Some((attr, value)) = item.split_once(':') else {
                return err(format!("facet filter {item:?} is not attribute:value"));
            };
            let attr = attribute(attr.trim().trim_matches('"'))?;
            let filter = if let Some(negated) = value.strip_prefix('-') {
                Filter::Not(Box::new(Filter::Facet {
                    attr,
                    value: negated.to_owned(),
                }))
            } else {
                let value = value.strip_prefix('\\').unwrap_or(value);
                Filter::Facet {
                    attr,
                    value: value.to_owned(),
                }
            };
            any.push(filter);
        }
        if !any.is_empty() {
            all.push(any_of(any));
        }
    }
    let filter = Filter::all(all);
    filter.as_ref().map(check_size).transpose()?;
    Ok(filter)
}

/// `numericFilters`: `["price > 3", ["a = 1", "a = 2"]]`, each a numeric comparison or range.
pub fn numeric_filters(value: &Value) -> Result<Option<Filter>> {
    let groups = list(value, "numericFilters")?;
    let mut all = Vec::new();
    for group in groups {
        let mut any = Vec::new();
        for item in group {
            match parse(item)? {
                Some(f @ (Filter::Numeric { .. } | Filter::Range { .. })) => any.push(f),
                _ => return err(format!("numeric filter {item:?} is not `attribute op number`")),
            }
        }
        if !any.is_empty() {
            all.push(any_of(any));
        }
    }
    let filter = Filter::all(all);
    filter.as_ref().map(check_size).transpose()?;
    Ok(filter)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::json;

    /// `attr:value`, for the tests of this module and of the parser.
    pub(crate) fn facet(attr: &str, value: &str) -> Filter {
        Filter::Facet {
            attr: attr.into(),
            value: value.into(),
        }
    }

    #[test]
    fn facet_and_numeric_filter_arrays() {
        assert_eq!(
            facet_filters(&json!(["type:A", ["t:1", "t:-2"], "x:\\-3"])).unwrap(),
            Some(Filter::And(vec![
                facet("type", "A"),
                Filter::Or(vec![facet("t", "1"), Filter::Not(Box::new(facet("t", "2")))]),
                facet("x", "-3"),
            ]))
        );
        assert_eq!(facet_filters(&json!("a:b")).unwrap(), Some(facet("a", "b")));
        assert_eq!(facet_filters(&json!([])).unwrap(), None);
        assert_eq!(facet_filters(&json!("")).unwrap(), None);
        assert_eq!(numeric_filters(&json!(" ")).unwrap(), None);
        assert!(facet_filters(&json!(["nocolon"])).is_err());
        assert!(facet_filters(&json!([[1]])).is_err());
        assert!(facet_filters(&json!({})).is_err());
        assert_eq!(
            numeric_filters(&json!(["n < 3"])).unwrap(),
            Some(Filter::Numeric {
                attr: "n".into(),
                op: Op::Lt,
                value: 3.0
            })
        );
        assert!(numeric_filters(&json!(["n:3"])).is_err());
    }
}
