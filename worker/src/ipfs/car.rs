//! A UnixFS file proven by a trustless gateway's CAR (the IPFS trustless-gateway spec: `?format=car`), block by
//! block as the CAR arrives. Pure: CAR bytes in (in pieces, as they come), verified file bytes out, or why they were
//! not proven.
//!
//! 1. **Blocks** ([`CarReader`]): CARv1 sections read as their bytes arrive (CARv2 is read whole, then unwrapped to
//!    its inner CARv1). Section lengths are `unsigned-varint`s and CIDs are read by the `cid` crate; bounded before
//!    anything is allocated: [`MAX_BLOCK_BYTES`] a block, [`MAX_BLOCKS`] blocks, and the reader never holds more than
//!    one section and the piece being read. Blocks whose hash cannot be checked here are dropped (a file that needs
//!    one is then incomplete). The CAR header (its `roots`) is ignored, as the spec asks. (CAR readers on crates.io
//!    were not used: `rs-car` 0.5 panics on a CIDv1 version other than 1 and on long digests, and allocates what a
//!    section claims, up to 1 GiB.)
//! 2. Every block is hashed (sha2-256, by the runtime in the Worker) and compared with its CID by the caller before
//!    [`Walk::add`] takes it — one wrong block rejects the whole answer.
//! 3. **Path** ([`Walk`]): from the root CID, each segment is looked up in the verified directory block by
//!    `rust-unixfs` (`resolve`: dag-pb links by exact name; HAMT shards, each asked for as it is needed: [`Need`]).
//!    Only blocks reached from the root through verified links are used; anything else is dropped. A path that ends
//!    at a directory serves its `index.html` (as a gateway does), else it is [`Rejection::Directory`].
//! 4. **File**: `rust-unixfs`'s file visitor walks the UnixFS tree in link order (the `blocksizes` must match the
//!    links and the tree cannot jump, overlap or expand); each leaf's bytes are given out as soon as its block is
//!    verified and reached, so a CAR in depth-first order (`order=dfs`, what trustless gateways send) is proven and
//!    answered as it streams, with only the blocks that arrive ahead of their turn held. The file is proven when the
//!    walk ends at exactly the root's `filesize` (at most the relay's limit): [`Need::Done`].

use core::ops::Range;
use std::collections::HashMap;

use bytes::Bytes;
use cid::Cid;
use profile_relayer::ipfs::{RAW, SHA2_256};
use rust_unixfs::{
    MaybeResolved,
    dir::NodeDescription,
    file::visit::{Cache, FileVisit, IdleFileVisit},
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
/// The name a directory's page has: a path ending at a directory serves it.
pub const INDEX_HTML: &str = "index.html";

/// Why a CAR does not prove the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rejection {
    /// The gateway's answer proves nothing (a block that is not what its CID names, a malformed or truncated CAR, a
    /// missing block, sizes that do not add up, content that is no UnixFS file): another gateway may do better.
    Unproven(String),
    /// Proven: the path names nothing.
    NotFound(String),
    /// Proven: the path names a directory that has no `index.html`.
    Directory(String),
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

/// Reads one `varint | payload` frame of at most `max` bytes at the start of `bytes`: `Ok(None)` when more bytes are
/// needed, else the payload's range and where the frame ends.
fn frame(bytes: &[u8], max: usize) -> Result<Option<(Range<usize>, usize)>, Rejection> {
    let (length, rest) = match unsigned_varint::decode::usize(bytes) {
        Ok(read) => read,
        Err(unsigned_varint::decode::Error::Insufficient) => return Ok(None),
        Err(e) => return Err(unproven(format!("CAR: {e}"))),
    };
    if length > max {
        return Err(unproven(format!("CAR: a section of {length} bytes")));
    }
    let start = bytes.len().saturating_sub(rest.len());
    let end = start.saturating_add(length);
    Ok((end <= bytes.len()).then_some((start..end, end)))
}

/// A CARv2's inner CARv1 (the data offset and size of its header); a CARv1 as it is.
fn car_v1(car: &[u8]) -> Result<&[u8], Rejection> {
    let Some(header) = car.strip_prefix(&CARV2_PRAGMA) else {
        return Ok(car);
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
        .ok_or_else(|| unproven("CARv2: data outside the CAR"))
}

/// A block of a CAR, not yet verified: the CID its section names (sha2-256: the only hash checked) and its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// The CID the section names.
    pub cid: Cid,
    /// The block (a CAR read whole: a view of it, not a copy).
    pub bytes: Bytes,
}

/// A section's block, found: the CID the section names and where the block's bytes are in what was read.
type Located = (Cid, Range<usize>);

/// Where a [`CarReader`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ReadState {
    /// Nothing read yet: a CARv1 header or a CARv2 pragma comes.
    Start,
    /// In a CARv1's sections.
    Sections,
    /// A CARv2: read whole (within the caller's bound), unwrapped at the end.
    V2,
}

