//! The fix queue on disk: `.speed/fixes/`, one file per task or defect
//! (`features/<feature>/<task>.json`, `tasks/<task>.json` for a project
//! without features, `defects/<name>.json`), each `{"fixes": [...]}`.
//! Written through `fsx` (atomic, confined to `.speed/`) after the secrets
//! net, under one lock so a review and `speed fix` never write over each
//! other. A file that cannot be read is never written over: its fixes
//! would be lost.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::fsx;

use super::Error;
use super::model::Fix;

pub const FIXES_DIR: &str = ".speed/fixes";

/// Larger fix files are refused (a queue of thousands of fixes is a few
/// megabytes).
const MAX_FILE_BYTES: u64 = 16 << 20;

/// Updating the queue takes milliseconds; waiting longer means something
/// is stuck.
const LOCK_WAIT: Duration = Duration::from_secs(10);

/// Whose fixes a file holds.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Owner {
    Task { id: String, feature: Option<String> },
    Defect { name: String },
}

impl Owner {
    /// The file, relative to the repository root.
    pub fn file(&self) -> Result<PathBuf, Error> {
        let part = |name: &str| -> Result<String, Error> {
            let ok = !name.is_empty()
                && name != "."
                && name != ".."
                && !name.contains(['/', '\\', '\0'])
                && name.len() <= 200;
            if ok {
                Ok(name.to_string())
            } else {
                Err(Error::Input {
                    path: PathBuf::from(FIXES_DIR),
                    message: format!("{name:?} cannot name a file of the fix queue"),
                })
            }
        };
        let dir = Path::new(FIXES_DIR);
        Ok(match self {
            Owner::Task {
                id,
                feature: Some(feature),
            } => dir
                .join("features")
                .join(part(feature)?)
                .join(format!("{}.json", part(id)?)),
            Owner::Task { id, feature: None } => {
                dir.join("tasks").join(format!("{}.json", part(id)?))
            }
            Owner::Defect { name } => dir.join("defects").join(format!("{}.json", part(name)?)),
        })
    }

    /// "task 3 (feature catalog)": what the ids are hashed with.
    pub fn key(&self) -> String {
        match self {
            Owner::Task {
                id,
                feature: Some(feature),
            } => format!("task {id} (feature {feature})"),
            Owner::Task { id, feature: None } => format!("task {id}"),
            Owner::Defect { name } => format!("defect {name}"),
        }
    }
}

/// One file of the queue.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Queue {
    pub fixes: Vec<Fix>,
}

/// The queue of one repository.
pub struct Store {
    root: PathBuf,
}

impl Store {
    pub fn open(root: &Path) -> Store {
        Store {
            root: root.to_path_buf(),
        }
    }

    /// Held while the queue is read and written back. The queue (and its
    /// lock) is this machine's record of what to fix: ignored by git.
    pub fn lock(&self) -> Result<fsx::Lock, Error> {
        fsx::ignore_in_git(
            &self.area(),
            &self.root.join(FIXES_DIR),
            "the fix queue of this machine's reviews and its lock; keep them out of git.",
        )?;
        let path = self.root.join(FIXES_DIR).join(".lock");
        Ok(fsx::Lock::acquire(&self.area(), &path, LOCK_WAIT)?)
    }

    fn area(&self) -> PathBuf {
        self.root.join(".speed")
    }

    /// The fixes of `owner` (none yet: an empty queue).
    pub fn load(&self, owner: &Owner) -> Result<Queue, Error> {
        let path = self.root.join(owner.file()?);
        match read(&path)? {
            Some(queue) => Ok(queue),
            None => Ok(Queue::default()),
        }
    }

    /// Write `queue` as `owner`'s file.
    pub fn save(&self, owner: &Owner, queue: &Queue) -> Result<(), Error> {
        let relative = owner.file()?;
        let mut value = serde_json::to_value(queue).map_err(|e| Error::Input {
            path: relative.clone(),
            message: e.to_string(),
        })?;
        // The safety net: nothing written holds a secret.
        crate::secrets::net::json(&mut value, "the fix queue");
        let text = serde_json::to_string_pretty(&value).unwrap_or_default() + "\n";
        let path = self.root.join(&relative);
        if let Some(dir) = path.parent() {
            fsx::create_dir_all(&self.area(), dir)?;
        }
        Ok(fsx::write_atomic(&self.area(), &path, text.as_bytes())?)
    }

    /// Every fix of the repository with the file it is in, and the files
    /// that could not be read.
    pub fn all(&self) -> (Vec<(Owner, Fix)>, Vec<Error>) {
        let mut fixes = Vec::new();
        let mut problems = Vec::new();
        let base = self.root.join(FIXES_DIR);
        for (owner, path) in files(&base) {
            match read(&path) {
                Ok(Some(queue)) => {
                    fixes.extend(queue.fixes.into_iter().map(|f| (owner.clone(), f)))
                }
                Ok(None) => {}
                Err(e) => problems.push(e),
            }
        }
        (fixes, problems)
    }

