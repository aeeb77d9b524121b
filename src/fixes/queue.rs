//! How the queue changes: a decided review's findings merged into the
//! task's fixes (a finding seen before is the same fix; one no longer
//! found by a review that could have found it is resolved; one found
//! again after it was resolved or completed is open again), a person's
//! override of the task (its open fixes skipped, until a review of another
//! head finds them again), and a person's or `speed fix run`'s change of
//! one fix.

use std::collections::HashSet;

use crate::checks;
use crate::ledger::{self, Report};

use super::Error;
use super::found::{self, Candidate};
use super::model::{self, Event, Fix, Source, Status, word_set};
use super::store::{Owner, Store};

/// A model's rephrased finding matches an earlier one of the same file
/// when they share this much of their words.
const SIMILAR: f64 = 0.6;

/// What one review did to the queue.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Absorbed {
    pub created: usize,
    pub seen: usize,
    pub resolved: usize,
    pub reopened: usize,
}

/// The owner of a report's fixes: its task or defect (a branch reviewed
/// without a task has no queue).
pub fn owner_of(report: &Report) -> Option<Owner> {
    match (&report.task_id, &report.defect) {
        (Some(id), _) => Some(Owner::Task {
            id: id.clone(),
            feature: report.feature.clone(),
        }),
        (None, Some(defect)) => Some(Owner::Defect {
            name: defect.name.clone(),
        }),
        (None, None) => None,
    }
}

/// Merge a decided review into its owner's fixes.
pub fn absorb(
    store: &Store,
    report: &Report,
    config: &checks::Config,
    by: &str,
) -> Result<Absorbed, Error> {
    let Some(owner) = owner_of(report) else {
        return Ok(Absorbed::default());
    };
    if report.verdict.is_none() {
        return Ok(Absorbed::default());
    }
    let (candidates, judged) = found::of(report, config);
    let _lock = store.lock()?;
    let mut queue = store.load(&owner)?;
    let now = ledger::now_rfc3339();
    let head = crate::git::short(&report.head_commit).to_string();
    let mut taken: HashSet<String> = queue.fixes.iter().map(|f| f.id.clone()).collect();
    let (all, _) = store.all();
    taken.extend(all.into_iter().map(|(_, f)| f.id));
    let mut matched: HashSet<usize> = HashSet::new();
    let mut done = Absorbed::default();
    for candidate in candidates {
        match find(&queue.fixes, &candidate, &matched) {
            Some(i) => {
                matched.insert(i);
                let fix = &mut queue.fixes[i];
                seen(fix, &candidate, &At::of(report), &now);
                done.seen += 1;
                let closed = matches!(fix.status, Status::Resolved | Status::Completed);
                // An override covered the head it was given at only.
                let overridden = fix.status == Status::Skipped
                    && fix
                        .overridden_at
                        .as_deref()
                        .is_some_and(|at| at != report.head_commit);
                if (closed || overridden) && candidate.create {
                    let note = match fix.overridden_at.take().filter(|_| overridden) {
                        Some(at) => format!(
                            "found again by the review of {head}, a commit the override at {} did not cover",
                            crate::git::short(&at)
                        ),
                        None => format!("found again by the review of {head}"),
                    };
                    fix.status = Status::Pending;
                    fix.completed_at = None;
                    fix.reason = None;
                    fix.history.push(Event {
                        at: now.clone(),
                        status: Status::Pending,
                        by: by.to_string(),
                        note,
                    });
                    done.reopened += 1;
                }
            }
            None if candidate.create => {
                let fix = new_fix(&owner, candidate, &At::of(report), &now, by, &taken);
                taken.insert(fix.id.clone());
                matched.insert(queue.fixes.len());
                queue.fixes.push(fix);
                done.created += 1;
            }
            None => {}
        }
    }
    for (i, fix) in queue.fixes.iter_mut().enumerate() {
        if matched.contains(&i)
            || !fix.status.open()
            || !judged.covers(fix.source, fix.finding.check.as_deref())
        {
            continue;
        }
        fix.status = Status::Resolved;
        fix.completed_at = Some(now.clone());
        fix.history.push(Event {
            at: now.clone(),
            status: Status::Resolved,
            by: by.to_string(),
            note: format!("not found by the review of {head}"),
        });
        done.resolved += 1;
    }
    if done != Absorbed::default() {
        store.save(&owner, &queue)?;
    }
    Ok(done)
}

