//! The image route (`GET`/`HEAD /image/:cid*?method=&data=&width=&dpr=`), as LUKSO's `api.universalprofile.cloud`
//! serves it to the wallet: IPFS content through the relay ([`crate::ipfs::fetch_content`]: the same CID/path
//! validation, gateways, CID verification and store), checked against an LSP2 verification hash when one is given,
//! and scaled down to `width × dpr` pixels wide.
//!
//! - Verification: `method` is an LSP2 verification method by name (`keccak256(bytes)`, `keccak256(utf8)`) or id
//!   (`0x8019f9b1`, `0x6f357c6a`), `data` the 32-byte hash. The answer carries `x-verified: true|false` (keccak256
//!   of the source bytes, before any resizing). `0x00000000` (or no `method`) asks for nothing: no `x-verified`.
//!   `ecdsa` cannot be checked from the bytes alone, nor a hash method without a hash: `x-verified: false`. A mismatch is still served (the header
//!   is the answer; the wallet decides what to show), as the incumbent's clients expect.
//! - Resizing: PNG, JPEG, static GIF and static WebP are decoded within bounds ([`MAX_SOURCE_SIDE`],
//!   [`MAX_DECODE_BYTES`]; past them 413 `IMAGE_TOO_LARGE`, undecodable bytes 422 `INVALID_IMAGE`), scaled to the
//!   target width keeping the aspect ratio and EXIF orientation, never enlarged (Cloudflare's `fit=scale-down`), and
//!   encoded as PNG (PNG, GIF), JPEG (JPEG) or lossless WebP (WebP). The target width is capped at
//!   [`MAX_OUTPUT_WIDTH`].
//! - Passed through unchanged, exactly as `/ipfs` serves them (same headers, the sandbox CSP, `attachment` for
//!   active types): SVG, animated GIF/WebP, other formats and non-images, and anything already at most the target
//!   width or requested without `width`.
//! - Derived images are kept in R2 (`image/v1/<target width>/<cid/path>`, with the source's keccak256 so that a
//!   cached answer can still be verified), bounded by `IMAGE_CACHE_MAX_BYTES` like the relay's cache.

use std::io::Cursor;

use alloy_primitives::{B256, keccak256};
use image::{
    AnimationDecoder, DynamicImage, ImageDecoder, ImageError, ImageFormat, ImageReader, Limits,
    codecs::{gif::GifDecoder, jpeg::JpegEncoder, png::PngEncoder, webp::WebPDecoder, webp::WebPEncoder},
    error::LimitErrorKind,
    imageops::FilterType,
    metadata::Orientation,
};
use profile_relayer::{ipfs::CidPath, lsp2::VerificationMethod};
use worker::{Env, Headers, Request, Response};

use crate::{
    error::{ApiError, ApiResult, Code},
    ipfs::IpfsConfig,
};

/// Largest accepted `width` parameter.
pub const MAX_WIDTH_PARAM: u32 = 10_000;
/// Largest accepted `dpr` parameter.
pub const MAX_DPR: f64 = 5.0;
/// Widest image produced: `width × dpr` above it is served at this width.
pub const MAX_OUTPUT_WIDTH: u32 = 4096;
/// Longest side of a source image that is decoded.
pub const MAX_SOURCE_SIDE: u32 = 12_000;
/// Largest decoded source image (pixels × bytes per pixel): a Worker has 128 MB.
pub const MAX_DECODE_BYTES: u64 = 64 * 1024 * 1024;

/// What the query asks to verify.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verification {
    /// Nothing (no `method`, or `0x00000000`).
    None,
    /// keccak256 of the bytes must equal this hash.
    Keccak256(B256),
    /// A method whose data the bytes alone cannot check (`ecdsa`): answered `x-verified: false`.
    Unverifiable,
}

/// The query of an image request.
#[derive(Debug, Clone, PartialEq)]
pub struct ImageQuery {
    /// Verification asked for.
    pub verification: Verification,
    /// `width` in CSS pixels.
    pub width: Option<u32>,
    /// Device pixel ratio (1 when absent).
    pub dpr: f64,
}

