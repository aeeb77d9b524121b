//! `speed review --defect NAME` end to end: real temporary repositories
//! whose defect branch holds a reproduce commit and a fix commit, the
//! defect folders of `fixtures/defects/` in the working tree, and a loopback
//! server playing the model (and the guardian).

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::support::model_server::{ModelServer, Recorded, Reply};
use crate::support::repo::{self, RepoBuilder, TempRepo};
use crate::support::speed::{Run, speed};
use serde_json::{Value, json};

const NAME: &str = "loaned-shown-available";
const BRANCH: &str = "speed/defect-loaned-shown-available";

const SPEC: &str = "# Catalog\n\n## Search\n\nSearch returns the books whose title contains the query.\nA book on loan is shown as unavailable.\n\n## Loans\n\nA loan may be renewed at most twice.\n";

const SEARCH: &str = "pub struct Book {\n    pub title: String,\n    pub on_loan: bool,\n}\n\npub fn available(book: &Book) -> bool {\n    true\n}\n\npub fn search<'a>(books: &'a [Book], query: &str) -> Vec<&'a Book> {\n    books.iter().filter(|b| b.title.contains(query)).collect()\n}\n";

const UTIL: &str = "pub fn normalize(s: &str) -> String {\n    s.to_lowercase()\n}\n";

const REPRO_TEST: &str = "use catalog::search::{available, Book};\n\n#[test]\nfn a_loaned_book_is_unavailable() {\n    let book = Book { title: \"Dune\".into(), on_loan: true };\n    assert!(!available(&book));\n}\n";

fn fixed_search() -> String {
    SEARCH.replace("    true\n", "    !book.on_loan\n")
}

/// What the fix commit changes besides `src/search.rs`.
#[derive(Default)]
struct Fix {
    files: Vec<(String, String)>,
    deletes: Vec<String>,
}

impl Fix {
    fn file(mut self, path: &str, text: &str) -> Fix {
        self.files.push((path.to_string(), text.to_string()));
        self
    }

    fn delete(mut self, path: &str) -> Fix {
        self.deletes.push(path.to_string());
        self
    }
}

/// The catalog on main, and a defect branch: "test: reproduce" adds
/// `tests/loans.rs`, "fix: resolve" corrects `available()` (plus `fix`).
/// The fixture folder of the defect is copied into the working tree.
fn catalog(fix: Fix) -> TempRepo {
    let (tmp, root) = repo::empty();
    let mut b = RepoBuilder::init(&root).unwrap();
    b.commit(
        "main",
        None,
        &[
            ("specs/product/catalog.md", SPEC),
            (
                "specs/product/overview.md",
                "# Vision\n\nA library catalog anyone can use.\n",
            ),
            ("src/lib.rs", "pub mod search;\npub mod util;\n"),
            ("src/search.rs", SEARCH),
            ("src/util.rs", UTIL),
            ("tests/search.rs", "#[test]\nfn finds_by_title() {}\n"),
        ],
        &[],
        "catalog",
    )
    .unwrap();
    b.commit(
        BRANCH,
        Some("main"),
        &[("tests/loans.rs", REPRO_TEST)],
        &[],
        "test: reproduce loaned-shown-available defect",
    )
    .unwrap();
    let search = fixed_search();
    let mut files: Vec<(&str, &str)> = fix
        .files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    if !files.iter().any(|(p, _)| *p == "src/search.rs") {
        files.push(("src/search.rs", search.as_str()));
    }
    let deletes: Vec<&str> = fix.deletes.iter().map(String::as_str).collect();
    b.commit(
        BRANCH,
        None,
        &files,
        &deletes,
        "fix: resolve loaned-shown-available defect",
    )
    .unwrap();
    b.checkout("main").unwrap();
    let repo = repo::adopt(tmp, root);
    copy_fixture(&repo, NAME, &format!(".speed/defects/{NAME}"));
    repo
}

fn copy_fixture(repo: &TempRepo, fixture: &str, to: &str) {
    let from = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/defects")
        .join(fixture);
    for entry in std::fs::read_dir(&from).unwrap() {
        let entry = entry.unwrap();
        let text = std::fs::read_to_string(entry.path()).unwrap();
        repo.write(
            &format!("{to}/{}", entry.file_name().to_string_lossy()),
            &text,
        );
    }
}

fn is_guardian(req: &Recorded) -> bool {
    req.body.contains("Product guardian check")
}

/// A verdict on the fix as a model writes it: quotes from the spec, every
/// defect-fix criterion rated, and the defect fields.
fn verdict(kind: &str, scope_ok: bool, large_diff: bool, violations: Value) -> Value {
    let criteria: Vec<Value> = ["DF-1", "DF-2", "DF-3", "DF-4", "DF-5"]
        .iter()
        .map(|id| json!({"id": id, "status": "met", "evidence": "src/search.rs:7"}))
        .collect();
    json!({
        "dimensions": crate::support::verdicts::dimensions(),
        "verdict": kind,
        "expectations": "A book on loan must be shown as unavailable.",
        "criteria": criteria,
        "spec_verification": [{
            "spec_quote": "A book on loan is shown as unavailable.",
            "spec_section": "Catalog > Search",
            "satisfied": true,
            "evidence": "src/search.rs:7",
            "notes": ""
        }],
        "missing_from_spec": [],
        "out_of_scope": [],
        "issues": [],
        "strengths": ["The reproducing test is untouched"],
        "defect_scope_check": {"scope_ok": scope_ok, "large_diff": large_diff},
        "scope_violations": violations,
    })
}

