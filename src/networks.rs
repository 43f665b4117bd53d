//! Chain ids and the canonical LUKSO contract addresses (identical on mainnet and testnet: every contract was
//! deployed through Nick's CREATE2 factory).

use alloy_primitives::{Address, address};
use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// The LSP23 LinkedContractsFactory.
pub const LSP23_FACTORY: Address = address!("0x2300000A84D25dF63081feAa37ba6b62C4c89a30");
/// UniversalProfileInitPostDeploymentModule.
pub const POST_DEPLOYMENT_MODULE: Address = address!("0x000000000066093407b6704B89793beFfD0D8F00");

/// The contracts an LSP23 Universal Profile deployment uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Lsp23Constants {
    /// LSP23 LinkedContractsFactory.
    pub factory: Address,
    /// UniversalProfileInit implementation (primary contract).
    pub universal_profile_init: Address,
    /// LSP6KeyManagerInit implementation (secondary contract).
    pub key_manager_init: Address,
    /// UniversalProfileInitPostDeploymentModule.
    pub post_deployment_module: Address,
    /// LSP1UniversalReceiverDelegateUP given to relayer-created profiles.
    pub universal_receiver_delegate: Address,
}

impl Lsp23Constants {
    /// The v0.14.0 implementations used by LUKSO today (the docs' prediction formula).
    pub const V0_14_0: Self = Self {
        factory: LSP23_FACTORY,
        universal_profile_init: address!("0x3024D38EA2434BA6635003Dc1BDC0daB5882ED4F"),
        key_manager_init: address!("0x2Fe3AeD98684E7351aD2D408A43cE09a738BF8a4"),
        post_deployment_module: POST_DEPLOYMENT_MODULE,
        universal_receiver_delegate: address!("0x7870C5B8BC9572A8001C3f96f7ff59961B23500D"),
    };

    /// The legacy v0.12.1 implementations (seen in older relayer `create2-parameters`).
    pub const V0_12_1: Self = Self {
        factory: LSP23_FACTORY,
        universal_profile_init: address!("0x52c90985AF970D4E0DC26Cb5D052505278aF32A9"),
        key_manager_init: address!("0xa75684d7D048704a2DB851D05Ba0c3cbe226264C"),
        post_deployment_module: POST_DEPLOYMENT_MODULE,
        universal_receiver_delegate: address!("0xA5467dfe7019bF2C7C5F7A707711B9d4cAD118c8"),
    };
}

/// A LUKSO network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Network {
    /// LUKSO mainnet, chain id 42.
    Mainnet,
    /// LUKSO testnet, chain id 4201.
    Testnet,
}

impl Network {
    /// Both networks.
    pub const ALL: [Self; 2] = [Self::Mainnet, Self::Testnet];

    /// The EIP-155 chain id.
    #[must_use]
    pub const fn chain_id(self) -> u64 {
        match self {
            Self::Mainnet => 42,
            Self::Testnet => 4201,
        }
    }

    /// `"mainnet"` or `"testnet"`, as used in index names (`prod_mainnet_assets`, …).
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Mainnet => "mainnet",
            Self::Testnet => "testnet",
        }
    }

    /// The LSP23 constants with the v0.14.0 implementations.
    #[must_use]
    pub const fn constants(self) -> Lsp23Constants {
        Lsp23Constants::V0_14_0
    }

    /// Looks a network up by chain id.
    ///
    /// # Errors
    /// [`Error::UnknownNetwork`].
    pub fn from_chain_id(chain_id: u64) -> Result<Self> {
        Self::ALL
            .into_iter()
            .find(|n| n.chain_id() == chain_id)
            .ok_or_else(|| Error::UnknownNetwork(chain_id.to_string()))
    }

    /// Looks a network up by name (`mainnet`, `testnet`) or decimal chain id (`42`, `4201`).
    ///
    /// # Errors
    /// [`Error::UnknownNetwork`].
    pub fn parse(s: &str) -> Result<Self> {
        match s {
            "mainnet" | "42" => Ok(Self::Mainnet),
            "testnet" | "4201" => Ok(Self::Testnet),
            _ => Err(Error::UnknownNetwork(s.to_owned())),
        }
    }
}
