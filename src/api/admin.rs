//! The answers of `GET /health` and the admin routes: API keys (create, list, revoke), an indexer run and the
//! relayer's state (`GET /admin/relayer`).

use alloy_primitives::{Address, B256};
use serde::{Deserialize, Serialize};

use super::ErrorDetail;

/// Response to `GET /health`.
#[cfg_attr(feature = "wasm", derive(tsify::Tsify))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Health {
    /// Always `ok`.
    #[cfg_attr(feature = "wasm", tsify(type = "\"ok\""))]
    #[cfg_attr(feature = "schema", schemars(extend("const" = "ok")))]
    pub status: String,
    /// The relayer's chain.
    pub chain_id: u64,
    /// Every chain the lookup API, search and the indexer serve (`CHAINS`).
    pub chains: Vec<u64>,
}

impl Health {
    /// The answer of a deployment relaying on `chain_id` and serving `chains`.
    #[must_use]
    pub fn ok(chain_id: u64, chains: Vec<u64>) -> Self {
        Self {
            status: "ok".to_owned(),
            chain_id,
            chains,
        }
    }
}

/// What an API key may do.
#[cfg_attr(feature = "wasm", derive(tsify::Tsify))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// `POST /api/universal-profile`.
    Deploy,
    /// `POST /api/universal-profile/register`, `POST /api/users`, `GET /api/universal-profile/:address`.
    Register,
    /// `POST /api/v0/add`.
    Upload,
}

impl Scope {
    /// Every scope: what a key gets when it is created without a list.
    pub const ALL: [Self; 3] = [Self::Deploy, Self::Register, Self::Upload];
}

/// An API key as stored and as listed or revoked (never the secret): `DELETE /admin/api-keys/{id}` answers it, and
/// `GET /admin/api-keys` with this month's gas fields.
#[cfg_attr(feature = "wasm", derive(tsify::Tsify))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApiKey {
    /// Public identifier (for listing and revoking): 16 lower-case hex digits.
    #[cfg_attr(feature = "schema", schemars(with = "crate::api::schema::ApiKeyId"))]
    pub id: String,
    /// Free-form name.
    pub name: String,
    /// Granted scopes.
    #[cfg_attr(feature = "schema", schemars(length(min = 1)))]
    pub scopes: Vec<Scope>,
    /// Requests per minute.
    #[cfg_attr(feature = "schema", schemars(range(min = 1, max = 1_000_000)))]
    pub rate_limit_per_minute: u32,
    /// Unix seconds.
    pub created_at: u64,
    /// Unix seconds, once revoked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "wasm", tsify(optional))]
    pub revoked_at: Option<u64>,
    /// Deploy gas per calendar month (`DEFAULT_KEY_GAS_BUDGET_PER_MONTH` when absent from the stored key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "wasm", tsify(optional))]
    pub gas_budget_per_month: Option<u64>,
    /// Listing only: settled deploy gas this month.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "wasm", tsify(optional))]
    pub gas_used_this_month: Option<u64>,
    /// Listing only: gas reserved by deploys not mined yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "wasm", tsify(optional))]
    pub gas_reserved_this_month: Option<u64>,
    /// Listing only: budget left this month.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "wasm", tsify(optional))]
    pub gas_remaining_this_month: Option<u64>,
    /// The URL this key's transaction events are delivered to (`POST /admin/api-keys/{id}/webhook`); its secret
    /// is answered only when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "wasm", tsify(optional))]
    #[cfg_attr(feature = "schema", schemars(length(max = 384)))]
    pub webhook_url: Option<String>,
}

/// Response to `POST /admin/api-keys` (201): the key and, only in this answer, its secret.
#[cfg_attr(feature = "wasm", derive(tsify::Tsify))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreatedApiKey {
    /// Public identifier.
    #[cfg_attr(feature = "schema", schemars(with = "crate::api::schema::ApiKeyId"))]
    pub id: String,
    /// Free-form name.
    pub name: String,
    /// Granted scopes.
    #[cfg_attr(feature = "schema", schemars(length(min = 1)))]
    pub scopes: Vec<Scope>,
    /// Requests per minute.
    #[cfg_attr(feature = "schema", schemars(range(min = 1, max = 1_000_000)))]
    pub rate_limit_per_minute: u32,
    /// Unix seconds.
    pub created_at: u64,
    /// Deploy gas per calendar month, when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "wasm", tsify(optional))]
    pub gas_budget_per_month: Option<u64>,
    /// The secret (`prk_` + 64 hex digits).
    #[cfg_attr(feature = "schema", schemars(regex(pattern = "^prk_[0-9a-f]{64}$")))]
    pub api_key: String,
}

