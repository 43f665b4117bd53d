//! Ethereum JSON-RPC over `fetch`, with a timeout. Network failures, timeouts and 5xx answers are
//! [`RpcError::Unavailable`] (the service answers 503); JSON-RPC errors are [`RpcError::Node`] (502, or handled).
//! Every answer is read with a size bound while it streams ([`RpcBounds::max_response_bytes`]: a contract can make
//! `eth_call` answer megabytes; [`RpcError::TooLarge`] past it, nothing more is read), and every `eth_call` /
//! `eth_estimateGas` carries a gas cap ([`RpcBounds`]) unless the caller set its own `gas`.

use alloy_primitives::{Address, B256, Bytes, U256};
use futures_util::future::{Either, select};
use serde::{Deserialize, de::DeserializeOwned};
use serde_json::{Value, json};
use worker::{AbortController, Delay, Fetch, Headers, Method, Request, RequestInit};

use crate::{
    body::ReadError,
    error::{ApiError, Code},
};

/// What went wrong talking to the node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RpcError {
    /// The node cannot be reached, timed out or answered a non-JSON-RPC error.
    Unavailable(String),
    /// The node answered a JSON-RPC error.
    Node {
        /// JSON-RPC error code.
        code: i64,
        /// Its message.
        message: String,
        /// Revert data of a failed call or estimate (`error.data` as `0x` hex), when the node sends it.
        data: Option<Bytes>,
    },
    /// The result has an unexpected shape.
    Decode(String),
    /// The answer was larger than [`RpcBounds::max_response_bytes`] (a contract answering megabytes); the rest of
    /// it was never read.
    TooLarge(String),
}

/// What one JSON-RPC answer may cost: its size and the gas of the calls the node runs for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RpcBounds {
    /// Largest answer read, in bytes (`RPC_MAX_RESPONSE_BYTES`; `eth_getLogs` 4×); a batch counts as one answer.
    pub max_response_bytes: usize,
    /// Gas of every `eth_call` (`RPC_CALL_GAS_CAP`).
    pub call_gas_cap: u64,
    /// Gas of every `eth_estimateGas` (`MAX_TRANSACTION_GAS`: a transaction needing more is never sent anyway).
    pub estimate_gas_cap: u64,
}

impl RpcBounds {
    /// Default of `RPC_MAX_RESPONSE_BYTES`: 4 MiB.
    pub const DEFAULT_MAX_RESPONSE_BYTES: usize = 4 * 1024 * 1024;
    /// Default of `RPC_CALL_GAS_CAP`.
    pub const DEFAULT_CALL_GAS_CAP: u64 = 10_000_000;

    /// The largest answer to `method` read: `eth_getLogs` may answer [`Self::LOGS_FACTOR`] times as much (the
    /// indexer shrinks its log window on a larger answer, but one block's logs must always fit: a 42M-gas block
    /// holds at most ≈ 5 MB of log data, ≈ 10.5 MB as JSON hex).
    fn max_bytes(&self, method: &str) -> usize {
        match method {
            "eth_getLogs" => self.max_response_bytes.saturating_mul(Self::LOGS_FACTOR),
            _ => self.max_response_bytes,
        }
    }

    /// How many times `max_response_bytes` an `eth_getLogs` answer may be.
    pub const LOGS_FACTOR: usize = 4;

    /// The gas cap of `method`, `None` for methods that run no EVM code.
    fn gas_cap(&self, method: &str) -> Option<u64> {
        match method {
            "eth_call" => Some(self.call_gas_cap),
            "eth_estimateGas" => Some(self.estimate_gas_cap),
            _ => None,
        }
    }

    /// `params` with the gas cap of `method` set on its call object (`params[0]`), unless it has its own `gas`.
    fn capped(&self, method: &str, mut params: Value) -> Value {
        if let Some(cap) = self.gas_cap(method)
            && let Some(Value::Object(call)) = params.get_mut(0)
            && !call.contains_key("gas")
        {
            call.insert("gas".to_owned(), Value::String(format!("{cap:#x}")));
        }
        params
    }
}

