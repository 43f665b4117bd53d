//! The operator console (`GET /admin`, `GET /admin/assets/{file}`): a static page — HTML, one ES module, one style
//! sheet from the repository's `console/` folder, compiled into the Worker — that reads the admin JSON routes with the
//! admin token the operator types into it. The page holds no secret and needs none to load; the token stays in the
//! page's memory and travels only as `Authorization: Bearer …` (no cookie).
//!
//! Served by the Worker rather than as wrangler static assets so that the answers carry the same strict headers as
//! every other answer, set here and unit-tested: a Content-Security-Policy without `unsafe-inline` / `unsafe-eval`
//! (the page has no inline script or style: checked below), `frame-ancestors 'none'`, `no-referrer`, `nosniff`.

use worker::Response;

use crate::error::{ApiError, ApiResult};

/// The console's files: name under `/admin/assets/`, media type, content.
const FILES: &[(&str, &str, &str)] = &[
    (
        "index.html",
        "text/html; charset=utf-8",
        include_str!("../../../console/index.html"),
    ),
    (
        "console.js",
        "text/javascript; charset=utf-8",
        include_str!("../../../console/console.js"),
    ),
    (
        "console.css",
        "text/css; charset=utf-8",
        include_str!("../../../console/console.css"),
    ),
];

/// The page's Content-Security-Policy: its own script and style sheet, requests to its own origin, nothing inline,
/// never framed, no `<base>`, no form posts, Trusted Types required for every DOM sink (the script builds nodes,
/// never HTML).
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; \
require-trusted-types-for 'script'";

/// The headers of every console answer (with its media type).
pub fn headers(content_type: &'static str) -> [(&'static str, &'static str); 9] {
    [
        ("content-type", content_type),
        ("content-security-policy", CSP),
        ("x-content-type-options", "nosniff"),
        ("x-frame-options", "DENY"),
        ("referrer-policy", "no-referrer"),
        ("cross-origin-opener-policy", "same-origin"),
        ("cross-origin-resource-policy", "same-origin"),
        (
            "permissions-policy",
            "camera=(), microphone=(), geolocation=(), payment=(), usb=()",
        ),
        ("cache-control", "no-store"),
    ]
}

/// The file `name` of the console: its media type and content.
fn file(name: &str) -> Option<(&'static str, &'static str)> {
    FILES
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, media, body)| (*media, *body))
}

/// `GET /admin`: the page.
pub(super) fn page() -> ApiResult<Response> {
    asset("index.html")
}

/// `GET /admin/assets/{file}`: a file of the page; 404 for any other name.
pub(super) fn asset(name: &str) -> ApiResult<Response> {
    let (media, body) =
        file(name).ok_or_else(|| ApiError::not_found(format!("the console has no file {name:?}")))?;
    let mut res = Response::ok(body)?;
    for (header, value) in headers(media) {
        res.headers_mut().set(header, value)?;
    }
    Ok(res)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_is_strict() {
        for unsafe_source in [
            "unsafe-inline",
            "unsafe-eval",
            "unsafe-hashes",
            "*",
            "http:",
            "https:",
        ] {
            assert!(
                !CSP.split([' ', ';'])
                    .any(|s| s.trim_matches('\'') == unsafe_source),
                "{unsafe_source} in the CSP"
            );
        }
        for directive in [
            "default-src 'none'",
            "script-src 'self'",
            "frame-ancestors 'none'",
            "base-uri 'none'",
        ] {
            assert!(CSP.contains(directive), "{directive}");
        }
        let headers = headers("text/html; charset=utf-8");
        for expected in [
            ("x-content-type-options", "nosniff"),
            ("referrer-policy", "no-referrer"),
            ("x-frame-options", "DENY"),
        ] {
            assert!(headers.contains(&expected), "{expected:?}");
        }
        assert!(!headers.iter().any(|(h, _)| *h == "set-cookie"));
    }

    #[test]
    fn the_page_has_nothing_inline_and_loads_only_its_own_files() {
        let html = file("index.html").map(|(_, b)| b).unwrap_or_default();
        assert!(html.starts_with("<!doctype html>"));
        let lower = html.to_ascii_lowercase();
        // no inline script or style, no event handler attributes (the CSP would block them: the page must not need them)
        assert!(!lower.contains("<style"));
        assert!(!lower.contains(" style="));
        assert!(!lower.contains("javascript:"));
        for tag in lower.split('<').skip(1) {
            let tag = tag.split('>').next().unwrap_or_default();
            assert!(
                !tag.split_whitespace()
                    .any(|a| a.starts_with("on") && a.contains('=')),
                "an event handler attribute in <{tag}>"
            );
            if tag.starts_with("script") {
                assert!(tag.contains("src=\"/admin/assets/"), "an inline script: <{tag}>");
            }
        }
        // every file it references exists
        let mut referenced = 0;
        for part in html.split("\"/admin/assets/").skip(1) {
            let name = part.split('"').next().unwrap_or_default();
            assert!(file(name).is_some(), "{name} is referenced but not served");
            referenced += 1;
        }
        assert_eq!(referenced, 2);
        // the script never stores the token nor builds HTML from data
        let js = file("console.js").map(|(_, b)| b).unwrap_or_default();
        for banned in [
            "localStorage",
            "sessionStorage",
            "document.cookie",
            "innerHTML",
            "outerHTML",
            "insertAdjacentHTML",
            "eval(",
        ] {
            assert!(!js.contains(banned), "{banned} in console.js");
        }
        assert!(file("../Cargo.toml").is_none());
    }
}
