//! Genuine Universal Profiles and KeyManagers, judged by their runtime code rather than by what they claim.
//!
//! A contract answering `supportsInterface` proves nothing: its code can answer `true` to anything and then run
//! whatever it likes. A relayer that pays for a profile's transactions therefore accepts a profile only when
//! - its runtime code is the 45-byte ERC-1167 minimal proxy (EIP-1167) to an implementation whose runtime code hash
//!   is a known `UniversalProfileInit`, or its own runtime code hash is a known full `UniversalProfile`, and
//! - its `owner()` is such a KeyManager (`LSP6KeyManagerInit` behind a proxy, or a full `LSP6KeyManager`) whose
//!   `target()` is the profile.
//!
//! A proxy is judged by its implementation's code hash, not its address, so the same release deployed elsewhere
//! still counts. This module is the pure part: the table of LUKSO's releases ([`RELEASES`]), the proxy's shape
//! ([`erc1167_implementation`]) and the verdict ([`Accepted::verdict`]); the Worker reads the code over RPC.
//!
//! Source of the table: `keccak256(deployedBytecode)` of `artifacts/<Contract>.json` in every
//! `@lukso/lsp-smart-contracts` release from 0.10.1 to 0.17.4 on npm (release candidates skipped) and in the split
//! `@lukso/universalprofile-contracts` / `@lukso/lsp6-contracts` 0.15.0 and 0.15.5. The artifacts have no
//! immutables and no linked libraries, so the code on chain equals `deployedBytecode` byte for byte: one hash per
//! artifact. LUKSO's deployed implementations (`deployments/contracts.json` of `lukso-network/lsp-smart-contracts`)
//! hold v0.14.0 (`UniversalProfileInit` `0x3024D38EA2434BA6635003Dc1BDC0daB5882ED4F`, `LSP6KeyManagerInit`
//! `0x2Fe3AeD98684E7351aD2D408A43cE09a738BF8a4`) and v0.12.1 (`0x52c90985AF970D4E0DC26Cb5D052505278aF32A9`,
//! `0xa75684d7D048704a2DB851D05Ba0c3cbe226264C`) code. docs/gasless.md lists the table ([`readme_table`]).

use alloy_primitives::{Address, B256, b256, hex, keccak256};
use alloy_sol_types::{SolCall, sol};

use crate::Result;

sol! {
    /// LSP6: the profile a KeyManager controls.
    function target() external view returns (address);
}

/// One release's four runtime code hashes (`keccak256` of the npm artifacts' `deployedBytecode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Release {
    /// The npm release(s) with these artifacts.
    pub name: &'static str,
    /// `UniversalProfileInit` (the implementation behind a profile's proxy).
    pub universal_profile_init: B256,
    /// `LSP6KeyManagerInit` (the implementation behind a KeyManager's proxy).
    pub key_manager_init: B256,
    /// `UniversalProfile` (deployed whole, e.g. by lsp-factory.js with `deployProxy: false`).
    pub universal_profile: B256,
    /// `LSP6KeyManager` (deployed whole).
    pub key_manager: B256,
}

macro_rules! releases {
    ($($name:literal => [$upi:literal, $kmi:literal, $up:literal, $km:literal $(,)?],)*) => {
        /// LUKSO's releases, oldest first (see the module documentation for the source).
        pub const RELEASES: &[Release] = &[$(Release {
            name: $name,
            universal_profile_init: b256!($upi),
            key_manager_init: b256!($kmi),
            universal_profile: b256!($up),
            key_manager: b256!($km),
        },)*];
    };
}