fn approve() -> Value {
    verdict("approve", true, false, json!([]))
}

fn guardian(status: &str, summary: &str) -> Value {
    json!({"status": status, "summary": summary, "flags": []})
}

/// Review answers `review`; guardian answers `guardian`; counts both.
fn server(review: Value, guardian_answer: Value) -> (ModelServer, Arc<AtomicUsize>) {
    let guardian_calls = Arc::new(AtomicUsize::new(0));
    let counted = guardian_calls.clone();
    let server = ModelServer::start(move |req| {
        if is_guardian(req) {
            counted.fetch_add(1, Ordering::SeqCst);
            Reply::openai(&guardian_answer.to_string())
        } else {
            Reply::openai(&review.to_string())
        }
    });
    (server, guardian_calls)
}

fn configure(repo: &TempRepo, server: &ModelServer, extra: &str) {
    repo.config(&format!(
        "[llm]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"test-model\"\ntimeout_secs = 2\nmax_retries = 1\nretry_base_ms = 10\n{extra}",
        server.url()
    ));
}

fn review(repo: &TempRepo, args: &[&str]) -> Run {
    let mut all = vec!["review", "--defect", NAME];
    all.extend_from_slice(args);
    speed(repo.path(), &all, &[])
}

fn json_of(run: &Run) -> Value {
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.transcript()))
}

fn state(repo: &TempRepo) -> Value {
    serde_json::from_str(&repo.read(&format!(".speed/defects/{NAME}/state.json"))).unwrap()
}

