//! LSP23 LinkedContractsFactory: Universal Profile + KeyManager deployment data and address prediction.
//!
//! Spec: <https://github.com/lukso-network/LIPs/blob/main/LSPs/LSP-23-LinkedContractsFactory.md>
//!
//! ```text
//! generatedSalt = keccak256(abi.encode(salt, kmImpl, 0xc4d66de8, true, 0x, module, postDeploymentCallData))
//! UP = create2(factory, generatedSalt, keccak256(EIP-1167 init code of upImpl))
//! KM = create2(factory, keccak256(UP), keccak256(EIP-1167 init code of kmImpl))
//! ```

use alloy_primitives::{Address, B256, Bytes, U256, address, b256, keccak256};
use alloy_sol_types::{
    SolCall, SolValue, abi,
    abi::{
        AbiDecoderConfig,
        token::{DynSeqToken, PackedSeqToken, WordToken},
    },
    sol,
};

use crate::{
    Error, Result,
    lsp2::{array_element_key, data_keys, decode_verifiable_uri},
    lsp6::Permissions,
    networks::Lsp23Constants,
};

sol! {
    /// The primary (Universal Profile) proxy of `deployERC1167Proxies`.
    #[derive(Debug, PartialEq, Eq)]
    struct PrimaryContractDeploymentInit {
        bytes32 salt;
        uint256 fundingAmount;
        address implementationContract;
        bytes initializationCalldata;
    }

    /// The secondary (KeyManager) proxy of `deployERC1167Proxies`.
    #[derive(Debug, PartialEq, Eq)]
    struct SecondaryContractDeploymentInit {
        uint256 fundingAmount;
        address implementationContract;
        bytes initializationCalldata;
        bool addPrimaryContractAddress;
        bytes extraInitializationParams;
    }

    /// LSP23 factory entry point used for Universal Profiles.
    #[derive(Debug, PartialEq, Eq)]
    function deployERC1167Proxies(
        PrimaryContractDeploymentInit primaryContractDeploymentInit,
        SecondaryContractDeploymentInit secondaryContractDeploymentInit,
        address postDeploymentModule,
        bytes postDeploymentModuleCalldata
    ) external payable returns (address primaryContractAddress, address secondaryContractAddress);

    /// Emitted by the factory for every deployment (the profile is the first indexed topic).
    event DeployedERC1167Proxies(
        address indexed primaryContractAddress,
        address indexed secondaryContractAddress,
        PrimaryContractDeploymentInit primaryContractDeploymentInit,
        SecondaryContractDeploymentInit secondaryContractDeploymentInit,
        address postDeploymentModule,
        bytes postDeploymentModuleCalldata
    );

    /// The factory's own prediction (view).
    #[derive(Debug, PartialEq, Eq)]
    function computeERC1167Addresses(
        PrimaryContractDeploymentInit primaryContractDeploymentInit,
        SecondaryContractDeploymentInit secondaryContractDeploymentInit,
        address postDeploymentModule,
        bytes postDeploymentModuleCalldata
    ) external view returns (address primaryContractAddress, address secondaryContractAddress);

    /// `initialize(address)` of UniversalProfileInit and LSP6KeyManagerInit.
    #[derive(Debug, PartialEq, Eq)]
    function initialize(address initialOwner) external;
}

/// `topic0` of [`DeployedERC1167Proxies`]: an indexer finds new profiles by it.
pub const DEPLOYED_PROXIES_TOPIC: alloy_primitives::B256 =
    <DeployedERC1167Proxies as alloy_sol_types::SolEvent>::SIGNATURE_HASH;

/// `initialize(address)` selector, the KeyManager's `initializationCalldata` (the factory appends the UP address).
pub const INITIALIZE_SELECTOR: [u8; 4] = initializeCall::SELECTOR;

const EIP1167_PREFIX: [u8; 20] = [
    0x3d, 0x60, 0x2d, 0x80, 0x60, 0x0a, 0x3d, 0x39, 0x81, 0xf3, 0x36, 0x3d, 0x3d, 0x37, 0x3d, 0x3d, 0x3d,
    0x36, 0x3d, 0x73,
];
const EIP1167_SUFFIX: [u8; 15] = [
    0x5a, 0xf4, 0x3d, 0x82, 0x80, 0x3e, 0x90, 0x3d, 0x91, 0x60, 0x2b, 0x57, 0xfd, 0x5b, 0xf3,
];

