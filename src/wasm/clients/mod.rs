//! Typed API clients: `RelayerClient` for the relayer routes and `LookupClient` for lookup, search and IPFS.
//! Requests are validated with the core before anything is sent; every answer is checked against the shape of its
//! core type (`profile_relayer::api::shape`) before it is returned; every failure rejects with a
//! `ProfileRelayerError` carrying the service's `code`, the HTTP `status` and `retryAfter` (seconds) when given;
//! network failures have the code `NETWORK_ERROR`, answers of the wrong shape `INVALID_RESPONSE`.

use js_sys::{Promise, Reflect, Uint8Array};
use serde_json::{Value, json};
use wasm_bindgen::{JsCast, prelude::*};
use wasm_bindgen_futures::{JsFuture, future_to_promise};

mod http;
pub(super) mod inputs;

use self::{
    http::{Answer, Body, client_error, get_str, reason_of},
    inputs::SignWith,
};
use super::{args, io};
use crate::{
    Error,
    api::{
        DeployRequest, DeployResponse, ExecuteRequest, ExecuteResponse, ProfileStatus, QuotaRequest,
        QuotaResponse, RegisterResponse, SearchBoth, SearchResult, TransactionStatus, UploadAnswer,
        records::{IndexerStatus, TokenRecord},
        shape::{self, Shape},
    },
    erc165,
    hex::{parse_fixed, parse_hex, parse_uint256, to_hex},
    ipfs::{CidPath, RAW, cid_text, raw_cid, verify_block},
    lsp2::{self, Content},
    lsp23, lsp25,
};

/// The clients' `[Symbol.dispose]()` (wasm-bindgen's `using` support) type-checks without `esnext.disposable` in the
/// user's `lib`: the same declaration as that lib's (and `@types/node`'s), which merges with it.
#[wasm_bindgen(typescript_custom_section)]
const TS_SYMBOL_DISPOSE: &'static str = r#"
declare global {
  interface SymbolConstructor { readonly dispose: unique symbol; }
}
"#;

/// `ServiceErrorCode`: generated from the service's code table (`api::codes`).
#[wasm_bindgen(typescript_custom_section)]
const TS_SERVICE_CODES: &'static str = crate::api::codes::SERVICE_CODE_TS;

#[wasm_bindgen(typescript_custom_section)]
const TS_CLIENT_TYPES: &'static str = r#"
/** Options of `new RelayerClient(…)`. `apiKey` is needed for the deploy / register / status routes; the LSP15 relay
 * (`execute`, `quota`, `transaction`) takes none. */
export interface RelayerClientOptions extends TransportOptions { baseUrl: string; apiKey?: string; }
/** Options of `new LookupClient(…)`; `apiKey` is only needed for `upload`. */
export interface LookupClientOptions extends TransportOptions { baseUrl: string; apiKey?: string; }
/** How a client sends its requests — given to the client (every call), or to one call as its last argument: a
 * call's `timeout`, `retries`, `maxRetryDelay` and `fetch` replace the client's, its `signal` adds to the client's
 * (either aborts the call). A request that cannot complete rejects with `NETWORK_ERROR`, the JS engine's error as its
 * `cause` (a `TypeError` from `fetch`, a `TimeoutError`, the signal's reason). */
export interface TransportOptions {
  /** Milliseconds each attempt may take (the answer's body included); default: no limit. */
  timeout?: number;
  /** Aborts the requests (and their retry waits): the client's, or one call's. */
  signal?: AbortSignal;
  /** Times a request refused with 429 or 503 is sent again, after its `Retry-After` seconds (else 0.5 s, 1 s,
   * 2 s, …); default 0. */
  retries?: number;
  /** The longest wait before a retry, in seconds: a longer `Retry-After` is answered as the error; default 60. */
  maxRetryDelay?: number;
  /** The `fetch` to send with (default: the global one), e.g. a wrapper adding headers or a proxy agent. */
  fetch?: (url: string, init: RequestInit) => Promise<Response>;
}
/** A lookup / search record: one of the three kinds the index holds (types generated from the Rust records). */
export type IndexRecord = ProfileRecord | AssetRecord | TokenRecord;
/** `search` / `searchIndex` options: the page, and the call's transport options. */
export interface SearchOptions extends TransportOptions { page?: number; hitsPerPage?: number; }
/** `GET /v1/:chainId/stats`: the assets index, then the profiles index. */
export type Stats = [IndexStats, IndexStats];
export interface UploadResult { cid: string; url: string; size: number; }
/** Input of `RelayerClient.createProfile`: the whole Form-2 flow. */
export interface CreateProfileInput { metadata: unknown; controllers: Address[]; network?: NetworkInput; }
export interface CreateProfileResult extends DeployResponse {
  salt: Hex; lsp3Profile: Hex; metadataCid: string; postDeploymentCallData: Hex; pending: boolean;
}
"#;