/// Reads a CAR as its bytes arrive ([`CarReader::push`]), giving out each section's block once it is whole.
#[derive(Debug)]
pub struct CarReader {
    buf: Vec<u8>,
    state: ReadState,
    count: usize,
}

impl Default for CarReader {
    fn default() -> Self {
        Self::new()
    }
}

impl CarReader {
    /// A reader at the start of a CAR.
    #[must_use]
    pub const fn new() -> Self {
        Self {
            buf: Vec::new(),
            state: ReadState::Start,
            count: 0,
        }
    }

    /// Takes the next bytes of the CAR: the blocks (of sha2-256 CIDs) completed by them, in order.
    ///
    /// # Errors
    /// [`Rejection::Unproven`] for a malformed CAR or more than [`MAX_BLOCKS`] blocks.
    pub fn push(&mut self, bytes: &[u8]) -> Result<Vec<Block>, Rejection> {
        if self.buf.is_empty() {
            // nothing held: the sections are read from `bytes` as they are, only the rest is kept
            let (out, at) = self.sections(bytes)?;
            self.buf.extend_from_slice(bytes.get(at..).unwrap_or_default());
            return Ok(copied(bytes, out));
        }
        self.buf.extend_from_slice(bytes);
        let held = core::mem::take(&mut self.buf);
        let read = self.sections(&held);
        let out = read.map(|(out, at)| (copied(&held, out), at));
        self.buf = held;
        let (out, at) = out?;
        self.buf.drain(..at.min(self.buf.len()));
        Ok(out)
    }

    /// A whole CAR's blocks (a CARv2's inner CARv1), each with where its bytes start in `car`, within the bounds of
    /// [`CarReader::push`]: for a CAR read whole, whose blocks can then be hashed where they are.
    ///
    /// # Errors
    /// [`Rejection::Unproven`] for a malformed or truncated CAR, or more than [`MAX_BLOCKS`] blocks.
    pub fn read_whole(car: &Bytes) -> Result<Vec<(Block, usize)>, Rejection> {
        let v1 = car_v1(car)?;
        // where the CARv1 starts in `car` (a CARv2's data offset)
        let base = (v1.as_ptr() as usize).saturating_sub(car.as_ptr() as usize);
        let mut reader = Self::new();
        let (blocks, at) = reader.sections(v1)?;
        if reader.state == ReadState::V2 {
            return Err(unproven("CARv2: its data is not a CARv1"));
        }
        if reader.state != ReadState::Sections || at != v1.len() {
            return Err(unproven("CAR: truncated"));
        }
        Ok(blocks
            .into_iter()
            .map(|(cid, at)| {
                let at = at.start.saturating_add(base)..at.end.saturating_add(base);
                let start = at.start;
                (
                    Block {
                        cid,
                        bytes: car.slice(at),
                    },
                    start,
                )
            })
            .collect())
    }

    /// The whole sections at the start of `input` (after the header, when the reader is at the start): their
    /// blocks' CIDs, each with where its bytes are in `input`, and how many bytes of `input` they took.
    fn sections(&mut self, input: &[u8]) -> Result<(Vec<Located>, usize), Rejection> {
        let mut out = Vec::new();
        let mut at = 0_usize;
        loop {
            let rest = input.get(at..).unwrap_or_default();
            match self.state {
                ReadState::V2 => break,
                ReadState::Start => {
                    let n = rest.len().min(CARV2_PRAGMA.len());
                    if rest.get(..n) == CARV2_PRAGMA.get(..n) {
                        if n == CARV2_PRAGMA.len() {
                            self.state = ReadState::V2;
                        }
                        break;
                    }
                    let Some((_header, end)) = frame(rest, MAX_HEADER_BYTES)? else {
                        break;
                    };
                    at = at.saturating_add(end);
                    self.state = ReadState::Sections;
                }
                ReadState::Sections => {
                    let Some((section, end)) = frame(rest, MAX_BLOCK_BYTES.saturating_add(128))? else {
                        break;
                    };
                    let section_end = at.saturating_add(section.end);
                    if let Some((cid, length)) =
                        section_block(&mut self.count, rest.get(section).unwrap_or_default())?
                    {
                        // the block is the section's tail, after its CID
                        out.push((cid, section_end.saturating_sub(length)..section_end));
                    }
                    at = at.saturating_add(end);
                }
            }
        }
        Ok((out, at))
    }

