//! Turning reads into records and writing them: one D1 batch per chunk holds the records, their full-text rows,
//! the retry and error bookkeeping and the cursor, so what is written is consistent and a dead run loses only the
//! chunk in flight. Candidates that misbehave go to `unindexable`, never to the search index.

use alloy_primitives::{Address, B256};
use profile_relayer::{
    api::records::{AssetData, AssetRecord, MetadataInfo, ProfileRecord, Stamp, TokenRecord},
    lsp2::decode_verifiable_uri,
    lsp3::Lsp3ProfileJson,
    lsp4::{Lsp4Metadata, Lsp4MetadataJson, TokenType},
    lsp8::{TokenIdFormat, decode_token_id},
    metadata::{Lenient, raw_json},
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use wasm_bindgen::JsValue;
use worker::{D1PreparedStatement, Env};

use super::{
    Ctx, Kind, RunStats,
    chain::{self, AddressRead, ItemError, TokenRead},
    discovery::{Item, process_all},
    metadata::{Fetched, fetch_metadata, fetch_url},
    now,
};
use crate::{
    config::number,
    error::{ApiError, ApiResult},
    rpc::RpcError,
    search::{self, Record},
};

/// The longest name, symbol or description kept from chain data.
const MAX_TEXT: usize = 1024;
/// The longest metadata JSON kept as text (`metadataRaw`) next to a lossy parse.
const MAX_RAW_JSON: usize = 8 * 1024;

/// What processing one candidate gave.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// A record to write (and a retry to schedule when its metadata could not be fetched).
    Record {
        index: String,
        kind: Option<Kind>,
        record: Record,
        retry: Option<String>,
    },
    /// The candidate misbehaves: recorded in `unindexable`.
    Error {
        object_id: String,
        address: Address,
        token_id: Option<B256>,
        error: ItemError,
        block: u64,
    },
    /// An address that is neither a profile nor an asset (`contract`: it has code). Nothing is written.
    NotIndexed { contract: bool },
    /// Nothing to write (token burned, nothing read).
    Skip,
}

impl Outcome {
    pub(crate) const fn kind(&self) -> Option<Kind> {
        match self {
            Self::Record { kind, .. } => *kind,
            _ => None,
        }
    }

    /// The outcome for a candidate whose reads failed although the node answers (a call that times out).
    pub(crate) fn failed(address: Address, token_id: Option<B256>, block: u64, e: &RpcError) -> Self {
        Self::Error {
            object_id: object_id(address, token_id),
            address,
            token_id,
            error: ItemError::retryable("CALL_FAILED", format!("{e:?}")),
            block,
        }
    }
}

pub(crate) fn object_id(address: Address, token_id: Option<B256>) -> String {
    match token_id {
        Some(t) => format!("{}:{t}", address.to_checksum(None)),
        None => address.to_checksum(None),
    }
}

fn text(bytes: &[u8]) -> Option<String> {
    (!bytes.is_empty()).then(|| String::from_utf8_lossy(bytes).chars().take(MAX_TEXT).collect())
}

/// Parses fetched metadata tolerantly with `parse`; the outcome's status, what was dropped and (when lossy) the
/// raw JSON go into the record's [`MetadataInfo`].
fn parse_metadata<T>(
    fetched: &Fetched,
    parse: impl FnOnce(Value) -> profile_relayer::Result<Lenient<T>>,
) -> (Option<T>, MetadataInfo) {
    let mut info = MetadataInfo {
        status: fetched.status.to_owned(),
        url: fetched.url.clone(),
        error: fetched.error.as_ref().map(|e| e.code.clone()),
        ..MetadataInfo::default()
    };
    let Some(json) = &fetched.json else {
        return (None, info);
    };
    let (value, lossy) = match parse(json.clone()) {
        Ok(parsed) => {
            let lossy = !parsed.dropped.is_empty();
            info.dropped = parsed.dropped;
            (Some(parsed.value), lossy)
        }
        Err(_) => (None, true),
    };
    if lossy {
        info.raw = raw_json(json, MAX_RAW_JSON);
    }
    (value, info)
}

