//! Decoding and resizing an image within bounds ([`MAX_SOURCE_SIDE`], [`MAX_DECODE_BYTES`], [`MAX_RESIZE_BYTES`]).
//! Pure: no I/O.

use std::io::Cursor;

use image::{
    AnimationDecoder, DynamicImage, ImageDecoder, ImageError, ImageFormat, ImageReader, Limits,
    codecs::{gif::GifDecoder, jpeg::JpegEncoder, png::PngEncoder, webp::WebPDecoder, webp::WebPEncoder},
    error::LimitErrorKind,
    metadata::Orientation,
};

use crate::error::{ApiError, ApiResult, Code};

/// Longest side of a source image that is decoded.
pub const MAX_SOURCE_SIDE: u32 = 12_000;
/// Largest decoded source image (pixels × bytes per pixel): a Worker has 128 MB.
pub const MAX_DECODE_BYTES: u64 = 64 * 1024 * 1024;
/// Most memory one resize may hold at once ([`working_bytes`]): the decoded source, the scaled image and its
/// conversion for the encoder. Judged from the header, before anything is decoded.
pub const MAX_RESIZE_BYTES: u64 = 96 * 1024 * 1024;

/// The most bytes a resize holds at once: the decoded source (twice while an EXIF rotation copies it), the scaled
/// image in the source's pixel type (area-averaged: no floating-point intermediate) and its conversion to 8-bit
/// RGB(A) for the encoder (at most 4 bytes a pixel).
fn working_bytes(decoded: u64, reoriented: bool, out_pixels: u64, bytes_per_pixel: u64) -> u64 {
    let source = if reoriented {
        decoded.saturating_mul(2)
    } else {
        decoded
    };
    source.saturating_add(out_pixels.saturating_mul(bytes_per_pixel.saturating_add(4)))
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

/// The height of a `width × height` image scaled to `target_width` (at least 1); `None` when it is not wider.
fn scaled_height(width: u32, height: u32, target_width: u32) -> Option<u32> {
    if width <= target_width || width == 0 {
        return None;
    }
    let new_height = u64::from(height) * u64::from(target_width) / u64::from(width);
    Some(u32::try_from(new_height.max(1)).unwrap_or(1))
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
    let orientation = header.orientation().map_err(image_error)?;
    let turned = matches!(
        orientation,
        Orientation::Rotate90
            | Orientation::Rotate270
            | Orientation::Rotate90FlipH
            | Orientation::Rotate270FlipH
    );
    let (shown_width, shown_height) = if turned {
        (stored_height, stored_width)
    } else {
        (stored_width, stored_height)
    };
    if shown_width <= target_width {
        return Ok(Resized::Original);
    }
    // what the whole resize will hold, from the header alone: refused before anything is decoded
    let out_pixels =
        u64::from(target_width) * scaled_height(shown_width, shown_height, target_width).map_or(1, u64::from);
    // GIF frames are decoded to RGBA whatever the color type says
    let bytes_per_pixel = match format {
        ImageFormat::Gif => 4,
        _ => u64::from(header.color_type().bytes_per_pixel()),
    };
    let decoded = header
        .total_bytes()
        .max((u64::from(stored_width) * u64::from(stored_height)).saturating_mul(bytes_per_pixel));
    let work = working_bytes(
        decoded,
        orientation != Orientation::NoTransforms,
        out_pixels,
        bytes_per_pixel,
    );
    if work > MAX_RESIZE_BYTES {
        return Err(ApiError::new(
            Code::ImageTooLarge,
            format!(
                "resizing this {shown_width}×{shown_height} image to {target_width} pixels wide needs {work} bytes \
                 (at most {MAX_RESIZE_BYTES}); ask for a smaller width, or none to get the original"
            ),
        ));
    }
    drop(header);
    let Some(image) = decode(bytes, format)? else {
        return Ok(Resized::Original);
    };
    let (width, height) = (image.width(), image.height());
    let Some(new_height) = scaled_height(width, height, target_width) else {
        return Ok(Resized::Original);
    };
    // area-averaged in the source's own pixel type: no floating-point intermediate (resize_exact's is 16 bytes
    // a pixel of the source width × the output height)
    let scaled = image.thumbnail_exact(target_width, new_height);
    drop(image);
    let mut out = Vec::new();
    let content_type = match format {
        ImageFormat::Jpeg => {
            let rgb = DynamicImage::ImageRgb8(scaled.into_rgb8());
            rgb.write_with_encoder(JpegEncoder::new_with_quality(&mut out, 85))
                .map_err(ApiError::internal)?;
            "image/jpeg"
        }
        ImageFormat::WebP => {
            let rgba = DynamicImage::ImageRgba8(scaled.into_rgba8());
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

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]
mod tests {
    use super::*;
    use image::{ImageBuffer, Rgb, Rgba};

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

    /// Counts the bytes the current thread holds and its peak, for the memory bounds below (a test thread runs one
    /// resize at a time: other tests' threads count on their own).
    #[cfg(not(target_arch = "wasm32"))]
    mod counting {
        use std::{
            alloc::{GlobalAlloc, Layout, System},
            cell::Cell,
        };

        thread_local! {
            static HELD: Cell<usize> = const { Cell::new(0) };
            static PEAK: Cell<usize> = const { Cell::new(0) };
        }

        pub struct Counting;

        // SAFETY: forwards to the system allocator; the counters are plain thread-local cells.
        unsafe impl GlobalAlloc for Counting {
            unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
                let _ = HELD.try_with(|h| {
                    let held = h.get().saturating_add(layout.size());
                    h.set(held);
                    let _ = PEAK.try_with(|p| p.set(p.get().max(held)));
                });
                unsafe { System.alloc(layout) }
            }

            unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
                let _ = HELD.try_with(|h| h.set(h.get().saturating_sub(layout.size())));
                unsafe { System.dealloc(ptr, layout) }
            }
        }

        #[global_allocator]
        static ALLOCATOR: Counting = Counting;

        /// The most bytes held above the level at the start while `f` runs, and its result.
        pub fn peak<T>(f: impl FnOnce() -> T) -> (usize, T) {
            let start = HELD.with(Cell::get);
            PEAK.with(|p| p.set(start));
            let out = f();
            (PEAK.with(Cell::get) - start, out)
        }
    }

    /// A 4000×4000 PNG of 100-pixel squares (compresses to a few KB): grayscale or RGBA.
    #[cfg(not(target_arch = "wasm32"))]
    fn squares_png(side: u32, color: png::ColorType) -> Vec<u8> {
        let channels = match color {
            png::ColorType::Grayscale => 1,
            _ => 4,
        };
        let mut out = Vec::new();
        {
            let mut enc = png::Encoder::new(&mut out, side, side);
            enc.set_color(color);
            let mut writer = enc.write_header().unwrap();
            let rows: Vec<u8> = (0..side)
                .flat_map(|y| (0..side).map(move |x| u8::try_from((x / 100 + y / 100) % 2 * 255).unwrap()))
                .flat_map(|v| std::iter::repeat_n(v, channels))
                .collect();
            writer.write_image_data(&rows).unwrap();
        }
        out
    }

    /// The attack: a small 4000×4000 grayscale PNG asked at width 3999 grew the Worker by 211 MB (the
    /// resize's f32 intermediate, 16 bytes a pixel). Now it holds at most what `working_bytes` counts; a resize
    /// whose count passes `MAX_RESIZE_BYTES` is refused from the header, before anything is decoded.
    #[cfg(not(target_arch = "wasm32"))]
    #[test]
    fn resize_memory_is_bounded_by_the_working_budget() {
        // the decoders' and encoders' own buffers (rows, zlib windows, the encoded output) come on top
        let slack: u64 = 8 * 1024 * 1024;
        let gray = squares_png(4000, png::ColorType::Grayscale);
        assert!(gray.len() < 100_000, "{} bytes", gray.len());
        for width in [3999, 1000, 64] {
            let (peak, result) = counting::peak(|| resize(&gray, width));
            let Ok(Resized::Image { bytes, .. }) = result else {
                panic!("width {width}: not resized")
            };
            assert_eq!(dims(&bytes).0, width);
            let budget = working_bytes(16_000_000, false, u64::from(width) * u64::from(width), 1);
            assert!(budget <= MAX_RESIZE_BYTES);
            let peak = peak as u64;
            assert!(
                peak < budget + slack,
                "width {width}: held {peak} bytes, budget {budget}"
            );
            if width == 3999 {
                // the same request held 211 MB before
                assert!(peak < 64 * 1024 * 1024, "held {peak} bytes");
            }
        }
        // 4000×4000 RGBA (64 MB decoded) at 3999 would hold 64 MB + 16 M pixels × 8: refused, nothing decoded
        let rgba = squares_png(4000, png::ColorType::Rgba);
        let (peak, result) = counting::peak(|| resize(&rgba, 3999).map(|_| ()));
        let e = result.unwrap_err();
        assert_eq!((e.status, e.code), (413, "IMAGE_TOO_LARGE"), "{}", e.message);
        assert!(peak < 1024 * 1024, "refusing held {peak} bytes");
        // …while a width whose count fits is resized within it
        let (peak, result) =
            counting::peak(|| resize(&rgba, 1000).map(|r| matches!(r, Resized::Image { .. })));
        assert!(result.unwrap());
        let budget = working_bytes(64_000_000, false, 1_000_000, 4);
        assert!(
            (peak as u64) < budget + slack,
            "held {peak} bytes, budget {budget}"
        );
    }

    #[test]
    fn working_bytes_counts_the_source_the_output_and_the_conversion() {
        // a 4000×4000 RGBA source (64 MB) to 1000 wide: 64 MB + 1000² × 8
        assert_eq!(working_bytes(64_000_000, false, 1_000_000, 4), 72_000_000);
        // an EXIF rotation copies the source
        assert_eq!(working_bytes(36_000_000, true, 750_000, 3), 77_250_000);
        assert_eq!(working_bytes(u64::MAX, true, u64::MAX, 8), u64::MAX);
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
