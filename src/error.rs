//! The crate's one error type. Every variant has a stable, machine-readable [`Error::code`] that is the same in
//! Rust, in the npm package (`error.code`) and in the Worker's JSON error bodies (`{"error":{"code":…}}`).

use core::fmt;

/// A text in double quotes, escaped like `{:?}` for ASCII (`\"`, `\\`, `\n`, control characters) but with every
/// other character as is: `{:?}` on strings pulls Unicode printability tables into the wasm build.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Quoted<'a>(pub(crate) &'a str);

impl fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("\"")?;
        for c in self.0.chars() {
            match c {
                '"' => f.write_str("\\\"")?,
                '\\' => f.write_str("\\\\")?,
                '\n' => f.write_str("\\n")?,
                '\r' => f.write_str("\\r")?,
                '\t' => f.write_str("\\t")?,
                '\0' => f.write_str("\\0")?,
                c if c.is_ascii_control() => write!(f, "\\u{{{:x}}}", u32::from(c))?,
                c => fmt::Write::write_char(f, c)?,
            }
        }
        f.write_str("\"")
    }
}

/// Result alias used across the crate.
pub type Result<T, E = Error> = core::result::Result<T, E>;

/// The text of an ABI decoding error, written here rather than by the error's `Display`: that one formats its
/// type names and logs with `{:?}` (Unicode escaping tables) and its hex errors' characters likewise: wasm the npm
/// package would carry for messages these decoders never produce (BENCHMARKS.md#wasm-size).
pub(crate) fn abi_reason(e: &alloy_sol_types::Error) -> String {
    use alloy_sol_types::Error as E;
    match e {
        E::Overrun => "ABI decoding failed: buffer overrun while deserializing".to_owned(),
        E::BufferNotEmpty => "ABI decoding failed: buffer not empty after deserialization".to_owned(),
        E::ReserMismatch => "ABI decoding failed: reserialization did not match original".to_owned(),
        E::RecursionLimitExceeded(limit) => {
            format!("ABI decoding failed: recursion limit of {limit} exceeded during decoding")
        }
        E::MemoryLimitExceeded(limit) => {
            format!("ABI decoding failed: memory limit of {limit} bytes exceeded during decoding")
        }
        E::TypeCheckFail { expected_type, data } if data.is_empty() => {
            format!("type check failed for {}", Quoted(expected_type))
        }
        E::TypeCheckFail { expected_type, data } => format!(
            "type check failed for {} with data: {data}",
            Quoted(expected_type)
        ),
        E::Other(text) => text.to_string(),
        _ => "ABI decoding failed".to_owned(),
    }
}

