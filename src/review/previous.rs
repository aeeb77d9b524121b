//! A re-review: when the subject was reviewed before at a head its branch
//! has moved on from, what that review found and what changed since; and
//! whenever a person's rejection (`speed reject`) is still open, its reason
//! as a finding of its own (`PF-n`, source `person`), at the very head they
//! rejected too, where nothing can have answered it. The
//! last decided review is read back from its report (`ledger::saved`); its
//! blocking findings become `PF-1`, `PF-2`, … (the model's critical and
//! major issues, its unmet criteria and missing requirements, and the
//! previous findings it left unresolved; speed's own checks run again on
//! every review, so they are not listed); the interdiff is the diff from
//! that head to this one, kept to the files the change itself touches, its
//! secrets replaced. Whether the interdiff touches each finding's location
//! is established here, for `verdict::previous` to check the model's
//! claims against.
//!
//! A branch rewritten since (the last head is no ancestor of this one, as
//! after a rebase onto main) keeps its findings: a rebase is how a branch
//! is brought up to date, not a fresh start, and the model must still say
//! whether each is fixed. Its "changes since" are the difference between
//! the two heads in the change's own files, which may hold main's changes
//! to them too; the review is a full one (never incremental) and says so.

use crate::git::Repository;
use crate::git::diff::{Diff, FileDiff};
use crate::ledger::saved::{self, Wanted};
use crate::verdict::previous::Fact;
use crate::verdict::{self, CriterionStatus, PreviousStatus};
use crate::work::{Resolved, Subject};

use super::context::Context;

/// The most previous findings listed; past it the review says how many more.
const MAX_FINDINGS: usize = 30;
/// The most reports read back looking for the last decided review.
const MAX_LOOKBACK: usize = 8;

/// What a re-review adds to a review.
#[derive(Debug, Clone)]
pub struct Rereview {
    /// The head commit the last review saw.
    pub previous_head: String,
    pub previous_verdict: verdict::Kind,
    /// Its report, relative to the repository root.
    pub previous_report: String,
    /// Its blocking findings, each with whether the interdiff touches it.
    pub facts: Vec<Fact>,
    /// Its criteria as it rated them, one line each (`AC-1 met: …`).
    pub criteria: Vec<String>,
    /// From the last reviewed head to this one.
    pub interdiff: Diff,
    /// The review shows the interdiff and the previous verdict only
    /// (`--incremental`, or a change too large for the budget).
    pub incremental: bool,
    /// The last head is no ancestor of this one: the interdiff compares
    /// two trees, not a branch's new commits, so it never stands in for
    /// the whole change.
    pub rewritten: bool,
}

impl Rereview {
    /// The ids the answer must rate.
    pub fn ids(&self) -> Vec<&str> {
        self.facts.iter().map(|f| f.id.as_str()).collect()
    }

    /// The previous findings as the prompt lists them; a person's says
    /// whose it is and, when nothing changed since, that it still stands.
    pub fn finding_lines(&self) -> Vec<String> {
        self.facts
            .iter()
            .map(|f| match &f.person {
                Some(_) if !f.touched => format!(
                    "{}: {} (nothing changed since this commit was rejected)",
                    f.label(),
                    f.message
                ),
                Some(_) => format!("{}: {}", f.label(), f.message),
                None => format!("{} at {}: {}", f.id, f.location(), f.message),
            })
            .collect()
    }

    /// The interdiff as the prompt shows it: one item per file, its hunks
    /// numbered like the diff's.
    pub fn interdiff_items(&self) -> Vec<String> {
        self.interdiff.files.iter().map(file_item).collect()
    }

    /// What the prompt says of the last review in an incremental one.
    pub fn summary_lines(&self) -> Vec<String> {
        let mut lines = vec![format!(
            "This review is incremental: the last review (verdict {}, at head {}) saw the whole change; the diff below is only what changed since. Judge the change as a whole from that review's findings and ratings and from these changes.",
            self.previous_verdict.as_str(),
            crate::git::short(&self.previous_head)
        )];
        if !self.criteria.is_empty() {
            lines.push(format!(
                "The last review rated the criteria: {}",
                self.criteria.join("; ")
            ));
        }
        lines
    }
}

