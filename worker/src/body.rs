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

/// A runtime error (a thrown JS value) as text.
pub(crate) fn js_text(e: &wasm_bindgen::JsValue) -> String {
    e.as_string()
        .or_else(|| wasm_bindgen::JsCast::dyn_ref::<js_sys::Error>(e).map(|e| String::from(e.message())))
        .unwrap_or_else(|| "runtime error".to_owned())
}

/// A body with exactly `bytes`, and a promise that settles once the runtime has taken the last of them from it
/// (the answer is on its way to the client, or the client went away). The body is a `FixedLengthStream`, so the
/// answer keeps its `Content-Length`.
pub(crate) fn body_with_end(
    bytes: &js_sys::Uint8Array,
) -> Result<(worker::web_sys::ReadableStream, js_sys::Promise), String> {
    let pipe = worker::worker_sys::FixedLengthStream::new(bytes.length()).map_err(|e| js_text(&e))?;
    let source = worker::web_sys::Response::new_with_opt_buffer_source(Some(bytes))
        .map_err(|e| js_text(&e))?
        .body()
        .ok_or("a body without a stream")?;
    let sent = source.pipe_to(&pipe.writable());
    Ok((pipe.readable(), sent))
}

/// A body of exactly the runtime-held `bytes` (a `FixedLengthStream`, whose length R2 and the client's answer
/// take as given). The pipe's end is awaited on its own, so that a reader that gives up (an R2 write that fails
/// half-way) leaves no unhandled rejection behind.
///
/// # Errors
/// A runtime error, as text.
pub(crate) fn native_body(bytes: &js_sys::Uint8Array) -> Result<worker::web_sys::ReadableStream, String> {
    let (body, sent) = body_with_end(bytes)?;
    worker::wasm_bindgen_futures::spawn_local(async move {
        // settled either way: the bytes were all taken, or the reader cancelled
        let _ = worker::wasm_bindgen_futures::JsFuture::from(sent).await;
    });
    Ok(body)
}