impl CreatedApiKey {
    /// The answer for the new `key` with the secret `api_key`.
    #[must_use]
    pub fn new(key: ApiKey, api_key: String) -> Self {
        Self {
            id: key.id,
            name: key.name,
            scopes: key.scopes,
            rate_limit_per_minute: key.rate_limit_per_minute,
            created_at: key.created_at,
            gas_budget_per_month: key.gas_budget_per_month,
            api_key,
        }
    }
}

/// Response to `GET /admin/api-keys`.
#[cfg_attr(feature = "wasm", derive(tsify::Tsify))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApiKeyList {
    /// Every key, revoked ones included.
    pub api_keys: Vec<ApiKey>,
}

/// The result of one indexer run: `POST /admin/indexer/run` answers it.
#[cfg_attr(feature = "wasm", derive(tsify::Tsify))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunStats {
    /// The chain indexed.
    pub chain_id: u64,
    /// First block processed.
    pub from_block: u64,
    /// Last block completely processed (`fromBlock - 1` when nothing was completed).
    pub to_block: u64,
    /// The chain head.
    pub head_block: u64,
    /// Records written.
    pub indexed: u64,
    /// Candidates recorded as unindexable (`unindexable`).
    pub errors: u64,
    /// Retries processed.
    pub retried: u64,
    /// `eth_getLogs` windows read.
    pub windows: u64,
    /// The window size the next run starts with.
    pub window: u64,
    /// Subrequests spent (RPC requests, metadata fetches, D1 batches).
    pub subrequests: u32,
    /// Why the run stopped before the head, if it did (`time`, `subrequests`, `rows`).
    #[cfg_attr(feature = "wasm", tsify(type = "string | null"))]
    pub stopped: Option<String>,
    /// A run of every chain (no `chainId` asked): every chain's run, the first one's also at the top level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "wasm", tsify(optional))]
    pub chains: Option<Vec<ChainRun>>,
}

/// One chain's part of a run of every chain.
#[cfg_attr(feature = "wasm", derive(tsify::Tsify))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ChainRun {
    /// The chain's run.
    Ran(RunStats),
    /// The chain's run failed.
    #[serde(rename_all = "camelCase")]
    Failed {
        /// The chain.
        chain_id: u64,
        /// Why.
        #[cfg_attr(feature = "wasm", tsify(type = "{ code: string; message: string }"))]
        error: ErrorDetail,
    },
}

/// `GET /admin/relayer`: the relayer's money as the operator needs to see it — its signer and balance, today's gas
/// against the daily ceiling (`MAX_GAS_PER_DAY`), this month's total, and the transactions still pending.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RelayerView {
    /// The chain this relayer signs for.
    pub chain_id: u64,
    /// The relayer key's address.
    #[cfg_attr(feature = "schema", schemars(with = "crate::api::schema::Address"))]
    pub signer: Address,
    /// Its balance in wei (decimal string: wei exceed JSON's safe integers); `null` when the node did not answer.
    #[cfg_attr(feature = "schema", schemars(regex(pattern = "^[0-9]+$")))]
    pub balance: Option<String>,
    /// Today's (UTC) gas against the daily ceiling.
    pub today: PeriodView,
    /// This calendar month's (UTC) gas, settled.
    pub month: MonthView,
    /// The nonce lanes (every signer's pending transactions summed).
    pub pending: PendingView,
    /// Every signer of the pool (`RELAYER_PRIVATE_KEY(S)`), in pool order; `signer` and `balance` are the first's.
    #[serde(default)]
    pub signers: Vec<SignerView>,
}

/// One signer of the pool: its own nonce lane (`GET /admin/relayer`, and the answer of its drain / activate
/// routes).
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SignerView {
    /// The signer's address.
    #[cfg_attr(feature = "schema", schemars(with = "crate::api::schema::Address"))]
    pub address: Address,
    /// Its balance in wei (decimal string); `null` when the node did not answer.
    #[cfg_attr(feature = "schema", schemars(regex(pattern = "^[0-9]+$")))]
    pub balance: Option<String>,
    /// Its lane's pending transactions; `null` when its Relayer object did not answer.
    pub pending: Option<PendingView>,
    /// `draining`: no new work, its pending transactions finish (it can be removed once `pending.count` is 0);
    /// `active`: takes new work.
    #[cfg_attr(feature = "schema", schemars(extend("enum" = ["active", "draining"])))]
    pub state: String,
}