fn base(url: &str) -> Result<String, Error> {
    let trimmed = url.trim_end_matches('/');
    if !(trimmed.starts_with("http://") || trimmed.starts_with("https://")) {
        return Err(Error::InvalidArgument(format!(
            "baseUrl must be an http(s) URL, got {}",
            crate::Quoted(url)
        )));
    }
    Ok(trimmed.to_owned())
}

/// `{ baseUrl, apiKey?, timeout?, signal?, retries?, maxRetryDelay?, fetch? }`, checked: the base URL, the key, and
/// how requests are sent (a copy of the transport options, read by `prFetch`).
fn options(value: &JsValue) -> Result<(String, Option<String>, JsValue), Error> {
    args::object(value, http::with_transport_keys!["baseUrl", "apiKey"], "options")?;
    let base_url = base(&args::string_field(value, "baseUrl")?)?;
    let key = args::get(value, "apiKey");
    let api_key = if args::is_absent(&key) {
        None
    } else {
        Some(args::string_field(value, "apiKey")?)
    };
    Ok((base_url, api_key, http::transport(value)?))
}

/// A request to `url` and its checked answer (2xx, else the service's error).
async fn call(
    transport: &JsValue,
    method: &str,
    url: &str,
    auth: Option<&str>,
    body: Body<'_>,
) -> Result<Answer, JsValue> {
    http::send(transport, method, url, auth, body, false)
        .await?
        .checked()
}

/// Client of the relayer routes.
#[wasm_bindgen]
#[derive(Debug, Clone)]
pub struct RelayerClient {
    base_url: String,
    api_key: Option<String>,
    transport: JsValue,
}

/// The numeric `page` / `hitsPerPage` of a `SearchOptions` object that are present.
fn search_options(options: &JsValue) -> Result<Vec<(&'static str, u64)>, Error> {
    if args::is_absent(options) {
        return Ok(Vec::new());
    }
    args::object(
        options,
        http::with_transport_keys!["page", "hitsPerPage"],
        "options",
    )?;
    let mut out = Vec::new();
    for key in ["page", "hitsPerPage"] {
        let v = args::get(options, key);
        if args::is_absent(&v) {
            continue;
        }
        let n = io::safe_uint(&v).ok_or_else(|| {
            Error::InvalidArgument(format!("options.{key}: expected a non-negative integer"))
        })?;
        out.push((key, n));
    }
    Ok(out)
}

/// A string argument of a client method.
fn text_in(field: &str, value: &JsValue) -> Result<String, Error> {
    io::text_arg(field, value)
}

/// A `chainId` argument of a client method: a non-negative integer below 2^32.
fn chain_in(value: &JsValue) -> Result<u32, Error> {
    io::safe_uint(value)
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| {
            Error::InvalidArgument("chainId: expected a chain id (an integer from 0 to 2^32 - 1)".into())
        })
}

/// The promise of a method whose arguments were refused.
fn rejected(e: Error) -> Promise {
    Promise::reject(&e.into())
}

/// The transport of one call: the call's own `options` (`undefined`, or `TransportOptions`, checked as the
/// client's are) over the client's `transport` ([`http::over`]).
fn for_call(transport: &JsValue, options: &JsValue) -> Result<JsValue, Error> {
    if !args::is_absent(options) {
        args::object(options, http::with_transport_keys![], "options")?;
    }
    http::over(transport, options)
}

/// The JSON body of a checked deployment request.
fn deploy_body(request: &DeployRequest) -> Value {
    match request {
        DeployRequest::Controllers {
            controllers,
            lsp3_profile,
        } => {
            let mut body = json!({
                "lsp6ControllerAddress": controllers.iter().map(|c| c.to_checksum(None)).collect::<Vec<_>>(),
            });
            if let (Some(map), Some(bytes)) = (body.as_object_mut(), lsp3_profile) {
                map.insert("lsp3Profile".into(), to_hex(bytes).into());
            }
            body
        }
        DeployRequest::Salt {
            salt,
            post_deployment_calldata,
        } => {
            json!({ "salt": salt.to_string(), "postDeploymentCallData": to_hex(post_deployment_calldata) })
        }
    }
}

