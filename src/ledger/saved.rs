//! Report files read back: which files under `.speed/reviews/` are a
//! subject's reviews, newest first, and each as the `Report` it was saved
//! from (what `speed show` prints). Report names sort by time and say whose
//! review they are (`reports::report_name`), so only the files named for a
//! subject are opened, and each is confirmed by what it says inside (two
//! names can slug alike). A file that no longer parses is an error naming
//! it; nothing here writes.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::exit::Outcome;

use super::report::{Evidence, Report};
use super::{Error, REVIEWS_DIR, area, open_own, relative, slug};

/// Whose reviews to look for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Wanted {
    /// A task; with no feature, the feature is whichever its reviews name,
    /// and an id reviewed in two features is an error unless
    /// `active_feature` names one of them.
    Task {
        id: String,
        feature: Option<String>,
    },
    Defect(String),
    Branch(String),
}

impl Wanted {
    /// "task 3", "task 3 of feature catalog", "defect x", "branch b".
    pub fn label(&self) -> String {
        match self {
            Wanted::Task {
                id,
                feature: Some(f),
            } => format!("task {id} of feature {f}"),
            Wanted::Task { id, feature: None } => format!("task {id}"),
            Wanted::Defect(name) => format!("defect {name}"),
            Wanted::Branch(branch) => format!("branch {branch}"),
        }
    }

    /// The part of a report's file name that says whose it is.
    fn who(&self) -> String {
        let who = match self {
            Wanted::Task { id, .. } => format!("task-{id}"),
            Wanted::Defect(name) => format!("defect-{name}"),
            Wanted::Branch(branch) => format!("branch-{branch}"),
        };
        slug(&crate::secrets::net::text(&who).text)
    }
}

/// A report read back.
#[derive(Debug, Clone)]
pub struct Saved {
    pub report: Report,
    /// When it was recorded, as the file says.
    pub reviewed_at: Option<String>,
    /// Relative to the repository root.
    pub path: String,
}

/// A report's keys that say whose review it is; the rest is skipped.
#[derive(Deserialize)]
struct Identity {
    task_id: Option<String>,
    feature: Option<String>,
    #[serde(default)]
    branch: String,
    defect: Option<DefectName>,
}

#[derive(Deserialize)]
struct DefectName {
    name: String,
}

/// The largest report file read; a review's report is a few hundred
/// kilobytes (its prompts and raw answers).
pub const MAX_REPORT_BYTES: u64 = 256 << 20;

/// The `nth` (1: the last) review of `wanted`.
pub fn nth(root: &Path, wanted: &Wanted, nth: usize, active: &[String]) -> Result<Saved, Error> {
    let candidates = candidates(root, Some(&wanted.who()))?;
    let mut matched: Vec<(PathBuf, Identity)> = Vec::new();
    for path in candidates {
        let text = read(root, &path)?;
        let identity: Identity = serde_json::from_str(&text).map_err(|e| unparsable(&path, &e))?;
        if is_for(&identity, wanted) {
            matched.push((path, identity));
        }
    }
    if let Wanted::Task { id, feature: None } = wanted {
        let mut features: Vec<&str> = matched
            .iter()
            .map(|(_, i)| i.feature.as_deref().unwrap_or(""))
            .collect();
        features.sort_unstable();
        features.dedup();
        if features.len() > 1 {
            let chosen: Vec<&str> = features
                .iter()
                .copied()
                .filter(|f| active.iter().any(|a| a == f))
                .collect();
            let [feature] = chosen[..] else {
                return Err(Error::Input {
                    path: root.join(REVIEWS_DIR),
                    message: format!(
                        "task {id} was reviewed in features {}: name one with --feature",
                        features
                            .iter()
                            .map(|f| if f.is_empty() { "(none)" } else { f })
                            .collect::<Vec<_>>()
                            .join(" and ")
                    ),
                });
            };
            let feature = feature.to_string();
            matched.retain(|(_, i)| i.feature.as_deref().unwrap_or("") == feature);
        }
    }
    let count = matched.len();
    let Some((path, _)) = matched.into_iter().nth(nth.saturating_sub(1)) else {
        let message = match count {
            0 => format!(
                "{} has never been reviewed (no report under {REVIEWS_DIR})",
                wanted.label()
            ),
            n => format!(
                "{} has {n} review{} under {REVIEWS_DIR}; --nth {nth} asks for more",
                wanted.label(),
                if n == 1 { "" } else { "s" }
            ),
        };
        return Err(Error::NotReviewed(message));
    };
    load(root, &path)
}

