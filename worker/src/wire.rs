//! The core's response types against `openapi.json`. The document's schemas of the answers are generated from the
//! types (`generate`); here a sample of each type, with every optional field set, is serialized as the Worker answers
//! it and validated against the document's schema of that answer by a JSON Schema 2020-12 validator (`jsonschema`),
//! and deserialized back as the clients read it: a `with`/`extend` attribute that misdescribes a field, or a schema
//! of the hand-written part that the answers do not meet, fails here. The three record kinds are validated against
//! their own schemas and against `Record` (any of them), which the search hits and lookups answer.

// native only: the schema generator and the validator are native dev-dependencies
#![cfg(not(target_arch = "wasm32"))]

use alloy_primitives::{Address, B256};
use profile_relayer::api::{
    DeployResponse, ErrorBody, ErrorDetail, ExecuteResponse, ProfileStatus, Quota, QuotaResponse,
    RegisterResponse, SearchBoth, SearchResult, TransactionKind, TransactionState, TransactionStatus,
    UploadAnswer,
    admin::{ApiKey, ApiKeyList, ChainRun, CreatedApiKey, Health, RunStats, Scope},
    algolia::{AlgoliaResult, AlgoliaResults, Exhaustive},
    records::{IndexStats, IndexerStatus, NotIndexed},
    shape,
};
use serde::{Serialize, de::DeserializeOwned};
use serde_json::{Value, json};

mod generate;
mod shapes;

use shapes::shape_errors;

/// The problems of `value` against the document's schema `name` (`#/components/schemas/<name>`), as a JSON Schema
/// 2020-12 validator finds them.
fn violations(name: &str, value: &Value) -> Vec<String> {
    let mut doc: Value = serde_json::from_str(crate::plumbing::OPENAPI).unwrap();
    // the document is the validator's root resource: its schemas' `$ref`s resolve in it
    doc["$ref"] = json!(format!("#/components/schemas/{name}"));
    let validator = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .build(&doc)
        .unwrap();
    validator
        .iter_errors(value)
        .map(|e| format!("{name} at {:?}: {e}", e.instance_path().as_str()))
        .collect()
}

/// `sample` as the Worker answers it, checked against the schema `name`; and read back as the clients read it.
fn answers_as<T: Serialize + DeserializeOwned + PartialEq + core::fmt::Debug>(
    name: &str,
    sample: &T,
) -> Vec<String> {
    let value = serde_json::to_value(sample).unwrap();
    let mut errors = violations(name, &value);
    errors.extend(shape_errors(name, &value));
    let back: T = serde_json::from_value(value).unwrap();
    assert_eq!(&back, sample, "{name} does not read back as it was written");
    errors
}

/// `sample` (a Worker answer, which no client reads back) as the Worker answers it, checked against the schema `name`.
fn serializes_as<T: Serialize>(name: &str, sample: &T) -> Vec<String> {
    violations(name, &serde_json::to_value(sample).unwrap())
}

const NOW: u64 = 1_795_341_600;

fn address() -> Address {
    Address::repeat_byte(0xab)
}

fn quota() -> Quota {
    Quota::monthly(1_234, NOW)
}

fn search_result(index: &str) -> SearchResult {
    SearchResult {
        hits: Vec::new(),
        nb_hits: 0,
        page: 0,
        nb_pages: 0,
        hits_per_page: 20,
        processing_time_ms: 3,
        query: "alice".into(),
        params: "query=alice&hitsPerPage=20&page=0".into(),
        index: index.into(),
    }
}

fn execute_response() -> ExecuteResponse {
    ExecuteResponse {
        transaction_hash: B256::repeat_byte(0x11),
        gas_used: Some(50_000),
        status: Some(TransactionState::Mined),
        quota: Some(QuotaResponse::from(&quota())),
    }
}

fn api_key() -> ApiKey {
    ApiKey {
        id: "0123456789abcdef".into(),
        name: "wallet backend".into(),
        scopes: Scope::ALL.to_vec(),
        rate_limit_per_minute: 60,
        created_at: NOW,
        revoked_at: Some(NOW + 60),
        gas_budget_per_month: Some(50_000_000),
        gas_used_this_month: Some(1_000_000),
        gas_reserved_this_month: Some(200_000),
        gas_remaining_this_month: Some(48_800_000),
        webhook_url: Some("https://hooks.example.com/relayer".to_owned()),
    }
}

