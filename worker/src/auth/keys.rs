//! The API-key repository: keys are stored in KV `API_KEYS` only as SHA-256 hashes. `key:<sha256(api key)>` →
//! [`ApiKeyRecord`] (what authentication reads); `id:<id>` → the hash, with the record as metadata (so that listing
//! needs one KV call per page, and an id finds its key).

use alloy_primitives::hex;
use sha2::{Digest, Sha256};
use worker::{Env, kv::KvStore};

use crate::error::{ApiError, ApiResult, Code};

/// What a key may do; a key as stored (never the key itself).
pub use profile_relayer::api::admin::{ApiKey as ApiKeyRecord, Scope};

/// Key prefix: `prk_` + 64 hex characters.
pub const KEY_PREFIX: &str = "prk_";

/// SHA-256 of a secret, hex.
pub fn hash_secret(secret: &str) -> String {
    hex::encode(Sha256::digest(secret.as_bytes()))
}

/// A fresh random key and its id.
pub fn generate_key() -> ApiResult<(String, String)> {
    let mut secret = [0u8; 32];
    let mut id = [0u8; 8];
    getrandom::fill(&mut secret).map_err(ApiError::internal)?;
    getrandom::fill(&mut id).map_err(ApiError::internal)?;
    Ok((format!("{KEY_PREFIX}{}", hex::encode(secret)), hex::encode(id)))
}

/// Whether `key` has the shape of an API key.
pub fn well_formed(key: &str) -> bool {
    key.strip_prefix(KEY_PREFIX)
        .is_some_and(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// `key:<hash>`: an API key's record, by the SHA-256 (hex) of the key.
fn record_key(hash: &str) -> String {
    format!("key:{hash}")
}

/// `id:<id>`: the hash of the API key with this id.
fn id_key(id: &str) -> String {
    format!("id:{id}")
}

/// A key as stored: its hash (where its record lives) and its record.
#[derive(Debug, Clone)]
pub struct StoredKey {
    /// SHA-256 (hex) of the key.
    pub hash: String,
    /// The record.
    pub record: ApiKeyRecord,
}

/// The API keys of KV `API_KEYS`.
#[derive(Debug)]
pub struct ApiKeys(KvStore);

impl ApiKeys {
    /// The deployment's keys.
    pub fn of(env: &Env) -> ApiResult<Self> {
        Ok(Self(env.kv("API_KEYS")?))
    }

    /// The record of the key `secret` (well formed), if it is one.
    pub async fn by_secret(&self, secret: &str) -> ApiResult<Option<ApiKeyRecord>> {
        self.0
            .get(&record_key(&hash_secret(secret)))
            .json()
            .await
            .map_err(ApiError::internal)
    }

    /// The key `id`; 404 `API_KEY_NOT_FOUND` when there is none (or `id` is not one).
    pub async fn by_id(&self, id: &str) -> ApiResult<StoredKey> {
        let not_found = || ApiError::new(Code::ApiKeyNotFound, format!("no API key with id {id}"));
        if id.len() != 16 || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(not_found());
        }
        let hash: String = self
            .0
            .get(&id_key(id))
            .text()
            .await
            .map_err(ApiError::internal)?
            .ok_or_else(not_found)?;
        let record: ApiKeyRecord = self
            .0
            .get(&record_key(&hash))
            .json()
            .await
            .map_err(ApiError::internal)?
            .ok_or_else(not_found)?;
        Ok(StoredKey { hash, record })
    }

    /// Writes a key: its record under `key:<hash>` (for authentication) and `id:<id>` → hash with the record as
    /// metadata (for listing, changing and revoking).
    pub async fn put(&self, key: &StoredKey) -> ApiResult<()> {
        self.0
            .put(&record_key(&key.hash), &key.record)
            .map_err(ApiError::internal)?
            .execute()
            .await
            .map_err(ApiError::internal)?;
        self.0
            .put(&id_key(&key.record.id), &key.hash)
            .map_err(ApiError::internal)?
            .metadata(&key.record)
            .map_err(ApiError::internal)?
            .execute()
            .await
            .map_err(ApiError::internal)
    }

    /// Every stored key, revoked ones too, as listed (the records' metadata).
    pub async fn list(&self) -> ApiResult<Vec<ApiKeyRecord>> {
        let mut keys = Vec::new();
        let mut cursor = None;
        loop {
            let mut list = self.0.list().prefix("id:".to_owned());
            if let Some(c) = cursor.take() {
                list = list.cursor(c);
            }
            let page = list.execute().await.map_err(ApiError::internal)?;
            for metadata in page.keys.into_iter().filter_map(|k| k.metadata) {
                keys.push(serde_json::from_value::<ApiKeyRecord>(metadata).map_err(ApiError::internal)?);
            }
            match page.cursor {
                Some(c) if !page.list_complete => cursor = Some(c),
                _ => break,
            }
        }
        Ok(keys)
    }

    /// Revokes the key `id` at `now` (once: a revoked key keeps its first date) and makes the revocation effective
    /// on its next request, whatever KV still caches (its `RateLimiter` object answers `revoked` from then on).
    pub async fn revoke(&self, env: &Env, id: &str, now: u64) -> ApiResult<ApiKeyRecord> {
        let mut key = self.by_id(id).await?;
        if key.record.revoked_at.is_none() {
            key.record.revoked_at = Some(now);
            self.put(&key).await?;
        }
        crate::ratelimit::Limiter::named(env, id)?.revoke().await?;
        Ok(key.record)
    }

    /// Changes the record of the key `id` with `change` and stores it; a revoked key is not changed (403
    /// `API_KEY_REVOKED`, `refusal` saying what was not done).
    pub async fn update(
        &self,
        id: &str,
        refusal: &str,
        change: impl FnOnce(&mut ApiKeyRecord),
    ) -> ApiResult<ApiKeyRecord> {
        let mut key = self.by_id(id).await?;
        if key.record.revoked_at.is_some() {
            return Err(ApiError::new(
                Code::ApiKeyRevoked,
                format!("the API key {id} is revoked: {refusal}"),
            ));
        }
        change(&mut key.record);
        self.put(&key).await?;
        Ok(key.record)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_shape_and_hash() {
        let key = format!("{KEY_PREFIX}{}", "ab".repeat(32));
        assert!(well_formed(&key));
        assert!(!well_formed("prk_abc"));
        assert!(!well_formed(&key.replace("prk_", "sk_")));
        assert_eq!(
            hash_secret("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn kv_key_formats() {
        assert_eq!(record_key("ab"), "key:ab");
        assert_eq!(id_key("0123456789abcdef"), "id:0123456789abcdef");
    }
}
