//! Reach: does the model call that shows a violation also show the spec
//! sentence it violates?
//!
//! `cargo bench --bench reach` plants ten spec violations in real changes of
//! real repositories (commits of ripgrep, tokio and flask between two of
//! their releases, found in full clones under `~/corpus/git`, or
//! `SPEED_REACH_PAIRS=DIR`): each case is one real multi-file commit, a few
//! violating lines added to one of its real files, and a spec of several
//! sections one sentence of which those lines violate (the project's spec,
//! written for the bench, then the project's own documentation as further
//! sections: about 4,500 tokens, printed per case). Each case is reviewed as `speed review --branch
//! task --spec specs/reach.md --dry-run --budget N` would be, through the
//! library's real preparation (sources, facts, the prompt's assembly and its
//! split into parts), at 6,000 and 8,000 tokens. A case is reached at a
//! budget when one part's prompt holds every violating line AND the
//! violated sentence. Printed per case (the part showing the lines, the
//! parts holding the sentence, the number of parts) and in total.
//!
//! The clones are cloned again (`git clone --shared`) into a temporary
//! directory; nothing is written in them. To fill the folder once:
//!
//! ```sh
//! mkdir -p ~/corpus/git && cd ~/corpus/git
//! git clone https://github.com/BurntSushi/ripgrep
//! git clone https://github.com/tokio-rs/tokio
//! git clone https://github.com/pallets/flask
//! ```

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use speed::prompt::PendingCounter;

const BUDGETS: [usize; 2] = [6_000, 8_000];
const SPEC_PATH: &str = "specs/reach.md";

/// One planted violation.
struct Case {
    name: &'static str,
    project: &'static str,
    /// The real commit whose change is reviewed (against its parent).
    commit: &'static str,
    /// The changed file the violation is planted in.
    file: &'static str,
    /// The violating lines go after the first line containing this.
    anchor: &'static str,
    lines: &'static [&'static str],
    /// The spec sentence they violate (one line of the project's spec).
    sentence: &'static str,
    /// The section the task references (the change's own topic; the
    /// violated sentence stands elsewhere in the spec).
    section: &'static str,
}

