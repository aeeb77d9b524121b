//! Worst cases of the blast radius on real projects (run on demand:
//! `cargo bench --bench impact_worst`).
//!
//! Each case is a one-line change inside one definition of a real project
//! (a hub symbol everybody calls, an `@overload` stub next to a bundled
//! typeshed, a trait item with many implementations), analyzed cold: no
//! cache, only the files that can change the answer parsed, as a first dry
//! run does. It prints, per case, the time, what was parsed, the reference
//! sites, dependents and radius found, and whether a limit cut the work.
//!
//! The projects are read from the folders named by `IMPACT_WORST_DIR`
//! (separated by `:`; default `~/corpus/py`, `~/corpus/rs` and every
//! folder under `~/.cargo/registry/src`), each project by the name of its
//! unpacked folder, the newest version found. ripgrep is its source tree
//! (`ripgrep-<version>`, every crate of the workspace) when there is one,
//! else its crates from the registry. To fill them (as for
//! `benches/floor.rs`):
//!
//! ```sh
//! mkdir -p ~/corpus/py && cd ~/corpus/py
//! pip download --no-deps --no-binary :all: mypy==1.13.0 django==5.1.3 flask==3.1.0 requests==2.32.3
//! for f in *.tar.gz; do tar xzf "$f"; done
//! git clone -q https://github.com/BurntSushi/ripgrep /tmp/rg && git -C /tmp/rg archive 15.1.0 \
//!   | (mkdir -p ~/corpus/rs/ripgrep-15.1.0 && tar x -C ~/corpus/rs/ripgrep-15.1.0)
//! cargo fetch   # in speed's checkout: tokio, one of speed's dependencies
//! ```
//!
//! `IMPACT_WORST_CASE=<text>` runs only the cases whose label holds it.
//! `IMPACT_SITES=<project>` instead prints speed's reference sites for
//! sampled definitions of the project, for `benches/impact_score.py`
//! (`IMPACT_SITES_COUNT`, default 80; `IMPACT_SITES_ONLY=<text>` keeps the
//! sampled definitions whose `file:line name` holds the text).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};
use speed::git::{Diff, FileDiff, FileStatus, Hunk, Line, LineKind};
use speed::impact::{self, Blobs, Extractor, FileEntry, Lang};

/// A project: the prefixes of the unpacked folders that make it up (the
/// version follows the prefix). When the first is found (ripgrep's whole
/// source tree), it is the project alone: the others are its crates as
/// the registry holds them, for a machine without the source.
struct Project {
    name: &'static str,
    folders: &'static [&'static str],
}

const PROJECTS: &[Project] = &[
    Project {
        name: "mypy",
        folders: &["mypy-"],
    },
    Project {
        name: "django",
        folders: &["Django-", "django-"],
    },
    Project {
        name: "flask",
        folders: &["flask-"],
    },
    Project {
        name: "requests",
        folders: &["requests-"],
    },
    Project {
        name: "tokio",
        folders: &["tokio-"],
    },
    Project {
        name: "ripgrep",
        folders: &[
            "ripgrep-",
            "grep-",
            "grep-cli-",
            "grep-matcher-",
            "grep-printer-",
            "grep-regex-",
            "grep-searcher-",
            "grep-pcre2-",
            "ignore-",
            "globset-",
        ],
    },
    // Scored only (`IMPACT_SITES=hyper`): a project the resolution rules
    // were not made on, to check that they carry over.
    Project {
        name: "hyper",
        folders: &["hyper-"],
    },
];

/// One change: in `project`, the file ending with `file`, the `nth`
/// definition shown as `symbol` (`Class.method`, `Type::method`, `name`).
struct Case {
    project: &'static str,
    file: &'static str,
    symbol: &'static str,
    nth: usize,
    why: &'static str,
}

