//! Daily use in a terminal and on a branch: shell completions and the man
//! page, `--color` beside NO_COLOR, what a review did to the task, the batch
//! summary and nits naming the feature, `--spec FILE#Section`, and a branch
//! that edits its own spec.

use crate::support::model_server::{ModelServer, Reply};
use crate::support::repo::{self, TempRepo};
use crate::support::speed::{Run, speed};
use crate::support::verdicts::{self, text};
use serde_json::{Value, json};

fn configure(repo: &TempRepo, server: &ModelServer) {
    repo.config(&format!(
        "[llm]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"test-model\"\ntimeout_secs = 5\nmax_retries = 0\nretry_base_ms = 10\n[guardian]\nenabled = false\n",
        server.url()
    ));
}

#[test]
fn completions_for_each_shell_know_the_commands_and_flags() {
    // Outside any repository: completions need none.
    let dir = tempfile::tempdir().unwrap();
    for (shell, marker) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef speed"),
        ("fish", "complete -c speed"),
    ] {
        let run = speed(dir.path(), &["completions", shell], &[]);
        assert_eq!(run.code, 0, "{shell}: {}", run.transcript());
        assert!(run.stdout.contains(marker), "{shell}: {}", run.stdout);
        // fish spells a long flag `-l name`.
        let flag = |name: &str| match shell {
            "fish" => format!("-l {name}"),
            _ => format!("--{name}"),
        };
        let mut words = vec![
            "review".to_string(),
            "nits".to_string(),
            "sarif".to_string(),
            "notes".to_string(),
            "fetch".to_string(),
        ];
        words.extend(["format", "color", "task-id", "remote"].map(flag));
        for word in words {
            assert!(run.stdout.contains(&word), "{shell} lacks {word}");
        }
        assert!(run.stderr.is_empty(), "{}", run.stderr);
    }
    let run = speed(dir.path(), &["completions", "tcsh"], &[]);
    assert_eq!(run.code, 2, "{}", run.transcript());
}

