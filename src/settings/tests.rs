//! Settings resolution against a fake repository: which config file and
//! templates decide, precedence, sources, and paths.

use std::collections::HashMap;

use clap::Parser;

use super::*;
use crate::checks::{self, Check, CommandCheck};
use crate::defects;

/// Branches, committed files and a real working-tree directory.
struct Fake {
    dir: tempfile::TempDir,
    head: Option<String>,
    branches: HashMap<String, String>,
    files: HashMap<(String, String), Vec<u8>>,
}

impl Fake {
    /// `main` at commit "c-main" and `task` at "c-task", HEAD on `head`.
    fn new(head: &str) -> Fake {
        let mut f = Fake {
            dir: tempfile::tempdir().unwrap(),
            head: Some(head.to_string()),
            branches: HashMap::new(),
            files: HashMap::new(),
        };
        f.branch("main");
        f.branch("task");
        f
    }

    fn branch(&mut self, name: &str) {
        self.branches.insert(name.to_string(), format!("c-{name}"));
    }

    fn commit(&mut self, branch: &str, path: &str, text: &str) {
        self.files.insert(
            (format!("c-{branch}"), path.to_string()),
            text.as_bytes().to_vec(),
        );
    }

    fn tree(&self, path: &str, text: &str) {
        let full = self.dir.path().join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, text).unwrap();
    }
}

impl Repo for Fake {
    fn root(&self) -> &Path {
        self.dir.path()
    }
    fn head_branch(&self) -> Option<String> {
        self.head.clone()
    }
    fn resolve_main(&self, explicit: Option<&str>) -> Result<MainBranch, git::Error> {
        let found = |name: &str| {
            self.branches.get(name).map(|commit| MainBranch {
                name: name.to_string(),
                commit: commit.clone(),
            })
        };
        match explicit {
            Some(name) => found(name).ok_or_else(|| git::Error::BranchNotFound {
                hint: String::new(),
                branch: name.to_string(),
            }),
            None => {
                found("main")
                    .or_else(|| found("master"))
                    .ok_or_else(|| git::Error::NoMainBranch {
                        shallow: false,
                        tried: "no branch `main`, no branch `master`".to_string(),
                    })
            }
        }
    }
    fn read_file(&self, commit: &str, path: &str) -> Result<Option<Vec<u8>>, git::Error> {
        Ok(self
            .files
            .get(&(commit.to_string(), path.to_string()))
            .cloned())
    }
}

fn resolve(repo: &Fake, args: &[&str], env: &[(&str, &str)]) -> Result<Settings, Error> {
    resolve_in(repo, repo.root().to_path_buf(), args, env)
}

fn resolve_in(
    repo: &Fake,
    dir: PathBuf,
    args: &[&str],
    env: &[(&str, &str)],
) -> Result<Settings, Error> {
    let mut argv = vec!["speed"];
    argv.extend(args);
    let cli = Cli::try_parse_from(argv).unwrap();
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Settings::resolve(cli, dir, Ok(repo), &move |key| {
        env.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone())
    })
}

fn review(settings: Settings) -> ReviewSettings {
    match settings.command {
        CommandSettings::Review(r) => *r,
        other => panic!("expected review settings, got {other:?}"),
    }
}

fn shown(settings: Settings) -> ConfigSettings {
    match settings.command {
        CommandSettings::Config(c) => *c,
        other => panic!("expected config settings, got {other:?}"),
    }
}

fn entry<'a>(config: &'a ConfigSettings, key: &str) -> &'a Entry {
    config
        .entries
        .iter()
        .find(|e| e.key == key)
        .unwrap_or_else(|| panic!("no entry {key}"))
}

const MAIN_CONFIG: &str = "[llm]\nprovider = \"anthropic\"\nmodel = \"main-model\"\n";
const BRANCH_CONFIG: &str = "[llm]\nprovider = \"command\"\ncommand = [\"sh\", \"-c\", \"evil\"]\n[guardian]\nenabled = false\n";

