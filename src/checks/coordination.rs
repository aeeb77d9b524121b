//! The `coordination` check: what a parser can tell of a feature's
//! coordination requirements at the head commit (`tasks::Coordination`).
//!
//! - A function profile: the function must exist with its arity where this
//!   change works on it. Rust counts the parameters besides `self`; Python
//!   those besides a bound `self` or `cls`, parameters with defaults
//!   included and `*args`/`**kwargs` not. With a `file`, the check runs
//!   when the change touches that file (the function must be in it at the
//!   head commit); without one, in the files the change touches (a function
//!   the change removes from them without defining it elsewhere in them is
//!   missing). A profile for code this change does not touch is another
//!   task's business: it is not checked, rather than cried wolf on.
//! - A shared interface: a name defined before the change (in its `file`,
//!   or in any file the change touches) must still be defined after it.
//! - `directory_structure`: every file the change creates (added, or the
//!   new side of a rename or copy) lies under one of its globs.
//!
//! `prohibited_changes` are sentences: the model rates them, not this check.
//! Files that cannot be read or parsed are skipped, like the other code
//! checks do.

use std::collections::HashSet;

use crate::git::{Diff, FileStatus};
use crate::tasks::Scope;
use crate::tasks::coordination::{Coordination, FunctionProfile, SharedInterface};

use super::sides::Sides;
use super::signature::{Callable, Pass, Signature};
use super::{Check, Finding, Severity};

/// What the check reads.
pub struct Input<'a> {
    pub diff: &'a Diff,
    pub coordination: &'a Coordination,
    /// Both sides of each changed file, outlined (`Sides::load`).
    pub sides: &'a Sides,
}

/// One side of a changed file, outlined.
struct Side {
    path: String,
    callables: Vec<Callable>,
    defined: HashSet<String>,
}

/// The findings of the coordination check, at `severity`.
pub fn run(input: &Input, severity: Severity) -> Vec<Finding> {
    let c = input.coordination;
    let mut findings = Vec::new();
    let finding = |file: Option<String>, line: Option<u32>, message: String| Finding {
        check: Check::Coordination.name().to_string(),
        severity,
        file,
        line,
        message,
        ..Finding::default()
    };
    if !c.directory_structure.is_empty() {
        let allowed = Scope {
            touched: c.directory_structure.clone(),
            ..Scope::default()
        };
        for file in &input.diff.files {
            let created = matches!(
                file.status,
                FileStatus::Added | FileStatus::Renamed | FileStatus::Copied
            );
            if created && !file.path.starts_with(".speed/") && !allowed.declares(&file.path) {
                findings.push(finding(
                    Some(file.path.clone()),
                    None,
                    format!(
                        "{} is created outside the directory structure the coordination requirements allow ({}).",
                        file.path,
                        c.directory_structure.join(", ")
                    ),
                ));
            }
        }
    }
    if c.function_profiles.is_empty() && c.shared_interfaces.is_empty() {
        return findings;
    }
    let (heads, bases) = sides(input);
    for profile in &c.function_profiles {
        if let Some((file, line, message)) = profile_problem(profile, input.diff, &heads, &bases) {
            findings.push(finding(Some(file), line, message));
        }
    }
    for interface in &c.shared_interfaces {
        if let Some((file, message)) = interface_problem(interface, &heads, &bases) {
            findings.push(finding(Some(file), None, message));
        }
    }
    findings
}

/// The head and base sides of every changed Rust or Python file that
/// could be read and parsed, in the diff's order.
fn sides(input: &Input) -> (Vec<Side>, Vec<Side>) {
    let mut heads = Vec::new();
    let mut bases = Vec::new();
    for (i, file) in input.diff.files.iter().enumerate() {
        if let Some(o) = input.sides.head.get(&i) {
            heads.push(Side {
                path: file.path.clone(),
                callables: o.callables.clone(),
                defined: o.defined.clone(),
            });
        }
        if let Some(o) = input.sides.base.get(&i) {
            bases.push(Side {
                path: file.old_path.as_deref().unwrap_or(&file.path).to_string(),
                callables: o.callables.clone(),
                defined: o.defined.clone(),
            });
        }
    }
    (heads, bases)
}

/// `Type::name` or `Class.name`: (owner, name); a plain name has no owner.
fn split_name(name: &str) -> (Option<&str>, &str) {
    let cut = name
        .rfind("::")
        .map(|i| (i, 2))
        .or_else(|| name.rfind('.').map(|i| (i, 1)));
    match cut {
        Some((i, len)) => {
            let owner = &name[..i];
            let owner = owner
                .rsplit("::")
                .next()
                .and_then(|o| o.rsplit('.').next())
                .unwrap_or(owner);
            (Some(owner), &name[i + len..])
        }
        None => (None, name),
    }
}

fn matches(callable: &Callable, name: &str) -> bool {
    let (owner, bare) = split_name(name);
    callable.name == bare && owner.is_none_or(|o| callable.owner.as_deref() == Some(o))
}

