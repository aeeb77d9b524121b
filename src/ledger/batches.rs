//! Reviews waiting in a provider's batch: `.speed/cache/batches/<id>.json`,
//! one file per submitted batch, from `speed review --batch-api` until
//! `speed review --collect` has finished every review in it. A file holds
//! what identifies each prepared review (its subject, branch, head commit,
//! diff), each request sent for it (its `custom_id`, part, stage and the
//! hash of the prompt it carried) and the flags the prompts were built with
//! (`--incremental`, `--budget`, `--spec`, `--base`, `--no-guardian`),
//! never a prompt or an answer: collection
//! prepares each review again from git objects and uses an answer only for
//! the very prompt it answers.
//!
//! The files are untrusted on reading (anyone can edit them): each is read
//! up to a limit, its ids checked before they name a file or a URL. Writes
//! go through `fsx` and the secrets safety net, like every file speed
//! writes.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::fsx;
use crate::llm::batch::{valid_custom_id, valid_id};

use super::verdicts::{ignore_in_git, read_regular};
use super::{Error, area};

pub const DIR: &str = ".speed/cache/batches";
const VERSION: u32 = 1;
/// A state file is a few kilobytes a review; anything near this is not one
/// speed wrote.
const MAX_FILE: u64 = 64 * 1024 * 1024;

/// A submitted batch and the reviews waiting for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Batch {
    pub version: u32,
    /// The provider's id of the batch.
    pub id: String,
    /// "anthropic" or "openai".
    pub provider: String,
    pub model: String,
    /// OpenAI: the uploaded file of requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_file: Option<String>,
    pub submitted_at: String,
    /// The provider's word for the batch's state when last seen.
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub polled_at: Option<String>,
    /// Submitted with `--incremental`: collected the same way, so each
    /// review is prepared again into the prompts the batch answered.
    #[serde(default)]
    pub incremental: bool,
    /// The token budget the prompts were built to (`--budget` or the
    /// configured one): collected with it, so the same inputs give the
    /// same prompts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<usize>,
    /// Why the guardian was off at submission (`--no-guardian`,
    /// `SKIP_GUARDIAN=true`): it stays off when the batch is collected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guardian_off: Option<String>,
    /// `--spec PATH[#Section]` given at submission (relative to the
    /// repository root, read at main's commit like every spec): the
    /// prompts were built from them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub specs: Vec<String>,
    /// The main branch the specs and configuration were read from
    /// (`--base` names another): collected from the same one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub main: Option<String>,
    pub reviews: Vec<Pending>,
}

/// One prepared review waiting for its answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pending {
    /// A task (`task`, `feature`) or a defect (`defect`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feature: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub defect: Option<String>,
    /// `--update-state` was given with the defect.
    #[serde(default)]
    pub update_state: bool,
    pub branch: String,
    /// The head commit the prompts were built from.
    pub head_commit: String,
    /// `sha256:` of the diff.
    pub diff: String,
    pub requests: Vec<Sent>,
}

impl Pending {
    /// "task 3", "task 3 (feature f)", "defect login-crash".
    pub fn label(&self) -> String {
        match (&self.task, &self.feature, &self.defect) {
            (Some(id), Some(feature), _) => format!("task {id} (feature {feature})"),
            (Some(id), None, _) => format!("task {id}"),
            (None, _, Some(name)) => format!("defect {name}"),
            (None, _, None) => "a review of an unknown subject".to_string(),
        }
    }
}

/// One request of the batch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sent {
    pub custom_id: String,
    /// 1-based; `parts` of the review in all.
    pub part: usize,
    pub parts: usize,
    /// "review".
    pub stage: String,
    /// `sha256:` of the prompt the request carried.
    pub prompt: String,
}

/// Where the state of batch `id` is kept.
pub fn path(root: &Path, id: &str) -> PathBuf {
    root.join(DIR).join(format!("{id}.json"))
}

/// Writes (or replaces) the state of `batch`.
pub fn save(root: &Path, batch: &Batch) -> Result<(), Error> {
    check(batch).map_err(|message| Error::Input {
        path: path(root, &batch.id),
        message,
    })?;
    let area = area(root);
    fsx::create_dir_all(&area, &root.join(DIR))?;
    ignore_in_git(&area, &root.join(".speed/cache"))?;
    let mut value = serde_json::to_value(batch).unwrap_or(serde_json::Value::Null);
    crate::secrets::net::json(&mut value, "a batch's state");
    let text = serde_json::to_string_pretty(&value).unwrap_or_default();
    Ok(fsx::write_atomic(
        &area,
        &path(root, &batch.id),
        text.as_bytes(),
    )?)
}