/// The 55-byte ERC-1167 minimal-proxy init code for `implementation` (OpenZeppelin `Clones`).
#[must_use]
pub fn eip1167_init_code(implementation: Address) -> [u8; 55] {
    let mut code = [0u8; 55];
    code[..20].copy_from_slice(&EIP1167_PREFIX);
    code[20..40].copy_from_slice(implementation.as_slice());
    code[40..].copy_from_slice(&EIP1167_SUFFIX);
    code
}

/// keccak256 of the ERC-1167 init code of the v0.14.0 and v0.12.1 implementations, precomputed (checked against
/// [`eip1167_init_code`] by a test): a prediction for a LUKSO network hashes two blocks less.
const KNOWN_INIT_CODE_HASHES: [(Address, B256); 4] = [
    // V0_14_0 UniversalProfileInit
    (
        address!("0x3024D38EA2434BA6635003Dc1BDC0daB5882ED4F"),
        b256!("0x6e46a9df1f7706953cc73aa0aa5970ccb4cfe2dc6b9fc5606637a72eeecf33e7"),
    ),
    // V0_14_0 LSP6KeyManagerInit
    (
        address!("0x2Fe3AeD98684E7351aD2D408A43cE09a738BF8a4"),
        b256!("0xf5522337ff9e4d97b02ff4c951576c0f30c9c13d3c85e7700813060c83f3256c"),
    ),
    // V0_12_1 UniversalProfileInit
    (
        address!("0x52c90985AF970D4E0DC26Cb5D052505278aF32A9"),
        b256!("0x17cb75c777c6b925908eeae56098e090d400546a7da5e6c30ae14c423eb23230"),
    ),
    // V0_12_1 LSP6KeyManagerInit
    (
        address!("0xa75684d7D048704a2DB851D05Ba0c3cbe226264C"),
        b256!("0x3fffb07239e1aaea54e90ed8f4b6ee747af7cf6e687bbbf598f824bb682bee14"),
    ),
];

/// keccak256 of the ERC-1167 init code of `implementation`.
fn init_code_hash(implementation: Address) -> B256 {
    KNOWN_INIT_CODE_HASHES
        .iter()
        .find(|(a, _)| *a == implementation)
        .map_or_else(|| keccak256(eip1167_init_code(implementation)), |(_, h)| *h)
}

/// `a == b`, eight bytes at a time (`memcmp` of the wasm build compares byte by byte).
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len()
        && a.chunks(8)
            .zip(b.chunks(8))
            .all(|(x, y)| match (<[u8; 8]>::try_from(x), <[u8; 8]>::try_from(y)) {
                (Ok(x), Ok(y)) => u64::from_ne_bytes(x) == u64::from_ne_bytes(y),
                _ => x == y,
            })
}

/// Data keys and values to write into a new profile (the post-deployment module's input).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProfileData {
    /// ERC725Y data keys.
    pub keys: Vec<B256>,
    /// Values, one per key.
    pub values: Vec<Bytes>,
}

impl ProfileData {
    /// `abi.encode(bytes32[] keys, bytes[] values)`.
    ///
    /// # Errors
    /// [`Error::KeysValuesMismatch`].
    pub fn to_post_deployment_calldata(&self) -> Result<Vec<u8>> {
        encode_post_deployment_calldata(&self.keys, &self.values)
    }
}

/// Encodes `postDeploymentCallData` = `abi.encode(bytes32[] keys, bytes[] values)` as two top-level parameters
/// (not one tuple: the module would revert).
///
/// # Errors
/// [`Error::KeysValuesMismatch`] if the lengths differ.
pub fn encode_post_deployment_calldata(keys: &[B256], values: &[Bytes]) -> Result<Vec<u8>> {
    if keys.len() != values.len() {
        return Err(Error::KeysValuesMismatch {
            keys: keys.len(),
            values: values.len(),
        });
    }
    Ok((keys, values).abi_encode_params())
}

/// Decodes and validates `postDeploymentCallData`: canonical `abi.encode(bytes32[], bytes[])` with as many values
/// as keys.
///
/// # Errors
/// [`Error::InvalidAbi`] or [`Error::KeysValuesMismatch`].
pub fn decode_post_deployment_calldata(data: &[u8]) -> Result<ProfileData> {
    let (keys, values) = post_deployment_tokens(data)?;
    Ok(ProfileData {
        keys: keys.0.into_iter().map(|k| k.0).collect(),
        values: values
            .0
            .into_iter()
            .map(|v| Bytes::copy_from_slice(v.0))
            .collect(),
    })
}

