//! The JSON shape checker: a [`Shape`] table describes a JSON value (as a serde derive writes it) and
//! [`Shape::check`] checks a value against it along the shape, through [`JsonRead`] (`serde_json::Value` here, JS
//! values in the wasm clients). A leaf module: the spec modules (`lsp3`, `metadata`) check documents with it and the
//! wire types (`api::shape`) declare their response shapes with it, without either importing the other.
//!
//! Unknown fields are allowed (a newer service may answer more); every listed field is checked.

use std::borrow::Cow;

use crate::hex::{parse_address, parse_fixed};

/// A JSON shape.
#[derive(Debug, Clone, Copy)]
pub enum Shape {
    /// Any JSON object (`Record<string, unknown>`: LSP3 / LSP4 documents kept as parsed).
    Object,
    /// A string.
    Str,
    /// One of these strings.
    Enum(&'static [&'static str]),
    /// An address (`0x` + 40 hex digits; a mixed-case one must be EIP-55).
    Address,
    /// 32 bytes as `0x` hex.
    Hash,
    /// A non-negative integer that JS numbers hold exactly (≤ 2^53 − 1).
    Uint,
    /// `true` or `false`.
    Bool,
    /// `null` or the inner shape.
    Nullable(&'static Self),
    /// An array of the inner shape.
    Array(&'static Self),
    /// An array of exactly these shapes.
    Tuple(&'static [Self]),
    /// An object with these fields (groups of fields: a `#[serde(flatten)]` member is a group of its own).
    Struct(&'static [&'static [Field]]),
    /// The first of these shapes the value has.
    OneOf(&'static [Self]),
}

/// A field of a [`Shape::Struct`].
#[derive(Debug, Clone, Copy)]
pub struct Field {
    /// The JSON name.
    pub name: &'static str,
    /// Its shape.
    pub shape: Shape,
    /// Whether it may be absent (`skip_serializing_if`); a present field must have the shape.
    pub optional: bool,
}

/// The largest integer a JS number (and so a JSON number read by JavaScript: the npm package, a Durable Object's
/// JSON body, D1's parameters) holds exactly: `Number.MAX_SAFE_INTEGER`, 2^53 − 1. The one definition of it.
pub const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// `n` as an integer when it is a non-negative integer a JS number holds exactly (`0 ..= MAX_SAFE_INTEGER`):
/// also one written with a zero fraction (`5.0`), which JSON Schema counts as an integer.
#[must_use]
pub fn safe_integer(n: f64) -> Option<u64> {
    #[allow(clippy::cast_precision_loss)] // 2^53 − 1 is exact in an f64
    let max = MAX_SAFE_INTEGER as f64;
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // checked: a whole number in range
    (n.fract() == 0.0 && (0.0..=max).contains(&n)).then_some(n as u64)
}

/// Whether `n` is a non-negative integer a JS number holds exactly: what a [`Shape::Uint`] is, and what the wasm
/// bindings take as an integer argument.
#[must_use]
pub fn is_safe_uint(n: f64) -> bool {
    safe_integer(n).is_some()
}

/// A field that is always present.
#[must_use]
pub const fn field(name: &'static str, shape: Shape) -> Field {
    Field {
        name,
        shape,
        optional: false,
    }
}

/// A field that may be absent.
#[must_use]
pub const fn optional(name: &'static str, shape: Shape) -> Field {
    Field {
        name,
        shape,
        optional: true,
    }
}

/// A JSON value as the checker reads it: `serde_json::Value` here, JS values in the wasm clients.
pub trait JsonRead: Sized {
    /// Whether it is `null`.
    fn is_null(&self) -> bool;
    /// It as a boolean.
    fn as_bool(&self) -> Option<bool>;
    /// It as a number.
    fn as_number(&self) -> Option<f64>;
    /// It as a string.
    fn as_text(&self) -> Option<Cow<'_, str>>;
    /// Its items, when it is an array.
    fn items(&self) -> Option<Vec<Self>>;
    /// Whether it is an object (not an array, not `null`).
    fn is_object(&self) -> bool;
    /// An object's field (`None` when absent); only called on objects.
    fn member(&self, name: &str) -> Option<Self>;
}

/// Why a value does not have its shape: where, and what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    /// The path of the value, e.g. `hits[3].chainId` (empty at the top).
    pub path: String,
    /// What it should have been.
    pub expected: &'static str,
}

impl core::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let at = if self.path.is_empty() {
            "the body"
        } else {
            &self.path
        };
        write!(f, "{at}: expected {}", self.expected)
    }
}

impl Shape {
    /// Checks `value` (only along the shape: the recursion is as deep as the shape, whatever the value).
    ///
    /// # Errors
    /// The first place where it differs.
    pub fn check<J: JsonRead>(&self, value: &J) -> Result<(), Mismatch> {
        self.check_at(value, &mut String::new())
    }