#[test]
fn defaults_without_config() {
    let repo = Fake::new("main");
    let r = review(resolve(&repo, &["review"], &[]).unwrap());
    assert_eq!(r.review.budget, DEFAULT_BUDGET);
    assert_eq!(r.review.concurrency, DEFAULT_CONCURRENCY);
    assert_eq!(r.review.max_revisions, 2);
    assert_eq!(r.review.max_parts, 4);
    assert_eq!(r.review.actor, None, "the git user");
    // No provider, base URL, model or command: an offline review.
    assert_eq!(r.review.llm.provider, Choice::Offline);
    assert!(r.review.llm.offline_note.is_some());
    assert_eq!(r.review.llm.max_answer_bytes, DEFAULT_MAX_ANSWER_BYTES);
    assert!(r.review.guardian.enabled);
    assert_eq!(r.review.guardian.vision_file, DEFAULT_VISION_FILE);
    assert_eq!(r.review.main.name, "main");
    assert_eq!(r.review.checks, checks::Config::default());
    assert_eq!(r.review.defect, defects::Limits::default());
    assert_eq!(r.hook, hook::Policy::default());
    assert!(r.review.prompts.is_empty() && r.review.report_notices.is_empty());
}

#[test]
fn a_branch_checkout_uses_mains_config_and_says_so() {
    let mut repo = Fake::new("task");
    repo.commit("main", CONFIG_PATH, MAIN_CONFIG);
    repo.tree(CONFIG_PATH, BRANCH_CONFIG);
    let s = resolve(&repo, &["review"], &[]).unwrap();
    let notices = s.notices.clone();
    let r = review(s);
    assert_eq!(
        r.review.llm.provider,
        Choice::Model(ProviderKind::Anthropic)
    );
    assert_eq!(r.review.llm.model.as_deref(), Some("main-model"));
    assert!(r.review.llm.command.is_empty());
    assert!(r.review.guardian.enabled);
    assert_eq!(
        r.review.report_notices.len(),
        1,
        "{:?}",
        r.review.report_notices
    );
    assert!(
        r.review.report_notices[0].contains("differs from the one on main (c-main)")
            && r.review.report_notices[0].contains("cannot configure its own review"),
        "{:?}",
        r.review.report_notices
    );
    assert_eq!(notices, r.review.report_notices);

    // Nothing committed on main: the branch's file is still not used.
    let repo = Fake::new("task");
    repo.tree(CONFIG_PATH, BRANCH_CONFIG);
    let r = review(resolve(&repo, &["review"], &[]).unwrap());
    assert_eq!(r.review.llm.provider, Choice::Offline);
    assert!(
        r.review.report_notices[0].contains("is not on main"),
        "{:?}",
        r.review.report_notices
    );
}

#[test]
fn a_broken_config_on_a_branch_does_not_matter() {
    let repo = Fake::new("task");
    repo.tree(CONFIG_PATH, "[llm\nnot toml");
    assert!(resolve(&repo, &["review"], &[]).is_ok());
}

#[test]
fn on_main_the_working_tree_is_used_and_uncommitted_changes_are_noted() {
    let mut repo = Fake::new("main");
    repo.commit("main", CONFIG_PATH, MAIN_CONFIG);
    repo.tree(
        CONFIG_PATH,
        "[llm]\nprovider = \"openai\"\nmodel = \"local\"\n",
    );
    let s = resolve(&repo, &["review"], &[]).unwrap();
    assert_eq!(s.notices.len(), 1);
    assert!(
        s.notices[0].contains("has uncommitted changes on main")
            && s.notices[0].contains("since HEAD is main"),
        "{:?}",
        s.notices
    );
    let r = review(s);
    assert_eq!(r.review.llm.model.as_deref(), Some("local"));
    // Said on stderr; reports only carry what a branch could not do.
    assert!(r.review.report_notices.is_empty());

    // Identical copies: nothing to say.
    let mut repo = Fake::new("main");
    repo.commit("main", CONFIG_PATH, MAIN_CONFIG);
    repo.tree(CONFIG_PATH, MAIN_CONFIG);
    assert!(resolve(&repo, &["review"], &[]).unwrap().notices.is_empty());
}

