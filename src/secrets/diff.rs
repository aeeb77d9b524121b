//! Redaction of a diff where it is loaded, so that no later step (prompt,
//! report, log, terminal) can see a secret: each hunk's lines are scanned
//! together (a key block spans several) and rewritten in place.

use crate::git::{Diff, LineKind};

use super::{Context, Kind, apply, scan};

/// A secret found in a diff: its rule, file, line on the side it is on
/// (the new file's for added and context lines, the old file's for
/// removed ones), and whether the diff adds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffSecret {
    pub rule: &'static str,
    pub file: String,
    pub line: u32,
    pub added: bool,
}

/// Replace every secret in `diff` by its placeholder, and say where they
/// were. The diff's `sha256` is left as computed from git: it names the
/// change, and a hash reveals nothing of a secret.
pub fn redact_diff(diff: &mut Diff) -> Vec<DiffSecret> {
    let mut out = Vec::new();
    for file in &mut diff.files {
        // A password assigned in test code is a fixture, and one in
        // documentation an example (flask's docs show `SECRET_KEY =
        // '192b9bdd…'`): the assignment rule stands down there, while
        // provider formats and key blocks still count.
        let example = crate::paths::is_test(&file.path) || documentation(&file.path);
        let context = Context::file(&file.path, example);
        for hunk in &mut file.hunks {
            let texts: Vec<&str> = hunk.lines.iter().map(|l| l.text.as_str()).collect();
            let found = scan(&texts, context);
            super::net::allow(found.fixtures.iter().cloned());
            if !found.spans.is_empty() {
                for f in &found.found {
                    let line = &hunk.lines[f.line];
                    let (number, added) = match line.kind {
                        LineKind::Added => (line.new_lineno, true),
                        LineKind::Context => (line.new_lineno, false),
                        LineKind::Removed => (line.old_lineno, false),
                    };
                    out.push(DiffSecret {
                        rule: f.rule,
                        file: file.path.clone(),
                        line: number.unwrap_or(0),
                        added,
                    });
                }
                let mut owned: Vec<String> = hunk.lines.iter().map(|l| l.text.clone()).collect();
                apply(&mut owned, &found);
                for (line, text) in hunk.lines.iter_mut().zip(owned) {
                    line.text = text;
                }
            }
            // git's function context is source text too.
            if !hunk.context.is_empty() {
                let found = scan(&[hunk.context.as_str()], context);
                super::net::allow(found.fixtures.iter().cloned());
                if !found.spans.is_empty() {
                    let mut owned = vec![hunk.context.clone()];
                    apply(&mut owned, &found);
                    hunk.context = owned.remove(0);
                }
            }
        }
    }
    out
}

/// Markup documentation, whose assignments are examples. A `.txt` file is
/// prose too, but `credentials.txt` is where a leaked password is written
/// down, so its assignments still count.
fn documentation(path: &str) -> bool {
    Kind::of_path(path) == Kind::Prose && !path.to_ascii_lowercase().ends_with(".txt")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::{FileDiff, FileStatus, Hunk, Line};

    fn line(kind: LineKind, old: Option<u32>, new: Option<u32>, text: &str) -> Line {
        Line {
            kind,
            old_lineno: old,
            new_lineno: new,
            text: text.to_string(),
            no_newline: false,
        }
    }

    fn added(path: &str, texts: &[&str]) -> Diff {
        Diff {
            base_commit: "a".into(),
            head_commit: "b".into(),
            sha256: String::new(),
            files: vec![FileDiff {
                path: path.into(),
                old_path: None,
                status: FileStatus::Added,
                binary: false,
                old_mode: None,
                new_mode: None,
                old_blob: None,
                new_blob: None,
                similarity: None,
                additions: texts.len(),
                deletions: 0,
                not_utf8: false,
                hunks: vec![Hunk {
                    old_start: 0,
                    old_lines: 0,
                    new_start: 1,
                    new_lines: texts.len() as u32,
                    context: String::new(),
                    lines: texts
                        .iter()
                        .enumerate()
                        .map(|(i, t)| line(LineKind::Added, None, Some(i as u32 + 1), t))
                        .collect(),
                }],
            }],
        }
    }

    #[test]
    fn an_assignment_in_documentation_is_an_example_but_a_token_is_a_token() {
        let lines = [
            "    SECRET_KEY = '192b9bdd22ab9ed4d12e236c78afcb9a393ec15f71bbf5dc987d54727823bcbf'",
            "    AWS = 'AKIA2OGYBAH6QZS7VJ5D'",
        ];
        let rules = |path: &str| -> Vec<&'static str> {
            redact_diff(&mut added(path, &lines))
                .iter()
                .map(|s| s.rule)
                .collect()
        };
        assert_eq!(rules("docs/config.rst"), vec!["aws-access-key"]);
        assert_eq!(rules("README.md"), vec!["aws-access-key"]);
        assert_eq!(
            rules("deploy/credentials.txt"),
            vec!["secret-assignment", "aws-access-key"]
        );
        assert_eq!(
            rules("app/config.py"),
            vec!["secret-assignment", "aws-access-key"]
        );
    }

    #[test]
    fn secrets_are_replaced_in_every_line_and_located_on_their_side() {
        let mut diff = Diff {
            base_commit: "a".into(),
            head_commit: "b".into(),
            sha256: String::new(),
            files: vec![FileDiff {
                path: "config/settings.py".into(),
                old_path: None,
                status: FileStatus::Modified,
                binary: false,
                old_mode: None,
                new_mode: None,
                old_blob: None,
                new_blob: None,
                similarity: None,
                additions: 1,
                deletions: 1,
                not_utf8: false,
                hunks: vec![Hunk {
                    old_start: 10,
                    old_lines: 2,
                    new_start: 10,
                    new_lines: 2,
                    context: "def connect(key='AKIAQYLPMN5HHHFPZAM2'):".into(),
                    lines: vec![
                        line(LineKind::Context, Some(10), Some(10), "import os"),
                        line(
                            LineKind::Removed,
                            Some(11),
                            None,
                            "TOKEN = 'ghp_R8fNq2Lx7TbV4mKc9WzPd3HsYe6Ju1Ao5GiQ'",
                        ),
                        line(
                            LineKind::Added,
                            None,
                            Some(11),
                            "AWS = 'AKIA2OGYBAH6QZS7VJ5D'",
                        ),
                    ],
                }],
            }],
        };
        let found = redact_diff(&mut diff);
        assert_eq!(
            found,
            vec![
                DiffSecret {
                    rule: "github-token",
                    file: "config/settings.py".into(),
                    line: 11,
                    added: false
                },
                DiffSecret {
                    rule: "aws-access-key",
                    file: "config/settings.py".into(),
                    line: 11,
                    added: true
                },
            ]
        );
        let text = diff.render();
        assert!(!text.contains("ghp_R8f"), "{text}");
        assert!(!text.contains("AKIA"), "{text}");
        assert!(text.contains("TOKEN = '[REDACTED:github-token]'"), "{text}");
        assert!(
            text.contains("def connect(key='[REDACTED:aws-access-key]'):"),
            "{text}"
        );
    }
}
