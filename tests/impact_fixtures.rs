//! Accuracy of the impact index against hand-checked reference lists.
//!
//! Each fixture under `fixtures/impact/<name>/` holds a tree (`head/`) and
//! `expected.json`: target definitions (`file:line`) with every line that
//! references them. The test touches each target's line in a synthetic diff,
//! runs `impact::analyze`, and compares the reported sites with the list.

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
