//! Git access: a small wrapper around git2 that reads everything from git
//! objects at the commits under review, never from the checkout, so a branch
//! need not be checked out and a dirty working tree changes nothing.
//!
//! It owns branch and base resolution, tree-to-tree diffs and blob reads. It
//! must not write to the repository (no refs, no index, no checkout), with
//! one exception the contract names: speed's git notes (`notes`, the ref
//! `refs/notes/speed`), and must not let a git2 type escape: callers get
//! plain data (`diff::Diff`, hex ids, text).

mod branches;
pub mod diff;
mod export;
mod forks;
mod graph;
mod landed;
mod notes;
mod setup;
mod worktrees;

use std::path::{Path, PathBuf};

pub use branches::BranchHead;
pub use diff::{Diff, FileDiff, FileStatus, Hunk, Line, LineKind};
pub use export::{ExportError, Exported, Written, blob_id};
pub use forks::LandedPrefix;
pub use graph::CommitNode;
pub use landed::Landed;
pub use notes::Synced;

/// Everything that can go wrong reading a repository; each variant names the
/// path, branch, revision or blob concerned.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{} is not inside a git repository", path.display())]
    NotARepository {
        path: PathBuf,
        #[source]
        source: git2::Error,
    },
    /// `hint` says what to fetch when the repository shows why it is
    /// missing (empty, or starting with "; ").
    #[error(
        "branch `{branch}` not found (looked for a local branch, origin/{branch}, then any revision){hint}"
    )]
    BranchNotFound { branch: String, hint: String },
    #[error(
        "the local branch {branch} ({}) and origin/{branch} ({}) have diverged, and speed does not choose between them: bring them together (git pull, or git push --force-with-lease when the local one is right) and review again",
        short(local),
        short(remote)
    )]
    BranchDiverged {
        branch: String,
        local: String,
        remote: String,
    },
    #[error(
        "no main branch found: {tried}; name one with --base or git.main_branch in .speed/config.toml{}",
        if *shallow { SHALLOW_MAIN_HINT } else { "" }
    )]
    NoMainBranch { tried: String, shallow: bool },
    #[error("revision `{rev}` does not name a commit in this repository")]
    CommitNotFound { rev: String },
    #[error("commits {a} and {b} have no common ancestor{}", if *shallow { SHALLOW_HINT } else { "" })]
    NoMergeBase { a: String, b: String, shallow: bool },
    #[error("blob {blob} not found in the object database")]
    BlobNotFound { blob: String },
    #[error("cannot read `{path}` at commit {commit}: {source}")]
    Read {
        commit: String,
        path: String,
        #[source]
        source: git2::Error,
    },
    #[error("cannot diff {base}..{head}: {source}")]
    Diff {
        base: String,
        head: String,
        #[source]
        source: git2::Error,
    },
    #[error("cannot walk the history of {tips}: {source}")]
    Walk {
        tips: String,
        #[source]
        source: git2::Error,
    },
    #[error(
        "more than {limit} commits between {tips} and what is already there; refusing to walk them all"
    )]
    TooManyCommits { tips: String, limit: usize },
    #[error("the git note on commit {commit}: {message}")]
    Note { commit: String, message: String },
    #[error("{what}: {message}")]
    Command { what: String, message: String },
    #[error("cannot read {what} of the repository at {}: {source}", path.display())]
    State {
        what: String,
        path: PathBuf,
        #[source]
        source: git2::Error,
    },
}

/// What a shallow clone's missing merge-base needs (CI checkouts often
/// fetch one commit).
const SHALLOW_HINT: &str = " in this shallow clone's history: fetch the rest (`fetch-depth: 0` in actions/checkout, or `git fetch --unshallow origin`) and review again";

/// What a shallow clone without its main branch needs.
const SHALLOW_MAIN_HINT: &str = "; this clone is shallow (a CI checkout fetches one commit unless told otherwise): fetch the main branch with its history, `fetch-depth: 0` in actions/checkout, or `git fetch --unshallow origin main:refs/remotes/origin/main`";

/// The branch that holds the source of truth, and its commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MainBranch {
    pub name: String,
    pub commit: String,
}

