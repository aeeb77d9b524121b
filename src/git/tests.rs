use std::collections::BTreeMap;

use super::*;

const BLOB: u32 = 0o100644;
const EXEC: u32 = 0o100755;

/// A real repository built with git2: fixed author and time, no
/// dependence on the developer's git config.
struct Fixture {
    dir: tempfile::TempDir,
    git: git2::Repository,
}

type Files = BTreeMap<&'static str, (Vec<u8>, u32)>;

fn text(s: &str) -> (Vec<u8>, u32) {
    (s.as_bytes().to_vec(), BLOB)
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let mut opts = git2::RepositoryInitOptions::new();
        opts.initial_head("main");
        let git = git2::Repository::init_opts(dir.path(), &opts).unwrap();
        Fixture { dir, git }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Commits exactly `files` as the tree, on `refname` (created or moved).
    fn commit(&self, refname: &str, parents: &[&str], files: &Files) -> String {
        let mut index = git2::Index::new().unwrap();
        for (path, (content, mode)) in files {
            let id = self.git.blob(content).unwrap();
            index
                .add(&git2::IndexEntry {
                    ctime: git2::IndexTime::new(0, 0),
                    mtime: git2::IndexTime::new(0, 0),
                    dev: 0,
                    ino: 0,
                    mode: *mode,
                    uid: 0,
                    gid: 0,
                    file_size: content.len() as u32,
                    id,
                    flags: path.len() as u16,
                    flags_extended: 0,
                    path: path.as_bytes().to_vec(),
                })
                .unwrap();
        }
        let tree = self
            .git
            .find_tree(index.write_tree_to(&self.git).unwrap())
            .unwrap();
        let sig = git2::Signature::new(
            "Test",
            "test@speed.local",
            &git2::Time::new(1_700_000_000, 0),
        )
        .unwrap();
        let parents: Vec<git2::Commit> = parents
            .iter()
            .map(|p| {
                self.git
                    .find_commit(git2::Oid::from_str(p).unwrap())
                    .unwrap()
            })
            .collect();
        let parents: Vec<&git2::Commit> = parents.iter().collect();
        let oid = self
            .git
            .commit(None, &sig, &sig, "commit", &tree, &parents)
            .unwrap();
        self.git.reference(refname, oid, true, "test").unwrap();
        oid.to_string()
    }

    fn open(&self) -> Repository {
        Repository::discover(self.path()).unwrap()
    }
}

fn lib_rs(changed: bool) -> String {
    let mut out = String::new();
    for i in 1..=30 {
        if i == 1 {
            out.push_str("fn first() {\n");
        } else if i == 15 {
            out.push_str("fn second() {\n");
        } else if changed && i == 5 {
            out.push_str("    let five = 5;\n    let extra = 1;\n");
        } else if changed && i == 20 {
            // line 20 removed
        } else {
            out.push_str(&format!("    let line{i} = {i};\n"));
        }
    }
    out
}

fn numbered(n: usize, replace: Option<(usize, &str)>) -> String {
    (1..=n)
        .map(|i| match replace {
            Some((at, with)) if at == i => format!("{with}\n"),
            _ => format!("line {i} of the old file\n"),
        })
        .collect()
}

/// main: the base; feature: every kind of change, never checked out.
fn scenario() -> (Fixture, String, String) {
    let fx = Fixture::new();
    let mut files = Files::new();
    files.insert("src/lib.rs", text(&lib_rs(false)));
    files.insert("README.md", text("# readme\n"));
    files.insert("old_name.txt", text(&numbered(10, None)));
    files.insert("run.sh", text("echo hi\n"));
    files.insert("gone.txt", text("bye\n"));
    files.insert("logo.bin", (b"\x89PNG\0\0\x01".to_vec(), BLOB));
    files.insert("tail.txt", text("a\nb\nc"));
    let base = fx.commit("refs/heads/main", &[], &files);

    files.insert("src/lib.rs", text(&lib_rs(true)));
    files.remove("old_name.txt");
    files.insert(
        "new_name.txt",
        text(&numbered(10, Some((4, "line 4 changed")))),
    );
    files.insert("run.sh", (b"echo hi\n".to_vec(), EXEC));
    files.remove("gone.txt");
    files.insert("added.txt", text("hello\nworld\n"));
    files.insert("logo.bin", (b"\x89PNG\0\0\x02".to_vec(), BLOB));
    files.insert("tail.txt", text("a\nb\nc\nd"));
    let head = fx.commit("refs/heads/feature", &[&base], &files);
    (fx, base, head)
}

