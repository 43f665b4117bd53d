//! Genuine profiles only: the relayer pays for a profile only when its code and its KeyManager's are LUKSO's and
//! the two are linked (docs/gasless.md, "Genuine profiles only"). The judging is the core's
//! ([`profile_relayer::genuine`]); this module reads the code, `owner()` and `target()` over RPC:
//!
//! ```text
//! is_up(a)    := code(a) is an ERC-1167 proxy ? keccak(code(implementation)) ∈ UP implementations
//!                                             : keccak(code(a)) ∈ full UPs           (+ UNIVERSAL_PROFILE_IMPLEMENTATIONS)
//! is_km(a)    := the same with the KeyManager hashes                                 (+ KEY_MANAGER_IMPLEMENTATIONS)
//! genuine(up) := is_up(up) ∧ km = up.owner() ∧ is_km(km) ∧ km.target() == up
//! ```
//!
//! Used by registration, `/api/execute` and `/api/quota`. The reads run two at a time (the profile's code with its
//! `owner()`, then the owner's code with its `target()`); an implementation's code hash is kept per instance.

use std::{cell::RefCell, collections::HashMap};

use alloy_primitives::{Address, B256, keccak256};
use futures_util::future::join;
use profile_relayer::{
    erc165,
    genuine::{Contract, Verdict, decode_target, target_calldata},
};

use crate::{
    config::RelayerConfig,
    error::{ApiError, ApiResult, Code},
    rpc::Rpc,
};

/// Most implementations whose code hash one instance keeps.
const KEPT_IMPLEMENTATIONS: usize = 256;

thread_local! {
    /// `keccak256` of implementations' runtime code by `(chain id, address)`. Only code that exists is kept: an
    /// address without code may get some later, while code that exists stays (no known implementation can
    /// self-destruct, and since EIP-6780 nothing deployed earlier can).
    static IMPLEMENTATIONS: RefCell<HashMap<(u64, Address), B256>> = RefCell::new(HashMap::new());
}

/// `keccak256` of the runtime code at `implementation`.
async fn implementation_hash(rpc: &Rpc, chain_id: u64, implementation: Address) -> ApiResult<B256> {
    let key = (chain_id, implementation);
    if let Some(hash) = IMPLEMENTATIONS.with(|kept| kept.borrow().get(&key).copied()) {
        return Ok(hash);
    }
    let code = rpc.code(implementation).await?;
    let hash = keccak256(&code);
    if !code.is_empty() {
        IMPLEMENTATIONS.with(|kept| {
            let mut kept = kept.borrow_mut();
            if kept.len() < KEPT_IMPLEMENTATIONS {
                kept.insert(key, hash);
            }
        });
    }
    Ok(hash)
}

/// The verdict on the code at `address` as `contract` (a proxy judged by its implementation's code).
async fn verdict(
    config: &RelayerConfig,
    rpc: &Rpc,
    contract: Contract,
    address: Address,
) -> ApiResult<Verdict> {
    let code = rpc.code(address).await?;
    Ok(match config.accepted_code.verdict(contract, &code, None) {
        Verdict::Proxy(implementation) => {
            let hash = implementation_hash(rpc, config.chain_id, implementation).await?;
            config.accepted_code.verdict(contract, &code, Some(hash))
        }
        verdict => verdict,
    })
}

/// What was judged, for messages: "runtime code 0x…" or "the implementation's runtime code 0x…".
fn judged(code_hash: B256, proxy: bool) -> String {
    if proxy {
        format!("an ERC-1167 proxy whose implementation's runtime code hash is {code_hash}")
    } else {
        format!("runtime code hash {code_hash}")
    }
}

