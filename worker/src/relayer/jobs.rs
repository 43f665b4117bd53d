//! What the lane transactions are for: deploy, register and relay jobs, their metering (reserve → settle or
//! release) and their transaction log records.

use alloy_primitives::{Address, B256, Bytes};
use profile_relayer::lsp23::deploy_erc1167_proxies_calldata;

use profile_relayer::api::{TransactionState, TransactionStatus};

use crate::{
    error::{ApiError, ApiResult, Code},
    meter::{Charge, Limit, Subject, release_all, settle_all},
    signer::{self},
    store::{self, ProfileRecord},
    txlog,
};

use super::model::{
    DeployJob, DeployOutcome, ExecuteJob, ExecuteOutcome, Job, MinedFacts, RegisterOutcome, SendPlan, Table,
    Waited,
};
use super::policy::{ALARM_MS, attempt_charge_id};
use super::{Ctx, Relayer, now_ms};

impl Relayer {
    /// Settles `charge` on each of its meters to `gas_used`; the first meter's charge is returned.
    pub(super) async fn settle(
        &self,
        ctx: &Ctx,
        charge: Option<&Charge>,
        gas_used: u64,
    ) -> ApiResult<Option<u64>> {
        match charge {
            Some(charge) => settle_all(&self.env, charge, gas_used, ctx.config.now()).await,
            None => Ok(None),
        }
    }

    /// Releases `charge` on each of its meters (nothing was sent, or the job was given up).
    pub(super) async fn release(&self, charge: Option<&Charge>) {
        if let Some(charge) = charge {
            release_all(&self.env, charge).await;
        }
    }

    pub(super) fn keep_ms(&self) -> ApiResult<u64> {
        Ok(self.config.tx_record_days.value()?.saturating_mul(86_400_000))
    }

    /// Writes `record`, whose status was `previous` (as the caller read it; `None` for a new record); `charge`
    /// names the API key that asked for it (its webhook gets the change).
    pub(super) fn log_put(
        &self,
        ctx: &Ctx,
        record: &TransactionStatus,
        previous: Option<TransactionState>,
        charge: Option<&Charge>,
    ) -> ApiResult<()> {
        let origin = txlog::Origin {
            chain_id: ctx.config.chain_id,
            key_id: charge.and_then(Charge::key_id),
        };
        txlog::put(&self.sql()?, record, previous, origin, now_ms(), self.keep_ms()?)
    }

    pub(super) fn log_update(
        &self,
        ctx: &Ctx,
        hash: B256,
        change: impl FnOnce(&mut TransactionStatus),
    ) -> ApiResult<()> {
        let origin = txlog::Origin {
            chain_id: ctx.config.chain_id,
            key_id: None,
        };
        txlog::update(&self.sql()?, hash, origin, now_ms(), self.keep_ms()?, change)
    }

    /// The receipt facts of whichever of `hashes` is recorded as mined or reverted.
    pub(super) fn mined_facts(&self, hashes: &[B256]) -> ApiResult<Option<(B256, MinedFacts)>> {
        let sql = self.sql()?;
        for hash in hashes.iter().rev() {
            if let Some(r) = txlog::get(&sql, *hash)?
                && matches!(r.status, TransactionState::Mined | TransactionState::Reverted)
            {
                return Ok(Some((
                    *hash,
                    MinedFacts {
                        success: r.status == TransactionState::Mined,
                        gas_used: r.gas_used.unwrap_or(0),
                        block_number: r.block_number.unwrap_or(0),
                    },
                )));
            }
        }
        Ok(None)
    }

