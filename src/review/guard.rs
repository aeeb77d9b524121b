//! Secrets and checks at the point a review reads its inputs: the diff,
//! the spec text and the task's fields are redacted where they are loaded,
//! so nothing later (prompt, report, log, terminal) can see a secret; then
//! speed's own checks run, and their findings are shown to the model as
//! automated check results beside the task's `gate_results`.
//!
//! Behind that, the safety net (`secrets::net`) runs over every prompt
//! before it is sent and over the report before it is recorded: what it
//! finds escaped redaction at its source, and becomes a `secret` finding
//! here (`leak_findings`).

use std::path::Path;

use crate::checks::{self, Check, Finding};
use crate::git::{Diff, Repository};
use crate::impact;
use crate::prompt;
use crate::secrets::net::{self, Leak};
use crate::secrets::{self, Context, DiffSecret, Redaction};
use crate::tasks::{Criterion, Task};

use super::prepare::{Shared, Subject};

/// Redact every text field of the subject in place: a task's (its copy
/// for this review: the task file is re-read before it is written, and
/// keeps what it has), or the criteria given with `--criteria`. Locations
/// are lines of the file as it is on disk.
pub fn redact_subject(subject: &mut Subject, root: &Path) -> Vec<Redaction> {
    let mut rules: Vec<&'static str> = Vec::new();
    let mut fix = |text: &mut String| {
        let out = secrets::redact(text, Context::PROSE);
        rules.extend(out.found.iter().map(|f| f.1));
        if !out.found.is_empty() {
            *text = out.text;
        }
    };
    let path = match subject {
        Subject::Task(task) => {
            redact_fields(task, &mut fix);
            task.path.clone()
        }
        Subject::Branch {
            criteria,
            criteria_file,
            ..
        } => {
            redact_criteria(criteria, &mut fix);
            match criteria_file {
                Some(path) => path.clone(),
                None => return Vec::new(),
            }
        }
        // A defect's files are redacted where they are read
        // (`defect::redact`).
        Subject::Defect(_) => return Vec::new(),
    };
    located(&path, root, &rules)
}

/// Where the secrets of a file speed read are, by line: `rules` were found
/// in the values read from it.
fn located(path: &Path, root: &Path, rules: &[&'static str]) -> Vec<Redaction> {
    if rules.is_empty() {
        return Vec::new();
    }
    let file = path
        .strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned();
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let found = secrets::redact(&text, Context::PROSE).found;
    if found.is_empty() {
        // The file changed since it was read, or its format hides the
        // value from a scan of its lines: the values were redacted all
        // the same, located by file only.
        return rules
            .iter()
            .map(|rule| Redaction {
                rule: rule.to_string(),
                file: file.clone(),
                line: 0,
            })
            .collect();
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

/// Redact lines read from `path` (cross-cutting concerns), locating what
/// was found in the file.
pub fn redact_lines(lines: &mut [String], path: &Path, root: &Path) -> Vec<Redaction> {
    let mut rules = Vec::new();
    for line in lines.iter_mut() {
        let out = secrets::redact(line, Context::PROSE);
        rules.extend(out.found.iter().map(|f| f.1));
        if !out.found.is_empty() {
            *line = out.text;
        }
    }
    located(path, root, &rules)
}

fn redact_criteria(criteria: &mut [Criterion], fix: &mut dyn FnMut(&mut String)) {
    for c in criteria {
        fix(&mut c.text);
        if let Some(v) = &mut c.verify_by {
            fix(v);
        }
    }
}

fn redact_fields(task: &mut Task, fix: &mut dyn FnMut(&mut String)) {
    fix(&mut task.title);
    fix(&mut task.description);
    fix(&mut task.rationale);
    redact_criteria(&mut task.criteria, fix);
    for r in &mut task.spec_references {
        fix(&mut r.spec);
        if let Some(section) = &mut r.section {
            fix(section);
        }
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
        fix(&mut g.status);
        fix(&mut g.note);
    }
    if let Some(f) = &mut task.review_feedback {
        fix(f);
    }
    // Earlier reviews are shown to the reviewer too.
    for entry in &mut task.review_history {
        redact_strings(entry, fix);
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
    pub blobs: &'a Blobs,
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
            head_file: &|path| input.blobs.head_file(path),
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
                line: (r.line > 0).then_some(r.line),
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
/// (git2 handles are not `Sync`; the checks read from one thread), and of
/// the head commit's files by path, listed on first use.
pub struct Blobs {
    repo: std::sync::Mutex<Repository>,
    head: String,
    paths: std::sync::OnceLock<std::collections::HashMap<String, String>>,
}

impl Blobs {
    pub fn new(repo: Repository, head: &str) -> Blobs {
        Blobs {
            repo: std::sync::Mutex::new(repo),
            head: head.to_string(),
            paths: std::sync::OnceLock::new(),
        }
    }

    /// The file at `path` in the head commit, if there is one.
    pub fn head_file(&self, path: &str) -> Option<Vec<u8>> {
        let paths = self.paths.get_or_init(|| {
            let Ok(repo) = self.repo.lock() else {
                return Default::default();
            };
            // Unlisted means unread: the check stands down for that site.
            repo.list_files(&self.head)
                .map(|files| files.into_iter().map(|f| (f.path, f.blob)).collect())
                .unwrap_or_default()
        });
        let blob = paths.get(path)?;
        impact::Blobs::read(self, blob).ok()
    }
}

impl impact::Blobs for Blobs {
    fn read(&self, blob: &str) -> Result<Vec<u8>, String> {
        let repo = self
            .repo
            .lock()
            .map_err(|_| "a blob reader panicked".to_string())?;
        repo.read_blob(blob).map_err(|e| e.to_string())
    }
}
/// The safety net's leaks as `secret` findings (none when the check is
/// off: the text is redacted all the same).
pub fn leak_findings(config: &checks::Config, leaks: &[Leak]) -> Vec<Finding> {
    let Some(severity) = config.severity(Check::Secret) else {
        return Vec::new();
    };
    leaks
        .iter()
        .map(|leak| Finding {
            check: Check::Secret.name().to_string(),
            severity,
            file: None,
            line: None,
            message: format!(
                "speed's safety net found a secret ({}) in {}: it escaped redaction where its text was read. It was replaced by {} before anything was sent or written; remove it where it comes from and rotate it.",
                leak.rule,
                leak.place,
                secrets::placeholder(leak.rule)
            ),
        })
        .collect()
}

/// Net every part's prompt in place, before it is shown or sent.
pub fn net_prompts(prompts: &mut [prompt::Prompt]) -> Vec<Leak> {
    let count = prompts.len();
    let mut leaks = Vec::new();
    for (n, p) in prompts.iter_mut().enumerate() {
        let place = if count == 1 {
            "the review prompt".to_string()
        } else {
            format!("the review prompt (part {} of {count})", n + 1)
        };
        leaks.extend(net::redact_in_place(&mut p.text, &place));
    }
    leaks
}

/// What the net finds in a report about to be recorded (the report file
/// holds the report and its evidence): the caller adds the findings. The
/// writes themselves are netted again, so nothing found here is written.
pub fn seal(report: &super::Report, evidence: &super::report::Evidence) -> Vec<Leak> {
    let mut body = serde_json::to_value(report).unwrap_or(serde_json::Value::Null);
    let mut extra = serde_json::to_value(evidence).unwrap_or(serde_json::Value::Null);
    let mut leaks = net::json(&mut body, "the report");
    leaks.extend(net::json(&mut extra, "the report"));
    leaks
}
