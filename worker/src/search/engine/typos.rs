//! Typo tolerance and ranking as Algolia documents them (pure; the D1 side is [`super::ranked`]).
//!
//! - A typo is an insertion, deletion, substitution or swap of two adjacent letters (optimal string alignment,
//!   `strsim::osa_distance`); case and accents are not typos (words are folded as the FTS5 `unicode61
//!   remove_diacritics 2` tokenizer folds them).
//! - A query word of `minWordSizefor1Typo` (4) characters or more may have one typo, of `minWordSizefor2Typos` (8)
//!   or more two; shorter words match exactly. A typo involving the first letter counts 2 (so a word shows at most 2
//!   typos, or 3 when the first letter is one of them).
//! - The last query word is a prefix (`prefixLast`) unless the query ends with a space; its typos are counted
//!   against the start of a word ("reaclien" finds "realclient" with 1 typo).
//! - Words that look like addresses or hex (`0x…`) match exactly (a full 40-digit address never as a prefix).
//! - Ranking: typo (fewer first), words (more first), proximity (closer first, each pair capped at 8), attribute
//!   (name, symbol, description, tags, address; then the position in it), exact (more whole words first), custom
//!   (most recently updated first, then `objectID`).

use std::cmp::Ordering;

use unicode_normalization::{UnicodeNormalization, char::is_combining_mark};

/// Most query words considered (as the full-text search does).
pub const MAX_WORDS: usize = 8;
/// Longest query word considered for typos (longer ones match exactly or as a prefix).
pub const MAX_TYPO_WORD: usize = 32;
/// A pair of words farther apart than this (or in different attributes) counts this distance.
pub const MAX_PROXIMITY: u32 = 8;

/// `typoTolerance`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypoMode {
    /// Typos allowed by word length (the default).
    On,
    /// Exact words only.
    Off,
    /// Only the hits with the fewest typos.
    Min,
    /// Only the hits with the two lowest typo counts.
    Strict,
}

impl TypoMode {
    /// From a parameter value: `true`/`false`/`min`/`strict` (text) or a JSON boolean.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "true" => Some(Self::On),
            "false" => Some(Self::Off),
            "min" => Some(Self::Min),
            "strict" => Some(Self::Strict),
            _ => None,
        }
    }
}

/// The typo parameters of a search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TypoSettings {
    pub mode: TypoMode,
    pub min_word_size_for_1_typo: u32,
    pub min_word_size_for_2_typos: u32,
}

impl Default for TypoSettings {
    fn default() -> Self {
        Self {
            mode: TypoMode::On,
            min_word_size_for_1_typo: 4,
            min_word_size_for_2_typos: 8,
        }
    }
}

impl TypoSettings {
    /// Edits (insertion, deletion, substitution, transposition) allowed in a query word of `len` characters.
    pub fn allowed_edits(&self, len: usize) -> usize {
        if self.mode == TypoMode::Off {
            return 0;
        }
        let len = u32::try_from(len).unwrap_or(u32::MAX);
        if len >= self.min_word_size_for_2_typos.max(self.min_word_size_for_1_typo) {
            2
        } else if len >= self.min_word_size_for_1_typo {
            1
        } else {
            0
        }
    }
}

/// Folds a word as the FTS5 `unicode61 remove_diacritics 2` tokenizer does: lower case, marks removed.
pub fn fold(word: &str) -> String {
    if word.is_ascii() {
        return word.to_ascii_lowercase();
    }
    word.nfkd()
        .filter(|c| !is_combining_mark(*c))
        .flat_map(char::to_lowercase)
        .collect()
}

/// The words of a text as the tokenizer sees them: alphanumeric runs, folded.
pub fn tokens(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(fold)
}

/// One word of the query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryWord {
    /// Folded.
    pub text: String,
    /// Matches the start of a word (the last query word, unless the query ends with a space).
    pub prefix: bool,
    /// Edits allowed.
    pub edits: usize,
}

/// Whether a word is an address or hex (`0x…`): it matches exactly.
fn is_hex(word: &str) -> bool {
    word.len() > 2 && word.starts_with("0x") && word.bytes().skip(2).all(|b| b.is_ascii_hexdigit())
}

