//! The route table against the OpenAPI document and the dispatch rules.

use super::*;
use serde_json::Value;

#[test]
fn openapi_lists_exactly_the_routes() {
    let doc: Value = serde_json::from_str(crate::plumbing::OPENAPI).unwrap();
    assert_eq!(doc["openapi"].as_str().unwrap().get(..3), Some("3.1"));
    let mut documented: Vec<(String, String)> = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys() {
            if method != "parameters" {
                documented.push((method.to_uppercase(), path.clone()));
            }
        }
    }
    documented.sort();
    let mut routes: Vec<(String, String)> = ROUTES
        .iter()
        .map(|r| (r.method.to_owned(), r.pattern.to_owned()))
        .collect();
    routes.sort();
    assert_eq!(documented, routes);
}

#[test]
fn allow_lists_the_methods_of_the_path() {
    assert_eq!(allowed_methods(&["health"]).as_deref(), Some("GET, OPTIONS"));
    assert_eq!(
        allowed_methods(&["admin", "api-keys"]).as_deref(),
        Some("GET, OPTIONS, POST")
    );
    // `register` is not an `{address}`
    assert_eq!(
        allowed_methods(&["api", "universal-profile", "register"]).as_deref(),
        Some("OPTIONS, POST")
    );
    assert_eq!(
        allowed_methods(&["api", "universal-profile", "0x01"]).as_deref(),
        Some("GET, OPTIONS")
    );
    assert_eq!(
        allowed_methods(&["ipfs", "Qm", "a", "b"]).as_deref(),
        Some("GET, HEAD, OPTIONS")
    );
    assert_eq!(
        allowed_methods(&["1", "indexes", "%2A", "queries"]).as_deref(),
        Some("OPTIONS, POST")
    );
    // the panic route is in no `Allow`
    assert_eq!(allowed_methods(&["admin", "panic"]), None);
    assert_eq!(allowed_methods(&["nothing", "here"]), None);
}

#[test]
fn patterns() {
    assert!(matches(
        "/api/universal-profile/{address}",
        &["api", "universal-profile", "0x1"]
    ));
    assert!(!matches(
        "/api/universal-profile/{address}",
        &["api", "universal-profile"]
    ));
}

/// How often each handler is routed: (in [`ROUTES`], in [`TEST_ROUTES`]). Exhaustive: a new handler needs a line.
fn intended(handler: Handler) -> (usize, usize) {
    match handler {
        Handler::Register
        | Handler::Ipfs
        | Handler::Image
        | Handler::SetWebhook
        | Handler::RemoveWebhook
        | Handler::WebhookDeliveries => (2, 0),
        Handler::Panic => (0, 1),
        Handler::Health
        | Handler::Ready
        | Handler::OpenApi
        | Handler::Deploy
        | Handler::Status
        | Handler::Execute
        | Handler::Quota
        | Handler::Transaction
        | Handler::CreateKey
        | Handler::ListKeys
        | Handler::RevokeKey
        | Handler::Add
        | Handler::LookupAddress
        | Handler::LookupToken
        | Handler::Stats
        | Handler::IndexerStatus
        | Handler::Search
        | Handler::AlgoliaQuery
        | Handler::AlgoliaGet
        | Handler::AlgoliaBrowse
        | Handler::AlgoliaQueries
        | Handler::RunIndexer
        | Handler::RelayerStatus
        | Handler::DrainSigner
        | Handler::ActivateSigner
        | Handler::CancelTransaction
        | Handler::ReplaceTransaction
        | Handler::PendingTransactions
        | Handler::Metrics
        | Handler::UpdateKey
        | Handler::Usage
        | Handler::Console
        | Handler::ConsoleAsset => (1, 0),
    }
}

const HANDLERS: [Handler; 40] = [
    Handler::Health,
    Handler::Ready,
    Handler::OpenApi,
    Handler::Deploy,
    Handler::Register,
    Handler::Status,
    Handler::Execute,
    Handler::Quota,
    Handler::Transaction,
    Handler::CreateKey,
    Handler::ListKeys,
    Handler::RevokeKey,
    Handler::Ipfs,
    Handler::Image,
    Handler::Add,
    Handler::LookupAddress,
    Handler::LookupToken,
    Handler::Stats,
    Handler::IndexerStatus,
    Handler::Search,
    Handler::AlgoliaQuery,
    Handler::AlgoliaGet,
    Handler::AlgoliaBrowse,
    Handler::AlgoliaQueries,
    Handler::RunIndexer,
    Handler::RelayerStatus,
    Handler::DrainSigner,
    Handler::ActivateSigner,
    Handler::CancelTransaction,
    Handler::ReplaceTransaction,
    Handler::PendingTransactions,
    Handler::Metrics,
    Handler::UpdateKey,
    Handler::Usage,
    Handler::Console,
    Handler::ConsoleAsset,
    Handler::SetWebhook,
    Handler::RemoveWebhook,
    Handler::WebhookDeliveries,
    Handler::Panic,
];

