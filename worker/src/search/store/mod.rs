//! The search store: every SQL statement over the search tables of D1 — `records` (a record's identity columns and
//! its stored JSON), `records_fts` (its full-text row, FTS5) and `records_vocab` (the `fts5vocab` term list the typo
//! candidates are read from) — in this file, the filters' bound SQL included. Writes take typed records
//! ([`Stored`], [`record`]); reads answer typed values ([`Kept`], [`TokenSummary`], [`Term`], [`CandidateRow`],
//! counts) and the stored JSON where that is the answer (hits). Below it only [`crate::d1`]; above it the engine
//! ([`super::engine`]), the lookup routes and the indexer.
//!
//! The schema is `worker/migrations/`. Tables of the same family that later issues add (the graph's relations:
//! profiles, assets, holds, follows) get their statements beside this file, as a module of `store`, and their typed
//! rows beside [`record`].

pub mod graph;
pub mod record;

use std::collections::BTreeMap;

use profile_relayer::{api::records::TokenSummary, lsp8::TokenIdFormat};
use serde::Deserialize;
use serde_json::Value;
use worker::{D1Database, D1PreparedStatement, D1Result, Env};

pub use self::record::{Record, Stored};
use super::filters::{Filter, Op};
use crate::{
    d1::{Param, Statement},
    error::{ApiError, ApiResult},
};

/// The D1 database (its migrations checked: [`crate::d1::db`]).
pub async fn db(env: &Env) -> ApiResult<D1Database> {
    crate::d1::db(env).await
}

// ---- writes (statements for the indexer's batches) ----

