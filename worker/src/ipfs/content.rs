//! What relayed content is served as: media types (sanitized, or sniffed from the bytes), the sandbox CSP, which
//! types are shown inline, and `Range` requests. Pure: no I/O.

/// How many leading bytes media-type sniffing looks at (an SVG after an XML prolog and comments is found within).
pub(super) const SNIFF_BYTES: usize = 4096;

fn sniff(bytes: &[u8]) -> &'static str {
    let trimmed = bytes.trim_ascii_start();
    if (trimmed.starts_with(b"{") || trimmed.starts_with(b"[")) && json_text_start(trimmed) {
        "application/json"
    } else if bytes.starts_with(&[0x89, b'P', b'N', b'G']) {
        "image/png"
    } else if bytes.starts_with(&[0xff, 0xd8, 0xff]) {
        "image/jpeg"
    } else if bytes.starts_with(b"GIF8") {
        "image/gif"
    } else if bytes.starts_with(b"RIFF") && bytes.get(8..12) == Some(b"WEBP".as_slice()) {
        "image/webp"
    } else if trimmed.starts_with(b"<svg")
        || (trimmed.starts_with(b"<?xml") && bytes.windows(4).any(|w| w == b"<svg"))
    {
        "image/svg+xml"
    } else if starts_with_ignore_case(trimmed, b"<!doctype html")
        || starts_with_ignore_case(trimmed, b"<html")
    {
        "text/html"
    } else if bytes.starts_with(b"%PDF-") {
        "application/pdf"
    } else if bytes.get(4..8) == Some(b"ftyp".as_slice()) {
        "video/mp4"
    } else if bytes.starts_with(&[0x1a, 0x45, 0xdf, 0xa3]) {
        "video/webm"
    } else if bytes.starts_with(b"ID3") {
        "audio/mpeg"
    } else if bytes.starts_with(b"OggS") {
        "audio/ogg"
    } else {
        "application/octet-stream"
    }
}

/// Whether the first [`SNIFF_BYTES`] of content can begin a JSON text (RFC 8259: UTF-8, no control characters
/// (U+0000–U+001F) but whitespace outside strings, none inside them): binary content that merely starts with `{` or `[` (one
/// random file in 128) is not served as JSON — nor compressed on its way as a text type would be.
fn json_text_start(bytes: &[u8]) -> bool {
    let head = bytes.get(..SNIFF_BYTES).unwrap_or(bytes);
    let utf8 = match core::str::from_utf8(head) {
        Ok(_) => true,
        // a character cut by the window's end is no error
        Err(e) => e.error_len().is_none(),
    };
    utf8 && !head
        .iter()
        .any(|&b| b < b' ' && !matches!(b, b'\t' | b'\n' | b'\r'))
}

fn starts_with_ignore_case(bytes: &[u8], prefix: &[u8]) -> bool {
    bytes
        .get(..prefix.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(prefix))
}

/// A media type as the relay answers and stores it: the essence of a `Content-Type` header (no parameters),
/// lower case, `type/subtype` made of RFC 9110 token characters, at most 100 bytes; `None` for anything else.
fn sanitized_media_type(header: &str) -> Option<String> {
    let essence = header.split(';').next()?.trim().to_ascii_lowercase();
    let token = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
    };
    let (kind, subtype) = essence.split_once('/')?;
    (essence.len() <= 100 && token(kind) && token(subtype)).then_some(essence)
}

/// The type content is served (and stored) with: the gateway's or uploader's, sanitized, unless it says nothing
/// (`application/octet-stream`, `application/vnd.ipld.raw`, none) — then sniffed from the bytes. `text/plain`
/// (what many servers say of any text) is sniffed too, and kept when the sniffing finds nothing.
pub(super) fn content_type_of(header: Option<String>, bytes: &[u8]) -> String {
    match header.as_deref().and_then(sanitized_media_type) {
        Some(t) if t == "text/plain" => match sniff(bytes) {
            "application/octet-stream" => t,
            sniffed => sniffed.to_owned(),
        },
        Some(t) if t != "application/octet-stream" && t != "application/vnd.ipld.raw" => t,
        _ => sniff(bytes).to_owned(),
    }
}

