//! The steps of a session: review the spec as it is now, let speed decide,
//! and on `needs_revision` hand it to the reviser (when there is one and
//! the budget allows another review) and go again, until it passes, waits
//! for a person, or is blocked. Each step is written to the session file
//! and announced as an event before the next begins.

use std::path::Path;
use std::time::Instant;

use serde_json::{Value, json};

use super::answer::{self, Feedback, Verdict};
use super::ask::{self, Ending};
use super::checks::{self, Facts};
use super::events::{Events, raw_excerpt};
use super::revise::{self, Reviser};
use super::session::{self, Session, Store};
use super::source::{self, Located, Place, Read};
use super::{Error, Job};
use crate::exit::Outcome;
use crate::llm::Provider;
use crate::prompt::{Counter, SpecCriterion, SpecReview, SpecRevision, Templates};
use crate::secrets::net;

/// How a run ended.
#[derive(Debug, Clone)]
pub struct Stop {
    pub outcome: Outcome,
    pub headline: String,
}

/// What one review came to.
enum Reviewed {
    Passed(u32),
    NeedsRevision(Vec<Feedback>, Box<Read>),
    Malformed(String),
    /// The model could not be reached (52), or refused the request (1).
    Failed(Outcome, String),
}

/// Why a session is blocked.
enum Block {
    Budget,
    Malformed(String),
    Reviser(String),
}

/// Everything a session's steps use.
pub struct Loop<'a> {
    pub job: &'a Job,
    pub located: &'a Located,
    pub place: &'a Place<'a>,
    pub root: &'a Path,
    pub store: &'a Store,
    pub events: &'a Events,
    pub templates: &'a Templates,
    pub counter: &'a Counter,
    pub provider: &'a dyn Provider,
    pub progress: &'a dyn Fn(&str),
    /// Remarks for stderr.
    pub notes: Vec<String>,
    /// speed's checks of the last spec read.
    pub facts: Facts,
}

