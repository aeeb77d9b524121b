//! From a new repository to a first review: `speed init` then `speed
//! doctor` in fresh repositories (Rust, Python, neither) against the
//! loopback model playing a local server, the README's quickstart run as
//! written, what init never does (overwrite, write a key's value), and
//! doctor against each misconfiguration it names.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;

use crate::support::model_server::{ModelServer, Recorded, Reply};
use crate::support::speed::{Run, speed};
use crate::support::verdicts::{dimensions, guardian, text};

/// A repository made with the git command, as a person makes one: files
/// in the working tree, committed on `main`.
struct Fresh {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    /// Programs the tests put on speed's PATH (fake tools, `claude`).
    bin: PathBuf,
}

#[derive(Clone, Copy, PartialEq)]
enum Lang {
    Rust,
    Python,
    Neither,
}

const SPEC: &str = "# Shop

The shop sells books to members.

## Cart

- A cart holds at most 10 books.
- Adding an eleventh book is refused with a message saying the cart is full.
";

const VISION: &str = "# Shop: product vision

The shop is for members who borrow and buy books. It must never sell a member's data.
";

impl Fresh {
    fn new(lang: Lang) -> Fresh {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("shop");
        let bin = tmp.path().join("bin");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&bin).unwrap();
        let fresh = Fresh {
            _tmp: tmp,
            root,
            bin,
        };
        match lang {
            Lang::Rust => {
                fresh.write(
                    "Cargo.toml",
                    "[package]\nname = \"shop\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
                );
                fresh.write("src/lib.rs", "pub fn cap() -> usize {\n    10\n}\n");
            }
            Lang::Python => {
                fresh.write(
                    "pyproject.toml",
                    "[project]\nname = \"shop\"\nversion = \"0.1.0\"\n",
                );
                fresh.write("shop/__init__.py", "CAP = 10\n");
            }
            Lang::Neither => fresh.write("README.md", "# Shop\n"),
        }
        fresh.git(&["init", "-q", "-b", "main"]);
        fresh.git(&["add", "-A"]);
        fresh.git(&["commit", "-q", "-m", "first"]);
        fresh
    }

    fn write(&self, path: &str, text: &str) {
        let full = self.root.join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, text).unwrap();
    }

    fn read(&self, path: &str) -> String {
        std::fs::read_to_string(self.root.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    fn git(&self, args: &[&str]) -> String {
        let out = Command::new("git")
            .current_dir(&self.root)
            .args(args)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.root)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_AUTHOR_NAME", "Ana")
            .env("GIT_AUTHOR_EMAIL", "ana@example.com")
            .env("GIT_COMMITTER_NAME", "Ana")
            .env("GIT_COMMITTER_EMAIL", "ana@example.com")
            .env("GIT_AUTHOR_DATE", "2026-03-01T10:00:00Z")
            .env("GIT_COMMITTER_DATE", "2026-03-01T10:00:00Z")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// A program on speed's PATH: a shell script.
    fn tool(&self, name: &str, script: &str) {
        let path = self.bin.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{script}\n")).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    /// speed's PATH: the fake tools, and the folder of the speed under
    /// test (the PATH the hooks see).
    fn path_var(&self) -> String {
        let speed_dir = Path::new(env!("CARGO_BIN_EXE_speed")).parent().unwrap();
        format!("{}:{}", self.bin.display(), speed_dir.display())
    }

    /// `speed ARGS` with `SPEED_LOCAL_SERVERS` (the loopback server, or
    /// none) and the PATH above, plus `env`.
    fn speed(&self, args: &[&str], server: Option<&ModelServer>, env: &[(&str, &str)]) -> Run {
        let servers = server.map(|s| s.root()).unwrap_or_default();
        let path = self.path_var();
        let mut all = vec![
            ("SPEED_LOCAL_SERVERS", servers.as_str()),
            ("PATH", path.as_str()),
        ];
        all.extend_from_slice(env);
        speed(&self.root, args, &all)
    }

    /// A branch `my-feature` off main whose change the spec asks for.
    fn feature_branch(&self, lang: Lang) {
        self.git(&["switch", "-q", "-c", "my-feature"]);
        match lang {
            Lang::Rust => self.write(
                "src/lib.rs",
                "pub fn cap() -> usize {\n    10\n}\n\npub fn add(cart: &mut Vec<String>, book: String) -> Result<(), String> {\n    if cart.len() >= cap() {\n        return Err(\"the cart is full\".into());\n    }\n    cart.push(book);\n    Ok(())\n}\n",
            ),
            Lang::Python => self.write(
                "shop/__init__.py",
                "CAP = 10\n\n\ndef add(cart, book):\n    if len(cart) >= CAP:\n        raise ValueError(\"the cart is full\")\n    cart.append(book)\n",
            ),
            Lang::Neither => self.write("cart.txt", "A cart holds at most 10 books.\n"),
        }
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "-m", "Cart limit"]);
        self.git(&["switch", "-q", "main"]);
    }
}

/// The file the feature branch changes, and a line of it.
fn changed(lang: Lang) -> (&'static str, u32) {
    match lang {
        Lang::Rust => ("src/lib.rs", 6),
        Lang::Python => ("shop/__init__.py", 5),
        Lang::Neither => ("cart.txt", 1),
    }
}

