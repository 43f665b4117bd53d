//! The route table: every route once, as method, path pattern and handler. It drives dispatch
//! ([`super::handle`]), the `Allow` header of a 405, and the check that the OpenAPI document lists exactly these.

/// What a route does: one variant per route; `dispatch` in [`super`] matches on it exhaustively.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Handler {
    Health,
    OpenApi,
    Deploy,
    /// also under the alias `POST /api/users`
    Register,
    Status,
    Execute,
    Quota,
    Transaction,
    CreateKey,
    ListKeys,
    RevokeKey,
    /// GET and HEAD
    Ipfs,
    /// GET and HEAD
    Image,
    Add,
    LookupAddress,
    LookupToken,
    Stats,
    IndexerStatus,
    Search,
    AlgoliaQuery,
    AlgoliaGet,
    AlgoliaBrowse,
    AlgoliaQueries,
    RunIndexer,
    /// only in [`TEST_ROUTES`]
    Panic,
}

/// A route: `method` (upper case), `pattern` (`/`-separated; `{name}` is a parameter, a trailing `/{cid}` also takes
/// the path after the CID) and what answers it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Route {
    pub method: &'static str,
    pub pattern: &'static str,
    pub handler: Handler,
}

const fn route(method: &'static str, pattern: &'static str, handler: Handler) -> Route {
    Route {
        method,
        pattern,
        handler,
    }
}

/// Every route. The OpenAPI document must list exactly these (checked by a test).
pub const ROUTES: &[Route] = &[
    route("GET", "/health", Handler::Health),
    route("GET", "/openapi.json", Handler::OpenApi),
    route("POST", "/api/universal-profile", Handler::Deploy),
    route("POST", "/api/universal-profile/register", Handler::Register),
    route("POST", "/api/users", Handler::Register),
    route("GET", "/api/universal-profile/{address}", Handler::Status),
    route("POST", "/api/execute", Handler::Execute),
    route("POST", "/api/quota", Handler::Quota),
    route("GET", "/api/transaction/{hash}", Handler::Transaction),
    route("POST", "/admin/api-keys", Handler::CreateKey),
    route("GET", "/admin/api-keys", Handler::ListKeys),
    route("DELETE", "/admin/api-keys/{id}", Handler::RevokeKey),
    route("GET", "/ipfs/{cid}", Handler::Ipfs),
    route("HEAD", "/ipfs/{cid}", Handler::Ipfs),
    route("GET", "/image/{cid}", Handler::Image),
    route("HEAD", "/image/{cid}", Handler::Image),
    route("POST", "/api/v0/add", Handler::Add),
    route("GET", "/v1/{chainId}/address/{address}", Handler::LookupAddress),
    route(
        "GET",
        "/v1/{chainId}/address/{address}/{tokenId}",
        Handler::LookupToken,
    ),
    route("GET", "/v1/{chainId}/stats", Handler::Stats),
    route("GET", "/v1/{chainId}/indexer", Handler::IndexerStatus),
    route("GET", "/v1/{chainId}/search", Handler::Search),
    route("POST", "/1/indexes/{indexName}/query", Handler::AlgoliaQuery),
    route("GET", "/1/indexes/{indexName}", Handler::AlgoliaGet),
    route("POST", "/1/indexes/{indexName}/browse", Handler::AlgoliaBrowse),
    route("POST", "/1/indexes/*/queries", Handler::AlgoliaQueries),
    route("POST", "/admin/indexer/run", Handler::RunIndexer),
];

/// Routes that exist only when the var `PANIC_TEST_ROUTE=true` (never set in the deployments): not documented, not
/// in any `Allow`.
pub const TEST_ROUTES: &[Route] = &[route("POST", "/admin/panic", Handler::Panic)];

/// A route matched by a path, with its parameters (name, segment) in pattern order.
#[derive(Debug)]
pub struct Matched<'a> {
    pub route: &'static Route,
    params: Vec<(&'static str, &'a str)>,
}

impl<'a> Matched<'a> {
    /// The segment of the parameter `name`; an error only when the table names no such parameter.
    pub fn param(&self, name: &str) -> crate::error::ApiResult<&'a str> {
        self.params
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| *v)
            .ok_or_else(|| {
                crate::error::ApiError::internal(format!("{} has no {{{name}}}", self.route.pattern))
            })
    }
}

/// The route of `routes` answering `method` on a path (its non-empty `segments`).
pub fn find<'a>(routes: &'static [Route], method: &str, segments: &[&'a str]) -> Option<Matched<'a>> {
    let route = candidates(routes, segments)
        .into_iter()
        .find(|r| r.method == method)?;
    Some(Matched {
        route,
        params: params(route.pattern, segments),
    })
}

/// The `Allow` value of a path: the methods of the [`ROUTES`] matching it, and OPTIONS (the CORS preflight).
/// `None` when no route matches.
pub fn allowed_methods(segments: &[&str]) -> Option<String> {
    let mut methods: Vec<&str> = candidates(ROUTES, segments).iter().map(|r| r.method).collect();
    if methods.is_empty() {
        return None;
    }
    methods.push("OPTIONS");
    methods.sort_unstable();
    methods.dedup();
    Some(methods.join(", "))
}

/// The routes matching a path, whatever their method: routes without parameters take precedence
/// (`/api/universal-profile/register` is no `{address}`).
fn candidates(routes: &'static [Route], segments: &[&str]) -> Vec<&'static Route> {
    let matching: Vec<&Route> = routes.iter().filter(|r| matches(r.pattern, segments)).collect();
    let literal = matching.iter().any(|r| !r.pattern.contains('{'));
    matching
        .into_iter()
        .filter(|r| !literal || !r.pattern.contains('{'))
        .collect()
}

fn matches(pattern: &str, segments: &[&str]) -> bool {
    if let Some(prefix) = pattern.strip_suffix("/{cid}") {
        // the CID may be followed by a path (`/ipfs/{cid}`, `/image/{cid}`)
        return segments.first() == Some(&prefix.trim_start_matches('/')) && segments.len() >= 2;
    }
    let parts: Vec<&str> = pattern.trim_matches('/').split('/').collect();
    parts.len() == segments.len() && parts.iter().zip(segments).all(|(p, s)| part_matches(p, s))
}

/// One segment: a parameter matches any; the index name `*` (Algolia multi-query) also as `%2A`.
fn part_matches(part: &str, segment: &str) -> bool {
    part.starts_with('{') || part == segment || (part == "*" && segment.eq_ignore_ascii_case("%2A"))
}

/// The parameters of `pattern` (name without braces, segment); `segments` match it.
fn params<'a>(pattern: &'static str, segments: &[&'a str]) -> Vec<(&'static str, &'a str)> {
    pattern
        .trim_matches('/')
        .split('/')
        .zip(segments)
        .filter_map(|(p, s)| Some((p.strip_prefix('{')?.strip_suffix('}')?, *s)))
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn openapi_lists_exactly_the_routes() {
        let doc: Value = serde_json::from_str(super::super::OPENAPI).unwrap();
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
            Handler::Register | Handler::Ipfs | Handler::Image => (2, 0),
            Handler::Panic => (0, 1),
            Handler::Health
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
            | Handler::RunIndexer => (1, 0),
        }
    }

    const HANDLERS: [Handler; 25] = [
        Handler::Health,
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
}