const CASES: &[Case] = &[
    Case {
        name: "ripgrep ignore: global gitignore relative to CWD",
        project: "ripgrep",
        commit: "b610d1cb",
        file: "crates/ignore/src/dir.rs",
        anchor: "self.global_gitignores_relative_to = Some(cwd.into());",
        lines: &[
            "        if std::env::var_os(\"RG_IGNORE_TRACE\").is_some() {",
            "            eprintln!(\"ignore: global gitignores now relative to a new CWD\");",
            "        }",
        ],
        sentence: "The ignore crate never reads environment variables and never writes to standard error: its behaviour is configured through `WalkBuilder` and `IgnoreBuilder` alone, and what it wants to say goes through the `log` crate.",
        section: "Directory walking",
    },
    Case {
        name: "ripgrep searcher: max matches moved into the searcher",
        project: "ripgrep",
        commit: "a6e0be3c",
        file: "crates/searcher/src/searcher/core.rs",
        anchor: "fn increment_count(&mut self) {",
        lines: &[
            "        if self.count % 1000 == 0 {",
            "            println!(\"searcher: {} matches so far\", self.count);",
            "        }",
        ],
        sentence: "The searcher never prints: it reports every match and context line to its `Sink`, and no code under `crates/searcher` writes to standard output.",
        section: "Printers",
    },
    Case {
        name: "ripgrep printer: --replace with --json",
        project: "ripgrep",
        commit: "292bc54e",
        file: "crates/printer/src/json.rs",
        anchor: "self.replacer.clear();",
        lines: &[
            "        let shown = std::str::from_utf8(bytes).expect(\"replacement input is UTF-8\");",
            "        let _ = shown.len();",
        ],
        sentence: "Nothing panics on the contents of a file searched: bytes that are not valid UTF-8 are searched, printed or written as a JSON `bytes` object in base64, and no `unwrap` or `expect` is called on data read from a file.",
        section: "Printers",
    },
    Case {
        name: "ripgrep globset: allow_unclosed_class",
        project: "ripgrep",
        commit: "f596a5d8",
        file: "crates/globset/src/glob.rs",
        anchor: "self.found_unclosed_class = true;",
        lines: &[
            "                    if self.chars.clone().count() > 4096 {",
            "                        panic!(\"glob too long after an unclosed class\");",
            "                    }",
        ],
        sentence: "Parsing a glob never panics: a pattern that cannot be parsed is an `Error` whose `ErrorKind` says why, returned to the caller.",
        section: "Ignore rules",
    },
    Case {
        name: "tokio broadcast: WeakSender",
        project: "tokio",
        commit: "4380c3d82",
        file: "tokio/src/sync/broadcast.rs",
        anchor: "pub fn upgrade(&self) -> Option<Sender<T>> {",
        lines: &[
            "        let weak = self.shared.num_weak_tx.load(Relaxed);",
            "        self.shared.num_weak_tx.store(weak, Relaxed);",
        ],
        sentence: "A count shared between threads (a channel's senders and receivers, a semaphore's permits) is changed only with an atomic read-modify-write operation; it is never loaded and stored back.",
        section: "Broadcast channel",
    },
    Case {
        name: "tokio runtime: task poll callbacks",
        project: "tokio",
        commit: "b8ac94ed7",
        file: "tokio/src/runtime/task_hooks.rs",
        anchor: "pub(crate) fn poll_start_callback(&self, id: super::task::Id) {",
        lines: &[
            "        // Give the hook's consumer a moment to catch up.",
            "        std::thread::sleep(std::time::Duration::from_micros(50));",
        ],
        sentence: "Task hooks run on the worker thread that polls the task: a hook never blocks the thread, never sleeps and takes no lock of the runtime.",
        section: "Runtime builder",
    },
    Case {
        name: "tokio broadcast: Sender::closed",
        project: "tokio",
        commit: "5c8cd3382",
        file: "tokio/src/sync/broadcast.rs",
        anchor: "pub async fn closed(&self) {",
        lines: &[
            "        while self.receiver_count() > 0 {",
            "            std::hint::spin_loop();",
            "        }",
        ],
        sentence: "No primitive waits by spinning: a task that waits for a channel, a lock or a notification registers its waker (with `Notify`, for instance) and yields; nothing spins or polls in a loop.",
        section: "Broadcast channel",
    },
    Case {
        name: "flask app: subdomain_matching=False",
        project: "flask",
        commit: "4995a775",
        file: "src/flask/app.py",
        anchor: "subdomain = self.url_map.default_subdomain or \"\"",
        lines: &["                print(\"url adapter for host\", request.host)"],
        sentence: "The application never prints and never logs a request's `Host` header or any other header: what it reports goes through `app.logger`, without request data.",
        section: "Routing and URL building",
    },
    Case {
        name: "flask wrappers: request limits",
        project: "flask",
        commit: "c7a53888",
        file: "src/flask/wrappers.py",
        anchor: "return current_app.config[\"MAX_CONTENT_LENGTH\"]",
        lines: &[
            "        Request._max_content_length = current_app.config[\"MAX_CONTENT_LENGTH\"]",
        ],
        sentence: "Configuration is per application: a value read from `app.config` is never stored on a class, a module or a global, so two applications in one process never share it.",
        section: "Requests and limits",
    },
    Case {
        name: "flask app: open_resource encoding",
        project: "flask",
        commit: "28d5a4d7",
        file: "src/flask/app.py",
        anchor: "path = os.path.join(self.root_path, resource)",
        lines: &[
            "        if os.path.isabs(resource):",
            "            path = resource",
        ],
        sentence: "No path a caller gives leaves the directory it is resolved under: `open_resource`, `send_from_directory` and the template loader refuse an absolute path or one that climbs out with `..`.",
        section: "Resources and files",
    },
];