fn invalid(message: impl Into<String>) -> ApiError {
    ApiError::new(Code::InvalidParameter, message)
}

fn parse_method(method: &str) -> ApiResult<VerificationMethod> {
    let by_name = [
        VerificationMethod::Keccak256Bytes,
        VerificationMethod::Keccak256Utf8,
        VerificationMethod::Ecdsa,
    ]
    .into_iter()
    .find(|m| m.name().is_some_and(|n| n.eq_ignore_ascii_case(method)));
    if let Some(m) = by_name {
        return Ok(m);
    }
    let id = method
        .strip_prefix("0x")
        .or_else(|| method.strip_prefix("0X"))
        .filter(|h| h.len() == 8)
        .and_then(|h| alloy_primitives::hex::decode(h).ok())
        .and_then(|b| <[u8; 4]>::try_from(b).ok())
        .ok_or_else(|| {
            invalid(format!(
                "method {method:?} is not an LSP2 verification method (keccak256(bytes), keccak256(utf8), or a \
                 4-byte id such as 0x8019f9b1)"
            ))
        })?;
    match VerificationMethod::from_id(id.into()) {
        VerificationMethod::Unknown(id) => Err(invalid(format!(
            "method {id} is not a known LSP2 verification method"
        ))),
        known => Ok(known),
    }
}

fn parse_hash(data: &str) -> ApiResult<B256> {
    let hex = data
        .strip_prefix("0x")
        .or_else(|| data.strip_prefix("0X"))
        .unwrap_or(data);
    alloy_primitives::hex::decode(hex)
        .ok()
        .and_then(|b| <[u8; 32]>::try_from(b).ok())
        .map(B256::from)
        .ok_or_else(|| invalid("data must be the 32-byte hash of the image (0x + 64 hex digits)"))
}

impl ImageQuery {
    /// Parses the query parameters (`method`, `data`, `width`, `dpr`; others are ignored).
    ///
    /// # Errors
    /// 400 `INVALID_PARAMETER` for a malformed, empty or out-of-range value, an unknown method, or `data` that is
    /// neither a 32-byte hash nor `0x`. A hash method without a hash (`data` absent or `0x`, what the wallet sends
    /// for images without one) is not an error: it answers `x-verified: false`.
    pub fn parse<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> ApiResult<Self> {
        let (mut method, mut data, mut width, mut dpr) = (None, None, None, None);
        for (key, value) in pairs {
            let slot = match key {
                "method" => &mut method,
                "data" => &mut data,
                "width" => &mut width,
                "dpr" => &mut dpr,
                _ => continue,
            };
            if slot.is_some() {
                return Err(invalid(format!("{key} is given more than once")));
            }
            *slot = Some(value.trim());
        }
        let method = method.map(parse_method).transpose()?;
        // `0x`: no hash
        let hash = data
            .filter(|d| !matches!(*d, "0x" | "0X"))
            .map(parse_hash)
            .transpose()?;
        let verification = match (method, hash) {
            (None | Some(VerificationMethod::None), _) => Verification::None,
            (Some(VerificationMethod::Keccak256Bytes | VerificationMethod::Keccak256Utf8), Some(h)) => {
                Verification::Keccak256(h)
            }
            (Some(_), _) => Verification::Unverifiable,
        };
        let width = width
            .map(|w| {
                w.parse::<u32>()
                    .ok()
                    .filter(|w| (1..=MAX_WIDTH_PARAM).contains(w))
                    .ok_or_else(|| invalid(format!("width must be an integer from 1 to {MAX_WIDTH_PARAM}")))
            })
            .transpose()?;
        let dpr = dpr
            .map(|d| {
                d.parse::<f64>()
                    .ok()
                    .filter(|d| d.is_finite() && *d > 0.0 && *d <= MAX_DPR)
                    .ok_or_else(|| invalid(format!("dpr must be a number above 0 and at most {MAX_DPR}")))
            })
            .transpose()?
            .unwrap_or(1.0);
        Ok(Self {
            verification,
            width,
            dpr,
        })
    }

