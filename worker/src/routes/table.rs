//! The route table: every route once, as method, path pattern and handler. It drives dispatch
//! ([`super::handle`]), the `Allow` header of a 405, and the check that the OpenAPI document lists exactly these.

/// What a route does: one variant per route; `dispatch` in [`super`] matches on it exhaustively.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Handler {
    Health,
    Ready,
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
    RelayerStatus,
    DrainSigner,
    ActivateSigner,
    CancelTransaction,
    ReplaceTransaction,
    /// the pending transactions of every signer
    PendingTransactions,
    Metrics,
    UpdateKey,
    Usage,
    /// the operator console's page
    Console,
    /// the operator console's script and style sheet
    ConsoleAsset,
    /// a key's (`{id}`) or the operator's webhook
    SetWebhook,
    RemoveWebhook,
    WebhookDeliveries,
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
    route("GET", "/ready", Handler::Ready),
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
    route("GET", "/admin/relayer", Handler::RelayerStatus),
    route(
        "POST",
        "/admin/relayer/signers/{address}/drain",
        Handler::DrainSigner,
    ),
    route(
        "POST",
        "/admin/relayer/signers/{address}/activate",
        Handler::ActivateSigner,
    ),
    route(
        "POST",
        "/admin/relayer/transactions/{hash}/cancel",
        Handler::CancelTransaction,
    ),
    route(
        "POST",
        "/admin/relayer/transactions/{hash}/replace",
        Handler::ReplaceTransaction,
    ),
    route("GET", "/admin/metrics", Handler::Metrics),
    route("PATCH", "/admin/api-keys/{id}", Handler::UpdateKey),
    route("GET", "/admin/usage", Handler::Usage),
    route("GET", "/admin", Handler::Console),
    route("GET", "/admin/assets/{file}", Handler::ConsoleAsset),
    route("POST", "/admin/api-keys/{id}/webhook", Handler::SetWebhook),
    route("DELETE", "/admin/api-keys/{id}/webhook", Handler::RemoveWebhook),
    route(
        "GET",
        "/admin/api-keys/{id}/webhook/deliveries",
        Handler::WebhookDeliveries,
    ),
    route("POST", "/admin/webhook", Handler::SetWebhook),
    route("DELETE", "/admin/webhook", Handler::RemoveWebhook),
    route("GET", "/admin/webhook/deliveries", Handler::WebhookDeliveries),
    route("GET", "/admin/relayer/transactions", Handler::PendingTransactions),
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
mod tests;
