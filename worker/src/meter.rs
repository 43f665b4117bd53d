//! Gas metering: the reserve → settle / release protocol and the `Meter` Durable Object that keeps it, one object
//! per metered [`Subject`] — a profile's monthly quota, an API key's monthly deploy budget, the relayer's daily
//! ceiling, and the fair shares of those ([`crate::shares`]): one holder's part of the day's ceiling, one client
//! address's part of a key's budget, registrations per day. Each object is the single writer of its subject's
//! counters and keeps them, with the open reservations, in its own transactional storage; profile usage is written
//! through to KV (`usage:<address>:<month start>`) for cheap reads. Sharding by subject is what lets this grow: every profile and key has its own object, so metering
//! never serializes on the nonce lane or on one another.
//!
//! The protocol, for one transaction (its **reservation id** names exactly that transaction: chain, profile,
//! signer, channel and nonce for a relay call; a fresh id per deploy attempt):
//! - **reserve** its gas limit on every subject it is charged to before anything is sent ([`reserve_all`]); a
//!   refusal anywhere releases what this request reserved and sends nothing. An id already open is answered as it
//!   stands (`created: false`): a request only ever releases the reservations it created itself;
//! - **settle** it to the receipt's `gasUsed` on each subject ([`settle_all`]): charged once to the period the
//!   reservation was made in; the id is then remembered as settled for [`SETTLED_KEEP_SECONDS`], so a late replay
//!   cannot reserve it again, and settling twice is a no-op;
//! - **release** it when nothing was sent ([`release_all`]);
//! - reservations never settled nor released **expire** after their TTL (`RESERVATION_TTL_SECONDS`, an hour
//!   by default): the object's alarm gives their gas back to the period. An expired
//!   reservation is kept for [`EXPIRED_KEEP_SECONDS`]: should its transaction be mined after all, the receipt is
//!   still charged (to the reservation's period, even past its limit: gas spent is always counted).

// the durable_object macro generates undocumented glue items
#![allow(missing_docs)]

use std::{cell::RefCell, collections::BTreeMap, fmt};

use alloy_primitives::Address;
use profile_relayer::api::{month_start, next_month_start};
use serde::{Deserialize, Serialize};
use worker::{DurableObject, Env, Request, Response, Result, SqlStorageValue, State, Stub, durable_object};

use crate::{
    config::Config,
    error::{ApiError, ApiResult, Code},
};

/// How long a settled id is remembered (a replay of the same transaction is refused meanwhile).
pub const SETTLED_KEEP_SECONDS: u64 = 2 * 86_400;

/// How long an expired reservation can still be settled by a late receipt.
pub const EXPIRED_KEEP_SECONDS: u64 = 7 * 86_400;

/// A limit that never refuses: the largest integer a Durable Object message carries exactly (their JSON bodies are
/// parsed by JavaScript), far above any gas a period can see.
pub const UNLIMITED: u64 = profile_relayer::json_shape::MAX_SAFE_INTEGER;

/// How long a metering period lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Period {
    /// UTC calendar month.
    Month,
    /// UTC day.
    Day,
}

impl Period {
    /// First second of the period containing `now`.
    pub fn start(self, now: u64) -> u64 {
        match self {
            Self::Month => month_start(now),
            Self::Day => now - now % 86_400,
        }
    }

    /// First second of the next period.
    pub fn end(self, now: u64) -> u64 {
        match self {
            Self::Month => next_month_start(now),
            Self::Day => self.start(now) + 86_400,
        }
    }
}

/// Who is charged: each subject has its own `Meter` object, named by [`Subject::name`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum Subject {
    /// A registered profile's monthly quota for relayed transactions (`MONTHLY_GAS_QUOTA`).
    Profile(Address),
    /// An API key's monthly deploy budget, by key id.
    Key(String),
    /// The relayer's daily ceiling on one chain (`MAX_GAS_PER_DAY`).
    Relayer(u64),
    /// One holder's share of a chain's daily ceiling (`FAIR_SHARE_PERCENT`, `KEY_SHARE_PERCENT`,
    /// `TRUSTED_RESERVE_PERCENT`).
    Share(u64, Holder),
    /// One client address's share of an API key's monthly deploy budget: key id, client ([`Holder::Client`]'s form).
    ClientBudget(String, String),
    /// New registrations per UTC day of an API key or a client address; counted in registrations, not gas.
    Registrations(Holder),
}

/// Who holds a fair share ([`Subject::Share`], [`Subject::Registrations`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Holder {
    /// A profile.
    Profile(Address),
    /// A controller (the signer of relay calls), over every profile it controls.
    Controller(Address),
    /// An API key, over every profile registered or deployed with it.
    Key(String),
    /// A client address (IPv6 by its /64: [`crate::ratelimit::client_key`]), over every request it sends.
    Client(String),
    /// Every key the operator did not mark trusted (`TRUSTED_API_KEYS`), together.
    Untrusted,
}

