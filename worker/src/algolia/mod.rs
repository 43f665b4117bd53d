//! The Algolia-compatible read API over the D1 index: `POST /1/indexes/:index/query`, `GET /1/indexes/:index`,
//! `POST /1/indexes/*/queries` (multi-index), `POST /1/indexes/:index/browse` (cursor), with `filters` /
//! `facetFilters` / `numericFilters`, `facets` and `_highlightResult` shaped as Algolia's clients read them. The
//! `x-algolia-*` credentials (headers or query parameters) are accepted and not checked: the index is public.

pub mod cursor;
pub mod filters;
pub mod highlight;
pub mod hit;
pub mod params;
pub mod ranked;
pub mod sql;
pub mod typos;

use profile_relayer::api::algolia::{AlgoliaResult, AlgoliaResults, Exhaustive};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use worker::{D1Database, D1PreparedStatement, Env, Request, Response};

use crate::{
    config::Config,
    d1::{Param, Statement},
    error::{ApiError, ApiResult, Code},
    lookup::{limit_ip, limit_ip_more},
    search,
};
use params::{MAX_HITS_PER_PAGE, Params};
use sql::{Arg, Sql};
use typos::TypoMode;

/// Most queries in one multi-index request.
pub const MAX_QUERIES: usize = 32;

/// 404 `INDEX_NOT_FOUND` unless `index` is one of this deployment's indexes.
fn check_index(config: &Config, index: &str) -> ApiResult<()> {
    let names = config.all_index_names()?;
    if !names.iter().any(|n| n == index) {
        return Err(ApiError::new(
            Code::IndexNotFound,
            format!("no index {index:?} (this deployment has {})", names.join(", ")),
        ));
    }
    Ok(())
}

/// The request body as a JSON object (no body is `{}`). Algolia's browser clients send JSON as `text/plain` (no
/// preflight): the content type is not checked.
async fn body(req: &mut Request, config: &Config) -> ApiResult<Map<String, Value>> {
    let max = config.relayer()?.max_body_bytes;
    let bytes = crate::body::request_bytes(req, max).await?;
    if bytes.is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_slice(&bytes) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(ApiError::new(Code::InvalidJson, "the body must be a JSON object")),
        Err(e) => Err(ApiError::new(Code::InvalidJson, e.to_string())),
    }
}

/// The answer of an Algolia route. Errors carry, next to this API's `{"error": {code, message}}`, Algolia's
/// top-level `message` and `status`, which Algolia's clients show.
pub fn answer<T: Serialize>(origin: &str, result: ApiResult<T>) -> ApiResult<Response> {
    match result {
        Ok(answer) => {
            let mut value = serde_json::to_value(&answer).map_err(ApiError::internal)?;
            crate::lookup::absolute_urls(&mut value, origin);
            Ok(Response::from_json(&value)?)
        }
        Err(e) => {
            let body = profile_relayer::api::algolia::AlgoliaError::new(e.code, &e.message, e.status);
            let mut res = Response::from_json(&body)?.with_status(e.status);
            if let Some(secs) = e.retry_after {
                res.headers_mut().set("retry-after", &secs.to_string())?;
            }
            Ok(res)
        }
    }
}

/// `POST /1/indexes/:indexName/query`.
pub async fn query_route(
    mut req: Request,
    env: &Env,
    config: &Config,
    index: &str,
) -> ApiResult<AlgoliaResult> {
    limit_ip(&req, env, config).await?;
    check_index(config, index)?;
    let params = Params::from_body(&body(&mut req, config).await?)?;
    search(env, index, &params).await
}

/// `GET /1/indexes/:indexName?query=…`: the parameters in the URL (`x-algolia-*` ones ignored).
pub async fn get_route(req: &Request, env: &Env, config: &Config, index: &str) -> ApiResult<AlgoliaResult> {
    limit_ip(req, env, config).await?;
    check_index(config, index)?;
    let url = req.url()?;
    let params = Params::from_pairs(
        url.query_pairs()
            .filter(|(k, _)| !k.to_ascii_lowercase().starts_with("x-algolia-")),
    )?;
    search(env, index, &params).await
}

