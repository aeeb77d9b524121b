//! The example repository built from `specs-example/` and the `RepoBuilder`
//! the other tests use: what a user of the demo relies on (branches, changed
//! files, task files that point at real spec sections, a clean checkout of
//! main) and that commit ids do not depend on the machine.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::support::repo::materialize::{self, RepoBuilder, materialize};
use git2::{Delta, DiffOptions, Repository, StatusOptions};
use serde_json::Value;

fn example_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("specs-example")
}

fn build() -> (tempfile::TempDir, materialize::Materialized) {
    let tmp = tempfile::tempdir().unwrap();
    let built = materialize(&example_dir(), &tmp.path().join("repo")).unwrap();
    (tmp, built)
}

/// (status letter, path) of every file that differs between two branches.
fn changes(repo: &Repository, base: &str, head: &str) -> BTreeSet<(char, String)> {
    let tree = |branch: &str| {
        repo.revparse_single(branch)
            .unwrap()
            .peel_to_tree()
            .unwrap()
    };
    let diff = repo
        .diff_tree_to_tree(
            Some(&tree(base)),
            Some(&tree(head)),
            Some(&mut DiffOptions::new()),
        )
        .unwrap();
    diff.deltas()
        .map(|delta| {
            let letter = match delta.status() {
                Delta::Added => 'A',
                Delta::Deleted => 'D',
                Delta::Modified => 'M',
                other => panic!("unexpected change {other:?}"),
            };
            let file = if delta.status() == Delta::Deleted {
                delta.old_file()
            } else {
                delta.new_file()
            };
            (letter, file.path().unwrap().to_str().unwrap().to_string())
        })
        .collect()
}

fn set(items: &[(char, &str)]) -> BTreeSet<(char, String)> {
    items.iter().map(|(c, p)| (*c, p.to_string())).collect()
}

fn read(root: &Path, path: &str) -> String {
    std::fs::read_to_string(root.join(path)).unwrap()
}

fn task(root: &Path, id: u32) -> Value {
    let path = format!(".speed/features/library-catalog/tasks/{id}.json");
    serde_json::from_str(&read(root, &path)).unwrap()
}

fn blob_at(repo: &Repository, branch: &str, path: &str) -> String {
    let tree = repo
        .revparse_single(branch)
        .unwrap()
        .peel_to_tree()
        .unwrap();
    let blob = tree
        .get_path(Path::new(path))
        .unwrap()
        .to_object(repo)
        .unwrap()
        .peel_to_blob()
        .unwrap();
    String::from_utf8(blob.content().to_vec()).unwrap()
}

#[test]
fn main_and_the_three_task_branches_exist_and_head_is_main() {
    let (_tmp, built) = build();
    let repo = Repository::open(&built.root).unwrap();
    let names: Vec<&str> = built
        .branches
        .iter()
        .map(|(name, _)| name.as_str())
        .collect();
    assert_eq!(names, ["speed/task-1", "speed/task-2", "speed/task-3"]);
    for (name, commit) in &built.branches {
        let tip = repo
            .revparse_single(&format!("refs/heads/{name}"))
            .unwrap()
            .peel_to_commit()
            .unwrap();
        assert_eq!(&tip.id().to_string(), commit);
        assert_eq!(
            tip.parent_id(0).unwrap().to_string(),
            built.main,
            "{name} starts at main"
        );
        assert_eq!(tip.author().email().ok(), Some("example@speed.dev"));
    }
    assert_eq!(repo.head().unwrap().shorthand().ok(), Some("main"));
    assert_eq!(
        repo.head().unwrap().target().unwrap().to_string(),
        built.main
    );
}

#[test]
fn working_tree_is_a_clean_checkout_of_main_with_the_task_files() {
    let (_tmp, built) = build();
    let repo = Repository::open(&built.root).unwrap();
    let mut opts = StatusOptions::new();
    opts.include_untracked(true).recurse_untracked_dirs(true);
    let dirty: Vec<String> = repo
        .statuses(Some(&mut opts))
        .unwrap()
        .iter()
        .map(|s| format!("{:?} {}", s.status(), s.path().unwrap_or("?")))
        .collect();
    assert!(dirty.is_empty(), "working tree not clean: {dirty:?}");
    for id in 1..=3 {
        assert_eq!(task(&built.root, id)["status"], "done");
    }
    assert_eq!(
        read(&built.root, ".speed/features/library-catalog/spec_path").trim(),
        "specs/product/library-catalog.md"
    );
    // Task branches hold their own code only in git objects, not in the checkout.
    assert!(built.root.join("api/library_api/compat.py").exists());
    assert!(!built.root.join("catalog/tests/search.rs").exists());
}

