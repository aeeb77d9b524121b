//! The diff's claim on the budget, what is left of it: files ranked by
//! risk, hunks numbered with the new file's lines, what does not fit listed
//! by name (or left for the next part of a review in parts). Hunks are
//! shown whole while they fit; a prompt that could show no code at all
//! shows the first piece of a hunk that fits instead, so a hunk larger than
//! any prompt is still reviewed, piece by piece, in parts.

use crate::git::diff::{FileDiff, Hunk, LineKind};
use crate::prompt::files::{Class, rank_paired};
use crate::prompt::{At, DiffPart, Omission};

use super::{Ctx, MAX_LISTED_HUNKS, OMITTED_FOR_BUDGET, omission};

/// The diff: files in review order, whole hunks while they fit, and every
/// file not shown named in a list that is never cut.
pub(super) struct DiffPlan<'a> {
    files: Vec<DiffEntry<'a>>,
    additions: usize,
    deletions: usize,
    /// The part number, for a review done in parts.
    part: Option<usize>,
}

struct DiffEntry<'a> {
    /// Index in `Diff::files`.
    index: usize,
    file: &'a FileDiff,
    class: Class,
    /// For a test paired with a changed source file, that file's place in
    /// `DiffPlan::files`: a part shows the test only beside it.
    follows: Option<usize>,
    /// Where this prompt's share of the file begins; None when the file has
    /// nothing to show here (shown in an earlier part, or by name only).
    first: Option<At>,
    header_tokens: usize,
    /// Per hunk of the file, numbered as the prompt shows it (the hunk
    /// `first` starts inside counted from there).
    hunk_tokens: Vec<usize>,
    /// Cost of this file's line in the list of files not shown.
    om_tokens: usize,
    included: bool,
    /// Where what this prompt shows of the file ends (exclusive): a hunk
    /// boundary, or inside a hunk shown in part; meaningful when included.
    until: At,
    /// The tokens of the piece of hunk `until.hunk` shown, when
    /// `until.line > 0`.
    piece_tokens: usize,
}

/// Why a file's changes are not (all) in this prompt: the groups of the
/// list of files not shown, in the order the list gives them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NotShown {
    Budget,
    SomeHunks,
    EarlierPart,
    ByName,
}

impl NotShown {
    const ALL: [NotShown; 4] = [
        NotShown::Budget,
        NotShown::SomeHunks,
        NotShown::EarlierPart,
        NotShown::ByName,
    ];

    fn heading(self) -> &'static str {
        match self {
            NotShown::Budget => "omitted for budget (path, +added −removed lines):",
            NotShown::SomeHunks => "shown in part, the hunks listed omitted for budget:",
            NotShown::EarlierPart => "reviewed in an earlier part of this review:",
            NotShown::ByName => "content not shown (lockfile, generated, vendored or binary):",
        }
    }
}

const DIFF_LIST_TITLE: &str =
    "Changed files whose changes are not shown above (every one is named):";

