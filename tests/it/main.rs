//! Integration tests: the shared reference vectors as table tests.
#![allow(clippy::unwrap_used, missing_docs)]

mod metadata;
mod vectors;
