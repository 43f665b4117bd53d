//! Algolia's filter syntax (`filters`, `facetFilters`, `numericFilters`) parsed into a small expression tree, and
//! that tree turned into SQL over `json_extract(record, …)` with every attribute path and value a bound parameter.
//!
//! Supported: `attr:value`, `attr:"quoted value"`, `attr:true`, `attr:1 TO 5`, `attr > 3` (`<`, `<=`, `=`, `!=`,
//! `>=`, `>`), `AND`, `OR`, `NOT`, parentheses; `facetFilters` as arrays (outer AND, inner OR, `attr:-value`
//! negates); `numericFilters` likewise. Input length, nesting depth and the number of conditions are bounded.

use serde_json::Value;

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

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Open,
    Close,
    Colon,
    Cmp(Op),
    /// A bare word (keywords `AND`/`OR`/`NOT`/`TO` are bare words).
    Word(String),
    Quoted(String),
}

fn tokenize(input: &str) -> Result<Vec<(usize, Token)>> {
    if input.len() > MAX_FILTER_LEN {
        return err(format!("filters is longer than {MAX_FILTER_LEN} bytes"));
    }
    let mut tokens = Vec::new();
    let mut chars = input.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let token = match c {
            c if c.is_whitespace() => continue,
            '(' => Token::Open,
            ')' => Token::Close,
            ':' => Token::Colon,
            '<' | '>' | '=' | '!' => {
                let equals = chars.next_if(|(_, n)| *n == '=').is_some();
                Token::Cmp(match (c, equals) {
                    ('<', false) => Op::Lt,
                    ('<', true) => Op::Le,
                    ('>', false) => Op::Gt,
                    ('>', true) => Op::Ge,
                    ('=', _) => Op::Eq,
                    ('!', true) => Op::Ne,
                    _ => return err(format!("unexpected '!' at {at}")),
                })
            }
            '"' | '\'' => {
                let mut text = String::new();
                loop {
                    match chars.next() {
                        None => return err(format!("unterminated quoted string at {at}")),
                        Some((_, '\\')) => match chars.next() {
                            Some((_, escaped)) => text.push(escaped),
                            None => return err(format!("unterminated quoted string at {at}")),
                        },
                        Some((_, q)) if q == c => break,
                        Some((_, other)) => text.push(other),
                    }
                }
                Token::Quoted(text)
            }
            _ => {
                let mut text = String::from(c);
                while let Some((_, n)) =
                    chars.next_if(|(_, n)| !n.is_whitespace() && !"():<>=!\"'".contains(*n))
                {
                    text.push(n);
                }
                Token::Word(text)
            }
        };
        tokens.push((at, token));
    }
    Ok(tokens)
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

fn number(text: &str) -> Result<f64> {
    text.parse::<f64>()
        .ok()
        .filter(|n| n.is_finite())
        .map_or_else(|| err(format!("{text:?} is not a number")), Ok)
}

struct Parser {
    tokens: Vec<(usize, Token)>,
    at: usize,
    end: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at).map(|(_, t)| t)
    }

    fn position(&self) -> usize {
        self.tokens.get(self.at).map_or(self.end, |(p, _)| *p)
    }

    fn next(&mut self) -> Option<Token> {
        let token = self.tokens.get(self.at).map(|(_, t)| t.clone());
        self.at += 1;
        token
    }

    fn keyword(&mut self, word: &str) -> bool {
        if matches!(self.peek(), Some(Token::Word(w)) if w == word) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn or(&mut self, depth: usize) -> Result<Filter> {
        let mut items = vec![self.and(depth)?];
        while self.keyword("OR") {
            items.push(self.and(depth)?);
        }
        Ok(any_of(items))
    }

    fn and(&mut self, depth: usize) -> Result<Filter> {
        let mut items = vec![self.unary(depth)?];
        while self.keyword("AND") {
            items.push(self.unary(depth)?);
        }
        Ok(match items.pop() {
            Some(only) if items.is_empty() => only,
            Some(last) => {
                items.push(last);
                Filter::And(items)
            }
            None => Filter::And(items),
        })
    }

    fn unary(&mut self, depth: usize) -> Result<Filter> {
        if depth >= MAX_DEPTH {
            return err(format!("filters nest deeper than {MAX_DEPTH} levels"));
        }
        if self.keyword("NOT") {
            return Ok(Filter::Not(Box::new(self.unary(depth + 1)?)));
        }
        if self.peek() == Some(&Token::Open) {
            self.at += 1;
            let inner = self.or(depth + 1)?;
            return match self.next() {
                Some(Token::Close) => Ok(inner),
                _ => err(format!("expected ')' at {}", self.position())),
            };
        }
        self.comparison()
    }

    fn comparison(&mut self) -> Result<Filter> {
        let at = self.position();
        let attr = match self.next() {
            Some(Token::Word(w) | Token::Quoted(w)) => attribute(&w)?,
            _ => return err(format!("expected an attribute at {at}")),
        };
        match self.next() {
            Some(Token::Colon) => {
                let at = self.position();
                let value = match self.next() {
                    Some(Token::Word(w) | Token::Quoted(w)) => w,
                    _ => return err(format!("expected a value after '{attr}:' at {at}")),
                };
                if self.keyword("TO") {
                    let at = self.position();
                    let high = match self.next() {
                        Some(Token::Word(w) | Token::Quoted(w)) => number(&w)?,
                        _ => return err(format!("expected a number after TO at {at}")),
                    };
                    return Ok(Filter::Range {
                        attr,
                        low: number(&value)?,
                        high,
                    });
                }
                Ok(Filter::Facet { attr, value })
            }
            Some(Token::Cmp(op)) => {
                let at = self.position();
                match self.next() {
                    Some(Token::Word(w) | Token::Quoted(w)) => Ok(Filter::Numeric {
                        attr,
                        op,
                        value: number(&w)?,
                    }),
                    _ => err(format!("expected a number at {at}")),
                }
            }
            _ => err(format!("expected ':' or a comparison after '{attr}' at {at}")),
        }
    }
}

