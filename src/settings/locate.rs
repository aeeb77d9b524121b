//! Where the configuration and the prompt templates that decide a review come
//! from, so that a branch under review cannot configure its own reviewer.
//!
//! The rule (docs/configuration.md, "Where it is read", says the same):
//!
//! - With `--config FILE`, that file is the configuration. The main branch
//!   is `--base`, else that file's `git.main_branch`, else `MAIN_BRANCH`,
//!   else git's default (origin/HEAD, `main`, `master`).
//! - Otherwise the main branch is found first, without the working tree's
//!   say: `--base`, else `MAIN_BRANCH`, else git's default; only when git has
//!   no default does the working tree's `git.main_branch` name it. Then
//!   `.speed/config.toml` is read at that branch's commit. If that file
//!   names another `git.main_branch` (and `--base` did not decide), that
//!   branch is the main branch and its committed file is the configuration;
//!   a second redirection is an error.
//! - "Read at the branch's commit" means the working tree's file instead
//!   when HEAD is that branch: on main, the checkout is main's configuration.
//! - `.speed/prompts/review.md` and `guardian.md` follow the same rule as the
//!   config file (main's commit, or the working tree when HEAD is main);
//!   `--config` does not change them.
//!
//! Whenever the working tree's copy differs from the one used, or an
//! uncommitted copy is used, a notice says so.

use crate::git::short;
use crate::prompt::{Override, TEMPLATE_NAMES};
use std::path::{Path, PathBuf};

use super::file::{self, File};
use super::{CONFIG_PATH, Error, PROMPTS_DIR, Source};
use crate::git::{self, MainBranch};

/// What settings need from the repository; `git::Repository` is one, tests
/// use a fake.
pub trait Repo {
    /// The worktree whose working copy of the configuration counts: the
    /// one holding speed's state (the main worktree, from a linked one).
    fn root(&self) -> &Path;
    /// The branch that worktree has checked out, if any.
    fn head_branch(&self) -> Option<String>;
    /// See `git::Repository::resolve_main`.
    fn resolve_main(&self, explicit: Option<&str>) -> Result<MainBranch, git::Error>;
    /// A file's bytes at a commit; None when it has no such file.
    fn read_file(&self, commit: &str, path: &str) -> Result<Option<Vec<u8>>, git::Error>;
}

impl Repo for git::Repository {
    fn root(&self) -> &Path {
        self.state_root()
    }
    fn head_branch(&self) -> Option<String> {
        self.state_branch()
    }
    fn resolve_main(&self, explicit: Option<&str>) -> Result<MainBranch, git::Error> {
        git::Repository::resolve_main(self, explicit)
    }
    fn read_file(&self, commit: &str, path: &str) -> Result<Option<Vec<u8>>, git::Error> {
        git::Repository::read_file(self, commit, path)
    }
}

/// Where a config file (or a template) was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// Committed on the main branch.
    Main { branch: String, commit: String },
    /// The working tree's copy, because HEAD is the main branch.
    WorkingTree,
    /// Named with `--config`.
    Flag(PathBuf),
}

impl Origin {
    /// `main`, `working_tree` or `config_file`, for JSON.
    pub fn kind(&self) -> &'static str {
        match self {
            Origin::Main { .. } => "main",
            Origin::WorkingTree => "working_tree",
            Origin::Flag(_) => "config_file",
        }
    }

    /// How to name the file `path` read from here.
    pub fn describe(&self, path: &str) -> String {
        match self {
            Origin::Main { branch, commit } => format!("{path} at {branch} ({})", short(commit)),
            Origin::WorkingTree => format!("{path} in the working tree"),
            Origin::Flag(file) => format!("{} (--config)", file.display()),
        }
    }
}

/// The main branch and what named it.
#[derive(Debug, Clone)]
pub struct MainFound {
    pub branch: MainBranch,
    pub source: Source,
}

