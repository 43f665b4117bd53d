//! Our search engine over the store: Algolia's search parameters ([`params`], the filters of
//! [`super::filters`]), typo tolerance and Algolia's ranking criteria ([`typos`], pure), the typo candidates and the
//! ranking of the store's candidates ([`ranked`]), hits with `_highlightResult` ([`hit`], [`highlight`]) and browse
//! cursors ([`cursor`]). It reads through [`super::store`] and holds no SQL. Above it: the Algolia-compatible HTTP
//! handlers (`routes::algolia`) and the lookup routes' search ([`simple`]).

pub mod cursor;
pub mod highlight;
pub mod hit;
pub mod params;
pub mod ranked;
pub mod typos;

use profile_relayer::api::{
    SearchResult,
    algolia::{AlgoliaResult, Exhaustive},
};
use serde_json::{Map, Value, json};
use worker::Env;

use super::store::{self, Hits, Scope};
use params::Params;
use typos::TypoMode;

/// One Algolia search: with query words, typo-tolerant and ranked by Algolia's criteria ([`ranked`]); without,
/// the most recently updated records first.
pub async fn search(env: &Env, index: &str, params: &Params) -> crate::error::ApiResult<AlgoliaResult> {
    let started = crate::plumbing::now_ms();
    let db = store::db(env).await?;
    let expansion = ranked::expand(&db, params).await?;
    let words = !expansion.words.is_empty();
    let filter = params.filter.as_ref();
    let scope = Scope::new(index, &params.query, expansion.expression(u8::MAX), filter);
    let window = params.window();
    let typo_tiers = words && expansion.has_typos();
    let hits = if words {
        Hits::Ranked {
            exact: typo_tiers.then(|| Scope::new(index, &params.query, expansion.expression(0), filter)),
            limit: ranked::MAX_CANDIDATES,
        }
    } else if let Some((per, offset)) = window.reachable() {
        Hits::Recent { per, offset }
    } else {
        Hits::None
    };
    let found = store::find(&db, &scope, &params.facets, params.max_values_per_facet, &hits).await?;
    let mut nb_hits = found.count;
    let mut facets = Map::new();
    for (attr, values) in params.facets.iter().zip(found.facets) {
        let counts: Map<String, Value> = values.into_iter().map(|(v, n)| (v, json!(n))).collect();
        facets.insert(attr.clone(), Value::Object(counts));
    }
    let mut exhaustive_nb_hits = true;
    let hits: Vec<Value> = if words {
        let mut tiers = Vec::new();
        let mut exact_count = None;
        if let Some((exact, count)) = found.exact {
            tiers.push(exact);
            exact_count = Some(count);
        }
        tiers.push(found.candidates);
        let complete = nb_hits <= ranked::MAX_CANDIDATES;
        let mode = params.typos.mode;
        let ranked = ranked::rank(&expansion, mode, tiers);
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
        let ids: Vec<&str> = page.iter().map(|s| s.object_id.as_str()).collect();
        let records = store::records_by_id(&db, index, &ids).await?;
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
        found
            .recent
            .into_iter()
            .map(|record| params.hit(record))
            .collect()
    };
    let faceted = !params.facets.is_empty();
    let typo = expansion.exhaustive;
    // as Algolia's `paginationLimitedTo`: the pages of the first 1,000 hits; asked by `offset`, the page is the one
    // of `length` hits that `offset` falls in
    let per = window.count;
    Ok(AlgoliaResult {
        hits,
        nb_hits,
        page: if window.by_offset {
            window.start.checked_div(per).unwrap_or(0)
        } else {
            params.page
        },
        nb_pages: window.nb_pages(nb_hits),
        hits_per_page: per,
        offset: window.by_offset.then_some(window.start),
        length: window.by_offset.then_some(per),
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
        processing_time_ms: crate::plumbing::now_ms().saturating_sub(started),
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
) -> crate::error::ApiResult<AlgoliaResult> {
    let started = crate::plumbing::now_ms();
    let db = store::db(env).await?;
    let scope = Scope::new(index, &params.query, None, params.filter.as_ref());
    let per = params.hits_per_page;
    let (nb_hits, rows, more) = store::browse_page(&db, &scope, after, per).await?;
    let cursor = match rows.last() {
        Some((last, _)) if more && per > 0 => Some(cursor::encode_cursor(params, last, page + 1)?),
        _ => None,
    };
    let hits = rows.into_iter().map(|(_, record)| params.hit(record)).collect();
    Ok(AlgoliaResult {
        hits,
        nb_hits,
        page,
        nb_pages: if per == 0 { 0 } else { nb_hits.div_ceil(per) },
        hits_per_page: per,
        offset: None,
        length: None,
        exhaustive_nb_hits: true,
        exhaustive_typo: None,
        exhaustive: None,
        query: params.query.clone(),
        params: params.encoded(),
        index: index.to_owned(),
        processing_time_ms: crate::plumbing::now_ms().saturating_sub(started),
        facets: None,
        exhaustive_facets_count: None,
        cursor,
    })
}

/// The lookup routes' search of one index (`GET /v1/:chainId/search`): with words, this engine's ranked search
/// without `_highlightResult`; without, the most recently updated records.
pub async fn simple(
    env: &Env,
    index: &str,
    query: &str,
    page: u64,
    hits_per_page: u64,
) -> crate::error::ApiResult<SearchResult> {
    let started = crate::plumbing::now_ms();
    let hits_per_page = hits_per_page.clamp(1, 100);
    let (hits, nb_hits, nb_pages) = if store::fts_query(query).is_some() {
        // typo-tolerant and ranked as Algolia ranks (the Algolia-compatible route's engine)
        let params = Params::for_query(query, page, hits_per_page);
        let mut found = search(env, index, &params).await?;
        for hit in &mut found.hits {
            if let Value::Object(hit) = hit {
                hit.remove("_highlightResult");
            }
        }
        (found.hits, found.nb_hits, found.nb_pages)
    } else {
        let db = store::db(env).await?;
        // the first 1,000 hits, as the Algolia routes: a deeper page answers none (and skips no rows)
        let (limit, offset) = params::pagination_window(page, hits_per_page).unwrap_or((0, 0));
        let (hits, nb_hits) = store::recent(&db, index, limit, offset).await?;
        let reachable = nb_hits.min(params::PAGINATION_LIMITED_TO);
        (hits, nb_hits, reachable.div_ceil(hits_per_page))
    };
    Ok(SearchResult {
        hits,
        nb_hits,
        page,
        nb_pages,
        hits_per_page,
        processing_time_ms: crate::plumbing::now_ms().saturating_sub(started),
        query: query.to_owned(),
        params: format!(
            "query={}&hitsPerPage={hits_per_page}&page={page}",
            query.replace('&', "%26")
        ),
        index: index.to_owned(),
    })
}
