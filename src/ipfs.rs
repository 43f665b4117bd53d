//! IPFS content identifiers: parsing `ipfs://` URLs and gateway paths, CIDs for uploaded content, and verification
//! of raw blocks against their CID. CID and multihash handling is the `cid` / `multihash` crates'; the digest is
//! SHA-256 from `sha2`. CID text in the usual bases (CIDv0 `Qm…`, base32 `b…`/`B…`, base58btc `z…`, base16 `f…`/`F…`)
//! is decoded with `bs58` / `base32` / `alloy_primitives::hex`; any other multibase goes through `cid`'s `multibase`
//! table, except in the npm package (feature `wasm-lite`), which leaves that large table out (BENCHMARKS.md#wasm-size).

use cid::Cid;
use multihash::Multihash;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};
use sha2::{Digest, Sha256};

use crate::{Error, Result};

/// Multicodec `raw`.
pub const RAW: u64 = 0x55;
/// Multicodec `dag-pb` (UnixFS files and directories).
pub const DAG_PB: u64 = 0x70;
/// Multihash `sha2-256`.
pub const SHA2_256: u64 = 0x12;

/// A CID with an optional path below it (`bafy…/metadata.json`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CidPath {
    /// The root CID.
    pub cid: Cid,
    /// Path segments after the CID, percent-decoded (validated: no empty, `.` or `..` segments in any encoding, no
    /// `/`, `\` or control characters inside a segment).
    pub path: Vec<String>,
}

/// Characters a path segment keeps literally: RFC 3986 unreserved; everything else is percent-encoded.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// Percent-decodes `segment` until nothing changes (at most 4 rounds: `%252e` is refused like `%2e`), so no
/// encoding hides a `.`, `..`, `/` or `\` from the check. Errors on invalid UTF-8 or a still-encoded remainder.
fn decode_segment(segment: &str) -> Result<String> {
    let mut current = segment.to_owned();
    for _ in 0..4 {
        let decoded = percent_decode_str(&current)
            .decode_utf8()
            .map_err(|_| Error::InvalidCid("a path segment is not UTF-8 after percent-decoding".into()))?
            .into_owned();
        if decoded == current {
            return Ok(decoded);
        }
        current = decoded;
    }
    Err(Error::InvalidCid(
        "a path segment is percent-encoded too many times".into(),
    ))
}

/// The most bytes a CID and its path may take percent-encoded ([`CidPath::to_gateway_path`]): what is stored is
/// keyed by it, and an object store's keys are bounded (R2: 1,024 bytes, with room left for a derived image's
/// `image/v1/<width>/` prefix).
pub const MAX_GATEWAY_PATH_BYTES: usize = 1_000;

impl CidPath {
    /// Parses `<cid>[/<path>]`, also accepting an `ipfs://` or `/ipfs/` prefix. Path segments are percent-decoded
    /// (repeatedly) and checked; [`Self::to_gateway_path`] encodes them again canonically.
    ///
    /// # Errors
    /// [`Error::InvalidCid`] for a malformed CID or a path that tries to escape (`..`, `%2e%2e`, `%252e%252e`,
    /// an encoded `/` or `\`) or has control characters.
    pub fn parse(s: &str) -> Result<Self> {
        let s = s
            .strip_prefix("ipfs://")
            .or_else(|| s.strip_prefix("/ipfs/"))
            .unwrap_or(s);
        let s = s.split(['?', '#']).next().unwrap_or_default();
        let mut parts = s.split('/');
        let cid_text = parts.next().unwrap_or_default();
        let cid = parse_cid(cid_text)?;
        let mut path = Vec::new();
        for (i, raw) in parts.enumerate() {
            let trailing_slash = raw.is_empty() && s.ends_with('/') && i + 1 == s.matches('/').count();
            if trailing_slash {
                continue;
            }
            let segment = decode_segment(raw)?;
            if segment.is_empty() || segment == "." || segment == ".." || segment.contains(['/', '\\']) {
                return Err(Error::InvalidCid(format!(
                    "path segment {} is not allowed",
                    crate::Quoted(raw)
                )));
            }
            if segment.chars().any(char::is_control) {
                return Err(Error::InvalidCid("control characters in the path".into()));
            }
            path.push(segment);
        }
        if cid.codec() == RAW && !path.is_empty() {
            return Err(Error::InvalidCid("a raw block has no paths below it".into()));
        }
        let parsed = Self { cid, path };
        let length = parsed.to_gateway_path().len();
        if length > MAX_GATEWAY_PATH_BYTES {
            return Err(Error::InvalidCid(format!(
                "the CID and path are {length} bytes percent-encoded; at most {MAX_GATEWAY_PATH_BYTES}"
            )));
        }
        Ok(parsed)
    }