/// The loopback server as a local model server: it lists its models
/// (an embedding model first, which init must pass over), answers the
/// doctor's probe, a review (an approval quoting `SPEC`) and the guardian.
fn local_model(lang: Lang) -> ModelServer {
    let (file, line) = changed(lang);
    let evidence = format!("{file}:{line}");
    ModelServer::start(move |req: &Recorded| {
        if req.method == "GET" && req.path.ends_with("/models") {
            return Reply::json(
                200,
                json!({"object": "list", "data": [
                    {"id": "nomic-embed-text:latest", "object": "model"},
                    {"id": "qwen2.5-coder:7b", "object": "model"},
                    {"id": "llama3.1:8b", "object": "model"}
                ]}),
            );
        }
        if req.body.contains("connection test") {
            return Reply::openai(&text(&json!({
                "verdict": "request_changes",
                "expectations": "Nothing: this is a connection test.",
                "criteria": [], "spec_verification": [], "missing_from_spec": [],
                "out_of_scope": [], "issues": [], "strengths": [],
                "rejection": {"kind": "implementation", "reason": "connection test"}
            })));
        }
        if req.body.contains("Product guardian check") {
            return Reply::openai(&text(&guardian("aligned", "Serves members", json!([]))));
        }
        Reply::openai(&text(&json!({
            "dimensions": dimensions(),
            "verdict": "approve",
            "expectations": "A cart refuses an eleventh book with a message.",
            "criteria": [],
            "spec_verification": [
                {"spec_quote": "A cart holds at most 10 books.", "spec_section": "Shop > Cart",
                 "satisfied": true, "evidence": evidence, "notes": ""}
            ],
            "missing_from_spec": [], "out_of_scope": [], "issues": [],
            "strengths": ["The limit is checked before the book is added"]
        })))
    })
}

/// The commands of the README's quickstart, in order: each line of its
/// `sh` blocks that is not a comment.
fn readme_quickstart() -> Vec<String> {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let start = readme
        .find("## Quickstart\n")
        .expect("the README has a quickstart");
    let rest = &readme[start + 3..];
    let section = &rest[..rest.find("\n## ").unwrap_or(rest.len())];
    let mut commands = Vec::new();
    let mut in_sh = false;
    for line in section.lines() {
        match line.trim() {
            "```sh" => in_sh = true,
            "```" => in_sh = false,
            l if in_sh && !l.is_empty() && !l.starts_with('#') => commands.push(l.to_string()),
            _ => {}
        }
    }
    commands
}

/// Splits a command line as a shell would for these commands: words, and
/// double-quoted strings.
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '"' => quoted = !quoted,
            ' ' if !quoted => {
                if !word.is_empty() {
                    out.push(std::mem::take(&mut word));
                }
            }
            c => word.push(c),
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

/// Runs the README's quickstart in a fresh repository of `lang` against
/// the local model: `speed init`, the spec written, the commit, `speed
/// doctor`, the first review. Returns the runs of speed, in order.
fn quickstart(lang: Lang, fresh: &Fresh, server: &ModelServer) -> Vec<(String, Run)> {
    let commands = readme_quickstart();
    assert_eq!(
        commands.first().map(String::as_str),
        Some("speed init"),
        "the quickstart starts with speed init: {commands:?}"
    );
    fresh.feature_branch(lang);
    let mut runs = Vec::new();
    for command in &commands {
        let line = command.replace("your-repo", "shop");
        let args = words(&line);
        match args[0].as_str() {
            "speed" => {
                let rest: Vec<&str> = args[1..].iter().map(String::as_str).collect();
                let run = fresh.speed(&rest, Some(server), &[]);
                if rest[0] == "init" {
                    // What the README says comes next: write the spec and
                    // the vision (the template's example replaced).
                    assert_eq!(run.code, 0, "{}", run.transcript());
                    assert!(
                        fresh
                            .read("specs/product/shop.md")
                            .contains("speed init wrote this template")
                    );
                    fresh.write("specs/product/shop.md", SPEC);
                    fresh.write("specs/product/overview.md", VISION);
                }
                runs.push((line.clone(), run));
            }
            "git" => {
                let rest: Vec<&str> = args[1..].iter().map(String::as_str).collect();
                fresh.git(&rest);
            }
            other => panic!("the quickstart runs `{other}`, which this test does not know: {line}"),
        }
    }
    runs
}

fn run_of<'a>(runs: &'a [(String, Run)], prefix: &str) -> &'a Run {
    &runs
        .iter()
        .find(|(line, _)| line.starts_with(prefix))
        .unwrap_or_else(|| panic!("the quickstart has no `{prefix}`"))
        .1
}

fn quickstart_works(lang: Lang) -> (Fresh, Vec<(String, Run)>) {
    let fresh = Fresh::new(lang);
    match lang {
        Lang::Rust => {
            fresh.tool("cargo", "exit 0");
            fresh.tool("cargo-clippy", "exit 0");
        }
        Lang::Python => {
            fresh.tool("ruff", "echo '[]'");
            fresh.tool(
                "pytest",
                r#"for a in "$@"; do case "$a" in --junitxml=*) f="${a#--junitxml=}";; esac; done
printf '<testsuite tests="1" failures="0"><testcase classname="t" name="test_cart"/></testsuite>' > "$f""#,
            );
        }
        Lang::Neither => {}
    }
    let server = local_model(lang);
    let runs = quickstart(lang, &fresh, &server);

    let init = run_of(&runs, "speed init");
    assert!(
        init.stderr.contains("created .speed/config.toml"),
        "{}",
        init.transcript()
    );
    assert!(init.stderr.contains("Next:"), "{}", init.transcript());
    let config = fresh.read(".speed/config.toml");
    assert!(
        config.contains(&format!("base_url = \"{}/v1\"", server.root())),
        "{config}"
    );
    // The embedding model listed first is passed over.
    assert!(config.contains("model = \"qwen2.5-coder:7b\""), "{config}");
    assert!(
        config.contains("# It also serves: nomic-embed-text:latest, llama3.1:8b."),
        "{config}"
    );

    let doctor = run_of(&runs, "speed doctor");
    assert_eq!(doctor.code, 0, "{}", doctor.transcript());
    for expected in [
        ".speed/config.toml is committed on main",
        "answers and serves qwen2.5-coder:7b",
        "answered the probe with JSON in the verdict's shape",
        "the product vision: specs/product/overview.md",
        "a review would work here",
    ] {
        assert!(
            doctor.stdout.contains(expected),
            "{expected}\n{}",
            doctor.transcript()
        );
    }
    assert!(
        !doctor.stdout.contains("problem:"),
        "{}",
        doctor.transcript()
    );

    let review = run_of(&runs, "speed review");
    assert_eq!(review.code, 0, "{}", review.transcript());
    assert!(review.stdout.contains("approve"), "{}", review.transcript());
    // A branch review's title is its branch: named once.
    assert!(
        review.stdout.contains("Reviewing branch my-feature\n"),
        "{}",
        review.transcript()
    );
    (fresh, runs)
}

