//! The spec sections' claim on the budget: the sections a task references
//! are required; within the spec's share, before the code, the rules of the
//! other sections (their sentences that say what must, must not or cannot
//! be, `specs::rules`: strong ones first, then by the sections' rank) and
//! the related sections (most relevant to the task and the diff) whole; the
//! rest only fill what the code leaves. A section sent whole takes its
//! rules out of the rules block. Those left out are counted in the prompt,
//! the highest ranked of them named (the report names every one, and those
//! sent in part as rules). Those sent are shown in document order, the
//! source of truth first, one label and one fence per document, each
//! section under a `§` line naming it (a reference's marked so), then the
//! rules block, each rule under its section's heading path: a rule sent
//! alone is quotable as sent, nothing else of its section is.

use crate::prompt::fence::inline;
use crate::prompt::{Omission, SENT_IN_PART, SentRule, SpecSection};
use crate::specs::rules;

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
    /// The optional sections' rules in the order a prompt takes them: the
    /// strong ones first, then by the sections' rank, then in their
    /// section's order; as (entry, rule) indexes. Empty when the prompt
    /// sends no rules alone (the guardian's).
    rule_order: Vec<(usize, usize)>,
    /// What the rules block costs per document beyond its rules: its label,
    /// its fence, its share of the list's note.
    per_doc: usize,
}

/// A rule of a section, as the rules block shows it.
struct RuleLine {
    line: usize,
    text: String,
    /// Its line in the block, counted.
    tokens: usize,
    strong: bool,
    /// Sent in the rules block (only while its section is not sent whole).
    selected: bool,
}

