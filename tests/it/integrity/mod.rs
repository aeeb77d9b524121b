//! Issue 38's cases, each from outside: real git repositories built with
//! the `git` command (stacked branches moved, rebased, squash-merged and
//! deleted; a spec changed under an approval; stale branches; paths with
//! spaces, a submodule, a symlink), the real binary, and the loopback
//! model. Each test asserts the task file, the exit code and what the user
//! is told.
#![allow(dead_code)] // helpers shared by the cases, each using some

mod branches;
mod covered;
mod lock;
mod paths;
mod stacked;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::support::model_server::ModelServer;
use crate::support::repo::{self, TempRepo};
use crate::support::speed::Run;

/// The folder holding the built `speed`, first on PATH, so hooks find it.
pub fn path_with_speed() -> String {
    let bin = Path::new(env!("CARGO_BIN_EXE_speed"))
        .parent()
        .expect("the binary has a folder")
        .to_path_buf();
    format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// `git <args>` in `dir`, scrubbed like `speed` in the tests, with a fixed
/// author so commits are the same on every machine.
pub fn git_run(dir: &Path, args: &[&str]) -> Run {
    let out = Command::new("git")
        .current_dir(dir)
        .args(args)
        .env_clear()
        .env("PATH", path_with_speed())
        .env("HOME", dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "Ann Example")
        .env("GIT_AUTHOR_EMAIL", "ann@example.com")
        .env("GIT_COMMITTER_NAME", "Ann Example")
        .env("GIT_COMMITTER_EMAIL", "ann@example.com")
        .env("GIT_EDITOR", "true")
        .stdin(Stdio::null())
        .output()
        .expect("git runs");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// `git <args>` that must succeed; its stdout, trimmed.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let run = git_run(dir, args);
    assert_eq!(
        run.code,
        0,
        "git {args:?} in {}\n{}",
        dir.display(),
        run.transcript()
    );
    run.stdout.trim().to_string()
}

pub fn rev(dir: &Path, name: &str) -> String {
    git(dir, &["rev-parse", name])
}

/// Writes `files` into `dir` (folders made), then commits them (and
/// nothing else: task files and the config stay uncommitted).
pub fn commit(dir: &Path, files: &[(&str, &str)], message: &str) -> String {
    for (path, content) in files {
        let full = dir.join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, content).unwrap();
        git(dir, &["add", "--", path]);
    }
    git(dir, &["commit", "-q", "-m", message]);
    rev(dir, "HEAD")
}

pub const SPEC: &str = "specs/product/widgets.md";
pub const SPEC_V1: &str = "# Widgets\n\n## Sizes\n\nA widget has a size between 1 and 10.\nSizes outside that range are refused with an error.\n\n## Colours\n\nA widget is red unless a colour is given.\n";
pub const QUOTE: &str = "Sizes outside that range are refused with an error.";
pub const WIDGETS_V0: &str = "def make(size):\n    return {\"size\": size}\n";
pub const WIDGETS_V1: &str = "def make(size):\n    if size < 1 or size > 10:\n        raise ValueError(\"size out of range\")\n    return {\"size\": size}\n";

/// A repository whose main holds the widgets spec and code, with git's
/// user set and HEAD on main; task branches are added by each test.
pub fn widgets() -> TempRepo {
    let (tmp, root) = repo::empty();
    std::fs::create_dir_all(&root).unwrap();
    git(&root, &["init", "-q", "-b", "main"]);
    git(&root, &["config", "user.name", "Ann Example"]);
    git(&root, &["config", "user.email", "ann@example.com"]);
    commit(
        &root,
        &[(SPEC, SPEC_V1), ("src/widgets.py", WIDGETS_V0)],
        "widgets",
    );
    repo::adopt(tmp, root)
}

/// A task file in `.speed/tasks/` (not committed: the orchestrator's).
pub fn task(repo: &TempRepo, id: u32, extra: Value) {
    let mut task = json!({
        "id": id,
        "title": format!("Task {id}"),
        "description": "Refuse sizes outside the range the spec gives.",
        "status": "done",
        "branch": format!("speed/task-{id}"),
        "files_to_modify": ["src/widgets.py"],
        "acceptance_criteria": [{"criterion": "Sizes outside 1..10 are refused", "verify_by": "review"}],
        "spec_references": [{"spec": SPEC, "section": "Sizes"}]
    });
    if let (Value::Object(task), Value::Object(extra)) = (&mut task, extra) {
        task.extend(extra);
    }
    repo.write(
        &format!(".speed/tasks/{id}.json"),
        &serde_json::to_string_pretty(&task).unwrap(),
    );
}

pub fn task_file(repo: &TempRepo, id: u32) -> Value {
    serde_json::from_str(&repo.read(&format!(".speed/tasks/{id}.json"))).unwrap()
}

/// The loopback model as the configured provider (working tree config:
/// HEAD is main, so it is the one used), no guardian.
pub fn configure(repo: &TempRepo, server: &ModelServer) {
    repo.config(&format!(
        "[llm]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"test-model\"\ntimeout_secs = 20\nmax_retries = 0\nretry_base_ms = 10\n[guardian]\nenabled = false\n",
        server.url()
    ));
}

/// The five default dimensions, each well above its minimum.
fn dimensions() -> Value {
    crate::support::verdicts::dimensions()
}

/// An approval citing `evidence` (`file:line`) for the one criterion and
/// the spec's quote.
pub fn approve(evidence: &str) -> String {
    json!({
        "dimensions": dimensions(),
        "verdict": "approve",
        "expectations": "Sizes outside 1..10 are refused.",
        "criteria": [{"id": "AC-1", "status": "met", "evidence": evidence}],
        "spec_verification": [{"spec_quote": QUOTE, "spec_section": "Widgets > Sizes",
                               "satisfied": true, "evidence": evidence, "notes": ""}],
        "missing_from_spec": [], "out_of_scope": [], "issues": [], "strengths": []
    })
    .to_string()
}

/// A request for changes naming `message`.
pub fn request_changes(message: &str) -> String {
    json!({
        "dimensions": dimensions(),
        "verdict": "request_changes",
        "expectations": "Sizes outside 1..10 are refused.",
        "criteria": [{"id": "AC-1", "status": "unmet", "evidence": message}],
        "spec_verification": [{"spec_quote": QUOTE, "spec_section": "Widgets > Sizes",
                               "satisfied": false, "evidence": "src/widgets.py:2", "notes": message}],
        "missing_from_spec": [], "out_of_scope": [],
        "issues": [{"severity": "major", "file": "src/widgets.py", "line": 2,
                    "message": message, "suggestion": "fix it"}],
        "strengths": []
    })
    .to_string()
}

/// The user message of a chat request: the prompt speed sent.
pub fn prompt_of(request: &crate::support::model_server::Recorded) -> String {
    request.json()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// A sibling folder of the repository, for clones and worktrees.
pub fn beside(repo: &TempRepo, name: &str) -> PathBuf {
    repo.path().parent().unwrap().join(name)
}
