//! The `Webhooks` Durable Object: one per API key (`key:<id>`) and one for the operator (`operator`). It holds the
//! endpoint (URL and secret) and the deliveries in its SQLite storage: every event is stored before its first
//! attempt, and the object's alarm delivers what is due, one event after the other, and schedules the next retry
//! ([`super::policy::retry_delay_ms`]).

// the durable_object macro generates undocumented glue items
#![allow(missing_docs)]

use std::cell::Cell;

use alloy_primitives::Address;
use profile_relayer::api::admin::{
    CreatedWebhook, DeliveryState, RemovedWebhook, WebhookDeliveries, WebhookDelivery,
};
use serde::{Deserialize, Serialize};
use worker::{
    DurableObject, Env, Headers, Method, Request, RequestInit, RequestRedirect, Response, Result, SqlStorage,
    SqlStorageValue, State, durable_object,
};

use super::{Event, policy, sign};
use crate::{
    config::Config,
    error::{ApiError, ApiResult, Code},
    plumbing::now_ms,
    rpc::{TimedFetchError, fetch_with_timeout},
};

/// Deliveries attempted by one alarm (the others wait for the next one, moments later).
const PER_ALARM: u32 = 25;

/// Finished deliveries are kept this long in the log…
const KEEP_MS: u64 = 7 * 86_400_000;

/// …and at most this many of them.
const KEEP_ROWS: u32 = 1_000;

/// Undelivered events one endpoint may hold; beyond, new events are refused (logged) rather than growing without
/// bound while a receiver is down.
const MAX_PENDING: u64 = 10_000;

/// A low balance is alerted again after this long (while it stays low).
const REALERT_MS: u64 = 86_400_000;

/// What a `Webhooks` object is asked.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "camelCase")]
pub enum WebhookOp {
    /// Sets (or replaces) the endpoint with a fresh secret (answers [`CreatedWebhook`]).
    Set {
        /// Checked by the admin route.
        url: String,
    },
    /// Removes the endpoint; undelivered events are cancelled (answers [`RemovedWebhook`]).
    Remove,
    /// Stores events for delivery, when an endpoint is set (answers how many were new).
    Enqueue {
        /// The events, each with its id (an id already stored is not stored again).
        events: Vec<Event>,
    },
    /// The delivery log, newest first (answers [`WebhookDeliveries`]).
    Deliveries {
        /// 1 to 100.
        limit: u32,
        /// Where the previous page ended.
        cursor: Option<String>,
    },
    /// A relayer balance as read by the cron: alerts once when it falls below the threshold (again after a day
    /// while it stays low) and once when it is back (answers whether an event was stored).
    Balance {
        /// The chain.
        chain_id: u64,
        /// The relayer account.
        signer: Address,
        /// Wei (decimal; JSON numbers above 2^53 break).
        balance: String,
        /// Wei (decimal).
        threshold: String,
    },
}

#[allow(missing_debug_implementations, missing_docs)]
#[durable_object]
pub struct Webhooks {
    state: State,
    config: Config,
    schema_ready: Cell<bool>,
}

#[derive(Deserialize)]
struct EndpointRow {
    url: String,
    secret: String,
}

#[derive(Deserialize)]
struct DueRow {
    id: String,
    body: String,
    attempts: u32,
}

#[derive(Deserialize)]
struct LogRow {
    id: String,
    #[serde(rename = "type")]
    event_type: String,
    created_ms: u64,
    state: String,
    attempts: u32,
    last_status: Option<u16>,
    last_error: Option<String>,
    last_ms: Option<u64>,
    next_ms: Option<u64>,
}

#[derive(Deserialize)]
struct CountRow {
    n: u64,
}

#[derive(Deserialize)]
struct NextRow {
    next_ms: Option<u64>,
}

#[derive(Deserialize)]
struct AlertRow {
    fired_ms: u64,
}

fn int(value: u64) -> ApiResult<SqlStorageValue> {
    SqlStorageValue::try_from_i64(i64::try_from(value).map_err(ApiError::internal)?)
        .map_err(ApiError::internal)
}

