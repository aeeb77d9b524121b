//! Every place a verdict cites, checked: the `file:line` references in the
//! evidence of requirements and criteria, and the file and line of each
//! issue and out-of-scope item, resolved against the diff and the files at
//! the head commit. A citation is found when its file exists there (or is a
//! file the diff deletes) and its lines lie within it; it is in the diff
//! when its lines meet a hunk. What a missing citation means is `decide`'s
//! call. It never reads git: the caller passes the head commit's files in.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use crate::git::diff::{Diff, FileDiff, FileStatus, LineKind};

use super::schema::{CriterionStatus, Verdict};

/// What citations are checked against.
pub struct Sources<'a> {
    pub diff: &'a Diff,
    /// The number of lines of the file at this exact path at the head
    /// commit; None when there is no such file; an error when it could not
    /// be read (the citation is then not found, with the error as why).
    pub lines_at_head: &'a dyn Fn(&str) -> Result<Option<usize>, String>,
    /// Every path at the head commit, for a path cited without its leading
    /// directories.
    pub head_paths: &'a [String],
}

/// One location the verdict cites, as checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Citation {
    /// As the verdict wrote it: `src/search.rs:42`, `src/search.rs:42-50`,
    /// `src/search.rs`.
    #[serde(rename = "ref")]
    pub reference: String,
    pub found: bool,
    pub in_diff: bool,
    /// Where in the verdict: `spec_verification[0].evidence`, `issues[2]`.
    pub from: String,
    /// The path it resolved to, when the verdict wrote it otherwise
    /// (`b/src/a.rs`, or `a.rs` for `src/a.rs`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Why it was not found.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// An approval rests on it: the evidence of a requirement marked
    /// satisfied or of a criterion marked met.
    #[serde(skip)]
    pub basis: bool,
}

/// A location as written: a path and, maybe, a line or a range.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Reference {
    text: String,
    path: String,
    lines: Option<(u64, u64)>,
}

/// Every citation of `verdict`, in the verdict's order: requirements,
/// criteria, issues, then out-of-scope items.
pub fn cite(verdict: &Verdict, sources: &Sources) -> Vec<Citation> {
    let resolver = Resolver::new(sources);
    let mut out = Vec::new();
    let mut add = |from: String, basis: bool, reference: Reference| {
        out.push(resolver.check(reference, from, basis));
    };
    for (i, check) in verdict.spec_verification.iter().enumerate() {
        for r in references_in(&check.evidence, &resolver) {
            add(
                format!("spec_verification[{i}].evidence"),
                check.satisfied,
                r,
            );
        }
    }
    for (i, c) in verdict.criteria.iter().enumerate() {
        for r in references_in(&c.evidence, &resolver) {
            add(
                format!("criteria[{i}].evidence"),
                c.status == CriterionStatus::Met,
                r,
            );
        }
    }
    for (i, issue) in verdict.issues.iter().enumerate() {
        if let Some(r) = issue
            .file
            .as_deref()
            .and_then(|f| located(f, issue.line, issue.end_line))
        {
            add(format!("issues[{i}]"), false, r);
        }
    }
    for (i, o) in verdict.out_of_scope.iter().enumerate() {
        if let Some(r) = located(&o.file, o.line, o.end_line) {
            add(format!("out_of_scope[{i}]"), false, r);
        }
    }
    out
}

/// A structured location: a file field and a line field. A file field that
/// carries its own `:line` is read as a reference when no line is given.
fn located(file: &str, line: Option<u64>, end_line: Option<u64>) -> Option<Reference> {
    let file = file.trim();
    if file.is_empty() {
        return None;
    }
    if line.is_none() {
        if let Some(r) = parse_reference(file) {
            if r.lines.is_some() {
                return Some(r);
            }
        }
    }
    let lines = line.map(|first| (first, end_line.unwrap_or(first)));
    let text = match lines {
        Some((a, b)) if a != b => format!("{file}:{a}-{b}"),
        Some((a, _)) => format!("{file}:{a}"),
        None => file.to_string(),
    };
    Some(Reference {
        text,
        path: file.to_string(),
        lines,
    })
}