#[test]
fn every_handler_is_routed_as_intended() {
    for handler in HANDLERS {
        let count = |routes: &[Route]| routes.iter().filter(|r| r.handler == handler).count();
        assert_eq!(
            (count(ROUTES), count(TEST_ROUTES)),
            intended(handler),
            "{handler:?}"
        );
    }
    // every routed handler is in HANDLERS (an unrouted variant would fail the dead-code lint)
    for r in ROUTES.iter().chain(TEST_ROUTES) {
        assert!(HANDLERS.contains(&r.handler), "{r:?}");
    }
    let total: usize = HANDLERS.iter().map(|h| intended(*h).0 + intended(*h).1).sum();
    assert_eq!(total, ROUTES.len() + TEST_ROUTES.len());
    // one route per method and pattern
    for (i, a) in ROUTES.iter().enumerate() {
        for b in ROUTES.iter().skip(i + 1) {
            assert!((a.method, a.pattern) != (b.method, b.pattern), "{a:?} twice");
        }
    }
}

/// Whether a handler can answer 429: an API key's limit, a client address's (relay routes, lookups, search,
/// `/ipfs` and `/image` misses) or the admin-guess limit. Exhaustive: a new handler needs a line.
fn rate_limited(handler: Handler) -> bool {
    match handler {
        Handler::Deploy
        | Handler::Register
        | Handler::Status
        | Handler::Add
        | Handler::Execute
        | Handler::Quota
        | Handler::Transaction
        | Handler::CreateKey
        | Handler::ListKeys
        | Handler::RevokeKey
        | Handler::RunIndexer
        | Handler::Panic
        | Handler::Ipfs
        | Handler::Image
        | Handler::LookupAddress
        | Handler::LookupToken
        | Handler::Stats
        | Handler::IndexerStatus
        | Handler::Search
        | Handler::AlgoliaQuery
        | Handler::AlgoliaGet
        | Handler::AlgoliaBrowse
        | Handler::AlgoliaQueries
        | Handler::RelayerStatus
        | Handler::DrainSigner
        | Handler::ActivateSigner
        | Handler::CancelTransaction
        | Handler::ReplaceTransaction
        | Handler::PendingTransactions
        | Handler::Metrics
        | Handler::UpdateKey
        | Handler::Usage
        | Handler::SetWebhook
        | Handler::RemoveWebhook
        | Handler::WebhookDeliveries
        | Handler::Ready => true,
        Handler::Health | Handler::OpenApi | Handler::Console | Handler::ConsoleAsset => false,
    }
}

#[test]
fn every_rate_limited_route_documents_its_429() {
    let doc: Value = serde_json::from_str(crate::plumbing::OPENAPI).unwrap();
    for r in ROUTES {
        let responses = &doc["paths"][r.pattern][r.method.to_lowercase()]["responses"];
        assert!(responses.is_object(), "{r:?} undocumented");
        let documented = responses.get("429").is_some();
        assert_eq!(
            documented,
            rate_limited(r.handler),
            "{} {}: 429",
            r.method,
            r.pattern
        );
        if let Some(reference) = responses["429"]["$ref"].as_str() {
            let name = reference.trim_start_matches("#/components/responses/");
            let retry_after = &doc["components"]["responses"][name]["headers"]["Retry-After"];
            assert!(
                retry_after.is_object(),
                "{} {}: 429 without Retry-After",
                r.method,
                r.pattern
            );
        }
    }
}

/// Splits a path as `handle` does and matches it.
fn lookup(
    routes: &'static [Route],
    method: &str,
    path: &'static str,
) -> Option<(Handler, Vec<(&'static str, &'static str)>)> {
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    find(routes, method, &segments).map(|m| (m.route.handler, m.params))
}

