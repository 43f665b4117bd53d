//! The indexer: follows the chain from a checkpoint (D1), a bounded range per run, `INDEXER_CONFIRMATIONS` blocks
//! behind the head. Candidates come from logs — LSP23 `DeployedERC1167Proxies` (profiles), ERC725Y `DataChanged`
//! (profiles and assets, including their creation) and LSP7/LSP8 `Transfer` (assets and LSP8 token ids). Each is
//! classified by ERC165 (current and legacy LSP7/LSP8 ids), its metadata read, fetched through the IPFS module,
//! verified and written to the search index. A failed fetch is recorded and retried with backoff.

use std::collections::BTreeMap;

use alloy_primitives::{Address, B256, Bytes, U256, keccak256};
use alloy_sol_types::{SolCall, sol};
use profile_relayer::{
    ipfs::CidPath,
    lsp2::{VerificationMethod, data_keys, decode_verifiable_uri},
    lsp3::Lsp3ProfileJson,
    lsp4::{Lsp4MetadataJson, TokenType},
    lsp8::{TokenIdFormat, decode_token_id},
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use wasm_bindgen::JsValue;
use worker::{Date, Env};

use crate::{
    config::{Config, number},
    error::{ApiError, ApiResult},
    ipfs::{IpfsConfig, fetch_content},
    rpc::Rpc,
    search::{self, Record},
};

sol! {
    function supportsInterface(bytes4 interfaceId) external view returns (bool);
    function getDataBatch(bytes32[] dataKeys) external view returns (bytes[] dataValues);
    function getDataForTokenId(bytes32 tokenId, bytes32 dataKey) external view returns (bytes dataValue);
}

const LSP0: [u8; 4] = [0x24, 0x87, 0x1b, 0x3d];
/// LSP7 ids: current, 0.14, 0.12, then 0.11 … 0.6 (lukso-encodings §5.4).
const LSP7_IDS: [[u8; 4]; 7] = [
    [0xc5, 0x2d, 0x60, 0x08],
    [0xb3, 0xc4, 0x92, 0x8f],
    [0xda, 0xa7, 0x46, 0xb7],
    [0x05, 0x51, 0x95, 0x12],
    [0xda, 0x1f, 0x85, 0xe4],
    [0x5f, 0xca, 0xac, 0x27],
    [0xe3, 0x3f, 0x65, 0xc3],
];
/// LSP8 ids: current, 0.13, 0.12, then 0.11 … 0.6.
const LSP8_IDS: [[u8; 4]; 6] = [
    [0x3a, 0x27, 0x17, 0x06],
    [0xec, 0xad, 0x9f, 0x75],
    [0x30, 0xdc, 0x52, 0x78],
    [0x1a, 0xe9, 0xba, 0x1f],
    [0x62, 0x2e, 0x7a, 0x01],
    [0x49, 0x39, 0x91, 0x45],
];

fn topic(signature: &str) -> B256 {
    keccak256(signature.as_bytes())
}

/// What an address is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Kind {
    /// Universal Profile.
    #[serde(rename = "LSP0ERC725Account")]
    Profile,
    /// LSP7 asset.
    #[serde(rename = "LSP7DigitalAsset")]
    Lsp7,
    /// LSP8 collection.
    #[serde(rename = "LSP8IdentifiableDigitalAsset")]
    Lsp8,
}

impl Kind {
    const fn name(self) -> &'static str {
        match self {
            Self::Profile => "LSP0ERC725Account",
            Self::Lsp7 => "LSP7DigitalAsset",
            Self::Lsp8 => "LSP8IdentifiableDigitalAsset",
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Log {
    address: Address,
    topics: Vec<B256>,
    block_number: U256,
}

/// The result of one run.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunStats {
    /// First block processed.
    pub from_block: u64,
    /// Last block processed (`fromBlock - 1` when nothing was to do).
    pub to_block: u64,
    /// The chain head.
    pub head_block: u64,
    /// Records written.
    pub indexed: u64,
    /// Retries processed.
    pub retried: u64,
}

struct Ctx<'a> {
    env: &'a Env,
    /// Whether plain `http://` metadata URLs are fetched (`METADATA_ALLOW_HTTP`, local development only).
    allow_http: bool,
    config: Config,
    ipfs: IpfsConfig,
    rpc: Rpc,
    profiles: String,
    assets: String,
}

