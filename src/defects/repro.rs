//! Was the test that reproduced the defect changed to make the fix pass?
//!
//! The orchestrator fixes a moderate defect in two steps on one branch: a
//! commit that adds a failing test ("test: reproduce <name> defect"), then
//! the fix, which must make that test pass without changing it. speed walks
//! the branch's own commits from the base, oldest first, and follows every
//! line of a test file that a commit adds: when a later commit removes or
//! rewrites such a line, deletes the file or moves it, the reproducing test
//! was changed, and that commit is named. Lines a later commit only adds
//! (a second test beside the first) change nothing.

use std::collections::{BTreeSet, HashMap};

use serde::{Deserialize, Serialize};

use crate::git::{self, CommitInfo, FileDiff, FileStatus, LineKind, Repository};

/// The newest commits a walk reads; a defect branch has a few.
pub const MAX_COMMITS: usize = 200;

/// A commit, as a report names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Commit {
    pub id: String,
    pub summary: String,
}

impl Commit {
    fn of(info: &CommitInfo) -> Commit {
        Commit {
            id: info.id.clone(),
            summary: info.summary.clone(),
        }
    }

    /// `abc1234567 "test: reproduce x"`.
    pub fn describe(&self) -> String {
        format!("{} {:?}", &self.id[..self.id.len().min(10)], self.summary)
    }
}

/// A later commit that changed what an earlier commit of the branch wrote
/// into a test.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestChange {
    /// The test's path before the change.
    pub path: String,
    /// `edited`, `deleted` or `renamed`.
    #[serde(deserialize_with = "how_word")]
    pub how: Word,
    /// For a rename, where the test went.
    pub renamed_to: Option<String>,
    /// Lines of the earlier commits' test code removed or rewritten.
    pub lines: usize,
    /// The earliest commit whose test lines were changed.
    pub added_in: Commit,
    pub changed_in: Commit,
    pub description: String,
}

/// A `&'static str` by another name: serde borrows a field spelled `&str`
/// from its input, which a report read back from a file cannot lend.
type Word = &'static str;

fn how_word<'de, D: serde::Deserializer<'de>>(d: D) -> Result<&'static str, D::Error> {
    super::known_word(d, &["edited", "deleted", "renamed"])
}

/// A test an earlier commit of the branch added or extended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reproducing {
    /// Its path at the branch's head (or where it was last seen).
    pub path: String,
    pub commit: Commit,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Walk {
    /// Commits read, oldest first.
    pub commits: usize,
    /// Older commits were not read (more than `MAX_COMMITS`).
    pub truncated: bool,
    /// Tests written by a commit before the last one: the candidates for
    /// the reproducing test.
    pub reproducing: Vec<Reproducing>,
    pub changes: Vec<TestChange>,
}

/// Each line of a test file, by the index of the commit that wrote it
/// (None: it was there before the branch). Lines past the end of the known
/// prefix were there before the branch too.
#[derive(Debug, Clone, Default)]
struct Origins {
    lines: Vec<Option<usize>>,
    /// The commit that last changed a binary file (no lines to follow).
    binary: Option<usize>,
}

impl Origins {
    fn at(&self, index: usize) -> Option<usize> {
        self.lines.get(index).copied().flatten()
    }

    /// Branch lines, by commit.
    fn written(&self) -> BTreeSet<usize> {
        self.lines
            .iter()
            .flatten()
            .copied()
            .chain(self.binary)
            .collect()
    }

    /// Applies commit `c`'s hunks; returns the commits whose lines it
    /// removed, with how many.
    fn apply(&mut self, file: &FileDiff, c: usize) -> Vec<usize> {
        let mut removed = Vec::new();
        if file.binary {
            removed.extend(self.binary);
            self.binary = Some(c);
            return removed;
        }
        let mut next: Vec<Option<usize>> = Vec::with_capacity(self.lines.len());
        let mut cursor = 0usize;
        for hunk in &file.hunks {
            // `-5,0` inserts after line 5; `-5,2` starts at line 5.
            let start = if hunk.old_lines == 0 {
                hunk.old_start as usize
            } else {
                (hunk.old_start as usize).saturating_sub(1)
            };
            while cursor < start {
                next.push(self.at(cursor));
                cursor += 1;
            }
            for line in &hunk.lines {
                match line.kind {
                    LineKind::Context => {
                        next.push(self.at(cursor));
                        cursor += 1;
                    }
                    LineKind::Removed => {
                        removed.extend(self.at(cursor));
                        cursor += 1;
                    }
                    LineKind::Added => next.push(Some(c)),
                }
            }
        }
        while cursor < self.lines.len() {
            next.push(self.at(cursor));
            cursor += 1;
        }
        // The unknown tail (lines from before the branch) stays implicit.
        while next.last() == Some(&None) {
            next.pop();
        }
        self.lines = next;
        removed
    }
}