    /// The CAR has ended: the blocks still to come out of it (a CARv2's), or why it is incomplete.
    ///
    /// # Errors
    /// [`Rejection::Unproven`] for a CAR cut inside a section or a malformed CARv2.
    pub fn finish(self) -> Result<Vec<Block>, Rejection> {
        match self.state {
            ReadState::Sections if self.buf.is_empty() => Ok(Vec::new()),
            // read whole: its inner CARv1, which may not be a CARv2 again (one naming itself as its data recursed
            // without end here once)
            ReadState::V2 => Ok(Self::read_whole(&Bytes::from(self.buf))?
                .into_iter()
                .map(|(block, _)| block)
                .collect()),
            _ => Err(unproven("CAR: truncated")),
        }
    }

    /// Bytes held, not yet made into blocks.
    #[cfg(all(test, not(target_arch = "wasm32")))]
    #[must_use]
    pub fn held(&self) -> usize {
        self.buf.len()
    }
}

/// The blocks of `sections` (from [`CarReader::sections`] of `input`), copied out of `input`.
fn copied(input: &[u8], sections: Vec<Located>) -> Vec<Block> {
    sections
        .into_iter()
        .map(|(cid, at)| Block {
            cid,
            bytes: Bytes::copy_from_slice(input.get(at).unwrap_or_default()),
        })
        .collect()
}

/// One section's CID and its block's length (the section's tail); `None` for a hash that cannot be checked here.
fn section_block(count: &mut usize, mut section: &[u8]) -> Result<Option<(Cid, usize)>, Rejection> {
    *count = count.saturating_add(1);
    if *count > MAX_BLOCKS {
        return Err(unproven(format!("CAR: more than {MAX_BLOCKS} blocks")));
    }
    let cid = Cid::read_bytes(&mut section).map_err(|e| unproven(format!("CAR: a section's CID: {e}")))?;
    if section.len() > MAX_BLOCK_BYTES {
        return Err(unproven(format!("CAR: block {cid} has {} bytes", section.len())));
    }
    // cannot be checked here: not kept (identity CIDs are never needed as blocks)
    Ok((cid.hash().code() == SHA2_256).then_some((cid, section.len())))
}

/// What a [`Walk`] needs next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// This block (verified), to go on.
    Block(Cid),
    /// Nothing: the file is proven, every byte of it given out.
    Done,
}

/// Where a [`Walk`] is.
enum Phase {
    /// Resolving `path[segment]` from the directory `at` (then the file at the end).
    Path,
    /// The file's walk, `visit` waiting for its next block.
    File { visit: Box<FileVisit>, size: u64 },
    /// The file is proven.
    Done,
}

/// The proof of the file `root/path`, walked as verified blocks come in ([`Walk::add`], [`Walk::advance`]).
pub struct Walk {
    path: Vec<String>,
    /// How many segments of `path` are resolved.
    segment: usize,
    /// The block reached so far (a directory on the path, then the file).
    at: Cid,
    /// Whether `index.html` was appended to the path (it ended at a directory).
    index: bool,
    phase: Phase,
    /// Verified blocks not used yet (arrived ahead of their turn, or directories being walked).
    held: HashMap<Cid, Bytes>,
    held_bytes: usize,
    /// Keep blocks once used: a CAR without duplicates (`dups=n`) sends a repeated leaf once.
    keep_used: bool,
    cache: Option<Cache>,
    given: u64,
    max_bytes: usize,
}

impl Walk {
    /// A walk to the file `root/path`, at most `max_bytes`; `keep_used` when the CAR may send a repeated block once.
    #[must_use]
    pub fn new(root: Cid, path: &[String], max_bytes: usize, keep_used: bool) -> Self {
        Self {
            path: path.to_vec(),
            segment: 0,
            at: root,
            index: false,
            phase: Phase::Path,
            held: HashMap::new(),
            held_bytes: 0,
            keep_used,
            cache: None,
            given: 0,
            max_bytes,
        }
    }