/// How one attempt ended.
#[derive(Debug)]
struct Outcome {
    status: Option<u16>,
    error: Option<String>,
}

impl Outcome {
    fn delivered(&self) -> bool {
        self.status.is_some_and(|s| (200..300).contains(&s))
    }
}

impl DurableObject for Webhooks {
    fn new(state: State, env: Env) -> Self {
        Self {
            state,
            config: Config::from_env(&env),
            schema_ready: Cell::new(false),
        }
    }

    async fn fetch(&self, mut req: Request) -> Result<Response> {
        let answer = match req.json::<WebhookOp>().await {
            Ok(op) => self.apply(op).await,
            Err(e) => Err(ApiError::internal(e)),
        };
        Ok(answer.unwrap_or_else(ApiError::into_response))
    }

    async fn alarm(&self) -> Result<Response> {
        if let Err(e) = self.deliver_due().await {
            worker::console_warn!("webhooks alarm: {} {}", e.code, e.message);
            self.state.storage().set_alarm(60_000).await?;
        }
        Response::ok("")
    }
}

impl Webhooks {
    fn sql(&self) -> ApiResult<SqlStorage> {
        let sql = self.state.storage().sql();
        if !self.schema_ready.get() {
            for statement in [
                "CREATE TABLE IF NOT EXISTS endpoint (one INTEGER PRIMARY KEY CHECK (one = 1), url TEXT NOT NULL, \
                 secret TEXT NOT NULL)",
                "CREATE TABLE IF NOT EXISTS deliveries (id TEXT PRIMARY KEY, type TEXT NOT NULL, body TEXT NOT NULL, \
                 created_ms INTEGER NOT NULL, state TEXT NOT NULL, attempts INTEGER NOT NULL, next_ms INTEGER, \
                 last_status INTEGER, last_error TEXT, last_ms INTEGER)",
                "CREATE INDEX IF NOT EXISTS deliveries_due ON deliveries (state, next_ms)",
                "CREATE INDEX IF NOT EXISTS deliveries_newest ON deliveries (created_ms, id)",
                "CREATE TABLE IF NOT EXISTS alerts (name TEXT PRIMARY KEY, fired_ms INTEGER NOT NULL)",
            ] {
                sql.exec(statement, Vec::new())?;
            }
            self.schema_ready.set(true);
        }
        Ok(sql)
    }

    fn endpoint(&self, sql: &SqlStorage) -> ApiResult<Option<EndpointRow>> {
        let rows: Vec<EndpointRow> = sql
            .exec("SELECT url, secret FROM endpoint WHERE one = 1", Vec::new())?
            .to_array()?;
        Ok(rows.into_iter().next())
    }

    async fn apply(&self, op: WebhookOp) -> ApiResult<Response> {
        let sql = self.sql()?;
        match op {
            WebhookOp::Set { url } => {
                let key = sign::new_key().map_err(ApiError::internal)?;
                let secret = sign::encode_secret(&key);
                sql.exec(
                    "INSERT OR REPLACE INTO endpoint (one, url, secret) VALUES (1, ?, ?)",
                    vec![url.clone().into(), secret.clone().into()],
                )?;
                // undelivered events go to the new endpoint, signed with the new secret
                self.wake(&sql, false).await?;
                Ok(Response::from_json(&CreatedWebhook { url, secret })?)
            }
            WebhookOp::Remove => {
                let removed = self.endpoint(&sql)?.is_some();
                sql.exec("DELETE FROM endpoint", Vec::new())?;
                sql.exec(
                    "UPDATE deliveries SET state = 'cancelled', next_ms = NULL WHERE state = 'pending'",
                    Vec::new(),
                )?;
                Ok(Response::from_json(&RemovedWebhook { removed })?)
            }
            WebhookOp::Enqueue { events } => Ok(Response::from_json(&self.enqueue(&sql, &events).await?)?),
            WebhookOp::Deliveries { limit, cursor } => Ok(Response::from_json(&self.deliveries(
                &sql,
                limit,
                cursor.as_deref(),
            )?)?),
            WebhookOp::Balance {
                chain_id,
                signer,
                balance,
                threshold,
            } => Ok(Response::from_json(
                &self.balance(&sql, chain_id, signer, &balance, &threshold).await?,
            )?),
        }
    }