#[test]
fn the_readmes_quickstart_in_a_python_repository() {
    let (fresh, runs) = quickstart_works(Lang::Python);
    let config = fresh.read(".speed/config.toml");
    assert!(
        config.contains("\n[[checks.command]]\nname = \"ruff\""),
        "{config}"
    );
    assert!(config.contains("\"--no-fix\""), "{config}");
    assert!(
        config.contains("\n[[checks.command]]\nname = \"pytest\""),
        "{config}"
    );
    assert!(config.contains("parser = \"junit\""), "{config}");
    let doctor = run_of(&runs, "speed doctor");
    assert!(
        doctor.stdout.contains("ruff: `ruff check --no-fix"),
        "{}",
        doctor.transcript()
    );
    assert!(
        doctor.stdout.contains("passed at main"),
        "{}",
        doctor.transcript()
    );
}

#[test]
fn the_readmes_quickstart_in_a_rust_repository() {
    let (fresh, runs) = quickstart_works(Lang::Rust);
    let config = fresh.read(".speed/config.toml");
    assert!(
        config.contains("\n[[checks.command]]\nname = \"clippy\""),
        "{config}"
    );
    assert!(config.contains("parser = \"cargo\""), "{config}");
    assert!(
        config.contains("\n[[checks.command]]\nname = \"tests\""),
        "{config}"
    );
    let doctor = run_of(&runs, "speed doctor");
    assert!(
        doctor.stdout.contains("clippy: `cargo clippy"),
        "{}",
        doctor.transcript()
    );
}

#[test]
fn the_readmes_quickstart_in_a_repository_of_neither() {
    let (fresh, runs) = quickstart_works(Lang::Neither);
    let config = fresh.read(".speed/config.toml");
    assert!(!config.contains("\n[[checks.command]]"), "{config}");
    assert!(config.contains("# [[checks.command]]"), "{config}");
    let doctor = run_of(&runs, "speed doctor");
    assert!(
        doctor.stdout.contains("none configured"),
        "{}",
        doctor.transcript()
    );
}