#[test]
fn config_flag_names_the_file_relative_to_the_run_directory() {
    let mut repo = Fake::new("task");
    repo.branch("trunk");
    repo.commit("main", CONFIG_PATH, MAIN_CONFIG);
    repo.tree(
        "sub/mine.toml",
        "[git]\nmain_branch = \"trunk\"\n[llm]\nmodel = \"mine\"\n",
    );
    let dir = repo.root().join("sub");
    let s = resolve_in(&repo, dir, &["review", "--config", "mine.toml"], &[]).unwrap();
    let r = review(s);
    assert_eq!(r.review.llm.model.as_deref(), Some("mine"));
    assert_eq!(r.review.llm.provider, DEFAULT_PROVIDER);
    assert_eq!(r.review.main.name, "trunk");
    assert!(
        r.review.report_notices[0].contains("mine.toml (--config)"),
        "{:?}",
        r.review.report_notices
    );

    let err = resolve(&repo, &["review", "--config", "absent.toml"], &[]).unwrap_err();
    assert!(err.to_string().contains("absent.toml"), "{err}");
}

#[test]
fn the_main_branch_precedence() {
    let mut repo = Fake::new("main");
    repo.branch("dev");
    repo.branch("trunk");
    // --base wins over everything, and its config is not redirected.
    repo.commit("dev", CONFIG_PATH, "[git]\nmain_branch = \"trunk\"\n");
    let r = review(
        resolve(
            &repo,
            &["review", "--base", "dev"],
            &[("MAIN_BRANCH", "main")],
        )
        .unwrap(),
    );
    assert_eq!(r.review.main.name, "dev");
    // MAIN_BRANCH picks the start, and the config committed there wins.
    let r = review(resolve(&repo, &["review"], &[("MAIN_BRANCH", "dev")]).unwrap());
    assert_eq!(r.review.main.name, "trunk");
    // An empty MAIN_BRANCH is no MAIN_BRANCH.
    let r = review(resolve(&repo, &["review"], &[("MAIN_BRANCH", " ")]).unwrap());
    assert_eq!(r.review.main.name, "main");
}

#[test]
fn mains_config_may_name_the_real_main_once() {
    let mut repo = Fake::new("task");
    repo.branch("trunk");
    repo.commit("main", CONFIG_PATH, "[git]\nmain_branch = \"trunk\"\n");
    repo.commit(
        "trunk",
        CONFIG_PATH,
        "[git]\nmain_branch = \"trunk\"\n[llm]\nmodel = \"t\"\n",
    );
    let s = resolve(&repo, &["config"], &[]).unwrap();
    let c = shown(s);
    let main = entry(&c, "git.main_branch");
    assert_eq!(main.value, "trunk");
    assert_eq!(
        main.source.describe(),
        ".speed/config.toml at main (c-main)"
    );
    assert_eq!(
        entry(&c, "llm.model").source.describe(),
        ".speed/config.toml at trunk (c-trunk)"
    );

    // A second redirection is an error naming both files.
    repo.commit("trunk", CONFIG_PATH, "[git]\nmain_branch = \"main\"\n");
    let err = resolve(&repo, &["review"], &[]).unwrap_err().to_string();
    assert!(
        err.contains("at trunk (c-trunk)") && err.contains("at main (c-main)"),
        "{err}"
    );
    // The branch's working tree cannot redirect main.
    let mut repo = Fake::new("task");
    repo.branch("evil");
    repo.commit("evil", CONFIG_PATH, BRANCH_CONFIG);
    repo.tree(CONFIG_PATH, "[git]\nmain_branch = \"evil\"\n");
    let r = review(resolve(&repo, &["review"], &[]).unwrap());
    assert_eq!(r.review.main.name, "main");
}

