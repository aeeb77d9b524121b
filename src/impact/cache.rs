//! The extraction cache under `.speed/cache/impact/`: one file per blob,
//! keyed by blob id, language, and the grammar + query + extractor version.
//! A missing or unreadable entry is a miss; deleting the cache costs time only.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::lang::Grammar;
use super::symbols::FileSymbols;

pub struct Cache {
    dir: PathBuf,
    /// A dry run reads entries but never writes any.
    writable: bool,
}

/// Why a cache lookup missed.
pub enum Miss {
    Absent,
    /// The entry exists but does not decode (truncated, older format).
    Corrupt,
}

impl Cache {
    /// `root` is the `.speed/cache` directory.
    pub fn new(root: &Path, writable: bool) -> Cache {
        Cache {
            dir: root.join("impact"),
            writable,
        }
    }

    fn entry(&self, grammar: &Grammar, blob: &str) -> Option<PathBuf> {
        // Blob ids become file names: accept only hex.
        if blob.len() < 4 || !blob.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        Some(
            self.dir
                .join(format!("{}-{:016x}", grammar.lang.name(), grammar.version))
                .join(&blob[..2])
                .join(&blob[2..]),
        )
    }

    pub fn get(&self, grammar: &Grammar, blob: &str) -> Result<FileSymbols, Miss> {
        let path = self.entry(grammar, blob).ok_or(Miss::Absent)?;
        let bytes = std::fs::read(&path).map_err(|_| Miss::Absent)?;
        super::codec::decode(&bytes).ok_or(Miss::Corrupt)
    }

    /// Store an entry atomically (temporary file, then rename), so a reader
    /// never sees half an entry.
    pub fn put(&self, grammar: &Grammar, blob: &str, syms: &FileSymbols) -> Result<(), String> {
        let Some(path) = self.entry(grammar, blob).filter(|_| self.writable) else {
            return Ok(());
        };
        let parent = path
            .parent()
            .ok_or_else(|| format!("{}: no parent directory", path.display()))?;
        std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        let mut tmp = tempfile::NamedTempFile::new_in(parent)
            .map_err(|e| format!("{}: {e}", parent.display()))?;
        tmp.write_all(&super::codec::encode(syms))
            .map_err(|e| format!("{}: {e}", tmp.path().display()))?;
        tmp.persist(&path)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(())
    }
}