fn file<'a>(diff: &'a Diff, path: &str) -> &'a FileDiff {
    diff.files
        .iter()
        .find(|f| f.path == path)
        .unwrap_or_else(|| panic!("no {path} in diff"))
}

/// `git diff --no-color main feature` (git 2.47) with its `index` lines
/// removed.
const GIT_DIFF: &str = r#"diff --git a/added.txt b/added.txt
new file mode 100644
--- /dev/null
+++ b/added.txt
@@ -0,0 +1,2 @@
+hello
+world
diff --git a/gone.txt b/gone.txt
deleted file mode 100644
--- a/gone.txt
+++ /dev/null
@@ -1 +0,0 @@
-bye
diff --git a/logo.bin b/logo.bin
Binary files a/logo.bin and b/logo.bin differ
diff --git a/old_name.txt b/new_name.txt
similarity index 90%
rename from old_name.txt
rename to new_name.txt
--- a/old_name.txt
+++ b/new_name.txt
@@ -1,7 +1,7 @@
 line 1 of the old file
 line 2 of the old file
 line 3 of the old file
-line 4 of the old file
+line 4 changed
 line 5 of the old file
 line 6 of the old file
 line 7 of the old file
diff --git a/run.sh b/run.sh
old mode 100644
new mode 100755
diff --git a/src/lib.rs b/src/lib.rs
--- a/src/lib.rs
+++ b/src/lib.rs
@@ -2,7 +2,8 @@ fn first() {
     let line2 = 2;
     let line3 = 3;
     let line4 = 4;
-    let line5 = 5;
+    let five = 5;
+    let extra = 1;
     let line6 = 6;
     let line7 = 7;
     let line8 = 8;
@@ -17,7 +18,6 @@ fn second() {
     let line17 = 17;
     let line18 = 18;
     let line19 = 19;
-    let line20 = 20;
     let line21 = 21;
     let line22 = 22;
     let line23 = 23;
diff --git a/tail.txt b/tail.txt
--- a/tail.txt
+++ b/tail.txt
@@ -1,3 +1,4 @@
 a
 b
-c
\ No newline at end of file
+c
+d
\ No newline at end of file
"#;

#[test]
fn render_matches_git_diff() {
    let (fx, base, head) = scenario();
    let diff = fx.open().diff(&base, &head).unwrap();
    assert_eq!(diff.render(), GIT_DIFF);
    assert_eq!(diff.base_commit, base);
    assert_eq!(diff.head_commit, head);
    assert_eq!(diff.sha256, crate::digest::sha256(GIT_DIFF.as_bytes()));
    assert!(diff.sha256.starts_with("sha256:") && diff.sha256.len() == 7 + 64);
}

#[test]
fn every_kind_of_change_is_reported() {
    let (fx, base, head) = scenario();
    let diff = fx.open().diff(&base, &head).unwrap();
    let paths: Vec<&str> = diff.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "added.txt",
            "gone.txt",
            "logo.bin",
            "new_name.txt",
            "run.sh",
            "src/lib.rs",
            "tail.txt"
        ]
    );

    let added = file(&diff, "added.txt");
    assert_eq!(
        (added.status, added.new_mode, added.old_mode),
        (FileStatus::Added, Some(BLOB), None)
    );
    assert_eq!((added.additions, added.deletions), (2, 0));
    assert!(added.old_blob.is_none() && added.new_blob.is_some());

    let gone = file(&diff, "gone.txt");
    assert_eq!(
        (gone.status, gone.additions, gone.deletions),
        (FileStatus::Deleted, 0, 1)
    );
    assert!(gone.new_blob.is_none());

    let renamed = file(&diff, "new_name.txt");
    assert_eq!(renamed.status, FileStatus::Renamed);
    assert_eq!(renamed.old_path.as_deref(), Some("old_name.txt"));
    assert_eq!(renamed.similarity, Some(90));

    let binary = file(&diff, "logo.bin");
    assert!(binary.binary);
    assert!(binary.hunks.is_empty());

    let mode = file(&diff, "run.sh");
    assert_eq!(mode.status, FileStatus::Modified);
    assert!(mode.mode_changed());
    assert_eq!((mode.old_mode, mode.new_mode), (Some(BLOB), Some(EXEC)));
    assert!(mode.hunks.is_empty());

    assert_eq!(
        (diff.additions(), diff.deletions()),
        (2 + 1 + 2 + 2, 1 + 1 + 2 + 1)
    );
}

