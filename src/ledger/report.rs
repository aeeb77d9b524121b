//! The report of one review: what `--json` prints per task, what the report
//! file under `.speed/reviews/` holds (plus the prompt and raw answers), and
//! what the human printer reads. It reads back from a report file too
//! (`ledger::saved`): every key a report of an older speed may lack takes
//! its empty value, so old reports still show.

use serde::{Deserialize, Deserializer, Serialize};

use crate::defects::{self, Defect};
use crate::exit::Outcome;
use crate::verdict::{self, Decision, DefectScopeCheck, GuardianVerdict, ScopeViolation, Verdict};
use crate::work::Subject;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct Report {
    pub task_id: Option<String>,
    pub feature: Option<String>,
    pub branch: String,
    pub title: Option<String>,
    pub base_commit: String,
    pub head_commit: String,
    /// How the diff base was chosen (the first that resolved, or the head of
    /// an unmerged dependency the branch builds on), and why.
    pub base_resolved_by: String,
    /// speed's final verdict; None when the review failed.
    #[serde(deserialize_with = "final_verdict")]
    pub verdict: Option<verdict::Kind>,
    pub model_verdict: Option<verdict::Kind>,
    pub overrules: Vec<verdict::Overrule>,
    /// The quality scores against speed's thresholds; None when no
    /// dimension was rated (none configured, no model, no answer).
    pub scores: Option<verdict::Scores>,
    pub review: Option<Verdict>,
    pub quotes: Vec<verdict::QuoteCheck>,
    /// Every location the verdict cites, checked against the diff and the
    /// files at the head commit.
    pub evidence: Vec<verdict::Citation>,
    /// speed's own checks, worst first.
    pub checks: Vec<crate::checks::Finding>,
    /// The command checks that ran (`[[checks.command]]`), in order: each
    /// one's outcome, duration and findings, or why it did not run.
    pub checks_run: Vec<crate::checks::CheckRun>,
    /// Secrets replaced by `[REDACTED:<rule>]` wherever they were read.
    pub redactions: Vec<crate::secrets::Redaction>,
    pub guardian: GuardianOutcome,
    pub impact: serde_json::Value,
    pub coverage: Coverage,
    pub hashes: Hashes,
    pub model: ModelInfo,
    pub tokens: Tokens,
    /// What the review's model calls cost at `[llm]`'s prices (None when
    /// none are configured).
    pub cost: Option<crate::llm::cost::Cost>,
    pub duration_ms: u64,
    pub error: Option<String>,
    /// The feedback written to the task file (request_changes only).
    pub feedback: Option<String>,
    /// What a request for changes asks for and of whom: the work
    /// (`implementation`), the task's plan (`plan`: the planner re-plans),
    /// or anything at all (`nothing_implemented`: speed found an empty
    /// diff and asked no model). None for any other verdict.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rejection: Option<Rejected>,
    /// Where the full report was saved, relative to the repository root.
    pub report_path: Option<String>,
    /// Its Markdown summary beside it.
    pub summary_path: Option<String>,
    /// A person's part once the model approved (`review.human`): pending
    /// until `speed approve` or `speed reject`, or what they decided.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub human_review: Option<HumanReview>,
    pub notices: Vec<String>,
    /// A defect-fix review: the defect, speed's findings beside the model's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub defect: Option<DefectBlock>,
    /// The spec documents the review read, primary first.
    pub specs: Vec<String>,
    /// What the review did to the task file; None when it wrote none.
    pub task_update: Option<TaskUpdate>,
    /// A review in parts, part by part: what each part showed and what it
    /// answered, or why it has no answer. Empty for a review in one prompt.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<PartOutcome>,
    /// A re-review: each blocking finding of the previous review, what the
    /// model said of it and what speed recorded.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub previous_findings: Vec<verdict::previous::Check>,
    /// The reconcile turn of a review in one prompt, when its first answer
    /// contradicted itself (a review in parts records each part's in
    /// `parts`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reconcile: Option<Reconcile>,
    #[serde(skip)]
    pub outcome: Outcome,
}

