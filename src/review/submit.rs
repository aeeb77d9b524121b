//! `speed review --batch-api`: every selected review is prepared as a
//! synchronous review would be (read, lock, facts, compose), then the
//! first question of each of its parts goes into one provider batch under
//! a `custom_id` naming feature, task, head commit, part and stage. What
//! identifies each prepared review is kept under `.speed/cache/batches/`
//! (`ledger::batches`); `collect` finishes them.
//!
//! A review that needs no model (an empty diff) or fails before its prompt
//! is run as any review is, now. Nothing else is written here: no task
//! file, report or log line changes until the answers are collected.

use std::collections::HashSet;

use crate::ledger::batches::{Batch, Pending, Sent};
use crate::ledger::{self, Report};
use crate::llm::batch::{Api, Item, valid_custom_id};
use crate::llm::{Message, Request};
use crate::work::Subject;

use super::Events;
use super::ask::{Models, Pacer};
use super::context::Context;
use super::prepare::{self, Prepared, Read};

/// What submitting did.
pub struct Submission {
    /// Reviews decided now (an empty diff) or failed before their prompt:
    /// recorded like any review.
    pub reports: Vec<Report>,
    /// The batch submitted, as kept; None when no review needed a model.
    pub batch: Option<Batch>,
}

/// Why the batch could not be submitted or kept.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("the batch could not be submitted: {0}")]
    Submit(#[source] crate::llm::Error),
    /// The provider accepted it, but its state could not be written.
    #[error(
        "{provider} batch {id} was submitted, but speed could not keep its state ({source}): its answers cannot be collected; cancel it with the provider"
    )]
    Keep {
        provider: String,
        id: String,
        source: Box<ledger::Error>,
    },
}

/// Prepare every subject and submit their model calls as one batch.
pub fn submit(
    ctx: &Context,
    models: &Models,
    pacer: &Pacer,
    events: &dyn Events,
    api: &dyn Api,
    subjects: Vec<Subject>,
    on_report: &mut dyn FnMut(&Report),
) -> Result<Submission, Error> {
    let mut reports = Vec::new();
    let mut items = Vec::new();
    let mut pending = Vec::new();
    let mut taken = HashSet::new();
    for subject in subjects {
        if crate::interrupt::requested() {
            break;
        }
        match prepared(ctx, subject.clone()) {
            Ok(Some(prepared)) => {
                let (review, requests) = requests_of(ctx, &prepared, &mut taken);
                items.extend(requests);
                pending.push(review);
            }
            // Decided without a model, as a synchronous review is.
            Ok(None) => {
                let report = super::run::review(ctx, models, pacer, events, subject);
                on_report(&report);
                reports.push(report);
            }
            // As a synchronous review that fails before its prompt: its
            // error, and nothing written.
            Err(message) => {
                let mut report = Report::new(&subject);
                report.error = Some(message);
                report.outcome = crate::exit::Outcome::Error;
                on_report(&report);
                reports.push(report);
            }
        }
    }
    if items.is_empty() {
        return Ok(Submission {
            reports,
            batch: None,
        });
    }
    let submitted = api.submit(&items).map_err(Error::Submit)?;
    let batch = Batch {
        version: 1,
        id: submitted.id,
        provider: api.provider().as_str().to_string(),
        model: api.model().to_string(),
        input_file: submitted.input_file,
        submitted_at: ledger::now_rfc3339(),
        status: submitted.status,
        polled_at: None,
        incremental: ctx.config.incremental,
        budget: Some(ctx.config.budget),
        guardian_off: ctx.config.guardian.skip_reason.clone(),
        specs: ctx.config.spec_args.clone(),
        main: Some(ctx.main().name.clone()),
        reviews: pending,
    };
    ledger::batches::save(&ctx.root, &batch).map_err(|source| Error::Keep {
        provider: batch.provider.clone(),
        id: batch.id.clone(),
        source: Box::new(source),
    })?;
    Ok(Submission {
        reports,
        batch: Some(batch),
    })
}

/// The subject prepared under its lock; None when it needs no model (an
/// empty diff), an error when it cannot be prepared: `run` then decides
/// or reports it as a synchronous review would.
fn prepared(ctx: &Context, subject: Subject) -> Result<Option<Prepared>, String> {
    let (_lock, subject) =
        super::run::locked(ctx, &super::Silent, subject).map_err(|failure| failure.1)?;
    let inputs = match prepare::read(ctx, subject).map_err(|e| e.to_string())? {
        Read::Inputs(inputs) => inputs,
        Read::NothingImplemented(_) => return Ok(None),
    };
    prepare::prepare(ctx, *inputs)
        .map(Some)
        .map_err(|e| e.to_string())
}

