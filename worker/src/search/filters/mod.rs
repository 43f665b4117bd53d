//! Algolia's filter syntax (`filters`, `facetFilters`, `numericFilters`) parsed into a small expression tree
//! ([`parse`] in [`parser`]), which the store ([`super::store::Sql::condition`]) binds as SQL.
//!
//! Supported: `attr:value`, `attr:"quoted value"`, `attr:true`, `attr:1 TO 5`, `attr > 3` (`<`, `<=`, `=`, `!=`,
//! `>=`, `>`), `AND`, `OR`, `NOT`, parentheses; `facetFilters` as arrays (outer AND, inner OR, `attr:-value`
//! negates); `numericFilters` likewise. Input length, nesting depth and the number of conditions are bounded.

mod parser;

use serde_json::Value;

pub use self::parser::parse;

/// Longest `filters` string, in bytes.
pub const MAX_FILTER_LEN: usize = 2000;
/// Deepest nesting of parentheses / `NOT`.
pub const MAX_DEPTH: usize = 8;
/// Most conditions in one query (filters, facetFilters and numericFilters together).
pub const MAX_CONDITIONS: usize = 32;
/// Longest attribute name.
pub const MAX_ATTRIBUTE_LEN: usize = 64;

/// A comparison operator of a numeric filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Lt,
    Le,
    Eq,
    Ne,
    Ge,
    Gt,
}

/// A parsed filter.
#[derive(Debug, Clone, PartialEq)]
pub enum Filter {
    And(Vec<Self>),
    Or(Vec<Self>),
    Not(Box<Self>),
    /// `attr:value`: the attribute (or one element of it, when an array) equals `value` as text, case-insensitively.
    Facet {
        attr: String,
        value: String,
    },
    /// `attr op number`.
    Numeric {
        attr: String,
        op: Op,
        value: f64,
    },
    /// `attr:lo TO hi`, bounds included.
    Range {
        attr: String,
        low: f64,
        high: f64,
    },
}

impl Filter {
    /// The number of conditions (leaves).
    pub fn conditions(&self) -> usize {
        match self {
            Self::And(items) | Self::Or(items) => items.iter().map(Self::conditions).sum(),
            Self::Not(inner) => inner.conditions(),
            _ => 1,
        }
    }

    /// The `AND` of several filters (`None` when there are none).
    pub fn all(mut filters: Vec<Self>) -> Option<Self> {
        match filters.len() {
            0 => None,
            1 => filters.pop(),
            _ => Some(Self::And(filters)),
        }
    }
}

/// A filter error: the message of a 400 `INVALID_FILTERS`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterError(pub String);

type Result<T> = std::result::Result<T, FilterError>;

fn err<T>(message: impl Into<String>) -> Result<T> {
    Err(FilterError(message.into()))
}

/// Checks an attribute name: identifiers separated by dots (a nested attribute), at most [`MAX_ATTRIBUTE_LEN`].
pub fn attribute(name: &str) -> Result<String> {
    let valid = !name.is_empty()
        && name.len() <= MAX_ATTRIBUTE_LEN
        && name.split('.').all(|part| {
            part.chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        });
    if valid {
        Ok(name.to_owned())
    } else {
        err(format!(
            "invalid attribute name {name:?} (letters, digits, '_' and '.', at most {MAX_ATTRIBUTE_LEN} bytes)"
        ))
    }
}

/// Fails when a filter has more than [`MAX_CONDITIONS`] conditions.
pub fn check_size(filter: &Filter) -> Result<()> {
    if filter.conditions() > MAX_CONDITIONS {
        return err(format!("more than {MAX_CONDITIONS} filter conditions"));
    }
    Ok(())
}

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

fn any_of(mut items: Vec<Filter>) -> Filter {
    match items.pop() {
        Some(only) if items.is_empty() => only,
        Some(last) => {
            items.push(last);
            Filter::Or(items)
        }
        None => Filter::Or(items),
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