/// What `POST /admin/relayer/transactions/:hash/cancel` or `…/replace` sent.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ManagedTransaction {
    /// The signer whose lane holds the transaction.
    #[cfg_attr(feature = "schema", schemars(with = "crate::api::schema::Address"))]
    pub signer: Address,
    /// Its nonce.
    pub nonce: u64,
    /// The transaction replaced (the latest signed for the nonce before).
    #[cfg_attr(feature = "schema", schemars(with = "crate::api::schema::Hash"))]
    pub replaced: B256,
    /// The replacement broadcast: the same job with higher fees (`replace`) or a 0-value self-transfer
    /// (`cancel`).
    #[cfg_attr(feature = "schema", schemars(with = "crate::api::schema::Hash"))]
    pub transaction_hash: B256,
}

/// What a pending transaction of a signer's lane is for.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PendingKind {
    /// An LSP23 profile deployment.
    Deploy,
    /// An LSP25 `executeRelayCall`.
    Execute,
    /// A 0-value self-transfer that fills a nonce hole.
    Filler,
}

/// One pending (sent, not mined) transaction of a signer's lane.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingTransaction {
    /// The latest hash signed for its nonce (what the node should mine).
    #[cfg_attr(feature = "schema", schemars(with = "crate::api::schema::Hash"))]
    pub hash: B256,
    /// The signer whose lane holds it.
    #[cfg_attr(feature = "schema", schemars(with = "crate::api::schema::Address"))]
    pub signer: Address,
    /// Its nonce.
    pub nonce: u64,
    /// What it is for.
    pub kind: PendingKind,
    /// The profile it concerns (`null` for a filler).
    #[cfg_attr(feature = "schema", schemars(with = "Option<crate::api::schema::Address>"))]
    pub profile: Option<Address>,
    /// When the job was first sent (unix seconds; `null` when not recorded).
    pub first_sent_at: Option<u64>,
    /// How many times it was re-signed at its nonce (fee bumps, replace, cancel).
    pub fee_bumps: u64,
    /// The operator cancelled it: the latest hash is a 0-value self-transfer.
    pub cancelled: bool,
}

/// What `GET /admin/relayer/transactions?state=pending` answers: every signer's pending transactions, by signer (pool
/// order) and nonce.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingTransactionList {
    /// The transactions.
    pub transactions: Vec<PendingTransaction>,
    /// At most this many are listed per signer (the lowest nonces).
    pub limit_per_signer: u64,
    /// Some signer has more pending transactions than listed.
    pub truncated: bool,
}

/// One period of the relayer's daily meter.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PeriodView {
    /// Gas settled (receipts' `gasUsed`).
    pub gas_used: u64,
    /// Gas reserved by transactions not mined yet.
    pub gas_reserved: u64,
    /// `MAX_GAS_PER_DAY`.
    pub ceiling: u64,
    /// What is left for new sends.
    pub remaining: u64,
    /// When the period resets (unix seconds).
    pub reset_at: u64,
}

/// The month's total.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MonthView {
    /// Gas settled this month, every day summed.
    pub gas_used: u64,
    /// First second of the month (unix seconds).
    pub since: u64,
}

/// The lane's pending transactions.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingView {
    /// How many are sent and not mined yet.
    pub count: u64,
    /// Seconds since the oldest was first sent (`null` when none is pending).
    pub oldest_age_seconds: Option<u64>,
}

/// Response to `POST /admin/api-keys/{id}/webhook` and `POST /admin/webhook`: the endpoint and, only in this
/// answer, the secret its deliveries are signed with (Standard Webhooks).
#[cfg_attr(feature = "wasm", derive(tsify::Tsify))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreatedWebhook {
    /// Where events are POSTed.
    #[cfg_attr(feature = "schema", schemars(length(max = 384)))]
    pub url: String,
    /// `whsec_` + the base64 of 32 random bytes; verify `webhook-signature` with it.
    #[cfg_attr(feature = "schema", schemars(regex(pattern = "^whsec_[A-Za-z0-9+/]{43}=$")))]
    pub secret: String,
}

/// Response to `DELETE /admin/api-keys/{id}/webhook` and `DELETE /admin/webhook`.
#[cfg_attr(feature = "wasm", derive(tsify::Tsify))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RemovedWebhook {
    /// Whether a webhook was set (its undelivered events are given up).
    pub removed: bool,
}

/// Where a webhook delivery stands.
#[cfg_attr(feature = "wasm", derive(tsify::Tsify))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeliveryState {
    /// Not delivered yet: the next attempt is at `nextAttemptAt`.
    Pending,
    /// A 2xx answered.
    Delivered,
    /// Every attempt failed.
    Failed,
    /// The webhook was removed or replaced before it was delivered.
    Cancelled,
}

