//! Impact: a symbol index built with tree-sitter from the blobs at the commit
//! under review, the symbols a diff changes, who depends on them, and how far
//! a change can reach. Input is plain data (file list, diff, a blob reader);
//! output is plain data (`Impact`) for the prompt and the report.
//!
//! It must not read the checkout, depend on git2, print, or format the
//! prompt: the pipeline turns `Impact::rows` into the table.

mod blast;
mod cache;
mod changes;
mod codec;
mod extract;
mod index;
mod lang;
mod symbols;

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use serde::Serialize;

pub use blast::{ChangedSymbol, Dependents, Site, Stability};
pub use changes::Change;
pub use extract::Extractor;
pub use index::Confidence;
pub use lang::Lang;
pub use symbols::{Def, FileSymbols, Form, Import, Kind, Receiver, Ref, Visibility};

use cache::{Cache, Miss};
use index::{DefId, Index, Manifest, Source};

/// Files larger than this are generated or vendored more often than not;
/// they are listed as skipped rather than indexed.
const MAX_FILE_BYTES: usize = 1 << 20;

/// One file of the tree at the commit under review.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileEntry {
    pub path: String,
    /// Blob id (hex): the cache key.
    pub blob: String,
}

/// Reads blob contents by id. Called from several threads at once.
pub trait Blobs: Sync {
    fn read(&self, blob: &str) -> Result<Vec<u8>, String>;
}

/// What can stop an impact analysis. A file that cannot be read or parsed is
/// not an error: it is listed in `Impact::skipped`.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("the {lang} extraction query does not compile: {message}")]
    Query { lang: &'static str, message: String },
    #[error("the {lang} grammar cannot be loaded: {message}")]
    Grammar { lang: &'static str, message: String },
    #[error("the {lang} parser gave no tree")]
    Parse { lang: &'static str },
    #[error("an indexing thread panicked")]
    Thread,
}

/// A file left out of the index, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    pub path: String,
    pub reason: String,
}

/// Counts and timings of one analysis.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Stats {
    pub files_indexed: usize,
    pub cache_hits: usize,
    pub cache_misses: usize,
    pub extract_ms: u64,
    pub index_ms: u64,
    pub impact_ms: u64,
}

/// The impact of a diff: changed symbols ranked by risk, riskiest first.
/// Serializes as the array of changed symbols (the report's `impact`).
#[derive(Debug, Clone, Default)]
pub struct Impact {
    pub symbols: Vec<ChangedSymbol>,
    /// Files not indexed (unreadable, too large), so no reader mistakes
    /// them for files without dependents.
    pub skipped: Vec<Skipped>,
    /// Problems that cost time or completeness, not correctness of what is
    /// shown (a cache that cannot be written, syntax errors in a file).
    pub warnings: Vec<String>,
    pub stats: Stats,
}

impl Serialize for Impact {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.symbols.serialize(s)
    }
}

/// One line of the prompt's "Impact assessment" table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Row {
    /// `Type::name` and its file, e.g. `Shelf::add (src/shelf.rs:12)`.
    pub symbol: String,
    pub kind: Kind,
    pub change: Change,
    /// Removed or signature changed with references left: the riskiest.
    pub breaking: bool,
    /// Dependent symbols.
    pub dependents: usize,
    /// Files holding a reference.
    pub files: usize,
    pub stability: Stability,
    /// Up to three dependents as `file:line`, production first, one per file.
    pub top: Vec<String>,
}

impl Impact {
    /// The table rows, riskiest first.
    pub fn rows(&self) -> Vec<Row> {
        self.symbols
            .iter()
            .map(|s| {
                let mut seen = std::collections::HashSet::new();
                let top = s
                    .sites
                    .iter()
                    .filter(|site| !site.inside && seen.insert(site.file.as_str()))
                    .take(3)
                    .map(|site| format!("{}:{}", site.file, site.line))
                    .collect();
                Row {
                    symbol: format!("{} ({}:{})", s.symbol, s.file, s.line),
                    kind: s.kind,
                    change: s.change,
                    breaking: s.breaking,
                    dependents: s.dependents.symbols,
                    files: s.dependents.files.len(),
                    stability: s.stability,
                    top,
                }
            })
            .collect()
    }
}

