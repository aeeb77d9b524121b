//! `speed spec review` end to end: the real binary on a real repository, a
//! loopback server playing the model and a shell script playing the reviser.
//! Covers a pass at the first review, a pass after one revision, a session
//! blocked at its limit and resumed, blocked on malformed output, a
//! reviser that fails or returns garbage, speed's minimums, the session
//! file and the events, secrets, `--rev`, `--offline` and `--dry-run`.

use std::path::{Path, PathBuf};

use crate::support::model_server::{ModelServer, Recorded, Reply};
use crate::support::repo::{self, RepoBuilder, TempRepo};
use crate::support::speed::{Run, speed};
use serde_json::{Value, json};

const SPEC: &str = "# Late fines

Fines for books returned late.

## Charging

A fine of 25 cents is charged for each day late.

## Cap

The fine for one loan never exceeds the book's replacement price.
";

const PRD: &str = "# Late fines PRD

## Requirements

- FR-1: Charge a fine for each day a book is returned late
- FR-2: The fine never exceeds the book's replacement price
- FR-3: Members see their fines at the self-service kiosk
";

/// The spec after the reviser addressed the kiosk.
const REVISED: &str = "# Late fines

Fines for books returned late.

## Charging

A fine of 25 cents is charged for each day late.

## Cap

The fine for one loan never exceeds the book's replacement price.

## Kiosk

Members see their open fines at the self-service kiosk, in cents.
";

/// A repository whose main holds the spec, its PRD (in `features`, the
/// single-player layout unless `shared`) and a configuration pointing at
/// `server`; HEAD is main, so the working tree's configuration is main's.
fn repo_with(server: &ModelServer, shared: bool, config_extra: &str) -> TempRepo {
    let (tmp, root) = repo::empty();
    let mut b = RepoBuilder::init(&root).unwrap();
    let features = if shared {
        ".speed/shared/features"
    } else {
        ".speed/features"
    };
    let config = format!(
        "[llm]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"test-model\"\ntimeout_secs = 5\nmax_retries = 0\n{config_extra}\n",
        server.url()
    );
    b.commit(
        "main",
        None,
        &[
            ("specs/product/late-fines.md", SPEC),
            (&format!("{features}/late-fines/prd.md"), PRD),
            (".speed/config.toml", &config),
        ],
        &[],
        "spec draft",
    )
    .unwrap();
    b.checkout("main").unwrap();
    repo::adopt(tmp, root)
}

fn answer(verdict: &str, testability: u32, feedback: Value) -> String {
    json!({
        "verdict": verdict,
        "scores": {"completeness": 80, "consistency": 90, "testability": testability, "architecture": 85},
        "feedback": feedback,
    })
    .to_string()
}

fn pass() -> Reply {
    Reply::openai(&answer("pass", 88, json!([])))
}

fn needs_kiosk() -> Reply {
    Reply::openai(&format!(
        "Here is my review.\n```json\n{}\n```",
        answer(
            "needs_revision",
            75,
            json!([{"section": "Late fines", "issue": "FR-3 (the kiosk) is not specified.",
                    "suggestion": "Add a Kiosk section saying what members see."}])
        )
    ))
}

/// A reviser script: the n-th run saves its stdin as `in/<n>.txt` and
/// prints `out/<n>.md` (or runs `fail` when that file is missing).
struct Reviser {
    dir: PathBuf,
}

impl Reviser {
    fn new(repo: &TempRepo, outputs: &[&str], fail: &str) -> Reviser {
        let dir = repo.path().parent().unwrap().join("reviser");
        std::fs::create_dir_all(dir.join("in")).unwrap();
        std::fs::create_dir_all(dir.join("out")).unwrap();
        for (n, text) in outputs.iter().enumerate() {
            std::fs::write(dir.join(format!("out/{n}.md")), text).unwrap();
        }
        let script = format!(
            "n=$(ls '{d}/in' | wc -l | tr -d ' ')\ncat > '{d}/in/'$n.txt\nif [ -f '{d}/out/'$n.md ]; then cat '{d}/out/'$n.md; else {fail}; fi\n",
            d = dir.display()
        );
        std::fs::write(dir.join("revise.sh"), script).unwrap();
        Reviser { dir }
    }

    fn argv(&self) -> Vec<String> {
        vec![
            "sh".into(),
            self.dir.join("revise.sh").display().to_string(),
        ]
    }