fn lsp4(fetched: &Fetched) -> (Option<Lsp4Metadata>, MetadataInfo) {
    let (m, info) = parse_metadata(fetched, Lsp4MetadataJson::from_value_lenient);
    (m.map(|m| m.metadata), info)
}

/// A typed record as the JSON the index stores.
fn to_record(record: &impl Serialize) -> Record {
    Record(serde_json::to_value(record).unwrap_or(Value::Null))
}

fn retry_reason(fetched: &Fetched) -> Option<String> {
    fetched
        .error
        .as_ref()
        .filter(|e| e.retryable)
        .map(|e| e.code.clone())
}

/// Reads, classifies and builds the record of one address.
pub(crate) async fn process_address(
    ctx: &Ctx<'_>,
    address: Address,
    block: u64,
) -> Result<Outcome, RpcError> {
    let (kind, values, creators) = match chain::read_address(ctx, address).await? {
        AddressRead::NotContract => return Ok(Outcome::NotIndexed { contract: false }),
        AddressRead::Other => return Ok(Outcome::NotIndexed { contract: true }),
        AddressRead::Refused(error) => {
            return Ok(Outcome::Error {
                object_id: object_id(address, None),
                address,
                token_id: None,
                error,
                block,
            });
        }
        AddressRead::Lsp(kind, values, creators) => (kind, values, creators),
    };
    let value = |i: usize| values.get(i).cloned().unwrap_or_default();
    let stamp = Stamp {
        chain_id: ctx.config.chain_id,
        block,
        now: now(),
    };
    let (index, fetched, record) = if kind == Kind::Profile {
        let fetched = fetch_metadata(ctx, &value(0)).await;
        let (profile, info) = parse_metadata(&fetched, Lsp3ProfileJson::from_value_lenient);
        let record = ProfileRecord::new(
            address,
            stamp,
            profile.map(|p| p.profile),
            info,
            &ctx.public_base_url,
        );
        (ctx.profiles.clone(), fetched, to_record(&record))
    } else {
        let fetched = fetch_metadata(ctx, &value(1)).await;
        let (metadata, info) = lsp4(&fetched);
        let data = AssetData {
            name: text(&value(2)),
            symbol: text(&value(3)),
            token_type: TokenType::from_value(&value(4)).ok(),
            token_id_format: TokenIdFormat::from_value(&value(5)).ok(),
            creators,
        };
        let record = AssetRecord::new(
            address,
            kind == Kind::Lsp8,
            stamp,
            data,
            metadata,
            info,
            &ctx.public_base_url,
        );
        (ctx.assets.clone(), fetched, to_record(&record))
    };
    Ok(Outcome::Record {
        index,
        kind: Some(kind),
        retry: retry_reason(&fetched),
        record,
    })
}

/// Reads and builds the record of one LSP8 token. A token that does not exist gives [`Outcome::Skip`].
pub(crate) async fn process_token(
    ctx: &Ctx<'_>,
    address: Address,
    token_id: B256,
    block: u64,
) -> Result<Outcome, RpcError> {
    let (format_value, base_uri, per_token) = match chain::read_token(ctx, address, token_id).await? {
        TokenRead::Missing => return Ok(Outcome::Skip),
        TokenRead::Refused(error) => {
            return Ok(Outcome::Error {
                object_id: object_id(address, Some(token_id)),
                address,
                token_id: Some(token_id),
                error,
                block,
            });
        }
        TokenRead::Data {
            format,
            base_uri,
            metadata,
        } => (format, base_uri, metadata),
    };
    let format = TokenIdFormat::from_value(&format_value).unwrap_or(TokenIdFormat::Number);
    let mut fetched = fetch_metadata(ctx, &per_token).await;
    if fetched.status == "none"
        && let Ok(base) = decode_verifiable_uri(&base_uri)
        && let Ok(suffix) = decode_token_id(format, token_id)
    {
        // LSP8TokenMetadataBaseURI ‖ token id (hex formats without 0x, as the spec's example)
        let suffix = suffix
            .strip_prefix("0x")
            .filter(|_| matches!(format.base(), TokenIdFormat::UniqueId | TokenIdFormat::Hash))
            .map_or(suffix.clone(), str::to_owned);
        let url = format!("{}{suffix}", base.url);
        fetched = match fetch_url(ctx, &url).await {
            Ok(bytes) => Fetched {
                status: "unverifiable",
                url: Some(url),
                json: serde_json::from_slice(&bytes).ok(),
                error: None,
            },
            Err(error) => Fetched {
                status: "fetch_failed",
                url: Some(url),
                json: None,
                error: Some(error),
            },
        };
    }
    let stamp = Stamp {
        chain_id: ctx.config.chain_id,
        block,
        now: now(),
    };
    let (metadata, info) = lsp4(&fetched);
    let record = to_record(&TokenRecord::new(
        address,
        token_id,
        format,
        stamp,
        metadata,
        info,
        &ctx.public_base_url,
    ));
    Ok(Outcome::Record {
        index: ctx.assets.clone(),
        kind: None,
        retry: retry_reason(&fetched),
        record,
    })
}