    fn check_at<J: JsonRead>(&self, value: &J, path: &mut String) -> Result<(), Mismatch> {
        let fail = |path: &String, expected| {
            Err(Mismatch {
                path: path.clone(),
                expected,
            })
        };
        let text_is = |ok: fn(&str) -> bool| value.as_text().is_some_and(|t| ok(&t));
        match self {
            Self::Object => {
                if !value.is_object() {
                    return fail(path, "an object");
                }
            }
            Self::Str => {
                if value.as_text().is_none() {
                    return fail(path, "a string");
                }
            }
            Self::Enum(names) => {
                if !value.as_text().is_some_and(|t| names.contains(&t.as_ref())) {
                    return fail(path, "one of the documented values");
                }
            }
            Self::Address => {
                if !text_is(|t| parse_address("", t).is_ok()) {
                    return fail(path, "an address");
                }
            }
            Self::Hash => {
                if !text_is(|t| parse_fixed::<32>("", t).is_ok()) {
                    return fail(path, "32 bytes of 0x hex");
                }
            }
            Self::Uint => {
                if !value.as_number().is_some_and(is_safe_uint) {
                    return fail(path, "a non-negative integer");
                }
            }
            Self::Bool => {
                if value.as_bool().is_none() {
                    return fail(path, "a boolean");
                }
            }
            Self::Nullable(inner) => {
                if !value.is_null() {
                    inner.check_at(value, path)?;
                }
            }
            Self::Array(inner) => {
                let Some(items) = value.items() else {
                    return fail(path, "an array");
                };
                for (i, item) in items.iter().enumerate() {
                    let len = path.len();
                    path.push_str(&format!("[{i}]"));
                    inner.check_at(item, path)?;
                    path.truncate(len);
                }
            }
            Self::Tuple(shapes) => {
                let Some(items) = value.items().filter(|i| i.len() == shapes.len()) else {
                    return fail(path, "an array of the documented length");
                };
                for (i, (item, shape)) in items.iter().zip(shapes.iter()).enumerate() {
                    let len = path.len();
                    path.push_str(&format!("[{i}]"));
                    shape.check_at(item, path)?;
                    path.truncate(len);
                }
            }
            Self::Struct(groups) => {
                if !value.is_object() {
                    return fail(path, "an object");
                }
                for f in groups.iter().flat_map(|g| g.iter()) {
                    let len = path.len();
                    if !path.is_empty() {
                        path.push('.');
                    }
                    path.push_str(f.name);
                    match value.member(f.name) {
                        None if f.optional => {}
                        None => return fail(path, "a field"),
                        Some(v) => f.shape.check_at(&v, path)?,
                    }
                    path.truncate(len);
                }
            }
            Self::OneOf(shapes) => {
                // the error of the shape that got furthest would need a score; the last one's is as good
                let mut last = None;
                let len = path.len();
                for shape in *shapes {
                    match shape.check_at(value, path) {
                        Ok(()) => return Ok(()),
                        Err(e) => last = Some(e),
                    }
                    // a failed attempt returned early, leaving its path behind
                    path.truncate(len);
                }
                return Err(last.unwrap_or(Mismatch {
                    path: path.clone(),
                    expected: "a documented shape",
                }));
            }
        }
        Ok(())
    }

    /// The names of every field a [`Shape::Struct`] lists (flattened groups included); empty for other shapes.
    #[must_use]
    pub fn field_names(&self) -> Vec<&'static str> {
        match self {
            Self::Struct(groups) => groups.iter().flat_map(|g| g.iter().map(|f| f.name)).collect(),
            _ => Vec::new(),
        }
    }
}

impl JsonRead for serde_json::Value {
    fn is_null(&self) -> bool {
        self.is_null()
    }
    fn as_bool(&self) -> Option<bool> {
        self.as_bool()
    }
    fn as_number(&self) -> Option<f64> {
        self.as_f64()
    }
    fn as_text(&self) -> Option<Cow<'_, str>> {
        self.as_str().map(Cow::Borrowed)
    }
    fn items(&self) -> Option<Vec<Self>> {
        self.as_array().cloned()
    }
    fn is_object(&self) -> bool {
        self.is_object()
    }
    fn member(&self, name: &str) -> Option<Self> {
        self.get(name).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn safe_integers_end_at_two_to_the_53_minus_one() {
        assert_eq!(safe_integer(0.0), Some(0));
        assert_eq!(safe_integer(5.0), Some(5));
        assert_eq!(safe_integer(9_007_199_254_740_991.0), Some(MAX_SAFE_INTEGER));
        assert_eq!(safe_integer(9_007_199_254_740_992.0), None);
        for bad in [-1.0, 0.5, f64::NAN, f64::INFINITY, 1e300] {
            assert_eq!(safe_integer(bad), None, "{bad}");
        }
        assert!(is_safe_uint(1.0) && !is_safe_uint(-0.5));
    }
}