    /// A transaction of the signed nonce `wanted` mined and succeeded but not final yet (watched for its depth):
    /// its outcome for the same call, a refusal for another one (the nonce is used). `None` when there is none, or
    /// it reverted — the nonce is then unused, and a new transaction is a new attempt with a reservation of its own.
    fn mined_for(&self, wanted: &Job, calldata: &Bytes) -> ApiResult<Option<ExecuteOutcome>> {
        let watched = self.watched(Table::Confirming)?;
        let displaced = self.watched(Table::Displaced)?;
        for watched in watched
            .into_iter()
            .chain(displaced)
            .filter(|w| &w.tx.job == wanted)
        {
            let Some((hash, facts)) = self.mined_facts(&[watched.hash])? else {
                continue;
            };
            if !facts.success {
                continue;
            }
            let (request, _) = signer::decode(&watched.tx.raw).map_err(ApiError::internal)?;
            if &request.input != calldata {
                return Err(ApiError::new(
                    Code::InvalidRelayNonce,
                    format!("another relay call with this signer and nonce was mined in {hash}"),
                ));
            }
            return Ok(Some(ExecuteOutcome {
                transaction_hash: hash,
                mined: Some(facts),
            }));
        }
        Ok(None)
    }

    /// Sends a checked relay call through the lane (once per signed nonce while it is pending), its gas limit
    /// reserved on the profile's month and the relayer's day for this very transaction, and waits for its receipt
    /// up to `DEPLOY_WAIT_SECONDS`.
    pub(super) async fn execute(&self, job: ExecuteJob) -> ApiResult<ExecuteOutcome> {
        let ctx = self.ctx()?;
        self.check_chain(&ctx).await?;
        let wanted = Job::Execute {
            id: job.id,
            profile: job.profile,
        };
        let tx = {
            let _guard = self.send_lock.lock().await;
            self.sync_lane(&ctx).await?;
            match self.find_job(&wanted)? {
                Some(existing) => {
                    // the same signed nonce again: answered with the same transaction, never sent twice
                    let (request, _) = signer::decode(&existing.raw).map_err(ApiError::internal)?;
                    if request.input != job.calldata {
                        return Err(ApiError::new(
                            Code::InvalidRelayNonce,
                            "another relay call with this signer and nonce is pending",
                        ));
                    }
                    existing
                }
                None => {
                    if let Some(done) = self.mined_for(&wanted, &job.calldata)? {
                        // mined and succeeded, not yet final (the check read the nonce before): the same answer
                        return Ok(done);
                    }
                    self.refuse_if_draining(job.profile)?;
                    let profile = Subject::Profile(job.profile);
                    let relayer = Subject::Relayer(ctx.config.chain_id);
                    let plan = SendPlan {
                        gas_limit: Some(job.gas_limit),
                        charge: Some(Charge {
                            id: attempt_charge_id(job.id, now_ms()),
                            meters: vec![profile.clone(), relayer.clone()],
                        }),
                        // the profile's month and the relayer-wide ceiling, for this very transaction, under the
                        // send lock: nothing is sent unless both have room for its gas limit
                        reserve: vec![
                            Limit {
                                subject: profile,
                                limit: ctx.config.monthly_gas_quota,
                            },
                            Limit {
                                subject: relayer,
                                limit: ctx.config.max_gas_per_day,
                            },
                        ],
                        ..SendPlan::default()
                    };
                    let tx = self
                        .send_new(&ctx, wanted.clone(), job.key_manager, job.calldata.clone(), plan)
                        .await?;
                    self.ensure_alarm(ALARM_MS).await?;
                    tx
                }
            }
        };
        match self.wait(&ctx, &wanted, tx).await? {
            Waited::Mined(hash) => Ok(ExecuteOutcome {
                transaction_hash: hash,
                mined: self.mined_facts(&[hash])?.map(|(_, f)| f),
            }),
            Waited::Gone(last) => {
                // finished by another round (the alarm), or given up
                let mut hashes = last.dropped.clone();
                hashes.extend(last.hashes.iter().copied());
                let found = self.mined_facts(&hashes)?;
                let latest = last
                    .hashes
                    .last()
                    .copied()
                    .ok_or_else(|| ApiError::internal("no hash"))?;
                Ok(ExecuteOutcome {
                    transaction_hash: found.map_or(latest, |(h, _)| h),
                    mined: found.map(|(_, f)| f),
                })
            }
            Waited::Pending(last) => Ok(ExecuteOutcome {
                transaction_hash: last
                    .hashes
                    .last()
                    .copied()
                    .ok_or_else(|| ApiError::internal("no hash"))?,
                mined: None,
            }),
        }
    }