/// The text of a hex decoding error (see [`abi_reason`]: the error's `Display` formats the character with `{:?}`).
pub(crate) fn hex_reason(e: &alloy_primitives::hex::FromHexError) -> String {
    use alloy_primitives::hex::FromHexError as E;
    match e {
        E::InvalidHexCharacter { c, index } => {
            format!("invalid character '{}' at position {index}", c.escape_default())
        }
        E::OddLength => "odd number of digits".to_owned(),
        E::InvalidStringLength => "invalid string length".to_owned(),
    }
}

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
    #[error("{field}: invalid address {}: {reason}", Quoted(.value))]
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
    /// Content given to an encoder is not of a kind it takes.
    #[error("content must be {expected}")]
    InvalidContent {
        /// What the function takes (`a string or bytes (…)`).
        expected: &'static str,
    },
    /// An LSP2 key name cannot be parsed.
    #[error("invalid key name {}: {reason}", Quoted(.name))]
    InvalidKeyName {
        /// The key name as given.
        name: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The number of dynamic key parts does not match the key name.
    #[error("key name {} has {expected} dynamic part(s), got {got}", Quoted(.name))]
    DynamicKeyPartCount {
        /// The key name.
        name: String,
        /// Number of `<type>` parts in the name.
        expected: usize,
        /// Number of values given.
        got: usize,
    },
    /// A dynamic key part value does not fit its `<type>`.
    #[error("dynamic key part {} is not a valid {kind}: {reason}", Quoted(.value))]
    InvalidDynamicKeyPart {
        /// The `<type>` of the part.
        kind: String,
        /// The value as given.
        value: String,
        /// What is wrong with it.
        reason: String,
    },
    /// `encodeArrayElementKey` was called with a name that is not an Array key (`Name[]`).
    #[error("{} is not an Array key name (it must end in \"[]\")", Quoted(.name))]
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
    #[error("unknown network {} (expected \"mainnet\", \"testnet\", 42, 4201 or custom constants)", Quoted(.0))]
    UnknownNetwork(String),
    /// An LSP6 permission name is not known.
    #[error("unknown LSP6 permission {}", Quoted(.0))]
    UnknownPermission(String),
    /// Controller list for a new profile is empty, has duplicates or contains a reserved address.
    #[error("invalid controllers: {0}")]
    InvalidControllers(String),
    /// A JSON body or object is malformed.
    #[error("invalid JSON: {0}")]
    InvalidJson(String),
    /// A request carries a field that does not exist.
    #[error("unknown field {}", Quoted(.0))]
    UnknownField(String),
    /// A required field is missing.
    #[error("missing field {}", Quoted(.0))]
    MissingField(String),
    /// A field has the wrong JSON type.
    #[error("field {} must be {expected}", Quoted(.field))]
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
    #[error("invalid token id {} for format {format}: {reason}", Quoted(.value))]
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
    /// A secp256k1 signature is malformed: not 65 bytes, `v` not 0/1/27/28, a malleable high `s`, or not a point.
    #[error("{field}: invalid signature: {reason}")]
    InvalidSignature {
        /// Which input was malformed.
        field: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A number is not a valid unsigned integer of its type (JSON number, decimal string or `0x` hex).
    #[error("{field}: invalid number {}: {reason}", Quoted(.value))]
    InvalidNumber {
        /// Which input was malformed.
        field: String,
        /// The value as given (shortened).
        value: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A payload is larger than the service accepts.
    #[error("{field} is {got} bytes, more than the {max} accepted")]
    PayloadTooLarge {
        /// Which input is too large.
        field: String,
        /// The limit in bytes.
        max: usize,
        /// The size that was given.
        got: usize,
    },
    /// A signed timestamp (LSP15 quota request) is too far from the service's clock.
    #[error("timestamp {timestamp} is more than {window} s away from the current time {now}")]
    TimestampOutOfWindow {
        /// The signed timestamp.
        timestamp: u64,
        /// The service's time, unix seconds.
        now: u64,
        /// The accepted distance in seconds.
        window: u64,
    },
    /// An LSP25 relay call is signed to be valid only from a later time (`RelayCallBeforeStartTime`).
    #[error("the relay call is valid from {start}, it is now {now}")]
    RelayCallNotYetValid {
        /// The start of the validity window, unix seconds.
        start: u128,
        /// The current time, unix seconds.
        now: u64,
    },
    /// An LSP25 relay call's validity window has ended (`RelayCallExpired`).
    #[error("the relay call expired at {end}, it is now {now}")]
    RelayCallExpired {
        /// The end of the validity window, unix seconds.
        end: u128,
        /// The current time, unix seconds.
        now: u64,
    },
    /// The KeyManager rejects the relay call's nonce for the recovered signer (`InvalidRelayNonce`): the nonce is
    /// used or from another channel, or the signature was made for another KeyManager, chain id or payload, so it
    /// recovers to a different address.
    #[error("invalid relay nonce {nonce} for the recovered signer {signer}")]
    InvalidRelayNonce {
        /// The address the KeyManager recovered (EIP-55).
        signer: String,
        /// The nonce that was given.
        nonce: String,
    },
    /// The signer lacks a permission on the profile (`NotAuthorised`, `NoPermissionsSet`, `NotAllowedCall`, …).
    #[error("not authorised: {0}")]
    NotAuthorised(String),
    /// The relay call reverts for another reason (decoded custom error, `Error(string)` or panic).
    #[error("the relay call reverts: {0}")]
    RelayCallReverted(String),
    /// The profile's gas quota does not cover the transaction.
    #[error("quota exceeded: {required} gas needed, {remaining} left this month")]
    QuotaExceeded {
        /// Gas the transaction needs (estimate).
        required: u64,
        /// Gas left in the quota.
        remaining: u64,
    },
    /// The operating system's random source failed.
    #[error("random number generator failed: {0}")]
    Random(String),
}

/// Declares, from one table of `Variant = (HTTP status, "CODE")`, everything that lists the codes:
/// [`Error::code`], [`Error::http_status`], [`Error::ALL_CODES`] and the npm package's `ProfileRelayerErrorCode`
/// TypeScript union ([`ERROR_CODE_TS`]), so no list can drift from another.
macro_rules! error_codes {
    ($($variant:ident = ($status:literal, $code:literal),)*) => {
        impl Error {
            /// The stable error code, `SCREAMING_SNAKE_CASE`. Codes never change meaning once released.
            #[must_use]
            pub const fn code(&self) -> &'static str {
                match self {
                    $(Self::$variant { .. } => $code,)*
                }
            }

            /// Every code [`Error::code`] can return, in declaration order.
            pub const ALL_CODES: &'static [&'static str] = &[$($code,)*];

            /// The HTTP status a service should answer with for this error: 400 for bad input, 401 for a stale
            /// signed timestamp or a signature from which no signer can be recovered (it authenticates no one), 403
            /// for missing permissions, 413 for an oversized payload, 429 for an exhausted quota, 500 for a failing
            /// random source.
            #[must_use]
            pub const fn http_status(&self) -> u16 {
                match self {
                    $(Self::$variant { .. } => $status,)*
                }
            }
        }

        /// The TypeScript declaration of every code, as the npm package declares it.
        pub const ERROR_CODE_TS: &str = concat!(
            "/** Every `code` a ProfileRelayerError can carry. */\nexport type ProfileRelayerErrorCode =",
            $("\n  | \"", $code, "\"",)*
            ";\n"
        );
    };
}

