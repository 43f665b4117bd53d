//! The relayer's profile routes: deploy, register, and the record of a transaction it sent.

use alloy_primitives::{Address, B256};
use profile_relayer::{
    api::{DeployRequest, DeployResponse, RegisterRequest, RegisterResponse},
    lsp23::{generate_salt, predict_addresses, profile_data_from_controllers},
};
use worker::{Env, Request, Response};

use crate::plumbing::{json_response, read_body};
use crate::{
    auth::{self, Scope},
    config::{Config, RelayerConfig},
    error::{ApiError, ApiResult, Code},
    meter::{Charge, release_all, reserve_all, settle_all},
    ratelimit::client_bucket,
    relayer::{DeployJob, RegisterOutcome, RelayerClient, pool},
    store,
};

pub(super) async fn deploy(req: Request, env: &Env, config: &Config) -> ApiResult<Response> {
    let config = config.relayer()?;
    let key = auth::authenticate(&req, env, Scope::Deploy, Some(&config.shares)).await?;
    let client = client_bucket(&req);
    let body = read_body(req, config.max_body_bytes).await?;
    let (salt, calldata) = match DeployRequest::from_json(&body)? {
        DeployRequest::Controllers {
            controllers,
            lsp3_profile,
        } => {
            let data =
                profile_data_from_controllers(&controllers, lsp3_profile.as_deref(), &config.constants)?;
            (generate_salt()?, data.to_post_deployment_calldata()?)
        }
        DeployRequest::Salt {
            salt,
            post_deployment_calldata,
        } => (salt, post_deployment_calldata),
    };
    if calldata.len() > config.max_deploy_data_bytes {
        return Err(ApiError::new(
            Code::DeployDataTooLarge,
            format!(
                "the profile data is {} bytes; this relayer deploys at most {} (MAX_DEPLOY_DATA_BYTES)",
                calldata.len(),
                config.max_deploy_data_bytes
            ),
        ));
    }
    let prediction = predict_addresses(salt, &calldata, &config.constants)?;
    // the lane of the predicted profile (a replayed deploy reaches the lane that holds it)
    let relayer = pool::route(env, config, prediction.universal_profile).await?;
    let outcome = relayer
        .deploy(DeployJob {
            salt,
            post_deployment_call_data: calldata.into(),
            universal_profile: prediction.universal_profile,
            key_manager: prediction.key_manager,
            key_budget: key.gas_budget_per_month.unwrap_or(config.default_key_gas_budget),
            key_id: Some(key.id.clone()),
            client: Some(client.clone()),
        })
        .await?;
    if outcome.deployed && outcome.transaction_hash.is_none() {
        // it existed already: make sure it is registered (a registration like any other), send nothing
        register_counted(
            env,
            config,
            &relayer,
            prediction.universal_profile,
            &key.id,
            &client,
        )
        .await?;
    }
    let response = DeployResponse {
        universal_profile_address: prediction.universal_profile,
        key_manager_address: prediction.key_manager,
        transaction_hash: outcome.transaction_hash,
    };
    json_response(if outcome.deployed { 200 } else { 202 }, &response)
}

pub(super) async fn register(req: Request, env: &Env, config: &Config) -> ApiResult<Response> {
    let config = config.relayer()?;
    let key = auth::authenticate(&req, env, Scope::Register, Some(&config.shares)).await?;
    let client = client_bucket(&req);
    let body = read_body(req, config.max_body_bytes).await?;
    let address = RegisterRequest::from_json(&body)?.universal_profile_address;
    // only a genuine LUKSO profile with its KeyManager gets a quota; a refusal registers nothing
    crate::genuine::key_manager_of(config, &config.rpc(), address).await?;
    let lane = pool::route(env, config, address).await?;
    let outcome = register_counted(env, config, &lane, address, &key.id, &client).await?;
    json_response(
        200,
        &RegisterResponse {
            universal_profile_address: address,
            newly_registered: outcome.newly_registered,
            quota: outcome.quota,
        },
    )
}

/// Registers `address` for the key `key`, counting a new registration on the day's registrations of the key and
/// of the client address ([`crate::shares::Shares::of_registrations`]): reserved before, settled when this call
/// created the record, released otherwise (a profile registered already costs nothing, and of two requests racing
/// to register one profile only the one that wrote the record counts).
async fn register_counted(
    env: &Env,
    config: &RelayerConfig,
    lane: &RelayerClient,
    address: Address,
    key: &str,
    client: &str,
) -> ApiResult<RegisterOutcome> {
    if store::profile(&env.kv("PROFILES")?, address).await?.is_some() {
        return lane.register(address, Some(key.to_owned())).await;
    }
    let now = config.now();
    let charge_id = format!(
        "register:{}:{address:#x}:{}",
        config.chain_id,
        crate::plumbing::now_ms()
    );
    let limits = config.shares.of_registrations(key, client);
    let created = reserve_all(env, &charge_id, 1, now, config.reservation_ttl, &limits).await?;
    let charge = Charge {
        id: charge_id,
        meters: created,
    };
    let outcome = lane.register(address, Some(key.to_owned())).await;
    match &outcome {
        Ok(o) if o.newly_registered => {
            settle_all(env, &charge, 1, now).await?;
        }
        _ => release_all(env, &charge).await,
    }
    outcome
}

/// `GET /api/transaction/:hash`: the record of a transaction this relayer sent.
pub(super) async fn transaction(env: &Env, config: &Config, hash: &str) -> ApiResult<Response> {
    let config = config.relayer()?;
    let hash: B256 = profile_relayer::hex::parse_fixed("hash", hash)?;
    let record = pool::transaction(env, config, hash).await?;
    let record = record.ok_or_else(|| {
        ApiError::new(
            Code::TransactionNotFound,
            format!("this relayer sent no transaction {hash} (or its record expired)"),
        )
    })?;
    json_response(200, &record)
}
