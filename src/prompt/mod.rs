//! Prompt assembly: turns plain data (task, criteria, diff, spec sections,
//! impact rows, the product vision) into the review prompt (or a defect
//! fix's) or the guardian prompt, never exceeding a token budget, keeping
//! what matters most, and never sending a review prompt without code.
//!
//! It owns token counting (`tokens`, over the byte-pair encoder `bpe`), the
//! templates under `prompts/` (`template`), the fencing of untrusted text
//! (`fence`), the ranking of changed files (`files`: code changed
//! by `risk`, each test after its source by `pairing`), the budgeted assembly
//! itself (`assemble`), what of a diff the prompts of a review showed
//! (`coverage`), and the prompts of a spec review (`spec_review`).
//! It must not read git, parse code or call a model: it never sees git2 or
//! tree-sitter types, only the plain diff model and the inputs below, which
//! the pipeline fills.

mod assemble;
mod bpe;
mod coverage;
mod fence;
mod files;
mod pairing;
mod risk;
mod scoring;
mod shape;
mod spec_review;
mod template;
mod tokens;

use serde::Serialize;

use crate::git::diff::Diff;

pub use assemble::{assemble, numbered_hunk};
pub use coverage::{Coverage, OmittedFile, ShownFile, coverage, shown_by_part};
pub use files::Class;
pub use risk::code_flags;
pub use scoring::{Rating, Scoring};
pub use shape::shape;
pub use spec_review::{SpecCriterion, SpecReview, SpecRevision};
pub use template::{Override, TEMPLATE_NAMES, Templates};
pub use tokens::{Counter, PendingCounter};

/// The budget used when neither the command line nor the configuration sets one.
pub const DEFAULT_BUDGET: usize = 60_000;

/// Which prompt to build.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Review,
    Guardian,
    /// The review of a defect's fix (`prompts/defect.md`).
    Defect,
}

/// Everything a prompt is made of. Strings may be empty where a field is absent;
/// every text field is treated as untrusted and fenced in the prompt.
#[derive(Debug, Clone)]
pub struct Input<'a> {
    pub kind: Kind,
    pub task: Task,
    /// Acceptance criteria with their stable ids (AC-1, AC-2, …).
    pub criteria: Vec<Criterion>,
    /// The developer's notes on the task (decisions, concerns) and what it
    /// depends on, one item each; the review prompt's `task_notes`.
    pub task_notes: Vec<String>,
    /// The attempt number, the feedback of the last review and the earlier
    /// reviews, one item each; the review prompt's `previous_review`.
    pub previous_review: Vec<String>,
    /// A re-review: the previous review's blocking findings, one line each
    /// with its id (`PF-1: src/a.rs:12 (major) …`); the review prompt's
    /// `previous_findings`.
    pub previous_findings: Vec<String>,
    /// A re-review: what changed since the last reviewed head, one item per
    /// file, its hunks numbered like the diff's; the review prompt's
    /// `interdiff`.
    pub interdiff: Vec<String>,
    pub scope: Scope,
    pub gates: Vec<GateCheck>,
    pub assumptions: Vec<String>,
    /// Warnings from the pipeline, shown at the very top of the prompt
    /// (e.g. "The diff edits specs/product/x.md, the spec this review uses").
    pub notices: Vec<String>,
    pub diff: &'a Diff,
    /// Spec sections, already ranked: required ones first.
    pub spec: Vec<SpecSection>,
    /// Feature-wide constraints the diff must respect.
    pub cross_cutting: Vec<String>,
    /// Changed symbols ranked by risk; `None` when impact analysis did not run.
    pub impact: Option<Vec<ImpactRow>>,
    /// The product vision: the guardian reads it whole; a review gets it
    /// whole when it fits its share, else its sentences in `Vision::ranked`
    /// order.
    pub vision: Option<Vision>,
    /// The JSON schema of the expected answer (verdict or guardian); the
    /// prompt shows its shape (`shape`), or the text as given when it is
    /// not a JSON object.
    pub schema: &'a str,
    /// The quality dimensions the answer rates, with their minimums and the
    /// pass score, stated in the instructions (`{{dimensions}}`); None for
    /// the guardian.
    pub scoring: Option<Scoring>,
    /// What a defect-fix review adds (`Kind::Defect`).
    pub defect: Option<Defect>,
    /// For a review done in parts, what of the diff this prompt may show;
    /// None: the whole diff, as one review.
    pub part: Option<DiffPart>,
}