    /// The width to produce in pixels: `width × dpr` rounded, at least 1, at most [`MAX_OUTPUT_WIDTH`]; `None`
    /// without `width`.
    #[must_use]
    pub fn target_width(&self) -> Option<u32> {
        let product = f64::from(self.width?) * self.dpr;
        // both factors are bounded: the product is a small positive number
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let pixels = product.round().clamp(1.0, f64::from(MAX_OUTPUT_WIDTH)) as u32;
        Some(pixels)
    }

    /// `x-verified` for content whose keccak256 is `hash`; `None` when nothing was asked.
    #[must_use]
    pub fn verified(&self, hash: B256) -> Option<bool> {
        match self.verification {
            Verification::None => None,
            Verification::Keccak256(expected) => Some(expected == hash),
            Verification::Unverifiable => Some(false),
        }
    }
}

/// The outcome of [`resize`].
#[derive(Debug)]
pub enum Resized {
    /// Serve the source unchanged (not a decodable still image, or not wider than the target).
    Original,
    /// A new image.
    Image {
        /// Encoded bytes.
        bytes: Vec<u8>,
        /// Its media type.
        content_type: &'static str,
    },
}

fn limits() -> Limits {
    let mut limits = Limits::default();
    limits.max_image_width = Some(MAX_SOURCE_SIDE);
    limits.max_image_height = Some(MAX_SOURCE_SIDE);
    limits.max_alloc = Some(MAX_DECODE_BYTES);
    limits
}

fn too_large(detail: impl core::fmt::Display) -> ApiError {
    ApiError::new(
        Code::ImageTooLarge,
        format!(
            "the image is too large to resize ({detail}; at most {MAX_SOURCE_SIDE} pixels a side and \
             {MAX_DECODE_BYTES} bytes decoded); request it without width to get the original"
        ),
    )
}

fn image_error(e: ImageError) -> ApiError {
    match e {
        ImageError::Limits(l) => match l.kind() {
            LimitErrorKind::DimensionError => too_large("its dimensions"),
            LimitErrorKind::InsufficientMemory => too_large("its decoded size"),
            _ => too_large(l),
        },
        other => ApiError::new(
            Code::InvalidImage,
            format!("the image cannot be decoded: {other}"),
        ),
    }
}

/// Decodes a still image within [`limits`]; `None` for an animation (served as it is).
fn decode(bytes: &[u8], format: ImageFormat) -> ApiResult<Option<DynamicImage>> {
    match format {
        ImageFormat::Gif => {
            let mut decoder = GifDecoder::new(Cursor::new(bytes)).map_err(image_error)?;
            decoder.set_limits(limits()).map_err(image_error)?;
            check_size(&decoder)?;
            let mut frames = decoder.into_frames();
            let first = frames
                .next()
                .ok_or_else(|| image_error(ImageError::IoError(std::io::ErrorKind::UnexpectedEof.into())))?
                .map_err(image_error)?;
            if frames.next().is_some() {
                return Ok(None);
            }
            Ok(Some(DynamicImage::ImageRgba8(first.into_buffer())))
        }
        ImageFormat::WebP
            if WebPDecoder::new(Cursor::new(bytes))
                .map_err(image_error)?
                .has_animation() =>
        {
            Ok(None)
        }
        _ => {
            let mut reader = ImageReader::new(Cursor::new(bytes));
            reader.set_format(format);
            reader.limits(limits());
            let mut decoder = reader.into_decoder().map_err(image_error)?;
            check_size(&decoder)?;
            let orientation = decoder.orientation().map_err(image_error)?;
            let mut image = DynamicImage::from_decoder(decoder).map_err(image_error)?;
            image.apply_orientation(orientation);
            Ok(Some(image))
        }
    }
}

