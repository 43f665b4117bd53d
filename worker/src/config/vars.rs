//! Every variable and secret the Worker reads, with its default, listed once ([`VARS`]); and [`Vars`], their
//! values as one request (or one Durable Object) read them. The configuration table of docs/operations.md and the
//! `[vars]` of `wrangler.toml` are checked against [`VARS`] (tests below).

use std::collections::HashMap;

use worker::Env;

use crate::error::{ApiError, ApiResult};

/// What a variable is when it is unset (or blank).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DefaultValue {
    /// Routes that need it answer `CONFIGURATION_ERROR`.
    Required,
    /// Unset: the feature it configures is off (or, for a list, empty).
    Unset,
    /// This value, parsed like a set one.
    Value(&'static str),
    /// Derived from other variables, as described.
    Derived(&'static str),
}

/// A variable (`[vars]`, `wrangler --var`) or a secret (`wrangler secret put`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Var {
    pub name: &'static str,
    pub default: DefaultValue,
    /// A secret: read with `Env::secret`, never in `wrangler.toml`.
    pub secret: bool,
}

const fn var(name: &'static str, default: DefaultValue) -> Var {
    Var {
        name,
        default,
        secret: false,
    }
}

const fn secret(name: &'static str) -> Var {
    Var {
        name,
        default: DefaultValue::Unset,
        secret: true,
    }
}

use self::DefaultValue::{Derived, Required, Unset, Value};

