//! Workers Analytics Engine data points, written to the dataset bound as `ANALYTICS` (optional: without the binding
//! nothing is written and nothing fails). One dataset holds every kind; `blob1` names the kind, so a query selects
//! one with `WHERE blob1 = 'request'`. The schema (docs/operations.md, "Analytics Engine"):
//!
//! | kind | index1 | blobs | doubles |
//! |---|---|---|---|
//! | `request` | route pattern | 1 `request`, 2 method, 3 route pattern (`unmatched`), 4 error code (empty when none) | 1 status, 2 duration ms |
//! | `gas` | meter subject (`relayer:42`, `key:<id>`, `profile:0x…`) | 1 `gas`, 2 subject kind (`relayer`/`key`/`profile`), 3 subject | 1 gas charged |
//! | `transaction` | new state | 1 `transaction`, 2 state, 3 kind (`deploy`/`execute`/…), 4 hash | 1 count (1), 2 gas used (0 until mined) |
//! | `indexer` | chain id | 1 `indexer`, 2 chain id, 3 why it stopped early (empty) | 1 lag blocks, 2 head, 3 last block, 4 records, 5 unindexable, 6 subrequests |
//! | `ipfs_cache` | `ipfs_cache` | 1 `ipfs_cache`, 2 `hit`/`miss` | 1 hit (1) or miss (0) |
//!
//! The builders are pure (tested below); [`record`] hands a point to the dataset this isolate's entry points bound
//! with [`bind`] — the Worker's `fetch` and `scheduled` handlers and the Durable Objects' constructors (one script,
//! one set of bindings), so code without the `Env` at hand (the transaction log) records too. Writes are
//! fire-and-forget, as the runtime makes them: nothing here waits or can fail a request.

use std::cell::{Cell, RefCell};

use profile_relayer::api::{TransactionStatus, admin::RunStats};
use worker::{AnalyticsEngineDataPointBuilder, AnalyticsEngineDataset, Env};

/// The binding's name.
pub const BINDING: &str = "ANALYTICS";

/// Analytics Engine keeps at most 96 bytes of an index.
const MAX_INDEX_BYTES: usize = 96;
/// Each blob is cut to this many bytes (the data point's blobs may total 16 KB).
const MAX_BLOB_BYTES: usize = 256;

/// A data point, before it is handed to the runtime.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// The sampling key (`index1`).
    pub index: String,
    /// `blob1…`: `blob1` is the kind.
    pub blobs: Vec<String>,
    /// `double1…`.
    pub doubles: Vec<f64>,
}

/// `s` cut to at most `max` bytes, on a character boundary.
fn cut(s: &str, max: usize) -> String {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s.get(..end).unwrap_or_default().to_owned()
}

#[allow(clippy::cast_precision_loss)] // gas and block numbers stay far below 2^53
fn float(value: u64) -> f64 {
    value as f64
}

impl Point {
    fn new(kind: &str, index: &str, blobs: &[&str], doubles: Vec<f64>) -> Self {
        Self {
            index: cut(index, MAX_INDEX_BYTES),
            blobs: std::iter::once(kind)
                .chain(blobs.iter().copied())
                .map(|b| cut(b, MAX_BLOB_BYTES))
                .collect(),
            doubles,
        }
    }

    /// A request answered: its route pattern (never the path: no addresses or CIDs), status and duration.
    pub fn request(
        method: &str,
        route: Option<&str>,
        status: u16,
        duration_ms: u64,
        code: Option<&str>,
    ) -> Self {
        let route = route.unwrap_or("unmatched");
        Self::new(
            "request",
            route,
            &[method, route, code.unwrap_or_default()],
            vec![f64::from(status), float(duration_ms)],
        )
    }

    /// Gas settled on a meter (a receipt's charge); `meter` is its subject's name (`relayer:42`, `key:<id>`,
    /// `profile:<address>`), whose first word is the kind.
    pub fn gas(meter: &str, charged: u64) -> Self {
        let kind = meter.split(':').next().unwrap_or_default();
        Self::new("gas", meter, &[kind, meter], vec![float(charged)])
    }

    /// A transaction's state changed (the transaction log's line).
    pub fn transaction(record: &TransactionStatus) -> Self {
        let state = json_word(&record.status);
        let kind = json_word(&record.kind);
        Self::new(
            "transaction",
            &state,
            &[&state, &kind, &record.hash.to_string()],
            vec![1.0, float(record.gas_used.unwrap_or(0))],
        )
    }

    /// An indexer run: how far behind the head it stopped.
    pub fn indexer(stats: &RunStats) -> Self {
        let chain = stats.chain_id.to_string();
        Self::new(
            "indexer",
            &chain,
            &[&chain, stats.stopped.as_deref().unwrap_or_default()],
            vec![
                float(stats.head_block.saturating_sub(stats.to_block)),
                float(stats.head_block),
                float(stats.to_block),
                float(stats.indexed),
                float(stats.errors),
                f64::from(stats.subrequests),
            ],
        )
    }

    /// A whole-content `/ipfs` request (no `Range`) answered from R2 (`hit`) or from the gateways (`miss`).
    pub fn ipfs_cache(hit: bool) -> Self {
        Self::new(
            "ipfs_cache",
            "ipfs_cache",
            &[if hit { "hit" } else { "miss" }],
            vec![if hit { 1.0 } else { 0.0 }],
        )
    }
}

/// A unit enum's serde name (`"mined"` → `mined`).
fn json_word<T: serde::Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        _ => "unknown".to_owned(),
    }
}

