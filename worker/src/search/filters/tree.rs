//! The filter expression tree, its bounds and its errors (what the parser builds and the store binds).

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

pub(super) type Result<T> = std::result::Result<T, FilterError>;

pub(super) fn err<T>(message: impl Into<String>) -> Result<T> {
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

pub(super) fn any_of(mut items: Vec<Filter>) -> Filter {
    match items.pop() {
        Some(only) if items.is_empty() => only,
        Some(last) => {
            items.push(last);
            Filter::Or(items)
        }
        None => Filter::Or(items),
    }
}
