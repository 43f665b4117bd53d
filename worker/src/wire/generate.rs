//! `worker/openapi.json` is generated: the hand-written part (`worker/openapi/paths.json`: the operations, the
//! parameters, and the schemas of what has no answer type — the request bodies, which the core parses by hand, and
//! the values narrowed per deployment) plus the schemas of the answers, generated from the core's wire types
//! (`schemars::JsonSchema`, feature `schema`; doc comments become descriptions).
//!
//! `openapi_json_is_generated` fails when the committed document is not the generated one; to regenerate it:
//! `UPDATE_OPENAPI=1 cargo test -p profile-relayer-worker openapi_json_is_generated`.

use profile_relayer::api::{
    DeployResponse, ErrorBody, ExecuteResponse, ProfileStatus, QuotaResponse, RegisterResponse, SearchBoth,
    TransactionStatus, UploadAnswer,
    admin::{ApiKeyList, CreatedApiKey, CreatedWebhook, Health, RemovedWebhook, RunStats, WebhookDeliveries},
    algolia::{AlgoliaError, AlgoliaResults},
    records::{IndexerStatus, NotIndexed},
};
use schemars::{
    JsonSchema, Schema, SchemaGenerator,
    generate::SchemaSettings,
    transform::{RecursiveTransform, Transform},
};
use serde_json::{Map, Value};

/// The hand-written part of the document.
const PATHS: &str = include_str!("../../openapi/paths.json");

/// The generated document's path, from the Worker crate.
const DOCUMENT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/openapi.json");

/// Every answer is closed: an object type lists every field its type serializes, so a field the document does not
/// list is a drift (`additionalProperties: false` on every struct's object schema).
#[derive(Clone)]
struct Closed;

impl Transform for Closed {
    fn transform(&mut self, schema: &mut Schema) {
        let is_struct = schema.get("type").and_then(Value::as_str) == Some("object")
            && schema.get("properties").is_some();
        if is_struct && schema.get("additionalProperties").is_none() {
            schema.insert("additionalProperties".into(), Value::Bool(false));
        }
    }
}

/// The schemas of the answer types (and of every type they reference), by component name.
fn generated_schemas() -> Map<String, Value> {
    let mut generator: SchemaGenerator = SchemaSettings::draft2020_12()
        .for_serialize()
        .with(|s| {
            s.definitions_path = "/components/schemas".into();
            s.meta_schema = None;
        })
        .with_transform(RecursiveTransform(Closed))
        .into_generator();
    fn answer<T: JsonSchema>(generator: &mut SchemaGenerator) {
        generator.subschema_for::<T>();
    }
    answer::<DeployResponse>(&mut generator);
    answer::<RegisterResponse>(&mut generator);
    answer::<ProfileStatus>(&mut generator);
    answer::<SearchBoth>(&mut generator);
    answer::<UploadAnswer>(&mut generator);
    answer::<ErrorBody>(&mut generator);
    answer::<ExecuteResponse>(&mut generator);
    answer::<QuotaResponse>(&mut generator);
    answer::<TransactionStatus>(&mut generator);
    answer::<NotIndexed>(&mut generator);
    answer::<IndexerStatus>(&mut generator);
    answer::<Health>(&mut generator);
    answer::<ApiKeyList>(&mut generator);
    answer::<CreatedApiKey>(&mut generator);
    answer::<RunStats>(&mut generator);
    answer::<CreatedWebhook>(&mut generator);
    answer::<RemovedWebhook>(&mut generator);
    answer::<WebhookDeliveries>(&mut generator);
    answer::<AlgoliaResults>(&mut generator);
    answer::<AlgoliaError>(&mut generator);
    // the Worker's own answers
    answer::<profile_relayer::api::admin::RelayerView>(&mut generator);
    answer::<profile_relayer::api::admin::SignerView>(&mut generator);
    answer::<profile_relayer::api::admin::ManagedTransaction>(&mut generator);
    answer::<profile_relayer::api::admin::PendingTransactionList>(&mut generator);
    answer::<profile_relayer::api::admin::UsageView>(&mut generator);
    answer::<crate::ready::Readiness>(&mut generator);
    generator.take_definitions(true)
}

/// The document: the hand-written part with the generated schemas added to `components.schemas` (after the
/// hand-written ones). A schema named in both is an error.
pub(crate) fn document() -> Result<String, String> {
    let mut doc: Value = serde_json::from_str(PATHS).map_err(|e| format!("openapi/paths.json: {e}"))?;
    let schemas = doc
        .pointer_mut("/components/schemas")
        .and_then(Value::as_object_mut)
        .ok_or("openapi/paths.json has no components.schemas")?;
    for (name, schema) in generated_schemas() {
        if schemas.contains_key(&name) {
            return Err(format!(
                "{name} is both hand-written (openapi/paths.json) and generated"
            ));
        }
        schemas.insert(name, schema);
    }
    let mut text = serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?;
    text.push('\n');
    Ok(text)
}

#[test]
fn openapi_json_is_generated() {
    let generated = document().unwrap();
    if std::env::var_os("UPDATE_OPENAPI").is_some() {
        std::fs::write(DOCUMENT, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(DOCUMENT).unwrap();
    assert!(
        committed == generated,
        "worker/openapi.json is not the generated document: run \
         `UPDATE_OPENAPI=1 cargo test -p profile-relayer-worker openapi_json_is_generated`"
    );
}
