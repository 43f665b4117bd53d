//! The lane's storage: one repository over the object's SQLite for the lane's records — `lane` (one row per
//! nonce: the stored [`PendingTx`]), `lane_meta` (the lane's signer and whether it drains), `confirming` and
//! `displaced` (the [`Watched`] mined transactions, `confirm.rs`) — and the object's alarm. The transaction log
//! (`txlog`) shares the same database ([`LaneStore::sql`]).

use std::cell::Cell;

use alloy_primitives::{Address, B256};
use serde::Deserialize;
use worker::{SqlStorage, SqlStorageValue, State, Storage};

use super::model::{Job, PendingTx, Table, Watched};
use crate::error::{ApiError, ApiResult};

/// The lane's records in the object's storage.
#[derive(Debug)]
pub(super) struct LaneStore {
    storage: Storage,
    sql: SqlStorage,
    schema_ready: Cell<bool>,
    /// The signer of this lane, once known (from a request, or stored).
    signer: Cell<Option<Address>>,
}

#[derive(Deserialize)]
struct Row {
    record: String,
}

/// A nonce as an SQLite value.
fn nonce_value(nonce: u64) -> ApiResult<SqlStorageValue> {
    let n = i64::try_from(nonce).map_err(ApiError::internal)?;
    SqlStorageValue::try_from_i64(n).map_err(ApiError::internal)
}

fn parse<T: serde::de::DeserializeOwned>(rows: &[Row]) -> ApiResult<Vec<T>> {
    rows.iter()
        .map(|r| serde_json::from_str(&r.record).map_err(ApiError::internal))
        .collect()
}

const fn table_name(table: Table) -> &'static str {
    match table {
        Table::Confirming => "confirming",
        Table::Displaced => "displaced",
    }
}

/// The `WHERE` clause naming the row of `w` in `table`, and its values: its nonce, and in `displaced` its hash.
fn table_key(table: Table, w: &Watched) -> ApiResult<(&'static str, Vec<SqlStorageValue>)> {
    let nonce = nonce_value(w.tx.nonce)?;
    Ok(match table {
        Table::Confirming => ("WHERE nonce = ?", vec![nonce]),
        Table::Displaced => (
            "WHERE nonce = ? AND hash = ?",
            vec![nonce, w.hash.to_string().into()],
        ),
    })
}

impl LaneStore {
    pub(super) fn new(state: &State) -> Self {
        let storage = state.storage();
        let sql = storage.sql();
        Self {
            storage,
            sql,
            schema_ready: Cell::new(false),
            signer: Cell::new(None),
        }
    }

    /// The object's database, the lane's tables created (the transaction log writes here too).
    pub(super) fn sql(&self) -> ApiResult<SqlStorage> {
        let sql = self.sql.clone();
        if !self.schema_ready.get() {
            sql.exec(
                "CREATE TABLE IF NOT EXISTS lane (nonce INTEGER PRIMARY KEY, record TEXT NOT NULL)",
                Vec::new(),
            )?;
            // the lane's signer and whether it drains
            sql.exec(
                "CREATE TABLE IF NOT EXISTS lane_meta (k TEXT PRIMARY KEY, v TEXT NOT NULL)",
                Vec::new(),
            )?;
            self.schema_ready.set(true);
        }
        Ok(sql)
    }

    /// Sets the alarm `offset_ms` from now unless one is set.
    pub(super) async fn ensure_alarm(&self, offset_ms: i64) -> ApiResult<()> {
        if self.storage.get_alarm().await?.is_none() {
            self.storage.set_alarm(offset_ms).await?;
        }
        Ok(())
    }

    fn meta_get(&self, key: &str) -> ApiResult<Option<String>> {
        #[derive(Deserialize)]
        struct Meta {
            v: String,
        }
        let rows: Vec<Meta> = self
            .sql()?
            .exec("SELECT v FROM lane_meta WHERE k = ?", vec![key.into()])?
            .to_array()?;
        Ok(rows.into_iter().next().map(|m| m.v))
    }