    fn stdin(&self, n: usize) -> String {
        std::fs::read_to_string(self.dir.join(format!("in/{n}.txt"))).unwrap()
    }

    fn runs(&self) -> usize {
        std::fs::read_dir(self.dir.join("in")).unwrap().count()
    }
}

fn spec_review(repo: &TempRepo, args: &[&str]) -> Run {
    let mut all = vec!["spec", "review"];
    all.extend_from_slice(args);
    speed(repo.path(), &all, &[])
}

fn with_reviser(repo: &TempRepo, reviser: &Reviser, args: &[&str]) -> Run {
    let mut all: Vec<String> = ["spec", "review"]
        .iter()
        .chain(args)
        .map(|s| s.to_string())
        .collect();
    all.push("--reviser".into());
    all.extend(reviser.argv());
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    speed(repo.path(), &all, &[])
}

fn session(repo: &TempRepo) -> Value {
    serde_json::from_str(&repo.read(".speed/spec-reviews/late-fines.json")).unwrap()
}

/// Every event file in `dir` (relative to the root), parsed, by name.
fn events(repo: &TempRepo, dir: &str) -> Vec<Value> {
    let mut names: Vec<PathBuf> = std::fs::read_dir(repo.path().join(dir))
        .map(|d| d.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    names.sort();
    names
        .iter()
        .map(|p| serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap())
        .collect()
}

fn types(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| e["type"].as_str().unwrap().to_string())
        .collect()
}

fn user_message(req: &Recorded) -> String {
    let messages = req.json()["messages"].as_array().unwrap();
    messages[0]["content"].as_str().unwrap().to_string()
}