#[test]
fn each_task_branch_changes_exactly_the_files_its_task_declares() {
    let (_tmp, built) = build();
    let repo = Repository::open(&built.root).unwrap();
    let expected = [
        (
            1,
            set(&[
                ('M', "catalog/src/search.rs"),
                ('A', "catalog/tests/search.rs"),
            ]),
        ),
        (
            2,
            set(&[('M', "catalog/src/lib.rs"), ('M', "catalog/src/loans.rs")]),
        ),
        (
            3,
            set(&[
                ('M', "README.md"),
                ('D', "api/library_api/compat.py"),
                ('M', "api/library_api/books.py"),
                ('M', "api/tests/conftest.py"),
                ('M', "api/tests/test_books.py"),
                ('M', "catalog/src/availability.rs"),
                ('M', "catalog/src/lib.rs"),
                ('M', "catalog/src/python.rs"),
            ]),
        ),
    ];
    for (id, files) in expected {
        let branch = format!("speed/task-{id}");
        assert_eq!(changes(&repo, "main", &branch), files, "{branch}");

        let task = task(&built.root, id);
        assert_eq!(task["branch"], branch.as_str());
        let declared: BTreeSet<String> = ["files_to_modify", "files_to_create", "files_to_delete"]
            .iter()
            .flat_map(|field| task[*field].as_array().cloned().unwrap_or_default())
            .map(|path| path.as_str().unwrap().to_string())
            .collect();
        let changed: BTreeSet<String> = files.into_iter().map(|(_, path)| path).collect();
        assert_eq!(
            declared, changed,
            "task {id} declares what its branch changes"
        );
    }
}

#[test]
fn task_spec_references_name_sections_that_exist_in_the_spec() {
    let (_tmp, built) = build();
    let spec = read(&built.root, "specs/product/library-catalog.md");
    let mut path: Vec<String> = Vec::new();
    let mut headings = BTreeSet::new();
    for line in spec.lines() {
        let level = line.chars().take_while(|c| *c == '#').count();
        if level >= 2 && line[level..].starts_with(' ') {
            path.truncate(level - 2);
            path.push(line[level..].trim().to_string());
            headings.insert(path.join(" > "));
        }
    }
    for id in 1..=3 {
        for reference in task(&built.root, id)["spec_references"].as_array().unwrap() {
            assert_eq!(reference["spec"], "specs/product/library-catalog.md");
            let section = reference["section"].as_str().unwrap();
            assert!(
                headings.contains(section),
                "task {id}: no section {section:?} in {headings:?}"
            );
        }
    }
}

#[test]
fn task_two_deviates_from_the_spec_without_its_task_saying_so() {
    let (_tmp, built) = build();
    let repo = Repository::open(&built.root).unwrap();
    let spec = blob_at(&repo, "main", "specs/product/library-catalog.md");
    assert!(spec.contains("A loan may be renewed at most twice."));
    assert!(spec.contains("A member with an overdue loan cannot borrow another book"));

    let loans = blob_at(&repo, "speed/task-2", "catalog/src/loans.rs");
    assert!(loans.contains("pub const MAX_RENEWALS: u8 = 3;"));
    assert!(
        !loans.contains("overdue loans"),
        "the overdue refusal stays missing"
    );

    // The task only names constants, so its criteria look met: the deviation
    // can only be found by reading the spec.
    let task = read(&built.root, ".speed/features/library-catalog/tasks/2.json");
    for giveaway in ["twice", "three", "overdue", "MAX_RENEWALS = 3"] {
        assert!(!task.contains(giveaway), "task 2 mentions {giveaway:?}");
    }
    let criteria = self::task(&built.root, 2)["acceptance_criteria"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(criteria.matches("[verify: test]").count(), 4);
}

#[test]
fn commit_ids_are_the_same_on_every_run() {
    let (_a, first) = build();
    let (_b, second) = build();
    assert_eq!(first.main, second.main);
    assert_eq!(first.branches, second.branches);
    assert_ne!(first.root, second.root);
}

#[test]
fn materialize_refuses_a_destination_that_is_not_empty() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("keep.txt"), "mine").unwrap();
    let error = materialize(&example_dir(), tmp.path()).unwrap_err();
    assert!(error.contains("not empty"), "{error}");
    assert!(error.contains(&tmp.path().display().to_string()), "{error}");
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("keep.txt")).unwrap(),
        "mine"
    );
}

#[test]
fn builder_commits_are_deterministic_and_independent_of_the_machine() {
    let tmp = tempfile::tempdir().unwrap();
    let mut builder = RepoBuilder::init(tmp.path()).unwrap();
    let id = builder
        .commit("main", None, &[("README.md", "hello\n")], &[], "first\n")
        .unwrap();
    // Fixed author, committer and time: the id `git commit-tree` gives for the
    // same tree, names and date, on any machine.
    assert_eq!(id, "41023842ac7ea051e5591391e9e0abe1a8889980");
}