#[test]
fn a_tool_that_is_not_installed_is_suggested_commented_out() {
    let fresh = Fresh::new(Lang::Python);
    let run = fresh.speed(&["init"], None, &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let config = fresh.read(".speed/config.toml");
    assert!(
        config.contains("# Not installed here: ruff.\n# [[checks.command]]\n# name = \"ruff\""),
        "{config}"
    );
    assert!(!config.contains("\n[[checks.command]]"), "{config}");
    assert!(
        run.stderr
            .contains("ruff (not installed here: commented out)"),
        "{}",
        run.transcript()
    );
    // Valid as written: speed reads it without a complaint.
    let config_run = fresh.speed(&["config", "--strict"], None, &[]);
    assert_eq!(config_run.code, 0, "{}", config_run.transcript());
    assert!(
        !config_run.stderr.contains("warning"),
        "{}",
        config_run.transcript()
    );
    // --strict fails on a warning, after printing the settings.
    let warned = fresh.speed(&["config", "--strict"], None, &[("SKIP_GUARDIAN", "maybe")]);
    assert_eq!(warned.code, 1, "{}", warned.transcript());
    assert!(
        warned.stderr.contains("warning: "),
        "{}",
        warned.transcript()
    );
    assert!(warned.stdout.contains("[llm]"), "{}", warned.transcript());
}

#[test]
fn a_second_run_changes_nothing_and_says_what_exists() {
    let fresh = Fresh::new(Lang::Python);
    let server = local_model(Lang::Python);
    let first = fresh.speed(&["init"], Some(&server), &[]);
    assert_eq!(first.code, 0, "{}", first.transcript());
    let files = [
        ".speed/config.toml",
        ".gitignore",
        "specs/product/overview.md",
        "specs/product/shop.md",
        ".speed/tasks/1.json.example",
    ];
    let before: Vec<String> = files.iter().map(|f| fresh.read(f)).collect();
    let second = fresh.speed(&["init"], Some(&server), &[]);
    assert_eq!(second.code, 0, "{}", second.transcript());
    let after: Vec<String> = files.iter().map(|f| fresh.read(f)).collect();
    assert_eq!(before, after);
    assert!(
        second.stderr.contains("exists  .speed/config.toml"),
        "{}",
        second.transcript()
    );
    assert!(
        second.stderr.contains("Nothing was written"),
        "{}",
        second.transcript()
    );
    // The second run looked for no model: the configuration was there.
    let lists = server
        .requests()
        .iter()
        .filter(|r| r.path.ends_with("/models"))
        .count();
    assert_eq!(lists, 1);
    // Nothing committed yet: the next steps still say to commit.
    assert!(
        second
            .stderr
            .contains("Commit them and the configuration on main"),
        "{}",
        second.transcript()
    );
    // Once committed on main, a later run says so instead of asking to
    // commit again; `--hooks` then installs the hooks, and says it did.
    fresh.git(&["add", ".speed/config.toml", ".gitignore", "specs"]);
    fresh.git(&["commit", "-qm", "speed: configuration and specs"]);
    let third = fresh.speed(&["init", "--hooks"], Some(&server), &[]);
    assert_eq!(third.code, 0, "{}", third.transcript());
    assert!(
        third.stderr.contains("1. The configuration, specs/product/shop.md and specs/product/overview.md are committed on main")
            && !third.stderr.contains("git add")
            && third.stderr.contains("2. speed doctor"),
        "{}",
        third.transcript()
    );
    assert!(
        third.stderr.contains("hooks: installed")
            && third.stderr.contains("No other file was written")
            && !third.stderr.contains("Nothing was written"),
        "{}",
        third.transcript()
    );
    // The template is a task file to copy, not a task speed reads.
    let review = fresh.speed(&["review", "--offline"], None, &[]);
    assert!(
        review.stderr.contains("Nothing to review"),
        "{}",
        review.transcript()
    );
}

#[test]
fn what_a_person_wrote_is_never_replaced_and_gitignore_gains_only_its_missing_lines() {
    let fresh = Fresh::new(Lang::Neither);
    fresh.write(".speed/config.toml", "[llm]\nprovider = \"none\"\n");
    fresh.write("specs/product/catalog.md", "# Catalog\n");
    fresh.write(".gitignore", "/target\n/.speed/cache/");
    fresh.write(".speed/features/catalog/tasks/1.json", "{\"id\": \"1\"}\n");
    let run = fresh.speed(
        &["init"],
        None,
        &[("ANTHROPIC_API_KEY", "sk-ant-never-written")],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert_eq!(
        fresh.read(".speed/config.toml"),
        "[llm]\nprovider = \"none\"\n"
    );
    assert_eq!(fresh.read("specs/product/catalog.md"), "# Catalog\n");
    assert!(!fresh.root.join("specs/product/shop.md").exists());
    assert!(!fresh.root.join(".speed/tasks/1.json.example").exists());
    assert!(
        run.stderr.contains("specs exist: specs/product/catalog.md"),
        "{}",
        run.transcript()
    );
    assert!(
        run.stderr.contains("1 task files exist"),
        "{}",
        run.transcript()
    );
    // The next steps name the spec that is there.
    assert!(
        run.stderr.contains("--spec specs/product/catalog.md"),
        "{}",
        run.transcript()
    );
    let gitignore = fresh.read(".gitignore");
    assert!(
        gitignore.starts_with("/target\n/.speed/cache/\n\n# speed's runtime state"),
        "{gitignore}"
    );
    assert_eq!(
        gitignore.matches("/.speed/cache/").count(),
        1,
        "{gitignore}"
    );
    assert!(gitignore.contains("/.speed/reviews/\n"), "{gitignore}");
}

#[test]
fn the_provider_is_found_in_order_and_a_keys_value_is_never_written() {
    // ANTHROPIC_API_KEY first, though everything else is there too.
    let fresh = Fresh::new(Lang::Neither);
    let server = local_model(Lang::Neither);
    fresh.tool("claude", "exit 0");
    let secret = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789";
    let run = fresh.speed(
        &["init"],
        Some(&server),
        &[
            ("ANTHROPIC_API_KEY", secret),
            ("OPENAI_API_KEY", "sk-proj-0123456789abcdefghij"),
        ],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    let config = fresh.read(".speed/config.toml");
    assert!(config.contains("provider = \"anthropic\""), "{config}");
    assert!(
        config.contains("api_key_env = \"ANTHROPIC_API_KEY\""),
        "{config}"
    );
    assert!(
        !config.contains(secret) && !run.stderr.contains(secret),
        "{config}"
    );
    assert!(
        server.requests().is_empty(),
        "no server is asked once a key is found"
    );

    // OPENAI_API_KEY next.
    let fresh = Fresh::new(Lang::Neither);
    let run = fresh.speed(
        &["init"],
        Some(&server),
        &[("OPENAI_API_KEY", "sk-proj-0123456789abcdefghij")],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    let config = fresh.read(".speed/config.toml");
    assert!(
        config.contains("provider = \"openai\"\nbase_url = \"https://api.openai.com/v1\""),
        "{config}"
    );
    assert!(
        config.contains("api_key_env = \"OPENAI_API_KEY\""),
        "{config}"
    );
    assert!(!config.contains("sk-proj"), "{config}");

    // A local server before `claude`.
    let fresh = Fresh::new(Lang::Neither);
    fresh.tool("claude", "exit 0");
    let run = fresh.speed(&["init"], Some(&server), &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(
        fresh
            .read(".speed/config.toml")
            .contains("model = \"qwen2.5-coder:7b\"")
    );

    // `claude` on PATH when no server answers.
    let closed = closed_port();
    let fresh = Fresh::new(Lang::Neither);
    fresh.tool("claude", "exit 0");
    let run = fresh.speed(&["init"], None, &[("SPEED_LOCAL_SERVERS", closed.as_str())]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let config = fresh.read(".speed/config.toml");
    assert!(
        config.contains("provider = \"command\"\ncommand = [\"claude\", \"-p\"]"),
        "{config}"
    );
    assert!(
        run.stderr
            .contains(&format!("nothing answered at http://{closed}/v1")),
        "{}",
        run.transcript()
    );

    // Nothing: offline, with the lines to uncomment.
    let fresh = Fresh::new(Lang::Neither);
    let run = fresh.speed(&["init"], None, &[]);
    let config = fresh.read(".speed/config.toml");
    assert!(config.contains("provider = \"none\""), "{config}");
    assert!(config.contains("# provider = \"anthropic\""), "{config}");
    assert!(
        config.contains("# command = [\"claude\", \"-p\"]"),
        "{config}"
    );
    assert!(
        run.stderr.contains("holds the lines to uncomment"),
        "{}",
        run.transcript()
    );
}

/// `127.0.0.1:PORT` where nothing listens.
fn closed_port() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    addr.to_string()
}

#[test]
fn init_outside_a_repository_fails_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let run = speed(tmp.path(), &["init"], &[("SPEED_LOCAL_SERVERS", "")]);
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(
        run.stderr.contains("is not in a git repository"),
        "{}",
        run.transcript()
    );
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
}

#[test]
fn init_with_hooks_installs_the_merge_gate_and_says_when_it_cannot() {
    let fresh = Fresh::new(Lang::Neither);
    let run = fresh.speed(&["init", "--hooks"], None, &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stderr.contains("hooks: installed"),
        "{}",
        run.transcript()
    );
    let hook = fresh.read(".git/hooks/pre-merge-commit");
    assert!(hook.contains("hook run pre-merge-commit"), "{hook}");
    let doctor = fresh.speed(&["doctor", "--offline"], None, &[]);
    assert!(
        doctor.stdout.contains("✓ installed in"),
        "{}",
        doctor.transcript()
    );

    // Someone else's pre-push: init writes its files, then says why the
    // hooks were not installed (exit 1).
    let fresh = Fresh::new(Lang::Neither);
    fresh.write(".git/hooks/pre-push", "#!/bin/sh\nexit 0\n");
    let run = fresh.speed(&["init", "--hooks"], None, &[]);
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(
        run.stderr.contains("the hooks were not installed"),
        "{}",
        run.transcript()
    );
    assert!(run.stderr.contains("pre-push"), "{}", run.transcript());
    assert!(fresh.root.join(".speed/config.toml").is_file());
    assert_eq!(fresh.read(".git/hooks/pre-push"), "#!/bin/sh\nexit 0\n");
}

/// A repository set up as the quickstart leaves it, with `config` as its
/// committed configuration.
fn configured(lang: Lang, config: &str) -> Fresh {
    let fresh = Fresh::new(lang);
    fresh.write(".speed/config.toml", config);
    fresh.write("specs/product/shop.md", SPEC);
    fresh.write("specs/product/overview.md", VISION);
    fresh.git(&["add", "-A"]);
    fresh.git(&["commit", "-q", "-m", "speed"]);
    fresh
}

fn openai_config(server: &str) -> String {
    format!(
        "[llm]\nprovider = \"openai\"\nbase_url = \"{server}\"\nmodel = \"qwen2.5-coder:7b\"\ntimeout_secs = 5\n"
    )
}

fn doctor(fresh: &Fresh, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut all = vec!["doctor"];
    all.extend_from_slice(args);
    fresh.speed(&all, None, env)
}

fn assert_finding(run: &Run, level: &str, text: &str) {
    let found = run
        .stdout
        .lines()
        .any(|line| line.contains(&format!("{level}: ")) && line.contains(text));
    assert!(found, "no {level} saying {text:?}:\n{}", run.transcript());
}

#[test]
fn doctor_names_a_configuration_that_is_not_committed_on_main() {
    let fresh = Fresh::new(Lang::Neither);
    // None at all.
    let run = doctor(&fresh, &["--offline"], &[]);
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert_finding(&run, "problem", "there is no .speed/config.toml on main");
    // One in the working tree only.
    fresh.write(".speed/config.toml", "[llm]\nprovider = \"none\"\n");
    let run = doctor(&fresh, &[], &[]);
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert_finding(
        &run,
        "problem",
        ".speed/config.toml is not committed on main",
    );
}

#[test]
fn doctor_names_an_invalid_configuration_key() {
    let fresh = configured(
        Lang::Neither,
        "[llm]\nprovider = \"none\"\ntimout_secs = 3\n",
    );
    let run = doctor(&fresh, &[], &[]);
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert_finding(&run, "problem", "llm.timout_secs: unknown key");
}

#[test]
fn doctor_warns_of_a_working_tree_copy_that_differs_and_strict_fails_on_it() {
    let server = local_model(Lang::Neither);
    let fresh = configured(Lang::Neither, &openai_config(&server.url()));
    let config = fresh.read(".speed/config.toml");
    fresh.write(".speed/config.toml", &format!("{config}max_retries = 1\n"));
    let run = doctor(&fresh, &[], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert_finding(
        &run,
        "warning",
        "the working tree's .speed/config.toml differs from main's",
    );
    let strict = doctor(&fresh, &["--strict"], &[]);
    assert_eq!(strict.code, 1, "{}", strict.transcript());
    assert!(
        strict.stdout.contains("--strict fails on them"),
        "{}",
        strict.transcript()
    );
}

#[test]
fn doctor_names_an_unset_key_variable_and_never_prints_a_key() {
    let fresh = configured(
        Lang::Neither,
        "[llm]\nprovider = \"anthropic\"\nmodel = \"claude-x\"\n",
    );
    let run = doctor(&fresh, &[], &[]);
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert_finding(
        &run,
        "problem",
        "the API key variable ANTHROPIC_API_KEY is not set",
    );

    let key = "sk-ant-api03-zyxwvutsrqponmlkjihgfedcba987654";
    let run = doctor(&fresh, &["--offline"], &[("ANTHROPIC_API_KEY", key)]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stdout.contains("ANTHROPIC_API_KEY is set"),
        "{}",
        run.transcript()
    );
    assert!(!run.stdout.contains(key) && !run.stderr.contains(key));
}

#[test]
fn doctor_names_a_server_it_cannot_reach() {
    let closed = closed_port();
    let fresh = configured(
        Lang::Neither,
        &openai_config(&format!("http://{closed}/v1")),
    );
    let run = doctor(&fresh, &[], &[]);
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert_finding(
        &run,
        "problem",
        &format!(
            "cannot reach the model server: could not reach the model at http://{closed}/v1/models"
        ),
    );
}

#[test]
fn doctor_says_what_came_back_when_the_probe_is_not_a_verdict() {
    let server = ModelServer::start(|req: &Recorded| {
        if req.path.ends_with("/models") {
            Reply::json(200, json!({"data": [{"id": "qwen2.5-coder:7b"}]}))
        } else {
            Reply::openai("Sure! Here is a poem about carts.")
        }
    });
    let fresh = configured(Lang::Neither, &openai_config(&server.url()));
    let run = doctor(&fresh, &[], &[]);
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert_finding(&run, "problem", "not with JSON in the verdict's shape");
    assert!(
        run.stdout
            .contains("it said: Sure! Here is a poem about carts."),
        "{}",
        run.transcript()
    );
}

#[test]
fn doctor_warns_of_a_model_the_server_does_not_serve() {
    let server = local_model(Lang::Neither);
    let config = openai_config(&server.url()).replace("qwen2.5-coder:7b", "mistral:7b");
    let fresh = configured(Lang::Neither, &config);
    let run = doctor(&fresh, &[], &[]);
    assert_finding(&run, "warning", "does not list the model mistral:7b");
}

#[test]
fn doctor_offline_asks_nothing() {
    let server = local_model(Lang::Neither);
    let fresh = configured(Lang::Neither, &openai_config(&server.url()));
    let run = doctor(&fresh, &["--offline"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stdout.contains("no request made (--offline)"),
        "{}",
        run.transcript()
    );
    assert!(server.requests().is_empty());
}

#[test]
fn doctor_names_a_command_provider_it_cannot_find() {
    let fresh = configured(
        Lang::Neither,
        "[llm]\nprovider = \"command\"\ncommand = [\"claude\", \"-p\"]\n",
    );
    let run = doctor(&fresh, &["--offline"], &[]);
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert_finding(
        &run,
        "problem",
        "the command provider's program `claude` is not found on PATH",
    );
}

#[test]
fn doctor_runs_check_commands_at_main_in_a_temporary_checkout() {
    let fresh = configured(
        Lang::Python,
        "[llm]\nprovider = \"none\"\n\n[[checks.command]]\nname = \"mypy\"\nrun = [\"mypy\", \".\"]\n\n[[checks.command]]\nname = \"ruff\"\nrun = [\"ruff\", \"check\", \".\"]\n\n[[checks.command]]\nname = \"pytest\"\nrun = [\"pytest\"]\n",
    );
    // ruff that fixes what it finds (`fix = true`): it edits the checkout.
    fresh.tool("ruff", "printf 'CAP = 11\\n' > shop/__init__.py");
    fresh.tool(
        "pytest",
        "echo 'FAILED tests/test_cart.py::test_full'; exit 1",
    );
    // Uncommitted work in the working tree, which a check must not see.
    fresh.write("shop/__init__.py", "CAP = 12\n");
    let run = doctor(&fresh, &[], &[]);
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert_finding(&run, "problem", "mypy: `mypy` is not found on PATH");
    assert_finding(
        &run,
        "warning",
        "ruff edits the files of its checkout: shop/__init__.py",
    );
    assert_finding(
        &run,
        "warning",
        "pytest: `pytest` exited with status 1 at main",
    );
    assert!(
        run.stdout.contains("FAILED tests/test_cart.py::test_full"),
        "{}",
        run.transcript()
    );
    // The working tree is as the person left it.
    assert_eq!(fresh.read("shop/__init__.py"), "CAP = 12\n");
    // A check may run for minutes: stderr said which one was running,
    // before it ran (the not-found one is never run).
    assert!(
        run.stderr.contains(
            "speed doctor: running pytest (`pytest`) at main in a temporary checkout, for at most"
        ) && !run.stderr.contains("running mypy"),
        "{}",
        run.transcript()
    );
}

/// One entry of `ruff check --output-format=json` (ruff 0.17) at `row`
/// of shop/__init__.py in the folder the command runs in.
const RUFF_ENTRY: &str = r#"{"cell": null, "code": "F401", "end_location": {"column": 10, "row": ROW}, "filename": "'"$PWD"'/shop/__init__.py", "fix": {"applicability": "safe", "edits": [], "message": "Remove unused import: `os`"}, "location": {"column": 8, "row": ROW}, "message": "`os` imported but unused", "name": "unused-import", "noqa_row": ROW, "severity": "error", "url": "https://docs.astral.sh/ruff/rules/unused-import"}"#;

#[test]
fn doctor_names_what_a_failing_check_found_at_main_as_its_parser_reads_it() {
    let fresh = configured(
        Lang::Python,
        "[llm]\nprovider = \"none\"\n\n[[checks.command]]\nname = \"ruff\"\nrun = [\"ruff\", \"check\", \"--no-fix\", \"--output-format=json\", \".\"]\nparser = \"ruff\"\n",
    );
    fresh.write(
        "shop/__init__.py",
        "import os\nimport os\nimport os\nimport os\nimport os\nimport os\nimport os\nCAP = 10\n",
    );
    fresh.git(&["commit", "-qam", "imports"]);
    // Seven unused imports at main, as ruff's JSON (one line each).
    let entries: Vec<String> = (1..=7)
        .map(|row| RUFF_ENTRY.replace("ROW", &row.to_string()))
        .collect();
    fresh.tool(
        "ruff",
        &format!("printf '%s\\n' '[{}]'\nexit 1", entries.join(",")),
    );
    let run = doctor(&fresh, &[], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert_finding(
        &run,
        "warning",
        "ruff: `ruff check --no-fix --output-format=json .` exited with status 1 at main",
    );
    for expected in [
        "7 findings (a review shows them as preexisting where a change does not touch their lines)",
        "shop/__init__.py:1: F401 `os` imported but unused",
        "shop/__init__.py:5: F401",
        "… and 2 more",
    ] {
        assert!(
            run.stdout.contains(expected),
            "{expected}\n{}",
            run.transcript()
        );
    }
    // What was read, not the end of the JSON array.
    assert!(
        !run.stdout.contains("\"noqa_row\"") && !run.stdout.contains("shop/__init__.py:6:"),
        "{}",
        run.transcript()
    );
}

/// A Python environment at `venv` (outside the repository): a `python3`
/// that succeeds, a `pytest` script run by it, and `shop` recorded as
/// installed from `from` (PEP 610's direct_url.json), editable or not.
fn python_env(venv: &Path, from: &Path, editable: bool) {
    use std::os::unix::fs::PermissionsExt;
    let bin = venv.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let python = bin.join("python3");
    std::fs::write(&python, "#!/bin/sh\nexit 0\n").unwrap();
    let pytest = bin.join("pytest");
    std::fs::write(&pytest, format!("#!{}\nimport pytest\n", python.display())).unwrap();
    for exe in [&python, &pytest] {
        std::fs::set_permissions(exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let info = venv.join("lib/python3.12/site-packages/shop-0.1.0.dist-info");
    std::fs::create_dir_all(&info).unwrap();
    let url = format!("file://{}", from.display()).replace(' ', "%20");
    std::fs::write(
        info.join("direct_url.json"),
        serde_json::json!({"url": url, "dir_info": {"editable": editable}}).to_string(),
    )
    .unwrap();
}

#[test]
fn a_python_check_that_would_import_the_working_tree_is_named_and_init_puts_the_checkout_first() {
    // init: a src layout gets pytest with the checkout's src/ first; a
    // project that sets pythonpath itself keeps its own.
    let fresh = Fresh::new(Lang::Python);
    fresh.write("src/shop/__init__.py", "CAP = 10\n");
    fresh.tool("pytest", "exit 0");
    let run = fresh.speed(&["init"], None, &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let config = fresh.read(".speed/config.toml");
    assert!(
        config.contains(
            "run = [\"pytest\", \"-q\", \"-o\", \"pythonpath=src\", \"--junitxml=speed-pytest.xml\"]"
        ),
        "{config}"
    );
    let fresh = Fresh::new(Lang::Python);
    fresh.write(
        "pyproject.toml",
        "[project]\nname = \"shop\"\n\n[tool.pytest.ini_options]\npythonpath = [\"lib\"]\n",
    );
    fresh.tool("pytest", "exit 0");
    fresh.speed(&["init"], None, &[]);
    let config = fresh.read(".speed/config.toml");
    assert!(
        config.contains("run = [\"pytest\", \"-q\", \"--junitxml=speed-pytest.xml\"]"),
        "{config}"
    );

    // doctor: the environment pytest runs in has the repository installed
    // editable (pip install -e .).
    let check = |run: &str| {
        format!("[llm]\nprovider = \"none\"\n\n[[checks.command]]\nname = \"tests\"\nrun = {run}\n")
    };
    let fresh = configured(Lang::Python, &check("[\"pytest\", \"-q\"]"));
    let venv = tempfile::tempdir().unwrap();
    let venv_dir = venv.path().join("venv");
    python_env(&venv_dir, &fresh.root, true);
    let path = format!("{}:{}", venv_dir.join("bin").display(), fresh.path_var());
    let run = doctor(&fresh, &[], &[("PATH", &path)]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert_finding(
        &run,
        "warning",
        "tests: the Python it runs with has shop installed in editable mode from your working tree",
    );
    assert!(
        run.stdout
            .contains("its imports find your working tree's code, not the commit under review")
            && run
                .stdout
                .contains("add \"-o\", \"pythonpath=.\" to its run"),
        "{}",
        run.transcript()
    );
    let strict = doctor(&fresh, &["--strict"], &[("PATH", &path)]);
    assert_eq!(strict.code, 1, "{}", strict.transcript());

    // With the checkout's code first, nothing to say.
    let fresh = configured(
        Lang::Python,
        &check("[\"pytest\", \"-q\", \"-o\", \"pythonpath=.\"]"),
    );
    python_env(&venv_dir, &fresh.root, true);
    let run = doctor(&fresh, &[], &[("PATH", &path)]);
    assert!(
        !run.stdout.contains("editable mode"),
        "{}",
        run.transcript()
    );
    // Installed from the repository but not editable: a copy, not the
    // working tree.
    let fresh = configured(Lang::Python, &check("[\"pytest\", \"-q\"]"));
    python_env(&venv_dir, &fresh.root, false);
    let run = doctor(&fresh, &[], &[("PATH", &path)]);
    assert!(
        !run.stdout.contains("editable mode"),
        "{}",
        run.transcript()
    );
}

#[test]
fn a_branch_review_names_its_branch_once_as_it_is_written() {
    let fresh = configured(Lang::Neither, "[llm]\nprovider = \"none\"\n");
    fresh.git(&["switch", "-q", "-c", "Feature/Cart-Limit"]);
    fresh.write("cart.txt", "A cart holds at most 10 books.\n");
    fresh.git(&["add", "-A"]);
    fresh.git(&["commit", "-q", "-m", "Cart limit"]);
    fresh.git(&["switch", "-q", "main"]);
    let run = fresh.speed(
        &[
            "review",
            "--branch",
            "Feature/Cart-Limit",
            "--spec",
            "specs/product/shop.md",
        ],
        None,
        &[],
    );
    assert!(
        run.stdout.contains("Reviewing branch Feature/Cart-Limit\n")
            && !run.stdout.contains("feature/cart-limit"),
        "{}",
        run.transcript()
    );
}

#[test]
fn doctor_on_hooks_and_the_speed_they_run() {
    let fresh = configured(Lang::Neither, "[llm]\nprovider = \"none\"\n");
    let run = doctor(&fresh, &[], &[]);
    assert!(
        run.stdout.contains("speed's hooks are not installed"),
        "{}",
        run.transcript()
    );
    let install = fresh.speed(&["hook", "install"], None, &[]);
    assert_eq!(install.code, 0, "{}", install.transcript());
    // The hooks are there, but speed is not on the PATH they see.
    let bin = fresh.bin.display().to_string();
    let run = doctor(&fresh, &[], &[("PATH", bin.as_str())]);
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert_finding(
        &run,
        "problem",
        "the hooks cannot run speed: `speed` (from PATH) is not found",
    );
    // `git config speed.bin` names it.
    fresh.git(&["config", "speed.bin", env!("CARGO_BIN_EXE_speed")]);
    let run = doctor(&fresh, &[], &[("PATH", bin.as_str())]);
    assert!(
        run.stdout.contains("(from git config speed.bin)"),
        "{}",
        run.transcript()
    );
    assert!(!run.stdout.contains("problem:"), "{}", run.transcript());
}

#[test]
fn doctor_on_git_states_shallow_detached_and_no_main() {
    let origin = configured(Lang::Neither, "[llm]\nprovider = \"none\"\n");
    origin.write("more.txt", "1\n");
    origin.git(&["add", "-A"]);
    origin.git(&["commit", "-q", "-m", "more"]);
    let clone = origin._tmp.path().join("clone");
    let url = format!("file://{}", origin.root.display());
    let out = Command::new("git")
        .args(["clone", "-q", "--depth", "1", &url])
        .arg(&clone)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = speed(
        &clone,
        &["doctor", "--offline"],
        &[("SPEED_LOCAL_SERVERS", "")],
    );
    assert_finding(&run, "warning", "this is a shallow clone");
    assert!(
        run.stdout.contains("fetch-depth: 0"),
        "{}",
        run.transcript()
    );

    origin.git(&["switch", "-q", "--detach", "HEAD~1"]);
    let run = doctor(&origin, &["--offline"], &[]);
    assert_finding(&run, "warning", "HEAD is detached");

    let fresh = Fresh::new(Lang::Neither);
    fresh.git(&["branch", "-m", "main", "trunk"]);
    let run = doctor(&fresh, &["--offline"], &[]);
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert_finding(&run, "problem", "no main branch");
}

#[test]
fn doctor_on_specs_and_the_vision() {
    let fresh = Fresh::new(Lang::Neither);
    fresh.write(".speed/config.toml", "[llm]\nprovider = \"none\"\n");
    fresh.git(&["add", "-A"]);
    fresh.git(&["commit", "-q", "-m", "config"]);
    let run = doctor(&fresh, &["--offline"], &[]);
    assert_finding(&run, "warning", "no spec is committed on main");
    assert_finding(
        &run,
        "warning",
        "the product vision specs/product/overview.md (guardian.vision_file) is not committed on main",
    );

    // The templates init wrote, committed as they are.
    let init = fresh.speed(&["init"], None, &[]);
    assert_eq!(init.code, 0, "{}", init.transcript());
    fresh.git(&["add", "specs"]);
    fresh.git(&["commit", "-q", "-m", "specs"]);
    let run = doctor(&fresh, &["--offline"], &[]);
    assert_finding(
        &run,
        "warning",
        "specs/product/shop.md is still the template `speed init` wrote",
    );
    assert_finding(
        &run,
        "warning",
        "the vision specs/product/overview.md is still the template",
    );

    fresh.write("specs/product/shop.md", "No headings here, only text.\n");
    fresh.git(&["commit", "-q", "-am", "spec"]);
    let run = doctor(&fresh, &["--offline"], &[]);
    assert_finding(&run, "warning", "specs/product/shop.md has no headings");
}

#[test]
fn doctor_names_task_files_it_cannot_read() {
    let fresh = configured(Lang::Neither, "[llm]\nprovider = \"none\"\n");
    fresh.write(
        ".speed/tasks/1.json",
        "{\"id\": \"1\", \"status\": \"done\"}\n",
    );
    fresh.write(".speed/tasks/2.json", "{\"id\": \"2\",\n");
    let run = doctor(&fresh, &["--offline"], &[]);
    assert!(
        run.stdout.contains("1 task file read (1 done)"),
        "{}",
        run.transcript()
    );
    assert_finding(&run, "warning", ".speed/tasks/2.json");
}

#[test]
fn doctor_is_quick_with_a_local_model() {
    let server = local_model(Lang::Neither);
    let fresh = configured(Lang::Neither, &openai_config(&server.url()));
    let started = std::time::Instant::now();
    let run = doctor(&fresh, &[], &[]);
    let took = started.elapsed();
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(took.as_secs_f64() < 3.0, "speed doctor took {took:?}");
}
