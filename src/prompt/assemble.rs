//! Budgeted assembly of the review and guardian prompts.
//!
//! Order of claims on the budget: the protected parts (instructions, notices,
//! task, criteria, required spec sections, one-line summaries, and the list
//! of changed files whose changes are not shown, which is never cut) must
//! fit or the assembly fails. When everything else fits too, everything is
//! sent (`Claims::include_all`): the shares below only divide what
//! competes. Otherwise, before the code: the list sections (developer notes,
//! earlier reviews, scope, gate results, assumptions, cross-cutting
//! constraints; or the guardian's vision), each truncated past a cap; a
//! review's vision up to a tenth of the budget (whole, or its constraining
//! sentences); up to a quarter, the spec's strong rules (the sentences
//! saying what must, must not or cannot be) of the sections not sent whole,
//! then the related spec sections whole; impact rows up to 8%. The diff,
//! its lines numbered, takes the rest; what it leaves goes back to the
//! lists, the impact rows, the strong rules and related spec, the vision's
//! constraining sentences, the weaker rules (should, only) and unrelated
//! spec sections, and the vision's other sentences, in that order, so
//! nothing is cut while room is left and unrelated spec is cut before code.
//! A review prompt that would show
//! no code gives up every share for it, and shows a piece of a hunk when no
//! hunk fits whole; one that still cannot show a line is an error
//! (`Error::NoRoomForCode`). For a review in parts, the diff is the part's
//! share (`DiffPart`), and `Prompt::rest` is what is left for the next
//! part. Estimates add up per-piece counts, but BPE merges across joins, so
//! the final text is counted whole and trimmed (unrelated spec first, the
//! spec's rules after its sections, code after everything that may go
//! before it) until it fits:
//! `counter.count(&prompt.text) <= budget` always holds for a returned
//! prompt. Whatever is left out is listed in the prompt and in the
//! accounting.

mod diff;
mod impact;
mod spec;
mod vision;

use std::collections::HashMap;

use super::fence::{Fence, inline};
use super::template::Template;
use super::{
    Counter, Criterion, Error, GateCheck, Input, Kind, Omission, Prompt, Scope, SectionAccount,
    Task, Templates, Vision,
};

use diff::DiffPlan;
pub use diff::numbered_hunk;
use impact::ImpactPlan;
use spec::{SpecPlan, Which};
use vision::VisionPlan;

/// Tokens held back for one-line notes ("none declared", "… omitted") that
/// are written after the pieces are measured.
const NOTES_RESERVE: usize = 64;
/// Tokens held back for BPE merges across joins, plus a share per budget.
const SLACK_BASE: usize = 24;
/// Optional spec sections may take this share of the budget.
const SPEC_SHARE_PERCENT: usize = 25;
/// Impact rows may take this share of the budget.
const IMPACT_SHARE_PERCENT: usize = 8;
/// Each of scope, gates, assumptions and cross-cutting may take this share of
/// the room left after the protected parts.
const MEDIUM_SHARE_PERCENT: usize = 10;
/// The vision may take this share of the guardian's budget.
const VISION_SHARE_PERCENT: usize = 25;
/// The vision may take this share of a review prompt's budget before the
/// code: all of it when it fits, else its sentences that constrain changes.
const REVIEW_VISION_SHARE_PERCENT: usize = 10;
/// Hunk coordinates listed per partially shown file.
pub(super) const MAX_LISTED_HUNKS: usize = 8;
/// Names listed in the impact row of one file's added, unreferenced
/// symbols; the report lists them all.
pub(super) const GROUPED_NAMES: usize = 8;

pub(super) const OMITTED_FOR_BUDGET: &str = "omitted for budget";
const NONE_DECLARED: &str = "(none declared)";

/// Builds the prompt of `input.kind` within `budget` tokens.
pub fn assemble(
    input: &Input,
    counter: &Counter,
    budget: usize,
    templates: &Templates,
) -> Result<Prompt, Error> {
    assemble_with(input, counter, budget, templates, 0)
}