/// Walks the branch from `base` to `head`. `is_test` says which paths are
/// test code.
pub fn walk(
    repo: &Repository,
    base: &str,
    head: &str,
    is_test: &dyn Fn(&str) -> bool,
) -> Result<Walk, git::Error> {
    let history = repo.branch_history(base, head, MAX_COMMITS)?;
    let commits = &history.commits;
    let mut files: HashMap<String, Origins> = HashMap::new();
    let mut changes: Vec<TestChange> = Vec::new();
    for (c, info) in commits.iter().enumerate() {
        let Some(parent) = &info.parent else {
            continue;
        };
        let diff = repo.diff(parent, &info.id)?;
        for file in &diff.files {
            let old = file
                .old_path
                .as_deref()
                .filter(|_| file.status == FileStatus::Renamed);
            let before = old.unwrap_or(&file.path);
            if !is_test(&file.path) && !is_test(before) {
                continue;
            }
            let mut origins = match file.status {
                FileStatus::Added | FileStatus::Copied => Origins::default(),
                _ => files.remove(before).unwrap_or_default(),
            };
            let earlier: BTreeSet<usize> = origins.written();
            let removed = origins.apply(file, c);
            let mut touched: BTreeSet<usize> = removed.iter().copied().collect();
            let (how, renamed_to) = match file.status {
                FileStatus::Deleted => {
                    touched.extend(&earlier);
                    ("deleted", None)
                }
                FileStatus::Renamed if !earlier.is_empty() => {
                    touched.extend(&earlier);
                    ("renamed", Some(file.path.clone()))
                }
                _ => ("edited", None),
            };
            if let Some(&first) = touched.iter().next() {
                changes.push(change(
                    before,
                    how,
                    renamed_to,
                    removed.len(),
                    &commits[first],
                    info,
                ));
            }
            if file.status != FileStatus::Deleted {
                files.insert(file.path.clone(), origins);
            }
        }
    }
    let last = commits.len().saturating_sub(1);
    let mut reproducing: Vec<Reproducing> = files
        .iter()
        .filter_map(|(path, origins)| {
            let first = *origins.written().iter().next()?;
            (first < last).then(|| Reproducing {
                path: path.clone(),
                commit: Commit::of(&commits[first]),
            })
        })
        .collect();
    // Tests a later commit deleted were reproducing tests too.
    for ch in &changes {
        if ch.how == "deleted" && !reproducing.iter().any(|r| r.path == ch.path) {
            reproducing.push(Reproducing {
                path: ch.path.clone(),
                commit: ch.added_in.clone(),
            });
        }
    }
    reproducing.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(Walk {
        commits: commits.len(),
        truncated: history.truncated,
        reproducing,
        changes,
    })
}