impl Default for RpcBounds {
    fn default() -> Self {
        Self {
            max_response_bytes: Self::DEFAULT_MAX_RESPONSE_BYTES,
            call_gas_cap: Self::DEFAULT_CALL_GAS_CAP,
            estimate_gas_cap: Self::DEFAULT_CALL_GAS_CAP,
        }
    }
}

/// What an `eth_sendRawTransaction` answer means for the relayer's nonce lane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendOutcome {
    /// The node took the transaction.
    Accepted,
    /// The node has this exact transaction already (an earlier broadcast of the same bytes got through).
    AlreadyKnown,
    /// The nonce is taken: used on chain already, or another transaction with it is in the pool and this one does
    /// not outbid it. This transaction will not be mined as it stands.
    NonceTaken,
    /// The node refused the transaction for another reason (funds, fee below the base fee, gas, …).
    Rejected,
    /// No answer (network failure, timeout, 5xx): the node may or may not have the transaction.
    Unknown,
}

impl SendOutcome {
    /// Classifies the result of `eth_sendRawTransaction`. Node messages differ between clients (geth, erigon,
    /// nethermind, besu, anvil); the common phrasings are matched case-insensitively. An error of the path to the
    /// node rather than of the transaction — a gateway or load balancer answering in JSON-RPC that it timed out,
    /// failed upstream or is rate-limited (JSON-RPC internal error −32603, EIP-1474 −32002 / −32005) — is
    /// [`SendOutcome::Unknown`]: the transaction may have been forwarded, so it is kept, not undone and released.
    pub fn of<T>(result: &Result<T, RpcError>) -> Self {
        let (code, message) = match result {
            Ok(_) => return Self::Accepted,
            Err(RpcError::Unavailable(_)) => return Self::Unknown,
            Err(RpcError::Decode(_) | RpcError::TooLarge(_)) => return Self::Unknown,
            Err(RpcError::Node { code, message, .. }) => (*code, message.to_ascii_lowercase()),
        };
        let has = |needles: &[&str]| needles.iter().any(|n| message.contains(n));
        if has(&[
            "already known",
            "known transaction",
            "already imported",
            "alreadyknown",
            "already exists",
        ]) {
            Self::AlreadyKnown
        } else if has(&[
            "nonce too low",
            "oldnonce",
            "nonce_too_low",
            "replacement transaction underpriced",
            "replacement underpriced",
            "replacementnotallowed",
            "invalid nonce",
        ]) {
            Self::NonceTaken
        } else if matches!(code, -32603 | -32002 | -32005)
            || has(&[
                "timeout",
                "timed out",
                "upstream",
                "gateway",
                "internal error",
                "temporarily",
                "unavailable",
                "try again",
                "rate limit",
                "too many requests",
                "overloaded",
                "busy",
                "connection",
            ])
        {
            Self::Unknown
        } else {
            Self::Rejected
        }
    }
}

/// Why [`fetch_with_timeout`] gave no response.
#[derive(Debug)]
pub enum TimedFetchError {
    /// The fetch itself failed.
    Failed(worker::Error),
    /// No response within the timeout (the request was aborted).
    TimedOut,
}

/// Sends `request`, aborting it when no response arrives within `timeout_ms`.
pub async fn fetch_with_timeout(
    request: Request,
    timeout_ms: u64,
) -> Result<worker::Response, TimedFetchError> {
    let controller = AbortController::default();
    let signal = controller.signal();
    let fetch = Box::pin(async move { Fetch::Request(request).send_with_signal(&signal).await });
    let timeout = Box::pin(Delay::from(core::time::Duration::from_millis(timeout_ms)));
    match select(fetch, timeout).await {
        Either::Left((res, _)) => res.map_err(TimedFetchError::Failed),
        Either::Right(((), _)) => {
            controller.abort();
            Err(TimedFetchError::TimedOut)
        }
    }
}

impl From<RpcErrorObject> for RpcError {
    fn from(e: RpcErrorObject) -> Self {
        Self::Node {
            data: e.data.as_ref().and_then(revert_data),
            code: e.code,
            message: e.message,
        }
    }
}

