//! Writing a commit's tree into a folder outside the repository: the
//! temporary checkout a command check runs in. The repository itself is
//! not touched (no worktree entry, no index), so a run killed half-way
//! leaves nothing behind in it.

use std::path::{Component, Path};

use super::{Error, Repository};

/// What an export wrote, and what it could not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exported {
    pub files: usize,
    /// Submodules (not exported: their commits live in other repositories)
    /// and entries whose names cannot be a path here.
    pub skipped: Vec<String>,
    /// Every file written, with its blob: what the checkout holds before
    /// anything runs in it.
    pub written: Vec<Written>,
    /// The commit's time, given to every file written as its modification
    /// time (as `git archive` does), so a later write shows whatever the
    /// file system's clock resolution.
    pub mtime: std::time::SystemTime,
}

/// One file an export wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// Relative to the folder written to, `/`-separated.
    pub path: String,
    /// The blob id (hex).
    pub blob: String,
    pub link: bool,
}

/// The id git gives `bytes` as a blob (hex): whether a file still holds
/// what a blob holds, without reading the blob.
pub fn blob_id(bytes: &[u8]) -> String {
    git2::Oid::hash_object(git2::ObjectType::Blob, bytes)
        .map(|oid| oid.to_string())
        .unwrap_or_default()
}

/// Why an export failed: the repository, or the folder written to.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error(transparent)]
    Git(#[from] Error),
    #[error("cannot write {path}: {source}")]
    Write {
        path: String,
        source: std::io::Error,
    },
}

impl Repository {
    /// Write every file of `commit`'s tree under `dest` (an existing, empty
    /// folder), with executable bits and symbolic links as committed.
    pub fn export(&self, commit: &str, dest: &Path) -> Result<Exported, ExportError> {
        let read_err = |source: git2::Error| Error::Read {
            commit: commit.to_string(),
            path: String::new(),
            source,
        };
        let head = self.commit(commit)?;
        let tree = head.tree().map_err(read_err)?;
        let seconds = u64::try_from(head.time().seconds()).unwrap_or(0);
        let mtime = std::time::UNIX_EPOCH + std::time::Duration::from_secs(seconds);
        let mut entries = Vec::new();
        tree.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
            let name = String::from_utf8_lossy(entry.name_bytes()).into_owned();
            entries.push((
                format!("{dir}{name}"),
                entry.id(),
                entry.filemode(),
                entry.kind(),
            ));
            git2::TreeWalkResult::Ok
        })
        .map_err(read_err)?;
        let mut out = Exported {
            files: 0,
            skipped: Vec::new(),
            written: Vec::new(),
            mtime,
        };
        let mut links = Vec::new();
        for (path, id, mode, kind) in entries {
            if kind == Some(git2::ObjectType::Tree) {
                continue;
            }
            if kind == Some(git2::ObjectType::Commit) || !safe(&path) {
                out.skipped.push(path);
                continue;
            }
            let blob = self.repo.find_blob(id).map_err(|source| Error::Read {
                commit: commit.to_string(),
                path: path.clone(),
                source,
            })?;
            if mode == 0o120000 {
                // Links last, so no file is ever written through one.
                links.push((path, id, blob.content().to_vec()));
                continue;
            }
            let target = dest.join(&path);
            let write = |source| ExportError::Write {
                path: path.clone(),
                source,
            };
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent).map_err(write)?;
            }
            std::fs::write(&target, blob.content()).map_err(write)?;
            #[cfg(unix)]
            if mode == 0o100755 {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o755))
                    .map_err(write)?;
            }
            std::fs::File::options()
                .write(true)
                .open(&target)
                .and_then(|file| file.set_modified(mtime))
                .map_err(write)?;
            out.files += 1;
            out.written.push(Written {
                path,
                blob: id.to_string(),
                link: false,
            });
        }
        for (path, id, link) in links {
            let target = dest.join(&path);
            let write = |source| ExportError::Write {
                path: path.clone(),
                source,
            };
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent).map_err(write)?;
            }
            #[cfg(unix)]
            {
                use std::os::unix::ffi::OsStrExt;
                std::os::unix::fs::symlink(std::ffi::OsStr::from_bytes(&link), &target)
                    .map_err(write)?;
            }
            #[cfg(not(unix))]
            std::fs::write(&target, &link).map_err(write)?;
            out.files += 1;
            out.written.push(Written {
                path,
                blob: id.to_string(),
                link: true,
            });
        }
        Ok(out)
    }
}

/// A tree path that stays inside the folder: no `..`, no absolute part, no
/// `.git` folder.
fn safe(path: &str) -> bool {
    Path::new(path).components().all(|c| match c {
        Component::Normal(name) => !name.eq_ignore_ascii_case(".git"),
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsafe_paths_are_refused() {
        assert!(safe("src/main.rs"));
        assert!(!safe("../x"));
        assert!(!safe("/etc/passwd"));
        assert!(!safe("a/.git/config"));
    }

    #[test]
    fn a_commit_is_written_with_modes_and_links() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        let git = |args: &[&str]| {
            let status = std::process::Command::new("git")
                .args(args)
                .current_dir(&root)
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .output()
                .unwrap();
            assert!(status.status.success(), "{status:?}");
        };
        std::fs::create_dir_all(root.join("bin")).unwrap();
        std::fs::write(root.join("bin/run.sh"), "#!/bin/sh\necho hi\n").unwrap();
        std::fs::write(root.join("README.md"), "hello\n").unwrap();
        git(&["init", "-q", "-b", "main"]);
        git(&["config", "user.email", "t@example.com"]);
        git(&["config", "user.name", "t"]);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(
                root.join("bin/run.sh"),
                std::fs::Permissions::from_mode(0o755),
            )
            .unwrap();
            std::os::unix::fs::symlink("README.md", root.join("link.md")).unwrap();
        }
        git(&["add", "-A"]);
        git(&["commit", "-q", "-m", "one"]);
        std::fs::write(root.join("uncommitted.txt"), "not in the tree").unwrap();

        let repo = Repository::open(&root).unwrap();
        let out = dir.path().join("out");
        std::fs::create_dir(&out).unwrap();
        let exported = repo.export("main", &out).unwrap();
        assert!(exported.skipped.is_empty());
        assert_eq!(
            std::fs::read_to_string(out.join("bin/run.sh")).unwrap(),
            "#!/bin/sh\necho hi\n"
        );
        assert!(!out.join("uncommitted.txt").exists());
        assert!(!out.join(".git").exists());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(out.join("bin/run.sh"))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o111, 0o111);
            assert_eq!(
                std::fs::read_link(out.join("link.md")).unwrap(),
                Path::new("README.md")
            );
            assert_eq!(exported.files, 3);
        }
    }
}