fn main() {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default();
    let pairs = std::env::var_os("SPEED_REACH_PAIRS")
        .map(PathBuf::from)
        .unwrap_or_else(|| home.join("corpus/git"));
    let counter =
        std::sync::Arc::new(PendingCounter::start("o200k_base").expect("o200k_base is built in"));
    counter.get().expect("o200k_base builds");
    let temp = tempfile::tempdir().expect("temp dir");
    // SPEED_REACH_DIR keeps the repositories (each at its last case) to
    // look at; SPEED_REACH_CASE runs only the cases whose name holds it.
    let kept = std::env::var_os("SPEED_REACH_DIR").map(PathBuf::from);
    let work = kept.as_deref().unwrap_or(temp.path());
    let only = std::env::var("SPEED_REACH_CASE").unwrap_or_default();
    let started = Instant::now();
    let mut reached = [0usize; BUDGETS.len()];
    let mut measured = 0;
    println!(
        "{:<52} {:>7} {:>6}  {:<28} {:<28}",
        "case", "lines", "spec", "6,000 tokens", "8,000 tokens"
    );
    for case in CASES.iter().filter(|c| c.name.contains(&only)) {
        let source = pairs.join(case.project);
        if !source.join(".git").exists() && !source.join("HEAD").exists() {
            println!(
                "{:<52} skipped: no repository at {}",
                case.name,
                source.display()
            );
            continue;
        }
        let repo = work.join(case.project);
        if !repo.exists() {
            git(
                work,
                &[
                    "clone",
                    "-q",
                    "--shared",
                    "--no-checkout",
                    &source.display().to_string(),
                    case.project,
                ],
            );
        }
        let (changed, spec) = plant(&repo, case);
        task(&repo, case);
        let spec_tokens = counter.get().expect("tokenizer").count(&spec);
        measured += 1;
        let mut cells = Vec::new();
        for (b, budget) in BUDGETS.iter().enumerate() {
            let outcome = review(&repo, *budget, case);
            if outcome.reached() {
                reached[b] += 1;
            }
            cells.push(outcome.cell());
        }
        println!(
            "{:<52} {:>7} {:>6}  {:<28} {:<28}",
            case.name, changed, spec_tokens, cells[0], cells[1]
        );
    }
    println!(
        "reached: {} of {measured} at 6,000 tokens, {} of {measured} at 8,000 tokens ({:?})",
        reached[0],
        reached[1],
        started.elapsed()
    );
}

/// What one review's parts held.
struct Outcome {
    parts: usize,
    /// The parts (1-based) whose prompt shows every violating line.
    lines_in: Vec<usize>,
    /// The parts whose prompt holds the violated sentence.
    sentence_in: Vec<usize>,
}

impl Outcome {
    fn reached(&self) -> bool {
        self.lines_in.iter().any(|p| self.sentence_in.contains(p))
    }

    /// `yes (part 2 of 3)`, or what is missing where.
    fn cell(&self) -> String {
        let list = |v: &[usize]| {
            if v.is_empty() {
                "none".to_string()
            } else {
                v.iter().map(usize::to_string).collect::<Vec<_>>().join(",")
            }
        };
        if self.reached() {
            let part = self.lines_in.iter().find(|p| self.sentence_in.contains(p));
            format!("yes (part {} of {})", part.unwrap_or(&0), self.parts)
        } else {
            format!(
                "NO lines {} spec {} of {}",
                list(&self.lines_in),
                list(&self.sentence_in),
                self.parts
            )
        }
    }
}

/// Branches `main` (the commit's parent with the spec) and `task` (the
/// commit with the spec and the planted lines); returns the change's size
/// in lines (+ and −).
fn plant(repo: &Path, case: &Case) -> (usize, String) {
    let parent = format!("{}^", case.commit);
    let spec = spec(repo, case);
    assert!(
        spec.contains(case.sentence),
        "{}: the sentence is in the spec",
        case.name
    );
    let spec_blob = blob(repo, &spec);
    let base = commit(repo, &parent, &[(SPEC_PATH, &spec_blob)], &parent, "main");
    let original = git(repo, &["show", &format!("{}:{}", case.commit, case.file)]);
    let mut planted = String::new();
    let mut done = false;
    for line in original.split_inclusive('\n') {
        planted.push_str(line);
        if !done && line.contains(case.anchor) {
            for l in case.lines {
                planted.push_str(l);
                planted.push('\n');
            }
            done = true;
        }
    }
    assert!(done, "{}: the anchor is in {}", case.name, case.file);
    let file_blob = blob(repo, &planted);
    let head = commit(
        repo,
        case.commit,
        &[(SPEC_PATH, &spec_blob), (case.file, &file_blob)],
        &base,
        "task",
    );
    git(repo, &["update-ref", "refs/heads/main", &base]);
    git(repo, &["update-ref", "refs/heads/task", &head]);
    git(repo, &["symbolic-ref", "HEAD", "refs/heads/main"]);
    let stat = git(repo, &["diff", "--numstat", "main", "task"]);
    let changed = stat
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            Some(f.next()?.parse::<usize>().ok()? + f.next()?.parse::<usize>().ok()?)
        })
        .sum();
    (changed, spec)
}