#[wasm_bindgen]
impl RelayerClient {
    /// `new RelayerClient({ baseUrl, apiKey? })`.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "RelayerClientOptions")] options: JsValue,
    ) -> Result<Self, Error> {
        let (base_url, api_key, transport) = self::options(&options)?;
        Ok(Self {
            base_url,
            api_key,
            transport,
        })
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base_url)
    }

    /// Deploys a Universal Profile (Form 1 or Form 2); the body is validated before it is sent.
    #[wasm_bindgen(js_name = deployProfile, unchecked_return_type = "Promise<DeployResponse>")]
    pub fn deploy_profile(
        &self,
        #[wasm_bindgen(unchecked_param_type = "DeployRequest")] request: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "TransportOptions")] options: JsValue,
    ) -> Promise {
        let this = self.clone();
        future_to_promise(async move {
            let transport = for_call(&this.transport, &options)?;
            let request = DeployRequest::from_value(&http::from_js(&request, "request")?)?;
            let url = this.url("/api/universal-profile");
            call(
                &transport,
                "POST",
                &url,
                this.api_key.as_deref(),
                Body::Json(&deploy_body(&request)),
            )
            .await?
            .typed(&DeployResponse::SHAPE)
        })
    }

    /// Registers an existing profile for the monthly gas quota.
    #[wasm_bindgen(js_name = registerProfile, unchecked_return_type = "Promise<RegisterResponse>")]
    pub fn register_profile(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Address")] address: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "TransportOptions")] options: JsValue,
    ) -> Promise {
        let this = self.clone();
        future_to_promise(async move {
            let transport = for_call(&this.transport, &options)?;
            let address = text_in("address", &address)?;
            crate::hex::parse_address("universalProfileAddress", &address)?;
            let body = json!({ "universalProfileAddress": address });
            let url = this.url("/api/universal-profile/register");
            call(
                &transport,
                "POST",
                &url,
                this.api_key.as_deref(),
                Body::Json(&body),
            )
            .await?
            .typed(&RegisterResponse::SHAPE)
        })
    }

    /// Deployment, registration and quota of a profile.
    #[wasm_bindgen(js_name = profileStatus, unchecked_return_type = "Promise<ProfileStatus>")]
    pub fn profile_status(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Address")] address: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "TransportOptions")] options: JsValue,
    ) -> Promise {
        let this = self.clone();
        future_to_promise(async move {
            let transport = for_call(&this.transport, &options)?;
            let address = text_in("address", &address)?;
            crate::hex::parse_address("address", &address)?;
            let url = this.url(&format!("/api/universal-profile/{address}"));
            call(&transport, "GET", &url, this.api_key.as_deref(), Body::None)
                .await?
                .typed(&ProfileStatus::SHAPE)
        })
    }

    /// The whole Form-2 flow: upload the metadata JSON, build its VerifiableURI and the profile data, pick a salt,
    /// predict the address, deploy, and check that the answered address is the prediction.
    #[wasm_bindgen(js_name = createProfile, unchecked_return_type = "Promise<CreateProfileResult>")]
    pub fn create_profile(
        &self,
        #[wasm_bindgen(unchecked_param_type = "CreateProfileInput")] input: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "TransportOptions")] options: JsValue,
    ) -> Promise {
        let this = self.clone();
        future_to_promise(async move {
            let transport = for_call(&this.transport, &options)?;
            args::object(&input, &["metadata", "controllers", "network"], "input")?;
            let metadata = args::get(&input, "metadata");
            if args::is_absent(&metadata) {
                return Err(
                    Error::InvalidArgument("metadata is required (the LSP3 profile JSON)".into()).into(),
                );
            }
            let controllers = io::array_arg("controllers", &args::get(&input, "controllers"))?
                .iter()
                .map(|c| io::address_arg("controllers", &c))
                .collect::<Result<Vec<_>, _>>()?;
            let text = match metadata.as_string() {
                Some(t) => t,
                None => js_sys::JSON::stringify(&metadata)
                    .map(String::from)
                    .map_err(|_| Error::InvalidArgument("metadata is not JSON".into()))?,
            };
            // the document the service will store, checked as LSP3 before anything is uploaded
            let document = js_sys::JSON::parse(&text)
                .map_err(|_| Error::InvalidMetadata("LSP3Profile: the metadata string is not JSON".into()))?;
            crate::lsp3::Lsp3ProfileJson::SHAPE
                .check(&document)
                .map_err(|e| Error::InvalidMetadata(format!("LSP3Profile: {e}")))?;
            let uploaded = upload_bytes(
                &transport,
                &this.base_url,
                this.api_key.as_deref(),
                text.as_bytes(),
                "profile.json",
            )
            .await?;
            let lsp3 = lsp2::encode_verifiable_uri(Content::Text(&text), &format!("ipfs://{uploaded}"));
            let constants = super::lsp23::network_constants(Some(args::get(&input, "network")))?;
            let data = lsp23::profile_data_from_controllers(&controllers, Some(&lsp3), &constants)?;
            let calldata = data.to_post_deployment_calldata()?;
            let salt = lsp23::generate_salt()?;
            let predicted = lsp23::predict_addresses(salt, &calldata, &constants)?;
            let request = DeployRequest::Salt {
                salt,
                post_deployment_calldata: calldata.to_vec(),
            };
            let url = this.url("/api/universal-profile");
            let answer = call(
                &transport,
                "POST",
                &url,
                this.api_key.as_deref(),
                Body::Json(&deploy_body(&request)),
            )
            .await?;
            let pending = answer.status == 202;
            let result = answer.typed(&DeployResponse::SHAPE)?;
            let expected = predicted.universal_profile.to_checksum(None);
            let answered = get_str(&result, "universalProfileAddress").unwrap_or_default();
            if answered != expected {
                return Err(client_error(
                    None,
                    "PREDICTION_MISMATCH",
                    &format!(
                        "the relayer answered {} but {expected} was predicted",
                        crate::Quoted(&answered)
                    ),
                    None,
                ));
            }
            let o: &io::Obj = result.unchecked_ref();
            o.put("salt", &salt.to_string().into());
            o.put("lsp3Profile", &to_hex(&lsp3).into());
            o.put("metadataCid", &uploaded.into());
            o.put("postDeploymentCallData", &to_hex(&calldata).into());
            o.put("pending", &pending.into());
            Ok(result)
        })
    }
}