/// Checks `postDeploymentCallData` as [`decode_post_deployment_calldata`] does, without copying the values out
/// (what the prediction and the factory calldata need).
///
/// # Errors
/// [`Error::InvalidAbi`] or [`Error::KeysValuesMismatch`].
pub fn check_post_deployment_calldata(data: &[u8]) -> Result<()> {
    post_deployment_tokens(data).map(drop)
}

/// The ABI tokens of `abi.encode(bytes32[], bytes[])`, borrowing the values from `data`.
type PostDeploymentTokens<'a> = (DynSeqToken<WordToken>, DynSeqToken<PackedSeqToken<'a>>);

fn post_deployment_tokens(data: &[u8]) -> Result<PostDeploymentTokens<'_>> {
    // only the canonical encoding is accepted (offsets, padding, no trailing bytes): one calldata, one address.
    // alloy's strict decoder accepts exactly that, without re-encoding to compare
    let strict = AbiDecoderConfig::new().strict(true);
    if let Ok(tokens) = abi::decode_params_with_config::<PostDeploymentTokens<'_>>(data, strict)
        && tokens.0.0.len() == tokens.1.0.len()
    {
        return Ok(tokens);
    }
    // refused: decode leniently and re-encode for the precise error
    let invalid = |reason: String| Error::InvalidAbi {
        expected: "abi.encode(bytes32[],bytes[])".to_owned(),
        reason,
    };
    // (the same decoder as above, lenient: one copy of it in the wasm)
    let tokens = abi::decode_params_with_config::<PostDeploymentTokens<'_>>(data, AbiDecoderConfig::new())
        .map_err(|e| invalid(crate::error::abi_reason(&e)))?;
    let (keys, values) = (tokens.0.0.len(), tokens.1.0.len());
    if keys != values {
        return Err(Error::KeysValuesMismatch { keys, values });
    }
    if !same_bytes(&abi::encode_params(&tokens), data) {
        return Err(invalid(
            "not the canonical encoding (offsets, zero padding or trailing bytes differ)".into(),
        ));
    }
    Ok(tokens)
}

/// The data the relayer writes into a profile created from controller addresses (deploy Form 1), in this order:
/// `LSP3Profile` (if given), `LSP1UniversalReceiverDelegate`, the URD's permissions (`0x…060080`), each
/// controller's permissions (`0x…7f3f06`), `AddressPermissions[]` = `[URD, controllers…]`.
///
/// # Errors
/// [`Error::InvalidControllers`] for an empty list, duplicates, the zero address or the URD itself; the
/// VerifiableURI decoding errors if `lsp3_profile` is not a VerifiableURI.
pub fn profile_data_from_controllers(
    controllers: &[Address],
    lsp3_profile: Option<&[u8]>,
    constants: &Lsp23Constants,
) -> Result<ProfileData> {
    if controllers.is_empty() {
        return Err(Error::InvalidControllers(
            "at least one controller address is required".into(),
        ));
    }
    if controllers.len() > 64 {
        return Err(Error::InvalidControllers(format!(
            "{} controllers, at most 64",
            controllers.len()
        )));
    }
    let urd = constants.universal_receiver_delegate;
    for (i, c) in controllers.iter().enumerate() {
        if c.is_zero() {
            return Err(Error::InvalidControllers(
                "the zero address cannot be a controller".into(),
            ));
        }
        if *c == urd {
            return Err(Error::InvalidControllers(
                "the universal receiver delegate cannot be a controller".into(),
            ));
        }
        if controllers.iter().take(i).any(|earlier| earlier == c) {
            // the checksum text, not `{c}`: `Address`'s `Display` slices its text for `{:#}`, which links the
            // standard library's string-slicing panic and its Unicode tables into the wasm (BENCHMARKS.md#bundle-size)
            let c = c.to_checksum(None);
            return Err(Error::InvalidControllers(format!("duplicate controller {c}")));
        }
    }
    let mut data = ProfileData::default();
    let mut push = |key: B256, value: Vec<u8>| {
        data.keys.push(key);
        data.values.push(value.into());
    };
    if let Some(value) = lsp3_profile {
        decode_verifiable_uri(value)?;
        push(data_keys::LSP3_PROFILE, value.to_vec());
    }
    push(data_keys::LSP1_UNIVERSAL_RECEIVER_DELEGATE, urd.to_vec());
    push(
        data_keys::permissions_key(urd),
        Permissions::UNIVERSAL_RECEIVER_DELEGATE.to_bytes32().to_vec(),
    );
    for c in controllers {
        push(
            data_keys::permissions_key(*c),
            Permissions::DEFAULT_CONTROLLER.to_bytes32().to_vec(),
        );
    }
    let len = controllers.len() as u128 + 1;
    push(data_keys::ADDRESS_PERMISSIONS_ARRAY, len.to_be_bytes().to_vec());
    push(
        array_element_key(data_keys::ADDRESS_PERMISSIONS_ARRAY, 0),
        urd.to_vec(),
    );
    for (i, c) in controllers.iter().enumerate() {
        push(
            array_element_key(data_keys::ADDRESS_PERMISSIONS_ARRAY, i as u128 + 1),
            c.to_vec(),
        );
    }
    Ok(data)
}