/// Method, path, and the handler and parameters it matches (`None`: 404 or 405).
type Case = (
    &'static str,
    &'static str,
    Option<(Handler, &'static [(&'static str, &'static str)])>,
);

#[test]
fn matching_picks_the_route() {
    use Handler::*;
    let cases: &[Case] = &[
        ("GET", "/health", Some((Health, &[]))),
        ("GET", "//health/", Some((Health, &[]))),
        ("HEAD", "/health", None),
        ("POST", "/health", None),
        ("GET", "/openapi.json", Some((OpenApi, &[]))),
        ("POST", "/api/universal-profile", Some((Deploy, &[]))),
        ("POST", "/api/universal-profile/register", Some((Register, &[]))),
        ("POST", "/api/users", Some((Register, &[]))),
        // `register` is a route of its own, never an address
        ("GET", "/api/universal-profile/register", None),
        (
            "GET",
            "/api/universal-profile/0xAbC",
            Some((Status, &[("address", "0xAbC")])),
        ),
        ("POST", "/api/universal-profile/0xAbC", None),
        ("GET", "/api/universal-profile/0xAbC/more", None),
        ("POST", "/api/execute", Some((Execute, &[]))),
        ("POST", "/api//quota", Some((Quota, &[]))),
        (
            "GET",
            "/api/transaction/0x12",
            Some((Transaction, &[("hash", "0x12")])),
        ),
        ("POST", "/admin/api-keys", Some((CreateKey, &[]))),
        ("GET", "/admin/api-keys", Some((ListKeys, &[]))),
        (
            "DELETE",
            "/admin/api-keys/00ff",
            Some((RevokeKey, &[("id", "00ff")])),
        ),
        ("DELETE", "/admin/api-keys", None),
        ("GET", "/ipfs/Qm", Some((Ipfs, &[("cid", "Qm")]))),
        ("HEAD", "/ipfs/Qm/a/b.json", Some((Ipfs, &[("cid", "Qm")]))),
        ("GET", "/ipfs", None),
        ("POST", "/ipfs/Qm", None),
        (
            "HEAD",
            "/image/bafy%2Fimg.png",
            Some((Image, &[("cid", "bafy%2Fimg.png")])),
        ),
        ("POST", "/api/v0/add", Some((Add, &[]))),
        (
            "GET",
            "/v1/42/address/0xa",
            Some((LookupAddress, &[("chainId", "42"), ("address", "0xa")])),
        ),
        (
            "GET",
            "/v1/0x2a/address/0xa/0x01",
            Some((
                LookupToken,
                &[("chainId", "0x2a"), ("address", "0xa"), ("tokenId", "0x01")],
            )),
        ),
        ("GET", "/v1/42/stats", Some((Stats, &[("chainId", "42")]))),
        (
            "GET",
            "/v1/42/indexer",
            Some((IndexerStatus, &[("chainId", "42")])),
        ),
        ("GET", "/v1/42/search", Some((Search, &[("chainId", "42")]))),
        ("GET", "/v1/42/other", None),
        ("POST", "/1/indexes/*/queries", Some((AlgoliaQueries, &[]))),
        ("POST", "/1/indexes/%2A/queries", Some((AlgoliaQueries, &[]))),
        ("POST", "/1/indexes/%2a/queries", Some((AlgoliaQueries, &[]))),
        ("POST", "/1/indexes/p_assets/queries", None),
        (
            "POST",
            "/1/indexes/*/query",
            Some((AlgoliaQuery, &[("indexName", "*")])),
        ),
        (
            "POST",
            "/1/indexes/p_assets/query",
            Some((AlgoliaQuery, &[("indexName", "p_assets")])),
        ),
        (
            "POST",
            "/1/indexes/p_assets/browse",
            Some((AlgoliaBrowse, &[("indexName", "p_assets")])),
        ),
        (
            "GET",
            "/1/indexes/p_assets",
            Some((AlgoliaGet, &[("indexName", "p_assets")])),
        ),
        ("POST", "/admin/indexer/run", Some((RunIndexer, &[]))),
        ("POST", "/admin/panic", None),
        ("GET", "/nothing/here", None),
    ];
    for (method, path, expected) in cases {
        let expected = expected.map(|(h, p)| (h, p.to_vec()));
        assert_eq!(lookup(ROUTES, method, path), expected, "{method} {path}");
    }
    assert_eq!(lookup(TEST_ROUTES, "POST", "/admin/panic"), Some((Panic, vec![])));
    assert_eq!(lookup(TEST_ROUTES, "GET", "/admin/panic"), None);
    assert_eq!(lookup(TEST_ROUTES, "POST", "/admin/panic/x"), None);
}

#[test]
fn parameters_by_name() {
    let found = find(ROUTES, "GET", &["v1", "42", "address", "0xa", "7"]).unwrap();
    assert_eq!(found.param("chainId").unwrap(), "42");
    assert_eq!(found.param("address").unwrap(), "0xa");
    assert_eq!(found.param("tokenId").unwrap(), "7");
}
