//! The relayer's EIP-1559 transactions: built with alloy-consensus, signed with k256 (RFC 6979, low-s).

use alloy_consensus::{SignableTransaction, TxEip1559, TxEnvelope};
use alloy_eips::eip2718::{Decodable2718, Encodable2718};
use alloy_primitives::{Address, B256, Bytes, Signature, TxKind, U256, hex};
use k256::ecdsa::SigningKey;

/// The gas limit the relayer sends for a transaction whose `eth_estimateGas` is `estimate`: the estimate + 20 % +
/// 20,000 (state the estimate did not see, e.g. a nonce slot already warm, a storage refund cap). The one margin of
/// every transaction the relayer signs; the whole limit is reserved on the meters, `gasUsed` is charged.
#[must_use]
pub const fn gas_limit_for(estimate: u64) -> u64 {
    estimate.saturating_add(estimate / 5).saturating_add(20_000)
}

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

/// Decodes a signed raw EIP-1559 transaction (as [`Signer::sign`] makes them) back into its fields and hash.
///
/// # Errors
/// When `raw` is not a well-formed EIP-1559 transaction that calls an address.
pub fn decode(raw: &[u8]) -> Result<(TxRequest, B256), String> {
    let mut slice = raw;
    let envelope = TxEnvelope::decode_2718(&mut slice).map_err(|e| e.to_string())?;
    let TxEnvelope::Eip1559(signed) = envelope else {
        return Err("not an EIP-1559 transaction".to_owned());
    };
    let hash = *signed.hash();
    let tx = signed.tx();
    let TxKind::Call(to) = tx.to else {
        return Err("a contract creation".to_owned());
    };
    Ok((
        TxRequest {
            chain_id: tx.chain_id,
            nonce: tx.nonce,
            gas_limit: tx.gas_limit,
            max_fee_per_gas: tx.max_fee_per_gas,
            max_priority_fee_per_gas: tx.max_priority_fee_per_gas,
            to,
            input: tx.input.clone(),
        },
        hash,
    ))
}

/// Fees for a replacement: at least 10% (plus one wei) above the previous fees on both fields, and not below
/// what the network asks now.
pub fn bumped_fees(previous: (u128, u128), current: (u128, u128)) -> (u128, u128) {
    let tip = min_bump(previous.1).max(current.1);
    let max_fee = min_bump(previous.0).max(current.0).max(tip);
    (max_fee, tip)
}

/// The smallest fee a node accepts for a replacement: +10% plus one wei.
const fn min_bump(v: u128) -> u128 {
    v.saturating_add(v / 10).saturating_add(1)
}

/// [`bumped_fees`] under the cap `max_fee_per_gas`. When what the network asks is above the cap but the smallest
/// valid replacement (+10% on both fields) is not, the replacement is priced at the cap; when even that is above the
/// cap, `None`: no replacement is sent, the transaction keeps waiting at its current fees.
pub fn bumped_fees_capped(previous: (u128, u128), current: (u128, u128), cap: u128) -> Option<(u128, u128)> {
    let (max_fee, tip) = bumped_fees(previous, current);
    if max_fee <= cap {
        return Some((max_fee, tip));
    }
    if min_bump(previous.0).max(min_bump(previous.1)) > cap {
        return None;
    }
    Some((cap, tip.min(cap)))
}

/// `maxFeePerGas` / `maxPriorityFeePerGas` from the latest base fee and the suggested tip: twice the base fee
/// plus the tip, so the transaction stays valid through several full blocks.
pub fn initial_fees(base_fee: u128, tip: u128) -> (u128, u128) {
    let tip = tip.max(1);
    (base_fee.saturating_mul(2).saturating_add(tip), tip)
}

