//! Whether an approval covers a piece of work at a commit: the one answer
//! speed gives to that question wherever it is asked. Batch mode (which
//! tasks need no review), `--task-id` (a review of what an approval
//! already covers is said to be one), the merge gate (what may enter the
//! main branch) and `speed show` (whether the shown approval still holds)
//! all call `covers`; none decides it on its own.
//!
//! An approval covers the change it judged *and* the spec it judged it
//! against. A model's approval (at the commit itself, or of the same diff
//! at another head, as after a rebase) covers only while every spec
//! document it recorded reads the same on the main branch; a person's word
//! (`speed override`, a hook bypass, `speed approve`) covers the commit it
//! was given at, whatever the spec says since. An approval that waits for
//! a person (`review.human`) covers nothing until a person confirms it.
//!
//! Where the answer comes from, the first source that knows this piece of
//! work speaking:
//!
//! 1. `at_commit`: what was decided at the commit itself, from the verdict
//!    cache, else the review log (`verdicts::Store::at_head`, which writes
//!    the log's records back to the cache); when neither knows the work
//!    at this commit, the git notes under `refs/notes/speed` (a verdict
//!    reached on another machine: a CI runner, a colleague's clone), each
//!    honoured only for the diff and specs speed computes now
//!    (`from_notes`).
//! 2. `same_diff`: a review of the very same diff at another head (a
//!    rebase), asked only when the commit is the branch's head.
//! 3. `task_file`: the task file's own approval (`reviewed_diff` equal to
//!    the current diff, or, for an approval written before speed recorded
//!    `reviewed_diff`, a head not newer than `reviewed_at`), only for a
//!    caller that trusts the task file: not the merge gate, since a branch
//!    can carry a task file of its own making.
//!
//! Work whose branch is merged into the main branch stays covered: that is
//! a `Cover` of its own (`Merged`), decided in `covers` when none of the
//! sources above covers it: every file the branch changes already holds
//! its content on the main branch (`work::holds_already`), so bringing it
//! in changes nothing. The branch's own changes are measured from where it
//! forked, or from the base its task file declares only when the caller
//! trusts the task file. Batch mode and `--task-id` do not ask: a merged
//! task is not reviewed at all (`work::standing`).
//!
//! Records a commit could forge are not read: a commit that carries
//! `.speed/cache` or the review log in its tree could have written them.

use crate::git::{MainBranch, Repository, short};
use crate::tasks::{self, Task};
use crate::work::{self, Subject, Work};

use super::verdicts::{self, Decision, Record, Source, Trust};

/// Files whose records a commit could forge by carrying them.
const CACHE_PATH: &str = ".speed/cache";
const LOG_PATH: &str = ".speed/reviews/log.jsonl";

/// Why a commit is covered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cover {
    /// A review approved this commit, against specs that read the same on
    /// the main branch now (`spec_recorded` false: an older record that
    /// names no spec, so none could be compared).
    Approved {
        at: String,
        source: Source,
        spec_recorded: bool,
    },
    Overridden {
        by: String,
        reason: String,
        at: String,
    },
    /// A review of `head` approved the same diff, and its spec documents
    /// are unchanged.
    SameDiff { head: String, at: String },
    /// A person confirmed the model's approval (`speed approve`).
    HumanApproved { by: String, at: String },
    /// The task file says it was approved at this diff (or, written before
    /// `reviewed_diff` existed, at a time no older than the head), and no
    /// record says otherwise; the spec it was judged against is not known.
    TaskFile { at: String, legacy: bool },
    /// The work is merged already: every file its branch changes holds, on
    /// the main branch at `target`, the content the branch gives it (a
    /// squash or rebase merge), so bringing it in brings nothing new.
    Merged { target: String },
}

/// Why a commit is not covered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Miss {
    NeverReviewed,
    ChangesRequested {
        at: String,
    },
    /// An offline review passed the checks; no model checked the spec.
    OnlyChecks {
        at: String,
    },
    /// An approval (of this commit when `head` is it, else of the same
    /// diff at `head`) rests on a spec that has changed since (or is gone)
    /// on the main branch.
    SpecChanged {
        path: String,
        head: String,
        at: String,
    },
    /// The model approved, and the approval waits for a person
    /// (`review.human`): `speed approve` or `speed reject`.
    AwaitingHuman {
        at: String,
    },
    /// A person turned the model's approval down (`speed reject`).
    HumanRejected {
        by: String,
        at: String,
    },
    /// The task file's approval was of another diff: the branch changed
    /// since.
    DiffChanged {
        at: String,
    },
}