/// What a task says about where its diff starts; see `Repository::diff_base`.
#[derive(Debug, Clone, Copy)]
pub struct BaseRequest<'a> {
    pub main: &'a MainBranch,
    /// The head commit (hex) of the task branch.
    pub head: &'a str,
    pub execution_base_commit: Option<&'a str>,
    pub base_commit: Option<&'a str>,
    /// The task's `base_branch`, if its file names one.
    pub task_base_branch: Option<&'a str>,
}

/// The chosen diff base and a human-readable account of how it was chosen
/// (including why earlier candidates were passed over), for the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Base {
    pub commit: String,
    pub how: String,
}

/// One blob in a commit's tree. Its size is not read: that is a read of
/// each blob's header (for a loose object a file opened and inflated), a
/// serial cost of every review that nothing used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeFile {
    pub path: String,
    pub blob: String,
}

/// One commit of a branch's own history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitInfo {
    pub id: String,
    /// The first parent; None for a root commit.
    pub parent: Option<String>,
    /// The first line of the message.
    pub summary: String,
}

/// A branch's own commits, oldest first (see `Repository::branch_history`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct History {
    pub commits: Vec<CommitInfo>,
    /// Older commits were left out: the limit was reached first.
    pub truncated: bool,
}

/// A repository opened for reading. Not `Sync` (git2 handles are not): worker
/// threads open their own with `Repository::open(root)`.
pub struct Repository {
    repo: git2::Repository,
    root: PathBuf,
    /// A linked worktree's main worktree, which holds speed's state.
    main_worktree: Option<PathBuf>,
}

impl std::fmt::Debug for Repository {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Repository")
            .field("root", &self.root)
            .finish()
    }
}

impl Repository {
    /// The repository containing `start` (searching parent folders).
    pub fn discover(start: &Path) -> Result<Repository, Error> {
        let repo = git2::Repository::discover(start).map_err(|source| Error::NotARepository {
            path: start.to_path_buf(),
            source,
        })?;
        Ok(Self::wrap(repo))
    }

    /// The repository whose work tree (or git dir, if bare) is exactly `root`.
    pub fn open(root: &Path) -> Result<Repository, Error> {
        let repo = git2::Repository::open(root).map_err(|source| Error::NotARepository {
            path: root.to_path_buf(),
            source,
        })?;
        Ok(Self::wrap(repo))
    }

    fn wrap(repo: git2::Repository) -> Repository {
        skip_hash_checks();
        let root = repo.workdir().unwrap_or_else(|| repo.path()).to_path_buf();
        // git2 reports work dirs with a trailing slash; callers join paths onto it.
        let root = root.components().collect::<PathBuf>();
        let main_worktree = worktrees::main_worktree(&repo);
        Repository {
            repo,
            root,
            main_worktree,
        }
    }

    /// The work-tree root (the git dir for a bare repository).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The main branch. `explicit` is the first of `--base`, config
    /// `git.main_branch` and `MAIN_BRANCH` the caller found; when given it
    /// must resolve. Otherwise the branch origin/HEAD points at, then `main`,
    /// then `master`.
    pub fn resolve_main(&self, explicit: Option<&str>) -> Result<MainBranch, Error> {
        if let Some(name) = explicit {
            let commit = self.resolve_branch(name)?;
            return Ok(MainBranch {
                name: name.to_string(),
                commit,
            });
        }
        let mut tried = Vec::new();
        if let Some(name) = self.origin_head_branch() {
            match self.resolve_branch(&name) {
                Ok(commit) => return Ok(MainBranch { name, commit }),
                Err(_) => tried.push(format!(
                    "origin/HEAD points at `{name}`, which does not resolve"
                )),
            }
        } else {
            tried.push("origin/HEAD is not set".to_string());
        }
        for name in ["main", "master"] {
            match self.resolve_branch(name) {
                Ok(commit) => {
                    return Ok(MainBranch {
                        name: name.to_string(),
                        commit,
                    });
                }
                Err(_) => tried.push(format!("no branch `{name}`")),
            }
        }
        Err(Error::NoMainBranch {
            tried: tried.join(", "),
            shallow: self.repo.is_shallow(),
        })
    }

