//! Builds real git repositories for the demo and the tests: the example product
//! under `specs-example/` (a main branch, one branch per task, and drafts
//! written into the working tree), and small repositories described inline by
//! a test.
//!
//! Included with `#[path]` by `specs-example/demo.rs` and by the tests, so it is
//! a plain module: no `main`, nothing printed, errors returned as text naming
//! the path or branch concerned. It uses git2 only, never the `git` binary, and
//! fixes author, committer and dates so commit ids are the same on every
//! machine. It writes only inside the destination it is given.

// Each includer uses a different part: the demo only `materialize`, the tests
// mostly `RepoBuilder`.
#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};

use git2::build::{CheckoutBuilder, TreeUpdateBuilder};
use git2::{FileMode, Repository, RepositoryInitOptions, Signature, Time};

/// Author and committer of every commit made here.
pub const AUTHOR_NAME: &str = "speed example";
pub const AUTHOR_EMAIL: &str = "example@speed.dev";

/// Time of the first commit (2024-03-04 09:00:00 UTC); each later commit is one
/// minute after the previous one, so `git log` order is the order of creation.
pub const FIRST_COMMIT_TIME: i64 = 1_709_542_800;

/// Files at the root of a `branches/<name>/` overlay that steer the commit and
/// are not committed themselves.
pub const DELETED_FILE: &str = ".deleted";
pub const MESSAGE_FILE: &str = ".message";

const MAIN_MESSAGE: &str = "Riverside library catalog: Rust core, Python API and product spec\n";

/// What `materialize` built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Materialized {
    /// The repository's working directory.
    pub root: PathBuf,
    /// The commit id (hex) of `main`.
    pub main: String,
    /// Every task branch and its commit id (hex), ordered by overlay folder name.
    pub branches: Vec<(String, String)>,
}

/// Builds the example repository at `dest` from `example_dir` (`specs-example/`):
/// `main/` becomes the first commit of `main`; each `branches/<name>/` becomes
/// one commit on a branch made from `main` (`speed-task-N` → `speed/task-N`)
/// that writes the overlay's files and deletes the paths listed one per line in
/// its `.deleted` (blank lines and `#` comments skipped); `.message` gives the
/// commit message. HEAD is left on `main` with a clean checkout.
///
/// `dest` must not exist or be an empty directory.
pub fn materialize(example_dir: &Path, dest: &Path) -> Result<Materialized, String> {
    let main_dir = example_dir.join("main");
    let main_files = read_tree(&main_dir)?;
    if main_files.is_empty() {
        return Err(format!(
            "{}: no files to commit on main",
            main_dir.display()
        ));
    }

    let mut builder = RepoBuilder::init(dest)?;
    let main = builder.commit_bytes("main", None, &as_refs(&main_files), &[], MAIN_MESSAGE)?;

    let mut branches = Vec::new();
    for (folder, dir) in overlay_dirs(&example_dir.join("branches"))? {
        let branch = branch_name(&folder);
        let mut files = read_tree(&dir)?;
        files.retain(|(path, _)| path != DELETED_FILE && path != MESSAGE_FILE);
        let deletes = read_deleted(&dir.join(DELETED_FILE))?;
        let message = match read_optional(&dir.join(MESSAGE_FILE))? {
            Some(text) if !text.trim().is_empty() => text.trim_end().to_string() + "\n",
            _ => format!("Work on {branch}\n"),
        };
        let deletes: Vec<&str> = deletes.iter().map(String::as_str).collect();
        let commit = builder
            .commit_bytes(&branch, Some("main"), &as_refs(&files), &deletes, &message)
            .map_err(|e| format!("{}: {e}", dir.display()))?;
        branches.push((branch, commit));
    }

    builder.checkout("main")?;
    Ok(Materialized {
        root: dest.to_path_buf(),
        main,
        branches,
    })
}

