//! What the repository's own setup says: the folder git runs hooks from and
//! who the user is. Read-only, like the rest of `git`.

use std::path::PathBuf;

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