/// The reconcile turn: why the first answer contradicted itself, what it
/// said and rated, what speed asked, and what the second answer said.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reconcile {
    pub reason: verdict::reconcile::Reason,
    /// The first answer's verdict, its score of each dimension, and its
    /// weighted overall (None without dimensions).
    pub first_verdict: verdict::Kind,
    pub first_scores: std::collections::BTreeMap<String, u32>,
    pub first_overall: Option<u32>,
    /// The message speed sent.
    pub turn: String,
    /// The second answer's verdict, which decided; None when it could not
    /// be used and the first answer decided.
    pub verdict: Option<verdict::Kind>,
    /// Why the second answer could not be used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Report {
    /// The parts of a review in parts that gave no answer: their share of
    /// the diff was shown to the model but not reviewed.
    pub fn failed_parts(&self) -> Vec<&PartOutcome> {
        self.parts
            .iter()
            .filter(|p| p.status != "answered" || p.error.is_some())
            .collect()
    }

    /// The failed parts in one sentence ("part 2 of 3 (14 files) gave no
    /// answer"), None when every part answered.
    pub fn unanswered(&self) -> Option<String> {
        let failed = self.failed_parts();
        if failed.is_empty() {
            return None;
        }
        let count = self.parts.len();
        let named: Vec<String> = failed
            .iter()
            .map(|p| {
                format!(
                    "part {} of {count} ({} file{})",
                    p.index,
                    p.files,
                    if p.files == 1 { "" } else { "s" }
                )
            })
            .collect();
        Some(format!(
            "The model answered {} of {count} parts: {} gave no answer, so {} share of the diff was not reviewed",
            count - failed.len(),
            named.join(", "),
            if failed.len() == 1 { "its" } else { "their" }
        ))
    }

    /// Each quote of the verdict once: a sentence the merged answer both
    /// checked and found missing (two parts of a review in parts) is one
    /// quote, as looked up.
    pub fn distinct_quotes(&self) -> Vec<&verdict::QuoteCheck> {
        let mut out: Vec<&verdict::QuoteCheck> = Vec::new();
        for q in &self.quotes {
            if !out
                .iter()
                .any(|have| have.spec_quote.trim() == q.spec_quote.trim())
            {
                out.push(q);
            }
        }
        out
    }

    /// Each reconcile turn of the review, in one sentence for people: the
    /// one-prompt review's, or each part's, named.
    pub fn reconciled(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .reconcile
            .iter()
            .map(|r| r.describe(self.review.as_ref()))
            .collect();
        let count = self.parts.len();
        for p in &self.parts {
            if let Some(r) = &p.reconcile {
                out.push(format!(
                    "Part {} of {count}: {}",
                    p.index,
                    r.describe(p.review.as_ref())
                ));
            }
        }
        out
    }
}

impl Reconcile {
    /// The turn in one sentence for people: what the first answer said,
    /// and what the second did (`second`: the answer that decided, for the
    /// scores it changed).
    pub fn describe(&self, second: Option<&Verdict>) -> String {
        let first = match self.reason {
            verdict::reconcile::Reason::ApprovalUnderMinimum => {
                let under: Vec<&str> = self
                    .turn
                    .lines()
                    .filter_map(|l| l.strip_prefix("- "))
                    .collect();
                format!(
                    "The first answer approved with {}; asked once more, it",
                    under.join(", ")
                )
            }
            verdict::reconcile::Reason::NothingBlocking => "The first answer requested changes but named nothing that blocks approval; asked what must change, it".to_string(),
        };
        let changed: Vec<String> = second
            .map(|v| {
                self.first_scores
                    .iter()
                    .filter_map(|(name, before)| {
                        let after = v.dimensions.get(name)?.score;
                        (after != *before).then(|| format!("{name} {before} → {after}"))
                    })
                    .collect()
            })
            .unwrap_or_default();
        let scores = if changed.is_empty() {
            String::new()
        } else {
            format!(" (scores changed: {})", changed.join(", "))
        };
        match (self.verdict, &self.error) {
            (Some(verdict::Kind::Approve), _) => format!("{first} approved{scores}."),
            (Some(_), _) => format!("{first} requested changes{scores}."),
            (None, error) => format!(
                "{first} gave no usable answer ({}), so the first answer decided.",
                error.as_deref().unwrap_or("no answer")
            ),
        }
    }
}

/// One part of a review in parts, as it was asked.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PartOutcome {
    /// 1-based.
    pub index: usize,
    /// speed's count of the part's prompt.
    pub tokens: usize,
    /// Files whose changes the part's prompt shows.
    pub files: usize,
    /// "answered" or "failed".
    pub status: String,
    /// Why the part has no answer.
    pub error: Option<String>,
    /// Its answer, as validated (a failed review keeps the answers of the
    /// parts that succeeded).
    pub review: Option<Verdict>,
    /// Its reconcile turn, when its first answer contradicted itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reconcile: Option<Reconcile>,
    /// The files whose changes its prompt showed, each whole or some
    /// hunks (a report of an older speed has none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shown: Vec<crate::prompt::ShownFile>,
}

