//! Typed API clients (gloo-net): `RelayerClient` for the relayer routes and `LookupClient` for lookup, search and
//! IPFS. Requests are validated with the core before anything is sent; every failure rejects with a
//! `ProfileRelayerError` carrying the service's `code`, the HTTP `status` and `retryAfter` (seconds) when given;
//! network failures have the code `NETWORK_ERROR`.

use gloo_net::http::{Request, RequestBuilder, Response};
use js_sys::{Promise, Reflect, Uint8Array};
use serde::{Deserialize, Serialize, de::DeserializeOwned};
use serde_json::Value;
use wasm_bindgen::{JsCast, prelude::*};
use wasm_bindgen_futures::{JsFuture, future_to_promise};

use super::{
    relay::{self, RelayCallParams, SignWith},
    types::{from_js, to_js},
};
use crate::{
    Error,
    api::{DeployRequest, ExecuteRequest, ExecuteResponse, QuotaRequest, QuotaResponse, TransactionStatus},
    erc165,
    hex::{parse_fixed, parse_hex, parse_uint256, to_hex},
    ipfs::{CidPath, RAW, cid_text, raw_cid, verify_block},
    lsp2::{self, Content},
    lsp23, lsp25,
};

#[wasm_bindgen(typescript_custom_section)]
const TS_CLIENT_TYPES: &'static str = r#"
/** Options of `new RelayerClient(…)`. `apiKey` is needed for the deploy / register / status routes; the LSP15 relay
 * (`execute`, `quota`, `transaction`) takes none. */
export interface RelayerClientOptions { baseUrl: string; apiKey?: string; }
/** Options of `new LookupClient(…)`; `apiKey` is only needed for `upload`. */
export interface LookupClientOptions { baseUrl: string; apiKey?: string; }
/** A lookup / search record: one of the three kinds the index holds (types generated from the Rust records). */
export type IndexRecord = ProfileRecord | AssetRecord | TokenRecord;
export interface SearchOptions { page?: number; hitsPerPage?: number; }
/** `GET /v1/:chainId/stats`: the assets index, then the profiles index. */
export type Stats = [IndexStats, IndexStats];
export interface UploadResult { cid: string; url: string; size: number; }
/** Input of `RelayerClient.createProfile`: the whole Form-2 flow. */
export interface CreateProfileInput { metadata: unknown; controllers: Address[]; network?: NetworkInput; }
export interface CreateProfileResult extends DeployResponse {
  salt: Hex; lsp3Profile: Hex; metadataCid: string; postDeploymentCallData: Hex; pending: boolean;
}
/** Codes a client call can reject with, besides the core's ProfileRelayerErrorCode: the service's codes and the
 * client's own (`NETWORK_ERROR`, `HTTP_ERROR`, `PREDICTION_MISMATCH`, `UPLOAD_MISMATCH`, `CONTENT_MISMATCH`). */
export type ServiceErrorCode =
  | "MISSING_API_KEY" | "INVALID_API_KEY" | "API_KEY_REVOKED" | "INSUFFICIENT_SCOPE" | "RATE_LIMITED" | "NOT_FOUND"
  | "PROFILE_NOT_FOUND" | "NOT_A_UNIVERSAL_PROFILE" | "METHOD_NOT_ALLOWED" | "BODY_TOO_LARGE" | "UNSUPPORTED_CONTENT_TYPE"
  | "INVALID_MULTIPART" | "UNKNOWN_CHAIN" | "INDEX_NOT_FOUND" | "API_KEY_NOT_FOUND" | "INVALID_ADMIN_TOKEN"
  | "CONFIGURATION_ERROR" | "INTERNAL_ERROR" | "RPC_ERROR" | "RPC_UNAVAILABLE" | "INSUFFICIENT_FUNDS"
  | "DEPLOYMENT_WOULD_REVERT" | "DEPLOYMENT_REVERTED" | "DEPLOYMENT_MISMATCH" | "GATEWAY_ERROR" | "GATEWAY_TIMEOUT"
  | "CONTENT_NOT_FOUND" | "RANGE_NOT_SATISFIABLE" | "SEARCH_BACKEND_ERROR"
  | "NOT_A_CONTROLLER" | "PROFILE_NOT_REGISTERED" | "NOT_A_KEY_MANAGER" | "GAS_LIMIT_TOO_HIGH" | "DAILY_GAS_CEILING"
  | "GAS_BUDGET_EXCEEDED" | "TRANSACTION_NOT_FOUND" | "DEPLOY_DATA_TOO_LARGE" | "FEE_TOO_HIGH" | "INVALID_BODY"
  | "INVALID_PARAMETER" | "TOKEN_NOT_FOUND" | "IMAGE_TOO_LARGE" | "INVALID_IMAGE"
  | "NETWORK_ERROR" | "HTTP_ERROR" | "PREDICTION_MISMATCH" | "UPLOAD_MISMATCH" | "CONTENT_MISMATCH"
  | "INVALID_RESPONSE" | "SIGNER_ERROR"
  | "INVALID_FILTERS" | "INVALID_CURSOR" | "TOO_MANY_QUERIES" | "UNSUPPORTED_QUERY_TYPE";
