//! Where task files live and how they are found, listed and saved. Both
//! layouts are read: `.speed/features/<feature>/tasks/<id>.json` and
//! `.speed/tasks/<id>.json`. Files are read from the working tree.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::model::malformed;
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

impl Store {
    pub fn open(repo_root: &Path) -> Store {
        Store {
            root: repo_root.to_path_buf(),
        }
    }

    fn features_dir(&self) -> PathBuf {
        self.root.join(".speed").join("features")
    }

    fn flat_dir(&self) -> PathBuf {
        self.root.join(".speed").join("tasks")
    }

    /// Feature folder names, sorted; none if `.speed/features` is absent.
    fn feature_names(&self) -> Result<Vec<String>, Error> {
        let dir = self.features_dir();
        let entries = match fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(source) => return Err(Error::Read { path: dir, source }),
        };
        let mut names = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|source| Error::Read {
                path: dir.clone(),
                source,
            })?;
            if entry.path().is_dir() {
                names.push(entry.file_name().to_string_lossy().into_owned());
            }
        }
        names.sort();
        Ok(names)
    }

    /// The task with this id. With `feature`, only that feature's folder is
    /// searched; without, an id found in more than one place is ambiguous.
    pub fn find(&self, id: &str, feature: Option<&str>) -> Result<Task, Error> {
        let mut searched = Vec::new();
        let mut places: Vec<(Option<String>, PathBuf)> = Vec::new();
        // An id is a file name, never a path out of the task folders.
        let plausible = !id.is_empty() && !id.contains(['/', '\\']) && !id.starts_with('.');
        let file = format!("{id}.json");
        match feature {
            Some(name) => {
                let path = self.features_dir().join(name).join("tasks").join(&file);
                if plausible && path.is_file() {
                    places.push((Some(name.to_string()), path.clone()));
                }
                searched.push(path);
            }
            None => {
                for name in self.feature_names()? {
                    let path = self.features_dir().join(&name).join("tasks").join(&file);
                    if plausible && path.is_file() {
                        places.push((Some(name), path));
                    }
                }
                searched.push(self.features_dir().join("*").join("tasks").join(&file));
                let path = self.flat_dir().join(&file);
                if plausible && path.is_file() {
                    places.push((None, path.clone()));
                }
                searched.push(path);
            }
        }
        match places.len() {
            0 => Err(Error::NotFound {
                id: id.to_string(),
                searched,
            }),
            1 => {
                let (feature, path) = places.remove(0);
                load(&path, feature.as_deref())
            }
            _ => Err(Error::Ambiguous {
                id: id.to_string(),
                places: places.into_iter().map(|(_, path)| path).collect(),
            }),
        }
    }

    /// Every task in both layouts, by feature (flat layout first) then id
    /// (numbers in numeric order). A malformed file is an error naming it.
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
            take(load(&path, None));
        }
        for name in self.feature_names()? {
            let dir = self.features_dir().join(&name).join("tasks");
            for path in json_files(&dir)? {
                take(load(&path, Some(&name)));
            }
        }
        tasks.sort_by(|a, b| {
            let key = |t: &Task| (t.feature.clone(), t.id.parse::<u64>().ok(), t.id.clone());
            // Numeric ids before others, each in their natural order.
            let (fa, na, ia) = key(a);
            let (fb, nb, ib) = key(b);
            fa.cmp(&fb)
                .then_with(|| match (na, nb) {
                    (Some(x), Some(y)) => x.cmp(&y),
                    (Some(_), None) => std::cmp::Ordering::Less,
                    (None, Some(_)) => std::cmp::Ordering::Greater,
                    (None, None) => std::cmp::Ordering::Equal,
                })
                .then_with(|| ia.cmp(&ib))
        });
        Ok((tasks, broken))
    }

    /// A feature's folder, spec path and cross-cutting concerns; None if
    /// there is no such feature folder.
    pub fn feature(&self, name: &str) -> Result<Option<Feature>, Error> {
        let dir = self.features_dir().join(name);
        if name.is_empty() || name.contains(['/', '\\']) || !dir.is_dir() {
            return Ok(None);
        }
        let spec_path = read_optional(&dir.join("spec_path"))?.and_then(|text| {
            text.lines()
                .map(str::trim)
                .find(|line| !line.is_empty())
                .map(str::to_string)
        });
        let concerns_path = dir.join("cross_cutting_concerns.json");
        let cross_cutting = match read_optional(&concerns_path)? {
            None => Vec::new(),
            Some(text) => {
                let value: Value =
                    serde_json::from_str(&text).map_err(|e| malformed(&concerns_path, &e))?;
                concerns(&value)
            }
        };
        Ok(Some(Feature {
            name: name.to_string(),
            dir,
            spec_path,
            cross_cutting,
        }))
    }

    /// Writes `task.raw` back to `task.path` atomically: a temporary file in
    /// the same folder, fsynced, then renamed over the original, so a reader
    /// never sees half a file. Pretty JSON, 2 spaces, trailing newline.
    pub fn save(&self, task: &Task) -> Result<(), Error> {
        let path = &task.path;
        let write_err = |source: io::Error| Error::Write {
            path: path.clone(),
            source,
        };
        let mut text = serde_json::to_string_pretty(&task.raw).map_err(|e| write_err(e.into()))?;
        text.push('\n');
        // Confined to `.speed/`: a task file linked to a place outside it
        // is refused, not written through.
        crate::fsx::write_atomic(&self.root.join(".speed"), path, text.as_bytes())
            .map_err(|e| write_err(e.into()))
    }
}

fn load(path: &Path, feature: Option<&str>) -> Result<Task, Error> {
    let text = fs::read_to_string(path).map_err(|source| Error::Read {
        path: path.to_path_buf(),
        source,
    })?;
    Task::parse(path, feature, &text)
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
        if path.extension().is_some_and(|ext| ext == "json") && path.is_file() {
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
    fn feature_reads_spec_path_and_concerns_in_any_shape() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            ".speed/features/cat/spec_path",
            "\n  specs/product/cat.md  \n",
        );
        let store = Store::open(dir.path());
        let feature = store.feature("cat").unwrap().unwrap();
        assert_eq!(feature.spec_path.as_deref(), Some("specs/product/cat.md"));
        assert!(feature.cross_cutting.is_empty());
        assert_eq!(store.feature("nope").unwrap(), None);

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
                ".speed/features/cat/cross_cutting_concerns.json",
                json,
            );
            let feature = store.feature("cat").unwrap().unwrap();
            assert_eq!(feature.cross_cutting, want, "{json}");
        }

        write(
            dir.path(),
            ".speed/features/cat/cross_cutting_concerns.json",
            "[1,",
        );
        assert!(matches!(store.feature("cat"), Err(Error::Malformed { .. })));
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