    fn meta_put(&self, key: &str, value: &str) -> ApiResult<()> {
        self.sql()?.exec(
            "INSERT OR REPLACE INTO lane_meta (k, v) VALUES (?, ?)",
            vec![key.into(), value.into()],
        )?;
        Ok(())
    }

    /// Records the signer of this lane (the first request tells it; later ones must agree).
    pub(super) fn bind(&self, signer: Address) -> ApiResult<()> {
        if self.signer.get() == Some(signer) {
            return Ok(());
        }
        match self.meta_get("signer")? {
            Some(stored) if stored != signer.to_string() => {
                return Err(ApiError::internal(format!(
                    "lane of {stored} asked for signer {signer}"
                )));
            }
            Some(_) => {}
            None => self.meta_put("signer", &signer.to_string())?,
        }
        self.signer.set(Some(signer));
        Ok(())
    }

    /// The signer of this lane: bound by a request, or stored (`None` for a lane from before the pool that no
    /// request has named yet).
    pub(super) fn signer(&self) -> ApiResult<Option<Address>> {
        Ok(match self.signer.get() {
            Some(a) => Some(a),
            None => self.meta_get("signer")?.and_then(|s| s.parse::<Address>().ok()),
        })
    }

    /// Whether the signer is drained (no new work).
    pub(super) fn draining(&self) -> ApiResult<bool> {
        Ok(self.meta_get("draining")?.as_deref() == Some("1"))
    }

    pub(super) fn set_draining(&self, draining: bool) -> ApiResult<()> {
        self.meta_put("draining", if draining { "1" } else { "0" })
    }

    fn lane_rows(&self, query: &str, params: Vec<SqlStorageValue>) -> ApiResult<Vec<PendingTx>> {
        let rows: Vec<Row> = self.sql()?.exec(query, params)?.to_array()?;
        parse(&rows)
    }

    /// Every stored transaction, by nonce.
    pub(super) fn lane(&self) -> ApiResult<Vec<PendingTx>> {
        self.lane_rows("SELECT record FROM lane ORDER BY nonce", Vec::new())
    }

    /// The stored transactions of the `limit` lowest nonces.
    pub(super) fn lane_first(&self, limit: u64) -> ApiResult<Vec<PendingTx>> {
        self.lane_rows(
            "SELECT record FROM lane ORDER BY nonce LIMIT ?",
            vec![nonce_value(limit)?],
        )
    }

    /// The stored transaction at `nonce`, read from storage (not from a caller's copy).
    pub(super) fn get(&self, nonce: u64) -> ApiResult<Option<PendingTx>> {
        Ok(self
            .lane_rows(
                "SELECT record FROM lane WHERE nonce = ?",
                vec![nonce_value(nonce)?],
            )?
            .into_iter()
            .next())
    }

    /// Removes the row at `remove` and stores `put`, in one write (synchronous statements, no await between them).
    pub(super) fn write(&self, remove: Option<u64>, put: Option<&PendingTx>) -> ApiResult<()> {
        let sql = self.sql()?;
        if let Some(nonce) = remove {
            sql.exec("DELETE FROM lane WHERE nonce = ?", vec![nonce_value(nonce)?])?;
        }
        if let Some(tx) = put {
            let record = serde_json::to_string(tx).map_err(ApiError::internal)?;
            sql.exec(
                "INSERT OR REPLACE INTO lane (nonce, record) VALUES (?, ?)",
                vec![nonce_value(tx.nonce)?, record.into()],
            )?;
        }
        Ok(())
    }

    /// Removes the row at `tx`'s nonce when it still holds `tx`'s job (whatever version of it is stored).
    pub(super) fn remove_job(&self, tx: &PendingTx) -> ApiResult<()> {
        if self.get(tx.nonce)?.is_some_and(|s| s.job == tx.job) {
            self.write(Some(tx.nonce), None)?;
        }
        Ok(())
    }

