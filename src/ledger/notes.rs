//! speed's verdicts as git notes under `refs/notes/speed`, so they travel
//! with the repository: a CI runner's checkout is thrown away, a fresh
//! clone has no `.speed/cache/`, but `git fetch origin refs/notes/speed`
//! (or `speed notes fetch`) brings what was decided elsewhere.
//!
//! A note sits on a head commit and holds one JSON object per line, one
//! per decision about that commit: the subject, the verdict, the diff and
//! spec hashes the decision covers, who and how (a person's word), and a
//! one-line summary. Lines, not one document, so `git notes merge -s
//! cat_sort_uniq` can join two clones' notes on a commit; they are put
//! back in time order when read.
//!
//! Anyone who can push the notes ref writes what is read here: a note is a
//! claim, not a proof. This module parses it defensively (size-capped,
//! line by line, a damaged line skipped and counted) and returns records;
//! what a note may cover is decided by `covers`, which honours one only
//! when its diff and spec hashes are what speed computes at that commit
//! now, so a note can never cover other code, or code judged against
//! another spec, than the review it reports.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::git::Repository;
use crate::work::Work;

use super::report::Report;
use super::verdicts::{Decision, Record};
use super::{Error, LOCKS_DIR, area};

/// The notes ref speed writes and reads.
pub const REF: &str = "refs/notes/speed";

/// What a line of a note says it is: this format, version 1.
const FORMAT: &str = "speed-note/1";

/// A summary longer than this is cut: the report holds the rest.
const MAX_SUMMARY: usize = 600;

/// How long a writer waits for another: writes take milliseconds.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// One line of a note: a decision about a piece of work at the commit the
/// note is on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub format: String,
    /// `feature/3`, `task 3`, `defect NAME` or `branch B`.
    pub subject: String,
    #[serde(flatten)]
    pub record: Record,
    /// The report's `hashes.spec`: the spec text the prompt held.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub summary: String,
}

impl Entry {
    pub fn new(subject: String, record: Record) -> Entry {
        Entry {
            format: FORMAT.to_string(),
            subject,
            record,
            spec: None,
            model: None,
            summary: String::new(),
        }
    }

    fn line(&self) -> String {
        // Plain strings and enums: it always serialises.
        let line = serde_json::to_string(self).unwrap_or_default();
        crate::secrets::net::printed(&line).into_owned()
    }
}

/// What the notes on a commit say about one piece of work, in time order,
/// and what was wrong with the rest of the note.
#[derive(Debug, Clone, Default)]
pub struct Read {
    pub records: Vec<Record>,
    pub problems: Vec<String>,
}

/// The records a note on `commit` holds about `work`. Lines that are not
/// speed's, damaged, about another commit or about other work are passed
/// over; the first two are said.
pub fn at(repo: &Repository, commit: &str, work: &Work) -> Read {
    let mut read = Read::default();
    let text = match repo.note(REF, commit) {
        Ok(Some(text)) => text,
        Ok(None) => return read,
        Err(err) => {
            read.problems
                .push(format!("{err}: its verdicts are not used"));
            return read;
        }
    };
    let mut damaged = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        match serde_json::from_str::<Entry>(line) {
            Ok(entry) if entry.format == FORMAT => {
                if entry.record.head_commit == commit && entry.record.is_for(work) {
                    read.records.push(entry.record);
                }
            }
            _ => damaged += 1,
        }
    }
    if damaged > 0 {
        read.problems.push(format!(
            "the git note on {} holds {damaged} line{} speed cannot read: passed over",
            crate::git::short(commit),
            if damaged == 1 { "" } else { "s" }
        ));
    }
    read.records.sort_by(|a, b| a.at.cmp(&b.at));
    read
}

/// `speed notes push|fetch`: which way the notes go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sync {
    Push,
    Fetch,
}

/// Move the notes to or from `remote` (see `git::Repository::push_notes`
/// and `fetch_notes`), while no review of this machine writes one.
pub fn sync(root: &Path, way: Sync, remote: &str) -> Result<crate::git::Synced, Error> {
    let repo = Repository::open(root)?;
    let _lock = lock(root)?;
    Ok(match way {
        Sync::Push => repo.push_notes(remote, REF)?,
        Sync::Fetch => repo.fetch_notes(remote, REF)?,
    })
}

/// How many commits carry a note of speed's.
pub fn count(root: &Path) -> usize {
    Repository::open(root)
        .ok()
        .and_then(|repo| repo.notes_count(REF).ok())
        .unwrap_or(0)
}

