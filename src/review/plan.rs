//! Which subjects a review command reviews: the tasks named, or in batch
//! mode every `done` task whose last approval does not cover its current
//! diff and every defect whose state says `fixed` (each skipped one with
//! why), a branch with its specs and criteria, or one defect. A model's
//! approval that waits for a person (`review.human`) covers nothing: batch
//! mode lists it as waiting, and does not ask the model again about the
//! same diff. A task that
//! cannot be read is reported, never skipped in silence.

use crate::defects::{self, Defect};
use std::collections::HashMap;

use crate::git::{MainBranch, Repository};
use crate::ledger::{self, Report, covers};
use crate::tasks::{self, Status, Task};
use crate::work::{self, DefectReview, Standing, Subject};

use super::Error;
use super::context::{Context, Target};
use super::{shard, waiting};

/// What a review command found to do.
pub struct Plan {
    pub subjects: Vec<Subject>,
    /// Tasks that could not be read: reported, but they stop no other task.
    pub unreadable: Vec<Report>,
    /// Batch mode: tasks already approved at their current diff.
    pub skipped: Vec<Skipped>,
    pub batch_mode: bool,
    /// Batch mode: the task files read (in the chosen feature), so "nothing
    /// to review" can say what it looked at.
    pub tasks_read: usize,
    /// Batch mode: the tasks read whose status is not `done`, by status
    /// (`pending`, `running`, …), so "nothing to review" accounts for every
    /// task file it read.
    pub not_done: Vec<(String, usize)>,
    /// Batch mode: the defects whose state says `fixed`.
    pub defects_read: usize,
    /// `--shard K/N`: the subjects left to the other shards.
    pub other_shards: usize,
    /// Batch mode: the subjects waiting in a provider batch (in `skipped`).
    pub waiting: usize,
    /// Approved tasks reviewed again, each with why: in batch mode, why its
    /// approval no longer covers it; with `--task-id`, that one still does.
    pub reselected: Vec<Skipped>,
    /// `--shard K/N`: what this shard holds.
    pub share: Option<shard::Share>,
}

