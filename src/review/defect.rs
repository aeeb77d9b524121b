//! The defect branch of the review pipeline: what a defect-fix review adds
//! to a task review. Before the model is asked, speed establishes the fix's
//! scope, its size and whether the reproducing test was changed
//! (`establish`); the prompt gets the report, the triage, the operator's
//! guidance and those findings; the decision applies the defect rules
//! (`verdict::defect`); the guardian runs after an approval only when speed
//! counts a large fix; and with `--update-state` an approval moves the
//! defect's `state.json` from `fixed` to `reviewed` and every decided review
//! is appended to its `logs/review.log`.

use std::path::Path;

use serde::Serialize;
use serde_json::json;

use crate::checks::measure::{self, Size};
use crate::defects::{self, Defect, Exempt, Violation, repro};
use crate::git::{Diff, Repository};
use crate::prompt;
use crate::secrets::{self, Redaction};
use crate::tasks::Criterion;
use crate::verdict::{self, DefectScopeCheck, ScopeViolation, Verdict};

use super::Error;
use super::prepare::Shared;
use super::report::Report;

/// A defect to review, with what the review was asked to do with it.
#[derive(Debug, Clone)]
pub struct DefectReview {
    pub defect: Defect,
    /// The defect-fix criteria, as the prompt lists them and the verdict
    /// must rate them.
    pub criteria: Vec<Criterion>,
    /// `--update-state`.
    pub update_state: bool,
}

impl DefectReview {
    pub fn new(defect: Defect, update_state: bool) -> DefectReview {
        let criteria = defects::CRITERIA
            .iter()
            .map(|(id, text)| Criterion {
                id: id.to_string(),
                text: text.to_string(),
                verify_by: None,
            })
            .collect();
        DefectReview {
            defect,
            criteria,
            update_state,
        }
    }
}

/// Replaces every secret in the defect's report, triage and guidance (this
/// review's copy: the folder keeps what it has), where they are read, so
/// the prompt, the reports and the log never carry one. Locations are lines
/// of the files as they are on disk.
pub fn redact(review: &mut DefectReview, root: &Path) -> Vec<Redaction> {
    let d = &mut review.defect;
    let mut found = Vec::new();
    let mut redact_text = |file: &Path, text: &mut String| {
        let out = secrets::redact(text, secrets::Context::PROSE);
        found.extend(out.found.iter().map(|(line, rule)| Redaction {
            rule: rule.to_string(),
            file: file.display().to_string(),
            line: *line,
        }));
        *text = out.text;
    };
    redact_text(&d.file(defects::store::REPORT), &mut d.report_text);
    d.report = defects::report::parse(&d.report_text);
    if let Some(context) = &mut d.context {
        redact_text(&d.dir.join(defects::store::CONTEXT), context);
    }
    // The triage is sent as JSON: each string in it is redacted, and the
    // secrets are located by line in the file's own text.
    let mut rules = Vec::new();
    super::guard::redact_strings(&mut d.triage.raw, &mut |text: &mut String| {
        let out = secrets::redact(text, secrets::Context::PROSE);
        if !out.found.is_empty() {
            rules.extend(out.found.iter().map(|(_, rule)| *rule));
            *text = out.text;
        }
    });
    if !rules.is_empty() {
        let rel = d.file(defects::store::TRIAGE);
        let file = rel.display().to_string();
        let on_disk = std::fs::read_to_string(root.join(&rel)).unwrap_or_default();
        let located = secrets::redact(&on_disk, secrets::Context::PROSE).found;
        let mut add = |line: u32, rule: &str| {
            found.push(Redaction {
                rule: rule.to_string(),
                file: file.clone(),
                line,
            })
        };
        if located.is_empty() {
            // The file changed since it was read; its strings were still redacted.
            rules.iter().for_each(|rule| add(0, rule));
        } else {
            located.iter().for_each(|(line, rule)| add(*line, rule));
        }
    }
    found
}

/// What speed established about one fix, without the model.
#[derive(Debug, Clone, Serialize)]
pub struct Findings {
    /// Changed paths outside the triage's `affected_files`.
    pub scope_violations: Vec<Violation>,
    pub size: Size,
    /// Commits of the branch read for the reproducing test.
    pub commits: usize,
    /// Older commits were not read.
    pub history_truncated: bool,
    /// Why the branch's commits could not be read, when they could not.
    pub history_error: Option<String>,
    /// The tests earlier commits of the branch wrote.
    pub reproducing_tests: Vec<repro::Reproducing>,
    /// Changes later commits made to them.
    pub test_changes: Vec<repro::TestChange>,
}

