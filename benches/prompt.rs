//! Time to assemble a review prompt (everything up to the model call).
//!
//! `cargo bench --bench prompt` builds a generated repository of about 2,000
//! files with a 200-file task diff and times `speed review --dry-run`'s
//! preparation in-process. Set `SPEED_BENCH_REPO=/path/to/repo` (with
//! `SPEED_BENCH_BRANCH`, default the checked-out branch, and
//! `SPEED_BENCH_SPEC`, default `README.md`) to time a real repository too.

use std::path::Path;
use std::time::{Duration, Instant};

use clap::Parser;
use git2::{Repository as Git, Signature, Time};
use speed::cli::Cli;
use speed::git::Repository;
use speed::prompt::{PendingCounter, Templates};
use speed::review::{Context, prepare};
use speed::settings::{CommandSettings, ReviewSettings, Settings};
use speed::work::Subject;

const FILES: usize = 2_000;
const CHANGED: usize = 200;

fn main() {
    let counter_started = Instant::now();
    let counter =
        std::sync::Arc::new(PendingCounter::start("o200k_base").expect("o200k_base is built in"));
    counter.get().expect("o200k_base builds");
    eprintln!("tokenizer load: {:?}", counter_started.elapsed());

    let dir = tempfile::tempdir().expect("temp dir");
    let started = Instant::now();
    generate(dir.path());
    eprintln!(
        "generated repository: {FILES} files, {CHANGED}-file diff, in {:?}",
        started.elapsed()
    );
    let subject = Subject::Branch {
        branch: "task".to_string(),
        specs: vec!["specs/product/app.md".to_string()],
        criteria: Vec::new(),
        criteria_file: None,
    };
    measure("generated repository", dir.path(), subject, &counter);

    if let Ok(path) = std::env::var("SPEED_BENCH_REPO") {
        let path = Path::new(&path);
        let repo = Repository::discover(path).expect("SPEED_BENCH_REPO is a git repository");
        let branch = std::env::var("SPEED_BENCH_BRANCH")
            .ok()
            .or_else(|| repo.current_branch())
            .expect("SPEED_BENCH_BRANCH or a checked-out branch");
        let spec = std::env::var("SPEED_BENCH_SPEC").unwrap_or_else(|_| "README.md".to_string());
        let subject = Subject::Branch {
            branch,
            specs: vec![spec],
            criteria: Vec::new(),
            criteria_file: None,
        };
        measure(&path.display().to_string(), repo.root(), subject, &counter);
    }
}

fn measure(name: &str, root: &Path, subject: Subject, counter: &std::sync::Arc<PendingCounter>) {
    // A dry run never writes the symbol cache; a review reads and fills it.
    for dry_run in [true, false] {
        let label = if dry_run {
            format!("{name} (dry run, no symbol cache)")
        } else {
            format!("{name} (review, symbol cache warm)")
        };
        measure_one(&label, root, subject.clone(), counter, dry_run);
    }
}

fn measure_one(
    name: &str,
    root: &Path,
    subject: Subject,
    counter: &std::sync::Arc<PendingCounter>,
    dry_run: bool,
) {
    let repo = Repository::discover(root).expect("repository");
    let mut config = settings(&repo, dry_run).review;
    // The preparation alone, as before parts existed: a review in parts
    // assembles more prompts, which `review.max_parts` = 1 leaves out.
    config.max_parts = 1;
    let ctx = Context {
        root: repo.state_root().to_path_buf(),
        worktree: repo.root().to_path_buf(),
        templates: Templates::from_overrides(&config.prompts).expect("templates"),
        calls: speed::llm::pacing::Slots::new(config.concurrency),
        config,
        counter: counter.clone(),
        actor: speed::tasks::Actor::new("bench", None),
    };
    let prepare = || match prepare::read(&ctx, subject.clone()).expect("read") {
        prepare::Read::Inputs(inputs) => prepare::prepare(&ctx, *inputs).expect("prepare"),
        prepare::Read::NothingImplemented(_) => panic!("the bench's branch changes files"),
    };
    // The first run is cold (and fills the symbol cache when allowed).
    let cold = Instant::now();
    let first = prepare();
    let cold = cold.elapsed();
    let mut times = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        let p = prepare();
        times.push(t.elapsed());
        assert!(p.composed.tokens() <= p.composed.budget);
    }
    times.sort();
    println!(
        "{name}: {} changed files, prompt {} tokens of {}; cold {:?}, warm median {:?} (min {:?}, max {:?})",
        first.resolved.diff.files.len(),
        first.composed.tokens(),
        first.composed.budget,
        cold,
        times[times.len() / 2],
        times[0],
        times[times.len() - 1],
    );
    let _: Duration = cold;
    if dry_run {
        numbering_cost(&first.resolved.diff, counter);
    }
}