impl fmt::Display for Holder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Profile(a) => write!(f, "profile:{a:#x}"),
            Self::Controller(a) => write!(f, "controller:{a:#x}"),
            Self::Key(id) => write!(f, "key:{id}"),
            Self::Client(client) => write!(f, "client:{client}"),
            Self::Untrusted => f.write_str("untrusted"),
        }
    }
}

impl Holder {
    /// The holder named `name` (the inverse of its `Display`).
    pub fn parse(name: &str) -> Option<Self> {
        if name == "untrusted" {
            return Some(Self::Untrusted);
        }
        let (kind, rest) = name.split_once(':')?;
        match kind {
            "profile" => rest.parse().ok().map(Self::Profile),
            "controller" => rest.parse().ok().map(Self::Controller),
            "key" if !rest.is_empty() && !rest.contains(':') => Some(Self::Key(rest.to_owned())),
            "client" if !rest.is_empty() => Some(Self::Client(rest.to_owned())),
            _ => None,
        }
    }

    /// How it is named in a refusal.
    pub fn describe(&self) -> String {
        match self {
            Self::Profile(a) => format!("the profile {a:#x}"),
            Self::Controller(a) => format!("the controller {a:#x}"),
            Self::Key(_) => "the profiles of this API key".to_owned(),
            Self::Client(_) => "this client address".to_owned(),
            Self::Untrusted => "the profiles of API keys not marked trusted".to_owned(),
        }
    }
}

impl Subject {
    /// The object's name: `profile:<0x address, lower case>`, `key:<id>`, `relayer:<chain id>`.
    pub fn name(&self) -> String {
        self.to_string()
    }

    /// The subject named `name` (the inverse of [`Subject::name`]).
    pub fn parse(name: &str) -> Option<Self> {
        let (kind, rest) = name.split_once(':')?;
        match kind {
            "profile" => rest.parse().ok().map(Self::Profile),
            "key" if !rest.is_empty() => Some(Self::Key(rest.to_owned())),
            "relayer" => rest.parse().ok().map(Self::Relayer),
            "share" => {
                let (chain, holder) = rest.split_once(':')?;
                Some(Self::Share(chain.parse().ok()?, Holder::parse(holder)?))
            }
            "client-budget" => {
                let (id, client) = rest.split_once(':')?;
                (!id.is_empty() && !client.is_empty())
                    .then(|| Self::ClientBudget(id.to_owned(), client.to_owned()))
            }
            "registrations" => Holder::parse(rest).map(Self::Registrations),
            _ => None,
        }
    }

    /// The period its limit applies to.
    pub const fn period(&self) -> Period {
        match self {
            Self::Profile(_) | Self::Key(_) | Self::ClientBudget(..) => Period::Month,
            Self::Relayer(_) | Self::Share(..) | Self::Registrations(_) => Period::Day,
        }
    }

    /// The code a refusal on this subject is answered with.
    pub const fn refusal(&self) -> Code {
        match self {
            Self::Profile(_) => Code::QuotaExceeded,
            Self::Key(_) => Code::GasBudgetExceeded,
            Self::Relayer(_) => Code::DailyGasCeiling,
            Self::Share(..) | Self::ClientBudget(..) => Code::PolicyFairShare,
            Self::Registrations(_) => Code::PolicyRegistrations,
        }
    }

    /// Whether it counts gas (and its settlements are gas spent); [`Subject::Registrations`] counts registrations.
    pub const fn counts_gas(&self) -> bool {
        !matches!(self, Self::Registrations(_))
    }
}

impl fmt::Display for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Profile(a) => write!(f, "profile:{a:#x}"),
            Self::Key(id) => write!(f, "key:{id}"),
            Self::Relayer(chain) => write!(f, "relayer:{chain}"),
            Self::Share(chain, holder) => write!(f, "share:{chain}:{holder}"),
            Self::ClientBudget(id, client) => write!(f, "client-budget:{id}:{client}"),
            Self::Registrations(holder) => write!(f, "registrations:{holder}"),
        }
    }
}

impl TryFrom<String> for Subject {
    type Error = String;

    fn try_from(name: String) -> core::result::Result<Self, String> {
        Self::parse(&name).ok_or_else(|| format!("not a meter subject: {name}"))
    }
}

impl From<Subject> for String {
    fn from(subject: Subject) -> Self {
        subject.name()
    }
}

/// An open (or expired) reservation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Reservation {
    /// Gas reserved.
    pub amount: u64,
    /// Start of the period it counts in.
    pub period_start: u64,
    /// When it expires unless settled or released (unix seconds; 0 for reservations stored before expiry
    /// existed, which expire at the next alarm).
    #[serde(default)]
    pub expires_at: u64,
}

