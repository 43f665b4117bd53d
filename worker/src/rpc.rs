//! Ethereum JSON-RPC over `fetch`, with a timeout. Network failures, timeouts and 5xx answers are
//! [`RpcError::Unavailable`] (the service answers 503); JSON-RPC errors are [`RpcError::Node`] (502, or handled).

use alloy_primitives::{Address, B256, Bytes, U256};
use futures_util::future::{Either, select};
use serde::{Deserialize, de::DeserializeOwned};
use serde_json::{Value, json};
use worker::{AbortController, Delay, Fetch, Headers, Method, Request, RequestInit};

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
    },
    /// The result has an unexpected shape.
    Decode(String),
}

impl RpcError {
    /// Whether a send failed because of the nonce (too low / already used / replacement rules).
    pub fn is_nonce_error(&self) -> bool {
        match self {
            Self::Node { message, .. } => {
                let m = message.to_ascii_lowercase();
                m.contains("nonce too low")
                    || m.contains("nonce too high")
                    || m.contains("already known")
                    || m.contains("replacement transaction underpriced")
                    || m.contains("invalid nonce")
            }
            _ => false,
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

/// A JSON-RPC client for one node.
#[derive(Debug, Clone)]
pub struct Rpc {
    url: String,
    timeout_ms: u64,
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
}

/// The fields of a receipt the relayer uses.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Receipt {
    /// `0x1` success, `0x0` reverted.
    pub status: U256,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Block {
    base_fee_per_gas: Option<U256>,
}

impl Rpc {
    /// A client for `url`; every call is aborted after `timeout_ms`.
    pub fn new(url: &str, timeout_ms: u64) -> Self {
        Self {
            url: url.to_owned(),
            timeout_ms,
        }
    }

    /// Calls `method` with `params` and decodes the result.
    pub async fn call<T: DeserializeOwned>(&self, method: &str, params: Value) -> Result<T, RpcError> {
        let value = self.call_raw(method, params).await?;
        serde_json::from_value(value).map_err(|e| RpcError::Decode(format!("{method}: {e}")))
    }

    async fn call_raw(&self, method: &str, params: Value) -> Result<Value, RpcError> {
        let body = json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params }).to_string();
        let parsed: RpcResponse = serde_json::from_value(self.post(method, body).await?)
            .map_err(|e| RpcError::Unavailable(format!("{method}: not a JSON-RPC answer: {e}")))?;
        if let Some(err) = parsed.error {
            return Err(RpcError::Node {
                code: err.code,
                message: err.message,
            });
        }
        Ok(parsed.result.unwrap_or(Value::Null))
    }

    /// POSTs a JSON-RPC body and parses the answer as JSON.
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
        response
            .json()
            .await
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
                .map(|(id, (method, params))| json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))
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
                |e| RpcError::Node {
                    code: e.code,
                    message: e.message,
                },
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
                    Some(e) => Err(RpcError::Node {
                        code: e.code,
                        message: e.message,
                    }),
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

    /// `eth_getBalance`.
    pub async fn balance(&self, address: Address) -> Result<U256, RpcError> {
        self.call("eth_getBalance", json!([address, "latest"])).await
    }

    /// `eth_getTransactionCount(address, "pending")`.
    pub async fn pending_nonce(&self, address: Address) -> Result<u64, RpcError> {
        let n: U256 = self
            .call("eth_getTransactionCount", json!([address, "pending"]))
            .await?;
        u64::try_from(n).map_err(|e| RpcError::Decode(e.to_string()))
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
        let block: Block = self
            .call("eth_getBlockByNumber", json!(["latest", false]))
            .await?;
        let tip: U256 = self.call("eth_maxPriorityFeePerGas", json!([])).await?;
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