const CASES: &[Case] = &[
    Case {
        project: "mypy",
        file: "mypy/expandtype.py",
        symbol: "expand_type",
        nth: 0,
        why: "an @overload stub of a hub function",
    },
    Case {
        project: "mypy",
        file: "mypy/types.py",
        symbol: "get_proper_type",
        nth: 0,
        why: "an @overload stub of the biggest hub",
    },
    Case {
        project: "mypy",
        file: "mypy/types.py",
        symbol: "get_proper_type",
        nth: 2,
        why: "the implementation of the biggest hub",
    },
    Case {
        project: "mypy",
        file: "mypy/nodes.py",
        symbol: "Node.accept",
        nth: 0,
        why: "a method every visitor calls by name",
    },
    Case {
        project: "django",
        file: "django/db/models/query.py",
        symbol: "QuerySet.filter",
        nth: 0,
        why: "a hub method",
    },
    Case {
        project: "django",
        file: "django/utils/translation/__init__.py",
        symbol: "gettext",
        nth: 0,
        why: "a function imported everywhere",
    },
    Case {
        project: "flask",
        file: "src/flask/sansio/app.py",
        symbol: "App.add_url_rule",
        nth: 0,
        why: "a base-class method in a namespace package",
    },
    Case {
        project: "flask",
        file: "src/flask/app.py",
        symbol: "Flask.__init__",
        nth: 0,
        why: "a constructor",
    },
    Case {
        project: "requests",
        file: "src/requests/sessions.py",
        symbol: "Session.request",
        nth: 0,
        why: "the method every helper calls",
    },
    Case {
        project: "requests",
        file: "src/requests/models.py",
        symbol: "Response.json",
        nth: 0,
        why: "a method on returned values",
    },
    Case {
        project: "tokio",
        file: "src/runtime/handle.rs",
        symbol: "Handle::current",
        nth: 0,
        why: "a hub associated function",
    },
    Case {
        project: "tokio",
        file: "src/io/interest.rs",
        symbol: "Interest",
        nth: 0,
        why: "a type re-exported inside cfg macros",
    },
    Case {
        project: "ripgrep",
        file: "src/searcher/mod.rs",
        symbol: "Searcher::new",
        nth: 0,
        why: "a stop-listed constructor",
    },
    Case {
        project: "ripgrep",
        file: "src/lib.rs",
        symbol: "Matcher::find",
        nth: 0,
        why: "a trait item with many implementations",
    },
    Case {
        project: "ripgrep",
        file: "src/walk.rs",
        symbol: "WalkBuilder::new",
        nth: 0,
        why: "a builder",
    },
];

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

/// The folders projects are looked for in.
fn corpus_dirs() -> Vec<PathBuf> {
    if let Ok(list) = std::env::var("IMPACT_WORST_DIR") {
        return list.split(':').map(PathBuf::from).collect();
    }
    let Ok(home) = std::env::var("HOME") else {
        return Vec::new();
    };
    let home = PathBuf::from(home);
    let mut dirs = vec![home.join("corpus/py"), home.join("corpus/rs")];
    if let Ok(entries) = std::fs::read_dir(home.join(".cargo/registry/src")) {
        let mut found: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        found.sort();
        dirs.extend(found);
    }
    dirs
}

/// The newest folder (by version, numerically) of each prefix:
/// `<prefix><digit>…`; the first prefix's alone when it is found.
fn project_folders(dirs: &[PathBuf], project: &Project) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for (i, prefix) in project.folders.iter().enumerate() {
        let version = |p: &Path| -> Vec<u64> {
            let name = p.file_name().unwrap_or_default().to_string_lossy();
            name[prefix.len()..]
                .split(['.', '-'])
                .map(|x| x.parse().unwrap_or(0))
                .collect()
        };
        let mut best: Option<PathBuf> = None;
        for dir in dirs {
            let Ok(entries) = std::fs::read_dir(dir) else {
                continue;
            };
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().to_string();
                let versioned = name
                    .strip_prefix(prefix)
                    .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()));
                if versioned
                    && e.path().is_dir()
                    && best
                        .as_ref()
                        .is_none_or(|b| version(&e.path()) > version(b))
                {
                    best = Some(e.path());
                }
            }
        }
        if i == 0 && project.folders.len() > 1 && best.is_some() {
            return best.into_iter().collect();
        }
        out.extend(best);
    }
    out
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        let name = p.file_name().map(|n| n.to_string_lossy().to_string());
        if name.as_deref().is_some_and(|n| n.starts_with('.')) {
            continue;
        }
        if p.is_dir() {
            walk(&p, out);
        } else if Lang::of_path(&p.to_string_lossy()).is_some()
            || name.as_deref() == Some("Cargo.toml")
        {
            out.push(p);
        }
    }
}