/// The cursor: the next block, and how many of its candidates are done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cursor {
    pub(crate) block: u64,
    pub(crate) item: u64,
    /// The `eth_getLogs` window the next read starts with.
    pub(crate) window: u64,
}

fn f(n: u64) -> JsValue {
    JsValue::from_f64(n as f64)
}

/// Writes outcomes (and the cursor, when given) in one D1 batch, then pushes the records to Algolia.
pub(crate) async fn write(ctx: &Ctx<'_>, outcomes: Vec<Outcome>, cursor: Option<Cursor>) -> ApiResult<()> {
    let db = search::db(ctx.env).await?;
    let base = number::<u64>(ctx.env, "INDEXER_RETRY_SECONDS", 30)?;
    let mut statements: Vec<D1PreparedStatement> = Vec::new();
    let mut pushed: Vec<(String, Record)> = Vec::new();
    // retries of unindexable candidates queue under the chain's own name (`<prefix>_errors`)
    let errors_queue = ctx.config.errors_queue();
    let chain_id = f(ctx.config.chain_id);
    let clear_retry = |index: &str, id: &str| -> ApiResult<D1PreparedStatement> {
        Ok(db
            .prepare("DELETE FROM retries WHERE index_name = ?1 AND object_id = ?2")
            .bind(&[index.into(), id.into()])?)
    };
    let retry = |index: &str, id: &str, address: &str, token: Option<&str>, reason: &str| {
        // exponential backoff: base, 2×base, 4×base … capped at 2^11 × base
        db.prepare(
            "INSERT INTO retries (index_name, object_id, address, token_id, attempts, next_attempt_at, reason) \
             VALUES (?1, ?2, ?3, ?4, 1, ?5 + ?7, ?6) ON CONFLICT (index_name, object_id) DO UPDATE SET \
             attempts = attempts + 1, next_attempt_at = ?5 + (?7 << min(attempts, 11)), reason = ?6",
        )
        .bind(&[
            index.into(),
            id.into(),
            address.into(),
            token.map_or(JsValue::NULL, JsValue::from_str),
            f(now()),
            reason.into(),
            f(base),
        ])
    };
    for outcome in outcomes {
        match outcome {
            Outcome::Skip | Outcome::NotIndexed { .. } => {}
            Outcome::Record {
                index,
                record,
                retry: reason,
                ..
            } => {
                let field = |k: &str| record.0.get(k).and_then(Value::as_str).map(str::to_owned);
                let id = field("objectID").unwrap_or_default();
                let address = field("address").unwrap_or_default();
                let token = field("tokenId");
                statements.extend(search::upsert_statements(&db, &index, &record)?);
                statements.push(
                    db.prepare("DELETE FROM unindexable WHERE chain_id = ?1 AND object_id = ?2")
                        .bind(&[chain_id.clone(), id.as_str().into()])?,
                );
                statements.push(clear_retry(&errors_queue, &id)?);
                // an address remembered as "no profile or asset" by the lookup route is one now
                statements.push(
                    db.prepare("DELETE FROM lookup_misses WHERE chain_id = ?1 AND address = ?2")
                        .bind(&[chain_id.clone(), address.as_str().into()])?,
                );
                statements.push(match reason {
                    Some(r) => retry(&index, &id, &address, token.as_deref(), &r)?,
                    None => clear_retry(&index, &id)?,
                });
                pushed.push((index, record));
            }
            Outcome::Error {
                object_id,
                address,
                token_id,
                error,
                block,
            } => {
                let address = address.to_checksum(None);
                let token = token_id.map(|t| t.to_string());
                statements.push(
                    db.prepare(
                        "INSERT INTO unindexable (object_id, address, token_id, code, message, block, attempts, updated_at, \
                         chain_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, 1, ?7, ?8) ON CONFLICT (chain_id, object_id) DO UPDATE \
                         SET code = ?4, message = ?5, block = ?6, attempts = attempts + 1, updated_at = ?7",
                    )
                    .bind(&[
                        object_id.as_str().into(),
                        address.as_str().into(),
                        token.as_deref().map_or(JsValue::NULL, JsValue::from_str),
                        error.code.as_str().into(),
                        error.message.chars().take(MAX_TEXT).collect::<String>().into(),
                        f(block),
                        f(now()),
                        chain_id.clone(),
                    ])?,
                );
                // a contract that stopped being indexable leaves the search index
                for index in [&ctx.profiles, &ctx.assets] {
                    statements.extend(search::delete_statements(&db, index, &object_id)?);
                }
                statements.push(if error.retryable {
                    retry(&errors_queue, &object_id, &address, token.as_deref(), &error.code)?
                } else {
                    clear_retry(&errors_queue, &object_id)?
                });
            }
        }
    }
    if let Some(c) = cursor {
        statements.push(
            db.prepare(
                "INSERT INTO checkpoints (chain_id, next_block, next_item, window, updated_at) VALUES (?1, ?2, ?3, ?4, ?5) \
                 ON CONFLICT (chain_id) DO UPDATE SET next_block = ?2, next_item = ?3, window = ?4, updated_at = ?5",
            )
            .bind(&[f(ctx.config.chain_id), f(c.block), f(c.item), f(c.window), f(now())])?,
        );
    }
    if statements.is_empty() {
        return Ok(());
    }
    ctx.budget.spend(1);
    ctx.budget
        .add_rows(u32::try_from(pushed.len()).unwrap_or(u32::MAX));
    db.batch(statements).await.map_err(ApiError::internal)?;
    search::push(ctx.env, &pushed).await
}