/// The predicted addresses of a Universal Profile deployment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Prediction {
    /// The Universal Profile (primary contract).
    pub universal_profile: Address,
    /// Its KeyManager (secondary contract).
    pub key_manager: Address,
    /// The salt the factory passes to CREATE2 for the profile.
    pub generated_salt: B256,
}

/// Predicts the Universal Profile and KeyManager addresses for `salt` and `postDeploymentCallData`, which is
/// validated first (a malformed calldata would make the deployment revert).
///
/// ```
/// use profile_relayer::{lsp23::{encode_post_deployment_calldata, predict_addresses}, networks::Lsp23Constants};
/// let calldata = encode_post_deployment_calldata(&[], &[])?;
/// let p = predict_addresses([0u8; 32].into(), &calldata, &Lsp23Constants::V0_14_0)?;
/// assert_eq!(p.universal_profile.to_checksum(None), "0xB87acAfB8E52B79010A844792843A9D0EB61345d");
/// assert_eq!(p.key_manager.to_checksum(None), "0x0Ff1cC6c7186333480ec8Ef69EAcA47DD3605806");
/// # Ok::<(), profile_relayer::Error>(())
/// ```
///
/// # Errors
/// The errors of [`check_post_deployment_calldata`].
pub fn predict_addresses(
    salt: B256,
    post_deployment_calldata: &[u8],
    constants: &Lsp23Constants,
) -> Result<Prediction> {
    check_post_deployment_calldata(post_deployment_calldata)?;
    Ok(predict_unchecked(salt, post_deployment_calldata, constants))
}

fn predict_unchecked(salt: B256, calldata: &[u8], c: &Lsp23Constants) -> Prediction {
    // encoded from tokens that borrow the calldata (no copy of it before the encoding)
    let preimage = abi::encode_params(&(
        WordToken(salt),
        WordToken(c.key_manager_init.into_word()),
        PackedSeqToken(&INITIALIZE_SELECTOR),
        WordToken::from(true),
        PackedSeqToken(&[]),
        WordToken(c.post_deployment_module.into_word()),
        PackedSeqToken(calldata),
    ));
    let generated_salt = keccak256(preimage);
    let universal_profile = c
        .factory
        .create2(generated_salt, init_code_hash(c.universal_profile_init));
    let key_manager = c
        .factory
        .create2(keccak256(universal_profile), init_code_hash(c.key_manager_init));
    Prediction {
        universal_profile,
        key_manager,
        generated_salt,
    }
}

fn deployment_structs(
    salt: B256,
    c: &Lsp23Constants,
) -> (PrimaryContractDeploymentInit, SecondaryContractDeploymentInit) {
    (
        PrimaryContractDeploymentInit {
            salt,
            fundingAmount: U256::ZERO,
            implementationContract: c.universal_profile_init,
            initializationCalldata: initializeCall {
                initialOwner: c.post_deployment_module,
            }
            .abi_encode()
            .into(),
        },
        SecondaryContractDeploymentInit {
            fundingAmount: U256::ZERO,
            implementationContract: c.key_manager_init,
            initializationCalldata: Bytes::from_static(&INITIALIZE_SELECTOR),
            addPrimaryContractAddress: true,
            extraInitializationParams: Bytes::new(),
        },
    )
}