/// A report read back from a file starts from this: a branch review of
/// nothing, every list empty.
impl Default for Report {
    fn default() -> Report {
        Report::new(&Subject::Branch {
            branch: String::new(),
            specs: Vec::new(),
            criteria: Vec::new(),
            criteria_file: None,
        })
    }
}

/// speed's own verdict as a report file holds it: the model's two words,
/// or `checks_passed`, which no model answer may say (so `verdict::Kind`
/// does not read it) but an offline review writes.
fn final_verdict<'de, D: Deserializer<'de>>(d: D) -> Result<Option<verdict::Kind>, D::Error> {
    let word: Option<String> = Option::deserialize(d)?;
    match word.as_deref() {
        None => Ok(None),
        Some("checks_passed") => Ok(Some(verdict::Kind::ChecksPassed)),
        Some(other) => verdict::Kind::ALL
            .into_iter()
            .find(|k| k.as_str() == other)
            .map(Some)
            .ok_or_else(|| {
                serde::de::Error::unknown_variant(
                    other,
                    &["approve", "request_changes", "checks_passed"],
                )
            }),
    }
}

impl Report {
    /// The report of a task that could not even be read (unknown id, ambiguous
    /// id, malformed file): its error, and nothing written anywhere.
    pub fn unreadable(task_id: Option<String>, feature: Option<String>, message: String) -> Report {
        Report {
            task_id,
            feature,
            error: Some(message),
            outcome: Outcome::Error,
            ..Report::default()
        }
    }

    /// The report of a defect that could not be read (unknown name, missing
    /// triage, malformed file): its error, and nothing written anywhere.
    pub fn unreadable_defect(name: &str, message: String) -> Report {
        let mut report = Report::unreadable(None, None, message);
        report.defect = Some(DefectBlock::named(name));
        report
    }

    /// The report of `subject` before anything is known of its review.
    pub fn new(subject: &Subject) -> Report {
        let task = subject.task();
        Report {
            task_id: task.map(|t| t.id.clone()),
            feature: task.and_then(|t| t.feature.clone()),
            branch: subject.branch().to_string(),
            title: match subject {
                Subject::Defect(review) => Some(review.defect.report.title.clone())
                    .filter(|t| !t.is_empty())
                    .or(Some(review.defect.name.clone())),
                _ => task.map(|t| t.title.clone()),
            },
            base_commit: String::new(),
            head_commit: String::new(),
            base_resolved_by: String::new(),
            verdict: None,
            model_verdict: None,
            overrules: Vec::new(),
            scores: None,
            review: None,
            quotes: Vec::new(),
            evidence: Vec::new(),
            checks: Vec::new(),
            checks_run: Vec::new(),
            redactions: Vec::new(),
            guardian: GuardianOutcome::not_run("the review did not complete"),
            impact: serde_json::Value::Array(Vec::new()),
            coverage: Coverage::default(),
            hashes: Hashes::default(),
            model: ModelInfo::default(),
            tokens: Tokens::default(),
            cost: None,
            duration_ms: 0,
            error: None,
            feedback: None,
            rejection: None,
            report_path: None,
            summary_path: None,
            human_review: None,
            notices: Vec::new(),
            defect: subject
                .defect()
                .map(|review| DefectBlock::new(&review.defect)),
            specs: Vec::new(),
            task_update: None,
            parts: Vec::new(),
            previous_findings: Vec::new(),
            reconcile: None,
            outcome: Outcome::Error,
        }
    }

    /// Whether the review got as far as a prompt (so the report has content
    /// worth showing even when the model step failed).
    pub fn prepared(&self) -> bool {
        !self.hashes.prompt.is_empty()
    }

    /// Whether the review decided: approved, sent back or (offline) passed
    /// the checks, with no error. A failed review, or one waiting in a
    /// provider batch, decided nothing.
    pub fn decided(&self) -> bool {
        self.error.is_none()
            && self.verdict.is_some()
            && matches!(self.outcome, Outcome::Approved | Outcome::ChangesRequested)
    }

    /// The review's error with its subject in front, once: most errors
    /// already name it (`branch x: --spec: ...`), and saying it twice is
    /// noise in a CI log.
    pub fn error_line(&self) -> Option<String> {
        let err = self.error.as_deref()?;
        let label = self.label();
        let named = err
            .strip_prefix(label.as_str())
            .is_some_and(|rest| rest.starts_with([':', ' ']));
        Some(if named {
            err.to_string()
        } else {
            format!("{label}: {err}")
        })
    }