/// How to know the diff of the branch now, for the same-diff and task-file
/// sources.
#[derive(Debug, Clone, Copy)]
pub enum Current<'a> {
    /// The caller has it already (`sha256:<hex>`).
    Diff(&'a str),
    /// Resolve the subject's diff when a source needs it.
    Of(&'a Subject),
    /// The commit is not the branch's head (part of a branch arrives): only
    /// what was decided at the commit itself counts.
    NotTheHead,
}

/// What is asked.
#[derive(Debug, Clone, Copy)]
pub struct Question<'a> {
    pub work: &'a Work,
    /// The commit that must be covered.
    pub commit: &'a str,
    pub current: Current<'a>,
    /// The task file, when the caller trusts it as a source (see the
    /// module's documentation); None otherwise.
    pub task: Option<&'a Task>,
}

/// What the answer stands on: the repository, the main branch whose specs
/// are the truth now, and the verdict cache (with the log behind it).
pub struct Ground<'a> {
    pub repo: &'a Repository,
    pub main: &'a MainBranch,
    pub store: &'a verdicts::Store,
}

/// The answer, with what is worth saying about how it was reached (a
/// damaged cache file, a record not trusted, a spec not recorded).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub verdict: Result<Cover, Miss>,
    pub notes: Vec<String>,
}

impl Answer {
    pub fn covered(&self) -> bool {
        self.verdict.is_ok()
    }
}

/// Whether an approval covers `question.work` at `question.commit`.
pub fn covers(ground: &Ground, question: &Question) -> Answer {
    let mut notes = Vec::new();
    let mut verdict = from_sources(ground, question, &mut notes);
    let head = !matches!(question.current, Current::NotTheHead);
    if verdict.is_err() && head {
        if let Some(merged) = merged(ground, question, &mut notes) {
            verdict = Ok(merged);
        }
    }
    Answer { verdict, notes }
}

/// The first source that knows the work speaking (see the module's
/// documentation).
fn from_sources(
    ground: &Ground,
    question: &Question,
    notes: &mut Vec<String>,
) -> Result<Cover, Miss> {
    let trust = trust(ground.repo, question.commit, notes);
    let found = ground.store.at_head(question.commit, question.work, trust);
    notes.extend(found.notes.iter().cloned());
    let verdict = at_commit(ground, &found, question.commit, notes);
    if verdict != Err(Miss::NeverReviewed) {
        return verdict;
    }
    let diff = match question.current {
        Current::NotTheHead => None,
        Current::Diff(diff) => Some(diff.to_string()),
        Current::Of(subject) => match work::resolve(ground.repo, ground.main, subject) {
            Ok(resolved) => Some(resolved.diff.sha256),
            Err(err) => {
                notes.push(format!("could not diff {}: {err}", subject.branch()));
                None
            }
        },
    };
    let Some(diff) = diff else {
        return verdict;
    };
    if found.records.is_empty() {
        let noted = from_notes(ground, question, &diff, notes);
        if !noted.records.is_empty() {
            let verdict = at_commit(ground, &noted, question.commit, notes);
            if verdict != Err(Miss::NeverReviewed) {
                return verdict;
            }
        }
    }
    if trust.cache {
        let verdict = same_diff(ground, &diff, question.work, notes);
        if verdict != Err(Miss::NeverReviewed) {
            return verdict;
        }
    }
    match question.task {
        Some(task) => task_file(ground.repo, task, question.commit, &diff, notes),
        None => verdict,
    }
}

/// `Cover::Merged` when the work at its head brings nothing the main
/// branch does not hold already.
fn merged(ground: &Ground, question: &Question, notes: &mut Vec<String>) -> Option<Cover> {
    let head = question.commit;
    match work::holds_already(
        ground.repo,
        ground.main,
        question.task,
        head,
        &ground.main.commit,
    ) {
        Ok(true) => Some(Cover::Merged {
            target: ground.main.commit.clone(),
        }),
        Ok(false) => None,
        Err(err) => {
            notes.push(format!(
                "could not tell whether {} is merged already: {err}",
                short(head)
            ));
            None
        }
    }
}