#[derive(Deserialize)]
struct CheckpointRow {
    next_block: f64,
    next_item: Option<f64>,
    window: Option<f64>,
}

/// The next block to process.
pub async fn checkpoint(env: &Env, chain_id: u64) -> ApiResult<Option<u64>> {
    Ok(cursor(env, chain_id).await?.map(|c| c.block))
}

/// The stored cursor.
pub(crate) async fn cursor(env: &Env, chain_id: u64) -> ApiResult<Option<Cursor>> {
    let db = search::db(env).await?;
    let row: Option<CheckpointRow> = db
        .prepare("SELECT next_block, next_item, window FROM checkpoints WHERE chain_id = ?1")
        .bind(&[f(chain_id)])?
        .first(None)
        .await
        .map_err(ApiError::internal)?;
    Ok(row.map(|r| Cursor {
        block: r.next_block as u64,
        item: r.next_item.unwrap_or(0.0) as u64,
        window: r.window.unwrap_or(0.0) as u64,
    }))
}

#[derive(Deserialize)]
struct ErrorRow {
    code: String,
    message: Option<String>,
}

/// The recorded error of a candidate on a chain.
pub(crate) async fn recorded_error(
    env: &Env,
    chain_id: u64,
    object_id: &str,
) -> ApiResult<Option<(String, String)>> {
    let db = search::db(env).await?;
    let row: Option<ErrorRow> = db
        .prepare("SELECT code, message FROM unindexable WHERE chain_id = ?1 AND object_id = ?2")
        .bind(&[f(chain_id), object_id.into()])?
        .first(None)
        .await
        .map_err(ApiError::internal)?;
    Ok(row.map(|r| (r.code, r.message.unwrap_or_default())))
}