/// Writers of this machine take turns: a lock under `.speed/`.
fn lock(root: &Path) -> Result<crate::fsx::Lock, Error> {
    let area = area(root);
    crate::fsx::create_dir_all(&area, &root.join(LOCKS_DIR))?;
    Ok(crate::fsx::Lock::acquire(
        &area,
        &root.join(LOCKS_DIR).join("notes.lock"),
        LOCK_WAIT,
    )?)
}

/// Add `entry` to the note on its head commit, keeping what the note held.
pub fn add(root: &Path, entry: &Entry) -> Result<(), Error> {
    let repo = Repository::open(root)?;
    let commit = &entry.record.head_commit;
    let _lock = lock(root)?;
    // A note that cannot be read (too large, not speed's) is replaced by
    // one that can: its lines are kept only when they are text.
    let mut text = repo.note(REF, commit).ok().flatten().unwrap_or_default();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    let line = entry.line();
    if text.lines().any(|l| l == line) {
        return Ok(());
    }
    text.push_str(&line);
    text.push('\n');
    Ok(repo.set_note(REF, commit, &text)?)
}

/// The note of a decided review: its verdict, the hashes it covers and a
/// summary. A review that decided nothing writes none; nor does one
/// without a head commit.
pub fn of_review(report: &Report, work: Option<Work>) -> Option<Entry> {
    let decision = match report.verdict? {
        crate::verdict::Kind::Approve => Decision::Approve,
        crate::verdict::Kind::RequestChanges => Decision::RequestChanges,
        crate::verdict::Kind::ChecksPassed => Decision::ChecksPassed,
    };
    if report.error.is_some() || report.head_commit.is_empty() {
        return None;
    }
    let (task, feature, defect) = match work {
        Some(Work::Task { id, feature }) => (Some(id), feature, None),
        Some(Work::Defect { name }) => (None, None, Some(name)),
        None => (None, None, None),
    };
    let record = Record {
        task,
        feature,
        defect,
        head_commit: report.head_commit.clone(),
        decision,
        at: super::now_rfc3339(),
        diff: Some(report.hashes.diff.clone()).filter(|d| !d.is_empty()),
        specs: report.hashes.spec_files.clone(),
        by: None,
        reason: None,
        via: None,
        awaiting_human: report.human_review.as_ref().is_some_and(|h| h.is_pending()),
    };
    let mut entry = Entry::new(subject(report), record);
    entry.spec = Some(report.hashes.spec.clone()).filter(|s| !s.is_empty());
    entry.model =
        Some(format!("{}/{}", report.model.provider, report.model.name)).filter(|m| m != "/");
    entry.summary = summary(report, decision);
    Some(entry)
}

/// How people name the review's subject: `feature/3`, `task 3`,
/// `defect NAME` or `branch B`.
fn subject(report: &Report) -> String {
    match (&report.task_id, &report.feature, &report.defect) {
        (Some(id), Some(feature), _) if !feature.is_empty() => format!("{feature}/{id}"),
        (Some(id), _, _) => format!("task {id}"),
        (None, _, Some(defect)) => format!("defect {}", defect.name),
        (None, _, None) => format!("branch {}", report.branch),
    }
}

/// One paragraph: the verdict, the overall score, what blocks.
fn summary(report: &Report, decision: Decision) -> String {
    let mut out = decision.as_str().to_string();
    if let Some(scores) = &report.scores {
        out.push_str(&format!(
            "; overall {} (pass score {})",
            scores.overall, scores.pass_score
        ));
    }
    if let Some(feedback) = report.feedback.as_deref() {
        let first: Vec<&str> = feedback
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .take(3)
            .collect();
        if !first.is_empty() {
            out.push_str(": ");
            out.push_str(&first.join(" "));
        }
    }
    if out.len() > MAX_SUMMARY {
        let mut end = MAX_SUMMARY;
        while !out.is_char_boundary(end) {
            end -= 1;
        }
        out.truncate(end);
        out.push('…');
    }
    out
}

/// Keep a decided review as a note on its head commit. Like the verdict
/// cache, a note that cannot be written costs what it would have saved
/// elsewhere, not the review: it is a warning.
pub fn keep_review(root: &Path, work: Option<Work>, report: &Report) {
    let Some(entry) = of_review(report, work) else {
        return;
    };
    if let Err(err) = add(root, &entry) {
        tracing::warn!(
            "the verdict was not written as a git note ({REF}) on {}: {err}",
            crate::git::short(&report.head_commit)
        );
    }
}

