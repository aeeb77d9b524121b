//! `speed review --format human|json|sarif|junit|github` end to end on the
//! example product: task 1 approved with nits, task 2 sent back. SARIF is
//! validated against the OASIS SARIF 2.1.0 schema (`fixtures/sarif/`), JUnit
//! is parsed as XML, GitHub workflow commands are checked line by line, with
//! hostile model text in each. Also the usage errors a format can meet.

use crate::support::model_server::{ModelServer, Reply};
use crate::support::repo::{self, TempRepo};
use crate::support::speed::{Run, speed};
use crate::support::verdicts::{self, text};
use serde_json::{Value, json};

/// Task 2's answer comes from `task_2`; every other task is approved.
fn serve(task_2: Value) -> ModelServer {
    let task_2 = text(&task_2);
    ModelServer::start(move |req| {
        if req.body.contains("id: 2") {
            Reply::openai(&task_2)
        } else {
            Reply::openai(&text(&verdicts::approve_task_1()))
        }
    })
}

fn configure(repo: &TempRepo, server: &ModelServer) {
    repo.config(&format!(
        "[llm]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"test-model\"\ntimeout_secs = 5\nmax_retries = 0\nretry_base_ms = 10\n[guardian]\nenabled = false\n",
        server.url()
    ));
}

/// Reviews tasks 1 and 2 of a fresh example repository in `format`.
fn review_both(task_2: Value, format: &str, env: &[(&str, &str)]) -> (TempRepo, Run) {
    let repo = repo::example();
    let server = serve(task_2);
    configure(&repo, &server);
    let run = speed(
        repo.path(),
        &[
            "review",
            "--task-id",
            "1",
            "--task-id",
            "2",
            "--format",
            format,
        ],
        env,
    );
    (repo, run)
}

/// A request for changes whose text tries to break out of every format:
/// markup, quotes, a CDATA end, control characters, workflow commands.
fn hostile_task_2() -> Value {
    let mut v = verdicts::request_changes_task_2();
    v["issues"] = json!([
        {"severity": "major", "file": "catalog/src/loans.rs", "line": 8,
         "message": "x < y && \"z\" ]]> \u{7}bell\n::error file=evil.rs::injected\n##[add-mask]secret 100%",
         "suggestion": "::stop-commands::x"},
        {"severity": "minor", "file": "catalog/src/a file, with: odd.rs", "line": 3,
         "message": "path with a comma and a colon", "suggestion": ""}
    ]);
    v
}

/// The `id` the vendored schema declares for itself.
const SARIF_SCHEMA_ID: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

/// Fails the test with every schema violation when `log` is not valid SARIF
/// 2.1.0, formats (URIs, times) included.
pub(crate) fn assert_valid_sarif(log: &Value) {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/sarif/sarif-schema-2.1.0.json"
    ))
    .expect("the vendored SARIF schema");
    let schema: Value = serde_json::from_str(&text).unwrap();
    let mut schemas = boon::Schemas::new();
    let mut compiler = boon::Compiler::new();
    compiler.enable_format_assertions();
    compiler.add_resource(SARIF_SCHEMA_ID, schema).unwrap();
    let index = compiler.compile(SARIF_SCHEMA_ID, &mut schemas).unwrap();
    if let Err(err) = schemas.validate(log, index) {
        panic!(
            "not valid SARIF 2.1.0: {err:#}\n{}",
            serde_json::to_string_pretty(log).unwrap()
        );
    }
}

#[test]
fn the_schema_check_rejects_what_is_not_sarif() {
    let valid = json!({"version": "2.1.0", "runs": []});
    assert_valid_sarif(&valid);
    for bad in [
        json!({"version": "2.0.0", "runs": []}),
        json!({"version": "2.1.0", "runs": [{"tool": {"driver": {}}}]}),
        json!({"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "speed"}},
               "results": [{"message": {"text": "x"}, "level": "fatal"}]}]}),
    ] {
        let caught = std::panic::catch_unwind(|| assert_valid_sarif(&bad));
        assert!(caught.is_err(), "accepted {bad}");
    }
}

fn parse(run: &Run) -> Value {
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.transcript()))
}