"#;

fn client_error(status: Option<u16>, code: &str, message: &str, retry_after: Option<f64>) -> JsValue {
    let err = js_sys::Error::new(message);
    err.set_name("ProfileRelayerError");
    let _ = Reflect::set(&err, &"code".into(), &code.into());
    if let Some(s) = status {
        let _ = Reflect::set(&err, &"status".into(), &JsValue::from(s));
    }
    if let Some(r) = retry_after {
        let _ = Reflect::set(&err, &"retryAfter".into(), &JsValue::from(r));
    }
    err.into()
}

fn network_error(e: &gloo_net::Error) -> JsValue {
    client_error(
        None,
        "NETWORK_ERROR",
        &format!("the service cannot be reached: {e}"),
        None,
    )
}

/// JSON text through the JS engine's `JSON.parse` / `JSON.stringify`: the package carries no JSON parser or
/// serializer of its own (serde_json's, with its float formatting tables, is most of a client's size).
fn parse_json(text: &str) -> Option<JsValue> {
    js_sys::JSON::parse(text).ok()
}

/// `value[key]` as a string, if it is one.
fn get_str(value: &JsValue, key: &str) -> Option<String> {
    Reflect::get(value, &key.into()).ok().and_then(|v| v.as_string())
}

/// A JSON request body: `value` as JS (numbers stay numbers) and `JSON.stringify`.
fn json_text(value: &Value) -> Result<String, JsValue> {
    let js = to_js(value)?;
    js_sys::JSON::stringify(&js)
        .map(String::from)
        .map_err(|_| JsValue::from(Error::InvalidArgument("the request body is not JSON".into())))
}

/// `builder` with a JSON body (or none).
fn with_json(builder: RequestBuilder, body: Option<&Value>) -> Result<Request, JsValue> {
    match body {
        Some(b) => builder
            .header("content-type", "application/json")
            .body(json_text(b)?),
        None => builder.build(),
    }
    .map_err(|e| network_error(&e))
}

/// The answer's body as JSON (parsed by JS).
async fn json_of(response: Response) -> Result<JsValue, JsValue> {
    let text = response.text().await.map_err(|e| network_error(&e))?;
    parse_json(&text).ok_or_else(|| {
        client_error(
            Some(response.status()),
            "INVALID_RESPONSE",
            "the service answered a body that is not JSON",
            None,
        )
    })
}

async fn check(response: Response) -> Result<Response, JsValue> {
    if response.ok() || response.status() == 202 {
        return Ok(response);
    }
    let status = response.status();
    let retry_after = response
        .headers()
        .get("retry-after")
        // delay-seconds (RFC 9110): digits only
        .and_then(|v| v.trim().parse::<u32>().ok())
        .map(f64::from);
    let text = response.text().await.unwrap_or_default();
    let error = parse_json(&text).and_then(|body| Reflect::get(&body, &"error".into()).ok());
    let detail = error.and_then(|e| Some((get_str(&e, "code")?, get_str(&e, "message")?)));
    Err(match detail {
        Some((code, message)) => client_error(Some(status), &code, &message, retry_after),
        None => client_error(Some(status), "HTTP_ERROR", &format!("HTTP {status}"), retry_after),
    })
}

