//! The spec sections' claim on the budget: the sections a task references
//! are required; the rest are ranked and sent while their share lasts,
//! each one left out named in the prompt.

use crate::prompt::fence::inline;
use crate::prompt::{Omission, SpecSection};

use super::{Ctx, OMITTED_FOR_BUDGET, omission};

/// Spec sections: required ones always, optional ones while their share lasts.
pub(super) struct SpecPlan {
    entries: Vec<SpecEntry>,
    /// How many omitted sections the prompt lists by name.
    list_limit: usize,
}

struct SpecEntry {
    doc_path: String,
    heading_path: String,
    block: String,
    tokens: usize,
    om_line: String,
    om_tokens: usize,
    required: bool,
    included: bool,
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
                let block = format!(
                    "{label} § {} (lines {}–{})\n{}",
                    inline(&s.heading_path),
                    s.start_line,
                    s.end_line,
                    ctx.fence.wrap(&s.text)
                );
                let om_line = format!("- {} § {}", s.doc_path, s.heading_path);
                SpecEntry {
                    doc_path: s.doc_path.clone(),
                    heading_path: s.heading_path.clone(),
                    tokens: ctx.count(&block) + 2,
                    om_tokens: ctx.count(&om_line) + 1,
                    block,
                    om_line,
                    required: s.required,
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
        ctx.fence_tokens + 24
    }

    /// Includes optional sections in rank order while the spend (content plus
    /// the list of those left out) stays within `cap`; returns the spend.
    pub(super) fn pack(&mut self, ctx: &Ctx, cap: usize) -> usize {
        let optional: Vec<usize> = (0..self.entries.len())
            .filter(|&i| !self.entries[i].required)
            .collect();
        if optional.is_empty() {
            return 0;
        }
        let mut listed: usize = optional.iter().map(|&i| self.entries[i].om_tokens).sum();
        let mut content = 0;
        let spend = |content: usize, listed: usize| {
            content
                + if listed == 0 {
                    0
                } else {
                    Self::list_fixed(ctx) + listed
                }
        };
        for &i in &optional {
            let e = &self.entries[i];
            if spend(content + e.tokens, listed - e.om_tokens) <= cap {
                content += e.tokens;
                listed -= e.om_tokens;
                self.entries[i].included = true;
            }
        }
        if spend(content, listed) > cap {
            // The list itself is too long: list what fits, count the rest.
            let mut left = cap.saturating_sub(content + Self::list_fixed(ctx));
            self.list_limit = 0;
            for e in self.entries.iter().filter(|e| !e.included) {
                if e.om_tokens > left {
                    break;
                }
                left -= e.om_tokens;
                self.list_limit += 1;
            }
        }
        spend(content, listed).min(cap)
    }

    pub(super) fn render(&self, ctx: &Ctx) -> String {
        if self.entries.is_empty() {
            return "(no spec sections)".to_string();
        }
        let mut out: Vec<String> = self
            .entries
            .iter()
            .filter(|e| e.included)
            .map(|e| e.block.clone())
            .collect();
        let omitted: Vec<&SpecEntry> = self.entries.iter().filter(|e| !e.included).collect();
        if !omitted.is_empty() {
            out.push(omission_list(
                ctx,
                "Spec sections omitted for budget (lower ranked; not shown to you):",
                omitted.iter().map(|e| e.om_line.as_str()),
                omitted.len(),
                self.list_limit,
            ));
        }
        out.join("\n\n")
    }

    pub(super) fn drop_optional(&mut self, need: usize) -> bool {
        let mut freed = 0;
        for e in self.entries.iter_mut().rev() {
            if freed >= need {
                break;
            }
            if e.included && !e.required {
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

/// A fenced list of omitted items, cut after `limit` items with a count.
fn omission_list<'a>(
    ctx: &Ctx,
    title: &str,
    lines: impl Iterator<Item = &'a str>,
    total: usize,
    limit: usize,
) -> String {
    let shown: Vec<&str> = lines.take(limit).collect();
    let mut out = title.to_string();
    if !shown.is_empty() {
        out.push('\n');
        out.push_str(&ctx.fence.wrap(&shown.join("\n")));
    }
    if shown.len() < total {
        out.push_str(&format!(
            "\n…and {} more not listed here for budget (the report lists every one).",
            total - shown.len()
        ));
    }
    out
}
