//! The HTML pages end to end: `speed review --format html` and `speed show
//! --format html` place every finding at its file and line (checked against
//! the findings every other format prints), `speed stats --format html`
//! draws its figures as inline SVG, every page is one self-contained
//! document that fetches nothing, and `<script>` put into a task, a spec,
//! a diff and a model's answer stays text. The pages are parsed with an
//! XML parser: speed writes them well-formed.

use crate::support::model_server::{ModelServer, Recorded, Reply};
use crate::support::repo::{self, RepoBuilder, TempRepo};
use crate::support::speed::{Run, speed};
use crate::support::verdicts::{self, text};
use serde_json::{Value, json};

pub(crate) fn parse(page: &str) -> roxmltree::Document<'_> {
    roxmltree::Document::parse_with_options(
        page,
        roxmltree::ParsingOptions {
            allow_dtd: true,
            ..Default::default()
        },
    )
    .unwrap_or_else(|e| panic!("the page is not well-formed: {e}"))
}

/// Nothing on the page runs or is fetched: no script, no frame, no
/// object, no link to a style sheet, no event handler, no URL but the
/// page's own anchors and the SVG namespace.
pub(crate) fn assert_inert(doc: &roxmltree::Document<'_>, page: &str) {
    assert!(
        !page.to_ascii_lowercase().contains("<script"),
        "a script tag"
    );
    for node in doc.descendants().filter(|n| n.is_element()) {
        let name = node.tag_name().name().to_ascii_lowercase();
        assert!(
            ![
                "script", "iframe", "object", "embed", "link", "img", "base", "form"
            ]
            .contains(&name.as_str()),
            "a <{name}> element"
        );
        for attr in node.attributes() {
            let (key, value) = (attr.name().to_ascii_lowercase(), attr.value());
            assert!(!key.starts_with("on"), "an event handler: {key}");
            if matches!(key.as_str(), "href" | "src" | "xlink:href" | "action") {
                assert!(value.starts_with('#'), "a link out: {key}={value}");
            }
            if key == "xmlns" {
                assert!(value.starts_with("http://www.w3.org/"), "{value}");
            }
        }
    }
    assert!(page.starts_with("<!DOCTYPE html>"));
    let policy = doc
        .descendants()
        .find(|n| n.attribute("http-equiv") == Some("Content-Security-Policy"))
        .and_then(|n| n.attribute("content"))
        .expect("a Content-Security-Policy");
    assert!(policy.starts_with("default-src 'none'"), "{policy}");
}

/// The text of an element and everything in it.
fn text_of(node: roxmltree::Node<'_, '_>) -> String {
    node.descendants()
        .filter(|n| n.is_text())
        .filter_map(|n| n.text())
        .collect()
}

/// Every finding of `report` (as `--json` printed it) that has a file is on
/// the page as an element with its `data-file` and `data-line`, holding
/// its message.
fn assert_placed(doc: &roxmltree::Document<'_>, report: &Value) {
    let typed: speed::ledger::Report = serde_json::from_value(report.clone()).unwrap();
    let findings = speed::render::findings::of(&typed);
    let with_file: Vec<_> = findings.iter().filter(|f| f.file.is_some()).collect();
    assert!(
        !with_file.is_empty(),
        "the report has findings with a place"
    );
    for f in with_file {
        let file = f.file.as_deref().unwrap();
        let line = f.line.map(|l| l.to_string());
        let found = doc.descendants().any(|n| {
            n.attribute("data-file") == Some(file)
                && n.attribute("data-line") == line.as_deref()
                && text_of(n).contains(f.message.chars().take(60).collect::<String>().as_str())
        });
        assert!(
            found,
            "finding {} at {file}:{line:?} ({}) is not on the page",
            f.rule, f.message
        );
    }
}

