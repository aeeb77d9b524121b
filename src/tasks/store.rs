//! Where task files live and how they are found, listed and saved. Every
//! layout of the orchestrator is read: `.speed/features/<feature>/tasks/`
//! (single-player), `.speed/shared/features/<feature>/tasks/` (multi-player)
//! and `.speed/tasks/` (no features). Files are read from the working tree.
//! A task is saved to the path it was read from, never found again by id.

use std::cmp::Ordering;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::model::{Layout, malformed};
use super::{Error, Task};

/// A feature folder and what it says about its spec and constraints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Feature {
    pub name: String,
    pub dir: PathBuf,
    /// The first non-blank line of `spec_path`, relative to the repo root.
    pub spec_path: Option<String>,
    /// `cross_cutting_concerns.json` flattened into readable lines.
    pub cross_cutting: Vec<String>,
}

/// The task files of one repository.
#[derive(Debug, Clone)]
pub struct Store {
    root: PathBuf,
}

/// A feature folder of one layout.
struct FeatureDir {
    name: String,
    layout: Layout,
    dir: PathBuf,
}

impl Store {
    pub fn open(repo_root: &Path) -> Store {
        Store {
            root: repo_root.to_path_buf(),
        }
    }

    fn flat_dir(&self) -> PathBuf {
        self.root.join(".speed").join("tasks")
    }

    /// The folders holding feature folders, in the order they are read.
    fn feature_roots(&self) -> [(Layout, PathBuf); 2] {
        let speed = self.root.join(".speed");
        [
            (Layout::Features, speed.join("features")),
            (Layout::Shared, speed.join("shared").join("features")),
        ]
    }

    /// The folders a scan reads task files from, for messages.
    pub fn task_folders(&self) -> Vec<PathBuf> {
        let [(_, single), (_, shared)] = self.feature_roots();
        vec![
            single.join("*").join("tasks"),
            shared.join("*").join("tasks"),
            self.flat_dir(),
        ]
    }

    /// Every feature folder of both layouts, by name (single-player first at
    /// equal names); none for a layout whose folder is absent.
    fn feature_dirs(&self) -> Result<Vec<FeatureDir>, Error> {
        let mut out = Vec::new();
        for (layout, root) in self.feature_roots() {
            let entries = match fs::read_dir(&root) {
                Ok(entries) => entries,
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(source) => return Err(Error::Read { path: root, source }),
            };
            for entry in entries {
                let entry = entry.map_err(|source| Error::Read {
                    path: root.clone(),
                    source,
                })?;
                if entry.path().is_dir() {
                    out.push(FeatureDir {
                        name: entry.file_name().to_string_lossy().into_owned(),
                        layout,
                        dir: entry.path(),
                    });
                }
            }
        }
        out.sort_by(|a, b| {
            a.name
                .cmp(&b.name)
                .then_with(|| (a.layout == Layout::Shared).cmp(&(b.layout == Layout::Shared)))
        });
        Ok(out)
    }

    /// The task with this id. With `feature`, only that feature's folders
    /// (in either layout) are searched. Without, an id found in more than one
    /// place is ambiguous, unless an `active_feature` file names the feature
    /// of exactly one of them.
    pub fn find(&self, id: &str, feature: Option<&str>) -> Result<Task, Error> {
        let mut searched = Vec::new();
        let mut places: Vec<(Option<String>, Layout, PathBuf)> = Vec::new();
        // An id is a file name, never a path out of the task folders.
        let plausible = !id.is_empty() && !id.contains(['/', '\\']) && !id.starts_with('.');
        let file = format!("{id}.json");
        match feature {
            Some(name) => {
                let name_ok = !name.is_empty() && !name.contains(['/', '\\']) && name != "..";
                for (layout, root) in self.feature_roots() {
                    let path = root.join(name).join("tasks").join(&file);
                    if plausible && name_ok && path.is_file() {
                        places.push((Some(name.to_string()), layout, path.clone()));
                    }
                    searched.push(path);
                }
            }
            None => {
                for dir in self.feature_dirs()? {
                    let path = dir.dir.join("tasks").join(&file);
                    if plausible && path.is_file() {
                        places.push((Some(dir.name), dir.layout, path));
                    }
                }
                for (_, root) in self.feature_roots() {
                    searched.push(root.join("*").join("tasks").join(&file));
                }
                let path = self.flat_dir().join(&file);
                if plausible && path.is_file() {
                    places.push((None, Layout::Flat, path.clone()));
                }
                searched.push(path);
            }
        }
        let mut active = Vec::new();
        if places.len() > 1 && feature.is_none() {
            active = self.active_features()?;
            let picked: Vec<usize> = (0..places.len())
                .filter(|&i| places[i].0.as_ref().is_some_and(|f| active.contains(f)))
                .collect();
            if let [only] = picked[..] {
                places = vec![places.swap_remove(only)];
            }
        }
        match places.len() {
            0 => Err(Error::NotFound {
                id: id.to_string(),
                searched,
            }),
            1 => {
                let (feature, layout, path) = places.remove(0);
                load(&path, feature.as_deref(), layout)
            }
            _ => Err(Error::Ambiguous {
                id: id.to_string(),
                places: places.into_iter().map(|(_, _, path)| path).collect(),
                active,
            }),
        }
    }

