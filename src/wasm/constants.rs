//! The LUKSO constants, from the core's own tables (nothing restated here): the standard data keys, the LSP6
//! permissions, the interface ids and the canonical LSP23 addresses.

use wasm_bindgen::prelude::*;

use super::io::{self, Obj, hex_js, with_interned};
use alloy_primitives::B256;

use crate::{erc165, lsp2::data_keys as dk, lsp6::Permissions, networks::Lsp23Constants};

/// A table of named constants and the TypeScript union of its names, from one list: the names a dApp can index
/// `luksoConstants()` with are the names it holds.
macro_rules! named {
    ($(#[$doc:meta])* $table:ident: $ty:ty, $ts:ident = $union:literal { $($name:literal => $value:expr,)* }) => {
        $(#[$doc])*
        const $table: &[(&str, $ty)] = &[$(($name, $value),)*];
        #[wasm_bindgen(typescript_custom_section)]
        const $ts: &'static str = concat!(
            "\n/** A name `luksoConstants()` has a value for. */\nexport type ", $union, " =",
            $("\n  | \"", $name, "\"",)*
            ";\n"
        );
    };
}

named! {
    /// The standard data keys by key name.
    DATA_KEYS: B256, TS_DATA_KEY_NAMES = "DataKeyName" {
        "LSP1UniversalReceiverDelegate" => dk::LSP1_UNIVERSAL_RECEIVER_DELEGATE,
        "SupportedStandards:LSP3Profile" => dk::SUPPORTED_STANDARDS_LSP3,
        "LSP3Profile" => dk::LSP3_PROFILE,
        "SupportedStandards:LSP4DigitalAsset" => dk::SUPPORTED_STANDARDS_LSP4,
        "LSP4Metadata" => dk::LSP4_METADATA,
        "LSP4TokenName" => dk::LSP4_TOKEN_NAME,
        "LSP4TokenSymbol" => dk::LSP4_TOKEN_SYMBOL,
        "LSP4TokenType" => dk::LSP4_TOKEN_TYPE,
        "LSP4Creators[]" => dk::LSP4_CREATORS_ARRAY,
        "LSP5ReceivedAssets[]" => dk::LSP5_RECEIVED_ASSETS_ARRAY,
        "AddressPermissions[]" => dk::ADDRESS_PERMISSIONS_ARRAY,
        "LSP8TokenIdFormat" => dk::LSP8_TOKEN_ID_FORMAT,
        "LSP8TokenMetadataBaseURI" => dk::LSP8_TOKEN_METADATA_BASE_URI,
        "LSP8ReferenceContract" => dk::LSP8_REFERENCE_CONTRACT,
        "LSP12IssuedAssets[]" => dk::LSP12_ISSUED_ASSETS_ARRAY,
    }
}

named! {
    /// The mappings' key prefixes by name: the key is the prefix, then the address
    /// (`AddressPermissions:Permissions:<address>`).
    DATA_KEY_PREFIXES: [u8; 12], TS_DATA_KEY_PREFIX_NAMES = "DataKeyPrefixName" {
        "AddressPermissions:Permissions" => dk::ADDRESS_PERMISSIONS_PERMISSIONS_PREFIX,
        "AddressPermissions:AllowedCalls" => dk::ADDRESS_PERMISSIONS_ALLOWED_CALLS_PREFIX,
        "AddressPermissions:AllowedERC725YDataKeys" => dk::ADDRESS_PERMISSIONS_ALLOWED_DATA_KEYS_PREFIX,
        "LSP4CreatorsMap" => dk::LSP4_CREATORS_MAP_PREFIX,
        "LSP5ReceivedAssetsMap" => dk::LSP5_RECEIVED_ASSETS_MAP_PREFIX,
        "LSP12IssuedAssetsMap" => dk::LSP12_ISSUED_ASSETS_MAP_PREFIX,
    }
}

named! {
    /// The interface ids of the current contracts by standard (LSP7 / LSP8: the newest of the ids they answer).
    INTERFACE_IDS: erc165::InterfaceId, TS_INTERFACE_NAMES = "InterfaceName" {
        "LSP0ERC725Account" => erc165::LSP0,
        "LSP6KeyManager" => erc165::LSP6,
        "LSP7DigitalAsset" => { let [newest, ..] = erc165::LSP7_IDS; newest },
        "LSP8IdentifiableDigitalAsset" => { let [newest, ..] = erc165::LSP8_IDS; newest },
        "LSP25ExecuteRelayCall" => erc165::LSP25,
    }
}

#[wasm_bindgen(typescript_custom_section)]
const TS_CONSTANTS: &'static str = r#"
/** The LUKSO constants (`luksoConstants()`). */
export interface LuksoConstants {
  /** The standard data keys by key name (`LSP3Profile`, `AddressPermissions[]`, …): their ERC725Y keys. */
  dataKeys: Record<DataKeyName, Hex>;
  /** The mappings' key prefixes by name (`AddressPermissions:Permissions`, …): the key is the prefix, then the address. */
  dataKeyPrefixes: Record<DataKeyPrefixName, Hex>;
  /** The LSP6 permissions (and `ALL_PERMISSIONS`) as bytes32 values, like `@lukso/lsp-smart-contracts` `PERMISSIONS`. */
  permissions: Record<PermissionName, Hex>;
  /** ERC165 interface ids of the current contracts (`LSP0ERC725Account`, `LSP6KeyManager`, …). */
  interfaceIds: Record<InterfaceName, Hex>;
  /** The canonical LSP23 deployment addresses (v0.14.0), as `CustomNetwork` takes them. */
  addresses: Required<CustomNetwork>;
}
"#;

fn put(o: &Obj, key: &'static str, value: &JsValue) {
    with_interned(key, |k| o.set(k, value));
}

/// `o[key] = 0x hex of bytes` (out of line: called for every constant, not unrolled into the caller).
#[inline(never)]
fn put_hex(o: &Obj, key: &'static str, bytes: &[u8]) {
    put(o, key, &hex_js(bytes).into());
}

/// The LUKSO constants: data keys (and the mappings' prefixes), permissions, interface ids and canonical addresses.
#[wasm_bindgen(js_name = luksoConstants, unchecked_return_type = "LuksoConstants")]
pub fn lukso_constants() -> JsValue {
    let data_keys = io::object();
    for (name, key) in DATA_KEYS {
        put_hex(&data_keys, name, key.as_slice());
    }
    let data_key_prefixes = io::object();
    for (name, prefix) in DATA_KEY_PREFIXES {
        put_hex(&data_key_prefixes, name, prefix);
    }
    let permissions = io::object();
    for (name, p) in crate::lsp6::NAMED
        .iter()
        .chain([("ALL_PERMISSIONS", Permissions::ALL_PERMISSIONS)].iter())
    {
        put_hex(&permissions, name, p.to_bytes32().as_slice());
    }
    let interface_ids = io::object();
    for (name, id) in INTERFACE_IDS {
        put_hex(&interface_ids, name, id.as_slice());
    }
    let c = Lsp23Constants::V0_14_0;
    let addresses = io::object();
    for (name, a) in [
        ("factory", c.factory),
        ("universalProfileInit", c.universal_profile_init),
        ("keyManagerInit", c.key_manager_init),
        ("postDeploymentModule", c.post_deployment_module),
        ("universalReceiverDelegate", c.universal_receiver_delegate),
    ] {
        put(&addresses, name, &JsValue::from_str(&a.to_checksum(None)));
    }
    let o = io::object();
    put(&o, "dataKeys", &data_keys.into());
    put(&o, "dataKeyPrefixes", &data_key_prefixes.into());
    put(&o, "permissions", &permissions.into());
    put(&o, "interfaceIds", &interface_ids.into());
    put(&o, "addresses", &addresses.into());
    o.into()
}
