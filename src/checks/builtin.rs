//! The built-in checks, run on the diff model, the task's scope and
//! criteria, the impact analysis and the two sides of each changed Rust or
//! Python file (outlined with tree-sitter). Pure: blobs come through a
//! reader, findings go back as data. `breaking_change`, the one that reads
//! call sites across the project, is in `breaking`.

use std::collections::{HashMap, HashSet};

use crate::git::{Diff, FileDiff, LineKind};
use crate::impact::{self, Change, Confidence, Impact};
use crate::paths;
use crate::secrets::DiffSecret;
use crate::tasks::{Criterion, Scope};

use super::files::{Files, Side};
use super::outline::{self, Lang, Marker, Outline};
use super::sides::{MAX_OUTLINE_BYTES, Sides};
use super::{Check, Config, Finding, Severity};
use super::{discarded, measure, weakened};

mod breaking;

pub use breaking::{CallReader, CallReaderId};

/// How many places a message lists before "and N more".
const LISTED: usize = 3;

/// What the checks read.
pub struct Input<'a> {
    pub diff: &'a Diff,
    /// The task's declared files; None when there is no task.
    pub scope: Option<&'a Scope>,
    pub criteria: &'a [Criterion],
    /// The secrets redacted from the diff (`secrets::redact_diff`).
    pub secrets: &'a [DiffSecret],
    /// Both sides' files, from the review's store: call sites live in
    /// files the diff may not touch.
    pub files: &'a Files<'a>,
    /// Both sides of each changed file, outlined (`Sides::load`).
    pub sides: &'a Sides,
    /// What `breaking_change` reads at call sites, registered with the
    /// store before the index parsed (`CallReader::register`).
    pub calls: Option<CallReaderId<'a>>,
}

/// The findings, and what the checks could not look at.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outcome {
    pub findings: Vec<Finding>,
    pub notices: Vec<String>,
}

/// Run every built-in check that is not off; `impact` is None when the
/// impact analysis failed (its notice says why).
pub fn run(input: &Input, impact: Option<&Impact>, config: &Config) -> Outcome {
    start(input, config).finish(impact)
}

/// Run every built-in check but `breaking_change`, the one that reads the
/// impact analysis: these need not wait for it.
pub fn start<'a>(input: &'a Input<'a>, config: &'a Config) -> Started<'a> {
    let mut run = Run {
        input,
        config,
        impact: None,
        outcome: Outcome::default(),
    };
    run.outcome
        .notices
        .extend(input.sides.notices.iter().cloned());
    run.empty_diff();
    run.scope();
    run.secret();
    run.placeholder();
    run.debug_leftover();
    run.test_weakened();
    run.untested_criterion();
    run.large_diff();
    run.error_discarded();
    Started { run }
}

/// The built-in checks that need not wait for the impact analysis, run.
pub struct Started<'a> {
    run: Run<'a>,
}

impl<'a> Started<'a> {
    /// Run `breaking_change` on the impact analysis; every finding, worst
    /// first.
    pub fn finish(mut self, impact: Option<&'a Impact>) -> Outcome {
        self.run.impact = impact;
        self.run.breaking_change();
        super::sort(&mut self.run.outcome.findings);
        self.run.outcome
    }
}

struct Run<'a> {
    input: &'a Input<'a>,
    config: &'a Config,
    impact: Option<&'a Impact>,
    outcome: Outcome,
}