/// What git notes (`refs/notes/speed`, see `notes`) say was decided at the
/// commit, as records `at_commit` can rule on. A note is anyone's claim,
/// so only what this machine can check is kept: a decision that would
/// cover (an approval, a person's confirmation or override) counts only
/// when it names the very diff speed computes for this work at this
/// commit now, and a confirmation only with the specs it was judged
/// against, unchanged on the main branch (an approval's specs are compared
/// by `at_commit`, as for any record). What is set aside is said.
fn from_notes(
    ground: &Ground,
    question: &Question,
    diff: &str,
    notes: &mut Vec<String>,
) -> verdicts::Found {
    let read = super::notes::at(ground.repo, question.commit, question.work);
    notes.extend(read.problems);
    let commit = short(question.commit);
    let mut records = Vec::new();
    for record in read.records {
        let covering = matches!(
            record.decision,
            Decision::Approve | Decision::HumanApprove | Decision::Override
        );
        if covering && record.diff.as_deref() != Some(diff) {
            notes.push(format!(
                "a git note on {commit} records {} of {} for another diff than the one at this commit ({}): set aside",
                record.decision.as_str(),
                question.work.label(),
                record.diff.as_deref().unwrap_or("none named")
            ));
            continue;
        }
        if record.decision == Decision::Approve && record.specs.is_empty() {
            notes.push(format!(
                "a git note on {commit} records an approval of {} that names no spec: set aside",
                question.work.label()
            ));
            continue;
        }
        if record.decision == Decision::HumanApprove {
            let changed = if record.specs.is_empty() {
                Some("(the note names no spec)".to_string())
            } else {
                changed_spec(ground, &record)
            };
            if let Some(path) = changed {
                notes.push(format!(
                    "a git note on {commit} records a person's approval of {} against a spec that is not main's now ({path}): set aside",
                    question.work.label()
                ));
                continue;
            }
        }
        records.push(record);
    }
    verdicts::Found {
        records,
        source: Source::Notes,
        notes: Vec::new(),
    }
}

/// Which records may be trusted at `commit`: not those a commit carries.
fn trust(repo: &Repository, commit: &str, notes: &mut Vec<String>) -> Trust {
    // A commit that cannot be read carries nothing speed could read either.
    let carries = |path: &str| repo.tracks(commit, path).unwrap_or(false);
    let trust = Trust {
        cache: !carries(CACHE_PATH),
        log: !carries(LOG_PATH),
    };
    for (trusted, path) in [(trust.cache, CACHE_PATH), (trust.log, LOG_PATH)] {
        if !trusted {
            notes.push(format!(
                "commit {} carries {path}: records there could come from the branch itself, so they are not used",
                short(commit)
            ));
        }
    }
    trust
}

/// What the records at the commit say: an override covers whatever was
/// reviewed; otherwise the latest review that judged the spec, or a
/// person's word on its approval, decides (an offline review's
/// `checks_passed` and a person's skip neither cover nor revoke; the former
/// says why nothing covers a commit no model judged). A model's approval
/// covers while its specs are unchanged; one that waits for a person
/// covers nothing.
fn at_commit(
    ground: &Ground,
    found: &verdicts::Found,
    commit: &str,
    notes: &mut Vec<String>,
) -> Result<Cover, Miss> {
    let ruled = decide_at_head(found)?;
    let Cover::Approved { at, source, .. } = ruled else {
        return Ok(ruled);
    };
    // decide_at_head approved: the record it rests on is the latest judged one.
    let Some(record) = found
        .records
        .iter()
        .rev()
        .find(|r| r.decision == Decision::Approve)
    else {
        return Err(Miss::NeverReviewed);
    };
    if record.specs.is_empty() {
        notes.push(format!(
            "the approval of {} ({at}) recorded no spec, so whether the spec changed since cannot be told",
            short(commit)
        ));
        return Ok(Cover::Approved {
            at,
            source,
            spec_recorded: false,
        });
    }
    match changed_spec(ground, record) {
        None => Ok(Cover::Approved {
            at,
            source,
            spec_recorded: true,
        }),
        Some(path) => Err(Miss::SpecChanged {
            path,
            head: commit.to_string(),
            at,
        }),
    }
}

