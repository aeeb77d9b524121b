//! The input tokens of a re-review after a one-commit fix, against a full
//! review of the same task, on real code: a crate's source at one release
//! on `main`, its next release as the task's change (a real release diff),
//! the crate's README as the spec. A first review (the loopback model
//! requests changes, with a major finding in the change) is recorded, a
//! fix commit edits that finding's line, and speed's own count of each
//! prompt (`--dry-run --json`, `tokens.total`) is taken for:
//!
//! - the first review (the whole change);
//! - the re-review as speed sends it by default (the whole change, plus
//!   the interdiff and the previous findings);
//! - the re-review with `--incremental` (the interdiff and the previous
//!   verdict only), and the part of it past the stable prefix a provider's
//!   prompt cache holds from the first review (`uncached`).
//!
//! Measured on a 2-core VM (input tokens, speed's o200k_base count):
//!
//! ```text
//! release pair                     diff  first  re-review  incr.  incr./first  uncached/first
//! globset 0.4.21 → 0.4.22           296  11664      12223   5664          49%             11%
//! regex-automata 0.4.18 → 0.4.19    234  12200      12776   5699          47%              9%
//! smallvec 1.16.5 → 1.16.6          776  27790      28289   4279          15%              4%
//! ```
//!
//! `cargo bench --bench incremental`. The release pairs come from the cargo
//! registry (~/.cargo/registry/src/*/, where `cargo fetch` of a project
//! using them puts them); a pair that is not there is skipped, saying so.
//! `INCREMENTAL_BENCH_PAIRS="name-old:name-new,…"` picks others;
//! `INCREMENTAL_BENCH_SECTIONS=1` prints the incremental prompt's sections.

#[path = "../specs-example/materialize.rs"]
mod materialize;
#[path = "../tests/it/support/model_server.rs"]
mod model_server;

use std::path::{Path, PathBuf};
use std::process::Command;

use materialize::RepoBuilder;
use model_server::{ModelServer, Reply};
use serde_json::{Value, json};

const PAIRS: &[(&str, &str)] = &[
    ("globset-0.4.21", "globset-0.4.22"),
    ("regex-automata-0.4.18", "regex-automata-0.4.19"),
    ("smallvec-1.16.5", "smallvec-1.16.6"),
];

fn main() {
    let registry = registry();
    let pairs: Vec<(String, String)> = match std::env::var("INCREMENTAL_BENCH_PAIRS") {
        Ok(list) => list
            .split(',')
            .filter_map(|p| p.split_once(':'))
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect(),
        Err(_) => PAIRS
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect(),
    };
    eprintln!(
        "{:<44} {:>5} {:>7} {:>9} {:>7} {:>11} {:>11} {:>14}",
        "release pair",
        "diff",
        "first",
        "re-review",
        "incr.",
        "incr./first",
        "incr./re-r.",
        "uncached/first"
    );
    for (old, new) in pairs {
        let (Some(old_dir), Some(new_dir)) = (find(&registry, &old), find(&registry, &new)) else {
            eprintln!("{old} → {new}: not in {} (skipped)", registry.display());
            continue;
        };
        match measure(&old_dir, &new_dir) {
            Ok(m) => eprintln!(
                "{:<44} {:>5} {:>7} {:>9} {:>7} {:>10.0}% {:>10.0}% {:>13.0}%",
                format!("{old} → {new}"),
                m.diff_lines,
                m.first,
                m.rereview,
                m.incremental,
                100.0 * m.incremental as f64 / m.first as f64,
                100.0 * m.incremental as f64 / m.rereview as f64,
                100.0 * m.incremental.saturating_sub(m.stable) as f64 / m.first as f64
            ),
            Err(err) => eprintln!("{old} → {new}: {err}"),
        }
    }
}

struct Measured {
    diff_lines: usize,
    first: u64,
    rereview: u64,
    incremental: u64,
    /// Of `incremental`, the stable prefix a provider's cache holds.
    stable: u64,
}

fn registry() -> PathBuf {
    let home = std::env::var("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            PathBuf::from(std::env::var("HOME").unwrap_or_default()).join(".cargo")
        });
    let src = home.join("registry/src");
    std::fs::read_dir(&src)
        .ok()
        .and_then(|mut d| d.next())
        .and_then(|e| e.ok())
        .map(|e| e.path())
        .unwrap_or(src)
}

fn find(registry: &Path, name: &str) -> Option<PathBuf> {
    let dir = registry.join(name);
    dir.join("src").is_dir().then_some(dir)
}

/// The files of a crate release under `src/`, as (path, text).
fn sources(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.join("src")];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if let Ok(text) = std::fs::read_to_string(&path) {
                let rel = path.strip_prefix(dir).unwrap().display().to_string();
                out.push((rel, text));
            }
        }
    }
    out.sort();
    out
}