/// The media types an upload is stored (and served) with, when its bytes are sniffed as one of them.
const UPLOAD_TYPES: [&str; 12] = [
    "application/json",
    "image/png",
    "image/jpeg",
    "image/gif",
    "image/webp",
    "image/svg+xml",
    "application/pdf",
    "video/mp4",
    "video/webm",
    "audio/mpeg",
    "audio/ogg",
    // served as a sandboxed download (not passive), like any HTML the relay serves
    "text/html",
];

/// The type an upload is stored with: sniffed from its bytes against [`UPLOAD_TYPES`], never what the uploader
/// declared (the first uploader of a CID would decide what everyone is served); UTF-8 text without control
/// characters is `text/plain`, anything else `application/octet-stream`.
pub(super) fn upload_type(bytes: &[u8]) -> &'static str {
    let sniffed = sniff(bytes);
    if UPLOAD_TYPES.contains(&sniffed) {
        return sniffed;
    }
    match core::str::from_utf8(bytes) {
        Ok(text) if !text.is_empty() && !text.chars().any(|c| c.is_control() && !c.is_whitespace()) => {
            "text/plain"
        }
        _ => "application/octet-stream",
    }
}

/// The CSP of every relayed answer: a sandboxed document with no scripts and no fetches.
pub const SANDBOX_CSP: &str = "sandbox; default-src 'none'; img-src data:; style-src 'unsafe-inline'";

/// Whether a media type is displayed inline (images, JSON, plain text); everything else is a download.
pub fn is_passive(content_type: &str) -> bool {
    content_type.starts_with("image/") || content_type == "application/json" || content_type == "text/plain"
}