/// [`initial_fees`] under the cap `max_fee_per_gas`: the headroom above the base fee is cut at the cap, and `None`
/// when the cap does not even cover the latest base fee plus the tip (the transaction could not be included now,
/// so nothing should be sent).
pub fn initial_fees_capped(base_fee: u128, tip: u128, cap: u128) -> Option<(u128, u128)> {
    let (max_fee, tip) = initial_fees(base_fee, tip);
    if base_fee.saturating_add(tip) > cap {
        return None;
    }
    Some((max_fee.min(cap), tip))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use alloy_consensus::transaction::SignerRecoverable;

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

    #[test]
    fn decode_returns_what_was_signed() {
        let s =
            Signer::from_hex("0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d").unwrap();
        let tx = TxRequest {
            chain_id: 4201,
            nonce: 12,
            gas_limit: 21_000,
            max_fee_per_gas: 3_000_000_001,
            max_priority_fee_per_gas: 1_000_000_000,
            to: s.address(),
            input: Bytes::new(),
        };
        let (raw, hash) = s.sign(&tx).unwrap();
        assert_eq!(decode(&raw).unwrap(), (tx, hash));
        assert!(decode(&raw[..raw.len() - 1]).is_err());
        assert!(decode(&[]).is_err());
    }

    const GWEI: u128 = 1_000_000_000;

    #[test]
    fn initial_fees_respect_the_cap() {
        let cap = 100 * GWEI;
        // well under the cap: unchanged
        assert_eq!(initial_fees_capped(GWEI, GWEI, cap), Some((3 * GWEI, GWEI)));
        // twice the base fee is above the cap, base + tip is not: headroom cut at the cap
        assert_eq!(initial_fees_capped(60 * GWEI, GWEI, cap), Some((cap, GWEI)));
        // exactly the cap is fine, one wei above is not
        assert_eq!(initial_fees_capped(99 * GWEI, GWEI, cap), Some((cap, GWEI)));
        assert_eq!(initial_fees_capped(99 * GWEI + 1, GWEI, cap), None);
        // a tip alone above the cap
        assert_eq!(initial_fees_capped(0, cap + 1, cap), None);
        // no overflow at the extremes
        assert_eq!(
            initial_fees_capped(u128::MAX, u128::MAX, u128::MAX),
            Some((u128::MAX, u128::MAX))
        );
    }

    #[test]
    fn bumps_stop_at_the_cap() {
        let cap = 100 * GWEI;
        // a normal bump under the cap equals the uncapped one
        assert_eq!(
            bumped_fees_capped((81 * GWEI, GWEI), (81 * GWEI, GWEI), cap),
            Some(bumped_fees((81 * GWEI, GWEI), (81 * GWEI, GWEI)))
        );
        // the network asks more than the cap, +10% still fits: priced at the cap, tip kept valid
        let (max, tip) = bumped_fees_capped((85 * GWEI, GWEI), (171 * GWEI, GWEI), cap).unwrap();
        assert_eq!(max, cap);
        assert!(tip > GWEI + GWEI / 10 && tip <= max, "{tip}");
        // +10% would exceed the cap: nothing to send
        assert_eq!(bumped_fees_capped((91 * GWEI, GWEI), (3 * GWEI, GWEI), cap), None);
        // already at the cap
        assert_eq!(bumped_fees_capped((cap, GWEI), (cap, GWEI), cap), None);
        // the tip's bump alone above the cap
        assert_eq!(bumped_fees_capped((cap, cap), (0, 0), cap), None);
    }

    #[test]
    fn capped_bumps_form_a_valid_ladder() {
        // whatever the network asks, every step is a valid replacement (+10% on both fields) and never above the cap
        let cap = 100 * GWEI;
        for start in [GWEI, 7 * GWEI, 40 * GWEI, 90 * GWEI] {
            for ask in [0, GWEI, 50 * GWEI, 500 * GWEI] {
                let mut fees = initial_fees_capped(start / 2, GWEI, cap).unwrap();
                let mut steps = 0;
                while let Some(next) = bumped_fees_capped(fees, (ask, GWEI), cap) {
                    assert!(next.0 <= cap && next.1 <= next.0, "{next:?}");
                    assert!(next.0 > fees.0 + fees.0 / 10 && next.1 > fees.1 + fees.1 / 10);
                    fees = next;
                    steps += 1;
                    assert!(steps < 100, "the ladder ends");
                }
            }
        }
    }
}