/// The refusal of a profile whose verdict is not genuine: an unknown contract claiming LSP0 is refused as unknown
/// code (403), one that does not even claim it is no profile (404).
async fn refuse_profile(rpc: &Rpc, profile: Address, verdict: Verdict) -> ApiError {
    let (code_hash, proxy) = match verdict {
        Verdict::Unknown { code_hash, proxy } => (code_hash, proxy),
        Verdict::NoCode => {
            return ApiError::new(Code::ProfileNotFound, format!("no contract at {profile}"));
        }
        // a proxy is always judged with its implementation's hash; an accepted one is not refused
        Verdict::Proxy(_) | Verdict::Genuine { .. } => {
            return ApiError::internal(format!("{profile}: refused with verdict {verdict:?}"));
        }
    };
    let claims_lsp0 = match rpc
        .eth_call_or_revert(profile, &erc165::supports_interface_calldata(erc165::LSP0))
        .await
    {
        Ok(out) => out.is_some_and(|out| erc165::decode_supports_interface(&out)),
        // the node failing is no answer about the profile
        Err(e) => return e.into(),
    };
    if claims_lsp0 {
        ApiError::new(
            Code::ProfileCodeUnknown,
            format!(
                "{profile} is {}, not a known LUKSO Universal Profile: this relayer serves only LUKSO's code \
                 (an operator who trusts it adds the hash to UNIVERSAL_PROFILE_IMPLEMENTATIONS)",
                judged(code_hash, proxy)
            ),
        )
    } else {
        // a well-formed request naming a contract that is no profile: there is no profile to register (404)
        ApiError::new(
            Code::NotAUniversalProfile,
            format!(
                "{profile} does not support the LSP0 interface (0x24871b3d) and is no known Universal Profile"
            ),
        )
    }
}

/// The KeyManager of `profile` when the profile is genuine: LUKSO's Universal Profile code, owned by LUKSO's
/// KeyManager code whose `target()` is the profile. Claimed interfaces are never enough.
///
/// # Errors
/// 404 `PROFILE_NOT_FOUND` (no code) / `NOT_A_UNIVERSAL_PROFILE`, 403 `UNKNOWN_PROFILE_CODE`, 400
/// `NOT_A_KEY_MANAGER` (the owner has no code), 403 `UNKNOWN_KEY_MANAGER_CODE` / `KEY_MANAGER_TARGET_MISMATCH`;
/// RPC failures.
pub async fn key_manager_of(config: &RelayerConfig, rpc: &Rpc, profile: Address) -> ApiResult<Address> {
    let (profile_verdict, owner) = join(
        verdict(config, rpc, Contract::UniversalProfile, profile),
        rpc.eth_call_or_revert(profile, &erc165::owner_calldata()),
    )
    .await;
    let profile_verdict = profile_verdict?;
    if !profile_verdict.is_genuine() {
        return Err(refuse_profile(rpc, profile, profile_verdict).await);
    }
    let owner = owner?.and_then(|out| erc165::decode_owner(&out)).ok_or_else(|| {
        ApiError::new(
            Code::NotAKeyManager,
            format!("{profile} answers no owner(); this relay serves KeyManager-owned profiles"),
        )
    })?;
    let (key_manager, target) = join(
        verdict(config, rpc, Contract::KeyManager, owner),
        rpc.eth_call_or_revert(owner, &target_calldata()),
    )
    .await;
    match key_manager? {
        Verdict::Genuine { .. } => {}
        Verdict::NoCode => {
            return Err(ApiError::new(
                Code::NotAKeyManager,
                format!(
                    "the owner {owner} of {profile} has no code (an EOA?), not an LSP6 KeyManager; this relay \
                     serves KeyManager-owned profiles"
                ),
            ));
        }
        Verdict::Unknown { code_hash, proxy } => {
            return Err(ApiError::new(
                Code::KeyManagerCodeUnknown,
                format!(
                    "the owner {owner} of {profile} is {}, not a known LUKSO LSP6 KeyManager (an operator who \
                     trusts it adds the hash to KEY_MANAGER_IMPLEMENTATIONS)",
                    judged(code_hash, proxy)
                ),
            ));
        }
        verdict @ Verdict::Proxy(_) => {
            return Err(ApiError::internal(format!("{owner}: unjudged proxy {verdict:?}")));
        }
    }
    let target = target?.and_then(|out| decode_target(&out));
    if target != Some(profile) {
        let controls = target.map_or_else(|| "answers no target()".to_owned(), |t| format!("controls {t}"));
        return Err(ApiError::new(
            Code::KeyManagerTargetMismatch,
            format!("the KeyManager {owner} owning {profile} {controls}, not this profile"),
        ));
    }
    Ok(owner)
}