async fn send_json(builder: RequestBuilder, body: Option<&Value>) -> Result<JsValue, JsValue> {
    let request = with_json(builder, body)?;
    let response = check(request.send().await.map_err(|e| network_error(&e))?).await?;
    json_of(response).await
}

fn base(url: &str) -> Result<String, Error> {
    let trimmed = url.trim_end_matches('/');
    if !(trimmed.starts_with("http://") || trimmed.starts_with("https://")) {
        return Err(Error::InvalidArgument(format!(
            "baseUrl must be an http(s) URL, got {url:?}"
        )));
    }
    Ok(trimmed.to_owned())
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RelayerOptions {
    base_url: String,
    #[serde(default)]
    api_key: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct LookupOptions {
    base_url: String,
    #[serde(default)]
    api_key: Option<String>,
}

/// Client of the relayer routes.
#[wasm_bindgen]
#[derive(Debug, Clone)]
pub struct RelayerClient {
    base_url: String,
    api_key: Option<String>,
}

/// The numeric `page` / `hitsPerPage` of a `SearchOptions` object that are present.
fn search_options(options: Option<&js_sys::Object>) -> Vec<(&'static str, u64)> {
    let Some(o) = options else { return Vec::new() };
    ["page", "hitsPerPage"]
        .into_iter()
        .filter_map(|key| {
            Reflect::get(o, &key.into())
                .ok()
                .and_then(|v| v.as_f64())
                .map(|n| (key, n as u64))
        })
        .collect()
}

#[wasm_bindgen]
impl RelayerClient {
    /// `new RelayerClient({ baseUrl, apiKey? })`.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "RelayerClientOptions")] options: JsValue,
    ) -> Result<Self, Error> {
        let o: RelayerOptions = from_js(options, "options")?;
        Ok(Self {
            base_url: base(&o.base_url)?,
            api_key: o.api_key,
        })
    }

    fn post(&self, path: &str) -> RequestBuilder {
        self.authorized(Request::post(&format!("{}{path}", self.base_url)))
    }

    fn authorized(&self, builder: RequestBuilder) -> RequestBuilder {
        match &self.api_key {
            Some(key) => builder.header("authorization", &format!("Bearer {key}")),
            None => builder,
        }
    }

    /// Deploys a Universal Profile (Form 1 or Form 2); the body is validated before it is sent.
    #[wasm_bindgen(js_name = deployProfile, unchecked_return_type = "Promise<DeployResponse>")]
    pub fn deploy_profile(
        &self,
        #[wasm_bindgen(unchecked_param_type = "DeployRequest")] request: JsValue,
    ) -> Promise {
        let this = self.clone();
        future_to_promise(async move {
            let body: Value = from_js(request, "request")?;
            DeployRequest::from_value(&body)?;
            send_json(this.post("/api/universal-profile"), Some(&body)).await
        })
    }

    /// Registers an existing profile for the monthly gas quota.
    #[wasm_bindgen(js_name = registerProfile, unchecked_return_type = "Promise<RegisterResponse>")]
    pub fn register_profile(&self, address: String) -> Promise {
        let this = self.clone();
        future_to_promise(async move {
            crate::hex::parse_address("universalProfileAddress", &address)?;
            let body = serde_json::json!({ "universalProfileAddress": address });
            send_json(this.post("/api/universal-profile/register"), Some(&body)).await
        })
    }

    /// Deployment, registration and quota of a profile.
    #[wasm_bindgen(js_name = profileStatus, unchecked_return_type = "Promise<ProfileStatus>")]
    pub fn profile_status(&self, address: String) -> Promise {
        let this = self.clone();
        future_to_promise(async move {
            crate::hex::parse_address("address", &address)?;
            let builder = this.authorized(Request::get(&format!(
                "{}/api/universal-profile/{address}",
                this.base_url
            )));
            send_json(builder, None).await
        })
    }

    /// The whole Form-2 flow: upload the metadata JSON, build its VerifiableURI and the profile data, pick a salt,
    /// predict the address, deploy, and check that the answered address is the prediction.
    #[wasm_bindgen(js_name = createProfile, unchecked_return_type = "Promise<CreateProfileResult>")]
    pub fn create_profile(
        &self,
        #[wasm_bindgen(unchecked_param_type = "CreateProfileInput")] input: JsValue,
    ) -> Promise {
        let this = self.clone();
        future_to_promise(async move {
            let metadata = Reflect::get(&input, &"metadata".into()).unwrap_or(JsValue::UNDEFINED);
            let network = Reflect::get(&input, &"network".into()).ok();
            let controllers: Vec<String> = from_js(
                Reflect::get(&input, &"controllers".into()).unwrap_or(JsValue::UNDEFINED),
                "controllers",
            )?;
            if metadata.is_undefined() || metadata.is_null() {
                return Err(
                    Error::InvalidArgument("metadata is required (the LSP3 profile JSON)".into()).into(),
                );
            }
            let text = match metadata.as_string() {
                Some(t) => t,
                None => js_sys::JSON::stringify(&metadata)
                    .map(String::from)
                    .map_err(|_| Error::InvalidArgument("metadata is not JSON".into()))?,
            };
            // checked as an LSP3 document on the JS value (JSON.parse for a string): no JSON parser in the package
            let document = match metadata.as_string() {
                Some(t) => parse_json(&t).ok_or_else(|| {
                    Error::InvalidMetadata("LSP3Profile: the metadata string is not JSON".into())
                })?,
                None => metadata,
            };
            serde_wasm_bindgen::from_value::<crate::lsp3::Lsp3ProfileJson>(document)
                .map_err(|e| Error::InvalidMetadata(format!("LSP3Profile: {e}")))?;
            let uploaded = upload_bytes(
                &this.base_url,
                this.api_key.as_deref(),
                text.as_bytes().to_vec(),
                "profile.json",
            )
            .await?;
            let lsp3 = lsp2::encode_verifiable_uri(Content::Text(&text), &format!("ipfs://{}", uploaded.0));
            let controllers = controllers
                .iter()
                .map(|c| crate::hex::parse_address("controllers", c))
                .collect::<Result<Vec<_>, _>>()?;
            let constants = super::network_constants(network)?;
            let data = lsp23::profile_data_from_controllers(&controllers, Some(&lsp3), &constants)?;
            let calldata = data.to_post_deployment_calldata()?;
            let salt = lsp23::generate_salt()?;
            let predicted = lsp23::predict_addresses(salt, &calldata, &constants)?;
            let body =
                serde_json::json!({ "salt": salt.to_string(), "postDeploymentCallData": to_hex(&calldata) });
            let request = with_json(this.post("/api/universal-profile"), Some(&body))?;
            let response = check(request.send().await.map_err(|e| network_error(&e))?).await?;
            let pending = response.status() == 202;
            // read as JS, not as a `DeployResponse`: typed reads of these answers cost more than the wasm budget
            let answer = json_of(response).await?;
            let expected = predicted.universal_profile.to_checksum(None);
            let answered = get_str(&answer, "universalProfileAddress");
            if answered.as_deref() != Some(expected.as_str()) || !answer.is_object() {
                let answered = answered.map_or_else(|| "no address".to_owned(), |a| format!("{a:?}"));
                return Err(client_error(
                    None,
                    "PREDICTION_MISMATCH",
                    &format!("the relayer answered {answered} but {expected} was predicted"),
                    None,
                ));
            }
            let set = |key: &str, value: JsValue| Reflect::set(&answer, &key.into(), &value).map(drop);
            set("salt", salt.to_string().into())?;
            set("lsp3Profile", to_hex(&lsp3).into())?;
            set("metadataCid", uploaded.0.into())?;
            set("postDeploymentCallData", to_hex(&calldata).into())?;
            set("pending", pending.into())?;
            Ok(answer)
        })
    }
}

/// Client of the lookup, search and IPFS routes.
#[wasm_bindgen]
#[derive(Debug, Clone)]
pub struct LookupClient {
    base_url: String,
    api_key: Option<String>,
}

async fn upload_bytes(
    base_url: &str,
    api_key: Option<&str>,
    bytes: Vec<u8>,
    name: &str,
) -> Result<(String, usize), JsValue> {
    let key =
        api_key.ok_or_else(|| JsValue::from(Error::InvalidArgument("upload needs an apiKey".into())))?;
    let form = web_sys::FormData::new()?;
    let array = Uint8Array::from(bytes.as_slice());
    let parts = js_sys::Array::of1(&array);
    let blob = web_sys::Blob::new_with_u8_array_sequence(&parts)?;
    form.append_with_blob_and_filename("file", &blob, name)?;
    let request = Request::post(&format!("{base_url}/api/v0/add"))
        .header("authorization", &format!("Bearer {key}"))
        .body(form)
        .map_err(|e| network_error(&e))?;
    let response = check(request.send().await.map_err(|e| network_error(&e))?).await?;
    let answer = json_of(response).await?;
    let cid = get_str(&answer, "Hash").unwrap_or_default();
    // the service must have stored exactly these bytes
    if cid != cid_text(&raw_cid(&bytes)) {
        return Err(client_error(
            None,
            "UPLOAD_MISMATCH",
            &format!("the service answered CID {cid:?} for other bytes"),
            None,
        ));
    }
    Ok((cid, bytes.len()))
}

#[wasm_bindgen]
impl LookupClient {
    /// `new LookupClient({ baseUrl, apiKey? })`.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "LookupClientOptions")] options: JsValue,
    ) -> Result<Self, Error> {
        let o: LookupOptions = from_js(options, "options")?;
        Ok(Self {
            base_url: base(&o.base_url)?,
            api_key: o.api_key,
        })
    }

    fn get(&self, path: &str) -> Promise {
        let url = format!("{}{path}", self.base_url);
        future_to_promise(async move { send_json(Request::get(&url), None).await })
    }

    /// The profile or asset record of an address; an address holding neither answers `NotIndexed`
    /// (`LSPStandard` `EOA` or `UnknownContract`).
    #[wasm_bindgen(unchecked_return_type = "Promise<IndexRecord | NotIndexed>")]
    pub fn address(&self, chain_id: u32, address: String) -> Promise {
        if let Err(e) = crate::hex::parse_address("address", &address) {
            return Promise::reject(&e.into());
        }
        self.get(&format!("/v1/{chain_id}/address/{address}"))
    }

    /// An LSP8 token's record (token id in the collection's format, or bytes32).
    #[wasm_bindgen(unchecked_return_type = "Promise<IndexRecord>")]
    pub fn token(&self, chain_id: u32, address: String, token_id: String) -> Promise {
        let encoded: String = js_sys::encode_uri_component(&token_id).into();
        self.get(&format!("/v1/{chain_id}/address/{address}/{encoded}"))
    }

    /// Entries per index: `[assets, profiles]` (the shape of LUKSO's API).
    #[wasm_bindgen(unchecked_return_type = "Promise<Stats>")]
    pub fn stats(&self, chain_id: u32) -> Promise {
        self.get(&format!("/v1/{chain_id}/stats"))
    }

    /// Where the indexer stands: entries per index, unindexable contracts, last indexed block, head, lag.
    #[wasm_bindgen(unchecked_return_type = "Promise<IndexerStatus>")]
    pub fn indexer(&self, chain_id: u32) -> Promise {
        self.get(&format!("/v1/{chain_id}/indexer"))
    }

    /// Full-text search over profiles and assets.
    #[wasm_bindgen(unchecked_return_type = "Promise<SearchBoth>")]
    pub fn search(
        &self,
        chain_id: u32,
        query: String,
        #[wasm_bindgen(unchecked_param_type = "SearchOptions")] options: Option<js_sys::Object>,
    ) -> Promise {
        let mut path = format!(
            "/v1/{chain_id}/search?q={}",
            String::from(js_sys::encode_uri_component(&query))
        );
        for (key, n) in search_options(options.as_ref()) {
            path.push_str(&format!("&{key}={n}"));
        }
        let url = format!("{}{path}", self.base_url);
        future_to_promise(async move { send_json(Request::get(&url), None).await })
    }

    /// One index through the Algolia-compatible route (`POST /1/indexes/:indexName/query`); the index names are
    /// listed by `stats()` (`[assets, profiles]`).
    #[wasm_bindgen(js_name = searchIndex, unchecked_return_type = "Promise<SearchResult>")]
    pub fn search_index(
        &self,
        index_name: String,
        query: String,
        #[wasm_bindgen(unchecked_param_type = "SearchOptions")] options: Option<js_sys::Object>,
    ) -> Promise {
        let mut body = serde_json::Map::new();
        body.insert("query".into(), query.into());
        for (key, n) in search_options(options.as_ref()) {
            body.insert(key.into(), n.into());
        }
        let encoded: String = js_sys::encode_uri_component(&index_name).into();
        let url = format!("{}/1/indexes/{encoded}/query", self.base_url);
        future_to_promise(async move { send_json(Request::post(&url), Some(&Value::Object(body))).await })
    }

    /// Bytes behind `cid[/path]`; raw blocks are verified against the CID here as well.
    #[wasm_bindgen(unchecked_return_type = "Promise<Uint8Array>")]
    pub fn ipfs(&self, cid_path: String) -> Promise {
        let base_url = self.base_url.clone();
        future_to_promise(async move {
            let target = CidPath::parse(&cid_path)?;
            let response = Request::get(&format!("{base_url}/ipfs/{}", target.to_gateway_path()))
                .send()
                .await
                .map_err(|e| network_error(&e))?;
            let bytes = check(response)
                .await?
                .binary()
                .await
                .map_err(|e| network_error(&e))?;
            if target.cid.codec() == RAW && !verify_block(&target.cid, &bytes)? {
                return Err(client_error(
                    None,
                    "CONTENT_MISMATCH",
                    "the bytes do not match the CID",
                    None,
                ));
            }
            Ok(Uint8Array::from(bytes.as_slice()).into())
        })
    }

    /// Uploads bytes, a string or a JSON-serialisable value; resolves to its CID.
    #[wasm_bindgen(unchecked_return_type = "Promise<UploadResult>")]
    pub fn upload(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Uint8Array | string | object")] data: JsValue,
    ) -> Promise {
        let this = self.clone();
        future_to_promise(async move {
            let (bytes, name) = if let Some(array) = data.dyn_ref::<Uint8Array>() {
                (array.to_vec(), "file.bin")
            } else if let Some(text) = data.as_string() {
                (text.into_bytes(), "file.txt")
            } else if data.is_object() {
                let text: String = js_sys::JSON::stringify(&data)
                    .map_err(|_| Error::InvalidContent)?
                    .into();
                (text.into_bytes(), "file.json")
            } else {
                return Err(Error::InvalidContent.into());
            };
            let (cid, size) = upload_bytes(&this.base_url, this.api_key.as_deref(), bytes, name).await?;
            let result = js_sys::Object::new();
            let url = format!("ipfs://{cid}");
            for (key, value) in [
                ("cid", cid.into()),
                ("url", url.into()),
                ("size", JsValue::from(size)),
            ] {
                Reflect::set(&result, &JsValue::from_str(key), &value)?;
            }
            Ok(result.into())
        })
    }
}

