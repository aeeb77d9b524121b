//! How a review in parts is reported (issue 43 §5): which part saw which
//! file, a quote several parts checked listed once, what the guardian saw
//! within its own budget, counts of files seen and left out that add up in
//! every format, and a dry run's stderr naming the files left out once per
//! review and ending with a marked warning. Real git, the real binary, a
//! loopback model; the change is ten ledger modules of six changed
//! functions each, larger than one prompt at these budgets.

use crate::support::model_server::{ModelServer, Recorded, Reply};
use crate::support::repo::{self, RepoBuilder, TempRepo};
use crate::support::speed::{Run, speed};
use crate::support::verdicts::{dimensions, text};
use serde_json::{Value, json};

const MODULES: usize = 10;
const FUNCTIONS: usize = 6;
/// A review budget that shows the whole change in 3 parts.
const IN_PARTS: &str = "5000";
/// A guardian budget that shows some of it.
const GUARDIAN_BUDGET: &str = "4000";
/// With `review.max_parts = 4`, a budget that leaves files whole, in part
/// and unseen.
const TOO_SMALL: &str = "3500";
const QUOTE: &str = "An amount is never negative: a negative amount is refused with an error.";

fn module(i: usize, after: bool) -> String {
    let mut out = format!("\"\"\"Module {i} of the ledger.\"\"\"\n");
    for f in 0..FUNCTIONS {
        if after {
            out.push_str(&format!(
                "\n\ndef amount_{i}_{f}(value):\n    if value < 0:\n        raise ValueError(\"amount {i}.{f} must not be negative\")\n    rounded = round(value, 2)\n    return rounded + {f}\n"
            ));
        } else {
            out.push_str(&format!(
                "\n\ndef amount_{i}_{f}(value):\n    return value + {f}\n"
            ));
        }
        for n in 0..4 {
            out.push_str(&format!("\n# unchanged note {n} of function {f}\n"));
        }
    }
    out
}

fn path(i: usize) -> String {
    format!("src/ledger/m{i}.py")
}

/// main with the ledger and its spec; `speed/task-7` refuses negative
/// amounts in every function of every module.
fn ledger() -> TempRepo {
    let (tmp, root) = repo::empty();
    let mut b = RepoBuilder::init(&root).unwrap();
    let before: Vec<(String, String)> = (0..MODULES).map(|i| (path(i), module(i, false))).collect();
    let after: Vec<(String, String)> = (0..MODULES).map(|i| (path(i), module(i, true))).collect();
    let mut files: Vec<(&str, &str)> = vec![
        (
            "specs/product/ledger.md",
            "# Ledger\n\n## Amounts\n\nAn amount is never negative: a negative amount is refused with an error.\n\nAmounts are rounded to two decimals.\n",
        ),
        (
            "specs/product/overview.md",
            "# Overview\n\nThe ledger keeps every amount exact and refuses what it cannot keep.\n",
        ),
    ];
    files.extend(before.iter().map(|(p, c)| (p.as_str(), c.as_str())));
    b.commit("main", None, &files, &[], "main").unwrap();
    let changed: Vec<(&str, &str)> = after
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    b.commit(
        "speed/task-7",
        Some("main"),
        &changed,
        &[],
        "refuse negative amounts",
    )
    .unwrap();
    b.checkout("main").unwrap();
    let repo = repo::adopt(tmp, root);
    repo.write(
        ".speed/tasks/7.json",
        &serde_json::to_string_pretty(&json!({
            "id": "7",
            "title": "Refuse negative amounts",
            "status": "done",
            "description": "Every amount function refuses a negative amount and rounds to two decimals.",
            "acceptance_criteria": [],
            "spec_references": [{"spec": "specs/product/ledger.md", "section": "Amounts"}]
        }))
        .unwrap(),
    );
    repo
}

fn configure(repo: &TempRepo, server: &ModelServer, extra: &str) {
    repo.config(&server.openai_config(extra));
}

fn prompt_of(req: &Recorded) -> String {
    let messages = req.json()["messages"].as_array().unwrap();
    messages.iter().rev().find(|m| m["role"] == "user").unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string()
}

