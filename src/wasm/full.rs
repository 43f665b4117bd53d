//! Bindings of the full package only: IPFS CIDs (`cid` brings `multibase` with every base encoding).

use wasm_bindgen::prelude::*;

use super::JsResult;
use crate::Error;

/// The CIDv1 (`raw` codec, sha2-256) of `bytes`: what `POST /api/v0/add` answers for them.
#[wasm_bindgen(js_name = computeCid)]
pub fn compute_cid(bytes: &[u8]) -> String {
    crate::ipfs::cid_text(&crate::ipfs::raw_cid(bytes))
}

/// Whether `bytes` is the block `cid` (`ipfs://…`, `/ipfs/…` or bare) names; throws `INVALID_CID` for a
/// malformed CID, a path, or a hash function other than sha2-256. CIDv0 (`Qm…`) and CIDv1 in base32 (`b…`, the
/// canonical form), base58btc (`z…`) or base16 (`f…`) are read; other multibases are refused (`INVALID_CID`).
#[wasm_bindgen(js_name = verifyCid)]
pub fn verify_cid(cid: &str, bytes: &[u8]) -> JsResult<bool> {
    let target = crate::ipfs::CidPath::parse(cid)?;
    if !target.path.is_empty() {
        return Err(Error::InvalidCid(
            "a CID with a path names a file inside a directory, not a block".into(),
        ));
    }
    crate::ipfs::verify_block(&target.cid, bytes)
}