/// How `analyze` may use the extraction cache (the `.speed/cache` folder).
#[derive(Debug, Clone, Copy)]
pub enum CacheUse<'a> {
    Off,
    /// Read entries, never write: a dry run changes nothing.
    Read(&'a Path),
    ReadWrite(&'a Path),
}

/// Analyze the impact of `diff` on the tree `head_files` (the files at the
/// diff's head commit).
pub fn analyze(
    head_files: &[FileEntry],
    diff: &crate::git::Diff,
    blobs: &dyn Blobs,
    cache: CacheUse,
) -> Result<Impact, Error> {
    let mut impact = Impact::default();
    let changed: Vec<&crate::git::FileDiff> = diff
        .files
        .iter()
        .filter(|f| !f.binary)
        .filter(|f| {
            Lang::of_path(&f.path).is_some()
                || f.old_path.as_deref().and_then(Lang::of_path).is_some()
        })
        .collect();
    if changed.is_empty() {
        return Ok(impact);
    }
    let cache = match cache {
        CacheUse::Off => None,
        CacheUse::Read(dir) => Some(Cache::new(dir, false)),
        CacheUse::ReadWrite(dir) => Some(Cache::new(dir, true)),
    };

    // Every head source file plus the base side of changed files, each blob once.
    let t0 = Instant::now();
    let mut jobs: Vec<Job> = Vec::new();
    let mut job_of: HashMap<(String, Lang), usize> = HashMap::new();
    let mut add_job = |blob: &str, lang: Lang, jobs: &mut Vec<Job>| -> usize {
        *job_of.entry((blob.to_string(), lang)).or_insert_with(|| {
            jobs.push(Job {
                blob: blob.to_string(),
                lang,
            });
            jobs.len() - 1
        })
    };
    let mut head_jobs = Vec::new();
    for f in head_files {
        if let Some(lang) = Lang::of_path(&f.path) {
            head_jobs.push((f.path.as_str(), add_job(&f.blob, lang, &mut jobs)));
        }
    }
    let mut base_job: HashMap<usize, usize> = HashMap::new();
    for (i, fd) in changed.iter().enumerate() {
        let old_path = fd.old_path.as_deref().unwrap_or(&fd.path);
        if let (Some(blob), Some(lang)) = (&fd.old_blob, Lang::of_path(old_path)) {
            base_job.insert(i, add_job(blob, lang, &mut jobs));
        }
    }
    let mut results = extract_all(&jobs, blobs, cache.as_ref(), &mut impact)?;
    impact.stats.extract_ms = t0.elapsed().as_millis() as u64;

    let t1 = Instant::now();
    let manifests = manifests(head_files, blobs, &mut impact);
    let mut sources = Vec::with_capacity(head_jobs.len());
    // Move each extraction into the index unless another use still needs it
    // (the base side of a diff, or a second path with the same blob).
    let mut uses = vec![0usize; jobs.len()];
    for (_, j) in &head_jobs {
        uses[*j] += 1;
    }
    for j in base_job.values() {
        uses[*j] += 1;
    }
    for (path, j) in &head_jobs {
        uses[*j] -= 1;
        let result = if uses[*j] == 0 {
            std::mem::replace(&mut results[*j], Err(String::new()))
        } else {
            results[*j].clone()
        };
        match result {
            Ok(syms) => {
                if syms.syntax_errors {
                    impact.warnings.push(format!(
                        "{path}: syntax errors; some references may be missing"
                    ));
                }
                sources.push(Source {
                    path: path.to_string(),
                    lang: jobs[*j].lang,
                    syms,
                });
            }
            Err(reason) => impact.skipped.push(Skipped {
                path: path.to_string(),
                reason,
            }),
        }
    }
    impact.stats.files_indexed = sources.len();
    let mut index = Index::build(sources, &manifests);
    let by_path: HashMap<String, u32> = index
        .files
        .iter()
        .enumerate()
        .map(|(i, f)| (f.path.clone(), i as u32))
        .collect();
    impact.stats.index_ms = t1.elapsed().as_millis() as u64;

    let t2 = Instant::now();
    // (target, change) per changed definition; removals become ghosts.
    let mut targets: Vec<(DefId, Change)> = Vec::new();
    let mut modules: Vec<(&crate::git::FileDiff, Change)> = Vec::new();
    for (i, fd) in changed.iter().enumerate() {
        let old_path = fd.old_path.as_deref().unwrap_or(&fd.path);
        let base = match base_job.get(&i).map(|&j| &results[j]) {
            Some(Ok(s)) => Some(s),
            Some(Err(reason)) => {
                impact.skipped.push(Skipped {
                    path: format!("{old_path} (base side)"),
                    reason: reason.clone(),
                });
                None
            }
            None => None,
        };
        let head_id = if fd.new_blob.is_some() {
            by_path.get(&fd.path).copied()
        } else {
            None
        };
        let head = head_id.map(|id| &index.file(id).syms);
        if base.is_none() && head.is_none() {
            continue;
        }
        let touched = changes::touched(fd, base, head);
        let mut removed = Vec::new();
        for t in touched {
            match (t.def, t.base_side, head_id) {
                (None, _, _) => modules.push((fd, t.change)),
                (Some(d), true, _) => removed.push((d, t.change)),
                (Some(d), false, Some(h)) => targets.push((DefId { file: h, def: d }, t.change)),
                (Some(_), false, None) => {}
            }
        }
        if let (Some(base), false) = (base, removed.is_empty()) {
            let lang = Lang::of_path(old_path).unwrap_or(Lang::Rust);
            let defs: Vec<u32> = removed.iter().map(|r| r.0).collect();
            let ghost = index.add_ghosts(old_path, lang, base.clone(), &defs, &manifests);
            targets.extend(removed.into_iter().map(|(d, c)| {
                (
                    DefId {
                        file: ghost,
                        def: d,
                    },
                    c,
                )
            }));
        }
    }
    let mut symbols = blast::symbols(&index, &targets);
    for (fd, change) in modules {
        let path = if change == Change::Removed {
            fd.old_path.as_deref().unwrap_or(&fd.path)
        } else {
            &fd.path
        };
        symbols.push(module_symbol(path, change));
    }
    symbols.sort_by(|a, b| {
        b.breaking
            .cmp(&a.breaking)
            .then(b.stability.cmp(&a.stability))
            .then(b.dependents.files.len().cmp(&a.dependents.files.len()))
            .then(b.references.cmp(&a.references))
            .then(b.change.cmp(&a.change))
            .then(a.file.cmp(&b.file))
            .then(a.line.cmp(&b.line))
    });
    impact.symbols = symbols;
    impact.stats.impact_ms = t2.elapsed().as_millis() as u64;
    Ok(impact)
}

/// Module-level code of a file (lines outside any definition).
fn module_symbol(path: &str, change: Change) -> ChangedSymbol {
    ChangedSymbol {
        symbol: "(module)".to_string(),
        qualified: path.to_string(),
        kind: Kind::Module,
        file: path.to_string(),
        line: 1,
        change,
        breaking: false,
        stability: Stability::Leaf,
        references: 0,
        dependents: Dependents::default(),
        radius: 0,
        sites: Vec::new(),
        sites_omitted: 0,
        ambiguous: Vec::new(),
        ambiguous_omitted: 0,
    }
}

struct Job {
    blob: String,
    lang: Lang,
}

/// Extract every job, from the cache when possible, on all cores.
fn extract_all(
    jobs: &[Job],
    blobs: &dyn Blobs,
    cache: Option<&Cache>,
    impact: &mut Impact,
) -> Result<Vec<Result<FileSymbols, String>>, Error> {
    for lang in Lang::ALL {
        lang.grammar()?;
    }
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(jobs.len().div_ceil(16))
        .max(1);
    let next = AtomicUsize::new(0);
    let hits = AtomicUsize::new(0);
    let outcome = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut extractor = Extractor::new();
                    let mut done = Vec::new();
                    let mut cache_errors = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(job) = jobs.get(i) else { break };
                        let r = extract_one(
                            job,
                            blobs,
                            cache,
                            &mut extractor,
                            &hits,
                            &mut cache_errors,
                        );
                        done.push((i, r));
                    }
                    (done, cache_errors)
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join()).collect::<Vec<_>>()
    });
    let mut results: Vec<Option<Result<FileSymbols, String>>> =
        (0..jobs.len()).map(|_| None).collect();
    for worker in outcome {
        let (done, cache_errors) = worker.map_err(|_| Error::Thread)?;
        for (i, r) in done {
            results[i] = Some(r.map_err(|e| match e {
                JobError::Skip(reason) => reason,
                JobError::Fatal(e) => e.to_string(),
            }));
        }
        if let Some(first) = cache_errors.first() {
            impact.warnings.push(format!(
                "cache not written for {} file(s): {first}",
                cache_errors.len()
            ));
        }
    }
    let hits = hits.load(Ordering::Relaxed);
    impact.stats.cache_hits = hits;
    impact.stats.cache_misses = jobs.len() - hits;
    results
        .into_iter()
        .map(|r| r.ok_or(Error::Thread))
        .collect()
}

