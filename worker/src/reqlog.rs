//! One JSON log line per request — `{"event":"request","requestId","method","route","status","durationMs","keyId",
//! "code"}` — and per transaction state change (`txlog`); Workers Logs (`[observability]`) indexes their fields. The
//! request id is Cloudflare's `cf-ray` when there is one (so the line meets Cloudflare's own logs), else 16 random
//! bytes; every answer carries it as `x-request-id`. Never logged: secrets, API keys (only a key's id), bodies,
//! query strings.
//!
//! What only the handlers learn (the route matched, the key's id) is noted under the request the panic guard marks as
//! being polled (`panic_guard::current`), so no handler signature carries the log.

use std::{cell::RefCell, collections::HashMap};

use serde::Serialize;
use worker::Request;

/// What a request's handlers noted for its log line.
#[derive(Debug, Default)]
struct Notes {
    route: Option<&'static str>,
    key_id: Option<String>,
}

thread_local! {
    static NOTES: RefCell<HashMap<u32, Notes>> = RefCell::new(HashMap::new());
}

fn note(change: impl FnOnce(&mut Notes)) {
    let id = crate::panic_guard::current();
    if id != 0 {
        NOTES.with(|n| change(n.borrow_mut().entry(id).or_default()));
    }
}

/// Notes the route pattern the request matched (`/v1/:chainId/address/:address`, not the path).
pub fn note_route(pattern: &'static str) {
    note(|n| n.route = Some(pattern));
}

/// Notes the id of the API key the request presented (found, whether or not it was then allowed).
pub fn note_key(id: &str) {
    note(|n| n.key_id = Some(id.to_owned()));
}

/// A request being served: its id and when it started.
#[derive(Debug)]
pub struct RequestLog {
    id: String,
    panic_id: u32,
    method: String,
    started_ms: u64,
}

/// What [`RequestLog::finish`] logged.
#[derive(Debug)]
pub struct Finished {
    /// The request's method.
    pub method: String,
    /// The route pattern it matched.
    pub route: Option<&'static str>,
    /// The answer's status.
    pub status: u16,
    /// Milliseconds from the start to the answer.
    pub duration_ms: u64,
}

/// The log line.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Line<'a> {
    event: &'static str,
    request_id: &'a str,
    method: &'a str,
    route: Option<&'static str>,
    status: u16,
    duration_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    key_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    code: Option<&'a str>,
}

impl RequestLog {
    /// Starts the log of `req`.
    pub fn start(req: &Request) -> Self {
        let ray = req
            .headers()
            .get("cf-ray")
            .ok()
            .flatten()
            .filter(|r| r.len() <= 64 && r.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'));
        Self {
            id: ray.unwrap_or_else(random_id),
            panic_id: crate::panic_guard::request_id(req),
            method: req.method().to_string(),
            started_ms: crate::plumbing::now_ms(),
        }
    }

    /// The request id (`x-request-id`).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Writes the line: the answer's status and, for an error, its code. Returns what it logged (the request's
    /// Analytics Engine data point is made of it).
    pub fn finish(self, status: u16, code: Option<&str>) -> Finished {
        let notes = NOTES
            .with(|n| n.borrow_mut().remove(&self.panic_id))
            .unwrap_or_default();
        let line = Line {
            event: "request",
            request_id: &self.id,
            method: &self.method,
            route: notes.route,
            status,
            duration_ms: crate::plumbing::now_ms().saturating_sub(self.started_ms),
            key_id: notes.key_id,
            code,
        };
        let json = serde_json::to_string(&line).unwrap_or_default();
        if status >= 500 {
            worker::console_error!("{json}");
        } else {
            worker::console_log!("{json}");
        }
        Finished {
            route: line.route,
            status,
            duration_ms: line.duration_ms,
            method: self.method,
        }
    }
}

fn random_id() -> String {
    let mut bytes = [0u8; 16];
    // without randomness the id is still unique enough within the isolate's log: the time
    if getrandom::fill(&mut bytes).is_err() {
        bytes[..8].copy_from_slice(&crate::plumbing::now_ms().to_be_bytes());
    }
    alloy_primitives::hex::encode(bytes)
}
