//! Impact benchmark (run on demand: `cargo bench --bench impact`).
//!
//! Indexes about 5 MB of real Rust source (crates from the local cargo
//! registry, or `IMPACT_BENCH_DIR`), with a diff touching 20 functions, and
//! prints: the cold run (empty cache; only the files that can change the
//! answer are parsed), the full cold index of every file, the floor under
//! both (tree-sitter alone parsing every file, nothing extracted: on a
//! shared machine whose speed drifts, the ratio to it is the steadier
//! figure), the warm run (every file a cache hit), and the impact
//! computation alone once indexed. It first checks that the prefiltered
//! analysis equals the full index.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};
use speed::git::{Diff, FileDiff, FileStatus, Hunk, Line, LineKind};
use speed::impact::{self, Blobs, Extractor, FileEntry, Kind, Lang};

const TARGET_BYTES: usize = 5_000_000;
/// How far past the target a corpus of whole crates may go: the speed aim
/// is stated for 5 MB, so the corpus is as close to that as whole crates
/// allow.
const SLACK_BYTES: usize = 100_000;
const CHANGED: usize = 20;
const RUNS: usize = 5;
const PAIRS: usize = 9;

struct Tree {
    files: Vec<FileEntry>,
    blobs: HashMap<String, Vec<u8>>,
}

impl Blobs for Tree {
    fn read(&self, blob: &str) -> Result<Vec<u8>, String> {
        self.blobs
            .get(blob)
            .cloned()
            .ok_or_else(|| format!("no blob {blob}"))
    }
}

fn registry_dir() -> Option<PathBuf> {
    if let Ok(d) = std::env::var("IMPACT_BENCH_DIR") {
        return Some(PathBuf::from(d));
    }
    let home = std::env::var("HOME").ok()?;
    let src = Path::new(&home).join(".cargo/registry/src");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(src)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    dirs.sort();
    dirs.into_iter().next()
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs")
            || p.file_name().is_some_and(|n| n == "Cargo.toml")
        {
            out.push(p);
        }
    }
}

/// Whole crates, largest-first among those under 2.5 MB, one version of
/// each crate, skipping any that would pass 5.1 MB, until 5 MB of `.rs`.
fn load_corpus(root: &Path) -> (Tree, Vec<String>, usize) {
    let mut crates: Vec<(usize, PathBuf, Vec<PathBuf>)> = Vec::new();
    if let Ok(entries) = std::fs::read_dir(root) {
        for e in entries.flatten() {
            let mut files = Vec::new();
            walk(&e.path(), &mut files);
            let size: usize = files
                .iter()
                .filter(|f| f.extension().is_some_and(|x| x == "rs"))
                .map(|f| std::fs::metadata(f).map_or(0, |m| m.len() as usize))
                .sum();
            crates.push((size, e.path(), files));
        }
    }
    crates.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut tree = Tree {
        files: Vec::new(),
        blobs: HashMap::new(),
    };
    let mut names = Vec::new();
    let mut taken = std::collections::HashSet::new();
    let mut total = 0;
    for (size, dir, files) in crates {
        if size > 2_500_000 || size == 0 || total + size > TARGET_BYTES + SLACK_BYTES {
            continue;
        }
        // `syn-3.0.9` and `syn-3.0.4` are nearly the same text.
        let dir_name = dir.file_name().map(|n| n.to_string_lossy().to_string());
        let crate_name = dir_name
            .as_deref()
            .and_then(|n| n.rsplit_once('-').map(|(c, _)| c.to_string()))
            .unwrap_or_default();
        if !taken.insert(crate_name) {
            continue;
        }
        total += size;
        names.push(
            dir.file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_default(),
        );
        for f in files {
            let bytes = std::fs::read(&f).unwrap_or_default();
            let blob: String = Sha256::digest(&bytes)
                .iter()
                .take(20)
                .map(|b| format!("{b:02x}"))
                .collect();
            let rel = f
                .strip_prefix(root)
                .unwrap_or(&f)
                .to_string_lossy()
                .replace('\\', "/");
            tree.files.push(FileEntry {
                path: rel,
                blob: blob.clone(),
            });
            tree.blobs.insert(blob, bytes);
        }
        if total >= TARGET_BYTES {
            break;
        }
    }
    (tree, names, total)
}

