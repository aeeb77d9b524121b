//! Which branch belongs to which piece of work, as the gate needs it: every
//! task (through `tasks::Store`, every layout it reads) and every defect
//! (`.speed/defects/<name>/state.json`, `.speed/shared/defects/<name>/state.json`).
//!
//! A gate must not lose track of a task because its file is malformed: a
//! task file `tasks::Store` cannot read still names its branch (`branch`,
//! else `speed/task-<id>`, the id from the file or its name), read leniently
//! here, and the problem is kept to be shown.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::defects;
use crate::tasks::{self, Task};
use crate::work::Work;

/// A piece of work and the branch its commits live on.
#[derive(Debug, Clone)]
pub struct Owner {
    pub work: Work,
    pub branch: String,
    /// The task as `tasks::Store` read it (None for defects and for task
    /// files it could not read): what the same-diff check needs.
    pub task: Option<Box<Task>>,
    /// Why its file could not be read properly, when it could not.
    pub problem: Option<String>,
}

/// Every task and defect of the repository at `root`. Only a folder that
/// cannot be listed is an error.
pub fn list(root: &Path) -> Result<Vec<Owner>, tasks::Error> {
    let (found, broken) = tasks::Store::open(root).scan()?;
    let mut owners: Vec<Owner> = found
        .into_iter()
        .map(|task| Owner {
            work: Work::Task {
                id: task.id.clone(),
                feature: task.feature.clone(),
            },
            branch: task.branch.clone(),
            task: Some(Box::new(task)),
            problem: None,
        })
        .collect();
    owners.extend(broken.iter().filter_map(lenient_task));
    let defects = defects::Store::open(root)
        .branches()
        .map_err(|err| tasks::Error::Read {
            path: root.join(".speed"),
            source: std::io::Error::other(err.to_string()),
        })?;
    // A defect laid out in both places is one defect (the store lists it once).
    owners.extend(defects.into_iter().map(|d| Owner {
        work: Work::Defect { name: d.name },
        branch: d.branch,
        task: None,
        problem: d.problem,
    }));
    Ok(owners)
}

/// A task file the store could not read, as far as its branch goes.
fn lenient_task(err: &tasks::Error) -> Option<Owner> {
    let path: &PathBuf = match err {
        tasks::Error::Read { path, .. }
        | tasks::Error::Malformed { path, .. }
        | tasks::Error::InvalidField { path, .. } => path,
        _ => return None,
    };
    let stem = path.file_stem()?.to_string_lossy().into_owned();
    let value: Value = fs::read(path)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or(Value::Null);
    let id = match value.get("id") {
        Some(Value::String(id)) if !id.trim().is_empty() => id.trim().to_string(),
        Some(Value::Number(id)) => id.to_string(),
        _ => stem,
    };
    let branch = match value.get("branch") {
        Some(Value::String(branch)) if !branch.trim().is_empty() => branch.trim().to_string(),
        _ => format!("speed/task-{id}"),
    };
    Some(Owner {
        work: Work::Task {
            id,
            feature: feature_of(path),
        },
        branch,
        task: None,
        problem: Some(err.to_string()),
    })
}

/// `<anything>/features/<feature>/tasks/<id>.json` → the feature.
fn feature_of(path: &Path) -> Option<String> {
    let tasks_dir = path.parent()?;
    let feature_dir = tasks_dir.parent()?;
    let features = feature_dir.parent()?;
    (tasks_dir.file_name()? == "tasks" && features.file_name()? == "features")
        .then(|| feature_dir.file_name()?.to_str().map(str::to_string))
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, rel: &str, text: &str) {
        let path = root.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    fn branches(root: &Path) -> Vec<(Work, String, bool)> {
        let mut got: Vec<(Work, String, bool)> = list(root)
            .unwrap()
            .into_iter()
            .map(|o| (o.work, o.branch, o.problem.is_some()))
            .collect();
        got.sort();
        got
    }

    fn task(id: &str, feature: Option<&str>) -> Work {
        Work::Task {
            id: id.to_string(),
            feature: feature.map(str::to_string),
        }
    }

    #[test]
    fn tasks_and_defects_name_their_branches() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, ".speed/features/cat/tasks/1.json", r#"{"id": 1}"#);
        write(
            root,
            ".speed/tasks/2.json",
            r#"{"id": "2", "branch": "feature/two"}"#,
        );
        write(
            root,
            ".speed/defects/crash/state.json",
            r#"{"branch": "fix/crash", "status": "fixed"}"#,
        );
        write(root, ".speed/shared/defects/leak/report.md", "# Leak\n");
        write(root, ".speed/shared/defects/crash/state.json", "{}");
        assert_eq!(
            branches(root),
            [
                (task("1", Some("cat")), "speed/task-1".to_string(), false),
                (task("2", None), "feature/two".to_string(), false),
                (
                    Work::Defect {
                        name: "crash".into()
                    },
                    "fix/crash".to_string(),
                    false
                ),
                (
                    Work::Defect {
                        name: "leak".into()
                    },
                    "speed/defect-leak".to_string(),
                    false
                ),
            ]
        );
    }

    #[test]
    fn a_malformed_task_file_still_names_its_branch() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(
            root,
            ".speed/features/cat/tasks/7.json",
            r#"{"id": 7, "branch": "feature/seven", "acceptance_criteria": 12}"#,
        );
        write(root, ".speed/tasks/8.json", "{\"id\": 8,");
        write(root, ".speed/defects/bad/state.json", "[");
        let got = branches(root);
        assert!(
            got.contains(&(task("7", Some("cat")), "feature/seven".to_string(), true)),
            "{got:?}"
        );
        assert!(
            got.contains(&(task("8", None), "speed/task-8".to_string(), true)),
            "{got:?}"
        );
        assert!(
            got.contains(&(
                Work::Defect { name: "bad".into() },
                "speed/defect-bad".to_string(),
                true
            )),
            "{got:?}"
        );
    }
}
