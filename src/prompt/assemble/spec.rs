//! The spec sections' claim on the budget: the sections a task references
//! are required; the related ones (most relevant to the task and the diff)
//! are sent while their share lasts, before the code; the rest only fill
//! what the code leaves. Those left out are counted in the prompt, the
//! highest ranked of them named (the report names every one). Those sent
//! are shown in document order, the source of truth first, each a reference
//! selects marked so.

use crate::prompt::fence::inline;
use crate::prompt::{Omission, SpecSection};

use super::{Ctx, OMITTED_FOR_BUDGET, omission};

/// Omitted sections named in the prompt, the highest ranked: a spec of a
/// hundred headings left out at a small budget would otherwise spend the
/// spec's share on their names.
const NAMED_OMITTED: usize = 5;

/// Spec sections: required ones always, optional ones while their share lasts.
pub(super) struct SpecPlan {
    entries: Vec<SpecEntry>,
    /// How many omitted sections the prompt lists by name (never more
    /// than `NAMED_OMITTED`).
    list_limit: usize,
}

struct SpecEntry {
    primary: bool,
    start_line: usize,
    doc_path: String,
    heading_path: String,
    block: String,
    tokens: usize,
    om_line: String,
    om_tokens: usize,
    required: bool,
    related: bool,
    included: bool,
}

/// Which optional sections a claim takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Which {
    /// The most relevant ones: sent before the code.
    Related,
    /// Any: what the code leaves.
    Any,
    /// Only those not related: the first to go.
    Unrelated,
}

impl Which {
    fn takes(self, e: &SpecEntry) -> bool {
        match self {
            Which::Related => e.related,
            Which::Any => true,
            Which::Unrelated => !e.related,
        }
    }
}

impl SpecPlan {
    pub(super) fn new(ctx: &Ctx, sections: &[SpecSection]) -> SpecPlan {
        let entries = sections
            .iter()
            .map(|s| {
                let label = if s.primary {
                    format!("SOURCE OF TRUTH: {}", inline(&s.doc_path))
                } else {
                    format!("Related spec: {}", inline(&s.doc_path))
                };
                let mark = s
                    .mark
                    .as_deref()
                    .map(|m| format!("; {}", inline(m)))
                    .unwrap_or_default();
                let block = format!(
                    "{label} § {} (lines {}–{}{mark})\n{}",
                    inline(&s.heading_path),
                    s.start_line,
                    s.end_line,
                    ctx.fence.wrap(&s.text)
                );
                let om_line = format!("- {} § {}", s.doc_path, s.heading_path);
                SpecEntry {
                    primary: s.primary,
                    start_line: s.start_line,
                    doc_path: s.doc_path.clone(),
                    heading_path: s.heading_path.clone(),
                    tokens: ctx.count(&block) + 2,
                    om_tokens: ctx.count(&om_line) + 1,
                    block,
                    om_line,
                    required: s.required,
                    related: s.related,
                    included: s.required,
                }
            })
            .collect();
        SpecPlan {
            entries,
            list_limit: usize::MAX,
        }
    }

    pub(super) fn required_tokens(&self) -> usize {
        self.entries
            .iter()
            .filter(|e| e.required)
            .map(|e| e.tokens)
            .sum()
    }

    pub(super) fn list_fixed(ctx: &Ctx) -> usize {
        ctx.fence_tokens + 36
    }

    /// What the optional sections cost now: those included, and the list
    /// of those left out (as far as it is listed).
    pub(super) fn spend(&self, ctx: &Ctx) -> usize {
        let content = self.spend_content();
        let left_out: Vec<&SpecEntry> = self.entries.iter().filter(|e| !e.included).collect();
        if left_out.is_empty() {
            return content;
        }
        let listed: usize = left_out
            .iter()
            .take(self.list_limit.min(NAMED_OMITTED))
            .map(|e| e.om_tokens)
            .sum();
        content + Self::list_fixed(ctx) + listed
    }

    /// Includes optional sections of `which` in rank order while the
    /// spend (content plus the list of those left out) stays within `cap`;
    /// returns the spend.
    pub(super) fn pack(&mut self, ctx: &Ctx, cap: usize, which: Which) -> usize {
        self.list_limit = NAMED_OMITTED;
        self.include(ctx, cap, which);
        if self.spend(ctx) > cap {
            // The list itself is too long: name what fits, count the rest.
            let content = self.spend_content();
            let mut left = cap.saturating_sub(content + Self::list_fixed(ctx));
            self.list_limit = 0;
            for e in self
                .entries
                .iter()
                .filter(|e| !e.included)
                .take(NAMED_OMITTED)
            {
                if e.om_tokens > left {
                    break;
                }
                left -= e.om_tokens;
                self.list_limit += 1;
            }
        }
        self.spend(ctx)
    }

    /// Includes more optional sections of `which`, in rank order, within
    /// `extra` more tokens; returns the tokens spent. A list shortened for
    /// budget is listed whole again when that fits too.
    pub(super) fn pack_more(&mut self, ctx: &Ctx, extra: usize, which: Which) -> usize {
        let before = self.spend(ctx);
        let limit = self.list_limit;
        self.list_limit = NAMED_OMITTED;
        self.include(ctx, before + extra, which);
        if self.spend(ctx) > before + extra {
            self.list_limit = limit;
        }
        self.spend(ctx).saturating_sub(before)
    }

