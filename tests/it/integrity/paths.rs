//! Citations of real paths: a path with spaces and non-ASCII letters cited
//! as the diff shows it (bare, in backticks, in quotes), and a submodule
//! bump cited as `path:1` (the `Subproject commit` line the diff shows),
//! are evidence an approval can rest on. A symlink is shown as a link
//! (its target and mode) and kept out of the impact table; a file that is
//! not UTF-8 is named in a notice.

use crate::support::model_server::{ModelServer, Reply};
use crate::support::speed::speed;

use std::path::Path;

use super::*;

const SPACED: &str = "app/dir with space/naïve café.py";

#[test]
fn a_path_with_spaces_and_accents_is_read_whole() {
    let repo = widgets();
    let root = repo.path();
    git(root, &["checkout", "-q", "-b", "speed/task-1"]);
    commit(root, &[(SPACED, WIDGETS_V1)], "refuse bad sizes");
    git(root, &["checkout", "-q", "main"]);
    task(&repo, 1, json!({"files_to_modify": [SPACED]}));
    let cited = format!("`{SPACED}:2`");
    let server = ModelServer::scripted(vec![Reply::openai(&approve(&cited))]);
    configure(&repo, &server);
    let run = speed(root, &["review", "--task-id", "1", "--json"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let all: Value = serde_json::from_str(&run.stdout).unwrap();
    let report = &all["reviews"][0];
    let citations = report["evidence"].as_array().cloned().unwrap_or_default();
    assert!(
        citations
            .iter()
            .any(|c| c["ref"] == format!("{SPACED}:2") && c["found"] == true),
        "{}",
        report["evidence"]
    );
    assert_eq!(task_file(&repo, 1)["review_verdict"], "approve");
}

#[test]
fn a_submodule_bump_cited_at_its_line_is_evidence() {
    let repo = widgets();
    let root = repo.path();
    let lib = beside(&repo, "core");
    std::fs::create_dir_all(&lib).unwrap();
    git(&lib, &["init", "-q", "-b", "main"]);
    commit(&lib, &[("core.py", "SIZE = 10\n")], "core");
    let url = format!("file://{}", lib.display());
    git(
        root,
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            &url,
            "libs/core",
        ],
    );
    git(root, &["commit", "-q", "-m", "core as a submodule"]);
    let bumped = commit(&lib, &[("core.py", "SIZE = 12\n")], "bigger");
    git(root, &["checkout", "-q", "-b", "speed/task-1"]);
    git(&root.join("libs/core"), &["fetch", "-q", "origin"]);
    git(&root.join("libs/core"), &["checkout", "-q", &bumped]);
    git(root, &["add", "libs/core"]);
    git(root, &["commit", "-q", "-m", "bump core"]);
    git(root, &["checkout", "-q", "main"]);
    git(root, &["submodule", "update", "-q"]);
    task(&repo, 1, json!({"files_to_modify": ["libs/core"]}));
    let server = ModelServer::scripted(vec![Reply::openai(&approve("libs/core:1"))]);
    configure(&repo, &server);
    let run = speed(root, &["review", "--task-id", "1", "--json"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let prompt = prompt_of(&server.requests()[0]);
    assert!(
        prompt.contains(&format!("Subproject commit {bumped}")),
        "{prompt}"
    );
    let all: Value = serde_json::from_str(&run.stdout).unwrap();
    let report = &all["reviews"][0];
    assert!(
        report["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["ref"] == "libs/core:1" && c["found"] == true && c["in_diff"] == true),
        "{}",
        report["evidence"]
    );
    assert_eq!(task_file(&repo, 1)["review_verdict"], "approve");
}

/// The widgets fix on `speed/task-1`, with whatever else `extra` commits.
fn fix_with(repo: &crate::support::repo::TempRepo, extra: impl FnOnce(&Path)) {
    let root = repo.path();
    git(root, &["checkout", "-q", "-b", "speed/task-1"]);
    std::fs::write(root.join("src/widgets.py"), WIDGETS_V1).unwrap();
    extra(root);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "refuse bad sizes"]);
    git(root, &["checkout", "-q", "main"]);
}

#[test]
fn a_symlink_is_shown_as_a_link_not_a_python_module() {
    let repo = widgets();
    let root = repo.path();
    fix_with(&repo, |root| {
        std::os::unix::fs::symlink("widgets.py", root.join("src/sizes.py")).unwrap();
    });
    task(
        &repo,
        1,
        json!({"files_to_modify": ["src/widgets.py", "src/sizes.py"]}),
    );
    let server = ModelServer::scripted(vec![Reply::openai(&approve("src/widgets.py:2"))]);
    configure(&repo, &server);
    let run = speed(root, &["review", "--task-id", "1", "--json"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let prompt = prompt_of(&server.requests()[0]);
    assert!(
        prompt.contains("new file mode 120000")
            && prompt.contains(
                "(symlink, mode 120000, pointing to `widgets.py`: a link, not source code)"
            ),
        "{prompt}"
    );
    assert!(!prompt.contains("src/sizes.py:1)"), "{prompt}");
    let all: Value = serde_json::from_str(&run.stdout).unwrap();
    let report = &all["reviews"][0];
    let impact = report["impact"].as_array().cloned().unwrap_or_default();
    assert!(
        impact.iter().all(|s| s["file"] != "src/sizes.py"),
        "{impact:#?}"
    );
    assert_eq!(task_file(&repo, 1)["review_verdict"], "approve");
}

#[test]
fn a_file_that_is_not_utf8_is_named_in_a_notice() {
    let repo = widgets();
    let root = repo.path();
    fix_with(&repo, |root| {
        std::fs::write(root.join("src/legacy.py"), b"NAME = 'caf\xe9'\n").unwrap();
    });
    task(
        &repo,
        1,
        json!({"files_to_modify": ["src/widgets.py", "src/legacy.py"]}),
    );
    let server = ModelServer::scripted(vec![Reply::openai(&approve("src/widgets.py:2"))]);
    configure(&repo, &server);
    let run = speed(root, &["review", "--task-id", "1"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let said = "src/legacy.py is not UTF-8: its lines are shown with U+FFFD";
    assert!(run.stdout.contains(said), "{}", run.transcript());
    let prompt = prompt_of(&server.requests()[0]);
    assert!(
        prompt.contains("(not UTF-8: bytes that are not UTF-8 are shown as U+FFFD"),
        "{prompt}"
    );
    let saved = &repo.report_files()[0];
    assert!(
        saved["notices"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().contains(said)),
        "{saved}"
    );
    // The widgets file is plain UTF-8: not named.
    assert!(!run.stdout.contains("src/widgets.py is not UTF-8"));
    assert_eq!(task_file(&repo, 1)["review_verdict"], "approve");
}
