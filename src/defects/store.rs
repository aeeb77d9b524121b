//! Where defects live and how they are found, listed and written back.
//! Both of the orchestrator's layouts are read, `.speed/defects/<name>/` and
//! `.speed/shared/defects/<name>/`, from the working tree. A defect name is
//! a folder name, never a path. What a review may write here, and only on
//! request: `state.json`'s status (atomically, every other field kept in
//! order) and one line appended to `logs/review.log`.

use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::Error;
use super::model::{self, Defect, Layout, State, Triage};

/// The folders holding defect folders, relative to the repository root.
const DIRS: [(Layout, &str); 2] = [
    (Layout::Single, ".speed/defects"),
    (Layout::Shared, ".speed/shared/defects"),
];

impl Layout {
    /// The folder holding this layout's defect folders.
    fn dir(self) -> &'static str {
        match self {
            Layout::Single => DIRS[0].1,
            Layout::Shared => DIRS[1].1,
        }
    }
}

/// A file in a defect folder larger than this is not a report a person
/// wrote or a triage an agent answered: it is refused rather than read.
const MAX_FILE_BYTES: u64 = 4 << 20;

pub const REPORT: &str = "report.md";
pub const TRIAGE: &str = "triage.json";
pub const STATE: &str = "state.json";
pub const CONTEXT: &str = "context.md";
pub const REVIEW_LOG: &str = "logs/review.log";

/// The defects of one repository.
#[derive(Debug, Clone)]
pub struct Store {
    root: PathBuf,
}

/// Why a name cannot be a defect's folder name, if it cannot.
pub fn check_name(name: &str) -> Result<(), Error> {
    let why = if name.is_empty() {
        Some("it is empty")
    } else if name.contains(['/', '\\']) {
        Some("it holds a path separator")
    } else if name.starts_with('.') {
        Some("it starts with a dot")
    } else if name.chars().any(char::is_control) {
        Some("it holds a control character")
    } else {
        None
    };
    match why {
        Some(why) => Err(Error::BadName {
            name: name.to_string(),
            why,
        }),
        None => Ok(()),
    }
}

/// A defect's branch, as the merge gate needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Branch {
    pub name: String,
    pub branch: String,
    /// Why its `state.json` could not be read, when it could not.
    pub problem: Option<String>,
}

/// A defect that could not be read, by name, and why.
#[derive(Debug)]
pub struct Broken {
    pub name: String,
    pub error: Error,
}

impl Store {
    pub fn open(repo_root: &Path) -> Store {
        Store {
            root: repo_root.to_path_buf(),
        }
    }

    /// The folders defects are looked for in, for messages.
    pub fn folders(&self) -> Vec<PathBuf> {
        DIRS.iter().map(|(_, dir)| PathBuf::from(dir)).collect()
    }

    /// The defect named `name`, read whole. A missing folder, report or
    /// triage is an error naming what is missing; `state.json` and
    /// `context.md` are optional.
    pub fn find(&self, name: &str) -> Result<Defect, Error> {
        check_name(name)?;
        let mut places = Vec::new();
        let mut searched = Vec::new();
        for (layout, dir) in DIRS {
            let rel = Path::new(dir).join(name);
            if self.root.join(&rel).is_dir() {
                places.push((layout, rel.clone()));
            }
            searched.push(rel);
        }
        match places.len() {
            0 => Err(Error::NotFound {
                name: name.to_string(),
                searched,
            }),
            1 => {
                let (layout, dir) = places.remove(0);
                self.load(name, layout, dir)
            }
            _ => Err(Error::Ambiguous {
                name: name.to_string(),
                places: places.into_iter().map(|(_, p)| p).collect(),
            }),
        }
    }

