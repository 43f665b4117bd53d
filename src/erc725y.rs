//! ERC725Y: the `getData` / `getDataBatch` calls every LUKSO profile and asset answers.
//!
//! Spec: <https://github.com/ERC725Alliance/ERC725/blob/develop/docs/ERC-725.md#erc725y>

use alloy_primitives::{B256, Bytes};
use alloy_sol_types::{SolCall, sol};

sol! {
    /// ERC725Y: one value.
    function getData(bytes32 dataKey) external view returns (bytes dataValue);
    /// ERC725Y: several values, one per key, in order.
    function getDataBatch(bytes32[] dataKeys) external view returns (bytes[] dataValues);
    /// ERC725Y: a value changed.
    event DataChanged(bytes32 indexed dataKey, bytes dataValue);
}

/// `topic0` of [`DataChanged`].
pub const DATA_CHANGED_TOPIC: B256 = <DataChanged as alloy_sol_types::SolEvent>::SIGNATURE_HASH;

/// `getData(key)` calldata.
#[must_use]
pub fn get_data_calldata(key: B256) -> Vec<u8> {
    getDataCall { dataKey: key }.abi_encode()
}

/// Reads a `getData` answer (`None` when it is not ABI-encoded `bytes`).
#[must_use]
pub fn decode_get_data(return_data: &[u8]) -> Option<Bytes> {
    getDataCall::abi_decode_returns_validate(return_data).ok()
}

/// `getDataBatch(keys)` calldata.
#[must_use]
pub fn get_data_batch_calldata(keys: &[B256]) -> Vec<u8> {
    getDataBatchCall {
        dataKeys: keys.to_vec(),
    }
    .abi_encode()
}

/// Reads a `getDataBatch` answer (`None` when it is not ABI-encoded `bytes[]`; the caller checks the count).
#[must_use]
pub fn decode_get_data_batch(return_data: &[u8]) -> Option<Vec<Bytes>> {
    getDataBatchCall::abi_decode_returns_validate(return_data).ok()
}

#[cfg(test)]
mod tests {
    use alloy_primitives::hex;

    use super::*;

    #[test]
    fn event_topics_are_the_hashes_of_their_signatures() {
        use alloy_primitives::keccak256;
        assert_eq!(DATA_CHANGED_TOPIC, keccak256("DataChanged(bytes32,bytes)"));
        assert_eq!(
            crate::lsp23::DEPLOYED_PROXIES_TOPIC,
            keccak256(
                "DeployedERC1167Proxies(address,address,(bytes32,uint256,address,bytes),\
                 (uint256,address,bytes,bool,bytes),address,bytes)"
            )
        );
        assert_eq!(
            crate::lsp7::TRANSFER_TOPIC,
            keccak256("Transfer(address,address,address,uint256,bool,bytes)")
        );
        assert_eq!(
            crate::lsp8::TRANSFER_TOPIC,
            keccak256("Transfer(address,address,address,bytes32,bool,bytes)")
        );
    }

    #[test]
    fn selectors_and_round_trips() {
        let key = B256::repeat_byte(0x11);
        assert_eq!(hex::encode(&get_data_calldata(key)[..4]), "54f6127f");
        assert_eq!(hex::encode(&get_data_batch_calldata(&[key])[..4]), "dedff9c6");
        let values = vec![Bytes::from(vec![1u8, 2]), Bytes::new()];
        let answer = getDataBatchCall::abi_encode_returns(&values);
        assert_eq!(decode_get_data_batch(&answer), Some(values));
        assert_eq!(decode_get_data_batch(&[0xde, 0xad]), None);
        let one = getDataCall::abi_encode_returns(&Bytes::from(vec![7u8]));
        assert_eq!(decode_get_data(&one), Some(Bytes::from(vec![7u8])));
        assert_eq!(decode_get_data(&[1, 2, 3]), None);
    }
}