/// The fix a candidate is: the same fingerprint, else (for the model's
/// words, which change between answers) the most similar of the same
/// source and file.
fn find(fixes: &[Fix], candidate: &Candidate, matched: &HashSet<usize>) -> Option<usize> {
    let free = |i: &usize| !matched.contains(i);
    if let Some(i) = (0..fixes.len())
        .filter(free)
        .find(|i| fixes[*i].fingerprint == candidate.fingerprint)
    {
        return Some(i);
    }
    let fuzzy = matches!(candidate.source, Source::Model | Source::Nit)
        && candidate
            .found
            .kind
            .starts_with(if candidate.source == Source::Nit {
                "nit/"
            } else {
                "review/"
            });
    if !fuzzy {
        return None;
    }
    let words = word_set(&candidate.found.message);
    (0..fixes.len())
        .filter(free)
        .filter(|i| {
            let f = &fixes[*i];
            f.source == candidate.source
                && f.finding.kind.split('/').next() == candidate.found.kind.split('/').next()
                && f.finding.file == candidate.found.file
        })
        .map(|i| (i, similarity(&words, &word_set(&fixes[i].finding.message))))
        .filter(|(_, s)| *s >= SIMILAR)
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(i, _)| i)
}

/// Shared words over all words (Jaccard).
fn similarity(
    a: &std::collections::BTreeSet<String>,
    b: &std::collections::BTreeSet<String>,
) -> f64 {
    let union = a.union(b).count();
    if union == 0 {
        return 0.0;
    }
    a.intersection(b).count() as f64 / union as f64
}

/// Where a finding was found: the branch, its head, the report.
pub struct At<'a> {
    pub branch: &'a str,
    pub head_commit: &'a str,
    pub report: Option<&'a str>,
}