/// Parses a `filters` string (`None` when blank).
pub fn parse(input: &str) -> Result<Option<Filter>> {
    let tokens = tokenize(input)?;
    if tokens.is_empty() {
        return Ok(None);
    }
    let mut parser = Parser {
        tokens,
        at: 0,
        end: input.len(),
    };
    let filter = parser.or(0)?;
    if parser.at < parser.tokens.len() {
        return err(format!(
            "unexpected input at {} (combine conditions with AND / OR)",
            parser.position()
        ));
    }
    check_size(&filter)?;
    Ok(Some(filter))
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
    use serde_json::json;

    fn facet(attr: &str, value: &str) -> Filter {
        Filter::Facet {
            attr: attr.into(),
            value: value.into(),
        }
    }

    #[test]
    fn parses_algolia_syntax() {
        assert_eq!(parse("  ").unwrap(), None);
        assert_eq!(
            parse("type:LSP7DigitalAsset").unwrap(),
            Some(facet("type", "LSP7DigitalAsset"))
        );
        assert_eq!(
            parse("NOT hasTokenName:true AND (type:\"LSP8 Identifiable\" OR LSP4TokenType:1)").unwrap(),
            Some(Filter::And(vec![
                Filter::Not(Box::new(facet("hasTokenName", "true"))),
                Filter::Or(vec![
                    facet("type", "LSP8 Identifiable"),
                    facet("LSP4TokenType", "1")
                ]),
            ]))
        );
        assert_eq!(
            parse("supply >= 10 AND block:1 TO 5").unwrap(),
            Some(Filter::And(vec![
                Filter::Numeric {
                    attr: "supply".into(),
                    op: Op::Ge,
                    value: 10.0
                },
                Filter::Range {
                    attr: "block".into(),
                    low: 1.0,
                    high: 5.0
                },
            ]))
        );
        assert_eq!(parse("a:'it\\'s'").unwrap(), Some(facet("a", "it's")));
        for bad in [
            "type",
            "type:",
            "type:a b:c",
            "(type:a",
            "type:a)",
            "a > x",
            "a:1 TO x",
            "1a:b",
            "a-b:c",
            "a:\"open",
            "a ! 3",
            "AND",
            "a:b OR",
        ] {
            assert!(parse(bad).is_err(), "{bad} parsed");
        }
        let deep = format!("{}a:b{}", "(".repeat(MAX_DEPTH + 1), ")".repeat(MAX_DEPTH + 1));
        assert!(parse(&deep).unwrap_err().0.contains("deeper"));
        let many = vec!["a:b"; MAX_CONDITIONS + 1].join(" OR ");
        assert!(parse(&many).unwrap_err().0.contains("conditions"));
        assert!(parse(&"a".repeat(MAX_FILTER_LEN + 1)).is_err());
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
                proptest::prop_assert!(filter.conditions() <= MAX_CONDITIONS);
                let mut sql = Sql::default();
                let text = sql.condition(&filter);
                // quotes and paths of the input never reach the SQL text: they are bound
                proptest::prop_assert!(!text.contains('"') && !text.contains('$'));
                proptest::prop_assert!(sql.args.len() <= 3 * MAX_CONDITIONS);
            }
        }

        #[test]
        fn generated_filters_round_trip(
            attrs in proptest::collection::vec("[a-z][a-zA-Z0-9_]{0,10}", 1..6),
            values in proptest::collection::vec("[^\"\\\\]{0,12}", 1..6),
            ors in proptest::collection::vec(proptest::bool::ANY, 6),
        ) {
            // attr:"value" joined by AND / OR parses back into the same conditions
            let mut text = String::new();
            let n = attrs.len().min(values.len());
            for i in 0..n {
                if i > 0 {
                    text.push_str(if ors[i] { " OR " } else { " AND " });
                }
                text.push_str(&format!("{}:\"{}\"", attrs[i], values[i]));
            }
            let filter = parse(&text).unwrap().unwrap();
            proptest::prop_assert_eq!(filter.conditions(), n);
            let mut leaves = Vec::new();
            fn collect(f: &Filter, out: &mut Vec<(String, String)>) {
                match f {
                    Filter::And(v) | Filter::Or(v) => v.iter().for_each(|f| collect(f, out)),
                    Filter::Facet { attr, value } => out.push((attr.clone(), value.clone())),
                    _ => {}
                }
            }
            collect(&filter, &mut leaves);
            let expected: Vec<(String, String)> = (0..n).map(|i| (attrs[i].clone(), values[i].clone())).collect();
            proptest::prop_assert_eq!(leaves, expected);
        }
    }
}