/// The query's words with their prefix flag and allowed edits.
pub fn query_words(query: &str, settings: &TypoSettings) -> Vec<QueryWord> {
    let words: Vec<String> = tokens(query).take(MAX_WORDS).collect();
    let ends_with_space = query.ends_with(|c: char| !c.is_alphanumeric());
    let last = words.len().saturating_sub(1);
    words
        .into_iter()
        .enumerate()
        .map(|(i, text)| {
            let chars = text.chars().count();
            let hex = is_hex(&text);
            let full_address = hex && text.len() == 42;
            let edits = if hex || chars > MAX_TYPO_WORD {
                0
            } else {
                settings.allowed_edits(chars)
            };
            QueryWord {
                prefix: i == last && !ends_with_space && !full_address,
                edits,
                text,
            }
        })
        .collect()
}

/// The typos of `term` for the whole query word `word` (folded), when within `edits`: the edit distance, plus 1
/// when the first letter is involved.
pub fn typos(word: &str, term: &str, edits: usize) -> Option<u8> {
    if word == term {
        return Some(0);
    }
    if edits == 0 {
        return None;
    }
    let (wn, tn) = (word.chars().count(), term.chars().count());
    if wn.abs_diff(tn) > edits {
        return None;
    }
    let d = strsim::osa_distance(word, term);
    if d > edits {
        return None;
    }
    let first = usize::from(word.chars().next() != term.chars().next());
    u8::try_from(d + first).ok()
}

/// The typos of the prefix query word `word` against the start of `term`: the best of [`typos`] over `term`'s
/// prefixes of nearly `word`'s length (a prefix at least as long as the word less its edits).
pub fn prefix_typos(word: &str, term: &str, edits: usize) -> Option<u8> {
    let wn = word.chars().count();
    let chars: Vec<(usize, char)> = term.char_indices().collect();
    let mut best: Option<u8> = None;
    for len in wn.saturating_sub(edits).max(1)..=wn + edits {
        let end = match chars.get(len) {
            Some((at, _)) => *at,
            None if len == chars.len() => term.len(),
            None => break,
        };
        let Some(prefix) = term.get(..end) else {
            continue;
        };
        if let Some(t) = typos(word, prefix, edits) {
            best = Some(best.map_or(t, |b| b.min(t)));
        }
    }
    best
}

/// Characters tried for substitutions and insertions: `a`–`z`, `0`–`9` and the word's own.
fn alphabet(word: &str) -> Vec<char> {
    let mut letters: Vec<char> = ('a'..='z').chain('0'..='9').chain(word.chars()).collect();
    letters.sort_unstable();
    letters.dedup();
    letters
}

/// Every word one edit (deletion, transposition, substitution, insertion) away from `word`: the whole-word
/// candidates of a one-typo word, looked up exactly in the term list.
pub fn neighbors(word: &str) -> Vec<String> {
    let chars: Vec<char> = word.chars().collect();
    let letters = alphabet(word);
    let n = chars.len();
    let mut out = Vec::with_capacity((2 * n + 1) * (letters.len() + 1));
    let build = |parts: &[&[char]]| parts.iter().flat_map(|p| p.iter()).collect::<String>();
    for i in 0..n {
        let (head, tail) = chars.split_at(i);
        let rest = tail.get(1..).unwrap_or_default();
        out.push(build(&[head, rest]));
        if let (Some(a), Some(b)) = (chars.get(i), chars.get(i + 1)) {
            let after = chars.get(i + 2..).unwrap_or_default();
            out.push(build(&[head, &[*b, *a], after]));
        }
        for c in &letters {
            if chars.get(i) != Some(c) {
                out.push(build(&[head, &[*c], rest]));
            }
        }
    }
    for i in 0..=n {
        let (head, tail) = chars.split_at(i);
        for c in &letters {
            out.push(build(&[head, &[*c], tail]));
        }
    }
    out.retain(|w| !w.is_empty() && w != word);
    out.sort_unstable();
    out.dedup();
    out
}

/// One way a query word can match: a term of the index and its typos, or (the last word) the word as a prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Alternative {
    pub term: String,
    pub typos: u8,
    /// Matches any word starting with `term` (the prefix query word itself).
    pub prefix: bool,
}