fn blob_id(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .take(20)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The project's files as one tree: paths relative to the folder holding
/// its folders, so several crates sit side by side as in a workspace.
fn load(folders: &[PathBuf]) -> Tree {
    let mut tree = Tree {
        files: Vec::new(),
        blobs: HashMap::new(),
    };
    for folder in folders {
        let root = folder.parent().unwrap_or(folder);
        let mut files = Vec::new();
        walk(folder, &mut files);
        for f in files {
            let bytes = std::fs::read(&f).unwrap_or_default();
            let blob = blob_id(&bytes);
            let rel = f.strip_prefix(root).unwrap_or(&f).to_string_lossy();
            tree.files.push(FileEntry {
                path: rel.replace('\\', "/"),
                blob: blob.clone(),
            });
            tree.blobs.insert(blob, bytes);
        }
    }
    tree
}

/// A diff touching the line of the case's definition's name (same text on
/// both sides: a body change of that definition).
fn diff_of(tree: &Tree, case: &Case) -> Result<(Diff, String), String> {
    let mut extractor = Extractor::new();
    for f in &tree.files {
        if !f.path.ends_with(case.file) {
            continue;
        }
        let lang = Lang::of_path(&f.path).ok_or("not a source file")?;
        let syms = extractor
            .extract(lang, &tree.blobs[&f.blob])
            .map_err(|e| format!("{}: {e}", f.path))?;
        let Some(def) = (0..syms.defs.len())
            .filter(|&i| syms.display_name(i, lang.member_separator()) == case.symbol)
            .nth(case.nth)
            .map(|i| &syms.defs[i])
        else {
            continue;
        };
        return Ok((
            line_diff(tree, f, def.line),
            format!("{}:{}", f.path, def.line),
        ));
    }
    Err(format!("{} not found in {}", case.symbol, case.file))
}

/// A diff touching line `l` of file `f` (same text on both sides).
fn line_diff(tree: &Tree, f: &FileEntry, l: u32) -> Diff {
    let text = String::from_utf8_lossy(&tree.blobs[&f.blob]);
    let line = text.lines().nth(l as usize - 1).unwrap_or("").to_string();
    let at = |kind, old: Option<u32>, new: Option<u32>| Line {
        kind,
        old_lineno: old,
        new_lineno: new,
        text: line.clone(),
        no_newline: false,
    };
    let fd = FileDiff {
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
                at(LineKind::Removed, Some(l), None),
                at(LineKind::Added, None, Some(l)),
            ],
        }],
        additions: 1,
        deletions: 1,
        not_utf8: false,
    };
    Diff {
        base_commit: "base".into(),
        head_commit: "head".into(),
        files: vec![fd],
        sha256: String::new(),
    }
}

/// For `benches/impact_score.py`: `count` definitions of `project` spread
/// evenly over its non-test files (functions, methods, classes, structs,
/// enums, traits), each analyzed alone, printed one JSON object a line:
/// the definition's file, line, column, name and kind, and speed's sites
/// (those inside the definition itself too, marked).
fn dump_sites(project: &Project, tree: &Tree, count: usize) {
    let mut extractor = Extractor::new();
    let mut defs: Vec<(&FileEntry, impact::Def)> = Vec::new();
    for f in &tree.files {
        let Some(lang) = Lang::of_path(&f.path) else {
            continue;
        };
        let test = f.path.split('/').any(|p| {
            matches!(
                p,
                "tests" | "test" | "testing" | "benches" | "examples" | "typeshed"
            ) || p.starts_with("test_")
        });
        if test || f.path.ends_with(".pyi") {
            continue;
        }
        let Ok(syms) = extractor.extract(lang, &tree.blobs[&f.blob]) else {
            continue;
        };
        for d in &syms.defs {
            use impact::Kind::*;
            if matches!(d.kind, Function | Method | Class | Struct | Enum | Trait) && !d.test {
                defs.push((f, d.clone()));
            }
        }
    }
    let step = (defs.len() / count.max(1)).max(1);
    let only = std::env::var("IMPACT_SITES_ONLY").ok();
    for (f, def) in defs.into_iter().step_by(step).take(count) {
        let line = def.line;
        let label = format!("{}:{line} {}", f.path, def.name);
        if only.as_deref().is_some_and(|o| !label.contains(o)) {
            continue;
        }
        let diff = line_diff(tree, f, line);
        let result =
            impact::analyze(&tree.files, &diff, tree, impact::CacheUse::Off).expect("analysis");
        let Some(sym) = result
            .symbols
            .iter()
            .find(|s| s.line == line && s.file == f.path)
        else {
            continue;
        };
        let sites = |list: &[impact::Site]| -> Vec<serde_json::Value> {
            list.iter()
                .map(|s| {
                    serde_json::json!({
                        "file": s.file,
                        "line": s.line,
                        "column": s.column,
                        "form": s.form,
                        "inside": s.inside,
                        "candidates": s.candidates,
                        "confidence": s.confidence,
                    })
                })
                .collect()
        };
        let record = serde_json::json!({
            "project": project.name,
            "file": f.path,
            "line": line,
            "column": def.column,
            "name": def.name,
            "kind": def.kind,
            "container": def.container,
            "sites": sites(&sym.sites),
            "ambiguous": sites(&sym.ambiguous),
            "ambiguous_unlisted": sym.ambiguous_unlisted,
        });
        println!("{record}");
    }
}

