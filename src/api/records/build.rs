//! Building records from what the indexer read: the chain stamp, the parsed LSP3 / LSP4 metadata and the
//! deployment's public URL (relative IPFS image URLs become absolute image-proxy URLs).

use alloy_primitives::{Address, B256};

use super::{
    AssetData, AssetRecord, MAX_DATA_URL, MetadataInfo, PROFILE_STANDARD, ProfileRecord, RecordHeader,
    RecordStamp, TokenRecord,
};
use crate::{
    api::calendar::iso8601, ipfs::CidPath, lsp3::Lsp3Profile, lsp4::Lsp4Metadata, lsp8::TokenIdFormat,
    metadata::Image,
};

/// When and where a record was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    /// The chain.
    pub chain_id: u64,
    /// The block the data was read at.
    pub block: u64,
    /// Now, unix seconds.
    pub now: u64,
}

impl From<Stamp> for RecordStamp {
    fn from(stamp: Stamp) -> Self {
        Self {
            indexed_block: stamp.block,
            updated_at_block: stamp.block,
            updated_at: stamp.now,
            last_updated_at: iso8601(stamp.now),
        }
    }
}

impl ProfileRecord {
    /// The record of a profile; `base` is the deployment's public URL (image URLs are made absolute with it).
    #[must_use]
    pub fn new(
        address: Address,
        stamp: Stamp,
        profile: Option<Lsp3Profile>,
        metadata: MetadataInfo,
        base: &str,
    ) -> Self {
        let id = address.to_checksum(None);
        let p = profile.as_ref();
        let name = p.and_then(|p| p.name.clone());
        let description = p.and_then(|p| p.description.clone());
        let tags = p.and_then(|p| p.tags.clone()).unwrap_or_default();
        let links = p.and_then(|p| p.links.clone()).unwrap_or_default();
        let profile_image_url = first_image_url(p.and_then(|p| p.profile_image.as_deref()), base);
        let background_image_url = first_image_url(p.and_then(|p| p.background_image.as_deref()), base);
        Self {
            header: RecordHeader {
                object_id: id.clone(),
                address: id,
                chain_id: stamp.chain_id,
                kind: "LSP0ERC725Account".to_owned(),
                lsp_standard: PROFILE_STANDARD.to_owned(),
                record_type: PROFILE_STANDARD.to_owned(),
            },
            has_profile_name: non_empty(name.as_deref()),
            has_profile_description: non_empty(description.as_deref()),
            has_profile_links: !links.is_empty(),
            has_profile_tags: !tags.is_empty(),
            has_profile_image: !profile_image_url.is_empty(),
            has_background_image: !background_image_url.is_empty(),
            name,
            description,
            tags,
            links,
            profile_image_url,
            background_image_url,
            lsp3_profile: profile,
            stamp: stamp.into(),
            metadata,
        }
    }
}

impl AssetRecord {
    /// The record of an LSP7 asset (`lsp8: false`) or LSP8 collection; `base` as in [`ProfileRecord::new`].
    #[must_use]
    pub fn new(
        address: Address,
        lsp8: bool,
        stamp: Stamp,
        data: AssetData,
        metadata: Option<Lsp4Metadata>,
        info: MetadataInfo,
        base: &str,
    ) -> Self {
        let id = address.to_checksum(None);
        let (standard, legacy) = if lsp8 {
            ("LSP8IdentifiableDigitalAsset", "LSP8DigitalAsset")
        } else {
            ("LSP7DigitalAsset", "LSP7DigitalAsset")
        };
        let m = metadata.as_ref();
        let icon_url = first_image_url(m.and_then(|m| m.icon.as_deref()), base);
        let image_url = first_image_url(
            m.and_then(|m| m.images.as_ref()?.first().map(Vec::as_slice)),
            base,
        );
        Self {
            header: RecordHeader {
                object_id: id.clone(),
                address: id,
                chain_id: stamp.chain_id,
                kind: standard.to_owned(),
                lsp_standard: standard.to_owned(),
                record_type: legacy.to_owned(),
            },
            name: data.name.clone().or_else(|| m.and_then(|m| m.name.clone())),
            symbol: data.symbol.clone(),
            has_token_name: non_empty(data.name.as_deref()),
            has_token_symbol: non_empty(data.symbol.as_deref()),
            has_token_type: data.token_type.is_some(),
            has_asset_image: !image_url.is_empty(),
            has_icon_image: !icon_url.is_empty(),
            lsp4_token_name: data.name,
            lsp4_token_symbol: data.symbol,
            lsp4_token_type: data.token_type,
            token_type: data.token_type,
            lsp4_creators: data.creators.iter().map(|a| a.to_checksum(None)).collect(),
            token_id_format: data.token_id_format,
            description: m.and_then(|m| m.description.clone()),
            links: m.and_then(|m| m.links.clone()).unwrap_or_default(),
            icon_url,
            image_url,
            lsp4_metadata: metadata,
            stamp: stamp.into(),
            metadata: info,
            tokens: None,
        }
    }
}

