//! The crate's one error type. Every variant has a stable, machine-readable [`Error::code`] that is the same in
//! Rust, in the npm package (`error.code`) and in the Worker's JSON error bodies (`{"error":{"code":…}}`).

/// Result alias used across the crate.
pub type Result<T, E = Error> = core::result::Result<T, E>;

/// Everything that can go wrong while encoding, decoding or validating LUKSO data.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A hex string is malformed (missing `0x`, odd number of digits, non-hex characters).
    #[error("{field}: invalid hex: {reason}")]
    InvalidHex {
        /// Which input was malformed.
        field: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A fixed-size value has the wrong number of bytes.
    #[error("{field}: expected {expected} bytes, got {got}")]
    InvalidLength {
        /// Which input had the wrong size.
        field: String,
        /// The required size in bytes.
        expected: usize,
        /// The size that was given.
        got: usize,
    },
    /// An address is malformed or its mixed-case EIP-55 checksum is wrong.
    #[error("{field}: invalid address {value:?}: {reason}")]
    InvalidAddress {
        /// Which input was malformed.
        field: String,
        /// The value as given.
        value: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A VerifiableURI value is empty (`0x`).
    #[error("empty VerifiableURI value")]
    EmptyVerifiableUri,
    /// A VerifiableURI value ends before its fixed header / hash is complete.
    #[error("truncated VerifiableURI: {reason}")]
    TruncatedVerifiableUri {
        /// What is missing.
        reason: String,
    },
    /// The VerifiableURI length field does not match the bytes present or the method's data size.
    #[error("VerifiableURI verification data length mismatch: {reason}")]
    VerificationDataLength {
        /// What does not match.
        reason: String,
    },
    /// The URL part of a VerifiableURI is not valid UTF-8.
    #[error("VerifiableURI URL is not valid UTF-8 (at byte {valid_up_to} of the URL)")]
    InvalidUrlUtf8 {
        /// Number of valid bytes before the first invalid sequence.
        valid_up_to: usize,
    },
    /// The verification method cannot be checked (`0x00000000`, `ecdsa` or an unknown id).
    #[error("verification method {method} cannot be verified against content")]
    UnverifiableMethod {
        /// The 4-byte method id, hex.
        method: String,
    },
    /// Content given to an encoder is neither a string nor bytes.
    #[error("content must be a string or a Uint8Array")]
    InvalidContent,
    /// An LSP2 key name cannot be parsed.
    #[error("invalid key name {name:?}: {reason}")]
    InvalidKeyName {
        /// The key name as given.
        name: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The number of dynamic key parts does not match the key name.
    #[error("key name {name:?} has {expected} dynamic part(s), got {got}")]
    DynamicKeyPartCount {
        /// The key name.
        name: String,
        /// Number of `<type>` parts in the name.
        expected: usize,
        /// Number of values given.
        got: usize,
    },
    /// A dynamic key part value does not fit its `<type>`.
    #[error("dynamic key part {value:?} is not a valid {kind}: {reason}")]
    InvalidDynamicKeyPart {
        /// The `<type>` of the part.
        kind: String,
        /// The value as given.
        value: String,
        /// What is wrong with it.
        reason: String,
    },
    /// `encodeArrayElementKey` was called with a name that is not an Array key (`Name[]`).
    #[error("{name:?} is not an Array key name (it must end in \"[]\")")]
    NotAnArrayKey {
        /// The key name.
        name: String,
    },
    /// An array index is negative, fractional or larger than uint128.
    #[error("invalid array index {value}: {reason}")]
    InvalidArrayIndex {
        /// The index as given.
        value: String,
        /// What is wrong with it.
        reason: String,
    },
    /// Keys and values have different lengths.
    #[error("{keys} data key(s) but {values} value(s)")]
    KeysValuesMismatch {
        /// Number of keys.
        keys: usize,
        /// Number of values.
        values: usize,
    },
    /// Bytes are not a well-formed ABI encoding of the expected types.
    #[error("invalid ABI encoding of {expected}: {reason}")]
    InvalidAbi {
        /// The expected ABI types.
        expected: String,
        /// What is wrong.
        reason: String,
    },
    /// A network name or chain id is not known.
    #[error("unknown network {0:?} (expected \"mainnet\", \"testnet\", 42, 4201 or custom constants)")]
    UnknownNetwork(String),
    /// An LSP6 permission name is not known.
    #[error("unknown LSP6 permission {0:?}")]
    UnknownPermission(String),
    /// Controller list for a new profile is empty, has duplicates or contains a reserved address.
    #[error("invalid controllers: {0}")]
    InvalidControllers(String),
    /// A JSON body or object is malformed.
    #[error("invalid JSON: {0}")]
    InvalidJson(String),
    /// A request carries a field that does not exist.
    #[error("unknown field {0:?}")]
    UnknownField(String),
    /// A required field is missing.
    #[error("missing field {0:?}")]
    MissingField(String),
    /// A field has the wrong JSON type.
    #[error("field {field:?} must be {expected}")]
    InvalidFieldType {
        /// The field.
        field: String,
        /// The expected JSON type.
        expected: String,
    },
    /// A deploy request mixes Form 1 (controllers) and Form 2 (salt + calldata), or has neither.
    #[error("{0}")]
    InvalidDeployForm(String),
    /// LSP3/LSP4 metadata JSON does not match the schema.
    #[error("invalid metadata: {0}")]
    InvalidMetadata(String),
    /// An LSP8 token id cannot be encoded in the requested format.
    #[error("invalid token id {value:?} for format {format}: {reason}")]
    InvalidTokenId {
        /// The token id format.
        format: String,
        /// The value as given.
        value: String,
        /// What is wrong with it.
        reason: String,
    },
    /// An integer-coded enum value (LSP4TokenType, LSP8TokenIdFormat) is unknown.
    #[error("unknown {kind} value {value}")]
    UnknownEnumValue {
        /// The enum.
        kind: String,
        /// The value given.
        value: String,
    },
    /// A CID or IPFS path is malformed.
    #[error("invalid IPFS CID or path: {0}")]
    InvalidCid(String),
    /// An argument passed from JavaScript has the wrong shape or type.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// The operating system's random source failed.
    #[error("random number generator failed: {0}")]
    Random(String),
}

impl Error {
    /// The stable error code, `SCREAMING_SNAKE_CASE`. Codes never change meaning once released.
    #[must_use]
    pub const fn code(&self) -> &'static str {
        match self {
            Self::InvalidHex { .. } => "INVALID_HEX",
            Self::InvalidLength { .. } => "INVALID_LENGTH",
            Self::InvalidAddress { .. } => "INVALID_ADDRESS",
            Self::EmptyVerifiableUri => "EMPTY_VERIFIABLE_URI",
            Self::TruncatedVerifiableUri { .. } => "TRUNCATED_VERIFIABLE_URI",
            Self::VerificationDataLength { .. } => "VERIFICATION_DATA_LENGTH",
            Self::InvalidUrlUtf8 { .. } => "INVALID_URL_UTF8",
            Self::UnverifiableMethod { .. } => "UNVERIFIABLE_METHOD",
            Self::InvalidContent => "INVALID_CONTENT",
            Self::InvalidKeyName { .. } => "INVALID_KEY_NAME",
            Self::DynamicKeyPartCount { .. } => "DYNAMIC_KEY_PART_COUNT",
            Self::InvalidDynamicKeyPart { .. } => "INVALID_DYNAMIC_KEY_PART",
            Self::NotAnArrayKey { .. } => "NOT_AN_ARRAY_KEY",
            Self::InvalidArrayIndex { .. } => "INVALID_ARRAY_INDEX",
            Self::KeysValuesMismatch { .. } => "KEYS_VALUES_MISMATCH",
            Self::InvalidAbi { .. } => "INVALID_ABI",
            Self::UnknownNetwork(_) => "UNKNOWN_NETWORK",
            Self::UnknownPermission(_) => "UNKNOWN_PERMISSION",
            Self::InvalidControllers(_) => "INVALID_CONTROLLERS",
            Self::InvalidJson(_) => "INVALID_JSON",
            Self::UnknownField(_) => "UNKNOWN_FIELD",
            Self::MissingField(_) => "MISSING_FIELD",
            Self::InvalidFieldType { .. } => "INVALID_FIELD_TYPE",
            Self::InvalidDeployForm(_) => "INVALID_DEPLOY_FORM",
            Self::InvalidMetadata(_) => "INVALID_METADATA",
            Self::InvalidTokenId { .. } => "INVALID_TOKEN_ID",
            Self::UnknownEnumValue { .. } => "UNKNOWN_ENUM_VALUE",
            Self::InvalidCid(_) => "INVALID_CID",
            Self::InvalidArgument(_) => "INVALID_ARGUMENT",
            Self::Random(_) => "RANDOM_FAILURE",
        }
    }

    /// Every code [`Error::code`] can return, for documentation and the TypeScript declaration.
    pub const ALL_CODES: &'static [&'static str] = &[
        "INVALID_HEX",
        "INVALID_LENGTH",
        "INVALID_ADDRESS",
        "EMPTY_VERIFIABLE_URI",
        "TRUNCATED_VERIFIABLE_URI",
        "VERIFICATION_DATA_LENGTH",
        "INVALID_URL_UTF8",
        "UNVERIFIABLE_METHOD",
        "INVALID_CONTENT",
        "INVALID_KEY_NAME",
        "DYNAMIC_KEY_PART_COUNT",
        "INVALID_DYNAMIC_KEY_PART",
        "NOT_AN_ARRAY_KEY",
        "INVALID_ARRAY_INDEX",
        "KEYS_VALUES_MISMATCH",
        "INVALID_ABI",
        "UNKNOWN_NETWORK",
        "UNKNOWN_PERMISSION",
        "INVALID_CONTROLLERS",
        "INVALID_JSON",
        "UNKNOWN_FIELD",
        "MISSING_FIELD",
        "INVALID_FIELD_TYPE",
        "INVALID_DEPLOY_FORM",
        "INVALID_METADATA",
        "INVALID_TOKEN_ID",
        "UNKNOWN_ENUM_VALUE",
        "INVALID_CID",
        "INVALID_ARGUMENT",
        "RANDOM_FAILURE",
    ];

    /// The HTTP status a service should answer with for this error (every variant is a client error except a
    /// failing random source).
    #[must_use]
    pub const fn http_status(&self) -> u16 {
        match self {
            Self::Random(_) => 500,
            _ => 400,
        }
    }
}
