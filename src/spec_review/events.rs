//! The events of a spec review: `spec.review.started`, `.iteration`,
//! `.feedback`, `.passed`, `.blocked` and `.malformed`, one file each in
//! the layout's events folder (`.speed/shared/events/` in the multi-player
//! layout, `.speed/events/` otherwise), named and shaped like a review's
//! event (`<utc-time>_<actor>_spec-review-blocked_<feature>.jsonl`, one line
//! `{timestamp, type, feature, actor, actor_email, data}`); a name already
//! taken is never overwritten. `blocked` carries the whole iteration
//! history and the recovery actions.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde_json::{Value, json};

use super::Error;
use super::source::Layout;
use crate::tasks::{self, Actor};

/// A malformed answer is kept whole in the session; an event carries its
/// start, enough to see what went wrong.
const MAX_RAW_IN_EVENT: usize = 16 * 1024;

/// Writes a session's events.
pub struct Events {
    root: PathBuf,
    dir: PathBuf,
    actor: Actor,
    feature: String,
}

impl Events {
    pub fn new(root: &Path, layout: Layout, actor: Actor, feature: &str) -> Events {
        let dir = match layout {
            Layout::Shared => root.join(".speed/shared/events"),
            Layout::Single => root.join(".speed/events"),
        };
        Events {
            root: root.to_path_buf(),
            dir,
            actor,
            feature: feature.to_string(),
        }
    }

    /// The folder, relative to the root, for messages.
    pub fn folder(&self) -> String {
        self.dir
            .strip_prefix(&self.root)
            .unwrap_or(&self.dir)
            .display()
            .to_string()
    }

    /// Writes `spec.review.<kind>` with `data`; returns the file written.
    pub fn emit(&self, kind: &'static str, data: Value) -> Result<PathBuf, Error> {
        let at = SystemTime::now();
        let line = json!({
            "timestamp": humantime::format_rfc3339_seconds(at).to_string(),
            "type": kind,
            "feature": self.feature,
            "actor": self.actor.name,
            "actor_email": self.actor.email,
            "data": data,
        });
        let event = tasks::events::Event {
            dir: self.dir.clone(),
            at,
            actor_slug: self.actor.slug(),
            kind,
            feature: self.feature.clone(),
            line: format!("{line}\n"),
        };
        let name =
            |n: u32| event.file_name(at + std::time::Duration::from_millis(u64::from(n) - 1));
        // The safety net: nothing written holds a secret.
        let text = crate::secrets::net::printed(&event.line);
        Ok(crate::fsx::write_new(
            &self.root.join(".speed"),
            &self.dir,
            &name,
            text.as_bytes(),
        )?)
    }
}

/// The start of a malformed answer, for its event.
pub fn raw_excerpt(raw: &str) -> String {
    match raw.char_indices().nth(MAX_RAW_IN_EVENT) {
        Some((end, _)) => format!(
            "{}… ({} bytes in all; the whole answer is in the session file)",
            &raw[..end],
            raw.len()
        ),
        None => raw.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_go_to_the_layouts_folder_in_the_review_events_shape() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".speed")).unwrap();
        let actor = Actor::new("Sanjay K", None);
        let single = Events::new(dir.path(), Layout::Single, actor.clone(), "fines");
        let path = single
            .emit("spec.review.started", json!({"feature": "fines"}))
            .unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            name.ends_with("_sanjay-k_spec-review-started_fines.jsonl"),
            "{name}"
        );
        assert!(path.starts_with(dir.path().join(".speed/events")));
        let line: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(line["type"], "spec.review.started");
        assert_eq!(line["actor_email"], "Sanjay K@local");
        assert_eq!(line["data"]["feature"], "fines");
        let shared = Events::new(dir.path(), Layout::Shared, actor, "fines");
        assert_eq!(shared.folder(), ".speed/shared/events");
        let a = shared.emit("spec.review.blocked", json!({})).unwrap();
        let b = shared.emit("spec.review.blocked", json!({})).unwrap();
        assert_ne!(a, b, "a taken name is never overwritten");
    }

    #[test]
    fn a_huge_answer_is_cut_in_its_event() {
        let raw = "x".repeat(MAX_RAW_IN_EVENT + 10);
        let cut = raw_excerpt(&raw);
        assert!(cut.len() < raw.len() + 100 && cut.contains("bytes in all"));
        assert_eq!(raw_excerpt("short"), "short");
    }
}