/// Every part approves quoting the same sentence, with the first file its
/// prompt shows as evidence (so each part's check differs); the guardian
/// finds the change aligned.
fn answer(req: &Recorded) -> Reply {
    if req.body.contains("Product guardian check") {
        return Reply::openai(&text(&json!({
            "status": "aligned",
            "summary": "Keeps amounts exact.",
            "flags": []
        })));
    }
    let prompt = prompt_of(req);
    let shown = prompt
        .lines()
        .find_map(|l| l.strip_prefix("diff --git a/"))
        .and_then(|rest| rest.split(' ').next())
        .unwrap_or_default()
        .to_string();
    Reply::openai(&text(&json!({
        "verdict": "approve",
        "expectations": "Negative amounts are refused.",
        "criteria": [],
        "spec_verification": [{
            "spec_quote": QUOTE, "spec_section": "Ledger > Amounts",
            "satisfied": true, "evidence": shown, "notes": ""
        }],
        "issues": [],
        "strengths": [],
        "dimensions": dimensions()
    })))
}

fn json_of(run: &Run) -> Value {
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.transcript()))
}

/// "W of T changed files whole, P in part, L left out for budget" read
/// back as (W, P, L, T); a count the sentence leaves out is 0.
fn counts(sentence: &str) -> (usize, usize, usize, usize) {
    let number = |after: &str, before: &str| -> usize {
        let Some(at) = sentence.find(before) else {
            return 0;
        };
        let head = &sentence[..at];
        let head = head.strip_suffix(after).unwrap_or(head);
        head.rsplit([' ', ','])
            .find(|w| !w.is_empty())
            .and_then(|w| w.replace(',', "").parse().ok())
            .unwrap_or(0)
    };
    let whole = number("", " of ");
    let total = sentence
        .split(" of ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    (
        whole,
        number("", " in part"),
        number("", " left out for budget"),
        total,
    )
}

