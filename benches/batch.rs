//! Wall time of a batch review of 20 tasks against the loopback model server
//! answering each request after 1 s, at concurrency 1, 4 and 8.
//!
//! `cargo bench --bench batch`. speed runs in-process (`speed::app::entry`
//! with `-C <repo>`); its reports go to stdout, the figures to stderr.

#[path = "../specs-example/materialize.rs"]
mod materialize;
#[path = "../tests/it/support/model_server.rs"]
mod model_server;
#[path = "../tests/it/support/verdicts.rs"]
#[allow(dead_code)]
mod verdicts;

use std::time::{Duration, Instant};

use model_server::{ModelServer, Reply};
use serde_json::json;

const TASKS: usize = 20;
const ANSWER_DELAY: Duration = Duration::from_secs(1);

fn main() {
    // Each task changes its own src/c<i>.rs: the approval cites the file of
    // the task the prompt is about, so speed's evidence check stands.
    let server = ModelServer::start(move |req| {
        let file = (1..=TASKS)
            .rev()
            .map(|i| format!("src/c{i}.rs"))
            .find(|f| req.body.contains(f.as_str()))
            .unwrap_or_else(|| "src/c1.rs".to_string());
        Reply::openai(&approval(&file)).delay(ANSWER_DELAY)
    });

    let mut figures = Vec::new();
    for concurrency in [1, 4, 8] {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path().join("repo");
        build(&root, &server.url());
        let started = Instant::now();
        let code = speed::app::entry([
            "speed",
            "-C",
            root.to_str().expect("utf-8 temp path"),
            "review",
            "--json",
            "--concurrency",
            &concurrency.to_string(),
        ]);
        let elapsed = started.elapsed();
        assert_eq!(code, 0, "the batch approves every task");
        figures.push((concurrency, elapsed));
    }
    eprintln!(
        "\nbatch of {TASKS} tasks, model answering each in {:?}:",
        ANSWER_DELAY
    );
    for (concurrency, elapsed) in figures {
        let ideal = ANSWER_DELAY.as_secs_f64() * (TASKS as f64 / concurrency as f64).ceil();
        eprintln!(
            "  concurrency {concurrency}: {:.2} s wall (ideal {ideal:.0} s, overhead {:.2} s)",
            elapsed.as_secs_f64(),
            elapsed.as_secs_f64() - ideal
        );
    }
    eprintln!(
        "  max requests in flight seen by the server: {}",
        server.max_in_flight()
    );
}

/// An approval that quotes the spec and cites `file`, rating every default
/// dimension (the scores speed requires).
fn approval(file: &str) -> String {
    let evidence = format!("{file}:1");
    serde_json::to_string(&json!({
        "verdict": "approve",
        "expectations": "Counters stop at 100.",
        "criteria": [{"id": "AC-1", "status": "met", "evidence": evidence}],
        "spec_verification": [{"spec_quote": "Every counter stops at 100.", "spec_section": "Limits",
                               "satisfied": true, "evidence": evidence, "notes": ""}],
        "dimensions": verdicts::dimensions(),
        "issues": [],
        "strengths": []
    }))
    .expect("static JSON")
}

/// A repository with TASKS done tasks, each on its own branch.
fn build(root: &std::path::Path, url: &str) {
    let mut b = materialize::RepoBuilder::init(root).expect("init");
    let spec = "# Counter\n\n## Limits\n\nEvery counter stops at 100.\n";
    let mut files = vec![("specs/product/counter.md".to_string(), spec.to_string())];
    for i in 1..=TASKS {
        files.push((
            format!("src/c{i}.rs"),
            format!("pub fn limit_{i}() -> u32 {{ 10 }}\n"),
        ));
    }
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    b.commit("main", None, &refs, &[], "main").expect("main");
    for i in 1..=TASKS {
        let path = format!("src/c{i}.rs");
        let body = format!("pub fn limit_{i}() -> u32 {{ 100 }}\n");
        b.commit(
            &format!("speed/task-{i}"),
            Some("main"),
            &[(&path, &body)],
            &[],
            "raise",
        )
        .expect("branch");
        b.write_worktree(
            &format!(".speed/tasks/{i}.json"),
            &json!({
                "id": i.to_string(), "title": format!("Raise limit {i}"), "status": "done",
                "acceptance_criteria": "limit is 100",
                "spec_references": [{"spec": "specs/product/counter.md", "section": "Limits"}]
            })
            .to_string(),
        )
        .expect("task file");
    }
    b.checkout("main").expect("checkout");
    b.write_worktree(
        ".speed/config.toml",
        &format!(
            "[llm]\nprovider = \"openai\"\nbase_url = \"{url}\"\nmodel = \"bench\"\n[guardian]\nenabled = false\n"
        ),
    )
    .expect("config");
}
