//! The guardian gate: after an approval, a second model call sees the product
//! vision, the spec sections the review used, the task and the diff, and may
//! turn the approval into request_changes. A guardian that cannot answer does
//! not confirm the approval.

use crate::verdict::{self, GuardianVerdict};

use super::Events;
use super::model::{self, Failure, Pacer, Question};
use super::prepare::{Prepared, Shared};
use super::report::{Evidence, GuardianOutcome};
use super::single::Models;

pub enum Gate {
    /// aligned, flagged, or skipped: the approval stands.
    Confirmed(GuardianOutcome),
    /// rejected: the approval becomes request_changes with this feedback.
    Rejected(GuardianOutcome, String),
    /// The guardian could not answer: the approval is not confirmed.
    Unavailable(GuardianOutcome, Failure),
}

pub fn run(
    shared: &Shared,
    models: &Models,
    pacer: &Pacer,
    events: &dyn Events,
    prepared: &Prepared,
    evidence: &mut Evidence,
) -> Gate {
    let settings = &shared.settings.guardian;
    if let Some(reason) = &settings.skip_reason {
        return Gate::Confirmed(GuardianOutcome::skipped(reason));
    }
    let provider = models.guardian.as_ref();
    let unavailable = |failure: Failure| {
        let mut outcome = GuardianOutcome::not_run(&failure.message);
        outcome.status = "unavailable".to_string();
        outcome.model = Some(provider.model().to_string());
        Gate::Unavailable(outcome, failure)
    };
    let mut prompt = match super::prepare::guardian_prompt(shared, prepared) {
        Ok(prompt) => prompt,
        Err(err) => {
            return unavailable(Failure {
                outcome: crate::exit::Outcome::Error,
                message: format!("the guardian prompt could not be built: {err}"),
            });
        }
    };
    evidence.leaks.extend(crate::secrets::net::redact_in_place(
        &mut prompt.text,
        "the guardian prompt",
    ));
    evidence.guardian_prompt = Some(prompt.text.clone());
    let label = prepared.subject.label();
    let schema = shared
        .settings
        .llm
        .structured_output
        .then(|| ("guardian".to_string(), verdict::guardian_json_schema()));
    let parse = |raw: &str| -> Result<GuardianVerdict, model::Rejection> {
        verdict::parse_guardian(raw).map_err(|e| model::rejection(&e))
    };
    let asked = model::ask(
        provider,
        &Question {
            stage: "guardian",
            part: None,
            label: &label,
            prompt: &prompt.text,
            reserve_tokens: prompt.total_tokens as u64
                + u64::from(shared.settings.llm.max_output_tokens),
            schema,
            parse: &parse,
        },
        pacer,
        events,
    );
    evidence.calls.extend(asked.calls);
    evidence.leaks.extend(asked.leaks);
    match asked.result {
        Err(failure) => unavailable(failure),
        Ok(answer) => {
            let outcome = GuardianOutcome::from_verdict(&answer, provider.model());
            if answer.status == verdict::GuardianStatus::Rejected {
                Gate::Rejected(outcome, verdict::guardian_feedback(&answer))
            } else {
                Gate::Confirmed(outcome)
            }
        }
    }
}
