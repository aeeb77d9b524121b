//! Wall time of the merge gate on a large repository: 4,000 files on main,
//! 600 tasks in three layouts (600 task files, 600 task branches), every
//! task approved in the verdict cache, and a review log of 6,000 lines.
//!
//! `cargo bench --bench hook`. It times the real `speed` binary as git runs
//! it from pre-merge-commit (`speed hook run pre-merge-commit`, HEAD on
//! main, `GITHEAD_<commit>` naming the incoming head): a covered head, an
//! uncovered one (which also diffs the branch for the same-diff check), and
//! whole `git merge --no-ff` runs with and without the hooks installed.
//! It also checks that a covered check builds neither the tokenizer nor the
//! symbol index (no `.speed/cache/impact` appears). Figures go to stderr.
//! `HOOK_BENCH_DIR=<dir>` builds the repository there and keeps it.

#[path = "../specs-example/materialize.rs"]
mod materialize;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const FILES: usize = 4_000;
const TASKS: usize = 600;
const LOG_LINES: usize = 6_000;
const RUNS: usize = 30;
/// The one task not approved (in the `.speed/tasks` layout).
const UNCOVERED: usize = TASKS / 2 + 2;

fn main() {
    // HOOK_BENCH_DIR=<dir> builds the repository there and keeps it, to
    // look into a run (strace, perf).
    let dir = tempfile::tempdir().expect("temp dir");
    let root = match std::env::var_os("HOOK_BENCH_DIR") {
        Some(kept) => std::path::PathBuf::from(kept),
        None => dir.path().join("repo"),
    };
    let started = Instant::now();
    let heads = build(&root);
    eprintln!(
        "built {FILES} files, {TASKS} tasks and branches in {:.1} s",
        started.elapsed().as_secs_f64()
    );

    let covered = &heads[TASKS / 2];
    let uncovered = &heads[UNCOVERED];
    let times = time_check(&root, covered, 0);
    assert!(
        !root.join(".speed/cache/impact").exists(),
        "a covered check built the symbol index"
    );
    report("covered head (speed hook run pre-merge-commit)", &times);
    report(
        "uncovered head (blocked, after the same-diff lookup)",
        &time_check(&root, uncovered, 50),
    );

    let speed_bin = env!("CARGO_BIN_EXE_speed");
    let bin_dir = Path::new(speed_bin).parent().expect("bin folder");
    let merge = || {
        let mut times = Vec::new();
        for _ in 0..10 {
            let main = git(&root, bin_dir, &["rev-parse", "main"]);
            let t = Instant::now();
            let out = git(
                &root,
                bin_dir,
                &["merge", "--no-ff", "--no-edit", "-q", "speed/task-300"],
            );
            times.push(t.elapsed());
            let _ = out;
            assert_ne!(git(&root, bin_dir, &["rev-parse", "HEAD"]), main, "merged");
            git(&root, bin_dir, &["reset", "-q", "--hard", main.trim()]);
        }
        times
    };
    let without = merge();
    let install = Command::new(speed_bin)
        .args(["hook", "install"])
        .current_dir(&root)
        .output()
        .expect("speed runs");
    assert!(install.status.success(), "{install:?}");
    let with = merge();
    report("git merge --no-ff, no hooks", &without);
    report("git merge --no-ff, speed's hooks (covered)", &with);
}