/// A prepared review's requests: the first question of each part, exactly
/// as `ask` sends it (the prompt through the safety net, the schema when
/// structured output is on), and what the state keeps of it.
fn requests_of(
    ctx: &Context,
    prepared: &Prepared,
    taken: &mut HashSet<String>,
) -> (Pending, Vec<Item>) {
    let schema = super::ask::review_schema(ctx, prepared);
    let head = &prepared.resolved.diff.head_commit;
    let identity = Identity::of(&prepared.subject);
    let parts = prepared.composed.prompts.len();
    let mut requests = Vec::with_capacity(parts);
    let mut items = Vec::with_capacity(parts);
    for (n, prompt) in prepared.composed.prompts.iter().enumerate() {
        let mut text = prompt.text.clone();
        // What `ask` sends is what the net left of the prompt; its leaks
        // are found and reported again when the review is collected.
        crate::secrets::net::redact_in_place(&mut text, "the review prompt");
        let cache_prefix = super::ask::stable_prefix(
            &prompt.text,
            &text,
            Some(prompt.stable_prefix).filter(|n| *n > 0),
        );
        let custom_id = custom_id(&identity, head, n + 1, "review", taken);
        requests.push(Sent {
            custom_id: custom_id.clone(),
            part: n + 1,
            parts,
            stage: "review".to_string(),
            prompt: crate::digest::sha256_text(&text),
        });
        items.push(Item {
            custom_id,
            request: Request {
                system: None,
                messages: vec![Message::user(text)],
                json_schema: schema.clone(),
                cache_prefix,
            },
        });
    }
    let review = Pending {
        task: identity.task.clone(),
        feature: identity.feature.clone(),
        defect: identity.defect.clone(),
        update_state: prepared
            .subject
            .defect()
            .is_some_and(|review| review.update_state),
        branch: prepared.resolved.branch.clone(),
        head_commit: head.clone(),
        diff: prepared.resolved.diff.sha256.clone(),
        requests,
    };
    (review, items)
}

/// Who a review is about, as the state names it.
struct Identity {
    task: Option<String>,
    feature: Option<String>,
    defect: Option<String>,
}

impl Identity {
    fn of(subject: &Subject) -> Identity {
        match subject {
            Subject::Task(task) => Identity {
                task: Some(task.id.clone()),
                feature: task.feature.clone(),
                defect: None,
            },
            Subject::Defect(review) => Identity {
                task: None,
                feature: None,
                defect: Some(review.defect.name.clone()),
            },
            // `--branch` conflicts with `--batch-api`.
            Subject::Branch { branch, .. } => Identity {
                task: None,
                feature: None,
                defect: Some(branch.clone()),
            },
        }
    }
}

/// `feature_task_head_pN_stage`, each name cut to fit the providers' 64
/// characters of `[A-Za-z0-9_-]`; a name that collides once cut becomes a
/// hash of the whole identity.
fn custom_id(
    identity: &Identity,
    head: &str,
    part: usize,
    stage: &str,
    taken: &mut HashSet<String>,
) -> String {
    let head: String = head.chars().take(10).collect();
    let named = match (&identity.task, &identity.defect) {
        (Some(task), _) => format!(
            "{}_{}_{head}_p{part}_{stage}",
            slug(identity.feature.as_deref().unwrap_or("-"), 16),
            slug(task, 16)
        ),
        (None, Some(defect)) => format!("d-{}_{head}_p{part}_{stage}", slug(defect, 30)),
        (None, None) => format!("x_{head}_p{part}_{stage}"),
    };
    if valid_custom_id(&named) && taken.insert(named.clone()) {
        return named;
    }
    let whole = format!(
        "{:?}\0{:?}\0{:?}\0{head}\0{part}\0{stage}\0{}",
        identity.task,
        identity.feature,
        identity.defect,
        taken.len()
    );
    let hashed = crate::digest::sha256_text(&whole);
    let hashed = format!("h{}_p{part}_{stage}", &hashed["sha256:".len()..][..24]);
    taken.insert(hashed.clone());
    hashed
}

/// Letters, digits and `-` (everything else a `-`), at most `max` of them.
fn slug(text: &str, max: usize) -> String {
    let slug: String = text
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .take(max)
        .collect();
    if slug.is_empty() {
        "-".to_string()
    } else {
        slug
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(id: &str, feature: Option<&str>) -> Identity {
        Identity {
            task: Some(id.to_string()),
            feature: feature.map(str::to_string),
            defect: None,
        }
    }

    #[test]
    fn custom_ids_name_feature_task_head_part_and_stage() {
        let mut taken = HashSet::new();
        let head = "0123456789abcdef";
        let id = custom_id(&task("3", Some("shop")), head, 1, "review", &mut taken);
        assert_eq!(id, "shop_3_0123456789_p1_review");
        let id = custom_id(&task("3", Some("shop")), head, 2, "review", &mut taken);
        assert_eq!(id, "shop_3_0123456789_p2_review");
        let defect = Identity {
            task: None,
            feature: None,
            defect: Some("login crash/é".to_string()),
        };
        let id = custom_id(&defect, head, 1, "review", &mut taken);
        assert_eq!(id, "d-login-crash--_0123456789_p1_review");
    }

    #[test]
    fn long_or_colliding_names_stay_valid_and_unique() {
        let mut taken = HashSet::new();
        let long = "x".repeat(300);
        let a = custom_id(
            &task(&format!("{long}a"), Some(&long)),
            "h",
            1,
            "review",
            &mut taken,
        );
        let b = custom_id(
            &task(&format!("{long}b"), Some(&long)),
            "h",
            1,
            "review",
            &mut taken,
        );
        assert!(valid_custom_id(&a) && valid_custom_id(&b), "{a} {b}");
        assert_ne!(a, b);
        let c = custom_id(
            &task(&format!("{long}c"), Some(&long)),
            "h",
            1,
            "review",
            &mut taken,
        );
        assert!(valid_custom_id(&c) && c != a && c != b);
    }
}