/// Revert data in a JSON-RPC error's `data`: a `0x` hex string (geth, anvil) or `{"data": "0x…"}` (some nodes).
fn revert_data(data: &Value) -> Option<Bytes> {
    match data {
        Value::String(s) => s.parse().ok(),
        Value::Object(o) => o.get("data").and_then(revert_data),
        _ => None,
    }
}

/// A JSON-RPC client for one node.
#[derive(Debug, Clone)]
pub struct Rpc {
    url: String,
    timeout_ms: u64,
    bounds: RpcBounds,
}

#[derive(Deserialize)]
struct RpcResponse {
    result: Option<Value>,
    error: Option<RpcErrorObject>,
}

#[derive(Deserialize)]
struct RpcErrorObject {
    code: i64,
    message: String,
    #[serde(default)]
    data: Option<Value>,
}

/// The fields of a receipt the relayer uses.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Receipt {
    /// `0x1` success, `0x0` reverted.
    pub status: U256,
    /// Gas the transaction used (what it cost, whether it succeeded or reverted).
    #[serde(default)]
    pub gas_used: U256,
    /// The block it is in.
    #[serde(default)]
    pub block_number: U256,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Block {
    base_fee_per_gas: Option<U256>,
}

impl Rpc {
    /// A client for `url`; every call is aborted after `timeout_ms`, every answer and call bounded by `bounds`.
    pub fn new(url: &str, timeout_ms: u64, bounds: RpcBounds) -> Self {
        Self {
            url: url.to_owned(),
            timeout_ms,
            bounds,
        }
    }

    /// Calls `method` with `params` and decodes the result.
    pub async fn call<T: DeserializeOwned>(&self, method: &str, params: Value) -> Result<T, RpcError> {
        let value = self.call_raw(method, params).await?;
        serde_json::from_value(value).map_err(|e| RpcError::Decode(format!("{method}: {e}")))
    }