/// Client of the lookup, search and IPFS routes.
#[wasm_bindgen]
#[derive(Debug, Clone)]
pub struct LookupClient {
    base_url: String,
    api_key: Option<String>,
    transport: JsValue,
}

/// Uploads `bytes` as the file `name`; resolves to its CID, checked to be the CID of these bytes.
async fn upload_bytes(
    transport: &JsValue,
    base_url: &str,
    api_key: Option<&str>,
    bytes: &[u8],
    name: &str,
) -> Result<String, JsValue> {
    let key =
        api_key.ok_or_else(|| JsValue::from(Error::InvalidArgument("upload needs an apiKey".into())))?;
    let form = web_sys::FormData::new()?;
    let parts = js_sys::Array::of1(&Uint8Array::from(bytes));
    let blob = web_sys::Blob::new_with_u8_array_sequence(&parts)?;
    form.append_with_blob_and_filename("file", &blob, name)?;
    let answer = call(
        transport,
        "POST",
        &format!("{base_url}/api/v0/add"),
        Some(key),
        Body::Form(&form),
    )
    .await?
    .typed(&UploadAnswer::SHAPE)?;
    let cid = get_str(&answer, "Hash").unwrap_or_default();
    // the service must have stored exactly these bytes
    if cid != cid_text(&raw_cid(bytes)) {
        return Err(client_error(
            None,
            "UPLOAD_MISMATCH",
            &format!("the service answered CID {} for other bytes", crate::Quoted(&cid)),
            None,
        ));
    }
    Ok(cid)
}

/// `GET url` with the call's transport (its options checked: [`for_call`]), its answer checked against `shape`.
fn get_typed(transport: Result<JsValue, Error>, url: String, shape: &'static Shape) -> Promise {
    let transport = match transport {
        Ok(t) => t,
        Err(e) => return rejected(e),
    };
    future_to_promise(async move {
        call(&transport, "GET", &url, None, Body::None)
            .await?
            .typed(shape)
    })
}

/// What `LookupClient.upload` takes (`INVALID_CONTENT` names it).
const UPLOAD_CONTENT: &str = "bytes (a Uint8Array, an ArrayBuffer or another typed array or DataView), a Blob or \
                              File, a string or a JSON value (a plain object or array)";