/// Keep a person's decision about `work` (a confirmation or rejection of
/// the model's approval, an override) as a note on its commit. A
/// confirmation names the diff and the specs of the approval it confirms,
/// which the verdict cache holds at that commit, so another machine can
/// check them (see `covers`).
pub fn keep_decision(root: &Path, work: &Work, record: &Record) {
    let mut record = record.clone();
    if record.decision == Decision::HumanApprove && record.diff.is_none() {
        let found = super::verdicts::Store::open(root).at_head(
            &record.head_commit,
            work,
            super::verdicts::Trust {
                cache: true,
                log: true,
            },
        );
        if let Some(approval) = found
            .records
            .iter()
            .rev()
            .find(|r| r.decision == Decision::Approve)
        {
            record.diff = approval.diff.clone();
            record.specs = approval.specs.clone();
        }
    }
    let subject = match work {
        Work::Task {
            id,
            feature: Some(feature),
        } => format!("{feature}/{id}"),
        other => other.label(),
    };
    let mut entry = Entry::new(subject, record);
    entry.summary = [
        Some(entry.record.decision.as_str().to_string()),
        entry.record.by.clone().map(|by| format!("by {by}")),
        entry.record.reason.clone().filter(|r| !r.trim().is_empty()),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .join(": ");
    if let Err(err) = add(root, &entry) {
        tracing::warn!(
            "the decision was not written as a git note ({REF}) on {}: {err}",
            crate::git::short(&entry.record.head_commit)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo_with_commit() -> (tempfile::TempDir, String) {
        let dir = tempfile::tempdir().unwrap();
        let raw = git2::Repository::init(dir.path()).unwrap();
        let sig = git2::Signature::now("t", "t@example.com").unwrap();
        let tree = raw.treebuilder(None).unwrap().write().unwrap();
        let tree = raw.find_tree(tree).unwrap();
        let commit = raw
            .commit(Some("HEAD"), &sig, &sig, "c", &tree, &[])
            .unwrap()
            .to_string();
        (dir, commit)
    }

    fn record(commit: &str, id: &str, decision: Decision, at: &str) -> Record {
        Record {
            task: Some(id.to_string()),
            feature: Some("cat".into()),
            defect: None,
            head_commit: commit.to_string(),
            decision,
            at: at.to_string(),
            diff: Some("sha256:aa".into()),
            specs: Vec::new(),
            by: None,
            reason: None,
            via: None,
            awaiting_human: false,
        }
    }

    #[test]
    fn entries_are_added_kept_once_and_read_back_in_time_order_for_their_work() {
        let (dir, commit) = repo_with_commit();
        let work = Work::Task {
            id: "3".into(),
            feature: Some("cat".into()),
        };
        let later = Entry::new(
            "cat/3".into(),
            record(&commit, "3", Decision::Approve, "t2"),
        );
        let earlier = Entry::new(
            "cat/3".into(),
            record(&commit, "3", Decision::RequestChanges, "t1"),
        );
        let other = Entry::new(
            "cat/4".into(),
            record(&commit, "4", Decision::Approve, "t0"),
        );
        for entry in [&later, &earlier, &other, &later] {
            add(dir.path(), entry).unwrap();
        }
        let repo = Repository::open(dir.path()).unwrap();
        let read = at(&repo, &commit, &work);
        let decisions: Vec<Decision> = read.records.iter().map(|r| r.decision).collect();
        assert_eq!(decisions, [Decision::RequestChanges, Decision::Approve]);
        assert!(read.problems.is_empty(), "{:?}", read.problems);
        let text = repo.note(REF, &commit).unwrap().unwrap();
        assert_eq!(text.lines().count(), 3, "{text}");
    }

    #[test]
    fn a_hostile_note_is_read_line_by_line_and_never_about_another_commit() {
        let (dir, commit) = repo_with_commit();
        let repo = Repository::open(dir.path()).unwrap();
        let work = Work::Task {
            id: "3".into(),
            feature: Some("cat".into()),
        };
        let elsewhere = Entry::new(
            "cat/3".into(),
            record(&"b".repeat(40), "3", Decision::Approve, "t1"),
        );
        let good = Entry::new(
            "cat/3".into(),
            record(&commit, "3", Decision::RequestChanges, "t2"),
        );
        let text = format!(
            "not json\n{}\n{{\"format\": \"speed-note/9\"}}\n{}\n",
            serde_json::to_string(&elsewhere).unwrap(),
            serde_json::to_string(&good).unwrap()
        );
        repo.set_note(REF, &commit, &text).unwrap();
        let read = at(&repo, &commit, &work);
        assert_eq!(read.records.len(), 1);
        assert_eq!(read.records[0].decision, Decision::RequestChanges);
        assert!(read.problems[0].contains("2 lines"), "{:?}", read.problems);
    }
}