/// The factory call a relayer sends: `deployERC1167Proxies(primary, secondary, module, postDeploymentCallData)`
/// with the standard Universal Profile parameters (no funding).
///
/// # Errors
/// The errors of [`check_post_deployment_calldata`].
pub fn deploy_erc1167_proxies_calldata(
    salt: B256,
    post_deployment_calldata: &[u8],
    constants: &Lsp23Constants,
) -> Result<Vec<u8>> {
    check_post_deployment_calldata(post_deployment_calldata)?;
    let (primary, secondary) = deployment_structs(salt, constants);
    Ok(deployERC1167ProxiesCall {
        primaryContractDeploymentInit: primary,
        secondaryContractDeploymentInit: secondary,
        postDeploymentModule: constants.post_deployment_module,
        postDeploymentModuleCalldata: Bytes::copy_from_slice(post_deployment_calldata),
    }
    .abi_encode())
}

/// The factory's view call `computeERC1167Addresses(…)` with the same arguments, for checking a prediction
/// on chain with `eth_call`.
///
/// # Errors
/// The errors of [`check_post_deployment_calldata`].
pub fn compute_erc1167_addresses_calldata(
    salt: B256,
    post_deployment_calldata: &[u8],
    constants: &Lsp23Constants,
) -> Result<Vec<u8>> {
    check_post_deployment_calldata(post_deployment_calldata)?;
    let (primary, secondary) = deployment_structs(salt, constants);
    Ok(computeERC1167AddressesCall {
        primaryContractDeploymentInit: primary,
        secondaryContractDeploymentInit: secondary,
        postDeploymentModule: constants.post_deployment_module,
        postDeploymentModuleCalldata: Bytes::copy_from_slice(post_deployment_calldata),
    }
    .abi_encode())
}

/// A random 32-byte salt from the operating system / `crypto.getRandomValues`.
///
/// # Errors
/// [`Error::Random`] if the random source fails.
pub fn generate_salt() -> Result<B256> {
    let mut salt = [0u8; 32];
    getrandom::fill(&mut salt).map_err(|e| Error::Random(e.to_string()))?;
    Ok(B256::from(salt))
}