releases! {
    "0.10.1" => [
        "0x6db1f9fc2204b394b7cd242b7950290e97265ed6d0d0b08e9f9b5dd2a2e3970e",
        "0x654ded86198a9ead6d01bc1dd79faa79d50c9b11723792ba426996fe732eb826",
        "0x6f4603bd662d735297c4d982e1445ebe26f9210c8ccdd884318faa3d10c31cb0",
        "0xd60d017c82bc6421e6b49e685dbba07b4e17c3c2d3f6cce3f43d6567651518b1",
    ],
    "0.10.2, 0.10.3" => [
        "0xd02fada1d5c9bf40b31034ff17bde1d39c9695f32b22895c1f85be429bb68dec",
        "0x0d8d31709889effe2edb3d30c233926e2a4049f04e3c3556510cbeefbd070407",
        "0xea28479aad50f44ee17248c404000d42be3a7a43b90b94f58d8920eda7167b08",
        "0xf9ac7dc9ba9fc7e07f9583384ffda87e2a2d1a458438e7fc18c32b7ebaae9689",
    ],
    "0.11.1" => [
        "0xde99a6d89050ee8cdbe2405558656b9e7e7f7313b369db689d4a2033a23917e9",
        "0x5237dd7502531e8ae0c372336b0844ddf7179064b759a71c1092361236323fe9",
        "0xa77143b5b0a8a904b3afb9ba144d8859b7954752e0cfc4b2427386169075e9d4",
        "0x5a82348f979a6da41c095c8e1d86869d0bf484b7591396e43829ba3cc6411304",
    ],
    "0.12.0" => [
        "0xb81f6ef5537724c6fd760a7514c35892cb3ad955fe84e96b87e16e15c2faaf0b",
        "0x5aecb415ba3944e3bdfe4f056eb0864453b87d776da0fa8ba982030a30315bd5",
        "0xc646eea4f8d5fb572586df2a1225fe7566115c613d02f18dd00eb83a2ea2473b",
        "0x459b45ca3f89fd40755dfa24e8dd2931a83afae18f15512ff6b39444c98c60b1",
    ],
    "0.12.1" => [
        "0x2af8ec25ad65b8586b875c079d434e9384dc506c878bb322b928c36e8f3442e5",
        "0x6efe22543daba59d72ec70ba3a77047cd8928d8b241c1842ad948d75942ec2a4",
        "0x6053bb44ed6cb84b0d38576a89b10c1b1c719259b5cfaa1392556db8030e7ffe",
        "0x944e307de08911ddc2b99f5b171cce1b0a00b0e2ec4833ff12940602afe93703",
    ],
    "0.13.0" => [
        "0x943e395fa679c273ca73f45f21264a0ccaa4415c4498bdcdbe4dc8e92da6296c",
        "0xc047fe55756fc2cb66c20810a6794368be4c65a1ca2cfe61b497184d2c767355",
        "0x9617d5090ae8c30a258a94bbf2b7faaa85829b48d78add13619f1124f8bd0f30",
        "0xf845911255bb976f7a11065d0335f9ab877d5453fee667ad38de85ff5eec028b",
    ],
    "0.14.0" => [
        "0xe14c18798389154169ef40a02f3dd193f68d006f10dbd32009eae2ed0a2b245b",
        "0x2d80c18289db6a391ac30a06d60ea6ddc9ad712e3df4fc5c55bf77e58a3d6cb3",
        "0xb9fd5b8217cea6e61dcd054205c5a6080171f61dbeaf32f322048fe157bd0e1d",
        "0x27e54505125296b815b09b29409ddb4a8f98dc7a3c7d3e65efe7db2a7061ff17",
    ],
    "0.15.0" => [
        "0x431f43967aedd4cd081166eab41901aaf3399a6241075d18b0764d83f7775207",
        "0xf38d89f8dfa4afee2eff1a27ae7c40754f422bdd4812e8474ad660e2ef256852",
        "0x58f15c903c38a602468489a5d70fe7ae511662adbdc1c799a0e1883f61f65ff9",
        "0xa61314c01d9bf5d01b064436e8d1d56b8e8081fc96d2707071af9540575aa667",
    ],
    "0.16.2" => [
        "0x846865c49ca2f40b7eab3314d2a66245ce586851eb6dfabd90ec5b26a41139f3",
        "0x0e8e942c2d2c25a8324666645435f64181ffd172101753cb6fe9b85f83d060e5",
        "0xaf99c835e49eebba28dbcd8e3289e83986ad74952c24af3e30aaa21250a1c8b0",
        "0x0db2267db70a01c90c817aea776065423117b444d0cf3fbae4d101e7e31d5da7",
    ],
    "0.16.7" => [
        "0x701580e0f63fd58db00ab7c95552addc4bba97d00c69dbfa4747f92f288ee217",
        "0xbf2cc219591b832dd8b37755f1641705e4e45c86d4d0917715e8a8758d51b8b2",
        "0x1bb25d14480e85c379b12dacfc10317fc2ae521baf6f76d7d582eb0fc2d28688",
        "0xf2a3d2d5f651b989c14ccc13ca99740cad33d193a25305bedf273215840c39a4",
    ],
    "0.17.4" => [
        "0xee8d8a17184d4f7bb7cbec20b065146907b143333f20f999905d8077a5e00616",
        "0xe1ac8f5eb03567800e8ef90fcf768c6dda6142fbd6174ed5748f5992c4d03ec3",
        "0x8a0252d3804fd3f9a379e1966a9502518609de1fd0b429e6d9c7345a6b2e8dfa",
        "0x0d966d1e331fa9a8c0b358c073a71fe91c08670ee2305280474d835b790fa497",
    ],
    "split 0.15.0" => [
        "0xe0ab817e274dca73ce4ca5cf0e3934654e64b4f085ccee18d3511a29333a6957",
        "0xfc3f06484e66b9c3593ae0a266a9556b1aaf44a716d5b998a90720dff23dc832",
        "0x4909a02c827436cfd4c72a5990ef2ee9b7f58d0af856b10c353c22708e261145",
        "0xef6ecf61aea769ac6409c9c7180bfcaf6e19c66219706d13a4bcd39e6b438cd2",
    ],
    "split 0.15.5" => [
        "0x0a30193b5749e2a58b5c409fc0b40ab8a1e942c3eb980fc33f47f0c2bf32dc45",
        "0x11c77c789d2595bf8dc7e033357fe9a69fbb9cecc4561c8e914ecd66ed89c0d2",
        "0xcdab74067acc16964ab468e707441113a8cce765968bdce540519aa74c4b0e97",
        "0x1b81a273973bbcb1318754fbf1f57d4e647ef33b6d7b35f94815d3f252343756",
    ],
}