/// Runs the check RUNS times; `expect` is its exit code.
fn time_check(root: &Path, head: &str, expect: i32) -> Vec<Duration> {
    let mut times = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let t = Instant::now();
        let out = Command::new(env!("CARGO_BIN_EXE_speed"))
            .args(["hook", "run", "pre-merge-commit"])
            .current_dir(root)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", root)
            .env(format!("GITHEAD_{head}"), "speed/task-x")
            .stdin(Stdio::null())
            .output()
            .expect("speed runs");
        times.push(t.elapsed());
        assert_eq!(
            out.status.code(),
            Some(expect),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    times
}

fn report(what: &str, times: &[Duration]) {
    let mut ms: Vec<f64> = times.iter().map(|t| t.as_secs_f64() * 1000.0).collect();
    ms.sort_by(f64::total_cmp);
    let at = |q: f64| ms[((ms.len() - 1) as f64 * q).round() as usize];
    eprintln!(
        "{what}: min {:.1} ms, median {:.1} ms, p90 {:.1} ms ({} runs)",
        at(0.0),
        at(0.5),
        at(0.9),
        ms.len()
    );
}

fn git(root: &Path, bin_dir: &Path, args: &[&str]) -> String {
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=Bench",
            "-c",
            "user.email=bench@example.com",
        ])
        .args(args)
        .current_dir(root)
        .env("PATH", path)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdin(Stdio::null())
        .output()
        .expect("git runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The repository, its task files, and an approval of every task in the
/// verdict cache; the task branches' heads, by task number (1-based).
fn build(root: &Path) -> Vec<String> {
    let mut b = materialize::RepoBuilder::init(root).expect("init");
    let spec = "# Catalog\n\n## Search\n\nSearch matches titles and authors.\n";
    let mut files = vec![("specs/product/catalog.md".to_string(), spec.to_string())];
    for i in 0..FILES {
        files.push((
            format!("src/m{}/f{i}.rs", i / 100),
            format!("pub fn f{i}(x: u32) -> u32 {{\n    x + {i}\n}}\n").repeat(8),
        ));
    }
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    b.commit("main", None, &refs, &[], "main").expect("main");
    let mut heads = vec![String::new()];
    for t in 1..=TASKS {
        let path = format!("src/m{}/f{t}.rs", t / 100);
        let body = format!("pub fn f{t}(x: u32) -> u32 {{\n    x * {t}\n}}\n");
        heads.push(
            b.commit(
                &format!("speed/task-{t}"),
                Some("main"),
                &[(&path, &body)],
                &[],
                "work",
            )
            .expect("task commit"),
        );
    }
    b.checkout("main").expect("checkout");

    // Task files in all three layouts.
    for t in 1..=TASKS {
        let rel = match t % 3 {
            0 => format!(".speed/features/f{}/tasks/{t}.json", t % 7),
            1 => format!(".speed/shared/features/g{}/tasks/{t}.json", t % 5),
            _ => format!(".speed/tasks/{t}.json"),
        };
        let task = serde_json::json!({
            "id": t, "title": format!("Task {t}"), "status": "done",
            "description": "x".repeat(400),
            "acceptance_criteria": [{"criterion": "it works", "verify_by": "test"}],
            "files_to_modify": [format!("src/m{}/f{t}.rs", t / 100)],
            "spec_references": [{"spec": "specs/product/catalog.md", "section": "Search"}],
        });
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().expect("folder")).expect("mkdir");
        std::fs::write(path, serde_json::to_string_pretty(&task).expect("json")).expect("write");
    }

    // Every task but one approved, as the
    // review pipeline records approvals; a long log beside them.
    let store = speed::ledger::verdicts::Store::open(root);
    let mut log = String::new();
    let uncovered = UNCOVERED;
    for (t, head) in heads.iter().enumerate().skip(1) {
        if t == uncovered {
            continue;
        }
        let feature = match t % 3 {
            0 => Some(format!("f{}", t % 7)),
            1 => Some(format!("g{}", t % 5)),
            _ => None,
        };
        store
            .add(&speed::ledger::verdicts::Record {
                task: Some(t.to_string()),
                feature: feature.clone(),
                defect: None,
                head_commit: head.clone(),
                decision: speed::ledger::verdicts::Decision::Approve,
                at: "2025-01-01T00:00:00Z".to_string(),
                diff: Some(format!("sha256:{:064x}", t)),
                specs: Vec::new(),
                by: None,
                reason: None,
                via: None,
                awaiting_human: false,
            })
            .expect("cache");
    }
    for n in 0..LOG_LINES {
        let t = n % TASKS + 1;
        log.push_str(
            &serde_json::json!({"at": "2025-01-01T00:00:00Z", "task": t.to_string(),
                "head_commit": heads[t], "decision": "request_changes", "error": null,
                "hashes": {"diff": format!("sha256:{:064x}", n)}})
            .to_string(),
        );
        log.push('\n');
    }
    std::fs::create_dir_all(root.join(".speed/reviews")).expect("mkdir");
    std::fs::write(root.join(".speed/reviews/log.jsonl"), log).expect("log");
    heads
}