enum JobError {
    Skip(String),
    Fatal(Error),
}

fn extract_one(
    job: &Job,
    blobs: &dyn Blobs,
    cache: Option<&Cache>,
    extractor: &mut Extractor,
    hits: &AtomicUsize,
    cache_errors: &mut Vec<String>,
) -> Result<FileSymbols, JobError> {
    let grammar = job.lang.grammar().map_err(JobError::Fatal)?;
    if let Some(c) = cache {
        match c.get(grammar, &job.blob) {
            Ok(syms) => {
                hits.fetch_add(1, Ordering::Relaxed);
                return Ok(syms);
            }
            Err(Miss::Absent | Miss::Corrupt) => {}
        }
    }
    let bytes = blobs
        .read(&job.blob)
        .map_err(|e| JobError::Skip(format!("blob {} unreadable: {e}", job.blob)))?;
    if bytes.len() > MAX_FILE_BYTES {
        return Err(JobError::Skip(format!(
            "{} bytes, over the {} byte limit for indexing",
            bytes.len(),
            MAX_FILE_BYTES
        )));
    }
    let syms = extractor
        .extract(job.lang, &bytes)
        .map_err(JobError::Fatal)?;
    if let Some(c) = cache {
        if let Err(e) = c.put(grammar, &job.blob, &syms) {
            cache_errors.push(e);
        }
    }
    Ok(syms)
}

