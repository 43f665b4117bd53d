//! The chains a deployment serves: [`ChainConfig`] and the parsing of `CHAINS` ([`parse_chains`]). Pure: the
//! vars are read by [`super::chains()`].

use profile_relayer::networks::parse_chain_id;
use serde_json::Value;

use crate::rpc::{Rpc, RpcBounds};

/// One chain this deployment serves with the lookup API, search and the indexer (`CHAINS`; by default the
/// relayer's `CHAIN_ID` / `RPC_URL` with `INDEX_PREFIX` and the `INDEXER_*` vars).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainConfig {
    /// EIP-155 chain id.
    pub chain_id: u64,
    /// JSON-RPC endpoint (never logged or echoed: it may hold an API key).
    pub rpc_url: String,
    /// Timeout of one RPC call (`RPC_TIMEOUT_SECONDS`).
    pub rpc_timeout_ms: u64,
    /// Size of RPC answers and gas of calls (`RPC_MAX_RESPONSE_BYTES`, `RPC_CALL_GAS_CAP`).
    pub rpc_bounds: RpcBounds,
    /// Prefix of the chain's index names (`<prefix>_universal_profiles`, `<prefix>_assets`); unique per chain.
    pub index_prefix: String,
    /// Block the indexer starts from when the chain has no checkpoint yet.
    pub start_block: u64,
    /// Blocks the indexer stays behind the head.
    pub confirmations: u64,
    /// The first `eth_getLogs` window, in blocks.
    pub max_blocks: u64,
}

impl ChainConfig {
    /// The RPC client.
    pub fn rpc(&self) -> Rpc {
        Rpc::new(&self.rpc_url, self.rpc_timeout_ms, self.rpc_bounds)
    }

    /// The profiles index.
    pub fn profiles_index(&self) -> String {
        format!("{}_universal_profiles", self.index_prefix)
    }

    /// The assets index.
    pub fn assets_index(&self) -> String {
        format!("{}_assets", self.index_prefix)
    }

    /// `(profiles, assets)`.
    pub fn index_names(&self) -> (String, String) {
        (self.profiles_index(), self.assets_index())
    }

    /// The name retries of unindexable candidates are queued under (`retries.index_name`).
    pub fn errors_queue(&self) -> String {
        format!("{}_errors", self.index_prefix)
    }
}

/// What a `CHAINS` entry leaves out: the deployment-wide vars.
#[derive(Debug, Clone)]
pub struct ChainDefaults {
    /// `CHAIN_ID`, the relayer's chain.
    pub relayer_chain: Option<u64>,
    /// `RPC_URL`, the relayer's node.
    pub relayer_rpc: Option<String>,
    /// `INDEX_PREFIX` (`dev_local` when unset).
    pub index_prefix: String,
    /// `RPC_TIMEOUT_SECONDS` in ms.
    pub rpc_timeout_ms: u64,
    /// `RPC_MAX_RESPONSE_BYTES`, `RPC_CALL_GAS_CAP`.
    pub rpc_bounds: RpcBounds,
    /// `INDEXER_START_BLOCK`.
    pub start_block: u64,
    /// `INDEXER_CONFIRMATIONS`; unset: [`default_confirmations`] of each chain.
    pub confirmations: Option<u64>,
    /// `INDEXER_MAX_BLOCKS`.
    pub max_blocks: u64,
}

/// LUKSO mainnet's and testnet's default depth: three epochs of 32 slots. LUKSO runs Ethereum's proof of stake
/// (LMD GHOST fork choice, Casper FFG finality, 12-second slots, 32-slot epochs): a block is final once the
/// checkpoint after it is finalized, at most ~2 epochs past the end of its own epoch, so 96 blocks are past finality
/// under normal participation (a missed slot makes 96 blocks take longer, never shorter). Reorganizations shallower
/// than finality happen (late blocks, proposer races): the indexer never reads them.
pub const LUKSO_CONFIRMATIONS: u64 = 96;