/// Sends a request and reads the answer (parsed by JS) as the core wire type `T`, re-serialised for JS so every field
/// has the documented shape; a body that is not a `T` is `INVALID_RESPONSE` (see [`read_typed`]).
async fn send_typed<T: DeserializeOwned + Serialize>(
    builder: RequestBuilder,
    body: Option<&Value>,
) -> Result<JsValue, JsValue> {
    let request = with_json(builder, body)?;
    let response = check(request.send().await.map_err(|e| network_error(&e))?).await?;
    let answer: T = read_typed(response).await?;
    to_js(&answer).map_err(Into::into)
}

/// A successful answer's body (parsed by JS) as the core wire type `T`; a body that is not a `T` is
/// `INVALID_RESPONSE`.
async fn read_typed<T: DeserializeOwned>(response: Response) -> Result<T, JsValue> {
    let status = response.status();
    let answer = json_of(response).await?;
    serde_wasm_bindgen::from_value(answer).map_err(|e| {
        client_error(
            Some(status),
            "INVALID_RESPONSE",
            &format!("the service answered an unexpected body: {e}"),
            None,
        )
    })
}

/// A `ProfileRelayerError` `SIGNER_ERROR` for a `sign` callback that threw or rejected; the original is its `cause`
/// (e.g. a wallet's `{ code: 4001 }` when the user declined).
fn signer_error(cause: JsValue) -> JsValue {
    let reason = cause
        .dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| cause.as_string())
        .unwrap_or_else(|| "it threw a non-Error value".to_owned());
    let err = client_error(
        None,
        "SIGNER_ERROR",
        &format!("the sign callback failed: {reason}"),
        None,
    );
    let _ = Reflect::set(&err, &"cause".into(), &cause);
    err
}

