//! Parsing each file once changes nothing: the dry run of a change to real
//! code (ripgrep's globset crate and part of flask, committed under
//! `fixtures/parse-once/`) is the same, prompt byte for prompt byte, with
//! the review's tree store sharing its texts and trees and with every part
//! reading and parsing for itself (`SPEED_PARSE_FRESH=1`, what each part
//! did before the store): the same findings, impact rows, sections and
//! token counts.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::code_checks::repo_with;
use crate::support::speed::{Run, speed};

/// The fixture's files as (path in the repository, text), `globset/…` and
/// `flask/…`.
fn fixture() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/parse-once");
    let mut out = Vec::new();
    let mut stack: Vec<PathBuf> = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.file_name().is_some_and(|n| n != "README.md") {
                let rel = path.strip_prefix(&root).unwrap().to_string_lossy();
                out.push((rel.into_owned(), std::fs::read_to_string(&path).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// `text` with `from` replaced by `to`, once, where it must be.
fn edit(text: &str, from: &str, to: &str) -> String {
    assert_eq!(
        text.matches(from).count(),
        1,
        "{from:?} is not in the text once"
    );
    text.replacen(from, to, 1)
}

/// The change: `Glob::new` takes a parameter more (a hub: its callers in
/// `lib.rs` and the tests are not updated), a body change in
/// `Parser::parse_star`, a macro-declared test deleted; in flask a body
/// change of `has_app_context` and `RequestContext.match_request` taking a
/// parameter its caller does not pass.
fn changed(files: &[(String, String)]) -> Vec<(String, String)> {
    let text = |p: &str| {
        &files
            .iter()
            .find(|(path, _)| path == p)
            .unwrap_or_else(|| panic!("no {p} in the fixture"))
            .1
    };
    let glob = text("globset/src/glob.rs");
    let glob = edit(
        glob,
        "    pub fn new(glob: &str) -> Result<Glob, Error> {",
        "    pub fn new(glob: &str, _probe: u8) -> Result<Glob, Error> {",
    );
    let glob = edit(
        &glob,
        "    fn parse_star(&mut self) -> Result<(), Error> {\n        let prev = self.prev;",
        "    fn parse_star(&mut self) -> Result<(), Error> {\n        let _timing_probe = 0;\n        let prev = self.prev;",
    );
    let glob = edit(
        &glob,
        "    syntax!(any2, \"a?b\", vec![Literal('a'), Any, Literal('b')]);\n",
        "",
    );
    let ctx = text("flask/src/flask/ctx.py");
    let ctx = edit(
        ctx,
        "    return _cv_app.get(None) is not None\n",
        "    return (_cv_app.get(None) is not None)\n",
    );
    let ctx = edit(
        &ctx,
        "    def match_request(self) -> None:",
        "    def match_request(self, strict: bool) -> None:",
    );
    vec![
        ("globset/src/glob.rs".to_string(), glob),
        ("flask/src/flask/ctx.py".to_string(), ctx),
    ]
}

/// The dry run's review, and its log.
fn dry_run(dir: &Path, fresh: bool) -> (Value, Run) {
    let env: &[(&str, &str)] = if fresh {
        &[("SPEED_PARSE_FRESH", "1")]
    } else {
        &[]
    };
    let run = speed(
        dir,
        &["review", "--task-id", "1", "--dry-run", "--json", "-v"],
        env,
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    let out: Value = serde_json::from_str(&run.stdout).unwrap();
    (out["reviews"][0].clone(), run)
}

/// The log's line of the tree store's counts.
fn trees_line(run: &Run) -> String {
    run.stderr
        .lines()
        .find(|l| l.contains("trees:"))
        .unwrap_or_else(|| panic!("no trees line in the log:\n{}", run.stderr))
        .to_string()
}

#[test]
fn a_dry_run_on_real_code_is_the_same_with_every_tree_parsed_once_or_fresh() {
    let files = fixture();
    assert!(files.len() >= 10, "{files:?}");
    let main: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let change = changed(&files);
    let branch: Vec<(&str, &str)> = change
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let repo = repo_with(
        &main,
        &branch,
        &[],
        json!({"files_to_modify": ["globset", "flask"]}),
    );
    let (shared, shared_run) = dry_run(repo.path(), false);
    let (fresh, fresh_run) = dry_run(repo.path(), true);

    // The switch did what it says: sharing, no tree is made twice; fresh,
    // the index parses again the changed files the checks outlined.
    let once = trees_line(&shared_run);
    assert!(once.contains("(0 of files parsed before)"), "{once}");
    let again = trees_line(&fresh_run);
    assert!(!again.contains("(0 of files parsed before)"), "{again}");

    // What the change is found to do, so that the comparison below is of
    // something: a hub's callers broken, a deleted test, impact rows in
    // both languages.
    let checks: Vec<&str> = shared["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["check"].as_str().unwrap())
        .collect();
    assert!(checks.contains(&"breaking_change"), "{checks:?}");
    assert!(checks.contains(&"test_weakened"), "{checks:?}");
    let symbols: Vec<&str> = shared["impact"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["symbol"].as_str().unwrap())
        .collect();
    for s in [
        "Glob::new",
        "parse_star",
        "has_app_context",
        "match_request",
    ] {
        assert!(
            symbols.iter().any(|x| x.contains(s)),
            "{s} not in {symbols:?}"
        );
    }
    assert!(
        shared["prompt"].as_str().unwrap().contains("Glob::new"),
        "{}",
        shared["prompt"]
    );

    for key in [
        "prompt", "tokens", "sections", "criteria", "checks", "impact", "notices",
    ] {
        assert_eq!(
            shared.get(key),
            fresh.get(key),
            "{key} differs between the shared and the fresh trees"
        );
    }
}