/// The outcome of locating: the configuration (parsed), the main branch, the
/// template overrides and what the user should be told.
#[derive(Debug)]
pub struct Located {
    /// The parsed file and where it was read; None when there is none.
    pub config: Option<(File, Origin)>,
    /// Where the configuration would be read, even when there is no file
    /// (None outside a repository or without a main branch).
    pub origin: Option<Origin>,
    pub main: Result<MainFound, Error>,
    pub templates: Vec<Override>,
    /// For stderr only.
    pub notices: Vec<String>,
    /// For stderr and every report: a working-tree copy was not used, or a
    /// file other than main's decided the review.
    pub report_notices: Vec<String>,
}

/// Where speed looks, given the repository (or why there is none),
/// `--config` (already made absolute), `--base` and the environment.
pub fn locate(
    repo: Result<&dyn Repo, &str>,
    config_flag: Option<&Path>,
    base_flag: Option<&str>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Located, Error> {
    let env_main = env("MAIN_BRANCH").filter(|v| !v.trim().is_empty());
    let mut located = Located {
        config: None,
        origin: None,
        main: Err(Error::NoRepository(
            repo.err().unwrap_or_default().to_string(),
        )),
        templates: Vec::new(),
        notices: Vec::new(),
        report_notices: Vec::new(),
    };

    if let Some(path) = config_flag {
        let origin = Origin::Flag(path.to_path_buf());
        let text = std::fs::read(path).map_err(|source| Error::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let parsed = parse(&text, &origin)?;
        if let Ok(repo) = repo {
            let named = parsed.git.main_branch.clone();
            let (name, source) = match (base_flag, named, env_main) {
                (Some(base), _, _) => (Some(base.to_string()), Source::Flag("--base")),
                (None, Some(name), _) => (Some(name), Source::File(origin.clone())),
                (None, None, Some(name)) => (Some(name), Source::Env("MAIN_BRANCH")),
                (None, None, None) => (None, Source::Default),
            };
            located.main = repo
                .resolve_main(name.as_deref())
                .map(|branch| MainFound { branch, source })
                .map_err(Error::Git);
            if let Ok(main) = located.main.as_ref().map(|m| m.branch.clone()) {
                located.report_notices.push(format!(
                    "The configuration was read from {} (--config), not from {CONFIG_PATH} on {}.",
                    path.display(),
                    main.name
                ));
                located.templates = templates(repo, &main, &mut located)?;
            }
        }
        located.origin = Some(origin.clone());
        located.config = Some((parsed, origin));
        return Ok(located);
    }

    let Ok(repo) = repo else {
        return Ok(located);
    };
    let worktree = read_worktree(repo, CONFIG_PATH)?;

    // The main branch, found without the working tree's say when git can.
    let start = match (base_flag, env_main) {
        (Some(base), _) => repo
            .resolve_main(Some(base))
            .map(|b| (b, Source::Flag("--base"))),
        (None, Some(name)) => repo
            .resolve_main(Some(&name))
            .map(|b| (b, Source::Env("MAIN_BRANCH"))),
        (None, None) => match repo.resolve_main(None) {
            Ok(branch) => Ok((branch, Source::Default)),
            Err(no_default) => {
                let named = match &worktree {
                    Some(bytes) => parse(bytes, &Origin::WorkingTree)?.git.main_branch,
                    None => None,
                };
                match named {
                    Some(name) => {
                        located.notices.push(format!(
                            "The main branch `{name}` was named by git.main_branch in the working tree's {CONFIG_PATH}: git has no default ({no_default})."
                        ));
                        repo.resolve_main(Some(&name))
                            .map(|b| (b, Source::File(Origin::WorkingTree)))
                    }
                    None => Err(no_default),
                }
            }
        },
    };
    let (mut main, mut source) = match start {
        Ok(found) => found,
        Err(err) => {
            if worktree.is_some() {
                located.notices.push(format!(
                    "The working tree's {CONFIG_PATH} was not read: there is no main branch to read the configuration from."
                ));
            }
            located.main = Err(Error::Git(err));
            return Ok(located);
        }
    };

    let mut at = config_for(repo, &main, worktree.as_deref())?;
    if source == Source::Default {
        if let Some(named) =
            configured_over_guess(repo, &main, &at, worktree.as_deref(), &mut located)?
        {
            main = named;
            source = Source::File(Origin::WorkingTree);
            at = config_for(repo, &main, worktree.as_deref())?;
        }
    }
    let redirect = at.file.as_ref().and_then(|f| f.git.main_branch.clone());
    if let Some(named) = redirect.filter(|n| *n != main.name && base_flag.is_none()) {
        let from = at.origin.clone();
        main = repo
            .resolve_main(Some(&named))
            .map_err(|err| Error::MainRedirect {
                file: from.describe(CONFIG_PATH),
                named: named.clone(),
                message: err.to_string(),
            })?;
        source = Source::File(from.clone());
        at = config_for(repo, &main, worktree.as_deref())?;
        if let Some(again) = at.file.as_ref().and_then(|f| f.git.main_branch.clone()) {
            if again != main.name {
                return Err(Error::MainRedirect {
                    file: at.origin.describe(CONFIG_PATH),
                    named: again,
                    message: format!(
                        "{} named `{named}` as the main branch, whose own configuration names another; make them agree or pass --base",
                        from.describe(CONFIG_PATH)
                    ),
                });
            }
        }
    }
    located.notices.extend(at.notice);
    located.report_notices.extend(at.report_notice);
    located.templates = templates(repo, &main, &mut located)?;
    located.origin = Some(at.origin.clone());
    located.config = at.file.map(|f| (f, at.origin));
    located.main = Ok(MainFound {
        branch: main,
        source,
    });
    Ok(located)
}

/// When git's default only guessed the main branch (no origin/HEAD: `main`,
/// else `master`) and the configuration on the guess names none, the main
/// branch the working tree's configuration names wins over the guess if
/// HEAD is that branch and speed was never configured on the guess (a
/// stale `master` beside the real `trunk`); a notice in every report names
/// the guess. Otherwise the guess stands and a notice says how to name the
/// configured one: a branch under review cannot make itself the main
/// branch from its own checkout.
fn configured_over_guess(
    repo: &dyn Repo,
    guess: &MainBranch,
    at: &ConfigAt,
    worktree: Option<&[u8]>,
    located: &mut Located,
) -> Result<Option<MainBranch>, Error> {
    if at
        .file
        .as_ref()
        .is_some_and(|f| f.git.main_branch.is_some())
    {
        return Ok(None);
    }
    // A working tree's copy that does not parse names nothing here: on a
    // task branch it is not the configuration, and on the guess it is
    // read (and its error said) as the guess's.
    let named = worktree
        .and_then(|bytes| parse(bytes, &Origin::WorkingTree).ok())
        .and_then(|file| file.git.main_branch);
    let Some(named) = named.filter(|n| *n != guess.name) else {
        return Ok(None);
    };
    let guessed = format!(
        "`{}` ({}), git's default guess (origin/HEAD, else main, else master)",
        guess.name,
        short(&guess.commit)
    );
    let on_named = repo.head_branch().as_deref() == Some(named.as_str());
    let unconfigured = repo.read_file(&guess.commit, CONFIG_PATH)?.is_none();
    if on_named && unconfigured {
        if let Ok(branch) = repo.resolve_main(Some(&named)) {
            located.report_notices.push(format!(
                "The main branch is `{named}`, as git.main_branch in the working tree's {CONFIG_PATH} says (HEAD is {named}); not {guessed}, which holds no speed configuration."
            ));
            return Ok(Some(branch));
        }
    }
    let why = if on_named {
        format!("{} holds a {CONFIG_PATH} of its own", guess.name)
    } else {
        format!("HEAD is not {named}, and a branch's own checkout cannot name the main branch")
    };
    located.report_notices.push(format!(
        "The working tree's {CONFIG_PATH} names `{named}` as the main branch, but the main branch is {guessed}: {why}. If `{named}` is the main branch, pass --base {named} (or set MAIN_BRANCH={named}), or commit git.main_branch on {}.",
        guess.name
    ));
    Ok(None)
}

/// The config file that holds for `main`, with what to say about the
/// working tree's copy.
struct ConfigAt {
    file: Option<File>,
    origin: Origin,
    notice: Option<String>,
    report_notice: Option<String>,
}

fn config_for(
    repo: &dyn Repo,
    main: &MainBranch,
    worktree: Option<&[u8]>,
) -> Result<ConfigAt, Error> {
    let chosen = choose(repo, main, CONFIG_PATH, worktree)?;
    let file = match &chosen.bytes {
        Some(bytes) => Some(parse(bytes, &chosen.origin)?),
        None => None,
    };
    Ok(ConfigAt {
        file,
        origin: chosen.origin,
        notice: chosen.notice,
        report_notice: chosen.report_notice,
    })
}

/// One file chosen between main's commit and the working tree.
struct Chosen {
    bytes: Option<Vec<u8>>,
    origin: Origin,
    notice: Option<String>,
    report_notice: Option<String>,
}

fn choose(
    repo: &dyn Repo,
    main: &MainBranch,
    path: &str,
    worktree: Option<&[u8]>,
) -> Result<Chosen, Error> {
    let committed = repo.read_file(&main.commit, path)?;
    let at_main = format!("{} ({})", main.name, short(&main.commit));
    if repo.head_branch().as_deref() == Some(main.name.as_str()) {
        let notice = (committed.as_deref() != worktree).then(|| {
            let state = match (&committed, worktree) {
                (None, _) => "is not committed on",
                (Some(_), None) => "is deleted in the working tree but committed on",
                (Some(_), Some(_)) => "has uncommitted changes on",
            };
            format!(
                "{path} {state} {at_main}: the working tree's copy is used, since HEAD is {}.",
                main.name
            )
        });
        return Ok(Chosen {
            bytes: worktree.map(<[u8]>::to_vec),
            origin: Origin::WorkingTree,
            notice,
            report_notice: None,
        });
    }
    let report_notice = match (worktree, &committed) {
        (Some(tree), Some(main_copy)) if tree != main_copy.as_slice() => Some(format!(
            "{path} in the working tree differs from the one on {at_main}: {}'s is used, so a branch cannot configure its own review.",
            main.name
        )),
        (Some(_), None) => Some(format!(
            "{path} in the working tree is not on {at_main}: it is not used, so a branch cannot configure its own review."
        )),
        _ => None,
    };
    Ok(Chosen {
        bytes: committed,
        origin: Origin::Main {
            branch: main.name.clone(),
            commit: main.commit.clone(),
        },
        notice: None,
        report_notice,
    })
}

/// The prompt templates that replace built-in ones, each chosen like the
/// config file.
fn templates(
    repo: &dyn Repo,
    main: &MainBranch,
    located: &mut Located,
) -> Result<Vec<Override>, Error> {
    let mut out = Vec::new();
    for name in TEMPLATE_NAMES {
        let path = format!("{PROMPTS_DIR}/{name}");
        let worktree = read_worktree(repo, &path)?;
        let chosen = choose(repo, main, &path, worktree.as_deref())?;
        located.notices.extend(chosen.notice);
        located.report_notices.extend(chosen.report_notice);
        if let Some(bytes) = chosen.bytes {
            let from = chosen.origin.describe(&path);
            let text =
                String::from_utf8(bytes).map_err(|_| Error::NotUtf8 { file: from.clone() })?;
            out.push(Override {
                name: name.to_string(),
                from,
                text,
            });
        }
    }
    Ok(out)
}

fn read_worktree(repo: &dyn Repo, path: &str) -> Result<Option<Vec<u8>>, Error> {
    let full = repo.root().join(path);
    match std::fs::read(&full) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(Error::Read { path: full, source }),
    }
}

fn parse(bytes: &[u8], origin: &Origin) -> Result<File, Error> {
    let name = origin.describe(CONFIG_PATH);
    let text = std::str::from_utf8(bytes).map_err(|_| Error::NotUtf8 { file: name.clone() })?;
    // A BOM is invisible in editors; TOML does not allow it.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    Ok(file::parse(text, &name)?)
}