/// Calls a `sign` callback (sync or async) and checks that it answered a 65-byte signature.
async fn call_signer(
    sign: &js_sys::Function,
    first: &JsValue,
    second: Option<&JsValue>,
) -> Result<String, JsValue> {
    let out = match second {
        Some(s) => sign.call2(&JsValue::NULL, first, s),
        None => sign.call1(&JsValue::NULL, first),
    }
    .map_err(signer_error)?;
    let value = JsFuture::from(Promise::resolve(&out))
        .await
        .map_err(signer_error)?;
    Ok(relay::check_signature(&value)?)
}

#[wasm_bindgen]
impl RelayerClient {
    /// LSP15 `POST /api/execute`: relays a signed LSP25 call to the profile's KeyManager (no API key). With a
    /// `sign` callback the client builds the LSP25 digest and asks it for the signature; the body is validated
    /// before it is sent. Resolves when the relayer answers: `status` `"mined"` (or `"reverted"`) with `gasUsed` and
    /// the quota left, or `"pending"` when the transaction was not mined within the relayer's wait (follow it with
    /// `transaction(hash)`).
    #[wasm_bindgen(unchecked_return_type = "Promise<ExecuteResponse>")]
    pub fn execute(&self, #[wasm_bindgen(unchecked_param_type = "ExecuteInput")] input: JsValue) -> Promise {
        let url = format!("{}/api/execute", self.base_url);
        future_to_promise(async move {
            let args = relay::execute_args(&input)?;
            let signature = match &args.sign {
                SignWith::Ready(signature) => signature.clone(),
                SignWith::Callback(sign) => {
                    let (key_manager, chain_id) = args
                        .domain
                        .ok_or_else(|| JsValue::from(Error::MissingField("keyManager and chainId".into())))?;
                    let digest = args.call.digest(key_manager, chain_id).to_string();
                    call_signer(sign, &JsValue::from_str(&digest), None).await?
                }
            };
            let body = serde_json::json!({
                "address": args.address,
                "transaction": {
                    "abi": to_hex(&args.call.payload),
                    "signature": signature,
                    "nonce": args.call.nonce.to_string(),
                    "validityTimestamps": format!("{:#x}", args.call.validity_timestamps.0),
                },
            });
            ExecuteRequest::from_value(&body, usize::MAX)?;
            send_typed::<ExecuteResponse>(Request::post(&url), Some(&body)).await
        })
    }

