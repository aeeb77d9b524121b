//! What a command check changed in its checkout. A tool that edits what it
//! checks hides what it found: flask's own `[tool.ruff] fix = true` makes
//! `ruff check` fix every fixable problem and report nothing. The checkout
//! is looked at before and after each command: a file it wrote is one whose
//! size or modification time moved (the export gives every file the
//! commit's time, so any write shows) and whose content is no longer the
//! blob's; a file deleted, or a link pointing elsewhere, is changed too.
//! New files (caches, build output, reports) are not edits.
//!
//! What was changed is put back from the blobs before the next command, so
//! each command sees the commit as it is; a path that leads through a link
//! the command made is not written (it could lead out of the checkout).
//! Nothing here touches the repository or its working tree.

use std::path::Path;
use std::time::SystemTime;

use crate::git::{self, Repository, Written};

/// The checkout's files as exported, with what their metadata said then.
pub(super) struct Snapshot {
    files: Vec<Kept>,
}

struct Kept {
    written: Written,
    len: u64,
    modified: Option<SystemTime>,
}

impl Snapshot {
    pub(super) fn take(dir: &Path, written: &[Written]) -> Snapshot {
        let files = written
            .iter()
            .map(|w| {
                let meta = std::fs::symlink_metadata(dir.join(&w.path)).ok();
                Kept {
                    written: w.clone(),
                    len: meta.as_ref().map_or(0, |m| m.len()),
                    modified: meta.and_then(|m| m.modified().ok()),
                }
            })
            .collect();
        Snapshot { files }
    }

    /// The exported files whose content is not what was exported (changed,
    /// deleted, replaced), by path, sorted; `except` (a report the
    /// command's configuration clears before it runs) is not looked at.
    pub(super) fn changed(&self, dir: &Path, except: Option<&Path>) -> Vec<String> {
        let mut changed: Vec<String> = self
            .files
            .iter()
            .filter(|kept| except != Some(dir.join(&kept.written.path).as_path()))
            .filter(|kept| !kept.holds(dir))
            .map(|kept| kept.written.path.clone())
            .collect();
        changed.sort();
        changed
    }

    /// Writes the blobs of `paths` back into the checkout; the paths that
    /// could not be put back, each with why.
    pub(super) fn restore(
        &mut self,
        repo: &Repository,
        dir: &Path,
        paths: &[String],
    ) -> Vec<String> {
        let mut failed = Vec::new();
        for kept in self
            .files
            .iter_mut()
            .filter(|k| paths.contains(&k.written.path))
        {
            match kept.put_back(repo, dir) {
                Ok(()) => {}
                Err(why) => failed.push(format!("{} ({why})", kept.written.path)),
            }
        }
        failed
    }
}

impl Kept {
    /// Whether the file still holds its blob.
    fn holds(&self, dir: &Path) -> bool {
        let path = dir.join(&self.written.path);
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            return false;
        };
        if self.written.link {
            return meta.file_type().is_symlink()
                && std::fs::read_link(&path).is_ok_and(|target| {
                    git::blob_id(target.as_os_str().as_encoded_bytes()) == self.written.blob
                });
        }
        if !meta.is_file() {
            return false;
        }
        if meta.len() == self.len && meta.modified().ok() == self.modified {
            return true;
        }
        // Written to: the same bytes (a formatter that found nothing to
        // change may rewrite a file) are not a change.
        std::fs::read(&path).is_ok_and(|bytes| git::blob_id(&bytes) == self.written.blob)
    }

    fn put_back(&mut self, repo: &Repository, dir: &Path) -> Result<(), String> {
        let path = super::reading::inside(dir, &self.written.path)?;
        let bytes = repo
            .read_blob(&self.written.blob)
            .map_err(|e| e.to_string())?;
        if let Ok(meta) = std::fs::symlink_metadata(&path) {
            let gone = if meta.is_dir() {
                std::fs::remove_dir_all(&path)
            } else {
                std::fs::remove_file(&path)
            };
            gone.map_err(|e| e.to_string())?;
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
        }
        if self.written.link {
            #[cfg(unix)]
            {
                use std::os::unix::ffi::OsStrExt;
                std::os::unix::fs::symlink(std::ffi::OsStr::from_bytes(&bytes), &path)
                    .map_err(|e| e.to_string())?;
            }
            #[cfg(not(unix))]
            std::fs::write(&path, &bytes).map_err(|e| e.to_string())?;
        } else {
            std::fs::write(&path, &bytes).map_err(|e| e.to_string())?;
        }
        let meta = std::fs::symlink_metadata(&path).map_err(|e| e.to_string())?;
        self.len = meta.len();
        self.modified = meta.modified().ok();
        Ok(())
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn written(path: &str, content: &[u8]) -> Written {
        Written {
            path: path.to_string(),
            blob: git::blob_id(content),
            link: false,
        }
    }

    #[test]
    fn a_write_a_deletion_and_a_link_moved_are_changes_a_new_file_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let old = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000);
        let mut all = Vec::new();
        for (path, content) in [("a.py", "x = 1\n"), ("b.py", "y = 2\n"), ("c.py", "z\n")] {
            std::fs::write(root.join(path), content).unwrap();
            std::fs::File::options()
                .write(true)
                .open(root.join(path))
                .unwrap()
                .set_modified(old)
                .unwrap();
            all.push(written(path, content.as_bytes()));
        }
        std::os::unix::fs::symlink("a.py", root.join("link")).unwrap();
        all.push(Written {
            link: true,
            ..written("link", b"a.py")
        });
        let snapshot = Snapshot::take(root, &all);
        assert!(snapshot.changed(root, None).is_empty());

        // Rewritten with the same bytes: no change. Same size, new bytes:
        // a change, whatever the clock's resolution.
        std::fs::write(root.join("a.py"), "x = 1\n").unwrap();
        std::fs::write(root.join("b.py"), "y = 3\n").unwrap();
        std::fs::remove_file(root.join("c.py")).unwrap();
        std::fs::remove_file(root.join("link")).unwrap();
        std::os::unix::fs::symlink("b.py", root.join("link")).unwrap();
        std::fs::write(root.join(".ruff_cache"), "new").unwrap();
        assert_eq!(snapshot.changed(root, None), ["b.py", "c.py", "link"]);
        assert_eq!(
            snapshot.changed(root, Some(&root.join("c.py"))),
            ["b.py", "link"]
        );
    }
}