/// `speed review --task-id 1 --dry-run --json --budget N`, the real
/// binary: each part's prompt, and whether it holds the lines and the
/// sentence.
fn review(repo: &Path, budget: usize, case: &Case) -> Outcome {
    let budget_arg = budget.to_string();
    let out = Command::new(env!("CARGO_BIN_EXE_speed"))
        .current_dir(repo)
        .args([
            "review",
            "--task-id",
            "1",
            "--dry-run",
            "--json",
            "--budget",
            &budget_arg,
        ])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", repo)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .stdin(Stdio::null())
        .output()
        .expect("speed runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}: speed exited {:?}: {}",
        case.name,
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_str(&stdout).expect("--json is JSON");
    let review = &json["reviews"][0];
    let prompt = review["prompt"]
        .as_str()
        .expect("a dry run shows its prompt");
    let prompts: Vec<&str> = if prompt.starts_with("===== part 1 of ") {
        prompt.split("===== part ").skip(1).collect()
    } else {
        vec![prompt]
    };
    for part in review["parts"].as_array().into_iter().flatten() {
        assert!(
            part["tokens"].as_u64().unwrap_or(0) <= budget as u64,
            "{}: every part within the budget",
            case.name
        );
    }
    let mut outcome = Outcome {
        parts: prompts.len(),
        lines_in: Vec::new(),
        sentence_in: Vec::new(),
    };
    for (n, text) in prompts.iter().enumerate() {
        if case.lines.iter().all(|l| text.contains(l.trim_start())) {
            outcome.lines_in.push(n + 1);
        }
        if text.contains(case.sentence) {
            outcome.sentence_in.push(n + 1);
        }
    }
    outcome
}

/// The task a developer would have planned for the commit: its message,
/// and a reference to the spec section the change is about.
fn task(repo: &Path, case: &Case) {
    let subject = git(repo, &["log", "-1", "--format=%s", case.commit]);
    let body = git(repo, &["log", "-1", "--format=%b", case.commit]);
    let description = body
        .split("\n\n")
        .next()
        .filter(|p| !p.trim().is_empty())
        .unwrap_or(subject.trim())
        .replace('\n', " ");
    let task = serde_json::json!({
        "id": "1",
        "title": subject.trim(),
        "status": "done",
        "branch": "task",
        "description": description,
        "acceptance_criteria": [
            {"criterion": subject.trim(), "verify_by": "test"}
        ],
        "spec_references": [{"spec": SPEC_PATH, "section": case.section}]
    });
    let dir = repo.join(".speed").join("tasks");
    std::fs::create_dir_all(&dir).expect("tasks dir");
    std::fs::write(
        dir.join("1.json"),
        serde_json::to_string_pretty(&task).expect("task JSON"),
    )
    .expect("task file");
}

fn git(dir: &Path, args: &[&str]) -> String {
    git_in(dir, args, None, None)
}

fn git_in(dir: &Path, args: &[&str], index: Option<&Path>, input: Option<&str>) -> String {
    let mut cmd = Command::new("git");
    cmd.current_dir(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "bench")
        .env("GIT_AUTHOR_EMAIL", "bench@speed.dev")
        .env("GIT_COMMITTER_NAME", "bench")
        .env("GIT_COMMITTER_EMAIL", "bench@speed.dev")
        .env("GIT_AUTHOR_DATE", "1700000000 +0000")
        .env("GIT_COMMITTER_DATE", "1700000000 +0000")
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(index) = index {
        cmd.env("GIT_INDEX_FILE", index);
    }
    let mut child = cmd.spawn().expect("git runs");
    if let Some(input) = input {
        use std::io::Write;
        let mut stdin = child.stdin.take().expect("stdin");
        stdin.write_all(input.as_bytes()).expect("git reads");
    }
    let out = child.wait_with_output().expect("git ends");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn blob(repo: &Path, text: &str) -> String {
    git_in(repo, &["hash-object", "-w", "--stdin"], None, Some(text))
        .trim()
        .to_string()
}

/// A commit of `tree_of`'s tree with `files` (path, blob) replaced, on
/// `parent`.
fn commit(
    repo: &Path,
    tree_of: &str,
    files: &[(&str, &str)],
    parent: &str,
    message: &str,
) -> String {
    let index = repo.join(".git").join("reach-index");
    let _ = std::fs::remove_file(&index);
    git_in(repo, &["read-tree", tree_of], Some(&index), None);
    for (path, blob) in files {
        let info = format!("100644,{blob},{path}");
        git_in(
            repo,
            &["update-index", "--add", "--cacheinfo", &info],
            Some(&index),
            None,
        );
    }
    let tree = git_in(repo, &["write-tree"], Some(&index), None);
    let parent = git(repo, &["rev-parse", parent]);
    git(
        repo,
        &[
            "commit-tree",
            tree.trim(),
            "-p",
            parent.trim(),
            "-m",
            message,
        ],
    )
    .trim()
    .to_string()
}

/// The project's spec: its sections, the cases' sentences among sentences
/// no case violates, then the project's own documentation (up to
/// `APPENDIX_WORDS` words, whole sections, headings one level down), as a
/// product spec of realistic size holds much that a change does not touch.
fn spec(repo: &Path, case: &Case) -> String {
    let mut out = match case.project {
        "ripgrep" => RIPGREP_SPEC,
        "tokio" => TOKIO_SPEC,
        "flask" => FLASK_SPEC,
        other => panic!("no spec for {other}"),
    }
    .to_string();
    let mut words = 0;
    'docs: for path in docs(case.project) {
        let text = match path.strip_prefix("fixtures/") {
            Some(_) => std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path))
                .expect("the fixture is in the repository"),
            None => git(repo, &["show", &format!("{}:{path}", case.commit)]),
        };
        let text = if path.ends_with(".rs") {
            text.lines()
                .filter_map(|l| l.strip_prefix("//!"))
                .map(|l| l.strip_prefix(' ').unwrap_or(l))
                .collect::<Vec<_>>()
                .join("\n")
        } else {
            text
        };
        out.push_str(&format!("\n## Reference: {path}\n"));
        for section in sections(&text) {
            let n = section.split_whitespace().count();
            if words + n > APPENDIX_WORDS {
                break 'docs;
            }
            words += n;
            out.push('\n');
            out.push_str(&section);
        }
    }
    out
}