/// `assemble`, with `overcommit` tokens of extra room granted to the
/// estimates: tests use it to drive the final trimming loop, which real
/// estimates rarely reach.
fn assemble_with(
    input: &Input,
    counter: &Counter,
    budget: usize,
    templates: &Templates,
    overcommit: usize,
) -> Result<Prompt, Error> {
    let template = templates.get(input.kind);
    let fence = Fence::choose_keyed(&stable_texts(input), &untrusted_texts(input));
    let ctx = Ctx::new(counter, fence);

    let dimensions = scoring(input)
        .map(super::Scoring::render)
        .unwrap_or_default();
    // The answer's shape; a template without the dimensions' slot (an
    // override written before it) states them after the shape.
    let mut schema = super::shape(input.schema);
    if !template.has("dimensions") && !dimensions.is_empty() {
        schema = format!(
            "{schema}

{dimensions}"
        );
    }
    let instructions = template.render(|name| match name {
        "tag" => ctx.fence.tag(),
        "schema" => schema.as_str(),
        "dimensions" => dimensions.as_str(),
        _ => "",
    });
    let notices = render_notices(&input.notices);
    let task = ctx.fence.wrap(&task_text(&input.task, &input.spec));
    let criteria = render_criteria(&ctx, &input.criteria);
    let determinations = match (input.kind, &input.defect) {
        (Kind::Defect, Some(defect)) => render_determinations(&ctx, &defect.determinations),
        _ => String::new(),
    };
    let spec = SpecPlan::new(&ctx, &input.spec, input.kind != Kind::Guardian);
    let diff = DiffPlan::new(&ctx, &input.diff.files, input.part.as_ref());
    // Every changed file is named, whatever the budget: the list of those
    // not shown is protected, at its largest (no file shown).
    let list_reserve = diff.list_reserve(&ctx);

    let protected = ctx.count(&instructions)
        + ctx.count(&notices)
        + ctx.count(&task)
        + ctx.count(&criteria)
        + ctx.count(&determinations)
        + spec.required_tokens()
        + diff.fixed_tokens(&ctx)
        + list_reserve
        + NOTES_RESERVE;
    if protected > budget {
        return Err(Error::ProtectedTooLarge {
            needed: protected,
            budget,
        });
    }
    let room = (budget - protected).saturating_sub(SLACK_BASE + budget / 200) + overcommit;

    let medium = match input.kind {
        Kind::Review => {
            let cap = room * MEDIUM_SHARE_PERCENT / 100;
            review_lists(input)
                .into_iter()
                .map(|(name, items)| Medium::fit(&ctx, name, items, cap))
                .collect()
        }
        Kind::Guardian => {
            let cap = room.min(budget * VISION_SHARE_PERCENT / 100);
            vec![Medium::vision(&ctx, input.vision.as_ref(), cap)]
        }
        Kind::Defect => {
            let cap = room * MEDIUM_SHARE_PERCENT / 100;
            defect_lists(input)
                .into_iter()
                .map(|(name, items)| Medium::fit(&ctx, name, items, cap))
                .collect()
        }
    };
    let mut claims = Claims {
        medium,
        vision: match input.kind {
            Kind::Guardian => VisionPlan::new(&ctx, None),
            Kind::Review | Kind::Defect => VisionPlan::new(&ctx, input.vision.as_ref()),
        },
        spec,
        impact: match input.kind {
            Kind::Review | Kind::Defect => ImpactPlan::new(&ctx, input.impact.as_deref()),
            Kind::Guardian => ImpactPlan::new(&ctx, Some(&[])),
        },
        diff,
    };
    claims.claim(&ctx, input.kind, room, budget, list_reserve)?;

    let fixed = Fixed {
        template,
        schema: &schema,
        dimensions: &dimensions,
        notices: &notices,
        task: &task,
        criteria: &criteria,
        determinations: &determinations,
    };
    loop {
        let parts = render_parts(&ctx, input.kind, &claims);
        let (text, stable) = fill(&fixed, &ctx, &parts);
        let total = ctx.count(&text);
        if total <= budget {
            let accounting = Accounting {
                fixed: &fixed,
                instructions: &instructions,
                parts: &parts,
                claims: &claims,
            };
            let mut prompt = accounting.prompt(&ctx, text, total, budget);
            prompt.stable_prefix = stable;
            prompt.stable_tokens = ctx.count(&prompt.text[..stable]);
            return Ok(prompt);
        }
        // Drop a little more than the overshoot: each drop adds an omission
        // line. What may be cut goes before the code; the code before the
        // lists.
        let need = total - budget + 16;
        let c = &mut claims;
        let shrunk = c.spec.drop_optional(need, Which::Unrelated)
            || c.impact.drop_rows(need)
            || c.vision.drop_some(need)
            || c.spec.drop_optional(need, Which::Any)
            || c.spec.drop_rules(need)
            || c.diff.drop_content(&ctx, need)
            || drop_medium(&ctx, &mut c.medium, need)
            || c.spec.shorten_list();
        if !shrunk {
            return Err(Error::ProtectedTooLarge {
                needed: total,
                budget,
            });
        }
    }
}