impl Loop<'_> {
    /// Reviews (and revises) until the session passes, stops for a person
    /// or is blocked; the session is saved at every step.
    pub fn until_stop(&mut self, session: &mut Session) -> Result<Stop, Error> {
        let max = self.job.config.max_iterations;
        let reviser = self.reviser();
        loop {
            if session.reviews_in_budget() >= max {
                return self.block(session, Block::Budget);
            }
            let (feedback, read) = match self.review(session)? {
                Reviewed::Passed(n) => {
                    self.store.save(session)?;
                    return Ok(Stop {
                        outcome: Outcome::Approved,
                        headline: format!("the spec passed review {n}"),
                    });
                }
                Reviewed::Malformed(problem) => {
                    return self.block(session, Block::Malformed(problem));
                }
                Reviewed::Failed(outcome, message) => {
                    self.store.save(session)?;
                    return Ok(Stop {
                        outcome,
                        headline: message,
                    });
                }
                Reviewed::NeedsRevision(feedback, read) => (feedback, read),
            };
            if session.reviews_in_budget() >= max {
                return self.block(session, Block::Budget);
            }
            let Some(reviser) = &reviser else {
                self.store.save(session)?;
                return Ok(Stop {
                    outcome: Outcome::ChangesRequested,
                    headline: format!(
                        "the spec needs revision ({} feedback item{}): revise {} and run `{}` again",
                        feedback.len(),
                        if feedback.len() == 1 { "" } else { "s" },
                        self.located.spec_path,
                        command_line(self.job, self.located)
                    ),
                });
            };
            if let Err(reason) = self.revise(session, reviser, &read, &feedback)? {
                return self.block(session, Block::Reviser(reason));
            }
        }
    }

    /// The reviser, unless there is none or the spec is read at a commit.
    fn reviser(&mut self) -> Option<Reviser> {
        let argv = &self.job.config.reviser;
        if argv.is_empty() {
            return None;
        }
        if let Some(rev) = &self.job.target.rev {
            self.notes.push(format!(
                "the spec is read at {rev}, which speed does not revise: the reviser `{}` does not run",
                argv.join(" ")
            ));
            return None;
        }
        Some(Reviser {
            argv: argv.clone(),
            timeout: self.job.config.reviser_timeout,
            // What it returns is read again as the spec.
            max_bytes: source::MAX_DOCUMENT_BYTES,
            dir: self.root.to_path_buf(),
        })
    }

    /// One review of the spec as it is now, recorded as an iteration.
    fn review(&mut self, session: &mut Session) -> Result<Reviewed, Error> {
        let read = source::read(self.located, self.place)?;
        let facts = checks::run(
            &read.spec,
            read.prd.as_ref(),
            &read.redactions,
            &self.located.spec_path,
        );
        let n = session.last_iteration() + 1;
        let max = self.job.config.max_iterations;
        let in_budget = session.reviews_in_budget() + 1;
        let prompt = prompt(
            self.job,
            self.located,
            self.templates,
            &read,
            &facts,
            (in_budget, max),
            &session.previous_feedback(),
        );
        within_budget(self.counter.count(&prompt), self.job.budget)?;
        (self.progress)(&format!(
            "spec review {in_budget} of at most {max}: asking {} ({}) about {}",
            self.provider.name(),
            self.provider.model(),
            self.located.spec_path
        ));
        let criteria = &self.job.config.criteria;
        let parse = |raw: &str| answer::parse(raw, criteria, &read.spec);
        let schema = self
            .job
            .llm
            .structured_output
            .then(|| ("spec_review".to_string(), answer::json_schema(criteria)));
        let (events, feature) = (self.events, &self.located.feature);
        let mut warnings = Vec::new();
        let asked = ask::ask(
            self.provider,
            &prompt,
            schema,
            &parse,
            &mut |attempt, bad| {
                let data = json!({"feature": feature, "iteration": n, "raw_output": raw_excerpt(&bad.raw),
                              "parse_error": bad.problem, "retry_number": attempt});
                if let Err(err) = events.emit("spec.review.malformed", data) {
                    warnings.push(format!("warning: {err}"));
                }
            },
        );
        self.warn(warnings);
        if asked.leaks > 0 {
            self.notes.push(format!(
                "the secrets net replaced {} credential(s) in what was sent to or received from the model",
                asked.leaks
            ));
        }
        let mut result = json!({
            "checks": facts.findings,
            "calls": asked.calls,
        });
        let raw: Vec<&str> = asked.unusable.iter().map(|u| u.raw.as_str()).collect();
        if !raw.is_empty() {
            result["raw_answers"] = json!(raw);
        }
        let last_problem = asked.unusable.last().map(|u| u.problem.clone());
        self.facts = facts;
        let answer = match asked.ending {
            Ending::Failed { outcome, message } => return Ok(Reviewed::Failed(outcome, message)),
            Ending::Malformed => {
                let problem = last_problem.unwrap_or_default();
                result["verdict"] = json!("malformed");
                result["error"] = json!(problem);
                push(session, n, &read.spec_hash, result);
                return Ok(Reviewed::Malformed(problem));
            }
            Ending::Answer(answer) => answer,
        };
        let decision = answer::decide(&answer, criteria, &self.facts, &read.spec);
        result["verdict"] = json!(decision.verdict);
        result["model_verdict"] = json!(answer.verdict);
        result["scores"] = answer.scores_json();
        result["feedback"] = json!(decision.feedback);
        result["overrules"] = json!(decision.overrules);
        push(session, n, &read.spec_hash, result);
        let scores = answer.scores_json();
        (self.progress)(&format!(
            "review {n}: {} ({})",
            decision.verdict.as_str(),
            scores_line(&answer.scores)
        ));
        self.emit(
            "spec.review.iteration",
            json!({"feature": feature, "iteration": n, "verdict": decision.verdict,
                   "scores": scores, "feedback": decision.feedback, "overrules": decision.overrules}),
        );
        if decision.verdict == Verdict::Pass {
            session.final_verdict = session::PASS.to_string();
            self.emit(
                "spec.review.passed",
                json!({"feature": feature, "prd_path": session.prd_path, "specs_path": session.specs_path,
                       "iteration": n, "scores": scores}),
            );
            return Ok(Reviewed::Passed(n));
        }
        self.emit(
            "spec.review.feedback",
            json!({"feature": feature, "iteration": n, "feedback": decision.feedback, "scores": scores}),
        );
        self.store.save(session)?;
        Ok(Reviewed::NeedsRevision(decision.feedback, Box::new(read)))
    }

    /// Runs the reviser and writes what it returns over the spec; Err says
    /// why the revision was not made (the session is then blocked).
    fn revise(
        &mut self,
        session: &mut Session,
        reviser: &Reviser,
        read: &Read,
        feedback: &[Feedback],
    ) -> Result<Result<(), String>, Error> {
        let lines: Vec<String> = feedback.iter().map(Feedback::line).collect();
        let input = self.templates.spec_revise_prompt(&SpecRevision {
            spec_path: &self.located.spec_path,
            spec: &read.spec.text,
            prd: read
                .prd
                .as_ref()
                .map(|d| (d.path.as_str(), d.text.as_str())),
            feedback: &lines,
        });
        let input = net::text(&input).text;
        (self.progress)(&format!(
            "revising {} with `{}`",
            self.located.spec_path,
            reviser.shown()
        ));
        let started = Instant::now();
        let outcome = reviser
            .run(&input)
            .map_err(|e| ("failed", e))
            .and_then(|out| {
                revise::accept(&read.spec, &net::text(&out).text, feedback)
                    .map_err(|e| ("refused", format!("the reviser's answer was refused: {e}")))
            })
            .and_then(|text| match self.unchanged_since(read) {
                true => Ok(text),
                false => Err((
                    "refused",
                    format!(
                        "{} changed in the working tree while the reviser ran: it was not overwritten",
                        self.located.spec_path
                    ),
                )),
            });
        // Stopping (Ctrl-C) is not a failed revision; once under way, the
        // spec, the kept text and the session are written together.
        let Some(_hold) = crate::interrupt::hold() else {
            return Err(Error::Input(
                "interrupted: the spec was not revised".to_string(),
            ));
        };
        let mut revision = json!({"reviser": reviser.shown(),
                                  "duration_ms": started.elapsed().as_millis() as u64});
        let done = match outcome {
            Ok(text) => {
                let kept = self.store.keep_text(
                    &self.located.feature,
                    &read.spec_hash,
                    &read.spec.text,
                )?;
                let path = self.root.join(&self.located.spec_path);
                crate::fsx::write_atomic(self.root, &path, text.as_bytes())?;
                revision["status"] = json!("applied");
                revision["previous_text"] = json!(kept);
                revision["spec_hash"] = json!(crate::digest::sha256_text(&text));
                (self.progress)(&format!(
                    "revised {} (its previous text is kept in {kept})",
                    self.located.spec_path
                ));
                Ok(())
            }
            Err((status, reason)) => {
                revision["status"] = json!(status);
                revision["reason"] = json!(reason);
                Err(reason)
            }
        };
        if let Some(last) = session.iterations.last_mut() {
            last["result"]["revision"] = revision;
        }
        self.store.save(session)?;
        Ok(done)
    }

    /// Whether the working tree's spec is still the text that was reviewed.
    fn unchanged_since(&self, read: &Read) -> bool {
        std::fs::read(self.root.join(&self.located.spec_path))
            .is_ok_and(|bytes| crate::digest::sha256(&bytes) == read.spec_hash)
    }

    /// Ends the session blocked, with the reason and what a person can do.
    fn block(&mut self, session: &mut Session, why: Block) -> Result<Stop, Error> {
        let feature = &self.located.feature;
        let spec = &self.located.spec_path;
        let max = self.job.config.max_iterations;
        let resume = format!(
            "Run `{} --resume` for a fresh budget of {max} reviews",
            command_line(self.job, self.located)
        );
        let last = session.last_iteration();
        let show = format!(
            "Read the feedback of review {last}: `speed show --spec {feature}`, or {}",
            Store::relative_path(feature)
        );
        let (outcome, reason, recovery) = match why {
            Block::Budget => (
                Outcome::Blocked,
                format!("max iterations exhausted: {max} reviews without a pass"),
                vec![
                    show,
                    format!("Edit {spec} to address it"),
                    resume,
                    format!(
                        "Or raise spec_review.max_iterations (now {max}) in .speed/config.toml"
                    ),
                ],
            ),
            Block::Malformed(problem) => (
                Outcome::InvalidOutput,
                format!(
                    "malformed output: the model's answer was still invalid after one corrective retry: {problem}"
                ),
                vec![
                    format!(
                        "Check the model ([llm] in .speed/config.toml): both of its answers are in {}",
                        Store::relative_path(feature)
                    ),
                    resume,
                ],
            ),
            Block::Reviser(problem) => (
                Outcome::Blocked,
                format!("the revision failed: {problem}"),
                vec![
                    show,
                    format!("Fix the reviser command, or revise {spec} by hand"),
                    resume,
                ],
            ),
        };
        session.block(reason.clone(), recovery.clone());
        self.emit(
            "spec.review.blocked",
            json!({"feature": feature, "reason": reason, "iterations": session.iterations,
                   "recovery_actions": recovery, "current_specs_path": spec}),
        );
        self.store.save(session)?;
        Ok(Stop {
            outcome,
            headline: format!("the spec review is blocked: {reason}"),
        })
    }

    fn emit(&mut self, kind: &'static str, data: Value) {
        if let Err(err) = self.events.emit(kind, data) {
            self.notes.push(format!("warning: {err}"));
        }
    }

    fn warn(&mut self, warnings: Vec<String>) {
        self.notes.extend(warnings);
    }
}