#[test]
fn a_spec_that_passes_at_the_first_review() {
    let server = ModelServer::scripted(vec![pass()]);
    let repo = repo_with(&server, false, "");
    let run = spec_review(&repo, &["late-fines"]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(run.stdout.contains("Review 1: pass"), "{}", run.stdout);
    assert!(
        run.stdout.contains("→ the spec passed review 1"),
        "{}",
        run.stdout
    );

    // The prompt: the spec, the PRD, the criteria, and speed's facts.
    let prompt = user_message(&server.requests()[0]);
    assert!(prompt.contains("The fine for one loan never exceeds"));
    assert!(prompt.contains("- FR-3: Members see their fines at the self-service kiosk"));
    assert!(prompt.contains("- `testability` (minimum 70):"));
    assert!(
        prompt.contains("2 of the PRD's 3 requirements are traced"),
        "{prompt}"
    );
    assert!(
        prompt.contains("untraced_requirement [major]: FR-3"),
        "{prompt}"
    );

    let s = session(&repo);
    assert_eq!(s["feature"], "late-fines");
    assert_eq!(s["specs_path"], "specs/product/late-fines.md");
    assert_eq!(s["prd_path"], ".speed/features/late-fines/prd.md");
    assert_eq!(s["final_verdict"], "pass");
    assert_eq!(s["block_reason"], "");
    assert_eq!(s["recovery_actions"], json!([]));
    assert_eq!(s["config"]["max_iterations"], 3);
    let it = &s["iterations"][0];
    assert_eq!(it["iteration"], 1);
    assert_eq!(it["result"]["verdict"], "pass");
    assert_eq!(it["result"]["scores"]["testability"], 88);
    assert!(it["spec_hash"].as_str().unwrap().starts_with("sha256:"));
    assert!(it["timestamp"].is_string());

    let events = events(&repo, ".speed/events");
    assert_eq!(
        types(&events),
        [
            "spec.review.started",
            "spec.review.iteration",
            "spec.review.passed"
        ]
    );
    assert_eq!(events[2]["data"]["scores"]["architecture"], 85);
    assert_eq!(repo.read("specs/product/late-fines.md"), SPEC);
}

#[test]
fn a_spec_that_passes_after_one_revision() {
    let server = ModelServer::scripted(vec![needs_kiosk(), pass()]);
    let repo = repo_with(&server, false, "");
    let reviser = Reviser::new(&repo, &[REVISED], "exit 9");
    let run = with_reviser(&repo, &reviser, &["late-fines"]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stderr
            .contains("revising specs/product/late-fines.md with `sh "),
        "{}",
        run.stderr
    );

    // The reviser read the spec, the PRD and the feedback, as the command
    // provider writes a conversation; its answer replaced the spec.
    let stdin = reviser.stdin(0);
    assert!(
        stdin.starts_with("=== USER ===\n# Revise a spec"),
        "{stdin}"
    );
    assert!(stdin.contains("FR-3 (the kiosk) is not specified."));
    assert!(stdin.contains("The fine for one loan never exceeds"));
    assert!(stdin.contains("- FR-2: The fine never exceeds"));
    assert_eq!(repo.read("specs/product/late-fines.md"), REVISED);

    // The second review saw the revised spec and the feedback it addressed.
    let second = user_message(&server.requests()[1]);
    assert!(second.contains("Members see their open fines"), "{second}");
    assert!(
        second.contains("FR-3 (the kiosk) is not specified."),
        "{second}"
    );
    assert!(
        second.contains("3 of the PRD's 3 requirements are traced"),
        "{second}"
    );

    let s = session(&repo);
    assert_eq!(s["final_verdict"], "pass");
    let its = s["iterations"].as_array().unwrap();
    assert_eq!(its.len(), 2);
    let revision = &its[0]["result"]["revision"];
    assert_eq!(revision["status"], "applied");
    assert_ne!(its[0]["spec_hash"], its[1]["spec_hash"]);
    assert_eq!(revision["spec_hash"], its[1]["spec_hash"]);
    // The text the revision replaced is kept.
    let kept = revision["previous_text"].as_str().unwrap();
    assert_eq!(repo.read(kept), SPEC);
    assert_eq!(
        types(&events(&repo, ".speed/events")),
        [
            "spec.review.started",
            "spec.review.iteration",
            "spec.review.feedback",
            "spec.review.iteration",
            "spec.review.passed"
        ]
    );
}

#[test]
fn a_session_is_blocked_at_its_limit_and_resumed_with_a_fresh_budget() {
    let server = ModelServer::scripted(vec![needs_kiosk(), needs_kiosk(), pass()]);
    let repo = repo_with(&server, true, "[spec_review]\nmax_iterations = 2\n");
    let reviser = Reviser::new(&repo, &[REVISED], "exit 9");
    let run = with_reviser(&repo, &reviser, &["late-fines"]);
    assert_eq!(run.code, 51, "{}", run.transcript());
    assert!(
        run.stdout
            .contains("max iterations exhausted: 2 reviews without a pass"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("speed spec review late-fines --resume"),
        "{}",
        run.stdout
    );
    // The second needs_revision used up the budget: no second revision.
    assert_eq!(reviser.runs(), 1);

    let s = session(&repo);
    assert_eq!(s["final_verdict"], "blocked");
    assert!(
        s["block_reason"]
            .as_str()
            .unwrap()
            .contains("max iterations")
    );
    assert_eq!(s["iterations"].as_array().unwrap().len(), 2);
    assert!(s["recovery_actions"].as_array().unwrap().len() >= 3);

    // The multi-player layout's events; `blocked` carries the history.
    let events = events(&repo, ".speed/shared/events");
    let blocked = events.last().unwrap();
    assert_eq!(blocked["type"], "spec.review.blocked");
    assert_eq!(blocked["data"]["iterations"].as_array().unwrap().len(), 2);
    assert_eq!(blocked["data"]["recovery_actions"], s["recovery_actions"]);
    assert_eq!(
        blocked["data"]["current_specs_path"],
        "specs/product/late-fines.md"
    );
    assert!(!repo.path().join(".speed/events").exists());

    // Blocked: a plain run asks no model and says what to do.
    let again = spec_review(&repo, &["late-fines"]);
    assert_eq!(again.code, 51, "{}", again.transcript());
    assert!(again.stdout.contains("is blocked"), "{}", again.stdout);
    assert_eq!(server.requests().len(), 2);

    // A person edits the spec and resumes: a fresh budget, the history kept.
    repo.write(
        "specs/product/late-fines.md",
        &format!("{REVISED}\nFines are shown in cents.\n"),
    );
    let resumed = spec_review(&repo, &["late-fines", "--resume"]);
    assert_eq!(resumed.code, 0, "{}", resumed.transcript());
    let s = session(&repo);
    assert_eq!(s["final_verdict"], "pass");
    assert_eq!(s["budget_starts_at"], 3);
    assert_eq!(s["iterations"][2]["iteration"], 3);
    let resume_again = spec_review(&repo, &["late-fines", "--resume"]);
    assert_eq!(resume_again.code, 1);
    assert!(
        resume_again.stderr.contains("is not blocked (it passed)"),
        "{}",
        resume_again.stderr
    );
}

#[test]
fn malformed_output_twice_blocks_the_session_and_keeps_the_raw_answers() {
    let server = ModelServer::scripted(vec![
        Reply::openai("I think the spec is fine."),
        Reply::openai(r#"{"verdict": "pass", "scores": {"completeness": 90}}"#),
    ]);
    let repo = repo_with(&server, false, "");
    let run = spec_review(&repo, &["late-fines"]);
    assert_eq!(run.code, 53, "{}", run.transcript());
    assert!(run.stdout.contains("malformed output"), "{}", run.stdout);

    // The corrective retry said what was wrong.
    let retry = server.requests()[1].json()["messages"].clone();
    assert_eq!(retry[1]["content"], "I think the spec is fine.");
    assert!(
        retry[2]["content"]
            .as_str()
            .unwrap()
            .contains("no JSON object")
    );

    let s = session(&repo);
    assert_eq!(s["final_verdict"], "blocked");
    assert!(
        s["block_reason"]
            .as_str()
            .unwrap()
            .starts_with("malformed output")
    );
    let result = &s["iterations"][0]["result"];
    assert_eq!(result["verdict"], "malformed");
    assert_eq!(result["raw_answers"][0], "I think the spec is fine.");
    assert!(
        result["raw_answers"][1]
            .as_str()
            .unwrap()
            .contains("\"completeness\": 90")
    );
    assert!(
        result["error"]
            .as_str()
            .unwrap()
            .contains("scores.consistency: is required")
    );
    let events = events(&repo, ".speed/events");
    assert_eq!(
        types(&events),
        [
            "spec.review.started",
            "spec.review.malformed",
            "spec.review.malformed",
            "spec.review.blocked"
        ]
    );
    assert_eq!(events[1]["data"]["retry_number"], 1);
    assert_eq!(events[2]["data"]["retry_number"], 2);
    assert_eq!(events[1]["data"]["raw_output"], "I think the spec is fine.");
}

#[test]
fn a_reviser_that_fails_or_returns_garbage_blocks_and_leaves_the_spec_alone() {
    let about_cap = Reply::openai(&answer(
        "needs_revision",
        75,
        json!([{"section": "Cap", "issue": "No currency.", "suggestion": "Say cents."}]),
    ));
    for (reply, output, fail, reason) in [
        (
            needs_kiosk(),
            None,
            "echo 'agent crashed' >&2; exit 3",
            "agent crashed",
        ),
        (
            needs_kiosk(),
            Some("Sure! I made the changes you asked for."),
            "",
            "no Markdown heading",
        ),
        (
            about_cap,
            Some("# Late fines\n\n## Cap\nAt most the price, in cents.\n"),
            "",
            "drops headings the feedback did not name: Late fines > Charging",
        ),
    ] {
        let server = ModelServer::scripted(vec![reply]);
        let repo = repo_with(&server, false, "");
        let outputs: Vec<&str> = output.into_iter().collect();
        let reviser = Reviser::new(
            &repo,
            &outputs,
            if fail.is_empty() { "exit 9" } else { fail },
        );
        let run = with_reviser(&repo, &reviser, &["late-fines"]);
        assert_eq!(run.code, 51, "{}", run.transcript());
        assert!(run.stdout.contains(reason), "{reason}: {}", run.stdout);
        assert_eq!(repo.read("specs/product/late-fines.md"), SPEC);
        let s = session(&repo);
        assert_eq!(s["final_verdict"], "blocked");
        assert!(s["block_reason"].as_str().unwrap().contains(reason));
        let revision = &s["iterations"][0]["result"]["revision"];
        assert_eq!(
            revision["status"],
            if output.is_none() {
                "failed"
            } else {
                "refused"
            }
        );
        assert!(!repo.path().join(".speed/spec-reviews/late-fines").exists());
    }
}

#[test]
fn without_a_reviser_one_review_its_feedback_and_exit_50() {
    let server = ModelServer::scripted(vec![needs_kiosk(), pass()]);
    let repo = repo_with(&server, false, "");
    let run = spec_review(&repo, &["late-fines"]);
    assert_eq!(run.code, 50, "{}", run.transcript());
    assert!(
        run.stdout.contains("Review 1: needs_revision"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("- Late fines: FR-3 (the kiosk) is not specified."),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("suggestion: Add a Kiosk section"),
        "{}",
        run.stdout
    );
    assert_eq!(session(&repo)["final_verdict"], "");

    // A person revises; the next run continues the session.
    repo.write("specs/product/late-fines.md", REVISED);
    let next = spec_review(&repo, &["late-fines"]);
    assert_eq!(next.code, 0, "{}", next.transcript());
    let s = session(&repo);
    assert_eq!(s["iterations"].as_array().unwrap().len(), 2);
    assert_eq!(s["final_verdict"], "pass");
    let events = events(&repo, ".speed/events");
    assert_eq!(
        types(&events)
            .iter()
            .filter(|t| *t == "spec.review.started")
            .count(),
        1
    );
}

#[test]
fn speed_turns_a_pass_under_a_minimum_into_needs_revision() {
    let server = ModelServer::scripted(vec![Reply::openai(&answer("pass", 60, json!([])))]);
    let repo = repo_with(
        &server,
        false,
        "[spec_review.criteria]\ncompleteness = \"covers the PRD\"\ntestability = { description = \"checkable\", min_score = 65 }\n",
    );
    let run = spec_review(&repo, &["late-fines", "--format", "json"]);
    assert_eq!(run.code, 50, "{}", run.transcript());
    let out: Value = serde_json::from_str(&run.stdout).unwrap();
    let out = &out["spec_review"];
    assert_eq!(out["verdict"], "needs_revision");
    assert_eq!(out["exit_code"], 50);
    let result = &out["session"]["iterations"][0]["result"];
    assert_eq!(result["model_verdict"], "pass");
    assert_eq!(result["verdict"], "needs_revision");
    assert_eq!(result["overrules"][0]["rule"], "score_below_minimum");
    assert_eq!(
        result["overrules"][0]["reason"],
        "testability scored 60, under its minimum of 65"
    );
    // Only the configured criteria are asked for and kept.
    assert_eq!(
        result["scores"],
        json!({"completeness": 80, "testability": 60})
    );
    let prompt = user_message(&server.requests()[0]);
    assert!(
        prompt.contains("- `completeness` (minimum 70): covers the PRD"),
        "{prompt}"
    );
    assert!(!prompt.contains("`architecture`"), "{prompt}");
}

#[test]
fn secrets_in_the_spec_never_reach_the_model_the_session_or_the_events() {
    let server = ModelServer::scripted(vec![pass()]);
    let repo = repo_with(&server, false, "");
    let key = "AKIAZ3MXQ7RL2VJ5KD4T";
    repo.write(
        "specs/product/late-fines.md",
        &format!("{SPEC}\n## Deploy\n\nThe payment service uses the key {key}.\n"),
    );
    let run = spec_review(&repo, &["late-fines"]);
    // A credential in a spec is critical: a pass is not enough.
    assert_eq!(run.code, 50, "{}", run.transcript());
    let prompt = user_message(&server.requests()[0]);
    assert!(!prompt.contains(key), "{prompt}");
    assert!(prompt.contains("[REDACTED:aws-access-key]"), "{prompt}");
    for file in walk(&repo.path().join(".speed")) {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        assert!(!text.contains(key), "{}", file.display());
    }
    assert!(!run.stdout.contains(key) && !run.stderr.contains(key));
    let s = session(&repo);
    assert_eq!(
        s["iterations"][0]["result"]["overrules"][0]["rule"],
        "critical_finding"
    );
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

#[test]
fn rev_reviews_the_committed_spec_and_revises_nothing() {
    let server = ModelServer::scripted(vec![needs_kiosk()]);
    let repo = repo_with(&server, false, "[spec_review]\nreviser = [\"false\"]\n");
    repo.write("specs/product/late-fines.md", "# Draft in progress\n");
    let run = spec_review(&repo, &["late-fines", "--rev", "main"]);
    assert_eq!(run.code, 50, "{}", run.transcript());
    assert!(
        run.stderr.contains("which speed does not revise"),
        "{}",
        run.stderr
    );
    let prompt = user_message(&server.requests()[0]);
    assert!(
        prompt.contains("The fine for one loan never exceeds"),
        "{prompt}"
    );
    assert!(prompt.contains("read as committed at main"), "{prompt}");
    assert_eq!(
        repo.read("specs/product/late-fines.md"),
        "# Draft in progress\n"
    );
}

#[test]
fn offline_and_dry_runs_ask_nothing_and_write_nothing() {
    let server = ModelServer::scripted(vec![]);
    let repo = repo_with(&server, false, "");
    repo.write(
        "specs/product/late-fines.md",
        &format!("{SPEC}\n## Waivers\n\n## Holidays\n\nTBD ??? \n"),
    );
    let offline = spec_review(&repo, &["late-fines", "--offline"]);
    assert_eq!(offline.code, 50, "{}", offline.transcript());
    for expected in [
        "PRD requirements traced to the spec: 2 of 3",
        "untraced_requirement [major]: FR-3 (PRD line 7)",
        "empty_section [minor] (Late fines > Waivers, line 13)",
        "marker [major] (Late fines > Holidays, line 17): TBD, ???",
        "no model was asked",
    ] {
        assert!(
            offline.stdout.contains(expected),
            "{expected}: {}",
            offline.stdout
        );
    }
    let dry = spec_review(&repo, &["late-fines", "--dry-run"]);
    assert_eq!(dry.code, 0, "{}", dry.transcript());
    assert!(
        dry.stdout.starts_with("\n# Spec review") || dry.stdout.starts_with("# Spec review"),
        "{}",
        dry.stdout
    );
    assert!(
        dry.stderr.contains("tokens of a budget of 60,000"),
        "{}",
        dry.stderr
    );
    let json = spec_review(&repo, &["late-fines", "--dry-run", "--format", "json"]);
    let out: Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(out["spec_review"]["verdict"], "dry_run");
    assert!(
        out["spec_review"]["dry_run"]["tokens"]["total"]
            .as_u64()
            .unwrap()
            > 100
    );
    assert!(server.requests().is_empty());
    assert!(!repo.path().join(".speed/spec-reviews").exists());
    assert!(!repo.path().join(".speed/events").exists());
}

#[test]
fn an_unreachable_model_leaves_the_session_open_and_exits_52() {
    let server = ModelServer::scripted(vec![Reply::status(503, "overloaded")]);
    let repo = repo_with(&server, false, "");
    let run = spec_review(&repo, &["late-fines"]);
    assert_eq!(run.code, 52, "{}", run.transcript());
    assert!(run.stdout.contains("503"), "{}", run.stdout);
    let s = session(&repo);
    assert_eq!(s["final_verdict"], "");
    assert_eq!(s["iterations"], json!([]));
}

#[test]
fn bad_input_is_an_error_naming_what_and_where() {
    let server = ModelServer::scripted(vec![]);
    let repo = repo_with(&server, false, "[spec_review]\nmax_iteration = 2\n");
    let run = spec_review(&repo, &["late-fines"]);
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(
        run.stderr.contains(
            "line 8: spec_review.max_iteration: unknown key; did you mean `max_iterations`?"
        ),
        "{}",
        run.stderr
    );
    let repo = repo_with(&server, false, "");
    let run = spec_review(&repo, &["nothing-here"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("no spec for feature nothing-here"),
        "{}",
        run.stderr
    );
    let run = spec_review(&repo, &["late-fines", "--resume", "--format", "json"]);
    assert_eq!(run.code, 1);
    let out: Value = serde_json::from_str(&run.stdout).unwrap();
    assert!(
        out["error"]
            .as_str()
            .unwrap()
            .contains("no spec review session of late-fines to resume")
    );
    assert!(server.requests().is_empty());
}

#[test]
fn the_demos_draft_spec_is_reviewed_offline() {
    let repo = repo::example();
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("specs-example");
    let drafts = repo::materialize::write_drafts(&example, repo.path()).unwrap();
    assert_eq!(
        drafts,
        [
            ".speed/features/late-fines/prd.md",
            "specs/product/late-fines.md"
        ]
    );
    let run = spec_review(&repo, &["late-fines", "--offline"]);
    assert_eq!(run.code, 50, "{}", run.transcript());
    for expected in [
        "PRD requirements traced to the spec: 2 of 5",
        "untraced_requirement [major]: FR-3",
        "untraced_requirement [major]: FR-4",
        "untraced_requirement [major]: FR-5",
        "marker [major] (Late Fines > Cap, line 18): TODO",
        "empty_section [minor] (Late Fines > Waivers",
        "untestable_requirements [minor] (Late Fines > Requirements",
    ] {
        assert!(run.stdout.contains(expected), "{expected}: {}", run.stdout);
    }
    // Offline writes nothing: no session, no event.
    assert!(!repo.path().join(".speed/spec-reviews").exists());
    assert!(!repo.path().join(".speed/events").exists());
    insta::assert_snapshot!("spec_review_demo_offline", run.transcript());
}

#[test]
fn without_feature_or_spec_the_active_feature_is_reviewed() {
    let server = ModelServer::scripted(vec![pass()]);
    let repo = repo_with(&server, false, "");
    let run = speed(repo.path(), &["spec", "review", "--format", "json"], &[]);
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(
        run.stderr.contains("--spec PATH") && run.stderr.contains("active_feature"),
        "{}",
        run.stderr
    );
    assert_eq!(server.requests().len(), 0, "no model asked");

    repo.write(".speed/active_feature", "late-fines\n");
    let run = speed(repo.path(), &["spec", "review", "--format", "json"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let out: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(out["spec_review"]["feature"], "late-fines", "{out}");
    assert_eq!(out["spec_review"]["verdict"], "pass", "{out}");
    assert!(
        repo.path()
            .join(".speed/spec-reviews/late-fines.json")
            .is_file()
    );
}

/// `--format sarif|junit|github`, as for reviews: speed's checks and the
/// model's feedback at their place (the PRD's untraced requirement in the
/// PRD, the feedback at its section's heading), a failed test case for a
/// spec that needs revision, and no SARIF log when the review failed.
#[test]
fn a_spec_review_prints_the_ci_formats() {
    let review = |format: &str, reply: fn() -> Reply| {
        let server = ModelServer::start(move |_| reply());
        let repo = repo_with(&server, false, "");
        spec_review(&repo, &["late-fines", "--format", format])
    };
    let run = review("sarif", needs_kiosk);
    assert_eq!(run.code, 50, "{}", run.transcript());
    let log: Value = serde_json::from_str(&run.stdout).unwrap();
    crate::formats::assert_valid_sarif(&log);
    let results = log["runs"][0]["results"].as_array().unwrap();
    let place = |rule: &str| {
        let r = results
            .iter()
            .find(|r| r["ruleId"] == rule)
            .unwrap_or_else(|| panic!("no {rule}: {results:#?}"));
        let at = &r["locations"][0]["physicalLocation"];
        (
            at["artifactLocation"]["uri"].as_str().unwrap().to_string(),
            at["region"]["startLine"].as_u64().unwrap(),
            r["level"].as_str().unwrap().to_string(),
        )
    };
    assert_eq!(
        place("spec-review/feedback"),
        (
            "specs/product/late-fines.md".to_string(),
            1,
            "error".to_string()
        )
    );
    let (file, line, _) = place("spec-check/untraced_requirement");
    assert_eq!(file, ".speed/features/late-fines/prd.md");
    assert_eq!(
        PRD.lines().nth(line as usize - 1),
        Some("- FR-3: Members see their fines at the self-service kiosk")
    );
    assert_eq!(
        log["runs"][0]["properties"]["speed"]["spec_review"]["verdict"],
        "needs_revision"
    );

    let run = review("junit", needs_kiosk);
    assert_eq!(run.code, 50, "{}", run.transcript());
    assert!(
        run.stdout.contains("failures=\"1\"") && run.stdout.contains("type=\"needs_revision\""),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("<testsuite name=\"speed spec review\""),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("<property name=\"score.testability\" value=\"75\"/>"),
        "{}",
        run.stdout
    );

    let run = review("github", needs_kiosk);
    assert_eq!(run.code, 50, "{}", run.transcript());
    assert!(
        run.stdout.lines().any(|l| l.starts_with(
            "::error file=specs/product/late-fines.md,line=1,title=speed spec-review/feedback"
        )),
        "{}",
        run.stdout
    );

    let run = review("junit", pass);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stdout.contains("failures=\"0\" errors=\"0\""),
        "{}",
        run.stdout
    );

    let run = review("sarif", || Reply::status(503, "overloaded"));
    assert_eq!(run.code, 52, "{}", run.transcript());
    assert_eq!(run.stdout, "", "{}", run.transcript());
    assert!(
        run.stderr.contains("no SARIF log was written"),
        "{}",
        run.stderr
    );

    // A dry run prints a prompt, not results.
    let server = ModelServer::start(|_| pass());
    let repo = repo_with(&server, false, "");
    let run = spec_review(&repo, &["late-fines", "--dry-run", "--format", "junit"]);
    assert_eq!(run.code, 2, "{}", run.transcript());
}