    pub(super) async fn deploy(&self, job: DeployJob) -> ApiResult<DeployOutcome> {
        let result = self.deploy_inner(job).await;
        if let Err(e) = &result {
            self.note_error(e);
        }
        result
    }

    pub(super) async fn deploy_inner(&self, job: DeployJob) -> ApiResult<DeployOutcome> {
        let ctx = self.ctx()?;
        self.check_chain(&ctx).await?;
        let input =
            deploy_erc1167_proxies_calldata(job.salt, &job.post_deployment_call_data, &ctx.config.constants)?;
        let profile = job.universal_profile;
        let wanted = Job::Deploy {
            universal_profile: profile,
        };

        let tx = {
            let _guard = self.send_lock.lock().await;
            self.sync_lane(&ctx).await?;
            // under the lock: a concurrent request for the same profile waits for the first one's transaction
            match self.find_job(&wanted)? {
                Some(p) => p,
                None => {
                    self.refuse_if_draining(profile)?;
                    if !ctx.rpc.code(profile).await?.is_empty() {
                        return Ok(DeployOutcome {
                            transaction_hash: None,
                            deployed: true,
                        });
                    }
                    // one reservation per deploy attempt (a retried deploy after a revert is a new transaction)
                    let charge_id = format!("deploy:{}:{profile:#x}:{}", ctx.config.chain_id, now_ms());
                    let mut reserve = vec![Limit {
                        subject: Subject::Relayer(ctx.config.chain_id),
                        limit: ctx.config.max_gas_per_day,
                    }];
                    if let Some(key) = &job.key_id {
                        reserve.insert(
                            0,
                            Limit {
                                subject: Subject::Key(key.clone()),
                                limit: job.key_budget,
                            },
                        );
                    }
                    let plan = SendPlan {
                        charge: Some(Charge {
                            id: charge_id,
                            meters: reserve.iter().map(|l| l.subject.clone()).collect(),
                        }),
                        reserve,
                        ..SendPlan::default()
                    };
                    let tx = self
                        .send_new(
                            &ctx,
                            wanted.clone(),
                            ctx.config.constants.factory,
                            input.into(),
                            plan,
                        )
                        .await?;
                    self.ensure_alarm(ALARM_MS).await?;
                    tx
                }
            }
        };

        match self.wait(&ctx, &wanted, tx).await? {
            Waited::Mined(hash) => Ok(DeployOutcome {
                transaction_hash: Some(hash),
                deployed: true,
            }),
            Waited::Gone(last) => {
                // finished by another round (the alarm), or deployed by someone else
                let deployed = !ctx.rpc.code(profile).await?.is_empty();
                let recorded = store::profile(&self.env.kv("PROFILES")?, profile)
                    .await?
                    .and_then(|r| r.deployment_transaction);
                Ok(DeployOutcome {
                    transaction_hash: if deployed {
                        recorded
                    } else {
                        last.hashes.last().copied()
                    },
                    deployed,
                })
            }
            Waited::Pending(last) => Ok(DeployOutcome {
                transaction_hash: last.hashes.last().copied(),
                deployed: false,
            }),
        }
    }

    pub(super) async fn record(&self, address: Address, deployment: Option<B256>) -> ApiResult<bool> {
        let kv = self.env.kv("PROFILES")?;
        match store::profile(&kv, address).await? {
            Some(mut existing) => {
                if existing.deployment_transaction.is_none() && deployment.is_some() {
                    existing.deployment_transaction = deployment;
                    store::put_profile(&kv, &existing).await?;
                }
                Ok(false)
            }
            None => {
                let record = ProfileRecord {
                    address,
                    registered_at: now_ms() / 1000,
                    deployment_transaction: deployment,
                };
                store::put_profile(&kv, &record).await?;
                Ok(true)
            }
        }
    }

    pub(super) async fn register(&self, address: Address) -> ApiResult<RegisterOutcome> {
        let newly_registered = self.record(address, None).await?;
        let kv = self.env.kv("PROFILES")?;
        let config = self.config.relayer()?;
        let quota = store::quota(&kv, address, config.now(), config.monthly_gas_quota).await?;
        Ok(RegisterOutcome {
            newly_registered,
            quota,
        })
    }
}
