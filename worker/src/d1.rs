//! The D1 database. Each module keeps the `CREATE TABLE` statements of its own tables next to its queries
//! (`search::SCHEMA`, `indexer::writer::SCHEMA`, `lookup::SCHEMA`); the first use in an isolate creates them all,
//! adds the columns later releases introduced and moves data older releases stored elsewhere.
//!
//! Statements bind typed [`Param`]s ([`Statement::bind_params`]): integers are checked against JavaScript's safe range
//! (D1 takes numbers as `f64`), so a value above 2^53 − 1 is refused instead of silently rounded.

use std::{borrow::Cow, cell::Cell};

use serde::de::DeserializeOwned;

use worker::{D1Database, D1PreparedStatement, D1Type, Env};

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
            crate::algolia::ranked::SCHEMA,
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
        db.prepare(MARKS).run().await.map_err(ApiError::internal)?;
        for migration in MIGRATIONS {
            if let Err(e) = db.prepare(*migration).run().await
                && !e.to_string().contains("duplicate column")
            {
                return Err(ApiError::internal(e));
            }
        }
        per_chain_errors(env, &db).await?;
        reindex_old_records(&db).await?;
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
    let copy = db
        .prepare(
            "INSERT OR IGNORE INTO unindexable (chain_id, object_id, address, token_id, code, message, block, \
             attempts, updated_at) SELECT ?1, object_id, address, token_id, code, message, block, attempts, \
             updated_at FROM index_errors",
        )
        .bind_params(&[first.chain_id.into()])?;
    if let Err(e) = db.batch(vec![copy, db.prepare("DROP TABLE index_errors")]).await
        && !e.to_string().contains("no such table")
    {
        return Err(ApiError::internal(e));
    }
    db.prepare("UPDATE OR IGNORE retries SET index_name = ?1 WHERE index_name = 'errors'")
        .bind_params(&[first.errors_queue().into()])?
        .run()
        .await
        .map_err(ApiError::internal)?;
    Ok(())
}

/// Queues every record written before records took the incumbent's shape (they have no `type`) for the
/// indexer's retry pass, which re-reads it from chain and writes it anew (bounded per run like any retry). Runs
/// once per database: the marker row and the queueing are one transaction, and a second run fails on the marker.
async fn reindex_old_records(db: &D1Database) -> ApiResult<()> {
    let marker = db.prepare("INSERT INTO schema_marks (name) VALUES ('records_v2_requeued')");
    let requeue = db.prepare(
        "INSERT OR IGNORE INTO retries (index_name, object_id, address, token_id, attempts, next_attempt_at, reason) \
         SELECT index_name, object_id, address, token_id, 0, 0, 'RECORD_SHAPE' FROM records \
         WHERE json_extract(record, '$.type') IS NULL",
    );
    if let Err(e) = db.batch(vec![marker, requeue]).await
        && !e.to_string().contains("UNIQUE constraint failed")
    {
        return Err(ApiError::internal(e));
    }
    Ok(())
}

/// One-time data migrations already run in this database.
const MARKS: &str = "CREATE TABLE IF NOT EXISTS schema_marks (name TEXT PRIMARY KEY)";

/// The largest integer a JavaScript number (and so a D1 parameter) holds exactly: 2^53 − 1.
#[allow(clippy::cast_possible_wrap)] // 2^53 − 1 fits an i64
pub(crate) const MAX_SAFE_INTEGER: i64 = profile_relayer::json_shape::MAX_SAFE_INTEGER as i64;

/// A value bound to a statement parameter (`?1`, `?2`, …).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Param<'a> {
    /// SQL `NULL`.
    Null,
    /// An integer; bound only within ±[`MAX_SAFE_INTEGER`].
    Int(i128),
    /// A floating-point number.
    Real(f64),
    /// Text.
    Text(Cow<'a, str>),
}

/// An integer parameter outside ±[`MAX_SAFE_INTEGER`]: as a JavaScript number it would be rounded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OutOfRange(pub(crate) i128);

impl std::fmt::Display for OutOfRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "D1 parameter {} is outside ±(2^53 − 1)", self.0)
    }
}

impl Param<'_> {
    /// The workers-rs value D1 receives: small integers as `Integer`, larger safe ones as `Real` (exact below
    /// 2^53), anything beyond refused.
    pub(crate) fn d1_type(&self) -> Result<D1Type<'_>, OutOfRange> {
        Ok(match self {
            Self::Null => D1Type::Null,
            Self::Int(n) => match i32::try_from(*n) {
                Ok(small) => D1Type::Integer(small),
                // exact: |n| < 2^53
                Err(_) if n.unsigned_abs() <= MAX_SAFE_INTEGER.unsigned_abs().into() => {
                    D1Type::Real(*n as f64)
                }
                Err(_) => return Err(OutOfRange(*n)),
            },
            Self::Real(x) => D1Type::Real(*x),
            Self::Text(t) => D1Type::Text(t),
        })
    }
}