    /// The features `.speed/active_feature` and `.speed/shared/active_feature`
    /// name (the orchestrator writes the one of its layout).
    pub fn active_features(&self) -> Result<Vec<String>, Error> {
        let speed = self.root.join(".speed");
        let mut out = Vec::new();
        for path in [
            speed.join("active_feature"),
            speed.join("shared").join("active_feature"),
        ] {
            if let Some(name) = read_optional(&path)?.as_deref().and_then(first_line) {
                if !out.contains(&name) {
                    out.push(name);
                }
            }
        }
        Ok(out)
    }

    /// Every task in every layout, by feature (flat layout first) then id
    /// (numbers in numeric order, `10a` after `10`). A malformed file is an
    /// error naming it.
    pub fn list(&self) -> Result<Vec<Task>, Error> {
        let (tasks, mut broken) = self.scan()?;
        match broken.is_empty() {
            true => Ok(tasks),
            false => Err(broken.remove(0)),
        }
    }

    /// Like `list`, but a task file that cannot be read or parsed is returned
    /// beside the others instead of hiding them: a batch reviews what it can
    /// and reports the rest. Only a folder that cannot be listed is an error.
    pub fn scan(&self) -> Result<(Vec<Task>, Vec<Error>), Error> {
        let mut tasks = Vec::new();
        let mut broken = Vec::new();
        let mut take = |result: Result<Task, Error>| match result {
            Ok(task) => tasks.push(task),
            Err(err) => broken.push(err),
        };
        for path in json_files(&self.flat_dir())? {
            take(load(&path, None, Layout::Flat));
        }
        for dir in self.feature_dirs()? {
            for path in json_files(&dir.dir.join("tasks"))? {
                take(load(&path, Some(&dir.name), dir.layout));
            }
        }
        tasks.sort_by(|a, b| {
            a.feature
                .cmp(&b.feature)
                .then_with(|| (a.layout == Layout::Shared).cmp(&(b.layout == Layout::Shared)))
                .then_with(|| natural(&a.id, &b.id))
        });
        Ok((tasks, broken))
    }

    /// The task file as it is on disk now, read from the path `task` came
    /// from: a review writes back to the very file it read.
    pub fn reload(&self, task: &Task) -> Result<Task, Error> {
        load(&task.path, task.feature.as_deref(), task.layout)
    }

    /// A task `task` depends on, from the same folder (dependencies are
    /// within a feature); None if there is no such file.
    pub fn dependency(&self, task: &Task, id: &str) -> Result<Option<Task>, Error> {
        let plausible = !id.is_empty() && !id.contains(['/', '\\']) && !id.starts_with('.');
        let Some(dir) = task.path.parent() else {
            return Ok(None);
        };
        let path = dir.join(format!("{id}.json"));
        if !plausible || !path.is_file() {
            return Ok(None);
        }
        load(&path, task.feature.as_deref(), task.layout).map(Some)
    }

    /// The feature folder a task lives in, with its spec path and
    /// cross-cutting concerns; None for a task without a feature.
    pub fn feature_of(&self, task: &Task) -> Result<Option<Feature>, Error> {
        let (Some(name), Some(dir)) = (&task.feature, task.path.parent().and_then(Path::parent))
        else {
            return Ok(None);
        };
        let spec_path = read_optional(&dir.join("spec_path"))?
            .as_deref()
            .and_then(first_line);
        let concerns_path = dir.join("cross_cutting_concerns.json");
        let cross_cutting = match read_optional(&concerns_path)? {
            None => Vec::new(),
            Some(text) => {
                let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
                let value: Value =
                    serde_json::from_str(text).map_err(|e| malformed(&concerns_path, &e))?;
                concerns(&value)
            }
        };
        Ok(Some(Feature {
            name: name.clone(),
            dir: dir.to_path_buf(),
            spec_path,
            cross_cutting,
        }))
    }