#[test]
fn sarif_is_valid_and_declares_every_rule_it_uses() {
    let (_repo, run) = review_both(verdicts::request_changes_task_2(), "sarif", &[]);
    assert_eq!(run.code, 50, "{}", run.transcript());
    let log = parse(&run);
    assert_valid_sarif(&log);

    assert_eq!(log["version"], "2.1.0");
    let sarif_run = &log["runs"][0];
    let driver = &sarif_run["tool"]["driver"];
    assert_eq!(driver["name"], "speed");
    assert_eq!(driver["version"], env!("CARGO_PKG_VERSION"));
    let rules: Vec<&str> = driver["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    let results = sarif_run["results"].as_array().unwrap();
    for r in results {
        let id = r["ruleId"].as_str().unwrap();
        let index = r["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[index], id, "ruleIndex points at its rule");
        let location = &r["locations"][0]["physicalLocation"];
        assert!(location["artifactLocation"]["uri"].is_string(), "{r}");
        assert!(
            location["region"]["startLine"].as_u64().unwrap() >= 1,
            "{r}"
        );
        assert!(r["partialFingerprints"]["speedFinding/v2"].is_string());
    }
    let find = |rule: &str| {
        results
            .iter()
            .find(|r| r["ruleId"] == rule)
            .unwrap_or_else(|| panic!("no {rule} result in {results:#?}"))
    };
    // The model's major issue, at its file and line, as an error.
    let major = find("review/major");
    assert_eq!(major["level"], "error");
    assert_eq!(
        major["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "catalog/src/loans.rs"
    );
    assert_eq!(
        major["locations"][0]["physicalLocation"]["region"]["startLine"],
        8
    );
    assert!(
        major["message"]["text"]
            .as_str()
            .unwrap()
            .contains("Set MAX_RENEWALS to 2")
    );
    assert_eq!(major["properties"]["subject"], "library-catalog/2");
    // Task 1's nit is a note, its minor issue a warning.
    assert_eq!(find("review/nit")["level"], "note");
    assert_eq!(find("review/minor")["level"], "warning");
    // A missing requirement points at the spec line it quotes.
    let missing = find("review/missing-from-spec");
    assert_eq!(
        missing["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "specs/product/library-catalog.md"
    );
    // An unmet criterion has no file: it points at the spec, line 1.
    let unmet = find("review/unmet-criterion");
    assert_eq!(
        unmet["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "specs/product/library-catalog.md"
    );

    let reviews = sarif_run["properties"]["speed"]["reviews"]
        .as_array()
        .unwrap();
    assert_eq!(reviews[0]["verdict"], "approve");
    assert_eq!(reviews[1]["verdict"], "request_changes");
    assert_eq!(reviews[1]["task_update"]["status"], "pending");
    assert_eq!(sarif_run["invocations"][0]["executionSuccessful"], true);
}

#[test]
fn sarif_fingerprints_are_stable_across_runs() {
    let fingerprints = || {
        let (_repo, run) = review_both(verdicts::request_changes_task_2(), "sarif", &[]);
        let log = parse(&run);
        log["runs"][0]["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["ruleId"].as_str().unwrap().to_string(),
                    r["partialFingerprints"]["speedFinding/v2"]
                        .as_str()
                        .unwrap()
                        .to_string(),
                )
            })
            .collect::<Vec<_>>()
    };
    let first = fingerprints();
    assert_eq!(first, fingerprints());
    let mut unique: Vec<&String> = first.iter().map(|(_, f)| f).collect();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), first.len(), "one fingerprint per finding");
}

#[test]
fn sarif_overrules_are_declared_results() {
    let repo = repo::example();
    let server =
        ModelServer::start(|_| Reply::openai(&text(&verdicts::approve_with_fabricated_quote())));
    configure(&repo, &server);
    let run = speed(
        repo.path(),
        &["review", "--task-id", "2", "--format", "sarif"],
        &[],
    );
    assert_eq!(run.code, 50, "{}", run.transcript());
    let log = parse(&run);
    assert_valid_sarif(&log);
    let rules = &log["runs"][0]["tool"]["driver"]["rules"];
    let overrule = rules
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "overrule/fabricated_quote")
        .unwrap_or_else(|| panic!("{rules:#}"));
    assert_eq!(overrule["defaultConfiguration"]["level"], "error");
    assert!(
        overrule["shortDescription"]["text"]
            .as_str()
            .unwrap()
            .contains("quote")
    );
}