    async fn enqueue(&self, sql: &SqlStorage, events: &[Event]) -> ApiResult<u32> {
        if self.endpoint(sql)?.is_none() {
            return Ok(0);
        }
        let pending: Vec<CountRow> = sql
            .exec(
                "SELECT COUNT(*) AS n FROM deliveries WHERE state = 'pending'",
                Vec::new(),
            )?
            .to_array()?;
        let mut room = MAX_PENDING.saturating_sub(pending.first().map_or(0, |r| r.n));
        let now = now_ms();
        let mut stored = 0u32;
        for event in events {
            if !policy::is_event_id(&event.id) {
                continue;
            }
            if room == 0 {
                worker::console_warn!(
                    "{}",
                    serde_json::json!({"event": "webhook", "id": event.id, "type": event.event_type,
                        "refused": "too many undelivered events"})
                );
                continue;
            }
            sql.exec(
                "INSERT OR IGNORE INTO deliveries (id, type, body, created_ms, state, attempts, next_ms) \
                 VALUES (?, ?, ?, ?, 'pending', 0, ?)",
                vec![
                    event.id.clone().into(),
                    event.event_type.clone().into(),
                    event.body.clone().into(),
                    int(event.created_ms)?,
                    int(now)?,
                ],
            )?;
            let changed: Vec<CountRow> = sql.exec("SELECT changes() AS n", Vec::new())?.to_array()?;
            if changed.first().is_some_and(|r| r.n > 0) {
                stored = stored.saturating_add(1);
                room = room.saturating_sub(1);
            }
        }
        if stored > 0 {
            self.wake(sql, false).await?;
        }
        Ok(stored)
    }

    /// Makes sure the alarm comes by the earliest due delivery (`reset`: from the alarm itself, whose own time is
    /// spent, so it is set whatever is stored).
    async fn wake(&self, sql: &SqlStorage, reset: bool) -> ApiResult<()> {
        let rows: Vec<NextRow> = sql
            .exec(
                "SELECT MIN(next_ms) AS next_ms FROM deliveries WHERE state = 'pending'",
                Vec::new(),
            )?
            .to_array()?;
        let Some(next) = rows.first().and_then(|r| r.next_ms) else {
            return Ok(());
        };
        let storage = self.state.storage();
        let wanted = i64::try_from(next).map_err(ApiError::internal)?;
        let current = if reset { None } else { storage.get_alarm().await? };
        if current.is_none_or(|at| at > wanted) {
            let offset = wanted.saturating_sub(i64::try_from(now_ms()).map_err(ApiError::internal)?);
            storage.set_alarm(offset.max(0)).await?;
        }
        Ok(())
    }

    async fn deliver_due(&self) -> ApiResult<()> {
        let sql = self.sql()?;
        let now = now_ms();
        match self.endpoint(&sql)? {
            None => {
                sql.exec(
                    "UPDATE deliveries SET state = 'cancelled', next_ms = NULL WHERE state = 'pending'",
                    Vec::new(),
                )?;
            }
            Some(endpoint) => {
                let key = sign::decode_secret(&endpoint.secret)
                    .ok_or_else(|| ApiError::internal("the stored webhook secret is not base64"))?;
                let timeout_ms = self.config.webhook_timeout.value()?.saturating_mul(1000);
                let due: Vec<DueRow> = sql
                    .exec(
                        "SELECT id, body, attempts FROM deliveries WHERE state = 'pending' AND next_ms <= ? \
                         ORDER BY next_ms, created_ms LIMIT ?",
                        vec![int(now)?, i64::from(PER_ALARM).into()],
                    )?
                    .to_array()?;
                for row in due {
                    let outcome = attempt(&endpoint.url, &key, &row.id, &row.body, timeout_ms).await;
                    self.record(&sql, &row, &outcome)?;
                }
            }
        }
        sql.exec(
            "DELETE FROM deliveries WHERE state != 'pending' AND created_ms < ?",
            vec![int(now.saturating_sub(KEEP_MS))?],
        )?;
        sql.exec(
            "DELETE FROM deliveries WHERE id IN (SELECT id FROM deliveries WHERE state != 'pending' \
             ORDER BY created_ms DESC, id DESC LIMIT -1 OFFSET ?)",
            vec![i64::from(KEEP_ROWS).into()],
        )?;
        self.wake(&sql, true).await
    }