/// Appends an iteration to the session.
fn push(session: &mut Session, n: u32, spec_hash: &str, result: Value) {
    session.iterations.push(json!({
        "iteration": n,
        "result": result,
        "spec_hash": spec_hash,
        "timestamp": session::timestamp(std::time::SystemTime::now()),
    }));
}

fn scores_line(scores: &[(String, u8)]) -> String {
    scores
        .iter()
        .map(|(name, score)| format!("{name} {score}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The review prompt for the spec as read.
pub fn prompt(
    job: &Job,
    located: &Located,
    templates: &Templates,
    read: &Read,
    facts: &Facts,
    iteration: (u32, u32),
    previous: &[String],
) -> String {
    let criteria: Vec<SpecCriterion> = job
        .config
        .criteria
        .iter()
        .map(|c| SpecCriterion {
            name: &c.name,
            description: &c.description,
            min_score: c.min_score,
        })
        .collect();
    let mut checks: Vec<String> = Vec::new();
    if !facts.requirements.is_empty() {
        let traced = facts
            .requirements
            .iter()
            .filter(|t| !t.sections.is_empty())
            .count();
        checks.push(format!(
            "- {traced} of the PRD's {} requirements are traced to a section of the spec",
            facts.requirements.len()
        ));
    }
    checks.extend(facts.findings.iter().map(checks::Finding::line));
    let mut notices = Vec::new();
    if let Some(rev) = &job.target.rev {
        notices.push(format!(
            "The spec and the PRD are read as committed at {rev}."
        ));
    }
    let schema =
        serde_json::to_string(&answer::json_schema(&job.config.criteria)).unwrap_or_default();
    templates.spec_review_prompt(&SpecReview {
        notices: &notices,
        feature: &located.feature,
        iteration,
        criteria: &criteria,
        spec_path: &located.spec_path,
        spec: &read.spec.text,
        prd: read
            .prd
            .as_ref()
            .map(|d| (d.path.as_str(), d.text.as_str())),
        checks: &checks,
        previous,
        schema: &schema,
    })
}

/// A spec is reviewed whole: a prompt over the budget is refused, never cut.
pub fn within_budget(tokens: usize, budget: usize) -> Result<(), Error> {
    if tokens <= budget {
        return Ok(());
    }
    Err(Error::Input(format!(
        "the spec review prompt is {tokens} tokens, more than the budget of {budget} \
         (review.token_budget, or --budget): a spec is reviewed whole, so raise the budget or split the spec"
    )))
}

/// The command that runs this review again, for recovery actions.
pub fn command_line(job: &Job, located: &Located) -> String {
    let mut line = format!("speed spec review {}", located.feature);
    if job.target.spec.is_some() {
        line.push_str(&format!(" --spec {}", located.spec_path));
    }
    if let Some(prd) = &job.target.prd {
        line.push_str(&format!(" --prd {prd}"));
    }
    line
}
