//! Bindings of the full package only: IPFS CIDs (`cid` brings `multibase` with every base encoding).

use wasm_bindgen::prelude::*;

use super::{JsResult, io};
use crate::Error;

/// The CIDv1 (`raw` codec, sha2-256) of `bytes`: what `POST /api/v0/add` answers for them.
#[wasm_bindgen(js_name = computeCid)]
///
/// # Errors
/// `INVALID_CONTENT` when `bytes` is not bytes (a `Uint8Array`, an `ArrayBuffer`, another typed array or a
/// `DataView`).
pub fn compute_cid(
    #[wasm_bindgen(unchecked_param_type = "ContentBytes")] bytes: &JsValue,
) -> JsResult<String> {
    Ok(crate::ipfs::cid_text(&crate::ipfs::raw_cid(&bytes_arg(bytes)?)))
}

/// The bytes of a bytes argument (any typed array, `DataView` or `ArrayBuffer`), else `INVALID_CONTENT`.
fn bytes_arg(bytes: &JsValue) -> JsResult<Vec<u8>> {
    match io::content_arg(bytes, false, io::content::BYTES)? {
        io::ContentArg::Bytes(bytes) => Ok(bytes),
        io::ContentArg::Json(_) => Err(Error::InvalidContent {
            expected: io::content::BYTES,
        }),
    }
}

/// Whether `bytes` is the block `cid` (`ipfs://…`, `/ipfs/…` or bare) names; throws `INVALID_CID` for a
/// malformed CID, a path, or a hash function other than sha2-256. CIDv0 (`Qm…`) and CIDv1 in base32 (`b…`, the
/// canonical form), base58btc (`z…`) or base16 (`f…`) are read; other multibases are refused (`INVALID_CID`).
#[wasm_bindgen(js_name = verifyCid)]
pub fn verify_cid(
    #[wasm_bindgen(unchecked_param_type = "string")] cid: &JsValue,
    #[wasm_bindgen(unchecked_param_type = "ContentBytes")] bytes: &JsValue,
) -> JsResult<bool> {
    let target = crate::ipfs::CidPath::parse(&super::io::text_arg("cid", cid)?)?;
    let bytes = &bytes_arg(bytes)?;
    if !target.path.is_empty() {
        return Err(Error::InvalidCid(
            "a CID with a path names a file inside a directory, not a block".into(),
        ));
    }
    crate::ipfs::verify_block(&target.cid, bytes)
}