fn webhook_deliveries() -> profile_relayer::api::admin::WebhookDeliveries {
    use profile_relayer::api::admin::{DeliveryState, WebhookDeliveries, WebhookDelivery};
    let delivery = |state, last_status, last_error: Option<&str>, next| WebhookDelivery {
        id: format!("msg_{}", "0a".repeat(16)),
        event_type: "transaction.mined".into(),
        created_at: NOW,
        state,
        attempts: 2,
        last_status,
        last_error: last_error.map(str::to_owned),
        last_attempt_at: Some(NOW + 5),
        next_attempt_at: next,
    };
    WebhookDeliveries {
        url: Some("https://hooks.example.com/relayer".into()),
        deliveries: vec![
            delivery(
                DeliveryState::Pending,
                Some(500),
                Some("answered 500"),
                Some(NOW + 300),
            ),
            delivery(DeliveryState::Delivered, Some(204), None, None),
            delivery(DeliveryState::Failed, None, Some("no answer within 10 s"), None),
            delivery(DeliveryState::Cancelled, None, None, None),
        ],
        next_cursor: Some(format!("{}_msg_{}", NOW * 1000, "0a".repeat(16))),
    }
}

fn index_stats() -> Vec<IndexStats> {
    vec![
        IndexStats {
            name: "p_assets".into(),
            entries: 3,
        },
        IndexStats {
            name: "p_universal_profiles".into(),
            entries: 5,
        },
    ]
}

fn run_stats(chain_id: u64, chains: Vec<ChainRun>) -> RunStats {
    RunStats {
        chain_id,
        from_block: 100,
        to_block: 199,
        head_block: 250,
        indexed: 7,
        errors: 1,
        retried: 2,
        windows: 1,
        window: 100,
        subrequests: 42,
        stopped: Some("time".into()),
        chains: Some(chains),
    }
}

fn algolia_result(cursor: Option<String>) -> AlgoliaResult {
    let mut facets = serde_json::Map::new();
    facets.insert("tags".into(), json!({ "defi": 3, "art": 1 }));
    AlgoliaResult {
        hits: vec![json!({ "objectID": "0xAbC", "_highlightResult": {} })],
        nb_hits: 1,
        page: 0,
        nb_pages: 1,
        hits_per_page: 20,
        offset: cursor.is_none().then_some(0),
        length: cursor.is_none().then_some(20),
        exhaustive_nb_hits: true,
        exhaustive_typo: Some(true),
        exhaustive: Some(Exhaustive {
            nb_hits: true,
            typo: true,
            facets_count: Some(true),
        }),
        query: "alice".into(),
        params: "query=alice&hitsPerPage=20&page=0".into(),
        index: "p_universal_profiles".into(),
        processing_time_ms: 2,
        facets: Some(facets),
        exhaustive_facets_count: Some(true),
        cursor,
    }
}