    /// The stored transaction of `job`.
    pub(super) fn find_job(&self, job: &Job) -> ApiResult<Option<PendingTx>> {
        Ok(self.lane()?.into_iter().find(|p| &p.job == job))
    }

    /// The stored transaction one of whose hashes is `hash`.
    pub(super) fn find_hash(&self, hash: B256) -> ApiResult<Option<PendingTx>> {
        Ok(self.lane()?.into_iter().find(|t| t.hashes.contains(&hash)))
    }

    fn table(&self, table: Table) -> ApiResult<SqlStorage> {
        let sql = self.sql()?;
        sql.exec(
            match table {
                Table::Confirming => {
                    "CREATE TABLE IF NOT EXISTS confirming (nonce INTEGER PRIMARY KEY, record TEXT NOT NULL)"
                }
                Table::Displaced => {
                    "CREATE TABLE IF NOT EXISTS displaced (nonce INTEGER NOT NULL, hash TEXT NOT NULL, \
                     record TEXT NOT NULL, PRIMARY KEY (nonce, hash))"
                }
            },
            Vec::new(),
        )?;
        Ok(sql)
    }

    fn watched_rows(
        &self,
        table: Table,
        filter: &str,
        params: Vec<SqlStorageValue>,
    ) -> ApiResult<Vec<Watched>> {
        let rows: Vec<Row> = self
            .table(table)?
            .exec(
                &format!("SELECT record FROM {} {filter} ORDER BY nonce", table_name(table)),
                params,
            )?
            .to_array()?;
        parse(&rows)
    }

    /// The watched transactions of `table`, by nonce.
    pub(super) fn watched(&self, table: Table) -> ApiResult<Vec<Watched>> {
        self.watched_rows(table, "", Vec::new())
    }

    /// Whether any transaction is watched (in either table): the alarm keeps going while one is.
    pub(super) fn watching(&self) -> ApiResult<bool> {
        Ok(!(self.watched(Table::Confirming)?.is_empty() && self.watched(Table::Displaced)?.is_empty()))
    }

    /// The row of `w` in `table` when it is still the one a pass decided on (the same signed transaction, as it
    /// was); `None` when another step changed or removed it meanwhile.
    pub(super) fn still(&self, table: Table, w: &Watched) -> ApiResult<Option<Watched>> {
        let (filter, params) = table_key(table, w)?;
        Ok(self
            .watched_rows(table, filter, params)?
            .into_iter()
            .find(|stored| stored == w))
    }

    /// Stores `w` in `table` (in place of the row at its nonce, or of its nonce and hash).
    pub(super) fn put_watched(&self, table: Table, w: &Watched) -> ApiResult<()> {
        let record = serde_json::to_string(w).map_err(ApiError::internal)?;
        let sql = self.table(table)?;
        match table {
            Table::Confirming => sql.exec(
                "INSERT OR REPLACE INTO confirming (nonce, record) VALUES (?, ?)",
                vec![nonce_value(w.tx.nonce)?, record.into()],
            )?,
            Table::Displaced => sql.exec(
                "INSERT OR REPLACE INTO displaced (nonce, hash, record) VALUES (?, ?, ?)",
                vec![nonce_value(w.tx.nonce)?, w.hash.to_string().into(), record.into()],
            )?,
        };
        Ok(())
    }

    /// Removes the row of `w` from `table` if it is still that row (no await between the check and the delete).
    pub(super) fn remove_watched(&self, table: Table, w: &Watched) -> ApiResult<()> {
        if self.still(table, w)?.is_none() {
            return Ok(());
        }
        let (filter, params) = table_key(table, w)?;
        self.table(table)?
            .exec(&format!("DELETE FROM {} {filter}", table_name(table)), params)?;
        Ok(())
    }
}
