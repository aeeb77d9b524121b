//! Command checks leave a trace (issue 37 §3): every report lists the
//! commands that ran (`checks_run`: outcome, duration, findings, why) in
//! every format, and a command that edits its checkout is a finding of its
//! own, with the checkout put back for the next command and the
//! repository's working tree untouched.

use serde_json::Value;

use crate::support::speed::{Run, speed};
use crate::tool_checks::caller_broken;

fn review(repo: &crate::support::repo::TempRepo, format: &str) -> Run {
    speed(
        repo.path(),
        &["review", "--task-id", "1", "--offline", "--format", format],
        &[],
    )
}

fn runs(report: &Value) -> Vec<Value> {
    report["checks_run"].as_array().expect("checks_run").clone()
}

#[test]
fn every_report_lists_the_commands_that_ran_in_every_format() {
    let repo = caller_broken();
    repo.config(
        r#"[llm]
provider = "none"

[[checks.command]]
name = "lint"
run = ["true"]

[[checks.command]]
name = "tests"
run = ["sh", "-c", 'echo "FAILED test_fine"; exit 1']

[[checks.command]]
name = "slow"
run = ["sleep", "30"]
timeout_secs = 1
"#,
    );
    let run = review(&repo, "json");
    assert_eq!(run.code, 50, "{}", run.transcript());
    let out: Value = serde_json::from_str(&run.stdout).unwrap();
    let report = &out["reviews"][0];
    let runs = runs(report);
    let names: Vec<&str> = runs.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["lint", "tests", "slow"], "{runs:?}");
    assert_eq!(runs[0]["outcome"], "passed");
    assert_eq!(runs[0]["findings"], 0);
    assert!(runs[0]["reason"].is_null(), "{}", runs[0]);
    assert!(runs[0]["duration_ms"].is_u64());
    assert_eq!(runs[1]["outcome"], "failed");
    assert_eq!(runs[1]["findings"], 1);
    assert_eq!(runs[1]["reason"], "exited with status 1");
    assert_eq!(runs[2]["outcome"], "timed_out");
    assert_eq!(runs[2]["findings"], 1);
    assert!(
        runs[2]["duration_ms"].as_u64().unwrap() >= 1_000,
        "{}",
        runs[2]
    );
    assert!(
        runs[2]["reason"]
            .as_str()
            .unwrap()
            .contains("did not finish within 1s"),
        "{}",
        runs[2]
    );
    // The saved report keeps them too (what `speed show` reads).
    let saved = repo.report_files();
    assert_eq!(
        saved.last().unwrap()["checks_run"]
            .as_array()
            .unwrap()
            .len(),
        3
    );

    let human = review(&repo, "human").stdout;
    let line = human
        .lines()
        .find(|l| l.trim_start().starts_with("checks: "))
        .unwrap_or_else(|| panic!("a checks line in {human}"));
    assert!(line.contains("lint ✓ "), "{line}");
    assert!(line.contains(" · tests ✗ "), "{line}");
    assert!(line.contains(", 1 finding ·"), "{line}");
    assert!(line.contains("slow ✗ timed out after 1."), "{line}");

    let markdown = review(&repo, "markdown").stdout;
    assert!(markdown.contains("## Command checks"), "{markdown}");
    assert!(markdown.contains("| ` slow ` | timed out | "), "{markdown}");
    let html = review(&repo, "html").stdout;
    assert!(html.contains(">Command checks</h"), "{html}");
    assert!(
        html.contains("<th scope=\"row\">lint</th><td class=\"found\">passed</td>"),
        "{html}"
    );

    let summary_file = repo.path().join("summary.md");
    let github = speed(
        repo.path(),
        &[
            "review",
            "--task-id",
            "1",
            "--offline",
            "--format",
            "github",
        ],
        &[("GITHUB_STEP_SUMMARY", summary_file.to_str().unwrap())],
    );
    let summary = std::fs::read_to_string(&summary_file)
        .unwrap_or_else(|_| panic!("a step summary: {}", github.transcript()));
    assert!(summary.contains("- checks: ` lint ` ✓ "), "{summary}");
}

#[test]
fn no_command_checks_no_checks_line() {
    let repo = caller_broken();
    repo.config("[llm]\nprovider = \"none\"\n");
    let run = review(&repo, "json");
    let out: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(out["reviews"][0]["checks_run"], serde_json::json!([]));
    let human = review(&repo, "human").stdout;
    assert!(!human.contains("checks: "), "{human}");
}

#[test]
fn a_check_that_edits_its_checkout_is_a_finding_and_edits_nothing_of_the_repository() {
    let repo = caller_broken();
    // "ruff" with `fix = true`: rewrites the file it checks, deletes
    // another, leaves a cache and reports nothing. "format" rewrites a file
    // with the same bytes: not an edit. "after" fails unless it sees the
    // commit as it is.
    repo.config(
        r#"[llm]
provider = "none"

[[checks.command]]
name = "ruff"
run = ["sh", "-c", 'printf "def fine(days, rate):\n    return days * rate  # fixed\n" > fines/calc.py; rm fines/desk.py; mkdir -p .ruff_cache; echo x > .ruff_cache/state']

[[checks.command]]
name = "format"
run = ["sh", "-c", 'cat fines/calc.py > t && cat t > fines/calc.py && rm t']

[[checks.command]]
name = "after"
run = ["sh", "-c", 'grep -q "days \* rate$" fines/calc.py && test -f fines/desk.py']
"#,
    );
    let before_calc = repo.read("fines/calc.py");
    let run = review(&repo, "json");
    assert_eq!(run.code, 50, "{}", run.transcript());
    let out: Value = serde_json::from_str(&run.stdout).unwrap();
    let report = &out["reviews"][0];
    let checks = report["checks"].as_array().unwrap();
    assert_eq!(checks.len(), 1, "{checks:?}");
    let finding = &checks[0];
    assert_eq!(finding["check"], "check_modified_checkout");
    assert_eq!(finding["rule"], "ruff");
    let message = finding["message"].as_str().unwrap();
    assert!(
        message.contains("changed 2 files of its checkout")
            && message.contains(": fines/calc.py, fines/desk.py. ")
            && message.contains("its findings are unknown"),
        "{message}"
    );

    let runs = runs(report);
    assert_eq!(runs[0]["outcome"], "failed", "{runs:?}");
    assert_eq!(runs[0]["findings"], 1);
    assert_eq!(
        runs[0]["changed"],
        serde_json::json!(["fines/calc.py", "fines/desk.py"])
    );
    assert!(
        runs[0]["reason"]
            .as_str()
            .unwrap()
            .contains("what it found is unknown"),
        "{}",
        runs[0]
    );
    // The next commands saw the commit as it is.
    assert_eq!(runs[1]["outcome"], "passed", "{runs:?}");
    assert!(runs[1].get("changed").is_none(), "{}", runs[1]);
    assert_eq!(runs[2]["outcome"], "passed", "{runs:?}");

    // The repository's working tree: untouched.
    assert_eq!(repo.read("fines/calc.py"), before_calc);
    assert!(repo.path().join("fines/desk.py").exists());
    assert!(!repo.path().join(".ruff_cache").exists());
    let status = std::process::Command::new("git")
        .args(["status", "--porcelain", "--", "fines"])
        .current_dir(repo.path())
        .output()
        .unwrap();
    assert!(
        status.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&status.stdout)
    );

    let human = review(&repo, "human").stdout;
    assert!(human.contains("ruff ✗ "), "{human}");
    assert!(human.contains("edited 2 files of its checkout"), "{human}");
}
