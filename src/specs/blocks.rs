//! The block a line of a spec belongs to, as far as quoting cares: a quote
//! short of the usual length still identifies a requirement when it is a
//! whole line, list item or paragraph of the spec (`Priority: P0`, `owner:
//! payments-team`, a one-line code sample). Headings, fence lines and blank
//! lines are no such unit. Line-based, like the quote lookup: it must not
//! interpret content.

/// What a line of a section is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Blank,
    /// An ATX heading, or the title line of a Setext one.
    Heading,
    /// A code fence's opening or closing line.
    Fence,
    /// A line inside a fenced code block: a unit by itself.
    Code,
    /// The first line of a list item.
    Item,
    /// Any other line: prose, a table row, front matter.
    Text,
}

/// The kind of each line of `text` (split at '\n').
pub fn kinds(text: &str) -> Vec<Kind> {
    let lines: Vec<&str> = text.split('\n').collect();
    let mut out = Vec::with_capacity(lines.len());
    let mut fence: Option<(char, usize)> = None;
    // YAML or TOML front matter opens a document (and so only a preamble):
    // each of its lines is a unit, the closing one included as a fence.
    let mut front = match lines.first().map(|l| l.trim_end()) {
        Some("---") => Some("---"),
        Some("+++") => Some("+++"),
        _ => None,
    }
    .filter(|closer| {
        lines[1..]
            .iter()
            .any(|l| l.trim_end() == *closer || (*closer == "---" && l.trim_end() == "..."))
    });
    for (i, raw) in lines.iter().enumerate() {
        if let Some(closer) = front {
            let line = raw.trim_end();
            if i == 0 || line == closer || (closer == "---" && line == "...") {
                out.push(Kind::Fence);
                if i > 0 {
                    front = None;
                }
            } else {
                out.push(Kind::Code);
            }
            continue;
        }
        let line = unquoted(raw);
        let trimmed = line.trim();
        if let Some((marker, length)) = fence {
            let run = trimmed.chars().take_while(|&c| c == marker).count();
            if run >= length && trimmed[run..].trim().is_empty() {
                fence = None;
                out.push(Kind::Fence);
            } else {
                out.push(Kind::Code);
            }
            continue;
        }
        let opener = fence_opener(trimmed);
        if let Some(open) = opener {
            fence = Some(open);
            out.push(Kind::Fence);
            continue;
        }
        let kind = if trimmed.is_empty() || underline(trimmed) {
            Kind::Blank
        } else if atx(trimmed)
            || lines
                .get(i + 1)
                .is_some_and(|next| setext(unquoted(next).trim()))
        {
            Kind::Heading
        } else if list_item(trimmed) {
            Kind::Item
        } else {
            Kind::Text
        };
        out.push(kind);
    }
    out
}

/// Byte ranges of the units of a section, given each line's kind and the
/// range its content took in the normalised text (None for a line that
/// left nothing): every line of prose, an item or code; every list item
/// with its continuation lines; every paragraph.
pub fn units(kinds: &[Kind], spans: &[Option<(usize, usize)>]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    // The block being read: its first and last content.
    let mut block: Option<(usize, usize)> = None;
    for (kind, span) in kinds.iter().zip(spans) {
        match (kind, span) {
            (Kind::Code, Some(span)) => {
                out.extend(block.take());
                out.push(*span);
            }
            (Kind::Item, Some(span)) => {
                out.extend(block.take());
                out.push(*span);
                block = Some(*span);
            }
            (Kind::Text, Some(span)) => {
                out.push(*span);
                block = Some(match block {
                    Some((start, _)) => (start, span.1),
                    None => *span,
                });
            }
            (Kind::Text | Kind::Item | Kind::Code, None) => {}
            (Kind::Blank | Kind::Heading | Kind::Fence, _) => out.extend(block.take()),
        }
    }
    out.extend(block);
    out.sort_unstable();
    out.dedup();
    out
}

/// The line without its blockquote markers.
fn unquoted(line: &str) -> &str {
    let mut rest = line.trim_start();
    while let Some(after) = rest.strip_prefix('>') {
        rest = after.trim_start();
    }
    rest
}

fn fence_opener(trimmed: &str) -> Option<(char, usize)> {
    let marker = trimmed.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let run = trimmed.chars().take_while(|&c| c == marker).count();
    (run >= 3 && !(marker == '`' && trimmed[run..].contains('`'))).then_some((marker, run))
}

fn atx(trimmed: &str) -> bool {
    let hashes = trimmed.len() - trimmed.trim_start_matches('#').len();
    (1..=6).contains(&hashes)
        && trimmed[hashes..]
            .chars()
            .next()
            .is_none_or(char::is_whitespace)
}

fn setext(trimmed: &str) -> bool {
    !trimmed.is_empty()
        && (trimmed.bytes().all(|b| b == b'=') || trimmed.bytes().all(|b| b == b'-'))
}

/// A Setext underline or a thematic break: nothing a quote can hold.
fn underline(trimmed: &str) -> bool {
    ['=', '-', '*', '_']
        .iter()
        .any(|&m| trimmed.chars().all(|c| c == m || c == ' ' || c == '\t'))
}

fn list_item(trimmed: &str) -> bool {
    let after = if let Some(after) = trimmed.strip_prefix(['-', '*', '+']) {
        after
    } else {
        let digits = trimmed.len()
            - trimmed
                .trim_start_matches(|c: char| c.is_ascii_digit())
                .len();
        if !(1..=9).contains(&digits) {
            return false;
        }
        match trimmed[digits..].strip_prefix(['.', ')']) {
            Some(after) => after,
            None => return false,
        }
    };
    after.is_empty() || after.starts_with([' ', '\t'])
}

#[cfg(test)]
mod tests {
    use super::*;
    use Kind::*;

    #[test]
    fn lines_are_told_apart() {
        let text = "## Owner\n**Priority:** P0\nowner: payments-team\n\n- Refunds in 5 days\n  for cards.\n1. Second\n```sh\n# not a heading\n```\nTitle\n-----\n> - quoted item\n";
        assert_eq!(
            kinds(text),
            vec![
                Heading, Text, Text, Blank, Item, Text, Item, Fence, Code, Fence, Heading, Blank,
                Item, Blank
            ]
        );
    }

    #[test]
    fn units_are_lines_items_and_paragraphs() {
        let kinds = [Text, Text, Blank, Item, Text, Item, Code, Heading, Text];
        let spans = [
            Some((0, 10)),
            Some((11, 20)),
            None,
            Some((21, 30)),
            Some((31, 40)),
            Some((41, 50)),
            Some((51, 60)),
            Some((61, 70)),
            Some((71, 80)),
        ];
        assert_eq!(
            units(&kinds, &spans),
            vec![
                (0, 10),
                (0, 20),
                (11, 20),
                (21, 30),
                (21, 40),
                (31, 40),
                (41, 50),
                (51, 60),
                (71, 80)
            ]
        );
    }
}