/// What the parts of a prompt that may be cut claim of the room left
/// after the protected ones.
struct Claims<'a> {
    /// The list sections (or the guardian's vision).
    medium: Vec<Medium>,
    /// The vision of a review prompt.
    vision: VisionPlan,
    spec: SpecPlan,
    impact: ImpactPlan,
    diff: DiffPlan<'a>,
}

impl Claims<'_> {
    /// Shares the room: first each part that goes before the code within
    /// its share (the lists, the vision, the related spec sections, the
    /// riskiest impact rows), then the diff, then, with what the diff
    /// leaves, everything the shares cut (so nothing is cut when the whole
    /// prompt fits). A review prompt that would show no code gives up what
    /// may be cut for it; one that still cannot is an error.
    fn claim(
        &mut self,
        ctx: &Ctx,
        kind: Kind,
        room: usize,
        budget: usize,
        list_reserve: usize,
    ) -> Result<(), Error> {
        // Everything, when it all fits: the shares divide only what
        // competes for the room.
        let capped = self.medium.clone();
        let all = self.include_all(ctx);
        // The estimates add up pieces and overshoot the text counted whole
        // by a little: near the budget, the count of the whole text decides
        // (and the final trim cuts what may be cut first).
        let fits = all <= room + list_reserve + SLACK_BASE + budget / 200 + budget / 20;
        if fits && (kind == Kind::Guardian || self.diff.shows_code() || !self.diff.has_code()) {
            return Ok(());
        }
        self.medium = capped;
        self.vision.clear();
        self.spec.clear_optional();
        self.impact.clear();
        self.diff.clear();
        let mut spent: usize = self.medium.iter().map(|m| m.tokens).sum();
        let share =
            |percent: usize, spent: usize| room.saturating_sub(spent).min(budget * percent / 100);
        spent += self
            .vision
            .pack(ctx, share(REVIEW_VISION_SHARE_PERCENT, spent));
        spent += self
            .spec
            .pack(ctx, share(SPEC_SHARE_PERCENT, spent), Which::Related);
        spent += self.impact.pack(ctx, share(IMPACT_SHARE_PERCENT, spent));
        let mut diff_room = room.saturating_sub(spent) + list_reserve;
        let mut used = self.diff.pack(ctx, diff_room);
        if kind != Kind::Guardian && self.diff.has_code() && !self.diff.shows_code() {
            // Code before everything that may be cut: the shares go, and
            // come back below with what the code leaves.
            for m in &mut self.medium {
                m.drop_all(ctx);
            }
            self.vision.clear();
            self.spec.clear_optional();
            self.impact.clear();
            spent = self.medium.iter().map(|m| m.tokens).sum::<usize>() + self.spec.spend(ctx);
            diff_room = room.saturating_sub(spent) + list_reserve;
            self.diff.clear();
            used = self.diff.pack(ctx, diff_room);
            if !self.diff.shows_code() {
                let least = self.diff.least_code(ctx) + spent;
                return Err(Error::NoRoomForCode {
                    needed: budget + least.saturating_sub(room) + budget / 200 + SLACK_BASE,
                    budget,
                });
            }
        }
        let mut left = diff_room.saturating_sub(used);
        for m in &mut self.medium {
            left -= m.grow(ctx, left);
        }
        left -= self.impact.pack_more(ctx, left);
        left -= self.spec.pack_more(ctx, left, Which::Related);
        left -= self.vision.pack_more(ctx, left, false);
        left -= self.spec.pack_more(ctx, left, Which::Any);
        self.vision.pack_more(ctx, left, true);
        Ok(())
    }

    /// Includes every part whole; returns what that costs.
    fn include_all(&mut self, ctx: &Ctx) -> usize {
        const ALL: usize = usize::MAX / 4;
        let mut all = 0;
        for m in &mut self.medium {
            m.grow(ctx, ALL);
            all += m.tokens;
        }
        all += self.vision.pack(ctx, ALL);
        all += self.spec.pack(ctx, ALL, Which::Any);
        all += self.impact.pack(ctx, ALL);
        all + self.diff.pack(ctx, ALL)
    }
}

