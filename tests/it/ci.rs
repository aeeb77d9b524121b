//! speed in CI, on a GitHub Actions runner reproduced locally
//! (`support::runner`: its environment, actions/checkout's detached HEAD at
//! fetch depth 1 and 0): SARIF fingerprints that stay across a push while
//! the finding moves, no SARIF log from a review that did not decide,
//! shards of 1 to 3 runners over 5 tasks in every format, and the smaller
//! things a CI log shows (one error prefix, counts in words, findings
//! without a file on the spec).

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::formats::assert_valid_sarif;
use crate::support::model_server::{ModelServer, Reply};
use crate::support::repo::{self, RepoBuilder, TempRepo};
use crate::support::runner::{Checkout, git, speed_on};
use crate::support::speed::speed;

pub(crate) const SPEC: &str =
    "# Counter\n\n## Limits\n\nEvery counter stops at 100.\nA counter never goes below zero.\n";

/// A project as CI sees it: main holds the spec, the code, `count` done
/// task files and `.speed/config.toml` (`config`), all committed; each
/// `speed/task-N` branch raises its own limit.
pub(crate) fn project(count: usize, config: &str) -> TempRepo {
    let (tmp, root) = repo::empty();
    let mut b = RepoBuilder::init(&root).unwrap();
    let mut files = vec![
        ("specs/product/counter.md".to_string(), SPEC.to_string()),
        (".speed/config.toml".to_string(), config.to_string()),
    ];
    for i in 1..=count {
        files.push((
            format!("src/c{i}.rs"),
            format!("pub fn limit_{i}() -> u32 {{\n    10\n}}\n"),
        ));
        files.push((
            format!(".speed/tasks/{i}.json"),
            json!({"id": i.to_string(), "title": format!("Raise limit {i}"), "status": "done",
                   "acceptance_criteria": "limit is 100",
                   "spec_references": [{"spec": "specs/product/counter.md", "section": "Limits"}]})
            .to_string(),
        ));
    }
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    b.commit("main", None, &refs, &[], "main").unwrap();
    for i in 1..=count {
        let path = format!("src/c{i}.rs");
        let body =
            format!("pub fn limit_{i}() -> u32 {{\n    let x = 100;\n    dbg!(x);\n    x\n}}\n");
        b.commit(
            &format!("speed/task-{i}"),
            Some("main"),
            &[(&path, &body)],
            &[],
            "raise",
        )
        .unwrap();
    }
    b.checkout("main").unwrap();
    repo::adopt(tmp, root)
}

pub(crate) const OFFLINE: &str = "[llm]\nprovider = \"none\"\n";

/// The configuration of a project reviewed by the loopback model.
pub(crate) fn loopback(server: &ModelServer) -> String {
    format!(
        "[llm]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"loopback-model\"\napi_key_env = \"LOOPBACK_KEY\"\ntimeout_secs = 5\nmax_retries = 0\nretry_base_ms = 10\n[guardian]\nenabled = false\n",
        server.url()
    )
}

pub(crate) fn head(origin: &TempRepo, rev: &str) -> String {
    git(origin.path(), &["rev-parse", rev])
}

/// An answer about task 1 of `project`: request_changes with one major
/// issue at `line` of src/c1.rs, worded `message`.
fn sent_back(line: u64, message: &str) -> String {
    json!({
        "verdict": "request_changes",
        "expectations": "Counters stop at 100.",
        "criteria": [{"id": "AC-1", "status": "met", "evidence": "src/c1.rs:2"}],
        "spec_verification": [{"spec_quote": "Every counter stops at 100.", "spec_section": "Limits",
                               "satisfied": true, "evidence": "src/c1.rs:2", "notes": ""}],
        "issues": [{"severity": "major", "file": "src/c1.rs", "line": line,
                    "message": message, "suggestion": "Remove it."}],
        "strengths": [],
        "dimensions": crate::support::verdicts::dimensions(),
    })
    .to_string()
}

fn sarif(stdout: &str) -> Value {
    let log: Value = serde_json::from_str(stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_valid_sarif(&log);
    log
}

/// (ruleId, startLine, fingerprint) of every result.
fn fingerprints(log: &Value) -> Vec<(String, u64, String)> {
    log["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["ruleId"].as_str().unwrap().to_string(),
                r["locations"][0]["physicalLocation"]["region"]["startLine"]
                    .as_u64()
                    .unwrap(),
                r["partialFingerprints"]["speedFinding/v2"]
                    .as_str()
                    .unwrap()
                    .to_string(),
            )
        })
        .collect()
}

