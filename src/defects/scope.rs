//! The scope of a fix: every path the diff changes, both sides of a rename,
//! that the triage's `affected_files` does not list and no exemption covers.
//! speed establishes this itself; the model's own `scope_violations` are
//! reported beside it, never instead of it.

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use serde::{Deserialize, Serialize};

use crate::checks::measure;
use crate::git::Diff;
use crate::tasks::Scope;

use super::Error;

/// Paths that may change in any fix (`defect.exempt`, plus `.speed/`, which
/// is always exempt). A glob with no `/` matches a file name in any folder
/// (`*.lock`, `package.json`), as in `.gitignore`; one with a `/` matches
/// the path from the repository root (`tests/**`, `**/test_*.py`). `*`
/// stays within a folder, `**` crosses folders.
#[derive(Debug, Clone)]
pub struct Exempt {
    /// Matched against the whole path.
    paths: GlobSet,
    /// Matched against the file name.
    names: GlobSet,
}

impl Exempt {
    pub fn new(globs: &[String]) -> Result<Exempt, Error> {
        let mut paths = GlobSetBuilder::new();
        let mut names = GlobSetBuilder::new();
        for raw in globs {
            let glob = raw.trim();
            if glob.is_empty() {
                continue;
            }
            let anchored = glob.trim_start_matches('/');
            // A folder exempts everything below it.
            let pattern = match anchored.strip_suffix('/') {
                Some(dir) => format!("{dir}/**"),
                None => anchored.to_string(),
            };
            let built = GlobBuilder::new(&pattern)
                .literal_separator(true)
                .build()
                .map_err(|e| Error::BadGlob {
                    glob: raw.clone(),
                    message: e.kind().to_string(),
                })?;
            if pattern.contains('/') {
                paths.add(built);
            } else {
                names.add(built);
            }
        }
        let build = |b: GlobSetBuilder| {
            b.build().map_err(|e| Error::BadGlob {
                glob: globs.join(", "),
                message: e.to_string(),
            })
        };
        Ok(Exempt {
            paths: build(paths)?,
            names: build(names)?,
        })
    }

    pub fn covers(&self, path: &str) -> bool {
        let path = path.trim_start_matches("./");
        if path == ".speed" || path.starts_with(".speed/") {
            return true;
        }
        let name = path.rsplit('/').next().unwrap_or(path);
        self.paths.is_match(path) || self.names.is_match(name)
    }
}

/// One path the fix changes outside `affected_files`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Violation {
    pub file: String,
    /// `changed`, `added`, `deleted`, `renamed away` (the old side of a
    /// rename) or `renamed into place` (its new side).
    #[serde(deserialize_with = "change_word")]
    pub change: Word,
    pub description: String,
}

/// A `&'static str` by another name: serde borrows a field spelled `&str`
/// from its input, which a report read back from a file cannot lend.
type Word = &'static str;

fn change_word<'de, D: serde::Deserializer<'de>>(d: D) -> Result<&'static str, D::Error> {
    const WORDS: &[&str] = &[
        "changed",
        "added",
        "deleted",
        "renamed away",
        "renamed into place",
    ];
    super::known_word(d, WORDS)
}

