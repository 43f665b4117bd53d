//! Typed API clients (gloo-net): `RelayerClient` for the relayer routes and `LookupClient` for lookup, search and
//! IPFS. Requests are validated with the core before anything is sent; every failure rejects with a
//! `ProfileRelayerError` carrying the service's `code`, the HTTP `status` and `retryAfter` (seconds) when given;
//! network failures have the code `NETWORK_ERROR`.

use gloo_net::http::{Request, RequestBuilder, Response};
use js_sys::{Promise, Reflect, Uint8Array};
use serde::Deserialize;
use serde_json::Value;
use wasm_bindgen::{JsCast, prelude::*};
use wasm_bindgen_futures::future_to_promise;

use super::types::{from_js, to_js};
use crate::{
    Error,
    api::DeployRequest,
    hex::to_hex,
    ipfs::{CidPath, RAW, raw_cid, verify_block},
    lsp2::{self, Content},
    lsp23,
};

#[wasm_bindgen(typescript_custom_section)]
const TS_CLIENT_TYPES: &'static str = r#"
/** Options of `new RelayerClient(…)`. */
export interface RelayerClientOptions { baseUrl: string; apiKey: string; }
/** Options of `new LookupClient(…)`; `apiKey` is only needed for `upload`. */
export interface LookupClientOptions { baseUrl: string; apiKey?: string; }
/** `POST /api/universal-profile`: Form 1 or Form 2. */
export type DeployRequest =
  | { lsp6ControllerAddress: Address[]; lsp3Profile?: Hex }
  | { salt: Hex; postDeploymentCallData: Hex };
export interface DeployResponse { universalProfileAddress: Address; keyManagerAddress: Address; transactionHash: Hex | null; }
export interface Quota { total: number; used: number; remaining: number; unit: "gas"; resetDate: number; }
export interface RegisterResponse { universalProfileAddress: Address; newlyRegistered: boolean; quota: Quota; }
export interface ProfileStatus {
  universalProfileAddress: Address; deployed: boolean; registered: boolean;
  pendingTransaction: Hex | null; deploymentTransaction: Hex | null; registeredAt: number | null; quota: Quota | null;
}
/** A search / lookup record (see the service's OpenAPI document for every field). */
export interface IndexRecord {
  objectID: string; address: Address; kind: "LSP0ERC725Account" | "LSP7DigitalAsset" | "LSP8IdentifiableDigitalAsset" | "LSP8Token";
  name?: string | null; description?: string | null; symbol?: string | null; tokenId?: Hex; tags?: string[];
  profileImageUrl?: string | null; imageUrl?: string | null; iconUrl?: string | null;
  metadataStatus: "verified" | "hash_mismatch" | "unverifiable" | "fetch_failed" | "none" | "invalid_uri";
  tokens?: { tokenId: Hex; name?: string | null; imageUrl?: string | null }[];
  [field: string]: unknown;
}
export interface SearchResult { hits: IndexRecord[]; nbHits: number; page: number; nbPages: number; hitsPerPage: number; processingTimeMS: number; }
export interface SearchOptions { page?: number; hitsPerPage?: number; }
export interface Stats { chainId: number; indexes: { name: string; entries: number }[]; lastIndexedBlock: number | null; headBlock: number | null; lag: number | null; }
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
  | "NETWORK_ERROR" | "HTTP_ERROR" | "PREDICTION_MISMATCH" | "UPLOAD_MISMATCH" | "CONTENT_MISMATCH";
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

#[derive(Deserialize)]
struct ErrorBody {
    error: ErrorDetail,
}

#[derive(Deserialize)]
struct ErrorDetail {
    code: String,
    message: String,
}

async fn check(response: Response) -> Result<Response, JsValue> {
    if response.ok() || response.status() == 202 {
        return Ok(response);
    }
    let status = response.status();
    let retry_after = response
        .headers()
        .get("retry-after")
        .and_then(|v| v.parse::<f64>().ok());
    let text = response.text().await.unwrap_or_default();
    Err(match serde_json::from_str::<ErrorBody>(&text) {
        Ok(body) => client_error(Some(status), &body.error.code, &body.error.message, retry_after),
        Err(_) => client_error(Some(status), "HTTP_ERROR", &format!("HTTP {status}"), retry_after),
    })
}

async fn send_json(builder: RequestBuilder, body: Option<&Value>) -> Result<JsValue, JsValue> {
    let request = match body {
        Some(b) => builder.header("content-type", "application/json").json(b),
        None => builder.build(),
    }
    .map_err(|e| network_error(&e))?;
    let response = check(request.send().await.map_err(|e| network_error(&e))?).await?;
    let value: Value = response.json().await.map_err(|e| network_error(&e))?;
    to_js(&value).map_err(Into::into)
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
    api_key: String,
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
    api_key: String,
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
    /// `new RelayerClient({ baseUrl, apiKey })`.
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
        Request::post(&format!("{}{path}", self.base_url))
            .header("authorization", &format!("Bearer {}", self.api_key))
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
            let builder = Request::get(&format!("{}/api/universal-profile/{address}", this.base_url))
                .header("authorization", &format!("Bearer {}", this.api_key));
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
            crate::lsp3::Lsp3ProfileJson::from_slice(text.as_bytes())?;
            let uploaded = upload_bytes(
                &this.base_url,
                Some(&this.api_key),
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
            let request = this
                .post("/api/universal-profile")
                .header("content-type", "application/json")
                .json(&body)
                .map_err(|e| network_error(&e))?;
            let response = check(request.send().await.map_err(|e| network_error(&e))?).await?;
            let pending = response.status() == 202;
            let answer: Value = response.json().await.map_err(|e| network_error(&e))?;
            let expected = predicted.universal_profile.to_checksum(None);
            let answered = answer.get("universalProfileAddress").cloned().unwrap_or_default();
            if answered.as_str() != Some(expected.as_str()) {
                return Err(client_error(
                    None,
                    "PREDICTION_MISMATCH",
                    &format!("the relayer answered {answered} but {expected} was predicted"),
                    None,
                ));
            }
            let mut result = match answer {
                Value::Object(fields) => fields,
                _ => serde_json::Map::new(),
            };
            result.insert("salt".into(), salt.to_string().into());
            result.insert("lsp3Profile".into(), to_hex(&lsp3).into());
            result.insert("metadataCid".into(), uploaded.0.into());
            result.insert("postDeploymentCallData".into(), to_hex(&calldata).into());
            result.insert("pending".into(), pending.into());
            to_js(&result).map_err(Into::into)
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
    let answer: Value = response.json().await.map_err(|e| network_error(&e))?;
    let cid = answer
        .get("Hash")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    // the service must have stored exactly these bytes
    if cid != raw_cid(&bytes).to_string() {
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

    /// The profile or asset record of an address.
    #[wasm_bindgen(unchecked_return_type = "Promise<IndexRecord>")]
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

    /// Entries per index, last indexed block, head, lag.
    #[wasm_bindgen(unchecked_return_type = "Promise<Stats>")]
    pub fn stats(&self, chain_id: u32) -> Promise {
        self.get(&format!("/v1/{chain_id}/stats"))
    }

    /// Full-text search over profiles and assets.
    #[wasm_bindgen(unchecked_return_type = "Promise<{ profiles: SearchResult; assets: SearchResult }>")]
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
        self.get(&path)
    }

    /// One index through the Algolia-compatible route (`POST /1/indexes/:indexName/query`); the index names are
    /// listed by `stats()`.
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
            to_js(&serde_json::json!({ "cid": cid, "url": format!("ipfs://{cid}"), "size": size }))
                .map_err(Into::into)
        })
    }
}
