//! Algolia search parameters, from JSON fields (algoliasearch v5 sends these), from the url-encoded `params`
//! string (v4 clients and InstantSearch's legacy shape; it overrides the fields) or from a URL query (`GET`).
//! JSON fields are checked strictly (400 on a wrong type or range); in text form numbers that do not parse are
//! ignored and numbers out of range are clamped, as the existing route documented. Unknown parameters are ignored.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::typos::{TypoMode, TypoSettings};
use crate::{
    error::{ApiError, ApiResult, Code},
    search::filters::{self, Filter, FilterError},
};

/// Largest `page`.
pub const MAX_PAGE: u64 = 1000;
/// Largest `hitsPerPage` (Algolia's limit).
pub const MAX_HITS_PER_PAGE: u64 = 1000;
/// Largest `length` (Algolia's limit, as `hitsPerPage`).
pub const MAX_LENGTH: u64 = 1000;
/// Largest `offset` accepted (any offset past [`PAGINATION_LIMITED_TO`] answers no hits, as Algolia's).
pub const MAX_OFFSET: u64 = u32::MAX as u64;
/// Algolia's `paginationLimitedTo`: only the first 1,000 hits of a search can be paged to (deeper pages answer no
/// hits, as Algolia's), so that no page asks the store to skip more rows than that.
pub const PAGINATION_LIMITED_TO: u64 = 1000;
/// Hits per lookup token: a query's page costs one token per this many hits it asks ([`Params::cost`]).
pub const HITS_PER_TOKEN: u64 = 100;
/// Most attributes in `facets`.
pub const MAX_FACETS: usize = 10;
/// Largest `maxValuesPerFacet`.
pub const MAX_VALUES_PER_FACET: u64 = 1000;
/// Largest `minWordSizefor1Typo` / `minWordSizefor2Typos`.
pub const MAX_WORD_SIZE_FOR_TYPOS: u64 = 100;
/// Longest highlight tag.
const MAX_TAG_LEN: usize = 100;

/// The parameters this API understands, in the order they are echoed.
const KNOWN: &[&str] = &[
    "query",
    "page",
    "hitsPerPage",
    "offset",
    "length",
    "filters",
    "facetFilters",
    "numericFilters",
    "facets",
    "maxValuesPerFacet",
    "attributesToRetrieve",
    "attributesToHighlight",
    "highlightPreTag",
    "highlightPostTag",
    "typoTolerance",
    "minWordSizefor1Typo",
    "minWordSizefor2Typos",
    "getRankingInfo",
];

/// Parsed search parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct Params {
    pub query: String,
    pub page: u64,
    pub hits_per_page: u64,
    /// `offset`: with it, `page` is ignored and `length` hits (else `hitsPerPage`) from this position are answered.
    pub offset: Option<u64>,
    /// `length`: the hits answered from `offset` (ignored without it).
    pub length: Option<u64>,
    pub filter: Option<Filter>,
    pub facets: Vec<String>,
    pub max_values_per_facet: u64,
    pub attributes_to_retrieve: Option<Vec<String>>,
    pub attributes_to_highlight: Option<Vec<String>>,
    pub pre_tag: String,
    pub post_tag: String,
    /// `typoTolerance`, `minWordSizefor1Typo`, `minWordSizefor2Typos`.
    pub typos: TypoSettings,
    /// `getRankingInfo`: hits carry `_rankingInfo`.
    pub ranking_info: bool,
    /// The known parameters as given (text form), echoed in `params` and kept in browse cursors.
    given: BTreeMap<String, String>,
}

fn invalid(name: &str, message: impl Into<String>) -> ApiError {
    ApiError::new(Code::InvalidParameter, format!("{name}: {}", message.into()))
}

fn filter_error(name: &str) -> impl Fn(FilterError) -> ApiError + '_ {
    move |e| ApiError::new(Code::InvalidFilters, format!("{name}: {}", e.0))
}

/// The parameters whose text form (`params`, URL query) may be a JSON array: lists of filters or attributes.
const LIST_PARAMS: &[&str] = &[
    "facetFilters",
    "numericFilters",
    "facets",
    "attributesToRetrieve",
    "attributesToHighlight",
];

