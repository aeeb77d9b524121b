//! What the repository's own setup says: the folder git runs hooks from,
//! who the user is, what git ignores, whether the clone is shallow or HEAD
//! detached. Read-only, like the rest of `git`.

use std::path::{Path, PathBuf};

use super::{Error, Repository};

impl Repository {
    /// The folder git runs hooks from: `core.hooksPath` (a leading `~/` is
    /// the home folder; a relative path is taken from the work tree's root,
    /// where git runs hooks), else `hooks` in the common git folder, which a
    /// linked worktree shares with the main one.
    pub fn hooks_dir(&self) -> Result<PathBuf, Error> {
        let config = self.repo.config().map_err(|source| Error::State {
            what: "the configuration".to_string(),
            path: self.repo.path().to_path_buf(),
            source,
        })?;
        match config.get_path("core.hooksPath") {
            Ok(path) if path.as_os_str().is_empty() => Ok(self.repo.commondir().join("hooks")),
            Ok(path) if path.is_absolute() => Ok(path),
            Ok(path) => Ok(self.root.join(path)),
            Err(e) if e.code() == git2::ErrorCode::NotFound => {
                Ok(self.repo.commondir().join("hooks"))
            }
            Err(source) => Err(Error::State {
                what: "core.hooksPath".to_string(),
                path: self.repo.path().to_path_buf(),
                source,
            }),
        }
    }

    /// Whether git ignores `path` (relative to the work tree, `/`
    /// separated), by any rule: `.gitignore` files, `info/exclude`, the
    /// user's excludes file. A path inside an ignored folder is ignored.
    pub fn is_ignored(&self, path: &str) -> bool {
        self.repo.is_path_ignored(Path::new(path)).unwrap_or(false)
    }

    /// A value of git's configuration (`speed.bin`), as git reads it for
    /// this repository; None when unset or empty.
    pub fn config_value(&self, key: &str) -> Option<String> {
        let config = self.repo.config().ok()?.snapshot().ok()?;
        config
            .get_string(key)
            .ok()
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    }

    /// Whether this is a shallow clone: history is cut, so a merge base
    /// may be missing.
    pub fn is_shallow(&self) -> bool {
        self.repo.is_shallow()
    }

    /// Whether HEAD points at a commit rather than a branch.
    pub fn head_detached(&self) -> bool {
        self.repo.head_detached().unwrap_or(false)
    }

    /// Whether the repository has a work tree (a bare one has none).
    pub fn has_work_tree(&self) -> bool {
        self.repo.workdir().is_some()
    }

    /// `Name <email>` from `user.name` and `user.email`, as git would sign a
    /// commit; whichever of the two is set; None when neither is.
    pub fn user_identity(&self) -> Option<String> {
        let config = self.repo.config().ok()?.snapshot().ok()?;
        let get = |key: &str| {
            config
                .get_string(key)
                .ok()
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        match (get("user.name"), get("user.email")) {
            (Some(name), Some(email)) => Some(format!("{name} <{email}>")),
            (Some(one), None) | (None, Some(one)) => Some(one),
            (None, None) => None,
        }
    }
}