    /// The branch name (without `origin/`) that `refs/remotes/origin/HEAD`
    /// points at, if the remote has one recorded.
    fn origin_head_branch(&self) -> Option<String> {
        let reference = self.repo.find_reference("refs/remotes/origin/HEAD").ok()?;
        // A non-UTF-8 ref name cannot be a branch speed can name.
        let target = reference.symbolic_target().ok()??;
        target
            .strip_prefix("refs/remotes/origin/")
            .map(str::to_string)
    }

    /// A branch's commit: the local branch, then the remote-tracking
    /// `origin/<name>`, then any revision (tag, sha, `origin/x`).
    pub fn resolve_branch(&self, name: &str) -> Result<String, Error> {
        for full in [
            format!("refs/heads/{name}"),
            format!("refs/remotes/origin/{name}"),
        ] {
            // A missing ref just means the next place to look.
            let commit = self
                .repo
                .find_reference(&full)
                .and_then(|reference| reference.peel_to_commit());
            if let Ok(commit) = commit {
                return Ok(commit.id().to_string());
            }
        }
        self.resolve_commit(name)
            .map_err(|_| self.branch_not_found(name))
    }

    /// Any revision git understands, peeled to a commit id (hex).
    pub fn resolve_commit(&self, rev: &str) -> Result<String, Error> {
        Ok(self.commit(rev)?.id().to_string())
    }

