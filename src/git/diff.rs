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
    pub hunks: Vec<Hunk>,
    pub additions: usize,
    pub deletions: usize,
}

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
    pub fn mode_changed(&self) -> bool {
        matches!((self.old_mode, self.new_mode), (Some(a), Some(b)) if a != b)
    }

    /// The `diff --git` header block, without hunks.
    pub fn header(&self) -> String {
        let old = self.old_path.as_deref().unwrap_or(&self.path);
        let mut out = format!("diff --git a/{old} b/{}\n", self.path);
        match self.status {
            FileStatus::Added => {
                if let Some(mode) = self.new_mode {
                    out.push_str(&format!("new file mode {mode:o}\n"));
                }
            }
            FileStatus::Deleted => {
                if let Some(mode) = self.old_mode {
                    out.push_str(&format!("deleted file mode {mode:o}\n"));
                }
            }
            FileStatus::Renamed => {
                out.push_str(&format!("rename from {old}\nrename to {}\n", self.path));
            }
            FileStatus::Copied => {
                out.push_str(&format!("copy from {old}\ncopy to {}\n", self.path));
            }
            FileStatus::Modified | FileStatus::TypeChange => {}
        }
        if self.mode_changed() && !matches!(self.status, FileStatus::Added | FileStatus::Deleted) {
            if let (Some(a), Some(b)) = (self.old_mode, self.new_mode) {
                out.push_str(&format!("old mode {a:o}\nnew mode {b:o}\n"));
            }
        }
        if self.binary {
            out.push_str(&format!("Binary files a/{old} and b/{} differ\n", self.path));
        } else if !self.hunks.is_empty() {
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
    /// `@@ -a,b +c,d @@ context`
    pub fn header(&self) -> String {
        let mut out = format!(
            "@@ -{},{} +{},{} @@",
            self.old_start, self.old_lines, self.new_start, self.new_lines
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
