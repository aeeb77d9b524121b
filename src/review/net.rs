//! The secrets safety net at the review's edges: every part's prompt is
//! netted before it is shown or sent, and the report before it is recorded;
//! what the net finds escaped redaction where its text was read, and
//! becomes a `secret` finding of the report.

use crate::checks::{self, Check, Finding};
use crate::ledger::report::{Evidence, Report};
use crate::prompt;
use crate::secrets;
use crate::secrets::net::{self, Leak};

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
            ..Finding::default()
        })
        .collect()
}

/// Net every part's prompt in place, before it is shown or sent.
pub fn prompts(prompts: &mut [prompt::Prompt]) -> Vec<Leak> {
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
pub fn seal(report: &Report, evidence: &Evidence) -> Vec<Leak> {
    let mut body = serde_json::to_value(report).unwrap_or(serde_json::Value::Null);
    let mut extra = serde_json::to_value(evidence).unwrap_or(serde_json::Value::Null);
    let mut leaks = net::json(&mut body, "the report");
    leaks.extend(net::json(&mut extra, "the report"));
    leaks
}
