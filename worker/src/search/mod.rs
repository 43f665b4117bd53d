//! The search room: the profiles and assets the indexer found, stored in D1 with SQLite FTS5 (always written; the
//! lookup routes and the Algolia-compatible API read it), searched by our own engine, and pushed to the Algolia
//! service when one is configured.
//!
//! - [`store`]: the typed store, every SQL statement over `records`, `records_fts` and `records_vocab` (typed
//!   records in, typed reads out); [`caps`] bounds a record before it is stored.
//! - [`filters`]: Algolia's filter syntax, parsed (pure); the store binds it as SQL.
//! - [`engine`]: our engine over the store — parameters, typo tolerance, Algolia's ranking, hits, cursors.
//! - [`outbound`]: the Algolia service client — push, the delete queue, the record trim.
//!
//! Direction: the routes (lookup, `routes::algolia`) → [`engine`] → [`store`] → `d1`; the indexer → [`store`],
//! [`outbound`]. Nothing here imports the routes, the lookup or the indexer.

pub(crate) mod caps;
pub mod engine;
pub mod filters;
pub mod outbound;
pub mod store;
