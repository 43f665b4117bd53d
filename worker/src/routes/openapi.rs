//! `GET /openapi.json`: the OpenAPI document, narrowed to the deployment.

use alloy_primitives::Address;
use serde_json::{Value, json};
use worker::{Request, Response};

use crate::plumbing::json_response;
use crate::{
    config::Config,
    error::{ApiError, ApiResult},
};

/// The OpenAPI 3.1 document.
pub use crate::plumbing::OPENAPI;

/// `GET /openapi.json`: the document narrowed to this deployment (see [`served_openapi`]).
pub(super) fn openapi(req: &Request, config: &Config) -> ApiResult<Response> {
    let relayer = config.relayer()?;
    let url = req.url()?;
    let origin = url.origin().ascii_serialization();
    let chains = config.chains()?;
    let ids: Vec<u64> = chains.iter().map(|c| c.chain_id).collect();
    let names = config.all_index_names()?;
    let doc = served_openapi(
        &origin,
        &ids,
        &names,
        relayer.constants.universal_receiver_delegate,
    )?;
    json_response(200, &doc)
}

/// [`OPENAPI`] with what depends on the deployment filled in: the server (`origin`), the chain ids (decimal, then
/// hex) and index names it answers, and the universal receiver delegate, which cannot be a controller.
fn served_openapi(
    origin: &str,
    chain_ids: &[u64],
    index_names: &[String],
    receiver_delegate: Address,
) -> ApiResult<Value> {
    let mut doc: Value = serde_json::from_str(OPENAPI).map_err(ApiError::internal)?;
    let checksummed = receiver_delegate.to_checksum(None);
    let digits = checksummed.get(2..).unwrap_or_default();
    let replacements = [
        (
            "/servers",
            json!([{ "url": origin, "description": "this deployment" }]),
        ),
        (
            "/components/schemas/ChainId/enum",
            chain_ids
                .iter()
                .map(|id| json!(id))
                .chain(
                    chain_ids
                        .iter()
                        .map(|id| json!(profile_relayer::networks::chain_id_hex(*id))),
                )
                .collect(),
        ),
        (
            "/components/schemas/IndexName",
            json!({ "type": "string", "enum": index_names }),
        ),
        (
            "/components/schemas/ControllerAddress/allOf/1/not/enum",
            json!([
                Address::ZERO.to_checksum(None),
                checksummed,
                format!("0x{}", digits.to_ascii_lowercase()),
                format!("0x{}", digits.to_ascii_uppercase()),
            ]),
        ),
    ];
    for (pointer, value) in replacements {
        *doc.pointer_mut(pointer)
            .ok_or_else(|| ApiError::internal(format!("openapi.json has no {pointer}")))? = value;
    }
    Ok(doc)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn every_operation_documents_its_statuses() {
        let doc: Value = serde_json::from_str(OPENAPI).unwrap();
        for (path, item) in doc["paths"].as_object().unwrap() {
            for (method, op) in item.as_object().unwrap() {
                if method == "parameters" {
                    continue;
                }
                let responses = op["responses"].as_object().unwrap();
                assert!(responses.contains_key("500"), "{method} {path}: no 500");
                let secured = op["security"].as_array().is_some_and(|s| !s.is_empty());
                // secured routes answer 401; the LSP15 routes answer it too (signatures, not keys)
                assert!(
                    !secured || responses.contains_key("401"),
                    "{method} {path}: a secured route can answer 401"
                );
                if op["security"][0].get("apiKey").is_some() {
                    assert!(
                        responses.contains_key("429"),
                        "{method} {path}: an API key route can answer 429"
                    );
                }
            }
        }
    }

    #[test]
    fn served_document_is_narrowed_to_the_deployment() {
        let urd = profile_relayer::networks::Lsp23Constants::V0_14_0.universal_receiver_delegate;
        let doc = served_openapi(
            "https://relayer.example",
            &[4201, 42],
            &["p_universal_profiles".into(), "p_assets".into()],
            urd,
        )
        .unwrap();
        assert_eq!(doc["servers"][0]["url"], "https://relayer.example");
        assert_eq!(
            doc["components"]["schemas"]["ChainId"]["enum"],
            json!([4201, 42, "0x1069", "0x2a"])
        );
        assert_eq!(
            doc["components"]["schemas"]["IndexName"]["enum"],
            json!(["p_universal_profiles", "p_assets"])
        );
        let excluded = &doc["components"]["schemas"]["ControllerAddress"]["allOf"][1]["not"]["enum"];
        let checksummed = urd.to_checksum(None);
        assert!(excluded.as_array().unwrap().contains(&json!(checksummed)));
        assert!(
            excluded
                .as_array()
                .unwrap()
                .contains(&json!(checksummed.to_lowercase()))
        );
        assert!(
            excluded
                .as_array()
                .unwrap()
                .contains(&json!(format!("0x{}", "0".repeat(40))))
        );
    }
}
