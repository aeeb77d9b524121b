//! A review in parts. When the diff does not fit one prompt, further
//! prompts, each with the spec, the criteria and the instructions, show
//! what the earlier ones could not, up to `review.max_parts`. What is left
//! after the last one is unseen code: the coverage says how much, and the
//! decision refuses to approve it.

use crate::prompt::{self, Coverage, DiffPart, Prompt, SectionAccount};
use crate::specs::Section;

use super::Error;
use super::prepare::{Prepared, Shared};

pub struct Split {
    /// One prompt per part, in order; the prepared prompt alone when the
    /// diff fits it.
    pub prompts: Vec<Prompt>,
    /// What of the diff the prompts showed, together.
    pub coverage: Coverage,
}

impl Split {
    /// Every part's prompt as one text, for the report file, the prompt
    /// hash and a dry run: the prompt itself when there is one part.
    pub fn text(&self) -> String {
        if let [only] = self.prompts.as_slice() {
            return only.text.clone();
        }
        let count = self.prompts.len();
        self.prompts
            .iter()
            .enumerate()
            .map(|(n, p)| format!("===== part {} of {count} =====\n{}", n + 1, p.text))
            .collect::<Vec<_>>()
            .join("\n\n")
    }

    /// Every part's token accounting, part after part, each section named
    /// with its part when there are several.
    pub fn sections(&self) -> Vec<SectionAccount> {
        let several = self.prompts.len() > 1;
        self.prompts
            .iter()
            .enumerate()
            .flat_map(|(n, p)| {
                p.sections.iter().cloned().map(move |mut s| {
                    if several {
                        s.name = format!("{} (part {})", s.name, n + 1);
                    }
                    s
                })
            })
            .collect()
    }

    /// The spec sections some part's prompt holds: the only text a quote
    /// may come from.
    pub fn sent_sections(&self, prepared: &Prepared) -> Vec<(String, Section)> {
        if self.prompts.len() == 1 {
            return prepared.sent_sections.clone();
        }
        let documents = prepared.documents();
        let mut sent: Vec<(String, Section)> = Vec::new();
        for p in &self.prompts {
            for (path, section) in super::prepare::sent_sections(&documents, p) {
                let known = sent
                    .iter()
                    .any(|(q, s)| *q == path && s.heading_path() == section.heading_path());
                if !known {
                    sent.push((path, section));
                }
            }
        }
        sent
    }
}

pub fn split(shared: &Shared, prepared: &Prepared) -> Result<Split, Error> {
    let whole = &prepared.prompt;
    let max_parts = shared.settings.max_parts;
    // An offline review sends nothing: one prompt to hash is enough (a
    // dry run still shows the parts a model would be sent).
    let offline = shared.settings.llm.offline() && !shared.settings.dry_run;
    if whole.rest.is_none() || max_parts <= 1 || offline {
        return Ok(Split {
            coverage: prompt::coverage(&prepared.diff, whole.rest.as_ref()),
            prompts: vec![whole.clone()],
        });
    }
    let kind = prepared.parts.kind;
    let schema = serde_json::to_string(&super::prepare::verdict_schema(kind)).unwrap_or_default();
    let mut prompts: Vec<Prompt> = Vec::new();
    let mut left = Some(DiffPart::first(&prepared.diff));
    while let Some(part) = left.take() {
        if prompts.len() == max_parts {
            left = Some(part);
            break;
        }
        let mut input = prepared.parts.input(
            kind,
            &prepared.diff,
            prepared.spec_sections.clone(),
            None,
            &schema,
        );
        input.part = Some(part.clone());
        let prompt = prompt::assemble(
            &input,
            shared.counter.get()?,
            shared.settings.budget,
            &shared.templates,
        )?;
        if prompt.rest.as_ref().map(|r| &r.from_hunk) == Some(&part.from_hunk) {
            // Not one hunk of what is left fits a prompt on its own: more
            // parts would show nothing more.
            left = Some(part);
            break;
        }
        left = prompt.rest.clone();
        prompts.push(prompt);
    }
    if prompts.is_empty() {
        return Ok(Split {
            coverage: prompt::coverage(&prepared.diff, whole.rest.as_ref()),
            prompts: vec![whole.clone()],
        });
    }
    Ok(Split {
        coverage: prompt::coverage(&prepared.diff, left.as_ref()),
        prompts,
    })
}