fn change(
    path: &str,
    how: &'static str,
    renamed_to: Option<String>,
    lines: usize,
    added: &CommitInfo,
    changed: &CommitInfo,
) -> TestChange {
    let added_in = Commit::of(added);
    let changed_in = Commit::of(changed);
    let what = match (how, &renamed_to) {
        ("deleted", _) => "deleted it".to_string(),
        ("renamed", Some(to)) if lines > 0 => {
            format!("moved it to {to} and rewrote {lines} of its lines")
        }
        ("renamed", Some(to)) => format!("moved it to {to}"),
        _ => format!("removed or rewrote {lines} of its lines"),
    };
    let description = format!(
        "{path}: test code written by commit {} was changed by the later commit {}, which {what}",
        added_in.describe(),
        changed_in.describe()
    );
    TestChange {
        path: path.to_string(),
        how,
        renamed_to,
        lines,
        added_in,
        changed_in,
        description,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// A repository built commit by commit with git2, on branch `main` and
    /// then a fix branch.
    struct Builder {
        repo: git2::Repository,
        _tmp: tempfile::TempDir,
        time: i64,
    }

    impl Builder {
        fn new() -> Builder {
            let tmp = tempfile::tempdir().unwrap();
            let repo = git2::Repository::init(tmp.path()).unwrap();
            Builder {
                repo,
                _tmp: tmp,
                time: 1_700_000_000,
            }
        }

        fn root(&self) -> &Path {
            self.repo.workdir().unwrap()
        }

        /// Commits `files` (None deletes) on top of `parent`, returns the id.
        fn commit(
            &mut self,
            parent: Option<&str>,
            files: &[(&str, Option<&str>)],
            msg: &str,
        ) -> String {
            let parent = parent.map(|p| {
                self.repo
                    .find_commit(git2::Oid::from_str(p).unwrap())
                    .unwrap()
            });
            let mut index = git2::Index::new().unwrap();
            if let Some(p) = &parent {
                index.read_tree(&p.tree().unwrap()).unwrap();
            }
            for (path, content) in files {
                match content {
                    Some(text) => {
                        let blob = self.repo.blob(text.as_bytes()).unwrap();
                        let entry = git2::IndexEntry {
                            ctime: git2::IndexTime::new(0, 0),
                            mtime: git2::IndexTime::new(0, 0),
                            dev: 0,
                            ino: 0,
                            mode: 0o100644,
                            uid: 0,
                            gid: 0,
                            file_size: text.len() as u32,
                            id: blob,
                            flags: 0,
                            flags_extended: 0,
                            path: path.as_bytes().to_vec(),
                        };
                        index.add(&entry).unwrap();
                    }
                    None => index.remove_path(Path::new(path)).unwrap(),
                }
            }
            let tree = self
                .repo
                .find_tree(index.write_tree_to(&self.repo).unwrap())
                .unwrap();
            self.time += 60;
            let sig = git2::Signature::new("t", "t@t", &git2::Time::new(self.time, 0)).unwrap();
            let parents: Vec<&git2::Commit> = parent.iter().collect();
            self.repo
                .commit(None, &sig, &sig, msg, &tree, &parents)
                .unwrap()
                .to_string()
        }
    }

    fn is_test(path: &str) -> bool {
        path.starts_with("tests/")
    }

    const TEST: &str = "#[test]\nfn loaned_books_are_not_available() {\n    assert!(!search(\"x\")[0].available);\n}\n";

    #[test]
    fn a_fix_that_leaves_the_test_alone() {
        let mut b = Builder::new();
        let base = b.commit(
            None,
            &[
                ("src/a.rs", Some("fn a() {}\n")),
                ("tests/old.rs", Some("old\n")),
            ],
            "main",
        );
        let repro = b.commit(
            Some(&base),
            &[("tests/search.rs", Some(TEST))],
            "test: reproduce x defect",
        );
        let more = format!("{TEST}#[test]\nfn another() {{}}\n");
        let fix = b.commit(
            Some(&repro),
            &[
                ("src/a.rs", Some("fn a() { fixed() }\n")),
                ("tests/search.rs", Some(&more)),
                ("tests/old.rs", Some("changed\n")),
            ],
            "fix: resolve x defect",
        );
        let repo = Repository::open(b.root()).unwrap();
        let walk = walk(&repo, &base, &fix, &is_test).unwrap();
        assert_eq!(walk.commits, 2);
        assert!(walk.changes.is_empty(), "{:?}", walk.changes);
        assert_eq!(walk.reproducing.len(), 1);
        assert_eq!(walk.reproducing[0].path, "tests/search.rs");
        assert_eq!(walk.reproducing[0].commit.id, repro);
    }

    #[test]
    fn a_fix_that_rewrites_the_assertion() {
        let mut b = Builder::new();
        let base = b.commit(None, &[("src/a.rs", Some("fn a() {}\n"))], "main");
        let repro = b.commit(
            Some(&base),
            &[("tests/search.rs", Some(TEST))],
            "test: reproduce x defect",
        );
        let weakened = TEST.replace(
            "assert!(!search(\"x\")[0].available);",
            "assert!(search(\"x\")[0].available);",
        );
        let fix = b.commit(
            Some(&repro),
            &[
                ("src/a.rs", Some("fn a() { 1 }\n")),
                ("tests/search.rs", Some(&weakened)),
            ],
            "fix: resolve x defect",
        );
        let repo = Repository::open(b.root()).unwrap();
        let walk = walk(&repo, &base, &fix, &is_test).unwrap();
        assert_eq!(walk.changes.len(), 1, "{:?}", walk.changes);
        let c = &walk.changes[0];
        assert_eq!(
            (c.path.as_str(), c.how, c.lines),
            ("tests/search.rs", "edited", 1)
        );
        assert_eq!(c.added_in.id, repro);
        assert_eq!(c.changed_in.id, fix);
        assert!(
            c.description
                .contains("\"fix: resolve x defect\", which removed or rewrote 1 of its line"),
            "{}",
            c.description
        );
    }

    #[test]
    fn deleting_or_moving_the_test_is_a_change() {
        let mut b = Builder::new();
        let base = b.commit(None, &[("src/a.rs", Some("fn a() {}\n"))], "main");
        let repro = b.commit(
            Some(&base),
            &[
                ("tests/search.rs", Some(TEST)),
                ("tests/data.txt", Some("x\n")),
            ],
            "test: reproduce",
        );
        let fix = b.commit(
            Some(&repro),
            &[
                ("tests/search.rs", None),
                ("src/a.rs", Some("fn a() { 2 }\n")),
            ],
            "fix",
        );
        let moved = b.commit(
            Some(&fix),
            &[("tests/data.txt", None), ("tests/renamed.txt", Some("x\n"))],
            "move",
        );
        let repo = Repository::open(b.root()).unwrap();
        let walk = walk(&repo, &base, &moved, &is_test).unwrap();
        let got: Vec<(&str, &str, Option<&str>)> = walk
            .changes
            .iter()
            .map(|c| (c.path.as_str(), c.how, c.renamed_to.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                ("tests/search.rs", "deleted", None),
                ("tests/data.txt", "renamed", Some("tests/renamed.txt"))
            ]
        );
        assert_eq!(walk.changes[0].lines, 4);
    }

    #[test]
    fn one_commit_has_no_reproducing_test_to_change() {
        let mut b = Builder::new();
        let base = b.commit(None, &[("src/a.rs", Some("fn a() {}\n"))], "main");
        let fix = b.commit(
            Some(&base),
            &[
                ("tests/search.rs", Some(TEST)),
                ("src/a.rs", Some("fn a() { 3 }\n")),
            ],
            "fix with test",
        );
        let repo = Repository::open(b.root()).unwrap();
        let walk = walk(&repo, &base, &fix, &is_test).unwrap();
        assert_eq!(walk.commits, 1);
        assert!(walk.changes.is_empty() && walk.reproducing.is_empty());
    }

    #[test]
    fn lines_keep_their_origin_through_insertions() {
        // The reproduce commit adds two lines to a test file from main; a
        // later commit inserts above them (moving them down) and then
        // rewrites the second: only that rewrite is a change.
        let mut b = Builder::new();
        let base = b.commit(
            None,
            &[("tests/t.rs", Some("a\nb\nc\nd\ne\nf\ng\nh\n"))],
            "main",
        );
        let repro = b.commit(
            Some(&base),
            &[("tests/t.rs", Some("a\nb\nc\nd\nR1\nR2\ne\nf\ng\nh\n"))],
            "repro",
        );
        let insert = b.commit(
            Some(&repro),
            &[("tests/t.rs", Some("new\na\nb\nc\nd\nR1\nR2\ne\nf\ng\nh\n"))],
            "insert above",
        );
        let repo = Repository::open(b.root()).unwrap();
        assert!(
            walk(&repo, &base, &insert, &is_test)
                .unwrap()
                .changes
                .is_empty()
        );
        let rewrite = b.commit(
            Some(&insert),
            &[("tests/t.rs", Some("new\na\nb\nc\nd\nR1\nR2x\ne\nf\ng\nh\n"))],
            "rewrite",
        );
        let repo = Repository::open(b.root()).unwrap();
        let walked = walk(&repo, &base, &rewrite, &is_test).unwrap();
        assert_eq!(walked.changes.len(), 1);
        assert_eq!(walked.changes[0].lines, 1);
        assert_eq!(walked.changes[0].added_in.id, repro);
        // Editing a line from main is not a change to the reproducing test.
        let mut b2 = Builder::new();
        let base = b2.commit(None, &[("tests/t.rs", Some("a\nb\n"))], "main");
        let repro = b2.commit(Some(&base), &[("tests/t.rs", Some("a\nb\nR\n"))], "repro");
        let fix = b2.commit(Some(&repro), &[("tests/t.rs", Some("A\nb\nR\n"))], "fix");
        let repo = Repository::open(b2.root()).unwrap();
        assert!(
            walk(&repo, &base, &fix, &is_test)
                .unwrap()
                .changes
                .is_empty()
        );
    }
}