/// The statements that insert or replace a record and its full-text row (for a caller's batch).
pub fn upsert_statements(
    db: &D1Database,
    index: &str,
    stored: &Stored,
) -> ApiResult<Vec<D1PreparedStatement>> {
    fn args<'a>(values: &[&'a str]) -> Vec<Param<'a>> {
        values.iter().map(|v| Param::from(*v)).collect()
    }
    let row = &stored.row;
    let json = serde_json::to_string(stored.json()).map_err(ApiError::internal)?;
    Ok(vec![
        db.prepare("DELETE FROM records_fts WHERE index_name = ?1 AND object_id = ?2").bind_params(&args(&[index, &row.object_id]))?,
        db.prepare(
            "INSERT INTO records_fts (index_name, object_id, name, symbol, description, tags, address) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )
        .bind_params(&args(&[
            index,
            &row.object_id,
            &row.name,
            &row.symbol,
            &row.description,
            &row.tags,
            &row.address,
        ]))?,
        db.prepare(
            "INSERT OR REPLACE INTO records (index_name, object_id, address, token_id, kind, record, indexed_block, updated_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        )
        .bind_params(&[
            index.into(),
            row.object_id.as_str().into(),
            row.address.as_str().into(),
            row.token_id.as_deref().into(),
            row.kind.as_str().into(),
            json.into(),
            row.indexed_block.into(),
            crate::plumbing::now_ms().into(),
        ])?,
    ])
}

/// The statements that delete a record and its full-text row (for a caller's batch; a queued Algolia deletion of
/// it, [`super::outbound::queue_delete`], goes before them: it reads the row).
pub fn delete_statements(
    db: &D1Database,
    index: &str,
    object_id: &str,
) -> ApiResult<Vec<D1PreparedStatement>> {
    Ok(vec![
        db.prepare("DELETE FROM records_fts WHERE index_name = ?1 AND object_id = ?2")
            .bind_params(&[index.into(), object_id.into()])?,
        db.prepare("DELETE FROM records WHERE index_name = ?1 AND object_id = ?2")
            .bind_params(&[index.into(), object_id.into()])?,
    ])
}

// ---- reads of records ----

#[derive(Deserialize)]
struct Row {
    record: String,
}

fn parse(record: &str) -> ApiResult<Value> {
    serde_json::from_str(record).map_err(ApiError::internal)
}

#[derive(Deserialize)]
struct Count {
    n: u64,
}

/// A stored record as read back: its identity columns and its stored JSON (what the lookup routes answer).
#[derive(Debug, Clone)]
pub struct Kept {
    /// The record's `kind` (`LSP0ERC725Account`, `LSP7DigitalAsset`, `LSP8IdentifiableDigitalAsset`, `LSP8Token`).
    pub kind: String,
    /// Lower case.
    pub address: String,
    pub json: Value,
}

/// The kind of an LSP8 collection's record.
pub const LSP8_COLLECTION: &str = "LSP8IdentifiableDigitalAsset";

impl Kept {
    /// An LSP8 collection's record.
    pub fn is_collection(&self) -> bool {
        self.kind == LSP8_COLLECTION
    }

    /// The `LSP8TokenIdFormat` a collection's record holds, if it holds one.
    pub fn token_id_format(&self) -> Option<TokenIdFormat> {
        self.json
            .get("tokenIdFormat")
            .and_then(|f| serde_json::from_value(f.clone()).ok())
    }
}

/// Reads one record.
pub async fn get(env: &Env, index: &str, object_id: &str) -> ApiResult<Option<Kept>> {
    #[derive(Deserialize)]
    struct KeptRow {
        kind: String,
        address: String,
        record: String,
    }
    let db = db(env).await?;
    let row: Option<KeptRow> = db
        .prepare("SELECT kind, address, record FROM records WHERE index_name = ?1 AND object_id = ?2")
        .bind_params(&[index.into(), object_id.into()])?
        .row()
        .await?;
    row.map(|r| {
        Ok(Kept {
            json: parse(&r.record)?,
            kind: r.kind,
            address: r.address,
        })
    })
    .transpose()
}

/// The first `limit` token records of an LSP8 contract (by object id), as the collection's record lists them.
pub async fn tokens_of(env: &Env, index: &str, address: &str, limit: u32) -> ApiResult<Vec<TokenSummary>> {
    let db = db(env).await?;
    let rows: Vec<Row> = db
        .prepare("SELECT record FROM records WHERE index_name = ?1 AND address = ?2 AND token_id IS NOT NULL ORDER BY object_id LIMIT ?3")
        .bind_params(&[index.into(), address.to_lowercase().into(), limit.into()])?
        .rows()
        .await?;
    let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
    rows.iter()
        .map(|row| {
            let t = parse(&row.record)?;
            Ok(TokenSummary {
                token_id: text(&t, "tokenId").unwrap_or_default(),
                name: text(&t, "name"),
                image_url: text(&t, "imageUrl"),
            })
        })
        .collect()
}

/// Number of records in each of `indexes` (one chain's two; the indexes without records are left out): only their
/// rows are read (the primary key starts with the index name), not every chain's.
pub async fn counts(env: &Env, indexes: [&str; 2]) -> ApiResult<Vec<(String, u64)>> {
    #[derive(Deserialize)]
    struct C {
        index_name: String,
        n: u64,
    }
    let db = db(env).await?;
    let rows: Vec<C> = db
        .prepare(
            "SELECT index_name, COUNT(*) AS n FROM records WHERE index_name IN (?1, ?2) GROUP BY index_name \
             ORDER BY index_name",
        )
        .bind_params(&[Param::from(indexes[0]), Param::from(indexes[1])])?
        .rows()
        .await?;
    Ok(rows.into_iter().map(|c| (c.index_name, c.n)).collect())
}

/// A page of an index's most recently updated records, and how many records it holds.
pub async fn recent(db: &D1Database, index: &str, limit: u64, offset: u64) -> ApiResult<(Vec<Value>, u64)> {
    let rows: Vec<Row> = db
        .prepare(
            "SELECT record FROM records WHERE index_name = ?1 ORDER BY updated_at DESC LIMIT ?2 OFFSET ?3",
        )
        .bind_params(&[index.into(), limit.into(), offset.into()])?
        .rows()
        .await?;
    let records = rows
        .iter()
        .map(|r| parse(&r.record))
        .collect::<ApiResult<Vec<_>>>()?;
    let count: Option<Count> = db
        .prepare("SELECT COUNT(*) AS n FROM records WHERE index_name = ?1")
        .bind_params(&[index.into()])?
        .row()
        .await?;
    Ok((records, count.map_or(0, |c| c.n)))
}

/// The records of `object_ids` in one index, in that order (the ids without a record left out).
pub async fn records_by_id(db: &D1Database, index: &str, object_ids: &[&str]) -> ApiResult<Vec<Value>> {
    #[derive(Deserialize)]
    struct RecordRow {
        object_id: String,
        record: String,
    }
    if object_ids.is_empty() {
        return Ok(Vec::new());
    }
    let ids_json = serde_json::to_string(object_ids).map_err(ApiError::internal)?;
    let rows: Vec<RecordRow> = db
        .prepare(
            "SELECT object_id, record FROM records WHERE index_name = ?1 \
             AND object_id IN (SELECT value FROM json_each(?2))",
        )
        .bind_params(&[index.into(), ids_json.into()])?
        .rows()
        .await?;
    let mut by_id: BTreeMap<String, String> = rows.into_iter().map(|r| (r.object_id, r.record)).collect();
    object_ids
        .iter()
        .filter_map(|id| by_id.remove(*id))
        .map(|record| parse(&record))
        .collect()
}

// ---- the full-text index and its term list ----

/// Turns free text into an FTS5 query: every word must match as a prefix (no FTS syntax reaches SQLite).
pub fn fts_query(text: &str) -> Option<String> {
    let words: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .take(8)
        .map(|w| format!("\"{}\"*", w.to_lowercase()))
        .collect();
    (!words.is_empty()).then(|| words.join(" "))
}

/// A term of the full-text index (`records_vocab`, every index's terms) and the number of records holding it.
#[derive(Debug, Clone, Deserialize)]
pub struct Term {
    pub term: String,
    #[serde(default)]
    pub doc: Option<f64>,
}

/// The largest character: `term < prefix || MAX_CHAR` bounds a prefix range.
const MAX_CHAR: &str = "\u{10FFFF}";

/// One lookup in the term list: the terms equal to one of `keys`, or (`prefix`) starting with one of them.
#[derive(Debug, Clone)]
pub struct TermLookup {
    pub keys: Vec<String>,
    pub prefix: bool,
}

/// The terms each lookup finds, at most `limit` per lookup, in one D1 batch (none for no lookups). The terms are
/// looked up by equality or by range, never scanned whole.
pub async fn vocab_terms(db: &D1Database, lookups: &[TermLookup], limit: u64) -> ApiResult<Vec<Vec<Term>>> {
    if lookups.is_empty() {
        return Ok(Vec::new());
    }
    let mut statements = Vec::with_capacity(lookups.len());
    for lookup in lookups {
        let keys = serde_json::to_string(&lookup.keys).map_err(ApiError::internal)?;
        statements.push(if lookup.prefix {
            db.prepare(
                "SELECT v.term AS term, v.doc AS doc FROM json_each(?1) j CROSS JOIN records_vocab v \
                 WHERE v.term >= j.value AND v.term < j.value || ?2 LIMIT ?3",
            )
            .bind_params(&[Param::from(keys), MAX_CHAR.into(), limit.into()])?
        } else {
            db.prepare(
                "SELECT v.term AS term, v.doc AS doc FROM json_each(?1) j CROSS JOIN records_vocab v \
                 WHERE v.term = j.value LIMIT ?2",
            )
            .bind_params(&[Param::from(keys), limit.into()])?
        });
    }
    let results = db.batch(statements).await.map_err(ApiError::internal)?;
    results
        .iter()
        .map(|r| r.results().map_err(ApiError::internal))
        .collect()
}

// ---- the engine's queries: one index, the full-text match, the filters ----

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

    /// The SQL condition of a filter over the `record` column of the table aliased `r`, with every attribute path
    /// and value a bound parameter. Attribute values that are arrays match when one element does; a record without
    /// the attribute matches no condition (and so every `NOT`).
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
const FACET_VALUE: &str = "(CASE j.type WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' \
WHEN 'text' THEN j.value WHEN 'integer' THEN CAST(j.value AS TEXT) WHEN 'real' THEN CAST(j.value AS TEXT) END)";

/// A `json_each` element usable in a numeric comparison (booleans count as 0 / 1, as in Algolia).
const NUMERIC: &str = "j.type IN ('integer', 'real', 'true', 'false')";

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

/// The `FROM` and `WHERE` of a query, with their arguments.
#[derive(Debug, Clone)]
pub struct Scope {
    sql: Sql,
    from: &'static str,
    condition: String,
}

impl Scope {
    /// One index, the full-text match (`expression`, an FTS5 expression; without one, every word of `query` as a
    /// prefix, [`fts_query`]) and the filter.
    pub fn new(index: &str, query: &str, expression: Option<String>, filter: Option<&Filter>) -> Self {
        let mut sql = Sql::default();
        let index = sql.arg(Arg::Text(index.to_owned()));
        let (from, mut condition) = match expression.or_else(|| fts_query(query)) {
            Some(q) => {
                let q = sql.arg(Arg::Text(q));
                (
                    "records_fts f JOIN records r ON r.index_name = f.index_name AND r.object_id = f.object_id",
                    format!("records_fts MATCH {q} AND f.index_name = {index}"),
                )
            }
            None => ("records r", format!("r.index_name = {index}")),
        };
        if let Some(filter) = filter {
            condition.push_str(" AND ");
            condition.push_str(&sql.condition(filter));
        }
        Self { sql, from, condition }
    }

    fn count(&self, db: &D1Database) -> ApiResult<D1PreparedStatement> {
        let Self { sql, from, condition } = self;
        statement(
            db,
            &format!("SELECT COUNT(*) AS n FROM {from} WHERE {condition}"),
            &sql.args,
        )
    }

    /// Up to `limit` candidates (best bm25 first) with their searchable text.
    fn candidates(&self, db: &D1Database, limit: u64) -> ApiResult<D1PreparedStatement> {
        let Self { sql, from, condition } = self;
        let mut s = sql.clone();
        let limit = s.arg(Arg::Number(limit as f64));
        let chars = s.arg(Arg::Number(f64::from(DESCRIPTION_CHARS)));
        statement(
            db,
            &format!(
                "SELECT f.object_id AS object_id, f.name AS name, f.symbol AS symbol, \
                 substr(f.description, 1, {chars}) AS description, f.tags AS tags, f.address AS address, \
                 r.updated_at AS updated_at FROM {from} WHERE {condition} ORDER BY rank LIMIT {limit}"
            ),
            &s.args,
        )
    }
}

/// Description text read per candidate for ranking (characters).
const DESCRIPTION_CHARS: u32 = 1000;

/// A candidate record of a ranked search: its id, its searchable text, when it was updated.
#[derive(Debug, Clone, Deserialize)]
pub struct CandidateRow {
    pub object_id: String,
    pub name: Option<String>,
    pub symbol: Option<String>,
    pub description: Option<String>,
    pub tags: Option<String>,
    pub address: Option<String>,
    pub updated_at: Option<f64>,
}

/// The hits a search asks the store for.
#[derive(Debug, Clone)]
pub enum Hits {
    /// Candidates to rank: up to `limit` of the scope's, and, with `exact` (the scope without typo alternatives),
    /// up to `limit` exact ones first, with their count.
    Ranked { exact: Option<Scope>, limit: u64 },
    /// A page of the most recently updated records (`per` from `offset`).
    Recent { per: u64, offset: u64 },
    /// None (a page of no hits).
    None,
}

/// What one search read: the scope's count, each asked facet's values with their counts (most first), and the
/// hits asked for.
#[derive(Debug, Clone, Default)]
pub struct Found {
    pub count: u64,
    pub facets: Vec<Vec<(String, u64)>>,
    /// The exact candidates and their count (with [`Hits::Ranked`]'s `exact`).
    pub exact: Option<(Vec<CandidateRow>, u64)>,
    /// The candidates ([`Hits::Ranked`]).
    pub candidates: Vec<CandidateRow>,
    /// The records ([`Hits::Recent`]).
    pub recent: Vec<Value>,
}

fn first_count(result: Option<&D1Result>) -> ApiResult<u64> {
    let rows: Vec<Count> = match result {
        Some(r) => r.results().map_err(ApiError::internal)?,
        None => Vec::new(),
    };
    Ok(rows.first().map_or(0, |c| c.n))
}

fn rows_of<T: serde::de::DeserializeOwned>(result: Option<&D1Result>) -> ApiResult<Vec<T>> {
    match result {
        Some(r) => r.results().map_err(ApiError::internal),
        None => Ok(Vec::new()),
    }
}

/// One search in one D1 batch: the scope's count, the values of `facets` (at most `max_values` each) and the hits.
pub async fn find(
    db: &D1Database,
    scope: &Scope,
    facets: &[String],
    max_values: u64,
    hits: &Hits,
) -> ApiResult<Found> {
    let Scope { sql, from, condition } = scope;
    let mut statements = vec![scope.count(db)?];
    for attr in facets {
        let mut facet = sql.clone();
        let path = facet.path(attr);
        let max = facet.arg(Arg::Number(max_values as f64));
        statements.push(statement(
            db,
            &format!(
                "SELECT {FACET_VALUE} AS v, COUNT(*) AS n FROM {from}, json_each(r.record, {path}) j \
                 WHERE {condition} AND {FACET_VALUE} IS NOT NULL GROUP BY v ORDER BY n DESC, v LIMIT {max}"
            ),
            &facet.args,
        )?);
    }
    let hits_at = statements.len();
    match hits {
        Hits::Ranked { exact, limit } => {
            // the exact records first (they rank above every typo), then the others by bm25
            if let Some(exact) = exact {
                statements.push(exact.candidates(db, *limit)?);
                statements.push(exact.count(db)?);
            }
            statements.push(scope.candidates(db, *limit)?);
        }
        Hits::Recent { per, offset } => {
            let mut page = sql.clone();
            let limit = page.arg(Arg::Number(*per as f64));
            let offset = page.arg(Arg::Number(*offset as f64));
            statements.push(statement(
                db,
                &format!(
                    "SELECT r.record AS record FROM {from} WHERE {condition} \
                     ORDER BY r.updated_at DESC, r.object_id LIMIT {limit} OFFSET {offset}"
                ),
                &page.args,
            )?);
        }
        Hits::None => {}
    }
    let results = db.batch(statements).await.map_err(ApiError::internal)?;
    #[derive(Deserialize)]
    struct FacetRow {
        v: Option<String>,
        n: u64,
    }
    let mut found = Found {
        count: first_count(results.first())?,
        ..Found::default()
    };
    for (_, result) in facets.iter().zip(results.iter().skip(1)) {
        let rows: Vec<FacetRow> = result.results().map_err(ApiError::internal)?;
        found
            .facets
            .push(rows.into_iter().filter_map(|r| Some((r.v?, r.n))).collect());
    }
    match hits {
        Hits::Ranked { exact, .. } => {
            if exact.is_some() {
                found.exact = Some((
                    rows_of(results.get(hits_at))?,
                    first_count(results.get(hits_at + 1))?,
                ));
            }
            found.candidates = rows_of(results.last())?;
        }
        Hits::Recent { .. } => {
            let rows: Vec<Row> = rows_of(results.get(hits_at))?;
            found.recent = rows.iter().map(|r| parse(&r.record)).collect::<ApiResult<_>>()?;
        }
        Hits::None => {}
    }
    Ok(found)
}

/// One browse page: the scope's count and up to `per` records (with their object ids) after `after` in object id
/// order, and whether more follow.
pub async fn browse_page(
    db: &D1Database,
    scope: &Scope,
    after: &str,
    per: u64,
) -> ApiResult<(u64, Vec<(String, Value)>, bool)> {
    #[derive(Deserialize)]
    struct PageRow {
        object_id: String,
        record: String,
    }
    let Scope { sql, from, condition } = scope;
    let count = scope.count(db)?;
    let mut page_sql = sql.clone();
    let after_arg = page_sql.arg(Arg::Text(after.to_owned()));
    // one more than a page tells whether another page follows
    let limit = page_sql.arg(Arg::Number(per.saturating_add(1) as f64));
    let select = statement(
        db,
        &format!(
            "SELECT r.object_id AS object_id, r.record AS record FROM {from} WHERE {condition} \
             AND r.object_id > {after_arg} ORDER BY r.object_id LIMIT {limit}"
        ),
        &page_sql.args,
    )?;
    let results = db.batch(vec![count, select]).await.map_err(ApiError::internal)?;
    let nb_hits = first_count(results.first())?;
    let mut rows: Vec<PageRow> = rows_of(results.get(1))?;
    let more = rows.len() as u64 > per;
    rows.truncate(usize::try_from(per).unwrap_or(usize::MAX));
    let page = rows
        .into_iter()
        .map(|row| Ok((row.object_id, parse(&row.record)?)))
        .collect::<ApiResult<Vec<_>>>()?;
    Ok((nb_hits, page, more))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::search::filters::parse;

    #[test]
    fn fts_queries_are_sanitized() {
        assert_eq!(fts_query("Alice  Bob").as_deref(), Some("\"alice\"* \"bob\"*"));
        assert_eq!(
            fts_query("\" OR name:* NEAR("),
            Some("\"or\"* \"name\"* \"near\"*".to_owned())
        );
        assert_eq!(fts_query("  -- ;"), None);
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
                proptest::prop_assert!(filter.conditions() <= crate::search::filters::tree::MAX_CONDITIONS);
                let mut sql = Sql::default();
                let text = sql.condition(&filter);
                // quotes and paths of the input never reach the SQL text: they are bound
                proptest::prop_assert!(!text.contains('"') && !text.contains('$'));
                proptest::prop_assert!(sql.args.len() <= 3 * crate::search::filters::tree::MAX_CONDITIONS);
            }
        }
    }
}
