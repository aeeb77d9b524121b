//! A review in parts. When the diff does not fit one prompt, further
//! prompts, each with the spec, the criteria and the instructions, show
//! what the earlier ones could not (a hunk too large for one prompt, piece
//! by piece), up to `review.max_parts`; each shows some code. What is left
//! after the last one is unseen code: the coverage says how much, and the
//! decision refuses to approve it.
//!
//! Each part sends the spec sections its own code touches: its prompt is
//! assembled once with the review's ranking, then again with the sections
//! ranked against the identifiers of the code that first assembly showed
//! (`Respec`), so the sentence a part's code may violate is sent with that
//! code, not only with the part whose code decided the review's ranking.

use crate::git::Diff;
use crate::prompt::{self, At, Coverage, DiffPart, Prompt};

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

/// The spec sections ranked against the identifiers a part's code changes
/// (the review's own references and task text unchanged).
pub type Respec<'a> = &'a dyn Fn(&[String]) -> Vec<prompt::SpecSection>;

/// The parts of a review whose whole prompt is `whole`, each asking for an
/// answer of `schema` as the whole prompt does, each with the spec sections
/// `respec` ranks for its code.
pub fn split(
    ctx: &Context,
    parts: &Parts,
    diff: &Diff,
    spec_sections: &[prompt::SpecSection],
    respec: Respec,
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
        let assemble = |spec: Vec<prompt::SpecSection>| {
            let mut input = parts.input(kind, diff, spec, parts.vision.clone(), schema);
            input.part = Some(part.clone());
            prompt::assemble(
                &input,
                ctx.counter.get()?,
                ctx.config.budget,
                &ctx.templates,
            )
            .map_err(Error::from)
        };
        let first = match assemble(spec_sections.to_vec()) {
            // What is left cannot be shown (a line longer than a prompt):
            // it is unseen code, which no review approves.
            Err(Error::Prompt(prompt::Error::NoRoomForCode { .. })) if !prompts.is_empty() => {
                left = Some(part);
                break;
            }
            other => other?,
        };
        // The same part with the sections its code touches, when they
        // differ from the review's; kept when it still shows code.
        let own = respec(&identifiers(diff, &part, first.rest.as_ref()));
        let prompt = if same_choice(&own, spec_sections) {
            first
        } else {
            match assemble(own) {
                Ok(p) if p.rest.as_ref().map(|r| &r.from) != Some(&part.from) => p,
                _ => first,
            }
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

/// Whether two rankings choose the same sections the same way.
fn same_choice(a: &[prompt::SpecSection], b: &[prompt::SpecSection]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            x.doc_path == y.doc_path
                && x.heading_path == y.heading_path
                && x.related == y.related
                && x.required == y.required
        })
}

/// The identifiers on the changed lines of code a part shows (from `part`
/// up to `rest`; not comments or docs), most frequent first, and the words
/// of those files' paths: what ranks the spec sections for that part's
/// code.
pub fn identifiers(diff: &Diff, part: &DiffPart, rest: Option<&DiffPart>) -> Vec<String> {
    let mut lines: Vec<&str> = Vec::new();
    let mut paths: Vec<&str> = Vec::new();
    for (i, file) in diff.files.iter().enumerate() {
        let Some(from) = part.from.get(i).copied().flatten() else {
            continue;
        };
        let until = rest
            .and_then(|r| r.from.get(i).copied().flatten())
            .unwrap_or(At::hunk(file.hunks.len()));
        if until <= from {
            continue;
        }
        paths.push(&file.path);
        let code = prompt::code_flags(file);
        for (h, (hunk, code)) in file.hunks.iter().zip(&code).enumerate() {
            for (l, (line, code)) in hunk.lines.iter().zip(code).enumerate() {
                let at = At { hunk: h, line: l };
                if at >= from && at < until && *code {
                    lines.push(&line.text);
                }
            }
        }
    }
    crate::review::sources::identifiers_of(lines.into_iter().chain(paths))
}