impl Findings {
    /// The facts the decision applies.
    pub fn facts(&self) -> verdict::defect::Facts {
        verdict::defect::Facts {
            scope_violations: self
                .scope_violations
                .iter()
                .map(|v| (v.file.clone(), v.description.clone()))
                .collect(),
            test_changes: self
                .test_changes
                .iter()
                .map(|c| (c.path.clone(), c.description.clone()))
                .collect(),
        }
    }

    /// What the prompt says speed established, one line each.
    pub fn lines(&self, defect: &Defect) -> Vec<String> {
        let mut out = Vec::new();
        let affected = defect.triage.affected_files.len();
        match self.scope_violations.len() {
            0 => out.push(format!(
                "Scope: every changed path is among the triage's {affected} affected file{} or exempt from the scope (defect.exempt, .speed/).",
                if affected == 1 { "" } else { "s" }
            )),
            n => {
                out.push(format!(
                    "Scope: {n} changed path{} outside the triage's affected files.",
                    if n == 1 { " is" } else { "s are" }
                ));
                out.extend(
                    self.scope_violations
                        .iter()
                        .map(|v| format!("Out of scope: {}.", v.description)),
                );
            }
        }
        out.push(format!(
            "Size: {}: {}.",
            self.size.describe(),
            if self.size.large {
                "large for a defect fix"
            } else {
                "within the limits of a defect fix"
            }
        ));
        if let Some(err) = &self.history_error {
            out.push(format!(
                "Reproducing test: the branch's commits could not be read ({err}); whether the test was changed is not known."
            ));
            return out;
        }
        if self.commits <= 1 {
            out.push(
                "Reproducing test: the branch has one commit, so a reproducing test cannot be told apart from the fix."
                    .to_string(),
            );
        } else if self.reproducing_tests.is_empty() {
            out.push(format!(
                "Reproducing test: none of the branch's {} commits before the last writes test code.",
                self.commits - 1
            ));
        } else {
            for t in &self.reproducing_tests {
                out.push(format!(
                    "Reproducing test: {} (written by commit {}).",
                    t.path,
                    t.commit.describe()
                ));
            }
        }
        if self.test_changes.is_empty() && !self.reproducing_tests.is_empty() {
            out.push(
                "The reproducing test is unchanged since the commit that wrote it.".to_string(),
            );
        }
        out.extend(
            self.test_changes
                .iter()
                .map(|c| format!("CHANGED: {}", c.description)),
        );
        if self.history_truncated {
            out.push(format!(
                "Only the newest {} commits of the branch were read.",
                repro::MAX_COMMITS
            ));
        }
        out
    }
}

/// What an offline review of a defect fix holds against it: speed's own
/// findings, as feedback (empty when there is none).
pub fn offline_feedback(found: &Findings) -> String {
    let facts = found.facts();
    if facts.scope_violations.is_empty() && facts.test_changes.is_empty() {
        return String::new();
    }
    let mut out = String::from("speed's own findings on this defect fix block it:\n");
    for (_, why) in facts.scope_violations.iter().chain(&facts.test_changes) {
        out.push_str(&format!("- {why}\n"));
    }
    out
}

/// Computes the findings of a fix: from the diff, and from the branch's
/// commits between `base` and the diff's head.
pub fn establish(
    repo: &Repository,
    shared: &Shared,
    defect: &Defect,
    diff: &Diff,
    base: &str,
) -> Result<Findings, Error> {
    let settings = &shared.settings.defect;
    let exempt = Exempt::new(&settings.exempt).map_err(|e| Error::Input {
        path: ".speed/config.toml".into(),
        message: e.to_string(),
    })?;
    let scope_violations = defects::scope::violations(diff, &defect.triage.affected_files, &exempt);
    let size = measure::size(diff, settings.max_lines, settings.max_files);
    let mut findings = Findings {
        scope_violations,
        size,
        commits: 0,
        history_truncated: false,
        history_error: None,
        reproducing_tests: Vec::new(),
        test_changes: Vec::new(),
    };
    match repro::walk(repo, base, &diff.head_commit, &crate::paths::is_test) {
        Ok(walk) => {
            findings.commits = walk.commits;
            findings.history_truncated = walk.truncated;
            findings.reproducing_tests = walk.reproducing;
            findings.test_changes = walk.changes;
        }
        Err(err) => findings.history_error = Some(err.to_string()),
    }
    Ok(findings)
}