fn find<'a>(found: &'a [(String, u64, String)], rule: &str) -> &'a (String, u64, String) {
    found
        .iter()
        .find(|(r, _, _)| r == rule)
        .unwrap_or_else(|| panic!("no {rule} in {found:?}"))
}

/// The same findings, moved two lines down by a new commit: the same
/// fingerprints, whether the review names the task or (as a workflow
/// reviewing `github.event.pull_request.head.sha` does) a new commit id,
/// and whatever the model's words.
#[test]
fn fingerprints_stay_while_a_push_moves_the_finding() {
    let said: Arc<Mutex<(u64, String)>> = Arc::new(Mutex::new((3, String::new())));
    let answer = Arc::clone(&said);
    let server = ModelServer::start(move |_| {
        let (line, message) = answer.lock().unwrap().clone();
        Reply::openai(&sent_back(line, &message))
    });
    let origin = project(1, &loopback(&server));
    let key = [("LOOPBACK_KEY", "k")];

    let review = |line: u64, message: &str| {
        *said.lock().unwrap() = (line, message.to_string());
        let job = Checkout::of(origin.path(), &head(&origin, "main"), 0);
        let by_task = speed_on(
            &job,
            &["review", "--task-id", "1", "--format", "sarif"],
            &key,
        );
        assert_eq!(by_task.code, 50, "{}", by_task.transcript());
        let sha = head(&origin, "speed/task-1");
        let offline = speed_on(
            &job,
            &[
                "review",
                "--offline",
                "--branch",
                &sha,
                "--spec",
                "specs/product/counter.md",
                "--format",
                "sarif",
            ],
            &[],
        );
        assert_eq!(offline.code, 0, "{}", offline.transcript());
        (
            fingerprints(&sarif(&by_task.stdout)),
            fingerprints(&sarif(&offline.stdout)),
        )
    };
    let (model_before, offline_before) = review(3, "dbg! left in");

    // A push: two lines above the finding, a new head commit.
    let mut b = RepoBuilder::open(origin.path()).unwrap();
    b.commit(
        "speed/task-1",
        None,
        &[(
            "src/c1.rs",
            "// Limits are raised to 100.\n// See the spec.\npub fn limit_1() -> u32 {\n    let x = 100;\n    dbg!(x);\n    x\n}\n",
        )],
        &[],
        "document",
    )
    .unwrap();
    b.checkout("main").unwrap();
    let (model_after, offline_after) = review(5, "A debugging macro was left behind");

    for (before, after, rule) in [
        (&offline_before, &offline_after, "check/debug_leftover"),
        (&model_before, &model_after, "check/debug_leftover"),
        (&model_before, &model_after, "review/major"),
    ] {
        let (_, line_before, print_before) = find(before, rule);
        let (_, line_after, print_after) = find(after, rule);
        assert_eq!((*line_before, *line_after), (3, 5), "{rule}");
        assert_eq!(print_before, print_after, "{rule} moved from 3 to 5");
    }
    // The model's finding and speed's own at the same line stay two.
    assert_ne!(
        find(&model_after, "review/major").2,
        find(&model_after, "check/debug_leftover").2
    );

    // Other content at the same place is another finding.
    let mut b = RepoBuilder::open(origin.path()).unwrap();
    b.commit(
        "speed/task-1",
        None,
        &[(
            "src/c1.rs",
            "// Limits are raised to 100.\n// See the spec.\npub fn limit_1() -> u32 {\n    let x = 100;\n    dbg!(x + 0);\n    x\n}\n",
        )],
        &[],
        "change",
    )
    .unwrap();
    b.checkout("main").unwrap();
    let (changed, _) = review(5, "A debugging macro was left behind");
    assert_ne!(
        find(&changed, "review/major").2,
        find(&model_after, "review/major").2
    );
}

