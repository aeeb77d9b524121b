//! Runs the real `speed` binary the way a user would, but with a scrubbed
//! environment so a developer's own variables (MAIN_BRANCH, SKIP_GUARDIAN,
//! API keys, NO_COLOR, git config) never change a test's outcome.

use std::path::Path;
use std::process::{Command, Stdio};

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// A readable dump for snapshots and assertion messages.
    pub fn transcript(&self) -> String {
        format!(
            "exit: {}\n--- stdout\n{}--- stderr\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

/// `speed <args>` in `dir` with only the given extra environment.
pub fn speed(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let out = command(dir, args, env)
        .output()
        .expect("the speed binary runs");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The command `speed` runs, for tests that start it and act while it runs
/// (signals, concurrent reviews, a closed stdout).
pub fn command(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_speed"));
    cmd.current_dir(dir)
        .args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .stdin(Stdio::null());
    for (key, value) in env {
        cmd.env(key, value);
    }
    cmd
}