/// A parameter value in text form (`params`, URL query) as JSON: a list parameter's array (or object) is JSON text;
/// every other value stays the string it is — a `query` a user typed starting with `[` or `{` is a query.
fn from_text(name: &str, text: &str) -> ApiResult<Value> {
    let trimmed = text.trim_start();
    if LIST_PARAMS.contains(&name) && (trimmed.starts_with('[') || trimmed.starts_with('{')) {
        serde_json::from_str(trimmed).map_err(|e| invalid(name, format!("not valid JSON: {e}")))
    } else {
        Ok(Value::String(text.to_owned()))
    }
}

/// A list of attribute names: a JSON array of strings, or comma-separated text.
fn attributes(name: &str, value: &Value) -> ApiResult<Vec<String>> {
    let names: Vec<String> = match value {
        Value::String(s) => s
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect(),
        Value::Array(items) => items
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| invalid(name, "must hold strings"))
            })
            .collect::<ApiResult<_>>()?,
        _ => return Err(invalid(name, "must be an array of attribute names")),
    };
    if names.len() > 100 {
        return Err(invalid(name, "at most 100 attributes"));
    }
    names
        .into_iter()
        .map(|n| {
            if n == "*" {
                Ok(n)
            } else {
                filters::attribute(&n).map_err(|e| invalid(name, e.0))
            }
        })
        .collect()
}

impl Default for Params {
    fn default() -> Self {
        Self {
            query: String::new(),
            page: 0,
            hits_per_page: 20,
            offset: None,
            length: None,
            filter: None,
            facets: Vec::new(),
            max_values_per_facet: 100,
            attributes_to_retrieve: None,
            attributes_to_highlight: None,
            pre_tag: "<em>".into(),
            post_tag: "</em>".into(),
            typos: TypoSettings::default(),
            ranking_info: false,
            given: BTreeMap::new(),
        }
    }
}

struct Builder {
    params: Params,
    /// Numbers in text form that do not parse are ignored and clamped (the `params` string), else 400.
    lenient: bool,
    filters: Option<Filter>,
    facet_filters: Option<Filter>,
    numeric_filters: Option<Filter>,
}