/// The tasks (or the branch, or the defect) to review, from the target.
pub fn plan(ctx: &Context) -> Result<Plan, Error> {
    let store = tasks::Store::open(&ctx.root);
    let mut gathered = Plan {
        subjects: Vec::new(),
        unreadable: Vec::new(),
        skipped: Vec::new(),
        batch_mode: false,
        tasks_read: 0,
        not_done: Vec::new(),
        defects_read: 0,
        other_shards: 0,
        waiting: 0,
        reselected: Vec::new(),
        share: None,
    };
    match &ctx.config.target {
        Target::Tasks { ids, feature } if !ids.is_empty() => {
            let repo = Repository::open(&ctx.root)?;
            for id in ids {
                match store.find(id, feature.as_deref()) {
                    // Merged whatever `--force` says: its diff against main
                    // is no longer its work.
                    Ok(task) => match merged_task(&repo, ctx.main(), &task) {
                        Some(merged) => gathered.skipped.push(merged),
                        None => {
                            if let Some(note) = still_covered(ctx, &task) {
                                gathered.reselected.push(note);
                            }
                            gathered.subjects.push(Subject::Task(Box::new(task)));
                        }
                    },
                    Err(err) => gathered.unreadable.push(Report::unreadable(
                        Some(id.clone()),
                        feature.clone(),
                        err.to_string(),
                    )),
                }
            }
        }
        Target::Tasks { feature, .. } => {
            let (all, broken) = store.scan()?;
            gathered.unreadable.extend(
                broken
                    .into_iter()
                    .map(|err| Report::unreadable(None, None, err.to_string())),
            );
            let all: Vec<tasks::Task> = all
                .into_iter()
                .filter(|t| feature.is_none() || t.feature == *feature)
                .collect();
            gathered.tasks_read = all.len();
            gathered.not_done = not_done(&all);
            // Defects belong to no feature: a batch of one feature leaves them out.
            let fixed = match feature {
                None => gather_fixed_defects(ctx, &mut gathered)?,
                Some(_) => Vec::new(),
            };
            let selected = select(ctx, all, ctx.config.force)?;
            gathered.reselected = selected.reselected;
            gathered.subjects = selected
                .tasks
                .into_iter()
                .map(|t| Subject::Task(Box::new(t)))
                .collect();
            gathered.skipped = selected.skipped;
            let (selected, skipped) = select_defects(ctx, fixed, ctx.config.force)?;
            gathered.subjects.extend(
                selected
                    .into_iter()
                    .map(|d| Subject::Defect(Box::new(DefectReview::new(d, false)))),
            );
            gathered.skipped.extend(skipped);
            if !ctx.config.force {
                gathered.waiting = skip_waiting(ctx, &mut gathered.subjects, &mut gathered.skipped);
            }
            gathered.batch_mode = true;
        }
        Target::Defect { name, update_state } => match defects::Store::open(&ctx.root).find(name) {
            Ok(defect) if *update_state && defect.state.is_none() => {
                let missing = defects::Error::Missing {
                    path: defect.file(defects::store::STATE),
                    why: "--update-state changes the defect's state.json, and there is none",
                };
                gathered
                    .unreadable
                    .push(Report::unreadable_defect(name, missing.to_string()));
            }
            Ok(defect) => {
                let repo = Repository::open(&ctx.root)?;
                let approved = defect_approved_heads(&ctx.root);
                let subject = Subject::Defect(Box::new(DefectReview::new(defect, *update_state)));
                match merged_defect(&repo, ctx.main(), &subject, &approved) {
                    Some(merged) => gathered.skipped.push(merged),
                    None => gathered.subjects.push(subject),
                }
            }
            Err(err) => gathered
                .unreadable
                .push(Report::unreadable_defect(name, err.to_string())),
        },
        Target::Branch {
            branch,
            specs,
            criteria,
        } => {
            let criteria_path = criteria.clone();
            let criteria = match criteria {
                Some(path) => {
                    let text =
                        std::fs::read_to_string(path).map_err(|source| Error::CriteriaFile {
                            path: path.clone(),
                            source,
                        })?;
                    tasks::Criterion::parse_lines(&text)
                }
                None => Vec::new(),
            };
            gathered.subjects.push(Subject::Branch {
                branch: branch.clone(),
                specs: specs.clone(),
                criteria,
                criteria_file: criteria_path.clone(),
            });
        }
    }
    if let Some(shard) = ctx.config.shard {
        deal(shard, &mut gathered);
    }
    Ok(gathered)
}

/// `--shard K/N`: keep this shard's hand. Every candidate is dealt, those
/// to review and those that need none (approved, waiting): what a subject
/// needs can differ between runners (one saw a note another had not
/// fetched yet), the candidates cannot (the task files of the commit they
/// all checked out), so no subject is reviewed twice or left out.
fn deal(shard: shard::Shard, gathered: &mut Plan) {
    let skipped_key = |s: &Skipped| {
        shard::work_key(
            s.task_id.as_deref(),
            s.feature.as_deref(),
            s.defect.as_deref(),
        )
    };
    let subject_keys: Vec<String> = gathered.subjects.iter().map(shard::key).collect();
    let skipped_keys: Vec<String> = gathered.skipped.iter().map(skipped_key).collect();
    let hand = shard.deal(
        subject_keys
            .iter()
            .chain(skipped_keys.iter())
            .map(String::as_str),
    );
    let before = gathered.subjects.len();
    let mut keys = subject_keys.iter();
    gathered
        .subjects
        .retain(|_| keys.next().is_some_and(|k| hand.contains(k.as_str())));
    gathered.other_shards = before - gathered.subjects.len();
    let is_waiting = |s: &Skipped| s.reason.starts_with(waiting::WAITING);
    let mut keys = skipped_keys.iter();
    let mut waiting_elsewhere = 0;
    gathered.skipped.retain(|s| {
        let mine = keys.next().is_some_and(|k| hand.contains(k.as_str()));
        if !mine && is_waiting(s) {
            waiting_elsewhere += 1;
        }
        mine
    });
    gathered.waiting -= waiting_elsewhere;
    gathered
        .reselected
        .retain(|s| hand.contains(skipped_key(s).as_str()));
    let defects = gathered
        .subjects
        .iter()
        .filter(|s| matches!(s, Subject::Defect(_)))
        .count();
    gathered.share = Some(shard::Share {
        shard,
        tasks: gathered.subjects.len() - defects,
        defects,
        skipped: gathered.skipped.len(),
        others: gathered.other_shards,
    });
}

