//! A UnixFS file proven by a trustless gateway's CAR (the IPFS trustless-gateway spec: `?format=car`). Pure: the
//! bytes of the CAR in, the file's bytes out, or why they were not proven.
//!
//! 1. **Blocks**: CARv1 sections (CARv2 unwrapped to its inner CARv1). Section lengths are
//!    `unsigned-varint`s and CIDs are read by the `cid` crate ([`sections`]); every block is hashed (sha2-256, by the
//!    runtime in the Worker) and compared with its CID before it is kept ([`Blocks::verified`]) — one wrong block rejects
//!    the whole answer. Blocks whose hash cannot be checked here are dropped (a file that needs one is then
//!    incomplete); a link to an identity CID is refused. The CAR header (its `roots`) is ignored, as the spec asks.
//!    Bounded before anything is allocated: the CAR's length (by the caller), [`MAX_BLOCK_BYTES`] a block,
//!    [`MAX_BLOCKS`] blocks. (CAR readers on crates.io were not used: `rs-car` 0.5 panics on a CIDv1 version other
//!    than 1 and on long digests, and allocates what a section claims, up to 1 GiB.)
//! 2. **Path** ([`proven_file`]): from the root CID, each segment is looked up in the verified directory block by
//!    `rust-unixfs` (`resolve`: dag-pb links by exact name; HAMT shards when every shard it visits is in the CAR).
//!    Only blocks reached from the root through verified links are used; anything else in the CAR is ignored.
//! 3. **File**: `rust-unixfs`'s file visitor walks the UnixFS tree in link order (the `blocksizes` must match the
//!    links and the tree cannot jump, overlap or expand), the leaves are appended, and the result must be exactly
//!    the root's `filesize` and at most the relay's limit.

use std::collections::HashMap;

use cid::Cid;
use profile_relayer::ipfs::{RAW, SHA2_256};
use rust_unixfs::{
    MaybeResolved,
    dir::NodeDescription,
    file::visit::{Cache, IdleFileVisit},
};

/// The largest block accepted (the spec's recommended cap).
pub const MAX_BLOCK_BYTES: usize = 2 * 1024 * 1024;
/// The most blocks one CAR may hold (a 10 MiB file in 1 KiB chunks is ≈ 10,300 blocks).
pub const MAX_BLOCKS: usize = 16_384;
/// The largest CAR header (its `roots`; ignored).
const MAX_HEADER_BYTES: usize = 64 * 1024;
/// Multihash `identity`: the digest is the block.
const IDENTITY: u64 = 0x00;
/// The CARv2 pragma: `varint(10) | {"version": 2}`.
const CARV2_PRAGMA: [u8; 11] = [0x0a, 0xa1, 0x67, 0x76, 0x65, 0x72, 0x73, 0x69, 0x6f, 0x6e, 0x02];

/// Why a CAR does not prove the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rejection {
    /// The gateway's answer proves nothing (a block that is not what its CID names, a malformed or truncated CAR, a
    /// missing block, sizes that do not add up, content that is no UnixFS file): another gateway may do better.
    Unproven(String),
    /// Proven: the path names nothing (or a directory, not a file).
    NotFound(String),
    /// The file is larger than the relay serves.
    TooLarge,
}

fn unproven(detail: impl Into<String>) -> Rejection {
    Rejection::Unproven(detail.into())
}

/// The largest CAR read for a file of at most `max_bytes`: the file, the UnixFS nodes above its leaves and the
/// path's directories, with room to spare.
#[must_use]
pub const fn max_car_bytes(max_bytes: usize) -> usize {
    max_bytes
        .saturating_add(max_bytes / 8)
        .saturating_add(1024 * 1024)
}

/// The verified blocks of a CAR, by CID.
#[derive(Debug, Default)]
pub struct Blocks<'a> {
    blocks: HashMap<Cid, &'a [u8]>,
}