/// What the line numbers of the prompt's diff cost: every hunk of the diff
/// counted as plain unified diff and as the prompt shows it.
fn numbering_cost(diff: &speed::git::Diff, counter: &PendingCounter) {
    let counter = counter.get().expect("tokenizer");
    let (mut plain, mut numbered) = (0, 0);
    for hunk in diff.files.iter().flat_map(|f| &f.hunks) {
        plain += counter.count(&hunk.render());
        numbered += counter.count(&speed::prompt::numbered_hunk(hunk));
    }
    println!(
        "  diff line numbers: {plain} tokens of hunks become {numbered} (+{:.1}%)",
        (numbered as f64 - plain as f64) * 100.0 / plain.max(1) as f64
    );
}

/// The settings a `speed review --no-guardian --concurrency 1 [--dry-run]`
/// run in the repository would resolve (its own config, read at main).
fn settings(repo: &Repository, dry_run: bool) -> ReviewSettings {
    let mut args = vec!["speed", "review", "--no-guardian", "--concurrency", "1"];
    if dry_run {
        args.push("--dry-run");
    }
    let cli = Cli::try_parse_from(args).expect("bench flags parse");
    let resolved = Settings::resolve(cli, repo.root().to_path_buf(), Ok(repo), &|_| None)
        .expect("bench settings resolve");
    match resolved.command {
        CommandSettings::Review(review) => *review,
        other => panic!("expected review settings, got {other:?}"),
    }
}

/// A repository with FILES source files on main and a branch changing CHANGED
/// of them (Rust, Python, tests, docs, a lockfile), built with git2.
fn generate(root: &Path) {
    let git = Git::init(root).expect("init");
    let sig = Signature::new("bench", "bench@speed.dev", &Time::new(1_700_000_000, 0)).unwrap();
    let mut spec = String::from("# App\n\nThe product spec.\n");
    for s in 0..40 {
        spec.push_str(&format!(
            "\n## Area {s}\n\nThe module_{s} handlers must validate input and return errors with the record id.\nEach function_{s} call is logged once.\n"
        ));
    }
    let mut files: Vec<(String, String)> = vec![("specs/product/app.md".to_string(), spec)];
    for i in 0..FILES {
        let (path, body) = match i % 4 {
            0 | 1 => (format!("src/mod_{}/file_{i}.rs", i % 50), rust_file(i, 0)),
            2 => (format!("py/pkg_{}/mod_{i}.py", i % 30), python_file(i, 0)),
            _ => (format!("tests/test_{i}.rs"), rust_file(i, 0)),
        };
        files.push((path, body));
    }
    let base = commit(&git, &sig, None, &files, "main");
    git.branch("main", &git.find_commit(base).unwrap(), true)
        .unwrap();
    for (i, file) in files
        .iter_mut()
        .enumerate()
        .skip(1)
        .step_by(FILES / CHANGED)
    {
        file.1 = if file.0.ends_with(".py") {
            python_file(i, 1)
        } else {
            rust_file(i, 1)
        };
    }
    files.push(("Cargo.lock".to_string(), "# lock\n".repeat(2000)));
    let head = commit(&git, &sig, Some(base), &files, "task");
    git.branch("task", &git.find_commit(head).unwrap(), true)
        .unwrap();
    git.set_head("refs/heads/main").unwrap();
}

fn rust_file(i: usize, rev: usize) -> String {
    let mut out = format!("//! File {i}.\n\nuse crate::mod_{}::Helper;\n\n", i % 50);
    for f in 0..12 {
        out.push_str(&format!(
            "pub fn function_{i}_{f}(x: u32) -> u32 {{\n    let y = x + {f};\n    Helper::check(y{})\n}}\n\n",
            if rev > 0 && f % 3 == 0 { " * 2" } else { "" }
        ));
    }
    out
}

fn python_file(i: usize, rev: usize) -> String {
    let mut out = format!("\"\"\"Module {i}.\"\"\"\nfrom .base import helper\n\n");
    for f in 0..12 {
        out.push_str(&format!(
            "def handler_{i}_{f}(record):\n    value = helper(record){}\n    return value\n\n",
            if rev > 0 && f % 3 == 0 { " + 1" } else { "" }
        ));
    }
    out
}

fn commit(
    git: &Git,
    sig: &Signature,
    parent: Option<git2::Oid>,
    files: &[(String, String)],
    message: &str,
) -> git2::Oid {
    let mut index = git2::Index::new().unwrap();
    for (path, body) in files {
        let blob = git.blob(body.as_bytes()).unwrap();
        let entry = git2::IndexEntry {
            ctime: git2::IndexTime::new(0, 0),
            mtime: git2::IndexTime::new(0, 0),
            dev: 0,
            ino: 0,
            mode: 0o100644,
            uid: 0,
            gid: 0,
            file_size: body.len() as u32,
            id: blob,
            flags: path.len().min(0xfff) as u16,
            flags_extended: 0,
            path: path.as_bytes().to_vec(),
        };
        index.add(&entry).unwrap();
    }
    let tree = git.find_tree(index.write_tree_to(git).unwrap()).unwrap();
    let parents: Vec<git2::Commit> = parent
        .map(|p| git.find_commit(p).unwrap())
        .into_iter()
        .collect();
    let parent_refs: Vec<&git2::Commit> = parents.iter().collect();
    git.commit(None, sig, sig, message, &tree, &parent_refs)
        .unwrap()
}