/// The locations cited in free text such as `src/a.rs:42 — the guard`,
/// `see src/a.rs lines 4-9 and tests/a.rs:3`. A word counts as a location
/// when it carries a line, or looks like a path to a file (a directory and
/// an extension), or names a file that exists; other words (`e.g.`,
/// `and/or`, version numbers) are prose.
fn references_in(text: &str, resolver: &Resolver) -> Vec<Reference> {
    let (mut out, text) = spaced_references(text, resolver);
    let words: Vec<&str> = text
        .split(|c: char| c.is_whitespace() || SEPARATORS.contains(c))
        .filter(|w| !w.is_empty())
        .collect();
    let mut i = 0;
    while i < words.len() {
        let word = words[i].trim_end_matches(['.', ':', '!', '?']);
        i += 1;
        let Some(mut r) = parse_reference(word) else {
            continue;
        };
        if r.lines.is_none() {
            // "src/a.rs line 42", "src/a.rs lines 4-9"
            let follows = words.get(i).map(|w| w.to_ascii_lowercase());
            if matches!(follows.as_deref(), Some("line" | "lines" | "l.")) {
                if let Some(lines) = words
                    .get(i + 1)
                    .and_then(|w| line_span(w.trim_end_matches(['.', ':', '!', '?'])))
                {
                    r.text = format!("{}:{}", r.path, span_text(lines));
                    r.lines = Some(lines);
                    i += 2;
                }
            }
        }
        let plausible = r.lines.is_some()
            || (r.path.contains('/') && has_extension(&r.path))
            || resolver.resolve(&r.path).is_ok();
        if plausible {
            out.push(r);
        }
    }
    out
}

/// What ends a word of free text: a path holding one is found whole by
/// `spaced_references`.
const SEPARATORS: &str = "`'\"()[]{}<>,;|";

/// The citations of paths that hold a space or a separator (`app/dir with
/// space/naïve café.py:2`, bare, in backticks or in quotes): every path of
/// the head commit and of the diff that holds one is looked for in `text`
/// as it is written there, longest first, with what follows it (`:2`,
/// `:2-4`, `#L2`, ` line 2`). The text is returned with those citations
/// blanked, for the word-by-word reading of the rest.
fn spaced_references(text: &str, resolver: &Resolver) -> (Vec<Reference>, String) {
    let mut paths: Vec<&str> = resolver
        .sources
        .head_paths
        .iter()
        .map(String::as_str)
        .chain(resolver.sources.diff.files.iter().map(|f| f.path.as_str()))
        .filter(|p| {
            p.chars()
                .any(|c| c.is_whitespace() || SEPARATORS.contains(c))
        })
        .collect();
    let mut rest = text.to_string();
    if paths.is_empty() {
        return (Vec::new(), rest);
    }
    paths.sort_by_key(|p| std::cmp::Reverse(p.len()));
    paths.dedup();
    let mut found: Vec<(usize, Reference)> = Vec::new();
    for path in paths {
        let mut from = 0;
        while let Some(at) = rest[from..].find(path).map(|i| i + from) {
            let end = at + path.len();
            // A path cited whole: not the tail of a longer word.
            let before = rest[..at].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '/' || c == '.') {
                from = end;
                continue;
            }
            let tail = &rest[end..];
            let (lines, used) = lines_after(tail);
            let span = match lines {
                Some(lines) => format!("{path}:{}", span_text(lines)),
                None => path.to_string(),
            };
            found.push((
                at,
                Reference {
                    text: span,
                    path: path.to_string(),
                    lines,
                },
            ));
            let blank = " ".repeat(path.len() + used);
            rest.replace_range(at..end + used, &blank);
            from = end + used;
        }
    }
    found.sort_by_key(|(at, _)| *at);
    (found.into_iter().map(|(_, r)| r).collect(), rest)
}