    fn record(&self, sql: &SqlStorage, row: &DueRow, outcome: &Outcome) -> ApiResult<()> {
        let attempts = row.attempts.saturating_add(1);
        let now = now_ms();
        let (state, next) = if outcome.delivered() {
            ("delivered", None)
        } else {
            let jitter = js_sys::Math::random();
            match policy::retry_delay_ms(attempts, jitter) {
                Some(delay) => ("pending", Some(now.saturating_add(delay))),
                None => ("failed", None),
            }
        };
        // one line per attempt: id, type, status — never the secret, the body or the URL's query
        worker::console_log!(
            "{}",
            serde_json::json!({"event": "webhook", "id": row.id, "attempt": attempts, "state": state,
                "status": outcome.status, "error": outcome.error})
        );
        sql.exec(
            "UPDATE deliveries SET state = ?, attempts = ?, next_ms = ?, last_status = ?, last_error = ?, \
             last_ms = ? WHERE id = ?",
            vec![
                state.into(),
                i64::from(attempts).into(),
                next.map(int).transpose()?.into(),
                outcome.status.map(i32::from).into(),
                outcome.error.clone().into(),
                int(now)?,
                row.id.clone().into(),
            ],
        )?;
        Ok(())
    }

    fn deliveries(&self, sql: &SqlStorage, limit: u32, cursor: Option<&str>) -> ApiResult<WebhookDeliveries> {
        let limit = limit.clamp(1, 100);
        let fetch = limit.saturating_add(1);
        let columns = "SELECT id, type, created_ms, state, attempts, last_status, last_error, last_ms, next_ms \
                       FROM deliveries";
        let rows: Vec<LogRow> = match cursor {
            None => sql
                .exec(
                    &format!("{columns} ORDER BY created_ms DESC, id DESC LIMIT ?"),
                    vec![i64::from(fetch).into()],
                )?
                .to_array()?,
            Some(c) => {
                let (ms, id) = policy::parse_cursor(c).ok_or_else(|| {
                    ApiError::new(Code::InvalidCursor, "a cursor this route did not answer")
                })?;
                sql.exec(
                    &format!(
                        "{columns} WHERE created_ms < ? OR (created_ms = ? AND id < ?) \
                         ORDER BY created_ms DESC, id DESC LIMIT ?"
                    ),
                    vec![int(ms)?, int(ms)?, id.into(), i64::from(fetch).into()],
                )?
                .to_array()?
            }
        };
        let more = rows.len() > limit as usize;
        let page: Vec<LogRow> = rows.into_iter().take(limit as usize).collect();
        let next_cursor = if more {
            page.last().map(|r| policy::cursor(r.created_ms, &r.id))
        } else {
            None
        };
        Ok(WebhookDeliveries {
            url: self.endpoint(sql)?.map(|e| e.url),
            deliveries: page
                .into_iter()
                .map(|r| WebhookDelivery {
                    id: r.id,
                    event_type: r.event_type,
                    created_at: r.created_ms / 1000,
                    state: match r.state.as_str() {
                        "delivered" => DeliveryState::Delivered,
                        "failed" => DeliveryState::Failed,
                        "cancelled" => DeliveryState::Cancelled,
                        _ => DeliveryState::Pending,
                    },
                    attempts: r.attempts,
                    last_status: r.last_status,
                    last_error: r.last_error,
                    last_attempt_at: r.last_ms.map(|ms| ms / 1000),
                    next_attempt_at: r.next_ms.map(|ms| ms.div_ceil(1000)),
                })
                .collect(),
            next_cursor,
        })
    }