impl<'a> At<'a> {
    fn of(report: &'a Report) -> At<'a> {
        At {
            branch: &report.branch,
            head_commit: &report.head_commit,
            report: report.report_path.as_deref(),
        }
    }
}

/// A fix found again: where it is now.
fn seen(fix: &mut Fix, candidate: &Candidate, at: &At, now: &str) {
    fix.finding = candidate.found.clone();
    fix.description = candidate.description.clone();
    if candidate.create || fix.status.open() {
        fix.priority = candidate.priority;
    }
    fix.last_seen_commit = at.head_commit.to_string();
    fix.last_seen_at = now.to_string();
    if at.report.is_some() {
        fix.report = at.report.map(str::to_string);
    }
    fix.branch = at.branch.to_string();
}

/// A person's rejection (`speed reject`) into the task's fixes: their
/// reason is a fix like a review's finding (the same reason again is the
/// same fix, open again if it was closed).
pub fn absorb_person(
    store: &Store,
    owner: &Owner,
    at: &At,
    reason: &str,
    by: &str,
) -> Result<Absorbed, Error> {
    let candidate = found::person(reason, by, true);
    let _lock = store.lock()?;
    let mut queue = store.load(owner)?;
    let now = ledger::now_rfc3339();
    let mut done = Absorbed::default();
    match queue
        .fixes
        .iter()
        .position(|f| f.fingerprint == candidate.fingerprint)
    {
        Some(i) => {
            let fix = &mut queue.fixes[i];
            seen(fix, &candidate, at, &now);
            done.seen += 1;
            if !fix.status.open() {
                fix.status = Status::Pending;
                fix.completed_at = None;
                fix.history.push(Event {
                    at: now.clone(),
                    status: Status::Pending,
                    by: by.to_string(),
                    note: format!(
                        "{by} rejected {} for it again",
                        crate::git::short(at.head_commit)
                    ),
                });
                done.reopened += 1;
            }
        }
        None => {
            let (all, _) = store.all();
            let taken: HashSet<String> = all.into_iter().map(|(_, f)| f.id).collect();
            let fix = new_fix(owner, candidate, at, &now, by, &taken);
            queue.fixes.push(fix);
            done.created += 1;
        }
    }
    store.save(owner, &queue)?;
    Ok(done)
}

/// A person accepted `owner`'s task as it is at `head_commit` (`speed
/// override`): its open fixes are skipped with their reason, so no agent
/// is handed work a person decided need not be done. A later review of
/// another head that finds one again opens it again (`absorb`). The
/// number skipped.
pub fn absorb_override(
    store: &Store,
    owner: &Owner,
    head_commit: &str,
    reason: &str,
    by: &str,
) -> Result<usize, Error> {
    let _lock = store.lock()?;
    let mut queue = store.load(owner)?;
    let now = ledger::now_rfc3339();
    let why = format!(
        "accepted with speed override at {} by {by}: {reason}",
        crate::git::short(head_commit)
    );
    let mut skipped = 0;
    for fix in queue.fixes.iter_mut().filter(|f| f.status.open()) {
        fix.status = Status::Skipped;
        fix.reason = Some(why.clone());
        fix.overridden_at = Some(head_commit.to_string());
        fix.completed_at = Some(now.clone());
        fix.history.push(Event {
            at: now.clone(),
            status: Status::Skipped,
            by: by.to_string(),
            note: why.clone(),
        });
        skipped += 1;
    }
    if skipped > 0 {
        store.save(owner, &queue)?;
    }
    Ok(skipped)
}

fn new_fix(
    owner: &Owner,
    candidate: Candidate,
    at: &At,
    now: &str,
    by: &str,
    taken: &HashSet<String>,
) -> Fix {
    let key = owner.key();
    // A clash (two fingerprints whose hashes share their first digits)
    // salts the hash: another id of the same length.
    let id = (0..)
        .map(|salt| model::id(&key, &candidate.fingerprint, salt))
        .find(|id| {
            !taken.contains(id)
                && !taken
                    .iter()
                    .any(|t| t.starts_with(id.as_str()) || id.starts_with(t.as_str()))
        })
        .expect("salted hashes never run out: one is free");
    let (task, feature, defect) = match owner {
        Owner::Task { id, feature } => (Some(id.clone()), feature.clone(), None),
        Owner::Defect { name } => (None, None, Some(name.clone())),
    };
    Fix {
        id,
        task,
        feature,
        defect,
        branch: at.branch.to_string(),
        priority: candidate.priority,
        source: candidate.source,
        finding: candidate.found,
        description: candidate.description,
        status: Status::Pending,
        created_at: now.to_string(),
        completed_at: None,
        fingerprint: candidate.fingerprint,
        last_seen_commit: at.head_commit.to_string(),
        last_seen_at: now.to_string(),
        report: at.report.map(str::to_string),
        reason: None,
        overridden_at: None,
        commit: None,
        history: vec![Event {
            at: now.to_string(),
            status: Status::Pending,
            by: by.to_string(),
            note: match candidate.source {
                Source::Person => format!("{by} rejected {}", crate::git::short(at.head_commit)),
                _ => format!(
                    "found by the review of {}",
                    crate::git::short(at.head_commit)
                ),
            },
        }],
    }
}

/// A change of one fix's status.
#[derive(Debug, Clone)]
pub enum Change {
    /// A person did it (`speed fix done`).
    Done,
    /// A person will not (`speed fix skip --reason`).
    Skip { reason: String },
    /// `speed fix run` starts on it.
    Start { note: String },
    /// `speed fix run` ended: its new status, the agent's commit, why.
    Finish {
        status: Status,
        commit: Option<String>,
        note: String,
    },
}

/// Apply `change` to the fix `id` (a unique prefix will do), under the
/// queue's lock; the fix as it is now.
pub fn change(store: &Store, id: &str, change: Change, by: &str) -> Result<Fix, Error> {
    let _lock = store.lock()?;
    let (owner, found) = store.find(id)?;
    let mut queue = store.load(&owner)?;
    let fix = queue
        .fixes
        .iter_mut()
        .find(|f| f.id == found.id)
        .ok_or_else(|| Error::NoSuchFix {
            id: found.id.clone(),
        })?;
    let refuse = |fix: &Fix, what: &str| Error::State {
        id: fix.id.clone(),
        status: fix.status.as_str(),
        what: what.to_string(),
    };
    let now = ledger::now_rfc3339();
    let (status, note) = match change {
        Change::Done => {
            if matches!(fix.status, Status::Completed | Status::Resolved) {
                return Err(refuse(fix, "mark it done"));
            }
            fix.completed_at = Some(now.clone());
            (Status::Completed, "marked done".to_string())
        }
        Change::Skip { reason } => {
            if !fix.status.open() {
                return Err(refuse(fix, "skip it"));
            }
            fix.reason = Some(reason.clone());
            fix.completed_at = Some(now.clone());
            (Status::Skipped, reason)
        }
        Change::Start { note } => {
            if !fix.status.open() {
                return Err(refuse(fix, "run it"));
            }
            (Status::InProgress, note)
        }
        Change::Finish {
            status,
            commit,
            note,
        } => {
            if fix.status != Status::InProgress {
                // A review resolved it, or a person decided, meanwhile:
                // theirs stands; the run is only noted.
                fix.history.push(Event {
                    at: now,
                    status: fix.status,
                    by: by.to_string(),
                    note: format!(
                        "a fix run ended after the fix became {}: {note}",
                        fix.status.as_str()
                    ),
                });
                let fix = fix.clone();
                store.save(&owner, &queue)?;
                return Ok(fix);
            }
            if commit.is_some() {
                fix.commit = commit;
            }
            if status == Status::Completed {
                fix.completed_at = Some(now.clone());
            }
            (status, note)
        }
    };
    fix.status = status;
    fix.history.push(Event {
        at: now,
        status,
        by: by.to_string(),
        note,
    });
    let fix = fix.clone();
    store.save(&owner, &queue)?;
    Ok(fix)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::parsers::Parser;
    use crate::checks::{Category, CommandCheck, Finding, Tool};
    use crate::severity::Severity;
    use crate::verdict::{CriterionCheck, Issue, Kind, Verdict};
    use crate::work::Subject;

    fn config() -> checks::Config {
        let command = |name: &str, category| CommandCheck {
            name: name.to_string(),
            run: vec![name.to_string()],
            severity: Severity::Major,
            timeout: std::time::Duration::from_secs(9),
            tool: Tool {
                parser: Some(Parser::Mypy),
                category: Some(category),
                ..Tool::default()
            },
        };
        checks::Config {
            commands: vec![
                command("clippy", Category::Lint),
                command("mypy", Category::Typecheck),
            ],
            ..checks::Config::default()
        }
    }

    fn finding(check: &str, line: u32, message: &str) -> Finding {
        Finding {
            check: check.to_string(),
            severity: Severity::Major,
            file: Some("src/a.py".to_string()),
            line: Some(line),
            rule: Some(format!("{check}-rule")),
            message: message.to_string(),
            ..Finding::default()
        }
    }

    fn issue(severity: Severity, message: &str) -> Issue {
        Issue {
            severity,
            file: Some("src/a.py".to_string()),
            line: Some(3),
            end_line: None,
            message: message.to_string(),
            suggestion: String::new(),
            dimension: None,
        }
    }

    fn report(
        head: &str,
        verdict: Kind,
        checks: Vec<Finding>,
        answer: Option<(Vec<Issue>, bool)>,
    ) -> Report {
        let mut r = Report::new(&Subject::Branch {
            branch: "speed/task-1".into(),
            specs: Vec::new(),
            criteria: Vec::new(),
            criteria_file: None,
        });
        r.task_id = Some("1".into());
        r.head_commit = head.to_string();
        r.verdict = Some(verdict);
        r.checks = checks;
        r.review = answer.map(|(issues, met)| Verdict {
            verdict,
            expectations: String::new(),
            criteria: vec![CriterionCheck {
                id: "AC-1".into(),
                status: if met {
                    crate::verdict::CriterionStatus::Met
                } else {
                    crate::verdict::CriterionStatus::Unmet
                },
                evidence: "no test covers it".into(),
            }],
            spec_verification: Vec::new(),
            missing_from_spec: Vec::new(),
            out_of_scope: Vec::new(),
            issues,
            strengths: Vec::new(),
            defect_scope_check: None,
            scope_violations: Vec::new(),
            dimensions: Default::default(),
            rejection: None,
            previous_findings: Vec::new(),
        });
        r
    }

    fn status_of(store: &Store) -> Vec<(String, Status, u32)> {
        let mut all: Vec<(String, Status, u32)> = store
            .all()
            .0
            .into_iter()
            .map(|(_, f)| (f.finding.kind.clone(), f.status, f.priority))
            .collect();
        all.sort_by(|a, b| a.0.cmp(&b.0));
        all
    }

    #[test]
    fn an_override_skips_the_open_fixes_until_a_review_of_another_head_finds_them() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path());
        let config = config();
        let owner = Owner::Task {
            id: "1".into(),
            feature: None,
        };
        let first = report(
            "aaaaaaaaaa1",
            Kind::RequestChanges,
            vec![finding("mypy", 30, "Incompatible types in assignment")],
            Some((vec![issue(Severity::Major, "no upper bound")], false)),
        );
        absorb(&store, &first, &config, "t").unwrap();
        let open = |store: &Store| status_of(store).iter().filter(|(_, s, _)| s.open()).count();
        assert_eq!(open(&store), 3, "{:?}", status_of(&store));

