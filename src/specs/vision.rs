//! The product vision as a review prompt may carry it when it does not
//! fit whole: its sentences, each with the line it starts on, those that
//! constrain changes (must, never, only, comes from, …) first and, among
//! them, those sharing the most terms with the task and the diff. Pure
//! text in, plain data out.

use std::collections::HashSet;

use super::Document;
use super::relevance::terms;

/// One sentence of the vision, its line breaks joined by spaces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sentence {
    /// 1-based line of the document where the sentence starts.
    pub line: usize,
    pub text: String,
    /// It says what must or must not be: a constraint on changes.
    pub constrains: bool,
}

/// Words that make a sentence a constraint on what a change may do.
const CONSTRAINT_WORDS: &[&str] = &[
    "must",
    "never",
    "only",
    "always",
    "should",
    "shall",
    "cannot",
    "can't",
    "not",
    "no",
    "none",
    "nothing",
    "every",
    "without",
    "unless",
    "keep",
    "keeps",
    "kept",
    "stay",
    "stays",
    "remain",
    "remains",
    "require",
    "requires",
    "required",
    "forbid",
    "forbids",
    "forbidden",
    "avoid",
    "avoids",
    "instead",
    "except",
    "limit",
    "limits",
];
/// Phrases that do the same.
const CONSTRAINT_PHRASES: &[&str] = &["comes from", "come from", "is read only", "are read only"];
/// A hostile vision of millions of sentences is cut here; the prompt's
/// share is far smaller anyway.
const MAX_SENTENCES: usize = 2_000;

/// The vision's sentences in document order: paragraphs and list items
/// split at sentence ends; headings, fences and blank lines are not
/// sentences.
pub fn sentences(doc: &Document) -> Vec<Sentence> {
    sentences_of(&doc.text, 1)
}

/// The sentences of `text`, a part of a document whose first line is
/// `first_line` (a section's text, for its rules), as `sentences` reads
/// them.
pub fn sentences_of(text: &str, first_line: usize) -> Vec<Sentence> {
    let mut out = Vec::new();
    // The block being read: its text and the line each byte starts on.
    let mut block = String::new();
    let mut lines: Vec<usize> = Vec::new();
    let mut in_fence = false;
    for (n, raw) in text.lines().enumerate() {
        let line = raw.trim();
        let number = n + first_line;
        if line.starts_with("```") || line.starts_with("~~~") {
            in_fence = !in_fence;
            flush(&mut block, &mut lines, &mut out);
            continue;
        }
        let heading = line.starts_with('#')
            || (!line.is_empty() && line.chars().all(|c| c == '=' || c == '-'));
        if in_fence || line.is_empty() || heading {
            flush(&mut block, &mut lines, &mut out);
            continue;
        }
        let item = strip_list_marker(line);
        if item.len() != line.len() {
            // A list item starts a block of its own.
            flush(&mut block, &mut lines, &mut out);
        }
        let item = item.trim_start_matches('>').trim();
        if !block.is_empty() {
            block.push(' ');
            lines.push(number);
        }
        block.push_str(item);
        lines.extend(std::iter::repeat_n(number, item.len()));
        if out.len() >= MAX_SENTENCES {
            break;
        }
    }
    flush(&mut block, &mut lines, &mut out);
    out.truncate(MAX_SENTENCES);
    out
}

/// The sentences in the order a prompt should take them: those that
/// constrain changes first, the ones sharing the most terms with
/// `task_text` and `identifiers` first among them, then document order;
/// the others after, in document order.
pub fn rank(doc: &Document, task_text: &str, identifiers: &[String]) -> Vec<Sentence> {
    let wanted: HashSet<String> = terms(task_text)
        .chain(identifiers.iter().flat_map(|i| terms(i)))
        .collect();
    let mut scored: Vec<(usize, Sentence)> = sentences(doc)
        .into_iter()
        .map(|s| {
            let shared: HashSet<String> = terms(&s.text).filter(|t| wanted.contains(t)).collect();
            (shared.len(), s)
        })
        .collect();
    // Stable: document order breaks ties.
    scored.sort_by(|(a_shared, a), (b_shared, b)| {
        b.constrains.cmp(&a.constrains).then(if a.constrains {
            b_shared.cmp(a_shared)
        } else {
            std::cmp::Ordering::Equal
        })
    });
    scored.into_iter().map(|(_, s)| s).collect()
}