/// The re-review of `subject`, if it is one, and what the reviewer should
/// know about why it is not.
pub fn find(
    ctx: &Context,
    repo: &Repository,
    subject: &Subject,
    resolved: &Resolved,
) -> (Option<Rereview>, Vec<String>) {
    let mut notices = Vec::new();
    let wanted = match subject {
        Subject::Task(task) => Wanted::Task {
            id: task.id.clone(),
            feature: task.feature.clone(),
        },
        Subject::Defect(review) => Wanted::Defect(review.defect.name.clone()),
        Subject::Branch { branch, .. } => Wanted::Branch(branch.clone()),
    };
    let last = last_decided(&ctx.root, &wanted);
    let people = people(subject, last.as_ref().map(|l| &l.report));
    // The head the findings were raised at: the last review's, else (its
    // report gone) the commit a person rejected.
    let previous_head = last
        .as_ref()
        .map(|l| l.report.head_commit.clone())
        .or_else(|| people.first().map(|p| p.head.clone()))
        .unwrap_or_default();
    if previous_head.is_empty() {
        if ctx.config.incremental {
            notices.push(
                "--incremental: there is no earlier review to build on; this is a full review"
                    .to_string(),
            );
        }
        return (None, notices);
    }
    let head = &resolved.diff.head_commit;
    let verdict = last
        .as_ref()
        .and_then(|l| l.report.verdict)
        .unwrap_or(verdict::Kind::RequestChanges);
    let report_path = last.as_ref().map(|l| l.path.clone()).unwrap_or_default();
    // Without an interdiff, a person's reasons are still listed: the same
    // head cannot answer them (nothing changed since), a rewritten branch
    // may have (something did).
    let unchanged = |touched: bool| {
        (!people.is_empty()).then(|| Rereview {
            previous_head: previous_head.clone(),
            previous_verdict: verdict,
            previous_report: report_path.clone(),
            facts: number(people.iter().map(|p| p.fact(touched)).collect()),
            criteria: Vec::new(),
            interdiff: Diff {
                base_commit: previous_head.clone(),
                head_commit: head.clone(),
                files: Vec::new(),
                sha256: String::new(),
            },
            incremental: false,
            rewritten: false,
        })
    };
    if &previous_head == head {
        return (unchanged(false), notices);
    }
    // A report is a file anyone can edit: its head must be a commit id,
    // never a name git would resolve (`main`, `HEAD~3`) into another basis.
    if !is_commit_id(&previous_head) {
        notices.push(format!(
            "The last review's report ({report_path}) names no commit id as its head: this is a full review and its findings are not listed."
        ));
        return (unchanged(true), notices);
    }
    let rewritten = !matches!(repo.is_ancestor(&previous_head, head), Ok(true));
    if rewritten {
        notices.push(format!(
            "The branch was rewritten since the last review (its head {} is not an ancestor of {}, as after a rebase): this is a full review; the earlier findings are listed, and the changes since are the difference between the two heads in the change's files, which may include changes from {} to those files.",
            crate::git::short(&previous_head),
            crate::git::short(head),
            ctx.main().name
        ));
    }
    let mut interdiff = match repo.diff(&previous_head, head) {
        Ok(diff) => diff,
        Err(err) => {
            notices.push(format!(
                "The changes since the last review could not be computed ({err}): this is a full review."
            ));
            return (unchanged(true), notices);
        }
    };
    // Only the change's own files: a merge of main into the branch brings
    // in what is not the task's.
    interdiff.files.retain(|f| {
        resolved
            .diff
            .files
            .iter()
            .any(|own| own.path == f.path || own.old_path.as_deref() == Some(f.path.as_str()))
    });
    crate::secrets::redact_diff(&mut interdiff);
    let mut found = last
        .as_ref()
        .map(|l| facts(&l.report, &interdiff))
        .unwrap_or_default();
    let touched = !interdiff.files.is_empty();
    found.extend(people.iter().map(|p| p.fact(touched)));
    let cut = found.len().saturating_sub(MAX_FINDINGS);
    if cut > 0 {
        notices.push(format!(
            "The last review had {} more blocking findings than the {MAX_FINDINGS} listed here.",
            cut
        ));
    }
    // A person's word is listed whatever the limit: it is few, and theirs.
    let mut facts: Vec<Fact> = found
        .iter()
        .filter(|f| f.person.is_some())
        .cloned()
        .collect();
    let room = MAX_FINDINGS.saturating_sub(facts.len());
    facts.splice(
        0..0,
        found.into_iter().filter(|f| f.person.is_none()).take(room),
    );
    let criteria = last
        .as_ref()
        .and_then(|l| l.report.review.as_ref())
        .map(|v| {
            v.criteria
                .iter()
                .map(|c| format!("{} {}", c.id, c.status.as_str()))
                .collect()
        })
        .unwrap_or_default();
    (
        Some(Rereview {
            previous_head,
            previous_verdict: verdict,
            previous_report: report_path,
            facts: number(facts),
            criteria,
            interdiff,
            incremental: false,
            rewritten,
        }),
        notices,
    )
}

