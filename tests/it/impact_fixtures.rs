//! Accuracy of the impact index against hand-checked reference lists.
//!
//! Each fixture under `fixtures/impact/<name>/` holds a tree (`head/`) and
//! `expected.json`: targets (`file:line`, a definition or a file's
//! module-level code) with every line that references them. The test
//! touches each target's line in a synthetic diff, runs `impact::analyze`,
//! and compares the reported sites with the list. Renaming a module's file
//! must report the same lines: they still name the old path.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use serde::Deserialize;
use sha2::{Digest, Sha256};
use speed::git::{Diff, FileDiff, FileStatus, Hunk, Line, LineKind};
use speed::impact::{self, Blobs, Confidence, FileEntry};

#[derive(Deserialize)]
struct Expected {
    targets: Vec<Target>,
}

#[derive(Deserialize)]
struct Target {
    at: String,
    symbol: String,
    references: Vec<String>,
}

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

fn load_tree(root: &Path) -> Tree {
    let mut tree = Tree {
        files: Vec::new(),
        blobs: HashMap::new(),
    };
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let bytes = std::fs::read(&path).unwrap();
            let blob = hex(&Sha256::digest(&bytes))[..40].to_string();
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            tree.files.push(FileEntry {
                path: rel,
                blob: blob.clone(),
            });
            tree.blobs.insert(blob, bytes);
        }
    }
    tree.files.sort_by(|a, b| a.path.cmp(&b.path));
    tree
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A diff that rewrites each target line with itself: every target is
/// "body changed" without changing what the index sees.
fn touching_diff(tree: &Tree, targets: &[Target]) -> Diff {
    let mut by_file: HashMap<&str, Vec<u32>> = HashMap::new();
    for t in targets {
        let (file, line) = t.at.rsplit_once(':').unwrap();
        by_file.entry(file).or_default().push(line.parse().unwrap());
    }
    let mut files = Vec::new();
    for (path, mut lines) in by_file {
        lines.sort();
        let entry = tree.files.iter().find(|f| f.path == path).unwrap();
        let text = String::from_utf8(tree.blobs[&entry.blob].clone()).unwrap();
        let all: Vec<&str> = text.lines().collect();
        let hunks = lines
            .iter()
            .map(|&l| Hunk {
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
                        text: all[l as usize - 1].to_string(),
                        no_newline: false,
                    },
                    Line {
                        kind: LineKind::Added,
                        old_lineno: None,
                        new_lineno: Some(l),
                        text: all[l as usize - 1].to_string(),
                        no_newline: false,
                    },
                ],
            })
            .collect();
        files.push(FileDiff {
            path: path.to_string(),
            old_path: None,
            similarity: None,
            status: FileStatus::Modified,
            binary: false,
            old_mode: Some(0o100644),
            new_mode: Some(0o100644),
            old_blob: Some(entry.blob.clone()),
            new_blob: Some(entry.blob.clone()),
            hunks,
            additions: lines.len(),
            deletions: lines.len(),
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

struct Score {
    tp: usize,
    fp: usize,
    fn_: usize,
}

impl Score {
    fn precision(&self) -> f64 {
        if self.tp + self.fp == 0 {
            1.0
        } else {
            self.tp as f64 / (self.tp + self.fp) as f64
        }
    }
    fn recall(&self) -> f64 {
        if self.tp + self.fn_ == 0 {
            1.0
        } else {
            self.tp as f64 / (self.tp + self.fn_) as f64
        }
    }
}

/// Scores (default mode: exact + unique; with ambiguous matches too).
fn score_fixture(name: &str) -> (Score, Score) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/impact")
        .join(name);
    let expected: Expected =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
    let tree = load_tree(&dir.join("head"));
    let diff = touching_diff(&tree, &expected.targets);
    let result = impact::analyze(&tree.files, &diff, &tree, impact::CacheUse::Off).unwrap();
    assert!(result.skipped.is_empty(), "{:?}", result.skipped);

    let mut default = Score {
        tp: 0,
        fp: 0,
        fn_: 0,
    };
    let mut wide = Score {
        tp: 0,
        fp: 0,
        fn_: 0,
    };
    for t in &expected.targets {
        let (file, _) = t.at.rsplit_once(':').unwrap();
        let found = result
            .symbols
            .iter()
            .find(|s| s.file == file && s.symbol == t.symbol)
            .unwrap_or_else(|| panic!("{name}: {} not reported as changed", t.symbol));
        let want: BTreeSet<String> = t.references.iter().cloned().collect();
        let certain: BTreeSet<String> = found
            .sites
            .iter()
            .filter(|s| matches!(s.confidence, Confidence::Exact | Confidence::Unique))
            .map(|s| format!("{}:{}", s.file, s.line))
            .collect();
        let all: BTreeSet<String> = certain
            .iter()
            .cloned()
            .chain(
                found
                    .ambiguous
                    .iter()
                    .map(|s| format!("{}:{}", s.file, s.line)),
            )
            .collect();
        for (got, score) in [(&certain, &mut default), (&all, &mut wide)] {
            score.tp += got.intersection(&want).count();
            score.fp += got.difference(&want).count();
            score.fn_ += want.difference(got).count();
        }
        let extra: Vec<_> = certain.difference(&want).collect();
        let missing: Vec<_> = want.difference(&certain).collect();
        if !extra.is_empty() || !missing.is_empty() {
            eprintln!("{name} {}: extra {extra:?} missing {missing:?}", t.symbol);
        }
    }
    eprintln!(
        "{name}: default precision {:.2} recall {:.2} (tp {} fp {} fn {}); with ambiguous precision {:.2} recall {:.2}",
        default.precision(),
        default.recall(),
        default.tp,
        default.fp,
        default.fn_,
        wide.precision(),
        wide.recall()
    );
    (default, wide)
}

#[test]
fn rust_workspace_accuracy() {
    let (default, _) = score_fixture("rust-workspace");
    assert!(
        default.precision() >= 0.8,
        "precision {:.2}",
        default.precision()
    );
    assert!(default.recall() >= 0.7, "recall {:.2}", default.recall());
}

#[test]
fn python_package_accuracy() {
    let (default, _) = score_fixture("python-pkg");
    assert!(
        default.precision() >= 0.8,
        "precision {:.2}",
        default.precision()
    );
    assert!(default.recall() >= 0.7, "recall {:.2}", default.recall());
}

/// The prefiltered analysis (parse only files naming what resolution asks
/// about) against the full index, for a diff touching `targets` (`file:line`).
fn assert_same_as_full(tree: &Tree, targets: &[String], label: &str) -> (usize, usize) {
    let targets: Vec<Target> = targets
        .iter()
        .map(|at| Target {
            at: at.clone(),
            symbol: String::new(),
            references: Vec::new(),
        })
        .collect();
    let diff = touching_diff(tree, &targets);
    let full = impact::analyze_with(
        &tree.files,
        &diff,
        tree,
        impact::CacheUse::Off,
        impact::Parsing::All,
    )
    .unwrap();
    let needed = impact::analyze_with(
        &tree.files,
        &diff,
        tree,
        impact::CacheUse::Off,
        impact::Parsing::Needed,
    )
    .unwrap();
    assert_eq!(needed.symbols, full.symbols, "{label}");
    assert_eq!(needed.skipped, full.skipped, "{label}");
    assert_eq!(
        needed.stats.files_indexed, full.stats.files_indexed,
        "{label}"
    );
    (needed.stats.files_parsed, full.stats.files_parsed)
}

/// Every definition of every source file, as `file:line`.
fn every_definition(tree: &Tree) -> Vec<String> {
    let mut extractor = impact::Extractor::new();
    let mut out = Vec::new();
    for f in &tree.files {
        let Some(lang) = impact::Lang::of_path(&f.path) else {
            continue;
        };
        let syms = extractor.extract(lang, &tree.blobs[&f.blob]).unwrap();
        let lines: BTreeSet<u32> = syms.defs.iter().map(|d| d.start_line).collect();
        out.extend(lines.into_iter().map(|l| format!("{}:{l}", f.path)));
    }
    out
}

/// The first line of module-level code (outside every definition) of each
/// source file that has one, as `file:line`.
fn every_module_line(tree: &Tree) -> Vec<String> {
    let mut extractor = impact::Extractor::new();
    let mut out = Vec::new();
    for f in &tree.files {
        let Some(lang) = impact::Lang::of_path(&f.path) else {
            continue;
        };
        let bytes = &tree.blobs[&f.blob];
        let syms = extractor.extract(lang, bytes).unwrap();
        let text = String::from_utf8_lossy(bytes);
        let line = text.lines().zip(1u32..).find(|(t, n)| {
            !t.trim().is_empty()
                && !syms
                    .defs
                    .iter()
                    .any(|d| d.start_line <= *n && *n <= d.end_line)
        });
        if let Some((_, n)) = line {
            out.push(format!("{}:{n}", f.path));
        }
    }
    out
}

/// Each definition and each file's module-level code touched alone, then
/// all at once: the prefilter never changes a symbol, a site, a confidence,
/// a stability or a radius.
fn check_prefilter(tree: &Tree, name: &str) {
    let mut all = every_definition(tree);
    all.extend(every_module_line(tree));
    let (mut parsed, mut full) = (0, 0);
    for at in &all {
        let (p, f) = assert_same_as_full(tree, std::slice::from_ref(at), &format!("{name} {at}"));
        parsed += p;
        full += f;
    }
    assert_same_as_full(tree, &all, &format!("{name}: every definition"));
    eprintln!(
        "{name}: {} single-definition diffs, {parsed} files parsed instead of {full}",
        all.len()
    );
    assert!(parsed < full, "{name}: the prefilter never left a file out");
}

/// `tree` with the file at `from` moved to `to`, unchanged, and the diff
/// of that rename.
fn moved(tree: &Tree, from: &str, to: &str) -> (Tree, Diff) {
    let mut files = tree.files.clone();
    let entry = files.iter_mut().find(|f| f.path == from).unwrap();
    entry.path = to.to_string();
    let blob = entry.blob.clone();
    files.sort_by(|a, b| a.path.cmp(&b.path));
    let diff = Diff {
        base_commit: "base".into(),
        head_commit: "head".into(),
        files: vec![FileDiff {
            path: to.to_string(),
            old_path: Some(from.to_string()),
            similarity: Some(100),
            status: FileStatus::Renamed,
            binary: false,
            old_mode: Some(0o100644),
            new_mode: Some(0o100644),
            old_blob: Some(blob.clone()),
            new_blob: Some(blob),
            hunks: Vec::new(),
            additions: 0,
            deletions: 0,
            not_utf8: false,
        }],
        sha256: String::new(),
    };
    let moved = Tree {
        files,
        blobs: tree.blobs.clone(),
    };
    (moved, diff)
}

/// The rename of `from` to `to`, checked against the full index: the
/// module-path change it reports.
fn rename(tree: &Tree, from: &str, to: &str) -> impact::ChangedSymbol {
    let (moved, diff) = moved(tree, from, to);
    let full = impact::analyze_with(
        &moved.files,
        &diff,
        &moved,
        impact::CacheUse::Off,
        impact::Parsing::All,
    )
    .unwrap();
    let needed = impact::analyze(&moved.files, &diff, &moved, impact::CacheUse::Off).unwrap();
    assert_eq!(needed.symbols, full.symbols, "rename {from} → {to}");
    let found = needed
        .symbols
        .iter()
        .find(|s| s.symbol == "(module)" && s.file == from)
        .unwrap_or_else(|| panic!("rename {from} → {to} not reported: {:#?}", needed.symbols));
    assert_eq!(found.renamed_to.as_deref(), Some(to));
    assert_eq!(found.change, impact::Change::Removed);
    found.clone()
}

fn sites_of(s: &impact::ChangedSymbol) -> BTreeSet<String> {
    s.sites
        .iter()
        .map(|x| format!("{}:{}", x.file, x.line))
        .collect()
}

#[test]
fn a_renamed_module_breaks_exactly_its_importers() {
    for name in ["rust-workspace", "python-pkg"] {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/impact")
            .join(name);
        let expected: Expected =
            serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap())
                .unwrap();
        let tree = load_tree(&dir.join("head"));
        // Module targets of files that are not a crate or package root.
        for t in expected.targets.iter().filter(|t| t.symbol == "(module)") {
            let (file, _) = t.at.rsplit_once(':').unwrap();
            let (dir, stem) = file.rsplit_once('/').unwrap();
            if matches!(stem, "lib.rs" | "main.rs" | "__init__.py") {
                continue;
            }
            let ext = stem.rsplit_once('.').unwrap().1;
            let to = format!("{dir}/moved.{ext}");
            let found = rename(&tree, file, &to);
            let want: BTreeSet<String> = t.references.iter().cloned().collect();
            assert_eq!(sites_of(&found), want, "{name}: {file} → {to}");
            assert_eq!(found.breaking, !want.is_empty(), "{name}: {file}");
        }
    }
}