/// The counters of one subject.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Ledger {
    /// Settled gas per period start.
    pub used: BTreeMap<u64, u64>,
    /// Open reservations by id.
    pub open: BTreeMap<String, Reservation>,
    /// Reservations given back by their TTL, by id: a late receipt is still charged.
    #[serde(default)]
    pub expired: BTreeMap<String, Reservation>,
}

/// What a reservation attempt found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// The period's limit.
    pub limit: u64,
    /// Settled this period.
    pub used: u64,
    /// Reserved and not settled yet, this period.
    pub reserved: u64,
    /// `limit - used - reserved`, never negative.
    pub remaining: u64,
    /// First second of the next period (the reset).
    pub reset_at: u64,
}

/// The outcome of [`Ledger::reserve`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Reserved {
    /// Reserved now, by this call.
    Created,
    /// Already open under this id (made by another request): not this call's to release.
    Existing,
    /// Does not fit in what is left of the period.
    Refused,
    /// The id was settled already: the same transaction again.
    Settled,
}

impl Ledger {
    /// The usage of the period containing `now`.
    pub fn usage(&self, period: Period, limit: u64, now: u64) -> Usage {
        let start = period.start(now);
        let used = self.used.get(&start).copied().unwrap_or(0);
        let reserved = self
            .open
            .values()
            .filter(|r| r.period_start == start)
            .fold(0u64, |acc, r| acc.saturating_add(r.amount));
        Usage {
            limit,
            used,
            reserved,
            remaining: limit.saturating_sub(used).saturating_sub(reserved),
            reset_at: period.end(now),
        }
    }

    /// Reserves `amount` for `id` until `now + ttl` if it fits (the caller answers [`Reserved::Settled`] for an
    /// id remembered as settled without asking the ledger).
    pub fn reserve(
        &mut self,
        id: &str,
        amount: u64,
        period: Period,
        limit: u64,
        now: u64,
        ttl: u64,
    ) -> (Reserved, Usage) {
        if self.open.contains_key(id) {
            return (Reserved::Existing, self.usage(period, limit, now));
        }
        let before = self.usage(period, limit, now);
        if amount > before.remaining {
            return (Reserved::Refused, before);
        }
        // an expired reservation of the same id is superseded: one reservation per id, settled once
        self.expired.remove(id);
        self.open.insert(
            id.to_owned(),
            Reservation {
                amount,
                period_start: period.start(now),
                expires_at: now.saturating_add(ttl),
            },
        );
        (Reserved::Created, self.usage(period, limit, now))
    }

    /// Settles `id` to `gas_used`, charged to the reservation's period. Returns the charge, `None` when no
    /// reservation is open or expired under that id (settled before, or released). The charge is the gas the
    /// receipt used, even above the amount reserved (a job sent again after its transaction was dropped is
    /// estimated again, and may need more): what was spent is counted, never capped.
    pub fn settle(&mut self, id: &str, gas_used: u64) -> Option<u64> {
        let reservation = self.open.remove(id).or_else(|| self.expired.remove(id))?;
        let used = self.used.entry(reservation.period_start).or_insert(0);
        *used = used.saturating_add(gas_used);
        Some(gas_used)
    }

    /// Drops `id`'s reservation without charging (nothing was sent).
    pub fn release(&mut self, id: &str) -> bool {
        self.open.remove(id).is_some() | self.expired.remove(id).is_some()
    }

    /// Gives back the gas of the reservations whose TTL has passed at `now` (kept as expired, for a late
    /// receipt); returns how many expired.
    pub fn expire(&mut self, now: u64) -> usize {
        let due: Vec<String> = self
            .open
            .iter()
            .filter(|(_, r)| r.expires_at <= now)
            .map(|(id, _)| id.clone())
            .collect();
        for id in &due {
            if let Some(r) = self.open.remove(id) {
                self.expired.insert(id.clone(), r);
            }
        }
        due.len()
    }

    /// When the next open reservation expires.
    pub fn next_expiry(&self) -> Option<u64> {
        self.open.values().map(|r| r.expires_at).min()
    }

    /// Forgets settled periods that ended before `keep_from`, and expired reservations past their keep time at
    /// `now` (bounded storage).
    pub fn prune(&mut self, keep_from: u64, now: u64) {
        self.used.retain(|start, _| *start >= keep_from);
        self.expired
            .retain(|_, r| r.expires_at.saturating_add(EXPIRED_KEEP_SECONDS) > now);
    }
}

