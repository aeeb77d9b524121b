//! The size of a fix, counted by speed: changed lines (added plus removed)
//! and changed files, against `defect.max_lines` and `defect.max_files`. A
//! fix larger than either is large, and a large fix that a review approves
//! goes to the guardian, which is asked whether the fix stays a fix.
//!
//! Files no person wrote (lockfiles, speed's own `.speed/`) are not counted,
//! but the raw figures are kept beside the counted ones so a reader sees
//! both.

use serde::Serialize;

use crate::git::Diff;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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

/// Measures `diff`; `uncounted` says which paths no person wrote.
pub fn measure(
    diff: &Diff,
    max_lines: usize,
    max_files: usize,
    uncounted: &dyn Fn(&str) -> bool,
) -> Size {
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
    use crate::git::{FileDiff, FileStatus};

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
        }
    }

    fn lockfile(path: &str) -> bool {
        path.ends_with(".lock") || path.starts_with(".speed/")
    }

    fn diff(files: Vec<FileDiff>) -> Diff {
        Diff {
            base_commit: "a".into(),
            head_commit: "b".into(),
            files,
            sha256: String::new(),
        }
    }

    #[test]
    fn limits_are_exceeded_not_reached() {
        let at_limit = diff(vec![
            file("a.rs", 60, 40),
            file("b.rs", 0, 0),
            file("c.rs", 0, 0),
        ]);
        let s = measure(&at_limit, 100, 3, &lockfile);
        assert_eq!((s.lines, s.files, s.large), (100, 3, false));
        let over = diff(vec![file("a.rs", 61, 40)]);
        assert!(measure(&over, 100, 3, &lockfile).large);
        let many = diff((0..4).map(|i| file(&format!("f{i}.rs"), 1, 0)).collect());
        assert!(measure(&many, 100, 3, &lockfile).large);
    }

    /// The orchestrator's count read only the last digit of a number: 140
    /// changed lines counted as 4 + 0 and never reached the guardian.
    #[test]
    fn every_digit_counts() {
        let s = measure(&diff(vec![file("a.rs", 134, 6)]), 100, 3, &lockfile);
        assert_eq!(s.lines, 140);
        assert!(s.large);
        assert_eq!(
            s.describe(),
            "140 changed lines in 1 file (limits: 100 lines, 3 files)"
        );
    }

    #[test]
    fn lockfiles_are_reported_but_not_counted() {
        let s = measure(
            &diff(vec![
                file("src/a.rs", 10, 2),
                file("Cargo.lock", 900, 300),
                file(".speed/defects/x/state.json", 1, 1),
            ]),
            100,
            3,
            &lockfile,
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