fn now() -> u64 {
    Date::now().as_millis() / 1000
}

impl<'a> Ctx<'a> {
    fn new(env: &'a Env) -> ApiResult<Self> {
        let config = Config::from_env(env)?;
        let rpc = config.rpc();
        let (profiles, assets) = search::index_names(env);
        let allow_http = env
            .var("METADATA_ALLOW_HTTP")
            .map(|v| v.to_string() == "true")
            .unwrap_or(false);
        Ok(Self {
            allow_http,
            env,
            ipfs: IpfsConfig::from_env(env)?,
            config,
            rpc,
            profiles,
            assets,
        })
    }
}

async fn call<C: SolCall>(rpc: &Rpc, to: Address, call: &C) -> ApiResult<Option<C::Return>> {
    match rpc.eth_call(to, &call.abi_encode()).await {
        Ok(out) if !out.is_empty() => Ok(C::abi_decode_returns(&out).ok()),
        Ok(_) | Err(crate::rpc::RpcError::Node { .. }) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

async fn supports(rpc: &Rpc, address: Address, id: [u8; 4]) -> ApiResult<bool> {
    Ok(call(
        rpc,
        address,
        &supportsInterfaceCall {
            interfaceId: id.into(),
        },
    )
    .await?
    .unwrap_or(false))
}

/// Classifies an address by ERC165.
pub async fn classify(rpc: &Rpc, address: Address) -> ApiResult<Option<Kind>> {
    if rpc.code(address).await?.is_empty() {
        return Ok(None);
    }
    if supports(rpc, address, LSP0).await? {
        return Ok(Some(Kind::Profile));
    }
    for id in LSP7_IDS {
        if supports(rpc, address, id).await? {
            return Ok(Some(Kind::Lsp7));
        }
    }
    for id in LSP8_IDS {
        if supports(rpc, address, id).await? {
            return Ok(Some(Kind::Lsp8));
        }
    }
    Ok(None)
}

async fn get_data(rpc: &Rpc, address: Address, keys: &[B256]) -> ApiResult<Vec<Bytes>> {
    Ok(call(
        rpc,
        address,
        &getDataBatchCall {
            dataKeys: keys.to_vec(),
        },
    )
    .await?
    .unwrap_or_else(|| vec![Bytes::new(); keys.len()]))
}

/// Result of fetching metadata behind a VerifiableURI.
struct Fetched {
    status: &'static str,
    url: Option<String>,
    json: Option<Value>,
    error: Option<String>,
}

fn gateway_url(url: &str) -> String {
    match CidPath::parse(url) {
        Ok(p) if url.starts_with("ipfs://") => format!("/ipfs/{}", p.to_gateway_path()),
        _ => url.to_owned(),
    }
}

async fn fetch_metadata(ctx: &Ctx<'_>, value: &[u8]) -> Fetched {
    if value.is_empty() {
        return Fetched {
            status: "none",
            url: None,
            json: None,
            error: None,
        };
    }
    let uri = match decode_verifiable_uri(value) {
        Ok(u) => u,
        Err(e) => {
            return Fetched {
                status: "invalid_uri",
                url: None,
                json: None,
                error: Some(e.code().to_owned()),
            };
        }
    };
    let bytes = if uri.url.starts_with("ipfs://") {
        match CidPath::parse(&uri.url) {
            Ok(target) => fetch_content(ctx.env, &ctx.ipfs, &target)
                .await
                .map(|c| c.bytes)
                .map_err(|e| e.code),
            Err(e) => Err(e.code().to_owned()),
        }
    } else if uri.url.starts_with("data:") {
        // RFC 2397, by the data-url crate: base64 and percent-encoded payloads
        data_url::DataUrl::process(&uri.url)
            .ok()
            .and_then(|d| d.decode_to_vec().ok())
            .map(|(bytes, _)| bytes)
            .ok_or_else(|| "INVALID_DATA_URL".to_owned())
    } else if uri.url.starts_with("https://") || (uri.url.starts_with("http://") && ctx.allow_http) {
        fetch_http(&uri.url, ctx.ipfs.max_bytes, ctx.ipfs.timeout_ms).await
    } else {
        Err("UNSUPPORTED_URL_SCHEME".to_owned())
    };
    let bytes = match bytes {
        Ok(b) => b,
        Err(code) => {
            return Fetched {
                status: "fetch_failed",
                url: Some(uri.url),
                json: None,
                error: Some(code),
            };
        }
    };
    let status = match uri.verification_method() {
        VerificationMethod::Keccak256Utf8 | VerificationMethod::Keccak256Bytes => {
            if profile_relayer::lsp2::verify(&uri, &bytes).unwrap_or(false) {
                "verified"
            } else {
                "hash_mismatch"
            }
        }
        _ => "unverifiable",
    };
    let json = serde_json::from_slice::<Value>(&bytes).ok();
    Fetched {
        status,
        url: Some(uri.url),
        json,
        error: None,
    }
}

/// Metadata behind an `https://` URL: size-limited, with a timeout.
async fn fetch_http(url: &str, max_bytes: usize, timeout_ms: u64) -> Result<Vec<u8>, String> {
    use crate::rpc::{TimedFetchError, fetch_with_timeout};
    let request = worker::Request::new(url, worker::Method::Get).map_err(|_| "INVALID_URL".to_owned())?;
    let mut response = match fetch_with_timeout(request, timeout_ms).await {
        Ok(r) => r,
        Err(TimedFetchError::Failed(_)) => return Err("FETCH_FAILED".to_owned()),
        Err(TimedFetchError::TimedOut) => return Err("FETCH_TIMEOUT".to_owned()),
    };
    if response.status_code() != 200 {
        return Err(format!("HTTP_{}", response.status_code()));
    }
    let bytes = response.bytes().await.map_err(|_| "FETCH_FAILED".to_owned())?;
    if bytes.len() > max_bytes {
        return Err("TOO_LARGE".to_owned());
    }
    Ok(bytes)
}

fn first_image_url(images: Option<&Value>) -> Option<String> {
    let list = images?.as_array()?;
    let first = match list.first()? {
        Value::Array(sizes) => sizes.first()?,
        other => other,
    };
    first.get("url").and_then(Value::as_str).map(gateway_url)
}

fn utf8(bytes: &[u8]) -> Option<String> {
    (!bytes.is_empty()).then(|| String::from_utf8_lossy(bytes).into_owned())
}

async fn retry_later(
    ctx: &Ctx<'_>,
    index: &str,
    object_id: &str,
    address: Address,
    token_id: Option<&str>,
    reason: &str,
) -> ApiResult<()> {
    // exponential backoff: base, 2×base, 4×base … capped at 2^11 × base
    let base = number::<u64>(ctx.env, "INDEXER_RETRY_SECONDS", 30)?;
    let db = search::db(ctx.env).await?;
    db.prepare(
        "INSERT INTO retries (index_name, object_id, address, token_id, attempts, next_attempt_at, reason) \
         VALUES (?1, ?2, ?3, ?4, 1, ?5 + ?7, ?6) ON CONFLICT (index_name, object_id) DO UPDATE SET \
         attempts = attempts + 1, next_attempt_at = ?5 + (?7 << min(attempts, 11)), reason = ?6",
    )
    .bind(&[
        index.into(),
        object_id.into(),
        format!("{address:#x}").into(),
        token_id.map_or(JsValue::NULL, JsValue::from_str),
        JsValue::from_f64(now() as f64),
        reason.into(),
        JsValue::from_f64(base as f64),
    ])?
    .run()
    .await
    .map_err(ApiError::internal)?;
    Ok(())
}

async fn clear_retry(ctx: &Ctx<'_>, index: &str, object_id: &str) -> ApiResult<()> {
    let db = search::db(ctx.env).await?;
    db.prepare("DELETE FROM retries WHERE index_name = ?1 AND object_id = ?2")
        .bind(&[index.into(), object_id.into()])?
        .run()
        .await
        .map_err(ApiError::internal)?;
    Ok(())
}

/// Indexes one address (profile or asset). Returns its kind, `None` if it is neither.
async fn index_address(ctx: &Ctx<'_>, address: Address, block: u64) -> ApiResult<Option<Kind>> {
    let Some(kind) = classify(&ctx.rpc, address).await? else {
        return Ok(None);
    };
    let object_id = address.to_checksum(None);
    let mut record = json!({
        "objectID": object_id,
        "address": object_id,
        "chainId": ctx.config.chain_id,
        "kind": kind.name(),
        "LSPStandard": kind.name(),
        "indexedBlock": block,
        "updatedAt": now(),
    });
    let (index, fetched) = if kind == Kind::Profile {
        let values = get_data(&ctx.rpc, address, &[data_keys::LSP3_PROFILE]).await?;
        let fetched = fetch_metadata(ctx, &values[0]).await;
        let profile = fetched
            .json
            .as_ref()
            .and_then(|j| serde_json::from_value::<Lsp3ProfileJson>(j.clone()).ok());
        if let Some(p) = &profile {
            let v = serde_json::to_value(&p.profile).unwrap_or(Value::Null);
            record["name"] = json!(p.profile.name);
            record["description"] = json!(p.profile.description);
            record["tags"] = json!(p.profile.tags.clone().unwrap_or_default());
            record["links"] = json!(p.profile.links.clone().unwrap_or_default());
            record["profileImageUrl"] = json!(first_image_url(v.get("profileImage")));
            record["backgroundImageUrl"] = json!(first_image_url(v.get("backgroundImage")));
            record["hasProfileName"] = json!(p.profile.name.as_ref().is_some_and(|n| !n.is_empty()));
            record["hasProfileImage"] = json!(record["profileImageUrl"].is_string());
            record["hasBackgroundImage"] = json!(record["backgroundImageUrl"].is_string());
            record["LSP3Profile"] = v;
        }
        record["type"] = json!("LSP3Profile");
        (ctx.profiles.clone(), fetched)
    } else {
        let keys = [
            data_keys::LSP4_METADATA,
            data_keys::LSP4_TOKEN_NAME,
            data_keys::LSP4_TOKEN_SYMBOL,
            data_keys::LSP4_TOKEN_TYPE,
            data_keys::LSP8_TOKEN_ID_FORMAT,
        ];
        let values = get_data(&ctx.rpc, address, &keys).await?;
        let fetched = fetch_metadata(ctx, &values[0]).await;
        record["LSP4TokenName"] = json!(utf8(&values[1]));
        record["LSP4TokenSymbol"] = json!(utf8(&values[2]));
        record["symbol"] = record["LSP4TokenSymbol"].clone();
        record["tokenType"] = json!(TokenType::from_value(&values[3]).ok());
        record["tokenIdFormat"] = json!(TokenIdFormat::from_value(&values[4]).ok());
        let metadata = fetched
            .json
            .as_ref()
            .and_then(|j| serde_json::from_value::<Lsp4MetadataJson>(j.clone()).ok());
        let name_from_metadata = metadata.as_ref().and_then(|m| m.metadata.name.clone());
        record["name"] = json!(utf8(&values[1]).or(name_from_metadata));
        if let Some(m) = &metadata {
            let v = serde_json::to_value(&m.metadata).unwrap_or(Value::Null);
            record["description"] = json!(m.metadata.description);
            record["links"] = json!(m.metadata.links.clone().unwrap_or_default());
            record["iconUrl"] = json!(first_image_url(v.get("icon")));
            record["imageUrl"] = json!(first_image_url(v.get("images")));
            record["LSP4Metadata"] = v;
        }
        (ctx.assets.clone(), fetched)
    };
    record["metadataStatus"] = json!(fetched.status);
    record["metadataUrl"] = json!(fetched.url);
    search::upsert(ctx.env, &index, &Record(record)).await?;
    if fetched.status == "fetch_failed" {
        retry_later(
            ctx,
            &index,
            &object_id,
            address,
            None,
            fetched.error.as_deref().unwrap_or("fetch failed"),
        )
        .await?;
    } else {
        clear_retry(ctx, &index, &object_id).await?;
    }
    Ok(Some(kind))
}

/// Indexes one LSP8 token id.
async fn index_token(ctx: &Ctx<'_>, address: Address, token_id: B256, block: u64) -> ApiResult<()> {
    let values = get_data(
        &ctx.rpc,
        address,
        &[
            data_keys::LSP8_TOKEN_ID_FORMAT,
            data_keys::LSP8_TOKEN_METADATA_BASE_URI,
        ],
    )
    .await?;
    let format = TokenIdFormat::from_value(&values[0]).unwrap_or(TokenIdFormat::Number);
    let per_token = call(
        &ctx.rpc,
        address,
        &getDataForTokenIdCall {
            tokenId: token_id,
            dataKey: data_keys::LSP4_METADATA,
        },
    )
    .await?
    .unwrap_or_default();
    let mut fetched = fetch_metadata(ctx, &per_token).await;
    if fetched.status == "none"
        && let Ok(base) = decode_verifiable_uri(&values[1])
        && let Ok(suffix) = decode_token_id(format, token_id)
    {
        // LSP8TokenMetadataBaseURI ‖ token id (hex formats without 0x, as the spec's example)
        let suffix = suffix
            .strip_prefix("0x")
            .filter(|_| matches!(format.base(), TokenIdFormat::UniqueId | TokenIdFormat::Hash))
            .map_or(suffix.clone(), str::to_owned);
        fetched = Fetched {
            status: "unverifiable",
            url: Some(format!("{}{suffix}", base.url)),
            json: None,
            error: None,
        };
        if let Ok(target) = CidPath::parse(fetched.url.as_deref().unwrap_or_default())
            && let Ok(c) = fetch_content(ctx.env, &ctx.ipfs, &target).await
        {
            fetched.json = serde_json::from_slice(&c.bytes).ok();
        }
    }
    let token_hex = token_id.to_string();
    let object_id = format!("{}:{token_hex}", address.to_checksum(None));
    let mut record = json!({
        "objectID": object_id,
        "address": address.to_checksum(None),
        "chainId": ctx.config.chain_id,
        "kind": "LSP8Token",
        "tokenId": token_hex,
        "tokenIdFormat": format,
        "tokenIdText": decode_token_id(format, token_id).ok(),
        "indexedBlock": block,
        "updatedAt": now(),
        "metadataStatus": fetched.status,
        "metadataUrl": fetched.url,
    });
    if let Some(m) = fetched
        .json
        .as_ref()
        .and_then(|j| serde_json::from_value::<Lsp4MetadataJson>(j.clone()).ok())
    {
        let v = serde_json::to_value(&m.metadata).unwrap_or(Value::Null);
        record["name"] = json!(m.metadata.name);
        record["description"] = json!(m.metadata.description);
        record["imageUrl"] = json!(first_image_url(v.get("images")));
        record["LSP4Metadata"] = v;
    }
    search::upsert(ctx.env, &ctx.assets, &Record(record)).await?;
    if fetched.status == "fetch_failed" {
        retry_later(
            ctx,
            &ctx.assets,
            &object_id,
            address,
            Some(&token_hex),
            fetched.error.as_deref().unwrap_or("fetch failed"),
        )
        .await?;
    } else {
        clear_retry(ctx, &ctx.assets, &object_id).await?;
    }
    Ok(())
}

/// Reads the address from chain and indexes it now (the lookup route's read-through).
pub async fn index_now(env: &Env, address: Address) -> ApiResult<Option<Kind>> {
    let ctx = Ctx::new(env)?;
    let head = ctx.rpc.block_number().await?;
    index_address(&ctx, address, head).await
}

/// Indexes one token now (read-through of the token route).
pub async fn index_token_now(env: &Env, address: Address, token_id: B256) -> ApiResult<()> {
    let ctx = Ctx::new(env)?;
    let head = ctx.rpc.block_number().await?;
    index_token(&ctx, address, token_id, head).await
}

#[derive(Deserialize)]
struct Checkpoint {
    next_block: f64,
}

/// The next block to process.
pub async fn checkpoint(env: &Env, chain_id: u64) -> ApiResult<Option<u64>> {
    let db = search::db(env).await?;
    let row: Option<Checkpoint> = db
        .prepare("SELECT next_block FROM checkpoints WHERE chain_id = ?1")
        .bind(&[JsValue::from_f64(chain_id as f64)])?
        .first(None)
        .await
        .map_err(ApiError::internal)?;
    Ok(row.map(|r| r.next_block as u64))
}

#[derive(Deserialize)]
struct RetryRow {
    address: String,
    token_id: Option<String>,
}

/// One indexer run: due retries, then the next block range.
pub async fn run(env: &Env) -> ApiResult<RunStats> {
    let ctx = Ctx::new(env)?;
    let chain_id = ctx.config.chain_id;
    let head = ctx.rpc.block_number().await?;
    let confirmations = number::<u64>(env, "INDEXER_CONFIRMATIONS", 0)?;
    let max_range = number::<u64>(env, "INDEXER_MAX_BLOCKS", 500)?.max(1);
    let start = number::<u64>(env, "INDEXER_START_BLOCK", 0)?;
    let mut stats = RunStats {
        head_block: head,
        ..RunStats::default()
    };

    // retries first: metadata that could not be fetched before
    let db = search::db(env).await?;
    let due: Vec<RetryRow> = db
        .prepare("SELECT address, token_id FROM retries WHERE next_attempt_at <= ?1 ORDER BY next_attempt_at LIMIT 20")
        .bind(&[JsValue::from_f64(now() as f64)])?
        .all()
        .await
        .map_err(ApiError::internal)?
        .results()
        .map_err(ApiError::internal)?;
    for row in due {
        let Ok(address) = row.address.parse::<Address>() else {
            continue;
        };
        match row.token_id.and_then(|t| t.parse::<B256>().ok()) {
            Some(token) => index_token(&ctx, address, token, head).await?,
            None => {
                index_address(&ctx, address, head).await?;
            }
        }
        stats.retried += 1;
    }

    let from = checkpoint(env, chain_id).await?.unwrap_or(start);
    let safe_head = head.saturating_sub(confirmations);
    stats.from_block = from;
    stats.to_block = from.saturating_sub(1);
    if from > safe_head {
        return Ok(stats);
    }
    let to = safe_head.min(from + max_range - 1);
    let deployed = topic(
        "DeployedERC1167Proxies(address,address,(bytes32,uint256,address,bytes),(uint256,address,bytes,bool,bytes),address,bytes)",
    );
    let data_changed = topic("DataChanged(bytes32,bytes)");
    let lsp7_transfer = topic("Transfer(address,address,address,uint256,bool,bytes)");
    let lsp8_transfer = topic("Transfer(address,address,address,bytes32,bool,bytes)");
    let logs: Vec<Log> = ctx
        .rpc
        .call(
            "eth_getLogs",
            json!([{
                "fromBlock": format!("0x{from:x}"),
                "toBlock": format!("0x{to:x}"),
                "topics": [[deployed, data_changed, lsp7_transfer, lsp8_transfer]],
            }]),
        )
        .await?;
    // address → last block it was seen in; LSP8 (address, token) → block
    let mut addresses: BTreeMap<Address, u64> = BTreeMap::new();
    let mut tokens: BTreeMap<(Address, B256), u64> = BTreeMap::new();
    for log in &logs {
        let block = u64::try_from(log.block_number).unwrap_or(to);
        let Some(t0) = log.topics.first() else { continue };
        if *t0 == deployed {
            if let Some(up) = log.topics.get(1) {
                addresses.insert(Address::from_word(*up), block);
            }
        } else if *t0 == lsp8_transfer && log.topics.len() == 4 {
            addresses.insert(log.address, block);
            tokens.insert((log.address, log.topics[3]), block);
        } else {
            addresses.insert(log.address, block);
        }
    }
    for (address, block) in &addresses {
        if index_address(&ctx, *address, *block).await?.is_some() {
            stats.indexed += 1;
        }
    }
    for ((address, token), block) in &tokens {
        index_token(&ctx, *address, *token, *block).await?;
        stats.indexed += 1;
    }
    // the checkpoint moves only after every write of the range succeeded: a failure re-runs the range
    db.prepare(
        "INSERT INTO checkpoints (chain_id, next_block, updated_at) VALUES (?1, ?2, ?3) \
         ON CONFLICT (chain_id) DO UPDATE SET next_block = ?2, updated_at = ?3",
    )
    .bind(&[
        JsValue::from_f64(chain_id as f64),
        JsValue::from_f64((to + 1) as f64),
        JsValue::from_f64(now() as f64),
    ])?
    .run()
    .await
    .map_err(ApiError::internal)?;
    stats.to_block = to;
    Ok(stats)
}