    /// `<cid>/<path>` with the CID in its canonical string form and every segment percent-encoded (RFC 3986
    /// unreserved characters stay literal).
    #[must_use]
    pub fn to_gateway_path(&self) -> String {
        let mut out = cid_text(&self.cid);
        for segment in &self.path {
            out.push('/');
            out.extend(utf8_percent_encode(segment, SEGMENT));
        }
        out
    }
}

/// The canonical text of a CID: base58btc for CIDv0 (`Qm…`), base32 lower case for CIDv1 (`b…`); the same text as
/// `cid`'s `to_string`.
#[must_use]
pub fn cid_text(cid: &Cid) -> String {
    let bytes = cid.to_bytes();
    if cid.version() == cid::Version::V0 {
        // a CIDv0's bytes are its multihash
        return bs58::encode(bytes).into_string();
    }
    let mut out = String::with_capacity(1 + (bytes.len() * 8).div_ceil(5));
    out.push('b');
    out.push_str(&base32::encode(BASE32_LOWER, &bytes));
    out
}

const BASE32_LOWER: base32::Alphabet = base32::Alphabet::Rfc4648Lower { padding: false };

/// Decodes the multibase text of a CID (without its prefix character) in the bases decoded here; `None` for another
/// base. Base32 and base58 decoding is strict, like `multibase`'s: only the canonical text of some bytes is accepted
/// (checked by encoding the bytes again).
fn decode_common_base(prefix: char, text: &str) -> Option<std::result::Result<Vec<u8>, &'static str>> {
    Some(match prefix {
        // multibase reads base32 and base16 in either case
        'b' | 'B' => {
            let lower = text.to_ascii_lowercase();
            match base32::decode(BASE32_LOWER, &lower) {
                Some(b) if base32::encode(BASE32_LOWER, &b) == lower => Ok(b),
                _ => Err("not valid base32"),
            }
        }
        'z' => match bs58::decode(text).into_vec() {
            Ok(b) if bs58::encode(&b).into_string() == text => Ok(b),
            _ => Err("not valid base58btc"),
        },
        // (`hex::decode` would also take a `0x` prefix)
        'f' | 'F' if text.starts_with("0x") || text.starts_with("0X") => Err("not valid base16"),
        'f' | 'F' => alloy_primitives::hex::decode(text).map_err(|_| "not valid base16"),
        _ => return None,
    })
}