/// Number of recorded errors of a chain.
pub(crate) async fn error_count(env: &Env, chain_id: u64) -> ApiResult<u64> {
    #[derive(Deserialize)]
    struct Count {
        n: f64,
    }
    let db = search::db(env).await?;
    let row: Option<Count> = db
        .prepare("SELECT COUNT(*) AS n FROM unindexable WHERE chain_id = ?1")
        .bind(&[f(chain_id)])?
        .first(None)
        .await
        .map_err(ApiError::internal)?;
    Ok(row.map_or(0, |c| c.n as u64))
}

#[derive(Deserialize)]
struct RetryRow {
    address: String,
    token_id: Option<String>,
}

/// Due retries (failed metadata fetches, calls that failed): at most a quarter of the run's subrequests.
pub(crate) async fn retries(ctx: &Ctx<'_>, head: u64, stats: &mut RunStats) -> ApiResult<()> {
    let db = search::db(ctx.env).await?;
    let limit = (ctx.budget.left() / 4 / 3).min(50);
    // this chain's queues only: its two indexes and its errors
    let queues = [
        ctx.profiles.clone(),
        ctx.assets.clone(),
        ctx.config.errors_queue(),
    ];
    let queue_args = queues.iter().map(|q| JsValue::from_str(q));
    let due: Vec<RetryRow> = db
        .prepare(
            "SELECT address, token_id FROM retries WHERE index_name IN (?3, ?4, ?5) AND next_attempt_at <= ?1 \
             ORDER BY next_attempt_at LIMIT ?2",
        )
        .bind(&[f(now()), f(u64::from(limit))].into_iter().chain(queue_args.clone()).collect::<Vec<_>>())?
        .all()
        .await
        .map_err(ApiError::internal)?
        .results()
        .map_err(ApiError::internal)?;
    let items: Vec<(u64, Item)> = due
        .iter()
        .filter_map(|row| {
            let address = row.address.parse::<Address>().ok()?;
            Some(match row.token_id.as_deref().map(str::parse::<B256>) {
                Some(Ok(token)) => (head, Item::Token(address, token)),
                Some(Err(_)) => return None,
                None => (head, Item::Address(address)),
            })
        })
        .collect();
    stats.retried += items.len() as u64;
    let outcomes = process_all(ctx, &items).await?;
    // a retried candidate that turned out to be nothing (burned token, code gone) leaves the retry queue
    let gone: Vec<String> = items
        .iter()
        .zip(&outcomes)
        .filter(|(_, o)| matches!(o, Outcome::Skip | Outcome::NotIndexed { .. }))
        .map(|((_, item), _)| match item {
            Item::Address(a) => object_id(*a, None),
            Item::Token(a, t) => object_id(*a, Some(*t)),
        })
        .collect();
    if !gone.is_empty() {
        let statements = gone
            .iter()
            .map(|id| {
                db.prepare("DELETE FROM retries WHERE object_id = ?1 AND index_name IN (?2, ?3, ?4)")
                    .bind(
                        &[JsValue::from_str(id)]
                            .into_iter()
                            .chain(queue_args.clone())
                            .collect::<Vec<_>>(),
                    )
            })
            .collect::<Result<Vec<_>, _>>()?;
        db.batch(statements).await.map_err(ApiError::internal)?;
    }
    count(stats, &outcomes);
    write(ctx, outcomes, None).await
}

/// Adds outcomes to the run's counters.
pub(crate) fn count(stats: &mut RunStats, outcomes: &[Outcome]) {
    for o in outcomes {
        match o {
            Outcome::Record { .. } => stats.indexed += 1,
            Outcome::Error { .. } => stats.errors += 1,
            Outcome::Skip | Outcome::NotIndexed { .. } => {}
        }
    }
}
