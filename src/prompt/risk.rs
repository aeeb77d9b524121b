//! How much code a file's change touches: its changed lines that are code,
//! not comments, doc comments, docstrings or blank lines. The review order
//! ranks source files by it (tokio 1.43 → 1.44's `broadcast.rs` changed
//! 265 lines, 252 of them docs: by its lines alone it came first). Pure
//! functions of the path and the diff's lines; a per-language guess from
//! the extension, never a parse.

use crate::git::diff::{FileDiff, Hunk, LineKind};

/// How a language writes comments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Comments {
    /// `//` and `/* … */` (Rust, C, Go, Java, JavaScript, …).
    Slashes,
    /// `#`, and docstrings in triple quotes (Python).
    Python,
    /// `#` (shell, Ruby, Perl, R, …).
    Hash,
    /// Unknown: every non-blank line counts.
    None,
}

fn comments(path: &str) -> Comments {
    let name = path.rsplit('/').next().unwrap_or(path);
    let ext = name.rsplit_once('.').map_or("", |(_, e)| e);
    match ext.to_ascii_lowercase().as_str() {
        "rs" | "c" | "h" | "cc" | "cpp" | "cxx" | "hpp" | "hh" | "go" | "java" | "kt" | "kts"
        | "js" | "jsx" | "mjs" | "cjs" | "ts" | "tsx" | "mts" | "cts" | "swift" | "scala"
        | "cs" | "dart" | "zig" | "proto" => Comments::Slashes,
        "py" | "pyi" => Comments::Python,
        "sh" | "bash" | "zsh" | "rb" | "pl" | "pm" | "r" | "ex" | "exs" | "nim" => Comments::Hash,
        _ => Comments::None,
    }
}

/// The changed lines of `file` (added and removed) that are code.
pub fn code_lines(file: &FileDiff) -> usize {
    code_flags(file).iter().flatten().filter(|c| **c).count()
}

/// Per hunk of `file`, per line of it: whether it is a changed line (added
/// or removed) that is code, not a comment, a doc comment, a docstring or
/// blank.
pub fn code_flags(file: &FileDiff) -> Vec<Vec<bool>> {
    let style = comments(&file.path);
    file.hunks
        .iter()
        .map(|h| hunk_code_flags(h, style))
        .collect()
}

/// Each side of a hunk (old: context and removed lines; new: context and
/// added lines) is read in order, so a block comment or a docstring opened
/// on a context line covers the changed lines after it.
fn hunk_code_flags(hunk: &Hunk, style: Comments) -> Vec<bool> {
    let mut flags = vec![false; hunk.lines.len()];
    for side in [LineKind::Removed, LineKind::Added] {
        let lines: Vec<(usize, &str, bool)> = hunk
            .lines
            .iter()
            .enumerate()
            .filter(|(_, l)| l.kind == side || l.kind == LineKind::Context)
            .map(|(i, l)| (i, l.text.as_str(), l.kind == side))
            .collect();
        let texts: Vec<(&str, bool)> = lines.iter().map(|(_, t, c)| (*t, *c)).collect();
        let doc = doc_flags(&texts, style);
        for ((i, text, changed), doc) in lines.into_iter().zip(doc) {
            if changed && !doc && !text.trim().is_empty() {
                flags[i] = true;
            }
        }
    }
    flags
}

/// Per line of one side of a hunk: whether it is a comment, a doc comment
/// or inside a docstring or a block comment.
fn doc_flags(lines: &[(&str, bool)], style: Comments) -> Vec<bool> {
    let mut flags = Vec::with_capacity(lines.len());
    let mut inside = false;
    for (text, _) in lines {
        let t = text.trim_start();
        let flag = match style {
            Comments::None => false,
            Comments::Hash => t.starts_with('#') && !t.starts_with("#!"),
            Comments::Slashes => {
                if inside {
                    inside = !t.contains("*/");
                    true
                } else if t.starts_with("//") {
                    true
                } else if let Some(rest) = t.strip_prefix("/*") {
                    inside = !rest.contains("*/");
                    true
                } else {
                    false
                }
            }
            Comments::Python => {
                let quotes = triple_quotes(t);
                if inside {
                    inside = quotes % 2 == 0;
                    true
                } else if t.starts_with('#') {
                    true
                } else if opens_docstring(t) {
                    inside = quotes % 2 == 1;
                    true
                } else if quotes % 2 == 1 && !t.contains('=') && !t.contains('(') {
                    // A hunk that begins inside a docstring: the line that
                    // closes it, and every line before it, are the
                    // docstring's.
                    flags.iter_mut().for_each(|f| *f = true);
                    true
                } else {
                    false
                }
            }
        };
        flags.push(flag);
    }
    flags
}