/// Reads one `varint | payload` frame: the payload and what follows it.
fn frame(bytes: &[u8], max: usize) -> Result<(&[u8], &[u8]), Rejection> {
    let (length, rest) = unsigned_varint::decode::usize(bytes).map_err(|e| unproven(format!("CAR: {e}")))?;
    if length > max {
        return Err(unproven(format!("CAR: a section of {length} bytes")));
    }
    let payload = rest.get(..length).ok_or_else(|| unproven("CAR: truncated"))?;
    Ok((payload, rest.get(length..).unwrap_or_default()))
}

/// A CARv2's inner CARv1 (the data offset and size of its header) and its offset; a CARv1 as it is.
fn car_v1(car: &[u8]) -> Result<(usize, &[u8]), Rejection> {
    let Some(header) = car.strip_prefix(&CARV2_PRAGMA) else {
        return Ok((0, car));
    };
    let u64_at = |at: usize| {
        header
            .get(at..at.saturating_add(8))
            .and_then(|b| <[u8; 8]>::try_from(b).ok())
            .map(u64::from_le_bytes)
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| unproven("CARv2: truncated header"))
    };
    // 16 bytes of characteristics, then the data offset and size (from the start of the CAR)
    let (offset, size) = (u64_at(16)?, u64_at(24)?);
    car.get(offset..offset.saturating_add(size))
        .filter(|_| offset.checked_add(size).is_some())
        .map(|v1| (offset, v1))
        .ok_or_else(|| unproven("CARv2: data outside the CAR"))
}

/// One section of a CAR: its CID and where its block lies in the CAR.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// The CID the section names (sha2-256: the only hash checked).
    pub cid: Cid,
    /// The block's bytes, as offsets into the CAR.
    pub block: core::ops::Range<usize>,
}

/// The sections of `car` whose blocks can be checked (sha2-256), in order, unverified: the CAR's framing read
/// within the bounds ([`MAX_BLOCKS`], [`MAX_BLOCK_BYTES`]). Each block must then be hashed and compared with its
/// CID before [`Blocks::verified`] takes it (the Worker hashes them with the runtime's SHA-256).
///
/// # Errors
/// [`Rejection::Unproven`] for a malformed or truncated CAR, or more than [`MAX_BLOCKS`] blocks.
pub fn sections(car: &[u8]) -> Result<Vec<Section>, Rejection> {
    let (base, v1) = car_v1(car)?;
    let (_header, mut rest) = frame(v1, MAX_HEADER_BYTES)?;
    let mut out = Vec::new();
    let mut count = 0_usize;
    while !rest.is_empty() {
        count = count.saturating_add(1);
        if count > MAX_BLOCKS {
            return Err(unproven(format!("CAR: more than {MAX_BLOCKS} blocks")));
        }
        // a section: the CID, then the block (a CID is at most ≈ 80 bytes)
        let (section, next) = frame(rest, MAX_BLOCK_BYTES.saturating_add(128))?;
        rest = next;
        let mut block = section;
        let cid = Cid::read_bytes(&mut block).map_err(|e| unproven(format!("CAR: a section's CID: {e}")))?;
        if block.len() > MAX_BLOCK_BYTES {
            return Err(unproven(format!("CAR: block {cid} has {} bytes", block.len())));
        }
        if cid.hash().code() != SHA2_256 {
            // cannot be checked here: not kept (identity CIDs are never needed as blocks)
            continue;
        }
        // where the block ends: the CARv1's offset, and what is left of the CARv1 after it
        let end = base.saturating_add(v1.len().saturating_sub(rest.len()));
        out.push(Section {
            cid,
            block: end.saturating_sub(block.len())..end,
        });
    }
    Ok(out)
}