#[test]
fn without_a_git_default_the_working_tree_names_main() {
    let mut repo = Fake::new("feature");
    repo.branches.clear();
    repo.branch("trunk");
    repo.commit(
        "trunk",
        CONFIG_PATH,
        "[git]\nmain_branch = \"trunk\"\n[review]\nmax_parts = 2\n",
    );
    repo.tree(CONFIG_PATH, "[git]\nmain_branch = \"trunk\"\n");
    let s = resolve(&repo, &["review"], &[]).unwrap();
    assert!(
        s.notices[0].contains("named by git.main_branch in the working tree"),
        "{:?}",
        s.notices
    );
    let r = review(s);
    assert_eq!(
        (r.review.main.name.as_str(), r.review.max_parts),
        ("trunk", 2)
    );

    let mut repo = Fake::new("feature");
    repo.branches.clear();
    let err = resolve(&repo, &["review"], &[]).unwrap_err().to_string();
    assert!(err.contains("no branch `main`"), "{err}");
    // `speed config` still shows what it can.
    let c = shown(resolve(&repo, &["config"], &[]).unwrap());
    assert!(c.main.is_err());
    assert!(c.origin.is_none());
    assert_eq!(entry(&c, "review.token_budget").value, 60000);
}

#[test]
fn invalid_config_on_main_names_where_it_was_read() {
    let mut repo = Fake::new("task");
    repo.commit("main", CONFIG_PATH, "[llm]\ntimeout_secs = 1e20\n");
    let err = resolve(&repo, &["review"], &[]).unwrap_err().to_string();
    assert!(
        err.starts_with(".speed/config.toml at main (c-main): line 2: llm.timeout_secs: expected"),
        "{err}"
    );
    let mut repo = Fake::new("task");
    repo.commit("main", CONFIG_PATH, "\u{feff}[llm]\nmodel = \"m\"\n");
    let r = review(resolve(&repo, &["review"], &[]).unwrap());
    assert_eq!(r.review.llm.model.as_deref(), Some("m"));
    let mut repo = Fake::new("task");
    repo.files.insert(
        ("c-main".to_string(), CONFIG_PATH.to_string()),
        vec![0xff, 0xfe, b'x'],
    );
    let err = resolve(&repo, &["review"], &[]).unwrap_err().to_string();
    assert!(err.contains("not UTF-8"), "{err}");
}

#[test]
fn prompt_overrides_follow_the_config_rule() {
    let review_md = ".speed/prompts/review.md";
    let mut repo = Fake::new("task");
    repo.tree(review_md, "branch prompt");
    repo.commit("main", ".speed/prompts/guardian.md", "main guardian");
    let r = review(resolve(&repo, &["review"], &[]).unwrap());
    assert_eq!(r.review.prompts.len(), 1);
    assert_eq!(r.review.prompts[0].name, "guardian.md");
    assert_eq!(r.review.prompts[0].text, "main guardian");
    assert_eq!(
        r.review.prompts[0].from,
        ".speed/prompts/guardian.md at main (c-main)"
    );
    assert!(
        r.review.report_notices[0]
            .contains(".speed/prompts/review.md in the working tree is not on main"),
        "{:?}",
        r.review.report_notices
    );

    // On main the working tree's template is used.
    let repo = Fake::new("main");
    repo.tree(review_md, "tree prompt");
    let s = resolve(&repo, &["review"], &[]).unwrap();
    assert!(
        s.notices[0].contains("review.md is not committed on main"),
        "{:?}",
        s.notices
    );
    let r = review(s);
    assert_eq!(r.review.prompts[0].text, "tree prompt");
    assert_eq!(
        r.review.prompts[0].from,
        ".speed/prompts/review.md in the working tree"
    );
}

