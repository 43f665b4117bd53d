//! The LSP15 Transaction Relay Service: `POST /api/execute` (gasless LSP25 `executeRelayCall`) and
//! `POST /api/quota`. No API key (as LSP15): the profile must be registered and the signature must come from one of
//! its controllers. Every check runs before anything is sent, in the order of the checks below, and a refusal sends
//! nothing; the Relayer object then reserves the transaction's gas limit against the profile's monthly quota, the
//! relayer's daily ceiling and their fair shares (one reservation per transaction sent), sends it through its nonce
//! lane and settles it to the receipt's `gasUsed`. The answer comes once the node took the transaction (`202`,
//! `pending`); a client that wants the receipt asks for it with `Prefer: wait=<seconds>` (RFC 7240, at most
//! `DEPLOY_WAIT_SECONDS`) and gets `200` `mined` (or `reverted`) when it came in time.

use alloy_primitives::{Address, B256, U256};
use futures_util::future::join;
use profile_relayer::{
    api::{ExecuteRequest, ExecuteResponse, Quota, QuotaRequest, QuotaResponse},
    lsp2::encode_key_name,
    lsp6::Permissions,
    lsp25::{Revert, decode_get_nonce, get_nonce_calldata},
};
use worker::{Env, Request, Response};

use crate::{
    config::{Config, RelayerConfig},
    error::{ApiError, ApiResult, Code},
    meter::{MeterClient, Subject},
    relayer::{ExecuteJob, execute_id, pool},
    rpc::{Rpc, RpcError},
    shares::Payer,
    store::{self, ProfileRecord},
};

/// The profile's KeyManager, when the profile is genuine: LUKSO's Universal Profile code owned by LUKSO's
/// KeyManager code whose `target()` is the profile ([`crate::genuine`]); claimed interfaces are never enough.
async fn key_manager_of(config: &RelayerConfig, rpc: &Rpc, profile: Address) -> ApiResult<Address> {
    crate::genuine::key_manager_of(config, rpc, profile).await
}

/// The permissions of `controller` on `profile` (`AddressPermissions:Permissions:<address>`).
async fn permissions(rpc: &Rpc, profile: Address, controller: Address) -> ApiResult<Permissions> {
    let key = encode_key_name(
        "AddressPermissions:Permissions:<address>",
        &[controller.to_string()],
    )?;
    let value = rpc
        .eth_call_or_revert(profile, &profile_relayer::erc725y::get_data_calldata(key))
        .await?
        .and_then(|out| profile_relayer::erc725y::decode_get_data(&out))
        .unwrap_or_default();
    Ok(B256::try_from(value.as_ref())
        .map(Permissions::from_bytes32)
        .unwrap_or(Permissions(U256::ZERO)))
}

/// What the signed checks established: the profile's KeyManager and the controller that signed.
struct Signed {
    key_manager: Address,
    signer: Address,
}

/// Checks everything about the call that needs no lane: the genuine profile, the signature, the controller's
/// permission, the nonce and the validity window.
async fn check_signed(config: &RelayerConfig, request: &ExecuteRequest) -> ApiResult<Signed> {
    let rpc = config.rpc();
    let profile = request.address;
    let key_manager = key_manager_of(config, &rpc, profile).await?;
    let signer = request.recover_signer(key_manager, config.chain_id)?;
    let nonce = request.call.nonce;
    let channel = u128::try_from(nonce >> 128).unwrap_or(u128::MAX);
    let nonce_call = get_nonce_calldata(signer, channel);
    // the cheap reads first, together; the simulation only once they pass
    let (granted, expected) = join(
        permissions(&rpc, profile, signer),
        rpc.eth_call_or_revert(key_manager, &nonce_call),
    )
    .await;
    let granted = granted?;
    if granted.0.is_zero() {
        return Err(ApiError::new(
            Code::NotAController,
            format!(
                "the signer {signer} is not a controller of {profile} (wrong key, payload, nonce or chain id?)"
            ),
        ));
    }
    if !granted.contains(Permissions::EXECUTE_RELAY_CALL) {
        return Err(ApiError::new(
            Code::NotAuthorised,
            format!("the controller {signer} lacks the EXECUTE_RELAY_CALL permission on {profile}"),
        ));
    }
    let expected = expected?
        .and_then(|out| decode_get_nonce(&out).ok())
        .ok_or_else(|| ApiError::new(Code::RpcError, "the KeyManager did not answer getNonce"))?;
    if expected.0 != nonce {
        return Err(ApiError::new(
            Code::InvalidRelayNonce,
            format!(
                "the nonce is {nonce}; the KeyManager expects {} for this signer and channel",
                expected.0
            ),
        ));
    }
    request.call.validity_timestamps.check(config.now())?;
    Ok(Signed { key_manager, signer })
}