impl Builder {
    /// Applies one parameter; `text` when it came in text form (lenient numbers).
    fn set(&mut self, name: &str, value: &Value, text: bool) -> ApiResult<()> {
        if !KNOWN.contains(&name) {
            return Ok(());
        }
        let lenient = self.lenient;
        let p = &mut self.params;
        let string = || match value {
            Value::String(s) => Ok(s.clone()),
            _ => Err(invalid(name, "must be a string")),
        };
        let number = |max: u64, current: u64| -> ApiResult<u64> {
            match value {
                Value::String(s) if text && lenient => {
                    Ok(s.trim().parse::<u64>().map_or(current, |n| n.min(max)))
                }
                Value::String(s) if text => s
                    .trim()
                    .parse::<u64>()
                    .ok()
                    .filter(|n| *n <= max)
                    .ok_or_else(|| invalid(name, format!("must be an integer from 0 to {max}"))),
                v => crate::plumbing::integer(v)
                    .filter(|n| *n <= max)
                    .ok_or_else(|| invalid(name, format!("must be an integer from 0 to {max}"))),
            }
        };
        match name {
            "query" => p.query = string()?,
            "page" => p.page = number(MAX_PAGE, p.page)?,
            "hitsPerPage" => p.hits_per_page = number(MAX_HITS_PER_PAGE, p.hits_per_page)?,
            // a number in text form that does not parse leaves the parameter as it was (unset: `u64::MAX` is
            // never a value, both are clamped far below it)
            "offset" => {
                p.offset = Some(number(MAX_OFFSET, u64::MAX)?)
                    .filter(|n| *n != u64::MAX)
                    .or(p.offset)
            }
            "length" => {
                p.length = Some(number(MAX_LENGTH, u64::MAX)?)
                    .filter(|n| *n != u64::MAX)
                    .or(p.length)
            }
            "maxValuesPerFacet" => {
                p.max_values_per_facet = number(MAX_VALUES_PER_FACET, p.max_values_per_facet)?
            }
            "filters" => self.filters = filters::parse(&string()?).map_err(filter_error(name))?,
            "facetFilters" => {
                self.facet_filters = filters::facet_filters(value).map_err(filter_error(name))?
            }
            "numericFilters" => {
                self.numeric_filters = filters::numeric_filters(value).map_err(filter_error(name))?;
            }
            "facets" => {
                let mut facets = attributes(name, value)?;
                if facets.iter().any(|f| f == "*") {
                    facets = DEFAULT_FACETS.iter().map(|s| (*s).to_owned()).collect();
                }
                if facets.len() > MAX_FACETS {
                    return Err(invalid(name, format!("at most {MAX_FACETS} facets")));
                }
                facets.dedup();
                p.facets = facets;
            }
            "typoTolerance" => {
                p.typos.mode = match value {
                    Value::Bool(true) => TypoMode::On,
                    Value::Bool(false) => TypoMode::Off,
                    Value::String(s) => TypoMode::parse(s.trim())
                        .ok_or_else(|| invalid(name, "must be true, false, \"min\" or \"strict\""))?,
                    _ => return Err(invalid(name, "must be true, false, \"min\" or \"strict\"")),
                }
            }
            "minWordSizefor1Typo" => {
                let n = number(MAX_WORD_SIZE_FOR_TYPOS, p.typos.min_word_size_for_1_typo.into())?;
                p.typos.min_word_size_for_1_typo = u32::try_from(n).unwrap_or(u32::MAX);
            }
            "minWordSizefor2Typos" => {
                let n = number(MAX_WORD_SIZE_FOR_TYPOS, p.typos.min_word_size_for_2_typos.into())?;
                p.typos.min_word_size_for_2_typos = u32::try_from(n).unwrap_or(u32::MAX);
            }
            "getRankingInfo" => {
                p.ranking_info = match value {
                    Value::Bool(b) => *b,
                    Value::String(s) if matches!(s.trim(), "true" | "1") => true,
                    Value::String(s) if matches!(s.trim(), "false" | "0") => false,
                    Value::Number(n) if n.as_u64() == Some(1) => true,
                    Value::Number(n) if n.as_u64() == Some(0) => false,
                    _ => return Err(invalid(name, "must be a boolean")),
                }
            }
            "attributesToRetrieve" => p.attributes_to_retrieve = Some(attributes(name, value)?),
            "attributesToHighlight" => p.attributes_to_highlight = Some(attributes(name, value)?),
            "highlightPreTag" | "highlightPostTag" => {
                let tag = string()?;
                if tag.len() > MAX_TAG_LEN {
                    return Err(invalid(name, format!("at most {MAX_TAG_LEN} bytes")));
                }
                if name == "highlightPreTag" {
                    p.pre_tag = tag;
                } else {
                    p.post_tag = tag;
                }
            }
            _ => {}
        }
        let text_form = match value {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        p.given.insert(name.to_owned(), text_form);
        Ok(())
    }

    fn finish(self) -> ApiResult<Params> {
        let mut params = self.params;
        let all: Vec<Filter> = [self.filters, self.facet_filters, self.numeric_filters]
            .into_iter()
            .flatten()
            .collect();
        params.filter = Filter::all(all);
        if let Some(f) = &params.filter {
            filters::check_size(f).map_err(filter_error("filters"))?;
        }
        Ok(params)
    }
}

/// The attributes of `facets: ["*"]`: the ones clients filter by.
pub const DEFAULT_FACETS: &[&str] = &[
    "type",
    "kind",
    "LSP4TokenType",
    "hasTokenName",
    "hasTokenSymbol",
    "hasTokenType",
    "hasAssetImage",
    "hasIconImage",
    "hasProfileName",
    "hasProfileDescription",
];

/// The window of the first [`PAGINATION_LIMITED_TO`] hits that page `page` of `per` hits covers: `(limit, offset)`,
/// `None` for a page past it (or of no hits).
pub fn pagination_window(page: u64, per: u64) -> Option<(u64, u64)> {
    Window {
        start: page.saturating_mul(per),
        count: per,
        by_offset: false,
    }
    .reachable()
}

/// Which hits of a search are answered: Algolia's two ways of paging.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// The position of the first hit answered.
    pub start: u64,
    /// How many hits are answered from there (before [`PAGINATION_LIMITED_TO`] cuts it).
    pub count: u64,
    /// Asked as `offset`/`length` (answered with `offset` and `length`), not as `page`/`hitsPerPage`.
    pub by_offset: bool,
}

impl Window {
    /// The part of the first [`PAGINATION_LIMITED_TO`] hits it covers: `(limit, offset)`, `None` when nothing.
    pub fn reachable(self) -> Option<(u64, u64)> {
        (self.count > 0 && self.start < PAGINATION_LIMITED_TO)
            .then(|| (self.count.min(PAGINATION_LIMITED_TO - self.start), self.start))
    }

