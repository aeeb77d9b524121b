//! The files the code checks read, at either side of the diff, through the
//! review's store (`syntax::Store`): so that a file the index parses too,
//! or both the outline and the macro reader need, is read once and parsed
//! once. A changed file's base side is its old blob, a path the diff adds
//! has none, and every other path reads the head's blob, which the diff did
//! not change.

use std::collections::HashMap;
use std::sync::Arc;

use crate::git::Diff;
use crate::syntax::{Key, Lang, Parsed, Store, Text};

/// Before or after the diff.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Base,
    Head,
}

/// Both sides' files.
pub struct Files<'a> {
    store: &'a Store<'a>,
    diff: &'a Diff,
    /// The head commit's files: blob by path.
    head: &'a HashMap<String, String>,
}

impl<'a> Files<'a> {
    pub fn new(store: &'a Store<'a>, diff: &'a Diff, head: &'a HashMap<String, String>) -> Self {
        Files { store, diff, head }
    }

    pub fn store(&self) -> &'a Store<'a> {
        self.store
    }

    pub fn diff(&self) -> &'a Diff {
        self.diff
    }

    /// The blob at `path` on `side`, if there is one.
    pub fn blob(&self, side: Side, path: &str) -> Option<&'a str> {
        let files = &self.diff.files;
        if side == Side::Base {
            if let Some(f) = files
                .iter()
                .find(|f| f.old_blob.is_some() && f.old_path.as_deref().unwrap_or(&f.path) == path)
            {
                return f.old_blob.as_deref();
            }
            if files.iter().any(|f| f.path == path) {
                return None;
            }
        }
        self.head.get(path).map(String::as_str)
    }

    /// The store's key of a Rust or Python file at `path` on `side`.
    pub fn key(&self, side: Side, path: &str) -> Option<Key> {
        Some(Key::new(self.blob(side, path)?, Lang::of_path(path)?))
    }

    /// The text at `path` on `side`: a source file's from the store, any
    /// other file (a manifest) read as it is.
    pub fn text(&self, side: Side, path: &str) -> Option<Arc<Text>> {
        let blob = self.blob(side, path)?;
        match Lang::of_path(path) {
            Some(lang) => self.store.text(&Key::new(blob, lang)).ok(),
            None => self
                .store
                .blobs()
                .read(blob)
                .ok()
                .map(|b| Arc::new(Text::new(b))),
        }
    }

    /// The tree of the Rust or Python file at `path` on `side`.
    pub fn tree(&self, side: Side, path: &str) -> Option<Arc<Parsed>> {
        self.store.tree(&self.key(side, path)?).ok()
    }

    /// One side's files, for readers that take a side's files by path.
    pub fn side(&'a self, side: Side) -> SideFiles<'a> {
        SideFiles { files: self, side }
    }
}

/// One side's files by path (`macros::find` reads these).
pub trait Read {
    fn text(&self, path: &str) -> Option<Arc<Text>>;
    fn tree(&self, path: &str) -> Option<Arc<Parsed>>;
}

/// One side of `Files`.
pub struct SideFiles<'a> {
    files: &'a Files<'a>,
    side: Side,
}

impl Read for SideFiles<'_> {
    fn text(&self, path: &str) -> Option<Arc<Text>> {
        self.files.text(self.side, path)
    }

    fn tree(&self, path: &str) -> Option<Arc<Parsed>> {
        self.files.tree(self.side, path)
    }
}

/// Files held in memory by path, each parsed when asked (tests).
impl Read for HashMap<String, String> {
    fn text(&self, path: &str) -> Option<Arc<Text>> {
        self.get(path)
            .map(|t| Arc::new(Text::new(t.as_bytes().to_vec())))
    }

    fn tree(&self, path: &str) -> Option<Arc<Parsed>> {
        let text = Read::text(self, path)?;
        Parsed::new(Lang::of_path(path)?, text).ok().map(Arc::new)
    }
}
