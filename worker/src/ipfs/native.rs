//! Relayed bytes held by the runtime. A block goes from the gateway (or R2) to the client without entering the
//! Worker's wasm memory: the runtime reads it whole, hashes it (`crypto.subtle.digest`, native SHA-256) and sends
//! it, and R2 takes it from the same buffer; the Worker copies only what it must look at (the first bytes, to sniff a
//! media type; a CAR, to parse it).

use cid::Cid;
use js_sys::{Promise, Uint8Array};
use wasm_bindgen::{JsCast as _, JsValue};
use worker::{
    crypto::{DigestStream, DigestStreamAlgorithm},
    wasm_bindgen_futures::JsFuture,
    web_sys,
};

use super::content::SNIFF_BYTES;
use crate::body::js_text as text;

/// Content and its type.
#[derive(Debug, Clone)]
pub struct Content {
    /// The bytes, held by the runtime (see this module); [`Content::to_vec`] copies them into the Worker.
    pub bytes: js_sys::Uint8Array,
    /// Media type.
    pub content_type: String,
    /// Whether the bytes were checked against the CID.
    pub verified: bool,
}

impl Content {
    /// The bytes, copied into the Worker (to parse or decode them).
    #[must_use]
    pub fn to_vec(&self) -> Vec<u8> {
        self.bytes.to_vec()
    }
}

/// Reads a body stream whole, in the runtime (one native buffer, no copy into the Worker). For bodies whose
/// length is known to be within bounds: the caller checks `Content-Length` (or the R2 object's size) first.
pub(super) async fn read_all(stream: &web_sys::ReadableStream) -> Result<Uint8Array, String> {
    let response = web_sys::Response::new_with_opt_readable_stream(Some(stream)).map_err(|e| text(&e))?;
    let buffer = JsFuture::from(response.array_buffer().map_err(|e| text(&e))?)
        .await
        .map_err(|e| text(&e))?;
    Ok(Uint8Array::new(&buffer))
}

/// Whether `bytes` is the block `cid` names, hashed by the runtime. `false` for a CID whose hash function cannot
/// be checked (the core decides which can: [`profile_relayer::ipfs::block_sha256`]).
pub(super) async fn is_block_of(cid: &Cid, bytes: &Uint8Array) -> bool {
    let Ok(expected) = profile_relayer::ipfs::block_sha256(cid) else {
        return false;
    };
    match sha256(bytes).await {
        Ok(digest) => digest == expected,
        Err(e) => {
            worker::console_warn!("ipfs: hashing failed: {e}");
            false
        }
    }
}

#[wasm_bindgen::prelude::wasm_bindgen]
extern "C" {
    /// `crypto.subtle.digest`: the digest of bytes held whole, in one call.
    #[wasm_bindgen(catch, js_namespace = ["crypto", "subtle"], js_name = digest)]
    fn subtle_digest(algorithm: &str, data: &Uint8Array) -> Result<Promise, JsValue>;
}

/// SHA-256 of bytes held whole (one call; [`Digest`] hashes bytes given piece by piece).
async fn sha256(bytes: &Uint8Array) -> Result<Vec<u8>, String> {
    let digest = JsFuture::from(subtle_digest("SHA-256", bytes).map_err(|e| text(&e))?)
        .await
        .map_err(|e| text(&e))?;
    Ok(Uint8Array::new(&digest).to_vec())
}

/// The leading bytes media-type sniffing reads ([`SNIFF_BYTES`]).
pub(super) fn head(bytes: &Uint8Array) -> Vec<u8> {
    bytes.subarray(0, bytes.length().min(SNIFF_BYTES as u32)).to_vec()
}

/// The least a [`Reader`] piece holds (but the body's last): a gateway's answer is read in pieces of tens of KiB,
/// not in the network's few-KiB ones — each piece costs a promise, a timer and a step of the Worker.
const PIECE_MIN_BYTES: u32 = 64 * 1024;
/// The most a [`Reader`] piece holds: what has arrived beyond [`PIECE_MIN_BYTES`] is taken too, up to this.
const PIECE_MAX_BYTES: u32 = 256 * 1024;

#[wasm_bindgen::prelude::wasm_bindgen]
extern "C" {
    /// A body's BYOB reader, with workerd's `readAtLeast`.
    #[wasm_bindgen(extends = js_sys::Object)]
    type ByobReader;

    /// A `ReadableStream`, seen for its BYOB reader.
    #[wasm_bindgen(extends = js_sys::Object)]
    type ByteStream;

    /// `getReader({ mode: 'byob' })`: throws for a stream that is not a byte stream.
    #[wasm_bindgen(method, catch, js_name = getReader)]
    fn byob_reader(this: &ByteStream, options: &js_sys::Object) -> Result<ByobReader, JsValue>;

    /// Reads at least `min` bytes into `view` (fewer only at the end of the body).
    #[wasm_bindgen(method, js_name = readAtLeast)]
    fn read_at_least(this: &ByobReader, min: u32, view: &Uint8Array) -> Promise;

    #[wasm_bindgen(method)]
    fn cancel(this: &ByobReader) -> Promise;
}