/// The state of batch `id`; an error naming the file when it is missing or
/// cannot be used.
pub fn load(root: &Path, id: &str) -> Result<Batch, Error> {
    let file = path(root, id);
    if !valid_id(id) {
        return Err(Error::Input {
            path: root.join(DIR),
            message: format!(
                "{id:?} is not a batch id: letters, digits, _ and - only, as the providers name batches"
            ),
        });
    }
    let bytes = read_regular(&file, MAX_FILE)
        .map_err(|message| Error::Input {
            path: file.clone(),
            message,
        })?
        .ok_or_else(|| Error::Input {
            path: file.clone(),
            message: format!(
                "no batch {id} is waiting here: it was collected already, or submitted from another clone"
            ),
        })?;
    let batch: Batch = serde_json::from_slice(&bytes).map_err(|err| Error::Input {
        path: file.clone(),
        message: format!("not a batch state speed can read: {err}"),
    })?;
    if batch.id != id {
        return Err(Error::Input {
            path: file,
            message: format!("it names batch {:?}, not {id}", batch.id),
        });
    }
    check(&batch).map_err(|message| Error::Input {
        path: file,
        message,
    })?;
    Ok(batch)
}

/// Every batch waiting, oldest submission first, and the files that could
/// not be read with why.
pub fn list(root: &Path) -> Result<(Vec<Batch>, Vec<Error>), Error> {
    let dir = root.join(DIR);
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            return Ok((Vec::new(), Vec::new()));
        }
        Err(source) => return Err(Error::Write { path: dir, source }),
    };
    let mut batches = Vec::new();
    let mut broken = Vec::new();
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    names.sort();
    for name in names {
        let Some(id) = name.strip_suffix(".json") else {
            continue;
        };
        match load(root, id) {
            Ok(batch) => batches.push(batch),
            Err(err) => broken.push(err),
        }
    }
    batches.sort_by(|a, b| a.submitted_at.cmp(&b.submitted_at));
    Ok((batches, broken))
}

/// Forgets batch `id`: every review in it is finished.
pub fn remove(root: &Path, id: &str) -> Result<(), Error> {
    let file = fsx::confine(&area(root), &path(root, id))?;
    match std::fs::remove_file(&file) {
        Ok(()) => Ok(()),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(Error::Write { path: file, source }),
    }
}

/// What makes a state usable: its version, provider and ids.
fn check(batch: &Batch) -> Result<(), String> {
    if batch.version != VERSION {
        return Err(format!(
            "version {} of the batch state; this speed reads version {VERSION}",
            batch.version
        ));
    }
    if !valid_id(&batch.id) {
        return Err(format!("{:?} is not a batch id", batch.id));
    }
    if !matches!(batch.provider.as_str(), "anthropic" | "openai") {
        return Err(format!(
            "provider {:?}: only anthropic and openai have batch APIs",
            batch.provider
        ));
    }
    if let Some(file) = batch.input_file.as_deref().filter(|f| !valid_id(f)) {
        return Err(format!("{file:?} is not a file id"));
    }
    // Printed in notes and errors: nothing a terminal would act on. (A
    // review's names are its task file's, checked where tasks are read; a
    // state refusing them would leave a paid batch uncollectable.)
    for (key, text) in [
        ("model", batch.model.as_str()),
        ("submitted_at", batch.submitted_at.as_str()),
        ("status", batch.status.as_str()),
        ("guardian_off", batch.guardian_off.as_deref().unwrap_or("")),
        ("main", batch.main.as_deref().unwrap_or("")),
    ] {
        printable(key, text)?;
    }
    for spec in &batch.specs {
        printable("specs", spec)?;
    }
    for review in &batch.reviews {
        if review.task.is_none() && review.defect.is_none() {
            return Err("a review names neither a task nor a defect".to_string());
        }
        let head = &review.head_commit;
        if !matches!(head.len(), 40 | 64) || !head.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(format!(
                "head_commit {:?} of {} is not a commit id",
                head.chars().take(80).collect::<String>(),
                review.label()
            ));
        }
        for sent in &review.requests {
            if !valid_custom_id(&sent.custom_id) {
                return Err(format!("{:?} is not a custom_id", sent.custom_id));
            }
        }
    }
    Ok(())
}

