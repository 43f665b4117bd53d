//! Typo-tolerant, Algolia-ranked search over the D1 index (the rules: [`super::typos`]).
//!
//! D1's SQLite has no fuzzy matching (no spellfix), so a query runs in three round trips, each bounded:
//! 1. **Candidate terms** from `records_vocab`, an `fts5vocab` table over `records_fts` (terms in order, looked up
//!    by equality or by range, never scanned whole): a one-typo word looks up its one-edit neighbours exactly
//!    (complete); a one-typo prefix word reads the terms starting with each neighbour (complete); a two-typo word
//!    reads the terms starting with its first half or a one-edit neighbour of it (two typos both in the first half
//!    are missed, so `exhaustive.typo` is `false`). Substitutions and insertions try `a`–`z`, `0`–`9` and the
//!    word's own characters. At most [`MAX_TERMS`] terms per word are read.
//! 2. **Candidate records**: the FTS5 `MATCH` of every word's alternatives (the word, then up to
//!    [`MAX_ALTERNATIVES`] terms, fewest typos and most frequent first), the filters applied; the count, the
//!    facets and up to [`MAX_CANDIDATES`] records (the exact ones first, then by bm25) with their searchable text.
//! 3. The candidates are ranked in Rust by Algolia's criteria and only the page's records are read.

use std::collections::HashMap;

use serde_json::{Value, json};
use worker::D1Database;

use super::{
    params::Params,
    typos::{self, Alternative, Candidate, QueryWord, Score, TypoMode},
};
use crate::{
    error::ApiResult,
    search::store::{self, CandidateRow, Term, TermLookup},
};

// `records_vocab`, the term list of the full-text index (every index's terms) the typo candidates are read from:
// worker/migrations/0005_search_typos.sql; its SQL is the store's.

/// Most typo alternatives of one query word in the `MATCH`.
pub const MAX_ALTERNATIVES: usize = 40;
/// Most terms read from the term list for one query word.
pub const MAX_TERMS: u64 = 4000;
/// Most records ranked in Rust (and so the deepest hit a query reaches, as Algolia's `paginationLimitedTo`).
pub const MAX_CANDIDATES: u64 = super::params::PAGINATION_LIMITED_TO;

/// The words of a query with the ways each can match.
#[derive(Debug, Clone)]
pub struct Expansion {
    pub words: Vec<QueryWord>,
    pub alternatives: Vec<Vec<Alternative>>,
    /// Every term within the allowed typos was considered.
    pub exhaustive: bool,
}

impl Expansion {
    /// The FTS5 expression of the alternatives with at most `max_typos` typos.
    pub fn expression(&self, max_typos: u8) -> Option<String> {
        typos::fts_expression(&self.alternatives, max_typos)
    }

    /// Whether some word has a typo alternative.
    pub fn has_typos(&self) -> bool {
        self.alternatives.iter().any(|a| a.len() > 1)
    }
}

/// How a word's candidate terms are read, and whether that is complete.
fn term_lookup(word: &QueryWord) -> Option<(Vec<String>, bool, bool)> {
    match (word.edits, word.prefix) {
        (0, _) => None,
        // the exact one-edit neighbours
        (1, false) => Some((typos::neighbors(&word.text), false, true)),
        // the terms starting with a one-edit neighbour
        (1, true) => Some((typos::neighbors(&word.text), true, true)),
        // the terms starting with the first half or a one-edit neighbour of it
        _ => {
            let half: String = word.text.chars().take(word.text.chars().count() / 2).collect();
            let mut starts = typos::neighbors(&half);
            starts.push(half);
            // a short start reads too much: the neighbours of a four-letter half are three letters long at least
            starts.retain(|s| s.chars().count() >= 3);
            Some((starts, true, false))
        }
    }
}