/// A request to a `Meter` object (its subject is the object's name).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "op")]
pub enum MeterOp {
    /// Reserve `amount` for `id` until `now + ttl`.
    Reserve {
        /// Reservation id.
        id: String,
        /// Gas.
        amount: u64,
        /// Limit per period.
        limit: u64,
        /// Unix seconds.
        now: u64,
        /// Seconds until the reservation expires unless settled or released.
        ttl: u64,
    },
    /// Settle `id` to `gasUsed`.
    Settle {
        /// Reservation id.
        id: String,
        /// Gas used by the receipt.
        gas_used: u64,
        /// Unix seconds.
        now: u64,
    },
    /// Release `id`.
    Release {
        /// Reservation id.
        id: String,
    },
    /// Read the usage of the period containing `now`.
    Usage {
        /// Limit per period.
        limit: u64,
        /// Unix seconds.
        now: u64,
    },
    /// Settled gas per period, for the periods starting at or after `from`.
    Periods {
        /// Unix seconds.
        from: u64,
    },
}

/// The answer of a `Meter` object.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MeterAnswer {
    /// What a reservation found.
    pub reserved: Option<Reserved>,
    /// Whether a settlement charged or a release released.
    pub ok: bool,
    /// Usage after the operation (reservation and usage operations).
    pub usage: Option<Usage>,
    /// Gas charged by a settlement.
    pub charged: Option<u64>,
    /// Settled gas per period start (`Periods`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub periods: BTreeMap<u64, u64>,
}

impl MeterAnswer {
    fn of(ok: bool) -> Self {
        Self {
            reserved: None,
            ok,
            usage: None,
            charged: None,
            periods: BTreeMap::new(),
        }
    }
}

const LEDGER: &str = "ledger";

/// The Durable Object.
#[allow(missing_debug_implementations, missing_docs)]
#[durable_object]
pub struct Meter {
    state: State,
    env: Env,
    /// The configuration, parsed when the object is constructed (vars change only with a new deployment).
    config: Config,
    ledger: RefCell<Option<Ledger>>,
}

impl DurableObject for Meter {
    fn new(state: State, env: Env) -> Self {
        let config = Config::from_env(&env);
        crate::analytics::bind(&env, || config.analytics_log.value().unwrap_or(false));
        Self {
            state,
            config,
            env,
            ledger: RefCell::new(None),
        }
    }

    async fn fetch(&self, mut req: Request) -> Result<Response> {
        let subject = Subject::parse(req.path().trim_start_matches('/'));
        let answer = match (req.json::<MeterOp>().await, subject) {
            (Ok(op), Some(subject)) => self.apply(op, &subject).await,
            (Err(e), _) => Err(ApiError::internal(e)),
            (_, None) => Err(ApiError::internal("no meter subject in the path")),
        };
        Ok(answer
            .and_then(|a| Response::from_json(&a).map_err(ApiError::from))
            .unwrap_or_else(ApiError::into_response))
    }

    async fn alarm(&self) -> Result<Response> {
        if let Err(e) = self.expire().await {
            worker::console_warn!("meter alarm: {} {}", e.code, e.message);
            // try again soon
            self.state.storage().set_alarm(60_000).await?;
        }
        Response::ok("")
    }
}

fn seconds(value: u64) -> ApiResult<SqlStorageValue> {
    SqlStorageValue::try_from_i64(i64::try_from(value).map_err(ApiError::internal)?)
        .map_err(ApiError::internal)
}

#[derive(Deserialize)]
struct SettledRow {
    #[allow(dead_code)]
    id: String,
}

impl Meter {
    async fn load(&self) -> ApiResult<Ledger> {
        if let Some(l) = self.ledger.borrow().clone() {
            return Ok(l);
        }
        let stored: Ledger = self.state.storage().get(LEDGER).await?.unwrap_or_default();
        *self.ledger.borrow_mut() = Some(stored.clone());
        Ok(stored)
    }

    async fn save(&self, ledger: Ledger) -> ApiResult<()> {
        self.state.storage().put(LEDGER, &ledger).await?;
        *self.ledger.borrow_mut() = Some(ledger);
        Ok(())
    }

    /// The settled ids: one row each, pruned after [`SETTLED_KEEP_SECONDS`] (a table, so a busy subject's ledger
    /// value stays small).
    fn settled_table(&self) -> ApiResult<worker::SqlStorage> {
        let sql = self.state.storage().sql();
        sql.exec(
            "CREATE TABLE IF NOT EXISTS settled (id TEXT PRIMARY KEY, at INTEGER NOT NULL)",
            Vec::new(),
        )?;
        Ok(sql)
    }

    fn is_settled(&self, id: &str) -> ApiResult<bool> {
        let rows: Vec<SettledRow> = self
            .settled_table()?
            .exec("SELECT id FROM settled WHERE id = ?", vec![id.into()])?
            .to_array()?;
        Ok(!rows.is_empty())
    }

    fn remember_settled(&self, id: &str, now: u64) -> ApiResult<()> {
        let sql = self.settled_table()?;
        sql.exec(
            "INSERT OR REPLACE INTO settled (id, at) VALUES (?, ?)",
            vec![id.into(), seconds(now)?],
        )?;
        sql.exec(
            "DELETE FROM settled WHERE at < ?",
            vec![seconds(now.saturating_sub(SETTLED_KEEP_SECONDS))?],
        )?;
        Ok(())
    }

