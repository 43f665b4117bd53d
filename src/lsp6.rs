//! LSP6 KeyManager permissions: a bytes32 bit field per controller.
//!
//! Spec: <https://github.com/lukso-network/LIPs/blob/main/LSPs/LSP-6-KeyManager.md#permissions>
//! Bits as in `@lukso/lsp6-contracts` `LSP6Constants.sol`.

use alloy_primitives::{B256, U256};

use crate::{Error, Result};

/// A set of LSP6 permissions (the low bits of the bytes32 value).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Permissions(pub U256);

macro_rules! permissions {
    ($($(#[$doc:meta])* $name:ident = $bit:expr;)*) => {
        impl Permissions {
            $($(#[$doc])* pub const $name: Self = Self(U256::from_limbs([$bit, 0, 0, 0]));)*
        }
        /// Every single-bit permission with its LUKSO name, lowest bit first.
        pub const NAMED: &[(&str, Permissions)] = &[$((stringify!($name), Permissions::$name)),*];
        /// The TypeScript union of every permission name (and `ALL_PERMISSIONS`), as the npm package declares it.
        pub const PERMISSION_NAME_TS: &str = concat!(
            "/** The name of an LSP6 permission. */\nexport type PermissionName =",
            $("\n  | \"", stringify!($name), "\"",)*
            "\n  | \"ALL_PERMISSIONS\";\n"
        );
    };
}

permissions! {
    /// Change the owner of the profile.
    CHANGEOWNER = 0x1;
    /// Add new controllers.
    ADDCONTROLLER = 0x2;
    /// Edit permissions of controllers.
    EDITPERMISSIONS = 0x4;
    /// Add LSP17 extensions.
    ADDEXTENSIONS = 0x8;
    /// Change LSP17 extensions.
    CHANGEEXTENSIONS = 0x10;
    /// Add universal receiver delegates.
    ADDUNIVERSALRECEIVERDELEGATE = 0x20;
    /// Change universal receiver delegates.
    CHANGEUNIVERSALRECEIVERDELEGATE = 0x40;
    /// Re-enter the KeyManager.
    REENTRANCY = 0x80;
    /// Transfer value to any address.
    SUPER_TRANSFERVALUE = 0x100;
    /// Transfer value to allowed addresses.
    TRANSFERVALUE = 0x200;
    /// Call any contract.
    SUPER_CALL = 0x400;
    /// Call allowed contracts.
    CALL = 0x800;
    /// Static-call any contract.
    SUPER_STATICCALL = 0x1000;
    /// Static-call allowed contracts.
    STATICCALL = 0x2000;
    /// Delegate-call any contract.
    SUPER_DELEGATECALL = 0x4000;
    /// Delegate-call allowed contracts.
    DELEGATECALL = 0x8000;
    /// Deploy contracts.
    DEPLOY = 0x1_0000;
    /// Set any data key.
    SUPER_SETDATA = 0x2_0000;
    /// Set allowed data keys.
    SETDATA = 0x4_0000;
    /// Encrypt.
    ENCRYPT = 0x8_0000;
    /// Decrypt.
    DECRYPT = 0x10_0000;
    /// Sign on behalf of the profile (ERC1271).
    SIGN = 0x20_0000;
    /// Execute LSP25 relay calls.
    EXECUTE_RELAY_CALL = 0x40_0000;
}

impl Permissions {
    /// `ALL_PERMISSIONS` (`ALL_REGULAR_PERMISSIONS` in Solidity, `0x…7f3f7f`): every permission except
    /// REENTRANCY, SUPER_DELEGATECALL and DELEGATECALL.
    pub const ALL_PERMISSIONS: Self = Self(U256::from_limbs([0x7f_3f7f, 0, 0, 0]));
    /// What the LUKSO relayer gives each controller of a new profile (`0x…7f3f06`).
    pub const DEFAULT_CONTROLLER: Self = Self(U256::from_limbs([0x7f_3f06, 0, 0, 0]));
    /// What the LUKSO relayer gives the universal receiver delegate (`0x…060080`:
    /// SETDATA, SUPER_SETDATA, REENTRANCY).
    pub const UNIVERSAL_RECEIVER_DELEGATE: Self = Self(U256::from_limbs([0x06_0080, 0, 0, 0]));

    /// The union of `parts`.
    #[must_use]
    pub fn combine(parts: &[Self]) -> Self {
        Self(parts.iter().fold(U256::ZERO, |acc, p| acc | p.0))
    }

    /// Whether every bit of `other` is set in `self`.
    #[must_use]
    pub fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }

    /// The names of the known permissions set in `self`, lowest bit first.
    #[must_use]
    pub fn names(self) -> Vec<&'static str> {
        NAMED
            .iter()
            .filter(|(_, p)| self.contains(*p))
            .map(|(n, _)| *n)
            .collect()
    }

    /// Bits that are set but correspond to no known permission.
    #[must_use]
    pub fn unknown_bits(self) -> U256 {
        self.0 & !Self::combine(&NAMED.iter().map(|(_, p)| *p).collect::<Vec<_>>()).0
    }

    /// Looks up one permission by its LUKSO name (`"SETDATA"`, `"ALL_PERMISSIONS"`, …).
    ///
    /// # Errors
    /// [`Error::UnknownPermission`].
    pub fn from_name(name: &str) -> Result<Self> {
        if name == "ALL_PERMISSIONS" {
            return Ok(Self::ALL_PERMISSIONS);
        }
        NAMED
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, p)| *p)
            .ok_or_else(|| Error::UnknownPermission(name.into()))
    }

    /// The union of the named permissions.
    ///
    /// # Errors
    /// [`Error::UnknownPermission`] for a name that is not an LSP6 permission.
    pub fn from_names<S: AsRef<str>>(names: &[S]) -> Result<Self> {
        names
            .iter()
            .map(|n| Self::from_name(n.as_ref()))
            .try_fold(Self::default(), |acc, p| p.map(|p| Self::combine(&[acc, p])))
    }

    /// The bytes32 ERC725Y value.
    #[must_use]
    pub fn to_bytes32(self) -> B256 {
        B256::from(self.0)
    }

    /// Reads a bytes32 ERC725Y value.
    #[must_use]
    pub fn from_bytes32(value: B256) -> Self {
        Self(value.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_values() {
        let all = Permissions::ALL_PERMISSIONS;
        assert_eq!(
            all.to_bytes32().to_string(),
            "0x00000000000000000000000000000000000000000000000000000000007f3f7f"
        );
        for excluded in [
            Permissions::REENTRANCY,
            Permissions::SUPER_DELEGATECALL,
            Permissions::DELEGATECALL,
        ] {
            assert!(!all.contains(excluded));
        }
        assert_eq!(all.names().len(), NAMED.len() - 3);
        let names = [
            "ADDCONTROLLER",
            "EDITPERMISSIONS",
            "SUPER_TRANSFERVALUE",
            "SUPER_CALL",
            "SUPER_STATICCALL",
            "DEPLOY",
            "SUPER_SETDATA",
            "ENCRYPT",
            "DECRYPT",
            "SIGN",
            "CALL",
            "STATICCALL",
            "SETDATA",
            "TRANSFERVALUE",
            "EXECUTE_RELAY_CALL",
        ];
        assert_eq!(
            Permissions::from_names(&names).unwrap(),
            Permissions::DEFAULT_CONTROLLER
        );
        let urd = Permissions::from_names(&["SETDATA", "SUPER_SETDATA", "REENTRANCY"]).unwrap();
        assert_eq!(urd, Permissions::UNIVERSAL_RECEIVER_DELEGATE);
        let x = Permissions::combine(&[
            Permissions::CALL,
            Permissions::SETDATA,
            Permissions::SIGN,
            Permissions::EXECUTE_RELAY_CALL,
        ]);
        assert_eq!(x.0, U256::from(0x64_0800));
        assert_eq!(x.names(), vec!["CALL", "SETDATA", "SIGN", "EXECUTE_RELAY_CALL"]);
        assert_eq!(
            Permissions::from_name("ERC4337_PERMISSION").unwrap_err().code(),
            "UNKNOWN_PERMISSION"
        );
        let odd = Permissions(U256::from(0x80_0001));
        assert_eq!(odd.unknown_bits(), U256::from(0x80_0000));
        assert_eq!(Permissions::from_bytes32(x.to_bytes32()), x);
    }
}