/// The rules block's own text per document (its label) and the note on the
/// list of sections left out, beyond the fence.
const RULES_FIXED: usize = 48;

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
    /// Its document's label and fence, counted: paid once per document
    /// whose sections are sent whole.
    doc_tokens: usize,
    /// Its heading line in the rules block, counted.
    head_tokens: usize,
    rules: Vec<RuleLine>,
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
    /// `with_rules`: whether the rules of sections not sent whole may be
    /// sent alone (a review's prompt; the guardian reads what the review
    /// sent whole).
    pub(super) fn new(ctx: &Ctx, sections: &[SpecSection], with_rules: bool) -> SpecPlan {
        let entries: Vec<SpecEntry> = sections
            .iter()
            .map(|s| {
                let label = doc_label(s.primary, &s.doc_path);
                let mark = s
                    .mark
                    .as_deref()
                    .map(|m| format!("; {}", inline(m)))
                    .unwrap_or_default();
                let block = format!(
                    "§ {} (lines {}–{}{mark})\n{}",
                    inline(&s.heading_path),
                    s.start_line,
                    s.end_line,
                    s.text
                );
                let om_line = format!("- {} § {}", s.doc_path, s.heading_path);
                let rules: Vec<RuleLine> = if with_rules && !s.required {
                    rules::rules(&s.text, s.start_line)
                        .into_iter()
                        .map(|r| RuleLine {
                            tokens: ctx.count(&format!("- {}", r.text)) + 1,
                            line: r.line,
                            text: r.text,
                            strong: r.strong,
                            selected: false,
                        })
                        .collect()
                } else {
                    Vec::new()
                };
                SpecEntry {
                    doc_tokens: ctx.count(&label) + ctx.fence_tokens,
                    head_tokens: ctx.count(&rules_heading(&s.heading_path)) + 1,
                    rules,
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
        // Strong rules first, then by the sections' rank (their order
        // here), then in their section's order.
        let mut rule_order: Vec<(bool, usize, usize)> = Vec::new();
        if with_rules {
            for (e, entry) in entries.iter().enumerate() {
                for (r, rule) in entry.rules.iter().enumerate() {
                    rule_order.push((!rule.strong, e, r));
                }
            }
            rule_order.sort();
        }
        SpecPlan {
            entries,
            list_limit: usize::MAX,
            rule_order: rule_order.into_iter().map(|(_, e, r)| (e, r)).collect(),
            per_doc: RULES_FIXED + ctx.fence_tokens,
        }
    }

    /// The required sections, with their documents' labels and fences.
    pub(super) fn required_tokens(&self) -> usize {
        let sections: usize = self
            .entries
            .iter()
            .filter(|e| e.required)
            .map(|e| e.tokens)
            .sum();
        sections + self.docs_cost(|e| e.required)
    }

    /// The labels and fences of the documents some section of which
    /// `counts`, once each.
    fn docs_cost(&self, counts: impl Fn(&SpecEntry) -> bool) -> usize {
        let mut docs: Vec<(&str, usize)> = self
            .entries
            .iter()
            .filter(|e| counts(e))
            .map(|e| (e.doc_path.as_str(), e.doc_tokens))
            .collect();
        docs.sort_unstable();
        docs.dedup_by(|a, b| a.0 == b.0);
        docs.iter().map(|(_, tokens)| tokens).sum()
    }

    pub(super) fn list_fixed(ctx: &Ctx) -> usize {
        ctx.fence_tokens + 36
    }

    /// What the optional sections cost now: those included, the rules
    /// block, and the list of those left out (as far as it is listed).
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

    /// Includes, within `cap` for the whole spend (content, rules block
    /// and the list of those left out), first the rules of the sections not
    /// sent whole (the strong ones; all with `Which::Any`), then the
    /// optional sections of `which` in rank order; returns the spend.
    pub(super) fn pack(&mut self, ctx: &Ctx, cap: usize, which: Which) -> usize {
        self.list_limit = NAMED_OMITTED;
        self.select_rules(ctx, cap, which == Which::Any);
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

    /// Includes more within `extra` more tokens: the rules not yet sent
    /// (the strong ones; all with `Which::Any`), then optional sections of
    /// `which`, in rank order; returns the tokens
    /// spent. A list shortened for budget is listed whole again when that
    /// fits too.
    pub(super) fn pack_more(&mut self, ctx: &Ctx, extra: usize, which: Which) -> usize {
        let before = self.spend(ctx);
        let limit = self.list_limit;
        self.list_limit = NAMED_OMITTED;
        self.select_rules(ctx, before + extra, which == Which::Any);
        self.include(ctx, before + extra, which);
        if self.spend(ctx) > before + extra {
            self.list_limit = limit;
        }
        self.spend(ctx).saturating_sub(before)
    }

    /// Selects rules of the sections not sent whole, in `rule_order`, while
    /// the spend stays within `cap`: the strong ones only, unless `weak`.
    fn select_rules(&mut self, ctx: &Ctx, cap: usize, weak: bool) {
        let mut spend = self.spend(ctx);
        let mut docs: Vec<String> = self
            .entries
            .iter()
            .filter(|e| e.rules_sent() > 0)
            .map(|e| e.doc_path.clone())
            .collect();
        for &(e, r) in &self.rule_order {
            let entry = &self.entries[e];
            if entry.included || entry.rules[r].selected || !(weak || entry.rules[r].strong) {
                continue;
            }
            let new_doc = !docs.contains(&entry.doc_path);
            let cost = entry.rules[r].tokens
                + if entry.rules_sent() == 0 {
                    entry.head_tokens
                } else {
                    0
                }
                + if new_doc { self.per_doc } else { 0 };
            if spend + cost <= cap {
                spend += cost;
                if new_doc {
                    docs.push(entry.doc_path.clone());
                }
                self.entries[e].rules[r].selected = true;
            }
        }
    }

    /// Includes sections of `which` in rank order while the spend, with the
    /// whole list of those left out, stays within `cap`; in one pass, with
    /// running sums, since a spec may have thousands of sections. A section
    /// included takes its rules out of the rules block.
    fn include(&mut self, ctx: &Ctx, cap: usize, which: Which) {
        let list_fixed = Self::list_fixed(ctx);
        let mut content = self.spend_content();
        // The documents already labelled: a section of another adds its
        // document's label and fence.
        let mut shown: Vec<String> = self
            .entries
            .iter()
            .filter(|e| e.included)
            .map(|e| e.doc_path.clone())
            .collect();
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
            let freed = e.rules_tokens();
            let new_doc = !shown.contains(&e.doc_path);
            let cost = e.tokens + if new_doc { e.doc_tokens } else { 0 };
            if (content + cost).saturating_sub(freed) + list <= cap {
                e.included = true;
                for r in &mut e.rules {
                    r.selected = false;
                }
                if new_doc {
                    shown.push(e.doc_path.clone());
                }
                content = (content + cost).saturating_sub(freed);
                count -= 1;
            }
        }
    }

    /// The optional sections included and the rules block.
    fn spend_content(&self) -> usize {
        let sections: usize = self
            .entries
            .iter()
            .filter(|e| e.included && !e.required)
            .map(|e| e.tokens)
            .sum();
        let rules: usize = self.entries.iter().map(SpecEntry::rules_tokens).sum();
        // The labels of documents only optional sections are sent of (the
        // others' are protected with their required sections).
        let required: Vec<&str> = self
            .entries
            .iter()
            .filter(|e| e.required)
            .map(|e| e.doc_path.as_str())
            .collect();
        let labels = self.docs_cost(|e| e.included && !required.contains(&e.doc_path.as_str()));
        sections + labels + rules + self.rule_docs() * self.per_doc
    }

    /// How many documents the rules block shows rules of.
    fn rule_docs(&self) -> usize {
        let mut docs: Vec<&str> = self
            .entries
            .iter()
            .filter(|e| e.rules_sent() > 0)
            .map(|e| e.doc_path.as_str())
            .collect();
        docs.sort_unstable();
        docs.dedup();
        docs.len()
    }

    /// Leaves out every optional section and rule, only counting them:
    /// code comes first.
    pub(super) fn clear_optional(&mut self) {
        for e in self.entries.iter_mut().filter(|e| !e.required) {
            e.included = false;
            for r in &mut e.rules {
                r.selected = false;
            }
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
        shown.sort_by(|a, b| a.order().cmp(&b.order()));
        // One label and one fence per document, each section under its
        // `§` line; a document's only section on the label's line.
        let mut out: Vec<String> = shown
            .chunk_by(|a, b| a.doc_path == b.doc_path)
            .map(|doc| {
                let label = doc_label(doc[0].primary, &doc[0].doc_path);
                if let [only] = doc {
                    let (head, text) = only.block.split_once('\n').unwrap_or((&only.block, ""));
                    return format!("{label} {head}\n{}", ctx.fence.wrap(text));
                }
                // A blank line between sections, whatever their text ends
                // with.
                let blocks: Vec<String> = doc
                    .iter()
                    .map(|e| match e.block.ends_with('\n') {
                        true => e.block.clone(),
                        false => format!("{}\n", e.block),
                    })
                    .collect();
                format!("{label}\n{}", ctx.fence.wrap(&blocks.join("\n")))
            })
            .collect();
        out.extend(self.render_rules(ctx));
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

    /// The rules block, one per document: each section's heading path and
    /// its rules sent, in document order.
    fn render_rules(&self, ctx: &Ctx) -> Vec<String> {
        let mut with_rules: Vec<&SpecEntry> =
            self.entries.iter().filter(|e| e.rules_sent() > 0).collect();
        with_rules.sort_by(|a, b| a.order().cmp(&b.order()));
        let mut out = Vec::new();
        for doc in with_rules.chunk_by(|a, b| a.doc_path == b.doc_path) {
            let label = doc_label(doc[0].primary, &doc[0].doc_path);
            let mut lines = Vec::new();
            for e in doc {
                lines.push(rules_heading(&e.heading_path));
                lines.extend(
                    e.rules
                        .iter()
                        .filter(|r| r.selected)
                        .map(|r| format!("- {}", r.text)),
                );
            }
            out.push(format!(
                "{label}, the rules of sections not shown whole: each sentence as the spec writes it, under its section's heading (the rest of those sections is omitted for budget)\n{}",
                ctx.fence.wrap(&lines.join("\n"))
            ));
        }
        out
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

    /// Leaves out rules, the last taken first, until about `need` tokens
    /// are freed.
    pub(super) fn drop_rules(&mut self, need: usize) -> bool {
        let mut freed = 0;
        for &(e, r) in self.rule_order.iter().rev() {
            if freed >= need {
                break;
            }
            let rule = &mut self.entries[e].rules[r];
            if rule.selected {
                rule.selected = false;
                freed += rule.tokens;
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

    /// The sections not sent whole, and why; one whose rules were sent
    /// alone says so.
    pub(super) fn omissions(&self) -> Vec<Omission> {
        self.entries
            .iter()
            .filter(|e| !e.included)
            .map(|e| {
                let sent = e.rules_sent();
                let reason = if sent == 0 {
                    OMITTED_FOR_BUDGET.to_string()
                } else if sent == e.rules.len() {
                    RULES_SENT.to_string()
                } else {
                    format!(
                        "{SENT_IN_PART}: {sent} of its {} rules alone, the rest omitted for budget",
                        e.rules.len()
                    )
                };
                omission(format!("{} § {}", e.doc_path, e.heading_path), &reason)
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

    /// The rules sent alone, in the rules block's order.
    pub(super) fn sent_rules(&self) -> Vec<SentRule> {
        let mut with_rules: Vec<&SpecEntry> =
            self.entries.iter().filter(|e| e.rules_sent() > 0).collect();
        with_rules.sort_by(|a, b| a.order().cmp(&b.order()));
        with_rules
            .iter()
            .flat_map(|e| {
                e.rules.iter().filter(|r| r.selected).map(|r| SentRule {
                    doc_path: e.doc_path.clone(),
                    heading_path: e.heading_path.clone(),
                    line: r.line,
                    text: r.text.clone(),
                })
            })
            .collect()
    }
}

/// What the accounting says of a section whose every rule was sent alone
/// (it begins with `SENT_IN_PART`).
pub(super) const RULES_SENT: &str = "sent in part: its rules alone, the rest omitted for budget";

/// What a document's sections are sent under: the source of truth, or a
/// related spec.
fn doc_label(primary: bool, doc_path: &str) -> String {
    if primary {
        format!("SOURCE OF TRUTH: {}", inline(doc_path))
    } else {
        format!("Related spec: {}", inline(doc_path))
    }
}

/// A section's heading line in the rules block.
fn rules_heading(heading_path: &str) -> String {
    format!("§ {}", inline(heading_path))
}

impl SpecEntry {
    /// How many of its rules are sent alone.
    fn rules_sent(&self) -> usize {
        self.rules.iter().filter(|r| r.selected).count()
    }

    /// What its rules sent alone cost, its heading line included.
    fn rules_tokens(&self) -> usize {
        let sent: usize = self
            .rules
            .iter()
            .filter(|r| r.selected)
            .map(|r| r.tokens)
            .sum();
        if sent == 0 {
            0
        } else {
            sent + self.head_tokens
        }
    }

    /// Document order, the source of truth first.
    fn order(&self) -> (bool, &str, usize) {
        (!self.primary, &self.doc_path, self.start_line)
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
    let in_part = omitted.iter().filter(|e| e.rules_sent() > 0).count();
    let mut out = if in_part == 0 {
        format!(
            "Spec sections omitted for budget: {} of {total}{by_doc}, lower ranked, not shown to you.",
            omitted.len()
        )
    } else {
        format!(
            "Spec sections not shown whole for budget: {} of {total}{by_doc}, lower ranked: of {in_part} of them only the rules above are shown, the rest is not shown to you.",
            omitted.len()
        )
    };
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