error_codes! {
    InvalidHex = (400, "INVALID_HEX"),
    InvalidLength = (400, "INVALID_LENGTH"),
    InvalidAddress = (400, "INVALID_ADDRESS"),
    EmptyVerifiableUri = (400, "EMPTY_VERIFIABLE_URI"),
    TruncatedVerifiableUri = (400, "TRUNCATED_VERIFIABLE_URI"),
    VerificationDataLength = (400, "VERIFICATION_DATA_LENGTH"),
    InvalidUrlUtf8 = (400, "INVALID_URL_UTF8"),
    UnverifiableMethod = (400, "UNVERIFIABLE_METHOD"),
    InvalidContent = (400, "INVALID_CONTENT"),
    InvalidKeyName = (400, "INVALID_KEY_NAME"),
    DynamicKeyPartCount = (400, "DYNAMIC_KEY_PART_COUNT"),
    InvalidDynamicKeyPart = (400, "INVALID_DYNAMIC_KEY_PART"),
    NotAnArrayKey = (400, "NOT_AN_ARRAY_KEY"),
    InvalidArrayIndex = (400, "INVALID_ARRAY_INDEX"),
    KeysValuesMismatch = (400, "KEYS_VALUES_MISMATCH"),
    InvalidAbi = (400, "INVALID_ABI"),
    UnknownNetwork = (400, "UNKNOWN_NETWORK"),
    UnknownPermission = (400, "UNKNOWN_PERMISSION"),
    InvalidControllers = (400, "INVALID_CONTROLLERS"),
    InvalidJson = (400, "INVALID_JSON"),
    UnknownField = (400, "UNKNOWN_FIELD"),
    MissingField = (400, "MISSING_FIELD"),
    InvalidFieldType = (400, "INVALID_FIELD_TYPE"),
    InvalidDeployForm = (400, "INVALID_DEPLOY_FORM"),
    InvalidMetadata = (400, "INVALID_METADATA"),
    InvalidTokenId = (400, "INVALID_TOKEN_ID"),
    UnknownEnumValue = (400, "UNKNOWN_ENUM_VALUE"),
    InvalidCid = (400, "INVALID_CID"),
    InvalidArgument = (400, "INVALID_ARGUMENT"),
    InvalidSignature = (401, "INVALID_SIGNATURE"),
    InvalidNumber = (400, "INVALID_NUMBER"),
    PayloadTooLarge = (413, "PAYLOAD_TOO_LARGE"),
    TimestampOutOfWindow = (401, "TIMESTAMP_OUT_OF_WINDOW"),
    RelayCallNotYetValid = (400, "RELAY_CALL_NOT_YET_VALID"),
    RelayCallExpired = (400, "RELAY_CALL_EXPIRED"),
    InvalidRelayNonce = (400, "INVALID_RELAY_NONCE"),
    NotAuthorised = (403, "NOT_AUTHORISED"),
    RelayCallReverted = (400, "RELAY_CALL_REVERTED"),
    QuotaExceeded = (429, "QUOTA_EXCEEDED"),
    Random = (500, "RANDOM_FAILURE"),
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::Error;

    #[test]
    fn abi_and_hex_reasons_read_as_the_errors_own_texts() {
        use alloy_primitives::hex::FromHexError as H;
        use alloy_sol_types::Error as A;
        let abi = [
            A::Overrun,
            A::BufferNotEmpty,
            A::ReserMismatch,
            A::RecursionLimitExceeded(16),
            A::MemoryLimitExceeded(1024),
            A::type_check_fail(b"", "uint256"),
            A::type_check_fail(&[0xab], "bytes32[]"),
            A::custom("something else"),
        ];
        for e in &abi {
            assert_eq!(super::abi_reason(e), e.to_string());
        }
        for e in [
            H::InvalidHexCharacter { c: 'g', index: 3 },
            H::OddLength,
            H::InvalidStringLength,
        ] {
            assert_eq!(super::hex_reason(&e), e.to_string());
        }
        // where they differ: non-ASCII characters are written as is / escaped without Unicode tables
        assert_eq!(
            super::hex_reason(&H::InvalidHexCharacter { c: 'é', index: 0 }),
            "invalid character '\\u{e9}' at position 0"
        );
    }

    fn quoted(text: &str) -> BTreeSet<&str> {
        text.split('"').skip(1).step_by(2).collect()
    }

    /// The table's codes are unique `SCREAMING_SNAKE_CASE`, the TypeScript union lists exactly them, and every
    /// status is an error status.
    #[test]
    fn the_code_table_is_consistent() {
        let listed: BTreeSet<&str> = Error::ALL_CODES.iter().copied().collect();
        assert_eq!(listed.len(), Error::ALL_CODES.len(), "ALL_CODES has duplicates");
        assert!(listed.iter().all(|c| {
            c.bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
        }));
        assert_eq!(quoted(super::ERROR_CODE_TS), listed);
        assert!(super::ERROR_CODE_TS.starts_with("/** Every `code`"));
        // a sample of variants answers its own code and status
        let content = Error::InvalidContent { expected: "bytes" };
        assert_eq!(content.code(), "INVALID_CONTENT");
        assert_eq!(content.http_status(), 400);
        assert_eq!(Error::NotAuthorised("x".into()).http_status(), 403);
        assert_eq!(Error::Random("x".into()).code(), "RANDOM_FAILURE");
    }
}