/// The alternatives of a word: itself (exact, or as a prefix), then the candidate terms within its edits, fewest
/// typos first (then in the order given), at most `max` typo alternatives. Answers whether none were left out.
pub fn alternatives<'a>(
    word: &QueryWord,
    terms: impl Iterator<Item = &'a str>,
    max: usize,
) -> (Vec<Alternative>, bool) {
    let mut typo: Vec<Alternative> = Vec::new();
    if word.edits > 0 {
        for term in terms {
            if term == word.text || (word.prefix && term.starts_with(&word.text)) {
                continue;
            }
            let t = if word.prefix {
                prefix_typos(&word.text, term, word.edits)
            } else {
                typos(&word.text, term, word.edits)
            };
            if let Some(typos) = t.filter(|t| *t > 0) {
                typo.push(Alternative {
                    term: term.to_owned(),
                    typos,
                    prefix: false,
                });
            }
        }
    }
    // fewest typos first; among equals, the order given (the most frequent terms first)
    let mut seen = std::collections::HashSet::new();
    typo.retain(|a| seen.insert(a.term.clone()));
    typo.sort_by_key(|a| a.typos);
    let complete = typo.len() <= max;
    typo.truncate(max);
    let mut out = vec![Alternative {
        term: word.text.clone(),
        typos: 0,
        prefix: word.prefix,
    }];
    out.extend(typo);
    (out, complete)
}

/// An FTS5 string literal.
fn quoted(term: &str) -> String {
    format!("\"{}\"", term.replace('"', "\"\""))
}

/// The FTS5 expression: every word matches one of its alternatives with at most `max_typos` typos.
pub fn fts_expression(words: &[Vec<Alternative>], max_typos: u8) -> Option<String> {
    let groups: Vec<String> = words
        .iter()
        .map(|alts| {
            let parts: Vec<String> = alts
                .iter()
                .filter(|a| a.typos <= max_typos)
                .map(|a| {
                    if a.prefix {
                        format!("{}*", quoted(&a.term))
                    } else {
                        quoted(&a.term)
                    }
                })
                .collect();
            format!("({})", parts.join(" OR "))
        })
        .collect();
    (!groups.is_empty()).then(|| groups.join(" AND "))
}

/// The searchable text of a candidate record, per attribute in ranking order: name, symbol, description, tags,
/// address (the FTS5 columns).
#[derive(Debug, Clone, Default)]
pub struct Candidate {
    pub object_id: String,
    pub texts: [String; 5],
    pub updated_at: f64,
}

/// A record's ranking, Algolia's criteria in order. Smaller sorts first (see [`Ord`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Score {
    pub typos: u32,
    pub words: u32,
    pub proximity: u32,
    /// attribute index × 1000 + word position of the best matched word (`firstMatchedWord`).
    pub first_matched_word: u32,
    pub exact: u32,
    /// Custom tie-break: most recently updated first.
    pub updated_at: f64,
    pub object_id: String,
}

impl Eq for Score {}

impl Ord for Score {
    fn cmp(&self, other: &Self) -> Ordering {
        self.typos
            .cmp(&other.typos)
            .then(other.words.cmp(&self.words))
            .then(self.proximity.cmp(&other.proximity))
            .then(self.first_matched_word.cmp(&other.first_matched_word))
            .then(other.exact.cmp(&self.exact))
            .then(other.updated_at.total_cmp(&self.updated_at))
            .then_with(|| self.object_id.cmp(&other.object_id))
    }
}

impl PartialOrd for Score {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Most places kept per query word in one record (for proximity).
const MAX_MATCHES: usize = 64;

/// Where one query word matched best in a record.
#[derive(Debug, Clone, Copy)]
struct Match {
    typos: u8,
    exact: bool,
    /// attribute index × 1000 + position
    at: u32,
}

/// The alternatives of every query word, indexed for scoring: one hash lookup per record word, plus the prefix
/// alternatives (at most one per query word).
#[derive(Debug, Clone, Default)]
pub struct Matcher {
    /// term → (query word, typos)
    whole: std::collections::HashMap<String, Vec<(usize, u8)>>,
    /// (query word, prefix)
    prefixes: Vec<(usize, String)>,
    words: Vec<String>,
}

impl Matcher {
    /// The matcher of the words' alternatives.
    pub fn new(words: &[QueryWord], alternatives: &[Vec<Alternative>]) -> Self {
        let mut m = Self {
            words: words.iter().map(|w| w.text.clone()).collect(),
            ..Self::default()
        };
        for (i, alts) in alternatives.iter().enumerate() {
            for alt in alts {
                if alt.prefix {
                    m.prefixes.push((i, alt.term.clone()));
                } else {
                    m.whole.entry(alt.term.clone()).or_default().push((i, alt.typos));
                }
            }
        }
        m
    }

