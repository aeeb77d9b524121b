//! The extraction cache under `.speed/cache/impact/`: entries keyed by blob
//! id, language, and the grammar + node table + extractor version, stored in pack
//! files (one per run that extracted something) rather than one file per
//! blob: on a cold run, creating hundreds of small files cost more than
//! parsing them. Each entry carries a checksum, so a damaged byte makes the
//! entry a miss instead of a wrong answer. A missing, unreadable or damaged
//! entry is a miss; deleting the cache costs time only.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use super::lang::{Grammar, Lang};
use super::symbols::FileSymbols;
use super::words::Words;

const PACK_MAGIC: &[u8; 4] = b"SPP2";
/// More packs than this in a folder are merged into one by the next writer.
const MAX_PACKS: usize = 8;

pub struct Cache {
    /// `.speed/cache`.
    root: PathBuf,
    dir: PathBuf,
    /// A dry run reads entries but never writes any.
    writable: bool,
    /// Per language: every entry of the folder's packs, loaded on first use.
    loaded: [OnceLock<Packs>; Lang::ALL.len()],
    /// Per language: entries extracted during this run, written by `flush`.
    fresh: [Mutex<Vec<Entry>>; Lang::ALL.len()],
}

/// A key and its encoded value: a blob id and its symbols, or `words_key`
/// of a blob id and its words.
type Entry = (String, Vec<u8>);

/// Where a blob's words are kept: blob ids are hex, so no symbols entry
/// has this key.
fn words_key(blob: &str) -> String {
    format!("words:{blob}")
}

#[derive(Default)]
struct Packs {
    files: Vec<PathBuf>,
    entries: HashMap<String, Vec<u8>>,
}

/// Why a cache lookup missed.
pub enum Miss {
    Absent,
    /// The entry exists but does not decode (truncated, older format).
    Corrupt,
}

fn slot(lang: Lang) -> usize {
    Lang::ALL.iter().position(|l| *l == lang).unwrap_or(0)
}

impl Cache {
    /// `root` is the `.speed/cache` directory.
    pub fn new(root: &Path, writable: bool) -> Cache {
        Cache {
            root: root.to_path_buf(),
            dir: root.join("impact"),
            writable,
            loaded: std::array::from_fn(|_| OnceLock::new()),
            fresh: std::array::from_fn(|_| Mutex::new(Vec::new())),
        }
    }

    fn folder(&self, lang: Lang, version: u64) -> PathBuf {
        self.dir
            .join(format!("{}-{version:016x}-packs", lang.name()))
    }

