//! Reading the review log back: `speed stats` and `speed history` over a
//! log of 100,000 lines shaped as speed writes them (hashes, model,
//! tokens, blocking reasons; 2,000 features' worth of tasks over two years;
//! overrides and torn lines mixed in), about 80 MB.
//!
//! `cargo bench --bench history`. It times, in this process, the parts
//! (`history::stats`, `history::history` with and without a limit) and,
//! as a user meets them, whole `speed stats --format json` and `speed
//! history --limit 20` runs of the release binary, each the median of
//! `RUNS`. Figures go to stderr. `HISTORY_BENCH_LINES=<n>` for another
//! size.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use speed::history::{self, Filter};

const RUNS: usize = 7;

fn main() {
    let lines: usize = std::env::var("HISTORY_BENCH_LINES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(100_000);
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    let status = Command::new("git")
        .args(["init", "-q", "-b", "main"])
        .current_dir(root)
        .status()
        .expect("git runs");
    assert!(status.success());
    let bytes = write_log(root, lines);
    eprintln!("log: {lines} lines, {:.1} MB", bytes as f64 / 1_000_000.0);

    let all = Filter::default();
    let (stats, read) = history::stats(root, &all, None).expect("stats");
    eprintln!(
        "read {read} lines of speed's ({} reviews, {} subjects, {} weeks, {} features), skipped {}",
        stats.all.reviews,
        stats.all.subjects,
        stats.by_week.len(),
        stats.by_feature.len(),
        stats.skipped_lines
    );
    report(
        "history::stats, every line",
        &time(|| {
            history::stats(root, &all, None).expect("stats");
        }),
    );
    let one_feature = Filter {
        feature: Some("feature-7".to_string()),
        ..Filter::default()
    };
    report(
        "history::stats --feature",
        &time(|| {
            history::stats(root, &one_feature, None).expect("stats");
        }),
    );
    report(
        "history::history --limit 20",
        &time(|| {
            history::history(root, &all, Some(20)).expect("history");
        }),
    );
    report(
        "history::history, every line kept",
        &time(|| {
            history::history(root, &all, None).expect("history");
        }),
    );

    let speed_bin = env!("CARGO_BIN_EXE_speed");
    for args in [
        &["stats", "--format", "json"][..],
        &["stats", "--format", "html"],
        &["history", "--limit", "20"],
    ] {
        let times = time(|| {
            let out = Command::new(speed_bin)
                .args(args)
                .current_dir(root)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .expect("speed runs");
            assert!(out.success(), "speed {args:?} failed");
        });
        report(
            &format!("speed {} (the whole process)", args.join(" ")),
            &times,
        );
    }
}

/// Writes `lines` log lines; returns the bytes written.
fn write_log(root: &Path, lines: usize) -> usize {
    let dir = root.join(".speed/reviews");
    std::fs::create_dir_all(&dir).expect("reviews folder");
    let file = std::fs::File::create(dir.join("log.jsonl")).expect("log");
    let mut out = std::io::BufWriter::new(file);
    let mut written = 0;
    let start = 1_735_689_600u64; // 2025-01-01
    for i in 0..lines {
        let at = humantime::format_rfc3339_millis(
            std::time::UNIX_EPOCH + Duration::from_secs(start + (i as u64) * 630),
        );
        let task = i / 3;
        let line = if i % 500 == 499 {
            // A torn line, as a crash leaves one.
            format!("{{\"at\":\"{at}\",\"task\":\"{task}\",\"decis\n")
        } else if i % 200 == 199 {
            serde_json::json!({
                "at": at.to_string(), "task": task.to_string(), "feature": format!("feature-{}", task % 2000),
                "branch": format!("speed/task-{task}"), "head_commit": format!("{i:040x}"),
                "decision": "override", "by": "ann", "reason": "accepted by the team lead", "via": "speed override",
                "overruled": "request_changes", "hashes": {"diff": null},
            })
            .to_string()
                + "\n"
        } else {
            let decision = ["request_changes", "request_changes", "approve"][i % 3];
            let check = ["scope", "placeholder", "secret"][i % 3];
            let blocking = if decision == "approve" {
                serde_json::json!([])
            } else {
                serde_json::json!([{"kind": "check", "name": check},
                                    {"kind": "overrule", "name": "blocking_issue"},
                                    {"kind": "dimension", "name": "unnamed"}])
            };
            serde_json::json!({
                "at": at.to_string(), "task": task.to_string(), "feature": format!("feature-{}", task % 2000),
                "branch": format!("speed/task-{task}"), "head_commit": format!("{i:040x}"),
                "decision": decision, "model_verdict": decision, "outcome": if decision == "approve" { 0 } else { 50 },
                "model": {"provider": "openai", "name": "qwen2.5-coder:32b"},
                "tokens": {"prompt": 20_000 + i % 9_000, "completion": 900 + i % 700},
                "hashes": {"diff": format!("sha256:{:064x}", i), "spec": format!("sha256:{:064x}", i / 7), "prompt": format!("sha256:{:064x}", i * 3)},
                "guardian": if decision == "approve" { "aligned" } else { "not_run" },
                "overrules": if decision == "approve" { serde_json::json!([]) } else { serde_json::json!(["blocking_issue"]) },
                "blocking": blocking,
                "task_status": if decision == "approve" { "done" } else { "pending" },
                "revision_count": i % 3,
                "duration_ms": 20_000 + (i * 7919) % 60_000,
                "report": format!(".speed/reviews/{i:017}-task-{task}.json"),
                "error": null,
            })
            .to_string()
                + "\n"
        };
        written += line.len();
        out.write_all(line.as_bytes()).expect("write");
    }
    out.flush().expect("flush");
    written
}

/// Wall time and CPU time (user and system, of this process and the
/// children it waited for) of each run. On a machine other work keeps busy
/// the wall time grows; the CPU time says what the work itself costs.
fn time(mut f: impl FnMut()) -> Vec<(Duration, Duration)> {
    (0..RUNS)
        .map(|_| {
            let cpu = cpu_time();
            let started = Instant::now();
            f();
            (started.elapsed(), cpu_time() - cpu)
        })
        .collect()
}

fn cpu_time() -> Duration {
    let of = |who| {
        // SAFETY: getrusage writes one rusage struct into the zeroed value.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(who, &mut usage) };
        let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
        tv(usage.ru_utime) + tv(usage.ru_stime)
    };
    of(libc::RUSAGE_SELF) + of(libc::RUSAGE_CHILDREN)
}

fn report(what: &str, times: &[(Duration, Duration)]) {
    let median = |pick: fn(&(Duration, Duration)) -> Duration| {
        let mut v: Vec<Duration> = times.iter().map(pick).collect();
        v.sort();
        (v[v.len() / 2], v[0], v[v.len() - 1])
    };
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let (wall, wall_min, wall_max) = median(|t| t.0);
    let (cpu, cpu_min, _) = median(|t| t.1);
    eprintln!(
        "{what}: wall median {:.0} ms (min {:.0}, max {:.0}); CPU median {:.0} ms (min {:.0}); {} runs",
        ms(wall),
        ms(wall_min),
        ms(wall_max),
        ms(cpu),
        ms(cpu_min),
        times.len()
    );
}