impl<'a> Blocks<'a> {
    /// Reads and verifies every block of `car`, hashed here with `sha2` (the tests'; the Worker hashes with the
    /// runtime: [`sections`], then [`Blocks::verified`]).
    ///
    /// # Errors
    /// [`Rejection::Unproven`] for a malformed or truncated CAR, a block that does not hash to its CID, or more
    /// than [`MAX_BLOCKS`] blocks.
    #[cfg(all(test, not(target_arch = "wasm32")))]
    pub fn read(car: &'a [u8]) -> Result<Self, Rejection> {
        let sections = sections(car)?;
        let checked: Vec<bool> = sections
            .iter()
            .map(|s| {
                car.get(s.block.clone())
                    .is_some_and(|b| profile_relayer::ipfs::verify_block(&s.cid, b).unwrap_or(false))
            })
            .collect();
        Self::verified(car, &sections, &checked)
    }

    /// The blocks of `sections` (from [`sections`] of the same `car`), each hashed by the caller: `checked[i]`
    /// says whether section `i`'s block hashes to its CID.
    ///
    /// # Errors
    /// [`Rejection::Unproven`] when a block does not match its CID (one wrong block rejects the whole CAR).
    pub fn verified(car: &'a [u8], sections: &[Section], checked: &[bool]) -> Result<Self, Rejection> {
        let mut blocks = HashMap::new();
        for (i, section) in sections.iter().enumerate() {
            let block = car.get(section.block.clone()).unwrap_or_default();
            if !checked.get(i).copied().unwrap_or(false) {
                return Err(unproven(format!("block {} does not match its CID", section.cid)));
            }
            blocks.entry(section.cid).or_insert(block);
        }
        Ok(Self { blocks })
    }

    /// The verified block `cid` names.
    fn get(&self, cid: &Cid) -> Result<&'a [u8], Rejection> {
        self.blocks.get(cid).copied().ok_or_else(|| {
            if cid.hash().code() == IDENTITY {
                unproven(format!(
                    "identity CID {cid} (not supported in a UnixFS tree here)"
                ))
            } else {
                unproven(format!("block {cid} is missing from the CAR"))
            }
        })
    }
}

/// `rust-unixfs` cuts the first two bytes off the name of every link of a HAMT shard (the bucket): a name whose
/// third byte is inside a UTF-8 character would panic there, so such a shard is refused first.
fn check_shard(block: &[u8]) -> Result<(), Rejection> {
    if let NodeDescription::HamtShard { links } = rust_unixfs::dir::describe(block)
        && links
            .iter()
            .any(|l| !l.name.is_char_boundary(2.min(l.name.len())))
    {
        return Err(unproven("a HAMT shard link name is not UTF-8 after its bucket"));
    }
    Ok(())
}

/// Follows one path segment from the directory `dir`.
fn resolve(blocks: &Blocks<'_>, dir: &Cid, segment: &str) -> Result<Cid, Rejection> {
    let not_found = || Rejection::NotFound(format!("no {segment:?} in {dir}"));
    if dir.codec() == RAW {
        return Err(not_found());
    }
    let block = blocks.get(dir)?;
    check_shard(block)?;
    let mut cache = None;
    let mut step = rust_unixfs::resolve(block, segment, &mut cache).map_err(|e| match e {
        rust_unixfs::ResolveError::UnexpectedType(_) => not_found(),
        e => unproven(format!("directory {dir}: {e}")),
    })?;
    for _ in 0..MAX_BLOCKS {
        match step {
            MaybeResolved::Found(cid) => return Ok(cid),
            MaybeResolved::NotFound => return Err(not_found()),
            MaybeResolved::NeedToLoadMore(lookup) => {
                let next = *lookup.pending_links().0;
                let shard = blocks.get(&next).map_err(|_| {
                    unproven(format!(
                        "HAMT-sharded directory {dir}: shard {next} is not in the CAR (sharded directories are \
                         resolved only from CARs holding every shard visited)"
                    ))
                })?;
                check_shard(shard)?;
                step = lookup
                    .continue_walk(shard, &mut Default::default())
                    .map_err(|e| unproven(format!("HAMT-sharded directory {dir}: {e}")))?;
            }
        }
    }
    Err(unproven("HAMT-sharded directory: too many shards"))
}

