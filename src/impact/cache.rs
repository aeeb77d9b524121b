//! The extraction cache under `.speed/cache/impact/`: one file per blob,
//! keyed by blob id, language, and the grammar + query + extractor version.
//! A missing or unreadable entry is a miss; deleting the cache costs time only.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::lang::{Grammar, Lang};
use super::symbols::FileSymbols;

pub struct Cache {
    dir: PathBuf,
    /// A dry run reads entries but never writes any.
    writable: bool,
    /// Each language's entry directory, created once per run rather than
    /// once per entry (a cold run writes hundreds of entries).
    created: [OnceLock<Result<(), String>>; Lang::ALL.len()],
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
            created: std::array::from_fn(|_| OnceLock::new()),
        }
    }

    fn folder(&self, grammar: &Grammar) -> PathBuf {
        self.dir
            .join(format!("{}-{:016x}", grammar.lang.name(), grammar.version))
    }

    fn entry(&self, grammar: &Grammar, blob: &str) -> Option<PathBuf> {
        // Blob ids become file names: accept only hex.
        if blob.len() < 4 || !blob.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        Some(self.folder(grammar).join(blob))
    }

    pub fn get(&self, grammar: &Grammar, blob: &str) -> Result<FileSymbols, Miss> {
        let path = self.entry(grammar, blob).ok_or(Miss::Absent)?;
        let bytes = std::fs::read(&path).map_err(|_| Miss::Absent)?;
        super::codec::decode(&bytes).ok_or(Miss::Corrupt)
    }

    /// Store an entry. It is written in place, without a temporary file and
    /// rename: the name is the blob id, so every writer writes the same
    /// bytes, and a reader that sees half an entry (or one a crash cut
    /// short) gets a decode failure, that is a miss, because the decoder
    /// insists on consuming the whole entry.
    pub fn put(&self, grammar: &Grammar, blob: &str, syms: &FileSymbols) -> Result<(), String> {
        let Some(path) = self.entry(grammar, blob).filter(|_| self.writable) else {
            return Ok(());
        };
        let slot = Lang::ALL
            .iter()
            .position(|l| *l == grammar.lang)
            .unwrap_or(0);
        self.created[slot]
            .get_or_init(|| {
                let dir = self.folder(grammar);
                std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))
            })
            .clone()?;
        std::fs::write(&path, super::codec::encode(syms))
            .map_err(|e| format!("{}: {e}", path.display()))
    }
}