#[test]
fn hunks_carry_line_numbers_and_function_context() {
    let (fx, base, head) = scenario();
    let diff = fx.open().diff(&base, &head).unwrap();
    let lib = file(&diff, "src/lib.rs");
    assert_eq!(lib.hunks.len(), 2);
    let first = &lib.hunks[0];
    assert_eq!(
        (
            first.old_start,
            first.old_lines,
            first.new_start,
            first.new_lines
        ),
        (2, 7, 2, 8)
    );
    assert_eq!(first.context, "fn first() {");
    let numbered: Vec<(LineKind, Option<u32>, Option<u32>, &str)> = first
        .lines
        .iter()
        .map(|l| (l.kind, l.old_lineno, l.new_lineno, l.text.as_str()))
        .collect();
    assert_eq!(
        numbered[3],
        (LineKind::Removed, Some(5), None, "    let line5 = 5;")
    );
    assert_eq!(
        numbered[4],
        (LineKind::Added, None, Some(5), "    let five = 5;")
    );
    assert_eq!(
        numbered[5],
        (LineKind::Added, None, Some(6), "    let extra = 1;")
    );
    assert_eq!(
        numbered[6],
        (LineKind::Context, Some(6), Some(7), "    let line6 = 6;")
    );

    let second = &lib.hunks[1];
    assert_eq!(second.context, "fn second() {");
    let removed: Vec<_> = second
        .lines
        .iter()
        .filter(|l| l.kind == LineKind::Removed)
        .collect();
    assert_eq!(removed.len(), 1);
    assert_eq!(
        (removed[0].old_lineno, removed[0].text.as_str()),
        (Some(20), "    let line20 = 20;")
    );
}

#[test]
fn missing_newline_at_end_of_file_is_marked() {
    let (fx, base, head) = scenario();
    let diff = fx.open().diff(&base, &head).unwrap();
    let tail = file(&diff, "tail.txt");
    let marked: Vec<(LineKind, &str)> = tail.hunks[0]
        .lines
        .iter()
        .filter(|l| l.no_newline)
        .map(|l| (l.kind, l.text.as_str()))
        .collect();
    assert_eq!(marked, [(LineKind::Removed, "c"), (LineKind::Added, "d")]);
}

#[test]
fn dirty_working_tree_and_checkout_are_ignored() {
    let (fx, base, head) = scenario();
    // main checked out, then edited and extended without committing.
    fx.git
        .checkout_head(Some(git2::build::CheckoutBuilder::new().force()))
        .unwrap();
    std::fs::write(fx.path().join("README.md"), "# dirty\n").unwrap();
    std::fs::write(fx.path().join("untracked.txt"), "new\n").unwrap();
    let repo = fx.open();
    assert_eq!(repo.current_branch().as_deref(), Some("main"));
    let diff = repo.diff(&base, &head).unwrap();
    assert_eq!(diff.render(), GIT_DIFF);
    assert_eq!(
        repo.read_file(&base, "README.md").unwrap().unwrap(),
        b"# readme\n"
    );
}