fn measure(old: &Path, new: &Path) -> Result<Measured, String> {
    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    let root = tmp.path().join("repo");
    let mut b = RepoBuilder::init(&root)?;
    let readme = std::fs::read_to_string(new.join("README.md")).unwrap_or_default();
    let spec = format!("# Crate\n\n## What it does\n\n{readme}\n");
    let old_files = sources(old);
    let mut main: Vec<(&str, &str)> = old_files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    main.push(("specs/product/crate.md", &spec));
    b.commit("main", None, &main, &[], "the older release")?;
    let new_files = sources(new);
    let changed: Vec<(&str, &str)> = new_files
        .iter()
        .filter(|(p, t)| !old_files.iter().any(|(q, u)| q == p && u == t))
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let deleted: Vec<&str> = old_files
        .iter()
        .filter(|(p, _)| !new_files.iter().any(|(q, _)| q == p))
        .map(|(p, _)| p.as_str())
        .collect();
    b.commit(
        "speed/task-1",
        Some("main"),
        &changed,
        &deleted,
        "the next release",
    )?;
    b.checkout("main")?;
    std::fs::create_dir_all(root.join(".speed/tasks")).map_err(|e| e.to_string())?;
    std::fs::write(
        root.join(".speed/tasks/1.json"),
        json!({"id": "1", "title": "The next release", "status": "done",
               "description": "Bring the crate to its next release.",
               "spec_references": [{"spec": "specs/product/crate.md", "section": "What it does"}]})
        .to_string(),
    )
    .map_err(|e| e.to_string())?;

    // The finding: the first changed line of the first changed file.
    let first_diff = git(&root, &["diff", "-U0", "main", "speed/task-1"])?;
    let diff_lines = first_diff
        .lines()
        .filter(|l| {
            (l.starts_with('+') || l.starts_with('-'))
                && !l.starts_with("+++")
                && !l.starts_with("---")
        })
        .count();
    let (file, line) = first_added_line(&first_diff).ok_or("the releases do not differ")?;
    let answer = json!({
        "verdict": "request_changes", "expectations": "The next release.",
        "criteria": [], "spec_verification": [], "missing_from_spec": [], "out_of_scope": [],
        "issues": [{"severity": "major", "file": file, "line": line,
                    "message": "this line needs another look", "suggestion": "fix it"}],
        "strengths": [], "previous_findings": [],
        "dimensions": {
            "requirement_adherence": {"score": 50, "reason": "r"},
            "code_quality": {"score": 50, "reason": "r"},
            "pattern_consistency": {"score": 50, "reason": "r"},
            "test_quality": {"score": 50, "reason": "r"},
            "security_performance": {"score": 50, "reason": "r"}
        }
    })
    .to_string();
    let server = ModelServer::start(move |_| Reply::openai(&answer));
    std::fs::write(
        root.join(".speed/config.toml"),
        format!(
            "[llm]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"m\"\n[review]\ntoken_budget = 400000\n[guardian]\nenabled = false\n",
            server.url()
        ),
    )
    .map_err(|e| e.to_string())?;
    let first = tokens(&speed(
        &root,
        &["review", "--task-id", "1", "--dry-run", "--json"],
    )?)?;
    let run = speed(&root, &["review", "--task-id", "1", "--json"])?;
    if !run.contains("\"request_changes\"") {
        return Err(format!("the first review did not request changes: {run}"));
    }
    // The fix: one commit editing the finding's line.
    let at_head = git(&root, &["show", &format!("speed/task-1:{file}")])?;
    let fixed: String = at_head
        .lines()
        .enumerate()
        .map(|(n, l)| {
            if n + 1 == line as usize {
                format!("{l} // reviewed\n")
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    b.commit(
        "speed/task-1",
        None,
        &[(file.as_str(), fixed.as_str())],
        &[],
        "fix",
    )?;
    let rereview = tokens(&speed(
        &root,
        &["review", "--task-id", "1", "--dry-run", "--json"],
    )?)?;
    let incremental_json = speed(
        &root,
        &[
            "review",
            "--task-id",
            "1",
            "--dry-run",
            "--json",
            "--incremental",
        ],
    )?;
    let incremental = tokens(&incremental_json)?;
    let stable = serde_json::from_str::<Value>(&incremental_json)
        .ok()
        .and_then(|v| v["reviews"][0]["tokens"]["stable"].as_u64())
        .unwrap_or(0);
    if std::env::var_os("INCREMENTAL_BENCH_SECTIONS").is_some() {
        sections(&incremental_json);
    }
    Ok(Measured {
        diff_lines,
        first,
        rereview,
        incremental,
        stable,
    })
}

/// The first added line of a `-U0` diff: its file and new line number.
fn first_added_line(diff: &str) -> Option<(String, u64)> {
    let mut file = None;
    for l in diff.lines() {
        if let Some(path) = l.strip_prefix("+++ b/") {
            file = Some(path.to_string());
        } else if let Some(rest) = l.strip_prefix("@@ ") {
            let new = rest.split_whitespace().nth(1)?.trim_start_matches('+');
            let (start, count) = new.split_once(',').unwrap_or((new, "1"));
            if count != "0" {
                return Some((file.clone()?, start.parse().ok()?));
            }
        }
    }
    None
}

/// The incremental prompt's sections and their tokens, on stderr.
fn sections(json: &str) {
    let v: Value = serde_json::from_str(json).unwrap_or_default();
    for s in v["reviews"][0]["sections"].as_array().into_iter().flatten() {
        eprintln!(
            "    {:<20} {:>7}",
            s["name"].as_str().unwrap_or(""),
            s["tokens"]
        );
    }
}

fn tokens(json: &str) -> Result<u64, String> {
    let v: Value = serde_json::from_str(json).map_err(|e| format!("{e}: {json}"))?;
    v["reviews"][0]["tokens"]["total"]
        .as_u64()
        .ok_or_else(|| format!("no tokens.total: {}", v["reviews"][0]["error"]))
}

fn speed(root: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new(env!("CARGO_BIN_EXE_speed"))
        .current_dir(root)
        .args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", root)
        .output()
        .map_err(|e| e.to_string())?;
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn git(root: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new("git")
        .current_dir(root)
        .args(args)
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}