/// Every variable and secret, with its default. Their meanings are the configuration table of docs/operations.md.
pub const VARS: &[Var] = &[
    // the relayer
    var("CHAIN_ID", Required),
    var("RPC_URL", Required),
    var("LSP23_FACTORY", Derived("canonical LUKSO (v0.14.0)")),
    var("UNIVERSAL_PROFILE_INIT", Derived("canonical LUKSO (v0.14.0)")),
    var("KEY_MANAGER_INIT", Derived("canonical LUKSO (v0.14.0)")),
    var("POST_DEPLOYMENT_MODULE", Derived("canonical LUKSO (v0.14.0)")),
    var(
        "UNIVERSAL_RECEIVER_DELEGATE",
        Derived("canonical LUKSO (v0.14.0)"),
    ),
    var("DEPLOY_WAIT_SECONDS", Value("20")),
    var("REPLACE_AFTER_SECONDS", Value("30")),
    // 100 gwei, about a hundred times what LUKSO usually asks (around 1 gwei). A deployment uses ~0.5–0.6 M gas,
    // so one costs at most ~0.06 LYX. A network asking more is congested or under attack: deploys answer
    // `503 FEE_TOO_HIGH` until it calms down instead of draining the relayer, and pending transactions wait at the
    // cap instead of being bumped further.
    var("MAX_FEE_PER_GAS", Value("100000000000")),
    var("RPC_TIMEOUT_SECONDS", Value("10")),
    var("RPC_MAX_RESPONSE_BYTES", Value("4194304")),
    var("RPC_CALL_GAS_CAP", Value("10000000")),
    var("MAX_BODY_BYTES", Value("65536")),
    var("DEFAULT_RATE_LIMIT_PER_MINUTE", Value("60")),
    var("MAX_DEPLOY_DATA_BYTES", Value("16384")),
    var("MAX_TRANSACTION_GAS", Value("10000000")),
    var("MAX_GAS_PER_DAY", Value("500000000")),
    var("DEFAULT_KEY_GAS_BUDGET_PER_MONTH", Value("100000000")),
    var("MONTHLY_GAS_QUOTA", Value("20000000")),
    // off unless set: a newly registered profile's quota for its first WARMUP_DAYS
    var("WARMUP_GAS_QUOTA", Unset),
    var("WARMUP_DAYS", Value("7")),
    var("MAX_EXECUTE_PAYLOAD_BYTES", Value("16384")),
    var("QUOTA_SIGNATURE_WINDOW_SECONDS", Value("300")),
    // an hour: far longer than a relayed transaction takes to be mined (fees are bumped after REPLACE_AFTER_SECONDS)
    var("RESERVATION_TTL_SECONDS", Value("3600")),
    // fair shares (crate::shares): no one party takes the day from everyone else
    var("FAIR_SHARE_PERCENT", Value("10")),
    var("KEY_SHARE_PERCENT", Value("25")),
    var("TRUSTED_RESERVE_PERCENT", Value("20")),
    var("TRUSTED_API_KEYS", Unset),
    var("MAX_REGISTRATIONS_PER_KEY_PER_DAY", Value("500")),
    var("MAX_REGISTRATIONS_PER_CLIENT_PER_DAY", Value("20")),
    var("TX_RECORD_DAYS", Value("30")),
    var("UNIVERSAL_PROFILE_IMPLEMENTATIONS", Unset),
    var("KEY_MANAGER_IMPLEMENTATIONS", Unset),
    var("PUBLIC_RATE_LIMIT_PER_MINUTE", Value("120")),
    secret("RELAYER_PRIVATE_KEY"),
    secret("RELAYER_PRIVATE_KEYS"),
    // operators
    secret("ADMIN_TOKEN"),
    var("ADMIN_FAILURES_PER_MINUTE", Value("10")),
    // 0.1 LYX: enough for a few deployments at the default fee cap
    var("MIN_RELAYER_BALANCE", Value("100000000000000000")),
    // an hour of LUKSO's 12-second blocks
    var("READY_MAX_INDEXER_LAG", Value("300")),
    var("READY_RATE_LIMIT_PER_MINUTE", Value("60")),
    // webhooks: plain http only to this machine, for local development (like METADATA_ALLOW_HTTP)
    var("WEBHOOK_ALLOW_HTTP", Value("false")),
    var("WEBHOOK_TIMEOUT_SECONDS", Value("10")),
    var("LOW_BALANCE_ALERT_WEI", Derived("`MIN_RELAYER_BALANCE`")),
    // the chains of the lookup API, search and the indexer
    var("CHAINS", Derived("`CHAIN_ID` with `RPC_URL`, `INDEX_PREFIX`")),
    var("INDEX_PREFIX", Value("dev_local")),
    var("INDEXER_START_BLOCK", Value("0")),
    // past finality: LUKSO (42, 4201) 96 blocks = 3 epochs of 32 12-second slots (Casper FFG finalizes within ~2
    // epochs after a block's epoch), other chains 128 (config/chains.rs `default_confirmations`)
    var(
        "INDEXER_CONFIRMATIONS",
        Derived("per chain: 96 on LUKSO (42, 4201), 128 elsewhere"),
    ),
    var("INDEXER_MAX_BLOCKS", Value("2000")),
    // the indexer
    var("INDEXER_MAX_WINDOW", Value("200000")),
    var("INDEXER_TARGET_LOGS", Value("500")),
    var("INDEXER_RETRY_SECONDS", Value("30")),
    var("INDEXER_MAX_SECONDS", Value("40")),
    var("INDEXER_MAX_SUBREQUESTS", Value("900")),
    var("INDEXER_MAX_ROWS", Value("2000")),
    var("INDEXER_CONCURRENCY", Value("6")),
    var("INDEXER_INTERVAL_SECONDS", Value("5")),
    var("METADATA_MAX_BYTES", Value("2097152")),
    var("METADATA_TIMEOUT_SECONDS", Derived("`IPFS_TIMEOUT_SECONDS`")),
    var("METADATA_ALLOW_HTTP", Value("false")),
    var("PUBLIC_BASE_URL", Unset),
    // lookups and search
    var("LOOKUP_CACHE_SECONDS", Value("60")),
    var("LOOKUP_MISS_SECONDS", Value("600")),
    var("LOOKUP_RATE_LIMIT_PER_MINUTE", Value("300")),
    var("ALGOLIA_APP_ID", Unset),
    secret("ALGOLIA_ADMIN_KEY"),
    var("ALGOLIA_HOST", Derived("`https://<ALGOLIA_APP_ID>.algolia.net`")),
    var("ALGOLIA_MAX_RECORD_BYTES", Value("10000")),
    // IPFS and images
    var("IPFS_GATEWAYS", Unset),
    var("IPFS_HEDGE_MS", Value("250")),
    var("IPFS_TIMEOUT_SECONDS", Value("15")),
    var("IPFS_MAX_BYTES", Value("10485760")),
    var("UPLOAD_MAX_BYTES", Value("5242880")),
    var("UPLOAD_BYTES_PER_HOUR", Value("104857600")),
    var("IPFS_CACHE_MAX_BYTES", Value("1073741824")),
    var("IPFS_ALLOW_UNVERIFIED", Value("false")),
    var("IPFS_STREAM_MIN_BYTES", Value("262144")),
    var("IPFS_MISS_RATE_LIMIT_PER_MINUTE", Value("120")),
    var("IMAGE_CACHE_MAX_BYTES", Value("268435456")),
    secret("UPLOAD_JWT_SECRET"),
    var("UPLOAD_JWT_ISSUERS", Value("extension")),
    var("UPLOAD_JWT_SKEW_SECONDS", Value("30")),
    var("UPLOAD_JWT_RATE_LIMIT_PER_MINUTE", Value("30")),
    // tests only, never set in a deployment
    var("CLOCK_OFFSET_SECONDS", Value("0")),
    var("PANIC_TEST_ROUTE", Value("false")),
    var("ANALYTICS_LOG", Value("false")),
];