    fn commit(&self, rev: &str) -> Result<git2::Commit<'_>, Error> {
        self.repo
            .revparse_single(rev)
            .and_then(|object| object.peel_to_commit())
            .map_err(|_| Error::CommitNotFound {
                rev: rev.to_string(),
            })
    }

    /// The best common ancestor of two revisions.
    pub fn merge_base(&self, a: &str, b: &str) -> Result<String, Error> {
        let one = self.commit(a)?.id();
        let two = self.commit(b)?.id();
        self.repo
            .merge_base(one, two)
            .map(|oid| oid.to_string())
            .map_err(|_| Error::NoMergeBase {
                a: a.to_string(),
                b: b.to_string(),
                // The ancestor may be older than the clone's history.
                shallow: self.repo.is_shallow(),
            })
    }

    /// Where a task's diff starts, first that resolves (the contract's order):
    /// `execution_base_commit`; merge-base(main, head) when the task's base
    /// branch is the main branch; `base_commit`; merge-base(main, head).
    /// A commit that is given but does not resolve is passed over, and `how`
    /// says so.
    pub fn diff_base(&self, req: &BaseRequest) -> Result<Base, Error> {
        let mut passed_over = Vec::new();
        let merge_base = |reason: &str, passed_over: &[String]| -> Result<Base, Error> {
            let commit = self.merge_base(&req.main.commit, req.head)?;
            Ok(Base {
                commit,
                how: explain(
                    &format!(
                        "merge-base of {} and the task branch{reason}",
                        req.main.name
                    ),
                    passed_over,
                ),
            })
        };
        if let Some(given) = req.execution_base_commit {
            match self.resolve_commit(given) {
                Ok(commit) => {
                    return Ok(Base {
                        commit,
                        how: "execution_base_commit".to_string(),
                    });
                }
                Err(_) => passed_over.push(format!("execution_base_commit {given} not found")),
            }
        }
        if req.task_base_branch == Some(req.main.name.as_str()) {
            return merge_base(" (the task's base_branch)", &passed_over);
        }
        if let Some(given) = req.base_commit {
            match self.resolve_commit(given) {
                Ok(commit) => {
                    return Ok(Base {
                        commit,
                        how: explain("base_commit", &passed_over),
                    });
                }
                Err(_) => passed_over.push(format!("base_commit {given} not found")),
            }
        }
        merge_base("", &passed_over)
    }

    /// The tree-to-tree diff between two commits: 3 lines of context, renames
    /// detected (copies not), binary files and mode changes reported.
    pub fn diff(&self, base: &str, head: &str) -> Result<Diff, Error> {
        let base_commit = self.commit(base)?;
        let head_commit = self.commit(head)?;
        let wrap = |source: git2::Error| Error::Diff {
            base: base.to_string(),
            head: head.to_string(),
            source,
        };
        let base_tree = base_commit.tree().map_err(wrap)?;
        let head_tree = head_commit.tree().map_err(wrap)?;
        let mut options = git2::DiffOptions::new();
        options.context_lines(3).interhunk_lines(0);
        let mut raw = self
            .repo
            .diff_tree_to_tree(Some(&base_tree), Some(&head_tree), Some(&mut options))
            .map_err(wrap)?;
        let mut find = git2::DiffFindOptions::new();
        // git's own default rename limit; libgit2's is lower.
        find.renames(true).copies(false).rename_limit(1000);
        raw.find_similar(Some(&mut find)).map_err(wrap)?;

        let mut files = Vec::new();
        for idx in 0..raw.deltas().len() {
            if let Some(file) = file_diff(&raw, idx).map_err(wrap)? {
                files.push(file);
            }
        }
        let mut diff = Diff {
            base_commit: base_commit.id().to_string(),
            head_commit: head_commit.id().to_string(),
            files,
            sha256: String::new(),
        };
        diff.sha256 = crate::digest::sha256(diff.render().as_bytes());
        Ok(diff)
    }

    /// A file's bytes at a commit; None if no file has that path there.
    pub fn read_file(&self, commit: &str, path: &str) -> Result<Option<Vec<u8>>, Error> {
        let tree = self.commit(commit)?.tree().map_err(|source| Error::Read {
            commit: commit.to_string(),
            path: path.to_string(),
            source,
        })?;
        let entry = match tree.get_path(Path::new(path)) {
            Ok(entry) => entry,
            Err(e) if e.code() == git2::ErrorCode::NotFound => return Ok(None),
            Err(source) => {
                return Err(Error::Read {
                    commit: commit.to_string(),
                    path: path.to_string(),
                    source,
                });
            }
        };
        // A folder or submodule at that path is not a file.
        if entry.kind() != Some(git2::ObjectType::Blob) {
            return Ok(None);
        }
        let blob = self
            .repo
            .find_blob(entry.id())
            .map_err(|source| Error::Read {
                commit: commit.to_string(),
                path: path.to_string(),
                source,
            })?;
        Ok(Some(blob.content().to_vec()))
    }

    /// Every blob in a commit's tree, recursively, sorted by path. Submodules
    /// are not blobs and are left out.
    pub fn list_files(&self, commit: &str) -> Result<Vec<TreeFile>, Error> {
        let read_err = |source: git2::Error| Error::Read {
            commit: commit.to_string(),
            path: String::new(),
            source,
        };
        let tree = self.commit(commit)?.tree().map_err(read_err)?;
        let mut files = Vec::new();
        tree.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
            if entry.kind() == Some(git2::ObjectType::Blob) {
                let name = String::from_utf8_lossy(entry.name_bytes());
                files.push(TreeFile {
                    path: format!("{dir}{name}"),
                    blob: entry.id().to_string(),
                });
            }
            git2::TreeWalkResult::Ok
        })
        .map_err(read_err)?;
        files.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(files)
    }

    /// A blob's bytes by id (hex).
    pub fn read_blob(&self, blob: &str) -> Result<Vec<u8>, Error> {
        let not_found = || Error::BlobNotFound {
            blob: blob.to_string(),
        };
        let oid = git2::Oid::from_str(blob).map_err(|_| not_found())?;
        let found = self.repo.find_blob(oid).map_err(|_| not_found())?;
        Ok(found.content().to_vec())
    }

    /// Whether `ancestor` is `descendant` or one of its ancestors.
    pub fn is_ancestor(&self, ancestor: &str, descendant: &str) -> Result<bool, Error> {
        let a = self.commit(ancestor)?.id();
        let d = self.commit(descendant)?.id();
        if a == d {
            return Ok(true);
        }
        self.repo
            .graph_descendant_of(d, a)
            .map_err(|_| Error::NoMergeBase {
                a: ancestor.to_string(),
                b: descendant.to_string(),
                shallow: self.repo.is_shallow(),
            })
    }

    /// The commits of `head`'s branch since `base`, oldest first, following
    /// first parents (the history as the branch's author made it; a merge
    /// is one commit). The walk stops at the first commit `base` contains,
    /// and keeps at most the newest `limit` commits.
    pub fn branch_history(&self, base: &str, head: &str, limit: usize) -> Result<History, Error> {
        let base_id = self.commit(base)?.id();
        let mut commit = self.commit(head)?;
        let mut commits = Vec::new();
        let mut truncated = false;
        loop {
            let id = commit.id();
            let contained = id == base_id
                || self
                    .repo
                    .graph_descendant_of(base_id, id)
                    .map_err(|_| Error::NoMergeBase {
                        a: base.to_string(),
                        b: head.to_string(),
                        shallow: self.repo.is_shallow(),
                    })?;
            if contained {
                break;
            }
            if commits.len() == limit {
                truncated = true;
                break;
            }
            let parent = commit.parent(0).ok();
            commits.push(CommitInfo {
                id: id.to_string(),
                parent: parent.as_ref().map(|p| p.id().to_string()),
                summary: commit
                    .summary_bytes()
                    .map(|b| String::from_utf8_lossy(b).into_owned())
                    .unwrap_or_default(),
            });
            match parent {
                Some(parent) => commit = parent,
                None => break,
            }
        }
        commits.reverse();
        Ok(History { commits, truncated })
    }

    /// A commit's committer time, in seconds since the Unix epoch.
    pub fn commit_time(&self, rev: &str) -> Result<i64, Error> {
        Ok(self.commit(rev)?.committer().when().seconds())
    }

    /// `user.name` and `user.email` as git would sign a commit here
    /// (repository, global and system configuration); None where unset.
    pub fn user(&self) -> (Option<String>, Option<String>) {
        let Ok(config) = self.repo.config() else {
            return (None, None);
        };
        let get = |key: &str| {
            config
                .get_string(key)
                .ok()
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        (get("user.name"), get("user.email"))
    }

    /// The branch HEAD is on, if it is on one (not detached, not unborn).
    pub fn current_branch(&self) -> Option<String> {
        let head = self.repo.head().ok()?;
        if !head.is_branch() {
            return None;
        }
        head.shorthand().ok().map(str::to_string)
    }
}