    /// Whether the path ended at a directory and its `index.html` is served.
    #[must_use]
    pub const fn is_index(&self) -> bool {
        self.index
    }

    /// The file's size, once its root is reached.
    #[must_use]
    pub const fn size(&self) -> Option<u64> {
        match &self.phase {
            Phase::File { size, .. } => Some(*size),
            Phase::Path | Phase::Done => None,
        }
    }

    /// How many bytes of the file were given out.
    #[cfg(all(test, not(target_arch = "wasm32")))]
    #[must_use]
    pub const fn given(&self) -> u64 {
        self.given
    }

    /// Takes a block the caller has verified (its bytes hash to its CID), held until the walk reaches it.
    ///
    /// # Errors
    /// [`Rejection::Unproven`] when the blocks held ahead of their turn pass the bound of a CAR for the file.
    pub fn add(&mut self, cid: Cid, bytes: Bytes) -> Result<(), Rejection> {
        if self.held.contains_key(&cid) {
            return Ok(());
        }
        self.held_bytes = self.held_bytes.saturating_add(bytes.len());
        if self.held_bytes > max_car_bytes(self.max_bytes) {
            return Err(unproven("CAR: too many blocks ahead of their turn"));
        }
        self.held.insert(cid, bytes);
        Ok(())
    }

    fn block(&self, cid: &Cid) -> Result<&Bytes, Need> {
        self.held.get(cid).ok_or(Need::Block(*cid))
    }

    fn take(&mut self, cid: &Cid) -> Option<Bytes> {
        if self.keep_used {
            return self.held.get(cid).cloned();
        }
        let block = self.held.remove(cid)?;
        self.held_bytes = self.held_bytes.saturating_sub(block.len());
        Some(block)
    }

    /// Walks as far as the blocks held allow, pushing the file's bytes to `out` in order (views of the blocks, not
    /// copies): what is needed next.
    ///
    /// # Errors
    /// [`Rejection`]: the blocks prove the path names nothing or a directory without a page, or the file is too
    /// large, or it is not what its root says.
    pub fn advance(&mut self, out: &mut Vec<Bytes>) -> Result<Need, Rejection> {
        for _ in 0..=MAX_BLOCKS {
            let next = match &self.phase {
                Phase::Done => return Ok(Need::Done),
                Phase::File { visit, size } => (*visit.pending_links().0, *size),
                Phase::Path => {
                    if let Some(segment) = self.path.get(self.segment) {
                        match resolve(self, &self.at, segment)? {
                            Ok(next) => {
                                self.at = next;
                                self.segment = self.segment.saturating_add(1);
                            }
                            Err(need) => return Ok(need),
                        }
                    } else if let Some(need) = self.start_file(out)? {
                        return Ok(need);
                    }
                    continue;
                }
            };
            let (next, size) = next;
            let Some(block) = self.take(&next) else {
                return Ok(Need::Block(next));
            };
            let Phase::File { visit, .. } = core::mem::replace(&mut self.phase, Phase::Done) else {
                return Err(unproven("walk: lost its place"));
            };
            let (bytes, more) = visit
                .continue_walk(&block, &mut self.cache)
                .map_err(|e| unproven(format!("file {}: {e}", self.at)))?;
            self.give_then(&block, bytes, more, size, out)?;
        }
        Err(unproven(format!("file {}: too many blocks", self.at)))
    }

    /// Gives `bytes`, the file's next bytes, found in `block`.
    fn give(
        &mut self,
        block: &Bytes,
        bytes: &[u8],
        size: u64,
        out: &mut Vec<Bytes>,
    ) -> Result<(), Rejection> {
        self.given = self.given.saturating_add(bytes.len() as u64);
        if self.given > size {
            return Err(unproven(format!(
                "file {}: more bytes than its root says ({size})",
                self.at
            )));
        }
        if self.given > self.max_bytes as u64 {
            return Err(Rejection::TooLarge);
        }
        if !bytes.is_empty() {
            out.push(part_of(block, bytes));
        }
        Ok(())
    }