    /// The pages of `count` hits over the first [`PAGINATION_LIMITED_TO`] of `nb_hits` (0 for pages of nothing).
    pub fn nb_pages(self, nb_hits: u64) -> u64 {
        if self.count == 0 {
            0
        } else {
            nb_hits.min(PAGINATION_LIMITED_TO).div_ceil(self.count)
        }
    }
}

impl Params {
    /// The hits this search answers: `offset` and `length` (default `hitsPerPage`) when `offset` is given — `page`
    /// is then ignored —, else page `page` of `hitsPerPage` (Algolia's rules; `length` without `offset` is ignored).
    pub fn window(&self) -> Window {
        match self.offset {
            Some(start) => Window {
                start,
                count: self.length.unwrap_or(self.hits_per_page),
                by_offset: true,
            },
            None => Window {
                start: self.page.saturating_mul(self.hits_per_page),
                count: self.hits_per_page,
                by_offset: false,
            },
        }
    }

    /// The lookup tokens this query costs, in proportion to the work it asks of the store and the Worker: one for the
    /// query, one more per [`HITS_PER_TOKEN`] hits of its page past the first (each hit a record read, highlighted and
    /// sent), one more per facet (each counted over every match). 1 for an ordinary query; a page of 1,000 hits
    /// with ten facets, the heaviest, 20.
    pub fn cost(&self) -> u32 {
        let hits = self.window().count.saturating_sub(1) / HITS_PER_TOKEN;
        let facets = self.facets.len() as u64;
        u32::try_from(1 + hits + facets).unwrap_or(u32::MAX)
    }

    fn builder(hits_per_page: u64) -> Builder {
        Builder {
            lenient: true,
            params: Self {
                hits_per_page,
                ..Self::default()
            },
            filters: None,
            facet_filters: None,
            numeric_filters: None,
        }
    }

    /// From a JSON body (or one request of a multi-index call): fields, then the `params` string over them.
    pub fn from_body(body: &Map<String, Value>) -> ApiResult<Self> {
        Self::from_body_with(body, 20)
    }

    /// [`Params::from_body`] with another default `hitsPerPage` (browse: 1000).
    pub fn from_body_with(body: &Map<String, Value>, hits_per_page: u64) -> ApiResult<Self> {
        let mut builder = Self::builder(hits_per_page);
        for (name, value) in body {
            if name != "params" {
                builder.set(name, value, false)?;
            }
        }
        match body.get("params") {
            None | Some(Value::Null) => {}
            Some(Value::String(params)) => {
                for (name, value) in url::form_urlencoded::parse(params.as_bytes()) {
                    builder.set(&name, &from_text(&name, &value)?, true)?;
                }
            }
            Some(_) => return Err(invalid("params", "must be a url-encoded string")),
        }
        builder.finish()
    }

    /// From text pairs (a URL query).
    pub fn from_pairs<K: AsRef<str>, V: AsRef<str>>(pairs: impl Iterator<Item = (K, V)>) -> ApiResult<Self> {
        let mut builder = Self::builder(20);
        builder.lenient = false;
        for (name, value) in pairs {
            let name = name.as_ref();
            builder.set(name, &from_text(name, value.as_ref())?, true)?;
        }
        builder.finish()
    }

    /// The parameters of a plain search (`/v1/:chainId/search`): a query and a page.
    pub fn for_query(query: &str, page: u64, hits_per_page: u64) -> Self {
        Self {
            query: query.to_owned(),
            page,
            hits_per_page,
            ..Self::default()
        }
    }

