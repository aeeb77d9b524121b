//! A GitHub Actions runner, reproduced locally: a project pushed to an
//! "origin" repository, checked out the way `actions/checkout@v4` does it
//! (`git init`, a remote, a fetch at `fetch-depth` 1 or 0 through
//! `file://` so depth is honoured, a detached HEAD), and the environment a
//! job step sees (`CI`, `GITHUB_ACTIONS`, `GITHUB_WORKSPACE`,
//! `GITHUB_STEP_SUMMARY`, `RUNNER_TEMP`, ...). Everything else a test needs
//! to act like a workflow: `git` itself, and copying a folder between jobs
//! as `actions/upload-artifact` and `download-artifact` do.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs `git` in `dir` with the scrubbed environment the tests use (no
/// global or system configuration), a fixed identity, and fails the test
/// when it fails.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = git_command(dir, args).output().expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?} in {}: {}{}",
        dir.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// The folder holding the built `speed` first on PATH, as after `cargo
/// install`, so the hooks git runs find it.
pub fn path_with_speed() -> String {
    let bin = Path::new(env!("CARGO_BIN_EXE_speed"))
        .parent()
        .expect("the binary has a folder")
        .to_path_buf();
    let rest = std::env::var("PATH").unwrap_or_default();
    format!("{}:{rest}", bin.display())
}

/// `git` with the tests' environment (speed on PATH for the hooks), for a
/// caller that checks the outcome.
pub fn git_command(dir: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new("git");
    cmd.current_dir(dir)
        .args(args)
        .env_clear()
        .env("PATH", path_with_speed())
        .env("GIT_EDITOR", "true")
        .stdin(std::process::Stdio::null())
        .env("HOME", dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "runner")
        .env("GIT_AUTHOR_EMAIL", "runner@example.com")
        .env("GIT_COMMITTER_NAME", "runner")
        .env("GIT_COMMITTER_EMAIL", "runner@example.com");
    cmd
}

/// One job's checkout, in its own temporary folder (the runner's
/// workspace), and the folder for the job's files outside it.
pub struct Checkout {
    _tmp: tempfile::TempDir,
    pub root: PathBuf,
    pub summary: PathBuf,
    pub temp: PathBuf,
}

impl Checkout {
    /// `actions/checkout@v4` of `sha` from `origin`: `fetch_depth` 1 fetches
    /// that commit alone; 0 fetches every branch (as
    /// `refs/remotes/origin/*`) with its whole history. HEAD is detached at
    /// `sha`, no local branch exists, and no git identity is configured
    /// (a runner has none).
    pub fn of(origin: &Path, sha: &str, fetch_depth: u32) -> Checkout {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("work");
        let temp = tmp.path().join("_temp");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&temp).unwrap();
        let url = format!("file://{}", origin.display());
        git(&root, &["init", "-q"]);
        git(&root, &["remote", "add", "origin", &url]);
        if fetch_depth == 0 {
            git(
                &root,
                &[
                    "fetch",
                    "-q",
                    "--prune",
                    "--no-recurse-submodules",
                    "origin",
                    "+refs/heads/*:refs/remotes/origin/*",
                    "+refs/tags/*:refs/tags/*",
                ],
            );
        } else {
            let depth = format!("--depth={fetch_depth}");
            git(
                &root,
                &[
                    "fetch",
                    "-q",
                    "--no-tags",
                    "--prune",
                    "--no-recurse-submodules",
                    &depth,
                    "origin",
                    &format!("+{sha}:refs/remotes/origin/checkout"),
                ],
            );
        }
        git(&root, &["checkout", "-q", "--force", "--detach", sha]);
        let summary = temp.join("step_summary.md");
        Checkout {
            _tmp: tmp,
            root,
            summary,
            temp,
        }
    }

    pub fn path(&self) -> &Path {
        &self.root
    }

    /// The environment of a job step on this runner, plus `extra`.
    pub fn env<'a>(&'a self, extra: &[(&'a str, &'a str)]) -> Vec<(&'a str, String)> {
        let mut env: Vec<(&str, String)> = vec![
            ("CI", "true".to_string()),
            ("GITHUB_ACTIONS", "true".to_string()),
            ("GITHUB_WORKSPACE", self.root.display().to_string()),
            ("GITHUB_STEP_SUMMARY", self.summary.display().to_string()),
            ("RUNNER_TEMP", self.temp.display().to_string()),
            ("RUNNER_OS", "Linux".to_string()),
            ("GITHUB_EVENT_NAME", "pull_request".to_string()),
        ];
        env.extend(extra.iter().map(|(k, v)| (*k, v.to_string())));
        env
    }
}

/// `speed` in a checkout with the runner's environment.
pub fn speed_on(checkout: &Checkout, args: &[&str], extra: &[(&str, &str)]) -> super::speed::Run {
    let env = checkout.env(extra);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    super::speed::speed(checkout.path(), args, &env)
}

/// What `actions/upload-artifact` then `download-artifact` do with a
/// folder: its files, copied from one job's checkout into another's.
pub fn carry(from: &Path, to: &Path, folder: &str) {
    let source = from.join(folder);
    let target = to.join(folder);
    copy_dir(&source, &target);
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let dest = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &dest);
        } else {
            std::fs::copy(entry.path(), dest).unwrap();
        }
    }
}
