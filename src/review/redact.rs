//! Secrets are replaced where a review reads its inputs, so nothing later
//! (prompt, report, log, terminal) can see one: the subject's text fields
//! (a task's, the criteria given with `--criteria`, a defect's report,
//! triage and guidance), the spec text, the cross-cutting concerns and the
//! vision. Each replacement is located by file and line for the report.
//! The diff itself is redacted by `secrets::redact_diff`; behind all of
//! this, the safety net (`net`) runs over every prompt and report.

use std::path::Path;

use crate::defects;
use crate::secrets::{self, Context, DiffSecret, Redaction};
use crate::tasks::{Criterion, Task};
use crate::work::{DefectReview, Subject};

/// Redact every text field of the subject in place: a task's (its copy
/// for this review: the task file is re-read before it is written, and
/// keeps what it has), or the criteria given with `--criteria`. Locations
/// are lines of the file as it is on disk.
pub fn subject(subject: &mut Subject, root: &Path) -> Vec<Redaction> {
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
        Subject::Defect(review) => return defect(review, root),
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
pub fn lines(lines: &mut [String], path: &Path, root: &Path) -> Vec<Redaction> {
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
fn redact_strings(v: &mut serde_json::Value, fix: &mut dyn FnMut(&mut String)) {
    match v {
        serde_json::Value::String(s) => fix(s),
        serde_json::Value::Array(items) => items.iter_mut().for_each(|i| redact_strings(i, fix)),
        serde_json::Value::Object(m) => m.values_mut().for_each(|i| redact_strings(i, fix)),
        _ => {}
    }
}

/// A spec's text with its secrets replaced, and where they were.
pub fn spec(path: &str, text: &str) -> (String, Vec<Redaction>) {
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

/// Replaces every secret in the defect's report, triage and guidance (this
/// review's copy: the folder keeps what it has), where they are read, so
/// the prompt, the reports and the log never carry one. Locations are lines
/// of the files as they are on disk.
fn defect(review: &mut DefectReview, root: &Path) -> Vec<Redaction> {
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
    redact_strings(&mut d.triage.raw, &mut |text: &mut String| {
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
