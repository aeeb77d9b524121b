//! Secrets and checks at the point a review reads its inputs: the diff,
//! the spec text and the task's fields are redacted where they are loaded,
//! so nothing later (prompt, report, log, terminal) can see a secret; then
//! speed's own checks run, and their findings are shown to the model as
//! automated check results beside the task's `gate_results`.

use std::path::Path;

use crate::checks::{self, Check, Finding};
use crate::git::{Diff, Repository};
use crate::impact;
use crate::prompt;
use crate::secrets::{self, Context, DiffSecret, Redaction};
use crate::tasks::{Criterion, Task};

use super::prepare::{Shared, Subject};

/// Redact every text field of the task in place (its copy for this review:
/// the task file is re-read before it is written, and keeps what it has).
/// Locations are lines of the task file as it is on disk.
pub fn redact_task(subject: &mut Subject, root: &Path) -> Vec<Redaction> {
    let Subject::Task(task) = subject else {
        return Vec::new();
    };
    let mut changed = false;
    let mut fix = |text: &mut String| {
        let out = secrets::redact(text, Context::PROSE);
        if !out.found.is_empty() {
            *text = out.text;
            changed = true;
        }
    };
    redact_fields(task, &mut fix);
    if !changed {
        return Vec::new();
    }
    let file = task
        .path
        .strip_prefix(root)
        .unwrap_or(&task.path)
        .to_string_lossy()
        .into_owned();
    let text = std::fs::read_to_string(&task.path).unwrap_or_default();
    let found = secrets::redact(&text, Context::PROSE).found;
    if found.is_empty() {
        // The file changed since it was read; the fields were still redacted.
        return vec![Redaction {
            rule: "task-field".to_string(),
            file,
            line: 0,
        }];
    }
    found
        .into_iter()
        .map(|(line, rule)| Redaction {
            rule: rule.to_string(),
            file: file.clone(),
            line,
        })
        .collect()
}

fn redact_fields(task: &mut Task, fix: &mut dyn FnMut(&mut String)) {
    fix(&mut task.title);
    fix(&mut task.description);
    fix(&mut task.rationale);
    for c in &mut task.criteria {
        fix(&mut c.text);
        if let Some(v) = &mut c.verify_by {
            fix(v);
        }
    }
    for r in &mut task.spec_references {
        if let Some(req) = &mut r.requirement {
            fix(req);
        }
    }
    for list in [
        &mut task.assumptions,
        &mut task.decisions,
        &mut task.concerns,
    ] {
        list.iter_mut().for_each(&mut *fix);
    }
    for g in &mut task.gate_checks {
        fix(&mut g.name);
        fix(&mut g.note);
    }
    if let Some(f) = &mut task.review_feedback {
        fix(f);
    }
    redact_json(&mut task.raw, fix);
}

/// Every string inside a JSON object, recursively.
fn redact_json(
    map: &mut serde_json::Map<String, serde_json::Value>,
    fix: &mut dyn FnMut(&mut String),
) {
    map.values_mut().for_each(|v| redact_strings(v, fix));
}

/// Every string inside a JSON value, recursively (a defect's triage too).
pub(super) fn redact_strings(v: &mut serde_json::Value, fix: &mut dyn FnMut(&mut String)) {
    match v {
        serde_json::Value::String(s) => fix(s),
        serde_json::Value::Array(items) => items.iter_mut().for_each(|i| redact_strings(i, fix)),
        serde_json::Value::Object(m) => m.values_mut().for_each(|i| redact_strings(i, fix)),
        _ => {}
    }
}

/// A spec's text with its secrets replaced, and where they were.
pub fn redact_spec(path: &str, text: &str) -> (String, Vec<Redaction>) {
    let out = secrets::redact(text, Context::file(path, false));
    let found = out
        .found
        .iter()
        .map(|(line, rule)| Redaction {
            rule: rule.to_string(),
            file: path.to_string(),
            line: *line,
        })
        .collect();
    (out.text, found)
}

/// The diff's secrets as the report lists them.
pub fn diff_redactions(found: &[DiffSecret]) -> Vec<Redaction> {
    found
        .iter()
        .map(|s| Redaction {
            rule: s.rule.to_string(),
            file: s.file.clone(),
            line: s.line,
        })
        .collect()
}

/// What the checks read besides the diff.
pub struct CheckInput<'a> {
    pub subject: &'a Subject,
    pub diff: &'a Diff,
    pub impact: Option<&'a impact::Impact>,
    pub diff_secrets: &'a [DiffSecret],
    /// Secrets found in spec text and task fields: each is a finding too.
    pub other_secrets: &'a [Redaction],
    pub blobs: &'a dyn impact::Blobs,
}

/// Run the built-in checks and the configured commands. What could not be
/// checked is returned as notices.
pub fn run_checks(shared: &Shared, input: &CheckInput) -> (Vec<Finding>, Vec<String>) {
    let config = &shared.settings.checks;
    let criteria: &[Criterion] = input.subject.criteria();
    let outcome = checks::builtin::run(
        &checks::builtin::Input {
            diff: input.diff,
            scope: input.subject.task().map(|t| &t.scope),
            criteria,
            impact: input.impact,
            secrets: input.diff_secrets,
            blobs: input.blobs,
        },
        config,
    );
    let mut findings = outcome.findings;
    let notices = outcome.notices;
    if let Some(severity) = config.severity(Check::Secret) {
        for r in input.other_secrets {
            findings.push(Finding {
                check: Check::Secret.name().to_string(),
                severity,
                file: Some(r.file.clone()),
                line: Some(r.line),
                message: format!(
                    "A secret ({}) is written here. speed replaced it with {} in everything it sends or writes; remove it and rotate it.",
                    r.rule,
                    secrets::placeholder(&r.rule)
                ),
            });
        }
    }
    if !config.commands.is_empty() {
        match checks::run_commands(&shared.root, &input.diff.head_commit, &config.commands) {
            Ok(found) => findings.extend(found),
            // A configured gate that could not run does not pass.
            Err(e) => findings.extend(config.commands.iter().map(|c| Finding {
                check: c.name.clone(),
                severity: c.severity,
                file: None,
                line: None,
                message: format!("`{}` could not be run: {e}", c.run.join(" ")),
            })),
        }
    }
    checks::sort(&mut findings);
    (findings, notices)
}

/// The findings as the prompt's automated check results.
pub fn gate_checks(findings: &[Finding]) -> Vec<prompt::GateCheck> {
    findings
        .iter()
        .map(|f| prompt::GateCheck {
            name: format!("speed check: {}", f.check),
            status: f.severity.as_str().to_string(),
            note: match f.location() {
                Some(at) => format!("{at}: {}", f.message),
                None => f.message.clone(),
            },
        })
        .collect()
}

/// A reader of blobs for the checks: one repository handle behind a lock
/// (git2 handles are not `Sync`; the checks read from one thread).
pub struct Blobs(pub std::sync::Mutex<Repository>);

impl impact::Blobs for Blobs {
    fn read(&self, blob: &str) -> Result<Vec<u8>, String> {
        let repo = self
            .0
            .lock()
            .map_err(|_| "a blob reader panicked".to_string())?;
        repo.read_blob(blob).map_err(|e| e.to_string())
    }
}
