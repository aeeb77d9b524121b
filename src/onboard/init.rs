//! `speed init`: what a first review needs, written into the repository's
//! working tree without ever replacing a file. Each file is created only
//! when nothing is at its path (a second run writes nothing and says what
//! exists); `.gitignore` only gains the lines of speed's runtime state it
//! lacks, its own lines kept as they are.

use std::path::{Path, PathBuf};

use super::Error;
use super::detect::{self, Found, Languages, Provider};
use super::python;
use super::templates::{self, Tools};
use crate::fsx;
use crate::git::Repository;
use crate::hook::install;
use crate::settings::CONFIG_PATH;
use crate::tasks;

/// What happened to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Created,
    /// Something was there: left as it is.
    Exists,
    /// `.gitignore`: these lines were added.
    Appended(Vec<String>),
    /// `.gitignore`: every line was there, or git ignores those paths
    /// already.
    Unchanged,
    /// Not written, and why (task files exist; specs exist).
    Skipped(String),
}

/// One file init looked after, relative to the repository root.
#[derive(Debug, Clone)]
pub struct File {
    pub path: String,
    pub outcome: Outcome,
}

/// What `speed init` did and found.
#[derive(Debug)]
pub struct Report {
    pub root: PathBuf,
    /// The provider found, when a configuration was written (None when one
    /// existed: nothing was looked for).
    pub found: Option<Found>,
    pub languages: Languages,
    pub tools: Tools,
    pub files: Vec<File>,
    /// The spec a first review is run against.
    pub spec: String,
    /// Task files there already, by path.
    pub task_files: Vec<String>,
    /// Things to know: a file git ignores though it must be committed.
    pub notices: Vec<String>,
    /// What `--hooks` did, or why it could not.
    pub hooks: Option<Result<Vec<install::Action>, String>>,
    /// The branch HEAD is on, and the main branch when one is found.
    pub head_branch: Option<String>,
    pub main_branch: Option<String>,
    /// The configuration, the vision and the spec are all in the main
    /// branch's commit already (a later run: nothing is left to commit).
    pub committed_on_main: bool,
}

/// Write what a first review needs in the repository containing `dir`.
pub fn init(
    dir: &Path,
    hooks: bool,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Report, Error> {
    let repo = Repository::discover(dir).map_err(|source| Error::NotARepository {
        path: dir.to_path_buf(),
        reason: source.to_string(),
    })?;
    if !repo.has_work_tree() {
        return Err(Error::Bare {
            path: repo.root().to_path_buf(),
        });
    }
    let root = repo.root().to_path_buf();
    let mut languages = detect::languages(&root);
    if languages.python {
        languages.python_import_root = python::import_root(&root);
    }
    let tools = Tools {
        cargo: detect::which("cargo", env).is_some(),
        clippy: detect::which("cargo-clippy", env).is_some(),
        ruff: detect::which("ruff", env).is_some(),
        pytest: detect::which("pytest", env).is_some(),
    };
    let product = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "product".to_string());
    let mut files = Vec::new();
    let mut found = None;

    // The configuration: the provider is looked for only when one is to be
    // written.
    let config_path = root.join(CONFIG_PATH);
    if exists(&config_path) {
        files.push(file(CONFIG_PATH, Outcome::Exists));
    } else {
        let provider = detect::provider(env);
        let text = templates::config(&provider.provider, &languages, &tools);
        files.push(file(
            CONFIG_PATH,
            write(&root, ".speed", CONFIG_PATH, &text)?,
        ));
        found = Some(provider);
    }

    // The specs: the vision, and a template unless specs exist.
    let vision = templates::VISION;
    files.push(file(
        vision,
        write(&root, "specs", vision, &templates::vision(&product))?,
    ));
    let existing = spec_files(&root);
    let spec = match existing.first() {
        Some(spec) => {
            files.push(file(
                &format!(
                    "{}/{}.md",
                    templates::SPECS_DIR,
                    templates::spec_name(&product)
                ),
                Outcome::Skipped(format!(
                    "specs exist: {}",
                    existing
                        .iter()
                        .take(5)
                        .cloned()
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            ));
            spec.clone()
        }
        None => {
            let path = format!(
                "{}/{}.md",
                templates::SPECS_DIR,
                templates::spec_name(&product)
            );
            let text = templates::spec(&product, &path);
            files.push(file(&path, write(&root, "specs", &path, &text)?));
            path
        }
    };

    // A task file template, unless task files exist: then the layout they
    // use is the one to follow.
    let task_files = existing_tasks(&root);
    let task = templates::TASK_TEMPLATE;
    if task_files.is_empty() {
        files.push(file(
            task,
            write(&root, ".speed", task, &templates::task(&spec))?,
        ));
    } else {
        files.push(file(
            task,
            Outcome::Skipped(format!("{} task files exist", task_files.len())),
        ));
    }

    files.push(file(".gitignore", gitignore(&repo, &root)?));

    let mut notices = Vec::new();
    for path in [CONFIG_PATH, vision, spec.as_str()] {
        if repo.is_ignored(path) {
            notices.push(format!(
                "git ignores {path}, which must be committed on the main branch: commit it with `git add -f {path}`, or stop ignoring it"
            ));
        }
    }

    let hooks = hooks.then(|| {
        repo.hooks_dir()
            .map_err(|e| e.to_string())
            .and_then(|dir| install::install(&dir, false).map_err(|e| e.to_string()))
    });

    let main = repo.resolve_main(None).ok();
    let committed_on_main = main.as_ref().is_some_and(|main| {
        [CONFIG_PATH, vision, spec.as_str()]
            .iter()
            .all(|path| matches!(repo.read_file(&main.commit, path), Ok(Some(_))))
    });

    Ok(Report {
        root,
        found,
        languages,
        tools,
        files,
        spec,
        task_files,
        notices,
        hooks,
        head_branch: repo.current_branch(),
        main_branch: main.map(|m| m.name),
        committed_on_main,
    })
}

fn file(path: &str, outcome: Outcome) -> File {
    File {
        path: path.to_string(),
        outcome,
    }
}

fn exists(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}

/// Creates `path` (relative to `root`) inside `area` (a folder of the
/// root) unless something is there.
fn write(root: &Path, area: &str, path: &str, text: &str) -> Result<Outcome, Error> {
    let area = root.join(area);
    let created =
        fsx::write_if_absent(&area, &root.join(path), text.as_bytes()).map_err(|source| {
            Error::Write {
                path: path.to_string(),
                source,
            }
        })?;
    Ok(if created {
        Outcome::Created
    } else {
        Outcome::Exists
    })
}

/// The Markdown specs under `specs/product/` other than the vision, by
/// path, sorted.
fn spec_files(root: &Path) -> Vec<String> {
    let dir = root.join(templates::SPECS_DIR);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut specs: Vec<String> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            (name.ends_with(".md") && name != "overview.md" && e.path().is_file())
                .then(|| format!("{}/{name}", templates::SPECS_DIR))
        })
        .collect();
    specs.sort();
    specs
}