/// Shared measuring and fencing.
pub(super) struct Ctx<'c> {
    counter: &'c Counter,
    fence: Fence,
    fence_tokens: usize,
}

impl<'c> Ctx<'c> {
    fn new(counter: &'c Counter, fence: Fence) -> Ctx<'c> {
        let fence_tokens = counter.count(&fence.wrap("\n"));
        Ctx {
            counter,
            fence,
            fence_tokens,
        }
    }

    fn count(&self, text: &str) -> usize {
        self.counter.count(text)
    }

    /// The longest prefix of `text` (on a char boundary) within `max` tokens.
    fn truncate(&self, text: &str, max: usize) -> String {
        let bounds: Vec<usize> = text
            .char_indices()
            .map(|(i, _)| i)
            .chain([text.len()])
            .collect();
        let (mut lo, mut hi) = (0, bounds.len() - 1);
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            if self.count(&text[..bounds[mid]]) <= max {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        text[..bounds[lo]].to_string()
    }
}

/// The parts that never change once measured.
struct Fixed<'a> {
    template: &'a Template,
    schema: &'a str,
    dimensions: &'a str,
    notices: &'a str,
    task: &'a str,
    criteria: &'a str,
    determinations: &'a str,
}

/// The prompt's text, and where its stable part ends (bytes; 0 when the
/// template marks none).
fn fill(fixed: &Fixed, ctx: &Ctx, parts: &HashMap<&'static str, String>) -> (String, usize) {
    // An override without {{vision}} gets the vision after the spec.
    let spec_and_vision = match (parts.get("spec"), parts.get("vision")) {
        (Some(spec), Some(vision)) if !fixed.template.has("vision") => {
            Some(format!("{spec}\n\n{vision}"))
        }
        _ => None,
    };
    // One without a re-review's slots gets them after the earlier reviews.
    let mut earlier = parts.get("previous_review").cloned();
    for slot in ["previous_findings", "interdiff"] {
        if let (Some(text), Some(got)) = (earlier.as_mut(), parts.get(slot)) {
            if !fixed.template.has(slot) && got != NONE_DECLARED {
                text.push_str("\n\n");
                text.push_str(got);
            }
        }
    }
    let (text, stable) = fixed.template.render_marked(
        |name| match name {
            "spec" if spec_and_vision.is_some() => spec_and_vision.as_deref().unwrap_or(""),
            "previous_review" => earlier.as_deref().unwrap_or(""),
            "tag" => ctx.fence.tag(),
            "schema" => fixed.schema,
            "dimensions" => fixed.dimensions,
            "notices" => fixed.notices,
            "task" => fixed.task,
            "criteria" => fixed.criteria,
            "determinations" => fixed.determinations,
            other => parts.get(other).map_or("", String::as_str),
        },
        "stable_end",
    );
    let trimmed = text.len() - text.trim_start_matches('\n').len();
    let stable = stable.map_or(0, |at| at.saturating_sub(trimmed));
    (text[trimmed..].to_string(), stable)
}

fn render_parts(ctx: &Ctx, kind: Kind, claims: &Claims) -> HashMap<&'static str, String> {
    let mut parts = HashMap::new();
    for m in &claims.medium {
        parts.insert(m.name, m.body.clone());
    }
    parts.insert("spec", claims.spec.render(ctx));
    parts.insert("diff", claims.diff.render(ctx));
    if kind != Kind::Guardian {
        parts.insert("impact", claims.impact.render(ctx));
        parts.insert("vision", claims.vision.render(ctx));
    }
    parts
}

/// What the pipeline renders and records for this prompt.
struct Accounting<'p, 'a> {
    fixed: &'p Fixed<'p>,
    instructions: &'p str,
    parts: &'p HashMap<&'static str, String>,
    claims: &'p Claims<'a>,
}

