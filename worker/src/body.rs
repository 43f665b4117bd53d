//! Bounded body reads. Every request body and every upstream answer (gateways, metadata URLs) is read chunk by
//! chunk and refused as soon as it passes its limit — whatever `Content-Length` says, and also when there is
//! none (chunked bodies). Nothing is ever buffered beyond the limit.

use futures_util::StreamExt;
use worker::{ByteStream, Headers, Request, Response};

use crate::error::{ApiError, ApiResult, Code};

/// Why a bounded read stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadError {
    /// More than the limit (declared or streamed).
    TooLarge,
    /// The stream failed.
    Failed(String),
}

/// The declared `Content-Length`, when present and a number.
fn declared_length(headers: &Headers) -> Option<Option<u64>> {
    let value = headers.get("content-length").ok().flatten()?;
    Some(value.trim().parse().ok())
}

/// Whether the declared length rules the body out: over `max`, or not a number.
fn declared_over(headers: &Headers, max: usize) -> bool {
    match declared_length(headers) {
        None => false,
        Some(Some(n)) => usize::try_from(n).map_or(true, |n| n > max),
        Some(None) => true,
    }
}

/// Reads `stream` into memory, at most `max` bytes.
pub async fn collect(mut stream: ByteStream, max: usize) -> Result<Vec<u8>, ReadError> {
    let mut out = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| ReadError::Failed(e.to_string()))?;
        if chunk.len() > max.saturating_sub(out.len()) {
            // dropping the stream cancels it: the rest is never read
            return Err(ReadError::TooLarge);
        }
        out.extend_from_slice(&chunk);
    }
    Ok(out)
}

/// 413 `BODY_TOO_LARGE`.
pub fn too_large(max: usize) -> ApiError {
    ApiError::new(Code::BodyTooLarge, format!("the body is larger than {max} bytes"))
}

/// The request body, at most `max` bytes (413 `BODY_TOO_LARGE` beyond); an absent body reads as empty.
pub async fn request_bytes(req: &mut Request, max: usize) -> ApiResult<Vec<u8>> {
    if declared_over(req.headers(), max) {
        return Err(too_large(max));
    }
    let Ok(stream) = req.stream() else {
        return Ok(Vec::new());
    };
    collect(stream, max).await.map_err(|e| match e {
        ReadError::TooLarge => too_large(max),
        ReadError::Failed(detail) => {
            ApiError::new(Code::InvalidBody, format!("the body could not be read: {detail}"))
        }
    })
}

/// An upstream response body, at most `max` bytes.
pub async fn response_bytes(res: &mut Response, max: usize) -> Result<Vec<u8>, ReadError> {
    if declared_over(res.headers(), max) {
        return Err(ReadError::TooLarge);
    }
    match res.stream() {
        Ok(stream) => collect(stream, max).await,
        // no streamable body (an empty answer)
        Err(_) => Ok(Vec::new()),
    }
}