/// Parses the text of a CID (no path, no prefix): CIDv0 (`Qm…`, 46 characters) or a multibase CIDv1.
///
/// # Errors
/// [`Error::InvalidCid`] for text that is no CID, or (in the npm package) a CID in an uncommon multibase.
pub fn parse_cid(text: &str) -> Result<Cid> {
    let invalid = |e: &dyn std::fmt::Display| Error::InvalidCid(format!("{}: {e}", crate::Quoted(text)));
    let mut chars = text.chars();
    let prefix = chars.next().unwrap_or_default();
    let decoded = if text.len() == 46 && text.starts_with("Qm") {
        Some(bs58::decode(text).into_vec().map_err(|_| "not valid base58btc"))
    } else if text.len() < 2 {
        return Err(invalid(&"the CID is too short"));
    } else {
        decode_common_base(prefix, chars.as_str())
    };
    match decoded {
        Some(bytes) => Cid::try_from(bytes.map_err(|e| invalid(&e))?.as_slice()).map_err(|e| invalid(&e)),
        #[cfg(not(feature = "wasm-lite"))]
        None => Cid::try_from(text).map_err(|e| invalid(&e)),
        #[cfg(feature = "wasm-lite")]
        None => Err(invalid(
            &"only CIDv0 (Qm…) and base32 (b…), base58btc (z…) or base16 (f…) CIDs are supported here",
        )),
    }
}

/// The CIDv1 (`raw` codec, sha2-256) of `bytes` as one block: what `ipfs add --cid-version 1 --raw-leaves`
/// answers for content that fits one chunk.
#[must_use]
pub fn raw_cid(bytes: &[u8]) -> Cid {
    let digest = Sha256::digest(bytes);
    // a 32-byte digest always fits the 64-byte multihash
    let hash = Multihash::<64>::wrap(SHA2_256, &digest).unwrap_or_default();
    Cid::new_v1(RAW, hash)
}

/// Whether `bytes` is the block the CID names. Only sha2-256 multihashes can be checked.
///
/// # Errors
/// [`Error::InvalidCid`] when the CID uses a hash function that cannot be checked here.
pub fn verify_block(cid: &Cid, bytes: &[u8]) -> Result<bool> {
    Ok(block_sha256(cid)? == &Sha256::digest(bytes)[..])
}

/// The SHA-256 digest the block a CID names must hash to (for a hasher outside this crate, such as the runtime's
/// own: the Worker hashes relayed blocks without copying them into wasm). Only sha2-256 multihashes can be checked.
///
/// # Errors
/// [`Error::InvalidCid`] when the CID uses another hash function.
pub fn block_sha256(cid: &Cid) -> Result<&[u8]> {
    let hash = cid.hash();
    if hash.code() != SHA2_256 || hash.digest().len() != 32 {
        return Err(Error::InvalidCid(format!(
            "multihash 0x{:x} cannot be verified",
            hash.code()
        )));
    }
    Ok(hash.digest())
}

