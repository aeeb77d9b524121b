//! A person's word on a model's approval (`review.human`): the commands
//! `speed approve` and `speed reject`, and with `review.human = "prompt"`
//! the question asked on a terminal after a review whose approval waits:
//! the review's summary, then approve, reject or skip. Off a terminal
//! nothing is asked and the approval waits, as with `require`.
//!
//! The question reads its answers through `Answers`, so it is tested
//! without a terminal; a pseudo-terminal test drives the real binary.

use std::io::{BufRead, IsTerminal};

use super::note;
use std::path::Path;

use crate::exit::Outcome;
use crate::git::{Repository, short};
use crate::ledger::Report;
use crate::ledger::human::{self, Say};
use crate::ledger::report::HumanReview;
use crate::ledger::verdicts::Decision;
use crate::review::{Context, Human};
use crate::settings::HumanSettings;

/// `speed approve` / `speed reject`.
pub fn command(dir: &Path, settings: &HumanSettings) -> anyhow::Result<Outcome> {
    let repo = Repository::discover(dir)?;
    let via = match settings.say {
        Say::Approve(_) => "speed approve",
        _ => "speed reject",
    };
    let done = human::decide(
        repo.state_root(),
        &settings.task_id,
        settings.feature.as_deref(),
        &settings.by,
        &settings.say,
        via,
        settings.max_revisions,
    )?;
    eprintln!("{}", said(&done, &settings.by));
    queue_reason(repo.root(), &done, &settings.say, &settings.by);
    Ok(Outcome::Approved)
}

/// A person's rejection is a fix in the task's queue, like a review's
/// finding. The rejection stands whatever happens here.
fn queue_reason(root: &Path, done: &human::Recorded, say: &Say, by: &str) {
    let Say::Reject(reason) = say else {
        return;
    };
    let owner = crate::fixes::Owner::Task {
        id: done.task_id.clone(),
        feature: done.feature.clone(),
    };
    let at = crate::fixes::queue::At {
        branch: &done.branch,
        head_commit: &done.head_commit,
        report: None,
    };
    let store = crate::fixes::Store::open(root);
    if let Err(err) = crate::fixes::queue::absorb_person(&store, &owner, &at, reason, by) {
        eprintln!("warning: the fix queue could not be updated: {err}");
    }
}

/// One line on what was recorded.
fn said(done: &human::Recorded, by: &str) -> String {
    let task = format!("task {}", done.task_id);
    let at = short(&done.head_commit);
    match done.decision {
        Decision::HumanApprove => format!(
            "{task} approved by {by} at commit {at} of {}: the approval covers that commit.",
            done.branch
        ),
        Decision::HumanReject => match &done.error {
            Some(error) => format!("{task} rejected by {by}: the task failed ({error})."),
            None if done.new_revision => format!(
                "{task} rejected by {by}: back to {} with the reason as its feedback (revision {}).",
                done.status, done.revision_count
            ),
            None => format!(
                "{task} rejected by {by}: back to {} with the reason as its feedback (revision {} still: the last rejection judged this commit too).",
                done.status, done.revision_count
            ),
        },
        _ => format!("{task}: skipped by {by}; its approval still waits for a person."),
    }
}

/// Where the question's answers come from.
pub trait Answers {
    /// Show `text` to the person (the summary, the question).
    fn show(&mut self, text: &str);
    /// One line of answer; None at the end of input.
    fn line(&mut self) -> Option<String>;
}

/// The terminal: questions on stderr, answers from stdin.
struct Terminal;

impl Answers for Terminal {
    fn show(&mut self, text: &str) {
        eprint!("{text}");
    }

    fn line(&mut self) -> Option<String> {
        let mut line = String::new();
        match std::io::stdin().lock().read_line(&mut line) {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(line.trim().to_string()),
        }
    }
}

/// With `review.human = "prompt"` on a terminal: ask about every review
/// whose approval waits for a person, and record the answer.
pub fn after_reviews(ctx: &Context, reports: &mut [Report]) {
    let terminal = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    if ctx.config.human != Human::Prompt || !terminal {
        return;
    }
    let by = if ctx.actor.name.trim().is_empty() {
        "a person at the terminal".to_string()
    } else {
        ctx.actor.name.clone()
    };
    for report in reports.iter_mut() {
        let waiting = report.human_review.as_ref().is_some_and(|h| h.is_pending());
        let Some(id) = report.task_id.clone().filter(|_| waiting) else {
            continue;
        };
        let summary = report
            .summary_path
            .as_ref()
            .and_then(|p| std::fs::read_to_string(ctx.root.join(p)).ok())
            .unwrap_or_default();
        let say = ask(&mut Terminal, &id, &summary);
        let recorded = human::decide(
            &ctx.root,
            &id,
            report.feature.as_deref(),
            &by,
            &say,
            "the prompt after speed review",
            ctx.config.max_revisions,
        );
        match recorded {
            Ok(done) => {
                eprintln!("{}", said(&done, &by));
                queue_reason(&ctx.root, &done, &say, &by);
                apply(report, &done, &by, &say);
            }
            Err(err) => eprintln!("error: task {id}: {err}"),
        }
    }
}