#[wasm_bindgen]
impl LookupClient {
    /// `new LookupClient({ baseUrl, apiKey? })`.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "LookupClientOptions")] options: JsValue,
    ) -> Result<Self, Error> {
        let (base_url, api_key, transport) = self::options(&options)?;
        Ok(Self {
            base_url,
            api_key,
            transport,
        })
    }

    /// The profile or asset record of an address; an address holding neither answers `NotIndexed`
    /// (`LSPStandard` `EOA` or `UnknownContract`).
    #[wasm_bindgen(unchecked_return_type = "Promise<IndexRecord | NotIndexed>")]
    pub fn address(
        &self,
        #[wasm_bindgen(js_name = "chainId", unchecked_param_type = "number")] chain_id: JsValue,
        #[wasm_bindgen(unchecked_param_type = "Address")] address: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "TransportOptions")] options: JsValue,
    ) -> Promise {
        let args = chain_in(&chain_id).and_then(|c| Ok((c, text_in("address", &address)?)));
        let (chain_id, address) = match args {
            Ok(a) => a,
            Err(e) => return rejected(e),
        };
        if let Err(e) = crate::hex::parse_address("address", &address) {
            return rejected(e);
        }
        get_typed(
            for_call(&self.transport, &options),
            format!("{}/v1/{chain_id}/address/{address}", self.base_url),
            &shape::LOOKUP,
        )
    }

    /// An LSP8 token's record (token id in the collection's format, or bytes32).
    #[wasm_bindgen(unchecked_return_type = "Promise<IndexRecord>")]
    pub fn token(
        &self,
        #[wasm_bindgen(js_name = "chainId", unchecked_param_type = "number")] chain_id: JsValue,
        #[wasm_bindgen(unchecked_param_type = "Address")] address: JsValue,
        #[wasm_bindgen(js_name = "tokenId", unchecked_param_type = "string")] token_id: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "TransportOptions")] options: JsValue,
    ) -> Promise {
        let args = chain_in(&chain_id).and_then(|c| {
            let address = text_in("address", &address)?;
            crate::hex::parse_address("address", &address)?;
            Ok((c, address, text_in("tokenId", &token_id)?))
        });
        let (chain_id, address, token_id) = match args {
            Ok(a) => a,
            Err(e) => return rejected(e),
        };
        let encoded: String = js_sys::encode_uri_component(&token_id).into();
        get_typed(
            for_call(&self.transport, &options),
            format!("{}/v1/{chain_id}/address/{address}/{encoded}", self.base_url),
            &TokenRecord::SHAPE,
        )
    }

    /// Entries per index: `[assets, profiles]` (the shape of LUKSO's API).
    #[wasm_bindgen(unchecked_return_type = "Promise<Stats>")]
    pub fn stats(
        &self,
        #[wasm_bindgen(js_name = "chainId", unchecked_param_type = "number")] chain_id: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "TransportOptions")] options: JsValue,
    ) -> Promise {
        let chain_id = match chain_in(&chain_id) {
            Ok(c) => c,
            Err(e) => return rejected(e),
        };
        get_typed(
            for_call(&self.transport, &options),
            format!("{}/v1/{chain_id}/stats", self.base_url),
            &shape::STATS,
        )
    }

    /// Where the indexer stands: entries per index, unindexable contracts, last indexed block, head, lag.
    #[wasm_bindgen(unchecked_return_type = "Promise<IndexerStatus>")]
    pub fn indexer(
        &self,
        #[wasm_bindgen(js_name = "chainId", unchecked_param_type = "number")] chain_id: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "TransportOptions")] options: JsValue,
    ) -> Promise {
        let chain_id = match chain_in(&chain_id) {
            Ok(c) => c,
            Err(e) => return rejected(e),
        };
        get_typed(
            for_call(&self.transport, &options),
            format!("{}/v1/{chain_id}/indexer", self.base_url),
            &IndexerStatus::SHAPE,
        )
    }

    /// Full-text search over profiles and assets.
    #[wasm_bindgen(unchecked_return_type = "Promise<SearchBoth>")]
    pub fn search(
        &self,
        #[wasm_bindgen(js_name = "chainId", unchecked_param_type = "number")] chain_id: JsValue,
        #[wasm_bindgen(unchecked_param_type = "string")] query: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "SearchOptions")] options: JsValue,
    ) -> Promise {
        let options_in = options;
        let args = chain_in(&chain_id)
            .and_then(|c| Ok((c, text_in("query", &query)?, search_options(&options_in)?)));
        let (chain_id, query, options) = match args {
            Ok(a) => a,
            Err(e) => return rejected(e),
        };
        let mut url = format!(
            "{}/v1/{chain_id}/search?q={}",
            self.base_url,
            String::from(js_sys::encode_uri_component(&query))
        );
        for (key, n) in options {
            url.push_str(&format!("&{key}={n}"));
        }
        get_typed(http::over(&self.transport, &options_in), url, &SearchBoth::SHAPE)
    }

    /// One index through the Algolia-compatible route (`POST /1/indexes/:indexName/query`); the index names are
    /// listed by `stats()` (`[assets, profiles]`).
    #[wasm_bindgen(js_name = searchIndex, unchecked_return_type = "Promise<SearchResult>")]
    pub fn search_index(
        &self,
        #[wasm_bindgen(js_name = "indexName", unchecked_param_type = "string")] index_name: JsValue,
        #[wasm_bindgen(unchecked_param_type = "string")] query: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "SearchOptions")] options: JsValue,
    ) -> Promise {
        let args = text_in("indexName", &index_name).and_then(|i| {
            Ok((
                i,
                text_in("query", &query)?,
                search_options(&options)?,
                http::over(&self.transport, &options)?,
            ))
        });
        let (index_name, query, search, transport) = match args {
            Ok(a) => a,
            Err(e) => return rejected(e),
        };
        let mut body = serde_json::Map::new();
        body.insert("query".into(), query.into());
        for (key, n) in search {
            body.insert(key.into(), n.into());
        }
        let encoded: String = js_sys::encode_uri_component(&index_name).into();
        let url = format!("{}/1/indexes/{encoded}/query", self.base_url);
        future_to_promise(async move {
            call(&transport, "POST", &url, None, Body::Json(&Value::Object(body)))
                .await?
                .typed(&SearchResult::SHAPE)
        })
    }

    /// Bytes behind `cid[/path]`; raw blocks are verified against the CID here as well.
    #[wasm_bindgen(unchecked_return_type = "Promise<Uint8Array>")]
    pub fn ipfs(
        &self,
        #[wasm_bindgen(js_name = "cidPath", unchecked_param_type = "string")] cid_path: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "TransportOptions")] options: JsValue,
    ) -> Promise {
        let base_url = self.base_url.clone();
        let transport = self.transport.clone();
        future_to_promise(async move {
            let transport = for_call(&transport, &options)?;
            let cid_path = text_in("cidPath", &cid_path)?;
            let target = CidPath::parse(&cid_path)?;
            let url = format!("{base_url}/ipfs/{}", target.to_gateway_path());
            let answer = http::send(&transport, "GET", &url, None, Body::None, true)
                .await?
                .checked()?;
            if target.cid.codec() == RAW && !verify_block(&target.cid, &http::bytes_of(&answer.body))? {
                return Err(client_error(
                    None,
                    "CONTENT_MISMATCH",
                    "the bytes do not match the CID",
                    None,
                ));
            }
            Ok(answer.body)
        })
    }

    /// Uploads bytes (a `Uint8Array`, an `ArrayBuffer`, another typed array or a `DataView`), a `Blob` or `File`
    /// (read), a string (its UTF-8) or a JSON value (a plain object or array: its `JSON.stringify` text); resolves
    /// to its CID. Anything else rejects with `INVALID_CONTENT`, before anything is sent.
    #[wasm_bindgen(unchecked_return_type = "Promise<UploadResult>")]
    pub fn upload(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ContentBytes | Blob | string | object")] data: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "TransportOptions")] options: JsValue,
    ) -> Promise {
        let this = self.clone();
        future_to_promise(async move {
            let transport = for_call(&this.transport, &options)?;
            let blob = io::blob_bytes(&data);
            let (bytes, name) = if !blob.is_undefined() {
                let read = JsFuture::from(Promise::from(blob))
                    .await
                    .map_err(|_| Error::InvalidContent {
                        expected: UPLOAD_CONTENT,
                    })?;
                (Uint8Array::from(read).to_vec(), "file.bin")
            } else if let Some(text) = data.as_string() {
                (text.into_bytes(), "file.txt")
            } else {
                match io::content_arg(&data, true, UPLOAD_CONTENT)? {
                    io::ContentArg::Bytes(bytes) => (bytes, "file.bin"),
                    io::ContentArg::Json(text) => (text.into_bytes(), "file.json"),
                }
            };
            let cid = upload_bytes(&transport, &this.base_url, this.api_key.as_deref(), &bytes, name).await?;
            let result = io::object();
            let url = format!("ipfs://{cid}");
            result.put("cid", &cid.into());
            result.put("url", &url.into());
            result.put("size", &JsValue::from(bytes.len()));
            Ok(result.into())
        })
    }
}