/// The line or range written right after a path (`:2`, `:2-4`, `:2:7`,
/// `#L2-L4`, ` line 2`, ` lines 2-4`), and how many bytes it takes.
fn lines_after(tail: &str) -> (Option<(u64, u64)>, usize) {
    // `"a path" line 2`: the closing quote comes before the line.
    if let Some(quoted) = tail.strip_prefix(['`', '\'', '"']) {
        if quoted.starts_with(" line") {
            return match lines_after(quoted) {
                (Some(lines), used) => (Some(lines), used + 1),
                none => none,
            };
        }
    }
    let digits = |s: &str| {
        s.char_indices()
            .find(|(_, c)| !(c.is_ascii_digit() || *c == '-' || *c == '\u{2013}' || *c == 'L'))
            .map_or(s.len(), |(i, _)| i)
    };
    let (skip, body) = if let Some(body) = tail.strip_prefix(':') {
        (1, body)
    } else if let Some(body) = tail.strip_prefix("#L") {
        (2, body)
    } else if let Some(body) = tail.strip_prefix(" lines ") {
        (7, body)
    } else if let Some(body) = tail.strip_prefix(" line ") {
        (6, body)
    } else {
        return (None, 0);
    };
    let n = digits(body);
    let span = body[..n].trim_end_matches('-');
    match line_span(&span.replacen("-L", "-", 1)) {
        Some(lines) => {
            // A column after the line: `:2:7`.
            let mut used = skip + span.len();
            let after = &tail[used..];
            if let Some(col) = after.strip_prefix(':') {
                let c = col.chars().take_while(char::is_ascii_digit).count();
                if c > 0 {
                    used += 1 + c;
                }
            }
            (Some(lines), used)
        }
        None => (None, 0),
    }
}

/// `path`, `path:42`, `path:42-50`, `path:42:7` (a column), `path#L42`,
/// `path#L42-L50`. None for what cannot be a path: URLs, numbers, words
/// without a dot or a slash.
fn parse_reference(word: &str) -> Option<Reference> {
    if word.contains("://") {
        return None;
    }
    let (path, lines) = if let Some((path, rest)) = word.split_once('#') {
        let rest = rest.trim_start_matches(['L', 'l']);
        let rest = rest.replacen("-L", "-", 1).replacen("-l", "-", 1);
        (path, Some(line_span(&rest)?))
    } else {
        match word.split_once(':') {
            Some((path, rest)) => {
                // A column after the line is dropped: `a.rs:42:7`.
                let rest = rest.split(':').next().unwrap_or(rest);
                (path, Some(line_span(rest)?))
            }
            None => (word, None),
        }
    };
    let path = path.trim_start_matches("./");
    let looks_like_path = (path.contains('/') || path.contains('.'))
        && path.chars().any(char::is_alphabetic)
        && !path.ends_with('/');
    if !looks_like_path {
        return None;
    }
    Some(Reference {
        text: match lines {
            Some(span) => format!("{path}:{}", span_text(span)),
            None => path.to_string(),
        },
        path: path.to_string(),
        lines,
    })
}

/// `42`, `42-50`, `42–50`.
fn line_span(text: &str) -> Option<(u64, u64)> {
    let (a, b) = text.split_once(['-', '\u{2013}']).unwrap_or((text, text));
    let a: u64 = a.trim().parse().ok()?;
    let b: u64 = b.trim().trim_start_matches(['L', 'l']).parse().ok()?;
    Some((a, b))
}

fn span_text((a, b): (u64, u64)) -> String {
    if a == b {
        a.to_string()
    } else {
        format!("{a}-{b}")
    }
}

fn has_extension(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty()
            && (1..=10).contains(&ext.len())
            && ext.chars().all(|c| c.is_ascii_alphanumeric())
    })
}

/// The mode git gives a submodule's entry (a commit, not a file).
const GITLINK: u32 = 0o160000;

/// Finds cited paths among the head commit's files and the diff's.
struct Resolver<'s> {
    sources: &'s Sources<'s>,
    in_diff: HashSet<&'s str>,
}