    fn packs(&self, grammar: &Grammar) -> &Packs {
        self.loaded[slot(grammar.lang)].get_or_init(|| {
            let mut packs = Packs::default();
            let Ok(list) = std::fs::read_dir(self.folder(grammar.lang, grammar.version)) else {
                return packs;
            };
            let mut files: Vec<PathBuf> = list
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "pack"))
                .collect();
            files.sort();
            for f in files {
                // A pack removed by a concurrent merge, or damaged: its
                // entries are misses.
                if let Ok(bytes) = std::fs::read(&f) {
                    read_pack(&bytes, &mut packs.entries);
                }
                packs.files.push(f);
            }
            packs
        })
    }

    pub fn get(&self, grammar: &Grammar, blob: &str) -> Result<FileSymbols, Miss> {
        let bytes = self.packs(grammar).entries.get(blob).ok_or(Miss::Absent)?;
        super::codec::decode(bytes).ok_or(Miss::Corrupt)
    }

    /// Keep an entry for `flush`.
    pub fn put(&self, grammar: &Grammar, blob: &str, syms: &FileSymbols) {
        self.keep(grammar, blob.to_string(), || super::codec::encode(syms));
    }

    /// The words of a blob no run has parsed yet.
    pub fn get_words(&self, grammar: &Grammar, blob: &str) -> Option<Words> {
        let bytes = self.packs(grammar).entries.get(&words_key(blob))?;
        Words::decode(bytes)
    }

    /// Keep a blob's words for `flush`.
    pub fn put_words(&self, grammar: &Grammar, blob: &str, words: &Words) {
        if blob.is_empty() {
            return;
        }
        self.keep(grammar, words_key(blob), || words.encode());
    }

    fn keep(&self, grammar: &Grammar, key: String, encode: impl FnOnce() -> Vec<u8>) {
        if !self.writable || key.is_empty() || key.len() > 255 {
            return;
        }
        self.fresh[slot(grammar.lang)]
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((key, encode()));
    }

    /// Whether `flush` would write anything: a dry run computes nothing
    /// it cannot keep.
    pub fn writable(&self) -> bool {
        self.writable
    }

    /// Write this run's entries as one pack per language (temporary file,
    /// then rename, so a reader never sees half a pack). With too many
    /// packs, write all entries as one and remove the others.
    pub fn flush(&self) -> Result<(), String> {
        for lang in Lang::ALL {
            let fresh = std::mem::take(
                &mut *self.fresh[slot(lang)]
                    .lock()
                    .unwrap_or_else(|e| e.into_inner()),
            );
            if fresh.is_empty() {
                continue;
            }
            let grammar = crate::impact::lang::grammar(lang).map_err(|e| e.to_string())?;
            let old = self.packs(grammar);
            let merge = old.files.len() >= MAX_PACKS;
            let dir = self.folder(lang, grammar.version);
            crate::fsx::create_dir_all(self.area(), &dir).map_err(|e| e.to_string())?;
            self.ignore_in_git()?;
            let mut out = Vec::with_capacity(1 << 20);
            out.extend_from_slice(PACK_MAGIC);
            let mut written = std::collections::HashSet::new();
            for (blob, bytes) in &fresh {
                if written.insert(blob.as_str()) {
                    write_entry(&mut out, blob, bytes);
                }
            }
            if merge {
                for (blob, bytes) in &old.entries {
                    if written.insert(blob.as_str()) {
                        write_entry(&mut out, blob, bytes);
                    }
                }
            }
            let stamp = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos());
            let path = dir.join(format!("{stamp:032}-{}.pack", std::process::id()));
            crate::fsx::write_atomic(self.area(), &path, &out).map_err(|e| e.to_string())?;
            if merge {
                for f in &old.files {
                    match std::fs::remove_file(f) {
                        Ok(()) => {}
                        // Another run merged them first.
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                        Err(e) => return Err(format!("{}: {e}", f.display())),
                    }
                }
            }
        }
        Ok(())
    }

    /// A `.gitignore` of `*` in the cache root, as cargo and pytest do, so
    /// the cache never shows in `git status` or lands in a commit.
    fn ignore_in_git(&self) -> Result<(), String> {
        let path = self.root.join(".gitignore");
        if path.exists() {
            return Ok(());
        }
        crate::fsx::write_atomic(
            self.area(),
            &path,
            b"# Written by speed: this folder is a cache, safe to delete.\n*\n",
        )
        .map_err(|e| e.to_string())
    }

    /// What the cache's writes are confined to: the folder holding it
    /// (`.speed`), so that a cache folder linked elsewhere is refused.
    fn area(&self) -> &Path {
        self.root.parent().unwrap_or(&self.root)
    }
}

/// One record: blob id length, blob id, entry length, checksum of blob id
/// and entry, entry.
fn write_entry(out: &mut Vec<u8>, blob: &str, bytes: &[u8]) {
    // `put` keeps blob ids under 256 bytes.
    out.push(blob.len() as u8);
    out.extend_from_slice(blob.as_bytes());
    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(&checksum(blob.as_bytes(), bytes).to_le_bytes());
    out.extend_from_slice(bytes);
}

