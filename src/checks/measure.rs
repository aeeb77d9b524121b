//! What the `scope` and `large_diff` checks measure, shared with the
//! defect-fix review (`crate::defects`), which measures the same things
//! against a defect's triage and its own limits:
//!
//! - the changed paths a scope does not cover, both sides of a rename;
//! - the size of a diff: changed lines (added plus removed) and changed
//!   files. Files no person wrote (lockfiles, speed's own `.speed/`) are
//!   not counted, but the raw figures are kept beside the counted ones so a
//!   reader sees both.

use serde::Serialize;

use crate::git::{Diff, FileDiff, FileStatus};
use crate::paths;

/// A changed path a scope does not cover.
#[derive(Debug, Clone)]
pub struct Outside<'d> {
    pub path: &'d str,
    pub file: &'d FileDiff,
    /// `changed`, `added`, `deleted`, `renamed away` (the old side of a
    /// rename) or `renamed into place` (its new side).
    pub change: &'static str,
}

/// Every changed path that `covered` does not cover, in diff order, each
/// once. Both sides of a rename are changed paths: moving a file out of a
/// scope changes it, and so does moving one onto a path the scope names.
/// The source of a copy is not changed.
pub fn outside<'d>(diff: &'d Diff, covered: &dyn Fn(&str) -> bool) -> Vec<Outside<'d>> {
    let mut out: Vec<Outside> = Vec::new();
    for file in &diff.files {
        let old = match file.status {
            FileStatus::Renamed => file.old_path.as_deref(),
            _ => None,
        };
        for (path, is_old) in [(file.path.as_str(), false)]
            .into_iter()
            .chain(old.map(|p| (p, true)))
        {
            if covered(path) || out.iter().any(|o| o.path == path) {
                continue;
            }
            let change = match (file.status, is_old) {
                (FileStatus::Renamed, true) => "renamed away",
                (FileStatus::Renamed, false) => "renamed into place",
                (FileStatus::Added | FileStatus::Copied, _) => "added",
                (FileStatus::Deleted, _) => "deleted",
                _ => "changed",
            };
            out.push(Outside { path, file, change });
        }
    }
    out
}

/// Paths no person wrote: not counted in a diff's size.
pub fn uncounted(path: &str) -> bool {
    paths::is_lockfile(path) || paths::is_speed(path)
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Size {
    /// Added plus removed lines of the counted files.
    pub lines: usize,
    pub files: usize,
    /// The same over every file of the diff.
    pub raw_lines: usize,
    pub raw_files: usize,
    /// The files left out of the count, by path.
    pub not_counted: Vec<String>,
    pub max_lines: usize,
    pub max_files: usize,
    /// More lines than `max_lines` or more files than `max_files`.
    pub large: bool,
}

impl Size {
    /// "140 changed lines in 2 files (limits 100 and 3)", with the raw
    /// figures when they differ.
    pub fn describe(&self) -> String {
        let mut out = format!(
            "{} changed line{} in {} file{} (limits: {} lines, {} files)",
            self.lines,
            plural(self.lines),
            self.files,
            plural(self.files),
            self.max_lines,
            self.max_files
        );
        if !self.not_counted.is_empty() {
            out.push_str(&format!(
                "; {} lines in {} files with lockfiles and .speed/",
                self.raw_lines, self.raw_files
            ));
        }
        out
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Measures `diff` against the limits.
pub fn size(diff: &Diff, max_lines: usize, max_files: usize) -> Size {
    let mut size = Size {
        lines: 0,
        files: 0,
        raw_lines: 0,
        raw_files: 0,
        not_counted: Vec::new(),
        max_lines,
        max_files,
        large: false,
    };
    for file in &diff.files {
        let lines = file.additions + file.deletions;
        size.raw_lines += lines;
        size.raw_files += 1;
        // A rename of a lockfile onto a source path is counted.
        let skipped = uncounted(&file.path) && file.old_path.as_deref().is_none_or(uncounted);
        if skipped {
            size.not_counted.push(file.path.clone());
        } else {
            size.lines += lines;
            size.files += 1;
        }
    }
    size.large = size.lines > max_lines || size.files > max_files;
    size
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, additions: usize, deletions: usize) -> FileDiff {
        FileDiff {
            path: path.into(),
            old_path: None,
            status: FileStatus::Modified,
            binary: false,
            old_mode: None,
            new_mode: None,
            old_blob: None,
            new_blob: None,
            similarity: None,
            hunks: Vec::new(),
            additions,
            deletions,
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

    fn moved(path: &str, old: &str, status: FileStatus) -> FileDiff {
        FileDiff {
            old_path: Some(old.into()),
            status,
            ..file(path, 1, 1)
        }
    }

    #[test]
    fn outside_names_both_sides_of_a_rename_once() {
        let d = diff(vec![
            file("src/a.rs", 1, 0),
            moved("src/in.rs", "src/out.rs", FileStatus::Renamed),
            moved("src/copy.rs", "src/a.rs", FileStatus::Copied),
            file("src/a.rs", 1, 0),
        ]);
        let covered = |p: &str| p == "src/in.rs";
        let got: Vec<(&str, &str)> = outside(&d, &covered)
            .iter()
            .map(|o| (o.path, o.change))
            .collect();
        assert_eq!(
            got,
            [
                ("src/a.rs", "changed"),
                ("src/out.rs", "renamed away"),
                ("src/copy.rs", "added")
            ]
        );
    }

    #[test]
    fn limits_are_exceeded_not_reached() {
        let at_limit = diff(vec![
            file("a.rs", 60, 40),
            file("b.rs", 0, 0),
            file("c.rs", 0, 0),
        ]);
        let s = size(&at_limit, 100, 3);
        assert_eq!((s.lines, s.files, s.large), (100, 3, false));
        let over = diff(vec![file("a.rs", 61, 40)]);
        assert!(size(&over, 100, 3).large);
        let many = diff((0..4).map(|i| file(&format!("f{i}.rs"), 1, 0)).collect());
        assert!(size(&many, 100, 3).large);
    }

    /// The orchestrator's count read only the last digit of a number: 140
    /// changed lines counted as 4 + 0 and never reached the guardian.
    #[test]
    fn every_digit_counts() {
        let s = size(&diff(vec![file("a.rs", 134, 6)]), 100, 3);
        assert_eq!(s.lines, 140);
        assert!(s.large);
        assert_eq!(
            s.describe(),
            "140 changed lines in 1 file (limits: 100 lines, 3 files)"
        );
    }

    #[test]
    fn lockfiles_are_reported_but_not_counted() {
        let s = size(
            &diff(vec![
                file("src/a.rs", 10, 2),
                file("Cargo.lock", 900, 300),
                file(".speed/defects/x/state.json", 1, 1),
            ]),
            100,
            3,
        );
        assert_eq!(
            (s.lines, s.files, s.raw_lines, s.raw_files),
            (12, 1, 1214, 3)
        );
        assert_eq!(s.not_counted, ["Cargo.lock", ".speed/defects/x/state.json"]);
        assert!(!s.large);
        assert_eq!(
            s.describe(),
            "12 changed lines in 1 file (limits: 100 lines, 3 files); 1214 lines in 3 files with lockfiles and .speed/"
        );
    }
}