/// Any other chain's default depth: its finality is not known here, so more than LUKSO's (set `confirmations` per
/// chain in `CHAINS`, or `INDEXER_CONFIRMATIONS`, for a chain whose finality is known).
pub const OTHER_CONFIRMATIONS: u64 = 128;

/// The blocks a chain's indexer stays behind its head, and its relayer waits before a transaction is final, when
/// neither `CHAINS` nor `INDEXER_CONFIRMATIONS` says: [`LUKSO_CONFIRMATIONS`] on LUKSO mainnet (42) and testnet
/// (4201), [`OTHER_CONFIRMATIONS`] elsewhere. The local stack (anvil, with the chain ids 42/4201) sets it explicitly.
pub const fn default_confirmations(chain_id: u64) -> u64 {
    match chain_id {
        42 | 4201 => LUKSO_CONFIRMATIONS,
        _ => OTHER_CONFIRMATIONS,
    }
}

/// Most chains one deployment serves.
pub const MAX_CHAINS: usize = 16;

const CHAIN_FIELDS: [&str; 6] = [
    "chainId",
    "rpcUrl",
    "indexPrefix",
    "startBlock",
    "confirmations",
    "maxBlocks",
];

fn is_http_url(url: &str) -> bool {
    url::Url::parse(url).is_ok_and(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some())
}