/// Rust package names from every `Cargo.toml` with a `[package]` table.
fn manifests(head_files: &[FileEntry], blobs: &dyn Blobs, impact: &mut Impact) -> Vec<Manifest> {
    let mut out = Vec::new();
    for f in head_files {
        let dir = match f.path.strip_suffix("Cargo.toml") {
            Some("") => "",
            Some(d) if d.ends_with('/') => d.trim_end_matches('/'),
            _ => continue,
        };
        let name = blobs
            .read(&f.blob)
            .and_then(|b| String::from_utf8(b).map_err(|e| e.to_string()))
            .and_then(|t| toml::from_str::<toml::Table>(&t).map_err(|e| e.to_string()));
        match name {
            Ok(table) => {
                let name = table
                    .get("package")
                    .and_then(|p| p.get("name"))
                    .and_then(|n| n.as_str());
                if let Some(name) = name {
                    out.push(Manifest {
                        dir: dir.to_string(),
                        name: name.to_string(),
                    });
                }
            }
            Err(e) => impact.skipped.push(Skipped {
                path: f.path.clone(),
                reason: format!("manifest unreadable, crate boundaries guessed: {e}"),
            }),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Mem(HashMap<String, Vec<u8>>);

    impl Blobs for Mem {
        fn read(&self, blob: &str) -> Result<Vec<u8>, String> {
            self.0
                .get(blob)
                .cloned()
                .ok_or_else(|| format!("no blob {blob}"))
        }
    }

    const LIB_BASE: &str =
        "pub mod shelf;\n\npub fn helper(x: u32) -> u32 {\n    x + 1\n}\n\npub fn unused() {}\n";
    const LIB_HEAD: &str = "pub mod shelf;\n\npub fn helper(x: u64) -> u64 {\n    x + 1\n}\n";
    const SHELF: &str = "use crate::helper;\n\npub struct Shelf;\n\nimpl Shelf {\n    pub fn shelve(&self) -> u32 {\n        helper(1)\n    }\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() {\n        assert_eq!(super::Shelf.shelve(), 2);\n        crate::unused();\n    }\n}\n";

    /// A two-file crate where `helper` changes signature and `unused`
    /// (still called from a test) is removed.
    fn scenario() -> (Vec<FileEntry>, crate::git::Diff, Mem) {
        let mut blobs = HashMap::new();
        let mut files = Vec::new();
        for (path, text, blob) in [
            ("Cargo.toml", "[package]\nname = \"demo\"\n", "c0"),
            ("src/lib.rs", LIB_HEAD, "b1"),
            ("src/shelf.rs", SHELF, "b2"),
        ] {
            let blob = blob.repeat(20);
            blobs.insert(blob.clone(), text.as_bytes().to_vec());
            files.push(FileEntry {
                path: path.to_string(),
                blob,
            });
        }
        blobs.insert("a1".repeat(20), LIB_BASE.as_bytes().to_vec());
        let mut fd = changes::tests::diff("src/lib.rs", LIB_BASE, LIB_HEAD);
        fd.old_blob = Some("a1".repeat(20));
        fd.new_blob = Some("b1".repeat(20));
        let diff = crate::git::Diff {
            base_commit: "base".into(),
            head_commit: "head".into(),
            files: vec![fd],
            sha256: String::new(),
        };
        (files, diff, Mem(blobs))
    }

    #[test]
    fn breaking_changes_rank_first_with_their_dependents() {
        let (files, diff, blobs) = scenario();
        let impact = analyze(&files, &diff, &blobs, CacheUse::Off).expect("analysis");
        let summary: Vec<(&str, Change, bool, Stability)> = impact
            .symbols
            .iter()
            .map(|s| (s.symbol.as_str(), s.change, s.breaking, s.stability))
            .collect();
        assert_eq!(
            summary,
            vec![
                ("helper", Change::SignatureChanged, true, Stability::Module),
                ("unused", Change::Removed, true, Stability::Module),
            ]
        );
        let helper = &impact.symbols[0];
        assert_eq!(helper.qualified, "demo::helper");
        assert_eq!(helper.dependents.symbols, 1);
        assert_eq!(
            (helper.dependents.production, helper.dependents.test),
            (1, 0)
        );
        assert_eq!(helper.radius, 2, "Shelf::add, then the test calling it");
        let unused = &impact.symbols[1];
        assert_eq!(
            (unused.dependents.production, unused.dependents.test),
            (0, 1)
        );
        let rows = impact.rows();
        assert_eq!(rows[0].top, vec!["src/shelf.rs:1".to_string()]);
        assert_eq!(rows[1].symbol, "unused (src/lib.rs:7)");
        let json = serde_json::to_value(&impact).expect("serializes");
        assert_eq!(json[0]["change"], "signature_changed");
        assert_eq!(json[1]["sites"][0]["line"], 16);
    }

    #[test]
    fn the_cache_serves_a_second_run_and_survives_damage() {
        let (files, diff, blobs) = scenario();
        let dir = tempfile::tempdir().expect("temporary directory");
        let first = analyze(&files, &diff, &blobs, CacheUse::ReadWrite(dir.path())).expect("cold");
        assert_eq!(first.stats.cache_hits, 0);
        let second = analyze(&files, &diff, &blobs, CacheUse::ReadWrite(dir.path())).expect("warm");
        assert_eq!((second.stats.cache_hits, second.stats.cache_misses), (3, 0));
        assert_eq!(second.symbols, first.symbols);
        // Damage every entry: the next run re-extracts and gives the same answer.
        let mut stack = vec![dir.path().to_path_buf()];
        let mut damaged = 0;
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).expect("cache dir") {
                let p = e.expect("entry").path();
                if p.is_dir() {
                    stack.push(p);
                } else {
                    std::fs::write(&p, b"SPI1\x05garbage").expect("overwrite");
                    damaged += 1;
                }
            }
        }
        assert_eq!(damaged, 3);
        let third =
            analyze(&files, &diff, &blobs, CacheUse::ReadWrite(dir.path())).expect("after damage");
        assert_eq!(third.stats.cache_hits, 0);
        assert_eq!(third.symbols, first.symbols);
    }

    #[test]
    fn a_read_only_cache_is_used_but_never_written() {
        let (files, diff, blobs) = scenario();
        let dir = tempfile::tempdir().expect("temporary directory");
        let cold = analyze(&files, &diff, &blobs, CacheUse::Read(dir.path())).expect("cold");
        assert_eq!(cold.stats.cache_hits, 0);
        assert_eq!(
            std::fs::read_dir(dir.path()).expect("dir").count(),
            0,
            "nothing written"
        );
        analyze(&files, &diff, &blobs, CacheUse::ReadWrite(dir.path())).expect("fill");
        let warm = analyze(&files, &diff, &blobs, CacheUse::Read(dir.path())).expect("warm");
        assert_eq!((warm.stats.cache_hits, warm.stats.cache_misses), (3, 0));
        assert_eq!(warm.symbols, cold.symbols);
    }

    #[test]
    fn unreadable_files_are_listed_not_dropped() {
        let (mut files, diff, blobs) = scenario();
        files.push(FileEntry {
            path: "src/gone.rs".into(),
            blob: "ff".repeat(20),
        });
        let impact = analyze(&files, &diff, &blobs, CacheUse::Off).expect("analysis");
        assert_eq!(impact.skipped.len(), 1);
        assert_eq!(impact.skipped[0].path, "src/gone.rs");
        assert!(impact.skipped[0].reason.contains("unreadable"));
    }

    #[test]
    fn a_diff_without_source_files_indexes_nothing() {
        let (files, mut diff, blobs) = scenario();
        diff.files[0].path = "README.md".into();
        let impact = analyze(&files, &diff, &blobs, CacheUse::Off).expect("analysis");
        assert!(impact.symbols.is_empty());
        assert_eq!(impact.stats.files_indexed, 0);
    }
}