/// `POST /1/indexes/*/queries`: `{"requests": [{"indexName", "params" | fields…}]}` → `{"results": […]}`.
pub async fn queries_route(mut req: Request, env: &Env, config: &Config) -> ApiResult<AlgoliaResults> {
    limit_ip(&req, env, config).await?;
    let body = body(&mut req, config).await?;
    let Some(Value::Array(requests)) = body.get("requests") else {
        return Err(ApiError::new(Code::InvalidFieldType, "requests must be an array"));
    };
    if body.get("strategy").is_some_and(|s| !s.is_string()) {
        return Err(ApiError::new(Code::InvalidFieldType, "strategy must be a string"));
    }
    if requests.len() > MAX_QUERIES {
        return Err(ApiError::new(
            Code::TooManyQueries,
            format!("at most {MAX_QUERIES} requests per call"),
        ));
    }
    let mut parsed = Vec::with_capacity(requests.len());
    for (i, request) in requests.iter().enumerate() {
        let Value::Object(request) = request else {
            return Err(ApiError::new(
                Code::InvalidFieldType,
                format!("requests[{i}] must be an object"),
            ));
        };
        let Some(Value::String(index)) = request.get("indexName") else {
            return Err(ApiError::new(
                Code::InvalidFieldType,
                format!("requests[{i}].indexName must be a string"),
            ));
        };
        if let Some(kind) = request.get("type").filter(|t| *t != "default") {
            return Err(ApiError::new(
                Code::UnsupportedQueryType,
                format!("requests[{i}].type {kind} is not supported (only \"default\")"),
            ));
        }
        check_index(config, index)?;
        parsed.push((index.clone(), Params::from_body(request)?));
    }
    // one call, the work of several: every query counts against the client's lookups (the first was taken on
    // entry), and together they ask for at most one page's most hits
    let hits: u64 = parsed.iter().map(|(_, p)| p.hits_per_page).sum();
    if hits > MAX_HITS_PER_PAGE {
        return Err(ApiError::new(
            Code::InvalidParameter,
            format!(
                "hitsPerPage: the requests of one call ask for {hits} hits together; at most {MAX_HITS_PER_PAGE}"
            ),
        ));
    }
    let further = u32::try_from(parsed.len().saturating_sub(1)).unwrap_or(u32::MAX);
    limit_ip_more(&req, env, config, further).await?;
    let mut results = Vec::with_capacity(parsed.len());
    for (index, params) in &parsed {
        results.push(search(env, index, params).await?);
    }
    Ok(AlgoliaResults { results })
}

/// `POST /1/indexes/:indexName/browse`: every matching record in `objectID` order, `hitsPerPage` (default and
/// most 1000) at a time; the answer's `cursor` (absent on the last page) continues where it stopped, with the
/// parameters of the first call.
pub async fn browse_route(
    mut req: Request,
    env: &Env,
    config: &Config,
    index: &str,
) -> ApiResult<AlgoliaResult> {
    limit_ip(&req, env, config).await?;
    check_index(config, index)?;
    let body = body(&mut req, config).await?;
    let (params, after, page) = match body.get("cursor") {
        // no cursor (an empty one, as a client may send, included): the first page
        None | Some(Value::Null) => (Params::from_body_with(&body, 1000)?, String::new(), 0),
        Some(Value::String(cursor)) if cursor.is_empty() => {
            (Params::from_body_with(&body, 1000)?, String::new(), 0)
        }
        Some(Value::String(cursor)) => cursor::decode_cursor(cursor)?,
        Some(_) => {
            return Err(ApiError::new(Code::InvalidFieldType, "cursor must be a string"));
        }
    };
    browse(env, index, &params, &after, page).await
}

#[derive(Deserialize)]
struct Row {
    record: String,
    #[serde(default)]
    object_id: Option<String>,
}

#[derive(Deserialize)]
struct Count {
    n: u64,
}

#[derive(Deserialize)]
struct FacetRow {
    v: Option<String>,
    n: u64,
}

fn statement(db: &D1Database, text: &str, args: &[Arg]) -> ApiResult<D1PreparedStatement> {
    let args: Vec<Param<'_>> = args
        .iter()
        .map(|a| match a {
            Arg::Text(t) => Param::from(t),
            Arg::Number(n) => Param::from(*n),
        })
        .collect();
    db.prepare(text).bind_params(&args)
}

/// The `FROM` and `WHERE` of a query: the index, the full-text match (`expression`, an FTS5 expression; by default
/// every query word as a prefix) and the filters.
fn scope(
    sql: &mut Sql,
    index: &str,
    params: &Params,
    expression: Option<String>,
) -> (&'static str, String, bool) {
    let index = sql.arg(Arg::Text(index.to_owned()));
    let (from, mut condition, ranked) = match expression.or_else(|| search::fts_query(&params.query)) {
        Some(q) => {
            let q = sql.arg(Arg::Text(q));
            (
                "records_fts f JOIN records r ON r.index_name = f.index_name AND r.object_id = f.object_id",
                format!("records_fts MATCH {q} AND f.index_name = {index}"),
                true,
            )
        }
        None => ("records r", format!("r.index_name = {index}"), false),
    };
    if let Some(filter) = &params.filter {
        condition.push_str(" AND ");
        condition.push_str(&sql.condition(filter));
    }
    (from, condition, ranked)
}

