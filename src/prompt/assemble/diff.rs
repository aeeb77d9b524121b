//! The diff's claim on the budget, what is left of it: files ranked by
//! risk, hunks numbered with the new file's lines, what does not fit listed
//! by name (or left for the next part of a review in parts).

use crate::git::diff::{FileDiff, Hunk, LineKind};
use crate::prompt::files::{Class, rank};
use crate::prompt::{DiffPart, Omission};

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
    /// The first hunk this prompt may show; None when the file has nothing
    /// to show here (shown in an earlier part, or by name only).
    first: Option<usize>,
    header_tokens: usize,
    /// Per hunk of the file, numbered as the prompt shows it.
    hunk_tokens: Vec<usize>,
    /// Cost of this file's line in the list of files not shown.
    om_tokens: usize,
    included: bool,
    /// Hunks shown, from `first`; meaningful when included.
    shown: usize,
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
        let entries = rank(files)
            .into_iter()
            .map(|(i, class)| {
                let file = &files[i];
                let first = if class.name_only() {
                    None
                } else {
                    match part {
                        Some(p) => p.from_hunk.get(i).copied().flatten(),
                        None => Some(0),
                    }
                };
                let mut entry = DiffEntry {
                    index: i,
                    file,
                    class,
                    first,
                    header_tokens: ctx.count(&file.header()),
                    hunk_tokens: file
                        .hunks
                        .iter()
                        .map(|h| ctx.count(&numbered_hunk(h)))
                        .collect(),
                    om_tokens: 0,
                    included: false,
                    shown: 0,
                };
                entry.om_tokens = ctx.count(&entry.listed_line(0)) + 1;
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
            "{} files changed, +{} −{} lines. In review order (source, tests, docs/config): {} with changes shown, {} not shown (listed below).",
            self.files.len(),
            self.additions,
            self.deletions,
            shown,
            not_shown
        );
        if let Some(n) = self.part {
            out.push_str(&format!(
                " The diff does not fit one prompt, so this review is done in parts: this is part {n}. Files omitted for budget here are reviewed in another part."
            ));
        }
        out
    }

    /// Chooses what to show within `room` tokens: the content of each file
    /// in rank order, the first hunks that fit, with the list of what is
    /// left out paid for from the same room.
    pub(super) fn pack(&mut self, ctx: &Ctx, room: usize) {
        let list_fixed = self.list_fixed(ctx);
        let mut listed: usize = self.files.iter().map(|e| e.om_tokens).sum();
        let mut content = 0;
        for entry in &mut self.files {
            let Some(first) = entry.first else { continue };
            let base = content + ctx.fence_tokens + entry.header_tokens + 1;
            let others = listed - entry.om_tokens;
            let n = entry.hunk_tokens.len();
            if first >= n {
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
            while first + k < n
                && base + sum + entry.hunk_tokens[first + k] + list_fixed + others <= room
            {
                sum += entry.hunk_tokens[first + k];
                k += 1;
            }
            // A partly shown file costs a line listing its missing hunks.
            while k > 0 && first + k < n {
                let partial = ctx.count(&entry.listed_line(k)) + 1;
                if base + sum + list_fixed + others + partial <= room {
                    break;
                }
                k -= 1;
                sum -= entry.hunk_tokens[first + k];
            }
            if k > 0 {
                entry.included = true;
                entry.shown = k;
                content = base + sum;
                listed = others
                    + if first + k < n {
                        ctx.count(&entry.listed_line(k)) + 1
                    } else {
                        0
                    };
            }
        }
    }

    pub(super) fn render(&self, ctx: &Ctx) -> String {
        if self.files.is_empty() {
            return "(the diff is empty)".to_string();
        }
        let shown = self.files_shown();
        let mut out = vec![self.summary(shown, self.files.len() - shown)];
        for e in self.files.iter().filter(|e| e.included) {
            let mut content = e.file.header();
            let first = e.first.unwrap_or(0);
            for hunk in &e.file.hunks[first..first + e.shown] {
                content.push_str(&numbered_hunk(hunk));
            }
            out.push(ctx.fence.wrap(&content));
        }
        let mut groups: Vec<String> = Vec::new();
        for group in NotShown::ALL {
            let lines: Vec<String> = self
                .files
                .iter()
                .filter(|e| e.not_shown() == Some(group))
                .map(|e| e.listed_line(e.shown))
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

    /// Takes hunks off the lowest-ranked shown files, then whole header-only
    /// files, until about `need` tokens are freed.
    pub(super) fn drop_content(&mut self, need: usize) -> bool {
        let mut freed = 0;
        for e in self.files.iter_mut().rev() {
            while e.included && freed < need {
                if e.shown > 0 {
                    e.shown -= 1;
                    freed += e.hunk_tokens[e.first.unwrap_or(0) + e.shown];
                }
                if e.shown == 0 {
                    e.included = false;
                    freed += e.header_tokens;
                }
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
            } else {
                let first = e.first.unwrap_or(0);
                for hunk in &e.file.hunks[first + e.shown..] {
                    out.push(omission(
                        format!("{} {}", e.file.path, hunk_coordinates(hunk)),
                        OMITTED_FOR_BUDGET,
                    ));
                }
            }
        }
        out
    }

    /// What is still to show after this prompt, as the next part.
    pub(super) fn rest(&self) -> Option<DiffPart> {
        let mut from_hunk = vec![None; self.files.len()];
        for e in &self.files {
            let Some(first) = e.first else { continue };
            from_hunk[e.index] = if !e.included {
                Some(first)
            } else if first + e.shown < e.hunk_tokens.len() {
                Some(first + e.shown)
            } else {
                None
            };
        }
        from_hunk.iter().any(Option::is_some).then(|| DiffPart {
            number: self.part.unwrap_or(1) + 1,
            from_hunk,
        })
    }
}

impl DiffEntry<'_> {
    fn not_shown(&self) -> Option<NotShown> {
        let n = self.hunk_tokens.len();
        match self.first {
            None if self.class.name_only() => Some(NotShown::ByName),
            None => Some(NotShown::EarlierPart),
            Some(_) if !self.included => Some(NotShown::Budget),
            Some(first) if first + self.shown < n => Some(NotShown::SomeHunks),
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

    /// The file's line in the list of files not shown, when `shown` of its
    /// hunks are in the prompt.
    fn listed_line(&self, shown: usize) -> String {
        let f = self.file;
        match self.first {
            Some(first) if shown > 0 => {
                let rest = &f.hunks[first + shown..];
                let mut coords: Vec<String> = rest
                    .iter()
                    .take(MAX_LISTED_HUNKS)
                    .map(hunk_coordinates)
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
            _ => format!("- {} (+{} −{})", f.path, f.additions, f.deletions),
        }
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

/// `@@ -a,b +c,d @@` without the function context, which is untrusted text.
fn hunk_coordinates(hunk: &Hunk) -> String {
    format!(
        "@@ -{},{} +{},{} @@",
        hunk.old_start, hunk.old_lines, hunk.new_start, hunk.new_lines
    )
}
