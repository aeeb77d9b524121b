//! How much of a diff a review showed the model, over all its prompts:
//! files and changed lines seen and not seen, each file left out with why.
//! Computed from what was still to show after the last prompt, so the
//! terminal and the report can always say it, and the decision can refuse
//! to approve code nobody saw.

use serde::{Deserialize, Serialize};

use crate::git::diff::{Diff, Line, LineKind};
use crate::numbers::{count, thousands};

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
    /// Files with content to review (every changed file but those shown by
    /// name only).
    pub fn files_with_content(&self) -> usize {
        self.files_total.saturating_sub(self.files_by_name)
    }

    /// Files the model saw some of the changes of but not all: counted in
    /// `files_shown` and in `files_unseen` both.
    pub fn files_partly(&self) -> usize {
        (self.files_shown + self.files_unseen).saturating_sub(self.files_with_content())
    }

    /// Files whose every change the model saw.
    pub fn files_whole(&self) -> usize {
        self.files_shown.saturating_sub(self.files_partly())
    }

    /// Files the model saw none of the changes of (left out for budget).
    pub fn files_left_out(&self) -> usize {
        self.files_unseen.saturating_sub(self.files_partly())
    }

    /// "117 of 127 changed files and part of 6 others (2,278 of 3,033
    /// changed lines)": the unseen code, for the decision, in counts that
    /// add up (a file shown in part is not also counted as left out); None
    /// when the model saw every change it could.
    pub fn unseen(&self) -> Option<String> {
        if self.files_unseen == 0 {
            return None;
        }
        let partly = self.files_partly();
        let left_out = self.files_left_out();
        let files = self.files_with_content();
        let lines = format!(
            "{} of {} changed lines",
            thousands(self.lines_unseen as u64),
            thousands((self.lines_shown + self.lines_unseen) as u64)
        );
        Some(match (left_out, partly) {
            (_, 0) => format!("{left_out} of {files} changed files ({lines})"),
            (0, _) => format!(
                "part of {partly} of {files} changed file{} ({lines})",
                if files == 1 { "" } else { "s" }
            ),
            _ => format!(
                "{left_out} of {files} changed files and part of {partly} other{} ({lines})",
                if partly == 1 { "" } else { "s" }
            ),
        })
    }

    /// The files a prompt showed, in counts that add up: "127 changed
    /// files" when every one was shown whole, else "4 of 127 changed files
    /// whole, 6 in part, 117 left out for budget" (a count of none is not
    /// said).
    pub fn files_words(&self) -> String {
        let total = self.files_with_content();
        let (whole, partly, left_out) = (
            self.files_whole(),
            self.files_partly(),
            self.files_left_out(),
        );
        if partly == 0 && left_out == 0 {
            return count(total, "changed file");
        }
        let mut out = format!(
            "{} of {} whole",
            thousands(whole as u64),
            count(total, "changed file")
        );
        if partly > 0 {
            out.push_str(&format!(", {} in part", thousands(partly as u64)));
        }
        if left_out > 0 {
            out.push_str(&format!(
                ", {} left out for budget",
                thousands(left_out as u64)
            ));
        }
        out
    }

    /// "; 2 files by name only (lockfile, generated, vendored or binary)",
    /// or nothing.
    pub fn by_name_words(&self) -> String {
        if self.files_by_name == 0 {
            return String::new();
        }
        format!(
            "; {} by name only (lockfile, generated, vendored or binary)",
            count(self.files_by_name, "file")
        )
    }

    /// The files left out whole and those shown in part, each with why.
    pub fn omitted_for_budget(&self) -> (Vec<&OmittedFile>, Vec<&OmittedFile>) {
        let budget: Vec<&OmittedFile> =
            self.files_omitted.iter().filter(|f| !f.by_name()).collect();
        budget.into_iter().partition(|f| !f.partly())
    }

    /// The files not shown whole in the groups every format lists, each
    /// under its title: left out for budget, shown in part, shown by name
    /// only. Empty groups are left out.
    pub fn omitted_groups(&self) -> Vec<(&'static str, Vec<&OmittedFile>)> {
        let (left_out, partly) = self.omitted_for_budget();
        let by_name = self.files_omitted.iter().filter(|f| f.by_name()).collect();
        [
            ("Left out for budget", left_out),
            ("Shown in part", partly),
            ("Shown by name only", by_name),
        ]
        .into_iter()
        .filter(|(_, list)| !list.is_empty())
        .collect()
    }
}

impl OmittedFile {
    /// Shown by name only, by design (lockfile, generated, vendored,
    /// binary).
    pub fn by_name(&self) -> bool {
        self.reason.ends_with(NAME_ONLY)
    }

    /// Shown in part: some of its hunks were left out.
    pub fn partly(&self) -> bool {
        self.reason.starts_with(SOME_HUNKS)
    }
}