    /// "task 3", "defect login-crash" or "branch feature/x", for messages.
    pub fn label(&self) -> String {
        match (&self.task_id, &self.defect) {
            (Some(id), _) => format!("task {id}"),
            (None, Some(defect)) => format!("defect {}", defect.name),
            (None, None) => format!("branch {}", self.branch),
        }
    }
}

/// What a request for changes asks for, as every format says it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rejected {
    pub kind: RejectedKind,
    /// The model's reason for a plan rejection; speed's words otherwise.
    #[serde(default)]
    pub reason: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RejectedKind {
    /// The work must change.
    Implementation,
    /// The task is planned wrong: the planner re-plans, no coding fix.
    Plan,
    /// The branch does not differ from its base: speed decided, no model.
    NothingImplemented,
}

impl Rejected {
    /// The decision in a few words, the same in every format.
    pub fn headline(&self) -> &'static str {
        match self.kind {
            RejectedKind::Implementation => "changes requested",
            RejectedKind::Plan => "the plan is wrong: re-plan",
            RejectedKind::NothingImplemented => "speed found nothing implemented",
        }
    }

    /// The headline at the start of a sentence.
    pub fn title(&self) -> &'static str {
        match self.kind {
            RejectedKind::Implementation => "Changes requested",
            RejectedKind::Plan => "The plan is wrong: re-plan",
            RejectedKind::NothingImplemented => "speed found nothing implemented",
        }
    }
}

impl Report {
    /// What this report's request for changes asks for, from what was
    /// decided: a plan rejection when the model rejected the plan and
    /// speed requests changes too (speed's own reasons to request changes
    /// still leave the plan to re-plan first). The stored `rejection`
    /// (an empty diff's) wins.
    pub fn judge_rejection(&self) -> Option<Rejected> {
        if self.verdict != Some(verdict::Kind::RequestChanges) {
            return None;
        }
        if let Some(known) = &self.rejection {
            return Some(known.clone());
        }
        let plan = self
            .review
            .as_ref()
            .and_then(|r| r.rejection.as_ref())
            .filter(|r| {
                r.kind == verdict::RejectionKind::Plan
                    && self.model_verdict == Some(verdict::Kind::RequestChanges)
            });
        Some(match plan {
            Some(rejection) => Rejected {
                kind: RejectedKind::Plan,
                reason: match rejection.reason.trim() {
                    "" => "the review rejected the task's plan".to_string(),
                    reason => reason.to_string(),
                },
            },
            None => Rejected {
                kind: RejectedKind::Implementation,
                reason: String::new(),
            },
        })
    }

    /// The plan rejection's reason, when this report is one.
    pub fn replan(&self) -> Option<String> {
        self.judge_rejection()
            .filter(|r| r.kind == RejectedKind::Plan)
            .map(|r| r.reason)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_names_its_subject_once() {
        let mut report = Report::unreadable(Some("3".into()), None, "no such task".into());
        assert_eq!(report.error_line().as_deref(), Some("task 3: no such task"));
        report.error = Some("task 3: --spec: no section Cart".into());
        assert_eq!(
            report.error_line().as_deref(),
            Some("task 3: --spec: no section Cart")
        );
        report.error = Some("task 3 is being reviewed by another speed process".into());
        assert_eq!(
            report.error_line().as_deref(),
            Some("task 3 is being reviewed by another speed process")
        );
        report.error = Some("task 31: x".into());
        assert_eq!(report.error_line().as_deref(), Some("task 3: task 31: x"));
    }
}

/// A person's review of a model's approval.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct HumanReview {
    /// pending | approved | rejected | skipped
    pub status: String,
    /// Who decided (empty while pending).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub by: String,
    /// When it was asked for, or decided.
    pub at: String,
    /// The note of an approval, the reason of a rejection or a skip.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub reason: String,
}

impl HumanReview {
    pub fn pending(at: &str) -> HumanReview {
        HumanReview {
            status: "pending".to_string(),
            by: String::new(),
            at: at.to_string(),
            reason: String::new(),
        }
    }

    pub fn is_pending(&self) -> bool {
        self.status == "pending"
    }
}

