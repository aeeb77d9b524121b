//! How much of a diff a review showed the model, over all its prompts:
//! files and changed lines seen and not seen, each file left out with why.
//! Computed from what was still to show after the last prompt, so the
//! terminal and the report can always say it, and the decision can refuse
//! to approve code nobody saw.

use serde::{Deserialize, Serialize};

use crate::git::diff::{Diff, Line, LineKind};

use super::files::classify;
use super::{At, DiffPart};

/// What of the diff the model saw.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Coverage {
    pub files_total: usize,
    /// Files whose changes the model saw, whole or in part.
    pub files_shown: usize,
    /// Every file whose changes the model did not see whole, and why: by
    /// name only (lockfiles, generated, vendored, binary), or left out for
    /// budget, whole or some of its hunks.
    pub files_omitted: Vec<OmittedFile>,
    /// Changed lines (added and removed) in all, and those the model saw.
    pub lines_total: usize,
    pub lines_shown: usize,
    /// Files shown by name only, by design: lockfiles, generated,
    /// vendored and binary files.
    pub files_by_name: usize,
    /// Files and changed lines with content to review that were left out
    /// for budget: unseen code, which no review may approve.
    pub files_unseen: usize,
    pub lines_unseen: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OmittedFile {
    pub path: String,
    pub reason: String,
}

impl Coverage {
    /// "3 of 9 changed files (410 of 980 changed lines)": the unseen code,
    /// for the decision; None when the model saw every change it could.
    pub fn unseen(&self) -> Option<String> {
        if self.files_unseen == 0 {
            return None;
        }
        Some(format!(
            "{} of {} changed files ({} of {} changed lines)",
            self.files_unseen,
            self.files_total - self.files_by_name,
            self.lines_unseen,
            self.lines_shown + self.lines_unseen
        ))
    }
}

/// Coverage of `diff` when `rest` is what was still to show after the last
/// prompt (None: nothing was).
pub fn coverage(diff: &Diff, rest: Option<&DiffPart>) -> Coverage {
    let mut c = Coverage {
        files_total: diff.files.len(),
        lines_total: diff.files.iter().map(|f| f.additions + f.deletions).sum(),
        ..Coverage::default()
    };
    for (i, file) in diff.files.iter().enumerate() {
        let class = classify(file);
        let changed = file.additions + file.deletions;
        if class.name_only() {
            c.files_by_name += 1;
            c.files_omitted.push(OmittedFile {
                path: file.path.clone(),
                reason: format!("{}: content not shown", class.label()),
            });
            continue;
        }
        match rest.and_then(|r| r.from.get(i).copied().flatten()) {
            None => {
                c.files_shown += 1;
                c.lines_shown += changed;
            }
            Some(At { hunk: 0, line: 0 }) => {
                c.files_unseen += 1;
                c.lines_unseen += changed;
                c.files_omitted.push(OmittedFile {
                    path: file.path.clone(),
                    reason: "omitted for budget".to_string(),
                });
            }
            Some(from) => {
                let later: usize = file
                    .hunks
                    .iter()
                    .skip(from.hunk + 1)
                    .map(|h| changed_lines(&h.lines))
                    .sum();
                let unseen = later
                    + file.hunks.get(from.hunk).map_or(0, |h| {
                        changed_lines(&h.lines[from.line.min(h.lines.len())..])
                    });
                c.files_shown += 1;
                c.files_unseen += 1;
                c.lines_shown += changed.saturating_sub(unseen);
                c.lines_unseen += unseen;
                c.files_omitted.push(OmittedFile {
                    path: file.path.clone(),
                    reason: format!(
                        "some hunks omitted for budget: {} of {}",
                        file.hunks.len().saturating_sub(from.hunk),
                        file.hunks.len()
                    ),
                });
            }
        }
    }
    c
}

fn changed_lines(lines: &[Line]) -> usize {
    lines.iter().filter(|l| l.kind != LineKind::Context).count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::diff::{FileDiff, FileStatus, Hunk};

    fn file(path: &str, hunks: usize) -> FileDiff {
        FileDiff {
            path: path.into(),
            old_path: None,
            similarity: None,
            status: FileStatus::Modified,
            binary: false,
            old_mode: None,
            new_mode: None,
            old_blob: None,
            new_blob: None,
            hunks: (0..hunks)
                .map(|h| Hunk {
                    old_start: 1 + 10 * h as u32,
                    old_lines: 0,
                    new_start: 1 + 10 * h as u32,
                    new_lines: 2,
                    context: String::new(),
                    lines: (0..2)
                        .map(|n| Line {
                            kind: LineKind::Added,
                            old_lineno: None,
                            new_lineno: Some(1 + 10 * h as u32 + n),
                            text: "x".into(),
                            no_newline: false,
                        })
                        .collect(),
                })
                .collect(),
            additions: 2 * hunks,
            deletions: 0,
            not_utf8: false,
        }
    }

    fn diff() -> Diff {
        Diff {
            base_commit: String::new(),
            head_commit: String::new(),
            sha256: String::new(),
            files: vec![
                file("src/a.rs", 3),
                file("src/b.rs", 1),
                file("Cargo.lock", 1),
            ],
        }
    }

    #[test]
    fn everything_shown_but_name_only_files() {
        let c = coverage(&diff(), None);
        assert_eq!((c.files_total, c.files_shown, c.files_unseen), (3, 2, 0));
        assert_eq!((c.lines_total, c.lines_shown, c.lines_unseen), (10, 8, 0));
        assert_eq!(
            c.files_omitted,
            [OmittedFile {
                path: "Cargo.lock".into(),
                reason: "lockfile: content not shown".into()
            }]
        );
        assert_eq!(c.unseen(), None);
    }

    #[test]
    fn what_was_left_after_the_last_part_is_unseen() {
        let rest = DiffPart {
            number: 3,
            from: vec![Some(At::hunk(1)), Some(At::hunk(0)), None],
        };
        let c = coverage(&diff(), Some(&rest));
        assert_eq!((c.files_shown, c.files_unseen), (1, 2));
        assert_eq!((c.lines_shown, c.lines_unseen), (2, 6));
        let reasons: Vec<&str> = c.files_omitted.iter().map(|o| o.reason.as_str()).collect();
        assert_eq!(
            reasons,
            [
                "some hunks omitted for budget: 2 of 3",
                "omitted for budget",
                "lockfile: content not shown"
            ]
        );
        assert_eq!(
            c.unseen().as_deref(),
            Some("2 of 2 changed files (6 of 8 changed lines)")
        );
    }

    #[test]
    fn a_hunk_left_in_the_middle_counts_its_unseen_lines() {
        let rest = DiffPart {
            number: 2,
            from: vec![Some(At { hunk: 2, line: 1 }), None, None],
        };
        let c = coverage(&diff(), Some(&rest));
        assert_eq!((c.files_shown, c.files_unseen), (2, 1));
        assert_eq!((c.lines_shown, c.lines_unseen), (7, 1));
        assert_eq!(
            c.files_omitted[0].reason,
            "some hunks omitted for budget: 1 of 3"
        );
    }
}