#[test]
fn every_response_type_is_its_openapi_schema() {
    let checks = [
        answers_as(
            "DeployResponse",
            &DeployResponse {
                universal_profile_address: address(),
                key_manager_address: Address::repeat_byte(0xcd),
                transaction_hash: Some(B256::repeat_byte(0x22)),
            },
        ),
        answers_as("Quota", &quota()),
        answers_as(
            "RegisterResponse",
            &RegisterResponse {
                universal_profile_address: address(),
                newly_registered: true,
                quota: quota(),
            },
        ),
        answers_as(
            "ProfileStatus",
            &ProfileStatus {
                universal_profile_address: address(),
                deployed: true,
                registered: true,
                pending_transaction: Some(B256::repeat_byte(0x33)),
                deployment_transaction: Some(B256::repeat_byte(0x44)),
                registered_at: Some(NOW),
                quota: Some(quota()),
            },
        ),
        answers_as("SearchResult", &search_result("p_universal_profiles")),
        answers_as(
            "SearchBoth",
            &SearchBoth {
                profiles: search_result("p_universal_profiles"),
                assets: search_result("p_assets"),
            },
        ),
        answers_as("Error", &ErrorBody::new("NOT_FOUND", "no such route")),
        answers_as(
            "AlgoliaError",
            &profile_relayer::api::algolia::AlgoliaError::new(
                "INVALID_FILTERS",
                "filters: unexpected )",
                400,
            ),
        ),
        answers_as(
            "Upload",
            &UploadAnswer::new(
                "file".into(),
                "bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku".into(),
                11,
                "2026-11-23T09:30:00.000Z".into(),
            ),
        ),
        answers_as("QuotaResponse", &QuotaResponse::from(&quota())),
        answers_as("ExecuteResponse", &execute_response()),
        answers_as(
            "TransactionStatus",
            &TransactionStatus {
                hash: B256::repeat_byte(0x55),
                kind: TransactionKind::Execute,
                profile: address(),
                status: TransactionState::Replaced,
                replaced_by: Some(B256::repeat_byte(0x66)),
                block_number: Some(100),
                gas_used: Some(21_000),
                charged: Some(30_000),
            },
        ),
        // the full sample: an unknown contract the indexer refuses
        answers_as(
            "NotIndexed",
            &NotIndexed::refused(
                address(),
                42,
                profile_relayer::api::records::Refusal {
                    code: "CALL_REVERTED".into(),
                    message: "supportsInterface reverted".into(),
                },
                NOW,
            ),
        ),
        answers_as("IndexStats", &index_stats()),
        answers_as(
            "Stats",
            &IndexerStatus {
                chain_id: 42,
                indexes: index_stats(),
                unindexable: 1,
                last_indexed_block: Some(90),
                head_block: Some(100),
                lag: Some(10),
            },
        ),
        answers_as("Health", &Health::ok(42, vec![42, 4201])),
        answers_as("ApiKey", &api_key()),
        answers_as(
            "ApiKeyList",
            &ApiKeyList {
                api_keys: vec![api_key()],
            },
        ),
        answers_as(
            "CreatedApiKey",
            &CreatedApiKey::new(api_key(), format!("prk_{}", "ab".repeat(32))),
        ),
        answers_as(
            "RunStats",
            &run_stats(
                42,
                vec![
                    ChainRun::Ran(run_stats(42, Vec::new())),
                    ChainRun::Failed {
                        chain_id: 4201,
                        error: ErrorDetail {
                            code: "RPC_ERROR".into(),
                            message: "the node is down".into(),
                        },
                    },
                ],
            ),
        ),
        answers_as("AlgoliaResult", &algolia_result(Some("eyJhIjoxfQ".into()))),
        answers_as(
            "CreatedWebhook",
            &profile_relayer::api::admin::CreatedWebhook {
                url: "https://hooks.example.com/relayer".into(),
                secret: crate::webhooks::sign::encode_secret(&[7u8; 32]),
            },
        ),
        answers_as(
            "RemovedWebhook",
            &profile_relayer::api::admin::RemovedWebhook { removed: true },
        ),
        answers_as("WebhookDeliveries", &webhook_deliveries()),
        serializes_as(
            "RelayerView",
            &profile_relayer::api::admin::RelayerView {
                chain_id: 42,
                signer: address(),
                balance: Some("100000000000000000".into()),
                today: profile_relayer::api::admin::PeriodView {
                    gas_used: 1,
                    gas_reserved: 2,
                    ceiling: 3,
                    remaining: 0,
                    reset_at: NOW,
                },
                month: profile_relayer::api::admin::MonthView {
                    gas_used: 1,
                    since: NOW,
                },
                pending: profile_relayer::api::admin::PendingView {
                    count: 1,
                    oldest_age_seconds: Some(12),
                },
                signers: vec![
                    profile_relayer::api::admin::SignerView {
                        address: address(),
                        balance: Some("100000000000000000".into()),
                        pending: Some(profile_relayer::api::admin::PendingView {
                            count: 1,
                            oldest_age_seconds: Some(12),
                        }),
                        state: "active".into(),
                    },
                    profile_relayer::api::admin::SignerView {
                        address: address(),
                        balance: None,
                        pending: None,
                        state: "draining".into(),
                    },
                ],
            },
        ),
        serializes_as(
            "ManagedTransaction",
            &profile_relayer::api::admin::ManagedTransaction {
                signer: address(),
                nonce: 7,
                replaced: B256::repeat_byte(1),
                transaction_hash: B256::repeat_byte(2),
            },
        ),
        serializes_as(
            "UsageView",
            &profile_relayer::api::admin::UsageView {
                chain_id: 42,
                days: profile_relayer::api::admin::DayUsage::series(
                    &[(NOW - NOW % 86_400, 21_000)].into_iter().collect(),
                    30,
                    NOW,
                ),
                keys: vec![profile_relayer::api::admin::KeyUsage {
                    id: "0123456789abcdef".into(),
                    name: "wallet".into(),
                    gas_used: 350_000,
                    gas_budget: 10_000_000,
                    revoked: false,
                }],
            },
        ),
        serializes_as(
            "Readiness",
            &crate::ready::Readiness::of(vec![crate::ready::Check {
                name: "config".into(),
                ok: false,
                detail: "CHAINS: not JSON".into(),
            }]),
        ),
        answers_as(
            "AlgoliaResults",
            &AlgoliaResults {
                results: vec![algolia_result(Some("c".into()))],
            },
        ),
    ];
    let errors: Vec<String> = checks.into_iter().flatten().collect();
    assert!(
        errors.is_empty(),
        "the types and worker/openapi.json differ:\n{}",
        errors.join("\n")
    );
}