/// The entries of a pack whose checksum holds, up to the first record whose
/// framing is damaged (past it, where records start is unknown).
fn read_pack(bytes: &[u8], into: &mut HashMap<String, Vec<u8>>) {
    let Some(mut rest) = bytes.strip_prefix(PACK_MAGIC) else {
        return;
    };
    while let Some((&n, tail)) = rest.split_first() {
        let n = n as usize;
        let (Some(blob), Some(len), Some(sum)) =
            (tail.get(..n), tail.get(n..n + 4), tail.get(n + 4..n + 12))
        else {
            return;
        };
        let len = u32::from_le_bytes(len.try_into().unwrap_or_default()) as usize;
        let sum = u64::from_le_bytes(sum.try_into().unwrap_or_default());
        let Some(entry) = tail.get(n + 12..n + 12 + len) else {
            return;
        };
        rest = &tail[n + 12 + len..];
        if checksum(blob, entry) != sum {
            continue;
        }
        let Ok(blob) = std::str::from_utf8(blob) else {
            continue;
        };
        into.entry(blob.to_string())
            .or_insert_with(|| entry.to_vec());
    }
}

/// A 64-bit checksum of a record, eight bytes at a time: it catches damage,
/// it is no defence against someone forging entries (nor need it be: whoever
/// can write `.speed/cache` can write the code under review).
fn checksum(blob: &[u8], entry: &[u8]) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut h = (blob.len() as u64) << 32 ^ entry.len() as u64;
    for part in [blob, entry] {
        let mut words = part.chunks_exact(8);
        for w in &mut words {
            let w = u64::from_le_bytes(w.try_into().unwrap_or_default());
            h = (h ^ w).wrapping_mul(K).rotate_left(29);
        }
        let mut tail = [0u8; 8];
        tail[..words.remainder().len()].copy_from_slice(words.remainder());
        h = (h ^ u64::from_le_bytes(tail))
            .wrapping_mul(K)
            .rotate_left(29);
    }
    h ^ (h >> 32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packs_accumulate_then_merge_and_keep_every_entry() {
        let dir = tempfile::tempdir().expect("temporary directory");
        let grammar = crate::impact::lang::grammar(Lang::Rust).expect("grammar");
        let blobs: Vec<String> = (0..12).map(|i| format!("{i:02x}").repeat(20)).collect();
        for b in &blobs {
            let cache = Cache::new(dir.path(), true);
            assert!(matches!(cache.get(grammar, b), Err(Miss::Absent)));
            cache.put(grammar, b, &FileSymbols::default());
            cache.flush().expect("flush");
        }
        let folder = Cache::new(dir.path(), false).folder(Lang::Rust, grammar.version);
        let packs = std::fs::read_dir(folder).expect("folder").count();
        assert!(packs <= MAX_PACKS, "{packs} packs left unmerged");
        let cache = Cache::new(dir.path(), false);
        for b in &blobs {
            assert!(cache.get(grammar, b).is_ok(), "{b} lost");
        }
    }

    #[test]
    fn a_truncated_pack_keeps_its_whole_entries() {
        let mut out = PACK_MAGIC.to_vec();
        write_entry(&mut out, "aa", b"first");
        write_entry(&mut out, "bb", b"second");
        let mut entries = HashMap::new();
        read_pack(&out[..out.len() - 2], &mut entries);
        assert_eq!(entries.len(), 1);
        assert_eq!(entries["aa"], b"first");
    }

    #[test]
    fn a_flipped_byte_loses_its_entry_only() {
        let mut out = PACK_MAGIC.to_vec();
        write_entry(&mut out, "aa", b"first entry");
        let second = out.len();
        write_entry(&mut out, "bb", b"second entry");
        write_entry(&mut out, "cc", b"third entry");
        // The second record: id length (1), id (2), entry length (4),
        // checksum (8), entry (12). Damage to its id, checksum or entry
        // loses that entry and no other.
        let id = second + 1..second + 3;
        let sum_and_entry = second + 7..second + 27;
        for at in id.chain(sum_and_entry) {
            let mut damaged = out.clone();
            damaged[at] ^= 0x10;
            let mut entries = HashMap::new();
            read_pack(&damaged, &mut entries);
            let keys: Vec<&str> = {
                let mut k: Vec<&str> = entries.keys().map(String::as_str).collect();
                k.sort_unstable();
                k
            };
            assert_eq!(keys, ["aa", "cc"], "byte {at}");
            assert_eq!(entries["cc"], b"third entry");
        }
    }
}
