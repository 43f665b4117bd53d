//! The relayer's EIP-1559 transactions: built with alloy-consensus, signed with k256 (RFC 6979, low-s).

use alloy_consensus::{SignableTransaction, TxEip1559, TxEnvelope};
use alloy_eips::eip2718::Encodable2718;
use alloy_primitives::{Address, B256, Bytes, Signature, TxKind, U256, hex};
use k256::ecdsa::SigningKey;

/// The relayer's key.
#[derive(Clone)]
pub struct Signer {
    key: SigningKey,
    address: Address,
}

impl core::fmt::Debug for Signer {
    // never print the key
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Signer")
            .field("address", &self.address)
            .finish_non_exhaustive()
    }
}

/// The fields of a transaction the relayer sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TxRequest {
    /// Chain id.
    pub chain_id: u64,
    /// Nonce.
    pub nonce: u64,
    /// Gas limit.
    pub gas_limit: u64,
    /// `maxFeePerGas`.
    pub max_fee_per_gas: u128,
    /// `maxPriorityFeePerGas`.
    pub max_priority_fee_per_gas: u128,
    /// Recipient.
    pub to: Address,
    /// Calldata.
    pub input: Bytes,
}

impl Signer {
    /// A signer from a 32-byte hex key (with or without `0x`).
    pub fn from_hex(secret: &str) -> Option<Self> {
        let bytes = hex::decode(secret.strip_prefix("0x").unwrap_or(secret)).ok()?;
        let key = SigningKey::from_slice(&bytes).ok()?;
        let address = Address::from_private_key(&key);
        Some(Self { key, address })
    }

    /// The relayer's address.
    pub const fn address(&self) -> Address {
        self.address
    }

    /// Signs `tx`; returns the raw EIP-2718 bytes and the transaction hash.
    pub fn sign(&self, tx: &TxRequest) -> Result<(Vec<u8>, B256), String> {
        let unsigned = TxEip1559 {
            chain_id: tx.chain_id,
            nonce: tx.nonce,
            gas_limit: tx.gas_limit,
            max_fee_per_gas: tx.max_fee_per_gas,
            max_priority_fee_per_gas: tx.max_priority_fee_per_gas,
            to: TxKind::Call(tx.to),
            value: U256::ZERO,
            access_list: Default::default(),
            input: tx.input.clone(),
        };
        let (sig, recid) = self
            .key
            .sign_prehash_recoverable(unsigned.signature_hash().as_slice())
            .map_err(|e| e.to_string())?;
        let signature = Signature::from((sig, recid));
        let signed = unsigned.into_signed(signature);
        let hash = *signed.hash();
        let envelope = TxEnvelope::from(signed);
        Ok((envelope.encoded_2718(), hash))
    }
}

/// Fees for a replacement: at least 10% (plus one wei) above the previous fees on both fields, and not below
/// what the network asks now.
pub fn bumped_fees(previous: (u128, u128), current: (u128, u128)) -> (u128, u128) {
    let bump = |v: u128| v.saturating_add(v / 10).saturating_add(1);
    let tip = bump(previous.1).max(current.1);
    let max_fee = bump(previous.0).max(current.0).max(tip);
    (max_fee, tip)
}

/// `maxFeePerGas` / `maxPriorityFeePerGas` from the latest base fee and the suggested tip: twice the base fee
/// plus the tip, so the transaction stays valid through several full blocks.
pub fn initial_fees(base_fee: u128, tip: u128) -> (u128, u128) {
    let tip = tip.max(1);
    (base_fee.saturating_mul(2).saturating_add(tip), tip)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use alloy_consensus::transaction::SignerRecoverable;
    use alloy_eips::eip2718::Decodable2718;

    #[test]
    fn signs_recoverable_eip1559() {
        // anvil's first development key
        let s =
            Signer::from_hex("0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80").unwrap();
        assert_eq!(
            s.address().to_checksum(None),
            "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"
        );
        let tx = TxRequest {
            chain_id: 42,
            nonce: 7,
            gas_limit: 500_000,
            max_fee_per_gas: 2_000_000_000,
            max_priority_fee_per_gas: 1_000_000_000,
            to: Address::repeat_byte(0x23),
            input: Bytes::from_static(&[0x6a, 0x66, 0xa7, 0x53]),
        };
        let (raw, hash) = s.sign(&tx).unwrap();
        assert_eq!(raw[0], 0x02, "EIP-1559 type byte");
        let decoded = TxEnvelope::decode_2718(&mut raw.as_slice()).unwrap();
        assert_eq!(*decoded.tx_hash(), hash);
        assert_eq!(decoded.recover_signer().unwrap(), s.address());
        // RFC 6979: deterministic
        assert_eq!(s.sign(&tx).unwrap().1, hash);
        assert!(Signer::from_hex("0x1234").is_none());
        assert!(Signer::from_hex(&"00".repeat(32)).is_none());
    }

    #[test]
    fn replacement_fees_rise_at_least_ten_percent() {
        let (max, tip) = bumped_fees((100, 10), (50, 5));
        assert!(max >= 111 && tip >= 12, "{max} {tip}");
        let (max, tip) = bumped_fees((100, 10), (500, 50));
        assert_eq!((max, tip), (500, 50));
        assert_eq!(initial_fees(7, 0), (15, 1));
    }
}