#[test]
fn the_prefilter_matches_the_full_index_on_renames_in_generated_trees() {
    for seed in 1..=3 {
        let rust = rename(&generated_rust(seed, 12), "src/m0.rs", "src/moved.rs");
        assert!(rust.breaking, "seed {seed}: `pub mod m0;` still names it");
        let py = rename(&generated_python(seed, 8), "pkg/m0.py", "pkg/moved.py");
        assert_eq!(py.qualified, "pkg.m0");
    }
}

#[test]
fn the_prefilter_matches_the_full_index_on_the_fixtures() {
    for name in ["rust-workspace", "python-pkg"] {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/impact")
            .join(name);
        check_prefilter(&load_tree(&dir.join("head")), name);
    }
}

fn tree_of(files: Vec<(String, String)>) -> Tree {
    let mut tree = Tree {
        files: Vec::new(),
        blobs: HashMap::new(),
    };
    for (path, text) in files {
        let blob = hex(&Sha256::digest(text.as_bytes()))[..40].to_string();
        tree.files.push(FileEntry {
            path,
            blob: blob.clone(),
        });
        tree.blobs.insert(blob, text.into_bytes());
    }
    tree.files.sort_by(|a, b| a.path.cmp(&b.path));
    tree
}

/// A Rust crate whose modules reach each other through everything the
/// resolution follows: glob imports and re-exports, renamed imports,
/// inline modules, typed fields, `Self`, shared method names, macros.
fn generated_rust(seed: u64, modules: usize) -> Tree {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut files = vec![(
        "Cargo.toml".to_string(),
        "[package]\nname = \"gen-crate\"\n".to_string(),
    )];
    let mut lib = String::from(
        "pub mod prelude;\npub mod node_a;\npub mod node_b;\npub mod node_c;\npub mod user;\n",
    );
    for k in 0..modules {
        lib.push_str(&format!("pub mod m{k};\n"));
    }
    lib.push_str(&format!("pub use m{}::*;\n", rng.usize(..modules)));
    let a = rng.usize(..modules);
    lib.push_str(&format!("pub use m{a}::T{a} as Renamed{a};\n"));
    lib.push_str("#[macro_export]\nmacro_rules! twice { ($e:expr) => { $e + $e }; }\n");
    for k in 0..modules {
        let j = rng.usize(..modules);
        let i = rng.usize(..modules);
        let g = rng.usize(..modules);
        let mut s = String::new();
        if rng.bool() {
            s.push_str(&format!("use super::m{g}::*;\n"));
        }
        s.push_str(&format!("use crate::m{j}::T{j} as Other;\n"));
        s.push_str(&format!(
            "\npub struct T{k} {{\n    pub next: crate::m{j}::T{j},\n    pub count: u32,\n}}\n"
        ));
        s.push_str(&format!(
            "\nimpl T{k} {{\n    pub fn make() -> T{k} {{\n        T{k} {{ next: Other::make(), count: 0 }}\n    }}\n\n    pub fn step(&self) -> u32 {{\n        self.next.step() + Self::shared(self) + helper{k}()\n    }}\n\n    pub fn shared(&self) -> u32 {{\n        self.count\n    }}\n}}\n"
        ));
        s.push_str(&format!(
            "\npub fn helper{k}() -> u32 {{\n    crate::m{i}::helper{i}() + crate::twice!(1)\n}}\n"
        ));
        // Members on the stop list, reached only through their type: by an
        // alias, or through a field declared in another file.
        s.push_str(&format!(
            "\nimpl T{k} {{\n    pub fn len(&self) -> u32 {{\n        self.count\n    }}\n\n    pub fn new() -> u32 {{\n        crate::Renamed{a}::new()\n    }}\n}}\n"
        ));
        files.push((
            format!("src/wrap{k}.rs"),
            format!("use crate::m{k}::T{k};\n\nimpl T{k} {{\n    pub fn total{k}(&self) -> u32 {{\n        self.next.len() + self.len()\n    }}\n}}\n"),
        ));
        lib.push_str(&format!("pub mod wrap{k};\n"));
        if rng.bool() {
            s.push_str(&format!(
                "\npub fn via_glob{k}() -> u32 {{\n    helper{g}() + crate::Renamed{a}::make().step()\n}}\n"
            ));
        }
        s.push_str(&format!(
            "\npub fn unknown{k}(x: &dyn std::any::Any) -> u32 {{\n    let t = pick{k}(x);\n    t.shared() + t.step()\n}}\n\nfn pick{k}(_x: &dyn std::any::Any) -> T{k} {{\n    T{k}::make()\n}}\n"
        ));
        s.push_str(&format!(
            "\nmod inner {{\n    use super::*;\n\n    pub fn deep() -> u32 {{\n        helper{k}() + T{k}::make().step()\n    }}\n}}\n\n#[cfg(test)]\nmod tests {{\n    #[test]\n    fn works() {{\n        assert!(super::inner::deep() > 0);\n    }}\n}}\n"
        ));
        files.push((format!("src/m{k}.rs"), s));
    }
    files.push(("src/lib.rs".to_string(), lib));
    // A second crate with the same type and method names: lookups scoped to
    // one crate must neither miss its own files nor need the other's.
    let twins = modules.min(3);
    let mut twin_lib = String::new();
    for k in 0..twins {
        let text = files
            .iter()
            .find(|(p, _)| *p == format!("src/m{k}.rs"))
            .map(|(_, t)| t.clone())
            .unwrap_or_default();
        files.push((format!("twin/src/m{k}.rs"), text));
        twin_lib.push_str(&format!(
            "pub mod m{k};
"
        ));
    }
    files.push(("twin/src/lib.rs".to_string(), twin_lib));
    files.push((
        "twin/Cargo.toml".to_string(),
        "[package]\nname = \"twin\"\n".to_string(),
    ));
    // A prelude that only re-exports, used through a glob, and two types of
    // one name (their impls found through the module that names them).
    lib_extra(&mut files, rng.usize(..modules));
    files.push((
        "tests/api.rs".to_string(),
        format!("use gen_crate::*;\n\n#[test]\nfn api() {{\n    assert!(gen_crate::m0::helper0() > 0);\n    let _ = Renamed{a}::make();\n}}\n"),
    ));
    tree_of(files)
}