/// The step uploads `speed.sarif` whatever happened: a review that did
/// not decide must leave nothing there that reads as "every alert fixed".
#[test]
fn on_the_runner_only_a_decided_review_writes_sarif() {
    let server = ModelServer::start(|_| Reply::openai(&sent_back(3, "dbg! left in")));
    let origin = project(2, &loopback(&server));
    let main = head(&origin, "main");
    let key = [("LOOPBACK_KEY", "k")];

    // fetch-depth 1: neither the task branches nor main's name are there.
    let shallow = Checkout::of(origin.path(), &main, 1);
    assert_eq!(
        git(shallow.path(), &["rev-parse", "--is-shallow-repository"]),
        "true"
    );
    let run = speed_on(&shallow, &["review", "--format", "sarif"], &key);
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert_eq!(run.stdout, "", "{}", run.transcript());
    assert!(
        run.stderr.contains("no SARIF log was written"),
        "{}",
        run.stderr
    );
    // The error says why and what to change in the workflow.
    assert!(
        run.stderr.contains("shallow") && run.stderr.contains("`fetch-depth: 0`"),
        "{}",
        run.stderr
    );

    // fetch-depth 0, detached HEAD: both reviews decide, the log is valid.
    let full = Checkout::of(origin.path(), &main, 0);
    assert_eq!(
        git(full.path(), &["rev-parse", "--abbrev-ref", "HEAD"]),
        "HEAD"
    );
    let run = speed_on(&full, &["review", "--format", "sarif"], &key);
    assert_eq!(run.code, 50, "{}", run.transcript());
    let log = sarif(&run.stdout);
    assert_eq!(
        log["runs"][0]["properties"]["speed"]["reviews"]
            .as_array()
            .unwrap()
            .len(),
        2
    );

    // A fork's pull request has no key: the review fails, no log.
    let fork = Checkout::of(origin.path(), &main, 0);
    let run = speed_on(&fork, &["review", "--format", "sarif"], &[]);
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert_eq!(run.stdout, "", "{}", run.transcript());
    assert!(run.stderr.contains("LOOPBACK_KEY"), "{}", run.stderr);

    // The model is down: 52, no log.
    drop(server);
    let run = speed_on(
        &full,
        &["review", "--task-id", "1", "--format", "sarif"],
        &key,
    );
    assert_eq!(run.code, 52, "{}", run.transcript());
    assert_eq!(run.stdout, "", "{}", run.transcript());
}

const FORMATS: [&str; 5] = ["human", "json", "sarif", "junit", "github"];

/// `task N` (the subject every format names a task without a feature by)
/// for each task a run's stdout mentions.
fn mentioned(stdout: &str, count: usize) -> Vec<usize> {
    (1..=count)
        .filter(|i| {
            stdout.contains(&format!("task {i}:"))
                || stdout.contains(&format!("task {i}\""))
                || stdout.contains(&format!("task {i}\n"))
                || stdout.contains(&format!("task {i} "))
                || stdout.contains(&format!("\"task_id\": \"{i}\""))
        })
        .collect()
}

#[test]
fn shards_of_one_to_three_runners_over_five_tasks_in_every_format() {
    let origin = project(5, OFFLINE);
    let job = Checkout::of(origin.path(), &head(&origin, "main"), 0);
    for n in 1..=3usize {
        let mut hands: Vec<Vec<usize>> = Vec::new();
        for k in 1..=n {
            let shard = format!("{k}/{n}");
            let mut hand: Option<Vec<usize>> = None;
            for format in FORMATS {
                let run = speed_on(
                    &job,
                    &["review", "--shard", &shard, "--format", format],
                    &[],
                );
                assert_eq!(run.code, 0, "{shard} {format}: {}", run.transcript());
                let line = run
                    .stderr
                    .lines()
                    .find(|l| l.starts_with(&format!("shard {shard}: ")))
                    .unwrap_or_else(|| panic!("{shard} {format}: no shard line: {}", run.stderr));
                let mine = mentioned(&run.stdout, 5);
                let others = 5 - mine.len();
                let tasks = if mine.len() == 1 { "task" } else { "tasks" };
                assert_eq!(
                    line,
                    format!(
                        "shard {shard}: {} {tasks}, {others} left to other shards",
                        mine.len()
                    ),
                    "{format}: {}",
                    run.transcript()
                );
                match &hand {
                    None => hand = Some(mine),
                    Some(h) => assert_eq!(h, &mine, "{shard}: {format} reviewed other tasks"),
                }
            }
            hands.push(hand.unwrap());
        }
        let mut all: Vec<usize> = hands.concat();
        all.sort_unstable();
        assert_eq!(all, [1, 2, 3, 4, 5], "{n} shards: {hands:?}");
        let sizes: Vec<usize> = hands.iter().map(Vec::len).collect();
        assert!(
            sizes.iter().max().unwrap() - sizes.iter().min().unwrap() <= 1,
            "{n} shards: {sizes:?}"
        );
    }
}