fn check_size(decoder: &impl ImageDecoder) -> ApiResult<()> {
    let (w, h) = decoder.dimensions();
    if w > MAX_SOURCE_SIDE || h > MAX_SOURCE_SIDE {
        return Err(too_large(format!("{w}×{h} pixels")));
    }
    // GIF frames are decoded to RGBA whatever the color type says
    let total = decoder.total_bytes().max(u64::from(w) * u64::from(h) * 4);
    if total > MAX_DECODE_BYTES {
        return Err(too_large(format!("{w}×{h} pixels, {total} bytes decoded")));
    }
    Ok(())
}

/// The formats that are resized.
fn still_format(bytes: &[u8]) -> Option<ImageFormat> {
    match image::guess_format(bytes).ok()? {
        f @ (ImageFormat::Png | ImageFormat::Jpeg | ImageFormat::Gif | ImageFormat::WebP) => Some(f),
        _ => None,
    }
}

/// Scales `bytes` down to `target_width` pixels wide (aspect ratio kept, never enlarged).
///
/// # Errors
/// 413 `IMAGE_TOO_LARGE` past the decoding bounds, 422 `INVALID_IMAGE` for bytes that do not decode.
pub fn resize(bytes: &[u8], target_width: u32) -> ApiResult<Resized> {
    let Some(format) = still_format(bytes) else {
        return Ok(Resized::Original);
    };
    // the header alone tells whether there is anything to do: an image at most as wide (as displayed, after its
    // EXIF orientation) is never decoded
    let mut reader = ImageReader::new(Cursor::new(bytes));
    reader.set_format(format);
    reader.limits(Limits::no_limits());
    let mut header = reader.into_decoder().map_err(image_error)?;
    let (stored_width, stored_height) = header.dimensions();
    let turned = matches!(
        header.orientation().map_err(image_error)?,
        Orientation::Rotate90
            | Orientation::Rotate270
            | Orientation::Rotate90FlipH
            | Orientation::Rotate270FlipH
    );
    let shown_width = if turned { stored_height } else { stored_width };
    if shown_width <= target_width {
        return Ok(Resized::Original);
    }
    let Some(image) = decode(bytes, format)? else {
        return Ok(Resized::Original);
    };
    let (width, height) = (image.width(), image.height());
    if width <= target_width || width == 0 {
        return Ok(Resized::Original);
    }
    let new_height = u64::from(height) * u64::from(target_width) / u64::from(width);
    let new_height = u32::try_from(new_height.max(1)).unwrap_or(1);
    let scaled = image.resize_exact(target_width, new_height, FilterType::Triangle);
    let mut out = Vec::new();
    let content_type = match format {
        ImageFormat::Jpeg => {
            let rgb = DynamicImage::ImageRgb8(scaled.to_rgb8());
            rgb.write_with_encoder(JpegEncoder::new_with_quality(&mut out, 85))
                .map_err(ApiError::internal)?;
            "image/jpeg"
        }
        ImageFormat::WebP => {
            let rgba = DynamicImage::ImageRgba8(scaled.to_rgba8());
            rgba.write_with_encoder(WebPEncoder::new_lossless(&mut out))
                .map_err(ApiError::internal)?;
            "image/webp"
        }
        _ => {
            scaled
                .write_with_encoder(PngEncoder::new(&mut out))
                .map_err(ApiError::internal)?;
            "image/png"
        }
    };
    Ok(Resized::Image {
        bytes: out,
        content_type,
    })
}

/// keccak256 of the source bytes (what `keccak256(bytes)` and `keccak256(utf8)` verification compare).
#[must_use]
pub fn content_hash(bytes: &[u8]) -> B256 {
    keccak256(bytes)
}

/// Bytes the derived-image cache may keep in R2 (`IMAGE_CACHE_MAX_BYTES`, default 256 MiB).
const DEFAULT_CACHE_MAX_BYTES: u64 = 256 * 1024 * 1024;

