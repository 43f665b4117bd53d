//! The answers of the Algolia-compatible read API (`/1/indexes/…`), in the shape Algolia's clients read.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One index's answer to a query (`POST /1/indexes/:index/query`, `GET /1/indexes/:index`) or one browse page
/// (`POST /1/indexes/:index/browse`).
#[cfg_attr(feature = "wasm", derive(tsify::Tsify))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AlgoliaResult {
    /// The records found, each with `_highlightResult` (`attributesToRetrieve` may narrow them).
    #[cfg_attr(feature = "wasm", tsify(type = "Record<string, unknown>[]"))]
    #[cfg_attr(
        feature = "schema",
        schemars(schema_with = "crate::api::schema::algolia_hits")
    )]
    pub hits: Vec<Value>,
    /// Records matching in all.
    pub nb_hits: u64,
    /// This page, from 0.
    pub page: u64,
    /// Pages in all.
    pub nb_pages: u64,
    /// Records per page.
    #[cfg_attr(feature = "schema", schemars(range(max = 1000)))]
    pub hits_per_page: u64,
    /// The `offset` asked (only when the search paged by `offset`/`length`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "wasm", tsify(optional))]
    pub offset: Option<u64>,
    /// The `length` answered from `offset` (only with `offset`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "wasm", tsify(optional))]
    pub length: Option<u64>,
    /// `true` when the count is exact (see [`Exhaustive::nb_hits`]).
    pub exhaustive_nb_hits: bool,
    /// Queries only: `false` when not every term within a query word's typos was considered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "wasm", tsify(optional))]
    pub exhaustive_typo: Option<bool>,
    /// Queries only: Algolia's newer form of the `exhaustive*` flags.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "wasm", tsify(optional))]
    pub exhaustive: Option<Exhaustive>,
    /// The query text.
    pub query: String,
    /// The query as Algolia's URL parameters.
    pub params: String,
    /// The index searched.
    pub index: String,
    /// Time the search took, milliseconds.
    #[serde(rename = "processingTimeMS")]
    pub processing_time_ms: u64,
    /// Queries asking for `facets` only: per attribute, value → number of matching records (most first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "wasm",
        tsify(optional, type = "Record<string, Record<string, number>>")
    )]
    pub facets: Option<Map<String, Value>>,
    /// Queries asking for `facets` only: always `true`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "wasm", tsify(optional))]
    pub exhaustive_facets_count: Option<bool>,
    /// Browse only: send it back for the next page; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "wasm", tsify(optional))]
    pub cursor: Option<String>,
}

/// `exhaustive` of an [`AlgoliaResult`].
#[cfg_attr(feature = "wasm", derive(tsify::Tsify))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Exhaustive {
    /// `false` only when `typoTolerance` `min` / `strict` kept part of more candidates than are ranked.
    pub nb_hits: bool,
    /// As `exhaustiveTypo`.
    pub typo: bool,
    /// With `facets` only: always `true`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "wasm", tsify(optional))]
    pub facets_count: Option<bool>,
}

/// Response to the multi-index route (`POST /1/indexes/%2A/queries`, index name `*`): one result per request, in order.
#[cfg_attr(feature = "wasm", derive(tsify::Tsify))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AlgoliaResults {
    /// The results.
    pub results: Vec<AlgoliaResult>,
}

/// An error of the Algolia-compatible routes: this API's `error` object plus Algolia's top-level `message` and
/// `status`, which Algolia's clients show.
#[cfg_attr(feature = "wasm", derive(tsify::Tsify))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AlgoliaError {
    /// This API's error object.
    pub error: crate::api::ErrorDetail,
    /// The message (as Algolia answers it).
    pub message: String,
    /// The HTTP status (as Algolia answers it).
    pub status: u16,
}

impl AlgoliaError {
    /// The error with `code`, `message` and `status`.
    #[must_use]
    pub fn new(code: &str, message: &str, status: u16) -> Self {
        Self {
            error: crate::api::ErrorDetail {
                code: code.to_owned(),
                message: message.to_owned(),
            },
            message: message.to_owned(),
            status,
        }
    }
}
