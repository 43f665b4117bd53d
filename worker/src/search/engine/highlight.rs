//! Algolia's `_highlightResult`: `{value, matchLevel, matchedWords, fullyHighlighted}` where `value` is the record
//! text HTML-escaped, with every word that starts with a query word wrapped in the highlight tags (the query words
//! match as prefixes, as the full-text search does).

use serde_json::{Value, json};

/// The query words as the full-text search uses them: alphanumeric runs, lowercased, at most 8.
pub fn query_words(query: &str) -> Vec<String> {
    query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .take(8)
        .map(str::to_lowercase)
        .collect()
}

/// Escapes text for HTML (`&`, `<`, `>`, `"`, `'`).
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The byte length of the prefix of `word` that spells the lowercase `query` (case-insensitively), when it does.
fn prefix_len(word: &str, query: &str) -> Option<usize> {
    let mut wanted = query.chars().peekable();
    for (at, c) in word.char_indices() {
        for lower in c.to_lowercase() {
            match wanted.next() {
                Some(q) if q == lower => {}
                Some(_) => return None,
                // the query ended inside the lowercase form of `c`: highlight up to `c`
                None => return Some(at),
            }
        }
        if wanted.peek().is_none() {
            return Some(at + c.len_utf8());
        }
    }
    None
}

/// Whether the highlight tags are the markers of a client that HTML-escapes highlighted values itself
/// (InstantSearch's `escapeHTML`, the default, asks for `__ais-highlight__`): its values are left unescaped, else
/// it would show `&amp;`.
pub fn client_escapes(pre: &str) -> bool {
    pre == "__ais-highlight__"
}

/// The highlight object of one text: HTML-escaped unless [`client_escapes`].
#[cfg(test)]
pub fn highlight(text: &str, words: &[String], pre: &str, post: &str) -> Value {
    let groups: Vec<Vec<String>> = words.iter().map(|w| vec![w.clone()]).collect();
    highlight_groups(text, &groups, pre, post)
}

/// [`highlight`] where each query word (the first of its group) is also highlighted by the other terms of its
/// group (the words it matched with typos); `matchedWords` lists the query words.
pub fn highlight_groups(text: &str, groups: &[Vec<String>], pre: &str, post: &str) -> Value {
    let words: Vec<&String> = groups.iter().filter_map(|g| g.first()).collect();
    let escape = |s: &str| {
        if client_escapes(pre) {
            s.to_owned()
        } else {
            escape(s)
        }
    };
    let mut value = String::with_capacity(text.len() + 16);
    let mut matched = vec![false; words.len()];
    let mut fully = true;
    let mut any_word = false;
    let mut rest = text;
    while !rest.is_empty() {
        let split = rest
            .char_indices()
            .find(|(_, c)| c.is_alphanumeric() != rest.chars().next().is_some_and(char::is_alphanumeric))
            .map_or(rest.len(), |(i, _)| i);
        let (run, tail) = rest.split_at(split);
        rest = tail;
        if !run.chars().next().is_some_and(char::is_alphanumeric) {
            value.push_str(&escape(run));
            continue;
        }
        any_word = true;
        let mut best = 0;
        for (i, group) in groups.iter().enumerate() {
            for (j, term) in group.iter().enumerate() {
                // typo terms highlight whole words only
                let n = match prefix_len(run, term) {
                    Some(n) if j == 0 || n == run.len() => n,
                    _ => continue,
                };
                if let Some(m) = matched.get_mut(i) {
                    *m = true;
                }
                best = best.max(n);
            }
        }
        if best == 0 {
            fully = false;
            value.push_str(&escape(run));
        } else {
            let (hit, after) = run.split_at(best);
            if !after.is_empty() {
                fully = false;
            }
            value.push_str(pre);
            value.push_str(&escape(hit));
            value.push_str(post);
            value.push_str(&escape(after));
        }
    }
    let matched_words: Vec<&String> = words
        .iter()
        .copied()
        .zip(&matched)
        .filter(|(_, m)| **m)
        .map(|(w, _)| w)
        .collect();
    let level = if matched_words.is_empty() {
        "none"
    } else if matched_words.len() == words.len() {
        "full"
    } else {
        "partial"
    };
    let mut out = json!({ "value": value, "matchLevel": level, "matchedWords": matched_words });
    if level != "none"
        && let Value::Object(map) = &mut out
    {
        map.insert("fullyHighlighted".into(), json!(fully && any_word));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hl(text: &str, query: &str) -> Value {
        highlight(text, &query_words(query), "<em>", "</em>")
    }

    #[test]
    fn algolia_shape() {
        let v = hl("Alice & Bob's <script>", "ali bo");
        assert_eq!(
            v,
            json!({
                "value": "<em>Ali</em>ce &amp; <em>Bo</em>b&#39;s &lt;script&gt;",
                "matchLevel": "full",
                "matchedWords": ["ali", "bo"],
                "fullyHighlighted": false,
            })
        );
        assert_eq!(hl("alice", "alice")["fullyHighlighted"], true);
        assert_eq!(hl("Alice", "zed ali")["matchLevel"], "partial");
        assert_eq!(
            hl("<b>x</b>", ""),
            json!({ "value": "&lt;b&gt;x&lt;/b&gt;", "matchLevel": "none", "matchedWords": [] })
        );
        // case-insensitive beyond ASCII, and byte offsets on multi-byte text
        assert_eq!(hl("ÉCOLE été", "éc")["value"], "<em>ÉC</em>OLE été");
        assert_eq!(hl("日本語", "日本")["value"], "<em>日本</em>語");
        // InstantSearch escapes the values itself
        let pre = "__ais-highlight__";
        let post = "__/ais-highlight__";
        let v = highlight("a<b", &query_words("a"), pre, post);
        assert_eq!(v["value"], "__ais-highlight__a__/ais-highlight__<b");
        // a word matched with a typo: the whole word, listed as the query word
        let groups = vec![
            vec!["realclinet".to_owned(), "realclient".to_owned()],
            vec!["a".to_owned()],
        ];
        let v = highlight_groups("Realclient realclients", &groups, "<em>", "</em>");
        assert_eq!(v["value"], "<em>Realclient</em> realclients");
        assert_eq!(v["matchedWords"], json!(["realclinet"]));
        assert_eq!(v["matchLevel"], "partial");
    }

    #[cfg(not(target_arch = "wasm32"))]
    proptest::proptest! {
        #[test]
        fn value_is_escaped_text_plus_tags(text in "\\PC{0,60}", query in "\\PC{0,12}") {
            let v = highlight(&text, &query_words(&query), "\u{1}", "\u{2}");
            let value = v["value"].as_str().unwrap_or_default().to_owned();
            // without the tags the value is the escaped text, whatever it holds
            let stripped: String = value.chars().filter(|c| *c != '\u{1}' && *c != '\u{2}').collect();
            let clean: String = text.chars().filter(|c| *c != '\u{1}' && *c != '\u{2}').collect();
            proptest::prop_assert_eq!(stripped, escape(&clean));
            proptest::prop_assert!(!value.contains('<') && !value.contains('>'));
        }
    }
}