/// The validation fails on each kind of drift.
#[test]
fn the_check_sees_drift() {
    let good = serde_json::to_value(quota()).unwrap();
    assert_eq!(violations("Quota", &good), Vec::<String>::new());
    let mut extra = good.clone();
    extra["bonus"] = json!(1);
    let mut missing = good.clone();
    missing.as_object_mut().unwrap().remove("resetDate");
    let mut wrong_type = good.clone();
    wrong_type["total"] = json!("20000000");
    let mut wrong_const = good.clone();
    wrong_const["unit"] = json!("lyx");
    let mut negative = good;
    negative["used"] = json!(-1);
    for drifted in [extra, missing, wrong_type, wrong_const, negative] {
        assert_eq!(violations("Quota", &drifted).len(), 1, "{drifted}");
    }
    // a hash or null, nothing else
    let mut status = serde_json::to_value(ProfileStatus {
        universal_profile_address: address(),
        deployed: false,
        registered: false,
        pending_transaction: None,
        deployment_transaction: None,
        registered_at: None,
        quota: None,
    })
    .unwrap();
    assert_eq!(violations("ProfileStatus", &status), Vec::<String>::new());
    for wrong in [json!(5), json!("0xAB"), json!(format!("0x{}", "AB".repeat(32)))] {
        status["pendingTransaction"] = wrong;
        assert_eq!(violations("ProfileStatus", &status).len(), 1, "{status}");
    }
    // a code the service does not declare
    let unknown = serde_json::to_value(ErrorBody::new("TEAPOT", "short and stout")).unwrap();
    assert_eq!(violations("Error", &unknown).len(), 1);
}

/// Full samples of the three record kinds, built as the indexer builds them (every optional field set).
fn records() -> Vec<Value> {
    use profile_relayer::{
        api::records::{
            AssetData, AssetRecord, MetadataInfo, ProfileRecord, Stamp, TokenRecord, TokenSummary,
        },
        lsp3::Lsp3ProfileJson,
        lsp4::{Lsp4MetadataJson, TokenType},
        lsp8::TokenIdFormat,
    };
    const BASE: &str = "https://api.example.org/";
    let stamp = Stamp {
        chain_id: 42,
        block: 7,
        now: NOW,
    };
    let info = || MetadataInfo {
        status: "verified".into(),
        url: Some("ipfs://bafkreibm6jg3ux5qumhcn2b3flc3tyu6dmlb4xa7u5bf44yegnrjhc4yeq".into()),
        error: Some("ignored".into()),
        dropped: vec!["links[1]".into()],
        raw: Some("{}".into()),
        truncated: true,
    };
    let image = json!([{ "width": 1, "height": 1, "url": "https://x.org/a.png" }]);
    let lsp3 = Lsp3ProfileJson::from_value_lenient(json!({ "LSP3Profile": {
        "name": "Alice", "description": "d", "tags": ["a"], "links": [{ "title": "x", "url": "https://x.org" }],
        "profileImage": image, "backgroundImage": image,
    } }))
    .unwrap()
    .value
    .profile;
    let lsp4 = || {
        Lsp4MetadataJson::from_value_lenient(json!({ "LSP4Metadata": {
            "name": "Coin", "description": "d", "links": [{ "title": "x", "url": "https://x.org" }],
            "icon": image, "images": [image],
        } }))
        .unwrap()
        .value
        .metadata
    };
    let data = AssetData {
        name: Some("Coin".into()),
        symbol: Some("C".into()),
        token_type: Some(TokenType::Nft),
        token_id_format: Some(TokenIdFormat::Number),
        creators: vec![address()],
    };
    let mut asset = AssetRecord::new(address(), true, stamp, data, Some(lsp4()), info(), BASE);
    asset.tokens = Some(vec![TokenSummary {
        token_id: B256::repeat_byte(1).to_string(),
        name: Some("Coin #1".into()),
        image_url: Some("https://x.org/a.png".into()),
    }]);
    let token = TokenRecord::new(
        address(),
        B256::repeat_byte(1),
        TokenIdFormat::Number,
        stamp,
        Some(lsp4()),
        info(),
        BASE,
    );
    let profile = ProfileRecord::new(address(), stamp, Some(lsp3), info(), BASE);
    vec![
        serde_json::to_value(profile).unwrap(),
        serde_json::to_value(asset).unwrap(),
        serde_json::to_value(token).unwrap(),
    ]
}

#[test]
fn every_record_kind_is_the_record_schema() {
    let mut errors = Vec::new();
    for (kind, value) in ["ProfileRecord", "AssetRecord", "TokenRecord"]
        .into_iter()
        .zip(records())
    {
        errors.extend(violations(kind, &value));
        // what the search answers and the lookup reads: any kind
        errors.extend(violations("Record", &value));
        let shape = match kind {
            "ProfileRecord" => "profile",
            "TokenRecord" => "token",
            _ => "asset",
        };
        errors.extend(shape_errors(shape, &value));
        if let Err(e) = shape::RECORD.check(&value) {
            errors.push(format!("{kind}: a search hit of this kind is refused: {e}"));
        }
    }
    assert!(
        errors.is_empty(),
        "the record types and worker/openapi.json differ:\n{}",
        errors.join("\n")
    );
}