    /// Every coordination requirement `task` is held to: its own
    /// `coordination` field and its feature's `coordination.json`, in the
    /// single-player and the multi-player layout alike (both, when both
    /// exist). A file that is not valid is an error naming it.
    pub fn coordination(&self, task: &Task) -> Result<super::Coordination, Error> {
        let mut all = task.coordination.clone().unwrap_or_default();
        let Some(feature) = task.feature.as_deref() else {
            return Ok(all);
        };
        let plausible = !feature.is_empty() && !feature.contains(['/', '\\']) && feature != "..";
        if !plausible {
            return Ok(all);
        }
        for (_, root) in self.feature_roots() {
            let path = root.join(feature).join("coordination.json");
            let Some(text) = read_optional(&path)? else {
                continue;
            };
            let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
            let value: Value = serde_json::from_str(text).map_err(|e| malformed(&path, &e))?;
            all.extend(super::Coordination::parse(&value, &path, "")?);
        }
        Ok(all)
    }

    /// Writes `task.raw` back to `task.path` atomically: a temporary file in
    /// the same folder, fsynced, then renamed over the original, so a reader
    /// never sees half a file. Pretty JSON, 2 spaces, trailing newline, and
    /// the byte order mark the file had, if it had one.
    pub fn save(&self, task: &Task) -> Result<(), Error> {
        let path = &task.path;
        let write_err = |source: io::Error| Error::Write {
            path: path.clone(),
            source,
        };
        let mut text = String::new();
        if task.bom {
            text.push('\u{feff}');
        }
        text.push_str(&serde_json::to_string_pretty(&task.raw).map_err(|e| write_err(e.into()))?);
        text.push('\n');
        // Confined to `.speed/`: a task file linked to a place outside it
        // is refused, not written through.
        crate::fsx::write_atomic(&self.root.join(".speed"), path, text.as_bytes())
            .map_err(|e| write_err(e.into()))
    }
}