#[test]
fn builder_branches_from_a_parent_applies_deletes_and_leaves_the_worktree_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let mut builder = RepoBuilder::init(tmp.path()).unwrap();
    let files = [("src/a.rs", "fn a() {}\n"), ("src/b.rs", "fn b() {}\n")];
    let main = builder.commit("main", None, &files, &[], "base\n").unwrap();
    let feature = builder
        .commit(
            "feature/x",
            Some("main"),
            &[("src/c.rs", "fn c() {}\n")],
            &["src/b.rs"],
            "x\n",
        )
        .unwrap();
    let next = builder
        .commit(
            "feature/x",
            None,
            &[("src/a.rs", "fn a2() {}\n")],
            &[],
            "y\n",
        )
        .unwrap();

    let repo = builder.repo();
    let tip = repo.find_commit(next.parse().unwrap()).unwrap();
    assert_eq!(tip.parent_id(0).unwrap().to_string(), feature);
    assert_eq!(
        repo.find_commit(feature.parse().unwrap())
            .unwrap()
            .parent_id(0)
            .unwrap()
            .to_string(),
        main
    );
    assert_eq!(
        changes(repo, "main", "feature/x"),
        set(&[('M', "src/a.rs"), ('D', "src/b.rs"), ('A', "src/c.rs")])
    );
    assert!(
        tip.time().seconds()
            > repo
                .find_commit(main.parse().unwrap())
                .unwrap()
                .time()
                .seconds()
    );
    // Nothing was checked out yet: commits go to git objects only.
    assert!(!tmp.path().join("src").exists());
}

#[test]
fn builder_checkout_and_worktree_writes() {
    let tmp = tempfile::tempdir().unwrap();
    let mut builder = RepoBuilder::init(tmp.path()).unwrap();
    builder
        .commit("main", None, &[("a.txt", "main\n")], &[], "base\n")
        .unwrap();
    builder
        .commit(
            "other",
            Some("main"),
            &[("a.txt", "other\n")],
            &[],
            "other\n",
        )
        .unwrap();

    builder.checkout("other").unwrap();
    assert_eq!(read(tmp.path(), "a.txt"), "other\n");
    builder.checkout("main").unwrap();
    assert_eq!(read(tmp.path(), "a.txt"), "main\n");
    assert_eq!(
        builder.repo().head().unwrap().shorthand().ok(),
        Some("main")
    );

    builder.write_worktree("a.txt", "edited\n").unwrap();
    builder
        .write_worktree("notes/new.txt", "untracked\n")
        .unwrap();
    let statuses = builder
        .repo()
        .statuses(Some(StatusOptions::new().include_untracked(true)))
        .unwrap();
    let dirty: BTreeSet<String> = statuses
        .iter()
        .map(|s| s.path().unwrap().to_string())
        .collect();
    assert_eq!(
        dirty,
        BTreeSet::from(["a.txt".to_string(), "notes/".to_string()])
    );
    // The edit is in the working tree only; the branch still holds the commit.
    assert_eq!(blob_at(builder.repo(), "main", "a.txt"), "main\n");
}

#[test]
fn builder_errors_name_the_branch_and_path() {
    let tmp = tempfile::tempdir().unwrap();
    let mut builder = RepoBuilder::init(tmp.path()).unwrap();
    builder
        .commit("main", None, &[("a.txt", "a\n")], &[], "base\n")
        .unwrap();

    let missing_delete = builder
        .commit("main", None, &[], &["b.txt"], "rm\n")
        .unwrap_err();
    assert!(
        missing_delete.contains("main") && missing_delete.contains("b.txt"),
        "{missing_delete}"
    );

    let missing_parent = builder
        .commit("topic", Some("nope"), &[("a.txt", "x\n")], &[], "x\n")
        .unwrap_err();
    assert!(
        missing_parent.contains("topic") && missing_parent.contains("nope"),
        "{missing_parent}"
    );

    let escaping = builder
        .commit("main", None, &[("../evil.txt", "x\n")], &[], "x\n")
        .unwrap_err();
    assert!(escaping.contains("../evil.txt"), "{escaping}");

    let no_branch = builder.checkout("ghost").unwrap_err();
    assert!(no_branch.contains("ghost"), "{no_branch}");
}

#[test]
fn overlay_folder_names_map_to_task_branches() {
    assert_eq!(materialize::branch_name("speed-task-12"), "speed/task-12");
    assert_eq!(materialize::branch_name("hotfix"), "hotfix");
}