/// Batch mode leaves out what waits in a provider batch at its current
/// head: it is reviewed when the batch is collected (`--force` reviews it
/// now). Returns how many it left out.
fn skip_waiting(ctx: &Context, subjects: &mut Vec<Subject>, skipped: &mut Vec<Skipped>) -> usize {
    let waiting = waiting::Waiting::read(ctx);
    if waiting.is_empty() {
        return 0;
    }
    let before = subjects.len();
    subjects.retain(|subject| match waiting.reason(ctx, subject) {
        Some(reason) => {
            skipped.push(Skipped::new(subject, reason));
            false
        }
        None => true,
    });
    before - subjects.len()
}

/// The defects whose state says `fixed`, for a batch; those that cannot be
/// read are reported as unreadable, never skipped.
fn gather_fixed_defects(ctx: &Context, gathered: &mut Plan) -> Result<Vec<Defect>, Error> {
    let (fixed, broken) = defects::Store::open(&ctx.root).fixed()?;
    gathered.unreadable.extend(
        broken
            .into_iter()
            .map(|b| Report::unreadable_defect(&b.name, b.error.to_string())),
    );
    gathered.defects_read = fixed.len();
    Ok(fixed)
}

/// A task (or a defect) the batch did not send to the model, and why.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Skipped {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub defect: Option<String>,
    pub feature: Option<String>,
    pub reason: String,
    /// Not covered: the model approved this diff and a person has yet to
    /// confirm it (`speed approve`, `speed reject`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub awaiting_human: bool,
    /// Its work is on the main branch (`work::standing`): nothing to
    /// review, and its task file keeps its verdict.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub merged: bool,
    /// Its branch is gone and nothing says its work reached the main
    /// branch: left out of a batch, which it does not fail.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch_missing: Option<String>,
}

impl Skipped {
    pub fn new(subject: &Subject, reason: String) -> Skipped {
        let task = subject.task();
        Skipped {
            task_id: task.map(|t| t.id.clone()),
            defect: subject.defect().map(|d| d.defect.name.clone()),
            feature: task.and_then(|t| t.feature.clone()),
            reason,
            awaiting_human: false,
            merged: false,
            branch_missing: None,
        }
    }

    fn merged(subject: &Subject, merged: &work::Merged, main: &MainBranch) -> Skipped {
        Skipped {
            merged: true,
            ..Skipped::new(
                subject,
                format!("merged into {}: {}", main.name, merged.how),
            )
        }
    }

    fn branch_missing(subject: &Subject, branch: String, why: &str) -> Skipped {
        let reason = format!("its branch {branch} is not found, and {why}: not reviewed");
        Skipped {
            branch_missing: Some(branch),
            ..Skipped::new(subject, reason)
        }
    }

    /// "task 3" or "defect login-crash".
    pub fn label(&self) -> String {
        match (&self.task_id, &self.defect) {
            (Some(id), _) => format!("task {id}"),
            (None, Some(name)) => format!("defect {name}"),
            (None, None) => String::new(),
        }
    }
}

/// How many of `tasks` are in each status other than `done`, in status order.
fn not_done(tasks: &[Task]) -> Vec<(String, usize)> {
    let mut counts: std::collections::BTreeMap<String, usize> = std::collections::BTreeMap::new();
    for task in tasks.iter().filter(|t| t.status != Status::Done) {
        *counts.entry(task.status.as_str().to_string()).or_default() += 1;
    }
    counts.into_iter().collect()
}