/// Words of the project's documentation appended to its spec.
const APPENDIX_WORDS: usize = 2_500;

/// The documentation appended to a project's spec, in order.
fn docs(project: &str) -> &'static [&'static str] {
    match project {
        "ripgrep" => &[
            "crates/ignore/README.md",
            "crates/globset/README.md",
            "crates/searcher/README.md",
            "crates/printer/README.md",
            "GUIDE.md",
        ],
        "tokio" => &["tokio/README.md", "tokio/src/sync/mod.rs"],
        _ => &["fixtures/specs-in-practice/flask/config.md"],
    }
}

/// A Markdown text cut at its headings, each heading one level down (`#`
/// becomes `###`, under the reference's `##`); a `#` inside a code fence is
/// not a heading.
fn sections(text: &str) -> Vec<String> {
    let mut out: Vec<String> = vec![String::new()];
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        if !fenced && line.starts_with('#') {
            out.push(format!("##{line}\n"));
        } else {
            let last = out.last_mut().expect("one section");
            last.push_str(line);
            last.push('\n');
        }
    }
    out.retain(|s| !s.trim().is_empty());
    out
}

const RIPGREP_SPEC: &str = r#"# ripgrep: product specification

ripgrep searches directories recursively for a regex pattern, respecting
ignore rules. This specification states what each crate of the workspace
promises; a change that breaks one of these sentences is not merged.

## Command line and flags

Every flag is defined once in `crates/core/flags/defs.rs`, with its short and long names, its category and its documentation; the man page, the shell completions and `--help` are generated from those definitions.
A flag that takes a value validates it when the arguments are parsed, and reports a bad value with the flag's name.
Flags are turned into a `HiArgs` in `crates/core/flags/hiargs.rs`; nothing downstream reads the raw arguments again.
Negation flags (`--no-FLAG`) exist for every switch a config file may set.

## Ignore rules