/// The R2 key of a derived image. `v1` names the output policy (formats, filter, quality): a change of it takes a
/// new prefix, so that no stale rendition is served.
fn derived_key(target: &CidPath, width: u32) -> String {
    format!("image/v1/{width}/{}", target.to_gateway_path())
}

/// What is answered: the bytes, their type, and the keccak256 of the source (for `x-verified`).
struct Answer {
    bytes: Vec<u8>,
    content_type: String,
    source_hash: B256,
    source_verified: bool,
}

/// `GET`/`HEAD /image/:cid*`.
pub async fn route(req: &Request, env: &Env, path: &str) -> ApiResult<Response> {
    let url = req.url()?;
    let query = ImageQuery::parse(
        url.query_pairs()
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect::<Vec<_>>()
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str())),
    )?;
    let target = CidPath::parse(path)?;
    let config = IpfsConfig::from_env(env)?;
    let width = query.target_width();
    let key = width.map(|w| derived_key(&target, w));
    let cached = match &key {
        Some(key) => cached_derived(env, key).await?,
        None => None,
    };
    let answer = match cached {
        Some(answer) => answer,
        None => {
            let content = crate::ipfs::fetch_content(env, &config, &target).await?;
            let source_hash = content_hash(&content.bytes);
            let resized = match width {
                // SVG is text: never handed to a raster decoder, always passed through
                Some(w) if content.content_type != "image/svg+xml" => resize(&content.bytes, w)?,
                _ => Resized::Original,
            };
            match (resized, &key) {
                (
                    Resized::Image {
                        bytes, content_type, ..
                    },
                    Some(key),
                ) => {
                    let answer = Answer {
                        bytes,
                        content_type: content_type.to_owned(),
                        source_hash,
                        source_verified: content.verified,
                    };
                    if let Err(e) = store_derived(env, key, &answer).await {
                        worker::console_warn!("image cache {key}: {} {}", e.code, e.message);
                    }
                    answer
                }
                _ => Answer {
                    bytes: content.bytes,
                    content_type: content.content_type,
                    source_hash,
                    source_verified: content.verified,
                },
            }
        }
    };
    respond(&target, width, &query, answer)
}

fn respond(target: &CidPath, width: Option<u32>, query: &ImageQuery, answer: Answer) -> ApiResult<Response> {
    let headers = Headers::new();
    headers.set("content-type", &answer.content_type)?;
    headers.set("cache-control", "public, max-age=29030400, immutable")?;
    headers.set("x-content-type-options", "nosniff")?;
    let gateway_path = target.to_gateway_path();
    let etag = match width {
        Some(w) => format!("\"{gateway_path}@{w}w\""),
        None => format!("\"{gateway_path}\""),
    };
    headers.set("etag", &etag)?;
    headers.set("x-ipfs-path", &format!("/ipfs/{gateway_path}"))?;
    headers.set(
        "x-content-verified",
        if answer.source_verified { "true" } else { "false" },
    )?;
    if let Some(verified) = query.verified(answer.source_hash) {
        headers.set("x-verified", if verified { "true" } else { "false" })?;
    }
    headers.set("content-security-policy", crate::ipfs::SANDBOX_CSP)?;
    if !crate::ipfs::is_passive(&answer.content_type) {
        headers.set("content-disposition", "attachment")?;
    }
    Ok(Response::from_bytes(answer.bytes)?.with_headers(headers))
}

async fn cached_derived(env: &Env, key: &str) -> ApiResult<Option<Answer>> {
    let Some(object) = env.bucket("IPFS")?.get(key).execute().await? else {
        return Ok(None);
    };
    let meta = object.custom_metadata()?;
    let Some(source_hash) = meta.get("sourceKeccak256").and_then(|h| h.parse::<B256>().ok()) else {
        return Ok(None);
    };
    let Some(content_type) = object.http_metadata().content_type else {
        return Ok(None);
    };
    let Some(body) = object.body() else {
        return Ok(None);
    };
    Ok(Some(Answer {
        bytes: body.bytes().await?,
        content_type,
        source_hash,
        source_verified: meta.get("sourceVerified").is_some_and(|v| v == "true"),
    }))
}