#[test]
fn a_review_in_parts_says_which_part_saw_which_file_and_each_quote_once() {
    let repo = ledger();
    let server = ModelServer::start(answer);
    configure(&repo, &server, "[guardian]\nenabled = false\n");
    let run = speed(
        repo.path(),
        &["review", "--task-id", "7", "--json", "--budget", IN_PARTS],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    let r = &json_of(&run)["reviews"][0];
    let parts = r["parts"].as_array().unwrap();
    assert!(parts.len() >= 2, "{r}");
    // Each part names the files its prompt showed; together they are the
    // change, and a file split over two parts says which hunks each saw.
    let mut seen: Vec<String> = Vec::new();
    for p in parts {
        let shown = p["shown"].as_array().unwrap();
        assert!(!shown.is_empty(), "{p}");
        assert_eq!(p["files"], shown.len(), "{p}");
        for f in shown {
            let hunks = f["hunks"].as_u64().unwrap();
            let (first, last) = (
                f["first_hunk"].as_u64().unwrap(),
                f["last_hunk"].as_u64().unwrap(),
            );
            assert!(1 <= first && first <= last && last <= hunks, "{f}");
            if f["whole"] == true {
                assert_eq!((first, last), (1, hunks), "{f}");
            }
            seen.push(f["path"].as_str().unwrap().to_string());
        }
    }
    seen.sort();
    seen.dedup();
    assert_eq!(seen, (0..MODULES).map(path).collect::<Vec<_>>());
    // Every part quoted the same sentence with its own evidence: one check,
    // each part's evidence kept.
    let checks = r["review"]["spec_verification"].as_array().unwrap();
    assert_eq!(checks.len(), 1, "{checks:?}");
    assert!(
        checks[0]["evidence"].as_str().unwrap().contains("; "),
        "{checks:?}"
    );
    assert_eq!(r["quotes"].as_array().unwrap().len(), 1, "{}", r["quotes"]);

    // The terminal lists the quote once.
    let shown = speed(repo.path(), &["show", "--task-id", "7"], &[]);
    assert_eq!(shown.stdout.matches(QUOTE).count(), 1, "{}", shown.stdout);
    // Markdown: the quote once, and which part saw which file.
    let md = speed(
        repo.path(),
        &["show", "--task-id", "7", "--format", "markdown"],
        &[],
    );
    assert_eq!(md.code, 0, "{}", md.transcript());
    assert!(
        md.stdout.contains("### Which part saw which file"),
        "{}",
        md.stdout
    );
    for p in parts {
        let line = md
            .stdout
            .lines()
            .find(|l| l.starts_with(&format!("- Part {} of {}: ", p["index"], parts.len())))
            .unwrap_or_else(|| panic!("part {} missing:\n{}", p["index"], md.stdout));
        for f in p["shown"].as_array().unwrap() {
            assert!(line.contains(f["path"].as_str().unwrap()), "{line}");
        }
    }
    assert_eq!(
        md.stdout.matches("An amount is never negative").count(),
        1,
        "{}",
        md.stdout
    );
    // The summary beside the report says it too.
    let report = &repo.report_files()[0];
    let summary = repo.read(report["summary_path"].as_str().unwrap());
    let listed = summary
        .split("## Which part saw which file")
        .nth(1)
        .unwrap();
    assert!(
        listed.contains(&format!("- Part 1 of {} (", parts.len())),
        "{summary}"
    );
    // HTML: a table of the parts, the quote once.
    let html = speed(
        repo.path(),
        &["show", "--task-id", "7", "--format", "html"],
        &[],
    );
    assert_eq!(html.code, 0, "{}", html.transcript());
    assert!(
        html.stdout.contains("Which part saw which file"),
        "{}",
        html.stdout
    );
    assert!(
        html.stdout
            .contains(&format!("<th scope=\"row\">1 of {}</th>", parts.len())),
        "{}",
        html.stdout
    );
    assert_eq!(
        html.stdout.matches("An amount is never negative").count(),
        1,
        "{}",
        html.stdout
    );
}

#[test]
fn the_guardian_reports_what_it_saw_like_the_review() {
    let repo = ledger();
    let server = ModelServer::start(answer);
    configure(
        &repo,
        &server,
        &format!("[guardian]\nenabled = true\ntoken_budget = {GUARDIAN_BUDGET}\n"),
    );
    let run = speed(
        repo.path(),
        &["review", "--task-id", "7", "--budget", IN_PARTS],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    // The review saw everything in parts; the guardian, in one prompt of
    // its smaller budget, did not, and the terminal says so below its word.
    assert!(
        run.stdout.contains("The model saw the whole diff in "),
        "{}",
        run.stdout
    );
    let lines: Vec<&str> = run.stdout.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.contains("Guardian: ALIGNED"))
        .unwrap_or_else(|| panic!("{}", run.stdout));
    let said = lines[at + 1];
    assert!(said.contains("! The guardian saw "), "{said}");
    let (whole, partly, left_out, total) = counts(said.split(": ").last().unwrap());
    assert_eq!(total, MODULES, "{said}");
    assert_eq!(whole + partly + left_out, total, "{said}");
    assert!(left_out + partly > 0, "{said}");

    // The report: the guardian's coverage, in the report's schema.
    let report = &repo.report_files()[0];
    let c = &report["guardian"]["coverage"];
    assert_eq!(c["files_total"], MODULES, "{c}");
    assert_eq!(c["files_shown"], whole + partly, "{c}");
    assert_eq!(c["files_unseen"], left_out + partly, "{c}");
    let schema = speed(repo.path(), &["schema", "report"], &[]);
    let schema: Value = serde_json::from_str(&schema.stdout).unwrap();
    assert!(
        schema["properties"]["guardian"]["properties"]["coverage"].is_object(),
        "{schema}"
    );
    assert!(
        schema["properties"]["parts"]["items"]["properties"]["shown"].is_object(),
        "{schema}"
    );
    // Markdown, HTML, the summary beside the report and the GitHub step
    // summary say it too, with the files it did not see.
    let unseen: Vec<&str> = c["files_omitted"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert!(!unseen.is_empty());
    let md = speed(
        repo.path(),
        &["show", "--task-id", "7", "--format", "markdown"],
        &[],
    );
    let guardian = md.stdout.split("## Guardian").nth(1).unwrap();
    assert!(guardian.contains("The guardian saw "), "{guardian}");
    for path in &unseen {
        assert!(guardian.contains(path), "{path} in {guardian}");
    }
    let html = speed(
        repo.path(),
        &["show", "--task-id", "7", "--format", "html"],
        &[],
    );
    let guardian = html.stdout.split(">Guardian<").nth(1).unwrap();
    assert!(guardian.contains("The guardian saw "), "{guardian}");
    assert!(guardian.contains(unseen[0]), "{guardian}");
    let summary = repo.read(report["summary_path"].as_str().unwrap());
    let guardian = summary.split("## Guardian").nth(1).unwrap();
    assert!(guardian.contains("The guardian saw "), "{guardian}");
    let step = repo.path().join("step-summary.md");
    let ci = speed(
        repo.path(),
        &[
            "review",
            "--task-id",
            "7",
            "--budget",
            IN_PARTS,
            "--force",
            "--format",
            "github",
        ],
        &[("GITHUB_STEP_SUMMARY", step.to_str().unwrap())],
    );
    assert_eq!(ci.code, 0, "{}", ci.transcript());
    let step = std::fs::read_to_string(&step).unwrap();
    assert!(step.contains("The guardian saw "), "{step}");

    // SARIF and JUnit say it too: a warning, since the guardian's word
    // speaks for part of the diff, beside a note that the review saw it all.
    let review = |format: &str| {
        let run = speed(
            repo.path(),
            &[
                "review",
                "--task-id",
                "7",
                "--budget",
                IN_PARTS,
                "--force",
                "--format",
                format,
            ],
            &[],
        );
        assert_eq!(run.code, 0, "{}", run.transcript());
        run.stdout
    };
    let sarif: Value = serde_json::from_str(&review("sarif")).unwrap();
    let run = &sarif["runs"][0];
    let said: Vec<(&str, &str)> = run["invocations"][0]["toolExecutionNotifications"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["level"].as_str().unwrap(),
                n["message"]["text"].as_str().unwrap(),
            )
        })
        .collect();
    assert!(
        said.iter()
            .any(|(level, text)| *level == "warning" && text.contains("The guardian saw ")),
        "{said:?}"
    );
    assert!(
        said.iter()
            .any(|(level, text)| *level == "note"
                && text.contains("The model saw the whole diff in ")),
        "{said:?}"
    );
    let review_properties = &run["properties"]["speed"]["reviews"][0];
    assert_eq!(
        review_properties["guardian_coverage"]["files_total"], MODULES,
        "{review_properties}"
    );
    assert!(
        review_properties["coverage"]["parts"].as_u64().unwrap() > 1,
        "{review_properties}"
    );
    let junit = review("junit");
    assert!(junit.contains("[warning] The guardian saw "), "{junit}");
    assert!(
        junit.contains("The model saw the whole diff in "),
        "{junit}"
    );
}

