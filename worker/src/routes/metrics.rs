//! `GET /admin/metrics` (admin token): the operator's figures in the OpenMetrics text format, for Prometheus and
//! every scraper that reads it. Each scrape reads the current state — the relayer's balance, its gas today and this
//! month against the daily ceiling, its pending transactions, and each chain's indexer position and index sizes — so
//! the figures are as true as `GET /admin/relayer` and `GET /v1/:chainId/indexer`, and nothing is counted per request.

use prometheus_client::encoding::{EncodeLabelSet, text::encode};
use prometheus_client::metrics::{family::Family, gauge::Gauge};
use prometheus_client::registry::Registry;
use std::sync::atomic::AtomicU64;
use worker::{Env, Request, Response};

use crate::{
    auth,
    config::Config,
    error::{ApiError, ApiResult},
    lookup,
};

/// The answer's media type (the text format Prometheus negotiates first).
const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ChainLabel {
    chain_id: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct SignerLabel {
    chain_id: String,
    signer: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct IndexLabel {
    chain_id: String,
    index: String,
}

type Gauges<L> = Family<L, Gauge<f64, AtomicU64>>;

/// A gauge family registered under `name` with `help`.
fn family<L: EncodeLabelSet + Clone + std::hash::Hash + Eq + std::fmt::Debug + Send + Sync + 'static>(
    registry: &mut Registry,
    name: &str,
    help: &str,
) -> Gauges<L> {
    let family = Gauges::<L>::default();
    registry.register(name, help, family.clone());
    family
}

#[allow(clippy::cast_precision_loss)] // Prometheus values are float64; wei above 2^53 lose only low digits
fn float(value: u64) -> f64 {
    value as f64
}

pub(super) async fn metrics(req: &Request, env: &Env, config: &Config) -> ApiResult<Response> {
    auth::authenticate_admin(req, env, config).await?;
    let mut registry = Registry::with_prefix("profile_relayer");

    let relayer = super::admin::relayer_view(env, config).await?;
    let chain = ChainLabel {
        chain_id: relayer.chain_id.to_string(),
    };
    let set = |family: &Gauges<ChainLabel>, value: f64| {
        family.get_or_create(&chain).set(value);
    };
    let balance = family(
        &mut registry,
        "relayer_balance_wei",
        "The relayer signer's balance in wei",
    );
    if let Some(wei) = relayer.balance.as_deref().and_then(|b| b.parse::<f64>().ok()) {
        set(&balance, wei);
    }
    let today = relayer.today;
    for (name, help, value) in [
        (
            "relayer_gas_used_today",
            "Gas settled today (UTC) on the relayer's daily meter",
            today.gas_used,
        ),
        (
            "relayer_gas_reserved_today",
            "Gas reserved today by transactions not mined yet",
            today.gas_reserved,
        ),
        (
            "relayer_gas_ceiling_daily",
            "The relayer's daily gas ceiling (MAX_GAS_PER_DAY)",
            today.ceiling,
        ),
        (
            "relayer_gas_remaining_today",
            "Gas left today for new sends",
            today.remaining,
        ),
        (
            "relayer_gas_used_month",
            "Gas settled this calendar month (UTC)",
            relayer.month.gas_used,
        ),
        (
            "relayer_pending_transactions",
            "Transactions sent and not mined yet",
            relayer.pending.count,
        ),
        (
            "relayer_pending_oldest_age_seconds",
            "Seconds since the oldest pending transaction was first sent (0 when none is pending)",
            relayer.pending.oldest_age_seconds.unwrap_or(0),
        ),
    ] {
        set(&family(&mut registry, name, help), float(value));
    }

    // each signer of the pool, labelled by its address
    let signer_balance = family::<SignerLabel>(
        &mut registry,
        "relayer_signer_balance_wei",
        "Each signer's balance in wei",
    );
    let signer_pending = family::<SignerLabel>(
        &mut registry,
        "relayer_signer_pending_transactions",
        "Each signer's transactions sent and not mined yet",
    );
    let signer_draining = family::<SignerLabel>(
        &mut registry,
        "relayer_signer_draining",
        "1 when the signer is drained (takes no new work), else 0",
    );
    for signer in &relayer.signers {
        let label = SignerLabel {
            chain_id: chain.chain_id.clone(),
            signer: format!("{:#x}", signer.address),
        };
        if let Some(wei) = signer.balance.as_deref().and_then(|b| b.parse::<f64>().ok()) {
            signer_balance.get_or_create(&label).set(wei);
        }
        if let Some(pending) = signer.pending {
            signer_pending.get_or_create(&label).set(float(pending.count));
        }
        signer_draining
            .get_or_create(&label)
            .set(if signer.state == "draining" { 1.0 } else { 0.0 });
    }

    let last = family::<ChainLabel>(
        &mut registry,
        "indexer_last_block",
        "The last block the indexer completed",
    );
    let head = family::<ChainLabel>(
        &mut registry,
        "indexer_head_block",
        "The chain head the node answered",
    );
    let lag = family::<ChainLabel>(
        &mut registry,
        "indexer_lag_blocks",
        "Blocks between the head and the indexer",
    );
    let unindexable = family::<ChainLabel>(
        &mut registry,
        "indexer_unindexable",
        "Contracts recorded as unindexable (refused by the indexer)",
    );
    let entries = family::<IndexLabel>(&mut registry, "index_entries", "Records in a search index");
    for chain in config.chains()? {
        let status = lookup::indexer_status_of(env, chain).await?;
        let label = ChainLabel {
            chain_id: chain.chain_id.to_string(),
        };
        for (family, value) in [
            (&last, status.last_indexed_block),
            (&head, status.head_block),
            (&lag, status.lag),
        ] {
            if let Some(value) = value {
                family.get_or_create(&label).set(float(value));
            }
        }
        unindexable.get_or_create(&label).set(float(status.unindexable));
        for index in status.indexes {
            let label = IndexLabel {
                chain_id: label.chain_id.clone(),
                index: index.name,
            };
            entries.get_or_create(&label).set(float(index.entries));
        }
    }

    let mut body = String::new();
    encode(&mut body, &registry).map_err(ApiError::internal)?;
    let mut res = Response::ok(body)?;
    res.headers_mut().set("content-type", CONTENT_TYPE)?;
    res.headers_mut().set("cache-control", "no-store")?;
    Ok(res)
}