    async fn call_raw(&self, method: &str, params: Value) -> Result<Value, RpcError> {
        let params = self.bounds.capped(method, params);
        let body = json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params }).to_string();
        let parsed: RpcResponse = serde_json::from_value(self.post(method, body).await?)
            .map_err(|e| RpcError::Unavailable(format!("{method}: not a JSON-RPC answer: {e}")))?;
        if let Some(err) = parsed.error {
            return Err(err.into());
        }
        Ok(parsed.result.unwrap_or(Value::Null))
    }

    /// POSTs a JSON-RPC body and parses the answer as JSON, read with the size bound.
    async fn post(&self, label: &str, body: String) -> Result<Value, RpcError> {
        let unavailable = |e: worker::Error| RpcError::Unavailable(format!("{label}: {e}"));
        let headers = Headers::new();
        headers
            .set("content-type", "application/json")
            .map_err(unavailable)?;
        let mut init = RequestInit::new();
        init.with_method(Method::Post)
            .with_headers(headers)
            .with_body(Some(body.into()));
        let request = Request::new_with_init(&self.url, &init).map_err(unavailable)?;
        let mut response = match fetch_with_timeout(request, self.timeout_ms).await {
            Ok(r) => r,
            Err(TimedFetchError::Failed(e)) => return Err(unavailable(e)),
            Err(TimedFetchError::TimedOut) => {
                return Err(RpcError::Unavailable(format!(
                    "{label}: timed out after {} ms",
                    self.timeout_ms
                )));
            }
        };
        if response.status_code() >= 500 || response.status_code() == 429 {
            return Err(RpcError::Unavailable(format!(
                "{label}: HTTP {}",
                response.status_code()
            )));
        }
        let max = self.bounds.max_bytes(label);
        let bytes = crate::body::response_bytes(&mut response, max)
            .await
            .map_err(|e| match e {
                ReadError::TooLarge => RpcError::TooLarge(format!(
                    "{label}: the answer is larger than {max} bytes (RPC_MAX_RESPONSE_BYTES)"
                )),
                ReadError::Failed(detail) => RpcError::Unavailable(format!("{label}: {detail}")),
            })?;
        serde_json::from_slice(&bytes)
            .map_err(|e| RpcError::Unavailable(format!("{label}: not a JSON-RPC answer: {e}")))
    }

    /// A JSON-RPC batch: one HTTP request, one result per call (in order). The outer error is the transport's
    /// (or a node that refuses batches); per-call errors are in the inner results.
    pub async fn batch(&self, calls: &[(&str, Value)]) -> Result<Vec<Result<Value, RpcError>>, RpcError> {
        if calls.is_empty() {
            return Ok(Vec::new());
        }
        let body = Value::Array(
            calls
                .iter()
                .enumerate()
                .map(|(id, (method, params))| {
                    let params = self.bounds.capped(method, params.clone());
                    json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })
                })
                .collect(),
        )
        .to_string();
        let answer = self.post("batch", body).await?;
        let Value::Array(items) = answer else {
            // a node without batch support answers one error object
            let single: RpcResponse =
                serde_json::from_value(answer).map_err(|e| RpcError::Decode(format!("batch: {e}")))?;
            return Err(single.error.map_or_else(
                || RpcError::Decode("batch: not an array".to_owned()),
                RpcError::from,
            ));
        };
        let mut out: Vec<Result<Value, RpcError>> = calls
            .iter()
            .map(|(m, _)| Err(RpcError::Decode(format!("{m}: no answer in the batch"))))
            .collect();
        for item in items {
            let Some(id) = item.get("id").and_then(Value::as_u64) else {
                continue;
            };
            let Ok(parsed) = serde_json::from_value::<RpcResponse>(item) else {
                continue;
            };
            if let Some(slot) = usize::try_from(id).ok().and_then(|i| out.get_mut(i)) {
                *slot = match parsed.error {
                    Some(e) => Err(e.into()),
                    None => Ok(parsed.result.unwrap_or(Value::Null)),
                };
            }
        }
        Ok(out)
    }

    /// `eth_chainId`.
    pub async fn chain_id(&self) -> Result<u64, RpcError> {
        let id: U256 = self.call("eth_chainId", json!([])).await?;
        u64::try_from(id).map_err(|e| RpcError::Decode(e.to_string()))
    }

    /// `eth_blockNumber`.
    pub async fn block_number(&self) -> Result<u64, RpcError> {
        let n: U256 = self.call("eth_blockNumber", json!([])).await?;
        u64::try_from(n).map_err(|e| RpcError::Decode(e.to_string()))
    }

    /// `eth_getCode` at the latest block.
    pub async fn code(&self, address: Address) -> Result<Bytes, RpcError> {
        self.call("eth_getCode", json!([address, "latest"])).await
    }

    /// `eth_call` at the latest block.
    pub async fn eth_call(&self, to: Address, data: &[u8]) -> Result<Bytes, RpcError> {
        self.call(
            "eth_call",
            json!([{ "to": to, "data": Bytes::copy_from_slice(data) }, "latest"]),
        )
        .await
    }

    /// [`Rpc::eth_call`] with a revert (the node's error answer) as `None`: what a contract refusing a call is.
    ///
    /// # Errors
    /// Every failure but a revert.
    pub async fn eth_call_or_revert(&self, to: Address, data: &[u8]) -> Result<Option<Bytes>, RpcError> {
        match self.eth_call(to, data).await {
            Ok(out) => Ok(Some(out)),
            Err(RpcError::Node { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// `eth_getBalance`.
    pub async fn balance(&self, address: Address) -> Result<U256, RpcError> {
        self.call("eth_getBalance", json!([address, "latest"])).await
    }

    /// `eth_getTransactionCount(address, "pending")`: the next nonce counting the node's pool.
    pub async fn pending_nonce(&self, address: Address) -> Result<u64, RpcError> {
        self.nonce_at(address, "pending").await
    }

    /// `eth_getTransactionCount(address, "latest")`: how many of the account's transactions are mined.
    pub async fn latest_nonce(&self, address: Address) -> Result<u64, RpcError> {
        self.nonce_at(address, "latest").await
    }

    /// `eth_getTransactionCount(address, block)`: how many of the account's transactions are mined up to `block`.
    pub async fn nonce_at_block(&self, address: Address, block: u64) -> Result<u64, RpcError> {
        self.nonce_at(address, &format!("{block:#x}")).await
    }

    async fn nonce_at(&self, address: Address, block: &str) -> Result<u64, RpcError> {
        let n: U256 = self
            .call("eth_getTransactionCount", json!([address, block]))
            .await?;
        u64::try_from(n).map_err(|e| RpcError::Decode(e.to_string()))
    }

    /// Whether the node knows the transaction (`eth_getTransactionByHash` is not null: in its pool or mined).
    pub async fn transaction_known(&self, hash: B256) -> Result<bool, RpcError> {
        let tx: Option<Value> = self.call("eth_getTransactionByHash", json!([hash])).await?;
        Ok(tx.is_some_and(|t| !t.is_null()))
    }

    /// `eth_estimateGas`.
    pub async fn estimate_gas(&self, from: Address, to: Address, data: &[u8]) -> Result<u64, RpcError> {
        let gas: U256 = self
            .call(
                "eth_estimateGas",
                json!([{ "from": from, "to": to, "data": Bytes::copy_from_slice(data) }]),
            )
            .await?;
        u64::try_from(gas).map_err(|e| RpcError::Decode(e.to_string()))
    }

    /// The latest base fee and the node's suggested priority fee.
    pub async fn fees(&self) -> Result<(u128, u128), RpcError> {
        let (block, tip) = futures_util::future::join(
            self.call::<Block>("eth_getBlockByNumber", json!(["latest", false])),
            self.call::<U256>("eth_maxPriorityFeePerGas", json!([])),
        )
        .await;
        let (block, tip) = (block?, tip?);
        let base = block.base_fee_per_gas.unwrap_or(U256::ZERO);
        let to_u128 = |v: U256| u128::try_from(v).map_err(|e| RpcError::Decode(e.to_string()));
        Ok((to_u128(base)?, to_u128(tip)?))
    }

    /// `eth_sendRawTransaction`.
    pub async fn send_raw(&self, raw: &[u8]) -> Result<B256, RpcError> {
        self.call("eth_sendRawTransaction", json!([Bytes::copy_from_slice(raw)]))
            .await
    }

    /// `eth_getTransactionReceipt` (`None` while pending).
    pub async fn receipt(&self, hash: B256) -> Result<Option<Receipt>, RpcError> {
        self.call("eth_getTransactionReceipt", json!([hash])).await
    }
}

/// How the service answers a failed node call: 503 with `Retry-After` when the node cannot be reached, 502 for
/// its errors and malformed or oversized answers.
impl From<RpcError> for ApiError {
    fn from(e: RpcError) -> Self {
        match e {
            RpcError::Unavailable(detail) => {
                worker::console_warn!("rpc unavailable: {detail}");
                let mut err = Self::new(
                    Code::RpcUnavailable,
                    "the chain's RPC node cannot be reached; retry later",
                );
                err.retry_after = Some(5);
                err
            }
            RpcError::Node { code, message, .. } => Self::new(
                Code::RpcError,
                format!("the RPC node answered an error ({code}): {message}"),
            ),
            RpcError::Decode(detail) => Self::new(Code::RpcError, format!("unexpected RPC answer: {detail}")),
            RpcError::TooLarge(detail) => Self::new(Code::RpcAnswerTooLarge, detail),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn node(message: &str) -> Result<B256, RpcError> {
        Err(RpcError::Node {
            code: -32000,
            message: message.to_owned(),
            data: None,
        })
    }

    #[test]
    fn calls_and_estimates_carry_the_gas_cap() {
        let bounds = RpcBounds {
            max_response_bytes: 1024,
            call_gas_cap: 10_000_000,
            estimate_gas_cap: 12_000_000,
        };
        let call = bounds.capped(
            "eth_call",
            json!([{ "to": Address::ZERO, "data": "0x" }, "latest"]),
        );
        assert_eq!(call[0]["gas"], "0x989680");
        assert_eq!(call[1], "latest");
        let estimate = bounds.capped("eth_estimateGas", json!([{ "to": Address::ZERO }]));
        assert_eq!(estimate[0]["gas"], "0xb71b00");
        // a caller's own gas stays; other methods are left alone
        let own = bounds.capped(
            "eth_call",
            json!([{ "to": Address::ZERO, "gas": "0x5208" }, "latest"]),
        );
        assert_eq!(own[0]["gas"], "0x5208");
        let code = bounds.capped("eth_getCode", json!([Address::ZERO, "latest"]));
        assert_eq!(code, json!([Address::ZERO, "latest"]));
        // a malformed params value is passed on as it is (the node refuses it)
        assert_eq!(bounds.capped("eth_call", json!("x")), json!("x"));
    }

    #[test]
    fn logs_may_answer_more_than_calls() {
        let bounds = RpcBounds::default();
        assert_eq!(bounds.max_bytes("eth_call"), 4 * 1024 * 1024);
        assert_eq!(bounds.max_bytes("batch"), 4 * 1024 * 1024);
        assert_eq!(bounds.max_bytes("eth_getLogs"), 16 * 1024 * 1024);
    }

    #[test]
    fn an_answer_too_large_is_never_a_sent_transaction() {
        assert_eq!(
            SendOutcome::of(&Err::<B256, _>(RpcError::TooLarge("over".into()))),
            SendOutcome::Unknown
        );
    }

    #[test]
    fn send_answers_are_classified() {
        assert_eq!(SendOutcome::of(&Ok(B256::ZERO)), SendOutcome::Accepted);
        assert_eq!(SendOutcome::of(&node("already known")), SendOutcome::AlreadyKnown);
        assert_eq!(
            SendOutcome::of(&node("Known transaction: 0xab…")),
            SendOutcome::AlreadyKnown
        );
        assert_eq!(
            SendOutcome::of(&node("transaction already imported")),
            SendOutcome::AlreadyKnown
        );
        assert_eq!(
            SendOutcome::of(&node("nonce too low: next nonce 5, tx nonce 4")),
            SendOutcome::NonceTaken
        );
        assert_eq!(SendOutcome::of(&node("Nonce too low")), SendOutcome::NonceTaken);
        assert_eq!(SendOutcome::of(&node("OldNonce")), SendOutcome::NonceTaken);
        assert_eq!(
            SendOutcome::of(&node("replacement transaction underpriced")),
            SendOutcome::NonceTaken
        );
        assert_eq!(
            SendOutcome::of(&node("insufficient funds for gas * price + value")),
            SendOutcome::Rejected
        );
        assert_eq!(
            SendOutcome::of(&node("max fee per gas less than block base fee")),
            SendOutcome::Rejected
        );
        assert_eq!(
            SendOutcome::of(&Err::<B256, _>(RpcError::Unavailable("timed out".into()))),
            SendOutcome::Unknown
        );
    }

    #[test]
    fn an_error_of_the_path_to_the_node_is_not_a_refusal() {
        // a gateway that forwarded the transaction and then answered an error: kept, never undone and released
        let coded = |code: i64, message: &str| {
            Err::<B256, _>(RpcError::Node {
                code,
                message: message.into(),
                data: None,
            })
        };
        for message in [
            "upstream request timeout",
            "Gateway Timeout",
            "request timed out",
            "service temporarily unavailable",
            "Too Many Requests",
            "rate limit exceeded, try again later",
            "connection reset by peer",
            "server busy",
        ] {
            assert_eq!(SendOutcome::of(&node(message)), SendOutcome::Unknown, "{message}");
        }
        assert_eq!(SendOutcome::of(&coded(-32603, "oops")), SendOutcome::Unknown);
        assert_eq!(
            SendOutcome::of(&coded(-32005, "daily request count exceeded")),
            SendOutcome::Unknown
        );
        assert_eq!(
            SendOutcome::of(&coded(-32002, "resource unavailable")),
            SendOutcome::Unknown
        );
        // the transaction's own faults stay refusals (nothing sent: undone, released)
        assert_eq!(
            SendOutcome::of(&coded(-32000, "intrinsic gas too low")),
            SendOutcome::Rejected
        );
        assert_eq!(
            SendOutcome::of(&coded(-32003, "transaction rejected")),
            SendOutcome::Rejected
        );
        // and a known phrasing wins over a transient-looking code
        assert_eq!(
            SendOutcome::of(&coded(-32603, "nonce too low")),
            SendOutcome::NonceTaken
        );
    }
}