#[test]
fn an_empty_shard_says_it_reviewed_nothing_on_purpose() {
    let origin = project(5, OFFLINE);
    let job = Checkout::of(origin.path(), &head(&origin, "main"), 0);
    let line = "shard 6/6: 0 tasks, 5 left to other shards";
    for format in FORMATS {
        let run = speed_on(&job, &["review", "--shard", "6/6", "--format", format], &[]);
        assert_eq!(run.code, 0, "{format}: {}", run.transcript());
        assert!(run.stderr.contains(line), "{format}: {}", run.stderr);
        match format {
            "junit" => {
                assert!(
                    run.stdout.contains("tests=\"1\"") && run.stdout.contains("skipped=\"1\""),
                    "{}",
                    run.stdout
                );
                assert!(run.stdout.contains("name=\"shard 6/6\""), "{}", run.stdout);
                assert!(run.stdout.contains("on purpose"), "{}", run.stdout);
                assert!(run.stdout.contains(line), "{}", run.stdout);
            }
            "github" => assert!(
                run.stdout
                    .contains("::notice title=speed::nothing to review in this shard"),
                "{}",
                run.stdout
            ),
            "sarif" => {
                assert_eq!(sarif(&run.stdout)["runs"][0]["results"], json!([]));
            }
            "human" => assert!(
                run.stderr.contains("nothing in shard 6/6 needs a review"),
                "{}",
                run.stderr
            ),
            _ => {}
        }
    }
}

/// A review whose error names its subject says it once.
#[test]
fn an_error_names_its_subject_once() {
    let origin = project(1, OFFLINE);
    let sha = head(&origin, "speed/task-1");
    let run = speed(
        origin.path(),
        &[
            "review",
            "--branch",
            &sha,
            "--spec",
            "specs/product/counter.md#No such section",
        ],
        &[],
    );
    assert_eq!(run.code, 1, "{}", run.transcript());
    let line = run
        .stderr
        .lines()
        .find(|l| l.starts_with("error:"))
        .unwrap_or_else(|| panic!("{}", run.stderr));
    assert_eq!(
        line.matches(&format!("branch {sha}")).count(),
        1,
        "{}",
        run.stderr
    );
    assert!(line.contains("--spec"), "{line}");
}