/// Keeps a derived image in R2. Anyone can ask for any width of any image, so the cache is bounded like the
/// relay's (`IMAGE_CACHE_MAX_BYTES`): a ledger in D1 (`image_cache`) records what is stored, the oldest entries
/// are evicted to make room.
async fn store_derived(env: &Env, key: &str, answer: &Answer) -> ApiResult<()> {
    let cache = crate::r2_cache::BoundedCache {
        table: "image_cache",
        key_column: "key",
        max_bytes: crate::config::number(env, "IMAGE_CACHE_MAX_BYTES", DEFAULT_CACHE_MAX_BYTES)?,
    };
    cache
        .put(
            env,
            crate::r2_cache::Object {
                key,
                bytes: &answer.bytes,
                content_type: &answer.content_type,
                metadata: std::collections::HashMap::from([
                    ("origin".to_owned(), "image".to_owned()),
                    ("sourceKeccak256".to_owned(), answer.source_hash.to_string()),
                    ("sourceVerified".to_owned(), answer.source_verified.to_string()),
                ]),
            },
        )
        .await?;
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]
mod tests {
    use super::*;
    use image::{ImageBuffer, Rgb, Rgba};

    fn query(q: &str) -> ApiResult<ImageQuery> {
        let pairs: Vec<(&str, &str)> = q
            .split('&')
            .filter(|p| !p.is_empty())
            .map(|p| p.split_once('=').unwrap_or((p, "")))
            .collect();
        ImageQuery::parse(pairs)
    }

    fn png(w: u32, h: u32) -> Vec<u8> {
        let img = ImageBuffer::from_fn(w, h, |x, y| Rgba([(x % 256) as u8, (y % 256) as u8, 7, 200]));
        let mut out = Vec::new();
        DynamicImage::ImageRgba8(img)
            .write_with_encoder(PngEncoder::new(&mut out))
            .unwrap();
        out
    }

    fn jpeg(w: u32, h: u32) -> Vec<u8> {
        let img = ImageBuffer::from_fn(w, h, |x, y| Rgb([(x % 256) as u8, (y % 256) as u8, 90]));
        let mut out = Vec::new();
        DynamicImage::ImageRgb8(img)
            .write_with_encoder(JpegEncoder::new_with_quality(&mut out, 90))
            .unwrap();
        out
    }

    fn dims(bytes: &[u8]) -> (u32, u32) {
        ImageReader::new(Cursor::new(bytes))
            .with_guessed_format()
            .unwrap()
            .into_dimensions()
            .unwrap()
    }

    #[test]
    fn queries() {
        let hash = format!("0x{}", "ab".repeat(32));
        let q = query(&format!("method=keccak256(bytes)&data={hash}&width=100&dpr=2")).unwrap();
        assert_eq!(q.verification, Verification::Keccak256(B256::repeat_byte(0xab)));
        assert_eq!(q.target_width(), Some(200));
        for m in ["0x8019f9b1", "0x6f357c6a", "KECCAK256(UTF8)", "0X8019F9B1"] {
            let q = query(&format!("method={m}&data={hash}")).unwrap();
            assert_eq!(
                q.verification,
                Verification::Keccak256(B256::repeat_byte(0xab)),
                "{m}"
            );
            assert_eq!(q.target_width(), None);
        }
        // what the wallet sends for images without verification
        assert_eq!(
            query("method=0x00000000&data=0x").unwrap().verification,
            Verification::None
        );
        assert_eq!(query("").unwrap().verification, Verification::None);
        for unverifiable in [
            "method=ecdsa",
            "method=keccak256(bytes)",
            "method=0x8019f9b1&data=0x",
        ] {
            assert_eq!(
                query(unverifiable).unwrap().verification,
                Verification::Unverifiable,
                "{unverifiable}"
            );
        }
        assert_eq!(query("width=10&dpr=1.25").unwrap().target_width(), Some(13));
        assert_eq!(
            query("width=10000&dpr=5").unwrap().target_width(),
            Some(MAX_OUTPUT_WIDTH)
        );
        assert_eq!(query("width=1&dpr=0.1").unwrap().target_width(), Some(1));
        assert_eq!(query("other=1&height=5").unwrap().width, None);
        for bad in [
            "width=",
            "dpr=",
            "method=",
            "data=",
            "data=__main__",
            "method=ecdsa&data=0x01",
            "width=0",
            "width=-1",
            "width=10001",
            "width=1e3",
            "width=100?width=100",
            "width=99999999999999999999",
            "dpr=0",
            "dpr=-1",
            "dpr=5.5",
            "dpr=NaN",
            "dpr=inf",
            "width=1&width=2",
            "method=sha256",
            "method=0xdeadbeef&data=0x",
            "method=0x8019f9",
            "method=keccak256(bytes)&data=0x1234",
            "method=keccak256(bytes)&data=0xzz",
        ] {
            let e = query(bad).unwrap_err();
            assert_eq!((e.status, e.code), (400, "INVALID_PARAMETER"), "{bad}");
        }
    }

