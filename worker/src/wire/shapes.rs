//! The clients' shapes (`profile_relayer::api::shape`) against the same full samples: each sample is accepted and,
//! for objects, has exactly the fields its shape lists.

use profile_relayer::api::{
    DeployResponse, ExecuteResponse, ProfileStatus, Quota, QuotaResponse, RegisterResponse, SearchBoth,
    SearchResult, TransactionStatus, UploadAnswer,
    records::{AssetRecord, IndexerStatus, NotIndexed, ProfileRecord, TokenRecord},
    shape::{self, Shape},
};
use serde_json::Value;

/// The clients' shape of the answer `name` (see `profile_relayer::api::shape`), for the types the clients read.
fn shape_of(name: &str) -> Option<Shape> {
    Some(match name {
        "DeployResponse" => DeployResponse::SHAPE,
        "Quota" => Quota::SHAPE,
        "RegisterResponse" => RegisterResponse::SHAPE,
        "ProfileStatus" => ProfileStatus::SHAPE,
        "SearchResult" => SearchResult::SHAPE,
        "SearchBoth" => SearchBoth::SHAPE,
        "Upload" => UploadAnswer::SHAPE,
        "QuotaResponse" => QuotaResponse::SHAPE,
        "ExecuteResponse" => ExecuteResponse::SHAPE,
        "TransactionStatus" => TransactionStatus::SHAPE,
        "NotIndexed" => NotIndexed::SHAPE,
        "IndexStats" => shape::STATS,
        "Stats" => IndexerStatus::SHAPE,
        "profile" => ProfileRecord::SHAPE,
        "asset" => AssetRecord::SHAPE,
        "token" => TokenRecord::SHAPE,
        _ => return None,
    })
}

/// A full sample against the clients' shape of it: accepted, and (for objects) its fields are exactly the listed
/// ones, so a field added to a type without its shape is found here.
pub(super) fn shape_errors(name: &str, value: &Value) -> Vec<String> {
    let Some(shape) = shape_of(name) else {
        return Vec::new();
    };
    let mut errors = Vec::new();
    if let Err(e) = shape.check(value) {
        errors.push(format!("{name}: the clients' shape refuses the sample: {e}"));
    }
    if let Some(fields) = value.as_object() {
        let listed: std::collections::BTreeSet<&str> = shape.field_names().into_iter().collect();
        let answered: std::collections::BTreeSet<&str> = fields.keys().map(String::as_str).collect();
        if listed != answered {
            errors.push(format!(
                "{name}: the clients' shape lists {listed:?}, the type answers {answered:?}"
            ));
        }
    }
    errors
}