#[test]
fn a_dry_run_in_parts_names_what_is_left_out_once_and_ends_with_a_warning() {
    let repo = ledger();
    let run = speed(
        repo.path(),
        &[
            "review",
            "--task-id",
            "7",
            "--dry-run",
            "--budget",
            TOO_SMALL,
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    let err = &run.stderr;
    assert!(err.contains(" in 4 parts"), "{err}");
    // The counts add up: whole, in part and left out make the files.
    let line = err
        .lines()
        .find(|l| l.trim_start().starts_with("files shown in 4 parts: "))
        .unwrap_or_else(|| panic!("{err}"));
    let (whole, partly, left_out, total) = counts(line.split(": ").nth(1).unwrap());
    assert_eq!(total, MODULES, "{line}");
    assert_eq!(whole + partly + left_out, total, "{line}");
    assert!(left_out > 0 && partly > 0, "{line}");
    // Each file left out is named once for the review, not once per part.
    assert!(
        err.contains(&format!("left out for budget ({left_out}):")),
        "{err}"
    );
    for i in 0..MODULES {
        let named = err
            .lines()
            .filter(|l| l.trim_start().starts_with(&format!("- {}:", path(i))))
            .count();
        assert!(named <= 1, "{} named {named} times:\n{err}", path(i));
    }
    // A section's omissions are named once for the review (the impact
    // table leaves rows out in every part).
    let named_once = err
        .lines()
        .filter(|l| l.trim_start().starts_with("- omitted "))
        .count();
    assert!(named_once <= 10, "{err}");
    assert!(err.contains("(leaves out"), "{err}");
    // It ends with a marked warning saying what the review would do.
    let last = err.lines().last().unwrap();
    assert!(last.starts_with("warning: task 7: its 4 parts"), "{err}");
    assert!(
        last.contains(&format!(
            "{left_out} of {total} changed files and part of {partly} other"
        )),
        "{last}"
    );
    assert!(last.contains("would request changes"), "{last}");
    // The JSON lists each part's files, and stderr still ends with it.
    let run = speed(
        repo.path(),
        &[
            "review",
            "--task-id",
            "7",
            "--dry-run",
            "--json",
            "--budget",
            TOO_SMALL,
        ],
        &[],
    );
    let r = &json_of(&run)["reviews"][0];
    let parts = r["parts"].as_array().unwrap_or_else(|| panic!("{r}"));
    assert_eq!(parts.len(), 4, "{r}");
    assert!(
        parts
            .iter()
            .all(|p| !p["shown"].as_array().unwrap().is_empty()),
        "{r}"
    );
    assert!(
        run.stderr
            .trim_end()
            .lines()
            .last()
            .unwrap()
            .starts_with("warning: task 7: "),
        "{}",
        run.stderr
    );

    // The review itself says the same counts in the terminal.
    let server = ModelServer::start(answer);
    configure(
        &repo,
        &server,
        "[guardian]\nenabled = false\n[review]\nmax_parts = 4\n",
    );
    let review = speed(
        repo.path(),
        &["review", "--task-id", "7", "--budget", TOO_SMALL],
        &[],
    );
    assert_eq!(review.code, 50, "{}", review.transcript());
    let saw = review
        .stdout
        .lines()
        .find(|l| l.contains("The model saw "))
        .unwrap_or_else(|| panic!("{}", review.stdout));
    assert!(
        saw.ends_with(&format!(
            "in 4 parts: {whole} of {total} changed files whole, {partly} in part, {left_out} left out for budget"
        )),
        "{saw}"
    );
    assert!(
        review.stdout.contains(&format!(
            "{left_out} of {total} changed files and part of {partly} other"
        )),
        "{}",
        review.stdout
    );
}

#[test]
fn a_requirement_one_part_finds_unmet_and_another_missing_is_one_quote() {
    let repo = ledger();
    // Part 1 checks the sentence and finds it unmet; every other part
    // finds it missing: one requirement, one quote in every format.
    let server = ModelServer::start(|req: &Recorded| {
        let prompt = prompt_of(req);
        let first = prompt.contains("this is part 1.");
        let (checked, missing) = if first {
            (
                json!([{"spec_quote": QUOTE, "spec_section": "Ledger > Amounts", "satisfied": false,
                        "evidence": "src/ledger/m0.py:5", "notes": "the negative case is not refused"}]),
                json!([]),
            )
        } else {
            (
                json!([]),
                json!([{"spec_quote": QUOTE, "description": "no function refuses a negative amount"}]),
            )
        };
        Reply::openai(&text(&json!({
            "verdict": "request_changes",
            "expectations": "Negative amounts are refused.",
            "criteria": [],
            "spec_verification": checked,
            "missing_from_spec": missing,
            "issues": [{"severity": "major", "file": "src/ledger/m0.py", "line": 5,
                        "message": "a negative amount is accepted", "suggestion": "raise ValueError"}],
            "strengths": [],
            "rejection": {"kind": "implementation", "reason": "negative amounts pass"},
            "dimensions": dimensions()
        })))
    });
    configure(&repo, &server, "[guardian]\nenabled = false\n");
    let run = speed(
        repo.path(),
        &["review", "--task-id", "7", "--json", "--budget", IN_PARTS],
        &[],
    );
    assert_eq!(run.code, 50, "{}", run.transcript());
    let r = &json_of(&run)["reviews"][0];
    assert!(r["parts"].as_array().unwrap().len() >= 3, "{r}");
    // Every part but the first found it missing: listed once.
    assert_eq!(
        r["review"]["missing_from_spec"].as_array().unwrap().len(),
        1,
        "{r}"
    );
    for format in ["markdown", "html"] {
        let shown = speed(
            repo.path(),
            &["show", "--task-id", "7", "--format", format],
            &[],
        );
        assert_eq!(shown.code, 0, "{}", shown.transcript());
        let table = match format {
            "markdown" => shown.stdout.split("## Spec quotes").nth(1).unwrap(),
            _ => shown.stdout.split("Each quote of the spec").nth(1).unwrap(),
        };
        let table = table.split("</table>").next().unwrap();
        let table = table.split("\n## ").next().unwrap();
        assert_eq!(
            table.matches("An amount is never negative").count(),
            1,
            "{format}: {table}"
        );
    }
}
