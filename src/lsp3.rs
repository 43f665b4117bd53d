//! LSP3 Profile Metadata JSON.
//!
//! Spec: <https://github.com/lukso-network/LIPs/blob/main/LSPs/LSP-3-Profile-Metadata.md>

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use crate::metadata::{Asset, Image, Lenient, Link, Verification};
use crate::{
    Error, Result,
    json_shape::{Shape, field, optional},
    metadata::{Dropper, shapes},
};

/// The document behind the `LSP3Profile` VerifiableURI: `{"LSP3Profile": {…}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Lsp3ProfileJson {
    /// The profile.
    #[serde(rename = "LSP3Profile")]
    pub profile: Lsp3Profile,
    /// Unknown top-level fields, preserved.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The profile fields. All optional in practice; lists keep the difference between absent and empty.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Lsp3Profile {
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Links.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub links: Option<Vec<Link>>,
    /// Tags.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
    /// Avatars (3D files or NFTs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub avatar: Option<Vec<Asset>>,
    /// The profile image in several sizes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile_image: Option<Vec<Image>>,
    /// The background image in several sizes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub background_image: Option<Vec<Image>>,
    /// Unknown fields, preserved.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Lsp3ProfileJson {
    /// The JSON shape [`Lsp3ProfileJson::from_slice`] accepts (tested against it): how the wasm clients check a
    /// profile document before uploading it, without serde.
    pub const SHAPE: Shape = Shape::Struct(&[&[field(
        "LSP3Profile",
        Shape::Struct(&[&[
            optional("name", Shape::Nullable(&Shape::Str)),
            optional("description", Shape::Nullable(&Shape::Str)),
            optional("links", Shape::Nullable(&Shape::Array(&shapes::LINK))),
            optional("tags", Shape::Nullable(&Shape::Array(&Shape::Str))),
            optional("avatar", Shape::Nullable(&Shape::Array(&shapes::ASSET))),
            optional("profileImage", Shape::Nullable(&Shape::Array(&shapes::IMAGE))),
            optional("backgroundImage", Shape::Nullable(&Shape::Array(&shapes::IMAGE))),
        ]]),
    )]]);

    /// Parses an LSP3 profile document.
    ///
    /// # Errors
    /// [`Error::InvalidMetadata`].
    pub fn from_slice(bytes: &[u8]) -> Result<Self> {
        serde_json::from_slice(bytes).map_err(|e| Error::InvalidMetadata(format!("LSP3Profile: {e}")))
    }

    /// Parses an LSP3 profile document tolerantly: a field or list entry that does not parse (a link without a
    /// url, an image whose url is a number, a tag that is not a string) is dropped and named in
    /// [`Lenient::dropped`]; everything else is kept.
    ///
    /// # Errors
    /// [`Error::InvalidMetadata`] when the bytes are not JSON or hold no `LSP3Profile` object.
    pub fn from_slice_lenient(bytes: &[u8]) -> Result<Lenient<Self>> {
        let value: Value =
            serde_json::from_slice(bytes).map_err(|e| Error::InvalidMetadata(format!("LSP3Profile: {e}")))?;
        Self::from_value_lenient(value)
    }

    /// [`Lsp3ProfileJson::from_slice_lenient`] on an already parsed document.
    ///
    /// # Errors
    /// [`Error::InvalidMetadata`] when the document holds no `LSP3Profile` object.
    pub fn from_value_lenient(value: Value) -> Result<Lenient<Self>> {
        let Value::Object(mut extra) = value else {
            return Err(Error::InvalidMetadata(
                "LSP3Profile: the document is not a JSON object".into(),
            ));
        };
        let Some(Value::Object(mut obj)) = extra.remove("LSP3Profile") else {
            return Err(Error::InvalidMetadata(
                "LSP3Profile: no \"LSP3Profile\" object".into(),
            ));
        };
        let mut d = Dropper::default();
        let profile = Lsp3Profile {
            name: d.field(&mut obj, "name"),
            description: d.field(&mut obj, "description"),
            links: d.list(&mut obj, "links"),
            tags: d.list(&mut obj, "tags"),
            avatar: d.list(&mut obj, "avatar"),
            profile_image: d.list(&mut obj, "profileImage"),
            background_image: d.list(&mut obj, "backgroundImage"),
            extra: obj,
        };
        Ok(d.finish(Self { profile, extra }))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn lenient(doc: &Value) -> Lenient<Lsp3ProfileJson> {
        Lsp3ProfileJson::from_slice_lenient(doc.to_string().as_bytes()).unwrap()
    }

    #[test]
    fn one_bad_entry_keeps_the_rest() {
        let good_image = json!({ "width": 64, "height": 64, "url": "ipfs://bafkreia", "verification": { "method": "keccak256(bytes)", "data": "0x01" } });
        // (document, kept links, kept tags, kept images, dropped paths)
        let cases: Vec<(Value, usize, usize, usize, Vec<&str>)> = vec![
            (
                json!({ "name": "A", "links": [{ "title": "x", "url": "https://x" }, { "title": "no url" }], "tags": ["a"] }),
                1,
                1,
                0,
                vec!["links[1]"],
            ),
            (
                json!({ "name": "A", "tags": ["a", 5, null, "b"] }),
                0,
                2,
                0,
                vec!["tags[1]", "tags[2]"],
            ),
            (
                json!({ "profileImage": [{ "url": 5 }, good_image, "nope"] }),
                0,
                0,
                1,
                vec!["profileImage[0]", "profileImage[2]"],
            ),
            (
                json!({ "links": "not a list", "tags": [] }),
                0,
                0,
                0,
                vec!["links"],
            ),
            (
                json!({ "name": 42, "description": "kept" }),
                0,
                0,
                0,
                vec!["name"],
            ),
            (json!({ "name": null, "links": null }), 0, 0, 0, vec![]),
        ];
        for (profile, links, tags, images, dropped) in cases {
            let doc = json!({ "LSP3Profile": profile });
            let parsed = lenient(&doc);
            let p = &parsed.value.profile;
            assert_eq!(p.links.as_ref().map_or(0, Vec::len), links, "{doc}");
            assert_eq!(p.tags.as_ref().map_or(0, Vec::len), tags, "{doc}");
            assert_eq!(p.profile_image.as_ref().map_or(0, Vec::len), images, "{doc}");
            assert_eq!(parsed.dropped, dropped, "{doc}");
        }
        // a description next to a bad name survives; unknown fields stay
        let parsed =
            lenient(&json!({ "LSP3Profile": { "name": 1, "description": "d", "x": [1] }, "top": true }));
        assert_eq!(parsed.value.profile.description.as_deref(), Some("d"));
        assert_eq!(parsed.value.profile.extra.get("x"), Some(&json!([1])));
        assert_eq!(parsed.value.extra.get("top"), Some(&json!(true)));
    }

    #[test]
    fn a_clean_document_parses_as_strictly() {
        let doc = json!({ "LSP3Profile": { "name": "n", "description": "d", "links": [{ "title": "t", "url": "u" }], "tags": ["t"],
            "profileImage": [{ "width": 1, "height": 1, "url": "ipfs://x" }], "backgroundImage": [], "avatar": [] } });
        let bytes = doc.to_string();
        let parsed = Lsp3ProfileJson::from_slice_lenient(bytes.as_bytes()).unwrap();
        assert!(parsed.dropped.is_empty());
        assert_eq!(
            parsed.value,
            Lsp3ProfileJson::from_slice(bytes.as_bytes()).unwrap()
        );
    }

    #[test]
    fn documents_without_a_profile_are_errors() {
        for doc in [
            "",
            "[]",
            "{}",
            r#"{"LSP3Profile": []}"#,
            r#"{"LSP3Profile": "x"}"#,
            "null",
        ] {
            assert_eq!(
                Lsp3ProfileJson::from_slice_lenient(doc.as_bytes())
                    .unwrap_err()
                    .code(),
                "INVALID_METADATA",
                "{doc}"
            );
        }
    }

    #[cfg(not(target_arch = "wasm32"))]
    mod properties {
        use proptest::prelude::*;
        use serde_json::json;

        use super::super::*;

        fn link(good: bool, i: usize) -> Value {
            if good {
                json!({ "title": format!("t{i}"), "url": "https://x" })
            } else {
                json!({ "title": i })
            }
        }

        /// Any small JSON value (the wrong type, mostly).
        fn junk() -> impl Strategy<Value = Value> {
            prop_oneof![
                Just(Value::Null),
                any::<bool>().prop_map(Value::Bool),
                (-3i64..3).prop_map(Value::from),
                Just(json!(1.5)),
                "[a-z]{0,2}".prop_map(Value::String),
                Just(json!([])),
                Just(json!({})),
            ]
        }

        /// `good` mostly, `junk()` sometimes, absent (`None`) sometimes.
        fn maybe(good: impl Strategy<Value = Value> + 'static) -> BoxedStrategy<Option<Value>> {
            prop_oneof![3 => good.prop_map(Some), 1 => junk().prop_map(Some), 1 => Just(None)].boxed()
        }

        fn object(fields: Vec<(&'static str, BoxedStrategy<Option<Value>>)>) -> BoxedStrategy<Value> {
            let (names, values): (Vec<_>, Vec<_>) = fields.into_iter().unzip();
            values
                .prop_map(move |vs| {
                    Value::Object(
                        names
                            .iter()
                            .zip(vs)
                            .filter_map(|(n, v)| Some(((*n).to_owned(), v?)))
                            .collect(),
                    )
                })
                .boxed()
        }

        fn text() -> BoxedStrategy<Value> {
            "[a-z]{0,2}".prop_map(Value::String).boxed()
        }

        /// Documents near LSP3's shape: each field right, of a wrong type, `null` or absent.
        fn lsp3_like() -> impl Strategy<Value = Value> {
            let verification = object(vec![
                ("method", maybe(text())),
                ("data", maybe(text())),
                ("source", maybe(prop_oneof![text(), Just(Value::Null)])),
            ]);
            let nft = object(vec![
                ("address", maybe(text())),
                ("tokenId", maybe(prop_oneof![text(), Just(Value::Null)])),
            ]);
            let image = prop_oneof![
                object(vec![
                    ("url", maybe(text())),
                    ("width", maybe((0u64..5).prop_map(Value::from))),
                    ("height", maybe(Just(Value::Null))),
                    ("verification", maybe(verification.clone())),
                ]),
                nft.clone(),
            ];
            let asset = prop_oneof![
                object(vec![
                    ("url", maybe(text())),
                    ("fileType", maybe(text())),
                    ("verification", maybe(verification)),
                ]),
                nft,
            ];
            let link = object(vec![
                ("title", maybe(text())),
                ("url", maybe(text())),
                ("other", maybe(junk())),
            ]);
            let list = |item: BoxedStrategy<Value>| {
                maybe(prop_oneof![
                    prop::collection::vec(item, 0..3).prop_map(Value::Array),
                    Just(Value::Null)
                ])
            };
            let profile = object(vec![
                ("name", maybe(prop_oneof![text(), Just(Value::Null)])),
                ("description", maybe(text())),
                ("links", list(link.boxed())),
                ("tags", list(text())),
                ("avatar", list(asset.boxed())),
                ("profileImage", list(image.clone().boxed())),
                ("backgroundImage", list(image.boxed())),
            ]);
            object(vec![("LSP3Profile", maybe(profile)), ("other", maybe(junk()))])
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(4000))]
            /// The clients' shape accepts exactly the documents serde accepts.
            #[test]
            fn the_shape_agrees_with_serde(doc in lsp3_like()) {
                let by_serde = serde_json::from_value::<Lsp3ProfileJson>(doc.clone()).is_ok();
                let by_shape = Lsp3ProfileJson::SHAPE.check(&doc).is_ok();
                prop_assert_eq!(by_serde, by_shape, "{}", doc);
            }
        }

        proptest! {
            // any mix of good and bad links keeps exactly the good ones, in order, and names exactly the bad ones
            #[test]
            fn keeps_exactly_the_good_links(mask in proptest::collection::vec(any::<bool>(), 0..20)) {
                let links: Vec<Value> = mask.iter().enumerate().map(|(i, g)| link(*g, i)).collect();
                let doc = json!({ "LSP3Profile": { "name": "n", "links": links } });
                let parsed = Lsp3ProfileJson::from_value_lenient(doc).unwrap();
                let kept: Vec<String> = parsed.value.profile.links.unwrap_or_default().into_iter().map(|l| l.title).collect();
                let want: Vec<String> = mask.iter().enumerate().filter(|(_, g)| **g).map(|(i, _)| format!("t{i}")).collect();
                prop_assert_eq!(kept, want);
                let bad: Vec<String> = mask.iter().enumerate().filter(|(_, g)| !**g).map(|(i, _)| format!("links[{i}]")).collect();
                prop_assert_eq!(parsed.dropped, bad);
                prop_assert_eq!(parsed.value.profile.name.as_deref(), Some("n"));
            }

            #[test]
            fn never_panics(body in "\\PC{0,300}") {
                let _ = Lsp3ProfileJson::from_slice_lenient(body.as_bytes());
                let _ = Lsp3ProfileJson::from_slice_lenient(format!("{{\"LSP3Profile\":{body}}}").as_bytes());
            }
        }
    }
}
