//! A review in parts. When the diff does not fit one prompt, further
//! prompts, each with the spec, the criteria and the instructions, show
//! what the earlier ones could not (a hunk too large for one prompt, piece
//! by piece), up to `review.max_parts`; each shows some code. What is left
//! after the last one is unseen code: the coverage says how much, and the
//! decision refuses to approve it.

use crate::git::Diff;
use crate::prompt::{self, Coverage, DiffPart, Prompt};

use super::super::Error;
use super::super::context::Context;
use super::Parts;

pub struct Split {
    /// One prompt per part, in order; the whole prompt alone when the diff
    /// fits it.
    pub prompts: Vec<Prompt>,
    /// What of the diff the prompts showed, together.
    pub coverage: Coverage,
}

/// The parts of a review whose whole prompt is `whole`, each asking for an
/// answer of `schema` as the whole prompt does.
pub fn split(
    ctx: &Context,
    parts: &Parts,
    diff: &Diff,
    spec_sections: &[prompt::SpecSection],
    whole: Prompt,
    schema: &str,
) -> Result<Split, Error> {
    let max_parts = ctx.config.max_parts;
    // An offline review sends nothing: one prompt to hash is enough (a
    // dry run still shows the parts a model would be sent).
    if whole.rest.is_none() || max_parts <= 1 || ctx.sends_nothing() {
        return Ok(Split {
            coverage: prompt::coverage(diff, whole.rest.as_ref()),
            prompts: vec![whole],
        });
    }
    let kind = parts.kind;
    let mut prompts: Vec<Prompt> = Vec::new();
    let mut left = Some(DiffPart::first(diff));
    while let Some(part) = left.take() {
        if prompts.len() == max_parts {
            left = Some(part);
            break;
        }
        let mut input = parts.input(
            kind,
            diff,
            spec_sections.to_vec(),
            parts.vision.clone(),
            schema,
        );
        input.part = Some(part.clone());
        let prompt = match prompt::assemble(
            &input,
            ctx.counter.get()?,
            ctx.config.budget,
            &ctx.templates,
        ) {
            // What is left cannot be shown (a line longer than a prompt):
            // it is unseen code, which no review approves.
            Err(prompt::Error::NoRoomForCode { .. }) if !prompts.is_empty() => {
                left = Some(part);
                break;
            }
            other => other?,
        };
        if prompt.rest.as_ref().map(|r| &r.from) == Some(&part.from) {
            // Not one line of what is left fits a prompt (assembly refuses
            // a prompt with no room for code, so this is a part that could
            // only name files): more parts would show nothing more.
            left = Some(part);
            break;
        }
        left = prompt.rest.clone();
        prompts.push(prompt);
    }
    if prompts.is_empty() {
        return Ok(Split {
            coverage: prompt::coverage(diff, whole.rest.as_ref()),
            prompts: vec![whole],
        });
    }
    Ok(Split {
        coverage: prompt::coverage(diff, left.as_ref()),
        prompts,
    })
}