#[cfg(all(test, not(target_arch = "wasm32")))]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use alloy_primitives::hex;
    use proptest::prelude::*;

    #[test]
    fn precomputed_init_code_hashes_match() {
        for (implementation, hash) in KNOWN_INIT_CODE_HASHES {
            assert_eq!(hash, keccak256(eip1167_init_code(implementation)));
        }
        for c in [Lsp23Constants::V0_14_0, Lsp23Constants::V0_12_1] {
            for a in [c.universal_profile_init, c.key_manager_init] {
                assert!(
                    KNOWN_INIT_CODE_HASHES.iter().any(|(i, _)| *i == a),
                    "{a} precomputed"
                );
            }
        }
        let other = address!("0x00000000000000000000000000000000000000aa");
        assert_eq!(init_code_hash(other), keccak256(eip1167_init_code(other)));
    }

    #[test]
    fn same_bytes_is_equality() {
        let a: Vec<u8> = (0..=40).collect();
        for len in 0..a.len() {
            let x = a.get(..len).unwrap();
            assert!(same_bytes(x, x));
            let mut y = x.to_vec();
            if let Some(last) = y.last_mut() {
                *last ^= 1;
                assert!(!same_bytes(x, &y), "{len}");
            }
            assert!(!same_bytes(x, a.get(..len + 1).unwrap()));
        }
    }

    sol! {
        function saltPreimage(bytes32 salt, address km, bytes kmInit, bool addPrimary, bytes extra, address module, bytes calldata_);
    }

    // slow, obvious reference: the preimage through a different alloy path (call encoding minus the selector),
    // init code hashed on every call, create2 from the full init code
    fn reference(salt: B256, calldata: &[u8], c: &Lsp23Constants) -> (Address, Address) {
        let call = saltPreimageCall {
            salt,
            km: c.key_manager_init,
            kmInit: Bytes::from(vec![0xc4, 0xd6, 0x6d, 0xe8]),
            addPrimary: true,
            extra: Bytes::new(),
            module: c.post_deployment_module,
            calldata_: Bytes::copy_from_slice(calldata),
        }
        .abi_encode();
        let gs = keccak256(call.get(4..).unwrap_or_default());
        let up = c
            .factory
            .create2_from_code(gs, eip1167_init_code(c.universal_profile_init));
        let km = c
            .factory
            .create2_from_code(keccak256(up.as_slice()), eip1167_init_code(c.key_manager_init));
        (up, km)
    }

    #[test]
    fn selectors_and_init_code_hashes() {
        assert_eq!(deployERC1167ProxiesCall::SELECTOR, [0x6a, 0x66, 0xa7, 0x53]);
        assert_eq!(computeERC1167AddressesCall::SELECTOR, [0x72, 0xb1, 0x9d, 0x36]);
        assert_eq!(INITIALIZE_SELECTOR, [0xc4, 0xd6, 0x6d, 0xe8]);
        let c = Lsp23Constants::V0_14_0;
        assert_eq!(
            keccak256(eip1167_init_code(c.universal_profile_init)).to_string(),
            "0x6e46a9df1f7706953cc73aa0aa5970ccb4cfe2dc6b9fc5606637a72eeecf33e7"
        );
        assert_eq!(
            keccak256(eip1167_init_code(c.key_manager_init)).to_string(),
            "0xf5522337ff9e4d97b02ff4c951576c0f30c9c13d3c85e7700813060c83f3256c"
        );
        let l = Lsp23Constants::V0_12_1;
        assert_eq!(
            keccak256(eip1167_init_code(l.universal_profile_init)).to_string(),
            "0x17cb75c777c6b925908eeae56098e090d400546a7da5e6c30ae14c423eb23230"
        );
        assert_eq!(
            keccak256(eip1167_init_code(l.key_manager_init)).to_string(),
            "0x3fffb07239e1aaea54e90ed8f4b6ee747af7cf6e687bbbf598f824bb682bee14"
        );
    }

    #[test]
    fn tuple_wrapped_calldata_is_rejected() {
        let good = encode_post_deployment_calldata(&[B256::ZERO], &[Bytes::from_static(b"x")]).unwrap();
        let mut wrapped = U256::from(0x20).to_be_bytes::<32>().to_vec();
        wrapped.extend_from_slice(&good);
        assert_eq!(
            decode_post_deployment_calldata(&wrapped).unwrap_err().code(),
            "INVALID_ABI"
        );
        assert_eq!(
            decode_post_deployment_calldata(&[]).unwrap_err().code(),
            "INVALID_ABI"
        );
        assert_eq!(
            encode_post_deployment_calldata(&[B256::ZERO], &[])
                .unwrap_err()
                .code(),
            "KEYS_VALUES_MISMATCH"
        );
    }

    #[test]
    fn form1_layout_matches_relayer_capture() {
        // TV2 of the deployment reference: LSP3Profile + URD + one controller
        let lsp3 = hex::decode("00006f357c6a00206d6d08aafb0ee059e3e4b6b3528a5be37308a5d4f4d19657d26dd8a5ae799de0697066733a2f2f516d50526f4a736159634e715169557251784537616a5452615877487941553239744871594e6374426d4b363477").unwrap();
        let controller = address!("0x3303Ce3b8644D566271DD2Eb54292d32F1458968");
        let data =
            profile_data_from_controllers(&[controller], Some(&lsp3), &Lsp23Constants::V0_14_0).unwrap();
        let calldata = data.to_post_deployment_calldata().unwrap();
        assert_eq!(
            keccak256(&calldata).to_string(),
            "0xed988eea232a0943d22fdfa7c2a69a3190817ba32ffe54d8905edfbd669bfdcb"
        );
        let p = predict_addresses(
            "0x5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed"
                .parse()
                .unwrap(),
            &calldata,
            &Lsp23Constants::V0_14_0,
        )
        .unwrap();
        assert_eq!(
            p.universal_profile,
            address!("0x77Ae93D6FAbcc1369Ee3fA3651e55A2f2E136bCC")
        );
        assert_eq!(
            p.key_manager,
            address!("0x986fd15bd551a4C269D15b7863E0646fB2cc1864")
        );
    }

    #[test]
    fn controllers_are_validated() {
        let c = Lsp23Constants::V0_14_0;
        let a = Address::repeat_byte(1);
        let code = |cs: &[Address]| profile_data_from_controllers(cs, None, &c).unwrap_err().code();
        assert_eq!(code(&[]), "INVALID_CONTROLLERS");
        assert_eq!(code(&[a, a]), "INVALID_CONTROLLERS");
        assert_eq!(code(&[Address::ZERO]), "INVALID_CONTROLLERS");
        assert_eq!(code(&[c.universal_receiver_delegate]), "INVALID_CONTROLLERS");
        let err = profile_data_from_controllers(&[a], Some(b"\x00\x00"), &c).unwrap_err();
        assert_eq!(err.code(), "TRUNCATED_VERIFIABLE_URI");
        let two = profile_data_from_controllers(&[a, Address::repeat_byte(2)], None, &c).unwrap();
        assert_eq!(two.keys.len(), 8);
        assert_eq!(two.values[4].as_ref(), &3u128.to_be_bytes());
    }

    #[test]
    fn salts_are_random() {
        assert_ne!(generate_salt().unwrap(), generate_salt().unwrap());
    }

    fn arb_constants() -> impl Strategy<Value = Lsp23Constants> {
        any::<[[u8; 20]; 5]>().prop_map(|a| Lsp23Constants {
            factory: Address::from(a[0]),
            universal_profile_init: Address::from(a[1]),
            key_manager_init: Address::from(a[2]),
            post_deployment_module: Address::from(a[3]),
            universal_receiver_delegate: Address::from(a[4]),
        })
    }

    proptest! {
        #[test]
        fn prediction_matches_slow_reference(
            salt in any::<[u8; 32]>(),
            keys in proptest::collection::vec(any::<[u8; 32]>(), 0..6),
            value_seed in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..70), 6),
            constants in prop_oneof![Just(Lsp23Constants::V0_14_0), Just(Lsp23Constants::V0_12_1), arb_constants()],
        ) {
            let keys: Vec<B256> = keys.into_iter().map(B256::from).collect();
            let values: Vec<Bytes> = value_seed.into_iter().take(keys.len()).map(Bytes::from).collect();
            let calldata = encode_post_deployment_calldata(&keys, &values).unwrap();
            let decoded = decode_post_deployment_calldata(&calldata).unwrap();
            prop_assert_eq!(&decoded.keys, &keys);
            prop_assert_eq!(&decoded.values, &values);
            let p = predict_addresses(B256::from(salt), &calldata, &constants).unwrap();
            let (up, km) = reference(B256::from(salt), &calldata, &constants);
            prop_assert_eq!(p.universal_profile, up);
            prop_assert_eq!(p.key_manager, km);
        }

        #[test]
        fn calldata_decoder_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
            let _ = decode_post_deployment_calldata(&bytes);
        }

        #[test]
        fn calldata_decoder_survives_mutations(
            keys in proptest::collection::vec(any::<[u8; 32]>(), 0..4),
            flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..4),
            resize in -40i32..40,
        ) {
            let keys: Vec<B256> = keys.into_iter().map(B256::from).collect();
            let values: Vec<Bytes> = keys.iter().map(|k| Bytes::copy_from_slice(&k[..7])).collect();
            let mut calldata = encode_post_deployment_calldata(&keys, &values).unwrap();
            for (i, b) in flips {
                let n = calldata.len();
                calldata[i % n] ^= b;
            }
            // truncated or with trailing bytes
            let len = calldata.len().saturating_add_signed(resize as isize);
            calldata.resize(len, 0);
            // alloy's strict decoder (the fast path) accepts exactly what decoding and re-encoding accepts
            let strict = abi::decode_params_with_config::<PostDeploymentTokens<'_>>(
                &calldata,
                AbiDecoderConfig::new().strict(true),
            )
            .is_ok_and(|t| t.0.0.len() == t.1.0.len());
            let canonical = abi::decode_params::<PostDeploymentTokens<'_>>(&calldata)
                .is_ok_and(|t| t.0.0.len() == t.1.0.len() && abi::encode_params(&t) == calldata);
            prop_assert_eq!(strict, canonical);
            let decoded = decode_post_deployment_calldata(&calldata);
            // the check without copies answers exactly what the decoder does
            prop_assert_eq!(
                check_post_deployment_calldata(&calldata).map_err(|e| e.to_string()),
                decoded.as_ref().map(drop).map_err(ToString::to_string)
            );
            if let Ok(d) = decoded {
                prop_assert_eq!(d.to_post_deployment_calldata().unwrap(), calldata);
            }
        }
    }
}