/// A person's reason that the next review must answer.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Said {
    by: String,
    reason: String,
    /// The commit they rejected.
    head: String,
}

impl Said {
    fn fact(&self, touched: bool) -> Fact {
        Fact {
            id: String::new(),
            blocking: true,
            file: None,
            line: None,
            message: one_line(&self.reason),
            touched,
            person: Some(self.by.clone()),
        }
    }
}

/// The people's reasons still open: a rejection no review has answered
/// yet (the task's `human_review` says `rejected`: a review clears it),
/// and those the last review recorded unresolved.
fn people(subject: &Subject, last: Option<&crate::ledger::Report>) -> Vec<Said> {
    let mut out: Vec<Said> = Vec::new();
    if let Some(rejected) = subject
        .task()
        .and_then(|t| t.raw.get("human_review"))
        .filter(|h| h.get("status").and_then(|s| s.as_str()) == Some("rejected"))
    {
        let text = |key: &str| {
            rejected
                .get(key)
                .and_then(|v| v.as_str())
                .unwrap_or_default()
                .trim()
                .to_string()
        };
        let said = Said {
            by: text("by"),
            reason: text("reason"),
            head: text("head_commit"),
        };
        if !said.reason.is_empty() {
            out.push(said);
        }
    }
    let carried = last
        .into_iter()
        .flat_map(|r| &r.previous_findings)
        .filter(|p| {
            p.source == verdict::previous::Source::Person
                && p.blocking
                && p.status == PreviousStatus::Unresolved
        });
    for p in carried {
        if out.iter().all(|s| one_line(&s.reason) != p.message) {
            out.push(Said {
                by: p.by.clone().unwrap_or_else(|| "a person".to_string()),
                reason: p.message.clone(),
                head: last.map(|r| r.head_commit.clone()).unwrap_or_default(),
            });
        }
    }
    out
}

/// `PF-1`, `PF-2`, … in the order given.
fn number(mut facts: Vec<Fact>) -> Vec<Fact> {
    for (n, fact) in facts.iter_mut().enumerate() {
        fact.id = format!("PF-{}", n + 1);
    }
    facts
}

/// The last review of `wanted` that decided something.
fn last_decided(root: &std::path::Path, wanted: &Wanted) -> Option<saved::Saved> {
    (1..=MAX_LOOKBACK)
        .map_while(|n| saved::nth(root, wanted, n, &[]).ok())
        .find(|s| s.report.verdict.is_some() && s.report.error.is_none())
}

/// The last review's blocking findings, with whether the interdiff
/// touches each (a person's are `people`'s).
fn facts(report: &crate::ledger::Report, interdiff: &Diff) -> Vec<Fact> {
    let mut found: Vec<(Option<String>, Option<u64>, String)> = Vec::new();
    if let Some(review) = &report.review {
        for issue in review.issues.iter().filter(|i| i.severity.is_blocking()) {
            found.push((
                issue.file.clone(),
                issue.line,
                format!("({}) {}", issue.severity.as_str(), issue.message),
            ));
        }
        for c in review
            .criteria
            .iter()
            .filter(|c| c.status == CriterionStatus::Unmet)
        {
            found.push((None, None, format!("{} unmet: {}", c.id, c.evidence)));
        }
        for m in &review.missing_from_spec {
            let what = if m.description.trim().is_empty() {
                &m.spec_quote
            } else {
                &m.description
            };
            found.push((None, None, format!("missing from the change: {what}")));
        }
    }
    for p in report.previous_findings.iter().filter(|p| {
        p.blocking
            && p.status == PreviousStatus::Unresolved
            && p.source == verdict::previous::Source::Review
    }) {
        let (file, line) = split_location(&p.location);
        found.push((file, line, p.message.clone()));
    }
    let mut unique: Vec<(Option<String>, Option<u64>, String)> = Vec::new();
    for f in found {
        if !unique.contains(&f) {
            unique.push(f);
        }
    }
    unique
        .into_iter()
        .map(|(file, line, message)| Fact {
            id: String::new(),
            blocking: true,
            touched: touches(interdiff, file.as_deref(), line),
            file,
            line,
            message: one_line(&message),
            person: None,
        })
        .collect()
}