fn parse_record(row: &Row) -> ApiResult<Value> {
    serde_json::from_str(&row.record).map_err(ApiError::internal)
}

fn first_count(result: Option<&worker::D1Result>) -> ApiResult<u64> {
    let rows: Vec<Count> = match result {
        Some(r) => r.results().map_err(ApiError::internal)?,
        None => Vec::new(),
    };
    Ok(rows.first().map_or(0, |c| c.n))
}

/// One Algolia search: with query words, typo-tolerant and ranked by Algolia's criteria ([`ranked`]); without,
/// the most recently updated records first.
pub async fn search(env: &Env, index: &str, params: &Params) -> ApiResult<AlgoliaResult> {
    let started = worker::Date::now().as_millis();
    let db = search::db(env).await?;
    let expansion = ranked::expand(&db, params).await?;
    let words = !expansion.words.is_empty();
    let mut sql = Sql::default();
    let (from, condition, _) = scope(&mut sql, index, params, expansion.expression(u8::MAX));
    let per = params.hits_per_page;
    let mut statements = vec![statement(
        &db,
        &format!("SELECT COUNT(*) AS n FROM {from} WHERE {condition}"),
        &sql.args,
    )?];
    for attr in &params.facets {
        let mut facet = sql.clone();
        let path = facet.path(attr);
        let max = facet.arg(Arg::Number(params.max_values_per_facet as f64));
        let value = sql::FACET_VALUE;
        statements.push(statement(
            &db,
            &format!(
                "SELECT {value} AS v, COUNT(*) AS n FROM {from}, json_each(r.record, {path}) j \
                 WHERE {condition} AND {value} IS NOT NULL GROUP BY v ORDER BY n DESC, v LIMIT {max}"
            ),
            &facet.args,
        )?);
    }
    let hits_at = statements.len();
    let typo_tiers = words && expansion.has_typos();
    if words {
        // the exact records first (they rank above every typo), then the others by bm25
        if typo_tiers {
            let mut exact = Sql::default();
            let (from, condition, _) = scope(&mut exact, index, params, expansion.expression(0));
            statements.push(ranked::candidates_statement(
                &db, from, &condition, &exact, statement,
            )?);
            statements.push(statement(
                &db,
                &format!("SELECT COUNT(*) AS n FROM {from} WHERE {condition}"),
                &exact.args,
            )?);
        }
        statements.push(ranked::candidates_statement(
            &db, from, &condition, &sql, statement,
        )?);
    } else if per > 0 {
        let mut hits = sql.clone();
        let limit = hits.arg(Arg::Number(per as f64));
        let offset = hits.arg(Arg::Number(params.page.saturating_mul(per) as f64));
        statements.push(statement(
            &db,
            &format!(
                "SELECT r.record AS record FROM {from} WHERE {condition} \
                 ORDER BY r.updated_at DESC, r.object_id LIMIT {limit} OFFSET {offset}"
            ),
            &hits.args,
        )?);
    }
    let results = db.batch(statements).await.map_err(ApiError::internal)?;
    let mut nb_hits = first_count(results.first())?;
    let mut facets = Map::new();
    for (attr, result) in params.facets.iter().zip(results.iter().skip(1)) {
        let rows: Vec<FacetRow> = result.results().map_err(ApiError::internal)?;
        let counts: Map<String, Value> = rows
            .into_iter()
            .filter_map(|r| Some((r.v?, json!(r.n))))
            .collect();
        facets.insert(attr.clone(), Value::Object(counts));
    }
    let mut exhaustive_nb_hits = true;
    let hits: Vec<Value> = if words {
        let mut tiers: Vec<&worker::D1Result> = Vec::new();
        let mut exact_count = None;
        if typo_tiers {
            tiers.extend(results.get(hits_at));
            exact_count = Some(first_count(results.get(hits_at + 1))?);
        }
        tiers.extend(results.last());
        let complete = nb_hits <= ranked::MAX_CANDIDATES;
        let mode = params.typos.mode;
        let ranked = ranked::rank(&expansion, mode, &tiers)?;
        if matches!(mode, TypoMode::Min | TypoMode::Strict) {
            let kept = ranked.scores.len() as u64;
            match (complete, exact_count) {
                (true, _) => nb_hits = kept,
                // only exact hits kept: their count is exact
                (false, Some(exact)) if ranked.scores.iter().all(|s| s.typos == 0) && kept > 0 => {
                    nb_hits = exact;
                }
                (false, _) => {
                    nb_hits = kept;
                    exhaustive_nb_hits = false;
                }
            }
        }
        let page = params.page_of(&ranked.scores);
        let records = ranked::page_records(&db, index, &page).await?;
        let groups = ranked::highlight_groups(&expansion);
        records
            .into_iter()
            .zip(page)
            .map(|(record, score)| {
                let info = params.ranking_info.then(|| ranked::ranking_info(score));
                params.ranked_hit(record, &groups, info)
            })
            .collect()
    } else {
        match results.get(hits_at) {
            Some(result) if per > 0 => {
                let rows: Vec<Row> = result.results().map_err(ApiError::internal)?;
                rows.iter()
                    .map(|row| Ok(params.hit(parse_record(row)?)))
                    .collect::<ApiResult<_>>()?
            }
            _ => Vec::new(),
        }
    };
    let faceted = !params.facets.is_empty();
    let typo = expansion.exhaustive;
    let reachable = if words {
        nb_hits.min(ranked::MAX_CANDIDATES)
    } else {
        nb_hits
    };
    Ok(AlgoliaResult {
        hits,
        nb_hits,
        page: params.page,
        nb_pages: if per == 0 { 0 } else { reachable.div_ceil(per) },
        hits_per_page: per,
        exhaustive_nb_hits,
        exhaustive_typo: Some(typo),
        exhaustive: Some(Exhaustive {
            nb_hits: exhaustive_nb_hits,
            typo,
            facets_count: faceted.then_some(true),
        }),
        query: params.query.clone(),
        params: params.encoded(),
        index: index.to_owned(),
        processing_time_ms: worker::Date::now().as_millis().saturating_sub(started),
        facets: faceted.then_some(facets),
        exhaustive_facets_count: faceted.then_some(true),
        cursor: None,
    })
}