impl Run<'_> {
    fn push(&mut self, check: Check, file: Option<&str>, line: Option<u32>, message: String) {
        if let Some(severity) = self.config.severity(check) {
            self.outcome.findings.push(Finding {
                check: check.name().to_string(),
                severity,
                file: file.map(str::to_string),
                line,
                message,
                ..Finding::default()
            });
        }
    }

    fn on(&self, check: Check) -> bool {
        self.config.severity(check).is_some()
    }

    fn empty_diff(&mut self) {
        if !self.on(Check::EmptyDiff) {
            return;
        }
        let files = &self.input.diff.files;
        if files.is_empty() {
            self.push(
                Check::EmptyDiff,
                None,
                None,
                "Nothing was implemented: the branch does not differ from its base.".to_string(),
            );
        } else if files.iter().all(|f| paths::is_speed(&f.path)) {
            self.push(
                Check::EmptyDiff,
                None,
                None,
                "Nothing was implemented: the diff only changes speed's own files under .speed/."
                    .to_string(),
            );
        }
    }

    fn scope(&mut self) {
        let Some(scope) = self.input.scope.filter(|s| !s.is_empty()) else {
            return;
        };
        if !self.on(Check::Scope) {
            return;
        }
        let covered = |path: &str| {
            scope.declares(path)
                || paths::is_test(path)
                || paths::is_lockfile(path)
                || paths::is_speed(path)
        };
        for out in measure::outside(self.input.diff, &covered) {
            let (path, verb) = (out.path, out.change);
            let line = first_added(out.file);
            self.push(
                Check::Scope,
                Some(path),
                line,
                format!(
                    "{path} is {verb}, but the task does not declare it (files_touched, files_to_create, files_to_modify, files_to_delete)."
                ),
            );
        }
    }

    /// The head side's outline of a file named by its base or head path.
    fn head_outline(&self, path: &str) -> Option<&Outline> {
        let i = self
            .input
            .diff
            .files
            .iter()
            .position(|f| f.path == path || f.old_path.as_deref() == Some(path))?;
        self.input.sides.head.get(&i)
    }

    fn base_outline(&self, path: &str) -> Option<&Outline> {
        let i = self
            .input
            .diff
            .files
            .iter()
            .position(|f| f.old_path.as_deref().unwrap_or(&f.path) == path)?;
        self.input.sides.base.get(&i)
    }

    fn secret(&mut self) {
        let found: Vec<DiffSecret> = self
            .input
            .secrets
            .iter()
            .filter(|s| s.added)
            .cloned()
            .collect();
        for s in found {
            self.push(
                Check::Secret,
                Some(&s.file),
                Some(s.line),
                format!(
                    "A secret ({}) is added here. speed replaced it with {} in everything it sends or writes; remove it from the branch's history and rotate it.",
                    s.rule,
                    crate::secrets::placeholder(s.rule)
                ),
            );
        }
    }

    /// Markers of the given kinds on lines this diff adds, with their file.
    fn added_markers(&self, kinds: &[Marker], in_tests: bool) -> Vec<(String, outline::Found)> {
        let mut out = Vec::new();
        let documentation = self.doc_module_files();
        for (i, file) in self.input.diff.files.iter().enumerate() {
            let Some(head) = self.input.sides.head.get(&i) else {
                continue;
            };
            if (!in_tests && paths::is_test(&file.path)) || documentation.contains(&file.path) {
                continue;
            }
            let added: HashSet<u32> = file_added_lines(file).collect();
            for m in &head.markers {
                if kinds.contains(&m.marker)
                    && added.contains(&m.line)
                    && (in_tests || !head.in_test_region(m.line))
                {
                    out.push((file.path.clone(), m.clone()));
                }
            }
        }
        out
    }

    /// The files of the modules a changed Rust file declares for
    /// documentation only (`#[cfg(doc)] mod not_implemented;` in
    /// `src/lib.rs` is `src/not_implemented.rs` or its `mod.rs`).
    fn doc_module_files(&self) -> HashSet<String> {
        let mut out = HashSet::new();
        for (i, head) in &self.input.sides.head {
            let declaring = &self.input.diff.files[*i].path;
            let (dir, file) = declaring.rsplit_once('/').unwrap_or(("", declaring));
            let stem = file.trim_end_matches(".rs");
            // `lib.rs`, `main.rs` and `mod.rs` hold their folder's modules;
            // `foo.rs` holds those in `foo/`.
            let base = if matches!(stem, "lib" | "main" | "mod") {
                dir.to_string()
            } else if dir.is_empty() {
                stem.to_string()
            } else {
                format!("{dir}/{stem}")
            };
            for module in &head.doc_modules {
                let rel = module.replace("::", "/");
                let at = if base.is_empty() {
                    rel
                } else {
                    format!("{base}/{rel}")
                };
                out.insert(format!("{at}.rs"));
                out.insert(format!("{at}/mod.rs"));
            }
        }
        out
    }

    fn placeholder(&mut self) {
        if !self.on(Check::Placeholder) {
            return;
        }
        let kinds = [
            Marker::Todo,
            Marker::Unimplemented,
            Marker::NotImplemented,
            Marker::PassBody,
            Marker::EllipsisBody,
        ];
        // `raise NotImplementedError` in a method of a class that a changed
        // file derives from is an abstract method (flask's sansio `App`,
        // derived by `Flask` in another file); the file itself already
        // stood down for its own subclasses.
        let derived: HashSet<&str> = self
            .input
            .sides
            .head
            .values()
            .flat_map(|o| o.bases.iter().map(String::as_str))
            .collect();
        let abstract_method = |m: &outline::Found| {
            m.marker == Marker::NotImplemented
                && m.function
                    .as_deref()
                    .and_then(|f| f.rsplit_once('.'))
                    .and_then(|(owner, _)| owner.rsplit('.').next())
                    .is_some_and(|class| derived.contains(class))
        };
        let found: Vec<(String, outline::Found)> = self
            .added_markers(&kinds, false)
            .into_iter()
            .filter(|(_, m)| !abstract_method(m))
            .collect();
        for (file, m) in found {
            let within = m
                .function
                .as_deref()
                .map(|f| format!(" in {f}"))
                .unwrap_or_default();
            self.push(
                Check::Placeholder,
                Some(&file),
                Some(m.line),
                format!(
                    "{}{within}: a placeholder where an implementation belongs.",
                    m.marker.label()
                ),
            );
        }
    }

    fn debug_leftover(&mut self) {
        if !self.on(Check::DebugLeftover) {
            return;
        }
        // `dbg!` in a test prints only when the test fails: often kept on
        // purpose. A debugger stop anywhere hangs whoever runs the code.
        let mut found = self.added_markers(&[Marker::Dbg], false);
        found.extend(self.added_markers(&[Marker::Breakpoint, Marker::SetTrace], true));
        found.sort_by(|a, b| (&a.0, a.1.line).cmp(&(&b.0, b.1.line)));
        for (file, m) in found {
            self.push(
                Check::DebugLeftover,
                Some(&file),
                Some(m.line),
                format!(
                    "{} left in: a debugging aid, not part of the change.",
                    m.marker.label()
                ),
            );
        }
    }

    fn test_weakened(&mut self) {
        let Some(severity) = self.config.severity(Check::TestWeakened) else {
            return;
        };
        let files = &self.input.diff.files;
        let mut compared = Vec::new();
        for (i, file) in files.iter().enumerate() {
            let (base, head) = (self.input.sides.base.get(&i), self.input.sides.head.get(&i));
            let head_unread = head.is_none()
                && !file.binary
                && file.new_blob.is_some()
                && Lang::of_path(&file.path).is_some();
            if base.is_none() && head.is_none() {
                continue;
            }
            compared.push(weakened::File {
                path: &file.path,
                old_path: file.old_path.as_deref().unwrap_or(&file.path),
                base,
                head,
                head_unread,
                added: file_added_lines(file).collect(),
            });
        }
        let mut kinds = weakened::kinds(
            &side_outlines(files, &self.input.sides.base, false),
            &self.input.files.side(Side::Base),
        );
        kinds.extend(weakened::kinds(
            &side_outlines(files, &self.input.sides.head, true),
            &self.input.files.side(Side::Head),
        ));
        let outcome = weakened::check(&compared, &kinds);
        self.outcome.notices.extend(outcome.notices);
        for f in outcome.found {
            // A test added already skipped is minor at most.
            let severity = if f.minor {
                severity.max(Severity::Minor)
            } else {
                severity
            };
            self.outcome.findings.push(Finding {
                check: Check::TestWeakened.name().to_string(),
                severity,
                file: Some(f.file),
                line: f.line,
                message: f.message,
                ..Finding::default()
            });
        }
    }

    /// Whether the diff changes a test: a test file, or test code (a test
    /// function, a `#[cfg(test)]` module) inside another file.
    fn changes_a_test(&self) -> bool {
        self.input.diff.files.iter().enumerate().any(|(i, file)| {
            let sides = [Some(file.path.as_str()), file.old_path.as_deref()];
            if sides.into_iter().flatten().any(paths::is_test) {
                return true;
            }
            let head = self.input.sides.head.get(&i);
            let base = self.input.sides.base.get(&i);
            file.hunks
                .iter()
                .flat_map(|h| &h.lines)
                .any(|l| match l.kind {
                    LineKind::Added => head
                        .zip(l.new_lineno)
                        .is_some_and(|(o, n)| o.in_test_region(n)),
                    LineKind::Removed => base
                        .zip(l.old_lineno)
                        .is_some_and(|(o, n)| o.in_test_region(n)),
                    LineKind::Context => false,
                })
        })
    }

    fn untested_criterion(&mut self) {
        if !self.on(Check::UntestedCriterion) {
            return;
        }
        let by_test: Vec<&Criterion> = self
            .input
            .criteria
            .iter()
            .filter(|c| c.verify_by.as_deref().is_some_and(verified_by_test))
            .collect();
        if by_test.is_empty() || self.changes_a_test() {
            return;
        }
        let messages: Vec<String> = by_test
            .iter()
            .map(|c| {
                format!(
                    "{} is to be verified by {}, but the diff changes no test.",
                    c.id,
                    c.verify_by.as_deref().unwrap_or("test")
                )
            })
            .collect();
        for message in messages {
            self.push(Check::UntestedCriterion, None, None, message);
        }
    }

    fn error_discarded(&mut self) {
        if !self.on(Check::ErrorDiscarded) {
            return;
        }
        let sides = self.input.sides;
        for d in discarded::report(&self.input.diff.files, &sides.discards, &sides.head) {
            self.push(
                Check::ErrorDiscarded,
                Some(&d.file),
                Some(d.line),
                d.message,
            );
        }
    }

    fn large_diff(&mut self) {
        if !self.on(Check::LargeDiff) {
            return;
        }
        let (max_lines, max_files) = (self.config.large_diff_lines, self.config.large_diff_files);
        let size = measure::size(self.input.diff, max_lines, max_files);
        if size.large {
            let (lines, files) = (size.lines, size.files);
            self.push(
                Check::LargeDiff,
                None,
                None,
                format!(
                    "The diff changes {lines} lines in {files} files (limits: {max_lines} lines, {max_files} files; lockfiles and .speed/ not counted): hard to review as one change."
                ),
            );
        }
    }
}

