//! The diff model: plain data describing what changed between two commits.
//! It owns no git2 types, so `prompt`, `impact` and `render` can use it freely.

use serde::Serialize;

/// All changes between a base commit and a head commit.
#[derive(Debug, Clone, Serialize)]
pub struct Diff {
    pub base_commit: String,
    pub head_commit: String,
    pub files: Vec<FileDiff>,
    /// `sha256:<hex>` of the full unified diff text (`Diff::render`).
    pub sha256: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FileStatus {
    Added,
    Modified,
    Deleted,
    Renamed,
    Copied,
    /// e.g. a file replaced by a symlink.
    TypeChange,
}

#[derive(Debug, Clone, Serialize)]
pub struct FileDiff {
    /// The path on the head side; for a deletion, the path on the base side.
    pub path: String,
    /// The base-side path when it differs (renames and copies).
    pub old_path: Option<String>,
    pub status: FileStatus,
    pub binary: bool,
    pub old_mode: Option<u32>,
    pub new_mode: Option<u32>,
    /// Blob ids (hex) on each side; None where the side does not exist.
    pub old_blob: Option<String>,
    pub new_blob: Option<String>,
    /// For renames and copies, the similarity score git prints (0-100).
    pub similarity: Option<u32>,
    pub hunks: Vec<Hunk>,
    pub additions: usize,
    pub deletions: usize,
    /// True when a line of the diff was not UTF-8: its text holds U+FFFD
    /// where those bytes were, so it is not what the file says.
    pub not_utf8: bool,
}

/// The git mode of a symbolic link; its blob is the link's target.
pub const SYMLINK_MODE: u32 = 0o120000;

#[derive(Debug, Clone, Serialize)]
pub struct Hunk {
    pub old_start: u32,
    pub old_lines: u32,
    pub new_start: u32,
    pub new_lines: u32,
    /// The function context git prints after the second `@@`, if any.
    pub context: String,
    pub lines: Vec<Line>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LineKind {
    Context,
    Added,
    Removed,
}

#[derive(Debug, Clone, Serialize)]
pub struct Line {
    pub kind: LineKind,
    pub old_lineno: Option<u32>,
    pub new_lineno: Option<u32>,
    /// The line's text without its trailing newline.
    pub text: String,
    /// True when git reported "\ No newline at end of file" after this line.
    pub no_newline: bool,
}

impl Diff {
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    pub fn additions(&self) -> usize {
        self.files.iter().map(|f| f.additions).sum()
    }

    pub fn deletions(&self) -> usize {
        self.files.iter().map(|f| f.deletions).sum()
    }

    /// The whole diff as unified text, the form hashed into `sha256`.
    pub fn render(&self) -> String {
        self.files.iter().map(FileDiff::render).collect()
    }
}

impl FileDiff {
    /// True when the file is a symbolic link at head (or was one, for a
    /// deletion): its content is a target path, not source code.
    pub fn is_symlink(&self) -> bool {
        let mode = if self.status == FileStatus::Deleted {
            self.old_mode
        } else {
            self.new_mode
        };
        mode == Some(SYMLINK_MODE)
    }

    /// The target a symlink points to on the side `is_symlink` looks at:
    /// the one line of its blob the diff shows.
    pub fn symlink_target(&self) -> Option<&str> {
        if !self.is_symlink() {
            return None;
        }
        let side = if self.status == FileStatus::Deleted {
            LineKind::Removed
        } else {
            LineKind::Added
        };
        let mut lines = self.hunks.iter().flat_map(|h| &h.lines);
        let line = lines
            .clone()
            .find(|l| l.kind == side)
            .or_else(|| lines.find(|l| l.kind == LineKind::Context))?;
        Some(line.text.as_str())
    }