/// Writes the files under `example_dir/drafts/` (`specs-example/drafts/`)
/// into the working tree of the repository at `root`, uncommitted: drafts,
/// such as a spec a spec review reads from the working tree. Returns their
/// paths, sorted. A missing `drafts/` folder writes nothing.
pub fn write_drafts(example_dir: &Path, root: &Path) -> Result<Vec<String>, String> {
    let dir = example_dir.join("drafts");
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    let mut written = Vec::new();
    for (path, bytes) in read_tree(&dir)? {
        check_path(&path)?;
        let full = root.join(&path);
        if let Some(parent) = full.parent() {
            fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        fs::write(&full, bytes).map_err(|e| format!("{}: {e}", full.display()))?;
        written.push(path);
    }
    Ok(written)
}

/// `speed-task-3` → `speed/task-3`: branch names hold a `/`, folder names can't.
/// Any other folder name is used as the branch name unchanged.
pub fn branch_name(folder: &str) -> String {
    match folder.strip_prefix("speed-") {
        Some(rest) => format!("speed/{rest}"),
        None => folder.to_string(),
    }
}

/// A small, deterministic repository builder for tests: commits are made from
/// in-memory file lists straight into git objects, so a branch never needs to
/// be checked out to receive a commit.
pub struct RepoBuilder {
    repo: Repository,
    commits: i64,
}

impl RepoBuilder {
    /// A new repository at `dir` (created if missing, must be empty) whose
    /// unborn HEAD is `main`.
    pub fn init(dir: &Path) -> Result<RepoBuilder, String> {
        if dir.exists() {
            let mut entries = fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            if entries.next().is_some() {
                return Err(format!("{}: exists and is not empty", dir.display()));
            }
        }
        let mut opts = RepositoryInitOptions::new();
        opts.initial_head("main");
        let repo = Repository::init_opts(dir, &opts)
            .map_err(|e| format!("{}: cannot create a repository: {e}", dir.display()))?;
        // A developer's global core.autocrlf would otherwise rewrite line endings
        // on checkout and leave the working tree looking modified.
        repo.config()
            .and_then(|mut config| config.set_bool("core.autocrlf", false))
            .map_err(|e| format!("{}: cannot write .git/config: {e}", dir.display()))?;
        Ok(RepoBuilder { repo, commits: 0 })
    }

    /// The existing repository at `dir`, to add commits to (its new commits
    /// are dated after any `materialize` wrote).
    pub fn open(dir: &Path) -> Result<RepoBuilder, String> {
        let repo = Repository::open(dir)
            .map_err(|e| format!("{}: cannot open the repository: {e}", dir.display()))?;
        Ok(RepoBuilder { repo, commits: 100 })
    }

    pub fn repo(&self) -> &Repository {
        &self.repo
    }

    /// The working directory.
    pub fn root(&self) -> &Path {
        self.repo.workdir().unwrap_or_else(|| self.repo.path())
    }

    /// Commits `files` (path, text) and `deletes` on `branch` and returns the
    /// commit id (hex). The new commit's parent is the tip of `branch`; when
    /// `branch` does not exist yet it starts at the tip of `parent`, or as a root
    /// commit when `parent` is None. The working tree is not touched.
    pub fn commit(
        &mut self,
        branch: &str,
        parent: Option<&str>,
        files: &[(&str, &str)],
        deletes: &[&str],
        message: &str,
    ) -> Result<String, String> {
        let files: Vec<(&str, &[u8])> = files.iter().map(|(p, c)| (*p, c.as_bytes())).collect();
        self.commit_bytes(branch, parent, &files, deletes, message)
    }

    /// `commit` for contents that are not text (binary files, invalid UTF-8).
    pub fn commit_bytes(
        &mut self,
        branch: &str,
        parent: Option<&str>,
        files: &[(&str, &[u8])],
        deletes: &[&str],
        message: &str,
    ) -> Result<String, String> {
        let id = self.write_commit(branch, parent, files, deletes, message)?;
        // Counted only once the commit exists, so a refused commit does not
        // shift the dates (and ids) of the commits after it.
        self.commits += 1;
        Ok(id)
    }

    fn write_commit(
        &self,
        branch: &str,
        parent: Option<&str>,
        files: &[(&str, &[u8])],
        deletes: &[&str],
        message: &str,
    ) -> Result<String, String> {
        let fail = |what: &str, e: git2::Error| format!("branch {branch}: {what}: {e}");
        let parent_commit = match self.tip(branch)? {
            Some(tip) => Some(tip),
            None => match parent {
                Some(from) => Some(self.tip(from)?.ok_or_else(|| {
                    format!("branch {branch}: parent branch {from} does not exist")
                })?),
                None => None,
            },
        };
        let base_tree = match &parent_commit {
            Some(commit) => commit
                .tree()
                .map_err(|e| fail("cannot read the parent tree", e))?,
            None => {
                let empty = self
                    .repo
                    .treebuilder(None)
                    .and_then(|builder| builder.write())
                    .map_err(|e| fail("cannot write the empty tree", e))?;
                self.repo
                    .find_tree(empty)
                    .map_err(|e| fail("cannot read the empty tree", e))?
            }
        };

        let mut update = TreeUpdateBuilder::new();
        for path in deletes {
            check_path(path).map_err(|e| format!("branch {branch}: {e}"))?;
            if base_tree.get_path(Path::new(path)).is_err() {
                return Err(format!(
                    "branch {branch}: cannot delete {path}: not in the parent commit"
                ));
            }
            update.remove(*path);
        }
        for (path, content) in files {
            check_path(path).map_err(|e| format!("branch {branch}: {e}"))?;
            let blob = self
                .repo
                .blob(content)
                .map_err(|e| fail(&format!("cannot write {path}"), e))?;
            update.upsert(*path, blob, FileMode::Blob);
        }
        let tree_id = update
            .create_updated(&self.repo, &base_tree)
            .map_err(|e| fail("cannot build the tree", e))?;
        let tree = self
            .repo
            .find_tree(tree_id)
            .map_err(|e| fail("cannot read the new tree", e))?;

        let time = Time::new(FIRST_COMMIT_TIME + 60 * self.commits, 0);
        let signature = Signature::new(AUTHOR_NAME, AUTHOR_EMAIL, &time)
            .map_err(|e| fail("bad signature", e))?;
        let parents: Vec<&git2::Commit<'_>> = parent_commit.iter().collect();
        let id = self
            .repo
            .commit(None, &signature, &signature, message, &tree, &parents)
            .map_err(|e| fail("cannot commit", e))?;
        self.repo
            .reference(
                &format!("refs/heads/{branch}"),
                id,
                true,
                message.lines().next().unwrap_or(""),
            )
            .map_err(|e| fail("cannot move the branch", e))?;
        Ok(id.to_string())
    }

    /// Writes `content` to `path` in the working tree only (creating folders):
    /// an uncommitted change or an untracked file.
    pub fn write_worktree(&self, path: &str, content: &str) -> Result<(), String> {
        check_path(path)?;
        let full = self.root().join(path);
        if let Some(dir) = full.parent() {
            fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        fs::write(&full, content).map_err(|e| format!("{}: {e}", full.display()))
    }

    /// Points HEAD at `branch` and forces the working tree and index to match
    /// it; changes to tracked files are discarded, untracked files stay.
    pub fn checkout(&self, branch: &str) -> Result<(), String> {
        if self.tip(branch)?.is_none() {
            return Err(format!("cannot check out {branch}: no such branch"));
        }
        self.repo
            .set_head(&format!("refs/heads/{branch}"))
            .and_then(|()| {
                self.repo
                    .checkout_head(Some(CheckoutBuilder::new().force()))
            })
            .map_err(|e| format!("cannot check out {branch}: {e}"))
    }

    fn tip(&self, branch: &str) -> Result<Option<git2::Commit<'_>>, String> {
        match self.repo.find_reference(&format!("refs/heads/{branch}")) {
            Ok(reference) => reference
                .peel_to_commit()
                .map(Some)
                .map_err(|e| format!("branch {branch}: not a commit: {e}")),
            Err(e) if e.code() == git2::ErrorCode::NotFound => Ok(None),
            Err(e) => Err(format!("branch {branch}: {e}")),
        }
    }
}

/// Paths are repository paths: relative, `/`-separated, no `.` or `..`.
fn check_path(path: &str) -> Result<(), String> {
    let bad = path.is_empty()
        || path.starts_with('/')
        || path.contains('\\')
        || path
            .split('/')
            .any(|part| part.is_empty() || part == "." || part == ".." || part == ".git");
    if bad {
        Err(format!("{path:?} is not a relative repository path"))
    } else {
        Ok(())
    }
}

fn as_refs(files: &[(String, Vec<u8>)]) -> Vec<(&str, &[u8])> {
    files
        .iter()
        .map(|(path, content)| (path.as_str(), content.as_slice()))
        .collect()
}

/// Every file under `dir` as (repository path, content), sorted by path.
fn read_tree(dir: &Path) -> Result<Vec<(String, Vec<u8>)>, String> {
    let mut files = Vec::new();
    let mut pending = vec![(dir.to_path_buf(), String::new())];
    while let Some((folder, prefix)) = pending.pop() {
        let entries = fs::read_dir(&folder).map_err(|e| format!("{}: {e}", folder.display()))?;
        for entry in entries {
            let entry = entry.map_err(|e| format!("{}: {e}", folder.display()))?;
            let path = entry.path();
            let name = entry
                .file_name()
                .into_string()
                .map_err(|_| format!("{}: file name is not UTF-8", path.display()))?;
            let repo_path = format!("{prefix}{name}");
            let kind = entry
                .file_type()
                .map_err(|e| format!("{}: {e}", path.display()))?;
            if kind.is_dir() {
                pending.push((path, format!("{repo_path}/")));
            } else if kind.is_file() {
                let content = fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
                files.push((repo_path, content));
            } else {
                return Err(format!(
                    "{}: only plain files and folders are supported",
                    path.display()
                ));
            }
        }
    }
    files.sort();
    Ok(files)
}

/// The overlay folders under `branches/`, sorted by name; none when it is missing.
fn overlay_dirs(branches: &Path) -> Result<Vec<(String, PathBuf)>, String> {
    if !branches.exists() {
        return Ok(Vec::new());
    }
    let mut dirs = Vec::new();
    for entry in fs::read_dir(branches).map_err(|e| format!("{}: {e}", branches.display()))? {
        let entry = entry.map_err(|e| format!("{}: {e}", branches.display()))?;
        let path = entry.path();
        if !path.is_dir() {
            return Err(format!(
                "{}: expected one folder per branch",
                path.display()
            ));
        }
        let name = entry
            .file_name()
            .into_string()
            .map_err(|_| format!("{}: folder name is not UTF-8", path.display()))?;
        dirs.push((name, path));
    }
    dirs.sort();
    Ok(dirs)
}

fn read_optional(path: &Path) -> Result<Option<String>, String> {
    match fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

fn read_deleted(path: &Path) -> Result<Vec<String>, String> {
    Ok(read_optional(path)?
        .unwrap_or_default()
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(str::to_string)
        .collect())
}