/// What the reviewer and the user should know about the defect folder
/// itself: what the report lacks of the orchestrator's intake rules, and a
/// state that does not say the fix is done.
pub fn notices(defect: &Defect) -> Vec<String> {
    let report = defect.file(defects::store::REPORT).display().to_string();
    let mut out: Vec<String> = defect
        .report
        .problems
        .iter()
        .map(|p| format!("{report}: {p}, which the orchestrator's intake requires."))
        .collect();
    match defect.status() {
        Some("fixed") | None => {}
        Some(status) => out.push(format!(
            "{} says status {status:?}, not \"fixed\": the fix may not be finished.",
            defect.file(defects::store::STATE).display()
        )),
    }
    out
}

/// The spec documents of a defect, as `PATH[#Section]`: the triage's
/// `related_spec`, else the spec of each feature the report relates it to
/// (the feature's `spec_path` in either layout, else
/// `specs/product/<feature>.md` when it exists at main's commit).
pub fn spec_args(
    root: &Path,
    defect: &Defect,
    exists: &dyn Fn(&str) -> bool,
    notices: &mut Vec<String>,
) -> Vec<String> {
    // A spec is a file of the repository, read at main's commit: a path
    // that climbs out of it or starts at the root names nothing there.
    let inside = |spec: &str| {
        let path = spec.split('#').next().unwrap_or("").trim();
        !path.is_empty()
            && !path.starts_with(['/', '\\'])
            && !path.split(['/', '\\']).any(|part| part == "..")
    };
    let mut out: Vec<String> = Vec::new();
    for spec in &defect.triage.related_spec {
        if inside(spec) {
            out.push(spec.clone());
        } else {
            notices.push(format!(
                "The triage's related_spec {spec:?} is not a path inside the repository: it was not read."
            ));
        }
    }
    if !out.is_empty() {
        return out;
    }
    for feature in &defect.report.related_features {
        if defects::store::check_name(feature).is_err() {
            notices.push(format!(
                "The report's Related Feature {feature:?} is not a feature name: no spec was read for it."
            ));
            continue;
        }
        let spec_path = [".speed/features", ".speed/shared/features"]
            .iter()
            .find_map(|dir| {
                let text =
                    std::fs::read_to_string(root.join(dir).join(feature).join("spec_path")).ok()?;
                let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
                Some(line.trim_start_matches("./").to_string())
            });
        let conventional = format!("specs/product/{feature}.md");
        match spec_path {
            Some(path) => out.push(path),
            None if exists(&conventional) => out.push(conventional),
            None => notices.push(format!(
                "The report's Related Feature {feature} has no spec: {conventional} does not exist on the main branch."
            )),
        }
    }
    out
}

/// The defect as the prompt's task block shows it.
pub fn prompt_task(defect: &Defect, branch: &str, base: &str, head: &str) -> prompt::Task {
    let report = &defect.report;
    let mut facts = vec![format!("defect folder: {}", defect.dir.display())];
    if let Some(severity) = &report.severity_label {
        facts.push(format!("severity: {severity}"));
    }
    if let Some(complexity) = defect.complexity() {
        facts.push(format!("complexity: {complexity}"));
    }
    if let Some(status) = defect.status() {
        facts.push(format!("status: {status}"));
    }
    if !report.related_features.is_empty() {
        facts.push(format!(
            "related features: {}",
            report.related_features.join(", ")
        ));
    }
    prompt::Task {
        id: format!("defect {}", defect.name),
        title: if report.title.is_empty() {
            defect.name.clone()
        } else {
            report.title.clone()
        },
        feature: None,
        branch: branch.to_string(),
        base_commit: crate::git::short(base).to_string(),
        head_commit: crate::git::short(head).to_string(),
        description: facts.join("\n"),
        rationale: "Fix the defect the report describes, and nothing else.".to_string(),
    }
}

/// The report, the triage and the guidance for the prompt.
pub fn prompt_defect(defect: &Defect, findings: &Findings) -> prompt::Defect {
    prompt::Defect {
        report: defect.report_text.clone(),
        triage: serde_json::to_string_pretty(&defect.triage.raw).unwrap_or_default(),
        guidance: defect.context.clone().unwrap_or_default(),
        determinations: findings.lines(defect),
    }
}

/// The text spec sections are ranked against: what the defect is about.
pub fn task_text(defect: &Defect) -> String {
    let r = &defect.report;
    let mut text = format!(
        "{}\n{}\n{}\n{}\n",
        r.title, r.observed, r.expected, r.reproduction
    );
    for key in ["root_cause_hypothesis", "suggested_approach"] {
        if let Some(value) = defect.triage.raw.get(key).and_then(|v| v.as_str()) {
            text.push_str(value);
            text.push('\n');
        }
    }
    text
}

