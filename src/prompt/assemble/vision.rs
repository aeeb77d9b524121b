//! The product vision's claim on a review prompt's budget: the whole
//! vision when it fits its share, else its sentences in the order the
//! pipeline ranked them (those that constrain changes, the most relevant
//! first) while the share lasts, shown in document order under a label
//! that says it is the vision, with a count of the sentences left out.
//! The guardian reads the vision its own way (`Medium::vision`).

use crate::prompt::fence::inline;
use crate::prompt::{Omission, Vision, VisionSentence};

use super::{Ctx, OMITTED_FOR_BUDGET, omission, preview};

pub(super) struct VisionPlan {
    /// None: no vision to send.
    vision: Option<Planned>,
}

struct Planned {
    doc_path: String,
    text: String,
    label: String,
    /// The whole vision, fenced, under its label.
    whole: String,
    whole_tokens: usize,
    /// The ranked sentences and what each costs on its line.
    sentences: Vec<(VisionSentence, usize)>,
    /// What is sent.
    sent: Sent,
}

#[derive(Debug, Clone, PartialEq)]
enum Sent {
    Whole,
    /// Indexes into `sentences`.
    Some(Vec<usize>),
}

/// Per sentence shown, beyond its own text: the line break, and a share of
/// the note saying how many were left out.
const PER_SENTENCE: usize = 1;
/// The note under an excerpt.
const NOTE_TOKENS: usize = 40;

impl VisionPlan {
    pub(super) fn new(ctx: &Ctx, vision: Option<&Vision>) -> VisionPlan {
        let Some(v) = vision.filter(|v| !v.text.trim().is_empty()) else {
            return VisionPlan { vision: None };
        };
        let label = format!(
            "PRODUCT VISION: {}. Its sentences constrain every change, also where no spec section speaks: one the change contradicts is a `major` issue: quote it exactly in `spec_verification` (`spec_section` \"Product vision\", `satisfied: false`). Its quotes are checked like the spec's, but are no spec basis for an approval.",
            inline(&v.doc_path)
        );
        let whole = format!("{label}\n{}", ctx.fence.wrap(&v.text));
        VisionPlan {
            vision: Some(Planned {
                doc_path: v.doc_path.clone(),
                text: v.text.clone(),
                whole_tokens: ctx.count(&whole),
                whole,
                sentences: v
                    .ranked
                    .iter()
                    .map(|s| (s.clone(), ctx.count(&s.text) + PER_SENTENCE))
                    .collect(),
                label,
                sent: Sent::Some(Vec::new()),
            }),
        }
    }

    /// The whole vision when it fits `cap`, else its sentences that
    /// constrain changes, in rank order, while they fit; returns the spend.
    pub(super) fn pack(&mut self, ctx: &Ctx, cap: usize) -> usize {
        let Some(v) = &mut self.vision else { return 0 };
        v.sent = Sent::Some(Vec::new());
        self.pack_more(ctx, cap, false);
        self.spend(ctx)
    }

    /// More of the vision within `extra` more tokens: the whole of it if it
    /// fits, else more sentences (only those that constrain changes unless
    /// `any`); returns the tokens spent.
    pub(super) fn pack_more(&mut self, ctx: &Ctx, extra: usize, any: bool) -> usize {
        let before = self.spend(ctx);
        let Some(v) = &mut self.vision else { return 0 };
        let Sent::Some(chosen) = &mut v.sent else {
            return 0;
        };
        if v.whole_tokens <= before + extra {
            v.sent = Sent::Whole;
            return v.whole_tokens - before;
        }
        let fixed = ctx.count(&v.label) + ctx.fence_tokens + NOTE_TOKENS;
        let mut used = if chosen.is_empty() { fixed } else { before };
        for (i, (sentence, tokens)) in v.sentences.iter().enumerate() {
            let wanted = any || sentence.constrains;
            if !wanted || chosen.contains(&i) || used + tokens > before + extra {
                continue;
            }
            used += tokens;
            chosen.push(i);
        }
        self.spend(ctx) - before
    }