/// A `ProfileRelayerError` `SIGNER_ERROR` for a `sign` callback that threw or rejected; the original is its `cause`
/// (e.g. a wallet's `{ code: 4001 }` when the user declined).
fn signer_error(cause: JsValue) -> JsValue {
    let err = client_error(
        None,
        "SIGNER_ERROR",
        &format!("the sign callback failed: {}", reason_of(&cause)),
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
    Ok(inputs::check_signature(&value)?)
}

#[wasm_bindgen]
impl RelayerClient {
    /// LSP15 `POST /api/execute`: relays a signed LSP25 call to the profile's KeyManager (no API key). With a
    /// `sign` callback the client builds the LSP25 digest and asks it for the signature; the body is validated
    /// before it is sent. Resolves when the relayer answers: once the transaction is sent, `status` `"pending"` with its
    /// hash (follow it with `transaction(hash)`); with `wait` (seconds, `Prefer: wait`), once it is mined within that
    /// wait — `"mined"` (or `"reverted"`) with `gasUsed` and the quota left — else still `"pending"`.
    #[wasm_bindgen(unchecked_return_type = "Promise<ExecuteResponse>")]
    pub fn execute(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ExecuteInput")] input: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "TransportOptions")] options: JsValue,
    ) -> Promise {
        let url = self.url("/api/execute");
        let transport = self.transport.clone();
        future_to_promise(async move {
            let transport = for_call(&transport, &options)?;
            let args = inputs::execute_args(&input)?;
            let transport = match args.wait {
                Some(seconds) => http::with_prefer(&transport, &format!("wait={seconds}")),
                None => transport,
            };
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
            let body = json!({
                "address": args.address,
                "transaction": {
                    "abi": to_hex(&args.call.payload),
                    "signature": signature,
                    "nonce": args.call.nonce.to_string(),
                    "validityTimestamps": format!("{:#x}", args.call.validity_timestamps.0),
                },
            });
            ExecuteRequest::from_value(&body, usize::MAX)?;
            call(&transport, "POST", &url, None, Body::Json(&body))
                .await?
                .typed(&ExecuteResponse::SHAPE)
        })
    }

    /// LSP15 `POST /api/quota`: the profile's gas quota, authenticated by a controller's `personal_sign` over the
    /// profile and a timestamp (`"packed"` scheme by default; see `quotaMessage`). No API key.
    #[wasm_bindgen(unchecked_return_type = "Promise<QuotaResponse>")]
    pub fn quota(
        &self,
        #[wasm_bindgen(unchecked_param_type = "QuotaRequest")] input: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "TransportOptions")] options: JsValue,
    ) -> Promise {
        let url = self.url("/api/quota");
        let transport = self.transport.clone();
        future_to_promise(async move {
            let transport = for_call(&transport, &options)?;
            // whole seconds since the epoch: exact in an f64
            let now = (js_sys::Date::now() / 1000.0).floor() as u64;
            let args = inputs::quota_input_args(&input, now)?;
            let signature = match &args.sign {
                SignWith::Ready(signature) => signature.clone(),
                SignWith::Callback(sign) => {
                    let message = io::object();
                    message.put("scheme", &args.message.scheme.as_str().into());
                    message.put("message", &args.message.message.as_str().into());
                    message.put("hash", &args.message.hash.as_str().into());
                    call_signer(sign, &JsValue::from_str(&args.message.message), Some(&message)).await?
                }
            };
            let body = json!({
                "address": args.address,
                "timestamp": args.timestamp,
                "signature": signature,
            });
            QuotaRequest::from_value(&body)?;
            call(&transport, "POST", &url, None, Body::Json(&body))
                .await?
                .typed(&QuotaResponse::SHAPE)
        })
    }

    /// `GET /api/transaction/:hash`: where a transaction this relayer sent is (pending, mined, reverted, replaced —
    /// then `replacedBy` — or dropped), its block, gas used and the gas charged to the profile.
    #[wasm_bindgen(unchecked_return_type = "Promise<TransactionStatus>")]
    pub fn transaction(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Hex")] hash: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "TransportOptions")] options: JsValue,
    ) -> Promise {
        match text_in("hash", &hash).and_then(|hash| parse_fixed::<32>("hash", &hash)) {
            Ok(hash) => get_typed(
                for_call(&self.transport, &options),
                self.url(&format!("/api/transaction/{hash}")),
                &TransactionStatus::SHAPE,
            ),
            Err(e) => rejected(e),
        }
    }
}

/// What a JSON-RPC call answered: its `result` (a string: every call made here answers hex), or the node's error
/// — `Reverted` for a call the contract refused (code 3, or a message about a revert), `RPC_ERROR` for the rest.
/// A node that cannot be reached is `NETWORK_ERROR`, an HTTP error status `RPC_ERROR` with the `status`.
enum RpcAnswer {
    Result(String),
    Reverted,
}

/// One JSON-RPC call through `transport` (the caller's timeout, signal, retries and fetch).
async fn rpc(transport: &JsValue, url: &str, method: &str, params: Value) -> Result<RpcAnswer, JsValue> {
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params });
    let answer = http::send(transport, "POST", url, None, Body::Json(&body), false).await?;
    let status = answer.status;
    let rpc_error = |message: String| client_error(Some(status), "RPC_ERROR", &message, None);
    if !answer.ok() {
        return Err(rpc_error(format!("the node answered HTTP {status} to {method}")));
    }
    let answer = answer
        .json()
        .ok()
        .filter(JsValue::is_object)
        .ok_or_else(|| rpc_error(format!("the node answered {method} with no JSON")))?;
    let error = Reflect::get(&answer, &"error".into()).unwrap_or(JsValue::UNDEFINED);
    if !error.is_undefined() && !error.is_null() {
        let message = get_str(&error, "message").unwrap_or_else(|| "no message".into());
        let code = Reflect::get(&error, &"code".into()).ok().and_then(|c| c.as_f64());
        if code == Some(3.0) || message.to_ascii_lowercase().contains("revert") {
            return Ok(RpcAnswer::Reverted);
        }
        return Err(rpc_error(format!(
            "the node answered {method} with an error: {message}"
        )));
    }
    get_str(&answer, "result")
        .map(RpcAnswer::Result)
        .ok_or_else(|| rpc_error(format!("the node answered {method} with no result")))
}

