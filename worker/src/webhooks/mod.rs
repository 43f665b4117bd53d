//! Webhooks: transaction state changes pushed to the API key that asked for the transaction, and low-balance
//! alerts to the operator, signed as Standard Webhooks (<https://www.standardwebhooks.com>): headers `webhook-id`
//! (the event's id, the same on every retry: receivers de-duplicate by it), `webhook-timestamp` (Unix seconds of
//! the attempt: receivers refuse old ones, the replay window) and `webhook-signature` (`v1,` + base64
//! HMAC-SHA256 of `id.timestamp.body` with the secret answered once when the webhook was set, [`sign`]).
//!
//! The path of an event: `txlog::put` sees a state change of a keyed transaction and writes the event into the
//! Relayer object's outbox table in the same storage ([`outbox`]); after the request or alarm the Relayer object
//! hands the outbox to the key's `Webhooks` object ([`object`]), which stores each event before its first attempt
//! and delivers it from its alarm, retrying with backoff ([`policy::retry_delay_ms`]). The cron reads the
//! relayer's balance and tells the operator's `Webhooks` object ([`check_balance`]), which de-duplicates alerts.
//!
//! Server-side request forgery: the URLs are set by the operator (admin token), not by API key holders; still,
//! only `https://` is accepted (plain `http://` only to 127.0.0.1 / localhost with `WEBHOOK_ALLOW_HTTP`, for
//! local development), IP literals of loopback, private, link-local, carrier-grade NAT and reserved ranges are
//! refused ([`policy::check_url`]), redirects are not followed (a 3xx is a failed attempt), each attempt is
//! aborted after `WEBHOOK_TIMEOUT_SECONDS`, and the receiver's answer body is never read, so nothing of an internal
//! service's answer could be reflected into the delivery log (only its status code is recorded). A host name
//! that resolves to a private address is not caught here (the Worker cannot resolve names before `fetch`); on
//! Cloudflare a Worker's `fetch` reaches only the public internet, not the operator's private network.

pub mod object;
pub mod outbox;
pub mod policy;
pub mod sign;

use alloy_primitives::Address;
use profile_relayer::api::iso8601;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use worker::Env;

use crate::{
    config::Config,
    error::{ApiError, ApiResult},
};

pub use object::{WebhookOp, Webhooks};

/// An event as stored and delivered: its id, its type and the exact body that is signed and POSTed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    /// `msg_` + 32 hex digits: `webhook-id`.
    pub id: String,
    /// `transaction.pending`, `transaction.mined`, `transaction.reverted`, `transaction.replaced`,
    /// `transaction.dropped`, `relayer.balance_low`, `relayer.balance_recovered`.
    #[serde(rename = "type")]
    pub event_type: String,
    /// Unix ms when it happened.
    pub created_ms: u64,
    /// `{"type", "timestamp", "data"}` as JSON text.
    pub body: String,
}

impl Event {
    /// A new event of `event_type` with `data`, happened at `now_ms`.
    ///
    /// # Errors
    /// When the CSPRNG fails.
    pub fn new(event_type: &str, now_ms: u64, data: Value) -> ApiResult<Self> {
        let body = serde_json::json!({
            "type": event_type,
            "timestamp": iso8601(now_ms / 1000),
            "data": data,
        });
        Ok(Self {
            id: policy::new_event_id().map_err(ApiError::internal)?,
            event_type: event_type.to_owned(),
            created_ms: now_ms,
            body: body.to_string(),
        })
    }
}

/// The name of the `Webhooks` object of API key `id`.
pub fn key_object(id: &str) -> String {
    format!("key:{id}")
}

/// The name of the operator's `Webhooks` object (low-balance alerts).
pub const OPERATOR: &str = "operator";

/// A typed client of one `Webhooks` object.
#[derive(Debug)]
pub struct WebhooksClient {
    stub: worker::Stub,
}

impl WebhooksClient {
    /// The object named `name` ([`key_object`] or [`OPERATOR`]).
    ///
    /// # Errors
    /// When the binding is missing.
    pub fn new(env: &Env, name: &str) -> ApiResult<Self> {
        Ok(Self {
            stub: env.durable_object("WEBHOOKS")?.id_from_name(name)?.get_stub()?,
        })
    }

    /// Sends `op` and decodes the answer.
    ///
    /// # Errors
    /// The object's error.
    pub async fn send<T: serde::de::DeserializeOwned>(&self, op: &WebhookOp) -> ApiResult<T> {
        crate::plumbing::call_do(&self.stub, "/", op).await
    }
}

/// The cron's balance check: each signer's balance against `LOW_BALANCE_ALERT_WEI` (default
/// `MIN_RELAYER_BALANCE`), told to the operator's `Webhooks` object, which alerts once per crossing and signer (again
/// after a day while it stays low). Costs one RPC call and one object call per signer and cron run; a signer whose
/// check fails does not stop the others' (the first error is answered after all are checked).
pub async fn check_balance(env: &Env, config: &Config) -> ApiResult<()> {
    let relayer = config.relayer()?;
    let threshold = config.low_balance_alert.value()?;
    let mut first_error = None;
    for pooled in relayer.signers()? {
        let signer: Address = pooled.signer.address();
        if let Err(e) = check_signer(env, relayer, signer, threshold).await {
            first_error.get_or_insert(e);
        }
    }
    first_error.map_or(Ok(()), Err)
}

async fn check_signer(
    env: &Env,
    relayer: &crate::config::RelayerConfig,
    signer: Address,
    threshold: u128,
) -> ApiResult<()> {
    let balance = relayer.rpc().balance(signer).await.map_err(ApiError::from)?;
    let fired: bool = WebhooksClient::new(env, OPERATOR)?
        .send(&WebhookOp::Balance {
            chain_id: relayer.chain_id,
            signer,
            balance: balance.to_string(),
            threshold: threshold.to_string(),
        })
        .await?;
    if fired {
        worker::console_log!(
            "{}",
            serde_json::json!({"event": "balance", "chainId": relayer.chain_id, "signer": signer,
                "balanceWei": balance.to_string(), "thresholdWei": threshold.to_string()})
        );
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn an_event_body_is_type_timestamp_data() {
        let event = Event::new(
            "transaction.mined",
            1_700_000_000_123,
            serde_json::json!({"x": 1}),
        )
        .unwrap();
        assert!(policy::is_event_id(&event.id));
        let body: Value = serde_json::from_str(&event.body).unwrap();
        assert_eq!(
            body,
            serde_json::json!({"type": "transaction.mined", "timestamp": "2023-11-14T22:13:20.000Z",
                "data": {"x": 1}})
        );
    }
}