/// The ERC-1167 minimal proxy's runtime before the implementation address.
pub const ERC1167_PREFIX: [u8; 10] = hex!("363d3d373d3d3d363d73");
/// The ERC-1167 minimal proxy's runtime after the implementation address.
pub const ERC1167_SUFFIX: [u8; 15] = hex!("5af43d82803e903d91602b57fd5bf3");

/// The implementation an ERC-1167 minimal proxy delegates to: `Some` exactly when `code` is the 45-byte runtime
/// `363d3d373d3d3d363d73 ‖ implementation ‖ 5af43d82803e903d91602b57fd5bf3` (LSP23's and lsp-factory.js's clones).
#[must_use]
pub fn erc1167_implementation(code: &[u8]) -> Option<Address> {
    let (prefix, rest) = code.split_first_chunk::<10>()?;
    let (implementation, suffix) = rest.split_first_chunk::<20>()?;
    (prefix == &ERC1167_PREFIX && suffix == ERC1167_SUFFIX).then(|| Address::from(*implementation))
}

/// Which contract is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Contract {
    /// An LSP0 Universal Profile.
    UniversalProfile,
    /// An LSP6 KeyManager.
    KeyManager,
}

impl Contract {
    /// The release table's hashes of this contract: `(implementation behind a proxy, deployed whole)`.
    const fn hashes(self, release: &Release) -> (B256, B256) {
        match self {
            Self::UniversalProfile => (release.universal_profile_init, release.universal_profile),
            Self::KeyManager => (release.key_manager_init, release.key_manager),
        }
    }
}

/// Where an accepted code hash comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// A LUKSO release ([`Release::name`]).
    Release(&'static str),
    /// The operator's list (`UNIVERSAL_PROFILE_IMPLEMENTATIONS` / `KEY_MANAGER_IMPLEMENTATIONS`).
    Operator,
}

/// What a contract's runtime code is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Known code: an ERC-1167 proxy to a known implementation (`proxy: true`) or a known contract deployed whole.
    Genuine {
        /// Whose code it is.
        origin: Origin,
        /// Whether the contract is a proxy.
        proxy: bool,
    },
    /// No code at all (an account without code, or nothing deployed yet).
    NoCode,
    /// An ERC-1167 proxy: judge again with its implementation's runtime code hash.
    Proxy(Address),
    /// Code this relayer does not accept; `code_hash` is the hash judged (the implementation's for a proxy), which
    /// an operator who trusts the code can add to the list.
    Unknown {
        /// The judged runtime code hash.
        code_hash: B256,
        /// Whether the contract is a proxy.
        proxy: bool,
    },
}

impl Verdict {
    /// Whether the code is accepted.
    #[must_use]
    pub const fn is_genuine(&self) -> bool {
        matches!(self, Self::Genuine { .. })
    }
}

/// The code hashes a relayer accepts: LUKSO's ([`RELEASES`]) and the operator's own.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Accepted {
    /// More Universal Profile code hashes (`UNIVERSAL_PROFILE_IMPLEMENTATIONS`), accepted as a proxy's
    /// implementation and as a profile deployed whole.
    pub universal_profiles: Vec<B256>,
    /// More KeyManager code hashes (`KEY_MANAGER_IMPLEMENTATIONS`), likewise.
    pub key_managers: Vec<B256>,
}