    /// The clock reservations' expiry is compared with: the callers' (`Config::now`, test offset included).
    ///
    /// # Errors
    /// `CONFIGURATION_ERROR` for a malformed `CLOCK_OFFSET_SECONDS`.
    fn now(&self) -> ApiResult<u64> {
        self.config.now()
    }

    /// Schedules the alarm for the next expiry (none when nothing is open).
    async fn schedule(&self, ledger: &Ledger, now: u64) -> ApiResult<()> {
        let storage = self.state.storage();
        match ledger.next_expiry() {
            Some(at) => {
                let offset_ms = at.saturating_sub(now).saturating_mul(1000).saturating_add(100);
                storage
                    .set_alarm(i64::try_from(offset_ms).unwrap_or(i64::MAX))
                    .await?;
            }
            None => storage.delete_alarm().await?,
        }
        Ok(())
    }

    /// The alarm: expired reservations give their gas back.
    async fn expire(&self) -> ApiResult<()> {
        let now = self.now()?;
        let mut ledger = self.load().await?;
        if ledger.expire(now) > 0 {
            self.save(ledger.clone()).await?;
        }
        self.schedule(&ledger, now).await
    }

    /// Applies `op` for `subject`.
    async fn apply(&self, op: MeterOp, subject: &Subject) -> ApiResult<MeterAnswer> {
        // one operation at a time: the storage calls below are awaited, and the object's input gate keeps
        // other requests out while they run
        let mut ledger = self.load().await?;
        let period = subject.period();
        let (answer, now) = match op {
            MeterOp::Reserve {
                id,
                amount,
                limit,
                now,
                ttl,
            } => {
                let (reserved, usage) = if self.is_settled(&id)? {
                    (Reserved::Settled, ledger.usage(period, limit, now))
                } else {
                    ledger.reserve(&id, amount, period, limit, now, ttl)
                };
                let answer = MeterAnswer {
                    reserved: Some(reserved),
                    ok: matches!(reserved, Reserved::Created | Reserved::Existing),
                    usage: Some(usage),
                    ..MeterAnswer::of(false)
                };
                if reserved != Reserved::Created {
                    return Ok(answer);
                }
                (answer, now)
            }
            MeterOp::Settle { id, gas_used, now } => {
                let charged = ledger.settle(&id, gas_used);
                if charged.is_some() {
                    self.remember_settled(&id, now)?;
                }
                (
                    MeterAnswer {
                        charged,
                        ..MeterAnswer::of(charged.is_some())
                    },
                    now,
                )
            }
            MeterOp::Release { id } => {
                let released = ledger.release(&id);
                if !released {
                    return Ok(MeterAnswer::of(false));
                }
                (MeterAnswer::of(true), self.now()?)
            }
            MeterOp::Usage { limit, now } => {
                return Ok(MeterAnswer {
                    usage: Some(ledger.usage(period, limit, now)),
                    ..MeterAnswer::of(true)
                });
            }
            MeterOp::Periods { from } => {
                return Ok(MeterAnswer {
                    periods: ledger.used.range(from..).map(|(k, v)| (*k, *v)).collect(),
                    ..MeterAnswer::of(true)
                });
            }
        };
        // a year of months is kept; older periods are never read again
        let keep_from = ledger
            .used
            .keys()
            .next_back()
            .map_or(0, |newest| newest.saturating_sub(400 * 86_400));
        ledger.prune(keep_from, now);
        let written = ledger.clone();
        self.save(ledger).await?;
        if let Some(charged) = answer.charged.filter(|_| subject.counts_gas()) {
            // stored first: the data point reports a debit that happened
            crate::analytics::record(&crate::analytics::Point::gas(&subject.name(), charged));
        }
        self.schedule(&written, now).await?;
        if let Subject::Profile(address) = subject {
            for (start, used) in written.used.iter().rev().take(2) {
                let key = crate::store::usage_key_of_month(*address, *start);
                self.env
                    .kv("PROFILES")?
                    .put(&key, used.to_string())
                    .map_err(ApiError::internal)?
                    .execute()
                    .await
                    .map_err(ApiError::internal)?;
            }
        }
        Ok(answer)
    }
}

/// A client of one subject's `Meter` object.
#[derive(Debug)]
pub struct MeterClient {
    stub: Stub,
    subject: Subject,
}

impl MeterClient {
    /// The meter of `subject`.
    pub fn new(env: &Env, subject: &Subject) -> ApiResult<Self> {
        Ok(Self {
            stub: env
                .durable_object("METER")?
                .id_from_name(&subject.name())?
                .get_stub()?,
            subject: subject.clone(),
        })
    }