/// How a [`Reader`] reads.
enum Reading {
    /// In pieces of at least [`PIECE_MIN_BYTES`] (a byte stream, as the runtime's fetch bodies are).
    Chunks(ByobReader),
    /// As the stream gives its pieces (any other stream).
    Pieces(web_sys::ReadableStreamDefaultReader),
}

/// A body read piece by piece, each piece left in the runtime (a JS `Uint8Array`): pieces of at least
/// [`PIECE_MIN_BYTES`] (but the last) where the runtime can read so.
pub(super) struct Reader(Reading);

impl Reader {
    pub(super) fn new(stream: &web_sys::ReadableStream) -> Self {
        let options = js_sys::Object::new();
        let _ = js_sys::Reflect::set(&options, &JsValue::from_str("mode"), &JsValue::from_str("byob"));
        Self(match stream.unchecked_ref::<ByteStream>().byob_reader(&options) {
            Ok(reader) => Reading::Chunks(reader),
            Err(_) => Reading::Pieces(stream.get_reader().unchecked_into()),
        })
    }

    /// The next piece; `None` at the end of the body.
    pub(super) async fn read(&self) -> Result<Option<Uint8Array>, String> {
        let result = match &self.0 {
            Reading::Chunks(reader) => {
                let view = Uint8Array::new_with_length(PIECE_MAX_BYTES);
                reader.read_at_least(PIECE_MIN_BYTES, &view)
            }
            Reading::Pieces(reader) => reader.read(),
        };
        let result = JsFuture::from(result).await.map_err(|e| text(&e))?;
        let value = js_sys::Reflect::get(&result, &JsValue::from_str("value")).map_err(|e| text(&e))?;
        let done = js_sys::Reflect::get(&result, &JsValue::from_str("done"))
            .map_err(|e| text(&e))?
            .is_truthy();
        match value.dyn_into::<Uint8Array>() {
            // a BYOB read gives the last bytes with `done` or before it: an empty piece at the end is none
            Ok(piece) if piece.length() > 0 || !done => Ok(Some(piece)),
            _ if done => Ok(None),
            _ => Err("a body piece that is not bytes".to_owned()),
        }
    }

    /// Stops reading (the gateway's connection is let go).
    pub(super) fn cancel(&self) {
        let _ = match &self.0 {
            Reading::Chunks(reader) => reader.cancel(),
            Reading::Pieces(reader) => reader.cancel(),
        };
    }
}

/// SHA-256 of bytes given piece by piece, in the runtime.
pub(super) struct Digest {
    hasher: DigestStream,
    writer: web_sys::WritableStreamDefaultWriter,
    /// Pieces queued, not yet hashed.
    queued: Vec<JsFuture>,
}

impl Digest {
    pub(super) fn new() -> Result<Self, String> {
        let hasher = DigestStream::new(DigestStreamAlgorithm::Sha256);
        let writer = hasher.raw().get_writer().map_err(|e| text(&e))?;
        Ok(Self {
            hasher,
            writer,
            queued: Vec::new(),
        })
    }

    /// Queues `bytes` for hashing (the runtime hashes them in order, without the Worker waiting).
    pub(super) fn update(&mut self, bytes: &Uint8Array) {
        self.queued
            .push(JsFuture::from(self.writer.write_with_chunk(bytes)));
    }

    /// Whether the bytes given are the block `cid` names.
    pub(super) async fn matches(self, cid: &Cid) -> Result<bool, String> {
        let expected = profile_relayer::ipfs::block_sha256(cid).map_err(|e| e.to_string())?;
        for queued in self.queued {
            queued.await.map_err(|e| text(&e))?;
        }
        JsFuture::from(self.writer.close()).await.map_err(|e| text(&e))?;
        Ok(self.hasher.digest().await.map_err(|e| e.to_string())?.to_vec() == expected)
    }
}

/// A body of exactly `length` bytes written piece by piece ([`Sink::write`]); when it is aborted
/// ([`Sink::abort`]) or ends short, the client's answer errors: with its `Content-Length`, a cut body is never
/// taken as whole.
pub(super) struct Sink(web_sys::WritableStreamDefaultWriter);

impl Sink {
    /// The sink and the body to answer with.
    pub(super) fn new(length: u32) -> Result<(Self, web_sys::ReadableStream), String> {
        let pipe = worker::worker_sys::FixedLengthStream::new(length).map_err(|e| text(&e))?;
        let writer = pipe.writable().get_writer().map_err(|e| text(&e))?;
        Ok((Self(writer), pipe.readable()))
    }

    /// Queues `bytes`: the future settles once the client's side has taken them (or the body failed).
    pub(super) fn write(&self, bytes: &Uint8Array) -> JsFuture {
        JsFuture::from(self.0.write_with_chunk(bytes))
    }

    /// The body is whole.
    pub(super) async fn close(self) -> Result<(), String> {
        JsFuture::from(self.0.close())
            .await
            .map(drop)
            .map_err(|e| text(&e))
    }

    /// The body errors: the client's read fails.
    pub(super) fn abort(self, reason: &str) {
        let _ = self.0.abort_with_reason(&JsValue::from_str(reason));
    }
}