/// One event's delivery (`GET /admin/api-keys/{id}/webhook/deliveries`, `GET /admin/webhook/deliveries`).
#[cfg_attr(feature = "wasm", derive(tsify::Tsify))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WebhookDelivery {
    /// The event id: the `webhook-id` header of every attempt.
    pub id: String,
    /// The event type (`transaction.pending`, `transaction.mined`, `relayer.balance_low`, …).
    #[serde(rename = "type")]
    pub event_type: String,
    /// Unix seconds the event was created.
    pub created_at: u64,
    /// Where it stands.
    pub state: DeliveryState,
    /// Attempts made.
    pub attempts: u32,
    /// The HTTP status of the last attempt, when it got one.
    #[cfg_attr(feature = "wasm", tsify(type = "number | null"))]
    pub last_status: Option<u16>,
    /// Why the last attempt failed without a status (timeout, connection), or the status' meaning.
    #[cfg_attr(feature = "wasm", tsify(type = "string | null"))]
    pub last_error: Option<String>,
    /// Unix seconds of the last attempt.
    #[cfg_attr(feature = "wasm", tsify(type = "number | null"))]
    pub last_attempt_at: Option<u64>,
    /// Unix seconds of the next attempt, while pending.
    #[cfg_attr(feature = "wasm", tsify(type = "number | null"))]
    pub next_attempt_at: Option<u64>,
}

/// A page of deliveries, newest first.
#[cfg_attr(feature = "wasm", derive(tsify::Tsify))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WebhookDeliveries {
    /// The webhook's URL (`null` when none is set).
    #[cfg_attr(feature = "wasm", tsify(type = "string | null"))]
    pub url: Option<String>,
    /// At most `limit` deliveries.
    pub deliveries: Vec<WebhookDelivery>,
    /// Pass as `cursor` for the next page; `null` on the last one.
    #[cfg_attr(feature = "wasm", tsify(type = "string | null"))]
    pub next_cursor: Option<String>,
}

/// `GET /admin/usage?days=N` (the operator console's charts): the relayer's settled gas per UTC day, oldest first
/// (every day of the range, 0 when nothing was settled), and each API key's deploy gas this month.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageView {
    /// The relayer's chain.
    pub chain_id: u64,
    /// One entry per day, `days` of them, the last one today.
    #[cfg_attr(feature = "schema", schemars(length(min = 1, max = 90)))]
    pub days: Vec<DayUsage>,
    /// Every API key (revoked ones too), in the order `GET /admin/api-keys` lists them.
    pub keys: Vec<KeyUsage>,
}

/// One UTC day of the relayer's daily meter.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DayUsage {
    /// The day, `YYYY-MM-DD` (UTC).
    #[cfg_attr(feature = "schema", schemars(regex(pattern = "^[0-9]{4}-[0-9]{2}-[0-9]{2}$")))]
    pub date: String,
    /// Its first second (unix seconds).
    pub start: u64,
    /// Gas settled that day (receipts' `gasUsed`).
    pub gas_used: u64,
}

/// One API key's deploy gas this month.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KeyUsage {
    /// The key's id.
    #[cfg_attr(feature = "schema", schemars(with = "crate::api::schema::ApiKeyId"))]
    pub id: String,
    /// Its name.
    pub name: String,
    /// Settled deploy gas this month.
    pub gas_used: u64,
    /// Its monthly budget.
    pub gas_budget: u64,
    /// Whether it is revoked.
    pub revoked: bool,
}

impl DayUsage {
    /// The `days` UTC days ending with the one containing `now`, oldest first, each with its settled gas from
    /// `used` (settled gas per day start, as the relayer's daily meter keeps it; days absent are 0).
    #[must_use]
    pub fn series(used: &std::collections::BTreeMap<u64, u64>, days: u64, now: u64) -> Vec<Self> {
        let today = now - now % 86_400;
        (0..days)
            .rev()
            .filter_map(|back| today.checked_sub(back.checked_mul(86_400)?))
            .map(|start| Self {
                date: super::calendar::iso8601(start).chars().take(10).collect(),
                start,
                gas_used: used.get(&start).copied().unwrap_or(0),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::DayUsage;

    #[test]
    fn day_series_covers_every_day_oldest_first() {
        const NOV_26: u64 = 1_764_115_200; // 2025-11-26T00:00:00Z
        let used = [(NOV_26 - 2 * 86_400, 7), (NOV_26, 5), (NOV_26 - 40 * 86_400, 9)]
            .into_iter()
            .collect();
        let days = DayUsage::series(&used, 3, NOV_26 + 3_600);
        let got: Vec<(&str, u64)> = days.iter().map(|d| (d.date.as_str(), d.gas_used)).collect();
        assert_eq!(got, [("2025-11-24", 7), ("2025-11-25", 0), ("2025-11-26", 5)]);
        assert_eq!(days.last().map(|d| d.start), Some(NOV_26));
        // near the epoch the series stops at day 0 instead of wrapping
        assert_eq!(DayUsage::series(&used, 5, 86_400).len(), 2);
    }
}
