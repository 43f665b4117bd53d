//! The D1 database. Each module keeps the `CREATE TABLE` statements of its own tables next to its queries
//! (`search::SCHEMA`, `indexer::writer::SCHEMA`, `lookup::SCHEMA`); the first use in an isolate creates them all,
//! adds the columns later releases introduced and moves data older releases stored elsewhere.

use std::cell::Cell;

use wasm_bindgen::JsValue;
use worker::{D1Database, Env};

use crate::error::{ApiError, ApiResult};

thread_local! {
    static SCHEMA_READY: Cell<bool> = const { Cell::new(false) };
}

/// Columns added after the first release: adding one that exists fails with "duplicate column", which is fine.
const MIGRATIONS: &[&str] = &[
    "ALTER TABLE checkpoints ADD COLUMN next_item INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE checkpoints ADD COLUMN window INTEGER",
];

/// The D1 database, with every module's tables created on first use.
pub async fn db(env: &Env) -> ApiResult<D1Database> {
    let db = env.d1("DB")?;
    if !SCHEMA_READY.with(Cell::get) {
        for schema in [
            crate::search::SCHEMA,
            crate::indexer::writer::SCHEMA,
            crate::lookup::SCHEMA,
        ] {
            for statement in schema.split(";\n") {
                db.prepare(statement.trim_end_matches(';'))
                    .run()
                    .await
                    .map_err(ApiError::internal)?;
            }
        }
        for migration in MIGRATIONS {
            if let Err(e) = db.prepare(*migration).run().await
                && !e.to_string().contains("duplicate column")
            {
                return Err(ApiError::internal(e));
            }
        }
        per_chain_errors(env, &db).await?;
        SCHEMA_READY.with(|c| c.set(true));
    }
    Ok(db)
}

/// Moves what a single-chain release stored without a chain to the first configured chain (the one that release
/// indexed): `index_errors` rows into `unindexable`, and the retries queued under `errors` to `<prefix>_errors`.
/// Each step is one transaction and can run any number of times, also in two isolates at once: once
/// `index_errors` is dropped, the copy fails with "no such table" and changes nothing.
async fn per_chain_errors(env: &Env, db: &D1Database) -> ApiResult<()> {
    let Some(first) = crate::config::chains(env)?.into_iter().next() else {
        return Ok(());
    };
    let chain = JsValue::from_f64(first.chain_id as f64);
    let copy = db
        .prepare(
            "INSERT OR IGNORE INTO unindexable (chain_id, object_id, address, token_id, code, message, block, \
             attempts, updated_at) SELECT ?1, object_id, address, token_id, code, message, block, attempts, \
             updated_at FROM index_errors",
        )
        .bind(&[chain])?;
    if let Err(e) = db.batch(vec![copy, db.prepare("DROP TABLE index_errors")]).await
        && !e.to_string().contains("no such table")
    {
        return Err(ApiError::internal(e));
    }
    db.prepare("UPDATE OR IGNORE retries SET index_name = ?1 WHERE index_name = 'errors'")
        .bind(&[first.errors_queue().into()])?
        .run()
        .await
        .map_err(ApiError::internal)?;
    Ok(())
}
