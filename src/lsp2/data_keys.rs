//! ERC725Y data keys of the LSP standards, as constants (each checked against [`super::encode_key_name`]).
//!
//! Mapping keys with an address part are functions of the address.

use alloy_primitives::{Address, B256, b256};

/// `LSP3Profile` (LSP3): VerifiableURI of the profile JSON.
pub const LSP3_PROFILE: B256 = b256!("0x5ef83ad9559033e6e941db7d7c495acdce616347d28e90c7ce47cbfcfcad3bc5");
/// `SupportedStandards:LSP3Profile`, value `0x5ef83ad9`.
pub const SUPPORTED_STANDARDS_LSP3: B256 =
    b256!("0xeafec4d89fa9619884b600005ef83ad9559033e6e941db7d7c495acdce616347");
/// `LSP4Metadata` (LSP4): VerifiableURI of the asset JSON.
pub const LSP4_METADATA: B256 = b256!("0x9afb95cacc9f95858ec44aa8c3b685511002e30ae54415823f406128b85b238e");
/// `LSP4TokenName`: raw UTF-8.
pub const LSP4_TOKEN_NAME: B256 = b256!("0xdeba1e292f8ba88238e10ab3c7f88bd4be4fac56cad5194b6ecceaf653468af1");
/// `LSP4TokenSymbol`: raw UTF-8.
pub const LSP4_TOKEN_SYMBOL: B256 =
    b256!("0x2f0a68ab07768e01943a599e73362a0e17a63a72e94dd2e384d2c1d4db932756");
/// `LSP4TokenType`: uint256 (0 token, 1 NFT, 2 collection).
pub const LSP4_TOKEN_TYPE: B256 = b256!("0xe0261fa95db2eb3b5439bd033cda66d56b96f92f243a8228fd87550ed7bdfdb3");
/// `SupportedStandards:LSP4DigitalAsset`, value `0xa4d96624`.
pub const SUPPORTED_STANDARDS_LSP4: B256 =
    b256!("0xeafec4d89fa9619884b60000a4d96624a38f7ac2d8d9a604ecf07c12c77e480c");
/// `LSP4Creators[]` length key.
pub const LSP4_CREATORS_ARRAY: B256 =
    b256!("0x114bd03b3a46d48759680d81ebb2b414fda7d030a7105a851867accf1c2352e7");
/// `LSP5ReceivedAssets[]` length key.
pub const LSP5_RECEIVED_ASSETS_ARRAY: B256 =
    b256!("0x6460ee3c0aac563ccbf76d6e1d07bada78e3a9514e6382b736ed3f478ab7b90b");
/// `LSP12IssuedAssets[]` length key.
pub const LSP12_ISSUED_ASSETS_ARRAY: B256 =
    b256!("0x7c8c3416d6cda87cd42c71ea1843df28ac4850354f988d55ee2eaa47b6dc05cd");
/// `LSP8TokenIdFormat`: uint256.
pub const LSP8_TOKEN_ID_FORMAT: B256 =
    b256!("0xf675e9361af1c1664c1868cfa3eb97672d6b1a513aa5b81dec34c9ee330e818d");
/// `LSP8TokenMetadataBaseURI`: VerifiableURI (usually unverified) of the base URL.
pub const LSP8_TOKEN_METADATA_BASE_URI: B256 =
    b256!("0x1a7628600c3bac7101f53697f48df381ddc36b9015e7d7c9c5633d1252aa2843");
/// `LSP8ReferenceContract`: `address ‖ bytes32`.
pub const LSP8_REFERENCE_CONTRACT: B256 =
    b256!("0x708e7b881795f2e6b6c2752108c177ec89248458de3bf69d0d43480b3e5034e6");
/// `LSP1UniversalReceiverDelegate`: address of the default URD.
pub const LSP1_UNIVERSAL_RECEIVER_DELEGATE: B256 =
    b256!("0x0cfc51aec37c55a4d0b1a65c6255c4bf2fbdf6277f3cc0730c45b828b6db8b47");
/// `AddressPermissions[]` length key (LSP6).
pub const ADDRESS_PERMISSIONS_ARRAY: B256 =
    b256!("0xdf30dba06db6a30e65354d9a64c609861f089545ca58c6b4dbe31a5f338cb0e3");

/// Prefix of `AddressPermissions:Permissions:<address>`.
pub const ADDRESS_PERMISSIONS_PERMISSIONS_PREFIX: [u8; 12] =
    [0x4b, 0x80, 0x74, 0x2d, 0xe2, 0xbf, 0x82, 0xac, 0xb3, 0x63, 0, 0];
/// Prefix of `AddressPermissions:AllowedCalls:<address>`.
pub const ADDRESS_PERMISSIONS_ALLOWED_CALLS_PREFIX: [u8; 12] =
    [0x4b, 0x80, 0x74, 0x2d, 0xe2, 0xbf, 0x39, 0x3a, 0x64, 0xc7, 0, 0];
/// Prefix of `AddressPermissions:AllowedERC725YDataKeys:<address>`.
pub const ADDRESS_PERMISSIONS_ALLOWED_DATA_KEYS_PREFIX: [u8; 12] =
    [0x4b, 0x80, 0x74, 0x2d, 0xe2, 0xbf, 0x86, 0x6c, 0x29, 0x11, 0, 0];
/// Prefix of `LSP5ReceivedAssetsMap:<address>`.
pub const LSP5_RECEIVED_ASSETS_MAP_PREFIX: [u8; 12] =
    [0x81, 0x2c, 0x43, 0x34, 0x63, 0x3e, 0xb8, 0x16, 0xc8, 0x0d, 0, 0];