    /// What a reader of the diff must know that its lines do not say: a
    /// symlink is a link (its target and mode), and a file that is not
    /// UTF-8 is shown with U+FFFD in place of the bytes that are not.
    /// One line per fact, each ending in a newline; empty for plain text.
    pub fn notes(&self) -> String {
        let mut out = String::new();
        if let Some(target) = self.symlink_target() {
            out.push_str(&format!(
                "(symlink, mode {SYMLINK_MODE:06o}, pointing to `{target}`: a link, not source code)\n"
            ));
        }
        if self.not_utf8 {
            out.push_str(
                "(not UTF-8: bytes that are not UTF-8 are shown as U+FFFD; the file's real bytes differ)\n",
            );
        }
        out
    }

    pub fn mode_changed(&self) -> bool {
        matches!((self.old_mode, self.new_mode), (Some(a), Some(b)) if a != b)
    }

    /// The `diff --git` header block, without hunks, in git's order: mode
    /// lines, then rename or copy lines, then the `---`/`+++` pair or the
    /// binary notice. git's `index` line is left out: its abbreviation length
    /// depends on the repository's size and configuration.
    pub fn header(&self) -> String {
        let old = self.old_path.as_deref().unwrap_or(&self.path);
        let mut out = format!("diff --git a/{old} b/{}\n", self.path);
        match (self.status, self.old_mode, self.new_mode) {
            (FileStatus::Added, _, Some(mode)) => {
                out.push_str(&format!("new file mode {mode:06o}\n"));
            }
            (FileStatus::Deleted, Some(mode), _) => {
                out.push_str(&format!("deleted file mode {mode:06o}\n"));
            }
            (_, Some(a), Some(b)) if a != b => {
                out.push_str(&format!("old mode {a:06o}\nnew mode {b:06o}\n"));
            }
            _ => {}
        }
        let similarity = self
            .similarity
            .map(|score| format!("similarity index {score}%\n"))
            .unwrap_or_default();
        match self.status {
            FileStatus::Renamed => {
                out.push_str(&similarity);
                out.push_str(&format!("rename from {old}\nrename to {}\n", self.path));
            }
            FileStatus::Copied => {
                out.push_str(&similarity);
                out.push_str(&format!("copy from {old}\ncopy to {}\n", self.path));
            }
            FileStatus::Added
            | FileStatus::Deleted
            | FileStatus::Modified
            | FileStatus::TypeChange => {}
        }
        let a = if self.status == FileStatus::Added {
            "/dev/null".to_string()
        } else {
            format!("a/{old}")
        };
        let b = if self.status == FileStatus::Deleted {
            "/dev/null".to_string()
        } else {
            format!("b/{}", self.path)
        };
        if self.binary {
            out.push_str(&format!("Binary files {a} and {b} differ\n"));
        } else if !self.hunks.is_empty() {
            out.push_str(&format!("--- {a}\n+++ {b}\n"));
        }
        out
    }

    /// Header and every hunk as unified text.
    pub fn render(&self) -> String {
        let mut out = self.header();
        for hunk in &self.hunks {
            out.push_str(&hunk.render());
        }
        out
    }
}

impl Hunk {
    /// `@@ -a,b +c,d @@ context`; like git, a count of 1 is left out.
    pub fn header(&self) -> String {
        let range = |start: u32, lines: u32| {
            if lines == 1 {
                start.to_string()
            } else {
                format!("{start},{lines}")
            }
        };
        let mut out = format!(
            "@@ -{} +{} @@",
            range(self.old_start, self.old_lines),
            range(self.new_start, self.new_lines)
        );
        if !self.context.is_empty() {
            out.push(' ');
            out.push_str(&self.context);
        }
        out
    }

    /// Header line and body lines, each ending in a newline.
    pub fn render(&self) -> String {
        let mut out = self.header();
        out.push('\n');
        for line in &self.lines {
            out.push(match line.kind {
                LineKind::Context => ' ',
                LineKind::Added => '+',
                LineKind::Removed => '-',
            });
            out.push_str(&line.text);
            out.push('\n');
            if line.no_newline {
                out.push_str("\\ No newline at end of file\n");
            }
        }
        out
    }
}