/// The bytes of the file `root/path` proven by `blocks`, at most `max_bytes`.
///
/// # Errors
/// [`Rejection::NotFound`] when the verified directories have no such entry or it is a directory;
/// [`Rejection::TooLarge`] past `max_bytes`; [`Rejection::Unproven`] otherwise.
pub fn proven_file(
    blocks: &Blocks<'_>,
    root: &Cid,
    path: &[String],
    max_bytes: usize,
) -> Result<Vec<u8>, Rejection> {
    let mut cid = *root;
    for segment in path {
        cid = resolve(blocks, &cid, segment)?;
    }
    let block = blocks.get(&cid)?;
    if cid.codec() == RAW {
        return if block.len() > max_bytes {
            Err(Rejection::TooLarge)
        } else {
            Ok(block.to_vec())
        };
    }
    match rust_unixfs::dir::describe(block) {
        NodeDescription::File { size } if size > max_bytes as u64 => return Err(Rejection::TooLarge),
        NodeDescription::File { .. } => {}
        NodeDescription::Directory { .. } | NodeDescription::HamtShard { .. } => {
            return Err(Rejection::NotFound(format!("{cid} is a directory, not a file")));
        }
        NodeDescription::Symlink => return Err(unproven(format!("{cid} is a symlink"))),
        NodeDescription::Other => return Err(unproven(format!("{cid} is not a UnixFS file"))),
    }
    let (first, size, _metadata, mut visit) = IdleFileVisit::default()
        .start(block)
        .map_err(|e| unproven(format!("file {cid}: {e}")))?;
    if size > max_bytes as u64 {
        return Err(Rejection::TooLarge);
    }
    let mut out = Vec::with_capacity(usize::try_from(size).unwrap_or(max_bytes).min(max_bytes));
    out.extend_from_slice(first);
    let mut cache: Option<Cache> = None;
    for _ in 0..=MAX_BLOCKS {
        let Some(walk) = visit else { break };
        let next = *walk.pending_links().0;
        let leaf = blocks.get(&next)?;
        let (bytes, more) = walk
            .continue_walk(leaf, &mut cache)
            .map_err(|e| unproven(format!("file {cid}: {e}")))?;
        if out.len().saturating_add(bytes.len()) > max_bytes {
            return Err(Rejection::TooLarge);
        }
        out.extend_from_slice(bytes);
        visit = more;
    }
    if visit.is_some() {
        return Err(unproven(format!("file {cid}: too many blocks")));
    }
    if out.len() as u64 != size {
        return Err(unproven(format!(
            "file {cid}: {} bytes where its root says {size}",
            out.len()
        )));
    }
    Ok(out)
}