/// Where a cited path leads.
enum Target<'s> {
    /// A file at the head commit, with its diff if it changed.
    Head {
        path: String,
        lines: usize,
        diff: Option<&'s FileDiff>,
    },
    /// A file the diff deletes: only its diff is left.
    Deleted(&'s FileDiff),
}

impl<'s> Resolver<'s> {
    fn new(sources: &'s Sources<'s>) -> Resolver<'s> {
        Resolver {
            sources,
            in_diff: sources.diff.files.iter().map(|f| f.path.as_str()).collect(),
        }
    }

    fn diff_of(&self, path: &str) -> Option<&'s FileDiff> {
        self.sources.diff.files.iter().find(|f| f.path == path)
    }

    fn exact(&self, path: &str) -> Result<Option<Target<'s>>, String> {
        if let Some(lines) = (self.sources.lines_at_head)(path)? {
            return Ok(Some(Target::Head {
                path: path.to_string(),
                lines,
                diff: self.diff_of(path),
            }));
        }
        // A submodule is no file: what the diff shows of it is the one
        // line `Subproject commit <id>`, cited as `path:1`.
        if let Some(f) = self.diff_of(path).filter(|f| f.new_mode == Some(GITLINK)) {
            return Ok(Some(Target::Head {
                path: path.to_string(),
                lines: 1,
                diff: Some(f),
            }));
        }
        Ok(self
            .sources
            .diff
            .files
            .iter()
            .find(|f| f.status == FileStatus::Deleted && f.path == path)
            .map(Target::Deleted))
    }

    /// The file a cited path names: exactly, without a diff's `a/` or `b/`
    /// prefix, or as the unique file (preferring changed ones) whose path
    /// ends with it.
    fn resolve(&self, cited: &str) -> Result<Target<'s>, String> {
        let cited = cited.trim_start_matches('/');
        if let Some(t) = self.exact(cited)? {
            return Ok(t);
        }
        for prefix in ["a/", "b/"] {
            if let Some(stripped) = cited.strip_prefix(prefix) {
                if let Some(t) = self.exact(stripped)? {
                    return Ok(t);
                }
            }
        }
        let tail = format!("/{cited}");
        let matches: Vec<&str> = self
            .sources
            .head_paths
            .iter()
            .map(String::as_str)
            .chain(
                self.sources
                    .diff
                    .files
                    .iter()
                    .filter(|f| f.status == FileStatus::Deleted)
                    .map(|f| f.path.as_str()),
            )
            .filter(|p| p.ends_with(&tail))
            .collect();
        let changed: Vec<&str> = matches
            .iter()
            .copied()
            .filter(|p| self.in_diff.contains(p))
            .collect();
        let pick = match (matches.len(), changed.len()) {
            (1, _) => Some(matches[0]),
            (_, 1) => Some(changed[0]),
            _ => None,
        };
        let found = match pick {
            Some(p) => self.exact(p)?,
            None => None,
        };
        match found {
            Some(t) => Ok(t),
            None if matches.len() > 1 => Err(format!(
                "{cited} could be any of {} files ({}{})",
                matches.len(),
                matches[..matches.len().min(3)].join(", "),
                if matches.len() > 3 { ", …" } else { "" }
            )),
            None => Err(format!("no file {cited} at the head commit")),
        }
    }

    fn check(&self, reference: Reference, from: String, basis: bool) -> Citation {
        let mut citation = Citation {
            reference: reference.text.clone(),
            found: false,
            in_diff: false,
            from,
            path: None,
            problem: None,
            basis,
        };
        let target = match self.resolve(&reference.path) {
            Ok(t) => t,
            Err(problem) => {
                citation.problem = Some(problem);
                return citation;
            }
        };
        let (path, diff) = match &target {
            Target::Head { path, diff, .. } => (path.as_str(), *diff),
            Target::Deleted(f) => (f.path.as_str(), Some(*f)),
        };
        if path != reference.path {
            citation.path = Some(path.to_string());
        }
        let Some((first, last)) = reference.lines else {
            citation.found = true;
            citation.in_diff = diff.is_some();
            return citation;
        };
        // Removed lines are cited by their old numbers, as the diff shows
        // them: a range within one hunk's old side that holds one.
        let removed = diff.is_some_and(|f| {
            f.hunks.iter().any(|h| {
                let old_end = u64::from(h.old_start) + u64::from(h.old_lines);
                first >= u64::from(h.old_start)
                    && last < old_end
                    && h.lines.iter().any(|l| {
                        l.kind == LineKind::Removed
                            && l.old_lineno
                                .is_some_and(|n| (first..=last).contains(&u64::from(n)))
                    })
            })
        });
        citation.found = match &target {
            _ if first == 0 => {
                citation.problem = Some("line 0: lines count from 1".to_string());
                false
            }
            Target::Head { lines, .. } if last <= *lines as u64 => true,
            _ if removed => true,
            Target::Head { lines, .. } => {
                citation.problem = Some(format!(
                    "line {last} is past the end of {path} ({lines} lines at the head commit)"
                ));
                false
            }
            Target::Deleted(_) => {
                citation.problem = Some(format!(
                    "{path} is deleted by the diff, and line {first} is not one of its removed lines"
                ));
                false
            }
        };
        citation.in_diff = removed
            || diff.is_some_and(|f| {
                f.hunks.iter().any(|h| {
                    let new_end = u64::from(h.new_start) + u64::from(h.new_lines);
                    h.new_lines > 0 && first < new_end && last >= u64::from(h.new_start)
                })
            });
        citation
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::diff::{Hunk, Line};
    use crate::verdict::schema::{CriterionCheck, Issue, Kind, OutOfScope, Severity, SpecCheck};

    fn line(kind: LineKind, old: Option<u32>, new: Option<u32>) -> Line {
        Line {
            kind,
            old_lineno: old,
            new_lineno: new,
            text: String::new(),
            no_newline: false,
        }
    }

    /// `src/search.rs` (40 lines at head) changed at 10-12 (line 11 added,
    /// old line 11 removed); `src/old.rs` deleted (3 lines);
    /// `src/util/mod.rs` and `tests/util/mod.rs` unchanged.
    fn diff() -> Diff {
        let file = |path: &str, status, hunks| FileDiff {
            path: path.to_string(),
            old_path: None,
            similarity: None,
            status,
            binary: false,
            old_mode: None,
            new_mode: None,
            old_blob: None,
            new_blob: None,
            hunks,
            additions: 1,
            deletions: 1,
            not_utf8: false,
        };
        Diff {
            base_commit: "b".into(),
            head_commit: "h".into(),
            sha256: String::new(),
            files: vec![
                file(
                    "src/search.rs",
                    FileStatus::Modified,
                    vec![Hunk {
                        old_start: 10,
                        old_lines: 3,
                        new_start: 10,
                        new_lines: 3,
                        context: String::new(),
                        lines: vec![
                            line(LineKind::Context, Some(10), Some(10)),
                            line(LineKind::Removed, Some(11), None),
                            line(LineKind::Added, None, Some(11)),
                            line(LineKind::Context, Some(12), Some(12)),
                        ],
                    }],
                ),
                file(
                    "src/old.rs",
                    FileStatus::Deleted,
                    vec![Hunk {
                        old_start: 1,
                        old_lines: 3,
                        new_start: 0,
                        new_lines: 0,
                        context: String::new(),
                        lines: (1..=3)
                            .map(|n| line(LineKind::Removed, Some(n), None))
                            .collect(),
                    }],
                ),
            ],
        }
    }

    fn head_lines(path: &str) -> Result<Option<usize>, String> {
        Ok(match path {
            "src/search.rs" => Some(40),
            "src/util/mod.rs" | "tests/util/mod.rs" => Some(5),
            "Cargo.toml" => Some(12),
            "src/unreadable.rs" => return Err("blob 1234 is missing".into()),
            _ => None,
        })
    }

    fn with_sources<T>(f: impl FnOnce(&Sources) -> T) -> T {
        let d = diff();
        let paths: Vec<String> = [
            "src/search.rs",
            "src/util/mod.rs",
            "tests/util/mod.rs",
            "Cargo.toml",
        ]
        .iter()
        .map(|p| p.to_string())
        .collect();
        f(&Sources {
            diff: &d,
            lines_at_head: &head_lines,
            head_paths: &paths,
        })
    }

    fn verdict(evidence: &str) -> Verdict {
        Verdict {
            verdict: Kind::Approve,
            expectations: String::new(),
            criteria: vec![],
            spec_verification: vec![SpecCheck {
                spec_quote: "q".into(),
                spec_section: String::new(),
                satisfied: true,
                evidence: evidence.into(),
                notes: String::new(),
            }],
            missing_from_spec: vec![],
            out_of_scope: vec![],
            issues: vec![],
            strengths: vec![],
            defect_scope_check: None,
            scope_violations: vec![],
            dimensions: Default::default(),
            rejection: None,
            previous_findings: Vec::new(),
        }
    }

    /// (ref, found, in_diff, problem) of each citation in `evidence`.
    fn checked(evidence: &str) -> Vec<(String, bool, bool, Option<String>)> {
        with_sources(|s| {
            cite(&verdict(evidence), s)
                .into_iter()
                .map(|c| (c.reference, c.found, c.in_diff, c.problem))
                .collect()
        })
    }

    #[test]
    fn lines_within_the_file_are_found_and_hunks_are_in_the_diff() {
        assert_eq!(
            checked("src/search.rs:11 — the guard"),
            [("src/search.rs:11".to_string(), true, true, None)]
        );
        assert_eq!(
            checked("src/search.rs:30"),
            [("src/search.rs:30".to_string(), true, false, None)]
        );
        assert_eq!(
            checked("src/search.rs:12-20"),
            [("src/search.rs:12-20".to_string(), true, true, None)]
        );
        assert_eq!(
            checked("see `src/search.rs` lines 9-10."),
            [("src/search.rs:9-10".to_string(), true, true, None)]
        );
        assert_eq!(
            checked("src/search.rs#L5-L8"),
            [("src/search.rs:5-8".to_string(), true, false, None)]
        );
        assert_eq!(
            checked("Cargo.toml"),
            [("Cargo.toml".to_string(), true, false, None)]
        );
    }

    #[test]
    fn evidence_pointing_nowhere_says_why() {
        let got = checked("src/search.rs:41, src/ghost.rs:3 and src/search.rs:0");
        let problems: Vec<(bool, Option<&str>)> = got
            .iter()
            .map(|(_, found, _, p)| (*found, p.as_deref()))
            .collect();
        assert_eq!(
            problems,
            [
                (
                    false,
                    Some("line 41 is past the end of src/search.rs (40 lines at the head commit)")
                ),
                (false, Some("no file src/ghost.rs at the head commit")),
                (false, Some("line 0: lines count from 1")),
            ]
        );
    }

    #[test]
    fn deleted_files_and_removed_lines_are_cited_by_their_old_numbers() {
        assert_eq!(
            checked("src/old.rs:2"),
            [("src/old.rs:2".to_string(), true, true, None)]
        );
        let got = checked("src/old.rs:9");
        assert!(!got[0].1, "{got:?}");
        assert!(got[0].3.as_deref().unwrap().contains("deleted by the diff"));
        // A removed line of a changed file, by its old number.
        assert!(checked("src/search.rs:11")[0].1);
    }

    #[test]
    fn paths_are_resolved_like_a_reader_would() {
        let resolved = with_sources(|s| cite(&verdict("b/src/search.rs:10 and search.rs:11"), s));
        assert!(resolved.iter().all(|c| c.found));
        assert_eq!(resolved[0].path.as_deref(), Some("src/search.rs"));
        assert_eq!(resolved[1].path.as_deref(), Some("src/search.rs"));
        let ambiguous = checked("mod.rs:2");
        assert!(!ambiguous[0].1);
        assert_eq!(
            ambiguous[0].3.as_deref(),
            Some("mod.rs could be any of 2 files (src/util/mod.rs, tests/util/mod.rs)")
        );
    }

    #[test]
    fn paths_with_spaces_are_read_whole_bare_in_backticks_or_quotes() {
        let mut d = diff();
        d.files[0].path = "app/dir with space/naïve café.py".to_string();
        let paths = vec!["app/dir with space/naïve café.py".to_string()];
        let lines = |p: &str| -> Result<Option<usize>, String> {
            Ok((p == "app/dir with space/naïve café.py").then_some(20))
        };
        for text in [
            "app/dir with space/naïve café.py:11 refuses it",
            "see `app/dir with space/naïve café.py:11`.",
            "\"app/dir with space/naïve café.py\" line 11",
            "'app/dir with space/naïve café.py#L11-L12' and more",
        ] {
            let cited = cite(
                &verdict(text),
                &Sources {
                    diff: &d,
                    lines_at_head: &lines,
                    head_paths: &paths,
                },
            );
            assert_eq!(cited.len(), 1, "{text}: {cited:?}");
            assert!(cited[0].found && cited[0].in_diff, "{text}: {cited:?}");
            assert!(
                cited[0]
                    .reference
                    .starts_with("app/dir with space/naïve café.py:11"),
                "{text}: {cited:?}"
            );
        }
    }

    #[test]
    fn prose_is_not_a_citation() {
        for text in [
            "no benchmark in the diff",
            "e.g. the search, i.e. all of it",
            "works with v1.2 and/or later, at 12:30",
            "see https://example.com/a.html:3",
            "missing.rs is not there",
        ] {
            assert_eq!(checked(text), [], "{text}");
        }
        // A path with a directory and an extension is a claim, found or not.
        assert!(!checked("src/missing.rs")[0].1);
        // A file that cannot be read is not taken as found.
        let unreadable = checked("src/unreadable.rs:3");
        assert!(!unreadable[0].1);
        assert_eq!(unreadable[0].3.as_deref(), Some("blob 1234 is missing"));
    }

    #[test]
    fn issues_and_out_of_scope_items_are_checked_and_only_approval_evidence_is_a_basis() {
        let mut v = verdict("src/search.rs:11");
        v.spec_verification.push(SpecCheck {
            satisfied: false,
            evidence: "src/search.rs:12".into(),
            ..v.spec_verification[0].clone()
        });
        v.criteria = vec![
            CriterionCheck {
                id: "AC-1".into(),
                status: CriterionStatus::Met,
                evidence: "src/search.rs:10".into(),
            },
            CriterionCheck {
                id: "AC-2".into(),
                status: CriterionStatus::Unverifiable,
                evidence: "src/search.rs:99".into(),
            },
        ];
        v.issues = vec![Issue {
            severity: Severity::Minor,
            file: Some("src/search.rs".into()),
            line: Some(12),
            end_line: Some(90),
            message: "m".into(),
            suggestion: String::new(),
            dimension: None,
        }];
        v.out_of_scope = vec![OutOfScope {
            file: "src/ghost.rs:4".into(),
            line: None,
            end_line: None,
            description: "d".into(),
        }];
        let got = with_sources(|s| cite(&v, s));
        let summary: Vec<(&str, &str, bool, bool)> = got
            .iter()
            .map(|c| (c.from.as_str(), c.reference.as_str(), c.found, c.basis))
            .collect();
        assert_eq!(
            summary,
            [
                (
                    "spec_verification[0].evidence",
                    "src/search.rs:11",
                    true,
                    true
                ),
                (
                    "spec_verification[1].evidence",
                    "src/search.rs:12",
                    true,
                    false
                ),
                ("criteria[0].evidence", "src/search.rs:10", true, true),
                ("criteria[1].evidence", "src/search.rs:99", false, false),
                ("issues[0]", "src/search.rs:12-90", false, false),
                ("out_of_scope[0]", "src/ghost.rs:4", false, false),
            ]
        );
    }
}