/// Code scanning reads a log without results as "every alert fixed": a
/// review that did not decide writes none, and says why on stderr.
#[test]
fn a_failed_review_or_command_writes_no_sarif_log() {
    // The model is unreachable: exit 52, nothing on stdout.
    let repo = repo::example();
    let server = ModelServer::start(|_| Reply::status(503, "overloaded"));
    configure(&repo, &server);
    let run = speed(
        repo.path(),
        &["review", "--task-id", "1", "--format", "sarif"],
        &[],
    );
    assert_eq!(run.code, 52, "{}", run.transcript());
    assert_eq!(run.stdout, "", "{}", run.transcript());
    assert!(run.stderr.contains("503"), "{}", run.stderr);
    assert!(
        run.stderr.contains("no SARIF log was written") && run.stderr.contains("0 or 50"),
        "{}",
        run.stderr
    );

    // One task decided, the other failed: still no log, or the failed
    // task's alerts would close.
    let repo = repo::example();
    let server = ModelServer::start(|req| {
        if req.body.contains("id: 2") {
            Reply::openai("no JSON here at all")
        } else {
            Reply::openai(&text(&verdicts::approve_task_1()))
        }
    });
    configure(&repo, &server);
    let run = speed(
        repo.path(),
        &[
            "review",
            "--task-id",
            "1",
            "--task-id",
            "2",
            "--format",
            "sarif",
        ],
        &[],
    );
    assert_eq!(run.code, 53, "{}", run.transcript());
    assert_eq!(run.stdout, "", "{}", run.transcript());
    assert!(
        run.stderr.contains("no SARIF log was written"),
        "{}",
        run.stderr
    );

    // The configuration is broken: nothing could start, exit 1.
    let repo = repo::example();
    repo.config("[llm]\ntimout_secs = 3\n");
    let run = speed(
        repo.path(),
        &[
            "review",
            "--task-id",
            "1",
            "--format",
            "sarif",
            "--config",
            ".speed/config.toml",
        ],
        &[],
    );
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert_eq!(run.stdout, "", "{}", run.transcript());
    assert!(run.stderr.contains("timeout_secs"), "{}", run.stderr);
    assert!(
        run.stderr.contains("no SARIF log was written"),
        "{}",
        run.stderr
    );
}

#[test]
fn sarif_with_nothing_to_review_is_an_empty_valid_log() {
    let repo = repo::example();
    // Every task pending: nothing is `done`.
    for id in ["1", "2", "3"] {
        let mut task = repo.task(id);
        task["status"] = json!("pending");
        repo.write(&repo.task_path(id), &task.to_string());
    }
    let run = speed(repo.path(), &["review", "--format", "sarif"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let log = parse(&run);
    assert_valid_sarif(&log);
    assert_eq!(log["runs"][0]["results"], json!([]));
}

#[test]
fn sarif_escapes_hostile_paths_into_valid_uris() {
    let (_repo, run) = review_both(hostile_task_2(), "sarif", &[]);
    assert_eq!(run.code, 50, "{}", run.transcript());
    let log = parse(&run);
    assert_valid_sarif(&log);
    let uris: Vec<&str> = log["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                .as_str()
                .unwrap()
        })
        .collect();
    assert!(
        uris.contains(&"catalog/src/a%20file%2C%20with%3A%20odd.rs"),
        "{uris:?}"
    );
}

/// Masks what differs between runs: commits, times, durations, versions.
fn scrub(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let masked = mask_hex(line);
        let masked = mask_after(&masked, "time=\"", '"');
        let masked = mask_after(&masked, "\"duration_ms\": ", ',');
        let masked = mask_after(&masked, "-task-", '.');
        out.push_str(&masked.replace(env!("CARGO_PKG_VERSION"), "[VERSION]"));
        out.push('\n');
    }
    out
}

/// Runs of 7+ hex digits (commits, hashes, fingerprints) become [HEX].
fn mask_hex(line: &str) -> String {
    let mut out = String::new();
    let mut run = String::new();
    for c in line.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_hexdigit() {
            run.push(c);
            continue;
        }
        if run.len() >= 7 && run.chars().any(|c| c.is_ascii_digit()) {
            out.push_str("[HEX]");
        } else {
            out.push_str(&run);
        }
        run.clear();
        out.push(c);
    }
    out.pop();
    out
}

fn mask_after(line: &str, marker: &str, end: char) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(at) = rest.find(marker) {
        out.push_str(&rest[..at + marker.len()]);
        rest = &rest[at + marker.len()..];
        let stop = rest.find(end).unwrap_or(rest.len());
        out.push('…');
        rest = &rest[stop..];
    }
    out.push_str(rest);
    out
}