/// Under a line of the diff: the element right after the row of that line.
fn under_its_line(doc: &roxmltree::Document<'_>, file: &str, line: &str) -> bool {
    doc.descendants()
        .filter(|n| {
            n.attribute("data-file") == Some(file) && n.attribute("data-line") == Some(line)
        })
        .any(|aside| {
            let row = aside.ancestors().find(|a| a.has_tag_name("tr"));
            let previous = row.and_then(|r| r.prev_sibling_element());
            previous.is_some_and(|p| {
                p.children()
                    .filter(|c| c.has_tag_name("td"))
                    .nth(1)
                    .is_some_and(|td| text_of(td) == line)
            })
        })
}

fn serve() -> ModelServer {
    ModelServer::start(|req: &Recorded| {
        if req.body.contains("id: 2") {
            Reply::openai(&text(&verdicts::request_changes_task_2()))
        } else {
            Reply::openai(&text(&verdicts::approve_task_1()))
        }
    })
}

#[test]
fn review_and_show_pages_hold_every_finding_at_its_file_and_line() {
    let repo = repo::example();
    let server = serve();
    crate::history::configure(&repo, &server, "");
    let run = speed(
        repo.path(),
        &[
            "review",
            "--task-id",
            "1",
            "--task-id",
            "2",
            "--format",
            "html",
        ],
        &[],
    );
    assert_eq!(run.code, 50, "{}", run.transcript());
    let doc = parse(&run.stdout);
    assert_inert(&doc, &run.stdout);
    assert_eq!(
        doc.descendants()
            .filter(|n| n.has_tag_name("article"))
            .count(),
        2,
        "one article per review"
    );
    for id in ["1", "2"] {
        let shown = speed(
            repo.path(),
            &["show", "--task-id", id, "--format", "json"],
            &[],
        );
        let report: Value = serde_json::from_str(&shown.stdout).unwrap();
        assert_placed(&doc, &report);

        let page = speed(
            repo.path(),
            &["show", "--task-id", id, "--format", "html"],
            &[],
        );
        assert_eq!(page.code, 0, "{}", page.transcript());
        let one = parse(&page.stdout);
        assert_inert(&one, &page.stdout);
        assert_placed(&one, &report);
    }
    // The model's issue on task 2 sits right under line 8 of loans.rs.
    assert!(under_its_line(&doc, "catalog/src/loans.rs", "8"));
    // Each quote beside its section, found or not.
    let page = speed(
        repo.path(),
        &["show", "--task-id", "2", "--format", "html"],
        &[],
    );
    let one = parse(&page.stdout);
    let rows: Vec<String> = one
        .descendants()
        .filter(|n| n.has_tag_name("tr"))
        .map(text_of)
        .filter(|t| t.contains("renewed at most twice"))
        .collect();
    assert!(
        rows.iter().any(|r| r.contains("Borrowing > Loans")
            && r.contains("found at specs/product/library-catalog.md:")),
        "{rows:?}"
    );
    let words = text_of(one.root_element());
    for expected in [
        "Decision: Changes requested",
        "What the model did not see",
        "The guardian: ",
        "The model said: request_changes.",
    ] {
        assert!(words.contains(expected), "{expected}");
    }
}