#[test]
fn flags_win_over_environment_and_file() {
    let mut repo = Fake::new("main");
    repo.branch("dev");
    repo.tree(
        CONFIG_PATH,
        "[llm]\nprovider = \"anthropic\"\nmodel = \"file-model\"\n[review]\ntoken_budget = 9000\nconcurrency = 2\n",
    );
    let r = review(
        resolve(
            &repo,
            &[
                "review",
                "--base",
                "dev",
                "--provider",
                "openai",
                "--model",
                "m",
                "--budget",
                "5000",
                "--concurrency",
                "8",
            ],
            &[("MAIN_BRANCH", "env-main")],
        )
        .unwrap(),
    );
    assert_eq!(r.review.main.name, "dev");
    assert_eq!(r.review.llm.provider, Choice::Model(ProviderKind::OpenAi));
    assert_eq!(r.review.llm.model.as_deref(), Some("m"));
    assert_eq!((r.review.budget, r.review.concurrency), (5000, 8));
    assert_eq!(
        r.review.guardian.budget, 5000,
        "the guardian's budget follows the review's"
    );
}

#[test]
fn every_section_reaches_the_review_settings() {
    let repo = Fake::new("main");
    repo.tree(
        CONFIG_PATH,
        r#"
[llm]
provider = "none"
timeout_secs = 0.5
max_answer_bytes = 2048
[review]
max_parts = 2
actor = "ci-bot"
[checks]
scope = "minor"
secret = "off"
large_diff = { lines = 50, severity = "major" }
[[checks.command]]
name = "test"
run = ["cargo", "test"]
[defect]
max_files = 5
exempt = ["docs/**"]
[hook]
review_on_miss = true
unknown = "block"
on_error = "allow"
local_timeout_secs = 30
"#,
    );
    let r = review(resolve(&repo, &["review"], &[]).unwrap());
    assert_eq!(r.review.llm.provider, Choice::Offline);
    assert_eq!(r.review.llm.timeout, Duration::from_millis(500));
    assert_eq!(r.review.llm.max_answer_bytes, 2048);
    assert_eq!(
        (r.review.max_parts, r.review.actor.as_deref()),
        (2, Some("ci-bot"))
    );
    use crate::severity::Severity;
    assert_eq!(
        r.review.checks.severity(Check::Scope),
        Some(Severity::Minor)
    );
    assert_eq!(r.review.checks.severity(Check::Secret), None);
    assert_eq!(
        r.review.checks.severity(Check::LargeDiff),
        Some(Severity::Major)
    );
    assert_eq!(
        r.review.checks.severity(Check::EmptyDiff),
        Some(Severity::Critical)
    );
    assert_eq!(
        (
            r.review.checks.large_diff_lines,
            r.review.checks.large_diff_files
        ),
        (50, 20)
    );
    assert_eq!(
        r.review.checks.commands,
        [CommandCheck {
            name: "test".to_string(),
            run: vec!["cargo".to_string(), "test".to_string()],
            severity: Severity::Major,
            timeout: Duration::from_secs(600),
            tool: crate::checks::Tool::default(),
        }]
    );
    assert_eq!(
        (r.review.defect.max_lines, r.review.defect.max_files),
        (100, 5)
    );
    assert_eq!(r.review.defect.exempt, ["docs/**"]);
    assert_eq!(
        r.hook,
        hook::Policy {
            review_on_miss: true,
            unknown: hook::AllowOrBlock::Block,
            on_error: hook::AllowOrBlock::Allow,
            // A review on a miss gets the longer default.
            timeout: Duration::from_secs(900),
            local_timeout: Duration::from_secs(30),
        }
    );
}