impl Accounting<'_, '_> {
    fn prompt(&self, ctx: &Ctx, text: String, total_tokens: usize, budget: usize) -> Prompt {
        // In the template's order, so a section added there is accounted
        // where it stands; the instructions are the template's own text.
        let mut order: Vec<&str> = self
            .fixed
            .template
            .slots()
            .filter(|s| !matches!(*s, "tag" | "schema" | "dimensions"))
            .collect();
        if !self.fixed.template.has("vision") && self.parts.contains_key("vision") {
            let at = order
                .iter()
                .position(|s| *s == "spec")
                .map_or(order.len(), |i| i + 1);
            order.insert(at, "vision");
        }
        order.push("instructions");
        let c = self.claims;
        let mut sections = Vec::new();
        for name in order {
            let (tokens, omitted) = match name {
                "notices" if self.fixed.notices.is_empty() => continue,
                "notices" => (ctx.count(self.fixed.notices), Vec::new()),
                "task" => (ctx.count(self.fixed.task), Vec::new()),
                "criteria" => (ctx.count(self.fixed.criteria), Vec::new()),
                "determinations" => (ctx.count(self.fixed.determinations), Vec::new()),
                "instructions" => (ctx.count(self.instructions), Vec::new()),
                "diff" => (self.part(ctx, name), c.diff.omissions()),
                "impact" => (self.part(ctx, name), c.impact.omissions()),
                "spec" => (self.part(ctx, name), c.spec.omissions()),
                _ => match c.medium.iter().find(|m| m.name == name) {
                    Some(m) => (ctx.count(&m.body), m.omitted.clone()),
                    None if name == "vision" => (self.part(ctx, name), c.vision.omissions()),
                    None => continue,
                },
            };
            sections.push(SectionAccount {
                name: name.to_string(),
                tokens,
                omitted,
            });
        }
        Prompt {
            text,
            total_tokens,
            budget,
            sections,
            files_shown: c.diff.files_shown(),
            files_omitted: c.diff.files_omitted(),
            sent_sections: c.spec.sent(),
            sent_rules: c.spec.sent_rules(),
            sent_vision: c.vision.sent(),
            stable_prefix: 0,
            stable_tokens: 0,
            rest: c.diff.rest(),
        }
    }

    fn part(&self, ctx: &Ctx, name: &str) -> usize {
        self.parts.get(name).map_or(0, |p| ctx.count(p))
    }
}

/// The untrusted text of the prompt's stable part (the spec, the vision,
/// the constraints, the schema): the fence tag is drawn from it alone, so
/// the reviews of a feature share their prefix.
fn stable_texts<'a>(input: &'a Input) -> Vec<&'a str> {
    let mut texts: Vec<&str> = vec![input.schema];
    texts.extend(scoring(input).into_iter().flat_map(super::Scoring::texts));
    // In document order, as shown: every task ranks them its own way.
    let mut spec: Vec<&super::SpecSection> = input.spec.iter().collect();
    spec.sort_by(|a, b| (&a.doc_path, a.start_line).cmp(&(&b.doc_path, b.start_line)));
    for s in spec {
        texts.extend([s.doc_path.as_str(), &s.heading_path, &s.text]);
    }
    if let Some(v) = &input.vision {
        texts.extend([v.doc_path.as_str(), &v.text]);
    }
    texts.extend(input.cross_cutting.iter().map(String::as_str));
    texts
}