#[test]
fn the_pages_work_on_the_demo_repository() {
    // What the README's demo does: an offline review of
    // a branch that leaves a todo!(), a dbg! and a password behind.
    let repo = repo::example();
    let mut b = RepoBuilder::open(repo.path()).unwrap();
    b.commit(
        "demo/late-fines",
        Some("speed/task-2"),
        &[
            (
                "catalog/src/fines.rs",
                "//! Late fines.\n\npub fn fine_for(days_late: u32) -> u32 {\n    dbg!(days_late);\n    todo!()\n}\n",
            ),
            ("deploy/payments.toml", "[payments]\nwebhook_secret = \"w8Kq2ZxN4vLp9RtY\"\n"),
        ],
        &[],
        "Late fines (work in progress)",
    )
    .unwrap();
    let run = speed(
        repo.path(),
        &[
            "review",
            "--offline",
            "--branch",
            "demo/late-fines",
            "--spec",
            "specs/product/library-catalog.md",
        ],
        &[],
    );
    assert_eq!(run.code, 50, "{}", run.transcript());
    let branch = ["--branch", "demo/late-fines"];
    let show = |format: &str| -> Run {
        let mut args = vec!["show"];
        args.extend_from_slice(&branch);
        args.extend_from_slice(&["--format", format]);
        speed(repo.path(), &args, &[])
    };
    let page = show("html");
    assert_eq!(page.code, 0, "{}", page.transcript());
    let doc = parse(&page.stdout);
    assert_inert(&doc, &page.stdout);
    assert!(
        under_its_line(&doc, "catalog/src/fines.rs", "5"),
        "todo!() under its line"
    );
    assert!(
        under_its_line(&doc, "catalog/src/fines.rs", "4"),
        "dbg! under its line"
    );
    assert!(
        under_its_line(&doc, "deploy/payments.toml", "2"),
        "the secret under its line"
    );
    assert!(
        !page.stdout.contains("w8Kq2ZxN4vLp9RtY"),
        "the password never reaches the page"
    );
    assert!(page.stdout.contains("[REDACTED:secret-assignment]"));
    let report: Value = serde_json::from_str(&show("json").stdout).unwrap();
    assert_placed(&doc, &report);
    for format in ["human", "markdown"] {
        let run = show(format);
        assert_eq!(run.code, 0, "{format}: {}", run.transcript());
        assert!(
            run.stdout.contains("placeholder"),
            "{format}: {}",
            run.stdout
        );
    }
    for args in [
        &["history"][..],
        &["history", "--format", "json"],
        &["stats"],
        &["stats", "--format", "json"],
    ] {
        let run = speed(repo.path(), args, &[]);
        assert_eq!(run.code, 0, "{args:?}: {}", run.transcript());
        assert!(
            run.stdout.contains("request_changes") || run.stdout.contains("placeholder"),
            "{args:?}: {}",
            run.stdout
        );
    }
    let run = speed(repo.path(), &["stats", "--format", "html"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let doc = parse(&run.stdout);
    assert_inert(&doc, &run.stdout);
}

#[test]
fn the_stats_page_draws_its_figures_inline_and_tabulates_them() {
    let repo = repo::example();
    repo.write(
        ".speed/reviews/log.jsonl",
        &crate::history::many_reviews(300),
    );
    let run = speed(repo.path(), &["stats", "--format", "html"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let doc = parse(&run.stdout);
    assert_inert(&doc, &run.stdout);
    let figures: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("figure"))
        .collect();
    assert_eq!(
        figures.len(),
        3,
        "approval rate, blocking reasons, features"
    );
    for figure in &figures {
        let svg = figure
            .descendants()
            .find(|n| n.tag_name().name() == "svg")
            .expect("an inline SVG");
        assert_eq!(svg.attribute("role"), Some("img"));
        let labelled = svg.attribute("aria-labelledby").unwrap();
        for id in labelled.split(' ') {
            assert!(
                doc.descendants().any(|n| n.attribute("id") == Some(id)),
                "{id}"
            );
        }
        // The numbers follow as a table, for reading without the figure.
        let next_table = figure
            .next_sibling_element()
            .filter(|n| n.descendants().any(|d| d.has_tag_name("table")));
        assert!(next_table.is_some(), "a table after each figure");
    }
    let words = text_of(doc.root_element());
    for expected in [
        "2026-W10",
        "overrule: check_failed",
        "catalog",
        "approved at first review",
    ] {
        assert!(words.contains(expected), "{expected}");
    }
    let bars = doc
        .descendants()
        .filter(|n| n.tag_name().name() == "rect")
        .count();
    assert!(bars > 12, "bars are drawn: {bars}");
}

/// A repository whose every source of text carries markup: the spec's
/// headings, the task's title, a line of the diff, and the model's and the
/// guardian's answers.
fn hostile() -> TempRepo {
    let (tmp, root) = repo::empty();
    let mut b = RepoBuilder::init(&root).unwrap();
    b.commit(
        "main",
        None,
        &[
            (
                "specs/product/shop.md",
                "# Shop `<script>alert('spec')</script>`\n\n## Cart \\<img src=x onerror=alert(1)\\>\n\nThe cart holds at most 10 items.\n",
            ),
            ("src/cart.rs", "pub fn cap() -> u32 {\n    10\n}\n"),
        ],
        &[],
        "main",
    )
    .unwrap();
    b.commit(
        "speed/task-1",
        Some("main"),
        &[(
            "src/cart.rs",
            "// <script>alert('diff')</script>\npub fn cap() -> u32 {\n    10\n}\n",
        )],
        &[],
        "cap",
    )
    .unwrap();
    b.checkout("main").unwrap();
    let repo = repo::adopt(tmp, root);
    repo.write(
        ".speed/tasks/1.json",
        &json!({"id": 1, "title": "<script>alert('task')</script> Cap the cart", "status": "done",
                "files_to_modify": ["src/cart.rs"],
                "spec_references": [{"spec": "specs/product/shop.md", "section": "Cart"}]})
        .to_string(),
    );
    repo
}

#[test]
fn markup_from_a_task_a_spec_a_diff_or_an_answer_stays_text() {
    let repo = hostile();
    let answer = json!({
        "verdict": "approve",
        "expectations": "<script>alert('expectations')</script>",
        "criteria": [],
        "spec_verification": [{"spec_quote": "The cart holds at most 10 items.", "spec_section": "Cart",
                               "satisfied": true, "evidence": "src/cart.rs:3", "notes": ""}],
        "missing_from_spec": [],
        "out_of_scope": [],
        "issues": [{"severity": "minor", "file": "src/cart.rs", "line": 1,
                    "message": "<script>alert('answer')</script> a comment with markup",
                    "suggestion": "</aside><script>alert('suggestion')</script>"}],
        "strengths": ["<script>alert('strength')</script>"],
        "dimensions": verdicts::dimensions()
    });
    let guardian = json!({"status": "flagged", "summary": "<script>alert('guardian')</script>",
                          "flags": [{"severity": "minor", "description": "<b onmouseover=alert(1)>flag</b>", "spec_reference": "<i>Cart</i>"}]});
    let server = ModelServer::start(move |req: &Recorded| {
        if req.body.contains("Product guardian check") {
            Reply::openai(&text(&guardian))
        } else {
            Reply::openai(&text(&answer))
        }
    });
    repo.config(&format!(
        "[llm]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"<script>m</script>\"\ntimeout_secs = 5\nmax_retries = 0\n[guardian]\nvision_file = \"specs/product/shop.md\"\n",
        server.url()
    ));
    let run = speed(
        repo.path(),
        &["review", "--task-id", "1", "--format", "html"],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    for page in [
        run.stdout.clone(),
        speed(
            repo.path(),
            &["show", "--task-id", "1", "--format", "html"],
            &[],
        )
        .stdout,
    ] {
        let doc = parse(&page);
        assert_inert(&doc, &page);
        let words = text_of(doc.root_element());
        for markup in [
            "<script>alert('task')</script>",
            "<script>alert('diff')</script>",
            "<script>alert('answer')</script>",
            "</aside><script>alert('suggestion')</script>",
            "<script>alert('guardian')</script>",
            "<b onmouseover=alert(1)>flag</b>",
            "Shop <script>alert('spec')</script> > Cart <img src=x onerror=alert(1)>",
            "<script>alert('expectations')</script>",
            "<script>m</script>",
        ] {
            assert!(words.contains(markup), "{markup} is shown as text");
        }
        assert!(
            doc.descendants()
                .any(|n| n.attribute("data-file") == Some("src/cart.rs")
                    && n.attribute("data-line") == Some("1"))
        );
    }
    let md = speed(
        repo.path(),
        &["show", "--task-id", "1", "--format", "markdown"],
        &[],
    );
    assert!(!md.stdout.contains("<script>"), "{}", md.stdout);
    assert!(md.stdout.contains("\\<script\\>alert"), "{}", md.stdout);
}