/// The simulation of a checked call from the lane's signer `relayer`, as it will be sent: the job (not yet
/// reserved).
async fn simulate(
    config: &RelayerConfig,
    request: &ExecuteRequest,
    Signed { key_manager, signer }: Signed,
    relayer: Address,
) -> ApiResult<ExecuteJob> {
    let rpc = config.rpc();
    let profile = request.address;
    let nonce = request.call.nonce;
    let calldata = request.calldata();
    let gas = match rpc.estimate_gas(relayer, key_manager, &calldata).await {
        Ok(gas) => gas,
        Err(RpcError::Node { message, data, .. }) => {
            let revert = data.as_ref().map(|d| Revert::decode(d));
            let mut err: ApiError = match &revert {
                Some(r) => r.to_error(config.now(), &request.call).into(),
                None => ApiError::new(
                    Code::RelayCallReverted,
                    format!("the relay call would revert: {message}"),
                ),
            };
            if let Some(d) = data {
                err.message = format!("{} (revert data {d})", err.message);
            }
            return Err(err);
        }
        Err(e) => return Err(e.into()),
    };
    let gas_limit = crate::signer::gas_limit_for(gas);
    if gas_limit > config.max_transaction_gas {
        return Err(ApiError::new(
            Code::GasLimitTooHigh,
            format!(
                "the call needs {gas_limit} gas; this relayer sends at most {} (MAX_TRANSACTION_GAS)",
                config.max_transaction_gas
            ),
        ));
    }
    Ok(ExecuteJob {
        id: execute_id(config.chain_id, profile, key_manager, signer, nonce),
        profile,
        key_manager,
        calldata: calldata.into(),
        gas_limit,
        payer: Payer {
            controller: Some(signer),
            ..Payer::default()
        },
        wait_ms: Some(0),
        quota: None,
    })
}

/// The `wait` preference of a `Prefer` header (RFC 7240 §4.3), in seconds. The header is read with `sfv` (RFC 9651
/// structured fields), whose dictionary grammar is the one clients send (`wait=10`, `respond-async, wait=5`); a
/// value outside it, or a `wait` that is not a non-negative integer, is no preference — RFC 7240 §2 lets a server
/// ignore what it does not understand.
pub fn preferred_wait(header: Option<&str>) -> Option<u64> {
    let preferences: sfv::Dictionary = sfv::Parser::new(header?).parse().ok()?;
    match preferences.get("wait")? {
        sfv::ListEntry::Item(item) => u64::try_from(i64::from(item.bare_item.as_integer()?)).ok(),
        sfv::ListEntry::InnerList(_) => None,
    }
}

/// The quota of the registered profile `record` now, from its meter.
pub async fn quota(env: &Env, config: &RelayerConfig, record: &ProfileRecord) -> ApiResult<Quota> {
    let now = config.now();
    let total = config.profile_quota(record.registered_at, now);
    let usage = MeterClient::new(env, &Subject::Profile(record.address))?
        .usage(total, now)
        .await?;
    let mut quota = Quota::with_total(total, usage.used, now);
    // the meter's remaining also counts gas reserved by transactions not mined yet
    quota.remaining = usage.remaining;
    Ok(quota)
}