/// Touch the first line of `changed` functions spread over the corpus.
fn diff_of(tree: &Tree, changed: usize) -> Diff {
    let rust: Vec<&FileEntry> = tree
        .files
        .iter()
        .filter(|f| f.path.ends_with(".rs"))
        .collect();
    // First public function of files spread evenly over the corpus.
    let step = (rust.len() / (CHANGED * 4)).max(1);
    let mut extractor = Extractor::new();
    let mut picks = Vec::new();
    for f in rust.iter().step_by(step) {
        let bytes = &tree.blobs[&f.blob];
        let Ok(syms) = extractor.extract(Lang::Rust, bytes) else {
            continue;
        };
        if let Some(def) = syms.defs.iter().find(|d| {
            matches!(d.kind, Kind::Function | Kind::Method)
                && d.visibility == impact::Visibility::Public
        }) {
            picks.push((*f, def.start_line));
        }
    }
    let stride = (picks.len() / changed).max(1);
    let mut files = Vec::new();
    for &(f, l) in picks.iter().step_by(stride).take(changed) {
        let bytes = &tree.blobs[&f.blob];
        let text = String::from_utf8_lossy(bytes);
        let line = text.lines().nth(l as usize - 1).unwrap_or("").to_string();
        files.push(FileDiff {
            path: f.path.clone(),
            old_path: None,
            similarity: None,
            status: FileStatus::Modified,
            binary: false,
            old_mode: Some(0o100644),
            new_mode: Some(0o100644),
            old_blob: Some(f.blob.clone()),
            new_blob: Some(f.blob.clone()),
            hunks: vec![Hunk {
                old_start: l,
                old_lines: 1,
                new_start: l,
                new_lines: 1,
                context: String::new(),
                lines: vec![
                    Line {
                        kind: LineKind::Removed,
                        old_lineno: Some(l),
                        new_lineno: None,
                        text: line.clone(),
                        no_newline: false,
                    },
                    Line {
                        kind: LineKind::Added,
                        old_lineno: None,
                        new_lineno: Some(l),
                        text: line,
                        no_newline: false,
                    },
                ],
            }],
            additions: 1,
            deletions: 1,
            not_utf8: false,
        });
    }
    Diff {
        base_commit: "base".into(),
        head_commit: "head".into(),
        files,
        sha256: String::new(),
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// User plus system CPU time of this process so far: on a shared machine
/// it moves less than wall time, and over wall time it shows how much of
/// the second core a run used.
fn cpu() -> Duration {
    // SAFETY: getrusage only writes the struct it is given.
    let usage = unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut u);
        u
    };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// Wall and CPU time of `RUNS` runs of `f`: (median wall, fastest wall,
/// median CPU), in milliseconds.
fn measure(mut f: impl FnMut()) -> (f64, f64, f64) {
    let (mut wall, mut used) = (Vec::new(), Vec::new());
    for _ in 0..RUNS {
        let (t, c) = (Instant::now(), cpu());
        f();
        wall.push(ms(t.elapsed()));
        used.push(ms(cpu() - c));
    }
    let fastest = wall.iter().copied().fold(f64::INFINITY, f64::min);
    (median(wall), fastest, median(used))
}

/// Parse every Rust file of the corpus and drop the tree, on all cores,
/// largest first, as the index does: what tree-sitter alone costs, the
/// floor under any cold index built on it.
fn parse_only(tree: &Tree) {
    let mut texts: Vec<&[u8]> = tree
        .files
        .iter()
        .filter(|f| f.path.ends_with(".rs"))
        .map(|f| tree.blobs[&f.blob].as_slice())
        .collect();
    texts.sort_by_key(|t| std::cmp::Reverse(t.len()));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let language: tree_sitter::Language = tree_sitter_rust::LANGUAGE.into();
    std::thread::scope(|scope| {
        for _ in 0..cores {
            scope.spawn(|| {
                let mut parser = tree_sitter::Parser::new();
                parser.set_language(&language).expect("Rust grammar");
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(text) = texts.get(i) else { break };
                    drop(parser.parse(text, None));
                }
            });
        }
    });
}