impl<'a> DiffPlan<'a> {
    pub(super) fn new(ctx: &Ctx, files: &'a [FileDiff], part: Option<&DiffPart>) -> DiffPlan<'a> {
        let ranked = rank_paired(files);
        let place = |index: usize| ranked.iter().position(|r| r.0 == index);
        let entries = ranked
            .iter()
            .map(|&(i, class, source)| {
                let file = &files[i];
                let first = if class.name_only() {
                    None
                } else {
                    match part {
                        Some(p) => p.from.get(i).copied().flatten(),
                        None => Some(At::default()),
                    }
                };
                let start = first.unwrap_or_default();
                let mut entry = DiffEntry {
                    index: i,
                    file,
                    class,
                    follows: source.and_then(place),
                    first,
                    header_tokens: ctx.count(&(header(file) + &file.notes())),
                    hunk_tokens: file
                        .hunks
                        .iter()
                        .enumerate()
                        .map(|(h, hunk)| {
                            let from = if h == start.hunk { start.line } else { 0 };
                            ctx.count(&numbered_piece(hunk, from, hunk.lines.len()))
                        })
                        .collect(),
                    om_tokens: 0,
                    included: false,
                    until: start,
                    piece_tokens: 0,
                };
                entry.om_tokens = ctx.count(&entry.listed_line(None)) + 1;
                entry
            })
            .collect();
        DiffPlan {
            files: entries,
            additions: files.iter().map(|f| f.additions).sum(),
            deletions: files.iter().map(|f| f.deletions).sum(),
            part: part.map(|p| p.number),
        }
    }

    /// The summary line: protected.
    pub(super) fn fixed_tokens(&self, ctx: &Ctx) -> usize {
        ctx.count(&self.summary(self.files.len(), self.files.len()))
    }

    /// The list of files not shown, as if no file were shown: the most it
    /// can cost. It is never cut, so this much is held back for it.
    pub(super) fn list_reserve(&self, ctx: &Ctx) -> usize {
        self.list_fixed(ctx) + self.files.iter().map(|e| e.om_tokens).sum::<usize>()
    }

    pub(super) fn list_fixed(&self, ctx: &Ctx) -> usize {
        ctx.count(DIFF_LIST_TITLE)
            + ctx.fence_tokens
            + NotShown::ALL
                .iter()
                .map(|g| ctx.count(g.heading()) + 1)
                .sum::<usize>()
    }

    pub(super) fn summary(&self, shown: usize, not_shown: usize) -> String {
        let mut out = format!(
            "{} files changed, +{} −{} lines. In review order (source, tests, docs/config): ",
            self.files.len(),
            self.additions,
            self.deletions,
        );
        out.push_str(&match not_shown {
            0 => format!("all {shown} with changes shown."),
            _ => format!("{shown} with changes shown, {not_shown} not shown (listed below)."),
        });
        if let Some(n) = self.part {
            out.push_str(&format!(
                " The diff does not fit one prompt, so this review is done in parts: this is part {n}. Files omitted for budget here are reviewed in another part."
            ));
        }
        out
    }

    /// Whether this prompt has changed code it could show: not only names,
    /// renames or what an earlier part showed.
    pub(super) fn has_code(&self) -> bool {
        self.files.iter().any(|e| e.has_code())
    }

    /// Whether this prompt shows some changed code.
    pub(super) fn shows_code(&self) -> bool {
        self.files.iter().any(|e| e.included && e.until > e.start())
    }

    /// Shows nothing: before packing again with more room.
    pub(super) fn clear(&mut self) {
        for e in &mut self.files {
            e.included = false;
            e.until = e.start();
            e.piece_tokens = 0;
        }
    }

    /// Chooses what to show within `room` tokens: the content of each file
    /// in rank order, the first whole hunks that fit, with the list of what
    /// is left out paid for from the same room; when no hunk fits whole,
    /// the first piece of the first one that fits. Returns the spend.
    pub(super) fn pack(&mut self, ctx: &Ctx, room: usize) -> usize {
        let list_fixed = self.list_fixed(ctx);
        let mut listed: usize = self.files.iter().map(|e| e.om_tokens).sum();
        let mut content = 0;
        for at in 0..self.files.len() {
            // A review in parts shows a test in the part that shows its
            // source file, not in one the source did not fit: the room goes
            // to the files after them, the test to the source's part.
            let waits = self.part.is_some()
                && self.files[at].follows.is_some_and(|s| {
                    let source = &self.files[s];
                    source.first.is_some() && source.has_code() && !source.included
                });
            if waits {
                continue;
            }
            let entry = &mut self.files[at];
            let Some(first) = entry.first else { continue };
            let base = content + ctx.fence_tokens + entry.header_tokens + 1;
            let others = listed - entry.om_tokens;
            let n = entry.hunk_tokens.len();
            if first.hunk >= n {
                // Nothing but its header: a rename, a mode change, an empty
                // file.
                if base + list_fixed + others <= room {
                    entry.included = true;
                    content = base;
                    listed = others;
                }
                continue;
            }
            let mut k = 0;
            let mut sum = 0;
            while first.hunk + k < n
                && base + sum + entry.hunk_tokens[first.hunk + k] + list_fixed + others <= room
            {
                sum += entry.hunk_tokens[first.hunk + k];
                k += 1;
            }
            // A partly shown file costs a line listing its missing hunks.
            while k > 0 && first.hunk + k < n {
                let partial = entry.listed_cost(ctx, At::hunk(first.hunk + k));
                if base + sum + list_fixed + others + partial <= room {
                    break;
                }
                k -= 1;
                sum -= entry.hunk_tokens[first.hunk + k];
            }
            if k > 0 {
                entry.included = true;
                entry.until = At::hunk(first.hunk + k);
                content = base + sum;
                listed = others + entry.listed_cost(ctx, entry.until);
            }
        }
        if !self.shows_code() {
            if let Some(spent) = self.pack_piece(ctx, room, list_fixed + listed, content) {
                return spent;
            }
        }
        content + list_fixed + listed
    }

    /// No hunk fits whole: the longest first piece of the first hunk still
    /// to show that fits `room`, beside what is already packed (`content`,
    /// and the list of files not shown, `listed`). Returns the spend.
    fn pack_piece(
        &mut self,
        ctx: &Ctx,
        room: usize,
        listed: usize,
        content: usize,
    ) -> Option<usize> {
        // The first file, in rank order, one of whose lines fits.
        let (index, lines, piece, cost) = self
            .files
            .iter()
            .enumerate()
            .filter(|(_, e)| e.has_code())
            .find_map(|(i, e)| {
                e.longest_piece(ctx, room, listed, content)
                    .map(|(lines, piece, cost)| (i, lines, piece, cost))
            })?;
        let entry = &mut self.files[index];
        let first = entry.start();
        entry.included = true;
        entry.until = At {
            hunk: first.hunk,
            line: first.line + lines,
        };
        entry.piece_tokens = piece;
        Some(cost)
    }

    pub(super) fn render(&self, ctx: &Ctx) -> String {
        if self.files.is_empty() {
            return "(the diff is empty)".to_string();
        }
        let shown = self.files_shown();
        let mut out = vec![self.summary(shown, self.files.len() - shown)];
        for e in self.files.iter().filter(|e| e.included) {
            let mut content = header(e.file) + &e.file.notes();
            let start = e.start();
            for (h, hunk) in e.file.hunks.iter().enumerate() {
                let from = if h == start.hunk { start.line } else { 0 };
                let to = if h == e.until.hunk {
                    e.until.line
                } else {
                    hunk.lines.len()
                };
                if h >= start.hunk && h <= e.until.hunk && to > from {
                    content.push_str(&numbered_piece(hunk, from, to));
                }
            }
            out.push(ctx.fence.wrap(&content));
        }
        let mut groups: Vec<String> = Vec::new();
        for group in NotShown::ALL {
            let lines: Vec<String> = self
                .files
                .iter()
                .filter(|e| e.not_shown() == Some(group))
                .map(|e| e.listed_line(e.included.then_some(e.until)))
                .collect();
            if !lines.is_empty() {
                groups.push(format!("{}\n{}", group.heading(), lines.join("\n")));
            }
        }
        if !groups.is_empty() {
            out.push(format!(
                "{DIFF_LIST_TITLE}\n{}",
                ctx.fence.wrap(&groups.join("\n"))
            ));
        }
        out.join("\n\n")
    }

    /// Takes hunks off the lowest-ranked shown files (a piece shrinks
    /// first), then whole header-only files, until about `need` tokens are
    /// freed.
    /// A prompt that shows code keeps some: the last line goes only with
    /// the prompt's other contents (the caller then has nothing left to
    /// cut).
    pub(super) fn drop_content(&mut self, ctx: &Ctx, need: usize) -> bool {
        let had_code = self.shows_code();
        let mut freed = 0;
        for i in (0..self.files.len()).rev() {
            while self.files[i].included && freed < need {
                let e = &self.files[i];
                let kept = (e.included, e.until, e.piece_tokens);
                let dropped = self.files[i].drop_some(ctx, need - freed);
                if had_code && !self.shows_code() {
                    let e = &mut self.files[i];
                    (e.included, e.until, e.piece_tokens) = kept;
                    return freed > 0;
                }
                freed += dropped;
            }
            if freed >= need {
                break;
            }
        }
        freed > 0
    }

    pub(super) fn files_shown(&self) -> usize {
        self.files.iter().filter(|e| e.included).count()
    }

    pub(super) fn files_omitted(&self) -> Vec<Omission> {
        self.files
            .iter()
            .filter(|e| !e.included)
            .map(|e| omission(e.file.path.clone(), &e.reason()))
            .collect()
    }

    /// Files and hunks left out, for the accounting.
    pub(super) fn omissions(&self) -> Vec<Omission> {
        let mut out = Vec::new();
        for e in &self.files {
            if !e.included {
                out.push(omission(e.file.path.clone(), &e.reason()));
                continue;
            }
            for (hunk, from) in e.rest(e.until) {
                let to = hunk.lines.len();
                out.push(omission(
                    format!("{} {}", e.file.path, coordinates(hunk, from, to)),
                    OMITTED_FOR_BUDGET,
                ));
            }
        }
        out
    }

    /// What is still to show after this prompt, as the next part.
    pub(super) fn rest(&self) -> Option<DiffPart> {
        let mut from = vec![None; self.files.len()];
        for e in &self.files {
            let Some(first) = e.first else { continue };
            from[e.index] = if !e.included {
                Some(first)
            } else if e.until.hunk < e.hunk_tokens.len() {
                Some(e.until)
            } else {
                None
            };
        }
        from.iter().any(Option::is_some).then(|| DiffPart {
            number: self.part.unwrap_or(1) + 1,
            from,
        })
    }

    /// The least a prompt must hold to show some code: the first file with
    /// code to show, its header and one line, in its fence; 0 when there is
    /// no code to show.
    pub(super) fn least_code(&self, ctx: &Ctx) -> usize {
        let Some(e) = self.files.iter().find(|e| e.has_code()) else {
            return 0;
        };
        let start = e.start();
        let hunk = &e.file.hunks[start.hunk];
        let one = ctx.count(&numbered_piece(hunk, start.line, start.line + 1));
        ctx.fence_tokens + e.header_tokens + 1 + one
    }
}

impl DiffEntry<'_> {
    /// The most lines of the hunk this prompt starts at that fit `room`
    /// beside what is packed (`content`, and the list of files not shown,
    /// `listed`), with their tokens and the spend; None when not one line
    /// fits.
    fn longest_piece(
        &self,
        ctx: &Ctx,
        room: usize,
        listed: usize,
        content: usize,
    ) -> Option<(usize, usize, usize)> {
        let first = self.first?;
        let hunk = &self.file.hunks[first.hunk];
        let base = content + ctx.fence_tokens + self.header_tokens + 1;
        // The file's line in the list changes from its name to what of it
        // is left, which is about as long: both are counted.
        let others = listed - self.om_tokens;
        let fits = |lines: usize| {
            let until = At {
                hunk: first.hunk,
                line: first.line + lines,
            };
            let piece = ctx.count(&numbered_piece(hunk, first.line, until.line));
            let cost = base + piece + others + self.listed_cost(ctx, until);
            (cost <= room).then_some((piece, cost))
        };
        // At least one line, and less than the rest of the hunk (which
        // did not fit whole).
        let (mut lo, mut hi) = (0, hunk.lines.len() - first.line - 1);
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            if fits(mid).is_some() {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        let (piece, cost) = fits(lo).filter(|_| lo > 0)?;
        Some((lo, piece, cost))
    }

    fn start(&self) -> At {
        self.first.unwrap_or_default()
    }

    fn has_code(&self) -> bool {
        self.first.is_some_and(|f| f.hunk < self.hunk_tokens.len())
    }

    fn not_shown(&self) -> Option<NotShown> {
        let n = self.hunk_tokens.len();
        match self.first {
            None if self.class.name_only() => Some(NotShown::ByName),
            None => Some(NotShown::EarlierPart),
            Some(_) if !self.included => Some(NotShown::Budget),
            Some(_) if self.until.hunk < n => Some(NotShown::SomeHunks),
            Some(_) => None,
        }
    }

    fn reason(&self) -> String {
        match self.first {
            None if self.class.name_only() => format!("{}: content not shown", self.class.label()),
            None => "reviewed in an earlier part".to_string(),
            Some(_) => OMITTED_FOR_BUDGET.to_string(),
        }
    }

    /// The hunks (each with the line it is left from) still to show after
    /// `until`.
    fn rest(&self, until: At) -> Vec<(&Hunk, usize)> {
        self.file
            .hunks
            .iter()
            .enumerate()
            .skip(until.hunk)
            .map(|(h, hunk)| (hunk, if h == until.hunk { until.line } else { 0 }))
            .collect()
    }

    /// What this file's line in the list of files not shown costs when the
    /// prompt shows it up to `until`; nothing when that is all of it.
    fn listed_cost(&self, ctx: &Ctx, until: At) -> usize {
        if until.hunk >= self.hunk_tokens.len() {
            0
        } else {
            ctx.count(&self.listed_line(Some(until))) + 1
        }
    }

    /// The file's line in the list of files not shown: by name when none of
    /// it is shown (`until` None), else the hunks left after `until`.
    fn listed_line(&self, until: Option<At>) -> String {
        let f = self.file;
        let Some(until) = until else {
            return format!("- {} (+{} −{})", f.path, f.additions, f.deletions);
        };
        let rest = self.rest(until);
        let mut coords: Vec<String> = rest
            .iter()
            .take(MAX_LISTED_HUNKS)
            .map(|(hunk, from)| coordinates(hunk, *from, hunk.lines.len()))
            .collect();
        if rest.len() > MAX_LISTED_HUNKS {
            coords.push(format!("and {} more", rest.len() - MAX_LISTED_HUNKS));
        }
        format!(
            "- {}: {} of {} hunks: {}",
            f.path,
            rest.len(),
            f.hunks.len(),
            coords.join(", ")
        )
    }

    /// Takes the last hunk (or some lines of the last piece) off what is
    /// shown, or the header when nothing else is left; returns the tokens
    /// freed.
    fn drop_some(&mut self, ctx: &Ctx, need: usize) -> usize {
        let start = self.start();
        if self.until.line > 0 {
            let from = if self.until.hunk == start.hunk {
                start.line
            } else {
                0
            };
            let shown = self.until.line - from;
            let per_line = self.piece_tokens.div_ceil(shown.max(1)).max(1);
            let fewer = need.div_ceil(per_line).clamp(1, shown);
            self.until.line -= fewer;
            let hunk = &self.file.hunks[self.until.hunk];
            let before = self.piece_tokens;
            self.piece_tokens = if self.until.line > from {
                ctx.count(&numbered_piece(hunk, from, self.until.line))
            } else {
                self.until.line = 0;
                if self.until.hunk == start.hunk {
                    self.until = start;
                }
                0
            };
            return before.saturating_sub(self.piece_tokens).max(1);
        }
        if self.until > start && self.until.hunk > start.hunk {
            self.until.hunk -= 1;
            if self.until.hunk == start.hunk {
                self.until = start;
            }
            return self.hunk_tokens[self.until.hunk];
        }
        self.included = false;
        self.until = start;
        self.header_tokens
    }
}

/// A hunk as the prompt shows it: its header, then each line with its line
/// number right before the `+`, `-` or space of unified diff: the new
/// file's number for added and context lines, the old file's for removed
/// ones, so a model can cite `path:N` without counting.
pub fn numbered_hunk(hunk: &Hunk) -> String {
    let mut out = hunk.header();
    out.push('\n');
    for line in &hunk.lines {
        let (number, marker) = match line.kind {
            LineKind::Context => (line.new_lineno, ' '),
            LineKind::Added => (line.new_lineno, '+'),
            LineKind::Removed => (line.old_lineno, '-'),
        };
        if let Some(n) = number {
            out.push_str(&n.to_string());
        }
        out.push(marker);
        out.push_str(&line.text);
        out.push('\n');
        if line.no_newline {
            out.push_str("\\ No newline at end of file\n");
        }
    }
    out
}

/// Lines `from..to` of `hunk` as a hunk of their own, numbered: the whole
/// hunk when that is all of it.
fn numbered_piece(hunk: &Hunk, from: usize, to: usize) -> String {
    if from == 0 && to >= hunk.lines.len() {
        numbered_hunk(hunk)
    } else {
        numbered_hunk(&piece(hunk, from, to))
    }
}

/// Lines `from..to` of `hunk` with the coordinates of unified diff, so the
/// header of a piece says where it lies as a hunk's does.
fn piece(hunk: &Hunk, from: usize, to: usize) -> Hunk {
    let to = to.min(hunk.lines.len());
    let from = from.min(to);
    let (mut old, mut new) = (hunk.old_start, hunk.new_start);
    for line in &hunk.lines[..from] {
        match line.kind {
            LineKind::Context => {
                old += 1;
                new += 1;
            }
            LineKind::Added => new += 1,
            LineKind::Removed => old += 1,
        }
    }
    let lines = hunk.lines[from..to].to_vec();
    let old_lines = lines.iter().filter(|l| l.kind != LineKind::Added).count() as u32;
    let new_lines = lines.iter().filter(|l| l.kind != LineKind::Removed).count() as u32;
    // As git writes an empty side: the line before the piece.
    let start = |cursor: u32, count: u32, whole: u32, whole_start: u32| match (count, whole) {
        (0, 0) => whole_start,
        (0, _) => cursor.saturating_sub(1),
        _ => cursor,
    };
    Hunk {
        old_start: start(old, old_lines, hunk.old_lines, hunk.old_start),
        old_lines,
        new_start: start(new, new_lines, hunk.new_lines, hunk.new_start),
        new_lines,
        context: hunk.context.clone(),
        lines,
    }
}

/// `@@ -a,b +c,d @@` of lines `from..to` of a hunk, without the function
/// context, which is untrusted text.
fn coordinates(hunk: &Hunk, from: usize, to: usize) -> String {
    let h = if from == 0 && to >= hunk.lines.len() {
        std::borrow::Cow::Borrowed(hunk)
    } else {
        std::borrow::Cow::Owned(piece(hunk, from, to))
    };
    format!(
        "@@ -{},{} +{},{} @@",
        h.old_start, h.old_lines, h.new_start, h.new_lines
    )
}

/// A file's header as the prompt shows it: git's (`diff --git`, then the
/// mode, rename or copy lines) without the `---`/`+++` pair, which names
/// the same two paths again (`/dev/null` is said by `new file mode` and
/// `deleted file mode`).
fn header(file: &FileDiff) -> String {
    let header = file.header();
    if file.binary {
        return header;
    }
    header
        .lines()
        .filter(|l| !(l.starts_with("--- ") || l.starts_with("+++ ")))
        .map(|l| format!("{l}\n"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::diff::{FileStatus, Line};

    #[test]
    fn a_header_names_its_paths_once() {
        let hunk = Hunk {
            old_start: 1,
            old_lines: 1,
            new_start: 1,
            new_lines: 1,
            context: String::new(),
            lines: vec![line(LineKind::Added, None, Some(1))],
        };
        let file = |status, old_path: Option<&str>, binary| FileDiff {
            path: "src/b.rs".into(),
            old_path: old_path.map(String::from),
            similarity: old_path.map(|_| 90),
            status,
            binary,
            old_mode: Some(0o100644),
            new_mode: Some(0o100644),
            old_blob: None,
            new_blob: None,
            hunks: if binary {
                Vec::new()
            } else {
                vec![hunk.clone()]
            },
            additions: 1,
            deletions: 0,
            not_utf8: false,
        };
        assert_eq!(
            header(&file(FileStatus::Modified, None, false)),
            "diff --git a/src/b.rs b/src/b.rs\n"
        );
        assert_eq!(
            header(&file(FileStatus::Renamed, Some("src/a.rs"), false)),
            "diff --git a/src/a.rs b/src/b.rs\nsimilarity index 90%\nrename from src/a.rs\nrename to src/b.rs\n"
        );
        assert_eq!(
            header(&file(FileStatus::Added, None, false)),
            "diff --git a/src/b.rs b/src/b.rs\nnew file mode 100644\n"
        );
        assert!(
            header(&file(FileStatus::Modified, None, true))
                .ends_with("Binary files a/src/b.rs and b/src/b.rs differ\n")
        );
    }

    fn line(kind: LineKind, old: Option<u32>, new: Option<u32>) -> Line {
        Line {
            kind,
            old_lineno: old,
            new_lineno: new,
            text: "x".into(),
            no_newline: false,
        }
    }

    #[test]
    fn a_piece_has_the_coordinates_of_its_lines() {
        // @@ -10,3 +10,4 @@: context 10, removed 11, added 11 and 12, context 12/13.
        let hunk = Hunk {
            old_start: 10,
            old_lines: 3,
            new_start: 10,
            new_lines: 4,
            context: "fn f()".into(),
            lines: vec![
                line(LineKind::Context, Some(10), Some(10)),
                line(LineKind::Removed, Some(11), None),
                line(LineKind::Added, None, Some(11)),
                line(LineKind::Added, None, Some(12)),
                line(LineKind::Context, Some(12), Some(13)),
            ],
        };
        assert_eq!(coordinates(&hunk, 0, 5), "@@ -10,3 +10,4 @@");
        assert_eq!(coordinates(&hunk, 0, 2), "@@ -10,2 +10,1 @@");
        assert_eq!(coordinates(&hunk, 2, 4), "@@ -11,0 +11,2 @@");
        assert_eq!(coordinates(&hunk, 4, 5), "@@ -12,1 +13,1 @@");
        let text = numbered_piece(&hunk, 2, 4);
        assert_eq!(text, "@@ -11,0 +11,2 @@ fn f()\n11+x\n12+x\n");
        // A hunk of added lines only keeps git's start of the empty side.
        let added = Hunk {
            old_start: 0,
            old_lines: 0,
            new_start: 1,
            new_lines: 3,
            context: String::new(),
            lines: (1..=3)
                .map(|n| line(LineKind::Added, None, Some(n)))
                .collect(),
        };
        assert_eq!(coordinates(&added, 1, 3), "@@ -0,0 +2,2 @@");
    }
}