#[test]
fn guardian_skips_are_recorded_with_their_reason() {
    let repo = Fake::new("main");
    let s = resolve(&repo, &["review"], &[("SKIP_GUARDIAN", "true")]).unwrap();
    assert_eq!(
        review(s).review.guardian.skip_reason.as_deref(),
        Some("SKIP_GUARDIAN=true")
    );
    let r = review(resolve(&repo, &["review", "--no-guardian"], &[]).unwrap());
    assert_eq!(
        r.review.guardian.skip_reason.as_deref(),
        Some("--no-guardian")
    );
    let s = resolve(&repo, &["review"], &[("SKIP_GUARDIAN", "perhaps")]).unwrap();
    assert!(s.warnings[0].contains("SKIP_GUARDIAN"), "{:?}", s.warnings);
    assert!(review(s).review.guardian.enabled);
    repo.tree(CONFIG_PATH, "[guardian]\nenabled = false\n");
    let r = review(resolve(&repo, &["review"], &[]).unwrap());
    assert!(!r.review.guardian.enabled);
    assert_eq!(
        r.review.guardian.skip_reason.as_deref(),
        Some("guardian.enabled = false")
    );
}

#[test]
fn config_entries_name_their_sources() {
    let mut repo = Fake::new("task");
    repo.commit("main", CONFIG_PATH, MAIN_CONFIG);
    let c = shown(
        resolve(
            &repo,
            &["config", "--budget", "7000"],
            &[("SKIP_GUARDIAN", "1"), ("MAIN_BRANCH", "main")],
        )
        .unwrap(),
    );
    let at_main = Source::File(Origin::Main {
        branch: "main".to_string(),
        commit: "c-main".to_string(),
    });
    assert_eq!(
        entry(&c, "git.main_branch").source,
        Source::Env("MAIN_BRANCH")
    );
    assert_eq!(entry(&c, "llm.provider").source, at_main);
    assert_eq!(entry(&c, "llm.provider").value, "anthropic");
    assert_eq!(
        entry(&c, "review.token_budget").source,
        Source::Flag("--budget")
    );
    assert_eq!(
        entry(&c, "guardian.enabled").source,
        Source::Env("SKIP_GUARDIAN")
    );
    assert_eq!(entry(&c, "guardian.enabled").value, false);
    assert_eq!(entry(&c, "llm.timeout_secs").source, Source::Default);
    assert_eq!(entry(&c, "llm.base_url").value, serde_json::Value::Null);
    assert_eq!(entry(&c, "checks.secret").value, "critical");
    assert_eq!(entry(&c, "hook.on_error").value, "block");
    // Every key the file may hold is shown (tables with keys of their own).
    for (table, keys) in file::KEYS {
        for key in *keys {
            let full = format!("{table}.{key}");
            if full != "checks.large_diff" {
                entry(&c, &full);
            }
        }
    }
}

#[test]
fn spec_paths_are_taken_from_the_run_directory_else_the_root() {
    let mut repo = Fake::new("main");
    repo.commit("main", "specs/app.md", "# App\n");
    repo.tree("sub/local.md", "# Local\n");
    let root = repo.root().to_path_buf();
    let sub = root.join("sub");
    let exists = |p: &str| repo.read_file("c-main", p).unwrap().is_some() || root.join(p).is_file();
    assert_eq!(
        spec_arg("specs/app.md", &root, &root, &exists),
        "specs/app.md"
    );
    assert_eq!(
        spec_arg("./specs/app.md#Search", &root, &root, &exists),
        "specs/app.md#Search"
    );
    assert_eq!(
        spec_arg("local.md#A", &sub, &root, &exists),
        "sub/local.md#A"
    );
    assert_eq!(
        spec_arg("../specs/app.md", &sub, &root, &exists),
        "specs/app.md"
    );
    // Only on main, from the root: found there.
    assert_eq!(
        spec_arg("specs/app.md", &sub, &root, &exists),
        "specs/app.md"
    );
    // Nowhere: relative to where speed runs, so the error names that.
    assert_eq!(spec_arg("nope.md", &sub, &root, &exists), "sub/nope.md");
    assert_eq!(spec_arg("#Only", &sub, &root, &exists), "#Only");
    let abs = root.join("specs/app.md");
    assert_eq!(
        spec_arg(abs.to_str().unwrap(), &sub, &root, &exists),
        "specs/app.md"
    );
    repo.branch("x");
}