/// Every piece of untrusted text, for choosing a fence tag none of them holds.
fn untrusted_texts<'a>(input: &'a Input) -> Vec<&'a str> {
    let mut texts: Vec<&str> = Vec::new();
    let t = &input.task;
    texts.extend([
        t.id.as_str(),
        &t.title,
        &t.branch,
        &t.base_commit,
        &t.head_commit,
        &t.description,
        &t.rationale,
        input.schema,
    ]);
    texts.extend(scoring(input).into_iter().flat_map(super::Scoring::texts));
    texts.extend(t.feature.as_deref());
    for c in &input.criteria {
        texts.extend([c.id.as_str(), &c.text, &c.verify_by]);
    }
    let s = &input.scope;
    for list in [&s.touched, &s.to_create, &s.to_modify, &s.to_delete] {
        texts.extend(list.iter().map(String::as_str));
    }
    for g in &input.gates {
        texts.extend([g.name.as_str(), &g.status, &g.note]);
    }
    texts.extend(input.assumptions.iter().map(String::as_str));
    texts.extend(input.task_notes.iter().map(String::as_str));
    texts.extend(input.previous_review.iter().map(String::as_str));
    texts.extend(input.previous_findings.iter().map(String::as_str));
    texts.extend(input.interdiff.iter().map(String::as_str));
    texts.extend(input.notices.iter().map(String::as_str));
    texts.extend(input.cross_cutting.iter().map(String::as_str));
    for f in &input.diff.files {
        texts.push(&f.path);
        texts.extend(f.old_path.as_deref());
        for h in &f.hunks {
            texts.push(&h.context);
            texts.extend(h.lines.iter().map(|l| l.text.as_str()));
        }
    }
    for s in &input.spec {
        texts.extend([s.doc_path.as_str(), &s.heading_path, &s.text]);
    }
    for r in input.impact.iter().flatten() {
        texts.extend([r.symbol.as_str(), &r.kind, &r.change, &r.stability]);
        texts.extend(r.top.iter().map(String::as_str));
    }
    if let Some(v) = &input.vision {
        texts.extend([v.doc_path.as_str(), &v.text]);
    }
    if let Some(d) = &input.defect {
        texts.extend([d.report.as_str(), &d.triage, &d.guidance]);
        texts.extend(d.determinations.iter().map(String::as_str));
    }
    texts
}

/// What a review's instructions state decides; the guardian rates nothing.
fn scoring<'i>(input: &'i Input) -> Option<&'i super::Scoring> {
    input
        .scoring
        .as_ref()
        .filter(|_| input.kind != Kind::Guardian)
}

fn render_notices(notices: &[String]) -> String {
    notices
        .iter()
        .map(|n| format!("NOTICE: {}\n", inline(n)))
        .collect()
}

fn or_none(text: &str) -> &str {
    if text.trim().is_empty() {
        "(none given)"
    } else {
        text
    }
}

/// The task's fields, and the spec sections it references: the spec is
/// shown in document order (the same for every task of a feature), so what
/// this task is about is said here.
fn task_text(task: &Task, spec: &[super::SpecSection]) -> String {
    let mut out = format!(
        "id: {}\ntitle: {}\n",
        or_none(&task.id),
        or_none(&task.title)
    );
    if let Some(feature) = &task.feature {
        out.push_str(&format!("feature: {feature}\n"));
    }
    out.push_str(&format!(
        "branch: {}\ncommits: base {}, head {}\ndescription:\n{}\nrationale:\n{}\n",
        or_none(&task.branch),
        or_none(&task.base_commit),
        or_none(&task.head_commit),
        or_none(&task.description),
        or_none(&task.rationale),
    ));
    let referenced: Vec<String> = spec
        .iter()
        .filter(|s| s.required)
        .map(|s| format!("{} § {}", s.doc_path, s.heading_path))
        .collect();
    if !referenced.is_empty() {
        out.push_str(&format!(
            "spec sections it implements: {}\n",
            referenced.join("; ")
        ));
    }
    out
}

/// One table cell: pipes escaped and line breaks flattened, so a cell cannot
/// open a new row.
pub(super) fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace(['\n', '\r'], " ")
}

fn render_criteria(ctx: &Ctx, criteria: &[Criterion]) -> String {
    if criteria.is_empty() {
        return NONE_DECLARED.to_string();
    }
    let mut table = String::from("| id | criterion | verify by |\n|---|---|---|\n");
    for c in criteria {
        let verify = if c.verify_by.trim().is_empty() {
            "-"
        } else {
            &c.verify_by
        };
        table.push_str(&format!(
            "| {} | {} | {} |\n",
            cell(&c.id),
            cell(&c.text),
            cell(verify)
        ));
    }
    ctx.fence.wrap(&table)
}

/// speed's own findings about a defect fix: short, and never cut.
fn render_determinations(ctx: &Ctx, lines: &[String]) -> String {
    if lines.is_empty() {
        return "(nothing established)".to_string();
    }
    ctx.fence.wrap(&bullet_items(lines).join("\n"))
}

/// The list sections of the review prompt, each a template slot and its
/// items; the template places them. A new list section is one more entry
/// here, one more slot in `template::REVIEW_SLOTS` and in `prompts/review.md`.
fn review_lists(input: &Input) -> Vec<(&'static str, Vec<String>)> {
    vec![
        ("task_notes", bullet_items(&input.task_notes)),
        ("previous_review", bullet_items(&input.previous_review)),
        ("previous_findings", bullet_items(&input.previous_findings)),
        ("interdiff", input.interdiff.clone()),
        ("scope", scope_items(&input.scope)),
        ("gates", gate_items(&input.gates)),
        ("assumptions", bullet_items(&input.assumptions)),
        ("cross_cutting", bullet_items(&input.cross_cutting)),
    ]
}