/// The rule over the records at one commit, before the spec is compared.
fn decide_at_head(found: &verdicts::Found) -> Result<Cover, Miss> {
    if let Some(r) = found
        .records
        .iter()
        .rev()
        .find(|r| r.decision == Decision::Override)
    {
        return Ok(Cover::Overridden {
            by: r.by.clone().unwrap_or_default(),
            reason: r.reason.clone().unwrap_or_default(),
            at: r.at.clone(),
        });
    }
    let judged = found
        .records
        .iter()
        .rev()
        .find(|r| !matches!(r.decision, Decision::ChecksPassed | Decision::Skipped));
    let checked = found
        .records
        .iter()
        .rev()
        .find(|r| r.decision == Decision::ChecksPassed);
    let at = |r: &Record| r.at.clone();
    match judged {
        Some(r) if r.decision == Decision::Approve && r.awaiting_human => {
            Err(Miss::AwaitingHuman { at: at(r) })
        }
        Some(r) if r.decision == Decision::Approve => Ok(Cover::Approved {
            at: at(r),
            source: found.source,
            spec_recorded: !r.specs.is_empty(),
        }),
        Some(r) if r.decision == Decision::HumanApprove => Ok(Cover::HumanApproved {
            by: r.by.clone().unwrap_or_default(),
            at: at(r),
        }),
        Some(r) if r.decision == Decision::HumanReject => Err(Miss::HumanRejected {
            by: r.by.clone().unwrap_or_default(),
            at: at(r),
        }),
        Some(r) => Err(Miss::ChangesRequested { at: at(r) }),
        None => match checked {
            Some(r) => Err(Miss::OnlyChecks { at: at(r) }),
            None => Err(Miss::NeverReviewed),
        },
    }
}

/// Coverage by a review of the same diff at another head, against specs
/// unchanged since; a review that recorded no spec proves nothing here.
fn same_diff(
    ground: &Ground,
    diff: &str,
    work: &Work,
    notes: &mut Vec<String>,
) -> Result<Cover, Miss> {
    let found = ground.store.with_diff(diff, work);
    notes.extend(found.notes.iter().cloned());
    let Some(last) = found.records.last() else {
        return Err(Miss::NeverReviewed);
    };
    match last.decision {
        Decision::Approve if last.awaiting_human => Err(Miss::AwaitingHuman {
            at: last.at.clone(),
        }),
        Decision::Approve => {
            let changed = if last.specs.is_empty() {
                Some("(the review recorded no spec)".to_string())
            } else {
                changed_spec(ground, last)
            };
            match changed {
                None => Ok(Cover::SameDiff {
                    head: last.head_commit.clone(),
                    at: last.at.clone(),
                }),
                Some(path) => Err(Miss::SpecChanged {
                    path,
                    head: last.head_commit.clone(),
                    at: last.at.clone(),
                }),
            }
        }
        Decision::RequestChanges => Err(Miss::ChangesRequested {
            at: last.at.clone(),
        }),
        // Not kept by diff: a person's word covers the head it was given at.
        Decision::ChecksPassed
        | Decision::Override
        | Decision::HumanApprove
        | Decision::HumanReject
        | Decision::Skipped => Err(Miss::NeverReviewed),
    }
}

/// The first spec document of a review that reads differently on the main
/// branch now (or is gone, or cannot be read).
fn changed_spec(ground: &Ground, record: &Record) -> Option<String> {
    record
        .specs
        .iter()
        .find(|spec| {
            match ground.repo.read_file(&ground.main.commit, &spec.path) {
                Ok(Some(bytes)) => !verdicts::spec_matches(&spec.sha256, &bytes),
                // Gone, or unreadable: not the spec that was reviewed.
                _ => true,
            }
        })
        .map(|spec| spec.path.clone())
}