/// Every changed path outside `affected_files` and not exempt, in diff
/// order, each once; both sides of a rename (see `checks::measure::outside`).
pub fn violations(diff: &Diff, affected_files: &[String], exempt: &Exempt) -> Vec<Violation> {
    let affected = Scope {
        modify: affected_files.to_vec(),
        ..Scope::default()
    };
    let covered = |path: &str| affected.declares(path) || exempt.covers(path);
    measure::outside(diff, &covered)
        .into_iter()
        .map(|out| {
            let (path, file) = (out.path, out.file);
            let description = match out.change {
                "renamed away" => format!(
                    "{path} is renamed to {}, but the triage's affected_files does not list {path}",
                    file.path
                ),
                "renamed into place" => format!(
                    "{} is renamed to {path}, but the triage's affected_files does not list {path}",
                    file.old_path.as_deref().unwrap_or("?")
                ),
                change => {
                    format!("{path} is {change}, but the triage's affected_files does not list it")
                }
            };
            Violation {
                file: path.to_string(),
                change: out.change,
                description,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::{FileDiff, FileStatus};

    fn file(path: &str, old: Option<&str>, status: FileStatus) -> FileDiff {
        FileDiff {
            path: path.into(),
            old_path: old.map(Into::into),
            status,
            binary: false,
            old_mode: None,
            new_mode: None,
            old_blob: None,
            new_blob: None,
            similarity: None,
            hunks: Vec::new(),
            additions: 1,
            deletions: 1,
            not_utf8: false,
        }
    }

    fn diff(files: Vec<FileDiff>) -> Diff {
        Diff {
            base_commit: "a".into(),
            head_commit: "b".into(),
            files,
            sha256: String::new(),
        }
    }

    fn defaults() -> Exempt {
        let globs: Vec<String> = crate::defects::Limits::default().exempt;
        Exempt::new(&globs).unwrap()
    }

    #[test]
    fn default_exemptions() {
        let e = defaults();
        for p in [
            "tests/search.rs",
            "tests/it/deep/x.rs",
            "api/tests/test_loans.py",
            "test_top.py",
            "Cargo.lock",
            "web/yarn.lock",
            "package.json",
            "web/package.json",
            "requirements.txt",
            ".speed/defects/x/state.json",
            ".speed",
        ] {
            assert!(e.covers(p), "{p}");
        }
        for p in [
            "src/tests.rs",
            "crates/x/tests/a.rs",
            "src/lock.rs",
            "package.json.bak",
            ".speedy/x",
            "catalog/src/search.rs",
        ] {
            assert!(!e.covers(p), "{p}");
        }
        let none = Exempt::new(&[]).unwrap();
        assert!(none.covers(".speed/x") && !none.covers("tests/a.rs"));
        let folder = Exempt::new(&["docs/".to_string()]).unwrap();
        assert!(folder.covers("docs/a/b.md") && !folder.covers("src/docs.rs"));
        assert!(Exempt::new(&["tests/[a".to_string()]).is_err());
    }

    #[test]
    fn out_of_scope_paths_both_sides_of_a_rename() {
        let d = diff(vec![
            file("catalog/src/search.rs", None, FileStatus::Modified),
            file("catalog/src/util.rs", None, FileStatus::Modified),
            file(
                "catalog/src/new.rs",
                Some("catalog/src/old.rs"),
                FileStatus::Renamed,
            ),
            file(
                "catalog/src/moved.rs",
                Some("catalog/src/search2.rs"),
                FileStatus::Renamed,
            ),
            file("tests/search.rs", None, FileStatus::Added),
            file("docs/x.md", None, FileStatus::Deleted),
            file(
                "catalog/src/copy.rs",
                Some("catalog/src/search.rs"),
                FileStatus::Copied,
            ),
        ]);
        let affected = vec![
            "catalog/src/search.rs".to_string(),
            "catalog/src/new.rs".to_string(),
            "catalog/src/search2.rs".to_string(),
        ];
        let v = violations(&d, &affected, &defaults());
        let got: Vec<(&str, &str)> = v.iter().map(|v| (v.file.as_str(), v.change)).collect();
        assert_eq!(
            got,
            [
                ("catalog/src/util.rs", "changed"),
                ("catalog/src/old.rs", "renamed away"),
                ("catalog/src/moved.rs", "renamed into place"),
                ("docs/x.md", "deleted"),
                ("catalog/src/copy.rs", "added"),
            ]
        );
        assert_eq!(
            v[1].description,
            "catalog/src/old.rs is renamed to catalog/src/new.rs, but the triage's affected_files does not list catalog/src/old.rs"
        );
    }

    #[test]
    fn affected_files_may_name_folders_and_globs() {
        let d = diff(vec![
            file("catalog/src/a.rs", None, FileStatus::Modified),
            file("catalog/src/deep/b.rs", None, FileStatus::Modified),
            file("api/x.py", None, FileStatus::Modified),
        ]);
        let affected = vec!["catalog/src/".to_string(), "api/*.py".to_string()];
        assert!(violations(&d, &affected, &defaults()).is_empty());
        assert_eq!(violations(&d, &[], &defaults()).len(), 3);
    }
}
