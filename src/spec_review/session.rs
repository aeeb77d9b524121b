//! The session of a feature's spec review, kept at
//! `.speed/spec-reviews/<feature>.json` in the contract's shape:
//! `{feature, prd_path, specs_path, config, iterations: [{iteration,
//! result, spec_hash, timestamp}], final_verdict, block_reason,
//! recovery_actions}`, plus `budget_starts_at` (the iteration the current
//! budget of reviews counts from: 1, or the first after `--resume`) and
//! when it started and was last written. Keys speed does not know are kept.
//!
//! Also here: the session's lock (one run per feature at a time), and the
//! spec texts a reviser replaced, kept under
//! `.speed/spec-reviews/<feature>/<hash>.md` so a revision can be undone.
//! Everything written passes the secrets net, through `fsx`.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::Error;
use crate::fsx;
use crate::secrets::net;

/// Where sessions live, relative to the repository root.
pub const DIR: &str = ".speed/spec-reviews";

/// The session's final verdict.
pub const PASS: &str = "pass";
pub const BLOCKED: &str = "blocked";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Session {
    pub feature: String,
    /// Empty when the review has no PRD.
    pub prd_path: String,
    pub specs_path: String,
    /// The `[spec_review]` configuration of the latest run.
    pub config: Value,
    /// Each `{iteration, result, spec_hash, timestamp}`, oldest first.
    pub iterations: Vec<Value>,
    /// `pass`, `blocked`, or empty while the session is open.
    pub final_verdict: String,
    pub block_reason: String,
    pub recovery_actions: Vec<String>,
    #[serde(default = "one")]
    pub budget_starts_at: u32,
    #[serde(default)]
    pub started_at: String,
    #[serde(default)]
    pub updated_at: String,
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

fn one() -> u32 {
    1
}

/// The time as sessions and events write it.
pub fn timestamp(at: SystemTime) -> String {
    humantime::format_rfc3339_seconds(at).to_string()
}

impl Session {
    pub fn new(feature: &str, prd_path: &str, specs_path: &str, config: Value) -> Session {
        Session {
            feature: feature.to_string(),
            prd_path: prd_path.to_string(),
            specs_path: specs_path.to_string(),
            config,
            iterations: Vec::new(),
            final_verdict: String::new(),
            block_reason: String::new(),
            recovery_actions: Vec::new(),
            budget_starts_at: 1,
            started_at: timestamp(SystemTime::now()),
            updated_at: String::new(),
            other: Map::new(),
        }
    }

    pub fn blocked(&self) -> bool {
        self.final_verdict == BLOCKED
    }

    pub fn open(&self) -> bool {
        self.final_verdict.is_empty()
    }

    /// The number of the last iteration; 0 before the first.
    pub fn last_iteration(&self) -> u32 {
        self.iterations
            .last()
            .and_then(|it| it["iteration"].as_u64())
            .map_or(0, |n| n as u32)
    }

    /// Reviews counted against the current budget.
    pub fn reviews_in_budget(&self) -> u32 {
        self.iterations
            .iter()
            .filter(|it| {
                it["iteration"]
                    .as_u64()
                    .is_some_and(|n| n >= u64::from(self.budget_starts_at))
            })
            .count() as u32
    }

    /// The feedback of the last review when it asked for a revision, one
    /// line each: what the next review checks was addressed.
    pub fn previous_feedback(&self) -> Vec<String> {
        let Some(last) = self.iterations.last() else {
            return Vec::new();
        };
        if last["result"]["verdict"] != "needs_revision" {
            return Vec::new();
        }
        last["result"]["feedback"]
            .as_array()
            .map(|items| {
                items
                    .iter()
                    .map(|f| {
                        format!(
                            "- {}: {} Suggestion: {}",
                            f["section"].as_str().unwrap_or(""),
                            f["issue"].as_str().unwrap_or(""),
                            f["suggestion"].as_str().unwrap_or("")
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The spec hash of the last iteration, when there is one.
    pub fn last_spec_hash(&self) -> Option<&str> {
        self.iterations.last()?["spec_hash"].as_str()
    }

    /// Ends the session blocked.
    pub fn block(&mut self, reason: String, recovery: Vec<String>) {
        self.final_verdict = BLOCKED.to_string();
        self.block_reason = reason;
        self.recovery_actions = recovery;
    }

    /// Opens a blocked session again, with a fresh budget from the next
    /// iteration.
    pub fn resume(&mut self) {
        self.final_verdict.clear();
        self.block_reason.clear();
        self.recovery_actions.clear();
        self.budget_starts_at = self.last_iteration() + 1;
    }
}

/// The sessions of one repository.
pub struct Store {
    root: PathBuf,
}

impl Store {
    pub fn open(root: &Path) -> Store {
        Store {
            root: root.to_path_buf(),
        }
    }

    /// The repository root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn area(&self) -> PathBuf {
        self.root.join(".speed")
    }

    /// `.speed/spec-reviews/<feature>.json`, relative to the root.
    pub fn relative_path(feature: &str) -> String {
        format!("{DIR}/{feature}.json")
    }

    fn path(&self, feature: &str) -> PathBuf {
        self.root.join(Store::relative_path(feature))
    }

    /// Holds the feature's sessions for this run: a second run on the same
    /// feature fails at once, naming who holds it.
    pub fn lock(&self, feature: &str) -> Result<fsx::Lock, Error> {
        self.ignore_in_git()?;
        let path = self.root.join(DIR).join(format!("{feature}.lock"));
        Ok(fsx::Lock::acquire(&self.area(), &path, Duration::ZERO)?)
    }

    /// The feature's session; None when there is none. A file that is not
    /// a session is an error naming it.
    pub fn load(&self, feature: &str) -> Result<Option<Session>, Error> {
        let path = self.path(feature);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(Error::Input(format!("cannot read {}: {e}", path.display())));
            }
        };
        serde_json::from_str(&text).map(Some).map_err(|e| {
            Error::Input(format!(
                "{} is not a spec review session ({e}); move it away to start a new session",
                Store::relative_path(feature)
            ))
        })
    }

    /// Writes the session whole, atomically, through the secrets net.
    pub fn save(&self, session: &mut Session) -> Result<(), Error> {
        session.updated_at = timestamp(SystemTime::now());
        self.ignore_in_git()?;
        let mut value = serde_json::to_value(&*session)
            .map_err(|e| Error::Input(format!("cannot write the session: {e}")))?;
        net::json(&mut value, "the spec review session");
        let text = serde_json::to_string_pretty(&value).unwrap_or_default() + "\n";
        fsx::write_atomic(&self.area(), &self.path(&session.feature), text.as_bytes())?;
        Ok(())
    }

    /// Keeps a spec's text before a reviser replaces it; returns where,
    /// relative to the root. `hash` is the text's `sha256:…`.
    pub fn keep_text(&self, feature: &str, hash: &str, text: &str) -> Result<String, Error> {
        let hex = hash.strip_prefix("sha256:").unwrap_or(hash);
        let relative = format!("{DIR}/{feature}/{hex}.md");
        self.ignore_in_git()?;
        let text = net::text(text).text;
        fsx::write_atomic(&self.area(), &self.root.join(&relative), text.as_bytes())?;
        Ok(relative)
    }

    /// A `.gitignore` of `*`: sessions and kept texts are this machine's.
    fn ignore_in_git(&self) -> Result<(), Error> {
        fsx::ignore_in_git(
            &self.area(),
            &self.root.join(DIR),
            "spec review sessions and the spec texts they replaced.",
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn iteration(n: u32, verdict: &str) -> Value {
        json!({"iteration": n, "result": {"verdict": verdict, "feedback": [
            {"section": "S", "issue": "vague", "suggestion": "be precise"}]},
            "spec_hash": format!("sha256:{n}"), "timestamp": "t"})
    }

    #[test]
    fn the_budget_counts_from_the_last_resume() {
        let mut s = Session::new("f", "", "s.md", json!({}));
        for n in 1..=3 {
            s.iterations.push(iteration(n, "needs_revision"));
        }
        assert_eq!(s.reviews_in_budget(), 3);
        s.block("max".into(), vec!["edit".into()]);
        assert!(s.blocked());
        s.resume();
        assert!(s.open() && s.block_reason.is_empty() && s.recovery_actions.is_empty());
        assert_eq!((s.budget_starts_at, s.reviews_in_budget()), (4, 0));
        assert_eq!(s.previous_feedback(), ["- S: vague Suggestion: be precise"]);
        s.iterations.push(iteration(4, "pass"));
        assert!(s.previous_feedback().is_empty());
        assert_eq!(s.last_spec_hash(), Some("sha256:4"));
    }

    #[test]
    fn saved_in_the_contracts_shape_and_read_back_with_unknown_keys() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".speed")).unwrap();
        let store = Store::open(dir.path());
        let mut s = Session::new("f", "", "s.md", json!({"min_score": 70}));
        s.iterations.push(iteration(1, "needs_revision"));
        s.other.insert("note".into(), json!("kept"));
        store.save(&mut s).unwrap();
        let text = std::fs::read_to_string(dir.path().join(".speed/spec-reviews/f.json")).unwrap();
        let value: Value = serde_json::from_str(&text).unwrap();
        for key in [
            "feature",
            "prd_path",
            "specs_path",
            "config",
            "iterations",
            "final_verdict",
            "block_reason",
            "recovery_actions",
        ] {
            assert!(value.get(key).is_some(), "{key}: {text}");
        }
        assert_eq!(store.load("f").unwrap().unwrap(), s);
        assert!(dir.path().join(".speed/spec-reviews/.gitignore").is_file());
        std::fs::write(dir.path().join(".speed/spec-reviews/g.json"), "[]").unwrap();
        let err = store.load("g").unwrap_err().to_string();
        assert!(
            err.contains(".speed/spec-reviews/g.json is not a spec review session"),
            "{err}"
        );
        assert!(store.load("none").unwrap().is_none());
    }

    #[test]
    fn one_run_per_feature_at_a_time() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".speed")).unwrap();
        let store = Store::open(dir.path());
        let held = store.lock("f").unwrap();
        let err = store.lock("f").unwrap_err().to_string();
        assert!(err.contains("held by another speed process"), "{err}");
        drop(held);
        store.lock("f").unwrap();
    }
}