/// The task file's approval, when nothing speed recorded knows the work
/// at this commit or diff.
fn task_file(
    repo: &Repository,
    task: &Task,
    commit: &str,
    diff: &str,
    notes: &mut Vec<String>,
) -> Result<Cover, Miss> {
    if task.review_verdict.as_deref() != Some("approve") {
        return Err(Miss::NeverReviewed);
    }
    let at = task.reviewed_at.clone().unwrap_or_default();
    if let Some(pending) = tasks::human::pending(task) {
        return Err(Miss::AwaitingHuman {
            at: pending.requested_at,
        });
    }
    let mut cover = || {
        notes.push(format!(
            "covered by the approval its task file records ({}); no review record here says which spec it was judged against",
            if at.is_empty() { "no time given" } else { &at }
        ));
    };
    if let Some(reviewed) = &task.reviewed_diff {
        if reviewed != diff {
            return Err(Miss::DiffChanged { at });
        }
        cover();
        return Ok(Cover::TaskFile { at, legacy: false });
    }
    let head_time = repo.commit_time(commit).ok();
    if approved_after(&at, head_time) {
        cover();
        return Ok(Cover::TaskFile { at, legacy: true });
    }
    Err(Miss::DiffChanged { at })
}

/// Whether an approval at `at` (RFC 3339) is not older than a head
/// committed at `head_time` (seconds since the epoch).
fn approved_after(at: &str, head_time: Option<i64>) -> bool {
    let Ok(approved) = humantime::parse_rfc3339_weak(at.trim()) else {
        return false;
    };
    let Ok(approved) = approved.duration_since(std::time::UNIX_EPOCH) else {
        return false;
    };
    match head_time.and_then(|t| u64::try_from(t).ok()) {
        Some(head) => head <= approved.as_secs(),
        None => false,
    }
}

impl Cover {
    /// Why `work` is covered at `commit`, one line for people.
    pub fn describe(&self, commit: &str) -> String {
        let commit = short(commit);
        match self {
            Cover::Approved {
                at,
                spec_recorded: true,
                source: Source::Notes,
            } => format!(
                "approved at {commit} ({at}) elsewhere, as a git note ({}) records for this very diff, against specs unchanged since",
                super::notes::REF
            ),
            Cover::Approved {
                at,
                spec_recorded: true,
                ..
            } => format!("approved at {commit} ({at}), against specs unchanged since"),
            Cover::Approved { at, .. } => format!("approved at {commit} ({at})"),
            Cover::Overridden { by, reason, at } => {
                format!("accepted at {commit} by an override ({by}, {at}): {reason}")
            }
            Cover::SameDiff { head, at } => format!(
                "the same diff was approved at {} ({at}) against unchanged specs",
                short(head)
            ),
            Cover::HumanApproved { by, at } => {
                format!("approved at {commit}, confirmed by {by} ({at})")
            }
            Cover::TaskFile { at, legacy: false } => {
                format!("approved at its current diff ({at}, as its task file records)")
            }
            Cover::TaskFile { at, legacy: true } => {
                format!("approved at {at}, and its head commit is not newer than that approval")
            }
            Cover::Merged { target } => format!(
                "merged already: the main branch at {} holds every file it changes as {commit} has it",
                short(target)
            ),
        }
    }
}