/// The `nth` (1: the last) review of any subject: `speed show` without one.
pub fn nth_of_any(root: &Path, nth: usize) -> Result<Saved, Error> {
    let candidates = candidates(root, None)?;
    let count = candidates.len();
    let Some(path) = candidates.into_iter().nth(nth.saturating_sub(1)) else {
        let message = match count {
            0 => {
                format!("no review yet: no report under {REVIEWS_DIR} (`speed review` writes them)")
            }
            n => format!(
                "{REVIEWS_DIR} holds {n} review{}; --nth {nth} asks for more",
                if n == 1 { "" } else { "s" }
            ),
        };
        return Err(Error::NotReviewed(message));
    };
    load(root, &path)
}

/// One report file, parsed.
pub fn load(root: &Path, path: &Path) -> Result<Saved, Error> {
    let text = read(root, path)?;
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| unparsable(path, &e))?;
    if !value.is_object() {
        return Err(Error::Input {
            path: path.to_path_buf(),
            message: "this report no longer parses: not a JSON object".to_string(),
        });
    }
    let reviewed_at = value["reviewed_at"].as_str().map(str::to_string);
    let outcome = outcome(value["outcome"].as_u64());
    let mut report: Report = serde_json::from_value(value).map_err(|e| unparsable(path, &e))?;
    report.report_path = Some(relative(root, path));
    report.outcome = outcome;
    Ok(Saved {
        report,
        reviewed_at,
        path: relative(root, path),
    })
}

/// The report object as `--json` prints it: the file without what only
/// the file keeps (the prompts, the raw answers, the decision's workings).
pub fn as_printed(saved: &Saved) -> serde_json::Value {
    let mut value = serde_json::to_value(&saved.report).unwrap_or_default();
    if let (serde_json::Value::Object(map), Ok(serde_json::Value::Object(kept))) =
        (&mut value, serde_json::to_value(Evidence::default()))
    {
        for key in kept.keys() {
            map.remove(key);
        }
    }
    value
}

/// The outcome a report file records by its exit code.
fn outcome(code: Option<u64>) -> Outcome {
    match code {
        Some(0) => Outcome::Approved,
        Some(50) => Outcome::ChangesRequested,
        Some(52) => Outcome::ModelUnreachable,
        Some(53) => Outcome::InvalidOutput,
        _ => Outcome::Error,
    }
}

fn is_for(identity: &Identity, wanted: &Wanted) -> bool {
    match wanted {
        Wanted::Task { id, feature } => {
            identity.task_id.as_deref() == Some(id.as_str())
                && feature
                    .as_ref()
                    .is_none_or(|f| identity.feature.as_deref() == Some(f.as_str()))
        }
        Wanted::Defect(name) => identity.defect.as_ref().is_some_and(|d| &d.name == name),
        Wanted::Branch(branch) => {
            identity.task_id.is_none() && identity.defect.is_none() && &identity.branch == branch
        }
    }
}

/// The report files named for `who` (None: anyone's), newest first.
fn candidates(root: &Path, who: Option<&str>) -> Result<Vec<PathBuf>, Error> {
    let dir = root.join(REVIEWS_DIR);
    let real = crate::fsx::confine(&area(root), &dir).map_err(|_| Error::Input {
        path: dir.clone(),
        message: "it leads out of .speed/ through a symbolic link: not read".to_string(),
    })?;
    let entries = match std::fs::read_dir(&real) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(Error::Input {
                path: dir,
                message: format!("cannot list it: {e}"),
            });
        }
    };
    let mut found: Vec<((String, u32), PathBuf)> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            let key = match who {
                Some(who) => named_for(&name, who)?,
                None => (stamp_of(&name)?, 0),
            };
            Some((key, dir.join(name)))
        })
        .collect();
    // Same stamp and subject: the n-th of that millisecond; same stamp,
    // another subject: by name, so the order never depends on the disk's.
    found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| b.1.cmp(&a.1)));
    Ok(found.into_iter().map(|(_, path)| path).collect())
}