The ignore crate decides which files are searched: `.gitignore`, `.ignore`, `.rgignore`, the global gitignore and explicit ignore files, in that order of precedence, later rules overriding earlier ones.
A global gitignore is matched relative to the directory ripgrep was started in; when that directory is unknown, global gitignores are skipped rather than matched wrongly.
The ignore crate never reads environment variables and never writes to standard error: its behaviour is configured through `WalkBuilder` and `IgnoreBuilder` alone, and what it wants to say goes through the `log` crate.
Matching a path against the rules allocates nothing when the path is already absolute.

## Directory walking

The parallel walker visits every directory entry exactly once and stops a subtree when its visitor returns `WalkState::Skip`.
Symbolic links are followed only with `--follow`, and a loop of links is reported as an error for that entry, not for the whole walk.
Errors reading a directory are reported with the path and the walk goes on.

## Globs

Parsing a glob never panics: a pattern that cannot be parsed is an `Error` whose `ErrorKind` says why, returned to the caller.
A `GlobSet` matches a path against all of its globs in one pass and reports the indices of every glob that matched.
Options such as case insensitivity, literal separators and unclosed classes are set on `GlobBuilder` before the glob is built, never after.

## Searcher

The searcher never prints: it reports every match and context line to its `Sink`, and no code under `crates/searcher` writes to standard output.
Binary detection, line terminators, context before and after a match, and the maximum number of matches are the searcher's configuration; a printer only formats what it is given.

## Printers

The standard printer writes matches with their path, line number and column as the flags ask, with color only when the output is a terminal or `--color=always` is given.
Each JSON message is one line: `begin`, `match`, `context`, `end` and `summary`, with the statistics of the search in `end` and `summary`.
A replacement given with `--replace` is applied to what a printer shows, never to the file searched.

## File contents

A search of a file that is not valid UTF-8 never fails for that reason; invalid bytes are searched like any other.
Nothing panics on the contents of a file searched: bytes that are not valid UTF-8 are searched, printed or written as a JSON `bytes` object in base64, and no `unwrap` or `expect` is called on data read from a file.
Binary files are detected by a NUL byte and, unless `--binary` or `-a` is given, the search of a binary file stops at the first NUL byte with a warning.

## Exit status and errors

ripgrep exits with 0 when a match was found, 1 when none was, and 2 when an error occurred, even if a match was also found, unless `--quiet` stopped the search at the first match.
Error messages name the file and the operation that failed and go to standard error; they never include a Rust backtrace.

## Performance

No work is done per line that the search does not need: matches are found in large buffers, and lines are only split out around a match.
Memory maps are used only where they are faster and safe, never for files that may be truncated while being searched.
"#;

const TOKIO_SPEC: &str = r#"# tokio: product specification

tokio is an asynchronous runtime for Rust: a scheduler, I/O and timer
drivers, and synchronization primitives. This specification states what
each part promises to the programs built on it.

## Runtime builder

Every option of `runtime::Builder` returns `&mut Self`, is documented with an example, and is checked when `build()` is called: an invalid value is an `io::Error` from `build()`, never a panic in the option's setter.
Unstable options are available only with `--cfg tokio_unstable` and say so in their documentation.
Defaults are those of the documentation: a worker per CPU core, a blocking pool of 512 threads, an event interval of 61 and a global queue interval of 31.

## Task hooks

The runtime calls the hooks a builder sets (`on_task_spawn`, `on_before_task_poll`, `on_after_task_poll`, `on_task_terminate`) with the task's `TaskMeta`, once per event.
Task hooks run on the worker thread that polls the task: a hook never blocks the thread, never sleeps and takes no lock of the runtime.
A runtime built without hooks pays nothing for them: no allocation and no indirect call per poll.

## Scheduler

The multi-thread scheduler steals work between workers and polls each task's future on one worker at a time; the current-thread scheduler polls every task on the thread that calls `block_on`.
A task yields to the scheduler when its cooperative budget is spent, so one busy task cannot starve the others.
`block_in_place` and `spawn_blocking` move blocking work off the workers.

## Broadcast channel

A broadcast channel delivers every value sent to every receiver subscribed at the time of the send; a receiver that falls behind by more than the capacity gets `RecvError::Lagged` with the number of values it missed.
A `WeakSender` does not keep the channel open: once the last strong `Sender` is dropped, `upgrade` returns `None` and receivers see `Closed`.
`Sender::closed` completes once every receiver has been dropped.
Sending never blocks and never waits for a receiver.