fn strip_list_marker(line: &str) -> &str {
    for marker in ["- ", "* ", "+ "] {
        if let Some(rest) = line.strip_prefix(marker) {
            return rest;
        }
    }
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 {
        if let Some(rest) = line[digits..]
            .strip_prefix(". ")
            .or_else(|| line[digits..].strip_prefix(") "))
        {
            return rest;
        }
    }
    line
}

/// Splits the block into sentences: after `.`, `!` or `?` (and any closing
/// quote or bracket) followed by a space and a character that does not
/// continue the sentence in lower case ("e.g. this" stays whole).
fn flush(block: &mut String, lines: &mut Vec<usize>, out: &mut Vec<Sentence>) {
    let text = std::mem::take(block);
    let starts = std::mem::take(lines);
    let bytes = text.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        let end_mark = matches!(bytes[i], b'.' | b'!' | b'?');
        if end_mark {
            let mut j = i + 1;
            while j < bytes.len() && matches!(bytes[j], b'"' | b'\'' | b')' | b']' | b'*' | b'_') {
                j += 1;
            }
            let next = text[j..].chars().nth(1);
            let breaks =
                j < bytes.len() && bytes[j] == b' ' && next.is_some_and(|c| !c.is_lowercase());
            if breaks {
                push(&text[start..j], starts.get(start).copied(), out);
                start = j + 1;
                i = j + 1;
                continue;
            }
        }
        i += 1;
    }
    if start < text.len() {
        push(&text[start..], starts.get(start).copied(), out);
    }
}

fn push(text: &str, line: Option<usize>, out: &mut Vec<Sentence>) {
    let text = text.trim();
    if text.is_empty() || out.len() >= MAX_SENTENCES {
        return;
    }
    let lower = text.to_lowercase();
    let constrains = lower
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .any(|w| CONSTRAINT_WORDS.contains(&w))
        || CONSTRAINT_PHRASES.iter().any(|p| lower.contains(p));
    out.push(Sentence {
        line: line.unwrap_or(1),
        text: text.to_string(),
        constrains,
    });
}

#[cfg(test)]
mod tests {
    use super::super::markdown::parse;
    use super::*;

    const VISION: &str = "# ripgrep\n\nripgrep is a line-oriented search tool that is fast by default.\n\nConfiguration comes from flags: every behaviour is chosen with a\ncommand-line flag. No other environment variable changes what\nripgrep searches, e.g. colours. It is written in Rust.\n\n- Defaults never change under a user.\n- Output is for people first.\n\n```\nrg -e must\n```\n";

    #[test]
    fn sentences_keep_their_first_line_and_join_wrapped_lines() {
        let doc = parse("specs/product/overview.md", VISION);
        let sentences = sentences(&doc);
        let found: Vec<(usize, &str, bool)> = sentences
            .iter()
            .map(|s| (s.line, s.text.as_str(), s.constrains))
            .collect();
        assert_eq!(
            found,
            vec![
                (
                    3,
                    "ripgrep is a line-oriented search tool that is fast by default.",
                    false
                ),
                (
                    5,
                    "Configuration comes from flags: every behaviour is chosen with a command-line flag.",
                    true
                ),
                (
                    6,
                    "No other environment variable changes what ripgrep searches, e.g. colours.",
                    true
                ),
                (7, "It is written in Rust.", false),
                (9, "Defaults never change under a user.", true),
                (10, "Output is for people first.", false),
            ]
        );
    }

    #[test]
    fn constraints_come_first_the_most_relevant_first() {
        let doc = parse("specs/product/overview.md", VISION);
        let ranked = rank(
            &doc,
            "Skip small files",
            &["RIPGREP_MIN_FILESIZE".to_string(), "env".to_string()],
        );
        let lines: Vec<usize> = ranked.iter().map(|s| s.line).collect();
        // 6 names ripgrep (as the identifier does); 5 and 9 share nothing.
        assert_eq!(lines, vec![6, 5, 9, 3, 7, 10]);
    }

    #[test]
    fn a_huge_vision_is_cut() {
        let text = "Every change must be small. ".repeat(10_000);
        let doc = parse("v.md", &text);
        assert_eq!(sentences(&doc).len(), MAX_SENTENCES);
    }
}
