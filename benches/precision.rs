//! Precision of speed's secret rules and checks on real code, run on demand:
//!
//! ```sh
//! cargo bench --bench precision -- secrets DIR...   # every secret rule
//! cargo bench --bench precision -- checks DIR...    # the code checks (error_discarded among them)
//! ```
//!
//! Every text file under each DIR is taken as if a diff added it whole,
//! and every finding is printed with its file and line so a person can
//! judge it: a finding in ordinary code is a false positive.

use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            files(&path, out);
        } else if kind.is_file() {
            out.push(path);
        }
    }
}

/// Blobs are the files themselves: a blob id is a path.
struct Files;

impl speed::impact::Blobs for Files {
    fn read(&self, blob: &str) -> Result<Vec<u8>, String> {
        std::fs::read(blob).map_err(|e| e.to_string())
    }
}

/// A diff adding `text` as a new file at `path`.
fn added_whole(path: &str, text: &str) -> speed::git::Diff {
    use speed::git::{Diff, FileDiff, FileStatus, Hunk, Line, LineKind};
    let lines: Vec<Line> = text
        .lines()
        .enumerate()
        .map(|(i, l)| Line {
            kind: LineKind::Added,
            old_lineno: None,
            new_lineno: Some(i as u32 + 1),
            text: l.to_string(),
            no_newline: false,
        })
        .collect();
    let n = lines.len();
    Diff {
        base_commit: String::new(),
        head_commit: String::new(),
        sha256: String::new(),
        files: vec![FileDiff {
            path: path.to_string(),
            old_path: None,
            status: FileStatus::Added,
            binary: false,
            old_mode: None,
            new_mode: Some(0o100644),
            old_blob: None,
            new_blob: Some(path.to_string()),
            similarity: None,
            hunks: vec![Hunk {
                old_start: 0,
                old_lines: 0,
                new_start: 1,
                new_lines: n as u32,
                context: String::new(),
                lines,
            }],
            additions: n,
            deletions: 0,
            not_utf8: false,
        }],
    }
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let Some((mode, dirs)) = args.split_first() else {
        eprintln!("usage: precision secrets DIR...");
        std::process::exit(2);
    };
    let mut all = Vec::new();
    for dir in dirs {
        files(Path::new(dir), &mut all);
    }
    all.sort();
    let started = std::time::Instant::now();
    let mut bytes = 0usize;
    let mut found = 0usize;
    match mode.as_str() {
        "secrets" => {
            for path in &all {
                let Ok(data) = std::fs::read(path) else {
                    continue;
                };
                if data.len() > 1 << 20 || data.contains(&0) {
                    continue;
                }
                bytes += data.len();
                let text = String::from_utf8_lossy(&data);
                let name = path.to_string_lossy();
                // The way a review scans a diff: file kinds, test code and
                // documentation judged by path, as `redact_diff` does.
                let lines: Vec<&str> = text.lines().collect();
                let mut diff = added_whole(&name, &text);
                for f in speed::secrets::redact_diff(&mut diff) {
                    found += 1;
                    let line = lines.get(f.line as usize - 1).copied().unwrap_or("");
                    let shown: String = line.trim().chars().take(160).collect();
                    println!("{}\t{}:{}\t{}", f.rule, name, f.line, shown);
                }
            }
        }
        "checks" => {
            for path in &all {
                let name = path.to_string_lossy().into_owned();
                if !(name.ends_with(".rs") || name.ends_with(".py") || name.ends_with(".pyi")) {
                    continue;
                }
                let Ok(data) = std::fs::read(path) else {
                    continue;
                };
                if data.len() > 1 << 20 {
                    continue;
                }
                bytes += data.len();
                let text = String::from_utf8_lossy(&data);
                let diff = added_whole(&name, &text);
                let store = speed::syntax::Store::new(&Files);
                let head = std::collections::HashMap::new();
                let files = speed::checks::Files::new(&store, &diff, &head);
                let sides = speed::checks::Sides::load(&files);
                let input = speed::checks::builtin::Input {
                    diff: &diff,
                    scope: None,
                    criteria: &[],
                    secrets: &[],
                    files: &files,
                    sides: &sides,
                    calls: None,
                };
                let outcome = speed::checks::builtin::run(&input, None, &Default::default());
                for f in &outcome.findings {
                    found += 1;
                    let line = f
                        .line
                        .and_then(|l| text.lines().nth(l as usize - 1))
                        .unwrap_or("")
                        .trim();
                    let shown: String = line.chars().take(120).collect();
                    println!(
                        "{}\t{}:{}\t{}\t{}",
                        f.check,
                        name,
                        f.line.unwrap_or(0),
                        f.message.lines().next().unwrap_or(""),
                        shown
                    );
                }
                for n in &outcome.notices {
                    eprintln!("{n}");
                }
            }
        }
        other => {
            eprintln!("unknown mode {other}");
            std::process::exit(2);
        }
    }
    eprintln!(
        "{} files, {:.1} MB, {found} findings, {:.2} s",
        all.len(),
        bytes as f64 / 1e6,
        started.elapsed().as_secs_f64()
    );
}