    fn end(&mut self, size: u64) -> Result<(), Rejection> {
        if self.given != size {
            return Err(unproven(format!(
                "file {}: {} bytes where its root says {size}",
                self.at, self.given
            )));
        }
        self.phase = Phase::Done;
        self.held.clear();
        Ok(())
    }

    /// The path is resolved: the file's root, its first bytes. `Some` when a block is needed first.
    fn start_file(&mut self, out: &mut Vec<Bytes>) -> Result<Option<Need>, Rejection> {
        let cid = self.at;
        let block = match self.block(&cid) {
            Ok(block) => block.clone(),
            Err(need) => return Ok(Some(need)),
        };
        if cid.codec() == RAW {
            let size = block.len() as u64;
            self.give(&block, &block, size, out)?;
            self.end(size)?;
            return Ok(None);
        }
        match rust_unixfs::dir::describe(&block) {
            NodeDescription::File { size } if size > self.max_bytes as u64 => {
                return Err(Rejection::TooLarge);
            }
            NodeDescription::File { .. } => {}
            NodeDescription::Directory { .. } | NodeDescription::HamtShard { .. } if !self.index => {
                // a directory: its page, as a gateway serves it
                self.index = true;
                self.path.push(INDEX_HTML.to_owned());
                return Ok(None);
            }
            NodeDescription::Directory { .. } | NodeDescription::HamtShard { .. } => {
                return Err(unproven(format!("{cid}: {INDEX_HTML} is a directory")));
            }
            NodeDescription::Symlink => return Err(unproven(format!("{cid} is a symlink"))),
            NodeDescription::Other => return Err(unproven(format!("{cid} is not a UnixFS file"))),
        }
        let (first, size, _metadata, visit) = IdleFileVisit::default()
            .start(&block)
            .map_err(|e| unproven(format!("file {cid}: {e}")))?;
        if size > self.max_bytes as u64 {
            return Err(Rejection::TooLarge);
        }
        self.give_then(&block, first, visit, size, out)?;
        Ok(None)
    }

    /// Gives the file's next `bytes` (found in `block`), then waits for the block `visit` needs next or, without one,
    /// ends the file.
    fn give_then(
        &mut self,
        block: &Bytes,
        bytes: &[u8],
        visit: Option<FileVisit>,
        size: u64,
        out: &mut Vec<Bytes>,
    ) -> Result<(), Rejection> {
        self.give(block, bytes, size, out)?;
        match visit {
            Some(visit) => {
                self.phase = Phase::File {
                    visit: Box::new(visit),
                    size,
                };
                Ok(())
            }
            None => self.end(size),
        }
    }
}