#[test]
fn branch_mode_paths_resolve_against_the_run_directory() {
    let mut repo = Fake::new("main");
    repo.commit("main", "specs/app.md", "# App\n");
    let sub = repo.root().join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    let r = review(
        resolve_in(
            &repo,
            sub.clone(),
            &[
                "review",
                "--branch",
                "task",
                "--spec",
                "specs/app.md#S",
                "--criteria",
                "c.txt",
            ],
            &[],
        )
        .unwrap(),
    );
    assert_eq!(
        r.review.target,
        Target::Branch {
            branch: "task".to_string(),
            specs: vec!["specs/app.md#S".to_string()],
            criteria: Some(sub.join("c.txt")),
        }
    );
    assert_eq!(r.review.spec_args, ["specs/app.md#S"]);
}

#[test]
fn outside_a_repository() {
    let cli = Cli::try_parse_from(["speed", "review"]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let err = Settings::resolve(cli, dir.path().to_path_buf(), Err("not a repo: x"), &|_| {
        None
    })
    .unwrap_err();
    assert_eq!(err.to_string(), "not a repo: x");
    let cli = Cli::try_parse_from(["speed", "config"]).unwrap();
    let s = Settings::resolve(cli, dir.path().to_path_buf(), Err("not a repo: x"), &|_| {
        None
    })
    .unwrap();
    let c = shown(s);
    assert_eq!(c.main.unwrap_err(), "not a repo: x");
    // A named file is still read outside a repository.
    std::fs::write(dir.path().join("c.toml"), "[review]\nmax_revisions = 5\n").unwrap();
    let cli = Cli::try_parse_from(["speed", "config", "--config", "c.toml"]).unwrap();
    let c =
        shown(Settings::resolve(cli, dir.path().to_path_buf(), Err("none"), &|_| None).unwrap());
    assert_eq!(entry(&c, "review.max_revisions").value, 5);
    assert_eq!(
        entry(&c, "review.max_revisions").source.kind(),
        "config_file"
    );
}

#[test]
fn nits_checks_a_named_config_file() {
    let repo = Fake::new("main");
    repo.tree("bad.toml", "[llm]\nprovidr = 1\n");
    let err = resolve(&repo, &["nits", "--config", "bad.toml"], &[]).unwrap_err();
    assert!(err.to_string().contains("did you mean `provider`"), "{err}");
    // Without one, nits read no configuration at all.
    repo.tree(CONFIG_PATH, "broken [");
    assert!(resolve(&repo, &["nits"], &[]).is_ok());
}

#[test]
fn actors_are_file_name_words() {
    assert!(valid_actor("ci-bot_2.x"));
    for bad in ["", ".hidden", "a/b", "a b", "../x", &"a".repeat(65)] {
        assert!(!valid_actor(bad), "{bad:?}");
    }
}

#[test]
fn color_flag_wins_over_no_color_which_wins_over_the_terminal() {
    let repo = Fake::new("main");
    let color = |args: &[&str], terminal: bool, no_color: Option<&str>| {
        let settings = resolve(&repo, args, &[]).unwrap();
        settings.color(terminal, &|key| {
            (key == "NO_COLOR")
                .then(|| no_color.map(str::to_string))
                .flatten()
        })
    };
    assert!(color(&["nits"], true, None));
    assert!(!color(&["nits"], false, None));
    assert!(!color(&["nits"], true, Some("1")));
    // An empty NO_COLOR is no request (no-color.org).
    assert!(color(&["nits"], true, Some("")));
    assert!(color(&["--color", "always", "nits"], false, Some("1")));
    assert!(!color(&["nits", "--color", "never"], true, None));
}

#[test]
fn review_format_comes_from_format_or_json() {
    let repo = Fake::new("main");
    let format = |args: &[&str]| review(resolve(&repo, args, &[]).unwrap()).format;
    assert_eq!(format(&["review"]), crate::render::Format::Human);
    assert_eq!(format(&["review", "--json"]), crate::render::Format::Json);
    assert_eq!(
        format(&["review", "--format", "junit"]),
        crate::render::Format::Junit
    );
}