impl Accepted {
    /// The operator's hashes of `contract`.
    fn extra(&self, contract: Contract) -> &[B256] {
        match contract {
            Contract::UniversalProfile => &self.universal_profiles,
            Contract::KeyManager => &self.key_managers,
        }
    }

    /// Whose code `code_hash` is, as `contract`'s implementation (`proxied`) or deployed whole.
    #[must_use]
    pub fn origin(&self, contract: Contract, code_hash: B256, proxied: bool) -> Option<Origin> {
        RELEASES
            .iter()
            .find(|release| {
                let (implementation, whole) = contract.hashes(release);
                code_hash == if proxied { implementation } else { whole }
            })
            .map(|release| Origin::Release(release.name))
            .or_else(|| {
                self.extra(contract)
                    .contains(&code_hash)
                    .then_some(Origin::Operator)
            })
    }

    /// The verdict on `code` as `contract`. For an ERC-1167 proxy, `implementation_code_hash` is
    /// `keccak256(code of the implementation)`; without it a proxy's verdict is [`Verdict::Proxy`] (read the
    /// implementation's code, then ask again). Any other code is judged by its own hash.
    #[must_use]
    pub fn verdict(
        &self,
        contract: Contract,
        code: &[u8],
        implementation_code_hash: Option<B256>,
    ) -> Verdict {
        if code.is_empty() {
            return Verdict::NoCode;
        }
        let (code_hash, proxy) = match erc1167_implementation(code) {
            Some(implementation) => match implementation_code_hash {
                Some(hash) => (hash, true),
                None => return Verdict::Proxy(implementation),
            },
            None => (keccak256(code), false),
        };
        match self.origin(contract, code_hash, proxy) {
            Some(origin) => Verdict::Genuine { origin, proxy },
            None => Verdict::Unknown { code_hash, proxy },
        }
    }
}

/// Parses an operator's list of runtime code hashes: 32-byte hex values separated by commas (blanks ignored).
///
/// # Errors
/// `INVALID_HEX` / `INVALID_LENGTH` naming `field` for a value that is not 32 bytes of 0x-hex.
pub fn parse_code_hashes(field: &str, text: &str) -> Result<Vec<B256>> {
    text.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| crate::hex::parse_fixed::<32>(field, s))
        .collect()
}

/// `target()` calldata (LSP6: the profile a KeyManager controls).
#[must_use]
pub fn target_calldata() -> Vec<u8> {
    targetCall {}.abi_encode()
}

/// Reads a `target()` answer (`None` when it is not one ABI-encoded address).
#[must_use]
pub fn decode_target(return_data: &[u8]) -> Option<Address> {
    targetCall::abi_decode_returns_validate(return_data).ok()
}

