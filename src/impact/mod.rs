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
mod compat;
mod crates;
mod extract;
mod index;
mod lang;
mod rounds;
mod symbols;
mod words;

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;

pub use blast::{
    ChangedSymbol, Dependent, Dependents, RADIUS_FOLLOWED, RadiusCut, Site, Stability,
};
pub use changes::Change;
pub use extract::Extractor;
pub use index::Confidence;
pub use lang::Lang;
pub use symbols::{Def, FileSymbols, Form, Import, Kind, Receiver, Ref, Visibility};

use blast::ModuleChange;
use cache::Cache;
use crates::{base_layout, manifests};
use index::{DefId, Index, Layout};
use rounds::{
    Plan, Scanned, Slot, first_pass, keep_words, next_batch, next_round, parse_largest_first,
    unparsed_bytes,
};

/// Files larger than this are generated or vendored more often than not;
/// they are listed as skipped rather than indexed.
const MAX_FILE_BYTES: usize = 1 << 20;

/// How long an impact analysis may take before it stops with what it has
/// found, saying so: no input may make a review wait on it for long. Real
/// projects take well under 3 s (see `benches/impact_worst.rs`).
pub const TIME_LIMIT: Duration = Duration::from_secs(20);

/// Above this much unparsed text, a round whose names reach nine tenths of
/// it parses all of it instead: a round costs an index build and a blast
/// computation, more than parsing the last tenth of a large tree. (At half,
/// Django's `QuerySet.filter` parsed all 2786 files instead of 885, and
/// mypy's `expand_type` all 1049 instead of 499: a third more CPU.)
const BATCH_ALL_BYTES: usize = 1 << 20;

/// One file of the tree at the commit under review.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileEntry {
    pub path: String,
    /// Blob id (hex): the cache key.
    pub blob: String,
}

pub use crate::syntax::Blobs;
use crate::syntax::Store;

