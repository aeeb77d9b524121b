//! What a model saw of the diff, in the words every format shares: the
//! review's over all its parts and the guardian's within its own budget.
//! The counts add up: files seen whole, seen in part and left out for
//! budget make the changed files with content, and the files shown by
//! name only (lockfiles, generated, vendored, binary) are counted apart.

use crate::ledger::Report;
use crate::prompt::{Coverage, OmittedFile};

pub use crate::numbers::count;

/// The files a prompt showed, in counts that add up
/// (`Coverage::files_words`).
pub fn files(c: &Coverage) -> String {
    c.files_words()
}

/// "; 2 files by name only (…)", or nothing.
pub fn by_name(c: &Coverage) -> String {
    c.by_name_words()
}

/// Changed lines seen of those with content.
pub fn lines(c: &Coverage) -> (usize, usize) {
    (c.lines_shown, c.lines_shown + c.lines_unseen)
}

/// What the model saw of the diff, in one sentence, and whether it saw
/// every change: the terminal's coverage line, and what SARIF and JUnit
/// say of it. None when no model saw anything (an offline review, a review
/// that failed before its prompt): its notices say why.
pub fn review(report: &Report) -> Option<(String, bool)> {
    let c = &report.coverage;
    let d = &c.diff;
    if d.files_total == 0 || c.parts == 0 {
        return None;
    }
    // A part that gave no answer: what it was shown nobody reviewed.
    if let Some(unanswered) = report.unanswered() {
        return Some((unanswered, false));
    }
    let (seen, lines) = lines(d);
    let parts = if c.parts > 1 {
        format!(" in {} parts", c.parts)
    } else {
        String::new()
    };
    let by_name = by_name(d);
    let files = files(d);
    let changed_lines = count(lines, "changed line");
    // Incremental: the figures are the interdiff's, and the sentence says
    // the model did not see the whole change.
    if c.incremental && d.files_unseen == 0 {
        return Some((
            format!(
                "The model saw the changes since the last review{parts}, not the whole change: {files}, {changed_lines}{by_name}"
            ),
            true,
        ));
    }
    if d.files_unseen == 0 {
        return Some((
            format!("The model saw the whole diff{parts}: {files}, {changed_lines}{by_name}"),
            true,
        ));
    }
    // Files whole, in part and left out add up to the changed files.
    Some((
        format!(
            "The model saw {} of {} changed lines{parts}: {files}{by_name}",
            crate::numbers::thousands(seen as u64),
            crate::numbers::thousands(lines as u64),
        ),
        false,
    ))
}

/// What the guardian saw, in one sentence, and whether it saw every
/// change (`GuardianOutcome::seen`).
pub fn guardian(report: &Report) -> Option<(String, bool)> {
    report.guardian.seen()
}

/// The files a prompt left out for budget, whole and in part, each with
/// why: the lists a report shows under its coverage sentence.
pub fn left_out(c: &Coverage) -> Vec<&OmittedFile> {
    let (whole, partly) = c.omitted_for_budget();
    whole.into_iter().chain(partly).collect()
}

/// Each part of a review in parts with the files it saw ("`a.rs`
/// (whole), `b.rs` (hunks 1–3 of 6)"), `name` rendering a path; empty for
/// a review in one prompt, or a report of an older speed.
pub fn parts_files(report: &Report, name: &dyn Fn(&str) -> String) -> Vec<(String, String)> {
    if report.parts.len() < 2 || report.parts.iter().all(|p| p.shown.is_empty()) {
        return Vec::new();
    }
    let count = report.parts.len();
    report
        .parts
        .iter()
        .map(|p| {
            let answered = if p.status == "answered" && p.error.is_none() {
                ""
            } else {
                " (no answer: not reviewed)"
            };
            let head = format!(
                "Part {} of {count}{answered}: {}",
                p.index,
                self::count(p.shown.len(), "file")
            );
            let files: Vec<String> = p
                .shown
                .iter()
                .map(|f| format!("{} ({})", name(&f.path), f.extent()))
                .collect();
            (head, files.join(", "))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn coverage(whole: usize, partly: usize, left_out: usize, by_name: usize) -> Coverage {
        Coverage {
            files_total: whole + partly + left_out + by_name,
            files_shown: whole + partly,
            files_unseen: partly + left_out,
            files_by_name: by_name,
            lines_total: 100,
            lines_shown: 60,
            lines_unseen: 40,
            ..Coverage::default()
        }
    }

    #[test]
    fn the_counts_add_up_to_the_files() {
        assert_eq!(
            files(&coverage(4, 6, 117, 0)),
            "4 of 127 changed files whole, 6 in part, 117 left out for budget"
        );
        assert_eq!(
            files(&coverage(118, 0, 9, 2)),
            "118 of 127 changed files whole, 9 left out for budget"
        );
        assert_eq!(files(&coverage(12, 0, 0, 1)), "12 changed files");
        assert_eq!(
            files(&coverage(0, 1, 0, 0)),
            "0 of 1 changed file whole, 1 in part"
        );
    }
}