/// The report after the person's word: a rejection is a request for
/// changes, by a person.
fn apply(report: &mut Report, done: &human::Recorded, by: &str, say: &Say) {
    let (status, reason) = match say {
        Say::Approve(note) => ("approved", note.clone().unwrap_or_default()),
        Say::Reject(reason) => ("rejected", reason.clone()),
        Say::Skip(reason) => ("skipped", reason.clone()),
    };
    report.human_review = Some(HumanReview {
        status: if matches!(say, Say::Skip(_)) {
            "pending".to_string()
        } else {
            status.to_string()
        },
        by: by.to_string(),
        at: done.at.clone(),
        reason,
    });
    if matches!(say, Say::Reject(_)) {
        report.outcome = Outcome::ChangesRequested;
        if let Some(update) = &mut report.task_update {
            update.was = update.status.clone();
            update.status = done.status.clone();
            update.revision_count = done.revision_count;
            update.new_revision = done.new_revision;
            update.error = done.error.clone();
        }
    }
}

/// Show the summary and ask until the answer is one of approve, reject or
/// skip; the end of input is a skip.
pub fn ask(io: &mut dyn Answers, task: &str, summary: &str) -> Say {
    io.show(&format!(
        "\n──── Human review: task {task} ────\n{}\nThe model approved task {task}, and review.human asks a person to confirm.\n",
        summary.trim_end()
    ));
    let skipped = || Say::Skip("no answer at the prompt".to_string());
    for _ in 0..5 {
        io.show("[a]pprove, [r]eject or [s]kip? ");
        let Some(answer) = io.line() else {
            return skipped();
        };
        match answer.to_ascii_lowercase().as_str() {
            "a" | "approve" => {
                io.show("Note (optional): ");
                let note = io.line().filter(|n| !n.trim().is_empty());
                return Say::Approve(note);
            }
            "r" | "reject" => {
                for _ in 0..5 {
                    io.show("Reason (it becomes the task's feedback): ");
                    match io.line() {
                        None => return skipped(),
                        Some(reason) if !reason.trim().is_empty() => return Say::Reject(reason),
                        Some(_) => io.show("A rejection needs a reason.\n"),
                    }
                }
                return skipped();
            }
            "s" | "skip" => {
                io.show("Why (optional): ");
                let why = io
                    .line()
                    .filter(|w| !w.trim().is_empty())
                    .unwrap_or_else(|| "skipped at the prompt".to_string());
                return Say::Skip(why);
            }
            _ => io.show("Answer a, r or s.\n"),
        }
    }
    skipped()
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Scripted {
        lines: Vec<&'static str>,
        shown: String,
    }

    impl Answers for Scripted {
        fn show(&mut self, text: &str) {
            self.shown.push_str(text);
        }

        fn line(&mut self) -> Option<String> {
            (!self.lines.is_empty()).then(|| self.lines.remove(0).to_string())
        }
    }

    fn ask_with(lines: &[&'static str]) -> (Say, String) {
        let mut io = Scripted {
            lines: lines.to_vec(),
            shown: String::new(),
        };
        let say = ask(&mut io, "3", "# Review of task 3\n");
        (say, io.shown)
    }

    #[test]
    fn each_answer_and_the_end_of_input() {
        let (say, shown) = ask_with(&["a", "fine by me"]);
        assert_eq!(say, Say::Approve(Some("fine by me".into())));
        assert!(shown.contains("# Review of task 3"), "the summary is shown");
        assert_eq!(ask_with(&["approve", ""]).0, Say::Approve(None));
        assert_eq!(
            ask_with(&["r", "", "the hint is wrong"]).0,
            Say::Reject("the hint is wrong".into())
        );
        assert_eq!(
            ask_with(&["maybe", "S", ""]).0,
            Say::Skip("skipped at the prompt".into())
        );
        assert_eq!(ask_with(&[]).0, Say::Skip("no answer at the prompt".into()));
        // A rejection without a reason never happens: the end of input skips.
        assert_eq!(
            ask_with(&["r"]).0,
            Say::Skip("no answer at the prompt".into())
        );
    }
}
