//! One notion of "covered": an approval covers a diff *and* the spec it
//! was judged against, in batch mode, `--task-id`, the merge hook and
//! `speed show` alike.

use crate::support::model_server::{ModelServer, Reply};
use crate::support::speed::speed;

use super::*;

const SPEC_V2: &str = "# Widgets\n\n## Sizes\n\nA widget has a size between 1 and 10.\nSizes outside that range are refused with an error.\nA size of 0 means a hidden widget.\n\n## Colours\n\nA widget is red unless a colour is given.\n";
const SPEC_V3: &str = "# Widgets\n\n## Sizes\n\nA widget has a size between 1 and 10.\nSizes outside that range are refused with an error.\nA size of 0 means a hidden widget, and is allowed.\n\n## Colours\n\nA widget is red unless a colour is given.\n";

#[test]
fn a_spec_changed_under_an_approval_uncovers_it_everywhere() {
    let repo = widgets();
    let root = repo.path();
    git(root, &["checkout", "-q", "-b", "speed/task-1"]);
    commit(root, &[("src/widgets.py", WIDGETS_V1)], "refuse bad sizes");
    git(root, &["checkout", "-q", "main"]);
    task(&repo, 1, json!({}));
    let server = ModelServer::scripted(vec![
        Reply::openai(&approve("src/widgets.py:2")),
        Reply::openai(&approve("src/widgets.py:2")),
        Reply::openai(&approve("src/widgets.py:2")),
    ]);
    configure(&repo, &server);
    let install = speed(root, &["hook", "install"], &[]);
    assert_eq!(install.code, 0, "{}", install.transcript());

    let run = speed(root, &["review", "--task-id", "1"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let first_head = rev(root, "speed/task-1");
    let run = speed(root, &["review"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stderr
            .contains("1 approved and still covered by that approval"),
        "{}",
        run.stderr
    );
    // Asked again by id: reviewed, and told the approval already covered it.
    let run = speed(root, &["review", "--task-id", "1"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stderr
            .contains("note: task 1: its approval covers it already (approved at")
            && run.stderr.contains("reviewed again, as --task-id asks"),
        "{}",
        run.stderr
    );
    assert_eq!(server.requests().len(), 2);

    // main's spec changes; the task branch is rebased onto it: same diff,
    // new head.
    commit(root, &[(SPEC, SPEC_V2)], "hidden widgets");
    git(root, &["rebase", "-q", "main", "speed/task-1"]);
    git(root, &["checkout", "-q", "main"]);
    let head = rev(root, "speed/task-1");
    assert_ne!(head, first_head);
    let before = task_file(&repo, 1);

    // The hook blocks it...
    let merge = git_run(root, &["merge", "--no-ff", "--no-edit", "speed/task-1"]);
    assert_ne!(merge.code, 0, "{}", merge.transcript());
    assert!(
        merge.stderr.contains(&format!(
            "the same diff was approved at {}, but {SPEC} has changed on the main branch since",
            &first_head[..10]
        )),
        "{}",
        merge.stderr
    );
    git_run(root, &["merge", "--abort"]);
    // ...`speed show` says so...
    let show = speed(root, &["show", "--task-id", "1"], &[]);
    assert_eq!(show.code, 0, "{}", show.transcript());
    assert!(
        show.stdout.contains(&format!(
            "Now: task 1 at {} is not covered: the same diff was approved at {}, but {SPEC} has changed",
            &head[..10],
            &first_head[..10]
        )),
        "{}",
        show.stdout
    );
    // ...and batch mode agrees: it reviews the task again, saying why.
    assert_eq!(task_file(&repo, 1), before, "nothing changed by looking");
    let run = speed(root, &["review"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(!run.stderr.contains("Nothing to review"), "{}", run.stderr);
    assert!(
        run.stderr.contains(&format!(
            "note: task 1: reviewed again: its approval does not cover it now: the same diff was approved at {}, but {SPEC} has changed on the main branch since",
            &first_head[..10]
        )),
        "{}",
        run.stderr
    );
    assert_eq!(server.requests().len(), 3);
    let after = task_file(&repo, 1);
    assert_eq!(after["review_verdict"], "approve");
    assert_eq!(after["review_history"].as_array().unwrap().len(), 3);
    assert_eq!(after["review_history"][2]["head_commit"], head.as_str());
    let show = speed(root, &["show", "--task-id", "1"], &[]);
    assert!(
        show.stdout.contains(&format!(
            "Now: task 1 at {} is covered: approved at {}",
            &head[..10],
            &head[..10]
        )),
        "{}",
        show.stdout
    );

    // The spec changes again under the very head that was approved: not
    // covered either, and the hook and batch mode say the same.
    commit(root, &[(SPEC, SPEC_V3)], "hidden widgets are allowed");
    let merge = git_run(root, &["merge", "--no-ff", "--no-edit", "speed/task-1"]);
    assert_ne!(merge.code, 0, "{}", merge.transcript());
    assert!(
        merge.stderr.contains("it was approved at this commit ("),
        "{}",
        merge.stderr
    );
    assert!(
        merge
            .stderr
            .contains(&format!("but {SPEC} has changed on the main branch since")),
        "{}",
        merge.stderr
    );
    git_run(root, &["merge", "--abort"]);
    let run = speed(root, &["review", "--dry-run"], &[]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    assert!(
        run.stderr
            .contains("note: task 1: reviewed again: its approval does not cover it now: it was approved at this commit"),
        "{}",
        run.stderr
    );
}