#[test]
fn branches_resolve_whether_or_not_checked_out() {
    let (fx, base, head) = scenario();
    let repo = fx.open();
    assert_eq!(repo.resolve_branch("feature").unwrap(), head);
    assert_eq!(repo.resolve_branch("main").unwrap(), base);
    assert_eq!(repo.resolve_branch(&head[..10]).unwrap(), head);
    // Only a remote-tracking branch.
    fx.git
        .reference(
            "refs/remotes/origin/only-remote",
            git2::Oid::from_str(&head).unwrap(),
            true,
            "t",
        )
        .unwrap();
    assert_eq!(repo.resolve_branch("only-remote").unwrap(), head);
    fx.git
        .tag_lightweight("v1", &fx.git.revparse_single(&base).unwrap(), false)
        .unwrap();
    assert_eq!(repo.resolve_branch("v1").unwrap(), base);

    match repo.resolve_branch("speed/task-404") {
        Err(err @ Error::BranchNotFound { .. }) => {
            assert!(err.to_string().contains("speed/task-404"), "{err}");
        }
        other => panic!("expected BranchNotFound, got {other:?}"),
    }
    match repo.resolve_commit("deadbeef") {
        Err(Error::CommitNotFound { rev }) => assert_eq!(rev, "deadbeef"),
        other => panic!("expected CommitNotFound, got {other:?}"),
    }
}

#[test]
fn main_branch_resolution_order() {
    let fx = Fixture::new();
    let mut files = Files::new();
    files.insert("a", text("a\n"));
    let master = fx.commit("refs/heads/master", &[], &files);
    let repo = fx.open();
    assert_eq!(repo.resolve_main(None).unwrap().name, "master");

    files.insert("b", text("b\n"));
    let main = fx.commit("refs/heads/main", &[&master], &files);
    assert_eq!(
        repo.resolve_main(None).unwrap(),
        MainBranch {
            name: "main".into(),
            commit: main.clone()
        }
    );

    files.insert("c", text("c\n"));
    let trunk = fx.commit("refs/remotes/origin/trunk", &[&main], &files);
    fx.git
        .reference_symbolic(
            "refs/remotes/origin/HEAD",
            "refs/remotes/origin/trunk",
            true,
            "t",
        )
        .unwrap();
    assert_eq!(
        repo.resolve_main(None).unwrap(),
        MainBranch {
            name: "trunk".into(),
            commit: trunk
        }
    );

    assert_eq!(repo.resolve_main(Some("master")).unwrap().commit, master);
    assert!(matches!(
        repo.resolve_main(Some("develop")),
        Err(Error::BranchNotFound { branch, .. }) if branch == "develop"
    ));
}

#[test]
fn no_main_branch_says_what_was_tried() {
    let fx = Fixture::new();
    let mut files = Files::new();
    files.insert("a", text("a\n"));
    fx.commit("refs/heads/trunk", &[], &files);
    let err = fx.open().resolve_main(None).unwrap_err();
    let message = err.to_string();
    assert!(
        message.contains("origin/HEAD") && message.contains("`master`"),
        "{message}"
    );
}

/// main: m1 - m2; the task branch forks from m1: m1 - t1.
fn forked() -> (Fixture, MainBranch, String, String, String) {
    let fx = Fixture::new();
    let mut files = Files::new();
    files.insert("a", text("1\n"));
    let m1 = fx.commit("refs/heads/main", &[], &files);
    files.insert("b", text("task\n"));
    let t1 = fx.commit("refs/heads/speed/task-1", &[&m1], &files);
    files.remove("b");
    files.insert("a", text("2\n"));
    let m2 = fx.commit("refs/heads/main", &[&m1], &files);
    let main = MainBranch {
        name: "main".into(),
        commit: m2.clone(),
    };
    (fx, main, m1, m2, t1)
}