/// Every `done` task whose last approval does not cover it now (its diff
/// and its spec, as `ledger::covers` decides); with `force`, approved ones
/// too. A task whose diff cannot be computed is selected, so its error is
/// reported rather than hidden; an approved task that is selected says why
/// its approval no longer covers it.
fn select(ctx: &Context, tasks: Vec<Task>, force: bool) -> Result<Selected, Error> {
    let repo = Repository::open(&ctx.root)?;
    let store = ledger::verdicts::Store::open(&ctx.root);
    let ground = covers::Ground {
        repo: &repo,
        main: ctx.main(),
        store: &store,
    };
    let mut selected = Vec::new();
    let mut skipped = Vec::new();
    let mut why = Vec::new();
    for task in tasks {
        if task.status != Status::Done {
            continue;
        }
        let subject = Subject::Task(Box::new(task.clone()));
        let reviewed = work::reviewed_head(&task);
        // A task whose work cannot be placed is reviewed, so its error is
        // reported rather than hidden.
        match work::standing(&repo, ctx.main(), &subject, reviewed.as_deref()) {
            Ok(Standing::Merged(merged)) => {
                skipped.push(Skipped::merged(&subject, &merged, ctx.main()));
                continue;
            }
            Ok(Standing::Gone { branch, why }) => {
                skipped.push(Skipped::branch_missing(&subject, branch, &why));
                continue;
            }
            Ok(Standing::Open) | Err(_) => {}
        }
        if force {
            selected.push(task);
            continue;
        }
        // Asked of every done task, not only those whose file says
        // approved: a CI checkout's task files never hold the approval a
        // thrown-away checkout wrote, its git note does.
        let approved = task.review_verdict.as_deref() == Some("approve");
        let Ok(resolved) = work::resolve(&repo, ctx.main(), &subject) else {
            selected.push(task);
            continue;
        };
        let head = &resolved.diff.head_commit;
        let answer = covers::covers(
            &ground,
            &covers::Question {
                work: &work::Work::of_task(&task),
                commit: head,
                current: covers::Current::Diff(&resolved.diff.sha256),
                task: Some(&task),
            },
        );
        let skip = |reason: String, awaiting_human: bool| Skipped {
            awaiting_human,
            ..Skipped::new(&subject, reason)
        };
        match answer.verdict {
            Ok(cover) => skipped.push(skip(cover.describe(head), false)),
            Err(covers::Miss::AwaitingHuman { at }) => skipped.push(skip(
                format!(
                    "approved by the model at its current diff, waiting for a person's review since {at} (speed approve or speed reject): not covered until then"
                ),
                true,
            )),
            Err(miss) => {
                if approved {
                    why.push(skip(
                        format!(
                            "reviewed again: its approval does not cover it now: {}",
                            miss.describe(head)
                        ),
                        false,
                    ));
                }
                selected.push(task);
            }
        }
    }
    Ok(Selected {
        tasks: selected,
        skipped,
        reselected: why,
    })
}

/// Batch mode's choice among the `done` tasks.
struct Selected {
    tasks: Vec<Task>,
    skipped: Vec<Skipped>,
    /// Approved tasks reviewed again, each with why.
    reselected: Vec<Skipped>,
}

/// A task named with `--task-id` whose approval covers it now: it is
/// reviewed as asked, and the user is told the approval stood.
fn still_covered(ctx: &Context, task: &Task) -> Option<Skipped> {
    // Asked whatever the task file says: a fresh checkout's file never
    // holds the approval that a git note from CI records.
    if ctx.config.dry_run {
        return None;
    }
    let repo = Repository::open(&ctx.root).ok()?;
    let store = ledger::verdicts::Store::open(&ctx.root);
    let subject = Subject::Task(Box::new(task.clone()));
    let resolved = work::resolve(&repo, ctx.main(), &subject).ok()?;
    let head = &resolved.diff.head_commit;
    let answer = covers::covers(
        &covers::Ground {
            repo: &repo,
            main: ctx.main(),
            store: &store,
        },
        &covers::Question {
            work: &work::Work::of_task(task),
            commit: head,
            current: covers::Current::Diff(&resolved.diff.sha256),
            task: Some(task),
        },
    );
    let cover = answer.verdict.ok()?;
    Some(Skipped::new(
        &subject,
        format!(
            "its approval covers it already ({}): reviewed again, as --task-id asks",
            cover.describe(head)
        ),
    ))
}