    /// Every defect folder of both layouts, by name, each name once with
    /// the first layout it is found in (single-player first). Only a folder
    /// that cannot be listed is an error.
    fn names(&self) -> Result<Vec<(String, Layout)>, Error> {
        let mut names: Vec<(String, Layout)> = Vec::new();
        for (layout, dir) in DIRS {
            let entries = match fs::read_dir(self.root.join(dir)) {
                Ok(entries) => entries,
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(source) => {
                    return Err(Error::Read {
                        path: PathBuf::from(dir),
                        source,
                    });
                }
            };
            for entry in entries {
                let entry = entry.map_err(|source| Error::Read {
                    path: PathBuf::from(dir),
                    source,
                })?;
                let Some(name) = entry.file_name().to_str().map(str::to_string) else {
                    continue;
                };
                if check_name(&name).is_ok() && entry.path().is_dir() {
                    names.push((name, layout));
                }
            }
        }
        names.sort();
        names.dedup_by(|b, a| a.0 == b.0);
        Ok(names)
    }

    /// The state of the defect named `name` in `layout`: None when it has
    /// no `state.json`.
    fn state(&self, name: &str, layout: Layout) -> Result<Option<State>, Error> {
        let path = Path::new(layout.dir()).join(name).join(STATE);
        match self.read_text(&path, true)? {
            Some(text) => State::parse(&path, &text).map(Some),
            None => Ok(None),
        }
    }

    /// The defects whose `state.json` says `fixed`: the fixes waiting for a
    /// review, by name. A defect whose state cannot be read, or that is
    /// fixed but whose report or triage cannot, is returned in the second
    /// list: it is never skipped silently. Only a folder that cannot be
    /// listed is an error.
    pub fn fixed(&self) -> Result<(Vec<Defect>, Vec<Broken>), Error> {
        let mut fixed = Vec::new();
        let mut broken = Vec::new();
        for (name, layout) in self.names()? {
            let found = match self.state(&name, layout) {
                Ok(Some(state)) if state.status.as_deref() == Some("fixed") => self.find(&name),
                Ok(_) => continue,
                Err(error) => Err(error),
            };
            match found {
                Ok(defect) => fixed.push(defect),
                Err(error) => broken.push(Broken { name, error }),
            }
        }
        Ok((fixed, broken))
    }

    /// Every defect with the branch its fix lives on, for the merge gate:
    /// `state.json`'s `branch`, else `speed/defect-<name>`. Read leniently,
    /// so a gate does not lose track of a defect whose state is broken: the
    /// default branch is used and the problem is returned beside it.
    pub fn branches(&self) -> Result<Vec<Branch>, Error> {
        Ok(self
            .names()?
            .into_iter()
            .map(|(name, layout)| {
                let (branch, problem) = match self.state(&name, layout) {
                    Ok(state) => (state.and_then(|s| s.branch), None),
                    Err(error) => (None, Some(error.to_string())),
                };
                Branch {
                    branch: branch.unwrap_or_else(|| format!("speed/defect-{name}")),
                    name,
                    problem,
                }
            })
            .collect())
    }

    fn load(&self, name: &str, layout: Layout, dir: PathBuf) -> Result<Defect, Error> {
        let report_path = dir.join(REPORT);
        let report_bytes = self
            .read_bytes(&report_path)?
            .ok_or_else(|| Error::Missing {
                path: report_path.clone(),
                why: "a defect fix is reviewed against the report of the defect",
            })?;
        let (report_text, report) = model::parse_report(&report_path, report_bytes)?;
        let triage_path = dir.join(TRIAGE);
        let triage_text = self
            .read_text(&triage_path, true)?
            .ok_or_else(|| Error::Missing {
                path: triage_path.clone(),
                why: "a defect fix is reviewed against its triage (root cause, affected_files, regression risks)",
            })?;
        let triage = Triage::parse(&triage_path, &triage_text)?;
        let state_path = dir.join(STATE);
        let state = match self.read_text(&state_path, true)? {
            Some(text) => Some(State::parse(&state_path, &text)?),
            None => None,
        };
        let context = self
            .read_text(&dir.join(CONTEXT), true)?
            .filter(|text| !text.trim().is_empty());
        let branch = state
            .as_ref()
            .and_then(|s| s.branch.clone())
            .unwrap_or_else(|| format!("speed/defect-{name}"));
        Ok(Defect {
            name: name.to_string(),
            layout,
            dir,
            branch,
            report_text,
            report,
            triage,
            state,
            context,
        })
    }