/// The entry of `name`, `None` for a name not in [`VARS`].
fn entry(name: &str) -> Option<&'static Var> {
    VARS.iter().find(|v| v.name == name)
}

/// The values of [`VARS`] as set in one environment: each read once, blank ones as unset. The `CHAINS` var may
/// also be a TOML/JSON array in `[vars]`, which reaches the Worker as an object: it is kept as JSON text.
#[derive(Clone, Default)]
pub struct Vars {
    set: HashMap<&'static str, String>,
}

impl core::fmt::Debug for Vars {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        // values may be secrets or RPC URLs with keys: names only
        f.debug_list().entries(self.set.keys()).finish()
    }
}

impl Vars {
    /// Reads every variable and secret of [`VARS`] from `env`.
    pub fn read(env: &Env) -> Self {
        let mut set = HashMap::new();
        for v in VARS {
            let value = if v.secret {
                env.secret(v.name).ok().map(|s| s.to_string())
            } else {
                env.var(v.name).ok().map(|s| s.to_string()).or_else(|| {
                    // a `[vars]` array reaches the Worker as an object
                    (v.name == "CHAINS")
                        .then(|| env.object_var::<serde_json::Value>(v.name).ok())
                        .flatten()
                        .filter(|j| !j.is_null())
                        .map(|j| j.as_str().map_or_else(|| j.to_string(), str::to_owned))
                })
            };
            if let Some(value) = value.filter(|s| !s.trim().is_empty()) {
                set.insert(v.name, value);
            }
        }
        Self { set }
    }