/// The end of the reason of a file shown by name only.
const NAME_ONLY: &str = ": content not shown";
/// The start of the reason of a file shown in part.
const SOME_HUNKS: &str = "some hunks omitted for budget";

/// One file a prompt showed the changes of: all of them, or some hunks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShownFile {
    pub path: String,
    /// The prompt showed every change of the file.
    pub whole: bool,
    /// The 1-based first and last hunk it showed (some of a hunk too
    /// large for one prompt counts), of `hunks`.
    pub first_hunk: usize,
    pub last_hunk: usize,
    pub hunks: usize,
}

impl ShownFile {
    /// "whole", "hunks 2–4 of 6", "hunk 3 of 6".
    pub fn extent(&self) -> String {
        match (self.whole, self.first_hunk == self.last_hunk) {
            (true, _) => "whole".to_string(),
            (false, true) => format!("hunk {} of {}", self.first_hunk, self.hunks),
            (false, false) => format!(
                "hunks {}–{} of {}",
                self.first_hunk, self.last_hunk, self.hunks
            ),
        }
    }
}

/// The files each prompt of a review showed, in prompt order, from what
/// was still to show after each (`rests`: each prompt's `rest`, None when
/// nothing was left): part 1 starts from the whole diff. Files shown by
/// name only are in none.
pub fn shown_by_part<'a>(
    diff: &Diff,
    rests: impl IntoIterator<Item = Option<&'a DiffPart>>,
) -> Vec<Vec<ShownFile>> {
    let mut before = DiffPart::first(diff);
    let mut out = Vec::new();
    for rest in rests {
        out.push(shown(diff, &before, rest));
        before = rest.cloned().unwrap_or_else(|| DiffPart {
            number: before.number + 1,
            from: vec![None; diff.files.len()],
        });
    }
    out
}

/// The files one prompt showed: those it started with something to show
/// of (`before`) and ended with less (`after`).
fn shown(diff: &Diff, before: &DiffPart, after: Option<&DiffPart>) -> Vec<ShownFile> {
    let mut out = Vec::new();
    for (i, file) in diff.files.iter().enumerate() {
        if classify(file).name_only() {
            continue;
        }
        let Some(from) = before.from.get(i).copied().flatten() else {
            continue;
        };
        let to = after.and_then(|a| a.from.get(i).copied().flatten());
        if to == Some(from) {
            continue;
        }
        let hunks = file.hunks.len();
        let last_hunk = match to {
            None => hunks,
            Some(At { hunk, line: 0 }) => hunk,
            Some(At { hunk, .. }) => hunk + 1,
        };
        out.push(ShownFile {
            path: file.path.clone(),
            whole: from == At::default() && to.is_none(),
            first_hunk: from.hunk + 1,
            last_hunk: last_hunk.max(from.hunk + 1).min(hunks.max(1)),
            hunks,
        });
    }
    out
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
                reason: format!("{}{NAME_ONLY}", class.label()),
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
                        "{SOME_HUNKS}: {} of {}",
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
        assert_eq!(
            (c.files_whole(), c.files_partly(), c.files_left_out()),
            (2, 0, 0)
        );
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
            Some("1 of 2 changed files and part of 1 other (6 of 8 changed lines)")
        );
        // Whole, in part and left out add up to the files with content.
        assert_eq!(
            (c.files_whole(), c.files_partly(), c.files_left_out()),
            (0, 1, 1)
        );
        let (left_out, partly) = c.omitted_for_budget();
        assert_eq!(left_out[0].path, "src/b.rs");
        assert_eq!(partly[0].path, "src/a.rs");
    }

    #[test]
    fn each_part_names_the_files_it_showed_and_which_hunks() {
        let diff = diff();
        // Part 1 shows hunk 1 of a.rs and half of its hunk 2; part 2 the
        // rest of a.rs and all of b.rs; the lockfile is in neither.
        let after_1 = DiffPart {
            number: 2,
            from: vec![Some(At { hunk: 1, line: 1 }), Some(At::hunk(0)), None],
        };
        let parts = shown_by_part(&diff, [Some(&after_1), None]);
        let named: Vec<Vec<String>> = parts
            .iter()
            .map(|p| {
                p.iter()
                    .map(|f| format!("{} {}", f.path, f.extent()))
                    .collect()
            })
            .collect();
        assert_eq!(
            named,
            [
                vec!["src/a.rs hunks 1–2 of 3".to_string()],
                vec![
                    "src/a.rs hunks 2–3 of 3".to_string(),
                    "src/b.rs whole".to_string()
                ]
            ]
        );
        // One prompt showing everything shows every file whole.
        let one = shown_by_part(&diff, [None]);
        assert!(one[0].iter().all(|f| f.whole));
        assert_eq!(one[0].len(), 2);
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