/// One browse page after `after` (an `objectID`; `""` for the first page).
pub async fn browse(
    env: &Env,
    index: &str,
    params: &Params,
    after: &str,
    page: u64,
) -> ApiResult<AlgoliaResult> {
    let started = worker::Date::now().as_millis();
    let db = search::db(env).await?;
    let mut sql = Sql::default();
    let (from, condition, _) = scope(&mut sql, index, params, None);
    let per = params.hits_per_page;
    let count = statement(
        &db,
        &format!("SELECT COUNT(*) AS n FROM {from} WHERE {condition}"),
        &sql.args,
    )?;
    let mut page_sql = sql.clone();
    let after_arg = page_sql.arg(Arg::Text(after.to_owned()));
    // one more than a page tells whether another page follows
    let limit = page_sql.arg(Arg::Number(per.saturating_add(1) as f64));
    let select = statement(
        &db,
        &format!(
            "SELECT r.object_id AS object_id, r.record AS record FROM {from} WHERE {condition} \
             AND r.object_id > {after_arg} ORDER BY r.object_id LIMIT {limit}"
        ),
        &page_sql.args,
    )?;
    let results = db.batch(vec![count, select]).await.map_err(ApiError::internal)?;
    let nb_hits = first_count(results.first())?;
    let mut rows: Vec<Row> = match results.get(1) {
        Some(r) => r.results().map_err(ApiError::internal)?,
        None => Vec::new(),
    };
    let more = rows.len() as u64 > per;
    rows.truncate(usize::try_from(per).unwrap_or(usize::MAX));
    let hits = rows
        .iter()
        .map(|row| Ok(params.hit(parse_record(row)?)))
        .collect::<ApiResult<Vec<_>>>()?;
    let cursor = match rows.last().and_then(|r| r.object_id.as_deref()) {
        Some(last) if more && per > 0 => Some(cursor::encode_cursor(params, last, page + 1)?),
        _ => None,
    };
    Ok(AlgoliaResult {
        hits,
        nb_hits,
        page,
        nb_pages: if per == 0 { 0 } else { nb_hits.div_ceil(per) },
        hits_per_page: per,
        exhaustive_nb_hits: true,
        exhaustive_typo: None,
        exhaustive: None,
        query: params.query.clone(),
        params: params.encoded(),
        index: index.to_owned(),
        processing_time_ms: worker::Date::now().as_millis().saturating_sub(started),
        facets: None,
        exhaustive_facets_count: None,
        cursor,
    })
}