thread_local! {
    static DATASET: RefCell<Option<AnalyticsEngineDataset>> = const { RefCell::new(None) };
    /// Whether [`bind`] ran in this isolate, and whether points are also logged (`ANALYTICS_LOG`).
    static BOUND: Cell<bool> = const { Cell::new(false) };
    static LOG: Cell<bool> = const { Cell::new(false) };
}

/// Takes this isolate's `ANALYTICS` binding, if the deployment has one (called by every entry point; the first call
/// binds).
/// `log` says whether `ANALYTICS_LOG` is on; it is asked only by the first call (the caller reads the configuration,
/// so this module needs none).
pub fn bind(env: &Env, log: impl FnOnce() -> bool) {
    if BOUND.with(Cell::get) {
        return;
    }
    BOUND.with(|b| b.set(true));
    DATASET.with(|d| *d.borrow_mut() = env.analytics_engine(BINDING).ok());
    LOG.with(|l| l.set(log()));
}

/// Writes `point` to the bound dataset; nothing without one. A refused write is logged, never returned. With
/// `ANALYTICS_LOG=true` (tests: `wrangler dev` discards the writes) the point is also logged.
pub fn record(point: &Point) {
    if LOG.with(Cell::get) {
        worker::console_log!(
            "{}",
            serde_json::json!({"event": "analytics", "index": point.index, "blobs": point.blobs,
                "doubles": point.doubles})
        );
    }
    DATASET.with(|d| {
        let Some(dataset) = d.borrow().clone() else {
            return;
        };
        let index = [point.index.as_str()];
        let built = AnalyticsEngineDataPointBuilder::new()
            .indexes(index)
            .blobs(point.blobs.iter().map(String::as_str))
            .doubles(point.doubles.iter().copied());
        if let Err(e) = built.write_to(&dataset) {
            worker::console_warn!("analytics: {e}");
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meter::Subject;
    use alloy_primitives::{Address, B256};
    use profile_relayer::api::{TransactionKind, TransactionState};

    #[test]
    fn requests_carry_the_pattern_status_and_duration() {
        let p = Point::request(
            "GET",
            Some("/v1/{chainId}/address/{address}"),
            404,
            12,
            Some("NOT_FOUND"),
        );
        assert_eq!(p.index, "/v1/{chainId}/address/{address}");
        assert_eq!(
            p.blobs,
            ["request", "GET", "/v1/{chainId}/address/{address}", "NOT_FOUND"]
        );
        assert_eq!(p.doubles, [404.0, 12.0]);
        let p = Point::request("POST", None, 200, 3, None);
        assert_eq!(
            (p.index.as_str(), p.blobs.get(3).map(String::as_str)),
            ("unmatched", Some(""))
        );
    }

    #[test]
    fn gas_names_its_meter() {
        let p = Point::gas(&Subject::Relayer(42).name(), 21_000);
        assert_eq!(p.index, "relayer:42");
        assert_eq!(p.blobs, ["gas", "relayer", "relayer:42"]);
        assert_eq!(p.doubles, [21_000.0]);
        let p = Point::gas(&Subject::Key("0123456789abcdef".into()).name(), 5);
        assert_eq!(p.blobs.get(1).map(String::as_str), Some("key"));
        let p = Point::gas(&Subject::Profile(Address::repeat_byte(0xab)).name(), 5);
        assert_eq!(p.index, format!("profile:0x{}", "ab".repeat(20)));
    }

    #[test]
    fn transactions_by_state() {
        let mut record = crate::txlog::pending(B256::repeat_byte(1), TransactionKind::Execute, Address::ZERO);
        let p = Point::transaction(&record);
        assert_eq!(p.index, "pending");
        assert_eq!(
            p.blobs.get(..3),
            Some(&["transaction".to_owned(), "pending".into(), "execute".into()][..])
        );
        assert_eq!(p.blobs.get(3), Some(&B256::repeat_byte(1).to_string()));
        assert_eq!(p.doubles, [1.0, 0.0]);
        record.status = TransactionState::Mined;
        record.gas_used = Some(50_000);
        let p = Point::transaction(&record);
        assert_eq!((p.index.as_str(), p.doubles.get(1)), ("mined", Some(&50_000.0)));
    }

    #[test]
    fn indexer_lag_is_head_minus_last_block() {
        let stats = RunStats {
            chain_id: 4201,
            from_block: 90,
            to_block: 100,
            head_block: 130,
            indexed: 7,
            errors: 1,
            subrequests: 33,
            stopped: Some("time".into()),
            ..RunStats::default()
        };
        let p = Point::indexer(&stats);
        assert_eq!(p.index, "4201");
        assert_eq!(p.blobs, ["indexer", "4201", "time"]);
        assert_eq!(p.doubles, [30.0, 130.0, 100.0, 7.0, 1.0, 33.0]);
        // an indexer ahead of a node that went back never reports a wrapped lag
        let ahead = RunStats {
            to_block: 140,
            ..stats
        };
        assert_eq!(Point::indexer(&ahead).doubles.first(), Some(&0.0));
    }

    #[test]
    fn cache_hits_and_bounds() {
        assert_eq!(Point::ipfs_cache(true).blobs, ["ipfs_cache", "hit"]);
        assert_eq!(Point::ipfs_cache(false).doubles, [0.0]);
        // long values are cut within Analytics Engine's limits, on character boundaries
        let long = "é".repeat(200);
        let p = Point::request("GET", Some(&long), 200, 1, None);
        assert!(p.index.len() <= MAX_INDEX_BYTES && p.index.chars().all(|c| c == 'é'));
        assert!(p.blobs.iter().all(|b| b.len() <= MAX_BLOB_BYTES));
    }
}