#[test]
fn diff_base_follows_the_contract_order() {
    let (fx, main, m1, m2, t1) = forked();
    let repo = fx.open();
    let run = |exec: Option<&str>, base: Option<&str>, branch: Option<&str>| {
        repo.diff_base(&BaseRequest {
            main: &main,
            head: &t1,
            execution_base_commit: exec,
            base_commit: base,
            task_base_branch: branch,
        })
        .unwrap()
    };

    // 1. execution_base_commit wins over everything.
    let got = run(Some(&m2), Some(&m2), Some("main"));
    assert_eq!(
        (got.commit.as_str(), got.how.as_str()),
        (m2.as_str(), "execution_base_commit")
    );

    // 2. base branch is main: merge-base, even with a base_commit.
    let got = run(None, Some(&m2), Some("main"));
    assert_eq!(got.commit, m1);
    assert!(
        got.how.contains("merge-base") && got.how.contains("base_branch"),
        "{}",
        got.how
    );

    // 3. base_commit when the base branch is something else.
    let got = run(None, Some(&m2), Some("release"));
    assert_eq!(
        (got.commit.as_str(), got.how.as_str()),
        (m2.as_str(), "base_commit")
    );

    // 4. merge-base of main and the branch otherwise.
    let got = run(None, None, None);
    assert_eq!(got.commit, m1);

    // A given commit that does not resolve falls through, and says so.
    let got = run(
        Some("0123456789abcdef0123456789abcdef01234567"),
        Some("nope"),
        None,
    );
    assert_eq!(got.commit, m1);
    assert!(
        got.how.contains("execution_base_commit 0123456789"),
        "{}",
        got.how
    );
    assert!(
        got.how.contains("base_commit nope not found"),
        "{}",
        got.how
    );
}

#[test]
fn unrelated_histories_have_no_merge_base() {
    let (fx, main, ..) = forked();
    let mut files = Files::new();
    files.insert("z", text("z\n"));
    let orphan = fx.commit("refs/heads/orphan", &[], &files);
    let err = fx.open().merge_base(&main.commit, &orphan).unwrap_err();
    assert!(matches!(err, Error::NoMergeBase { .. }));
    assert!(err.to_string().contains(&orphan));
}

#[test]
fn not_a_repository_names_the_path() {
    let dir = tempfile::tempdir().unwrap();
    // `open`, unlike `discover`, does not search parent folders, so a
    // repository enclosing the temp dir cannot interfere.
    let inner = dir.path().join("inner");
    std::fs::create_dir(&inner).unwrap();
    match Repository::open(&inner) {
        Err(err @ Error::NotARepository { .. }) => {
            assert!(
                err.to_string().contains(&inner.display().to_string()),
                "{err}"
            );
        }
        other => panic!("expected NotARepository, got {other:?}"),
    }
}

#[test]
fn discover_finds_the_root_from_a_subfolder() {
    let (fx, ..) = scenario();
    let sub = fx.path().join("deep/er");
    std::fs::create_dir_all(&sub).unwrap();
    let repo = Repository::discover(&sub).unwrap();
    assert_eq!(
        repo.root().canonicalize().unwrap(),
        fx.path().canonicalize().unwrap()
    );
    let again = Repository::open(repo.root()).unwrap();
    assert_eq!(again.root(), repo.root());
}

#[test]
fn reads_files_and_blobs_at_a_commit() {
    let (fx, base, head) = scenario();
    let repo = fx.open();
    assert_eq!(
        repo.read_file(&head, "added.txt").unwrap().unwrap(),
        b"hello\nworld\n"
    );
    assert_eq!(repo.read_file(&base, "added.txt").unwrap(), None);
    assert_eq!(repo.read_file(&base, "src").unwrap(), None);
    assert_eq!(
        repo.read_file("feature", "src/lib.rs").unwrap().unwrap(),
        lib_rs(true).as_bytes()
    );

    let files = repo.list_files(&head).unwrap();
    let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "README.md",
            "added.txt",
            "logo.bin",
            "new_name.txt",
            "run.sh",
            "src/lib.rs",
            "tail.txt"
        ]
    );
    let added = files.iter().find(|f| f.path == "added.txt").unwrap();
    assert_eq!(repo.read_blob(&added.blob).unwrap(), b"hello\nworld\n");
    assert!(matches!(
        repo.read_blob("0000000000000000000000000000000000000001"),
        Err(Error::BlobNotFound { .. })
    ));
}

#[test]
fn identical_commits_give_an_empty_diff() {
    let (fx, base, _) = scenario();
    let diff = fx.open().diff(&base, "main").unwrap();
    assert!(diff.is_empty());
    assert_eq!(diff.render(), "");
}
