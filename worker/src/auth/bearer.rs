//! The `Authorization: Bearer <token>` header, read once for every kind of token.

use worker::Request;

use crate::error::{ApiError, ApiResult, Code};

/// The request's bearer token: `None` without an `Authorization` header; 401 `INVALID_API_KEY` for another shape.
pub(super) fn bearer(req: &Request) -> ApiResult<Option<String>> {
    let Some(value) = req.headers().get("authorization")? else {
        return Ok(None);
    };
    let token = value
        .strip_prefix("Bearer ")
        .or_else(|| value.strip_prefix("bearer "))
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| {
            ApiError::new(
                Code::InvalidApiKey,
                "the Authorization header must be `Bearer <key>`",
            )
        })?;
    Ok(Some(token.to_owned()))
}