    /// Sends `op`.
    pub async fn send(&self, op: &MeterOp) -> ApiResult<MeterAnswer> {
        crate::plumbing::call_do(&self.stub, &format!("/{}", self.subject), op).await
    }

    /// The usage of the period containing `now`.
    pub async fn usage(&self, limit: u64, now: u64) -> ApiResult<Usage> {
        self.send(&MeterOp::Usage { limit, now })
            .await?
            .usage
            .ok_or_else(|| ApiError::internal("meter answered no usage"))
    }
}

/// One subject to reserve on, with its limit per period.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limit {
    /// Who.
    pub subject: Subject,
    /// Gas per period.
    pub limit: u64,
}

/// A reservation id and the subjects it is charged to, as a transaction carries it until its receipt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Charge {
    /// The reservation id.
    pub id: String,
    /// Every subject the transaction is charged to.
    pub meters: Vec<Subject>,
}

impl Charge {
    /// The API key charged (a deploy's key), when one is.
    pub fn key_id(&self) -> Option<&str> {
        self.meters.iter().find_map(|s| match s {
            Subject::Key(id) => Some(id.as_str()),
            _ => None,
        })
    }
}

/// Reserves `amount` for `id` on every subject at once, until `now + ttl`. Returns the subjects this call created
/// a reservation on (the ones it may release). When any refuses, the reservations this call created are released
/// and the first refusal is answered; an id already settled is refused as the same transaction again.
pub async fn reserve_all(
    env: &Env,
    id: &str,
    amount: u64,
    now: u64,
    ttl: u64,
    limits: &[Limit],
) -> ApiResult<Vec<Subject>> {
    let meters = limits
        .iter()
        .map(|l| MeterClient::new(env, &l.subject))
        .collect::<ApiResult<Vec<_>>>()?;
    let ops: Vec<MeterOp> = limits
        .iter()
        .map(|l| MeterOp::Reserve {
            id: id.to_owned(),
            amount,
            limit: l.limit,
            now,
            ttl,
        })
        .collect();
    let answers =
        futures_util::future::join_all(meters.iter().zip(&ops).map(|(meter, op)| meter.send(op))).await;
    let mut refusal = None;
    let mut created = Vec::new();
    for (l, answer) in limits.iter().zip(&answers) {
        let err = match answer {
            Ok(a) => match a.reserved {
                Some(Reserved::Created) => {
                    created.push(l.subject.clone());
                    continue;
                }
                Some(Reserved::Existing) => continue,
                Some(Reserved::Settled) => ApiError::new(
                    Code::InvalidRelayNonce,
                    "this transaction was relayed and settled already",
                ),
                Some(Reserved::Refused) | None => refused(
                    &l.subject,
                    a.usage.map_or(60, |u| u.reset_at.saturating_sub(now)),
                    amount,
                    l.limit,
                ),
            },
            Err(e) => e.clone(),
        };
        refusal.get_or_insert(err);
    }
    let Some(err) = refusal else {
        return Ok(created);
    };
    release_all(
        env,
        &Charge {
            id: id.to_owned(),
            meters: created,
        },
    )
    .await;
    Err(err)
}

/// Settles `charge` on each of its subjects to `gas_used`; returns the first subject's charge.
pub async fn settle_all(env: &Env, charge: &Charge, gas_used: u64, now: u64) -> ApiResult<Option<u64>> {
    let op = MeterOp::Settle {
        id: charge.id.clone(),
        gas_used,
        now,
    };
    let meters = charge
        .meters
        .iter()
        .map(|subject| MeterClient::new(env, subject))
        .collect::<ApiResult<Vec<_>>>()?;
    let answers = futures_util::future::join_all(meters.iter().map(|m| m.send(&op))).await;
    let mut charged = None;
    for answer in answers {
        charged = charged.or(answer?.charged);
    }
    Ok(charged)
}

/// Releases `charge` on each of its subjects (nothing was sent). Failures are logged: an unreleased reservation
/// expires by its TTL.
pub async fn release_all(env: &Env, charge: &Charge) {
    let op = MeterOp::Release {
        id: charge.id.clone(),
    };
    let release = |subject: &Subject| {
        let op = &op;
        let meter = MeterClient::new(env, subject);
        async move {
            match meter {
                Ok(meter) => meter.send(op).await.map(|_| ()),
                Err(e) => Err(e),
            }
        }
    };
    // every subject at once: a refusal answers after one round trip, however many shares it was reserved on
    let answers = futures_util::future::join_all(charge.meters.iter().map(release)).await;
    for (subject, released) in charge.meters.iter().zip(answers) {
        if let Err(e) = released {
            worker::console_error!("releasing {} on {subject}: {} {}", charge.id, e.code, e.message);
        }
    }
}