impl Miss {
    /// Why nothing covers the work at `commit`, one line for people.
    pub fn describe(&self, commit: &str) -> String {
        match self {
            Miss::NeverReviewed => "no review approved this commit".to_string(),
            Miss::ChangesRequested { at } => {
                format!("its last review requested changes ({at})")
            }
            Miss::OnlyChecks { at } => format!(
                "only an offline review ran ({at}): speed's checks passed, but no model checked the spec"
            ),
            Miss::SpecChanged { path, head, at } if head == commit => format!(
                "it was approved at this commit ({at}), but {path} has changed on the main branch since"
            ),
            Miss::SpecChanged { path, head, .. } => format!(
                "the same diff was approved at {}, but {path} has changed on the main branch since",
                short(head)
            ),
            Miss::AwaitingHuman { at } => format!(
                "the model approved it ({at}), and the approval waits for a person (review.human): speed approve or speed reject"
            ),
            Miss::HumanRejected { by, at } => {
                format!("a person ({by}) rejected the model's approval ({at})")
            }
            Miss::DiffChanged { at } => {
                format!("its approval ({at}) was of another diff: the branch has changed since")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::verdicts::Found;

    fn found(decisions: &[Decision]) -> Found {
        Found {
            records: decisions
                .iter()
                .enumerate()
                .map(|(i, d)| Record {
                    task: Some("3".into()),
                    feature: None,
                    defect: None,
                    head_commit: "a".repeat(40),
                    decision: *d,
                    at: format!("t{i}"),
                    diff: None,
                    specs: Vec::new(),
                    by: Some("Ann".into()),
                    reason: Some("why".into()),
                    via: None,
                    awaiting_human: false,
                })
                .collect(),
            source: Source::Cache,
            notes: Vec::new(),
        }
    }

    #[test]
    fn the_latest_review_decides_and_an_override_stands() {
        use Decision::*;
        assert!(matches!(
            decide_at_head(&found(&[RequestChanges, Approve])),
            Ok(Cover::Approved { .. })
        ));
        assert_eq!(
            decide_at_head(&found(&[Approve, RequestChanges])),
            Err(Miss::ChangesRequested { at: "t1".into() })
        );
        assert!(matches!(
            decide_at_head(&found(&[Override, RequestChanges])),
            Ok(Cover::Overridden { .. })
        ));
        assert_eq!(
            decide_at_head(&found(&[ChecksPassed])),
            Err(Miss::OnlyChecks { at: "t0".into() })
        );
        // An offline review after an approval revokes nothing.
        assert!(matches!(
            decide_at_head(&found(&[Approve, ChecksPassed])),
            Ok(Cover::Approved { .. })
        ));
        assert_eq!(
            decide_at_head(&found(&[RequestChanges, ChecksPassed])),
            Err(Miss::ChangesRequested { at: "t0".into() })
        );
        assert_eq!(decide_at_head(&found(&[])), Err(Miss::NeverReviewed));
    }

    #[test]
    fn an_approval_waiting_for_a_person_covers_only_once_a_person_approves() {
        use Decision::*;
        let mut waiting = found(&[Approve]);
        waiting.records[0].awaiting_human = true;
        assert_eq!(
            decide_at_head(&waiting),
            Err(Miss::AwaitingHuman { at: "t0".into() })
        );
        let mut more = found(&[Approve, Skipped, HumanApprove]);
        more.records[0].awaiting_human = true;
        assert_eq!(
            decide_at_head(&more),
            Ok(Cover::HumanApproved {
                by: "Ann".into(),
                at: "t2".into()
            })
        );
        // A skip changes nothing; a rejection revokes.
        let mut skipped = found(&[Approve, Skipped]);
        skipped.records[0].awaiting_human = true;
        assert!(matches!(
            decide_at_head(&skipped),
            Err(Miss::AwaitingHuman { .. })
        ));
        let mut rejected = found(&[Approve, HumanReject]);
        rejected.records[0].awaiting_human = true;
        assert!(matches!(
            decide_at_head(&rejected),
            Err(Miss::HumanRejected { .. })
        ));
        // A new review awaiting a person after a person's approval: waits again.
        let mut again = found(&[Approve, HumanApprove, Approve]);
        again.records[2].awaiting_human = true;
        assert!(matches!(
            decide_at_head(&again),
            Err(Miss::AwaitingHuman { .. })
        ));
    }

    #[test]
    fn an_older_approval_covers_a_head_not_newer_than_it() {
        // 2026-03-15T03:34:11Z is 1773545651.
        let at = "2026-03-15T03:34:11Z";
        assert!(approved_after(at, Some(1_773_545_651)));
        assert!(approved_after(at, Some(1_773_545_000)));
        assert!(!approved_after(at, Some(1_773_545_652)));
        assert!(!approved_after(at, None));
        assert!(approved_after(
            "2026-03-15T03:34:11.500Z",
            Some(1_773_545_651)
        ));
        assert!(!approved_after("yesterday", Some(0)));
        assert!(!approved_after("", Some(0)));
    }

    #[test]
    fn a_miss_says_which_approval_a_changed_spec_undid() {
        let head = "b".repeat(40);
        let here = Miss::SpecChanged {
            path: "specs/product/w.md".into(),
            head: head.clone(),
            at: "t".into(),
        };
        assert!(here.describe(&head).contains("approved at this commit"));
        let elsewhere = here.describe(&"c".repeat(40));
        assert!(
            elsewhere.contains("the same diff was approved at bbbbbbbbbb"),
            "{elsewhere}"
        );
        assert!(elsewhere.contains("specs/product/w.md has changed"));
    }
}