/// Parameters as a profile counts them.
fn arity(signature: &Signature) -> usize {
    match signature {
        Signature::Rust { params, .. } => *params,
        Signature::Python { params, .. } => params
            .iter()
            .filter(|p| !matches!(p.pass, Pass::Rest | Pass::Keywords))
            .count(),
    }
}

/// What is wrong with a profiled function, if anything this change is
/// answerable for: (file, line, message).
fn profile_problem(
    p: &FunctionProfile,
    diff: &Diff,
    heads: &[Side],
    bases: &[Side],
) -> Option<(String, Option<u32>, String)> {
    let in_scope: Vec<&Side> = match &p.file {
        Some(file) => {
            let deleted = diff
                .files
                .iter()
                .any(|f| f.status == FileStatus::Deleted && f.path == *file);
            if deleted {
                return Some((
                    file.clone(),
                    None,
                    format!(
                        "Function {} (profiled with {} parameters) is gone: this change deletes {file}.",
                        p.name, p.arity
                    ),
                ));
            }
            heads.iter().filter(|s| s.path == *file).collect()
        }
        None => heads.iter().collect(),
    };
    let found: Vec<(&Side, &Callable)> = in_scope
        .iter()
        .flat_map(|s| s.callables.iter().map(move |c| (*s, c)))
        .filter(|(_, c)| matches(c, &p.name))
        .collect();
    if found.is_empty() {
        return match &p.file {
            // The change works on the file the function belongs in.
            Some(file) if !in_scope.is_empty() => Some((
                file.clone(),
                None,
                format!(
                    "Function {} (profiled with {} parameters in {file}) is not defined in {file} at the head commit.",
                    p.name, p.arity
                ),
            )),
            Some(_) => None,
            None => {
                let removed_from = bases
                    .iter()
                    .find(|s| s.callables.iter().any(|c| matches(c, &p.name)))?;
                Some((
                    removed_from.path.clone(),
                    None,
                    format!(
                        "Function {} (profiled with {} parameters) is removed or renamed by this change: it was defined in {} and no changed file defines it now.",
                        p.name, p.arity, removed_from.path
                    ),
                ))
            }
        };
    }
    if found
        .iter()
        .any(|(_, c)| arity(&c.signature) == p.arity as usize)
    {
        return None;
    }
    let (side, callable) = found[0];
    let has = arity(&callable.signature);
    Some((
        side.path.clone(),
        Some(callable.line),
        format!(
            "Function {} takes {has} parameter{} but the coordination requirements profile it with {}{}.",
            p.name,
            if has == 1 { "" } else { "s" },
            p.arity,
            if p.intent.trim().is_empty() {
                String::new()
            } else {
                format!(" ({})", p.intent.trim())
            }
        ),
    ))
}