/// The defect a fix is reviewed against. The report, triage and guidance
/// are cut to their share of the budget like the task's notes; speed's
/// determinations are short and always sent whole.
#[derive(Debug, Clone, Default)]
pub struct Defect {
    /// `report.md` as written.
    pub report: String,
    /// `triage.json`, pretty-printed.
    pub triage: String,
    /// `context.md`: the operator's guidance; empty when there is none.
    pub guidance: String,
    /// What speed established about the fix, one line each.
    pub determinations: Vec<String>,
}

/// What of the diff one prompt of a review done in parts may show: the diff
/// is too large for one prompt, so each part shows what the ones before
/// could not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffPart {
    /// 1-based.
    pub number: usize,
    /// Per file of `Diff::files`, in that order: where its changes still to
    /// show begin, or None when the file has nothing left to show (it was
    /// shown in an earlier part, or is shown by name only).
    pub from: Vec<Option<At>>,
}

/// A place in a file's hunks: line `line` (0-based, of `Hunk::lines`) of
/// hunk `hunk`. A hunk too large for a prompt of its own is shown in
/// pieces, so a part may begin or end inside one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct At {
    pub hunk: usize,
    pub line: usize,
}

impl At {
    /// The start of hunk `hunk`.
    pub fn hunk(hunk: usize) -> At {
        At { hunk, line: 0 }
    }
}

impl DiffPart {
    /// Part 1 of a review in parts: every hunk of every file.
    pub fn first(diff: &Diff) -> DiffPart {
        DiffPart {
            number: 1,
            from: vec![Some(At::default()); diff.files.len()],
        }
    }
}

/// What the task is and where its code lives.
#[derive(Debug, Clone, Default)]
pub struct Task {
    pub id: String,
    pub title: String,
    pub feature: Option<String>,
    pub branch: String,
    /// Short ids of the diff's base and head commits.
    pub base_commit: String,
    pub head_commit: String,
    pub description: String,
    pub rationale: String,
}

#[derive(Debug, Clone, Default)]
pub struct Criterion {
    /// "AC-1", "AC-2", …
    pub id: String,
    pub text: String,
    /// How to verify it ("test", "manual", …); empty when not given.
    pub verify_by: String,
}

/// The files a task declares it will touch.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    pub touched: Vec<String>,
    pub to_create: Vec<String>,
    pub to_modify: Vec<String>,
    pub to_delete: Vec<String>,
}

impl Scope {
    pub fn is_empty(&self) -> bool {
        self.touched.is_empty()
            && self.to_create.is_empty()
            && self.to_modify.is_empty()
            && self.to_delete.is_empty()
    }
}

/// One automated check result from the task's `gate_results`.
#[derive(Debug, Clone, Default)]
pub struct GateCheck {
    pub name: String,
    pub status: String,
    pub note: String,
}

/// One spec section to show, with where it comes from.
#[derive(Debug, Clone, Default)]
pub struct SpecSection {
    pub doc_path: String,
    /// "Library Catalog > Search"
    pub heading_path: String,
    pub start_line: usize,
    pub end_line: usize,
    pub text: String,
    /// From the primary spec: labelled SOURCE OF TRUTH.
    pub primary: bool,
    /// Must be sent whole (referenced by the task); never dropped for budget.
    pub required: bool,
    /// Among the sections most relevant to the task and the diff (or a
    /// parent of a referenced one): sent before the code, within the spec's
    /// share. Other optional sections only fill what the code leaves.
    pub related: bool,
    /// What the prompt says of it beside its heading: "referenced by the
    /// task", or the reference it is sent in place of.
    pub mark: Option<String>,
}

/// One changed symbol and its blast radius.
#[derive(Debug, Clone, Default)]
pub struct ImpactRow {
    /// The symbol as the table shows it, with its place: `Shelf::add
    /// (src/shelf.rs:12)`.
    pub symbol: String,
    /// Its bare name (`Shelf::add`) and file, for grouping the added,
    /// unreferenced symbols of a file into one row.
    pub name: String,
    pub file: String,
    /// "function", "struct", …
    pub kind: String,
    /// "added", "modified", "removed", …
    pub change: String,
    pub dependents: usize,
    pub dependent_files: usize,
    /// "core", "stable", "leaf", …
    pub stability: String,
    /// The most important dependents as `file:line`.
    pub top: Vec<String>,
}

/// The product vision document.
#[derive(Debug, Clone, Default)]
pub struct Vision {
    pub doc_path: String,
    pub text: String,
    /// Its sentences, most important first (those that constrain changes,
    /// the most relevant to the task and the diff first): what a review
    /// prompt sends, in document order, when the whole text does not fit
    /// the vision's share. Empty: the vision is sent whole or not at all.
    pub ranked: Vec<VisionSentence>,
}