/// The chains of `CHAINS` (a JSON array of `{"chainId", "rpcUrl", "indexPrefix", "startBlock"?,
/// "confirmations"?, "maxBlocks"?}`; `chainId` a number or a decimal / `0x`-hex string; `rpcUrl` may be left out
/// for the relayer's own chain), or, when `CHAINS` is unset, the relayer's one chain. Errors name the entry and
/// field, never a value (an RPC URL may carry an API key).
///
/// # Errors
/// A message for `CONFIGURATION_ERROR`.
pub fn parse_chains(value: Option<&Value>, d: &ChainDefaults) -> Result<Vec<ChainConfig>, String> {
    let Some(value) = value else {
        let chain_id = d.relayer_chain.ok_or("CHAIN_ID is not set")?;
        let rpc_url = d.relayer_rpc.clone().ok_or("RPC_URL is not set")?;
        if !is_http_url(&rpc_url) {
            return Err("RPC_URL must be an http(s) URL".into());
        }
        return Ok(vec![ChainConfig {
            chain_id,
            rpc_url,
            rpc_timeout_ms: d.rpc_timeout_ms,
            rpc_bounds: d.rpc_bounds,
            index_prefix: d.index_prefix.clone(),
            start_block: d.start_block,
            confirmations: d.confirmations.unwrap_or(default_confirmations(chain_id)),
            max_blocks: d.max_blocks.max(1),
        }]);
    };
    let Value::Array(entries) = value else {
        return Err("CHAINS must be a JSON array of chains".into());
    };
    if entries.is_empty() || entries.len() > MAX_CHAINS {
        return Err(format!("CHAINS must list 1 to {MAX_CHAINS} chains"));
    }
    let mut chains: Vec<ChainConfig> = Vec::with_capacity(entries.len());
    for (i, entry) in entries.iter().enumerate() {
        let at = |field: &str| format!("CHAINS[{i}].{field}");
        let Value::Object(fields) = entry else {
            return Err(format!("CHAINS[{i}] must be an object"));
        };
        if let Some(unknown) = fields.keys().find(|k| !CHAIN_FIELDS.contains(&k.as_str())) {
            return Err(format!(
                "CHAINS[{i}] has an unknown field {unknown:?} (known: {})",
                CHAIN_FIELDS.join(", ")
            ));
        }
        let chain_id = match fields.get("chainId") {
            Some(Value::String(s)) => parse_chain_id(s).ok(),
            Some(n @ Value::Number(_)) => crate::plumbing::integer(n).filter(|n| *n > 0),
            _ => None,
        }
        .ok_or_else(|| {
            format!(
                "{} must be a chain id (a number, or a decimal or 0x-hex string)",
                at("chainId")
            )
        })?;
        let rpc_url = match fields.get("rpcUrl") {
            Some(Value::String(url)) => url.trim().to_owned(),
            None if Some(chain_id) == d.relayer_chain => d.relayer_rpc.clone().ok_or("RPC_URL is not set")?,
            None => return Err(format!("{} is missing", at("rpcUrl"))),
            Some(_) => return Err(format!("{} must be a string", at("rpcUrl"))),
        };
        if !is_http_url(&rpc_url) {
            return Err(format!("{} must be an http(s) URL", at("rpcUrl")));
        }
        let index_prefix = match fields.get("indexPrefix") {
            Some(Value::String(p))
                if (1..=64).contains(&p.len())
                    && p.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-') =>
            {
                p.clone()
            }
            None => return Err(format!("{} is missing", at("indexPrefix"))),
            Some(_) => {
                return Err(format!(
                    "{} must be 1 to 64 letters, digits, `_` or `-`",
                    at("indexPrefix")
                ));
            }
        };
        let number = |field: &str, default: u64| match fields.get(field) {
            None => Ok(default),
            Some(v) => crate::plumbing::integer(v)
                .ok_or_else(|| format!("{} must be a non-negative integer", at(field))),
        };
        let chain = ChainConfig {
            chain_id,
            rpc_url,
            rpc_timeout_ms: d.rpc_timeout_ms,
            rpc_bounds: d.rpc_bounds,
            index_prefix,
            start_block: number("startBlock", d.start_block)?,
            confirmations: number(
                "confirmations",
                d.confirmations.unwrap_or(default_confirmations(chain_id)),
            )?,
            max_blocks: number("maxBlocks", d.max_blocks)?.max(1),
        };
        if chains.iter().any(|c| c.chain_id == chain.chain_id) {
            return Err(format!(
                "{}: chain {} is listed twice",
                at("chainId"),
                chain.chain_id
            ));
        }
        if chains.iter().any(|c| c.index_prefix == chain.index_prefix) {
            // two chains in one index would mix their records
            return Err(format!(
                "{}: two chains share the prefix {:?}",
                at("indexPrefix"),
                chain.index_prefix
            ));
        }
        chains.push(chain);
    }
    Ok(chains)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn defaults() -> ChainDefaults {
        ChainDefaults {
            relayer_chain: Some(42),
            relayer_rpc: Some("https://rpc.mainnet.example".into()),
            index_prefix: "prod_mainnet".into(),
            rpc_timeout_ms: 10_000,
            rpc_bounds: RpcBounds::default(),
            start_block: 7,
            confirmations: Some(12),
            max_blocks: 2000,
        }
    }

    #[test]
    fn unset_is_the_relayer_chain() {
        let chains = parse_chains(None, &defaults()).unwrap();
        assert_eq!(chains.len(), 1);
        let c = &chains[0];
        assert_eq!(
            (c.chain_id, c.rpc_url.as_str(), c.index_prefix.as_str()),
            (42, "https://rpc.mainnet.example", "prod_mainnet")
        );
        assert_eq!((c.start_block, c.confirmations, c.max_blocks), (7, 12, 2000));
        assert_eq!(
            c.index_names(),
            (
                "prod_mainnet_universal_profiles".into(),
                "prod_mainnet_assets".into()
            )
        );
        let mut d = defaults();
        d.relayer_chain = None;
        assert_eq!(parse_chains(None, &d).unwrap_err(), "CHAIN_ID is not set");
    }

    #[test]
    fn two_chains_with_their_own_settings() {
        let value = json!([
            { "chainId": 42, "indexPrefix": "prod_mainnet" },
            { "chainId": "0x1069", "rpcUrl": "https://rpc.testnet.example/key", "indexPrefix": "prod_testnet",
              "startBlock": 100, "confirmations": 2.0, "maxBlocks": 0 },
        ]);
        let chains = parse_chains(Some(&value), &defaults()).unwrap();
        assert_eq!(chains[0].rpc_url, "https://rpc.mainnet.example");
        assert_eq!(chains[0].confirmations, 12);
        let t = &chains[1];
        assert_eq!(
            (t.chain_id, t.start_block, t.confirmations, t.max_blocks),
            (4201, 100, 2, 1)
        );
        assert_eq!(t.errors_queue(), "prod_testnet_errors");
    }

    #[test]
    fn confirmations_default_per_chain() {
        let mut d = defaults();
        d.confirmations = None;
        assert_eq!(parse_chains(None, &d).unwrap()[0].confirmations, 96);
        let value = json!([
            { "chainId": 42, "indexPrefix": "a" },
            { "chainId": 4201, "rpcUrl": "https://rpc.testnet.example", "indexPrefix": "b" },
            { "chainId": 1, "rpcUrl": "https://rpc.eth.example", "indexPrefix": "c" },
            { "chainId": 31337, "rpcUrl": "https://rpc.dev.example", "indexPrefix": "d", "confirmations": 0 },
        ]);
        let depths: Vec<u64> = parse_chains(Some(&value), &d)
            .unwrap()
            .iter()
            .map(|c| c.confirmations)
            .collect();
        assert_eq!(depths, [96, 96, 128, 0]);
        // a deployment-wide value wins over the per-chain defaults, an entry's own over both
        d.confirmations = Some(3);
        let depths: Vec<u64> = parse_chains(Some(&value), &d)
            .unwrap()
            .iter()
            .map(|c| c.confirmations)
            .collect();
        assert_eq!(depths, [3, 3, 3, 0]);
    }

    #[test]
    fn malformed_chains_are_refused_without_echoing_values() {
        let secret = "https://user:SECRET@rpc.example";
        let cases = [
            (json!({}), "JSON array"),
            (json!([]), "1 to 16"),
            (json!([1]), "CHAINS[0] must be an object"),
            (
                json!([{ "chainId": 1, "rpcUrl": secret, "indexPrefix": "a", "rpcURL": 1 }]),
                "unknown field \"rpcURL\"",
            ),
            (
                json!([{ "chainId": "0x", "rpcUrl": secret, "indexPrefix": "a" }]),
                "CHAINS[0].chainId",
            ),
            (
                json!([{ "chainId": -1, "rpcUrl": secret, "indexPrefix": "a" }]),
                "CHAINS[0].chainId",
            ),
            (
                json!([{ "chainId": 0, "rpcUrl": secret, "indexPrefix": "a" }]),
                "CHAINS[0].chainId",
            ),
            (
                json!([{ "chainId": 1.5, "rpcUrl": secret, "indexPrefix": "a" }]),
                "CHAINS[0].chainId",
            ),
            (
                json!([{ "chainId": 7, "indexPrefix": "a" }]),
                "CHAINS[0].rpcUrl is missing",
            ),
            (
                json!([{ "chainId": 7, "rpcUrl": "ftp://SECRET", "indexPrefix": "a" }]),
                "CHAINS[0].rpcUrl must be",
            ),
            (
                json!([{ "chainId": 7, "rpcUrl": secret }]),
                "CHAINS[0].indexPrefix is missing",
            ),
            (
                json!([{ "chainId": 7, "rpcUrl": secret, "indexPrefix": "a b" }]),
                "CHAINS[0].indexPrefix must",
            ),
            (
                json!([{ "chainId": 7, "rpcUrl": secret, "indexPrefix": "a", "startBlock": -1 }]),
                "CHAINS[0].startBlock",
            ),
            (
                json!([{ "chainId": 7, "rpcUrl": secret, "indexPrefix": "a" }, { "chainId": "0x7", "rpcUrl": secret, "indexPrefix": "b" }]),
                "listed twice",
            ),
            (
                json!([{ "chainId": 7, "rpcUrl": secret, "indexPrefix": "a" }, { "chainId": 8, "rpcUrl": secret, "indexPrefix": "a" }]),
                "share the prefix",
            ),
        ];
        for (value, expected) in cases {
            let e = parse_chains(Some(&value), &defaults()).unwrap_err();
            assert!(e.contains(expected), "{value}: {e}");
            assert!(!e.contains("SECRET"), "{e}");
        }
    }
}