/// The task's state as the review left it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TaskUpdate {
    /// `done` after an approval, `pending` or `failed` after request_changes.
    pub status: String,
    pub revision_count: u32,
    /// The status before the review.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub was: String,
    /// A request for changes counted a new revision: false when the last
    /// rejection judged the same head (the count stays).
    pub new_revision: bool,
    /// Why the task failed, when this review failed it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The number of the review's `review_history` entry (attempts are
    /// numbered once, in order, whoever decided).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attempt: Option<u32>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct GuardianOutcome {
    /// aligned | flagged | rejected | skipped | unavailable | not_run
    pub status: String,
    pub summary: String,
    pub flags: Vec<verdict::Flag>,
    /// Why it was skipped or unavailable.
    pub reason: Option<String>,
    pub model: Option<String>,
    /// What its prompt showed of the diff, within its own budget; None
    /// when it gave no answer (or a report of an older speed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coverage: Option<crate::prompt::Coverage>,
}

/// A report of an older speed without a guardian: it did not run.
impl Default for GuardianOutcome {
    fn default() -> GuardianOutcome {
        GuardianOutcome {
            status: "not_run".to_string(),
            summary: String::new(),
            flags: Vec::new(),
            reason: None,
            model: None,
            coverage: None,
        }
    }
}

impl GuardianOutcome {
    pub fn not_run(reason: &str) -> Self {
        GuardianOutcome {
            status: "not_run".to_string(),
            summary: String::new(),
            flags: Vec::new(),
            reason: Some(reason.to_string()),
            model: None,
            coverage: None,
        }
    }

    pub fn skipped(reason: &str) -> Self {
        GuardianOutcome {
            status: "skipped".to_string(),
            ..GuardianOutcome::not_run(reason)
        }
    }

    /// What it saw, in one sentence like the review's coverage, and
    /// whether it saw every change; None when it gave no answer.
    pub fn seen(&self) -> Option<(String, bool)> {
        use crate::numbers::count;
        let c = self.coverage.as_ref()?;
        if c.files_total == 0 {
            return None;
        }
        let (seen, all) = (c.lines_shown, c.lines_shown + c.lines_unseen);
        if c.files_unseen == 0 {
            return Some((
                format!(
                    "The guardian saw the whole diff: {}, {}{}",
                    c.files_words(),
                    count(all, "changed line"),
                    c.by_name_words()
                ),
                true,
            ));
        }
        Some((
            format!(
                "The guardian saw {} of {}, within guardian.token_budget: {}{}",
                crate::numbers::thousands(seen as u64),
                count(all, "changed line"),
                c.files_words(),
                c.by_name_words()
            ),
            false,
        ))
    }

    pub fn from_verdict(g: &GuardianVerdict, model: &str) -> Self {
        GuardianOutcome {
            status: g.status.as_str().to_string(),
            summary: g.summary.clone(),
            flags: g.flags.clone(),
            reason: None,
            model: Some(model.to_string()),
            coverage: None,
        }
    }
}

/// How much of the diff the model saw, over every part of the review.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Coverage {
    #[serde(flatten)]
    pub diff: crate::prompt::Coverage,
    /// Prompts the review used: 1 unless the diff did not fit one.
    pub parts: usize,
    /// `review.max_parts`: changed code beyond that many prompts is unseen.
    pub max_parts: usize,
    /// The review showed what changed since the last review and that
    /// review's verdict, not the whole change (the figures above are the
    /// interdiff's).
    pub incremental: bool,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Hashes {
    pub diff: String,
    pub spec: String,
    pub prompt: String,
    /// Each spec file the review read, by the hash of its bytes: what an
    /// approval covers besides the diff (`ledger::covers`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub spec_files: Vec<SpecFile>,
}