/// The stamp of a report's file name, `<stamp>-<who>[-<n>].json`.
fn stamp_of(name: &str) -> Option<String> {
    let (stamp, who) = name.strip_suffix(".json")?.split_once('-')?;
    (!stamp.is_empty() && !who.is_empty() && stamp.bytes().all(|b| b.is_ascii_digit()))
        .then(|| stamp.to_string())
}

/// `(stamp, n)` when `name` is `<stamp>-<who>.json` or
/// `<stamp>-<who>-<n>.json` (the n-th report of that millisecond).
fn named_for(name: &str, who: &str) -> Option<(String, u32)> {
    let stem = name.strip_suffix(".json")?;
    let (stamp, rest) = stem.split_once('-')?;
    if stamp.is_empty() || !stamp.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let rest = rest.strip_prefix(who)?;
    let n = match rest.strip_prefix('-') {
        None if rest.is_empty() => 1,
        Some(n) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => n.parse().ok()?,
        _ => return None,
    };
    Some((stamp.to_string(), n))
}

fn read(root: &Path, path: &Path) -> Result<String, Error> {
    let input = |message: String| Error::Input {
        path: path.to_path_buf(),
        message,
    };
    let Some(file) = open_own(root, path)? else {
        return Err(input("no such report".to_string()));
    };
    let mut bytes = Vec::new();
    file.take(MAX_REPORT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| input(format!("cannot read it: {e}")))?;
    if bytes.len() as u64 > MAX_REPORT_BYTES {
        return Err(input(format!(
            "this report no longer parses: larger than {} MiB",
            MAX_REPORT_BYTES >> 20
        )));
    }
    String::from_utf8(bytes)
        .map_err(|_| input("this report no longer parses: not UTF-8 text".to_string()))
}

fn unparsable(path: &Path, err: &serde_json::Error) -> Error {
    Error::Input {
        path: path.to_path_buf(),
        message: format!("this report no longer parses: {err}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_matched_by_whom_they_name() {
        assert_eq!(
            named_for("20260302100000000-task-3.json", "task-3"),
            Some(("20260302100000000".to_string(), 1))
        );
        assert_eq!(
            named_for("20260302100000000-task-3-2.json", "task-3"),
            Some(("20260302100000000".to_string(), 2))
        );
        assert_eq!(named_for("20260302100000000-task-31.json", "task-3"), None);
        assert_eq!(named_for("20260302100000000-task-3-x.json", "task-3"), None);
        assert_eq!(named_for("nits.json", "task-3"), None);
        assert_eq!(named_for("log.jsonl", "task-3"), None);
    }

    #[test]
    fn a_report_reads_back_as_it_was_written() {
        let report = Report {
            task_id: Some("3".to_string()),
            verdict: Some(crate::verdict::Kind::ChecksPassed),
            checks: vec![crate::checks::Finding {
                check: "scope".to_string(),
                severity: crate::severity::Severity::Major,
                file: Some("a.rs".to_string()),
                line: Some(2),
                message: "m".to_string(),
                ..crate::checks::Finding::default()
            }],
            ..Report::default()
        };
        let written = serde_json::to_value(&report).unwrap();
        let read: Report = serde_json::from_value(written.clone()).unwrap();
        assert_eq!(serde_json::to_value(&read).unwrap(), written);
    }

    #[test]
    fn a_report_of_an_older_speed_lacks_keys_and_still_reads() {
        let read: Report =
            serde_json::from_str(r#"{"task_id": "3", "branch": "b", "verdict": "approve"}"#)
                .unwrap();
        assert_eq!(read.verdict, Some(crate::verdict::Kind::Approve));
        assert!(read.checks.is_empty());
        let wrong = serde_json::from_str::<Report>(r#"{"verdict": "perhaps"}"#);
        assert!(wrong.is_err());
    }
}