fn refused(subject: &Subject, retry_after: u64, amount: u64, limit: u64) -> ApiError {
    let message = match subject {
        Subject::Profile(_) => {
            format!(
                "this transaction needs up to {amount} gas, more than is left of the profile's monthly {limit}"
            )
        }
        Subject::Key(_) => {
            format!(
                "this deploy needs up to {amount} gas, more than is left of the API key's monthly {limit}"
            )
        }
        Subject::Relayer(_) => {
            "the relayer reached its daily gas ceiling (MAX_GAS_PER_DAY); sends resume tomorrow".to_owned()
        }
        Subject::Share(_, holder) => format!(
            "this transaction needs up to {amount} gas, more than is left of the {limit} gas a day that {} may \
             take of the relayer's daily ceiling (fair share)",
            holder.describe()
        ),
        Subject::ClientBudget(..) => format!(
            "this deploy needs up to {amount} gas, more than is left of the {limit} gas a month that one client \
             address may take of the API key's deploy budget (fair share)"
        ),
        Subject::Registrations(holder) => format!(
            "{} registered {limit} new profiles today, the most a day allows; registrations resume tomorrow",
            match holder {
                Holder::Key(_) => "this API key",
                _ => "this client address",
            }
        ),
    };
    ApiError::new(subject.refusal(), message).retry_after(retry_after.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    const JAN_15: u64 = 1_768_435_200; // 2026-01-15T00:00:00Z
    const FEB_1: u64 = 1_769_904_000;
    const TTL: u64 = 3_600;

    fn reserve(l: &mut Ledger, id: &str, amount: u64, now: u64) -> Reserved {
        l.reserve(id, amount, Period::Month, 1000, now, TTL).0
    }

    #[test]
    fn reserve_settle_release() {
        let mut l = Ledger::default();
        let (r, u) = l.reserve("a", 600, Period::Month, 1000, JAN_15, TTL);
        assert_eq!(r, Reserved::Created);
        assert_eq!(
            (u.used, u.reserved, u.remaining, u.reset_at),
            (0, 600, 400, FEB_1)
        );
        // does not fit: refused, nothing changes
        let (r, u) = l.reserve("b", 401, Period::Month, 1000, JAN_15, TTL);
        assert_eq!(r, Reserved::Refused);
        assert_eq!(u.remaining, 400);
        assert_eq!(l.open.len(), 1);
        // the same id again is the same reservation, not the caller's to release
        assert_eq!(reserve(&mut l, "a", 600, JAN_15), Reserved::Existing);
        assert_eq!(l.open.len(), 1);
        // settled to what the receipt used; settling twice charges once
        assert_eq!(l.settle("a", 420), Some(420));
        assert_eq!(l.settle("a", 420), None);
        let u = l.usage(Period::Month, 1000, JAN_15);
        assert_eq!((u.used, u.reserved, u.remaining), (420, 0, 580));
        assert_eq!(reserve(&mut l, "c", 580, JAN_15), Reserved::Created);
        assert!(l.release("c"));
        assert!(!l.release("c"));
        assert_eq!(l.usage(Period::Month, 1000, JAN_15).remaining, 580);
    }

    #[test]
    fn what_a_receipt_used_is_charged_even_above_the_reservation() {
        // a deploy sent again after its transaction was dropped is estimated again and may need more gas than
        // its first reservation: the receipt's gas is what the relayer paid, and what is counted
        let mut l = Ledger::default();
        assert_eq!(reserve(&mut l, "a", 600, JAN_15), Reserved::Created);
        assert_eq!(l.settle("a", 750), Some(750));
        let u = l.usage(Period::Month, 1000, JAN_15);
        assert_eq!((u.used, u.reserved, u.remaining), (750, 0, 250));
    }

    #[test]
    fn periods_reset_and_charges_stay_in_their_period() {
        let mut l = Ledger::default();
        assert_eq!(reserve(&mut l, "a", 900, JAN_15), Reserved::Created);
        // settled after the month turned: charged to January, February starts full
        assert_eq!(l.settle("a", 900), Some(900));
        assert_eq!(l.usage(Period::Month, 1000, JAN_15).remaining, 100);
        assert_eq!(l.usage(Period::Month, 1000, FEB_1).remaining, 1000);
        assert_eq!(Period::Day.start(JAN_15 + 3600), JAN_15);
        assert_eq!(Period::Day.end(JAN_15 + 3600), JAN_15 + 86_400);
    }

    #[test]
    fn unsettled_reservations_expire_and_a_late_receipt_is_still_charged() {
        let mut l = Ledger::default();
        assert_eq!(reserve(&mut l, "a", 700, JAN_15), Reserved::Created);
        assert_eq!(reserve(&mut l, "b", 200, JAN_15 + 10), Reserved::Created);
        assert_eq!(l.next_expiry(), Some(JAN_15 + TTL));
        assert_eq!(l.expire(JAN_15 + TTL - 1), 0);
        assert_eq!(l.expire(JAN_15 + TTL), 1);
        // its gas is back for others
        let u = l.usage(Period::Month, 1000, JAN_15 + TTL);
        assert_eq!((u.reserved, u.remaining), (200, 800));
        assert_eq!(l.next_expiry(), Some(JAN_15 + 10 + TTL));
        // mined after all: charged once, to its period
        assert_eq!(l.settle("a", 650), Some(650));
        assert_eq!(l.settle("a", 650), None);
        assert_eq!(l.usage(Period::Month, 1000, JAN_15).used, 650);
        // expired ones are forgotten after their keep time
        assert_eq!(l.expire(JAN_15 + 10 + TTL), 1);
        l.prune(0, JAN_15 + 10 + TTL + EXPIRED_KEEP_SECONDS);
        assert!(l.expired.is_empty());
        assert_eq!(l.settle("b", 1), None);
    }

    #[test]
    fn ledgers_stored_before_expiry_existed_still_load() {
        let old = r#"{"used":{"1767225600":5},"open":{"x":{"amount":7,"periodStart":1767225600}}}"#;
        let mut l: Ledger = serde_json::from_str(old).unwrap_or_default();
        assert_eq!(l.open.get("x").map(|r| r.expires_at), Some(0));
        assert_eq!(l.expire(JAN_15), 1);
        assert_eq!(l.settle("x", 7), Some(7));
    }

    #[test]
    fn subjects_round_trip_and_are_typed() {
        let profile: Address = "0x00000000000000000000000000000000000000Ab"
            .parse()
            .unwrap_or_default();
        for s in [
            Subject::Profile(profile),
            Subject::Key("0123456789abcdef".into()),
            Subject::Relayer(4201),
            Subject::Share(42, Holder::Profile(profile)),
            Subject::Share(42, Holder::Controller(profile)),
            Subject::Share(42, Holder::Key("0123456789abcdef".into())),
            Subject::Share(4201, Holder::Client("2001:db8:1:2::/64".into())),
            Subject::Share(42, Holder::Untrusted),
            Subject::ClientBudget("0123456789abcdef".into(), "198.51.100.7".into()),
            Subject::Registrations(Holder::Key("0123456789abcdef".into())),
            Subject::Registrations(Holder::Client("::1".into())),
        ] {
            assert_eq!(Subject::parse(&s.name()), Some(s.clone()));
            let json = serde_json::to_string(&s).unwrap_or_default();
            assert_eq!(serde_json::from_str::<Subject>(&json).ok(), Some(s));
        }
        assert_eq!(
            Subject::Profile(profile).name(),
            "profile:0x00000000000000000000000000000000000000ab"
        );
        for bad in [
            "",
            "profile:",
            "profile:0x12",
            "key:",
            "relayer:x",
            "other:1",
            "relayer",
            "share:42",
            "share:x:untrusted",
            "share:42:key:",
            "share:42:key:a:b",
            "share:42:client:",
            "share:42:other:1",
            "client-budget:abc",
            "registrations:",
        ] {
            assert_eq!(Subject::parse(bad), None, "{bad}");
        }
        assert_eq!(Subject::Relayer(1).period(), Period::Day);
        assert_eq!(Subject::Key("k".into()).refusal(), Code::GasBudgetExceeded);
        assert_eq!(Subject::Share(1, Holder::Untrusted).name(), "share:1:untrusted");
        assert_eq!(Subject::Share(1, Holder::Untrusted).period(), Period::Day);
        assert_eq!(
            Subject::ClientBudget("k".into(), "::1".into()).period(),
            Period::Month
        );
        assert!(!Subject::Registrations(Holder::Key("k".into())).counts_gas());
    }

    #[cfg(not(target_arch = "wasm32"))]
    proptest::proptest! {
        // any interleaving of reservations, settlements, releases and expiries: never over the limit while open,
        // every settled unit counted exactly once
        #[test]
        fn never_over_and_never_lost(ops in proptest::collection::vec((0u8..4, 0u8..6, 0u64..500), 0..60)) {
            let mut l = Ledger::default();
            let mut charged = 0u64;
            let mut now = JAN_15;
            for (kind, id, amount) in ops {
                let id = id.to_string();
                match kind {
                    0 => { l.reserve(&id, amount, Period::Month, 1000, now, TTL); }
                    1 => { charged += l.settle(&id, amount).unwrap_or(0); }
                    2 => { l.release(&id); }
                    _ => { now += amount * 10; l.expire(now); }
                }
                let u = l.usage(Period::Month, 1000, JAN_15);
                proptest::prop_assert!(u.reserved <= 1000);
                proptest::prop_assert_eq!(u.used, charged);
                proptest::prop_assert!(l.open.keys().all(|k| !l.expired.contains_key(k)));
            }
        }
    }
}