/// The fixed defects a batch reviews: each that no approval covers now
/// (`ledger::covers`, as for tasks); with `force`, all of them. A defect
/// whose diff cannot be computed is selected, so its error is reported.
fn select_defects(
    ctx: &Context,
    defects: Vec<Defect>,
    force: bool,
) -> Result<(Vec<Defect>, Vec<Skipped>), Error> {
    if defects.is_empty() {
        return Ok((defects, Vec::new()));
    }
    let repo = Repository::open(&ctx.root)?;
    let approved = defect_approved_heads(&ctx.root);
    let store = ledger::verdicts::Store::open(&ctx.root);
    let ground = covers::Ground {
        repo: &repo,
        main: ctx.main(),
        store: &store,
    };
    let mut selected = Vec::new();
    let mut skipped = Vec::new();
    for defect in defects {
        let subject = Subject::Defect(Box::new(DefectReview::new(defect.clone(), false)));
        if let Some(merged) = merged_defect(&repo, ctx.main(), &subject, &approved) {
            skipped.push(merged);
            continue;
        }
        if force {
            selected.push(defect);
            continue;
        }
        let Ok(resolved) = work::resolve(&repo, ctx.main(), &subject) else {
            selected.push(defect);
            continue;
        };
        let head = &resolved.diff.head_commit;
        let answer = covers::covers(
            &ground,
            &covers::Question {
                work: &work::Work::Defect {
                    name: defect.name.clone(),
                },
                commit: head,
                current: covers::Current::Diff(&resolved.diff.sha256),
                task: None,
            },
        );
        match answer.verdict {
            Ok(cover) => skipped.push(Skipped::new(&subject, cover.describe(head))),
            Err(_) => selected.push(defect),
        }
    }
    Ok((selected, skipped))
}

/// The head of each defect's last approval (or override) in the review
/// log: a sign its branch had work, for `work::standing`. A line that
/// cannot be read is passed over: the log is the record, not an input that
/// could approve anything.
fn defect_approved_heads(root: &std::path::Path) -> HashMap<String, String> {
    let mut heads = HashMap::new();
    let Ok(text) = std::fs::read_to_string(root.join(ledger::LOG_FILE)) else {
        return heads;
    };
    for line in text.lines() {
        let Ok(value) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if let (Some(name), Some("approve" | "override"), Some(head)) = (
            value["defect"].as_str(),
            value["decision"].as_str(),
            value["head_commit"].as_str(),
        ) {
            heads.insert(name.to_string(), head.to_string());
        }
    }
    heads
}

/// A named task whose work is on the main branch, as batch mode lists it;
/// None for any other (one whose work cannot be placed is reviewed, so its
/// error is reported).
fn merged_task(repo: &Repository, main: &MainBranch, task: &Task) -> Option<Skipped> {
    let subject = Subject::Task(Box::new(task.clone()));
    let reviewed = work::reviewed_head(task);
    match work::standing(repo, main, &subject, reviewed.as_deref()) {
        Ok(Standing::Merged(merged)) => Some(Skipped::merged(&subject, &merged, main)),
        _ => None,
    }
}

/// A defect whose fix is on the main branch; None for any other.
fn merged_defect(
    repo: &Repository,
    main: &MainBranch,
    subject: &Subject,
    approved: &HashMap<String, String>,
) -> Option<Skipped> {
    let reviewed = subject
        .defect()
        .and_then(|d| approved.get(&d.defect.name))
        .map(String::as_str);
    match work::standing(repo, main, subject, reviewed) {
        Ok(Standing::Merged(merged)) => Some(Skipped::merged(subject, &merged, main)),
        _ => None,
    }
}