fn triple_quotes(text: &str) -> usize {
    text.matches("\"\"\"").count() + text.matches("'''").count()
}

/// A line that begins a string statement (`"""…`, `r"""…`).
fn opens_docstring(t: &str) -> bool {
    let t = t.trim_start_matches(['r', 'R', 'b', 'B', 'u', 'U', 'f', 'F']);
    t.starts_with("\"\"\"") || t.starts_with("'''")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::diff::{FileStatus, Line};

    fn file(path: &str, lines: &[(LineKind, &str)]) -> FileDiff {
        FileDiff {
            path: path.to_string(),
            old_path: None,
            similarity: None,
            status: FileStatus::Modified,
            binary: false,
            old_mode: None,
            new_mode: Some(0o100644),
            old_blob: None,
            new_blob: None,
            hunks: vec![Hunk {
                old_start: 1,
                old_lines: 0,
                new_start: 1,
                new_lines: 0,
                context: String::new(),
                lines: lines
                    .iter()
                    .map(|(kind, text)| Line {
                        kind: *kind,
                        old_lineno: None,
                        new_lineno: None,
                        text: text.to_string(),
                        no_newline: false,
                    })
                    .collect(),
            }],
            additions: lines.iter().filter(|l| l.0 == LineKind::Added).count(),
            deletions: lines.iter().filter(|l| l.0 == LineKind::Removed).count(),
            not_utf8: false,
        }
    }

    use LineKind::{Added as A, Context as C, Removed as R};

    #[test]
    fn rust_doc_comments_and_block_comments_are_not_code() {
        let f = file(
            "src/sync/broadcast.rs",
            &[
                (A, "/// Sends a value."),
                (A, "///"),
                (A, "//! Module docs."),
                (C, "/*"),
                (A, " * inside a block comment"),
                (C, "*/"),
                (A, "#[must_use]"),
                (A, "pub fn send(&self) {"),
                (A, "    *self.count += 1; // counted"),
                (A, ""),
                (R, "    // old comment"),
                (R, "    old_call();"),
                (A, "}"),
            ],
        );
        assert_eq!(code_lines(&f), 5);
    }

    #[test]
    fn python_comments_and_docstrings_are_not_code() {
        let f = file(
            "src/flask/app.py",
            &[
                (A, "def open_resource(self, resource):"),
                (A, "    \"\"\"Open a resource."),
                (A, ""),
                (A, "    .. versionchanged:: 3.1"),
                (A, "    \"\"\""),
                (A, "    # join it"),
                (A, "    path = os.path.join(self.root_path, resource)"),
                (A, "    \"\"\"One line.\"\"\""),
                (A, "    text = \"\"\"not a docstring\"\"\""),
            ],
        );
        assert_eq!(code_lines(&f), 3);
    }

    #[test]
    fn a_hunk_that_begins_inside_a_docstring() {
        let f = file(
            "pkg/x.py",
            &[
                (C, "    of the limit, in bytes."),
                (A, "    .. versionadded:: 3.1"),
                (C, "    \"\"\""),
                (A, "    return self._limit"),
            ],
        );
        assert_eq!(code_lines(&f), 1);
    }

    #[test]
    fn unknown_languages_count_every_non_blank_line() {
        let f = file("Makefile", &[(A, "# all"), (A, ""), (A, "all: build")]);
        assert_eq!(code_lines(&f), 2);
        let sh = file("run.sh", &[(A, "#!/bin/sh"), (A, "# say"), (A, "echo hi")]);
        assert_eq!(code_lines(&sh), 2);
    }
}