/// `src/a.rs:12` back into its parts; `(no location)` into none.
fn split_location(location: &str) -> (Option<String>, Option<u64>) {
    if location.starts_with('(') {
        return (None, None);
    }
    match location.rsplit_once(':') {
        Some((file, line)) if line.parse::<u64>().is_ok() => {
            (Some(file.to_string()), line.parse().ok())
        }
        _ => (Some(location.to_string()), None),
    }
}

/// Whether the interdiff touches a location of the last reviewed head:
/// a line within one of its hunks' old ranges (with their context), a
/// file it changes when the finding has no line, anything when the
/// finding has no file.
pub fn touches(interdiff: &Diff, file: Option<&str>, line: Option<u64>) -> bool {
    let Some(file) = file else {
        return !interdiff.files.is_empty();
    };
    let Some(changed) = interdiff
        .files
        .iter()
        .find(|f| f.path == file || f.old_path.as_deref() == Some(file))
    else {
        return false;
    };
    let Some(line) = line else {
        return true;
    };
    changed.hunks.iter().any(|h| {
        let start = u64::from(h.old_start);
        let end = start + u64::from(h.old_lines.max(1));
        (start..=end).contains(&line)
    })
}

/// One file of the interdiff, as the prompt shows it.
fn file_item(file: &FileDiff) -> String {
    let mut out = file.header();
    if !out.ends_with('\n') {
        out.push('\n');
    }
    for hunk in &file.hunks {
        out.push_str(&crate::prompt::numbered_hunk(hunk));
    }
    out
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A full commit id: 40 (SHA-1) or 64 (SHA-256) hex digits.
fn is_commit_id(text: &str) -> bool {
    matches!(text.len(), 40 | 64) && text.bytes().all(|b| b.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::diff::{FileStatus, Hunk};

    fn interdiff(path: &str, old_start: u32, old_lines: u32) -> Diff {
        Diff {
            base_commit: "a".into(),
            head_commit: "b".into(),
            files: vec![FileDiff {
                path: path.into(),
                old_path: None,
                similarity: None,
                status: FileStatus::Modified,
                binary: false,
                old_mode: None,
                new_mode: None,
                old_blob: None,
                new_blob: None,
                additions: 1,
                deletions: 1,
                not_utf8: false,
                hunks: vec![Hunk {
                    old_start,
                    old_lines,
                    new_start: old_start,
                    new_lines: old_lines,
                    context: String::new(),
                    lines: Vec::new(),
                }],
            }],
            sha256: String::new(),
        }
    }

    #[test]
    fn a_finding_is_touched_by_a_hunk_over_its_line_or_its_file() {
        let d = interdiff("src/a.rs", 10, 7);
        assert!(touches(&d, Some("src/a.rs"), Some(12)));
        assert!(touches(&d, Some("src/a.rs"), Some(17)));
        assert!(!touches(&d, Some("src/a.rs"), Some(40)));
        assert!(!touches(&d, Some("src/b.rs"), Some(12)));
        assert!(touches(&d, Some("src/a.rs"), None));
        assert!(touches(&d, None, None));
        let none = Diff {
            files: Vec::new(),
            ..d.clone()
        };
        assert!(!touches(&none, None, None));
        // An insertion after line 5 touches line 5.
        assert!(touches(
            &interdiff("src/a.rs", 5, 0),
            Some("src/a.rs"),
            Some(5)
        ));
    }

    #[test]
    fn locations_split_back() {
        assert_eq!(
            split_location("src/a.rs:12"),
            (Some("src/a.rs".into()), Some(12))
        );
        assert_eq!(split_location("src/a.rs"), (Some("src/a.rs".into()), None));
        assert_eq!(split_location("(no location)"), (None, None));
    }
}