/// A text of the state that speed prints: one line of at most 1,000
/// characters, no control characters.
fn printable(key: &str, text: &str) -> Result<(), String> {
    if text.chars().count() > 1000 || text.chars().any(char::is_control) {
        return Err(format!(
            "its {key} holds control characters or is too long to be one speed wrote"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(id: &str) -> Batch {
        Batch {
            version: VERSION,
            id: id.to_string(),
            provider: "anthropic".to_string(),
            model: "m".to_string(),
            input_file: None,
            submitted_at: "2026-03-01T00:00:00Z".to_string(),
            status: "in_progress".to_string(),
            polled_at: None,
            incremental: false,
            budget: Some(60_000),
            guardian_off: None,
            specs: Vec::new(),
            main: Some("main".to_string()),
            reviews: vec![Pending {
                task: Some("3".to_string()),
                feature: Some("shop".to_string()),
                defect: None,
                update_state: false,
                branch: "speed/task-3".to_string(),
                head_commit: "a".repeat(40),
                diff: "sha256:d".to_string(),
                requests: vec![Sent {
                    custom_id: "shop_3_aaaaaaa_p1_review".to_string(),
                    part: 1,
                    parts: 1,
                    stage: "review".to_string(),
                    prompt: "sha256:p".to_string(),
                }],
            }],
        }
    }

    #[test]
    fn a_saved_batch_loads_back_and_is_listed_and_removed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        save(root, &batch("msgbatch_1")).unwrap();
        assert_eq!(load(root, "msgbatch_1").unwrap(), batch("msgbatch_1"));
        assert!(root.join(".speed/cache/.gitignore").is_file());
        let (all, broken) = list(root).unwrap();
        assert_eq!((all.len(), broken.len()), (1, 0));
        remove(root, "msgbatch_1").unwrap();
        assert!(list(root).unwrap().0.is_empty());
        remove(root, "msgbatch_1").unwrap();
    }

    #[test]
    fn hostile_or_missing_states_are_errors_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let err = load(root, "../../etc/passwd").unwrap_err().to_string();
        assert!(err.contains("not a batch id"), "{err}");
        let err = load(root, "b1").unwrap_err().to_string();
        assert!(
            err.contains("b1.json") && err.contains("collected already"),
            "{err}"
        );
        std::fs::create_dir_all(root.join(DIR)).unwrap();
        std::fs::write(path(root, "b2"), "{not json").unwrap();
        assert!(
            load(root, "b2")
                .unwrap_err()
                .to_string()
                .contains("b2.json")
        );
        let mut evil = batch("b3");
        evil.reviews[0].requests[0].custom_id = "a/../b".to_string();
        std::fs::write(path(root, "b3"), serde_json::to_string(&evil).unwrap()).unwrap();
        let err = load(root, "b3").unwrap_err().to_string();
        assert!(err.contains("custom_id"), "{err}");
        let mut escape = batch("b6");
        escape.submitted_at = "2026\u{1b}[2J".to_string();
        std::fs::write(path(root, "b6"), serde_json::to_string(&escape).unwrap()).unwrap();
        let err = load(root, "b6").unwrap_err().to_string();
        assert!(
            err.contains("its submitted_at holds control characters"),
            "{err}"
        );
        let mut head = batch("b7");
        head.reviews[0].head_commit = "HEAD~1".to_string();
        std::fs::write(path(root, "b7"), serde_json::to_string(&head).unwrap()).unwrap();
        let err = load(root, "b7").unwrap_err().to_string();
        assert!(err.contains("is not a commit id"), "{err}");
        let renamed = batch("b4");
        std::fs::write(path(root, "b5"), serde_json::to_string(&renamed).unwrap()).unwrap();
        assert!(
            load(root, "b5")
                .unwrap_err()
                .to_string()
                .contains("names batch")
        );
        let (ok, broken) = list(root).unwrap();
        assert_eq!((ok.len(), broken.len()), (0, 5));
    }
}