fn rules(review: &Value) -> Vec<String> {
    review["overrules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["rule"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_contained_fix_is_approved_and_changes_nothing_in_the_defect_folder() {
    let repo = catalog(Fix::default());
    let (server, guardian_calls) = server(approve(), guardian("aligned", "fine"));
    configure(&repo, &server, "");
    let before = repo.read(&format!(".speed/defects/{NAME}/state.json"));
    let run = review(&repo, &["--json"]);
    assert_eq!(run.code, 0, "{}", run.transcript());

    let out = json_of(&run);
    let r = &out["reviews"][0];
    assert_eq!(r["verdict"], "approve");
    assert_eq!(r["task_id"], Value::Null);
    assert_eq!(r["branch"], BRANCH);
    let d = &r["defect"];
    assert_eq!(d["name"], NAME);
    assert_eq!(d["severity"], "P1");
    assert_eq!(d["complexity"], "moderate");
    assert_eq!(d["status"], "fixed");
    assert_eq!(d["speed"]["scope_violations"], json!([]));
    // The fix's two lines and the reproducing test's seven.
    assert_eq!(d["speed"]["size"]["lines"], 9);
    assert_eq!(d["speed"]["size"]["files"], 2);
    assert_eq!(d["speed"]["size"]["large"], false);
    assert_eq!(d["speed"]["test_changes"], json!([]));
    assert_eq!(d["speed"]["reproducing_tests"][0]["path"], "tests/loans.rs");
    assert_eq!(d["model"]["defect_scope_check"]["scope_ok"], true);
    // A small fix is not sent to the guardian.
    assert_eq!(guardian_calls.load(Ordering::SeqCst), 0);
    assert_eq!(r["guardian"]["status"], "not_run");

    // The prompt: report, triage, guidance, criteria, speed's findings, spec.
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    let prompt = reqs[0].json()["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    for needle in [
        "# Defect-fix review",
        "Search shows loaned books as available",
        "\"root_cause_hypothesis\": \"available() in src/search.rs",
        "keep the fix inside available()",
        "| DF-2 | The reproducing test passes for the right reason",
        "Reproducing test: tests/loans.rs (written by commit",
        "The reproducing test is unchanged since the commit that wrote it.",
        "SOURCE OF TRUTH: specs/product/catalog.md",
        "A book on loan is shown as unavailable.",
        "- files to modify: src/search.rs",
        "Every key is required, `defect_scope_check` and `scope_violations` too",
    ] {
        assert!(
            prompt.contains(needle),
            "{needle:?} not in the prompt:\n{prompt}"
        );
    }

    // The log and the report file name the defect; the folder is untouched.
    let log = repo.log();
    assert_eq!(log.len(), 1);
    assert_eq!(log[0]["defect"], NAME);
    assert_eq!(log[0]["decision"], "approve");
    assert_eq!(log[0]["task"], Value::Null);
    assert_eq!(log[0]["defect_check"]["scope_violations"], 0);
    let reports = repo.report_files();
    assert_eq!(reports.len(), 1);
    assert_eq!(reports[0]["defect"]["name"], NAME);
    assert!(
        repo.reviews()
            .iter()
            .any(|n| n.contains("defect-loaned-shown-available"))
    );
    assert_eq!(
        repo.read(&format!(".speed/defects/{NAME}/state.json")),
        before
    );
    assert!(
        !repo
            .path()
            .join(format!(".speed/defects/{NAME}/logs"))
            .exists()
    );
}

#[test]
fn the_human_report_shows_the_defect_and_both_sides_of_the_scope() {
    let repo = catalog(Fix::default().file(
        "src/util.rs",
        "pub fn normalize(s: &str) -> String {\n    s.trim().to_lowercase()\n}\n",
    ));
    let answer = verdict(
        "approve",
        false,
        false,
        json!([{"file": "src/util.rs", "description": "normalize() trims now: not part of the fix"}]),
    );
    let (server, _) = server(answer, guardian("aligned", "fine"));
    configure(&repo, &server, "");
    let run = review(&repo, &[]);
    assert_eq!(run.code, 50, "{}", run.transcript());
    let out = &run.stdout;
    for needle in [
        "Reviewing defect loaned-shown-available: Search shows loaned books as available",
        "Defect loaned-shown-available (P1, moderate, status fixed)",
        "speed   scope: 1 changed path outside the triage's affected files",
        "src/util.rs (changed)",
        "size: 11 changed lines in 3 files (limits: 100 lines, 3 files)",
        "test: tests/loans.rs unchanged since",
        "review  scope_ok false, large_diff false, 1 scope violation",
        "src/util.rs — normalize() trims now: not part of the fix",
        "(outside_affected_files)",
        "(scope_not_ok)",
        "✗ Defect loaned-shown-available: changes requested by speed (overruled the model)",
    ] {
        assert!(out.contains(needle), "{needle:?} not in:\n{out}");
    }
}

#[test]
fn an_out_of_scope_file_overrules_an_approval() {
    let repo = catalog(Fix::default().file(
        "src/util.rs",
        "pub fn normalize(s: &str) -> String {\n    s.trim().to_lowercase()\n}\n",
    ));
    // The model misses the extra file entirely.
    let (server, _) = server(approve(), guardian("aligned", "fine"));
    configure(&repo, &server, "");
    let run = review(&repo, &["--json"]);
    assert_eq!(run.code, 50, "{}", run.transcript());
    let r = &json_of(&run)["reviews"][0];
    assert_eq!(r["model_verdict"], "approve");
    assert_eq!(r["verdict"], "request_changes");
    assert_eq!(rules(r), ["outside_affected_files"]);
    let v = &r["defect"]["speed"]["scope_violations"];
    assert_eq!(v[0]["file"], "src/util.rs");
    assert_eq!(v[0]["change"], "changed");
    assert_eq!(r["defect"]["model"]["scope_violations"], json!([]));
    let feedback = r["feedback"].as_str().unwrap();
    assert!(feedback.contains("src/util.rs"), "{feedback}");
    // The model was told before it answered.
    let prompt = server.requests()[0].body.clone();
    assert!(prompt.contains(
        "Out of scope: src/util.rs is changed, but the triage's affected_files does not list it."
    ));
}

#[test]
fn renaming_a_file_into_scope_changes_the_file_it_came_from() {
    // The triage names src/availability.rs; the fix moves src/util.rs there.
    let repo = catalog(
        Fix::default()
            .delete("src/util.rs")
            .file("src/availability.rs", UTIL),
    );
    let triage = repo.read(&format!(".speed/defects/{NAME}/triage.json"));
    repo.write(
        &format!(".speed/defects/{NAME}/triage.json"),
        &triage.replace(
            "\"affected_files\": [\"src/search.rs\"]",
            "\"affected_files\": [\"src/search.rs\", \"src/availability.rs\"]",
        ),
    );
    let (server, _) = server(approve(), guardian("aligned", "fine"));
    configure(&repo, &server, "");
    let run = review(&repo, &["--json"]);
    assert_eq!(run.code, 50, "{}", run.transcript());
    let r = &json_of(&run)["reviews"][0];
    let v = r["defect"]["speed"]["scope_violations"].as_array().unwrap();
    assert_eq!(v.len(), 1, "{v:?}");
    assert_eq!(v[0]["file"], "src/util.rs");
    assert_eq!(v[0]["change"], "renamed away");
    assert_eq!(rules(r), ["outside_affected_files"]);
}

/// 150 helper functions of three lines each beside the fix.
fn large_fix() -> Fix {
    let mut text = fixed_search();
    text.push_str(
        &(0..150)
            .map(|n| format!("pub fn helper_{n}() -> u32 {{\n    {n}\n}}\n"))
            .collect::<String>(),
    );
    Fix::default().file("src/search.rs", &text)
}

#[test]
fn a_large_fix_goes_to_the_guardian_which_can_reject_it() {
    let repo = catalog(large_fix());
    let (server, guardian_calls) = server(
        approve(),
        guardian(
            "rejected",
            "The fix adds 150 helper functions nobody asked for.",
        ),
    );
    configure(&repo, &server, "");
    let run = review(&repo, &["--json"]);
    assert_eq!(run.code, 50, "{}", run.transcript());
    assert_eq!(guardian_calls.load(Ordering::SeqCst), 1);
    let r = &json_of(&run)["reviews"][0];
    let size = &r["defect"]["speed"]["size"];
    assert_eq!(size["large"], true);
    // 2 lines of fix, 450 of helpers, 7 of the reproducing test.
    assert_eq!(size["lines"], 459);
    assert_eq!(size["raw_lines"], 459);
    assert_eq!(size["max_lines"], 100);
    assert_eq!(r["guardian"]["status"], "rejected");
    assert_eq!(rules(r), ["guardian_rejected"]);
    // The guardian was asked whether the fix stays a fix.
    let asked = server.requests().into_iter().find(is_guardian).unwrap();
    assert!(
        asked.body.contains("Defect-fix scope check"),
        "{}",
        asked.body
    );
    assert!(asked.body.contains("Is this fix staying in scope?"));
    assert!(asked.body.contains("A library catalog anyone can use."));
}

#[test]
fn a_large_fix_the_guardian_accepts_is_approved_and_an_absent_guardian_does_not_confirm() {
    let repo = catalog(large_fix());
    let (server, _) = server(approve(), guardian("aligned", "Still a fix."));
    configure(&repo, &server, "");
    let run = review(&repo, &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stdout.contains("Guardian: ALIGNED — Still a fix."),
        "{}",
        run.stdout
    );

    // A guardian that cannot answer does not confirm the approval.
    let repo = catalog(large_fix());
    let server = ModelServer::start(|req| {
        if is_guardian(req) {
            Reply::status(503, "overloaded")
        } else {
            Reply::openai(&approve().to_string())
        }
    });
    configure(&repo, &server, "");
    let run = review(&repo, &["--json"]);
    assert_ne!(run.code, 0, "{}", run.transcript());
    let r = &json_of(&run)["reviews"][0];
    assert_eq!(r["guardian"]["status"], "unavailable");
    assert_eq!(r["verdict"], Value::Null);
}

#[test]
fn an_edited_reproducing_test_overrules_an_approval() {
    let weakened = REPRO_TEST.replace(
        "assert!(!available(&book));",
        "assert!(available(&book) || true);",
    );
    let repo = catalog(Fix::default().file("tests/loans.rs", &weakened));
    let (server, _) = server(approve(), guardian("aligned", "fine"));
    configure(&repo, &server, "");
    let run = review(&repo, &["--json"]);
    assert_eq!(run.code, 50, "{}", run.transcript());
    let r = &json_of(&run)["reviews"][0];
    assert_eq!(rules(r), ["reproducing_test_changed"]);
    let change = &r["defect"]["speed"]["test_changes"][0];
    assert_eq!(change["path"], "tests/loans.rs");
    assert_eq!(change["how"], "edited");
    assert_eq!(
        change["added_in"]["summary"],
        "test: reproduce loaned-shown-available defect"
    );
    assert_eq!(
        change["changed_in"]["summary"],
        "fix: resolve loaned-shown-available defect"
    );
    // Tests are exempt from scope: the edit is no scope violation.
    assert_eq!(r["defect"]["speed"]["scope_violations"], json!([]));
    let prompt = server.requests()[0].body.clone();
    assert!(
        prompt.contains("CHANGED: tests/loans.rs: test code written by commit"),
        "{prompt}"
    );
}

#[test]
fn a_missing_or_malformed_defect_is_an_error_naming_the_file() {
    let repo = catalog(Fix::default());
    let server = ModelServer::scripted(vec![]);
    configure(&repo, &server, "");

    std::fs::remove_file(
        repo.path()
            .join(format!(".speed/defects/{NAME}/triage.json")),
    )
    .unwrap();
    let run = review(&repo, &[]);
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(
        run.stderr
            .contains(&format!(".speed/defects/{NAME}/triage.json: missing")),
        "{}",
        run.stderr
    );

    repo.write(
        &format!(".speed/defects/{NAME}/triage.json"),
        "{\n  \"complexity\": \"moderate\",\n  \"affected_files\": [\"src/search.rs\"]\n  \"related_spec\": \"specs/product/catalog.md\"\n}\n",
    );
    let run = review(&repo, &["--json"]);
    assert_eq!(run.code, 1, "{}", run.transcript());
    let out = json_of(&run);
    let err = out["reviews"][0]["error"].as_str().unwrap();
    assert!(
        err.contains(&format!(
            ".speed/defects/{NAME}/triage.json:4:3: invalid JSON"
        )),
        "{err}"
    );
    assert_eq!(out["reviews"][0]["defect"]["name"], NAME);

    let run = speed(repo.path(), &["review", "--defect", "no-such-defect"], &[]);
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(
        run.stderr.contains("defect no-such-defect not found (looked in .speed/defects/no-such-defect, .speed/shared/defects/no-such-defect)"),
        "{}",
        run.stderr
    );
    let run = speed(repo.path(), &["review", "--defect", "../../etc"], &[]);
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(
        run.stderr.contains("is not a folder name"),
        "{}",
        run.stderr
    );
    assert!(server.requests().is_empty(), "no model was asked");
    assert!(repo.log().is_empty(), "nothing was reviewed");
}

#[test]
fn an_answer_without_the_defect_fields_gets_one_corrective_retry() {
    let repo = catalog(Fix::default());
    let mut incomplete = approve();
    incomplete
        .as_object_mut()
        .unwrap()
        .remove("defect_scope_check");
    let server = ModelServer::scripted(vec![
        Reply::openai(&incomplete.to_string()),
        Reply::openai(&approve().to_string()),
    ]);
    configure(&repo, &server, "");
    let run = review(&repo, &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    let retry = reqs[1].body.clone();
    assert!(
        retry.contains("defect_scope_check: required in a defect-fix review"),
        "{retry}"
    );

    // Still missing after the retry: the output stays invalid (53).
    let repo = catalog(Fix::default());
    let server = ModelServer::scripted(vec![
        Reply::openai(&incomplete.to_string()),
        Reply::openai(&incomplete.to_string()),
    ]);
    configure(&repo, &server, "");
    let run = review(&repo, &[]);
    assert_eq!(run.code, 53, "{}", run.transcript());
}

#[test]
fn update_state_moves_fixed_to_reviewed_on_approval_and_logs_every_review() {
    let repo = catalog(Fix::default());
    let (server, _) = server(approve(), guardian("aligned", "fine"));
    configure(&repo, &server, "");
    let before = state(&repo);
    let run = review(&repo, &["--update-state"]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stdout.contains("state.json: fixed → reviewed"),
        "{}",
        run.stdout
    );
    let after = state(&repo);
    assert_eq!(after["status"], "reviewed");
    // Every other field is kept, in order; updated_at moves.
    let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(keys(&after), keys(&before));
    assert_eq!(after["branch"], before["branch"]);
    assert_ne!(after["updated_at"], before["updated_at"]);
    let log = repo.read(&format!(".speed/defects/{NAME}/logs/review.log"));
    let lines: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["verdict"], "approve");
    assert_eq!(lines[0]["state"], "reviewed");
    assert_eq!(lines[0]["review"]["defect_scope_check"]["scope_ok"], true);
    assert!(
        lines[0]["report"]
            .as_str()
            .unwrap()
            .starts_with(".speed/reviews/")
    );
}

#[test]
fn update_state_leaves_a_rejected_fix_fixed() {
    let repo = catalog(Fix::default());
    let (server, _) = server(
        verdict("request_changes", true, false, json!([])),
        guardian("aligned", "fine"),
    );
    configure(&repo, &server, "");
    let before = repo.read(&format!(".speed/defects/{NAME}/state.json"));
    let run = review(&repo, &["--update-state", "--json"]);
    assert_eq!(run.code, 50, "{}", run.transcript());
    assert_eq!(
        repo.read(&format!(".speed/defects/{NAME}/state.json")),
        before
    );
    assert_eq!(json_of(&run)["reviews"][0]["defect"]["state"], "fixed");
    let log = repo.read(&format!(".speed/defects/{NAME}/logs/review.log"));
    assert_eq!(log.lines().count(), 1);
    assert!(log.contains("\"verdict\":\"request_changes\""));

    // Without a state.json, --update-state has nothing to update: refused
    // before any model call.
    std::fs::remove_file(
        repo.path()
            .join(format!(".speed/defects/{NAME}/state.json")),
    )
    .unwrap();
    let asked = server.requests().len();
    let run = review(&repo, &["--update-state"]);
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(run.stderr.contains("state.json: missing"), "{}", run.stderr);
    assert_eq!(server.requests().len(), asked);
}

#[test]
fn batch_mode_reviews_fixed_defects_until_approved() {
    let repo = catalog(Fix::default());
    // A second defect, triaged but not fixed: not reviewed.
    copy_fixture(
        &repo,
        "renewal-limit",
        ".speed/shared/defects/renewal-limit",
    );
    let state = repo.read(".speed/shared/defects/renewal-limit/state.json");
    repo.write(
        ".speed/shared/defects/renewal-limit/state.json",
        &state.replace("\"status\": \"fixed\"", "\"status\": \"triaged\""),
    );
    let (server, _) = server(approve(), guardian("aligned", "fine"));
    configure(&repo, &server, "");
    let run = speed(repo.path(), &["review", "--json"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let out = json_of(&run);
    let reviews = out["reviews"].as_array().unwrap();
    assert_eq!(reviews.len(), 1, "{reviews:?}");
    assert_eq!(reviews[0]["defect"]["name"], NAME);
    assert_eq!(server.requests().len(), 1);

    // Approved at this diff: the next batch skips it; --force reviews it.
    let run = speed(repo.path(), &["review"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stderr.contains("Nothing to review"),
        "{}",
        run.transcript()
    );
    assert_eq!(server.requests().len(), 1);
    let run = speed(repo.path(), &["review", "--json"], &[]);
    let skipped = &json_of(&run)["skipped"][0];
    assert_eq!(skipped["defect"], NAME);
    let reason = skipped["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("approved at ") && reason.ends_with("against specs unchanged since"),
        "{reason}"
    );
    let run = speed(repo.path(), &["review", "--force"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn batch_mode_reports_a_fixed_defect_it_cannot_read() {
    let repo = catalog(Fix::default());
    std::fs::remove_file(repo.path().join(format!(".speed/defects/{NAME}/report.md"))).unwrap();
    let server = ModelServer::scripted(vec![]);
    configure(&repo, &server, "");
    let run = speed(repo.path(), &["review"], &[]);
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(
        run.stderr
            .contains(&format!(".speed/defects/{NAME}/report.md: missing")),
        "{}",
        run.stderr
    );
}

#[test]
fn the_multi_player_layout_and_a_dry_run() {
    let repo = catalog(Fix::default());
    std::fs::rename(
        repo.path().join(".speed/defects"),
        repo.path().join(".speed/shared-defects-tmp"),
    )
    .unwrap();
    std::fs::create_dir_all(repo.path().join(".speed/shared")).unwrap();
    std::fs::rename(
        repo.path().join(".speed/shared-defects-tmp"),
        repo.path().join(".speed/shared/defects"),
    )
    .unwrap();
    let server = ModelServer::scripted(vec![]);
    configure(&repo, &server, "");
    let run = review(&repo, &["--dry-run"]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(run.stdout.contains("# Defect-fix review"), "{}", run.stdout);
    assert!(
        run.stdout
            .contains("defect folder: .speed/shared/defects/loaned-shown-available")
    );
    assert!(
        run.stderr
            .contains("Token accounting for defect loaned-shown-available"),
        "{}",
        run.stderr
    );
    let run = review(&repo, &["--dry-run", "--json"]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let r = &json_of(&run)["reviews"][0];
    assert_eq!(r["defect"]["name"], NAME);
    assert_eq!(r["defect"]["speed"]["size"]["lines"], 9);
    let ids: Vec<&str> = r["criteria"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["DF-1", "DF-2", "DF-3", "DF-4", "DF-5"]);
    assert!(server.requests().is_empty());
    assert!(repo.log().is_empty());
}

#[test]
fn the_related_feature_names_the_spec_when_the_triage_does_not() {
    let repo = catalog(Fix::default());
    let triage = repo.read(&format!(".speed/defects/{NAME}/triage.json"));
    repo.write(
        &format!(".speed/defects/{NAME}/triage.json"),
        &triage.replace("\"related_spec\": \"specs/product/catalog.md\",", ""),
    );
    let server = ModelServer::scripted(vec![]);
    configure(&repo, &server, "");
    let run = review(&repo, &["--dry-run"]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stdout
            .contains("SOURCE OF TRUTH: specs/product/catalog.md"),
        "{}",
        run.stdout
    );

    // Neither: an error that says where to look and what to do.
    let report = repo.read(&format!(".speed/defects/{NAME}/report.md"));
    repo.write(
        &format!(".speed/defects/{NAME}/report.md"),
        &report.replace("Related Feature: catalog", "Related Feature: search-v2"),
    );
    let run = review(&repo, &["--dry-run"]);
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(
        run.stderr
            .contains("no spec: its triage.json has no related_spec"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("search-v2 has no spec"),
        "{}",
        run.stderr
    );
}

#[test]
fn offline_a_defect_fix_is_judged_by_speeds_own_findings() {
    // No provider configured: speed's checks and its defect findings decide.
    let repo = catalog(Fix::default());
    let run = review(&repo, &["--update-state", "--json"]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let r = &json_of(&run)["reviews"][0];
    assert_eq!(r["verdict"], "checks_passed");
    // Nobody compared the fix with the spec: the state stays `fixed`.
    assert_eq!(state(&repo)["status"], "fixed");
    assert_eq!(r["defect"]["state"], "fixed");

    let repo = catalog(Fix::default().file(
        "src/util.rs",
        "pub fn normalize(s: &str) -> String {\n    s.trim().to_lowercase()\n}\n",
    ));
    let run = review(&repo, &["--json"]);
    assert_eq!(run.code, 50, "{}", run.transcript());
    let r = &json_of(&run)["reviews"][0];
    assert_eq!(r["verdict"], "request_changes");
    let feedback = r["feedback"].as_str().unwrap();
    assert!(
        feedback
            .contains("src/util.rs is changed, but the triage's affected_files does not list it"),
        "{feedback}"
    );
}

#[test]
fn secrets_in_the_defect_folder_never_reach_the_model() {
    let repo = catalog(Fix::default());
    let key = "AKIAQYLPMN5HHHFPZAM2";
    let report = repo.read(&format!(".speed/defects/{NAME}/report.md"));
    repo.write(
        &format!(".speed/defects/{NAME}/report.md"),
        &report.replace(
            "Seen since the loans module was split out.",
            &format!("Reproduced with the staging key {key}."),
        ),
    );
    repo.write(
        &format!(".speed/defects/{NAME}/context.md"),
        &format!("Use the key {key} to reach staging.\n"),
    );
    let (server, _) = server(approve(), guardian("aligned", "fine"));
    configure(&repo, &server, "");
    let run = review(&repo, &["--json"]);
    let sent = server.requests()[0].body.clone();
    assert!(!sent.contains(key), "the key was sent");
    assert!(sent.contains("[REDACTED:aws-access-key]"), "{sent}");
    let r = &json_of(&run)["reviews"][0];
    let files: Vec<&str> = r["redactions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["file"].as_str().unwrap())
        .collect();
    assert!(
        files.contains(&".speed/defects/loaned-shown-available/report.md"),
        "{files:?}"
    );
    assert!(
        files.contains(&".speed/defects/loaned-shown-available/context.md"),
        "{files:?}"
    );
    // A secret is a critical finding: no approval.
    assert_eq!(run.code, 50, "{}", run.transcript());
    for name in repo.reviews() {
        let text = repo.read(&format!(".speed/reviews/{name}"));
        assert!(!text.contains(key), "the key is written in {name}");
    }
}

#[cfg(unix)]
#[test]
fn a_defect_file_linked_outside_the_repository_is_neither_read_nor_written() {
    let repo = catalog(Fix::default());
    let outside = repo.path().parent().unwrap().join("outside-state.json");
    std::fs::write(&outside, "{\"status\": \"fixed\"}\n").unwrap();
    let state = repo
        .path()
        .join(format!(".speed/defects/{NAME}/state.json"));
    std::fs::remove_file(&state).unwrap();
    std::os::unix::fs::symlink(&outside, &state).unwrap();
    let (server, _) = server(approve(), guardian("aligned", "fine"));
    configure(&repo, &server, "");
    let run = review(&repo, &["--update-state"]);
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(
        run.stderr.contains("outside the repository"),
        "{}",
        run.stderr
    );
    assert_eq!(
        std::fs::read_to_string(&outside).unwrap(),
        "{\"status\": \"fixed\"}\n"
    );
    assert!(server.requests().is_empty());
}

#[test]
fn nits_name_the_defect_and_an_empty_branch_asks_for_the_fix() {
    let repo = catalog(Fix::default());
    let mut answer = approve();
    answer["issues"] = json!([{"severity": "nit", "file": "src/search.rs", "line": 7,
                               "message": "name the negation", "suggestion": ""}]);
    let (server, _) = server(answer, guardian("aligned", "fine"));
    configure(&repo, &server, "");
    let run = review(&repo, &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let nits = speed(repo.path(), &["nits"], &[]);
    assert!(
        nits.stdout
            .contains("defect loaned-shown-available: [nit] src/search.rs:7 — name the negation"),
        "{}",
        nits.transcript()
    );

    // The state names a branch with nothing on it: changes are requested
    // without a model, and the feedback asks for the fix.
    let state = repo.read(&format!(".speed/defects/{NAME}/state.json"));
    repo.write(
        &format!(".speed/defects/{NAME}/state.json"),
        &state.replace(BRANCH, "main"),
    );
    let asked = server.requests().len();
    let run = review(&repo, &["--json"]);
    assert_eq!(run.code, 50, "{}", run.transcript());
    let r = &json_of(&run)["reviews"][0];
    assert!(
        r["feedback"]
            .as_str()
            .unwrap()
            .contains("Commit the fix of the defect on this branch."),
        "{r}"
    );
    assert_eq!(r["defect"]["name"], NAME);
    assert_eq!(server.requests().len(), asked);
}

#[test]
fn a_defect_fix_too_large_for_one_prompt_is_reviewed_in_parts() {
    let mut fix = Fix::default();
    for i in 1..=6 {
        let body: String = (0..80)
            .map(|n| {
                format!("pub fn rule_{i}_{n}(book: &Book) -> bool {{ book.title.len() > {n} }}\n")
            })
            .collect();
        fix = fix.file(
            &format!("src/rules_{i}.rs"),
            &format!("use crate::search::Book;\n{body}"),
        );
    }
    let repo = catalog(fix);
    let triage = repo.read(&format!(".speed/defects/{NAME}/triage.json"));
    repo.write(
        &format!(".speed/defects/{NAME}/triage.json"),
        &triage.replace(
            "\"affected_files\": [\"src/search.rs\"]",
            "\"affected_files\": [\"src/\"]",
        ),
    );
    let server = ModelServer::start(|_| Reply::openai(&approve().to_string()));
    configure(
        &repo,
        &server,
        // 9,000 before the schema asked for quality dimensions.
        "[review]\ntoken_budget = 9500\n[guardian]\nenabled = false\n",
    );
    let run = review(&repo, &["--json"]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let r = &json_of(&run)["reviews"][0];
    let parts = r["coverage"]["parts"].as_u64().unwrap();
    assert!(parts > 1, "{}", r["coverage"]);
    let requests = server.requests();
    assert_eq!(requests.len() as u64, parts);
    for req in &requests {
        let prompt = req.json()["messages"][0]["content"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(prompt.contains("# Defect-fix review"));
        assert!(prompt.contains("| DF-1 |"));
        assert!(
            prompt
                .contains("Every key is required, `defect_scope_check` and `scope_violations` too")
        );
    }
    // The parts' verdicts merge into one that still carries the scope check.
    assert_eq!(r["defect"]["model"]["defect_scope_check"]["scope_ok"], true);
    assert_eq!(r["defect"]["speed"]["size"]["large"], true);
    assert_eq!(r["guardian"]["status"], "skipped");
}

#[test]
fn what_the_report_lacks_and_an_unfinished_state_are_said() {
    let repo = catalog(Fix::default());
    let report = repo.read(&format!(".speed/defects/{NAME}/report.md"));
    let cut = report.find("## Expected Behavior").unwrap();
    let rest = report.find("## Reproduction Steps").unwrap();
    repo.write(
        &format!(".speed/defects/{NAME}/report.md"),
        &format!("{}{}", &report[..cut], &report[rest..]),
    );
    let state = repo.read(&format!(".speed/defects/{NAME}/state.json"));
    repo.write(
        &format!(".speed/defects/{NAME}/state.json"),
        &state.replace("\"status\": \"fixed\"", "\"status\": \"fixing\""),
    );
    let run = review(&repo, &["--dry-run", "--json"]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let notices = json_of(&run)["reviews"][0]["notices"].to_string();
    assert!(
        notices.contains(
            "report.md: it has no Expected Behavior, which the orchestrator's intake requires."
        ),
        "{notices}"
    );
    assert!(
        notices.contains("says status \\\"fixing\\\", not \\\"fixed\\\""),
        "{notices}"
    );
}

#[test]
fn a_related_spec_outside_the_repository_is_not_read() {
    let repo = catalog(Fix::default());
    let outside = repo.path().parent().unwrap().join("secret.md");
    std::fs::write(&outside, "# Secret\n\nThe password is hunter2.\n").unwrap();
    for spec in [outside.display().to_string(), "../secret.md".to_string()] {
        let triage = repo.read(&format!(".speed/defects/{NAME}/triage.json"));
        let mut value: Value = serde_json::from_str(&triage).unwrap();
        value["related_spec"] = json!(spec);
        repo.write(
            &format!(".speed/defects/{NAME}/triage.json"),
            &value.to_string(),
        );
        // Not read; the report's Related Feature names the spec instead.
        let run = review(&repo, &["--dry-run"]);
        assert_eq!(run.code, 0, "{}", run.transcript());
        assert!(!run.stdout.contains("hunter2"), "{}", run.stdout);
        assert!(
            run.stdout
                .contains("SOURCE OF TRUTH: specs/product/catalog.md")
        );
        assert!(
            run.stdout
                .contains("is not a path inside the repository: it was not read.")
        );
    }
}

#[test]
fn every_output_format_carries_the_defect_and_speeds_findings() {
    let util = "pub fn normalize(s: &str) -> String {\n    s.trim().to_lowercase()\n}\n";
    let repo = catalog(Fix::default().file("src/util.rs", util));
    let (server, _) = server(approve(), guardian("aligned", "fine"));
    configure(&repo, &server, "");

    let run = review(&repo, &["--format", "sarif"]);
    assert_eq!(run.code, 50, "{}", run.transcript());
    let log = json_of(&run);
    crate::formats::assert_valid_sarif(&log);
    let results = log["runs"][0]["results"].as_array().unwrap();
    let outside = results
        .iter()
        .find(|r| r["ruleId"] == "defect/outside-affected-files")
        .unwrap_or_else(|| panic!("{log:#}"));
    assert_eq!(outside["level"], "error");
    assert_eq!(
        outside["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "src/util.rs"
    );
    assert_eq!(
        outside["properties"]["subject"],
        "defect loaned-shown-available"
    );
    assert!(
        results
            .iter()
            .any(|r| r["ruleId"] == "overrule/outside_affected_files")
    );
    let rules = log["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .unwrap();
    assert!(rules.iter().any(|r| {
        r["id"] == "defect/outside-affected-files"
            && r["shortDescription"]["text"]
                .as_str()
                .unwrap()
                .contains("affected_files")
    }));

    let run = review(&repo, &["--format", "junit"]);
    assert_eq!(run.code, 50, "{}", run.transcript());
    assert!(
        run.stdout.contains(
            "classname=\"speed.defects\" name=\"defect loaned-shown-available: Search shows loaned books as available\""
        ),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("<failure"), "{}", run.stdout);

    let run = review(&repo, &["--format", "github"]);
    assert_eq!(run.code, 50, "{}", run.transcript());
    assert!(
        run.stdout
            .lines()
            .any(|l| l.starts_with("::error file=src/util.rs")
                && l.contains("affected_files does not list it")),
        "{}",
        run.stdout
    );
}
