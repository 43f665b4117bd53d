//! The indexer: follows the chain from a checkpoint (D1), `INDEXER_CONFIRMATIONS` blocks behind the head.
//! Candidates come from logs — LSP23 `DeployedERC1167Proxies` (profiles), ERC725Y `DataChanged` (profiles and
//! assets, including their creation) and LSP7/LSP8 `Transfer` (assets and LSP8 token ids) — read with adaptive
//! `eth_getLogs` windows ([`discovery`]). Each candidate is classified by ERC165 and its data read in one JSON-RPC
//! batch ([`chain`]), its metadata fetched with bounded parallelism ([`metadata`]), built into a typed record
//! ([`records`]) and written ([`writer`]: the records into the search store and to Algolia, the bookkeeping into
//! [`ledger`], the indexer's own tables). [`run`] orchestrates: a run (due retries, then the chain
//! followed window by window) and the on-demand indexing of one address or token; [`ctx`] is what they work with.
//!
//! Nothing one contract does can stop the indexer: a contract whose calls revert, time out, answer nothing or
//! garbage, or that claims every interface, is recorded in `unindexable` and skipped. Work per run is bounded
//! (`INDEXER_MAX_SECONDS`, `INDEXER_MAX_SUBREQUESTS`, `INDEXER_MAX_ROWS`); the cursor (block, item within the block)
//! is written with every chunk of records, so a run that stops or dies half-way loses nothing already written and
//! the next run continues where it stopped.

mod answers;
mod chain;
pub mod clock;
mod ctx;
mod discovery;
mod ledger;
mod metadata;
mod records;
mod relations;
mod reorg;
mod run;
mod writer;

pub(crate) use self::ctx::now;
pub use self::{
    answers::Kind,
    ledger::checkpoint,
    run::{Indexed, TokenIndexed, error_count, index_now, index_token_now, recorded_error, run},
};
