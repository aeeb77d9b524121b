//! Nits: the minor and nit issues of approved reviews and the guardian's
//! flags, gathered after a batch instead of blocking anyone, and saved to
//! `.speed/reviews/nits.json` so `speed nits` can print them again.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::fsx;
use crate::verdict::{self, Severity};

use super::Error;
use super::report::Report;
use super::{LOCKS_DIR, area};

pub const NITS_FILE: &str = ".speed/reviews/nits.json";

/// Merging nits takes milliseconds; waiting longer means something is stuck.
const NITS_LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Nit {
    pub task_id: Option<String>,
    /// The defect whose fix was approved, for a defect-fix review.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub defect: Option<String>,
    pub feature: Option<String>,
    pub branch: String,
    /// minor | nit for review issues; the flag's severity for guardian flags.
    pub severity: String,
    pub file: Option<String>,
    pub line: Option<u64>,
    pub message: String,
    pub suggestion: Option<String>,
    /// "review" or "guardian".
    pub source: String,
}

/// The nits of the approved reports, in report order.
pub fn collect(reports: &[Report]) -> Vec<Nit> {
    let mut nits = Vec::new();
    for report in reports {
        if report.verdict != Some(verdict::Kind::Approve) {
            continue;
        }
        if let Some(review) = &report.review {
            for issue in &review.issues {
                if matches!(issue.severity, Severity::Minor | Severity::Nit) {
                    nits.push(Nit {
                        task_id: report.task_id.clone(),
                        defect: report.defect.as_ref().map(|d| d.name.clone()),
                        feature: report.feature.clone(),
                        branch: report.branch.clone(),
                        severity: issue.severity.as_str().to_string(),
                        file: issue.file.clone(),
                        line: issue.line,
                        message: issue.message.clone(),
                        suggestion: Some(issue.suggestion.clone()).filter(|s| !s.is_empty()),
                        source: "review".to_string(),
                    });
                }
            }
        }
        for flag in &report.guardian.flags {
            nits.push(Nit {
                task_id: report.task_id.clone(),
                defect: report.defect.as_ref().map(|d| d.name.clone()),
                feature: report.feature.clone(),
                branch: report.branch.clone(),
                severity: flag.severity.as_str().to_string(),
                file: None,
                line: None,
                message: if flag.spec_reference.is_empty() {
                    format!("guardian: {}", flag.description)
                } else {
                    format!("guardian: {} ({})", flag.description, flag.spec_reference)
                },
                suggestion: None,
                source: "guardian".to_string(),
            });
        }
    }
    nits
}

pub fn save(root: &Path, nits: &[Nit]) -> Result<(), Error> {
    let mut value = serde_json::to_value(nits).unwrap_or_default();
    // The safety net: nothing written holds a secret.
    crate::secrets::net::json(&mut value, "the nits file");
    let text = serde_json::to_string_pretty(&value).unwrap_or_else(|_| "[]".to_string()) + "\n";
    Ok(fsx::write_atomic(
        &area(root),
        &root.join(NITS_FILE),
        text.as_bytes(),
    )?)
}

/// Whose nits: a task (its feature and id) or a defect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    pub task_id: Option<String>,
    pub feature: Option<String>,
    pub defect: Option<String>,
}

impl Nit {
    fn is_of(&self, owner: &Owner) -> bool {
        match (&owner.defect, &self.defect) {
            (Some(defect), Some(mine)) => defect == mine,
            (Some(_), None) | (None, Some(_)) => false,
            (None, None) => {
                owner.task_id.is_some()
                    && self.task_id == owner.task_id
                    && self.feature == owner.feature
            }
        }
    }
}

/// Save `found` in place of the saved nits of every task these reports
/// reviewed to completion, and drop those of `merged` work: what stays is
/// the nits of every current approval, so reviewing one task does not
/// erase the rest of the list and a merged task's nits go with it.
pub fn merge_save(
    root: &Path,
    reports: &[Report],
    found: &[Nit],
    merged: &[Owner],
) -> Result<(), Error> {
    let reviewed: Vec<(Option<&String>, &String)> = reports
        .iter()
        .filter(|r| r.verdict.is_some())
        .map(|r| (r.task_id.as_ref(), &r.branch))
        .collect();
    if reviewed.is_empty() && merged.is_empty() {
        return Ok(());
    }
    if reviewed.is_empty() && !root.join(NITS_FILE).exists() {
        return Ok(());
    }
    // Another speed may be merging its nits into the same file.
    let _lock = fsx::Lock::acquire(
        &area(root),
        &root.join(LOCKS_DIR).join("nits.lock"),
        NITS_LOCK_WAIT,
    )?;
    let mut nits: Vec<Nit> = load(root)?
        .into_iter()
        .filter(|n| !reviewed.contains(&(n.task_id.as_ref(), &n.branch)))
        .filter(|n| !merged.iter().any(|owner| n.is_of(owner)))
        .collect();
    nits.extend(found.iter().cloned());
    save(root, &nits)
}

/// The saved nits; none when no batch has saved any yet.
pub fn load(root: &Path) -> Result<Vec<Nit>, Error> {
    let path = root.join(NITS_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => return Err(Error::Write { path, source }),
    };
    serde_json::from_str(&text).map_err(|err| Error::Input {
        path,
        message: format!("not a valid nits file: {err}"),
    })
}