/// Task files in any layout, by path (unreadable ones too: they are
/// task files a person is working on).
fn existing_tasks(root: &Path) -> Vec<String> {
    let Ok((tasks, broken)) = tasks::Store::open(root).scan() else {
        return Vec::new();
    };
    let mut paths: Vec<String> = tasks
        .iter()
        .map(|t| {
            t.path
                .strip_prefix(root)
                .unwrap_or(&t.path)
                .display()
                .to_string()
        })
        .collect();
    paths.extend(broken.iter().map(|e| e.to_string()));
    paths
}

/// Adds to `.gitignore` the lines of speed's runtime state it lacks (and
/// git does not ignore already), under one comment; everything there is
/// kept as it is.
fn gitignore(repo: &Repository, root: &Path) -> Result<Outcome, Error> {
    let path = root.join(".gitignore");
    let text = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(source) => {
            return Err(Error::Read {
                path: ".gitignore".to_string(),
                source,
            });
        }
    };
    let present: Vec<String> = String::from_utf8_lossy(&text)
        .lines()
        .map(|l| l.trim().to_string())
        .collect();
    let missing: Vec<String> = templates::RUNTIME_STATE
        .iter()
        .filter(|line| {
            !present
                .iter()
                .any(|p| p == *line || p == line.trim_start_matches('/'))
        })
        .filter(|line| {
            // A file inside the folder: a folder's own ignore file (speed
            // writes `*` into each) ignores its contents, not itself.
            let inside = format!("{}speed-probe", line.trim_start_matches('/'));
            !repo.is_ignored(&inside)
        })
        .map(|l| l.to_string())
        .collect();
    if missing.is_empty() {
        return Ok(Outcome::Unchanged);
    }
    let mut new = text.clone();
    if !new.is_empty() {
        if !new.ends_with(b"\n") {
            new.push(b'\n');
        }
        new.push(b'\n');
    }
    new.extend_from_slice(templates::GITIGNORE_HEADER.as_bytes());
    new.push(b'\n');
    for line in &missing {
        new.extend_from_slice(line.as_bytes());
        new.push(b'\n');
    }
    fsx::write_atomic(root, Path::new(".gitignore"), &new).map_err(|source| Error::Write {
        path: ".gitignore".to_string(),
        source,
    })?;
    Ok(Outcome::Appended(missing))
}

/// Which provider a report names, for people: "anthropic (ANTHROPIC_API_KEY)".
pub fn describe(provider: &Provider) -> String {
    match provider {
        Provider::Anthropic { key_env } => format!("anthropic, with the key in {key_env}"),
        Provider::OpenAi { key_env } => format!("openai, with the key in {key_env}"),
        Provider::Local { server, model, .. } => {
            format!("{} at {}, model {model}", server.name, server.base_url)
        }
        Provider::Claude { program } => format!("the command `claude -p` ({})", program.display()),
        Provider::None => "none: reviews are offline until a model is configured".to_string(),
    }
}