    /// Includes sections of `which` in rank order while the spend, with the
    /// whole list of those left out, stays within `cap`; in one pass, with
    /// running sums, since a spec may have thousands of sections.
    fn include(&mut self, ctx: &Ctx, cap: usize, which: Which) {
        let list_fixed = Self::list_fixed(ctx);
        let mut content = self.spend_content();
        // The list names only the highest ranked of those left out, which
        // are at most `NAMED_OMITTED` entries' names: bounded by the
        // longest of them.
        let (mut count, longest) = self
            .entries
            .iter()
            .filter(|e| !e.included)
            .fold((0, 0), |(n, longest), e| (n + 1, e.om_tokens.max(longest)));
        for e in &mut self.entries {
            if e.included || !which.takes(e) {
                continue;
            }
            let list = if count > 1 {
                list_fixed + longest * (count - 1).min(NAMED_OMITTED)
            } else {
                0
            };
            if content + e.tokens + list <= cap {
                e.included = true;
                content += e.tokens;
                count -= 1;
            }
        }
    }

    fn spend_content(&self) -> usize {
        self.entries
            .iter()
            .filter(|e| e.included && !e.required)
            .map(|e| e.tokens)
            .sum()
    }

    /// Leaves out every optional section, only counting them: code comes
    /// first.
    pub(super) fn clear_optional(&mut self) {
        for e in self.entries.iter_mut().filter(|e| !e.required) {
            e.included = false;
        }
        self.list_limit = 0;
    }

    pub(super) fn render(&self, ctx: &Ctx) -> String {
        if self.entries.is_empty() {
            return "(no spec sections)".to_string();
        }
        // In document order, the source of truth first: the same sections
        // read the same for every task of a feature, whatever each one
        // ranks first, so their prompts share this prefix (the task names
        // the sections it implements).
        let mut shown: Vec<&SpecEntry> = self.entries.iter().filter(|e| e.included).collect();
        shown.sort_by(|a, b| {
            (!a.primary, &a.doc_path, a.start_line).cmp(&(!b.primary, &b.doc_path, b.start_line))
        });
        let mut out: Vec<String> = shown.iter().map(|e| e.block.clone()).collect();
        let omitted: Vec<&SpecEntry> = self.entries.iter().filter(|e| !e.included).collect();
        if !omitted.is_empty() {
            out.push(omission_list(
                ctx,
                &omitted,
                self.entries.len(),
                self.list_limit.min(NAMED_OMITTED),
            ));
        }
        out.join("\n\n")
    }

    /// Leaves out optional sections of `which`, lowest ranked first, until
    /// about `need` tokens are freed.
    pub(super) fn drop_optional(&mut self, need: usize, which: Which) -> bool {
        let mut freed = 0;
        for e in self.entries.iter_mut().rev() {
            if freed >= need {
                break;
            }
            if e.included && !e.required && which.takes(e) {
                e.included = false;
                freed += e.tokens;
            }
        }
        freed > 0
    }

    pub(super) fn shorten_list(&mut self) -> bool {
        let listed = self
            .entries
            .iter()
            .filter(|e| !e.included)
            .count()
            .min(self.list_limit);
        if listed == 0 {
            return false;
        }
        self.list_limit = listed / 2;
        true
    }

    pub(super) fn omissions(&self) -> Vec<Omission> {
        self.entries
            .iter()
            .filter(|e| !e.included)
            .map(|e| {
                omission(
                    format!("{} § {}", e.doc_path, e.heading_path),
                    OMITTED_FOR_BUDGET,
                )
            })
            .collect()
    }

    pub(super) fn sent(&self) -> Vec<(String, String)> {
        self.entries
            .iter()
            .filter(|e| e.included)
            .map(|e| (e.doc_path.clone(), e.heading_path.clone()))
            .collect()
    }
}

/// What was left out, compactly: how many sections (per document when
/// there are several), and the names of the `limit` highest ranked.
fn omission_list(ctx: &Ctx, omitted: &[&SpecEntry], total: usize, limit: usize) -> String {
    let mut per_doc: Vec<(&str, usize)> = Vec::new();
    for e in omitted {
        match per_doc.iter_mut().find(|(d, _)| *d == e.doc_path) {
            Some((_, n)) => *n += 1,
            None => per_doc.push((&e.doc_path, 1)),
        }
    }
    let by_doc = if per_doc.len() > 1 {
        format!(
            " ({})",
            per_doc
                .iter()
                .map(|(d, n)| format!("{n} of {}", inline(d)))
                .collect::<Vec<_>>()
                .join(", ")
        )
    } else {
        String::new()
    };
    let mut out = format!(
        "Spec sections omitted for budget: {} of {total}{by_doc}, lower ranked, not shown to you.",
        omitted.len()
    );
    let shown: Vec<&str> = omitted
        .iter()
        .take(limit)
        .map(|e| e.om_line.as_str())
        .collect();
    if !shown.is_empty() {
        out.push_str(if shown.len() == omitted.len() {
            " They are:\n"
        } else {
            " The highest ranked of them:\n"
        });
        out.push_str(&ctx.fence.wrap(&shown.join("\n")));
    }
    if shown.len() < omitted.len() {
        out.push_str(&format!(
            "\n…and {} more (the report lists every one).",
            omitted.len() - shown.len()
        ));
    }
    out
}