/// A spec document a review read, by content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpecFile {
    pub path: String,
    /// `sha256:<hex>` of its bytes as read at the main branch's commit.
    pub sha256: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ModelInfo {
    pub provider: String,
    pub name: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct Tokens {
    /// As the API reported them, summed over every call of this review.
    pub prompt: u64,
    pub completion: u64,
    pub budget: usize,
    /// speed's own count of the assembled prompt (of every part's, summed,
    /// for a review done in parts).
    pub prompt_counted: usize,
    /// The parts of `prompt` the providers read from and wrote to their
    /// prompt caches.
    pub cache_read: u64,
    pub cache_write: u64,
    /// Who counted `prompt` and `completion`: `provider` (its usage), or
    /// `speed` when a call's provider reported none (a command such as
    /// `claude -p`) and speed counted what was sent and answered.
    #[serde(default = "provider")]
    pub counted_by: String,
}

fn provider() -> String {
    "provider".to_string()
}

impl Default for Tokens {
    fn default() -> Tokens {
        Tokens {
            prompt: 0,
            completion: 0,
            budget: 0,
            prompt_counted: 0,
            cache_read: 0,
            cache_write: 0,
            counted_by: provider(),
        }
    }
}

impl Tokens {
    /// speed counted (some of) the figures itself.
    pub fn by_speed(&self) -> bool {
        self.counted_by == "speed"
    }
}

/// One model call, kept in the report file to reproduce the decision.
#[derive(Debug, Clone, Serialize)]
pub struct Call {
    /// "review", "review (corrective retry)", "guardian", ...
    pub stage: String,
    pub duration_ms: u64,
    pub attempts: u32,
    pub prompt_tokens: Option<u64>,
    pub completion_tokens: Option<u64>,
    /// The provider reported no usage: the two figures above are speed's
    /// count of the messages sent and the answer.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub counted: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_read_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_write_tokens: Option<u64>,
    /// The provider batch that answered this call, when one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub batch: Option<String>,
    /// The raw answer, or the error when the call failed.
    pub answer: Option<String>,
    pub error: Option<String>,
}

/// Everything the report file holds beyond the report itself.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Evidence {
    pub prompt: String,
    pub guardian_prompt: Option<String>,
    pub calls: Vec<Call>,
    pub decision: Option<Decision>,
    pub sections: Vec<crate::prompt::SectionAccount>,
    pub spec_sources: Vec<String>,
    /// The files the change touches, for the summary.
    pub changes: Vec<Change>,
    /// What the subject asks, one line each (its description, its
    /// criteria), for the summary; redacted like the subject.
    #[serde(skip)]
    pub asked: Vec<String>,
    /// What the secrets safety net replaced so far (prompts, answers): each
    /// becomes a `secret` finding of the report.
    #[serde(skip)]
    pub leaks: Vec<crate::secrets::net::Leak>,
}

/// A changed file, as a review's summary lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    pub path: String,
    /// added | modified | deleted | renamed | copied | type_change
    pub status: String,
    pub additions: usize,
    pub deletions: usize,
}

/// What a defect-fix report adds: the defect, speed's findings and the
/// model's own scope findings side by side, and what happened to the state.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct DefectBlock {
    pub name: String,
    pub dir: String,
    pub title: String,
    /// The feature its report names (the first of its related features):
    /// the log counts the defect's reviews under it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub feature: Option<String>,
    pub severity: Option<String>,
    pub complexity: Option<String>,
    /// `state.json`'s status when the review started.
    pub status: Option<String>,
    /// Its status after the review, when `--update-state` was given.
    pub state: Option<String>,
    pub affected_files: Vec<String>,
    /// What speed established (None when the review stopped before).
    pub speed: Option<defects::Findings>,
    /// What the model said of the scope (None until it answered).
    pub model: Option<ModelScope>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ModelScope {
    pub defect_scope_check: Option<DefectScopeCheck>,
    pub scope_violations: Vec<ScopeViolation>,
}

impl ModelScope {
    pub fn of(verdict: &Verdict) -> ModelScope {
        ModelScope {
            defect_scope_check: verdict.defect_scope_check,
            scope_violations: verdict.scope_violations.clone(),
        }
    }
}

impl Default for DefectBlock {
    fn default() -> DefectBlock {
        DefectBlock::named("")
    }
}

impl DefectBlock {
    /// A defect known only by name (its folder could not be read).
    pub fn named(name: &str) -> DefectBlock {
        DefectBlock {
            name: name.to_string(),
            dir: String::new(),
            title: String::new(),
            feature: None,
            severity: None,
            complexity: None,
            status: None,
            state: None,
            affected_files: Vec::new(),
            speed: None,
            model: None,
        }
    }

    pub fn new(defect: &Defect) -> DefectBlock {
        DefectBlock {
            name: defect.name.clone(),
            dir: defect.dir.display().to_string(),
            title: defect.report.title.clone(),
            feature: defect
                .report
                .related_features
                .first()
                .filter(|f| !f.trim().is_empty())
                .cloned(),
            severity: defect.report.severity_label.clone(),
            complexity: defect.complexity().map(str::to_string),
            status: defect.status().map(str::to_string),
            state: None,
            affected_files: defect.triage.affected_files.clone(),
            speed: None,
            model: None,
        }
    }
}
