//! The `filters` string: tokens, then a recursive-descent parser (`OR` over `AND` over `NOT` over comparisons),
//! bounded in length, depth and conditions.

use super::tree::{Filter, MAX_DEPTH, MAX_FILTER_LEN, Op, Result, any_of, attribute, check_size, err};

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::filters::{tests::facet, tree::MAX_CONDITIONS};

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

    #[cfg(not(target_arch = "wasm32"))]
    proptest::proptest! {
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