/// Expands the query's words into their alternatives (one D1 batch).
pub async fn expand(db: &D1Database, params: &Params) -> ApiResult<Expansion> {
    let words = typos::query_words(&params.query, &params.typos);
    let mut lookups = Vec::new();
    let mut slots = Vec::new();
    let mut exhaustive = true;
    for (i, word) in words.iter().enumerate() {
        let Some((keys, prefix, complete)) = term_lookup(word) else {
            continue;
        };
        exhaustive &= complete;
        lookups.push(TermLookup { keys, prefix });
        slots.push(i);
    }
    let mut found: HashMap<usize, Vec<Term>> = HashMap::new();
    for (slot, rows) in slots
        .iter()
        .zip(store::vocab_terms(db, &lookups, MAX_TERMS).await?)
    {
        if rows.len() as u64 >= MAX_TERMS {
            exhaustive = false;
        }
        found.insert(*slot, rows);
    }
    let mut alternatives = Vec::with_capacity(words.len());
    for (i, word) in words.iter().enumerate() {
        let mut rows = found.remove(&i).unwrap_or_default();
        // the most frequent terms first among equal typos
        rows.sort_by(|a, b| b.doc.unwrap_or(0.0).total_cmp(&a.doc.unwrap_or(0.0)));
        let (alts, complete) =
            typos::alternatives(word, rows.iter().map(|r| r.term.as_str()), MAX_ALTERNATIVES);
        exhaustive &= complete;
        alternatives.push(alts);
    }
    Ok(Expansion {
        words,
        alternatives,
        exhaustive,
    })
}

impl From<CandidateRow> for Candidate {
    fn from(r: CandidateRow) -> Self {
        Self {
            object_id: r.object_id,
            texts: [r.name, r.symbol, r.description, r.tags, r.address].map(Option::unwrap_or_default),
            updated_at: r.updated_at.unwrap_or(0.0),
        }
    }
}

/// The ranked candidates.
#[derive(Debug, Clone)]
pub struct Ranked {
    /// Best first.
    pub scores: Vec<Score>,
}

/// Ranks the candidate rows of one or more results (duplicates counted once) by Algolia's criteria, keeping
/// what `typoTolerance` `min` / `strict` keep.
pub fn rank(expansion: &Expansion, mode: TypoMode, tiers: Vec<Vec<CandidateRow>>) -> Ranked {
    let mut seen = std::collections::HashSet::new();
    let mut scores = Vec::new();
    let matcher = typos::Matcher::new(&expansion.words, &expansion.alternatives);
    for rows in tiers {
        for row in rows {
            if !seen.insert(row.object_id.clone()) {
                continue;
            }
            let candidate = Candidate::from(row);
            if let Some(score) = typos::score(&matcher, &candidate) {
                scores.push(score);
            }
        }
    }
    let counts: Vec<u32> = scores.iter().map(|s| s.typos).collect();
    if let Some(ceiling) = typos::typo_ceiling(mode, &counts) {
        scores.retain(|s| s.typos <= ceiling);
    }
    scores.sort();
    Ranked { scores }
}

/// Algolia's `_rankingInfo` of a ranked hit.
pub fn ranking_info(score: &Score) -> Value {
    json!({
        "nbTypos": score.typos,
        "firstMatchedWord": score.first_matched_word,
        "proximityDistance": score.proximity,
        "userScore": 0,
        "geoDistance": 0,
        "geoPrecision": 1,
        "nbExactWords": score.exact,
        "words": score.words,
        "filters": 0,
    })
}

/// The terms that highlight each query word: the word, then its typo alternatives.
pub fn highlight_groups(expansion: &Expansion) -> Vec<Vec<String>> {
    expansion
        .alternatives
        .iter()
        .map(|alts| alts.iter().map(|a| a.term.clone()).collect())
        .collect()
}

impl Params {
    /// The hits of `ranked` this search asks for ([`Params::window`], within the first
    /// [`super::params::PAGINATION_LIMITED_TO`]).
    pub fn page_of<'a>(&self, ranked: &'a [Score]) -> Vec<&'a Score> {
        let Some((limit, start)) = self.window().reachable() else {
            return Vec::new();
        };
        let start = usize::try_from(start).unwrap_or(usize::MAX);
        let limit = usize::try_from(limit).unwrap_or(usize::MAX);
        ranked.iter().skip(start).take(limit).collect()
    }
}
