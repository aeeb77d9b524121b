//! The `git` command as a user runs it in the tests: a scrubbed environment
//! (as `speed` runs here), no editor, and the built `speed` first on PATH,
//! so the hooks `speed hook install` writes find it.

use std::path::Path;
use std::process::{Command, Stdio};

use super::speed::Run;

/// PATH with the folder of the built `speed` first, as a user's shell
/// would have it after `cargo install`.
pub fn path_with_speed() -> String {
    let bin = Path::new(env!("CARGO_BIN_EXE_speed"))
        .parent()
        .expect("the binary has a folder")
        .to_path_buf();
    let rest = std::env::var("PATH").unwrap_or_default();
    format!("{}:{rest}", bin.display())
}

/// `git <args>` in `dir`, whatever its outcome.
pub fn git(dir: &Path, args: &[&str]) -> Run {
    let out = Command::new("git")
        .current_dir(dir)
        .args(args)
        .env_clear()
        .env("PATH", path_with_speed())
        .env("HOME", dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_EDITOR", "true")
        .env("GIT_AUTHOR_DATE", "2024-03-04T09:00:00Z")
        .env("GIT_COMMITTER_DATE", "2024-03-04T09:00:00Z")
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
pub fn ok(dir: &Path, args: &[&str]) -> String {
    let run = git(dir, args);
    assert_eq!(run.code, 0, "git {args:?}\n{}", run.transcript());
    run.stdout.trim().to_string()
}

/// The commit `name` names.
pub fn rev(dir: &Path, name: &str) -> String {
    ok(dir, &["rev-parse", name])
}

/// Writes `files` in `dir` (a checkout) and commits them there.
pub fn commit(dir: &Path, files: &[(&str, &str)], message: &str) -> String {
    for (path, content) in files {
        let full = dir.join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, content).unwrap();
        ok(dir, &["add", path]);
    }
    ok(dir, &["commit", "-q", "-m", message]);
    rev(dir, "HEAD")
}