## Other synchronization primitives

`Mutex`, `RwLock` and `Semaphore` are fair: waiters acquire in the order they asked.
`Notify::notify_waiters` wakes every task waiting at the time of the call and no task that starts waiting later.
`mpsc` channels apply backpressure through their capacity; the unbounded channel is the only one that allocates per message.

## Atomics and waiting

A count shared between threads (a channel's senders and receivers, a semaphore's permits) is changed only with an atomic read-modify-write operation; it is never loaded and stored back.
No primitive waits by spinning: a task that waits for a channel, a lock or a notification registers its waker (with `Notify`, for instance) and yields; nothing spins or polls in a loop.
Orderings are the weakest that are correct, and each `Relaxed` access says in a comment why it is enough.

## Time

Timers fire no earlier than their deadline, with a resolution of one millisecond.
`Interval` catches up on missed ticks according to its `MissedTickBehavior`.
The time driver is paused in tests only through `time::pause`, never implicitly.

## Cancellation and shutdown

Dropping a `JoinHandle` detaches the task; `abort` cancels it at its next yield point.
Shutting a runtime down cancels its tasks and waits for the blocking pool up to the timeout given to `shutdown_timeout`.
"#;

const FLASK_SPEC: &str = r#"# Flask: product specification

Flask is a WSGI web framework: an application object, routing, request and
response wrappers, templates, sessions and a command line. This
specification states what applications may rely on.

## Application and configuration

The application object is created once per process and configured through `app.config` before the first request; configuration keys are upper case and documented in the configuration reference.
`SECRET_KEY` may be a single key or, with `SECRET_KEY_FALLBACKS`, a list of older keys that are still accepted to read a session but never used to sign one.
Environment files (`.env`, `.flaskenv`) are loaded by the CLI only, in a documented order of precedence, never by the application object itself.
Configuration is per application: a value read from `app.config` is never stored on a class, a module or a global, so two applications in one process never share it.

## Routing and URL building

Routes are matched against the path and, with `host_matching` or `subdomain_matching`, against the host; `SERVER_NAME` sets the domain used to build external URLs and, with subdomain matching, the domain subdomains are matched under.
When `subdomain_matching` is false, only the default subdomain is matched, whatever the request's host.
`url_for` builds URLs for any endpoint inside a request or an application context and raises `BuildError` for an endpoint that does not exist.

## Requests and limits

The request object wraps the WSGI environ; its form, files and JSON are parsed on first access.
A request's limits (`max_content_length`, `max_form_memory_size`, `max_form_parts`) come from the app's config or are set on that request alone.
Exceeding a limit raises `RequestEntityTooLarge` (413) before the body is read further.

## Responses

A view may return a string, bytes, a dict or list (sent as JSON), a generator, a `Response`, or a tuple adding a status and headers.
JSON responses are produced by `app.json`, which sorts keys only when configured to.

## Resources and files

`open_resource` opens a file relative to the application's `root_path`.
Resources are opened for reading only, in binary mode unless an encoding is given for text mode; `open_instance_resource` may also write under `instance_path`.
`send_file` and `send_from_directory` never serve a path outside the directory they are given.

## Logging and security

The application never prints and never logs a request's `Host` header or any other header: what it reports goes through `app.logger`, without request data.
No path a caller gives leaves the directory it is resolved under: `open_resource`, `send_from_directory` and the template loader refuse an absolute path or one that climbs out with `..`.
Secrets (`SECRET_KEY`, its fallbacks) never appear in an error page, a log line or a response.

## Sessions

The default session is a signed cookie; its contents are readable by the client and must not hold secrets.
A session is saved only when it was modified, or on every request when `SESSION_REFRESH_EACH_REQUEST` is set and the session is permanent.

## Blueprints

A blueprint records its routes, error handlers and hooks and registers them on an application; registering a blueprint twice under the same name is an error.
Blueprint resources (`open_resource`, static files, templates) are resolved relative to the blueprint's own `root_path`.

## Command line

`flask run` serves the application with the development server, which is never to be used in production and says so when it starts.
Commands registered with `app.cli` run inside an application context.
"#;