    #[test]
    fn verification_compares_keccak_of_the_source() {
        let bytes = b"some image bytes";
        let right = format!("{}", keccak256(bytes));
        let q = query(&format!("method=keccak256(bytes)&data={right}")).unwrap();
        assert_eq!(q.verified(content_hash(bytes)), Some(true));
        assert_eq!(q.verified(content_hash(b"other bytes")), Some(false));
        assert_eq!(query("").unwrap().verified(content_hash(bytes)), None);
        assert_eq!(
            query("method=ecdsa").unwrap().verified(content_hash(bytes)),
            Some(false)
        );
    }

    #[test]
    fn png_and_jpeg_are_scaled_down_keeping_the_aspect_ratio() {
        let Resized::Image {
            bytes, content_type, ..
        } = resize(&png(300, 200), 150).unwrap()
        else {
            panic!("not resized")
        };
        assert_eq!(content_type, "image/png");
        assert_eq!(dims(&bytes), (150, 100));
        let Resized::Image {
            bytes, content_type, ..
        } = resize(&jpeg(640, 480), 64).unwrap()
        else {
            panic!("not resized")
        };
        assert_eq!(content_type, "image/jpeg");
        assert_eq!(dims(&bytes), (64, 48));
        // a 1-pixel-high strip stays at least 1 pixel high
        let Resized::Image { bytes, .. } = resize(&png(1000, 1), 10).unwrap() else {
            panic!("not resized")
        };
        assert_eq!(dims(&bytes), (10, 1));
    }

    #[test]
    fn exif_orientation_is_applied_before_scaling() {
        use image::ImageEncoder;
        // stored 200×100, EXIF orientation 6 (rotate 90°): displayed 100×200
        let exif = [
            0x4d, 0x4d, 0x00, 0x2a, 0x00, 0x00, 0x00, 0x08, 0x00, 0x01, 0x01, 0x12, 0x00, 0x03, 0x00, 0x00,
            0x00, 0x01, 0x00, 0x06, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        ];
        let img = DynamicImage::ImageRgb8(ImageBuffer::from_pixel(200, 100, Rgb([10, 20, 30])));
        let mut bytes = Vec::new();
        let mut encoder = JpegEncoder::new_with_quality(&mut bytes, 90);
        encoder.set_exif_metadata(exif.to_vec()).unwrap();
        encoder
            .write_image(img.as_bytes(), 200, 100, image::ExtendedColorType::Rgb8)
            .unwrap();
        let Resized::Image { bytes: out, .. } = resize(&bytes, 50).unwrap() else {
            panic!("not resized")
        };
        assert_eq!(dims(&out), (50, 100));
        // displayed 100 wide: nothing to do at 150, although 200 pixels are stored per row
        assert!(matches!(resize(&bytes, 150).unwrap(), Resized::Original));
    }