/// The files `test_weakened` may parse on either side to read the
/// project's macros (`weakened::plan`): a caller keeps their trees in the
/// store before the index may parse them too.
pub fn macro_files(files: &Files, sides: &Sides) -> Vec<crate::syntax::Key> {
    let changed = &files.diff().files;
    let mut keys = Vec::new();
    for (side, outlines, head) in [
        (Side::Base, &sides.base, false),
        (Side::Head, &sides.head, true),
    ] {
        for path in weakened::plan(&side_outlines(changed, outlines, head), &files.side(side)) {
            keys.extend(files.key(side, &path));
        }
    }
    keys
}

/// The outlines of one side, in the diff's order, by that side's path.
fn side_outlines<'a>(
    files: &'a [FileDiff],
    side: &'a HashMap<usize, Outline>,
    head: bool,
) -> Vec<(&'a str, &'a Outline)> {
    let mut v: Vec<(&usize, &Outline)> = side.iter().collect();
    v.sort_unstable_by_key(|x| *x.0);
    v.into_iter()
        .map(|(i, o)| {
            let f = &files[*i];
            let path = match (&f.old_path, head) {
                (Some(old), false) => old.as_str(),
                _ => f.path.as_str(),
            };
            (path, o)
        })
        .collect()
}

/// `verify_by` values that mean an automated test: "test", "unit test",
/// "pytest", "integration_test", … but not "manual test".
fn verified_by_test(verify_by: &str) -> bool {
    let v = verify_by.to_ascii_lowercase();
    (v.contains("test") || v.contains("spec")) && !v.contains("manual")
}

fn file_added_lines(file: &FileDiff) -> impl Iterator<Item = u32> + '_ {
    file.hunks
        .iter()
        .flat_map(|h| &h.lines)
        .filter(|l| l.kind == LineKind::Added)
        .filter_map(|l| l.new_lineno)
}

fn first_added(file: &FileDiff) -> Option<u32> {
    file_added_lines(file).next()
}

/// Added line numbers by head path.
fn added_lines(diff: &Diff) -> HashMap<&str, HashSet<u32>> {
    diff.files
        .iter()
        .map(|f| (f.path.as_str(), file_added_lines(f).collect()))
        .collect()
}

/// The first few items, then "and N more".
fn listed(items: impl Iterator<Item = String>) -> String {
    let items: Vec<String> = items.collect();
    let mut out = items
        .iter()
        .take(LISTED)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if items.len() > LISTED {
        out.push_str(&format!(" and {} more", items.len() - LISTED));
    }
    out
}