/// A shared interface this change removes or renames: (file, message).
fn interface_problem(
    s: &SharedInterface,
    heads: &[Side],
    bases: &[Side],
) -> Option<(String, String)> {
    let (_, bare) = split_name(&s.name);
    let in_file = |side: &&Side| s.file.as_ref().is_none_or(|f| *f == side.path);
    let had = bases
        .iter()
        .filter(in_file)
        .find(|side| side.defined.contains(bare))?;
    // Without a file, a name moved to another changed file is still there;
    // with one, it must stay in that file.
    let still = heads
        .iter()
        .filter(in_file)
        .any(|side| side.defined.contains(bare));
    if still {
        return None;
    }
    Some((
        had.path.clone(),
        format!(
            "Shared interface {} is removed or renamed by this change: {} defined it before and {} at the head commit.",
            s.name,
            had.path,
            if s.file.is_some() {
                "it does not"
            } else {
                "no changed file defines it"
            }
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::diff::FileDiff;
    use crate::tasks::coordination::FunctionProfile;
    use std::collections::HashMap;

    struct Blobs(HashMap<String, String>);

    impl crate::syntax::Blobs for Blobs {
        fn read(&self, blob: &str) -> Result<Vec<u8>, String> {
            self.0
                .get(blob)
                .map(|t| t.as_bytes().to_vec())
                .ok_or_else(|| "no blob".to_string())
        }
    }

    fn file(path: &str, status: FileStatus, old: Option<&str>, new: Option<&str>) -> FileDiff {
        FileDiff {
            path: path.into(),
            old_path: None,
            similarity: None,
            status,
            binary: false,
            old_mode: None,
            new_mode: None,
            old_blob: old.map(str::to_string),
            new_blob: new.map(str::to_string),
            additions: 1,
            deletions: 0,
            not_utf8: false,
            hunks: vec![],
        }
    }

    fn diff(files: Vec<FileDiff>) -> Diff {
        Diff {
            base_commit: "b".into(),
            head_commit: "h".into(),
            files,
            sha256: String::new(),
        }
    }

    fn profile(name: &str, arity: u32, file: Option<&str>) -> FunctionProfile {
        FunctionProfile {
            name: name.into(),
            arity,
            file: file.map(str::to_string),
            intent: String::new(),
        }
    }

    fn run_on(d: &Diff, c: &Coordination, blobs: &[(&str, &str)]) -> Vec<Finding> {
        let blobs = Blobs(
            blobs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        );
        let store = crate::syntax::Store::new(&blobs);
        let head = HashMap::new();
        let sides = Sides::load(&crate::checks::Files::new(&store, d, &head));
        run(
            &Input {
                diff: d,
                coordination: c,
                sides: &sides,
            },
            Severity::Major,
        )
    }

    const PY_OLD: &str = "class Review:\n    def build(self, a, b):\n        pass\n\nclass ReviewReport:\n    pass\n";
    const PY_NEW: &str = "class Review:\n    def build(self, a, b, c=1, *args, **kw):\n        pass\n\nclass Report:\n    pass\n";

    #[test]
    fn python_arity_counts_defaults_not_self_nor_variadics() {
        let d = diff(vec![file(
            "src/review.py",
            FileStatus::Modified,
            Some("o"),
            Some("n"),
        )]);
        let blobs = [("o", PY_OLD), ("n", PY_NEW)];
        let mut c = Coordination::default();
        c.function_profiles
            .push(profile("Review.build", 3, Some("src/review.py")));
        assert!(run_on(&d, &c, &blobs).is_empty());
        c.function_profiles[0].arity = 2;
        let f = run_on(&d, &c, &blobs);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].check, "coordination");
        assert_eq!(f[0].line, Some(2));
        assert!(
            f[0].message.contains("takes 3 parameters"),
            "{}",
            f[0].message
        );
    }

    #[test]
    fn rust_arity_leaves_self_out_and_a_missing_function_is_found() {
        let old = "pub struct Shelf;\nimpl Shelf {\n    pub fn add(&mut self, book: u32) {}\n}\n";
        let new = "pub struct Shelf;\nimpl Shelf {\n    pub fn insert(&mut self, book: u32, at: usize) {}\n}\n";
        let d = diff(vec![file(
            "src/shelf.rs",
            FileStatus::Modified,
            Some("o"),
            Some("n"),
        )]);
        let blobs = [("o", old), ("n", new)];
        let mut c = Coordination::default();
        c.function_profiles.push(profile("Shelf::insert", 2, None));
        assert!(run_on(&d, &c, &blobs).is_empty());
        c.function_profiles[0].arity = 1;
        assert_eq!(run_on(&d, &c, &blobs).len(), 1);
        // `add` was there before, and the change renamed it away.
        c.function_profiles = vec![profile("add", 1, None)];
        let f = run_on(&d, &c, &blobs);
        assert_eq!(f.len(), 1);
        assert!(
            f[0].message.contains("removed or renamed"),
            "{}",
            f[0].message
        );
        // A function no changed file ever defined is another task's.
        c.function_profiles = vec![profile("elsewhere", 1, None)];
        assert!(run_on(&d, &c, &blobs).is_empty());
        // With a file the change works on, it must be there.
        c.function_profiles = vec![profile("elsewhere", 1, Some("src/shelf.rs"))];
        assert!(
            run_on(&d, &c, &blobs)[0]
                .message
                .contains("not defined in src/shelf.rs")
        );
        c.function_profiles = vec![profile("elsewhere", 1, Some("src/other.rs"))];
        assert!(run_on(&d, &c, &blobs).is_empty());
    }

    #[test]
    fn a_shared_interface_removed_or_renamed_is_found() {
        let d = diff(vec![file(
            "src/types.py",
            FileStatus::Modified,
            Some("o"),
            Some("n"),
        )]);
        let blobs = [("o", PY_OLD), ("n", PY_NEW)];
        let mut c = Coordination::default();
        c.shared_interfaces.push(SharedInterface {
            name: "ReviewReport".into(),
            file: Some("src/types.py".into()),
        });
        let f = run_on(&d, &c, &blobs);
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(
            f[0].message
                .starts_with("Shared interface ReviewReport is removed or renamed")
        );
        c.shared_interfaces[0].name = "Review".into();
        assert!(run_on(&d, &c, &blobs).is_empty());
        // Moved to another changed file: still there.
        let d = diff(vec![
            file("src/types.py", FileStatus::Modified, Some("o"), Some("n")),
            file("src/report.py", FileStatus::Added, None, Some("r")),
        ]);
        c.shared_interfaces = vec![SharedInterface {
            name: "ReviewReport".into(),
            file: None,
        }];
        let blobs = [
            ("o", PY_OLD),
            ("n", PY_NEW),
            ("r", "class ReviewReport:\n    pass\n"),
        ];
        assert!(run_on(&d, &c, &blobs).is_empty());
    }

    #[test]
    fn files_created_outside_the_directory_structure() {
        let d = diff(vec![
            file("src/review/a.py", FileStatus::Added, None, Some("x")),
            file("scripts/b.py", FileStatus::Added, None, Some("x")),
            file("docs/c.md", FileStatus::Modified, Some("x"), Some("x")),
        ]);
        let c = Coordination {
            directory_structure: vec!["src/review/**".into(), "tests/**".into()],
            ..Coordination::default()
        };
        let f = run_on(&d, &c, &[("x", "x = 1\n")]);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].file.as_deref(), Some("scripts/b.py"));
        assert!(f[0].message.contains("src/review/**, tests/**"));
    }
}
