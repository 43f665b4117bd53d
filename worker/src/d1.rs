//! The D1 database. Its schema is the SQL files of `worker/migrations/`, applied by wrangler
//! (`wrangler d1 migrations apply DB`, `migrations_dir` in `wrangler.toml`) before the Worker runs: the dev stack and
//! the tests apply them when they start the Worker, a deployment before `wrangler deploy` (README, "Deploying").
//! The Worker creates no table: a database missing one of [`MIGRATIONS`] answers `CONFIGURATION_ERROR` naming it (checked once
//! per isolate, and by `/ready`).
//!
//! Statements bind typed [`Param`]s ([`Statement::bind_params`]): integers are checked against JavaScript's safe range
//! (D1 takes numbers as `f64`), so a value above 2^53 − 1 is refused instead of silently rounded.

use std::{borrow::Cow, cell::Cell};

use serde::{Deserialize, de::DeserializeOwned};

use worker::{D1Database, D1PreparedStatement, D1Type, Env};

use crate::error::{ApiError, ApiResult};

/// The migrations this build reads the database with, in order: the files of `worker/migrations/` (a test keeps the
/// two lists equal).
pub(crate) const MIGRATIONS: &[&str] = &[
    "0001_initial.sql",
    "0002_checkpoint_cursor.sql",
    "0003_unindexable_per_chain.sql",
    "0004_requeue_old_records.sql",
    "0005_search_typos.sql",
    "0006_checkpoint_hashes.sql",
    "0007_algolia_deletes.sql",
    "0008_graph.sql",
];

thread_local! {
    static MIGRATED: Cell<bool> = const { Cell::new(false) };
}

/// The D1 database, once every migration of [`MIGRATIONS`] is found applied (checked until it is, then once per
/// isolate).
///
/// # Errors
/// `CONFIGURATION_ERROR` naming the first migration not applied.
pub async fn db(env: &Env) -> ApiResult<D1Database> {
    let db = env.d1("DB")?;
    if !MIGRATED.with(Cell::get) {
        if let Some(missing) = missing_migration(&db).await? {
            return Err(ApiError::config(format!(
                "the D1 database lacks migration {missing}: apply worker/migrations (wrangler d1 migrations apply DB)"
            )));
        }
        MIGRATED.with(|c| c.set(true));
    }
    Ok(db)
}

/// The first of [`MIGRATIONS`] wrangler has not recorded as applied (in its `d1_migrations` table), if any.
///
/// # Errors
/// 500 when D1 fails.
pub async fn missing_migration(db: &D1Database) -> ApiResult<Option<&'static str>> {
    #[derive(Deserialize)]
    struct Name {
        name: String,
    }
    let tracked: Option<Name> = db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'd1_migrations'")
        .row()
        .await?;
    let applied: Vec<Name> = match tracked {
        Some(_) => db.prepare("SELECT name FROM d1_migrations").rows().await?,
        None => Vec::new(),
    };
    Ok(MIGRATIONS
        .iter()
        .find(|m| !applied.iter().any(|a| a.name == **m))
        .copied())
}

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

    #[test]
    fn migrations_are_the_files_of_the_migrations_dir() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/migrations");
        let mut files: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        files.sort();
        assert_eq!(files, MIGRATIONS);
        let toml = include_str!("../../wrangler.toml");
        // every environment's database is migrated from the same files
        let databases = toml.matches("d1_databases]]").count();
        assert_eq!(databases, 3);
        assert_eq!(
            toml.matches("migrations_dir = \"worker/migrations\"").count(),
            databases
        );
    }

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