    /// LSP15 `POST /api/quota`: the profile's gas quota, authenticated by a controller's `personal_sign` over the
    /// profile and a timestamp (`"packed"` scheme by default; see `quotaMessage`). No API key.
    #[wasm_bindgen(unchecked_return_type = "Promise<QuotaResponse>")]
    pub fn quota(&self, #[wasm_bindgen(unchecked_param_type = "QuotaInput")] input: JsValue) -> Promise {
        let url = format!("{}/api/quota", self.base_url);
        future_to_promise(async move {
            // whole seconds since the epoch: exact in an f64
            let now = (js_sys::Date::now() / 1000.0).floor() as u64;
            let args = relay::quota_input_args(&input, now)?;
            let signature = match &args.sign {
                SignWith::Ready(signature) => signature.clone(),
                SignWith::Callback(sign) => {
                    let message = to_js(&args.message)?;
                    call_signer(sign, &JsValue::from_str(&args.message.message), Some(&message)).await?
                }
            };
            let body = serde_json::json!({
                "address": args.address,
                "timestamp": args.timestamp,
                "signature": signature,
            });
            QuotaRequest::from_value(&body)?;
            send_typed::<QuotaResponse>(Request::post(&url), Some(&body)).await
        })
    }

    /// `GET /api/transaction/:hash`: where a transaction this relayer sent is (pending, mined, reverted, replaced —
    /// then `replacedBy` — or dropped), its block, gas used and the gas charged to the profile.
    #[wasm_bindgen(unchecked_return_type = "Promise<TransactionStatus>")]
    pub fn transaction(&self, #[wasm_bindgen(unchecked_param_type = "Hex")] hash: String) -> Promise {
        let base_url = self.base_url.clone();
        future_to_promise(async move {
            let hash = parse_fixed::<32>("hash", &hash)?;
            send_typed::<TransactionStatus>(Request::get(&format!("{base_url}/api/transaction/{hash}")), None)
                .await
        })
    }
}