/// An `eth_call`: its output, `None` when the contract reverted.
async fn eth_call(
    transport: &JsValue,
    url: &str,
    to: alloy_primitives::Address,
    data: &[u8],
) -> Result<Option<Vec<u8>>, JsValue> {
    let call = json!({ "to": to.to_checksum(None), "data": to_hex(data) });
    match rpc(transport, url, "eth_call", json!([call, "latest"])).await? {
        RpcAnswer::Result(result) => Ok(Some(parse_hex("result", &result)?)),
        RpcAnswer::Reverted => Ok(None),
    }
}

/// Reads what a relay call's signature needs from the chain: the profile's KeyManager (`owner()`), the chain id
/// and `getNonce(controller, channel)`. Sign and send right after: the nonce is only valid until the next call on
/// that channel. The clients' transport options apply to the node's requests (`timeout`, `signal`, `retries`,
/// `fetch`). A node that cannot be reached rejects with `NETWORK_ERROR` (its `cause`), one that answers an error
/// with `RPC_ERROR` (an HTTP error: its `status`); only a contract that answers no `owner()` / `getNonce()` is
/// `NOT_A_UNIVERSAL_PROFILE` / `NOT_A_KEY_MANAGER`.
#[wasm_bindgen(js_name = fetchRelayCallParams, unchecked_return_type = "Promise<RelayCallParams>")]
pub fn fetch_relay_call_params(
    #[wasm_bindgen(unchecked_param_type = "RelayCallParamsInput & TransportOptions")] input: JsValue,
) -> Promise {
    future_to_promise(async move {
        let (rpc_url, profile, controller, channel) = inputs::relay_call_params_args(&input)?;
        let transport = http::transport(&input)?;
        let url = base(&rpc_url).map_err(|_| {
            Error::InvalidArgument(format!(
                "rpcUrl must be an http(s) URL, got {}",
                crate::Quoted(&rpc_url)
            ))
        })?;
        let owner = eth_call(&transport, &url, profile, &erc165::owner_calldata())
            .await?
            .and_then(|out| erc165::decode_owner(&out))
            .ok_or_else(|| {
                client_error(
                    None,
                    "NOT_A_UNIVERSAL_PROFILE",
                    &format!("{profile} answers no owner(): not a Universal Profile on this chain"),
                    None,
                )
            })?;
        let nonce = eth_call(
            &transport,
            &url,
            owner,
            &lsp25::get_nonce_calldata(controller, channel),
        )
        .await?
        .and_then(|out| lsp25::decode_get_nonce(&out).ok())
        .ok_or_else(|| {
            client_error(
                None,
                "NOT_A_KEY_MANAGER",
                &format!("the owner {owner} of {profile} answers no getNonce(): not an LSP6 KeyManager"),
                None,
            )
        })?;
        let RpcAnswer::Result(chain) = rpc(&transport, &url, "eth_chainId", json!([])).await? else {
            return Err(client_error(
                None,
                "RPC_ERROR",
                "the node refused eth_chainId",
                None,
            ));
        };
        let chain_id = parse_uint256("chainId", &chain)?;
        let chain_id = u64::try_from(chain_id).map_err(|_| Error::InvalidNumber {
            field: "chainId".into(),
            value: chain_id.to_string(),
            reason: "a chain id fits in 64 bits".into(),
        })?;
        let params = io::object();
        params.put("keyManager", &owner.to_checksum(None).into());
        params.put("chainId", &JsValue::from_f64(chain_id as f64));
        params.put("nonce", &nonce.0.to_string().into());
        Ok(params.into())
    })
}