/// What can stop an impact analysis. A file that cannot be read or parsed is
/// not an error: it is listed in `Impact::skipped`.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Syntax(#[from] crate::syntax::Error),
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
    /// Files whose symbols were extracted or read from the cache: the
    /// others could not change the answer, so they were only scanned.
    pub files_parsed: usize,
    pub cache_hits: usize,
    pub cache_misses: usize,
    /// Unparsed files whose words came from the cache, so their blobs
    /// were not read.
    pub words_cached: usize,
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
    /// Indexed files with syntax errors: references in them may be missing.
    pub syntax_errors: Vec<String>,
    /// Problems that cost time only (a cache that cannot be written).
    pub warnings: Vec<String>,
    /// Where a limit cut the analysis short (a radius followed over only
    /// some dependents, the time limit): what is counted is a lower bound.
    pub limits: Vec<String>,
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
    /// `Type::name` and its file, e.g. `Shelf::add (src/shelf.rs:12)`; a
    /// renamed module as `(module) (src/old.rs → src/new.rs)`.
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
                let top = top_sites(&s.sites);
                let symbol = match &s.renamed_to {
                    Some(to) => format!("{} ({} → {})", s.symbol, s.file, to),
                    None => format!("{} ({}:{})", s.symbol, s.file, s.line),
                };
                Row {
                    symbol,
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

/// Up to three dependents as `file:line`, one per file in the sites' order
/// (production first): in each file its first use, or its import when the
/// file only imports the symbol, since a use is what a reviewer opens.
fn top_sites(sites: &[Site]) -> Vec<String> {
    let mut files: Vec<&str> = Vec::new();
    let mut best: HashMap<&str, &Site> = HashMap::new();
    for site in sites.iter().filter(|s| !s.inside) {
        let chosen = best.entry(site.file.as_str()).or_insert_with(|| {
            files.push(site.file.as_str());
            site
        });
        if chosen.form == Form::Import && site.form != Form::Import {
            *chosen = site;
        }
    }
    files
        .iter()
        .take(3)
        .map(|f| format!("{f}:{}", best[f].line))
        .collect()
}

/// How `analyze` may use the extraction cache (the `.speed/cache` folder).
#[derive(Debug, Clone, Copy)]
pub enum CacheUse<'a> {
    Off,
    /// Read entries, never write: a dry run changes nothing.
    Read(&'a Path),
    ReadWrite(&'a Path),
}

/// Which files of the tree `analyze` parses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parsing {
    /// The changed files, then only the files whose text contains a name
    /// the resolution asks about, round after round until no unparsed file
    /// could change an answer. Same result as `All`, a fraction of the work.
    Needed,
    /// Every source file of the tree: the reference `Needed` is checked
    /// against.
    All,
}

/// Analyze the impact of `diff` on the tree `head_files` (the files at the
/// diff's head commit).
pub fn analyze(
    head_files: &[FileEntry],
    diff: &crate::git::Diff,
    blobs: &dyn Blobs,
    cache: CacheUse,
) -> Result<Impact, Error> {
    analyze_with(head_files, diff, blobs, cache, Parsing::Needed)
}

/// `analyze`, choosing which files are parsed.
pub fn analyze_with(
    head_files: &[FileEntry],
    diff: &crate::git::Diff,
    blobs: &dyn Blobs,
    cache: CacheUse,
    parsing: Parsing,
) -> Result<Impact, Error> {
    analyze_within(head_files, diff, blobs, cache, parsing, TIME_LIMIT)
}

/// `analyze_with`, stopping after `limit`: past it no more files are
/// parsed and names resolve to nothing, so the analysis ends soon after
/// with what it found and a note in `Impact::limits`.
pub fn analyze_within(
    head_files: &[FileEntry],
    diff: &crate::git::Diff,
    blobs: &dyn Blobs,
    cache: CacheUse,
    parsing: Parsing,
    limit: Duration,
) -> Result<Impact, Error> {
    let store = Store::new(blobs);
    analyze_in(&store, head_files, diff, cache, parsing, limit)
}

/// `analyze_within`, taking texts and trees from a review's `store`, so
/// that a file the checks parse too is parsed once (see `syntax::Store`).
pub fn analyze_in(
    store: &Store,
    head_files: &[FileEntry],
    diff: &crate::git::Diff,
    cache: CacheUse,
    parsing: Parsing,
    limit: Duration,
) -> Result<Impact, Error> {
    let blobs = store.blobs();
    let deadline = Instant::now() + limit;
    let mut impact = Impact::default();
    let changed: Vec<&crate::git::FileDiff> = diff
        .files
        .iter()
        .filter(|f| !f.binary)
        // A symlink's blob is its target's path, not code in the language
        // its name suggests: no module of it changed.
        .filter(|f| !f.is_symlink())
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

    let t0 = Instant::now();
    let plan = Plan::new(head_files, &changed, parsing);
    let jobs = &plan.jobs;
    // What changed is parsed in the first pass, whatever the time; a full
    // index parses every file after it, largest first.
    let full = parsing == Parsing::All;
    let parse_now = if full {
        vec![false; jobs.len()]
    } else {
        plan.must.clone()
    };
    let mut slots = first_pass(jobs, &parse_now, store, cache.as_ref(), &mut impact)?;
    if full {
        let all = (0..jobs.len())
            .filter(|&j| matches!(slots[j], Slot::Unparsed(_)))
            .collect();
        parse_largest_first(jobs, all, &mut slots, store, cache.as_ref(), None)?;
    }
    impact.stats.extract_ms = t0.elapsed().as_millis() as u64;

    let t1 = Instant::now();
    let manifests = manifests(head_files, blobs, &mut impact);
    let base_layout = base_layout(head_files, diff, &manifests, blobs, &mut impact);
    impact.stats.index_ms = t1.elapsed().as_millis() as u64;
    let unparsed = unparsed_bytes(&slots, &mut (0..slots.len()));
    let mut scanned = Scanned::default();
    loop {
        let t1 = Instant::now();
        let last = !slots.iter().any(|s| matches!(s, Slot::Unparsed(_)));
        let (mut index, file_job) = plan.index(&slots, &manifests);
        index.set_deadline(Some(deadline));
        if !last {
            index.record();
        }
        impact.stats.index_ms += t1.elapsed().as_millis() as u64;

        let t2 = Instant::now();
        let (mut symbols, base_skips) =
            assess(&mut index, &changed, &plan.base_job, &slots, &base_layout);
        impact.stats.impact_ms += t2.elapsed().as_millis() as u64;
        let out_of_time = index.expired() || Instant::now() >= deadline;
        let (wanted, unread) = if last || out_of_time {
            (Vec::new(), 0)
        } else {
            next_round(&index, &file_job, jobs, &slots, &mut scanned, unparsed)?
        };
        if wanted.is_empty() {
            // The radius is the report's alone (no prompt shows it), so its
            // cut is said there, on each symbol, not in the notices the
            // model reads.
            if unread > 0 {
                for s in symbols.iter_mut().filter(|s| s.followed) {
                    s.radius_unread = Some(unread);
                }
            }
            if out_of_time {
                impact.limits.push(time_limit_note(limit, &slots));
            }
            finish(
                &mut impact,
                &index,
                &file_job,
                symbols,
                base_skips,
                &plan.head_jobs,
                &slots,
            );
            break;
        }
        let batch = next_batch(wanted, &slots, unparsed);
        tracing::debug!(
            "impact round: {} of {} files unparsed, {} to parse",
            slots
                .iter()
                .filter(|s| matches!(s, Slot::Unparsed(_)))
                .count(),
            slots.len(),
            batch.len()
        );
        let t0 = Instant::now();
        parse_largest_first(
            jobs,
            batch,
            &mut slots,
            store,
            cache.as_ref(),
            Some(deadline),
        )?;
        impact.stats.extract_ms += t0.elapsed().as_millis() as u64;
    }
    // A signature change no call can notice breaks nothing.
    compat::unbreak_unnoticed(&mut impact.symbols, &changed, store);
    rank(&mut impact.symbols);
    if let Some(c) = cache.as_ref().filter(|c| c.writable()) {
        keep_words(jobs, &slots, c)?;
        if let Err(e) = c.flush() {
            impact.warnings.push(format!("cache not written: {e}"));
        }
    }
    // Every file's symbols are many small allocations made by the worker
    // threads; freeing those of 5.5 MB of Rust took 8 to 13 ms.
    crate::memory::free_in_background(slots);
    Ok(impact)
}

/// What the time limit cut: files never parsed, and names that stopped
/// resolving.
fn time_limit_note(limit: Duration, slots: &[Slot]) -> String {
    let unparsed = slots
        .iter()
        .filter(|s| matches!(s, Slot::Unparsed(_)))
        .count();
    format!(
        "Impact assessment stopped at its {} s time limit: references resolved after it, and \
         those in the {unparsed} source files not parsed by then, are not counted, so \
         dependents may be missing",
        limit.as_secs_f64()
    )
}

/// The changed symbols with their blast radius, riskiest first, and the
/// base sides that could not be read.
fn assess(
    index: &mut Index,
    changed: &[&crate::git::FileDiff],
    base_job: &HashMap<usize, usize>,
    slots: &[Slot],
    base_layout: &Layout,
) -> (Vec<ChangedSymbol>, Vec<Skipped>) {
    let mut skipped = Vec::new();
    let by_path: HashMap<&str, u32> = index
        .files
        .iter()
        .enumerate()
        .map(|(i, f)| (f.path.as_str(), i as u32))
        .collect();
    let mut head_ids = Vec::with_capacity(changed.len());
    for fd in changed {
        head_ids.push(if fd.new_blob.is_some() {
            by_path.get(fd.path.as_str()).copied()
        } else {
            None
        });
    }
    // (target, change) per changed definition; removals become ghosts.
    let mut targets: Vec<(DefId, Change)> = Vec::new();
    let mut modules: Vec<ModuleChange> = Vec::new();
    for (i, fd) in changed.iter().enumerate() {
        let old_path = fd.old_path.as_deref().unwrap_or(&fd.path);
        let base = match base_job.get(&i).map(|&j| &slots[j]) {
            Some(Slot::Parsed(s)) => Some(s),
            Some(Slot::Failed(reason)) => {
                skipped.push(Skipped {
                    path: format!("{old_path} (base side)"),
                    reason: reason.clone(),
                });
                None
            }
            Some(Slot::Unparsed(_)) | None => None,
        };
        let head_id = head_ids[i];
        let head = head_id.map(|id| &*index.file(id).syms);
        if base.is_none() && head.is_none() {
            continue;
        }
        let touched = changes::touched(fd, base.map(|b| &**b), head);
        let mut removed = Vec::new();
        for t in touched {
            match (t.def, t.base_side, head_id) {
                (None, _, Some(h)) => modules.push(ModuleChange {
                    module: index.file(h).module,
                    file: fd.path.clone(),
                    change: t.change,
                    renamed_to: None,
                }),
                // Base-side module code of a file gone from the head tree:
                // the module's path is gone, reported below with whoever
                // still names it.
                (None, _, None) => {}
                (Some(d), true, _) => removed.push((d, t.change)),
                (Some(d), false, Some(h)) => targets.push((DefId { file: h, def: d }, t.change)),
                (Some(_), false, None) => {}
            }
        }
        if let (Some(base), false) = (base, removed.is_empty()) {
            let lang = Lang::of_path(old_path).unwrap_or(Lang::Rust);
            let defs: Vec<u32> = removed.iter().map(|r| r.0).collect();
            let ghost = index.add_ghosts(old_path, lang, Arc::clone(base), &defs, base_layout);
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
    // Module paths gone with their file, once every ghost is in the index
    // (a removed `mod old;` declares the old path with its visibility).
    for (fd, head_id) in changed.iter().zip(&head_ids) {
        let head_path = head_id.map(|h| index.file(h).path.clone());
        if let Some(gone) = gone_module(index, fd, head_path, base_layout) {
            modules.push(gone);
        }
    }
    // A removed `mod old;` whose path is gone is that module's removal.
    let gone: HashSet<index::ModId> = modules
        .iter()
        .filter(|m| m.change == Change::Removed)
        .map(|m| m.module)
        .collect();
    targets.retain(|&(d, change)| {
        change != Change::Removed
            || index.def(d).kind != Kind::Module
            || !index.opened_module(d).is_some_and(|m| gone.contains(&m))
    });
    let mut symbols = blast::symbols(index, &targets, &modules);
    unbreak_updated(&mut symbols, changed);
    rank(&mut symbols);
    (symbols, skipped)
}

/// Riskiest first: what breaks, then by stability, dependents and place.
fn rank(symbols: &mut [ChangedSymbol]) {
    symbols.sort_by(|a, b| {
        review_order(a)
            .cmp(&review_order(b))
            .then(b.stability.cmp(&a.stability))
            .then(b.dependents.files.len().cmp(&a.dependents.files.len()))
            .then(b.references.cmp(&a.references))
            .then(b.change.cmp(&a.change))
            .then(a.file.cmp(&b.file))
            .then(a.line.cmp(&b.line))
    });
}

/// A changed signature breaks only callers the diff left as they were: a
/// reference on a line the diff wrote was written for the new signature.
fn unbreak_updated(symbols: &mut [ChangedSymbol], changed: &[&crate::git::FileDiff]) {
    let added: HashMap<&str, HashSet<u32>> = changed
        .iter()
        .map(|fd| {
            let lines = fd
                .hunks
                .iter()
                .flat_map(|h| &h.lines)
                .filter(|l| l.kind == crate::git::LineKind::Added)
                .filter_map(|l| l.new_lineno)
                .collect();
            (fd.path.as_str(), lines)
        })
        .collect();
    for s in symbols {
        if s.breaking && s.change == Change::SignatureChanged {
            s.breaking = s.sites.iter().any(|site| {
                !site.inside
                    && !added
                        .get(site.file.as_str())
                        .is_some_and(|l| l.contains(&site.line))
            });
        }
    }
}

/// What a reviewer must look at first: what breaks (a removed or
/// re-signatured symbol still used where the diff does not update it),
/// then every other change by its dependents, and last a type that only
/// gained fields or variants, however many use it: an additive change to
/// a type changes no caller's behaviour.
fn review_order(s: &ChangedSymbol) -> u8 {
    if s.breaking {
        0
    } else if s.change == Change::MembersAdded {
        2
    } else {
        1
    }
}

/// The final answer of `analyze_with`, with what was left out and why.
fn finish(
    impact: &mut Impact,
    index: &Index,
    file_job: &[usize],
    symbols: Vec<ChangedSymbol>,
    base_skips: Vec<Skipped>,
    head_jobs: &[(&str, usize)],
    slots: &[Slot],
) {
    for (path, j) in head_jobs {
        if let Slot::Failed(reason) = &slots[*j] {
            impact.skipped.push(Skipped {
                path: path.to_string(),
                reason: reason.clone(),
            });
        }
    }
    impact.skipped.extend(base_skips);
    let mut parsed = 0;
    for (f, j) in index.files.iter().zip(file_job) {
        if let Slot::Parsed(_) = slots[*j] {
            parsed += 1;
            if f.syms.syntax_errors {
                impact.syntax_errors.push(f.path.clone());
            }
        }
    }
    impact.stats.files_indexed = file_job.len();
    impact.stats.files_parsed = parsed;
    for s in &symbols {
        if let Some(cut) = s.radius_truncated {
            impact.limits.push(format!(
                "Impact assessment: the depth-2 radius of {} ({}:{}) {cut}, so it is a lower bound",
                s.symbol, s.file, s.line
            ));
        }
    }
    impact.symbols = symbols;
}

/// The module of a deleted or renamed file, when its base-side path is no
/// longer any head file's module path (a move between `a.rs` and
/// `a/mod.rs` keeps it): everything still naming it is broken, so it is a
/// removal. A renamed file notes where it went.
fn gone_module(
    index: &mut Index,
    fd: &crate::git::FileDiff,
    head_path: Option<String>,
    base_layout: &Layout,
) -> Option<ModuleChange> {
    let old_path = match fd.status {
        crate::git::FileStatus::Renamed => fd.old_path.as_deref()?,
        crate::git::FileStatus::Deleted => fd.path.as_str(),
        _ => return None,
    };
    let lang = Lang::of_path(old_path)?;
    let module = index.base_module(old_path, lang, base_layout);
    if index.module_has_file(module) {
        return None;
    }
    Some(ModuleChange {
        module,
        file: old_path.to_string(),
        change: Change::Removed,
        renamed_to: head_path,
    })
}

#[cfg(test)]
mod tests;