    #[test]
    fn never_enlarged_and_non_images_pass_through() {
        assert!(matches!(resize(&png(100, 50), 100).unwrap(), Resized::Original));
        assert!(matches!(resize(&png(100, 50), 4000).unwrap(), Resized::Original));
        assert!(matches!(
            resize(b"<svg xmlns='http://www.w3.org/2000/svg'/>", 10).unwrap(),
            Resized::Original
        ));
        assert!(matches!(resize(b"{\"a\":1}", 10).unwrap(), Resized::Original));
        assert!(matches!(resize(b"", 10).unwrap(), Resized::Original));
    }

    #[test]
    fn static_gif_becomes_png_and_animated_gif_passes_through() {
        use image::{Delay, Frame, codecs::gif::GifEncoder};
        let frame = |v: u8| {
            Frame::from_parts(
                ImageBuffer::from_pixel(40, 20, Rgba([v, v, v, 255])),
                0,
                0,
                Delay::from_numer_denom_ms(100, 1),
            )
        };
        let gif = |n: u8| {
            let mut out = Vec::new();
            {
                let mut enc = GifEncoder::new(&mut out);
                enc.encode_frames((0..n).map(|i| frame(i * 50))).unwrap();
            }
            out
        };
        let Resized::Image {
            content_type, bytes, ..
        } = resize(&gif(1), 20).unwrap()
        else {
            panic!("not resized")
        };
        assert_eq!(content_type, "image/png");
        assert_eq!(dims(&bytes), (20, 10));
        assert!(matches!(resize(&gif(3), 20).unwrap(), Resized::Original));
    }

    #[test]
    fn static_webp_is_resized_to_webp() {
        let img = DynamicImage::ImageRgba8(ImageBuffer::from_pixel(80, 40, Rgba([1, 2, 3, 255])));
        let mut webp = Vec::new();
        img.write_with_encoder(WebPEncoder::new_lossless(&mut webp))
            .unwrap();
        let Resized::Image {
            content_type, bytes, ..
        } = resize(&webp, 40).unwrap()
        else {
            panic!("not resized")
        };
        assert_eq!(content_type, "image/webp");
        assert_eq!(dims(&bytes), (40, 20));
    }

    #[cfg(not(target_arch = "wasm32"))]
    /// A PNG header declaring `w × h` followed by one small IDAT of zeros.
    fn bomb(w: u32, h: u32) -> Vec<u8> {
        let mut out = Vec::new();
        {
            let mut enc = png::Encoder::new(&mut out, w, h);
            enc.set_color(png::ColorType::Rgba);
            let mut writer = enc.write_header().unwrap();
            // a stream of zero rows compresses ~1000:1: write a few rows, the decoder fails before running out
            let mut stream = writer.stream_writer().unwrap();
            let row = vec![0u8; usize::try_from(w).unwrap() * 4 + 1];
            for _ in 0..4 {
                let _ = std::io::Write::write_all(&mut stream, &row);
            }
            drop(stream);
        }
        out
    }

    #[cfg(not(target_arch = "wasm32"))]
    #[test]
    fn decompression_bombs_and_huge_images_are_413() {
        for (w, h) in [(100_000, 100_000), (12_001, 10), (8000, 8000), (5000, 4000)] {
            let e = resize(&bomb(w, h), 100).unwrap_err();
            assert_eq!((e.status, e.code), (413, "IMAGE_TOO_LARGE"), "{w}×{h}");
        }
    }

    #[test]
    fn corrupt_images_are_422() {
        let mut broken = png(300, 200);
        broken.truncate(100);
        let e = resize(&broken, 10).unwrap_err();
        assert_eq!((e.status, e.code), (422, "INVALID_IMAGE"));
        // the fake PNG the schemathesis run uploads: a signature and 4 bytes
        let e = resize(&[0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3, 4], 10).unwrap_err();
        assert_eq!(e.status, 422);
    }
}
