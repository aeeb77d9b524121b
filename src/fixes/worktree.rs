//! The git a fix run needs beyond reading objects: a temporary worktree at
//! a commit (detached, in a temporary folder, never the user's checkout),
//! removed however the run ends (Ctrl-C included, through `interrupt`);
//! a ref that keeps an agent's commit; and moving a branch as a
//! fast-forward that fails when the branch moved meanwhile. Each is the
//! `git` command run through `process` (no shell, a time limit, its
//! process group ended), with the repository's `GIT_*` variables cleared
//! so no outer hook environment points it elsewhere.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::{interrupt, process};

use super::Error;

/// A git command that takes longer is stuck.
const GIT_TIMEOUT: Duration = Duration::from_secs(300);

/// The variables that would make git act on another repository.
pub const GIT_ENV: [&str; 6] = [
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
];

/// `git ARGS` in `dir`; its stdout, trimmed.
pub fn git(dir: &Path, args: &[&str]) -> Result<String, Error> {
    let mut command = std::process::Command::new("git");
    command.args(args).current_dir(dir);
    for var in GIT_ENV {
        command.env_remove(var);
    }
    let limits = process::Limits {
        timeout: GIT_TIMEOUT,
        stdout: process::Capture::Upto(8 << 20),
        stderr: process::Capture::Tail(16 << 10),
    };
    let what = format!("git {}", args.join(" "));
    let output = process::run(command, Vec::new(), &limits).map_err(|e| Error::Git {
        what: what.clone(),
        message: e.to_string(),
    })?;
    if !output.status.success() {
        return Err(Error::Git {
            what,
            message: String::from_utf8_lossy(&output.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_string())
}

/// A worktree at a commit in a temporary folder; removed on drop, and on
/// Ctrl-C.
pub struct Worktree {
    root: PathBuf,
    path: PathBuf,
    /// Its administrative folder in the repository's git folder.
    admin: Arc<Mutex<Option<PathBuf>>>,
    _dir: tempfile::TempDir,
    _cleanup: interrupt::Cleanup,
}

impl Worktree {
    /// A detached worktree of `root`'s repository at `commit`.
    pub fn add(root: &Path, commit: &str) -> Result<Worktree, Error> {
        let dir = tempfile::Builder::new()
            .prefix("speed-fix-")
            .tempdir()
            .map_err(|e| Error::Io {
                what: "a temporary folder for the worktree".to_string(),
                source: e,
            })?;
        let path = dir.path().join("work");
        let admin: Arc<Mutex<Option<PathBuf>>> = Arc::new(Mutex::new(None));
        let cleanup = {
            let (dir, admin) = (dir.path().to_path_buf(), Arc::clone(&admin));
            interrupt::on_interrupt(move || {
                std::fs::remove_dir_all(&dir).ok();
                if let Some(admin) = admin.lock().ok().and_then(|a| a.clone()) {
                    std::fs::remove_dir_all(admin).ok();
                }
            })
        };
        let worktree = Worktree {
            root: root.to_path_buf(),
            path: path.clone(),
            admin,
            _dir: dir,
            _cleanup: cleanup,
        };
        let target = path.to_string_lossy().into_owned();
        git(
            root,
            &["worktree", "add", "--detach", "--quiet", &target, commit],
        )?;
        // `.git` in a linked worktree is a file naming its folder.
        let link = std::fs::read_to_string(path.join(".git")).unwrap_or_default();
        if let Some(folder) = link.trim().strip_prefix("gitdir:") {
            if let Ok(mut admin) = worktree.admin.lock() {
                *admin = Some(PathBuf::from(folder.trim()));
            }
        }
        Ok(worktree)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Its HEAD commit.
    pub fn head(&self) -> Result<String, Error> {
        git(&self.path, &["rev-parse", "--verify", "HEAD^{commit}"])
    }

    /// Whether it holds changes nobody committed.
    pub fn dirty(&self) -> bool {
        git(
            &self.path,
            &["status", "--porcelain", "--untracked-files=normal"],
        )
        .map(|s| !s.is_empty())
        .unwrap_or(false)
    }
}

impl Drop for Worktree {
    fn drop(&mut self) {
        // What `git worktree remove --force` does: the folder, then its
        // administrative files (the commits stay in the object store).
        std::fs::remove_dir_all(&self.path).ok();
        let admin = self.admin.lock().ok().and_then(|a| a.clone());
        match admin {
            Some(admin) => {
                std::fs::remove_dir_all(admin).ok();
            }
            None => {
                git(&self.root, &["worktree", "prune"]).ok();
            }
        }
    }
}

/// The commit `refs/heads/<branch>` points at, if it is a local branch.
pub fn local_branch(root: &Path, branch: &str) -> Option<String> {
    let name = format!("refs/heads/{branch}");
    git(
        root,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{name}^{{commit}}"),
        ],
    )
    .ok()
}

/// The worktree that has `branch` checked out, if one does (git refuses to
/// move such a branch under its checkout, and so does speed).
pub fn checked_out(root: &Path, branch: &str) -> Result<Option<String>, Error> {
    let list = git(root, &["worktree", "list", "--porcelain"])?;
    let wanted = format!("branch refs/heads/{branch}");
    let mut current = None;
    for line in list.lines() {
        if let Some(path) = line.strip_prefix("worktree ") {
            current = Some(path.to_string());
        } else if line == wanted {
            return Ok(current);
        }
    }
    Ok(None)
}

/// Moves `branch` from `old` to `new` in one step that fails if it no
/// longer points at `old`.
pub fn fast_forward(
    root: &Path,
    branch: &str,
    new: &str,
    old: &str,
    why: &str,
) -> Result<(), Error> {
    let name = format!("refs/heads/{branch}");
    git(root, &["update-ref", "-m", why, &name, new, old]).map(|_| ())
}

/// Keeps `commit` reachable as `refs/speed/fixes/<id>`.
pub fn keep(root: &Path, id: &str, commit: &str) -> Result<String, Error> {
    let name = format!("refs/speed/fixes/{id}");
    git(root, &["update-ref", &name, commit])?;
    Ok(name)
}