#[cfg(all(test, not(target_arch = "wasm32")))]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_cids() {
        // `ipfs add --cid-version 1 --raw-leaves` of "hello world" (no newline)
        assert_eq!(
            raw_cid(b"hello world").to_string(),
            "bafkreifzjut3te2nhyekklss27nh3k72ysco7y32koao5eei66wof36n5e"
        );
        let v0 = CidPath::parse("ipfs://QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o").unwrap();
        assert_eq!(v0.cid.version(), cid::Version::V0);
        assert_eq!(v0.cid.codec(), DAG_PB);
        let with_path =
            CidPath::parse("/ipfs/QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o/a/b.json").unwrap();
        assert_eq!(with_path.path, vec!["a", "b.json"]);
        assert!(CidPath::parse("bafkreifzjut3te2nhyekklss27nh3k72ysco7y32koao5eei66wof36n5e/a").is_err());
        let with_path =
            CidPath::parse("/ipfs/bafkreifzjut3te2nhyekklss27nh3k72ysco7y32koao5eei66wof36n5e").unwrap();
        assert!(verify_block(&with_path.cid, b"hello world").unwrap());
        assert!(!verify_block(&with_path.cid, b"hello world\n").unwrap());
        // sha256("hello world"), as `sha256sum` prints it
        assert_eq!(
            alloy_primitives::hex::encode(block_sha256(&with_path.cid).unwrap()),
            "b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9"
        );
        let blake3 = Cid::new_v1(RAW, Multihash::<64>::wrap(0x1e, &[0; 32]).unwrap());
        assert!(block_sha256(&blake3).is_err());
        assert!(verify_block(&blake3, b"").is_err());
    }

    #[test]
    fn rejects_bad_cids_and_traversal() {
        for bad in [
            "",
            "Qm123",
            "bafy/../etc",
            "bafkreifzjut3te2nhyekklss27nh3k72ysco7y32koao5eei66wof36n5e/../x",
            "bafkreifzjut3te2nhyekklss27nh3k72ysco7y32koao5eei66wof36n5e//x",
            "not a cid",
            // `..` and `.` in any encoding, encoded separators
            "ipfs://QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o/%2e%2e/%2e%2e/x",
            "ipfs://QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o/a/%2E%2e",
            "ipfs://QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o/.%2e/x",
            "ipfs://QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o/%252e%252e/x",
            "ipfs://QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o/%25252e%25252e/x",
            "ipfs://QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o/%2e",
            "ipfs://QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o/a%2f..%2fb",
            "ipfs://QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o/a%5c..",
            "ipfs://QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o/%00x",
            "ipfs://QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o/%ff",
        ] {
            assert_eq!(CidPath::parse(bad).unwrap_err().code(), "INVALID_CID", "{bad}");
        }
    }

    #[test]
    fn common_bases_edge_cases_match_multibase() {
        let raw = raw_cid(b"hello world");
        let hex = cid::Cid::to_string_of_base(&raw, cid::multibase::Base::Base16Lower).unwrap();
        for text in [
            hex.clone(),
            format!("f0x{}", &hex[1..]),
            format!("F{}", &hex[1..]),
            hex.to_uppercase(),
            "b".into(),
            "bafkreifzjut3te2nhyekklss27nh3k72ysco7y32koao5eei66wof36n5E".into(),
            "Bafkreifzjut3te2nhyekklss27nh3k72ysco7y32koao5eei66wof36n5e".into(),
            "bafkreifzjut3te2nhyekklss27nh3k72ysco7y32koao5eei66wof36n5f".into(),
            "bafkreifzjut3te2nhyekklss27nh3k72ysco7y32koao5eei66wof36n5e=".into(),
            "QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o".into(),
            "QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5O".into(),
            "zb2rhe5P4gXftAwvA4eXQ5HJwsER2owDyS9sKaQRRVQPn93bA".into(),
        ] {
            assert_eq!(parse_cid(&text).ok(), Cid::try_from(text.as_str()).ok(), "{text}");
        }
        // another multibase (base64) still parses natively
        let b64 = raw.to_string_of_base(cid::multibase::Base::Base64).unwrap();
        assert_eq!(parse_cid(&b64).unwrap(), raw);
    }

    #[test]
    fn paths_are_normalized() {
        let p = CidPath::parse("ipfs://QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o/my%20dir/b%2Ejson")
            .unwrap();
        assert_eq!(p.path, vec!["my dir", "b.json"]);
        assert_eq!(
            p.to_gateway_path(),
            "QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o/my%20dir/b.json"
        );
        // a segment that merely contains dots is fine
        let p = CidPath::parse("QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o/..x/a..b").unwrap();
        assert_eq!(
            p.to_gateway_path(),
            "QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o/..x/a..b"
        );
    }

    #[test]
    fn a_path_longer_than_a_store_key_is_refused() {
        let cid = "QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG";
        let long = format!("{cid}/{}", "a".repeat(1_000));
        assert!(matches!(CidPath::parse(&long), Err(Error::InvalidCid(_))));
        // what counts is the encoded form: 320 spaces are 960 bytes as %20
        let spaces = format!("{cid}/{}", "%20".repeat(320));
        assert!(matches!(CidPath::parse(&spaces), Err(Error::InvalidCid(_))));
        // a path up to the bound, deep or not, is fine, and its key fits R2's 1,024 bytes with the image prefix
        let room = MAX_GATEWAY_PATH_BYTES - cid.len() - 1;
        let fits = CidPath::parse(&format!("{cid}/{}", "b".repeat(room))).unwrap();
        assert_eq!(fits.to_gateway_path().len(), MAX_GATEWAY_PATH_BYTES);
        assert!(format!("image/v1/4096/{}", fits.to_gateway_path()).len() <= 1_024);
        assert!(CidPath::parse(&format!("{cid}/{}", ["c"; 200].join("/"))).is_ok());
    }

    proptest! {
        #[test]
        fn gateway_paths_never_escape(segments in proptest::collection::vec("[a-z.%/\\\\2eEfF5c]{0,8}", 0..4)) {
            let text = format!("QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o/{}", segments.join("/"));
            if let Ok(p) = CidPath::parse(&text) {
                let out = p.to_gateway_path();
                // what a gateway sees after decoding once has no dot segments and no extra separators
                let decoded = percent_decode_str(&out).decode_utf8().unwrap().into_owned();
                prop_assert!(!decoded.split('/').any(|s| s == ".." || s == "."), "{}", out);
                prop_assert_eq!(decoded.matches('/').count(), p.path.len());
            }
        }


        #[test]
        fn parse_never_panics(s in ".{0,80}") {
            let _ = CidPath::parse(&s);
        }

        /// The bases decoded here give what `cid`'s multibase parser gives, for CIDs and for near-misses.
        #[test]
        fn common_bases_match_multibase(
            bytes in proptest::collection::vec(any::<u8>(), 0..40),
            codec in prop_oneof![Just(RAW), Just(DAG_PB), any::<u64>()],
            base in prop_oneof![
                Just(cid::multibase::Base::Base32Lower), Just(cid::multibase::Base::Base32Upper),
                Just(cid::multibase::Base::Base58Btc), Just(cid::multibase::Base::Base16Lower),
                Just(cid::multibase::Base::Base16Upper),
            ],
            cut in 0usize..4,
            flip in any::<Option<(usize, char)>>(),
        ) {
            let hash = Multihash::<64>::wrap(SHA2_256, &bytes).unwrap();
            let cid = Cid::new_v1(codec, hash);
            let mut text = cid.to_string_of_base(base).unwrap();
            prop_assert_eq!(parse_cid(&text).unwrap(), cid);
            if base == cid::multibase::Base::Base32Lower {
                prop_assert_eq!(cid_text(&cid), cid.to_string());
            }
            // damaged: cut at the end, one character replaced
            text.truncate(text.len().saturating_sub(cut));
            if let Some((i, c)) = flip {
                let i = 1 + i % text.len().max(2).saturating_sub(1);
                if text.is_char_boundary(i) && i < text.len() {
                    text.replace_range(i..=i, &c.to_string());
                }
            }
            prop_assert_eq!(parse_cid(&text).ok(), Cid::try_from(text.as_str()).ok(), "{}", text);
        }

        #[test]
        fn cidv0_matches_multibase(digest in any::<[u8; 32]>(), flip in any::<Option<(usize, char)>>()) {
            let cid = Cid::new_v0(Multihash::<64>::wrap(SHA2_256, &digest).unwrap()).unwrap();
            let mut text = cid.to_string();
            prop_assert_eq!(&cid_text(&cid), &text);
            if let Some((i, c)) = flip {
                let i = i % text.len();
                if text.is_char_boundary(i) && text.is_char_boundary(i + 1) {
                    text.replace_range(i..=i, &c.to_string());
                }
            }
            prop_assert_eq!(parse_cid(&text).ok(), Cid::try_from(text.as_str()).ok(), "{}", text);
        }

        #[test]
        fn raw_cids_roundtrip(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let cid = raw_cid(&bytes);
            let parsed = CidPath::parse(&cid.to_string()).unwrap();
            prop_assert_eq!(parsed.cid, cid);
            prop_assert!(verify_block(&cid, &bytes).unwrap());
        }
    }
}