    /// What the vision shown costs (an estimate: the text is counted whole
    /// at the end).
    pub(super) fn spend(&self, ctx: &Ctx) -> usize {
        let Some(v) = &self.vision else { return 0 };
        match &v.sent {
            Sent::Whole => v.whole_tokens,
            Sent::Some(chosen) if chosen.is_empty() => 0,
            Sent::Some(chosen) => {
                ctx.count(&v.label)
                    + ctx.fence_tokens
                    + NOTE_TOKENS
                    + chosen.iter().map(|&i| v.sentences[i].1).sum::<usize>()
            }
        }
    }

    /// Sends none of it: code comes first.
    pub(super) fn clear(&mut self) {
        if let Some(v) = &mut self.vision {
            v.sent = Sent::Some(Vec::new());
        }
    }

    /// Leaves out sentences, the lowest ranked first, until about `need`
    /// tokens are freed (a whole vision becomes its ranked sentences).
    pub(super) fn drop_some(&mut self, need: usize) -> bool {
        let Some(v) = &mut self.vision else {
            return false;
        };
        if v.sent == Sent::Whole {
            if v.sentences.is_empty() {
                v.sent = Sent::Some(Vec::new());
                return true;
            }
            v.sent = Sent::Some((0..v.sentences.len()).collect());
        }
        let Sent::Some(chosen) = &mut v.sent else {
            return false;
        };
        let mut freed = 0;
        // `chosen` is in rank order: the last is the least important.
        while freed < need {
            let Some(i) = chosen.pop() else { break };
            freed += v.sentences[i].1;
        }
        freed > 0
    }

    pub(super) fn render(&self, ctx: &Ctx) -> String {
        let Some(v) = &self.vision else {
            return "(no product vision)".to_string();
        };
        let chosen = match &v.sent {
            Sent::Whole => return v.whole.clone(),
            Sent::Some(chosen) => chosen,
        };
        let total = v.sentences.len().max(1);
        if chosen.is_empty() {
            return format!(
                "(the product vision, {}, is omitted for budget)",
                inline(&v.doc_path)
            );
        }
        let mut lines: Vec<&VisionSentence> = chosen.iter().map(|&i| &v.sentences[i].0).collect();
        lines.sort_by_key(|s| s.line);
        let text: Vec<&str> = lines.iter().map(|s| s.text.as_str()).collect();
        format!(
            "{}\n{}\n({} of {total} sentences of the vision shown, in its order: those that constrain changes first; the rest omitted for budget)",
            v.label,
            ctx.fence.wrap(&text.join("\n")),
            chosen.len(),
        )
    }

    /// The vision text sent, as (first line, text) pieces.
    pub(super) fn sent(&self) -> Vec<VisionSentence> {
        let Some(v) = &self.vision else {
            return Vec::new();
        };
        match &v.sent {
            Sent::Whole => vec![VisionSentence {
                line: 1,
                text: v.text.clone(),
                constrains: false,
            }],
            Sent::Some(chosen) => {
                let mut out: Vec<VisionSentence> =
                    chosen.iter().map(|&i| v.sentences[i].0.clone()).collect();
                out.sort_by_key(|s| s.line);
                out
            }
        }
    }

    pub(super) fn omissions(&self) -> Vec<Omission> {
        let Some(v) = &self.vision else {
            return Vec::new();
        };
        match &v.sent {
            Sent::Whole => Vec::new(),
            Sent::Some(chosen) if chosen.is_empty() && v.sentences.is_empty() => {
                vec![omission(v.doc_path.clone(), OMITTED_FOR_BUDGET)]
            }
            Sent::Some(chosen) => v
                .sentences
                .iter()
                .enumerate()
                .filter(|(i, _)| !chosen.contains(i))
                .map(|(_, (s, _))| {
                    omission(
                        format!("{}:{} {}", v.doc_path, s.line, preview(&s.text)),
                        OMITTED_FOR_BUDGET,
                    )
                })
                .collect(),
        }
    }
}