/// Analyze `diff` on `tree` with its cache in `dir`.
fn analyze_cached(
    tree: &Tree,
    diff: &Diff,
    dir: &Path,
    parsing: impact::Parsing,
) -> impact::Impact {
    impact::analyze_with(
        &tree.files,
        diff,
        tree,
        impact::CacheUse::ReadWrite(dir),
        parsing,
    )
    .expect("analysis with a cache")
}

/// The allocator the `speed` binary uses.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    // As the binary does.
    speed::memory::prefer_small_pages();
    let Some(root) = registry_dir() else {
        eprintln!("no corpus: set IMPACT_BENCH_DIR or populate ~/.cargo/registry/src");
        return;
    };
    let (tree, crates, bytes) = load_corpus(&root);
    let diff = diff_of(&tree, CHANGED);
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "corpus: {} files, {:.2} MB of Rust from {} crates ({})",
        tree.files.len(),
        bytes as f64 / 1e6,
        crates.len(),
        crates.join(", ")
    );
    println!("machine: {cpu}, {cores} cores available");
    println!("diff: {} changed functions", diff.files.len());

    // The prefiltered analysis must give the full index's answer.
    let full = impact::analyze_with(
        &tree.files,
        &diff,
        &tree,
        impact::CacheUse::Off,
        impact::Parsing::All,
    )
    .expect("full analysis");
    let needed = impact::analyze(&tree.files, &diff, &tree, impact::CacheUse::Off)
        .expect("prefiltered analysis");
    assert_eq!(
        needed.symbols, full.symbols,
        "the prefiltered analysis differs from the full index"
    );
    assert_eq!(needed.skipped, full.skipped);
    println!(
        "check: prefiltered analysis = full index ({} symbols); files parsed {} of {} in the tree",
        needed.symbols.len(),
        needed.stats.files_parsed,
        needed.stats.files_indexed
    );

    // Cold: a fresh cache directory per run, created outside the timing.
    let cold = |parsing: impact::Parsing| {
        let dirs: Vec<tempfile::TempDir> = (0..RUNS)
            .map(|_| tempfile::tempdir().expect("temporary cache directory"))
            .collect();
        let mut next = dirs.iter();
        let mut extract = Vec::new();
        let timing = measure(|| {
            let dir = next.next().expect("one directory per run");
            let result = analyze_cached(&tree, &diff, dir.path(), parsing);
            extract.push(result.stats.extract_ms as f64);
        });
        (timing, median(extract))
    };
    let nocache = |parsing: impact::Parsing| {
        measure(|| {
            impact::analyze_with(&tree.files, &diff, &tree, impact::CacheUse::Off, parsing)
                .expect("uncached analysis");
        })
    };
    let (cold_t, cold_extract) = cold(impact::Parsing::Needed);
    let nocache_t = nocache(impact::Parsing::Needed);
    let (full_t, full_extract) = cold(impact::Parsing::All);
    let full_nocache_t = nocache(impact::Parsing::All);
    let floor_t = measure(|| parse_only(&tree));
    let show = |(median, fastest, cpu): (f64, f64, f64)| {
        format!("median {median:.0} ms (fastest {fastest:.0} ms; CPU {cpu:.0} ms)")
    };

    // Warm: a cache holding every file of the tree (a full index filled it).
    let cache = tempfile::tempdir().expect("temporary cache directory");
    analyze_cached(&tree, &diff, cache.path(), impact::Parsing::All);
    let mut warm = Vec::new();
    let mut warm_extract = Vec::new();
    let mut impact_ms = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        let result = impact::analyze(
            &tree.files,
            &diff,
            &tree,
            impact::CacheUse::ReadWrite(cache.path()),
        )
        .expect("warm analysis");
        warm.push(ms(t.elapsed()));
        warm_extract.push(result.stats.extract_ms as f64);
        assert_eq!(result.stats.cache_misses, 0, "warm run missed the cache");
        assert_eq!(result.symbols, full.symbols, "warm run differs");
        impact_ms.push(result.stats.impact_ms as f64);
    }
    println!(
        "cold analysis (empty cache, prefiltered, what a first review pays): {}; reading and extraction {cold_extract:.0} ms",
        show(cold_t)
    );
    println!(
        "cold analysis without a cache directory: {}",
        show(nocache_t)
    );
    println!(
        "full cold index of the whole corpus (empty cache, every file parsed): {}; extraction {full_extract:.0} ms",
        show(full_t)
    );
    // The aim is a rate (5 MB in 400 ms), so say it for corpora off 5 MB.
    let rate = bytes as f64 / 1e6 / (full_t.0 / 1000.0);
    println!(
        "full cold index rate: {rate:.1} MB/s at the median, so 5 MB in {:.0} ms",
        5.0 / rate * 1000.0
    );
    println!(
        "full index without a cache directory: {}",
        show(full_nocache_t)
    );
    println!(
        "floor: tree-sitter alone parsing and freeing every file on all cores, nothing extracted: {}",
        show(floor_t)
    );
    // The ratio moves less than the times when the machine's speed drifts,
    // the more so when both halves of each are measured back to back.
    let mut ratios = Vec::new();
    for _ in 0..PAIRS {
        let dir = tempfile::tempdir().expect("temporary cache directory");
        let t = Instant::now();
        analyze_cached(&tree, &diff, dir.path(), impact::Parsing::All);
        let full = ms(t.elapsed());
        let t = Instant::now();
        parse_only(&tree);
        ratios.push(full / ms(t.elapsed()));
    }
    let (low, high) = (
        ratios.iter().copied().fold(f64::INFINITY, f64::min),
        ratios.iter().copied().fold(0.0, f64::max),
    );
    println!(
        "full cold index / floor, {PAIRS} back-to-back pairs: median {:.2}x (from {low:.2}x to {high:.2}x); the aim's rate (5 MB in 400 ms) at the floor's median above would be {:.2}x",
        median(ratios),
        400.0 * bytes as f64 / 5e6 / floor_t.0
    );

    // A one-function change: what the prefilter does when few names are asked about.
    let one = diff_of(&tree, 1);
    let mut one_ms = Vec::new();
    let mut one_parsed = 0;
    for _ in 0..3 {
        let dir = tempfile::tempdir().expect("temporary cache directory");
        let t = Instant::now();
        let r = impact::analyze(
            &tree.files,
            &one,
            &tree,
            impact::CacheUse::ReadWrite(dir.path()),
        )
        .expect("cold analysis of one change");
        one_ms.push(ms(t.elapsed()));
        one_parsed = r.stats.files_parsed;
    }
    let one_full = impact::analyze_with(
        &tree.files,
        &one,
        &tree,
        impact::CacheUse::Off,
        impact::Parsing::All,
    )
    .expect("full analysis of one change");
    let one_needed = impact::analyze(&tree.files, &one, &tree, impact::CacheUse::Off)
        .expect("prefiltered analysis of one change");
    assert_eq!(one_needed.symbols, one_full.symbols, "one change: differs");
    println!(
        "cold analysis of a 1-function change (empty cache, prefiltered, same as the full index): median {:.0} ms, files parsed {one_parsed} of {}",
        median(one_ms),
        one_needed.stats.files_indexed
    );

    // The same change again, with what that review left in the cache: the
    // files it parsed, and the words of those it only read.
    let dir = tempfile::tempdir().expect("temporary cache directory");
    let cache = impact::CacheUse::ReadWrite(dir.path());
    impact::analyze(&tree.files, &one, &tree, cache).expect("first review");
    let mut again_ms = Vec::new();
    let mut words = 0;
    for _ in 0..5 {
        let t = Instant::now();
        let r = impact::analyze(&tree.files, &one, &tree, cache).expect("second review");
        again_ms.push(ms(t.elapsed()));
        assert_eq!(r.symbols, one_full.symbols, "second review differs");
        words = r.stats.words_cached;
    }
    println!(
        "the 1-function change reviewed again: median {:.0} ms ({words} files known by their cached words, not read)",
        median(again_ms)
    );
    println!(
        "warm (all cache hits, whole analysis): median {:.0} ms (cache reads {:.0} ms)",
        median(warm),
        median(warm_extract)
    );
    println!(
        "impact of the {}-symbol change once indexed: median {:.0} ms",
        full.symbols.len(),
        median(impact_ms)
    );
}
