//! A PRD's requirements: its numbered and bulleted lines, each with its id
//! when it has one (`FR-1`, `[AC-03]`, `**NFR-2**:`), its line and the
//! heading it sits under. Lines in code blocks, and the lists of sections
//! that state what is not required (non-goals, out of scope, future work,
//! references, open questions), are not requirements. Pure text in, plain
//! data out.

use serde::Serialize;

use crate::specs::{self, Document};

/// More requirements than this are not traced: the rest are counted, so
/// a hostile PRD cannot make the checks slow.
pub const MAX_REQUIREMENTS: usize = 500;

/// One requirement of the PRD.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Requirement {
    /// `FR-1`, when the line carries one.
    pub id: Option<String>,
    /// The line's text without its bullet, id and emphasis.
    pub text: String,
    /// 1-based line in the PRD.
    pub line: usize,
    /// The heading path of the PRD section it is in.
    pub section: String,
}

impl Requirement {
    /// `FR-1`, else `PRD line 12`: how findings name it.
    pub fn label(&self) -> String {
        match &self.id {
            Some(id) => id.clone(),
            None => format!("PRD line {}", self.line),
        }
    }
}

/// The requirements of `prd`, in order; the second value counts those left
/// out past `MAX_REQUIREMENTS`.
pub fn extract(prd: &Document) -> (Vec<Requirement>, usize) {
    let mut out = Vec::new();
    let mut over = 0;
    let mut fence: Option<(u8, usize)> = None;
    for (index, line) in prd.text.lines().enumerate() {
        let number = index + 1;
        if let Some(marker) = fence_marker(line) {
            fence = match fence {
                None => Some(marker),
                Some((c, n)) if c == marker.0 && marker.1 >= n => None,
                open => open,
            };
            continue;
        }
        if fence.is_some() {
            continue;
        }
        let Some(item) = bullet_text(line) else {
            continue;
        };
        let section = section_at(prd, number);
        if excluded(&section) {
            continue;
        }
        let (id, text) = split_id(item);
        let text = plain(text);
        // "- Yes", "- See below": too short to state or trace anything
        // (Chinese and Japanese letters count two to a word).
        if id.is_none() && specs::script::words(&text) < 3.0 {
            continue;
        }
        if text.is_empty() {
            continue;
        }
        if out.len() == MAX_REQUIREMENTS {
            over += 1;
            continue;
        }
        out.push(Requirement {
            id,
            text,
            line: number,
            section,
        });
    }
    (out, over)
}

/// A code fence opener or closer: its character and length.
fn fence_marker(line: &str) -> Option<(u8, usize)> {
    let trimmed = line.trim_start();
    if line.len() - trimmed.len() > 3 {
        return None;
    }
    let c = *trimmed.as_bytes().first()?;
    if c != b'`' && c != b'~' {
        return None;
    }
    let n = trimmed.bytes().take_while(|b| *b == c).count();
    (n >= 3).then_some((c, n))
}

/// The text of a bulleted (`-`, `*`, `+`) or numbered (`1.`, `1)`) line,
/// without a task box (`[ ]`, `[x]`).
pub(super) fn bullet_text(line: &str) -> Option<&str> {
    let trimmed = line.trim_start();
    let rest = if let Some(rest) = trimmed
        .strip_prefix("- ")
        .or_else(|| trimmed.strip_prefix("* "))
        .or_else(|| trimmed.strip_prefix("+ "))
    {
        rest
    } else {
        let digits = trimmed.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 || digits > 3 {
            return None;
        }
        let after = &trimmed[digits..];
        after
            .strip_prefix(". ")
            .or_else(|| after.strip_prefix(") "))?
    };
    let rest = rest.trim();
    let rest = ["[ ] ", "[x] ", "[X] "]
        .iter()
        .find_map(|b| rest.strip_prefix(b))
        .unwrap_or(rest);
    Some(rest.trim())
}

/// The heading path of the section holding `line`.
fn section_at(doc: &Document, line: usize) -> String {
    doc.sections
        .iter()
        .find(|s| s.start_line <= line && line <= s.end_line)
        .map_or_else(|| "(preamble)".to_string(), specs::Section::heading_path)
}

/// Sections whose lists say what is not required.
fn excluded(section: &str) -> bool {
    let lower = section.to_lowercase();
    [
        "non-goal",
        "non goal",
        "nongoal",
        "out of scope",
        "future",
        "reference",
        "open question",
    ]
    .iter()
    .any(|w| lower.contains(w))
}