/// The first range of a `Range` header as inclusive byte offsets into content of `total` bytes; `None` when
/// the header is malformed or cannot be satisfied (an empty body has no bytes to serve). Several ranges are
/// answered with the first (multipart/byteranges is not produced).
pub fn byte_range(header: &str, total: u64) -> Option<(u64, u64)> {
    if total == 0 {
        return None;
    }
    let ranges = http_range_header::parse_range_header(header)
        .ok()?
        .validate(total)
        .ok()?;
    let first = ranges.first()?;
    let (start, end) = (*first.start(), *first.end());
    (start <= end && end < total).then_some((start, end))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        assert_eq!(byte_range("bytes=0-", 0), None);
        assert_eq!(byte_range("bytes=-5", 0), None);
        assert_eq!(byte_range("bytes=0-", 3), Some((0, 2)));
        assert_eq!(byte_range("bytes=1-1", 3), Some((1, 1)));
        assert_eq!(byte_range("bytes=-2", 3), Some((1, 2)));
        assert_eq!(byte_range("bytes=0-99", 3), Some((0, 2)));
        assert_eq!(byte_range("bytes=3-", 3), None);
        assert_eq!(byte_range("bytes=2-1", 3), None);
        assert_eq!(byte_range("items=0-1", 3), None);
    }

    #[cfg(not(target_arch = "wasm32"))]
    proptest::proptest! {
        #[test]
        fn any_range_header_is_inside_the_content(header in "\\PC{0,40}", tail in "[0-9,= -]{0,30}", total in 0u64..2000) {
            for h in [header, format!("bytes={tail}")] {
                if let Some((start, end)) = byte_range(&h, total) {
                    proptest::prop_assert!(start <= end && end < total);
                }
            }
        }
    }

    #[test]
    fn binary_that_starts_like_json_is_not_json() {
        assert_eq!(sniff(b"{\"a\": [1, 2]}\r\n"), "application/json");
        assert_eq!(sniff(b"\t[\"\xc3\xa9\xc2\x85\x7f\"]"), "application/json");
        // random bytes after a bracket: invalid UTF-8, or control characters
        assert_eq!(sniff(b"{\xff\xfe\x00\x13"), "application/octet-stream");
        assert_eq!(sniff(b"[\x00\x01\x02"), "application/octet-stream");
        assert_eq!(sniff(b"{\"a\":\"\x07\"}"), "application/octet-stream");
        assert_eq!(upload_type(b"[\x1b[31m"), "application/octet-stream");
        // only the window is read: a character cut at its end, binary after it
        let mut long = b"{\"k\":\"".to_vec();
        long.resize(SNIFF_BYTES - 1, b'x');
        long.extend_from_slice("é".as_bytes());
        long.extend_from_slice(&[0u8; 100]);
        assert_eq!(sniff(&long), "application/json");
        // a 1.5 MB random file (as the e2e test makes) is never JSON, whatever its first byte
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        for first in [b'{', b'[', b' '] {
            let mut bytes = vec![first, b'['];
            bytes.extend((0..4096).map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state as u8
            }));
            assert_eq!(sniff(&bytes), "application/octet-stream");
        }
    }

    #[test]
    fn uploads_are_typed_by_their_bytes_only() {
        assert_eq!(upload_type(&[0x89, b'P', b'N', b'G', 0]), "image/png");
        assert_eq!(upload_type(b"{\"LSP3Profile\":{}}"), "application/json");
        assert_eq!(upload_type(b"<svg xmlns=''/>"), "image/svg+xml");
        // what the bytes are, whatever was declared: HTML stays HTML (a sandboxed download)
        assert_eq!(upload_type(b"<!doctype html><script>x</script>"), "text/html");
        assert!(!is_passive(upload_type(b"<html></html>")));
        assert_eq!(upload_type(b"plain words\n"), "text/plain");
        assert_eq!(upload_type(b"\x00\x01poison"), "application/octet-stream");
        assert_eq!(upload_type(&[0xff, 0xfe, 0x00]), "application/octet-stream");
        assert_eq!(upload_type(b""), "application/octet-stream");
        for t in UPLOAD_TYPES {
            assert_eq!(sanitized_media_type(t).as_deref(), Some(t));
        }
    }

    #[test]
    fn sniffing() {
        assert_eq!(sniff(b"  {\"a\":1}"), "application/json");
        assert_eq!(sniff(&[0x89, b'P', b'N', b'G', 0]), "image/png");
        assert_eq!(sniff(b"<svg xmlns=''/>"), "image/svg+xml");
        assert_eq!(sniff(b"\x00\x01"), "application/octet-stream");
        assert_eq!(
            content_type_of(Some("text/html; charset=utf-8".into()), b"x"),
            "text/html"
        );
        assert_eq!(
            content_type_of(Some("application/vnd.ipld.raw".into()), b"[1]"),
            "application/json"
        );
        assert_eq!(sniff(b"\n<!DOCTYPE html><p>"), "text/html");
        assert_eq!(sniff(b"%PDF-1.7"), "application/pdf");
        assert_eq!(sniff(b"\0\0\0\x18ftypmp42"), "video/mp4");
        assert_eq!(
            content_type_of(Some("text/plain".into()), b"[1]"),
            "application/json"
        );
        assert_eq!(
            content_type_of(Some("Text/Plain; charset=utf-8".into()), b"hi"),
            "text/plain"
        );
        assert_eq!(content_type_of(Some("video/MP4".into()), b"x"), "video/mp4");
        // malformed or hostile types are replaced by sniffing
        for bad in [
            "text/html, text/javascript",
            "text",
            "/x",
            "a/b/c",
            "text/ html",
            "a\u{0}/b",
            "",
        ] {
            assert_eq!(sanitized_media_type(bad), None, "{bad:?}");
            assert_eq!(
                content_type_of(Some(bad.into()), b"{}"),
                "application/json",
                "{bad:?}"
            );
        }
        assert_eq!(sanitized_media_type(&format!("a/{}", "b".repeat(99))), None);
        assert_eq!(
            sanitized_media_type("application/vnd.api+json; q=1").as_deref(),
            Some("application/vnd.api+json")
        );
    }
}