macro_rules! int_param {
    ($($t:ty),*) => {$(
        impl From<$t> for Param<'_> {
            fn from(n: $t) -> Self {
                Self::Int(i128::from(n))
            }
        }
    )*};
}
int_param!(u8, u16, u32, u64, i32, i64);

impl From<f64> for Param<'_> {
    fn from(x: f64) -> Self {
        Self::Real(x)
    }
}

impl<'a> From<&'a str> for Param<'a> {
    fn from(t: &'a str) -> Self {
        Self::Text(Cow::Borrowed(t))
    }
}

impl<'a> From<&'a String> for Param<'a> {
    fn from(t: &'a String) -> Self {
        Self::Text(Cow::Borrowed(t))
    }
}

impl From<String> for Param<'_> {
    fn from(t: String) -> Self {
        Self::Text(Cow::Owned(t))
    }
}

impl<'a, T: Into<Self>> From<Option<T>> for Param<'a> {
    fn from(v: Option<T>) -> Self {
        v.map_or(Self::Null, Into::into)
    }
}

/// A statement used with types: parameters bound as [`Param`]s, rows read into structs, D1 failures as 500s.
pub(crate) trait Statement: Sized {
    /// Binds `params` in order (`?1`, `?2`, …); an integer outside the safe range is an internal error.
    fn bind_params(self, params: &[Param<'_>]) -> ApiResult<Self>;

    /// The first row, if any.
    async fn row<T: DeserializeOwned>(&self) -> ApiResult<Option<T>>;

    /// Every row.
    async fn rows<T: DeserializeOwned>(&self) -> ApiResult<Vec<T>>;
}

impl Statement for D1PreparedStatement {
    fn bind_params(self, params: &[Param<'_>]) -> ApiResult<Self> {
        let values = params
            .iter()
            .map(Param::d1_type)
            .collect::<Result<Vec<_>, _>>()
            .map_err(ApiError::internal)?;
        Ok(self.bind_refs(&values)?)
    }

    async fn row<T: DeserializeOwned>(&self) -> ApiResult<Option<T>> {
        self.first(None).await.map_err(ApiError::internal)
    }

    async fn rows<T: DeserializeOwned>(&self) -> ApiResult<Vec<T>> {
        self.all()
            .await
            .map_err(ApiError::internal)?
            .results()
            .map_err(ApiError::internal)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d1(p: Param<'_>) -> Result<String, OutOfRange> {
        p.d1_type().map(|t| format!("{t:?}"))
    }

    #[test]
    fn integers_are_exact_or_refused() {
        assert_eq!(d1(Param::from(7u64)).as_deref(), Ok("Integer(7)"));
        assert_eq!(d1(Param::from(-3i64)).as_deref(), Ok("Integer(-3)"));
        assert_eq!(
            d1(Param::from(u64::from(u32::MAX))).as_deref(),
            Ok("Real(4294967295.0)")
        );
        assert_eq!(
            d1(Param::from(1_700_000_000_000u64)).as_deref(),
            Ok("Real(1700000000000.0)")
        );
        assert_eq!(
            d1(Param::from((1u64 << 53) - 1)).as_deref(),
            Ok("Real(9007199254740991.0)")
        );
        assert_eq!(
            d1(Param::from(-((1i64 << 53) - 1))).as_deref(),
            Ok("Real(-9007199254740991.0)")
        );
        assert_eq!(d1(Param::from(1u64 << 53)), Err(OutOfRange(1 << 53)));
        assert_eq!(d1(Param::from(-(1i64 << 53))), Err(OutOfRange(-(1 << 53))));
        assert_eq!(d1(Param::from(u64::MAX)), Err(OutOfRange(i128::from(u64::MAX))));
        assert_eq!(d1(Param::from(i64::MIN)), Err(OutOfRange(i128::from(i64::MIN))));
    }

    #[test]
    fn text_null_and_real() {
        assert_eq!(d1(Param::from("a")).as_deref(), Ok("Text(\"a\")"));
        assert_eq!(d1(Param::from(String::from("b"))).as_deref(), Ok("Text(\"b\")"));
        assert_eq!(d1(Param::from(None::<&str>)).as_deref(), Ok("Null"));
        assert_eq!(d1(Param::from(Some(5u32))).as_deref(), Ok("Integer(5)"));
        assert_eq!(d1(Param::from(1.5f64)).as_deref(), Ok("Real(1.5)"));
    }
}
