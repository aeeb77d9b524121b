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
    // The group's human report has the checks line; a check that did not
    // pass is already an annotation of its own (its finding).
    assert!(
        github.stdout.contains("\n  checks: lint ✓ "),
        "{}",
        github.stdout
    );
    for name in ["tests", "slow"] {
        assert!(
            github
                .stdout
                .lines()
                .any(|l| l.starts_with("::error ") && l.contains(&format!("check/{name} "))),
            "{}",
            github.stdout
        );
    }

    // SARIF: each one a notification of the invocation, valid 2.1.0.
    let sarif = review(&repo, "sarif");
    assert_eq!(sarif.code, 50, "{}", sarif.transcript());
    let log: Value = serde_json::from_str(&sarif.stdout).unwrap();
    crate::formats::assert_valid_sarif(&log);
    let notes: Vec<&Value> = log["runs"][0]["invocations"][0]["toolExecutionNotifications"]
        .as_array()
        .expect("notifications")
        .iter()
        .filter(|n| {
            n["descriptor"]["id"]
                .as_str()
                .is_some_and(|id| id.starts_with("check/"))
        })
        .collect();
    let ids: Vec<&str> = notes
        .iter()
        .map(|n| n["descriptor"]["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["check/lint", "check/tests", "check/slow"]);
    let levels: Vec<&str> = notes.iter().map(|n| n["level"].as_str().unwrap()).collect();
    assert_eq!(levels, ["note", "warning", "warning"]);
    let text = notes[1]["message"]["text"].as_str().unwrap();
    assert!(
        text.starts_with("task 1: check tests failed after ")
            && text.ends_with(", 1 finding: exited with status 1"),
        "{text}"
    );
    assert_eq!(notes[2]["properties"]["check"]["outcome"], "timed_out");
    assert_eq!(notes[2]["properties"]["check"]["findings"], 1);
    let listed = &log["runs"][0]["properties"]["speed"]["reviews"][0]["checks_run"];
    assert_eq!(listed.as_array().map(Vec::len), Some(3), "{listed}");

    // JUnit: a case each, in class speed.checks, counted in the suite.
    let junit = review(&repo, "junit");
    let doc = roxmltree::Document::parse(&junit.stdout)
        .unwrap_or_else(|e| panic!("not XML: {e}\n{}", junit.stdout));
    let suite = doc
        .descendants()
        .find(|n| n.has_tag_name("testsuite"))
        .unwrap();
    assert_eq!(suite.attribute("tests"), Some("4"), "{}", junit.stdout);
    // The review sent back and the tests check failed; slow timed out.
    assert_eq!(suite.attribute("failures"), Some("2"), "{}", junit.stdout);
    assert_eq!(suite.attribute("errors"), Some("1"), "{}", junit.stdout);
    let checks: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testcase") && n.attribute("classname") == Some("speed.checks"))
        .collect();
    let names: Vec<&str> = checks
        .iter()
        .map(|c| c.attribute("name").unwrap())
        .collect();
    assert_eq!(names, ["lint (task 1)", "tests (task 1)", "slow (task 1)"]);
    let child = |i: usize| {
        checks[i]
            .children()
            .find(|c| c.is_element())
            .map(|c| c.tag_name().name().to_string())
    };
    assert_eq!(child(0).as_deref(), Some("system-out"));
    assert_eq!(child(1).as_deref(), Some("failure"));
    assert_eq!(child(2).as_deref(), Some("error"));
    let failure = checks[1]
        .children()
        .find(|c| c.has_tag_name("failure"))
        .unwrap();
    assert_eq!(failure.attribute("message"), Some("exited with status 1"));
    assert_eq!(failure.attribute("type"), Some("check_failed"));
    let slow: f64 = checks[2].attribute("time").unwrap().parse().unwrap();
    assert!(slow >= 1.0, "{slow}");
}

/// A check that passes adds a notification to SARIF and changes no result
/// or fingerprint.
#[test]
fn sarif_results_do_not_change_with_the_checks_listed() {
    let repo = caller_broken();
    repo.config("[llm]\nprovider = \"none\"\n");
    let results = |run: &Run| {
        assert_eq!(run.code, 0, "{}", run.transcript());
        let log: Value = serde_json::from_str(&run.stdout).unwrap();
        crate::formats::assert_valid_sarif(&log);
        log["runs"][0]["results"].clone()
    };
    let without = results(&review(&repo, "sarif"));
    repo.config(
        r#"[llm]
provider = "none"

[[checks.command]]
name = "lint"
run = ["true"]
"#,
    );
    let with = review(&repo, "sarif");
    assert_eq!(results(&with), without);
    assert!(with.stdout.contains("\"check/lint\""), "{}", with.stdout);
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
