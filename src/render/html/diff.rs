//! A review's diff as tables, one per file, with each finding that has a
//! place drawn right under its line: an `<aside class="finding">` carrying
//! `data-file` and `data-line`. A finding whose line the diff does not show
//! is listed at the top of its file's table, one whose file the diff does
//! not change (a spec, a file not drawn) after all of them; each with its
//! `data-file` and `data-line` all the same. A diff past `MAX_LINES` lines
//! is drawn in part, and says so; a very long line is cut, and says so.

use std::collections::{BTreeMap, HashMap};

use crate::git::{Diff, FileDiff, FileStatus, LineKind};
use crate::render::findings::Finding;

use super::{Html, clip};
use crate::render::plural;

/// Diff lines drawn on one page at most.
pub const MAX_LINES: usize = 20_000;
/// Characters of one diff line drawn at most.
const MAX_LINE_CHARS: usize = 2_000;

/// A finding with its number on the page (its `id` is `<prefix>-<n>`).
pub struct Placed<'a> {
    pub n: usize,
    pub finding: &'a Finding,
}

/// Draws `diff` with `placed` findings (those with a file) under their
/// lines. `id` is the review's on the page: a finding's id is
/// `<id>-finding-<n>`, a file's section `<id>-file-<n>`.
pub fn draw(page: &mut Html, id: &str, diff: Option<&Diff>, placed: &[Placed<'_>]) {
    let prefix = &format!("{id}-finding");
    let mut by_file: HashMap<&str, Vec<&Placed<'_>>> = HashMap::new();
    for p in placed {
        if let Some(file) = p.finding.file.as_deref() {
            by_file.entry(file).or_default().push(p);
        }
    }
    let mut budget = MAX_LINES;
    let mut not_drawn: Vec<&FileDiff> = Vec::new();
    let files = diff.map(|d| d.files.as_slice()).unwrap_or_default();
    for (n, file) in files.iter().enumerate() {
        let lines: usize = file.hunks.iter().map(|h| h.lines.len() + 1).sum();
        if lines > budget {
            not_drawn.push(file);
            continue;
        }
        budget -= lines;
        let findings = by_file.remove(file.path.as_str()).unwrap_or_default();
        draw_file(
            page,
            &format!("{id}-file-{}", n + 1),
            prefix,
            file,
            &findings,
        );
    }
    if !not_drawn.is_empty() {
        page.open("p", &[("class", "note")]).text(&format!(
            "{} more changed files are not drawn: a page shows at most {MAX_LINES} lines of a diff. Not drawn: ",
            not_drawn.len()
        ));
        for (i, file) in not_drawn.iter().enumerate() {
            if i > 0 {
                page.text(", ");
            }
            page.elem("code", &[], &file.path);
        }
        page.text(".").close("p").newline();
    }
    let rest: BTreeMap<&str, Vec<&Placed<'_>>> = by_file.into_iter().collect();
    if rest.is_empty() {
        return;
    }
    page.elem(
        "h3",
        &[],
        "Findings on files this diff does not show (a spec, a file not drawn or not changed)",
    )
    .newline();
    for (_, findings) in rest {
        for p in findings {
            finding(page, prefix, p);
        }
    }
}

/// One file: its heading, the findings the lines do not hold, its table.
fn draw_file(page: &mut Html, id: &str, prefix: &str, file: &FileDiff, findings: &[&Placed<'_>]) {
    // The line numbers a finding can sit under: the head's, or for a
    // deleted file the base's.
    let number = |line: &crate::git::Line| match file.status {
        FileStatus::Deleted => line.old_lineno,
        _ => line.new_lineno.filter(|_| line.kind != LineKind::Removed),
    };
    let shown: std::collections::HashSet<u64> = file
        .hunks
        .iter()
        .flat_map(|h| &h.lines)
        .filter_map(|l| number(l).map(u64::from))
        .collect();
    let (at_lines, elsewhere): (Vec<&Placed<'_>>, Vec<&Placed<'_>>) = findings
        .iter()
        .partition(|p| p.finding.line.is_some_and(|l| shown.contains(&l)));

    page.open("section", &[("class", "file"), ("id", id)])
        .newline();
    page.open("h3", &[])
        .elem("code", &[], &file.path)
        .text(&format!(" ({})", describe(file)))
        .close("h3")
        .newline();
    if !elsewhere.is_empty() {
        page.elem(
            "p",
            &[("class", "note")],
            "Findings on this file at lines the diff does not show:",
        );
        for p in &elsewhere {
            finding(page, prefix, p);
        }
    }
    if file.binary {
        page.elem(
            "p",
            &[("class", "note")],
            "A binary file: no lines to show.",
        );
        page.close("section").newline();
        return;
    }
    if file.hunks.is_empty() {
        page.elem(
            "p",
            &[("class", "note")],
            "No changed lines (a rename or a mode change).",
        );
        page.close("section").newline();
        return;
    }
    let mut under: HashMap<u64, Vec<&Placed<'_>>> = HashMap::new();
    for p in at_lines {
        if let Some(line) = p.finding.line {
            under.entry(line).or_default().push(p);
        }
    }
    page.open("table", &[("class", "diff")]);
    page.elem(
        "caption",
        &[("class", "vh")],
        &format!("Changes to {}", file.path),
    );
    page.raw(
        "<colgroup><col class=\"num\"/><col class=\"num\"/><col class=\"mark\"/><col/></colgroup>",
    );
    page.raw("<thead class=\"vh\"><tr><th scope=\"col\">Old line</th><th scope=\"col\">New line</th><th scope=\"col\">Change</th><th scope=\"col\">Code</th></tr></thead>");
    page.open("tbody", &[]).newline();
    for hunk in &file.hunks {
        page.open("tr", &[("class", "hunk")])
            .elem("td", &[("colspan", "4")], &hunk.header())
            .close("tr")
            .newline();
        for line in &hunk.lines {
            let (class, mark, word) = match line.kind {
                LineKind::Added => ("added", "+", "added"),
                LineKind::Removed => ("removed", "-", "removed"),
                LineKind::Context => ("context", "", "unchanged"),
            };
            let num = |n: Option<u32>| n.map(|n| n.to_string()).unwrap_or_default();
            page.open("tr", &[("class", class)])
                .elem("td", &[("class", "num")], &num(line.old_lineno))
                .elem("td", &[("class", "num")], &num(line.new_lineno))
                .open("td", &[]);
            if line.kind != LineKind::Context {
                page.elem("abbr", &[("title", word)], mark);
            }
            page.close("td")
                .open("td", &[])
                .elem("code", &[], &clip(&line.text, MAX_LINE_CHARS))
                .close("td")
                .close("tr")
                .newline();
            let Some(n) = number(line).map(u64::from) else {
                continue;
            };
            for p in under.remove(&n).unwrap_or_default() {
                page.open("tr", &[("class", "finding-row")])
                    .open("td", &[("colspan", "4")]);
                finding(page, prefix, p);
                page.close("td").close("tr").newline();
            }
        }
    }
    page.close("tbody").close("table").newline();
    page.close("section").newline();
}

/// `modified, +3 −1`; `renamed from a.rs`; `added`.
fn describe(file: &FileDiff) -> String {
    let status = match file.status {
        FileStatus::Added => "added".to_string(),
        FileStatus::Modified => "modified".to_string(),
        FileStatus::Deleted => "deleted".to_string(),
        FileStatus::Renamed => format!(
            "renamed from {}",
            file.old_path.as_deref().unwrap_or("another path")
        ),
        FileStatus::Copied => format!(
            "copied from {}",
            file.old_path.as_deref().unwrap_or("another path")
        ),
        FileStatus::TypeChange => "type changed".to_string(),
    };
    format!(
        "{status}, {} added, {} removed",
        plural(file.additions, "line"),
        file.deletions
    )
}

/// One finding where it stands, with its place as data.
pub fn finding(page: &mut Html, prefix: &str, p: &Placed<'_>) {
    let f = p.finding;
    let id = format!("{prefix}-{}", p.n);
    let line = f.line.map(|l| l.to_string());
    let mut attrs: Vec<(&str, &str)> = vec![
        ("class", "finding"),
        ("id", &id),
        ("data-rule", &f.rule),
        ("data-level", f.level.as_str()),
    ];
    if let Some(file) = &f.file {
        attrs.push(("data-file", file));
    }
    if let Some(line) = &line {
        attrs.push(("data-line", line));
    }
    page.open("aside", &attrs);
    page.open("p", &[])
        .elem(
            "strong",
            &[("class", &format!("level-{}", f.level.as_str()))],
            f.level.as_str(),
        )
        .text(" ")
        .elem("code", &[], &f.rule);
    if let Some(place) = f.place() {
        let place = match f.end_line {
            Some(end) => format!("{place}-{end}"),
            None => place,
        };
        page.text(" at ").elem("code", &[], &place);
    }
    page.close("p");
    // A check's message may end with its output's tail: its lines kept.
    page.elem("p", &[("class", "message")], &clip(&f.message, 4_000));
    if let Some(suggestion) = &f.suggestion {
        page.open("p", &[])
            .elem("em", &[], "Suggestion: ")
            .text(&clip(suggestion, 4_000))
            .close("p");
    }
    page.close("aside").newline();
}
