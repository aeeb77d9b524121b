//! The event a review leaves in the orchestrator's multi-player layout, so
//! the team's dashboard sees speed's reviews: one file per event under
//! `.speed/shared/events/`, named and shaped as the orchestrator names and
//! shapes its own (`<utc-time>_<actor>_review-completed_<feature>.jsonl`
//! holding one line `{timestamp, type, feature, actor, actor_email, data}`).
//! Unique file names are what keep the shared folder free of merge
//! conflicts, so a name already taken is never overwritten.
//!
//! Building the event is pure; `write` is the only I/O here.

use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use serde_json::json;

use super::{Error, Layout, Task};

/// Who reviews: recorded as `reviewed_by` and as the events' actor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Actor {
    pub name: String,
    pub email: String,
}

impl Actor {
    /// `name`, and `email` or else `<name>@local` as the orchestrator does.
    pub fn new(name: &str, email: Option<&str>) -> Actor {
        let name = name.trim();
        let name = if name.is_empty() { "speed" } else { name };
        let email = match email.map(str::trim) {
            Some(email) if !email.is_empty() => email.to_string(),
            _ => format!("{name}@local"),
        };
        Actor {
            name: name.to_string(),
            email,
        }
    }

    /// The name as it appears in event file names: lower case, spaces as
    /// hyphens, nothing but `[a-z0-9-]`.
    pub fn slug(&self) -> String {
        let mut slug = String::new();
        for c in self.name.to_lowercase().chars() {
            let c = if c == ' ' { '-' } else { c };
            if !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-') {
                continue;
            }
            if c == '-' && (slug.is_empty() || slug.ends_with('-')) {
                continue;
            }
            slug.push(c);
        }
        let slug = slug.trim_end_matches('-');
        if slug.is_empty() {
            "speed".to_string()
        } else {
            slug.to_string()
        }
    }
}

/// An event file to write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// `.speed/shared/events` of the repository the task lives in.
    pub dir: PathBuf,
    /// When it happened; the file name carries it to the millisecond.
    pub at: SystemTime,
    pub actor_slug: String,
    pub kind: &'static str,
    pub feature: String,
    /// The one JSON line the file holds, newline included.
    pub line: String,
}

impl Event {
    /// `20260326T025306123Z_sanjay_review-completed_audit.jsonl`.
    pub fn file_name(&self, at: SystemTime) -> String {
        let stamp: String = humantime::format_rfc3339_millis(at)
            .to_string()
            .chars()
            .filter(|c| !matches!(c, '-' | ':' | '.'))
            .collect();
        format!(
            "{stamp}_{}_{}_{}.jsonl",
            self.actor_slug,
            self.kind.replace('.', "-"),
            self.feature
        )
    }
}

/// The `review.completed` event of a review of `task` with `verdict`
/// (`approve` or `request_changes`); None outside the multi-player layout,
/// where the orchestrator keeps no event log.
pub fn review_completed(
    task: &Task,
    verdict: &str,
    actor: &Actor,
    at: SystemTime,
) -> Option<Event> {
    if task.layout != Layout::Shared {
        return None;
    }
    let feature = task.feature.clone()?;
    // .speed/shared/features/<feature>/tasks/<id>.json → .speed/shared
    let shared = task.path.ancestors().nth(4)?;
    let kind = "review.completed";
    let line = json!({
        "timestamp": humantime::format_rfc3339_seconds(at).to_string(),
        "type": kind,
        "feature": feature,
        "actor": actor.name,
        "actor_email": actor.email,
        "data": {"task_id": task.id, "verdict": verdict},
    });
    Some(Event {
        dir: shared.join("events"),
        at,
        actor_slug: actor.slug(),
        kind,
        feature,
        line: format!("{line}\n"),
    })
}

/// Writes the event under a name no other event has: written whole to a
/// hidden temporary file first, then linked into place without replacing
/// anything; a taken name moves the time on by a millisecond.
pub fn write(event: &Event) -> Result<PathBuf, Error> {
    let dir = &event.dir;
    // `.speed/shared/events`: confined to `.speed`, so a linked folder
    // leading out of it is refused.
    let area = dir.ancestors().nth(2).unwrap_or(dir);
    let name = |n: u32| event.file_name(event.at + Duration::from_millis(u64::from(n) - 1));
    // The safety net: nothing written holds a secret.
    let line = crate::secrets::net::printed(&event.line);
    crate::fsx::write_new(area, dir, &name, line.as_bytes()).map_err(|e| Error::Write {
        path: dir.to_path_buf(),
        source: e.into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::path::Path;

    fn task(path: &str, layout: Layout) -> Task {
        let mut task = Task::parse(Path::new(path), Some("audit-history"), "{}").unwrap();
        task.layout = layout;
        task
    }

    fn at() -> SystemTime {
        humantime::parse_rfc3339("2026-03-26T02:53:06.123Z").unwrap()
    }

    #[test]
    fn slugs_like_the_orchestrator() {
        let slug = |name: &str| Actor::new(name, None).slug();
        assert_eq!(slug("Sanjay K"), "sanjay-k");
        assert_eq!(slug("  Ana  María_Ö "), "ana-mara");
        assert_eq!(slug("--x--y--"), "x-y");
        assert_eq!(slug("日本"), "speed");
        assert_eq!(Actor::new("", None).name, "speed");
        assert_eq!(Actor::new("Bo", None).email, "Bo@local");
        assert_eq!(Actor::new("Bo", Some("bo@x.org")).email, "bo@x.org");
    }

    #[test]
    fn a_review_event_in_the_multi_player_layout() {
        let t = task(
            "/r/.speed/shared/features/audit-history/tasks/2.json",
            Layout::Shared,
        );
        let actor = Actor::new("Sanjay", Some("s@x.org"));
        let event = review_completed(&t, "approve", &actor, at()).unwrap();
        assert_eq!(event.dir, Path::new("/r/.speed/shared/events"));
        assert_eq!(
            event.file_name(event.at),
            "20260326T025306123Z_sanjay_review-completed_audit-history.jsonl"
        );
        assert_eq!(
            event.line,
            "{\"timestamp\":\"2026-03-26T02:53:06Z\",\"type\":\"review.completed\",\"feature\":\"audit-history\",\"actor\":\"Sanjay\",\"actor_email\":\"s@x.org\",\"data\":{\"task_id\":\"2\",\"verdict\":\"approve\"}}\n"
        );
        let single = task(
            "/r/.speed/features/audit-history/tasks/2.json",
            Layout::Features,
        );
        assert_eq!(review_completed(&single, "approve", &actor, at()), None);
    }

    #[test]
    fn write_never_replaces_an_event() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".speed/shared/features/f/tasks/1.json");
        let mut t = Task::parse(&path, Some("f"), "{}").unwrap();
        t.layout = Layout::Shared;
        let actor = Actor::new("Bo", None);
        let first = review_completed(&t, "approve", &actor, at()).unwrap();
        let second = review_completed(&t, "request_changes", &actor, at()).unwrap();
        let a = write(&first).unwrap();
        let b = write(&second).unwrap();
        assert_ne!(a, b);
        assert!(b.ends_with("20260326T025306124Z_bo_review-completed_f.jsonl"));
        assert!(fs::read_to_string(&a).unwrap().contains("\"approve\""));
        assert!(
            fs::read_to_string(&b)
                .unwrap()
                .contains("\"request_changes\"")
        );
        let names: Vec<String> = fs::read_dir(&first.dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names.len(), 2, "no temporary file left: {names:?}");
    }
}