        let skipped =
            absorb_override(&store, &owner, "aaaaaaaaaa1", "agreed with Bo", "Ana").unwrap();
        assert_eq!(skipped, 3);
        assert_eq!(open(&store), 0);
        let (all, _) = store.all();
        for (_, fix) in &all {
            assert_eq!(fix.status, Status::Skipped);
            assert_eq!(
                fix.reason.as_deref(),
                Some("accepted with speed override at aaaaaaaaaa by Ana: agreed with Bo")
            );
            assert_eq!(fix.overridden_at.as_deref(), Some("aaaaaaaaaa1"));
        }
        // Nothing open: a second override has nothing to skip.
        assert_eq!(
            absorb_override(&store, &owner, "aaaaaaaaaa1", "again", "Ana").unwrap(),
            0
        );

        // A review of the same head (forced) leaves them as the person
        // decided; one of a later commit that finds the type error again
        // opens that fix again, and the others stay skipped.
        absorb(&store, &first, &config, "t").unwrap();
        assert_eq!(open(&store), 0);
        let later = report(
            "bbbbbbbbbb2",
            Kind::RequestChanges,
            vec![finding("mypy", 31, "Incompatible types in assignment")],
            Some((Vec::new(), true)),
        );
        let done = absorb(&store, &later, &config, "t").unwrap();
        assert_eq!(done.reopened, 1);
        let (all, _) = store.all();
        let mypy = &all
            .iter()
            .find(|(_, f)| f.finding.kind == "check/mypy")
            .unwrap()
            .1;
        assert_eq!(mypy.status, Status::Pending);
        assert_eq!(
            (mypy.reason.as_deref(), mypy.overridden_at.as_deref()),
            (None, None)
        );
        assert!(
            mypy.history
                .last()
                .unwrap()
                .note
                .contains("the override at aaaaaaaaaa did not cover"),
            "{:?}",
            mypy.history
        );
        assert_eq!(open(&store), 1);
    }

    #[test]
    fn the_queue_follows_a_task_through_its_reviews() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path());
        let config = config();
        let preexisting = Finding {
            preexisting: true,
            advisory: true,
            ..finding("clippy", 1, "old warning")
        };
        let first = report(
            "aaaaaaaaaa1",
            Kind::RequestChanges,
            vec![
                finding("clippy", 15, "unused variable `grace`"),
                finding("mypy", 19, "Incompatible types in assignment"),
                preexisting,
            ],
            Some((
                vec![issue(
                    Severity::Major,
                    "capped_fine never applies the grace period to the fine",
                )],
                false,
            )),
        );
        let done = absorb(&store, &first, &config, "t").unwrap();
        assert_eq!(done.created, 4, "{done:?}");
        assert_eq!(
            status_of(&store),
            [
                ("check/clippy".to_string(), Status::Pending, 2),
                ("check/mypy".to_string(), Status::Pending, 1),
                ("criterion/AC-1".to_string(), Status::Pending, 3),
                ("review/major".to_string(), Status::Pending, 2),
            ]
        );
        // The same findings again: no new fix, whatever the line or wording.
        let again = absorb(&store, &first, &config, "t").unwrap();
        assert_eq!((again.created, again.resolved), (0, 0));

        // The second review: clippy's finding moved a line, the model said
        // it in other words, mypy's is gone and the criterion is met.
        let second = report(
            "bbbbbbbbbb2",
            Kind::RequestChanges,
            vec![finding("clippy", 16, "unused variable `grace`")],
            Some((
                vec![issue(
                    Severity::Major,
                    "the grace period is never applied to the fine by capped_fine",
                )],
                true,
            )),
        );
        let done = absorb(&store, &second, &config, "t").unwrap();
        assert_eq!(
            done,
            Absorbed {
                created: 0,
                seen: 2,
                resolved: 2,
                reopened: 0
            }
        );
        let states = status_of(&store);
        assert_eq!(states[1].1, Status::Resolved);
        assert_eq!(states[2].1, Status::Resolved);
        let clippy = store
            .all()
            .0
            .into_iter()
            .find(|(_, f)| f.finding.kind == "check/clippy")
            .unwrap()
            .1;
        assert_eq!(clippy.finding.line, Some(16));

        // Skipped stays skipped when found again; an offline review (no
        // model) resolves no model finding; mypy's finding coming back
        // reopens its fix.
        change(
            &store,
            &clippy.id[..6],
            Change::Skip {
                reason: "style".into(),
            },
            "t",
        )
        .unwrap();
        let offline = report(
            "cccccccccc3",
            Kind::RequestChanges,
            vec![
                finding("clippy", 16, "unused variable `grace`"),
                finding("mypy", 30, "Incompatible types in assignment"),
            ],
            None,
        );
        let done = absorb(&store, &offline, &config, "t").unwrap();
        assert_eq!((done.reopened, done.resolved), (1, 0));
        let states = status_of(&store);
        assert_eq!(states[0].1, Status::Skipped);
        assert_eq!(states[1].1, Status::Pending);
        assert_eq!(states[3].1, Status::Pending);
    }

    #[test]
    fn an_approval_leaves_its_nits_as_low_priority_fixes() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path());
        let approved = report(
            "dddddddddd4",
            Kind::Approve,
            Vec::new(),
            Some((vec![issue(Severity::Minor, "name the constant")], true)),
        );
        let done = absorb(&store, &approved, &config(), "t").unwrap();
        assert_eq!(done.created, 1);
        assert_eq!(
            status_of(&store),
            [("nit/review".to_string(), Status::Pending, 15)]
        );
    }

    #[test]
    fn a_command_that_failed_as_a_whole_resolves_none_of_its_fixes() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path());
        let config = config();
        let first = report(
            "eeeeeeeeee5",
            Kind::RequestChanges,
            vec![finding("mypy", 3, "bad types")],
            None,
        );
        absorb(&store, &first, &config, "t").unwrap();
        let crashed = Finding {
            file: None,
            line: None,
            rule: None,
            message: "`mypy` did not finish within 9s and was killed".into(),
            ..finding("mypy", 0, "")
        };
        let second = report("ffffffffff6", Kind::RequestChanges, vec![crashed], None);
        let done = absorb(&store, &second, &config, "t").unwrap();
        assert_eq!(done.resolved, 0);
        assert!(
            status_of(&store)
                .iter()
                .any(|(k, s, _)| k == "check/mypy" && *s == Status::Pending)
        );
    }

    #[test]
    fn changes_are_refused_where_they_make_no_sense() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path());
        let r = report(
            "aaaaaaaaaa7",
            Kind::RequestChanges,
            vec![finding("mypy", 3, "bad types")],
            None,
        );
        absorb(&store, &r, &config(), "t").unwrap();
        let id = store.all().0[0].1.id.clone();
        change(&store, &id, Change::Done, "t").unwrap();
        let err = change(&store, &id, Change::Done, "t")
            .unwrap_err()
            .to_string();
        assert!(err.contains("is completed"), "{err}");
        let err = change(&store, &id, Change::Skip { reason: "x".into() }, "t").unwrap_err();
        assert!(err.to_string().contains("nothing to skip"), "{err}");
        assert!(matches!(
            change(&store, "abc", Change::Done, "t"),
            Err(Error::NoSuchFix { .. })
        ));
    }
}
