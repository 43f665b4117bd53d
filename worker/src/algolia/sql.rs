//! A parsed [`Filter`] turned into SQL over `json_extract(record, …)`, with every attribute path and value a bound
//! parameter.

use super::filters::{Filter, Op};

impl Op {
    fn sql(self) -> &'static str {
        match self {
            Self::Lt => "<",
            Self::Le => "<=",
            Self::Eq => "=",
            Self::Ne => "!=",
            Self::Ge => ">=",
            Self::Gt => ">",
        }
    }
}

/// A bound SQL argument.
#[derive(Debug, Clone, PartialEq)]
pub enum Arg {
    Text(String),
    Number(f64),
}

/// SQL text with numbered parameters (`?1`, `?2`, …) and their arguments.
#[derive(Debug, Default, Clone)]
pub struct Sql {
    pub args: Vec<Arg>,
}

impl Sql {
    /// Adds an argument; answers its placeholder.
    pub fn arg(&mut self, arg: Arg) -> String {
        if let Some(i) = self.args.iter().position(|a| *a == arg) {
            return format!("?{}", i + 1);
        }
        self.args.push(arg);
        format!("?{}", self.args.len())
    }

    /// The placeholder of an attribute's JSON path (`$.attr`).
    pub fn path(&mut self, attr: &str) -> String {
        self.arg(Arg::Text(format!("$.{attr}")))
    }

    /// The SQL condition of a filter over the `record` column of the table aliased `r`. Attribute values that are
    /// arrays match when one element does; a record without the attribute matches no condition (and so every `NOT`).
    pub fn condition(&mut self, filter: &Filter) -> String {
        match filter {
            Filter::And(items) | Filter::Or(items) => {
                let joiner = if matches!(filter, Filter::And(_)) {
                    " AND "
                } else {
                    " OR "
                };
                let parts: Vec<String> = items.iter().map(|f| self.condition(f)).collect();
                format!("({})", parts.join(joiner))
            }
            Filter::Not(inner) => format!("(NOT {})", self.condition(inner)),
            Filter::Facet { attr, value } => {
                let path = self.path(attr);
                let value = self.arg(Arg::Text(value.clone()));
                format!(
                    "EXISTS (SELECT 1 FROM json_each(r.record, {path}) j WHERE {FACET_VALUE} = {value} COLLATE NOCASE)"
                )
            }
            Filter::Numeric { attr, op, value } => {
                let path = self.path(attr);
                let value = self.arg(Arg::Number(*value));
                format!(
                    "EXISTS (SELECT 1 FROM json_each(r.record, {path}) j WHERE {NUMERIC} AND j.value {} {value})",
                    op.sql()
                )
            }
            Filter::Range { attr, low, high } => {
                let path = self.path(attr);
                let low = self.arg(Arg::Number(*low));
                let high = self.arg(Arg::Number(*high));
                format!(
                    "EXISTS (SELECT 1 FROM json_each(r.record, {path}) j WHERE {NUMERIC} AND j.value BETWEEN {low} AND {high})"
                )
            }
        }
    }
}

/// A scalar element of `json_each` as facet text: `true` / `false` for booleans, else the value as text (`NULL`
/// for nulls, objects and arrays, which match nothing).
pub const FACET_VALUE: &str = "(CASE j.type WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' \
WHEN 'text' THEN j.value WHEN 'integer' THEN CAST(j.value AS TEXT) WHEN 'real' THEN CAST(j.value AS TEXT) END)";

/// A `json_each` element usable in a numeric comparison (booleans count as 0 / 1, as in Algolia).
const NUMERIC: &str = "j.type IN ('integer', 'real', 'true', 'false')";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algolia::filters::parse;

    #[test]
    fn sql_binds_every_value() {
        let mut sql = Sql::default();
        let filter = parse("type:\"x') OR 1=1 --\" AND NOT type:y AND n > 2")
            .unwrap()
            .unwrap();
        let text = sql.condition(&filter);
        assert!(!text.contains("OR 1=1"));
        assert!(!text.contains("$.type"));
        // the path of `type` is bound once and reused
        assert_eq!(
            sql.args,
            vec![
                Arg::Text("$.type".into()),
                Arg::Text("x') OR 1=1 --".into()),
                Arg::Text("y".into()),
                Arg::Text("$.n".into()),
                Arg::Number(2.0),
            ]
        );
        assert_eq!(text.matches("?1").count(), 2);
    }

    #[cfg(not(target_arch = "wasm32"))]
    proptest::proptest! {
        #[test]
        fn parser_never_panics_and_stays_bounded(input in "[a-zA-Z0-9_:()<>=! \"'.\\-]{0,120}|\\PC{0,60}") {
            if let Ok(Some(filter)) = parse(&input) {
                proptest::prop_assert!(filter.conditions() <= crate::algolia::filters::MAX_CONDITIONS);
                let mut sql = Sql::default();
                let text = sql.condition(&filter);
                // quotes and paths of the input never reach the SQL text: they are bound
                proptest::prop_assert!(!text.contains('"') && !text.contains('$'));
                proptest::prop_assert!(sql.args.len() <= 3 * crate::algolia::filters::MAX_CONDITIONS);
            }
        }
    }
}