fn load(path: &Path, feature: Option<&str>, layout: Layout) -> Result<Task, Error> {
    let text = fs::read_to_string(path).map_err(|source| Error::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let mut task = Task::parse(path, feature, &text)?;
    task.layout = layout;
    Ok(task)
}

/// The first non-blank line, trimmed: what a one-line file like `spec_path`
/// or `active_feature` says.
fn first_line(text: &str) -> Option<String> {
    text.trim_start_matches('\u{feff}')
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .map(str::to_string)
}

/// Task ids in natural order: `2` < `10` < `10a` < `10b` < `abc`.
fn natural(a: &str, b: &str) -> Ordering {
    fn split(id: &str) -> (Option<u64>, &str) {
        let digits = id.bytes().take_while(u8::is_ascii_digit).count();
        (id[..digits].parse().ok(), &id[digits..])
    }
    let ((na, ra), (nb, rb)) = (split(a), split(b));
    match (na, nb) {
        (Some(x), Some(y)) => x.cmp(&y).then_with(|| ra.cmp(rb)),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => a.cmp(b),
    }
    .then_with(|| a.cmp(b))
}

/// `*.json` files directly in `dir`, sorted; none if `dir` is absent.
fn json_files(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(Error::Read {
                path: dir.to_path_buf(),
                source,
            });
        }
    };
    let mut files = Vec::new();
    for entry in entries {
        let path = entry
            .map_err(|source| Error::Read {
                path: dir.to_path_buf(),
                source,
            })?
            .path();
        let hidden = path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with('.'));
        if !hidden && path.extension().is_some_and(|ext| ext == "json") && path.is_file() {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

fn read_optional(path: &Path) -> Result<Option<String>, Error> {
    match fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(Error::Read {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// Cross-cutting concerns in whatever shape the file has, as readable lines:
/// a list gives one line per item; an object gives one line per key (or one
/// per item of a list under a key); objects inside become `name: description`
/// or `key: value; key: value`.
fn concerns(value: &Value) -> Vec<String> {
    let lines: Vec<String> = match value {
        Value::Array(items) => items.iter().map(describe).collect(),
        Value::Object(object) => {
            let single = object.len() == 1;
            object
                .iter()
                .flat_map(|(key, value)| match value {
                    // A lone wrapper key (`{"concerns": [...]}`) adds nothing.
                    Value::Array(items) if single => items.iter().map(describe).collect(),
                    Value::Array(items) => items
                        .iter()
                        .map(|item| format!("{key}: {}", describe(item)))
                        .collect::<Vec<_>>(),
                    other => vec![format!("{key}: {}", describe(other))],
                })
                .collect()
        }
        other => vec![describe(other)],
    };
    lines
        .into_iter()
        .map(|line| line.trim().to_string())
        .filter(|line| !line.is_empty())
        .collect()
}

fn describe(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Bool(_) | Value::Number(_) => value.to_string(),
        Value::Array(items) => items.iter().map(describe).collect::<Vec<_>>().join("; "),
        Value::Object(object) => {
            let name = ["name", "title", "concern", "id"]
                .iter()
                .find_map(|k| object.get(*k).and_then(Value::as_str));
            let text = ["description", "rule", "text", "details"]
                .iter()
                .find_map(|k| object.get(*k).and_then(Value::as_str));
            match (name, text) {
                (Some(name), Some(text)) => format!("{name}: {text}"),
                _ => object
                    .iter()
                    .map(|(k, v)| format!("{k}: {}", describe(v)))
                    .collect::<Vec<_>>()
                    .join("; "),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, rel: &str, text: &str) -> PathBuf {
        let path = root.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn finds_tasks_in_both_layouts() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            ".speed/features/catalog/tasks/3.json",
            r#"{"id": 3, "title": "Three"}"#,
        );
        write(
            dir.path(),
            ".speed/tasks/9.json",
            r#"{"id": "9", "title": "Nine"}"#,
        );
        let store = Store::open(dir.path());

        let three = store.find("3", None).unwrap();
        assert_eq!(three.title, "Three");
        assert_eq!(three.feature.as_deref(), Some("catalog"));
        let nine = store.find("9", None).unwrap();
        assert_eq!(nine.title, "Nine");
        assert_eq!(nine.feature, None);
        assert_eq!(nine.path, dir.path().join(".speed/tasks/9.json"));
    }

    #[test]
    fn an_id_in_two_features_is_ambiguous_unless_one_is_picked() {
        let dir = tempfile::tempdir().unwrap();
        let a = write(
            dir.path(),
            ".speed/features/alpha/tasks/3.json",
            r#"{"title": "A"}"#,
        );
        let b = write(
            dir.path(),
            ".speed/features/beta/tasks/3.json",
            r#"{"title": "B"}"#,
        );
        let store = Store::open(dir.path());

        match store.find("3", None) {
            Err(err @ Error::Ambiguous { .. }) => {
                let Error::Ambiguous { ref places, .. } = err else {
                    unreachable!()
                };
                assert_eq!(places, &vec![a.clone(), b.clone()]);
                let message = err.to_string();
                assert!(
                    message.contains("alpha") && message.contains("beta"),
                    "{message}"
                );
            }
            other => panic!("expected Ambiguous, got {other:?}"),
        }
        assert_eq!(store.find("3", Some("beta")).unwrap().title, "B");
    }

    #[test]
    fn an_id_in_a_feature_and_the_flat_layout_is_ambiguous() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), ".speed/features/alpha/tasks/3.json", "{}");
        write(dir.path(), ".speed/tasks/3.json", "{}");
        let store = Store::open(dir.path());
        assert!(
            matches!(store.find("3", None), Err(Error::Ambiguous { places, .. }) if places.len() == 2)
        );
    }

    #[test]
    fn unknown_id_names_where_it_looked() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path());
        let err = store.find("42", None).unwrap_err();
        let message = err.to_string();
        assert!(message.contains("task 42 not found"), "{message}");
        assert!(message.contains(".speed/tasks/42.json"), "{message}");
        assert!(matches!(
            store.find("../x", None),
            Err(Error::NotFound { .. })
        ));
    }

    #[test]
    fn list_reads_every_task_in_order_and_names_a_bad_file() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), ".speed/tasks/10.json", r#"{"id": 10}"#);
        write(dir.path(), ".speed/tasks/2.json", r#"{"id": 2}"#);
        write(
            dir.path(),
            ".speed/features/cat/tasks/1.json",
            r#"{"id": 1}"#,
        );
        write(
            dir.path(),
            ".speed/features/cat/tasks/notes.txt",
            "not a task",
        );
        let store = Store::open(dir.path());
        let got: Vec<(Option<String>, String)> = store
            .list()
            .unwrap()
            .into_iter()
            .map(|t| (t.feature, t.id))
            .collect();
        assert_eq!(
            got,
            vec![
                (None, "2".to_string()),
                (None, "10".to_string()),
                (Some("cat".to_string()), "1".to_string()),
            ]
        );

        let bad = write(dir.path(), ".speed/tasks/5.json", "{\"id\": 5,}");
        match store.list() {
            Err(Error::Malformed {
                path, line, column, ..
            }) => {
                assert_eq!(path, bad);
                assert_eq!((line, column), (1, 10));
            }
            other => panic!("expected Malformed, got {other:?}"),
        }
    }

    #[test]
    fn feature_reads_spec_path_and_concerns_in_any_shape_in_either_layout() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path());
        for base in [".speed/features/cat", ".speed/shared/features/cat"] {
            write(dir.path(), &format!("{base}/tasks/1.json"), "{}");
            write(
                dir.path(),
                &format!("{base}/spec_path"),
                "\n  specs/product/cat.md  \n",
            );
            let task = store.reload(&load_at(dir.path(), base)).unwrap();
            let feature = store.feature_of(&task).unwrap().unwrap();
            assert_eq!(feature.spec_path.as_deref(), Some("specs/product/cat.md"));
            assert_eq!(feature.dir, dir.path().join(base));
            assert!(feature.cross_cutting.is_empty());

            let shapes = [
                (
                    r#"["No network", "Log to stderr"]"#,
                    vec!["No network", "Log to stderr"],
                ),
                (
                    r#"{"concerns": [{"name": "Security", "description": "No secrets in logs"}]}"#,
                    vec!["Security: No secrets in logs"],
                ),
                (
                    r#"{"security": "No secrets", "perf": ["Under 1s", "No N+1"]}"#,
                    vec!["security: No secrets", "perf: Under 1s", "perf: No N+1"],
                ),
                (
                    r#"[{"area": "i18n", "rule": "UTF-8"}]"#,
                    vec!["area: i18n; rule: UTF-8"],
                ),
            ];
            for (json, want) in shapes {
                write(
                    dir.path(),
                    &format!("{base}/cross_cutting_concerns.json"),
                    json,
                );
                let feature = store.feature_of(&task).unwrap().unwrap();
                assert_eq!(feature.cross_cutting, want, "{json}");
            }
            write(
                dir.path(),
                &format!("{base}/cross_cutting_concerns.json"),
                "[1,",
            );
            assert!(matches!(
                store.feature_of(&task),
                Err(Error::Malformed { .. })
            ));
        }
        write(dir.path(), ".speed/tasks/2.json", "{}");
        let flat = store.find("2", None).unwrap();
        assert_eq!(store.feature_of(&flat).unwrap(), None);
    }

    fn load_at(root: &Path, base: &str) -> Task {
        let layout = if base.contains("shared") {
            Layout::Shared
        } else {
            Layout::Features
        };
        load(&root.join(base).join("tasks/1.json"), Some("cat"), layout).unwrap()
    }

    #[test]
    fn the_multi_player_layout_is_read_like_the_others() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            ".speed/shared/features/audit/tasks/10a.json",
            r#"{"id": "10a", "status": "done"}"#,
        );
        write(
            dir.path(),
            ".speed/shared/features/audit/tasks/2.json",
            r#"{"id": "2"}"#,
        );
        write(
            dir.path(),
            ".speed/shared/features/audit/tasks/10.json",
            r#"{"id": "10"}"#,
        );
        write(
            dir.path(),
            ".speed/shared/features/audit/contract.json",
            "{}",
        );
        let store = Store::open(dir.path());
        let task = store.find("10a", None).unwrap();
        assert_eq!(task.layout, Layout::Shared);
        assert_eq!(task.feature.as_deref(), Some("audit"));
        let ids: Vec<String> = store.list().unwrap().into_iter().map(|t| t.id).collect();
        assert_eq!(ids, ["2", "10", "10a"]);
        let found = store.find("10", Some("audit")).unwrap();
        assert_eq!(found.layout, Layout::Shared);
        assert_eq!(
            store.dependency(&found, "2").unwrap().map(|t| t.path),
            Some(dir.path().join(".speed/shared/features/audit/tasks/2.json"))
        );
        assert!(store.dependency(&found, "99").unwrap().is_none());
        assert!(store.dependency(&found, "../x").unwrap().is_none());
    }

    #[test]
    fn active_feature_decides_a_bare_id_in_several_features() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            ".speed/shared/features/alpha/tasks/3.json",
            r#"{"title": "A"}"#,
        );
        write(
            dir.path(),
            ".speed/shared/features/beta/tasks/3.json",
            r#"{"title": "B"}"#,
        );
        let store = Store::open(dir.path());
        let message = store.find("3", None).unwrap_err().to_string();
        assert!(
            message.contains("alpha") && message.contains("beta"),
            "{message}"
        );
        assert!(message.contains("active_feature"), "{message}");

        write(dir.path(), ".speed/shared/active_feature", "beta\n");
        assert_eq!(store.find("3", None).unwrap().title, "B");
        write(dir.path(), ".speed/shared/active_feature", "gamma\n");
        let message = store.find("3", None).unwrap_err().to_string();
        assert!(
            message.contains("the active feature, gamma, is not one of them"),
            "{message}"
        );
        write(dir.path(), ".speed/active_feature", "\n alpha \n");
        assert_eq!(store.find("3", None).unwrap().title, "A");
        assert_eq!(store.find("3", Some("beta")).unwrap().title, "B");
    }

    #[test]
    fn a_feature_in_both_layouts_is_ambiguous_even_when_named() {
        let dir = tempfile::tempdir().unwrap();
        let a = write(dir.path(), ".speed/features/cat/tasks/1.json", "{}");
        let b = write(dir.path(), ".speed/shared/features/cat/tasks/1.json", "{}");
        let store = Store::open(dir.path());
        match store.find("1", Some("cat")) {
            Err(Error::Ambiguous { places, .. }) => assert_eq!(places, vec![a, b]),
            other => panic!("expected Ambiguous, got {other:?}"),
        }
        let message = store.find("9", Some("cat")).unwrap_err().to_string();
        assert!(
            message.contains(".speed/features/cat/tasks/9.json")
                && message.contains(".speed/shared/features/cat/tasks/9.json"),
            "{message}"
        );
    }

    #[test]
    fn reload_reads_the_same_file_and_refuses_a_changed_id() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), ".speed/tasks/1.json", r#"{"id": 1}"#);
        write(
            dir.path(),
            ".speed/tasks/2.json",
            r#"{"id": 2, "status": "running"}"#,
        );
        let store = Store::open(dir.path());
        let task = store.find("1", None).unwrap();
        fs::write(&path, r#"{"id": 2}"#).unwrap();
        let err = store.reload(&task).unwrap_err();
        assert!(matches!(err, Error::IdMismatch { .. }), "{err:?}");
    }

    #[test]
    fn save_keeps_a_byte_order_mark() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), ".speed/tasks/1.json", "\u{feff}{\"id\": 1}");
        let store = Store::open(dir.path());
        let task = store.find("1", None).unwrap();
        store.save(&task).unwrap();
        assert_eq!(
            fs::read_to_string(&path).unwrap(),
            "\u{feff}{\n  \"id\": 1\n}\n"
        );
    }

    #[test]
    fn save_keeps_unknown_fields_and_order_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let original = "{\n  \"zeta\": {\n    \"nested\": [\n      1,\n      \"two\"\n    ]\n  },\n  \"id\": 4,\n  \"status\": \"done\",\n  \"custom\": null,\n  \"alpha\": true\n}\n";
        let path = write(dir.path(), ".speed/tasks/4.json", original);
        let store = Store::open(dir.path());
        let mut task = store.find("4", None).unwrap();

        store.save(&task).unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), original);

        task.raw
            .insert("status".into(), Value::String("pending".into()));
        task.raw.insert(
            "review_verdict".into(),
            Value::String("request_changes".into()),
        );
        store.save(&task).unwrap();
        let expected = original.replace("\"done\"", "\"pending\"").replace(
            "\"alpha\": true\n}",
            "\"alpha\": true,\n  \"review_verdict\": \"request_changes\"\n}",
        );
        assert_eq!(fs::read_to_string(&path).unwrap(), expected);

        let names: Vec<String> = fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, vec!["4.json".to_string()]);
    }

    #[cfg(unix)]
    #[test]
    fn save_keeps_the_file_mode() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), ".speed/tasks/1.json", "{}");
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
        let store = Store::open(dir.path());
        store.save(&store.find("1", None).unwrap()).unwrap();
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o644);
    }
}
