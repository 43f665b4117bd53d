//! Browse cursors: the parameters of the first call, the last `objectID` served and the next page number, as
//! hex-encoded JSON (opaque to clients).

use alloy_primitives::hex;
use serde_json::{Map, Value, json};

use super::params::{MAX_HITS_PER_PAGE, Params};
use crate::error::{ApiError, ApiResult, Code};

/// Longest browse cursor, in characters.
pub const MAX_CURSOR_LEN: usize = 8192;

/// A browse cursor: the parameters of the first call, the last `objectID` served and the next page number, as
/// hex-encoded JSON (opaque to clients).
pub fn encode_cursor(params: &Params, after: &str, page: u64) -> ApiResult<String> {
    let json = json!({ "p": params.encoded(), "a": after, "n": page, "h": params.hits_per_page });
    Ok(hex::encode(json.to_string()))
}

/// The parameters, last `objectID` and page number of a cursor; 400 `INVALID_CURSOR` when it is not one.
pub fn decode_cursor(cursor: &str) -> ApiResult<(Params, String, u64)> {
    let bad = || ApiError::new(Code::InvalidCursor, "cursor is not one this API answered");
    if cursor.len() > MAX_CURSOR_LEN {
        return Err(bad());
    }
    let bytes = hex::decode(cursor).map_err(|_| bad())?;
    let value: Value = serde_json::from_slice(&bytes).map_err(|_| bad())?;
    let (Some(p), Some(after), Some(page), Some(per)) = (
        value.get("p").and_then(Value::as_str),
        value.get("a").and_then(Value::as_str),
        value.get("n").and_then(Value::as_u64),
        value.get("h").and_then(Value::as_u64),
    ) else {
        return Err(bad());
    };
    let mut body = Map::new();
    body.insert("params".into(), json!(p));
    let mut params = Params::from_body_with(&body, per.min(MAX_HITS_PER_PAGE))?;
    params.hits_per_page = per.min(MAX_HITS_PER_PAGE);
    Ok((params, after.to_owned(), page.min(u64::from(u32::MAX))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::engine::params::tests::body;

    #[test]
    fn cursors_round_trip_and_reject_junk() {
        let p = Params::from_body_with(&body(json!({ "query": "a", "filters": "type:X" })), 1000).unwrap();
        let cursor = encode_cursor(&p, "0xabc", 3).unwrap();
        let (back, after, page) = decode_cursor(&cursor).unwrap();
        assert_eq!((back.query.as_str(), after.as_str(), page), ("a", "0xabc", 3));
        assert_eq!(back.filter, p.filter);
        assert_eq!(back.hits_per_page, 1000);
        for junk in ["", "zz", "7b7d", &"0".repeat(MAX_CURSOR_LEN + 2)] {
            assert_eq!(decode_cursor(junk).unwrap_err().code, "INVALID_CURSOR");
        }
    }
}