/// `POST /api/execute`.
pub async fn execute(req: Request, env: &Env, config: &Config) -> ApiResult<Response> {
    let config = config.relayer()?;
    let client = crate::ratelimit::client_bucket(&req);
    // the seconds this client waits for the receipt, at most DEPLOY_WAIT_SECONDS; none: the answer once sent
    let waited = preferred_wait(req.headers().get("prefer")?.as_deref())
        .map(|seconds| seconds.min(config.deploy_wait_ms / 1000));
    let body = crate::plumbing::read_body(req, config.max_body_bytes).await?;
    let request = ExecuteRequest::from_json(&body, config.max_execute_payload_bytes)?;
    // the profile's lane (its signer simulates and sends the call): one per profile, so the calls of one LSP25
    // channel are mined in order
    let profile = request.address;
    // registration first: a stranger's address costs one KV read, never a contract's answers nor a lane's
    let Some(record) = store::profile(&env.kv("PROFILES")?, profile).await? else {
        return Err(ApiError::new(
            Code::ProfileNotRegistered,
            format!("{profile} is not registered with this relayer (POST /api/universal-profile/register)"),
        ));
    };
    // the profile's lane and the signed checks need nothing of each other: together (a Durable Object round trip
    // less on the way); the lane's refusal first, as before
    let (lane, signed) = join(pool::route(env, config, profile), check_signed(config, &request)).await;
    let lane = lane?;
    let mut job = simulate(config, &request, signed?, lane.address()).await?;
    // the fair shares it counts on besides the profile's: its controller's, this client's, its registrant key's
    job.payer.client = Some(client);
    job.payer.key.clone_from(&record.registered_by);
    job.wait_ms = Some(waited.unwrap_or(0).saturating_mul(1000));
    // its month is the warm-up quota while the profile is new (WARMUP_GAS_QUOTA)
    job.quota = Some(config.profile_quota(record.registered_at, config.now()));
    // the profile's month and the relayer's day are reserved by the Relayer object, for the transaction it sends
    let outcome = lane.execute(job).await?;
    let quota = quota(env, config, &record).await.ok();
    let response = ExecuteResponse {
        transaction_hash: outcome.transaction_hash,
        gas_used: outcome.mined.map(|m| m.gas_used),
        status: Some(match outcome.mined {
            Some(m) if m.success => profile_relayer::api::TransactionState::Mined,
            Some(_) => profile_relayer::api::TransactionState::Reverted,
            None => profile_relayer::api::TransactionState::Pending,
        }),
        quota: quota.as_ref().map(QuotaResponse::from),
    };
    let status = if outcome.mined.is_some() { 200 } else { 202 };
    let mut res = Response::from_json(&response)?.with_status(status);
    if let Some(seconds) = waited {
        res.headers_mut()
            .set("preference-applied", &format!("wait={seconds}"))?;
    }
    Ok(res)
}

/// `POST /api/quota`: a controller's signature over the profile and a recent timestamp (either LSP15 scheme).
pub async fn quota_route(req: Request, env: &Env, config: &Config) -> ApiResult<Response> {
    let config = config.relayer()?;
    let body = crate::plumbing::read_body(req, config.max_body_bytes).await?;
    let request = QuotaRequest::from_json(&body)?;
    request.check_timestamp(config.now(), config.quota_signature_window)?;
    let rpc = config.rpc();
    // registration first: a stranger's address costs one KV read, never a contract's answers
    let kv = env.kv("PROFILES")?;
    let Some(record) = store::profile(&kv, request.address).await? else {
        return Err(ApiError::new(
            Code::ProfileNotRegistered,
            format!("{} is not registered with this relayer", request.address),
        ));
    };
    let mut controller = None;
    for (_, candidate) in request.signer_candidates()? {
        if !permissions(&rpc, request.address, candidate).await?.0.is_zero() {
            controller = Some(candidate);
            break;
        }
    }
    if controller.is_none() {
        return Err(ApiError::new(
            Code::NotAController,
            format!("the signature is not from a controller of {}", request.address),
        ));
    }
    // a profile registered before its code was judged is refused here too
    key_manager_of(config, &rpc, request.address).await?;
    let quota = quota(env, config, &record).await?;
    Ok(Response::from_json(&QuotaResponse::from(&quota))?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wait_preference() {
        for (header, wait) in [
            (Some("wait=10"), Some(10)),
            (Some("respond-async, wait=5"), Some(5)),
            (Some("wait=0"), Some(0)),
            (Some("return=minimal;x=1, wait=7;foo"), Some(7)),
            (Some("respond-async"), None),
            (None, None),
            (Some(""), None),
            (Some("wait=-1"), None),
            (Some("wait=1.5"), None),
            (Some("wait=\"10\""), None),
            (Some("wait=(1 2)"), None),
            (Some("wait = 10"), None),
            (Some("Wait=10"), None),
            (Some("wait=99999999999999999999"), None),
        ] {
            assert_eq!(preferred_wait(header), wait, "{header:?}");
        }
    }

    #[test]
    fn a_reservation_id_names_one_transaction() {
        let (p, q) = (Address::repeat_byte(1), Address::repeat_byte(2));
        let (km, signer) = (Address::repeat_byte(3), Address::repeat_byte(4));
        let nonce = U256::from(7u8);
        let base = execute_id(42, p, km, signer, nonce);
        assert_eq!(base, execute_id(42, p, km, signer, nonce));
        // a fake Key Manager shared by two profiles must not make their calls one reservation
        assert_ne!(base, execute_id(42, q, km, signer, nonce));
        assert_ne!(base, execute_id(4201, p, km, signer, nonce));
        assert_ne!(base, execute_id(42, p, Address::repeat_byte(5), signer, nonce));
        assert_ne!(base, execute_id(42, p, km, Address::repeat_byte(5), nonce));
        assert_ne!(base, execute_id(42, p, km, signer, nonce + U256::from(1u8)));
        // the same nonce on another channel (upper 128 bits)
        assert_ne!(
            base,
            execute_id(42, p, km, signer, nonce | (U256::from(1u8) << 128))
        );
    }
}