#[test]
fn sarif_snapshot() {
    let (_repo, run) = review_both(verdicts::request_changes_task_2(), "sarif", &[]);
    assert_eq!(run.code, 50, "{}", run.transcript());
    insta::assert_snapshot!("sarif_tasks_1_and_2", scrub(&run.stdout));
}

#[test]
fn junit_has_one_case_per_task_and_fails_the_one_sent_back() {
    let (_repo, run) = review_both(hostile_task_2(), "junit", &[]);
    assert_eq!(run.code, 50, "{}", run.transcript());
    let doc = roxmltree::Document::parse(&run.stdout)
        .unwrap_or_else(|e| panic!("not XML: {e}\n{}", run.stdout));
    let suites = doc.root_element();
    assert_eq!(suites.tag_name().name(), "testsuites");
    assert_eq!(suites.attribute("tests"), Some("2"));
    assert_eq!(suites.attribute("failures"), Some("1"));
    let cases: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .collect();
    assert_eq!(cases.len(), 2);
    assert!(
        cases[0]
            .attribute("name")
            .unwrap()
            .starts_with("library-catalog/1: ")
    );
    assert_eq!(
        cases[0].attribute("classname"),
        Some("speed.library-catalog")
    );
    assert!(cases[0].children().all(|c| !c.has_tag_name("failure")));
    let failure = cases[1]
        .children()
        .find(|c| c.has_tag_name("failure"))
        .expect("task 2 failed");
    assert_eq!(failure.attribute("type"), Some("request_changes"));
    let body = failure.text().unwrap();
    // The hostile message survives as text, its forbidden character replaced.
    assert!(body.contains("x < y && \"z\" ]]> \u{FFFD}bell"), "{body}");
    assert!(body.contains("catalog/src/loans.rs:8"), "{body}");
    assert!(body.contains("task status: pending (revision 1)"), "{body}");
}

#[test]
fn junit_reports_a_failed_review_as_an_error_and_skips_approved_work() {
    let repo = repo::example();
    let server = ModelServer::start(|_| Reply::status(503, "overloaded"));
    configure(&repo, &server);
    let run = speed(
        repo.path(),
        &["review", "--task-id", "1", "--format", "junit"],
        &[],
    );
    assert_eq!(run.code, 52, "{}", run.transcript());
    let doc = roxmltree::Document::parse(&run.stdout).unwrap();
    let error = doc
        .descendants()
        .find(|n| n.has_tag_name("error"))
        .expect("an error element");
    assert_eq!(error.attribute("type"), Some("model_unreachable"));
    assert_eq!(doc.root_element().attribute("errors"), Some("1"));
}

#[test]
fn junit_snapshot() {
    let (_repo, run) = review_both(verdicts::request_changes_task_2(), "junit", &[]);
    assert_eq!(run.code, 50, "{}", run.transcript());
    insta::assert_snapshot!("junit_tasks_1_and_2", scrub(&run.stdout));
}

/// The lines the runner would act on: those outside a stop-commands block.
fn live_commands(stdout: &str) -> Vec<String> {
    let mut live = Vec::new();
    let mut stopped: Option<String> = None;
    for line in stdout.lines() {
        match &stopped {
            Some(token) => {
                if line == format!("::{token}::") {
                    stopped = None;
                }
            }
            None => {
                if let Some(token) = line.strip_prefix("::stop-commands::") {
                    stopped = Some(token.to_string());
                } else {
                    live.push(line.to_string());
                }
            }
        }
    }
    assert!(stopped.is_none(), "a stop-commands block is never closed");
    live
}