/// The sections of the defect-fix prompt cut like lists: the report, the
/// triage and the guidance each as one item (cut at their share, never
/// dropped silently), then the affected files and the check results.
fn defect_lists(input: &Input) -> Vec<(&'static str, Vec<String>)> {
    let defect = input.defect.clone().unwrap_or_default();
    let whole = |text: String| {
        if text.trim().is_empty() {
            Vec::new()
        } else {
            vec![text]
        }
    };
    vec![
        ("report", whole(defect.report)),
        ("triage", whole(defect.triage)),
        ("guidance", whole(defect.guidance)),
        ("scope", scope_items(&input.scope)),
        ("gates", gate_items(&input.gates)),
    ]
}

/// One item per kind of file scope, its paths on one line (a list of
/// hundreds is cut like any long item, with a note).
fn scope_items(scope: &Scope) -> Vec<String> {
    let mut items = Vec::new();
    for (label, list) in [
        ("files touched", &scope.touched),
        ("files to create", &scope.to_create),
        ("files to modify", &scope.to_modify),
        ("files to delete", &scope.to_delete),
    ] {
        if !list.is_empty() {
            items.push(format!("- {label}: {}", list.join(", ")));
        }
    }
    items
}

fn gate_items(gates: &[GateCheck]) -> Vec<String> {
    gates
        .iter()
        .map(
            |g| match (g.status.trim().is_empty(), g.note.trim().is_empty()) {
                (_, true) => format!("- {}: {}", g.name, g.status),
                (true, false) => format!("- {}: {}", g.name, g.note),
                (false, false) => format!("- {}: {} — {}", g.name, g.status, g.note),
            },
        )
        .collect()
}

fn bullet_items(items: &[String]) -> Vec<String> {
    items.iter().map(|i| format!("- {i}")).collect()
}

/// A short, one-line name for an item in the accounting.
pub(super) fn preview(text: &str) -> String {
    let one_line = inline(text.trim());
    if one_line.is_empty() {
        return "(empty)".to_string();
    }
    let mut chars = one_line.chars();
    let head: String = chars.by_ref().take(60).collect();
    if chars.next().is_some() {
        format!("{head}…")
    } else {
        head
    }
}

pub(super) fn omission(item: String, reason: &str) -> Omission {
    Omission {
        item,
        reason: reason.to_string(),
    }
}

/// A section of list items (scope, gates, assumptions, cross-cutting, vision)
/// cut to a cap: whole items in order, then one truncated item, then a count.
#[derive(Clone)]
struct Medium {
    name: &'static str,
    body: String,
    tokens: usize,
    /// The items, to fit again with more room.
    items: Vec<String>,
    /// Text before the items (the vision's source).
    label: String,
    /// Items as first shown, for the accounting when the section is dropped.
    all: Vec<String>,
    omitted: Vec<Omission>,
    dropped: bool,
}

impl Medium {
    fn fit(ctx: &Ctx, name: &'static str, items: Vec<String>, cap: usize) -> Medium {
        let all: Vec<String> = items
            .iter()
            .map(|i| preview(i.trim_start_matches("- ")))
            .collect();
        Medium::labelled(ctx, name, items, cap, String::new(), all)
    }

    /// The items under `label`, within `cap`; `all` names them in the
    /// accounting.
    fn labelled(
        ctx: &Ctx,
        name: &'static str,
        items: Vec<String>,
        cap: usize,
        label: String,
        all: Vec<String>,
    ) -> Medium {
        let (body, mut omitted) = if items.is_empty() {
            (NONE_DECLARED.to_string(), Vec::new())
        } else {
            fit_items(ctx, &items, &all, cap.saturating_sub(ctx.count(&label)))
        };
        if let [only] = all.as_slice() {
            for o in &mut omitted {
                o.item = only.clone();
            }
        }
        let body = if items.is_empty() {
            body
        } else {
            format!("{label}{body}")
        };
        Medium {
            name,
            tokens: ctx.count(&body),
            body,
            items,
            label,
            all,
            omitted,
            dropped: false,
        }
    }