/// The table of accepted code hashes in docs/gasless.md (once the README's), as [`RELEASES`] makes it (a test keeps
/// docs/gasless.md in step).
#[must_use]
pub fn readme_table() -> String {
    let mut table = String::from(
        "| release | UniversalProfileInit | LSP6KeyManagerInit | UniversalProfile | LSP6KeyManager |\n|---|---|---|---|---|\n",
    );
    for r in RELEASES {
        table.push_str(&format!(
            "| {} | `{}` | `{}` | `{}` | `{}` |\n",
            r.name, r.universal_profile_init, r.key_manager_init, r.universal_profile, r.key_manager
        ));
    }
    table
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::Error;

    fn proxy_to(implementation: Address) -> Vec<u8> {
        [
            &ERC1167_PREFIX[..],
            implementation.as_slice(),
            &ERC1167_SUFFIX[..],
        ]
        .concat()
    }

    #[test]
    fn every_hash_is_unique_and_no_hash_is_a_proxy_or_empty_code() {
        let all: Vec<B256> = RELEASES
            .iter()
            .flat_map(|r| {
                [
                    r.universal_profile_init,
                    r.key_manager_init,
                    r.universal_profile,
                    r.key_manager,
                ]
            })
            .collect();
        assert_eq!(all.len(), 13 * 4);
        assert_eq!(
            all.iter().collect::<BTreeSet<_>>().len(),
            all.len(),
            "a hash is listed twice"
        );
        let empty = keccak256([]);
        assert!(!all.contains(&empty));
        // a proxy's own code is never mistaken for an implementation
        let proxy = keccak256(proxy_to(Address::repeat_byte(0x30)));
        assert!(!all.contains(&proxy));
        let names: BTreeSet<_> = RELEASES.iter().map(|r| r.name).collect();
        assert_eq!(names.len(), RELEASES.len());
        assert!(names.contains("0.12.1") && names.contains("0.14.0"));
    }

    #[test]
    fn release_vectors() {
        // the reference's table (keccak256 of the npm artifacts), spot-checked from its text form
        let hex = |r: &Release| {
            [
                r.universal_profile_init,
                r.key_manager_init,
                r.universal_profile,
                r.key_manager,
            ]
            .map(|h| h.to_string())
        };
        let v14 = RELEASES.iter().find(|r| r.name == "0.14.0").map(hex);
        assert_eq!(
            v14,
            Some([
                "0xe14c18798389154169ef40a02f3dd193f68d006f10dbd32009eae2ed0a2b245b".to_owned(),
                "0x2d80c18289db6a391ac30a06d60ea6ddc9ad712e3df4fc5c55bf77e58a3d6cb3".to_owned(),
                "0xb9fd5b8217cea6e61dcd054205c5a6080171f61dbeaf32f322048fe157bd0e1d".to_owned(),
                "0x27e54505125296b815b09b29409ddb4a8f98dc7a3c7d3e65efe7db2a7061ff17".to_owned(),
            ])
        );
        let v121 = RELEASES.iter().find(|r| r.name == "0.12.1").map(hex);
        assert_eq!(
            v121.map(|h| h[0].clone()),
            Some("0x2af8ec25ad65b8586b875c079d434e9384dc506c878bb322b928c36e8f3442e5".to_owned())
        );
    }

    #[test]
    fn the_proxy_shape() {
        let implementation = Address::from(hex!("3024D38EA2434BA6635003Dc1BDC0daB5882ED4F"));
        // the clone LSP23 deploys for the v0.14.0 UniversalProfileInit (as on chain)
        let code = hex!(
            "363d3d373d3d3d363d733024d38ea2434ba6635003dc1bdc0dab5882ed4f5af43d82803e903d91602b57fd5bf3"
        );
        assert_eq!(code.len(), 45);
        assert_eq!(erc1167_implementation(&code), Some(implementation));
        assert_eq!(proxy_to(implementation), code);
        // one byte more, one byte less, or the creation code: no proxy
        assert_eq!(erc1167_implementation(&[&code[..], &[0]].concat()), None);
        assert_eq!(erc1167_implementation(&code[..44]), None);
        assert_eq!(erc1167_implementation(&[]), None);
        let init = [&hex!("3d602d80600a3d3981f3")[..], &code[..]].concat();
        assert_eq!(erc1167_implementation(&init), None);
        // the PUSH0 variant (ERC-7511) and an EIP-7702 delegation are not this shape
        let eip7702 = [&hex!("ef0100")[..], implementation.as_slice()].concat();
        assert_eq!(erc1167_implementation(&eip7702), None);
    }

    #[test]
    fn verdicts() {
        let accepted = Accepted::default();
        let up = Contract::UniversalProfile;
        let km = Contract::KeyManager;
        let implementation = Address::repeat_byte(0x52);
        let proxy = proxy_to(implementation);
        assert_eq!(accepted.verdict(up, &[], None), Verdict::NoCode);
        assert_eq!(accepted.verdict(up, &proxy, None), Verdict::Proxy(implementation));
        let v121 = RELEASES.iter().find(|r| r.name == "0.12.1").copied();
        let Some(v121) = v121 else {
            panic!("0.12.1 is listed")
        };
        let genuine = |proxy| Verdict::Genuine {
            origin: Origin::Release("0.12.1"),
            proxy,
        };
        assert_eq!(
            accepted.verdict(up, &proxy, Some(v121.universal_profile_init)),
            genuine(true)
        );
        assert_eq!(
            accepted.verdict(km, &proxy, Some(v121.key_manager_init)),
            genuine(true)
        );
        // an implementation of the other kind, or the whole contract's hash behind a proxy: refused
        let refused = |hash| Verdict::Unknown {
            code_hash: hash,
            proxy: true,
        };
        assert_eq!(
            accepted.verdict(up, &proxy, Some(v121.key_manager_init)),
            refused(v121.key_manager_init)
        );
        assert_eq!(
            accepted.verdict(up, &proxy, Some(v121.universal_profile)),
            refused(v121.universal_profile)
        );
        // code deployed whole is judged by its own hash: any bytes but the artifacts' are unknown
        let code = b"\x60\x00\x60\x00\xf3";
        assert_eq!(
            accepted.verdict(up, code, None),
            Verdict::Unknown {
                code_hash: keccak256(code),
                proxy: false
            }
        );
        assert!(
            !accepted
                .verdict(up, code, Some(v121.universal_profile_init))
                .is_genuine()
        );
        // the operator's list extends both forms, per kind
        let extended = Accepted {
            universal_profiles: vec![keccak256(code)],
            key_managers: vec![],
        };
        let operator = Verdict::Genuine {
            origin: Origin::Operator,
            proxy: false,
        };
        assert_eq!(extended.verdict(up, code, None), operator);
        assert!(!extended.verdict(km, code, None).is_genuine());
        assert!(extended.verdict(up, &proxy, Some(keccak256(code))).is_genuine());
        assert_eq!(
            accepted.origin(up, v121.universal_profile, false),
            Some(Origin::Release("0.12.1"))
        );
    }

    #[test]
    fn operator_lists() {
        let a = "0x2af8ec25ad65b8586b875c079d434e9384dc506c878bb322b928c36e8f3442e5";
        let b = "0x6efe22543daba59d72ec70ba3a77047cd8928d8b241c1842ad948d75942ec2a4";
        assert_eq!(parse_code_hashes("X", ""), Ok(vec![]));
        assert_eq!(parse_code_hashes("X", " , "), Ok(vec![]));
        let parsed = parse_code_hashes("X", &format!(" {a}, {b} ,"));
        assert_eq!(parsed.map(|v| v.len()), Ok(2));
        assert!(matches!(
            parse_code_hashes("X", "0x1234"),
            Err(Error::InvalidLength { .. })
        ));
        assert!(matches!(
            parse_code_hashes("X", &a[2..]),
            Err(Error::InvalidHex { .. })
        ));
        assert!(parse_code_hashes("X", &format!("{a};{b}")).is_err());
    }

    #[test]
    fn target_call() {
        assert_eq!(hex::encode(target_calldata()), "d4b83992");
        let mut answer = [0u8; 32];
        answer[12..].copy_from_slice(&[0xab; 20]);
        assert_eq!(decode_target(&answer), Some(Address::repeat_byte(0xab)));
        answer[0] = 1;
        assert_eq!(decode_target(&answer), None);
        assert_eq!(decode_target(&[]), None);
    }

    #[test]
    fn docs_list_every_release() {
        let doc = include_str!("../docs/gasless.md");
        let table = readme_table();
        assert!(
            doc.contains(&table),
            "docs/gasless.md's table of accepted code is out of date; it must contain:\n{table}"
        );
    }

    #[cfg(not(target_arch = "wasm32"))]
    mod properties {
        use proptest::prelude::*;

        use super::*;

        proptest! {
            /// 45 bytes that do not start with the proxy's prefix are never a proxy, whatever follows.
            #[test]
            fn a_wrong_prefix_is_no_proxy(mut code in proptest::collection::vec(any::<u8>(), 45), at in 0usize..10, flip in 1u8..=255) {
                code[10..30].fill(0x30);
                code[30..].copy_from_slice(&ERC1167_SUFFIX);
                code[..10].copy_from_slice(&ERC1167_PREFIX);
                code[at] ^= flip;
                prop_assert_eq!(erc1167_implementation(&code), None);
                prop_assert!(!Accepted::default().verdict(Contract::UniversalProfile, &code, Some(RELEASES[0].universal_profile_init)).is_genuine());
            }

            /// Random 45-byte codes are proxies exactly when prefix and suffix match, and then name bytes 10..30.
            #[test]
            fn random_codes(code in proptest::collection::vec(any::<u8>(), 45)) {
                let expected = (code[..10] == ERC1167_PREFIX && code[30..] == ERC1167_SUFFIX)
                    .then(|| Address::from_slice(&code[10..30]));
                prop_assert_eq!(erc1167_implementation(&code), expected);
            }

            /// A wrong suffix is no proxy either.
            #[test]
            fn a_wrong_suffix_is_no_proxy(implementation in any::<[u8; 20]>(), at in 30usize..45, flip in 1u8..=255) {
                let mut code = proxy_to(Address::from(implementation));
                prop_assert!(erc1167_implementation(&code).is_some());
                code[at] ^= flip;
                prop_assert_eq!(erc1167_implementation(&code), None);
            }
        }
    }
}