    async fn balance(
        &self,
        sql: &SqlStorage,
        chain_id: u64,
        signer: Address,
        balance: &str,
        threshold: &str,
    ) -> ApiResult<bool> {
        let parse = |s: &str| alloy_primitives::U256::from_str_radix(s, 10).map_err(ApiError::internal);
        let low = parse(balance)? < parse(threshold)?;
        let name = format!("balance:{chain_id}:{signer:#x}");
        let fired: Vec<AlertRow> = sql
            .exec(
                "SELECT fired_ms FROM alerts WHERE name = ?",
                vec![name.clone().into()],
            )?
            .to_array()?;
        let last = fired.first().map(|r| r.fired_ms);
        let now = now_ms();
        let event_type = match (low, last) {
            (true, None) => "relayer.balance_low",
            (true, Some(at)) if now.saturating_sub(at) >= REALERT_MS => "relayer.balance_low",
            (false, Some(_)) => "relayer.balance_recovered",
            _ => return Ok(false),
        };
        if self.endpoint(sql)?.is_none() {
            // nobody to tell: nothing remembered, so the alert fires once an endpoint is set
            return Ok(false);
        }
        let event = Event::new(
            event_type,
            now,
            serde_json::json!({"chainId": chain_id, "signer": signer, "balanceWei": balance,
                "thresholdWei": threshold}),
        )?;
        if low {
            sql.exec(
                "INSERT OR REPLACE INTO alerts (name, fired_ms) VALUES (?, ?)",
                vec![name.into(), int(now)?],
            )?;
        } else {
            sql.exec("DELETE FROM alerts WHERE name = ?", vec![name.into()])?;
        }
        Ok(self.enqueue(sql, &[event]).await? > 0)
    }
}

/// One delivery attempt: POST `body` signed for this attempt's timestamp, no redirects followed (a redirect is a
/// failure: the URL was checked, its target was not), aborted after `timeout_ms`; the answer's body is never read.
async fn attempt(url: &str, key: &[u8], id: &str, body: &str, timeout_ms: u64) -> Outcome {
    // an error text naming the URL (a query may hold the receiver's token) names it no more: it is logged
    let failed = |error: String| Outcome {
        status: None,
        error: Some(error.replace(url, "<url>")),
    };
    let timestamp = now_ms() / 1000;
    let headers = Headers::new();
    for (name, value) in [
        ("content-type", "application/json"),
        ("user-agent", "profile-relayer-webhooks/1"),
        ("webhook-id", id),
        ("webhook-timestamp", &timestamp.to_string()),
        ("webhook-signature", &sign::sign(key, id, timestamp, body)),
    ] {
        if let Err(e) = headers.set(name, value) {
            return failed(format!("header {name}: {e}"));
        }
    }
    let mut init = RequestInit::new();
    init.with_method(Method::Post)
        .with_headers(headers)
        .with_body(Some(body.into()));
    init.redirect = RequestRedirect::Manual;
    let request = match Request::new_with_init(url, &init) {
        Ok(r) => r,
        Err(e) => return failed(format!("request: {e}")),
    };
    match fetch_with_timeout(request, timeout_ms).await {
        Ok(res) => {
            let status = res.status_code();
            Outcome {
                status: Some(status),
                error: (!(200..300).contains(&status)).then(|| {
                    if (300..400).contains(&status) {
                        "redirects are not followed".to_owned()
                    } else {
                        format!("answered {status}")
                    }
                }),
            }
        }
        Err(TimedFetchError::TimedOut) => failed(format!("no answer within {} s", timeout_ms / 1000)),
        Err(TimedFetchError::Failed(e)) => failed(format!("fetch failed: {e}")),
    }
}