/// A finding with no file of its own (here speed's overrule) is shown on
/// the spec in the github format as in SARIF, and counts are words.
#[test]
fn a_finding_without_a_file_is_on_the_spec_in_every_ci_format() {
    let fabricated = json!({
        "verdict": "approve",
        "expectations": "Counters stop at 100.",
        "criteria": [{"id": "AC-1", "status": "met", "evidence": "src/c1.rs:2"}],
        "spec_verification": [{"spec_quote": "Counters may go to a thousand.", "spec_section": "Limits",
                               "satisfied": true, "evidence": "src/c1.rs:2", "notes": ""}],
        "issues": [], "strengths": [],
        "dimensions": crate::support::verdicts::dimensions(),
    })
    .to_string();
    let server = ModelServer::start(move |_| Reply::openai(&fabricated));
    let origin = project(1, &loopback(&server));
    let key = [("LOOPBACK_KEY", "k")];
    let run = speed(
        origin.path(),
        &["review", "--task-id", "1", "--format", "github"],
        &key,
    );
    assert_eq!(run.code, 50, "{}", run.transcript());
    let overrule = run
        .stdout
        .lines()
        .find(|l| l.contains("overrule/fabricated_quote"))
        .unwrap_or_else(|| panic!("{}", run.stdout));
    assert!(
        overrule.starts_with("::error file=specs/product/counter.md,line=1,"),
        "{overrule}"
    );
    assert!(
        !run.stdout.contains(" 1 errors") && !run.stdout.contains(" 1 warnings"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("2 errors, 1 warning, 0 notes"),
        "{}",
        run.stdout
    );

    let run = speed(
        origin.path(),
        &["review", "--task-id", "1", "--format", "sarif"],
        &key,
    );
    let log = sarif(&run.stdout);
    let result = log["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["ruleId"] == "overrule/fabricated_quote")
        .unwrap()
        .clone();
    assert_eq!(
        result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "specs/product/counter.md"
    );
}

/// An approval of task `i` of `project`.
pub(crate) fn approval(i: usize) -> String {
    json!({
        "verdict": "approve",
        "expectations": "Counters stop at 100.",
        "criteria": [{"id": "AC-1", "status": "met", "evidence": format!("src/c{i}.rs:2")}],
        "spec_verification": [{"spec_quote": "Every counter stops at 100.", "spec_section": "Limits",
                               "satisfied": true, "evidence": format!("src/c{i}.rs:2"), "notes": ""}],
        "issues": [], "strengths": [],
        "dimensions": crate::support::verdicts::dimensions(),
    })
    .to_string()
}

/// A batch is submitted in one job and collected in another, the normal
/// case (a batch can take a day): the collecting job's fresh checkout has
/// no batch state until the workflow carries `.speed/cache/batches/` over
/// as an artifact, and in CI that is an error, not "nothing to collect".
#[test]
fn a_batch_submitted_in_one_job_is_collected_in_another() {
    use crate::support::batch_api::{BatchApi, Fate, Script};
    let api = BatchApi::anthropic(Script::answering(|custom_id, _| {
        let task: usize = custom_id.split('_').nth(1).unwrap().parse().unwrap();
        Fate::Answer(approval(task))
    }));
    let config = format!(
        "[llm]\nprovider = \"anthropic\"\nbase_url = \"{}\"\nmodel = \"loopback-model\"\ntimeout_secs = 5\nmax_retries = 0\nretry_base_ms = 10\n[guardian]\nenabled = false\n",
        api.server.root()
    );
    let origin = project(3, &config);
    let main = head(&origin, "main");
    let key = [("ANTHROPIC_API_KEY", "sk-ant-loopback")];

    let submit = Checkout::of(origin.path(), &main, 0);
    let run = speed_on(
        &submit,
        &["review", "--batch-api", "--format", "sarif"],
        &key,
    );
    assert_eq!(run.code, 54, "{}", run.transcript());
    // Nothing decided yet: no SARIF log.
    assert_eq!(run.stdout, "", "{}", run.transcript());
    assert!(
        submit
            .path()
            .join(".speed/cache/batches/msgbatch_1.json")
            .is_file()
    );

    let collect = Checkout::of(origin.path(), &main, 0);
    let run = speed_on(
        &collect,
        &["review", "--collect", "--format", "junit"],
        &key,
    );
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(
        run.stderr.contains(".speed/cache/batches/") && run.stderr.contains("artifact"),
        "{}",
        run.stderr
    );
    assert!(run.stdout.contains("errors=\"1\""), "{}", run.stdout);
    // Outside CI, an empty folder is still "nothing to collect".
    let env = [("ANTHROPIC_API_KEY", "sk-ant-loopback")];
    let local = speed(collect.path(), &["review", "--collect"], &env);
    assert_eq!(local.code, 0, "{}", local.transcript());
    assert!(
        local.stderr.contains("Nothing to collect"),
        "{}",
        local.stderr
    );

    // actions/upload-artifact in the first job, download-artifact here.
    crate::support::runner::carry(submit.path(), collect.path(), ".speed/cache/batches");
    let run = speed_on(
        &collect,
        &["review", "--collect", "--format", "junit"],
        &key,
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stdout
            .contains("tests=\"3\" failures=\"0\" errors=\"0\""),
        "{}",
        run.stdout
    );
    let log = std::fs::read_to_string(collect.path().join(".speed/reviews/log.jsonl")).unwrap();
    assert_eq!(
        log.lines()
            .filter(|l| l.contains("\"decision\":\"approve\""))
            .count(),
        3,
        "{log}"
    );
    assert!(
        !collect
            .path()
            .join(".speed/cache/batches/msgbatch_1.json")
            .exists()
    );

    // The collecting job keeps its verdicts (`speed notes push`); the next
    // run's fresh checkout fetches them and submits nothing again: the
    // approvals reached by the batch cover the three tasks.
    let pushed = speed_on(&collect, &["notes", "push"], &[]);
    assert_eq!(pushed.code, 0, "{}", pushed.transcript());
    let next = Checkout::of(origin.path(), &main, 0);
    let fetched = speed_on(&next, &["notes", "fetch"], &[]);
    assert_eq!(fetched.code, 0, "{}", fetched.transcript());
    let run = speed_on(&next, &["review", "--batch-api", "--format", "junit"], &key);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert_eq!(api.batches(), 1, "no second batch: {}", run.transcript());
    assert!(run.stdout.contains("skipped=\"3\""), "{}", run.stdout);
    assert!(run.stdout.contains("git note"), "{}", run.stdout);
}