    /// A file of a defect folder as text (None when absent); `utf8` checks
    /// the text strictly, naming the first byte that is not UTF-8.
    fn read_text(&self, rel: &Path, utf8: bool) -> Result<Option<String>, Error> {
        let Some(bytes) = self.read_bytes(rel)? else {
            return Ok(None);
        };
        if utf8 {
            return model::utf8(rel, bytes).map(Some);
        }
        Ok(Some(String::from_utf8_lossy(&bytes).into_owned()))
    }

    /// A file of a defect folder (None when absent). A file that resolves
    /// outside the repository (a symbolic link to `~/.ssh/…`) or is not a
    /// regular file is refused: its text would go to a model.
    fn read_bytes(&self, rel: &Path) -> Result<Option<Vec<u8>>, Error> {
        let path = self.root.join(rel);
        let read_err = |source: io::Error| Error::Read {
            path: rel.to_path_buf(),
            source,
        };
        let meta = match fs::metadata(&path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                // A dangling symbolic link is there, and broken.
                if fs::symlink_metadata(&path).is_ok() {
                    return Err(read_err(e));
                }
                return Ok(None);
            }
            Err(e) => return Err(read_err(e)),
        };
        if !meta.is_file() {
            return Err(read_err(io::Error::other("not a regular file")));
        }
        let real = fs::canonicalize(&path).map_err(read_err)?;
        let root = fs::canonicalize(&self.root).map_err(read_err)?;
        if !real.starts_with(&root) {
            return Err(read_err(io::Error::other(format!(
                "it resolves to {}, outside the repository; speed does not read it",
                real.display()
            ))));
        }
        if meta.len() > MAX_FILE_BYTES {
            return Err(read_err(io::Error::other(format!(
                "{} bytes, more than the {} MiB a defect file may hold",
                meta.len(),
                MAX_FILE_BYTES >> 20
            ))));
        }
        let mut bytes = Vec::new();
        fs::File::open(&path)
            .and_then(|f| f.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes))
            .map_err(read_err)?;
        Ok(Some(bytes))
    }

    /// After an approval with `--update-state`: `fixed` becomes `reviewed`.
    /// The file is read again first (the orchestrator may have written it
    /// meanwhile) and changed only if it still says `fixed`; every other
    /// field stays, in order, and `updated_at` is set as the orchestrator
    /// sets it (`modified_by` too, in the multi-player layout). Returns the
    /// status the file holds afterwards.
    pub fn mark_reviewed(
        &self,
        defect: &Defect,
        actor: &str,
        now: std::time::SystemTime,
    ) -> Result<String, Error> {
        let rel = defect.file(STATE);
        let text = self.read_text(&rel, true)?.ok_or_else(|| Error::Missing {
            path: rel.clone(),
            why: "--update-state changes the defect's state.json",
        })?;
        let mut state = State::parse(&rel, &text)?;
        let status = state.status.clone().unwrap_or_default();
        if status != "fixed" {
            return Ok(status);
        }
        let stamp = humantime::format_rfc3339_seconds(now).to_string();
        if let Value::Object(map) = &mut state.raw {
            map.insert("status".into(), Value::String("reviewed".into()));
            map.insert("updated_at".into(), Value::String(stamp));
            if defect.layout == Layout::Shared && !actor.is_empty() {
                map.insert("modified_by".into(), Value::String(actor.to_string()));
            }
        }
        let mut out = String::new();
        if state.bom {
            out.push('\u{feff}');
        }
        out.push_str(
            &serde_json::to_string_pretty(&state.raw).map_err(|e| Error::Write {
                path: rel.clone(),
                source: e.into(),
            })?,
        );
        out.push('\n');
        // Confined to `.speed/`, as every write of speed is: a state.json
        // linked to a file outside it is refused, not written through.
        crate::fsx::write_atomic(&self.area(), &self.root.join(&rel), out.as_bytes()).map_err(
            |e| Error::Write {
                path: rel.clone(),
                source: e.into(),
            },
        )?;
        Ok("reviewed".to_string())
    }

    /// Appends one JSON line to the defect's `logs/review.log`.
    pub fn append_review_log(&self, defect: &Defect, entry: &Value) -> Result<(), Error> {
        let rel = defect.file(REVIEW_LOG);
        let write_err = |source: io::Error| Error::Write {
            path: rel.clone(),
            source,
        };
        let line = serde_json::to_string(entry).map_err(|e| write_err(e.into()))?;
        let area = self.area();
        let path = self.root.join(&rel);
        if let Some(dir) = path.parent() {
            crate::fsx::create_dir_all(&area, dir).map_err(|e| write_err(e.into()))?;
        }
        crate::fsx::append_line(&area, &path, &line).map_err(|e| write_err(e.into()))
    }

    /// The folder every write here is confined to.
    fn area(&self) -> PathBuf {
        self.root.join(".speed")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder(root: &Path, dir: &str, files: &[(&str, &str)]) {
        let dir = root.join(dir);
        fs::create_dir_all(&dir).unwrap();
        for (name, text) in files {
            fs::write(dir.join(name), text).unwrap();
        }
    }

    const REPORT_MD: &str = "# Defect: x\n\nSeverity: P2\n";
    const TRIAGE_JSON: &str = r#"{"affected_files": ["src/a.rs"]}"#;

    #[test]
    fn names_are_folder_names() {
        for bad in ["", "../x", "a/b", "a\\b", ".hidden", "..", "a\nb"] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
        for good in ["login-crash", "x", "x..y", "ünïcode"] {
            assert!(check_name(good).is_ok(), "{good:?}");
        }
        let tmp = tempfile::tempdir().unwrap();
        let err = Store::open(tmp.path()).find("../../etc").unwrap_err();
        assert_eq!(
            err.to_string(),
            "defect name \"../../etc\" is not a folder name: it holds a path separator"
        );
    }

    #[test]
    fn finds_either_layout_and_names_what_is_missing() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open(tmp.path());
        let err = store.find("gone").unwrap_err();
        assert_eq!(
            err.to_string(),
            "defect gone not found (looked in .speed/defects/gone, .speed/shared/defects/gone)"
        );

        folder(
            tmp.path(),
            ".speed/shared/defects/a",
            &[("report.md", REPORT_MD)],
        );
        let err = store.find("a").unwrap_err();
        assert!(
            err.to_string()
                .starts_with(".speed/shared/defects/a/triage.json: missing:"),
            "{err}"
        );
        folder(
            tmp.path(),
            ".speed/shared/defects/a",
            &[("triage.json", TRIAGE_JSON)],
        );
        let a = store.find("a").unwrap();
        assert_eq!(a.layout, Layout::Shared);
        assert_eq!(a.branch, "speed/defect-a");
        assert!(a.state.is_none() && a.context.is_none());

        folder(
            tmp.path(),
            ".speed/defects/b",
            &[("triage.json", TRIAGE_JSON)],
        );
        let err = store.find("b").unwrap_err();
        assert!(
            err.to_string()
                .starts_with(".speed/defects/b/report.md: missing:"),
            "{err}"
        );

        folder(tmp.path(), ".speed/defects/a", &[("report.md", REPORT_MD)]);
        let err = store.find("a").unwrap_err();
        assert!(err.to_string().contains("exists in both layouts"), "{err}");
    }

    #[test]
    fn state_names_the_branch() {
        let tmp = tempfile::tempdir().unwrap();
        folder(
            tmp.path(),
            ".speed/defects/c",
            &[
                ("report.md", REPORT_MD),
                ("triage.json", TRIAGE_JSON),
                ("state.json", r#"{"status": "fixed", "branch": "fix/c"}"#),
                ("context.md", "Keep the public API.\n"),
            ],
        );
        let c = Store::open(tmp.path()).find("c").unwrap();
        assert_eq!(c.branch, "fix/c");
        assert_eq!(c.status(), Some("fixed"));
        assert_eq!(c.context.as_deref(), Some("Keep the public API.\n"));
    }

    #[cfg(unix)]
    #[test]
    fn files_outside_the_repository_are_not_read() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("repo");
        let secret = tmp.path().join("secret.md");
        fs::write(&secret, "API_KEY=abc").unwrap();
        folder(&root, ".speed/defects/d", &[("triage.json", TRIAGE_JSON)]);
        std::os::unix::fs::symlink(&secret, root.join(".speed/defects/d/report.md")).unwrap();
        let err = Store::open(&root).find("d").unwrap_err();
        assert!(err.to_string().contains("outside the repository"), "{err}");
    }

    #[test]
    fn fixed_lists_fixed_defects_and_the_broken_ones() {
        let tmp = tempfile::tempdir().unwrap();
        let ok = [
            ("report.md", REPORT_MD),
            ("triage.json", TRIAGE_JSON),
            ("state.json", r#"{"status": "fixed"}"#),
        ];
        folder(tmp.path(), ".speed/defects/fixed-one", &ok);
        folder(
            tmp.path(),
            ".speed/defects/triaged",
            &[("state.json", r#"{"status": "triaged"}"#)],
        );
        folder(
            tmp.path(),
            ".speed/defects/no-state",
            &[("report.md", REPORT_MD)],
        );
        folder(
            tmp.path(),
            ".speed/shared/defects/bad-state",
            &[("state.json", "{")],
        );
        folder(
            tmp.path(),
            ".speed/defects/fixed-no-triage",
            &[
                ("report.md", REPORT_MD),
                ("state.json", r#"{"status": "fixed"}"#),
            ],
        );
        let (fixed, broken) = Store::open(tmp.path()).fixed().unwrap();
        let names: Vec<&str> = fixed.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["fixed-one"]);
        let broken: Vec<String> = broken.iter().map(|b| b.error.to_string()).collect();
        assert_eq!(broken.len(), 2, "{broken:?}");
        assert!(
            broken[0].starts_with(".speed/shared/defects/bad-state/state.json:1:1"),
            "{broken:?}"
        );
        assert!(
            broken[1].starts_with(".speed/defects/fixed-no-triage/triage.json: missing"),
            "{broken:?}"
        );
    }

    #[test]
    fn mark_reviewed_keeps_every_field_in_order() {
        let tmp = tempfile::tempdir().unwrap();
        let state = "{\n  \"status\": \"fixed\",\n  \"reported_severity\": \"P1\",\n  \"branch\": \"speed/defect-e\",\n  \"updated_at\": \"2025-01-01T00:00:00Z\",\n  \"source_spec\": \"specs/defects/e.md\"\n}\n";
        folder(
            tmp.path(),
            ".speed/defects/e",
            &[
                ("report.md", REPORT_MD),
                ("triage.json", TRIAGE_JSON),
                ("state.json", state),
            ],
        );
        let store = Store::open(tmp.path());
        let e = store.find("e").unwrap();
        let at = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_735_000_000);
        assert_eq!(store.mark_reviewed(&e, "ci", at).unwrap(), "reviewed");
        let written = fs::read_to_string(tmp.path().join(".speed/defects/e/state.json")).unwrap();
        assert_eq!(
            written,
            "{\n  \"status\": \"reviewed\",\n  \"reported_severity\": \"P1\",\n  \"branch\": \"speed/defect-e\",\n  \"updated_at\": \"2024-12-24T00:26:40Z\",\n  \"source_spec\": \"specs/defects/e.md\"\n}\n"
        );
        // Not `fixed` any more: left alone.
        assert_eq!(store.mark_reviewed(&e, "ci", at).unwrap(), "reviewed");
        assert_eq!(
            fs::read_to_string(tmp.path().join(".speed/defects/e/state.json")).unwrap(),
            written
        );

        store
            .append_review_log(&e, &serde_json::json!({"verdict": "approve"}))
            .unwrap();
        store
            .append_review_log(&e, &serde_json::json!({"verdict": "request_changes"}))
            .unwrap();
        let log = fs::read_to_string(tmp.path().join(".speed/defects/e/logs/review.log")).unwrap();
        assert_eq!(
            log,
            "{\"verdict\":\"approve\"}\n{\"verdict\":\"request_changes\"}\n"
        );
    }
}