    /// The fewest typos with which `token` matches query word `i`, for every word it matches.
    fn matches(&self, token: &str, out: &mut Vec<(usize, u8)>) {
        out.clear();
        if let Some(found) = self.whole.get(token) {
            out.extend(found.iter().copied());
        }
        for (i, prefix) in &self.prefixes {
            if token.starts_with(prefix.as_str()) {
                out.push((*i, 0));
            }
        }
    }
}

/// Scores a candidate against the query words' alternatives; `None` when a word does not match.
pub fn score(matcher: &Matcher, candidate: &Candidate) -> Option<Score> {
    let n = matcher.words.len();
    let mut per_word: Vec<Vec<Match>> = vec![Vec::new(); n];
    let mut found = Vec::new();
    for (a, text) in candidate.texts.iter().enumerate() {
        for (p, token) in tokens(text).enumerate() {
            matcher.matches(&token, &mut found);
            for (i, typos) in &found {
                let Some(list) = per_word.get_mut(*i) else {
                    continue;
                };
                let at = u32::try_from(a * 1000 + p.min(999)).unwrap_or(u32::MAX);
                let exact = *typos == 0 && matcher.words.get(*i).is_some_and(|w| *w == token);
                // the same word and place through two alternatives: keep the better
                if let Some(m) = list.iter_mut().find(|m| m.at == at) {
                    m.typos = m.typos.min(*typos);
                    m.exact |= exact;
                } else if list.len() < MAX_MATCHES {
                    list.push(Match {
                        typos: *typos,
                        exact,
                        at,
                    });
                }
            }
        }
    }
    if per_word.iter().any(Vec::is_empty) {
        return None;
    }
    let mut typos = 0u32;
    let mut exact = 0u32;
    let mut first = u32::MAX;
    for found in &per_word {
        let fewest = found.iter().map(|m| m.typos).min().unwrap_or(0);
        typos += u32::from(fewest);
        exact += u32::from(found.iter().any(|m| m.exact));
        // the attribute criterion: the best place among the word's best (fewest typos) matches
        if let Some(at) = found.iter().filter(|m| m.typos == fewest).map(|m| m.at).min() {
            first = first.min(at);
        }
    }
    let proximity = per_word
        .windows(2)
        .map(|pair| match pair {
            [a, b] => a
                .iter()
                .flat_map(|x| b.iter().map(move |y| (x.at, y.at)))
                .filter(|(x, y)| x / 1000 == y / 1000)
                .map(|(x, y)| x.abs_diff(y).clamp(1, MAX_PROXIMITY))
                .min()
                .unwrap_or(MAX_PROXIMITY),
            _ => 0,
        })
        .sum();
    Some(Score {
        typos,
        words: u32::try_from(per_word.len()).unwrap_or(u32::MAX),
        proximity,
        first_matched_word: first,
        exact,
        updated_at: candidate.updated_at,
        object_id: candidate.object_id.clone(),
    })
}

/// The highest typo count kept by `mode` among the scores' counts (`None`: all are kept).
pub fn typo_ceiling(mode: TypoMode, scores: &[u32]) -> Option<u32> {
    let mut counts: Vec<u32> = scores.to_vec();
    counts.sort_unstable();
    counts.dedup();
    match mode {
        TypoMode::Min => counts.first().copied(),
        TypoMode::Strict => counts.get(1).or(counts.first()).copied(),
        TypoMode::On | TypoMode::Off => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word(text: &str, prefix: bool) -> QueryWord {
        let settings = TypoSettings::default();
        QueryWord {
            text: text.into(),
            prefix,
            edits: settings.allowed_edits(text.chars().count()),
        }
    }

    #[test]
    fn typo_kinds_count_one_and_the_first_letter_two() {
        // deletion, insertion, substitution, transposition
        assert_eq!(typos("reaclient", "realclient", 2), Some(1));
        assert_eq!(typos("realcliient", "realclient", 2), Some(1));
        assert_eq!(typos("realclxent", "realclient", 2), Some(1));
        assert_eq!(typos("realclinet", "realclient", 2), Some(1));
        assert_eq!(typos("hostlie", "hostile", 1), Some(1));
        // the first letter counts 2
        assert_eq!(typos("tichael", "michael", 1), Some(2));
        assert_eq!(typos("tickael", "michael", 2), Some(3));
        assert_eq!(typos("ohstile", "hostile", 1), Some(2));
        // beyond the allowed edits
        assert_eq!(typos("hsotlie", "hostile", 1), None);
        assert_eq!(typos("hostile", "hostile", 0), Some(0));
        assert_eq!(typos("hostlie", "hostile", 0), None);
        // accents and case are not typos
        assert_eq!(fold("HÉLLO"), "hello");
        assert_eq!(typos(&fold("Hôstile"), "hostile", 0), Some(0));
    }

    #[test]
    fn word_length_thresholds() {
        let s = TypoSettings::default();
        assert_eq!([3, 4, 7, 8].map(|n| s.allowed_edits(n)), [0, 1, 1, 2]);
        let custom = TypoSettings {
            min_word_size_for_1_typo: 2,
            min_word_size_for_2_typos: 5,
            ..s
        };
        assert_eq!([1, 2, 4, 5].map(|n| custom.allowed_edits(n)), [0, 1, 1, 2]);
        let off = TypoSettings {
            mode: TypoMode::Off,
            ..s
        };
        assert_eq!(off.allowed_edits(12), 0);
        let words = query_words("Real Clien", &s);
        assert_eq!(words, vec![word("real", false), word("clien", true)]);
        assert!(!query_words("real clien ", &s)[1].prefix);
        // addresses: exact, never a prefix or a typo
        let address = "0xAbC0000000000000000000000000000000000001";
        let w = &query_words(address, &s)[0];
        assert_eq!(
            (w.text.as_str(), w.prefix, w.edits),
            (address.to_lowercase().as_str(), false, 0)
        );
        assert_eq!(query_words("0xabc", &s)[0].edits, 0);
    }

    #[test]
    fn prefix_typos_count_against_the_start_of_a_word() {
        assert_eq!(prefix_typos("reaclien", "realclient", 2), Some(1));
        assert_eq!(prefix_typos("realclein", "realclient", 2), Some(1));
        assert_eq!(prefix_typos("hots", "hostile", 1), Some(1));
        assert_eq!(prefix_typos("xyzq", "hostile", 1), None);
    }

    #[test]
    fn neighbors_hold_every_one_edit_word() {
        let n = neighbors("realclinet");
        for w in [
            "realclient",
            "ealclinet",
            "realclinett",
            "xealclinet",
            "erealclinet",
        ] {
            assert!(n.binary_search(&w.to_owned()).is_ok(), "{w}");
        }
        assert!(!n.contains(&"realclinet".to_owned()));
        assert!(n.iter().all(|w| strsim::osa_distance(w, "realclinet") == 1));
        assert!(neighbors("é").contains(&"ée".to_owned()));
    }

    #[test]
    fn alternatives_and_expression() {
        let terms = ["realclient", "realm", "real", "reaclient", "zzz"];
        let (alts, complete) = alternatives(&word("realclinet", false), terms.into_iter(), 10);
        assert!(complete);
        let got: Vec<(&str, u8)> = alts.iter().map(|a| (a.term.as_str(), a.typos)).collect();
        assert_eq!(got, [("realclinet", 0), ("realclient", 1), ("reaclient", 2)]);
        assert_eq!(
            fts_expression(std::slice::from_ref(&alts), 1).unwrap(),
            "(\"realclinet\" OR \"realclient\")"
        );
        let (short, _) = alternatives(&word("rea", true), terms.into_iter(), 10);
        assert_eq!(
            fts_expression(&[alts, short], 0).unwrap(),
            "(\"realclinet\") AND (\"rea\"*)"
        );
        let (_, capped) = alternatives(&word("realclinet", false), terms.into_iter(), 1);
        assert!(!capped);
    }

    fn candidate(id: &str, name: &str, description: &str, updated_at: f64) -> Candidate {
        Candidate {
            object_id: id.into(),
            texts: [
                name.into(),
                String::new(),
                description.into(),
                String::new(),
                String::new(),
            ],
            updated_at,
        }
    }

    fn rank(query: &str, candidates: &[Candidate], terms: &[&str]) -> Vec<String> {
        let words = query_words(query, &TypoSettings::default());
        let alts: Vec<Vec<Alternative>> = words
            .iter()
            .map(|w| alternatives(w, terms.iter().copied(), 50).0)
            .collect();
        let matcher = Matcher::new(&words, &alts);
        let mut scores: Vec<Score> = candidates.iter().filter_map(|c| score(&matcher, c)).collect();
        scores.sort();
        scores.into_iter().map(|s| s.object_id).collect()
    }

    #[test]
    fn ranking_follows_algolias_criteria_in_order() {
        let terms = ["hostile", "hostle", "after", "takeover", "the"];
        // attribute: name before description when the typos are the same
        let c = [
            candidate("description", "x", "hostile", 9.0),
            candidate("name", "hostile", "", 1.0),
        ];
        assert_eq!(rank("hostile ", &c, &terms), ["name", "description"]);
        // typo first: the exact word before the one-typo word, whatever the attribute
        let c = [
            candidate("one", "hostle", "", 9.0),
            candidate("zero", "", "hostile", 1.0),
        ];
        assert_eq!(rank("hostile ", &c, &terms), ["zero", "one"]);
        // proximity: words next to each other first
        let c = [
            candidate("far", "after the long and slow hostile", "", 9.0),
            candidate("near", "after hostile takeover", "", 1.0),
        ];
        assert_eq!(rank("after hostile", &c, &terms), ["near", "far"]);
        // exact: a whole word before a prefix-only match
        let c = [
            candidate("prefix", "hostiles", "", 9.0),
            candidate("whole", "hostile", "", 1.0),
        ];
        assert_eq!(rank("hostile", &c, &["hostile", "hostiles"]), ["whole", "prefix"]);
        // custom tie-break: most recently updated first
        let c = [
            candidate("old", "hostile", "", 1.0),
            candidate("new", "hostile", "", 2.0),
        ];
        assert_eq!(rank("hostile", &c, &terms), ["new", "old"]);
        // a word that does not match leaves the record out
        assert!(rank("after zebra", &[candidate("a", "after", "", 0.0)], &terms).is_empty());
    }

    #[test]
    fn scores_report_ranking_info() {
        let words = query_words("after hostlie", &TypoSettings::default());
        let alts: Vec<Vec<Alternative>> = words
            .iter()
            .map(|w| alternatives(w, ["after", "hostile"].into_iter(), 50).0)
            .collect();
        let s = score(
            &Matcher::new(&words, &alts),
            &candidate("a", "x after hostile", "", 0.0),
        )
        .unwrap();
        assert_eq!(
            (s.typos, s.words, s.proximity, s.first_matched_word, s.exact),
            (1, 2, 1, 1, 1)
        );
        assert_eq!(typo_ceiling(TypoMode::Min, &[2, 1, 3]), Some(1));
        assert_eq!(typo_ceiling(TypoMode::Strict, &[2, 1, 3, 1]), Some(2));
        assert_eq!(typo_ceiling(TypoMode::On, &[2]), None);
    }

    #[test]
    fn the_work_of_a_word_is_bounded() {
        let long = "a".repeat(MAX_TYPO_WORD);
        assert!(neighbors(&long).len() < 4000);
        let too_long = "b".repeat(MAX_TYPO_WORD + 1);
        assert_eq!(query_words(&too_long, &TypoSettings::default())[0].edits, 0);
        assert_eq!(
            query_words(&"w ".repeat(20), &TypoSettings::default()).len(),
            MAX_WORDS
        );
    }

    #[cfg(not(target_arch = "wasm32"))]
    proptest::proptest! {
        #[test]
        fn typo_counts_never_panic_and_stay_within_bounds(query in "\\PC{0,40}", term in "\\PC{0,40}") {
            for w in query_words(&query, &TypoSettings::default()) {
                if let Some(t) = typos(&w.text, &fold(&term), w.edits) {
                    proptest::prop_assert!(usize::from(t) <= w.edits + 1);
                }
                if let Some(t) = prefix_typos(&w.text, &fold(&term), w.edits) {
                    proptest::prop_assert!(usize::from(t) <= w.edits + 1);
                }
            }
        }

        #[test]
        fn neighbors_are_one_edit_away(word in "[a-zé0-9]{1,9}") {
            for n in neighbors(&word) {
                proptest::prop_assert_eq!(strsim::osa_distance(&n, &word), 1);
            }
        }
    }
}