/// One JSON-RPC call; a node error is `RPC_ERROR` with the node's message.
/// The `result` must be a string (every call made here answers hex).
async fn rpc(url: &str, method: &str, params: Value) -> Result<String, JsValue> {
    let body = serde_json::json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params });
    let request = with_json(Request::post(url), Some(&body))?;
    let response = request.send().await.map_err(|e| network_error(&e))?;
    let status = response.status();
    let rpc_error = |message: String| client_error(Some(status), "RPC_ERROR", &message, None);
    if !response.ok() {
        return Err(rpc_error(format!("the node answered HTTP {status} to {method}")));
    }
    let text = response
        .text()
        .await
        .map_err(|e| rpc_error(format!("the node answered {method} with no body: {e}")))?;
    let answer = parse_json(&text)
        .filter(JsValue::is_object)
        .ok_or_else(|| rpc_error(format!("the node answered {method} with no JSON")))?;
    let error = Reflect::get(&answer, &"error".into()).unwrap_or(JsValue::UNDEFINED);
    if !error.is_undefined() && !error.is_null() {
        let message = get_str(&error, "message").unwrap_or_else(|| "no message".into());
        return Err(rpc_error(format!(
            "the node answered {method} with an error: {message}"
        )));
    }
    get_str(&answer, "result").ok_or_else(|| rpc_error(format!("the node answered {method} with no result")))
}