#[test]
fn github_annotates_findings_and_no_model_text_becomes_a_command() {
    let dir = tempfile::tempdir().unwrap();
    let summary = dir.path().join("summary.md");
    std::fs::write(&summary, "earlier step\n").unwrap();
    let summary_env = summary.to_str().unwrap();
    let (_repo, run) = review_both(
        hostile_task_2(),
        "github",
        &[("GITHUB_STEP_SUMMARY", summary_env)],
    );
    assert_eq!(run.code, 50, "{}", run.transcript());

    let live = live_commands(&run.stdout);
    for line in &live {
        assert!(
            [
                "::error ",
                "::warning ",
                "::notice ",
                "::group::",
                "::endgroup::"
            ]
            .iter()
            .any(|p| line.starts_with(p)),
            "a line outside the stop-commands blocks is not one of speed's: {line:?}\n{}",
            run.stdout
        );
    }
    let major = live
        .iter()
        .find(|l| l.contains("review/major"))
        .expect("the major issue is annotated");
    assert!(
        major.starts_with("::error file=catalog/src/loans.rs,line=8,title=speed review/major (library-catalog/2)::x < y"),
        "{major}"
    );
    assert!(
        major.contains("%0A::error file=evil.rs::injected%0A##[add-mask]secret 100%25"),
        "{major}"
    );
    let minor = live
        .iter()
        .find(|l| l.contains("review/minor (library-catalog/2)"))
        .unwrap();
    assert!(
        minor.starts_with("::warning file=catalog/src/a file%2C with%3A odd.rs,line=3,"),
        "{minor}"
    );
    assert!(
        live.iter()
            .any(|l| l.starts_with("::notice file=catalog/src/search.rs,line=28,"))
    );
    assert!(
        live.iter()
            .any(|l| l.starts_with("::error title=speed%3A library-catalog/2::changes requested"))
    );
    assert!(
        live.iter()
            .any(|l| l.starts_with("::notice title=speed%3A library-catalog/1::approved"))
    );
    // The human report of each review is in the log, folded.
    assert!(run.stdout.contains("Reviewing task 2: "), "{}", run.stdout);

    let written = std::fs::read_to_string(&summary).unwrap();
    assert!(
        written.starts_with("earlier step\n## speed review\n"),
        "{written}"
    );
    assert!(
        written.contains("| ❌ | library\\-catalog/2 | changes requested |"),
        "{written}"
    );
    assert!(
        written.contains("| ✅ | library\\-catalog/1 | approved |"),
        "{written}"
    );
    assert!(
        !written.contains("<y"),
        "markup from the model is escaped: {written}"
    );
}

#[test]
fn github_without_a_step_summary_writes_none() {
    let (repo, run) = review_both(verdicts::request_changes_task_2(), "github", &[]);
    assert_eq!(run.code, 50, "{}", run.transcript());
    assert!(run.stdout.contains("::error "), "{}", run.stdout);
    assert!(!repo.path().join("summary.md").exists());
}