    /// Values given by name (tests).
    #[cfg(test)]
    pub fn of(pairs: &[(&'static str, &str)]) -> Self {
        Self {
            set: pairs.iter().map(|(k, v)| (*k, (*v).to_owned())).collect(),
        }
    }

    /// The value as set, `None` when unset or blank (no default).
    pub fn get(&self, name: &str) -> Option<&str> {
        self.set.get(name).map(String::as_str)
    }

    /// The value as set, trimmed; `None` when unset or blank.
    pub fn text(&self, name: &str) -> Option<&str> {
        self.get(name).map(str::trim)
    }

    /// The value, or its default from [`VARS`]; `CONFIGURATION_ERROR` when it is required and unset.
    fn text_or_default(&self, name: &str) -> ApiResult<Option<&str>> {
        if let Some(v) = self.text(name) {
            return Ok(Some(v));
        }
        match entry(name).map(|v| v.default) {
            Some(Value(d)) => Ok(Some(d)),
            Some(Required) => Err(ApiError::config(format!("{name} is not set"))),
            Some(Unset | Derived(_)) => Ok(None),
            None => Err(ApiError::config(format!("{name} is not a known variable"))),
        }
    }

    /// A number, its default from [`VARS`] when unset; `CONFIGURATION_ERROR` naming it when it is not a number.
    pub fn number<T: core::str::FromStr>(&self, name: &str) -> ApiResult<T> {
        self.optional_number(name)?
            .ok_or_else(|| ApiError::config(format!("{name} has no default")))
    }

    /// A number, `None` when unset and without a default value.
    pub fn optional_number<T: core::str::FromStr>(&self, name: &str) -> ApiResult<Option<T>> {
        self.text_or_default(name)?
            .map(|v| {
                v.parse()
                    .map_err(|_| ApiError::config(format!("{name} must be a number")))
            })
            .transpose()
    }

    /// `true` or `false`, its default from [`VARS`] when unset.
    pub fn flag(&self, name: &str) -> ApiResult<bool> {
        match self.text_or_default(name)? {
            Some("true") => Ok(true),
            Some("false") | None => Ok(false),
            Some(_) => Err(ApiError::config(format!("{name} must be true or false"))),
        }
    }

    /// A comma-separated list (blank items dropped), its default from [`VARS`] when unset.
    pub fn list(&self, name: &str) -> ApiResult<Vec<String>> {
        Ok(self
            .text_or_default(name)?
            .unwrap_or_default()
            .split(',')
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
            .collect())
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn every_default_value_parses_and_names_are_unique() {
        let vars = Vars::default();
        for v in VARS {
            assert_eq!(
                VARS.iter().filter(|w| w.name == v.name).count(),
                1,
                "{} listed twice",
                v.name
            );
            if let Value(d) = v.default {
                let parses = d.parse::<u128>().is_ok()
                    || d.parse::<i64>().is_ok()
                    || ["true", "false"].contains(&d)
                    || vars.list(v.name).is_ok_and(|l| !l.is_empty());
                assert!(parses, "{}'s default {d:?}", v.name);
            }
        }
    }

    #[test]
    fn unset_takes_the_default_and_malformed_is_a_configuration_error() {
        let vars = Vars::of(&[
            ("MAX_BODY_BYTES", " 100 "),
            ("INDEXER_MAX_ROWS", "many"),
            ("METADATA_ALLOW_HTTP", "yes"),
        ]);
        assert_eq!(vars.number::<usize>("MAX_BODY_BYTES"), Ok(100));
        assert_eq!(vars.number::<u64>("DEPLOY_WAIT_SECONDS"), Ok(20));
        let err = vars.number::<u32>("INDEXER_MAX_ROWS").unwrap_err();
        assert_eq!(err.code, "CONFIGURATION_ERROR");
        assert_eq!(err.message, "INDEXER_MAX_ROWS must be a number");
        assert_eq!(
            vars.flag("METADATA_ALLOW_HTTP").unwrap_err().code,
            "CONFIGURATION_ERROR"
        );
        assert_eq!(vars.flag("PANIC_TEST_ROUTE"), Ok(false));
        assert_eq!(
            vars.number::<u64>("CHAIN_ID").unwrap_err().message,
            "CHAIN_ID is not set"
        );
        assert_eq!(vars.optional_number::<u64>("METADATA_TIMEOUT_SECONDS"), Ok(None));
        assert_eq!(vars.list("UPLOAD_JWT_ISSUERS"), Ok(vec!["extension".to_owned()]));
        assert_eq!(
            vars.number::<u64>("NOT_A_VAR").unwrap_err().code,
            "CONFIGURATION_ERROR"
        );
    }

    /// The rows of the configuration table of docs/operations.md (after "| variable | meaning | default |"): the
    /// names in the first column, and the default column.
    fn doc_rows() -> Vec<(Vec<String>, String)> {
        let doc = include_str!("../../../docs/operations.md");
        let table = doc
            .split("| variable | meaning | default |")
            .nth(1)
            .expect("docs/operations.md has the configuration table");
        let mut rows = Vec::new();
        for line in table.lines().skip(2).take_while(|l| l.starts_with('|')) {
            let cells: Vec<&str> = line.split(" | ").collect();
            let names = cells[0]
                .split('`')
                .skip(1)
                .step_by(2)
                .map(str::to_owned)
                .collect();
            let default = cells
                .last()
                .unwrap_or(&"")
                .trim_end_matches(" |")
                .trim()
                .to_owned();
            rows.push((names, default));
        }
        rows
    }

    #[test]
    fn docs_table_lists_every_variable_once_with_its_default() {
        let rows = doc_rows();
        let names: Vec<&String> = rows.iter().flat_map(|(n, _)| n).collect();
        for v in VARS {
            assert_eq!(
                names.iter().filter(|n| **n == v.name).count(),
                1,
                "docs/operations.md's configuration table must list {} once",
                v.name
            );
        }
        for (row, default) in &rows {
            for n in row {
                let var = entry(n)
                    .unwrap_or_else(|| panic!("docs/operations.md lists {n}, which config/vars.rs does not"));
                let ok = match var.default {
                    Value(d) => default.starts_with(d),
                    Required => default.starts_with("required"),
                    Unset => var.secret || default.starts_with("unset"),
                    Derived(text) => default == text,
                };
                assert!(
                    ok,
                    "docs/operations.md's default of {n} is {default:?}, config/vars.rs says {:?}",
                    var.default
                );
            }
        }
    }

    #[test]
    fn wrangler_toml_sets_only_known_variables() {
        let toml = include_str!("../../../wrangler.toml");
        let mut in_vars = false;
        let mut seen = 0;
        for line in toml.lines() {
            let line = line.trim();
            if line.starts_with('[') {
                in_vars = line == "[vars]" || (line.starts_with("[env.") && line.ends_with(".vars]"));
                continue;
            }
            if !in_vars || line.is_empty() || line.starts_with('#') {
                continue;
            }
            let name = line.split('=').next().unwrap_or_default().trim();
            let var =
                entry(name).unwrap_or_else(|| panic!("wrangler.toml sets {name}, unknown to config/vars.rs"));
            assert!(!var.secret, "{name} is a secret: never in wrangler.toml");
            seen += 1;
        }
        assert!(seen > 50, "the [vars] tables were read ({seen} entries)");
    }
}