/// `FR-1`, `NFR-12`, `AC-03`, `REQ-1.2`: capitals (and digits after the
/// first), a hyphen, a number.
fn is_id(word: &str) -> bool {
    let Some((head, number)) = word.split_once('-') else {
        return false;
    };
    let head_ok = (1..=16).contains(&head.len())
        && head.bytes().next().is_some_and(|b| b.is_ascii_uppercase())
        && head
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit());
    let number_ok = !number.is_empty()
        && number.bytes().next().is_some_and(|b| b.is_ascii_digit())
        && number.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        && !number.ends_with('.');
    head_ok && number_ok
}

/// The item's id, when it starts with one that is wrapped (in `[]`, `**`,
/// `()` or backticks) or followed by `:`, `.`, `)` or a dash, and the
/// rest. A bare word followed by text (`UTF-8 text`) is not an id.
fn split_id(item: &str) -> (Option<String>, &str) {
    let start = item.trim_start_matches(['*', '_', '`', '[', '(']);
    let wrapped = start.len() < item.len();
    let end = start
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '.'))
        .unwrap_or(start.len());
    let word = start[..end].trim_end_matches('.');
    let after = start[word.len()..].trim_start();
    let separated = after.is_empty()
        || after.starts_with([':', '.', ')', ']', '-', '\u{2013}', '\u{2014}'])
        || start[word.len()..].starts_with(['*', '_', '`']);
    if !is_id(word) || !(wrapped || separated) {
        return (None, item);
    }
    let rest = start[word.len()..]
        .trim_start_matches(['*', '_', '`', ']', ')', '.'])
        .trim_start()
        .trim_start_matches([':', '-', '\u{2013}', '\u{2014}', '.', ')'])
        .trim_start();
    (Some(word.to_string()), rest)
}

/// Text without emphasis markers, on one line.
fn plain(text: &str) -> String {
    text.replace("**", "")
        .replace("__", "")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::specs::parse;

    fn reqs(text: &str) -> Vec<Requirement> {
        extract(&parse("prd.md", text)).0
    }

    #[test]
    fn bulleted_and_numbered_lines_with_their_ids() {
        let prd = "# Fines\n\n## Requirements\n\n1. **FR-1**: Charge a fine per day late\n\
                   2. [FR-2] The fine never exceeds the book's price\n\
                   - `NFR-1.2` - fines are computed in cents\n\
                   * Members can see their fines at the kiosk\n\
                   - [ ] Staff can waive a fine with a reason\n";
        let got = reqs(prd);
        let ids: Vec<Option<&str>> = got.iter().map(|r| r.id.as_deref()).collect();
        assert_eq!(
            ids,
            [Some("FR-1"), Some("FR-2"), Some("NFR-1.2"), None, None]
        );
        assert_eq!(got[0].text, "Charge a fine per day late");
        assert_eq!(got[1].text, "The fine never exceeds the book's price");
        assert_eq!(got[2].text, "fines are computed in cents");
        assert_eq!(got[4].text, "Staff can waive a fine with a reason");
        assert_eq!(got[0].line, 5);
        assert_eq!(got[0].section, "Fines > Requirements");
        assert_eq!(got[3].label(), "PRD line 8");
    }

    #[test]
    fn code_blocks_short_items_and_non_goals_are_not_requirements() {
        let prd = "# P\n\n```\n- FR-9: inside a fence\n```\n- Yes\n- FR-3: ok\n\
                   ## Non-goals\n- Paying fines online with a card\n\
                   ## Future work\n- A mobile app for members\n\
                   ## Goals\n- Members return books on time\n";
        let got = reqs(prd);
        let texts: Vec<&str> = got.iter().map(|r| r.text.as_str()).collect();
        assert_eq!(texts, ["ok", "Members return books on time"]);
    }

    #[test]
    fn words_that_look_like_ids_but_are_not() {
        assert!(is_id("FR-1") && is_id("AC-03") && is_id("REQ-1.2") && is_id("R2D2-7"));
        for word in ["Fr-1", "FR-", "FR-x", "-1", "FR1", "FR-1.", "a-1", "UTF-8x"] {
            assert!(!is_id(word), "{word}");
        }
        assert_eq!(split_id("UTF-8 text everywhere").0, None);
        assert_eq!(split_id("FR-4 - fines").0.as_deref(), Some("FR-4"));
        assert_eq!(split_id("(FR-5) fines").0.as_deref(), Some("FR-5"));
    }

    #[test]
    fn a_huge_prd_is_cut_and_counted() {
        let prd: String = (0..MAX_REQUIREMENTS + 7)
            .map(|i| format!("- FR-{i}: requirement number {i}\n"))
            .collect();
        let (got, over) = extract(&parse("prd.md", &prd));
        assert_eq!((got.len(), over), (MAX_REQUIREMENTS, 7));
    }
}