#[cfg(all(test, not(target_arch = "wasm32")))]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use rust_unixfs::{
        dir::builder::{BufferingTreeBuilder, TreeOptions},
        file::adder::{Chunker, FileAdder},
    };

    use super::*;

    /// The blocks of a UnixFS file made by `rust-unixfs`'s adder (the root last).
    fn file_blocks(data: &[u8], chunk: usize) -> Vec<(Cid, Vec<u8>)> {
        let mut adder = FileAdder::builder().with_chunker(Chunker::Size(chunk)).build();
        let mut blocks = Vec::new();
        let mut rest = data;
        while !rest.is_empty() {
            let (made, taken) = adder.push(rest);
            blocks.extend(made);
            rest = &rest[taken..];
        }
        blocks.extend(adder.finish());
        blocks
    }

    /// A CARv1 of `blocks` (the test writes the framing; the reader under test is the relay's).
    fn car(blocks: &[(Cid, Vec<u8>)]) -> Vec<u8> {
        // any header: the reader ignores it
        let header = b"\xa2eroots\x80gversion\x01";
        let mut out = Vec::new();
        let mut buf = unsigned_varint::encode::usize_buffer();
        out.extend_from_slice(unsigned_varint::encode::usize(header.len(), &mut buf));
        out.extend_from_slice(header);
        for (cid, block) in blocks {
            let cid = cid.to_bytes();
            out.extend_from_slice(unsigned_varint::encode::usize(cid.len() + block.len(), &mut buf));
            out.extend_from_slice(&cid);
            out.extend_from_slice(block);
        }
        out
    }

    fn data(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i * 7 % 251) as u8).collect()
    }

    fn file(car_bytes: &[u8], root: &Cid, path: &[&str], max: usize) -> Result<Vec<u8>, Rejection> {
        let path: Vec<String> = path.iter().map(|s| (*s).to_owned()).collect();
        proven_file(&Blocks::read(car_bytes)?, root, &path, max)
    }

    #[test]
    fn a_multi_block_file_is_assembled_in_order() {
        let bytes = data(10_000);
        let blocks = file_blocks(&bytes, 1000);
        assert!(blocks.len() > 10);
        let root = blocks.last().unwrap().0;
        assert_eq!(file(&car(&blocks), &root, &[], 1 << 20).unwrap(), bytes);
        // any order, duplicates
        let mut shuffled = blocks.clone();
        shuffled.reverse();
        shuffled.push(blocks[0].clone());
        assert_eq!(file(&car(&shuffled), &root, &[], 1 << 20).unwrap(), bytes);
        // over the limit
        assert_eq!(file(&car(&blocks), &root, &[], 9_999), Err(Rejection::TooLarge));
    }

    #[test]
    fn wrong_missing_or_truncated_blocks_prove_nothing() {
        let bytes = data(5_000);
        let blocks = file_blocks(&bytes, 1000);
        let root = blocks.last().unwrap().0;
        let mut wrong = blocks.clone();
        let last = wrong[1].1.len() - 1;
        wrong[1].1[last] ^= 1;
        let rejected = file(&car(&wrong), &root, &[], 1 << 20).unwrap_err();
        assert!(
            matches!(&rejected, Rejection::Unproven(d) if d.contains("does not match")),
            "{rejected:?}"
        );
        let missing: Vec<_> = blocks.iter().skip(1).cloned().collect();
        let rejected = file(&car(&missing), &root, &[], 1 << 20).unwrap_err();
        assert!(
            matches!(&rejected, Rejection::Unproven(d) if d.contains("missing")),
            "{rejected:?}"
        );
        let whole = car(&blocks);
        for cut in [1, 10, whole.len() / 2, whole.len() - 1] {
            assert!(
                matches!(
                    file(&whole[..cut], &root, &[], 1 << 20),
                    Err(Rejection::Unproven(_))
                ),
                "{cut}"
            );
        }
        // another file's blocks do not prove this one
        let other = file_blocks(&data(4_000), 1000);
        assert!(matches!(
            file(&car(&other), &root, &[], 1 << 20),
            Err(Rejection::Unproven(_))
        ));
    }

    #[test]
    fn paths_are_walked_through_verified_directories() {
        let json = br#"{"LSP3Profile":{"name":"in a directory"}}"#.to_vec();
        let other = b"another file".to_vec();
        let json_blocks = file_blocks(&json, 1000);
        let other_blocks = file_blocks(&other, 1000);
        let (json_cid, other_cid) = (json_blocks.last().unwrap().0, other_blocks.last().unwrap().0);
        let mut tree = BufferingTreeBuilder::new(TreeOptions::default());
        tree.put_link("root/a/b.json", json_cid, json.len() as u64)
            .unwrap();
        tree.put_link("root/a/c.txt", other_cid, other.len() as u64)
            .unwrap();
        let mut blocks: Vec<(Cid, Vec<u8>)> = json_blocks.into_iter().chain(other_blocks).collect();
        let mut root = None;
        let mut nodes = tree.build();
        while let Some(node) = nodes.next_borrowed() {
            let node = node.unwrap();
            blocks.push((*node.cid, node.block.to_vec()));
            root = Some(*node.cid);
        }
        let root = root.unwrap();
        let bytes = car(&blocks);
        assert_eq!(file(&bytes, &root, &["a", "b.json"], 1 << 20).unwrap(), json);
        assert_eq!(file(&bytes, &root, &["a", "c.txt"], 1 << 20).unwrap(), other);
        assert!(matches!(
            file(&bytes, &root, &["a", "nope"], 1 << 20),
            Err(Rejection::NotFound(_))
        ));
        assert!(matches!(
            file(&bytes, &root, &["a"], 1 << 20),
            Err(Rejection::NotFound(_))
        ));
        assert!(matches!(
            file(&bytes, &root, &["a", "b.json", "x"], 1 << 20),
            Err(Rejection::NotFound(_))
        ));
        // the directory's block missing: nothing proven
        let without_root: Vec<_> = blocks.iter().filter(|(c, _)| *c != root).cloned().collect();
        assert!(matches!(
            file(&car(&without_root), &root, &["a", "b.json"], 1 << 20),
            Err(Rejection::Unproven(_))
        ));
    }

    #[test]
    fn carv2_is_unwrapped() {
        let bytes = data(3_000);
        let blocks = file_blocks(&bytes, 1000);
        let root = blocks.last().unwrap().0;
        let inner = car(&blocks);
        let mut v2 = CARV2_PRAGMA.to_vec();
        v2.extend_from_slice(&[0; 16]);
        v2.extend_from_slice(&(51_u64).to_le_bytes());
        v2.extend_from_slice(&(inner.len() as u64).to_le_bytes());
        v2.extend_from_slice(&[0; 8]);
        v2.extend_from_slice(&inner);
        assert_eq!(file(&v2, &root, &[], 1 << 20).unwrap(), bytes);
        v2[11 + 24] = 0xff;
        assert!(matches!(
            file(&v2, &root, &[], 1 << 20),
            Err(Rejection::Unproven(_))
        ));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]
        /// Hostile bytes never panic, and a damaged CAR proves nothing but the exact file.
        #[test]
        fn damaged_cars_never_panic_nor_lie(
            noise in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..300),
            flips in proptest::collection::vec((proptest::prelude::any::<usize>(), proptest::prelude::any::<u8>()), 1..4),
            cut in proptest::prelude::any::<usize>(),
        ) {
            let bytes = data(4_000);
            let blocks = file_blocks(&bytes, 700);
            let root = blocks.last().unwrap().0;
            let _ = file(&noise, &root, &[], 1 << 20);
            let _ = file(&noise, &root, &["a", "b"], 1 << 20);
            let mut damaged = car(&blocks);
            for (at, value) in flips {
                let at = at % damaged.len();
                damaged[at] = value;
            }
            damaged.truncate(damaged.len() - cut % 8);
            if let Ok(out) = file(&damaged, &root, &[], 1 << 20) {
                proptest::prop_assert_eq!(out, bytes);
            }
        }

        /// Blocks that hash to their CIDs but hold anything (an attacker can name any bytes): parsed as dag-pb and
        /// UnixFS without a panic, as the root, as a directory on the path and as a leaf.
        #[test]
        fn hostile_blocks_with_valid_cids_never_panic(
            root_bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200),
            leaf_bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200),
            segment in "[a-zA-Z0-9é.]{0,6}",
        ) {
            let cid_of = |bytes: &[u8]| {
                let digest = <sha2::Sha256 as sha2::Digest>::digest(bytes);
                Cid::new_v0(cid::multihash::Multihash::<64>::wrap(SHA2_256, &digest).unwrap()).unwrap()
            };
            let (root, leaf) = (cid_of(&root_bytes), cid_of(&leaf_bytes));
            let bytes = car(&[(root, root_bytes), (leaf, leaf_bytes)]);
            let _ = file(&bytes, &root, &[], 1 << 20);
            let _ = file(&bytes, &root, &[segment.as_str()], 1 << 20);
            let _ = file(&bytes, &root, &[segment.as_str(), "x"], 1 << 20);
        }
    }
}