/// One sentence of the vision, as written (line breaks joined by spaces).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct VisionSentence {
    /// 1-based line of the vision file where the sentence starts.
    pub line: usize,
    pub text: String,
    /// It says what must or must not be: sent within the vision's share.
    /// The others are sent only with what the rest of the prompt leaves.
    pub constrains: bool,
}

/// A rule of a spec section (`specs::rules`) the prompt holds alone, its
/// section not sent whole.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SentRule {
    pub doc_path: String,
    pub heading_path: String,
    /// 1-based line of the spec file where the sentence starts.
    pub line: usize,
    /// The sentence as sent.
    pub text: String,
}

/// The assembled prompt and its token accounting.
#[derive(Debug, Clone, Serialize)]
pub struct Prompt {
    pub text: String,
    /// `counter.count(&text)`, never above `budget`.
    pub total_tokens: usize,
    pub budget: usize,
    /// Per prompt section, in prompt order.
    pub sections: Vec<SectionAccount>,
    /// Files whose content (all or some hunks) is in the prompt.
    pub files_shown: usize,
    /// Files whose content is not in the prompt: item is the path.
    pub files_omitted: Vec<Omission>,
    /// The spec sections actually included, as (doc path, heading path):
    /// the only text a quote may come from.
    pub sent_sections: Vec<(String, String)>,
    /// The rules of spec sections not sent whole, each sent alone in the
    /// prompt's rules block: quotable as sent, nothing else of their
    /// sections.
    pub sent_rules: Vec<SentRule>,
    /// The vision text a review prompt holds, as (first line, text): the
    /// whole file as one piece, or the sentences sent; empty when none.
    pub sent_vision: Vec<VisionSentence>,
    /// The prompt's stable part, in bytes of `text` from its start: the
    /// instructions, the schema, the spec sections, the vision and the
    /// cross-cutting constraints, the same across the reviews of a feature
    /// (0 when the template marks none). Providers that cache a marked
    /// prefix are told to cache it.
    pub stable_prefix: usize,
    /// Its tokens.
    pub stable_tokens: usize,
    /// What of the diff is still to show after this prompt, as the next
    /// part of a review in parts; None when every change with content to
    /// show is in this prompt or was in an earlier part.
    #[serde(skip)]
    pub rest: Option<DiffPart>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SectionAccount {
    pub name: String,
    pub tokens: usize,
    pub omitted: Vec<Omission>,
}

/// Something left out of the prompt, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Omission {
    pub item: String,
    pub reason: String,
}

/// How the reason of an omission sent in part begins (a spec section whose
/// rules alone were sent).
pub const SENT_IN_PART: &str = "sent in part";

impl Omission {
    /// Whether some of it was sent (a spec section's rules alone), the rest
    /// left out.
    pub fn sent_in_part(&self) -> bool {
        self.reason.starts_with(SENT_IN_PART)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("unknown tokenizer encoding {name:?}; known encodings: {known}")]
    UnknownEncoding { name: String, known: String },
    #[error("could not build the {name} tokenizer: {message}")]
    Encoding { name: String, message: String },
    #[error("unknown prompt template {file}; known templates: {known}")]
    UnknownTemplate { file: String, known: String },
    #[error("could not read prompt template {}: {source}", path.display())]
    TemplateRead {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error(
        "prompt template {file} uses unknown placeholder {{{{{placeholder}}}}}; known placeholders: {known}"
    )]
    UnknownPlaceholder {
        file: String,
        placeholder: String,
        known: String,
    },
    #[error(
        "prompt template {file} lacks placeholder {{{{{placeholder}}}}}; without it that part of the prompt would be silently dropped"
    )]
    MissingPlaceholder { file: String, placeholder: String },
    #[error(
        "the parts of the prompt that cannot be cut (instructions, task, criteria, required spec sections, the list of changed files) need {needed} tokens, {} more than the budget of {budget}; raise the budget (--budget or review.token_budget) to at least {needed} or narrow the spec references",
        needed.saturating_sub(*budget)
    )]
    ProtectedTooLarge { needed: usize, budget: usize },
    #[error(
        "the budget of {budget} tokens leaves no room for any of the diff once the parts that cannot be cut (instructions, task, criteria, required spec sections, the list of changed files) are in: a prompt that shows no code cannot review it; raise the budget (--budget or review.token_budget) to at least {needed}"
    )]
    NoRoomForCode { needed: usize, budget: usize },
}