impl TokenRecord {
    /// The record of one LSP8 token; `base` as in [`ProfileRecord::new`].
    #[must_use]
    pub fn new(
        collection: Address,
        token_id: B256,
        format: TokenIdFormat,
        stamp: Stamp,
        metadata: Option<Lsp4Metadata>,
        info: MetadataInfo,
        base: &str,
    ) -> Self {
        let m = metadata.as_ref();
        let icon_url = first_image_url(m.and_then(|m| m.icon.as_deref()), base);
        let image_url = first_image_url(
            m.and_then(|m| m.images.as_ref()?.first().map(Vec::as_slice)),
            base,
        );
        Self {
            header: RecordHeader {
                object_id: format!("{}:{token_id}", collection.to_checksum(None)),
                address: collection.to_checksum(None),
                chain_id: stamp.chain_id,
                kind: "LSP8Token".to_owned(),
                lsp_standard: "LSP8IdentifiableDigitalAsset".to_owned(),
                record_type: "LSP8DigitalAsset".to_owned(),
            },
            token_id,
            token_id_format: format,
            token_id_text: crate::lsp8::decode_token_id(format, token_id).ok(),
            name: m.and_then(|m| m.name.clone()),
            description: m.and_then(|m| m.description.clone()),
            has_asset_image: !image_url.is_empty(),
            has_icon_image: !icon_url.is_empty(),
            icon_url,
            image_url,
            lsp4_metadata: metadata,
            stamp: stamp.into(),
            metadata: info,
        }
    }
}

fn non_empty(s: Option<&str>) -> bool {
    s.is_some_and(|s| !s.trim().is_empty())
}

/// The URL of the first file image of a list, made absolute by [`public_image_url`]; `""` when there is none.
#[must_use]
pub fn first_image_url(images: Option<&[Image]>, base: &str) -> String {
    images
        .unwrap_or_default()
        .iter()
        .filter_map(Image::url)
        .map(|u| public_image_url(u, base))
        .find(|u| !u.is_empty())
        .unwrap_or_default()
}