/// `part`, a slice of `block`'s bytes, as a view of `block` (a copy if it is not one: the UnixFS visitor's output
/// borrows from the block it is given, so it always is).
fn part_of(block: &Bytes, part: &[u8]) -> Bytes {
    let start = (part.as_ptr() as usize).wrapping_sub(block.as_ptr() as usize);
    match start.checked_add(part.len()) {
        Some(end) if start <= block.len() && end <= block.len() => block.slice(start..end),
        _ => Bytes::copy_from_slice(part),
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

/// Follows one path segment from the directory `dir`: the entry, or the block needed to find it.
fn resolve(walk: &Walk, dir: &Cid, segment: &str) -> Result<Result<Cid, Need>, Rejection> {
    let not_found = || {
        if walk.index && segment == INDEX_HTML {
            Rejection::Directory(format!("{dir} is a directory without {INDEX_HTML}"))
        } else {
            Rejection::NotFound(format!("no {segment:?} in {dir}"))
        }
    };
    if dir.codec() == RAW {
        return Err(not_found());
    }
    if dir.hash().code() == IDENTITY {
        return Err(unproven(format!(
            "identity CID {dir} (not supported in a UnixFS tree here)"
        )));
    }
    let block = match walk.block(dir) {
        Ok(block) => block,
        Err(need) => return Ok(Err(need)),
    };
    check_shard(block)?;
    let mut cache = None;
    let mut step = rust_unixfs::resolve(block, segment, &mut cache).map_err(|e| match e {
        rust_unixfs::ResolveError::UnexpectedType(_) => not_found(),
        e => unproven(format!("directory {dir}: {e}")),
    })?;
    for _ in 0..MAX_BLOCKS {
        match step {
            MaybeResolved::Found(cid) => return Ok(Ok(cid)),
            MaybeResolved::NotFound => return Err(not_found()),
            MaybeResolved::NeedToLoadMore(lookup) => {
                let next = *lookup.pending_links().0;
                let shard = match walk.block(&next) {
                    Ok(shard) => shard,
                    Err(need) => return Ok(Err(need)),
                };
                check_shard(shard)?;
                step = lookup
                    .continue_walk(shard, &mut Default::default())
                    .map_err(|e| unproven(format!("HAMT-sharded directory {dir}: {e}")))?;
            }
        }
    }
    Err(unproven("HAMT-sharded directory: too many shards"))
}

/// The bytes of the file `root/path` proven by `blocks` (verified by the caller), at most `max_bytes`, and whether
/// it is a directory's `index.html`: a whole CAR at once.
///
/// # Errors
/// [`Rejection`]: see [`Walk::advance`]; a block the walk needs and `blocks` lack is [`Rejection::Unproven`].
#[cfg(all(test, not(target_arch = "wasm32")))]
pub fn proven_file(
    blocks: Vec<Block>,
    root: &Cid,
    path: &[String],
    max_bytes: usize,
) -> Result<Vec<u8>, Rejection> {
    let mut walk = Walk::new(*root, path, max_bytes, true);
    for b in blocks {
        walk.add(b.cid, b.bytes)?;
    }
    let mut out = Vec::new();
    match walk.advance(&mut out)? {
        Need::Done => Ok(out.concat()),
        Need::Block(cid) => Err(unproven(format!("block {cid} is missing from the CAR"))),
    }
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

    /// A CARv2 wrapping the CARv1 `inner` (the pragma, a header with the data offset and size, then the CARv1).
    fn car_v2(inner: &[u8]) -> Vec<u8> {
        let mut v2 = CARV2_PRAGMA.to_vec();
        v2.extend_from_slice(&[0; 16]);
        v2.extend_from_slice(&(51_u64).to_le_bytes());
        v2.extend_from_slice(&(inner.len() as u64).to_le_bytes());
        v2.extend_from_slice(&[0; 8]);
        v2.extend_from_slice(inner);
        v2
    }

    /// The verified blocks of a whole CAR (hashed here with `sha2`; the Worker hashes with the runtime).
    fn read(car_bytes: &[u8]) -> Result<Vec<Block>, Rejection> {
        let mut reader = CarReader::new();
        let mut blocks = reader.push(car_bytes)?;
        blocks.extend(reader.finish()?);
        for b in &blocks {
            if !profile_relayer::ipfs::verify_block(&b.cid, &b.bytes).unwrap_or(false) {
                return Err(unproven(format!("block {} does not match its CID", b.cid)));
            }
        }
        Ok(blocks)
    }

    fn data(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i * 7 % 251) as u8).collect()
    }

    fn file(car_bytes: &[u8], root: &Cid, path: &[&str], max: usize) -> Result<Vec<u8>, Rejection> {
        let path: Vec<String> = path.iter().map(|s| (*s).to_owned()).collect();
        proven_file(read(car_bytes)?, root, &path, max)
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
        // a directory without a page
        assert!(matches!(
            file(&bytes, &root, &["a"], 1 << 20),
            Err(Rejection::Directory(_))
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

    /// A directory `root/<files>` built by `rust-unixfs`: its blocks (files first, then directories) and its root.
    fn directory(files: &[(&str, &[u8])], options: TreeOptions) -> (Vec<(Cid, Vec<u8>)>, Cid) {
        let mut tree = BufferingTreeBuilder::new(options);
        let mut blocks = Vec::new();
        for (name, bytes) in files {
            let made = file_blocks(bytes, 1000);
            tree.put_link(
                &format!("root/{name}"),
                made.last().unwrap().0,
                bytes.len() as u64,
            )
            .unwrap();
            blocks.extend(made);
        }
        let mut root = None;
        let mut nodes = tree.build();
        while let Some(node) = nodes.next_borrowed() {
            let node = node.unwrap();
            blocks.push((*node.cid, node.block.to_vec()));
            root = Some(*node.cid);
        }
        (blocks, root.unwrap())
    }

    #[test]
    fn a_directory_serves_its_index_html() {
        let page = b"<!doctype html><p>hello</p>".to_vec();
        let (blocks, root) = directory(
            &[("index.html", &page), ("x.json", b"{}")],
            TreeOptions::default(),
        );
        let path: Vec<String> = Vec::new();
        let mut walk = Walk::new(root, &path, 1 << 20, true);
        for (cid, b) in &blocks {
            walk.add(*cid, b.clone().into()).unwrap();
        }
        let mut out = Vec::new();
        assert_eq!(walk.advance(&mut out).unwrap(), Need::Done);
        assert_eq!(out.concat(), page);
        assert!(walk.is_index());
    }

    /// A CAR in depth-first order, fed a few bytes at a time: each leaf comes out as soon as it is read, before
    /// the CAR ends; the walk is done exactly at the last leaf.
    #[test]
    fn a_dfs_car_streams_leaf_by_leaf() {
        let bytes = data(50_000);
        let mut blocks = file_blocks(&bytes, 1000);
        // the adder writes the root last; a gateway sends it first (DFS)
        let root_block = blocks.pop().unwrap();
        let root = root_block.0;
        blocks.insert(0, root_block);
        let whole = car(&blocks);
        let largest = blocks.iter().map(|(_, b)| b.len()).max().unwrap();
        for piece in [1, 7, 1000, 4096] {
            let mut reader = CarReader::new();
            let mut walk = Walk::new(root, &[], 1 << 20, false);
            let mut out = Vec::new();
            let mut need = Need::Block(root);
            let mut fed = 0;
            for chunk in whole.chunks(piece) {
                fed += chunk.len();
                for b in reader.push(chunk).unwrap() {
                    assert!(profile_relayer::ipfs::verify_block(&b.cid, &b.bytes).unwrap());
                    walk.add(b.cid, b.bytes).unwrap();
                }
                need = walk.advance(&mut out).unwrap();
                // never more than a section and a piece held
                assert!(reader.held() <= largest + 64 + piece, "{}", reader.held());
                if fed < whole.len() / 2 {
                    assert_ne!(need, Need::Done);
                }
            }
            assert!(reader.finish().unwrap().is_empty());
            assert_eq!(need, Need::Done);
            assert_eq!(out.concat(), bytes);
            assert_eq!(walk.size(), None);
            assert_eq!(walk.given(), bytes.len() as u64);
        }
        // bytes came out before the end: half way through the CAR, half of the file is out
        let mut reader = CarReader::new();
        let mut walk = Walk::new(root, &[], 1 << 20, false);
        let mut out = Vec::new();
        for b in reader.push(&whole[..whole.len() / 2]).unwrap() {
            walk.add(b.cid, b.bytes).unwrap();
        }
        assert!(matches!(walk.advance(&mut out).unwrap(), Need::Block(_)));
        assert!(out.concat().len() > 20_000);
        assert_eq!(walk.size(), Some(50_000));
    }

    /// A HAMT shard the CAR lacks is asked for by name (the relay then fetches it), and the walk goes on with it.
    #[test]
    fn a_missing_hamt_shard_is_asked_for() {
        let names: Vec<String> = (0..40).map(|i| format!("f{i}.json")).collect();
        let contents: Vec<Vec<u8>> = (0..40)
            .map(|i| format!("{{\"file\":{i}}}").into_bytes())
            .collect();
        let files: Vec<(&str, &[u8])> = names
            .iter()
            .map(String::as_str)
            .zip(contents.iter().map(Vec::as_slice))
            .collect();
        let mut options = TreeOptions::default();
        options.shard_threshold(Some(1));
        let (blocks, root) = directory(&files, options);
        assert!(
            blocks
                .iter()
                .filter(|(_, b)| matches!(rust_unixfs::dir::describe(b), NodeDescription::HamtShard { .. }))
                .count()
                > 1,
            "sharded"
        );
        let by_cid: HashMap<Cid, Vec<u8>> = blocks.iter().cloned().collect();
        let path = vec!["f17.json".to_owned()];
        let mut walk = Walk::new(root, &path, 1 << 20, false);
        let mut out = Vec::new();
        let mut asked = 0;
        loop {
            match walk.advance(&mut out).unwrap() {
                Need::Done => break,
                Need::Block(cid) => {
                    asked += 1;
                    assert!(asked < 10);
                    walk.add(cid, by_cid[&cid].clone().into()).unwrap();
                }
            }
        }
        assert_eq!(out.concat(), b"{\"file\":17}");
    }

    #[test]
    fn carv2_is_unwrapped() {
        let bytes = data(3_000);
        let blocks = file_blocks(&bytes, 1000);
        let root = blocks.last().unwrap().0;
        let inner = car(&blocks);
        let mut v2 = car_v2(&inner);
        assert_eq!(file(&v2, &root, &[], 1 << 20).unwrap(), bytes);
        v2[11 + 24] = 0xff;
        assert!(matches!(
            file(&v2, &root, &[], 1 << 20),
            Err(Rejection::Unproven(_))
        ));
    }

    /// A CARv2 whose data is itself (offset 0, its own size), or another CARv2: refused. Read as it arrived, this one
    /// (51 bytes from a gateway) made the reader unwrap it again without end, overflowing the stack.
    #[test]
    fn a_carv2_wrapping_a_carv2_is_refused_not_unwrapped_without_end() {
        let mut itself = CARV2_PRAGMA.to_vec();
        itself.extend_from_slice(&[0; 16]);
        itself.extend_from_slice(&0_u64.to_le_bytes());
        itself.extend_from_slice(&51_u64.to_le_bytes());
        itself.extend_from_slice(&[0; 8]);
        assert_eq!(itself.len(), 51);
        let blocks = file_blocks(&data(3_000), 1000);
        let nested = car_v2(&car_v2(&car(&blocks)));
        for bytes in [itself, nested] {
            let refused =
                |r: Option<Rejection>| matches!(r, Some(Rejection::Unproven(d)) if d.contains("not a CARv1"));
            let mut reader = CarReader::new();
            assert!(reader.push(&bytes).unwrap().is_empty());
            assert!(refused(reader.finish().err()));
            assert!(refused(CarReader::read_whole(&bytes.clone().into()).err()));
        }
    }

    #[test]
    fn a_whole_car_s_file_comes_out_as_views_of_it_not_copies() {
        let bytes = data(5_000);
        let blocks = file_blocks(&bytes, 1000);
        let root = blocks.last().unwrap().0;
        let whole = Bytes::from(car(&blocks));
        let mut walk = Walk::new(root, &[], 1 << 20, false);
        for (block, _) in CarReader::read_whole(&whole).unwrap() {
            walk.add(block.cid, block.bytes).unwrap();
        }
        let mut out = Vec::new();
        assert_eq!(walk.advance(&mut out).unwrap(), Need::Done);
        assert_eq!(out.concat(), bytes);
        let inside = whole.as_ptr_range();
        for piece in &out {
            assert!(inside.contains(&piece.as_ptr()), "a piece copied out of the CAR");
        }
        // a slice that is not the block's own is copied, not viewed out of bounds
        let block = Bytes::from_static(b"block");
        assert_eq!(part_of(&block, b"other"), Bytes::from_static(b"other"));
        assert_eq!(part_of(&block, &block[1..3]).as_ptr(), block[1..].as_ptr());
    }

    #[test]
    fn a_whole_car_gives_each_block_where_it_is_and_what_push_gives() {
        let blocks = file_blocks(&data(5_000), 1000);
        let inner = car(&blocks);
        let v2 = car_v2(&inner);
        for whole in [&inner, &v2] {
            let read = CarReader::read_whole(&Bytes::copy_from_slice(whole)).unwrap();
            let mut reader = CarReader::new();
            let mut pushed = reader.push(whole).unwrap();
            pushed.extend(reader.finish().unwrap());
            assert_eq!(read.iter().map(|(b, _)| b.clone()).collect::<Vec<_>>(), pushed);
            assert_eq!(read.len(), blocks.len());
            for (block, at) in &read {
                assert_eq!(&whole[*at..*at + block.bytes.len()], &block.bytes[..]);
            }
        }
        // cut anywhere: what push and finish say (the blocks before a cut between sections, else truncated)
        for cut in 0..inner.len() {
            let mut reader = CarReader::new();
            let pushed = reader.push(&inner[..cut]).and_then(|mut blocks| {
                blocks.extend(reader.finish()?);
                Ok(blocks)
            });
            let read = CarReader::read_whole(&Bytes::copy_from_slice(&inner[..cut]))
                .map(|r| r.into_iter().map(|(b, _)| b).collect::<Vec<_>>());
            assert_eq!(read.is_ok(), pushed.is_ok(), "cut at {cut}");
            if let (Ok(read), Ok(pushed)) = (read, pushed) {
                assert_eq!(read, pushed, "cut at {cut}");
            }
        }
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