    /// The given parameters, url-encoded (Algolia's `params` in answers).
    pub fn encoded(&self) -> String {
        let mut out = url::form_urlencoded::Serializer::new(String::new());
        for name in KNOWN {
            if let Some(value) = self.given.get(*name) {
                out.append_pair(name, value);
            }
        }
        out.finish()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use serde_json::json;

    use super::*;

    pub(crate) fn body(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    #[test]
    fn the_cost_of_a_query_grows_with_its_page_and_facets() {
        let cost = |v: Value| Params::from_body(&body(v)).unwrap().cost();
        assert_eq!(cost(json!({})), 1);
        assert_eq!(cost(json!({"hitsPerPage": 0})), 1);
        assert_eq!(cost(json!({"hitsPerPage": 100})), 1);
        assert_eq!(cost(json!({"hitsPerPage": 101})), 2);
        assert_eq!(cost(json!({"hitsPerPage": 600})), 6);
        assert_eq!(cost(json!({"hitsPerPage": 1000})), 10);
        assert_eq!(cost(json!({"facets": ["type", "kind"]})), 3);
        // the heaviest query Algolia accepts: 1,000 hits, ten facets
        assert_eq!(cost(json!({"hitsPerPage": 1000, "facets": ["*"]})), 20);
        assert_eq!(
            cost(json!({"params": "hitsPerPage=1000&facets=%5B%22*%22%5D"})),
            20
        );
    }

    #[test]
    fn pages_reach_the_first_thousand_hits_only() {
        assert_eq!(pagination_window(0, 20), Some((20, 0)));
        assert_eq!(pagination_window(49, 20), Some((20, 980)));
        assert_eq!(pagination_window(50, 20), None);
        assert_eq!(pagination_window(0, 1000), Some((1000, 0)));
        assert_eq!(pagination_window(1, 1000), None);
        // a page across the limit is cut at it
        assert_eq!(pagination_window(1, 600), Some((400, 600)));
        assert_eq!(pagination_window(3, 300), Some((100, 900)));
        assert_eq!(pagination_window(0, 0), None);
        assert_eq!(pagination_window(MAX_PAGE, MAX_HITS_PER_PAGE), None);
        assert_eq!(pagination_window(u64::MAX, u64::MAX), None);
    }

    #[test]
    fn offset_and_length_page_as_algolia_does() {
        let window = |v: Value| Params::from_body(&body(v)).map(|p| p.window());
        let at = |start, count, by_offset| {
            Ok(Window {
                start,
                count,
                by_offset,
            })
        };
        // offset wins over page; length defaults to hitsPerPage
        assert_eq!(
            window(json!({"page": 3, "offset": 5, "length": 7})),
            at(5, 7, true)
        );
        assert_eq!(window(json!({"offset": 5, "hitsPerPage": 9})), at(5, 9, true));
        // length without offset is ignored
        assert_eq!(
            window(json!({"length": 7, "page": 2, "hitsPerPage": 10})),
            at(20, 10, false)
        );
        // the params string, leniently, and the limits
        assert_eq!(
            window(json!({"params": "offset=40&length=2000"})),
            at(40, MAX_LENGTH, true)
        );
        assert_eq!(
            window(json!({"params": "offset=x&length=3", "hitsPerPage": 4})),
            at(0, 4, false)
        );
        assert!(window(json!({"length": 1001, "offset": 0})).is_err());
        assert!(window(json!({"offset": -1})).is_err());
        // the first 1,000 hits only: an offset past them answers none, a length across them is cut
        let reach = |start, count| {
            Window {
                start,
                count,
                by_offset: true,
            }
            .reachable()
        };
        assert_eq!(reach(990, 50), Some((10, 990)));
        assert_eq!(reach(1000, 5), None);
        assert_eq!(reach(3, 0), None);
        assert_eq!(at(0, 7, true).map(|w| w.nb_pages(50)), Ok(8));
        // the cost follows the hits answered
        let cost = |v: Value| Params::from_body(&body(v)).map(|p| p.cost()).unwrap_or(0);
        assert_eq!(cost(json!({"offset": 0, "length": 1000})), 10);
        assert_eq!(cost(json!({"length": 1000})), 1);
    }

    #[test]
    fn fields_and_params_string() {
        let p = Params::from_body(&body(json!({
            "query": "a", "page": 2, "params": "query=b%20c&hitsPerPage=5&page=x"
        })))
        .unwrap();
        assert_eq!((p.query.as_str(), p.page, p.hits_per_page), ("b c", 2, 5));
        let huge =
            Params::from_body(&body(json!({ "params": "page=99999999&hitsPerPage=99999999" }))).unwrap();
        assert_eq!((huge.page, huge.hits_per_page), (MAX_PAGE, MAX_HITS_PER_PAGE));
        for bad in [
            json!({ "query": 1 }),
            json!({ "hitsPerPage": 1001 }),
            json!({ "page": -1 }),
            json!({ "params": 3 }),
            json!({ "filters": "type:" }),
            json!({ "facetFilters": [[1]] }),
            json!({ "facets": ["a b"] }),
            json!({ "facets": ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k"] }),
            json!({ "params": "facetFilters=%5Bnot%20json" }),
        ] {
            assert_eq!(
                Params::from_body(&body(bad.clone())).unwrap_err().status,
                400,
                "{bad}"
            );
        }
        assert_eq!(Params::from_body(&Map::new()).unwrap().hits_per_page, 20);
        assert_eq!(
            Params::from_body(&body(json!({ "hitsPerPage": 0 })))
                .unwrap()
                .hits_per_page,
            0
        );
    }

    #[test]
    fn typo_parameters() {
        let p = Params::from_body(&body(json!({
            "typoTolerance": "min", "minWordSizefor1Typo": 3, "getRankingInfo": true,
            "params": "minWordSizefor2Typos=6"
        })))
        .unwrap();
        assert_eq!(p.typos.mode, TypoMode::Min);
        assert_eq!(
            (
                p.typos.min_word_size_for_1_typo,
                p.typos.min_word_size_for_2_typos
            ),
            (3, 6)
        );
        assert!(p.ranking_info);
        let off =
            Params::from_pairs([("typoTolerance", "false"), ("getRankingInfo", "1")].into_iter()).unwrap();
        assert_eq!((off.typos.mode, off.ranking_info), (TypoMode::Off, true));
        assert_eq!(
            Params::from_body(&body(json!({ "typoTolerance": false })))
                .unwrap()
                .typos
                .mode,
            TypoMode::Off
        );
        for bad in [
            json!({ "typoTolerance": "maybe" }),
            json!({ "typoTolerance": 1 }),
            json!({ "minWordSizefor1Typo": 101 }),
            json!({ "getRankingInfo": "yes" }),
        ] {
            assert_eq!(
                Params::from_body(&body(bad.clone())).unwrap_err().status,
                400,
                "{bad}"
            );
        }
    }

    #[test]
    fn filters_combine_and_arrays_come_as_json_text() {
        let p = Params::from_body(&body(json!({
            "filters": "type:A",
            "params": "facetFilters=%5B%5B%22kind%3AB%22%5D%5D&numericFilters=n%3E1&facets=type,kind"
        })))
        .unwrap();
        assert_eq!(p.filter.unwrap().conditions(), 3);
        assert_eq!(p.facets, ["type", "kind"]);
        let all = Params::from_body(&body(json!({ "facets": ["*"] }))).unwrap();
        assert_eq!(all.facets.len(), DEFAULT_FACETS.len());
        let get = Params::from_pairs([("query", "x"), ("hitsPerPage", "3")].into_iter()).unwrap();
        assert_eq!((get.query.as_str(), get.hits_per_page), ("x", 3));
        assert_eq!(get.encoded(), "query=x&hitsPerPage=3");
        for bad in ["-1", "x", "1001"] {
            assert!(Params::from_pairs([("page", bad)].into_iter()).is_err(), "{bad}");
        }
    }

    #[test]
    fn text_that_starts_like_json_is_text_outside_the_list_parameters() {
        // what a user types first in an InstantSearch box reaches us as `params: "query=%5Bfoo"`
        for query in ["[foo", "[1]", "{x", "{\"a\":1}", " [ "] {
            let get = Params::from_pairs([("query", query)].into_iter()).unwrap();
            assert_eq!(get.query, query);
            let encoded: String = url::form_urlencoded::Serializer::new(String::new())
                .append_pair("query", query)
                .append_pair("highlightPreTag", "[")
                .append_pair("highlightPostTag", "]")
                .finish();
            let post = Params::from_body(&body(json!({ "params": encoded }))).unwrap();
            assert_eq!(
                (post.query.as_str(), post.pre_tag.as_str(), post.post_tag.as_str()),
                (query, "[", "]")
            );
        }
        // an unknown parameter is ignored whatever it holds
        assert!(Params::from_pairs([("tagFilters", "[oops")].into_iter()).is_ok());
        // a list parameter's JSON is still read, and refused when it is not JSON
        let listed = Params::from_pairs([("facets", "[\"type\"]")].into_iter()).unwrap();
        assert_eq!(listed.facets, ["type"]);
        assert!(Params::from_pairs([("facetFilters", "[oops")].into_iter()).is_err());
    }

    #[cfg(not(target_arch = "wasm32"))]
    proptest::proptest! {
        #[test]
        fn params_never_panic(params in "\\PC{0,80}", query in "\\PC{0,20}", page in proptest::num::i64::ANY) {
            let b = body(json!({ "query": query, "page": page, "hitsPerPage": page, "params": params }));
            if let Ok(p) = Params::from_body(&b) {
                proptest::prop_assert!(p.page <= MAX_PAGE && p.hits_per_page <= MAX_HITS_PER_PAGE);
            }
        }
    }
}