fn lib_extra(files: &mut Vec<(String, String)>, p: usize) {
    for (path, text) in [
        ("src/prelude.rs".to_string(), format!("pub use crate::m{p}::*;\n")),
        (
            "src/node_a.rs".to_string(),
            "pub struct Node;\n\nimpl Node {\n    pub fn visit(&self) -> u32 {\n        1\n    }\n}\n".to_string(),
        ),
        ("src/node_b.rs".to_string(), "pub struct Node;\n".to_string()),
        (
            "src/node_c.rs".to_string(),
            "use crate::node_b::Node;\n\nimpl Node {\n    pub fn visit(&self) -> u32 {\n        2\n    }\n}\n".to_string(),
        ),
        (
            "src/user.rs".to_string(),
            format!("use crate::prelude::*;\nuse crate::node_a::Node;\n\npub fn uses() -> u32 {{\n    helper{p}() + Node.visit() + crate::node_a::Node::visit(&Node)\n}}\n"),
        ),
    ] {
        files.push((path, text));
    }
}

/// A Python package with star imports, `__init__` re-exports, aliases,
/// class bases from other modules and attribute calls.
fn generated_python(seed: u64, modules: usize) -> Tree {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut files = Vec::new();
    let a = rng.usize(..modules);
    files.push((
        "pkg/__init__.py".to_string(),
        format!(
            "from .m{} import *\nfrom .m{a} import Class{a} as Exported\n",
            rng.usize(..modules)
        ),
    ));
    for k in 0..modules {
        let j = rng.usize(..modules);
        let i = rng.usize(..modules);
        let mut s = String::new();
        if rng.bool() {
            s.push_str(&format!("from .m{} import *\n", rng.usize(..modules)));
        }
        s.push_str(&format!("from .m{j} import Class{j} as Base\n"));
        s.push_str(&format!("from . import m{i}\n"));
        s.push_str("import pkg\n");
        s.push_str(&format!(
            "\n\nclass Class{k}(Base):\n    def __init__(self):\n        self.count = 0\n\n    def step(self):\n        return self.shared() + helper{k}()\n\n    def shared(self):\n        return self.count\n\n\ndef helper{k}():\n    return m{i}.helper{i}() + pkg.Exported().step()\n\n\ndef unknown{k}(x):\n    return x.shared() + x.step()\n"
        ));
        files.push((format!("pkg/m{k}.py"), s));
    }
    files.push((
        "tests/test_api.py".to_string(),
        "from pkg import Exported\nfrom pkg.m0 import helper0\n\n\ndef test_api():\n    assert helper0() + Exported().step()\n".to_string(),
    ));
    tree_of(files)
}

#[test]
fn the_prefilter_matches_the_full_index_on_generated_trees() {
    for seed in 1..=3 {
        check_prefilter(&generated_rust(seed, 12), &format!("generated rust {seed}"));
        check_prefilter(
            &generated_python(seed, 8),
            &format!("generated python {seed}"),
        );
    }
}