/// An image URL as a record shows it: `ipfs://<cid>[/path]` becomes `<base>/image/<cid>[/path]` (the image proxy
/// of the deployment at `base`, e.g. `https://api.example.org`); `https://` and `http://` URLs stay as they are;
/// `data:image/…` URLs up to [`MAX_DATA_URL`] bytes stay; anything else (a malformed CID, another scheme) gives
/// `""`.
#[must_use]
pub fn public_image_url(url: &str, base: &str) -> String {
    let url = url.trim();
    if url.starts_with("ipfs://") {
        return CidPath::parse(url).map_or_else(
            |_| String::new(),
            |p| format!("{}/image/{}", base.trim_end_matches('/'), p.to_gateway_path()),
        );
    }
    let lower = url.get(..11).unwrap_or(url).to_ascii_lowercase();
    let web = lower.starts_with("https://") || lower.starts_with("http://");
    let small_data = lower.starts_with("data:image/") && url.len() <= MAX_DATA_URL;
    if web || small_data {
        url.to_owned()
    } else {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::{
        api::records::NotIndexed,
        lsp3::Lsp3ProfileJson,
        lsp4::{Lsp4MetadataJson, TokenType},
    };

    const CID: &str = "bafkreibm6jg3ux5qumhcn2b3flc3tyu6dmlb4xa7u5bf44yegnrjhc4yeq";
    const DIR: &str = "bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi";
    const BASE: &str = "https://api.example.org/";

    fn addr() -> Address {
        "0x77ae93d6fabcc1369ee3fa3651e55a2f2e136bcc".parse().unwrap()
    }

    fn stamp() -> Stamp {
        Stamp {
            chain_id: 42,
            block: 7,
            now: 1_711_015_200,
        }
    }

    #[test]
    fn image_urls() {
        let cases = [
            (
                format!("ipfs://{CID}"),
                format!("https://api.example.org/image/{CID}"),
            ),
            (
                format!("ipfs://{DIR}/a/b%20c.png"),
                format!("https://api.example.org/image/{DIR}/a/b%20c.png"),
            ),
            ("https://x.org/a.png".to_owned(), "https://x.org/a.png".to_owned()),
            ("HTTP://x.org/a.png".to_owned(), "HTTP://x.org/a.png".to_owned()),
            (
                "data:image/png;base64,AAAA".to_owned(),
                "data:image/png;base64,AAAA".to_owned(),
            ),
            (
                format!("data:image/png;base64,{}", "A".repeat(MAX_DATA_URL)),
                String::new(),
            ),
            ("ipfs://not-a-cid".to_owned(), String::new()),
            ("ar://abc".to_owned(), String::new()),
            ("javascript:alert(1)".to_owned(), String::new()),
            (String::new(), String::new()),
        ];
        for (url, want) in cases {
            assert_eq!(public_image_url(&url, BASE), want, "{url}");
        }
        assert_eq!(
            public_image_url(&format!("ipfs://{CID}"), ""),
            format!("/image/{CID}")
        );
    }

    #[test]
    fn profile_record_fields() {
        let doc = json!({ "LSP3Profile": {
            "name": "Alice", "description": "", "tags": ["a"], "links": [{ "title": "x", "url": "https://x" }, { "url": 1 }],
            "profileImage": [{ "url": 7 }, { "width": 1, "height": 1, "url": format!("ipfs://{CID}") }],
        } });
        let parsed = Lsp3ProfileJson::from_value_lenient(doc).unwrap();
        let info = MetadataInfo {
            status: "verified".into(),
            dropped: parsed.dropped,
            ..MetadataInfo::default()
        };
        let r = ProfileRecord::new(addr(), stamp(), Some(parsed.value.profile), info, BASE);
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["LSPStandard"], "LSP3Profile");
        assert_eq!(v["type"], "LSP3Profile");
        assert_eq!(v["kind"], "LSP0ERC725Account");
        assert_eq!(v["objectID"], "0x77Ae93D6FAbcc1369Ee3fA3651e55A2f2E136bCC");
        assert_eq!(
            v["profileImageUrl"],
            format!("https://api.example.org/image/{CID}")
        );
        assert_eq!(v["backgroundImageUrl"], "");
        for (flag, want) in [
            ("hasProfileName", true),
            ("hasProfileDescription", false),
            ("hasProfileLinks", true),
            ("hasProfileTags", true),
            ("hasProfileImage", true),
            ("hasBackgroundImage", false),
        ] {
            assert_eq!(v[flag], want, "{flag}");
        }
        assert_eq!(v["updatedAtBlock"], 7);
        assert_eq!(v["lastUpdatedAt"], "2024-03-21T10:00:00.000Z");
        assert_eq!(v["metadataDropped"], json!(["links[1]", "profileImage[0]"]));
        assert_eq!(v["LSP3Profile"]["links"].as_array().unwrap().len(), 1);
        assert_eq!(serde_json::from_value::<ProfileRecord>(v).unwrap(), r);
        // without metadata: every flag false, every image ""
        let bare = serde_json::to_value(ProfileRecord::new(
            addr(),
            stamp(),
            None,
            MetadataInfo::default(),
            BASE,
        ))
        .unwrap();
        assert_eq!(bare["profileImageUrl"], "");
        assert_eq!(bare["hasProfileName"], false);
        assert_eq!(bare.get("LSP3Profile"), None);
    }

    #[test]
    fn asset_record_fields() {
        let doc = json!({ "LSP4Metadata": {
            "name": "From metadata", "icon": [{ "width": 1, "height": 1, "url": "https://x/icon.png" }],
            "images": [[{ "width": 1, "height": 1, "url": format!("ipfs://{CID}") }]],
        } });
        let m = Lsp4MetadataJson::from_value_lenient(doc).unwrap().value.metadata;
        let data = AssetData {
            name: Some("Coin".into()),
            symbol: None,
            token_type: Some(TokenType::Nft),
            token_id_format: None,
            creators: vec![addr()],
        };
        let v = serde_json::to_value(AssetRecord::new(
            addr(),
            true,
            stamp(),
            data,
            Some(m),
            MetadataInfo::default(),
            BASE,
        ))
        .unwrap();
        assert_eq!(v["LSPStandard"], "LSP8IdentifiableDigitalAsset");
        assert_eq!(v["type"], "LSP8DigitalAsset");
        assert_eq!(v["LSP4TokenType"], "NFT");
        assert_eq!(v["LSP4TokenName"], "Coin");
        assert_eq!(v["LSP4TokenSymbol"], Value::Null);
        assert_eq!(
            v["LSP4Creators"],
            json!(["0x77Ae93D6FAbcc1369Ee3fA3651e55A2f2E136bCC"])
        );
        assert_eq!(v["iconUrl"], "https://x/icon.png");
        assert_eq!(v["imageUrl"], format!("https://api.example.org/image/{CID}"));
        for (flag, want) in [
            ("hasTokenName", true),
            ("hasTokenSymbol", false),
            ("hasTokenType", true),
            ("hasAssetImage", true),
            ("hasIconImage", true),
        ] {
            assert_eq!(v[flag], want, "{flag}");
        }
        let lsp7 = serde_json::to_value(AssetRecord::new(
            addr(),
            false,
            stamp(),
            AssetData::default(),
            None,
            MetadataInfo::default(),
            BASE,
        ))
        .unwrap();
        assert_eq!(lsp7["type"], "LSP7DigitalAsset");
        assert_eq!(lsp7["LSP4TokenType"], Value::Null);
        assert_eq!(lsp7["hasTokenType"], false);
        assert_eq!(lsp7["imageUrl"], "");
    }

    #[test]
    fn not_indexed_answers() {
        let v = serde_json::to_value(NotIndexed::new(addr(), 42, false, 0)).unwrap();
        assert_eq!(v["LSPStandard"], "EOA");
        assert_eq!(v["type"], "EOA");
        assert_eq!(v["indexed"], false);
        let v = serde_json::to_value(NotIndexed::new(addr(), 42, true, 0)).unwrap();
        assert_eq!(v["LSPStandard"], "UnknownContract");
        assert!(v.get("unindexable").is_none());
        let refusal = super::super::Refusal {
            code: "CALL_REVERTED".into(),
            message: "supportsInterface reverted".into(),
        };
        let v = serde_json::to_value(NotIndexed::refused(addr(), 42, refusal.clone(), 0)).unwrap();
        assert_eq!(v["type"], "UnknownContract");
        assert_eq!(v["indexed"], false);
        assert_eq!(v["unindexable"]["code"], "CALL_REVERTED");
        assert_eq!(
            serde_json::from_value::<NotIndexed>(v).unwrap().unindexable,
            Some(refusal)
        );
    }

    /// Full samples of the three kinds (every optional field set), as their JSON is stored and answered.
    fn full_records() -> (ProfileRecord, AssetRecord, TokenRecord) {
        let info = || MetadataInfo {
            status: "verified".into(),
            url: Some(format!("ipfs://{CID}")),
            error: Some("HTTP_404".into()),
            dropped: vec!["links[1]".into()],
            raw: Some("{}".into()),
            truncated: true,
        };
        let image = json!([{ "width": 1, "height": 1, "url": "https://x.org/a.png" }]);
        let lsp3 = Lsp3ProfileJson::from_value_lenient(json!({ "LSP3Profile": {
            "name": "Alice", "description": "d", "tags": ["a"], "links": [{ "title": "x", "url": "https://x.org" }],
            "profileImage": image, "backgroundImage": image,
        } }))
        .unwrap()
        .value
        .profile;
        let lsp4 = || {
            Lsp4MetadataJson::from_value_lenient(json!({ "LSP4Metadata": {
                "name": "Coin", "description": "d", "links": [{ "title": "x", "url": "https://x.org" }],
                "icon": image, "images": [image],
            } }))
            .unwrap()
            .value
            .metadata
        };
        let data = AssetData {
            name: Some("Coin".into()),
            symbol: Some("C".into()),
            token_type: Some(TokenType::Nft),
            token_id_format: Some(TokenIdFormat::Number),
            creators: vec![addr()],
        };
        let mut asset = AssetRecord::new(addr(), true, stamp(), data, Some(lsp4()), info(), BASE);
        asset.tokens = Some(vec![crate::api::records::TokenSummary {
            token_id: B256::repeat_byte(1).to_string(),
            name: Some("Coin #1".into()),
            image_url: None,
        }]);
        let token = TokenRecord::new(
            addr(),
            B256::with_last_byte(5),
            TokenIdFormat::Number,
            stamp(),
            Some(lsp4()),
            info(),
            BASE,
        );
        let profile = ProfileRecord::new(addr(), stamp(), Some(lsp3), info(), BASE);
        (profile, asset, token)
    }

    #[test]
    fn record_json_is_byte_for_byte_the_wire_format() {
        let (profile, asset, token) = full_records();
        let texts = [
            serde_json::to_string(&profile).unwrap(),
            serde_json::to_string(&asset).unwrap(),
            serde_json::to_string(&token).unwrap(),
        ];
        // field order and names as stored in D1 and answered since the first release
        assert_eq!(texts, WIRE);
        // and each reads back as itself
        assert_eq!(serde_json::from_str::<ProfileRecord>(&texts[0]).unwrap(), profile);
        assert_eq!(serde_json::from_str::<AssetRecord>(&texts[1]).unwrap(), asset);
        assert_eq!(serde_json::from_str::<TokenRecord>(&texts[2]).unwrap(), token);
    }

    const WIRE: [&str; 3] = [
        r#"{"objectID":"0x77Ae93D6FAbcc1369Ee3fA3651e55A2f2E136bCC","address":"0x77Ae93D6FAbcc1369Ee3fA3651e55A2f2E136bCC","chainId":42,"kind":"LSP0ERC725Account","LSPStandard":"LSP3Profile","type":"LSP3Profile","name":"Alice","description":"d","tags":["a"],"links":[{"title":"x","url":"https://x.org"}],"profileImageUrl":"https://x.org/a.png","backgroundImageUrl":"https://x.org/a.png","hasProfileName":true,"hasProfileDescription":true,"hasProfileLinks":true,"hasProfileTags":true,"hasProfileImage":true,"hasBackgroundImage":true,"LSP3Profile":{"name":"Alice","description":"d","links":[{"title":"x","url":"https://x.org"}],"tags":["a"],"profileImage":[{"width":1,"height":1,"url":"https://x.org/a.png"}],"backgroundImage":[{"width":1,"height":1,"url":"https://x.org/a.png"}]},"indexedBlock":7,"updatedAtBlock":7,"updatedAt":1711015200,"lastUpdatedAt":"2024-03-21T10:00:00.000Z","metadataStatus":"verified","metadataUrl":"ipfs://bafkreibm6jg3ux5qumhcn2b3flc3tyu6dmlb4xa7u5bf44yegnrjhc4yeq","metadataError":"HTTP_404","metadataDropped":["links[1]"],"metadataRaw":"{}","metadataTruncated":true}"#,
        r#"{"objectID":"0x77Ae93D6FAbcc1369Ee3fA3651e55A2f2E136bCC","address":"0x77Ae93D6FAbcc1369Ee3fA3651e55A2f2E136bCC","chainId":42,"kind":"LSP8IdentifiableDigitalAsset","LSPStandard":"LSP8IdentifiableDigitalAsset","type":"LSP8DigitalAsset","name":"Coin","symbol":"C","LSP4TokenName":"Coin","LSP4TokenSymbol":"C","LSP4TokenType":"NFT","tokenType":"NFT","LSP4Creators":["0x77Ae93D6FAbcc1369Ee3fA3651e55A2f2E136bCC"],"tokenIdFormat":"NUMBER","description":"d","links":[{"title":"x","url":"https://x.org"}],"iconUrl":"https://x.org/a.png","imageUrl":"https://x.org/a.png","hasTokenName":true,"hasTokenSymbol":true,"hasTokenType":true,"hasAssetImage":true,"hasIconImage":true,"LSP4Metadata":{"name":"Coin","description":"d","links":[{"title":"x","url":"https://x.org"}],"icon":[{"width":1,"height":1,"url":"https://x.org/a.png"}],"images":[[{"width":1,"height":1,"url":"https://x.org/a.png"}]]},"indexedBlock":7,"updatedAtBlock":7,"updatedAt":1711015200,"lastUpdatedAt":"2024-03-21T10:00:00.000Z","metadataStatus":"verified","metadataUrl":"ipfs://bafkreibm6jg3ux5qumhcn2b3flc3tyu6dmlb4xa7u5bf44yegnrjhc4yeq","metadataError":"HTTP_404","metadataDropped":["links[1]"],"metadataRaw":"{}","metadataTruncated":true,"tokens":[{"tokenId":"0x0101010101010101010101010101010101010101010101010101010101010101","name":"Coin #1","imageUrl":null}]}"#,
        r#"{"objectID":"0x77Ae93D6FAbcc1369Ee3fA3651e55A2f2E136bCC:0x0000000000000000000000000000000000000000000000000000000000000005","address":"0x77Ae93D6FAbcc1369Ee3fA3651e55A2f2E136bCC","chainId":42,"kind":"LSP8Token","LSPStandard":"LSP8IdentifiableDigitalAsset","type":"LSP8DigitalAsset","tokenId":"0x0000000000000000000000000000000000000000000000000000000000000005","tokenIdFormat":"NUMBER","tokenIdText":"5","name":"Coin","description":"d","iconUrl":"https://x.org/a.png","imageUrl":"https://x.org/a.png","hasAssetImage":true,"hasIconImage":true,"LSP4Metadata":{"name":"Coin","description":"d","links":[{"title":"x","url":"https://x.org"}],"icon":[{"width":1,"height":1,"url":"https://x.org/a.png"}],"images":[[{"width":1,"height":1,"url":"https://x.org/a.png"}]]},"indexedBlock":7,"updatedAtBlock":7,"updatedAt":1711015200,"lastUpdatedAt":"2024-03-21T10:00:00.000Z","metadataStatus":"verified","metadataUrl":"ipfs://bafkreibm6jg3ux5qumhcn2b3flc3tyu6dmlb4xa7u5bf44yegnrjhc4yeq","metadataError":"HTTP_404","metadataDropped":["links[1]"],"metadataRaw":"{}","metadataTruncated":true}"#,
    ];
}