/// Prefix of `LSP12IssuedAssetsMap:<address>`.
pub const LSP12_ISSUED_ASSETS_MAP_PREFIX: [u8; 12] =
    [0x74, 0xac, 0x25, 0x55, 0xc1, 0x0b, 0x93, 0x49, 0xe7, 0x8f, 0, 0];
/// Prefix of `LSP4CreatorsMap:<address>`.
pub const LSP4_CREATORS_MAP_PREFIX: [u8; 12] =
    [0x6d, 0xe8, 0x5e, 0xaf, 0x5d, 0x98, 0x2b, 0x4e, 0x5d, 0xa0, 0, 0];

/// A 12-byte prefix followed by a 20-byte address.
#[must_use]
pub fn address_mapping(prefix: [u8; 12], address: Address) -> B256 {
    let mut key = [0u8; 32];
    key[..12].copy_from_slice(&prefix);
    key[12..].copy_from_slice(address.as_slice());
    B256::from(key)
}

/// The value of an array's map entry (`LSP5ReceivedAssetsMap:<address>`, `LSP12IssuedAssetsMap:<address>`,
/// `LSP4CreatorsMap:<address>`): `(bytes4 interfaceId, uint128 index)`, 20 bytes. `None` for any other length.
#[must_use]
pub fn decode_interface_index(value: &[u8]) -> Option<(alloy_primitives::FixedBytes<4>, u128)> {
    let (id, index) = value.split_first_chunk::<4>()?;
    let index: [u8; 16] = index.try_into().ok()?;
    Some((alloy_primitives::FixedBytes(*id), u128::from_be_bytes(index)))
}

/// `AddressPermissions:Permissions:<address>`.
#[must_use]
pub fn permissions_key(controller: Address) -> B256 {
    address_mapping(ADDRESS_PERMISSIONS_PERMISSIONS_PREFIX, controller)
}

/// `AddressPermissions:AllowedCalls:<address>`.
#[must_use]
pub fn allowed_calls_key(controller: Address) -> B256 {
    address_mapping(ADDRESS_PERMISSIONS_ALLOWED_CALLS_PREFIX, controller)
}

/// `AddressPermissions:AllowedERC725YDataKeys:<address>`.
#[must_use]
pub fn allowed_data_keys_key(controller: Address) -> B256 {
    address_mapping(ADDRESS_PERMISSIONS_ALLOWED_DATA_KEYS_PREFIX, controller)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp2::encode_key_name;

    #[test]
    fn map_values_are_an_interface_id_and_an_index() {
        let mut value = vec![0x5c, 0x3e, 0x84, 0xdb];
        value.extend_from_slice(&7u128.to_be_bytes());
        assert_eq!(
            decode_interface_index(&value),
            Some((alloy_primitives::FixedBytes([0x5c, 0x3e, 0x84, 0xdb]), 7))
        );
        assert_eq!(decode_interface_index(&value[..19]), None);
        value.push(0);
        assert_eq!(decode_interface_index(&value), None);
        assert_eq!(decode_interface_index(&[]), None);
    }

    #[test]
    fn constants_match_their_names() {
        let none: &[&str] = &[];
        for (name, key) in [
            ("LSP3Profile", LSP3_PROFILE),
            ("SupportedStandards:LSP3Profile", SUPPORTED_STANDARDS_LSP3),
            ("LSP4Metadata", LSP4_METADATA),
            ("LSP4TokenName", LSP4_TOKEN_NAME),
            ("LSP4TokenSymbol", LSP4_TOKEN_SYMBOL),
            ("LSP4TokenType", LSP4_TOKEN_TYPE),
            ("SupportedStandards:LSP4DigitalAsset", SUPPORTED_STANDARDS_LSP4),
            ("LSP4Creators[]", LSP4_CREATORS_ARRAY),
            ("LSP5ReceivedAssets[]", LSP5_RECEIVED_ASSETS_ARRAY),
            ("LSP12IssuedAssets[]", LSP12_ISSUED_ASSETS_ARRAY),
            ("LSP8TokenIdFormat", LSP8_TOKEN_ID_FORMAT),
            ("LSP8TokenMetadataBaseURI", LSP8_TOKEN_METADATA_BASE_URI),
            ("LSP8ReferenceContract", LSP8_REFERENCE_CONTRACT),
            ("LSP1UniversalReceiverDelegate", LSP1_UNIVERSAL_RECEIVER_DELEGATE),
            ("AddressPermissions[]", ADDRESS_PERMISSIONS_ARRAY),
        ] {
            assert_eq!(encode_key_name(name, none).unwrap(), key, "{name}");
        }
        let a = Address::repeat_byte(0xca);
        let hex = a.to_string();
        for (name, key) in [
            ("AddressPermissions:Permissions:<address>", permissions_key(a)),
            ("AddressPermissions:AllowedCalls:<address>", allowed_calls_key(a)),
            (
                "AddressPermissions:AllowedERC725YDataKeys:<address>",
                allowed_data_keys_key(a),
            ),
            (
                "LSP5ReceivedAssetsMap:<address>",
                address_mapping(LSP5_RECEIVED_ASSETS_MAP_PREFIX, a),
            ),
            (
                "LSP12IssuedAssetsMap:<address>",
                address_mapping(LSP12_ISSUED_ASSETS_MAP_PREFIX, a),
            ),
            (
                "LSP4CreatorsMap:<address>",
                address_mapping(LSP4_CREATORS_MAP_PREFIX, a),
            ),
        ] {
            assert_eq!(encode_key_name(name, &[hex.as_str()]).unwrap(), key, "{name}");
        }
    }
}