/// The question the guardian is asked about a large fix.
pub fn guardian_notice(defect: &Defect, size: &Size) -> String {
    format!(
        "Defect-fix scope check: this is the fix of defect {}, and it is large for a fix: {}. Is this fix staying in scope? A fix corrects the defect and nothing else: reject feature additions, refactoring, new behaviour or changes the defect does not need, and say what to take out.",
        defect.name,
        size.describe()
    )
}

/// What a defect-fix report adds: the defect, speed's findings and the
/// model's own scope findings side by side, and what happened to the state.
#[derive(Debug, Clone, Serialize)]
pub struct Block {
    pub name: String,
    pub dir: String,
    pub title: String,
    pub severity: Option<String>,
    pub complexity: Option<String>,
    /// `state.json`'s status when the review started.
    pub status: Option<String>,
    /// Its status after the review, when `--update-state` was given.
    pub state: Option<String>,
    pub affected_files: Vec<String>,
    /// What speed established (None when the review stopped before).
    pub speed: Option<Findings>,
    /// What the model said of the scope (None until it answered).
    pub model: Option<ModelScope>,
}

#[derive(Debug, Clone, Serialize)]
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

impl Block {
    /// A defect known only by name (its folder could not be read).
    pub fn named(name: &str) -> Block {
        Block {
            name: name.to_string(),
            dir: String::new(),
            title: String::new(),
            severity: None,
            complexity: None,
            status: None,
            state: None,
            affected_files: Vec::new(),
            speed: None,
            model: None,
        }
    }

    pub fn new(defect: &Defect) -> Block {
        Block {
            name: defect.name.clone(),
            dir: defect.dir.display().to_string(),
            title: defect.report.title.clone(),
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

/// With `--update-state`, before the report is saved: what the review
/// does to `state.json`. An approval moves `fixed` to `reviewed`; anything
/// else leaves the state as it is.
pub fn plan_state(review: &DefectReview, report: &mut Report) {
    if !review.update_state || report.verdict.is_none() {
        return;
    }
    let status = review.defect.status().unwrap_or_default();
    let next = match report.verdict {
        Some(verdict::Kind::Approve) if status == "fixed" => "reviewed",
        _ => status,
    };
    if let Some(block) = &mut report.defect {
        block.state = Some(next.to_string());
    }
}

/// After the report and its log line are written (a state that says
/// `reviewed` always has its review in the log): writes what `plan_state`
/// planned. The file is read again first and changed only if it still says
/// `fixed`; the report then says what it holds.
pub fn write_state(
    shared: &Shared,
    review: &DefectReview,
    report: &mut Report,
) -> Result<(), Error> {
    let Some(block) = &mut report.defect else {
        return Ok(());
    };
    if block.state.as_deref() != Some("reviewed") || block.status.as_deref() != Some("fixed") {
        return Ok(());
    }
    let now = defects::Store::open(&shared.root)
        .mark_reviewed(
            &review.defect,
            &shared.actor.name,
            std::time::SystemTime::now(),
        )
        .map_err(|e| defect_error(review, e))?;
    block.state = Some(now);
    Ok(())
}

/// With `--update-state`, after the report is saved (so the line names
/// it): the decided review, appended to the defect's `logs/review.log`.
pub fn log_review(shared: &Shared, review: &DefectReview, report: &Report) -> Result<(), Error> {
    if !review.update_state || report.verdict.is_none() {
        return Ok(());
    }
    let entry = json!({
        "at": super::record::now_rfc3339(),
        "reviewer": "speed",
        "by": shared.actor.name,
        "verdict": report.verdict,
        "model_verdict": report.model_verdict,
        "branch": report.branch,
        "base_commit": report.base_commit,
        "head_commit": report.head_commit,
        "state": report.defect.as_ref().and_then(|b| b.state.clone()),
        "overrules": report.overrules,
        "guardian": report.guardian.status,
        "feedback": report.feedback,
        "report": report.report_path,
        "defect": report.defect,
        "review": report.review,
    });
    defects::Store::open(&shared.root)
        .append_review_log(&review.defect, &entry)
        .map_err(|e| defect_error(review, e))
}

fn defect_error(review: &DefectReview, err: defects::Error) -> Error {
    Error::Defect {
        name: review.defect.name.clone(),
        source: err,
    }
}