    fn vision(ctx: &Ctx, vision: Option<&Vision>, cap: usize) -> Medium {
        let Some(vision) = vision.filter(|v| !v.text.trim().is_empty()) else {
            return Medium::fit(ctx, "vision", Vec::new(), cap);
        };
        Medium::labelled(
            ctx,
            "vision",
            vec![vision.text.clone()],
            cap,
            format!("From {}:\n", inline(&vision.doc_path)),
            vec![vision.doc_path.clone()],
        )
    }

    /// Fits the items again within `extra` more tokens when some were cut;
    /// returns the tokens spent.
    fn grow(&mut self, ctx: &Ctx, extra: usize) -> usize {
        if self.omitted.is_empty() || extra == 0 {
            return 0;
        }
        let before = self.tokens;
        let grown = Medium::labelled(
            ctx,
            self.name,
            self.items.clone(),
            before + extra,
            self.label.clone(),
            self.all.clone(),
        );
        if grown.tokens <= before + extra && grown.omitted.len() <= self.omitted.len() {
            *self = grown;
        }
        self.tokens.saturating_sub(before)
    }

    /// Leaves every item out, saying how many; returns the tokens freed.
    fn drop_all(&mut self, ctx: &Ctx) -> usize {
        if self.items.is_empty() || self.dropped {
            return 0;
        }
        let before = self.tokens;
        self.body = format!(
            "({} {} omitted for budget; the report lists them)",
            self.all.len(),
            if self.all.len() == 1 { "item" } else { "items" }
        );
        self.omitted = self
            .all
            .iter()
            .map(|i| omission(i.clone(), OMITTED_FOR_BUDGET))
            .collect();
        self.dropped = true;
        self.tokens = ctx.count(&self.body);
        before.saturating_sub(self.tokens)
    }
}

fn fit_items(
    ctx: &Ctx,
    items: &[String],
    previews: &[String],
    cap: usize,
) -> (String, Vec<Omission>) {
    let whole = ctx.fence.wrap(&items.join("\n"));
    if ctx.count(&whole) <= cap {
        return (whole, Vec::new());
    }
    // Room for the fence and the note saying what was cut.
    let avail = cap.saturating_sub(ctx.fence_tokens + 24);
    let mut kept: Vec<String> = Vec::new();
    let mut omitted = Vec::new();
    let mut used = 0;
    let mut truncated = false;
    for (i, item) in items.iter().enumerate() {
        let cost = ctx.count(item) + 1;
        if !truncated && omitted.is_empty() && used + cost <= avail {
            kept.push(item.clone());
            used += cost;
            continue;
        }
        // The first item that does not fit is cut rather than skipped, if
        // there is room to say something useful.
        let left = avail.saturating_sub(used);
        if !truncated && omitted.is_empty() && left >= 24 {
            let head = ctx.truncate(item, left - 12);
            kept.push(format!("{head} [… truncated for budget]"));
            omitted.push(omission(previews[i].clone(), "truncated for budget"));
            truncated = true;
            continue;
        }
        omitted.push(omission(previews[i].clone(), OMITTED_FOR_BUDGET));
    }
    let cut = omitted.len() - usize::from(truncated);
    let mut body = if kept.is_empty() {
        String::new()
    } else {
        format!("{}\n", ctx.fence.wrap(&kept.join("\n")))
    };
    body.push_str(&match (truncated, cut) {
        (true, 0) => "(the last item shown was truncated for budget)".to_string(),
        (true, n) => {
            format!("(the last item shown was truncated and {n} more were omitted for budget)")
        }
        (false, n) => format!("({n} of {} items omitted for budget)", items.len()),
    });
    (body, omitted)
}

/// Drops whole medium sections, largest first, until `need` tokens are freed.
fn drop_medium(ctx: &Ctx, medium: &mut [Medium], need: usize) -> bool {
    let mut freed = 0;
    let mut dropped = false;
    while freed < need {
        let Some(m) = medium
            .iter_mut()
            .filter(|m| !m.dropped && !m.items.is_empty())
            .max_by_key(|m| m.tokens)
        else {
            break;
        };
        freed += m.drop_all(ctx);
        dropped = true;
    }
    dropped
}

#[cfg(test)]
mod tests;