async fn eth_call(url: &str, to: alloy_primitives::Address, data: &[u8]) -> Result<Vec<u8>, JsValue> {
    let result = rpc(
        url,
        "eth_call",
        serde_json::json!([{ "to": to, "data": to_hex(data) }, "latest"]),
    )
    .await?;
    Ok(parse_hex("result", &result)?)
}

/// Reads what a relay call's signature needs from the chain: the profile's KeyManager (`owner()`), the chain id
/// and `getNonce(controller, channel)`. Sign and send right after: the nonce is only valid until the next call on
/// that channel.
#[wasm_bindgen(js_name = fetchRelayCallParams, unchecked_return_type = "Promise<RelayCallParams>")]
pub fn fetch_relay_call_params(
    #[wasm_bindgen(unchecked_param_type = "RelayCallParamsInput")] input: JsValue,
) -> Promise {
    future_to_promise(async move {
        let (rpc_url, profile, controller, channel) = relay::relay_call_params_args(&input)?;
        let url = base(&rpc_url)
            .map_err(|_| Error::InvalidArgument(format!("rpcUrl must be an http(s) URL, got {rpc_url:?}")))?;
        let owner = eth_call(&url, profile, &erc165::owner_calldata())
            .await
            .ok()
            .and_then(|out| erc165::decode_owner(&out))
            .ok_or_else(|| {
                client_error(
                    None,
                    "NOT_A_UNIVERSAL_PROFILE",
                    &format!("{profile} answers no owner(): not a Universal Profile on this chain"),
                    None,
                )
            })?;
        let nonce = eth_call(&url, owner, &lsp25::get_nonce_calldata(controller, channel))
            .await
            .ok()
            .and_then(|out| lsp25::decode_get_nonce(&out).ok())
            .ok_or_else(|| {
                client_error(
                    None,
                    "NOT_A_KEY_MANAGER",
                    &format!("the owner {owner} of {profile} answers no getNonce(): not an LSP6 KeyManager"),
                    None,
                )
            })?;
        let chain = rpc(&url, "eth_chainId", serde_json::json!([])).await?;
        let chain_id = parse_uint256("chainId", &chain)?;
        let chain_id = u64::try_from(chain_id).map_err(|_| Error::InvalidNumber {
            field: "chainId".into(),
            value: chain_id.to_string(),
            reason: "a chain id fits in 64 bits".into(),
        })?;
        to_js(&RelayCallParams {
            key_manager: owner.to_checksum(None),
            chain_id,
            nonce: nonce.0.to_string(),
        })
        .map_err(Into::into)
    })
}