    /// The fix with this id, or the one whose id starts with it (at least
    /// four characters, like a short commit id).
    pub fn find(&self, id: &str) -> Result<(Owner, Fix), Error> {
        let id = id.trim().to_ascii_lowercase();
        let (all, problems) = self.all();
        let matching: Vec<(Owner, Fix)> = if let Some(exact) = all.iter().find(|(_, f)| f.id == id)
        {
            vec![exact.clone()]
        } else if id.len() >= 4 {
            all.into_iter()
                .filter(|(_, f)| f.id.starts_with(&id))
                .collect()
        } else {
            Vec::new()
        };
        match matching.len() {
            1 => Ok(matching.into_iter().next().expect("one match")),
            0 => {
                if let Some(problem) = problems.into_iter().next() {
                    return Err(Error::Input {
                        path: PathBuf::from(FIXES_DIR),
                        message: format!("no fix {id} among those that could be read ({problem})"),
                    });
                }
                Err(Error::NoSuchFix { id })
            }
            _ => Err(Error::Ambiguous {
                id,
                ids: matching.iter().map(|(_, f)| f.id.clone()).collect(),
            }),
        }
    }
}

/// The queue files under `base`: `features/<f>/<id>.json`,
/// `tasks/<id>.json`, `defects/<name>.json`.
fn files(base: &Path) -> Vec<(Owner, PathBuf)> {
    let mut out = Vec::new();
    let json_files = |dir: &Path| -> Vec<(String, PathBuf)> {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        let mut found: Vec<(String, PathBuf)> = entries
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .filter_map(|e| {
                let name = e.file_name().to_str()?.to_string();
                let stem = name.strip_suffix(".json")?;
                (!stem.starts_with('.')).then(|| (stem.to_string(), e.path()))
            })
            .collect();
        found.sort();
        found
    };
    let dirs = |dir: &Path| -> Vec<(String, PathBuf)> {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        let mut found: Vec<(String, PathBuf)> = entries
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter_map(|e| Some((e.file_name().to_str()?.to_string(), e.path())))
            .collect();
        found.sort();
        found
    };
    for (feature, dir) in dirs(&base.join("features")) {
        for (id, path) in json_files(&dir) {
            out.push((
                Owner::Task {
                    id,
                    feature: Some(feature.clone()),
                },
                path,
            ));
        }
    }
    for (id, path) in json_files(&base.join("tasks")) {
        out.push((Owner::Task { id, feature: None }, path));
    }
    for (name, path) in json_files(&base.join("defects")) {
        out.push((Owner::Defect { name }, path));
    }
    out
}

/// A queue file, None when there is none.
fn read(path: &Path) -> Result<Option<Queue>, Error> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(Error::Read {
                path: path.to_path_buf(),
                source: e,
            });
        }
    };
    let bad = |message: String| Error::Input {
        path: path.to_path_buf(),
        message,
    };
    if !meta.is_file() {
        return Err(bad("not a regular file".to_string()));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(bad(format!("larger than {} MiB", MAX_FILE_BYTES >> 20)));
    }
    let text = std::fs::read_to_string(path).map_err(|e| Error::Read {
        path: path.to_path_buf(),
        source: e,
    })?;
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| bad(format!("{}:{}: {e}", e.line(), e.column())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owners_name_their_files_and_refuse_paths() {
        let task = Owner::Task {
            id: "3".into(),
            feature: Some("catalog".into()),
        };
        assert_eq!(
            task.file().unwrap(),
            Path::new(".speed/fixes/features/catalog/3.json")
        );
        let bare = Owner::Task {
            id: "3".into(),
            feature: None,
        };
        assert_eq!(bare.file().unwrap(), Path::new(".speed/fixes/tasks/3.json"));
        for bad in ["..", "a/b", "", "x\0"] {
            let owner = Owner::Defect { name: bad.into() };
            assert!(owner.file().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_broken_file_is_named_and_never_lost() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path());
        let owner = Owner::Task {
            id: "1".into(),
            feature: None,
        };
        assert!(store.load(&owner).unwrap().fixes.is_empty());
        let path = dir.path().join(".speed/fixes/tasks/1.json");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "{\"fixes\": [").unwrap();
        let err = store.load(&owner).unwrap_err().to_string();
        assert!(err.contains("tasks/1.json"), "{err}");
        let (all, problems) = store.all();
        assert!(all.is_empty());
        assert_eq!(problems.len(), 1);
    }
}