#[test]
fn man_page_covers_every_command_and_the_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let run = speed(dir.path(), &["man"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let page = &run.stdout;
    assert!(
        page.starts_with(".ie \\n(.g .ds Aq") || page.contains(".TH speed 1"),
        "{page}"
    );
    for needle in [
        ".TH speed 1",
        ".SH \"SPEED REVIEW\"",
        ".SH \"SPEED NITS\"",
        ".SH \"SPEED COMPLETIONS\"",
        ".SH \"SPEED NOTES\"",
        "\\-\\-format",
        ".SH \"EXIT STATUS\"",
        "NO_COLOR",
    ] {
        assert!(page.contains(needle), "the man page lacks {needle:?}");
    }
    // A roff line starting with a quote or a dot from help text would be
    // read as a request: clap_mangen escapes them, so every request is one
    // of roff's own.
    for line in page.lines().filter(|l| l.starts_with('.')) {
        let request: String = line[1..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect();
        assert!(
            [
                "TH", "SH", "SS", "TP", "PP", "B", "I", "RS", "RE", "br", "ie", "el", "ds", "IP",
                "nf", "fi", "sp", "in", "TQ"
            ]
            .contains(&request.as_str()),
            "unexpected roff request: {line}"
        );
    }
}

/// Task 1 approved with a nit, on the example.
fn approved_run(args: &[&str], env: &[(&str, &str)]) -> Run {
    let repo = repo::example();
    let server = ModelServer::start(|_| Reply::openai(&text(&verdicts::approve_task_1())));
    configure(&repo, &server);
    let mut all = vec!["review", "--task-id", "1"];
    all.extend_from_slice(args);
    speed(repo.path(), &all, env)
}

#[test]
fn color_follows_the_flag_then_no_color() {
    let ansi = |run: &Run| run.stdout.contains("\u{1b}[");
    // stdout is a pipe here: auto means no colour.
    let run = approved_run(&[], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(!ansi(&run), "{}", run.stdout);
    let run = approved_run(&["--color", "always"], &[]);
    assert!(ansi(&run), "{}", run.stdout);
    assert!(
        run.stdout.contains("\u{1b}[32m✓ Task 1: approved"),
        "{}",
        run.stdout
    );
    // The flag wins over NO_COLOR, as no-color.org asks.
    let run = approved_run(&["--color", "always"], &[("NO_COLOR", "1")]);
    assert!(ansi(&run), "{}", run.stdout);
    let run = approved_run(&["--color", "never"], &[]);
    assert!(!ansi(&run));
    // Machine formats are never coloured.
    let run = approved_run(&["--color", "always", "--json"], &[]);
    assert!(!ansi(&run));
    serde_json::from_str::<Value>(&run.stdout).unwrap();
}

#[test]
fn the_terminal_says_what_the_review_did_to_the_task() {
    let run = approved_run(&[], &[]);
    assert!(
        run.stdout
            .contains("→ library-catalog/1 is approved; its status stays done"),
        "{}",
        run.stdout
    );

    let repo = repo::example();
    let server = ModelServer::start(|_| Reply::openai(&text(&verdicts::request_changes_task_2())));
    configure(&repo, &server);
    let run = speed(repo.path(), &["review", "--task-id", "2"], &[]);
    assert_eq!(run.code, 50, "{}", run.transcript());
    let line = run
        .stdout
        .lines()
        .find(|l| l.contains("→ library-catalog/2"))
        .unwrap_or_else(|| panic!("{}", run.stdout));
    assert!(
        line.contains("is back to pending with") && line.ends_with("findings (revision 1)"),
        "{line}"
    );

    // Past review.max_revisions (2): the third request fails the task (a
    // task whose history names no rejection of this head: a new attempt).
    let mut task = repo.task("2");
    task["status"] = json!("done");
    task["revision_count"] = json!(2);
    task["review_history"] = json!([]);
    repo.write(&repo.task_path("2"), &task.to_string());
    let run = speed(repo.path(), &["review", "--task-id", "2"], &[]);
    assert_eq!(run.code, 50, "{}", run.transcript());
    assert!(
        run.stdout
            .contains("→ library-catalog/2 failed: rejected 3 times, more than review.max_revisions (2) allows; the last review: "),
        "{}",
        run.stdout
    );
}

#[test]
fn summary_and_nits_name_the_feature_beside_the_id() {
    let repo = repo::example();
    let server = ModelServer::start(|req| {
        if req.body.contains("id: 2") {
            Reply::openai(&text(&verdicts::request_changes_task_2()))
        } else {
            Reply::openai(&text(&verdicts::approve_task_1()))
        }
    });
    configure(&repo, &server);
    let run = speed(
        repo.path(),
        &["review", "--task-id", "1", "--task-id", "2"],
        &[],
    );
    assert_eq!(run.code, 50, "{}", run.transcript());
    let summary = &run.stdout[run.stdout.find("\nSummary").expect("a summary")..];
    assert!(summary.contains("library-catalog/1  approved"), "{summary}");
    assert!(
        summary.contains("library-catalog/2  changes requested  pending"),
        "{summary}"
    );
    assert!(
        summary.contains("library-catalog/1: [nit] catalog/src/search.rs:28"),
        "{summary}"
    );

    let run = speed(repo.path(), &["nits"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stdout
            .contains("library-catalog/1: [nit] catalog/src/search.rs:28"),
        "{}",
        run.stdout
    );
}

const SPEC: &str = "specs/product/library-catalog.md";

#[test]
fn spec_section_sends_that_section_and_its_parents_headings_only() {
    let repo = repo::example();
    let arg = format!("{SPEC}#Borrowing > Loans");
    let run = speed(
        repo.path(),
        &[
            "review",
            "--branch",
            "speed/task-2",
            "--spec",
            &arg,
            "--dry-run",
            "--json",
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    let out: Value = serde_json::from_str(&run.stdout).unwrap();
    let prompt = out["reviews"][0]["prompt"].as_str().unwrap();
    assert!(
        prompt.contains("Library Catalog > Borrowing > Loans"),
        "the section is labelled with its parent headings"
    );
    assert!(prompt.contains("A loan may be renewed at most twice."));
    // Nothing from other sections of the file, however relevant.
    assert!(!prompt.contains("### Limits"), "{prompt}");
    assert!(!prompt.contains("### Search"), "{prompt}");
    assert!(!prompt.contains("at most 5 books on loan"), "{prompt}");

    // The whole file when no section is named.
    let run = speed(
        repo.path(),
        &[
            "review",
            "--branch",
            "speed/task-2",
            "--spec",
            SPEC,
            "--dry-run",
            "--json",
        ],
        &[],
    );
    let out: Value = serde_json::from_str(&run.stdout).unwrap();
    let prompt = out["reviews"][0]["prompt"].as_str().unwrap();
    assert!(prompt.contains("at most 5 books on loan"), "{prompt}");
}

#[test]
fn an_unknown_spec_section_is_an_error_naming_the_closest() {
    let repo = repo::example();
    let server = ModelServer::start(|_| Reply::openai(&text(&verdicts::approve_task_1())));
    configure(&repo, &server);
    let arg = format!("{SPEC}#Lending");
    for extra in [&["--dry-run"][..], &[][..]] {
        let mut args = vec!["review", "--branch", "speed/task-2", "--spec", &arg];
        args.extend_from_slice(extra);
        let run = speed(repo.path(), &args, &[]);
        assert_eq!(run.code, 1, "{}", run.transcript());
        assert!(server.requests().is_empty(), "no model is asked");
        for needle in [
            "--spec",
            "no section matching \"Lending\"",
            "no heading is close (its sections: Library Catalog; Library Catalog > Overview; Library Catalog > Catalog;",
        ] {
            assert!(run.stderr.contains(needle), "{needle}: {}", run.stderr);
        }
    }
    // A misspelt name: the closest headings, not all of them.
    let arg = format!("{SPEC}#Borowing > Loan");
    let run = speed(
        repo.path(),
        &["review", "--branch", "speed/task-2", "--spec", &arg],
        &[],
    );
    assert_eq!(run.code, 1, "{}", run.transcript());
    assert!(
        run.stderr
            .contains("no section matching \"Borowing > Loan\"; did you mean \"Library Catalog > Borrowing > Loans\" (line "),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("Catalog > Search"), "{}", run.stderr);
}

#[test]
fn a_branch_that_edits_its_spec_is_noted_not_overruled() {
    let repo = repo::shop_editing_its_spec(&["src/cart.rs"]);
    let server = ModelServer::start(|_| {
        Reply::openai(&text(&json!({
            "dimensions": crate::support::verdicts::dimensions(),
            "verdict": "approve",
            "expectations": "The cart cap.",
            "criteria": [],
            "spec_verification": [{"spec_quote": "The cart holds at most 10 items.", "spec_section": "Cart",
                                   "satisfied": true, "evidence": "src/cart.rs:2", "notes": ""}],
            "issues": [],
            "strengths": []
        })))
    });
    configure(&repo, &server);
    let run = speed(
        repo.path(),
        &[
            "review",
            "--branch",
            "speed/task-1",
            "--spec",
            "specs/product/shop.md",
            "--json",
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    let out: Value = serde_json::from_str(&run.stdout).unwrap();
    let r = &out["reviews"][0];
    assert_eq!(r["verdict"], "approve");
    assert_eq!(r["overrules"], json!([]));
    let notices = r["notices"].as_array().unwrap();
    assert!(
        notices.iter().any(|n| n
            .as_str()
            .unwrap()
            .contains("The branch also edits specs/product/shop.md")),
        "{notices:#?}"
    );
    // The spec the model saw is main's, not the branch's edit.
    let prompt = &server.requests()[0].body;
    assert!(prompt.contains("The cart holds at most 10 items."));
}
