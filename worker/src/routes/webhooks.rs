//! The webhook admin routes: a key's webhook (`/admin/api-keys/{id}/webhook`) and the operator's
//! (`/admin/webhook`, low-balance alerts): set or replace (the secret is answered once, in this answer only),
//! remove, and the delivery log, newest first, paginated.

use profile_relayer::api::admin::{CreatedWebhook, RemovedWebhook, WebhookDeliveries};
use serde_json::Value;
use worker::{Env, Request, Response};

use crate::plumbing::{json_response, query_integer, read_body};
use crate::{
    auth::{self, ApiKeys, StoredKey},
    config::Config,
    error::{ApiError, ApiResult, Code},
    webhooks::{OPERATOR, WebhookOp, WebhooksClient, key_object, policy},
};

/// The largest body of `POST …/webhook` (`{"url": …}` with a URL of at most 384 bytes).
const MAX_BODY_BYTES: usize = 4_096;

/// The largest page of the delivery log, and the default one.
const MAX_LIMIT: u64 = 100;
const DEFAULT_LIMIT: u64 = 20;

/// Whose webhook a route addresses: the key `id` (its stored hash and record; 404 `API_KEY_NOT_FOUND` when there is
/// none) or, without an id, the operator's — with the name of the `Webhooks` object that holds it.
async fn endpoint(keys: &ApiKeys, id: Option<&str>) -> ApiResult<(String, Option<StoredKey>)> {
    match id {
        Some(id) => Ok((key_object(id), Some(keys.by_id(id).await?))),
        None => Ok((OPERATOR.to_owned(), None)),
    }
}

/// The `url` of a `{"url": "…"}` body, checked.
fn url_of(body: &str, allow_http: bool) -> ApiResult<String> {
    let value: Value =
        serde_json::from_str(body).map_err(|e| ApiError::new(Code::InvalidJson, e.to_string()))?;
    let Value::Object(obj) = value else {
        return Err(ApiError::new(Code::InvalidJson, "the body must be a JSON object"));
    };
    if let Some(k) = obj.keys().find(|k| k.as_str() != "url") {
        return Err(ApiError::new(Code::UnknownField, format!("unknown field {k:?}")));
    }
    match obj.get("url") {
        Some(Value::String(url)) => policy::check_url(url, allow_http)
            .map(String::from)
            .map_err(|why| ApiError::new(Code::InvalidWebhookUrl, why)),
        Some(_) => Err(ApiError::new(Code::InvalidFieldType, "url must be a string")),
        None => Err(ApiError::new(Code::MissingField, "missing field \"url\"")),
    }
}

/// `POST /admin/api-keys/{id}/webhook` (`id`) or `POST /admin/webhook` (none): 201 with the URL and the new
/// secret. Replacing a webhook makes a new secret; undelivered events go to the new URL, signed with it.
pub(super) async fn set(req: Request, env: &Env, config: &Config, id: Option<&str>) -> ApiResult<Response> {
    auth::authenticate_admin(&req, env, config).await?;
    let keys = ApiKeys::of(env)?;
    let (name, key) = endpoint(&keys, id).await?;
    if let Some(StoredKey { record, .. }) = &key
        && record.revoked_at.is_some()
    {
        // its log stays readable (the deploys it asked for still finish and are reported); nothing new is set up
        return Err(ApiError::new(
            Code::ApiKeyRevoked,
            format!(
                "the API key {} is revoked: no webhook is set for it",
                id.unwrap_or_default()
            ),
        ));
    }
    let url = url_of(
        &read_body(req, MAX_BODY_BYTES).await?,
        config.webhook_allow_http.value()?,
    )?;
    let created: CreatedWebhook = WebhooksClient::new(env, &name)?
        .send(&WebhookOp::Set { url: url.clone() })
        .await?;
    if let Some(mut key) = key {
        key.record.webhook_url = Some(url);
        keys.put(&key).await?;
    }
    json_response(201, &created)
}

/// `DELETE /admin/api-keys/{id}/webhook` or `DELETE /admin/webhook`: undelivered events are cancelled.
pub(super) async fn remove(
    req: &Request,
    env: &Env,
    config: &Config,
    id: Option<&str>,
) -> ApiResult<Response> {
    auth::authenticate_admin(req, env, config).await?;
    let keys = ApiKeys::of(env)?;
    let (name, key) = endpoint(&keys, id).await?;
    let removed: RemovedWebhook = WebhooksClient::new(env, &name)?.send(&WebhookOp::Remove).await?;
    if let Some(mut key) = key
        && key.record.webhook_url.is_some()
    {
        key.record.webhook_url = None;
        keys.put(&key).await?;
    }
    json_response(200, &removed)
}

/// `GET /admin/api-keys/{id}/webhook/deliveries` or `GET /admin/webhook/deliveries`: `?limit=` (1 to 100, default
/// 20) deliveries, newest first, from `?cursor=` (the previous page's `nextCursor`).
pub(super) async fn deliveries(
    req: &Request,
    env: &Env,
    config: &Config,
    id: Option<&str>,
) -> ApiResult<Response> {
    auth::authenticate_admin(req, env, config).await?;
    let url = req.url()?;
    let limit = u32::try_from(query_integer(&url, "limit", 1..=MAX_LIMIT, DEFAULT_LIMIT)?)
        .map_err(ApiError::internal)?;
    let mut cursor = None;
    for (name, value) in url.query_pairs() {
        if name == "cursor" {
            if policy::parse_cursor(&value).is_none() {
                return Err(ApiError::new(
                    Code::InvalidCursor,
                    "cursor must be a nextCursor this route answered",
                ));
            }
            cursor = Some(value.into_owned());
        }
    }
    let (name, _) = endpoint(&ApiKeys::of(env)?, id).await?;
    let page: WebhookDeliveries = WebhooksClient::new(env, &name)?
        .send(&WebhookOp::Deliveries { limit, cursor })
        .await?;
    json_response(200, &page)
}