#[test]
fn formats_that_print_results_refuse_a_dry_run_and_json_takes_no_other_format() {
    let repo = repo::example();
    for format in ["sarif", "junit", "github"] {
        let run = speed(
            repo.path(),
            &["review", "--task-id", "1", "--dry-run", "--format", format],
            &[],
        );
        assert_eq!(run.code, 2, "{}", run.transcript());
        assert!(
            run.stderr.contains("--dry-run prints a prompt"),
            "{}",
            run.stderr
        );
    }
    let run = speed(
        repo.path(),
        &["review", "--task-id", "1", "--json", "--format", "sarif"],
        &[],
    );
    assert_eq!(run.code, 2, "{}", run.transcript());
    // A usage error prints no SARIF log (it would close every alert)...
    let run = speed(
        repo.path(),
        &["review", "--format", "sarif", "--budget", "0"],
        &[],
    );
    assert_eq!(run.code, 2, "{}", run.transcript());
    assert_eq!(run.stdout, "", "{}", run.transcript());
    assert!(
        run.stderr.contains("no SARIF log was written"),
        "{}",
        run.stderr
    );
    // ...and still the document other formats promise.
    let run = speed(
        repo.path(),
        &["review", "--format", "junit", "--budget", "0"],
        &[],
    );
    assert_eq!(run.code, 2, "{}", run.transcript());
    assert!(run.stdout.contains("errors=\"1\""), "{}", run.transcript());

    let run = speed(
        repo.path(),
        &["review", "--task-id", "1", "--dry-run", "--format", "json"],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(parse(&run)["reviews"][0]["prompt"].is_string());
}

#[test]
fn json_format_is_the_json_flag() {
    let (_repo, by_format) = review_both(verdicts::request_changes_task_2(), "json", &[]);
    let repo = repo::example();
    let server = serve(verdicts::request_changes_task_2());
    configure(&repo, &server);
    let by_flag = speed(
        repo.path(),
        &["review", "--task-id", "1", "--task-id", "2", "--json"],
        &[],
    );
    let shape = |run: &Run| {
        let v = parse(run);
        v["reviews"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["task_id"].clone(),
                    r["verdict"].clone(),
                    r["task_update"].clone(),
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(shape(&by_format), shape(&by_flag));
    assert_eq!(by_format.code, by_flag.code);
}

/// An offline review (no model): speed's own checks are the findings.
#[test]
fn offline_checks_are_findings_in_every_format_and_secrets_stay_out() {
    const AWS_KEY: &str = "AKIAQYLPMN5HHHFPZAM2";
    let make = || {
        let repo = repo::example();
        let mut builder = crate::support::repo::RepoBuilder::open(repo.path()).unwrap();
        builder
            .commit(
                "speed/task-1",
                Some("speed/task-1"),
                &[
                    (
                        "catalog/src/fines.rs",
                        "pub fn fine_for(days: u32) -> u32 {\n    dbg!(days);\n    todo!()\n}\n",
                    ),
                    ("deploy/keys.toml", &format!("aws = \"{AWS_KEY}\"\n")),
                ],
                &[],
                "more work",
            )
            .unwrap();
        repo
    };
    let offline = |format: &str| {
        let repo = make();
        speed(
            repo.path(),
            &["review", "--task-id", "1", "--offline", "--format", format],
            &[],
        )
    };

    let run = offline("sarif");
    assert_eq!(run.code, 50, "{}", run.transcript());
    assert!(!run.stdout.contains(AWS_KEY));
    let log = parse(&run);
    assert_valid_sarif(&log);
    let results = log["runs"][0]["results"].as_array().unwrap();
    let rule = |id: &str| results.iter().find(|r| r["ruleId"] == id);
    let secret = rule("check/secret").expect("the secret is a finding");
    assert_eq!(secret["level"], "error");
    assert_eq!(
        secret["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "deploy/keys.toml"
    );
    assert_eq!(rule("check/placeholder").unwrap()["level"], "error");
    assert_eq!(rule("check/debug_leftover").unwrap()["level"], "warning");
    let rules = log["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .unwrap();
    let declared = rules
        .iter()
        .find(|r| r["id"] == "check/placeholder")
        .unwrap();
    assert!(
        declared["shortDescription"]["text"]
            .as_str()
            .unwrap()
            .contains("placeholder")
    );

    let run = offline("junit");
    assert_eq!(run.code, 50, "{}", run.transcript());
    let doc = roxmltree::Document::parse(&run.stdout).unwrap();
    let failure = doc
        .descendants()
        .find(|n| n.has_tag_name("failure"))
        .unwrap();
    assert!(
        failure
            .text()
            .unwrap()
            .contains("check/placeholder catalog/src/fines.rs:3"),
        "{}",
        run.stdout
    );

    let run = offline("github");
    assert_eq!(run.code, 50, "{}", run.transcript());
    assert!(!run.stdout.contains(AWS_KEY));
    assert!(
        live_commands(&run.stdout).iter().any(|l| l
            .starts_with("::error file=catalog/src/fines.rs,line=3,title=speed check/placeholder")),
        "{}",
        run.stdout
    );

    // Nothing found: checks_passed, a passing test case, no result.
    let repo = repo::example();
    let run = speed(
        repo.path(),
        &["review", "--task-id", "1", "--offline", "--format", "junit"],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    let doc = roxmltree::Document::parse(&run.stdout).unwrap();
    assert_eq!(doc.root_element().attribute("failures"), Some("0"));
    let run = speed(
        repo.path(),
        &[
            "review",
            "--task-id",
            "1",
            "--offline",
            "--format",
            "github",
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stdout
            .contains("::notice title=speed%3A library-catalog/1::checks passed (offline"),
        "{}",
        run.stdout
    );
}

#[test]
fn github_keeps_a_hostile_server_error_on_one_line() {
    let repo = repo::example();
    let server =
        ModelServer::start(|_| Reply::status(400, "bad request\n::add-mask::x\n::error::forged"));
    configure(&repo, &server);
    let run = speed(
        repo.path(),
        &["review", "--task-id", "1", "--format", "github"],
        &[],
    );
    assert_ne!(run.code, 0, "{}", run.transcript());
    for line in run.stderr.lines() {
        assert!(
            !line.trim_start().starts_with("::"),
            "a command on stderr: {line:?}"
        );
    }
    for line in live_commands(&run.stdout) {
        assert!(
            line.starts_with("::error title=speed%3A library-catalog/1::review failed: ")
                || line.starts_with("::group::")
                || line.starts_with("::endgroup::"),
            "{line:?}"
        );
    }
}