/// libgit2 hashes every object it reads to check its id, with the
/// collision-detecting SHA-1. The impact index reads every source file of
/// the tree: on a 5.5 MB Rust repository that check was 2.4% of a cold
/// review's instructions (callgrind). git itself does not check ids on
/// reads, and zlib's checksum still catches a damaged object.
fn skip_hash_checks() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        git2::opts::strict_hash_verification(false);
    });
}

fn explain(chosen: &str, passed_over: &[String]) -> String {
    if passed_over.is_empty() {
        chosen.to_string()
    } else {
        format!("{chosen} ({})", passed_over.join("; "))
    }
}

/// A commit id cut to the length people read: ten hex digits, the one
/// length every message, report and page of speed prints (whole when
/// shorter).
pub fn short(commit: &str) -> &str {
    commit.get(..10).unwrap_or(commit)
}

/// One delta of a git2 diff as plain data; None for an unchanged entry.
fn file_diff(raw: &git2::Diff<'_>, idx: usize) -> Result<Option<FileDiff>, git2::Error> {
    let mut patch = git2::Patch::from_diff(raw, idx)?;
    let delta = match &patch {
        Some(patch) => patch.delta(),
        None => match raw.get_delta(idx) {
            Some(delta) => delta,
            None => return Ok(None),
        },
    };
    let status = match delta.status() {
        git2::Delta::Added => FileStatus::Added,
        git2::Delta::Deleted => FileStatus::Deleted,
        git2::Delta::Renamed => FileStatus::Renamed,
        git2::Delta::Copied => FileStatus::Copied,
        git2::Delta::Typechange => FileStatus::TypeChange,
        git2::Delta::Unmodified => return Ok(None),
        // Ignored, untracked, unreadable and conflicted only arise when a
        // work tree or index is involved, never between two trees.
        git2::Delta::Modified
        | git2::Delta::Ignored
        | git2::Delta::Untracked
        | git2::Delta::Unreadable
        | git2::Delta::Conflicted => FileStatus::Modified,
    };
    let old_path = path_of(&delta.old_file());
    let new_path = path_of(&delta.new_file());
    let path = if status == FileStatus::Deleted {
        old_path.clone()
    } else {
        new_path.clone()
    };
    let old_path = (old_path != path).then_some(old_path);
    let mode = |file: &git2::DiffFile<'_>| {
        let mode = u32::from(file.mode());
        (mode != 0).then_some(mode)
    };
    let blob = |file: &git2::DiffFile<'_>| (!file.id().is_zero()).then(|| file.id().to_string());
    let binary = delta.flags().is_binary();
    let mut file = FileDiff {
        path,
        old_path,
        status,
        binary,
        old_mode: mode(&delta.old_file()),
        new_mode: mode(&delta.new_file()),
        old_blob: blob(&delta.old_file()),
        new_blob: blob(&delta.new_file()),
        similarity: None,
        hunks: Vec::new(),
        additions: 0,
        deletions: 0,
        not_utf8: false,
    };
    let Some(patch) = patch.as_mut() else {
        return Ok(Some(file));
    };
    if matches!(status, FileStatus::Renamed | FileStatus::Copied) {
        file.similarity = similarity(patch)?;
    }
    if binary {
        return Ok(Some(file));
    }
    for h in 0..patch.num_hunks() {
        let (hunk, count) = patch.hunk(h)?;
        let mut out = Hunk {
            old_start: hunk.old_start(),
            old_lines: hunk.old_lines(),
            new_start: hunk.new_start(),
            new_lines: hunk.new_lines(),
            context: hunk_context(hunk.header()),
            lines: Vec::with_capacity(count),
        };
        for l in 0..count {
            let line = patch.line_in_hunk(h, l)?;
            let kind = match line.origin() {
                ' ' => LineKind::Context,
                '+' => LineKind::Added,
                '-' => LineKind::Removed,
                // '=', '>' and '<' mark the line before as lacking its newline.
                _ => {
                    if let Some(last) = out.lines.last_mut() {
                        last.no_newline = true;
                    }
                    continue;
                }
            };
            match kind {
                LineKind::Added => file.additions += 1,
                LineKind::Removed => file.deletions += 1,
                LineKind::Context => {}
            }
            let content = line.content();
            let content = content.strip_suffix(b"\n").unwrap_or(content);
            file.not_utf8 |= std::str::from_utf8(content).is_err();
            out.lines.push(Line {
                kind,
                old_lineno: line.old_lineno(),
                new_lineno: line.new_lineno(),
                text: String::from_utf8_lossy(content).into_owned(),
                no_newline: false,
            });
        }
        file.hunks.push(out);
    }
    Ok(Some(file))
}

fn path_of(file: &git2::DiffFile<'_>) -> String {
    file.path_bytes()
        .map(|bytes| String::from_utf8_lossy(bytes).into_owned())
        .unwrap_or_default()
}

/// The function context after the second `@@` of a hunk header line.
fn hunk_context(header: &[u8]) -> String {
    let header = String::from_utf8_lossy(header);
    let header = header.trim_end_matches(['\n', '\r']);
    match header.get(2..).and_then(|rest| rest.find("@@")) {
        Some(end) => {
            let rest = &header[2 + end + 2..];
            rest.strip_prefix(' ').unwrap_or(rest).to_string()
        }
        None => String::new(),
    }
}

/// The rename score git prints as `similarity index N%`; libgit2 keeps it
/// private to the delta, so it is read back from the patch header.
fn similarity(patch: &mut git2::Patch<'_>) -> Result<Option<u32>, git2::Error> {
    let buf = patch.to_buf()?;
    let text = String::from_utf8_lossy(&buf);
    Ok(text
        .lines()
        .take_while(|line| !line.starts_with("@@"))
        .find_map(|line| line.strip_prefix("similarity index "))
        .and_then(|rest| rest.trim_end_matches('%').parse().ok()))
}

#[cfg(test)]
mod tests;