/// User plus system CPU time of this process so far: on a machine shared
/// with other work it moves far less than wall time.
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

/// The allocator the `speed` binary uses.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    speed::memory::prefer_small_pages();
    let only = std::env::var("IMPACT_WORST_CASE").ok();
    let dirs = corpus_dirs();
    if let Ok(name) = std::env::var("IMPACT_SITES") {
        let count = std::env::var("IMPACT_SITES_COUNT")
            .ok()
            .and_then(|c| c.parse().ok())
            .unwrap_or(80);
        if let Some(project) = PROJECTS.iter().find(|p| p.name == name) {
            dump_sites(project, &load(&project_folders(&dirs, project)), count);
        }
        return;
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("machine: {cores} cores available; cold runs, no cache, prefiltered");
    let mut trees: HashMap<&str, Tree> = HashMap::new();
    for case in CASES {
        let label = format!("{} {}", case.project, case.symbol);
        if only.as_deref().is_some_and(|o| !label.contains(o)) {
            continue;
        }
        let Some(project) = PROJECTS.iter().find(|p| p.name == case.project) else {
            continue;
        };
        let tree = trees.entry(case.project).or_insert_with(|| {
            let folders = project_folders(&dirs, project);
            let tree = load(&folders);
            let bytes: usize = tree.blobs.values().map(Vec::len).sum();
            println!(
                "{}: {} files, {:.1} MB ({})",
                project.name,
                tree.files.len(),
                bytes as f64 / 1e6,
                folders
                    .iter()
                    .filter_map(|f| f.file_name())
                    .map(|n| n.to_string_lossy().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            tree
        });
        if tree.files.is_empty() {
            println!(
                "{label}: no {} folder in {}: skipped",
                project
                    .folders
                    .iter()
                    .map(|f| format!("{f}<version>"))
                    .collect::<Vec<_>>()
                    .join(" or "),
                dirs.iter()
                    .map(|d| d.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            continue;
        }
        let (diff, at) = match diff_of(tree, case) {
            Ok(found) => found,
            Err(e) => {
                println!("{label}: {e}, skipped");
                continue;
            }
        };
        let (mut best, mut best_cpu) = (f64::INFINITY, f64::INFINITY);
        let mut last = None;
        for _ in 0..2 {
            let (t, c) = (Instant::now(), cpu());
            let result =
                impact::analyze(&tree.files, &diff, tree, impact::CacheUse::Off).expect("analysis");
            best = best.min(t.elapsed().as_secs_f64() * 1000.0);
            best_cpu = best_cpu.min((cpu() - c).as_secs_f64() * 1000.0);
            last = Some(result);
        }
        let Some(result) = last else { continue };
        let s = &result.stats;
        println!(
            "{label} ({}, {at}): {best:.0} ms (CPU {best_cpu:.0} ms); parsed {} of {} files; extraction {} ms, index {} ms, dependents {} ms",
            case.why, s.files_parsed, s.files_indexed, s.extract_ms, s.index_ms, s.impact_ms
        );
        for sym in &result.symbols {
            println!(
                "    {} [{}]: {} sites, {} ambiguous (+{} unlisted), {} dependents in {} files, radius {}{}{}",
                sym.symbol,
                sym.change,
                sym.sites.len(),
                sym.ambiguous.len(),
                sym.ambiguous_unlisted,
                sym.dependents.symbols,
                sym.dependents.files.len(),
                sym.radius,
                sym.radius_truncated
                    .as_ref()
                    .map(|c| format!(" (radius cut: {c})"))
                    .unwrap_or_default(),
                sym.radius_unread
                    .map(|n| format!(
                        " (second hop over the files read: {n} files not read mention its names)"
                    ))
                    .unwrap_or_default()
            );
        }
        for w in result.warnings.iter().chain(&result.limits) {
            println!("    note: {w}");
        }
    }
}
