//! Quote lookup for the verdict checks: is a `spec_quote` the model returned
//! really in the spec sections it was sent, and where. Tolerant of how text
//! is rendered and re-wrapped (whitespace, emphasis and code markers, list and
//! blockquote markers, link targets, curly and low quotes, the case of the
//! first letter, trailing punctuation, surrounding quote marks, an ellipsis
//! at either end) and of nothing else: a changed, added or missing word is
//! not found. A quote is contiguous text: an ellipsis inside it is not a
//! wildcard (stitching "returns ... an error" from two sentences can invert
//! what the spec says), so it must be in the spec as written.
//!
//! A quote must be long enough to identify a requirement: three words, where
//! letters of a script written without spaces (Chinese, Japanese, Thai)
//! count two to a word; or, at any length, a whole line, list item or
//! paragraph of the spec. Text that is in the spec but shorter is refused as
//! too short, never as absent. It must not decide what a missing quote
//! means.

use std::collections::HashMap;

use super::{Section, blocks, script};

/// Where a quote was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuoteHit {
    pub doc_path: String,
    /// The heading path of the section holding the quote.
    pub section: String,
    /// 1-based line in the document where the quote starts.
    pub line: usize,
}

/// Why a quote was not found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Miss {
    /// The text is not in the sections (or there is no text).
    NotFound,
    /// The text is in the sections, but too short to identify a
    /// requirement, and no whole line, item or paragraph.
    TooShort,
}

/// The sections sent to the model, normalised once so that each lookup is a
/// few hash probes and comparisons rather than a scan of the whole spec.
#[derive(Debug)]
pub struct QuoteIndex {
    /// All sections' normalised text, each followed by a '\n' (which the
    /// normalised text never contains otherwise, so no match crosses it).
    text: String,
    /// The document line of each byte of `text`.
    lines: Vec<u32>,
    /// Per section, in the order given.
    sections: Vec<Span>,
    /// Start offsets in `text` of each space-delimited token, ascending.
    tokens: HashMap<String, Vec<usize>>,
    /// The whole lines, items and paragraphs: start → ends, both trimmed
    /// as a quote is (`trim_piece`), so a quote of one matches it exactly.
    units: HashMap<usize, Vec<usize>>,
}

/// Where one section's normalised text lies in the index.
#[derive(Debug)]
struct Span {
    /// End of the section's text in `QuoteIndex::text` (its separator).
    end: usize,
    doc_path: String,
    heading_path: String,
}

/// Fewer words than this (after normalisation) are too easy to fabricate,
/// unless they are a whole line, item or paragraph.
const MIN_WORDS: f64 = 3.0;

impl QuoteIndex {
    pub fn new(sections: &[(String, Section)]) -> Self {
        let mut text = String::new();
        let mut lines = Vec::new();
        let mut ranges = Vec::with_capacity(sections.len());
        let mut units: HashMap<usize, Vec<usize>> = HashMap::new();
        for (doc_path, section) in sections {
            let spans = normalise_into(&section.text, section.start_line, &mut text, &mut lines);
            for (start, end) in blocks::units(&blocks::kinds(&section.text), &spans) {
                let (start, end) = trim_bounds(&text, start, end);
                if start < end {
                    units.entry(start).or_default().push(end);
                }
            }
            ranges.push(Span {
                end: text.len(),
                doc_path: doc_path.clone(),
                heading_path: section.heading_path(),
            });
            text.push('\n');
            lines.push(lines.last().copied().unwrap_or(0));
        }
        let mut tokens: HashMap<String, Vec<usize>> = HashMap::new();
        let mut offset = 0;
        for token in text.split([' ', '\n']) {
            if !token.is_empty() {
                tokens.entry(token.to_string()).or_default().push(offset);
            }
            offset += token.len() + 1;
        }
        QuoteIndex {
            text,
            lines,
            sections: ranges,
            tokens,
            units,
        }
    }

    /// The first place, in the order the sections were given, where `quote`
    /// occurs; None if it does not, or if it is too short to mean anything.
    pub fn find(&self, quote: &str) -> Option<QuoteHit> {
        self.look_up(quote).ok()
    }

    /// The first place, in the order the sections were given, where `quote`
    /// occurs and identifies a requirement (long enough, or a whole line,
    /// item or paragraph there); else why not.
    pub fn look_up(&self, quote: &str) -> Result<QuoteHit, Miss> {
        let piece = piece(quote).ok_or(Miss::NotFound)?;
        let long = script::words(&piece) >= MIN_WORDS;
        let mut found = false;
        let mut from = 0;
        while let Some(start) = self.next_match(&piece, from, self.text.len()) {
            if long || self.is_unit(start, start + piece.len()) {
                return Ok(self.hit(start));
            }
            found = true;
            from = start + self.text[start..].chars().next().map_or(1, char::len_utf8);
        }
        Err(if found {
            Miss::TooShort
        } else {
            Miss::NotFound
        })
    }

    fn hit(&self, start: usize) -> QuoteHit {
        // In bounds: a match starts on a character of some section's text,
        // never on or after the last separator, and no match crosses one.
        let span = &self.sections[self.sections.partition_point(|span| span.end < start)];
        QuoteHit {
            doc_path: span.doc_path.clone(),
            section: span.heading_path.clone(),
            line: self.lines[start] as usize,
        }
    }

    fn is_unit(&self, start: usize, end: usize) -> bool {
        self.units
            .get(&start)
            .is_some_and(|ends| ends.contains(&end))
    }

    /// The first occurrence of `piece` starting in `from..to` and ending by
    /// `to`, as whole words.
    fn next_match(&self, piece: &str, from: usize, to: usize) -> Option<usize> {
        let words: Vec<&str> = piece.split(' ').collect();
        if words.len() < 3 {
            return self.scan(piece, from, to);
        }
        // A word in the middle of the piece is a whole token of the text, so
        // the index gives every candidate position; the rarest is cheapest.
        let mut offset = 0;
        let mut best: Option<(usize, &Vec<usize>)> = None;
        for word in &words[..words.len() - 1] {
            if offset > 0 {
                let positions = self.tokens.get(*word)?;
                if best.is_none_or(|(_, b)| positions.len() < b.len()) {
                    best = Some((offset, positions));
                }
            }
            offset += word.len() + 1;
        }
        let (offset, positions) = best?;
        let first = positions.partition_point(|&p| p < from + offset);
        positions[first..]
            .iter()
            .map(|&p| p - offset)
            .take_while(|&start| start + piece.len() <= to)
            .find(|&start| self.matches_at(piece, start))
    }

    fn scan(&self, piece: &str, from: usize, to: usize) -> Option<usize> {
        let head_len = piece.chars().next()?.len_utf8();
        let tail = &piece[head_len..];
        let window = self.text.get(from..to)?;
        let fits = |start: usize| start + piece.len() <= to && self.matches_at(piece, start);
        let Some(tail_first) = tail.chars().next() else {
            return window
                .char_indices()
                .map(|(i, _)| from + i)
                .find(|&start| fits(start));
        };
        // Search for what follows the first letter (whose case may differ),
        // then check the letter; step one character at a time so that
        // overlapping occurrences are all tried.
        let mut at = 0;
        while let Some(found) = window[at..].find(tail) {
            let tail_start = from + at + found;
            if let Some(start) = tail_start.checked_sub(head_len) {
                if start >= from && fits(start) {
                    return Some(start);
                }
            }
            at += found + tail_first.len_utf8();
        }
        None
    }

    /// `piece` is at `start`: same text, except the case of its first letter,
    /// and not part of a longer word at either end.
    fn matches_at(&self, piece: &str, start: usize) -> bool {
        let Some(candidate) = self.text.get(start..start + piece.len()) else {
            return false;
        };
        let mut want = piece.chars();
        let mut have = candidate.chars();
        let (Some(w), Some(h)) = (want.next(), have.next()) else {
            return false;
        };
        if w.len_utf8() != h.len_utf8() || !w.to_lowercase().eq(h.to_lowercase()) {
            return false;
        }
        if want.as_str() != have.as_str() {
            return false;
        }
        let before = self.text[..start].chars().next_back();
        let after = self.text[start + piece.len()..].chars().next();
        // Words of a script without spaces have no boundary to respect.
        let joins = |edge: Option<char>, inner: char| {
            let word = |c: char| c.is_alphanumeric() && !script::spaceless(c);
            word(inner) && edge.is_some_and(word)
        };
        let last = piece.chars().next_back().unwrap_or(w);
        !joins(before, w) && !joins(after, last)
    }
}

/// The text a quote must match: its normalised form, trimmed of what a
/// model adds around it (quote marks, final punctuation, an ellipsis at
/// either end). None when nothing is left that holds a letter or digit.
fn piece(quote: &str) -> Option<String> {
    let mut text = String::new();
    let mut lines = Vec::new();
    normalise_into(quote, 1, &mut text, &mut lines);
    let mut piece = text.as_str();
    loop {
        let before = piece.len();
        piece = trim_piece(piece);
        for cut in ["(...)", "..."] {
            piece = piece.strip_prefix(cut).unwrap_or(piece);
            piece = piece.strip_suffix(cut).unwrap_or(piece);
        }
        if piece.len() == before {
            break;
        }
    }
    piece
        .chars()
        .any(char::is_alphanumeric)
        .then(|| piece.to_string())
}

/// What a quote is trimmed of at its start and its end (besides spaces and
/// quote marks, trimmed at both): a model's leading comma, a sentence's
/// final mark, in Latin and in CJK punctuation.
const LEAD: &[char] = &['.', ',', ';', ':', ')', '。', '、', '，', '；', '：'];
const TRAIL: &[char] = &[
    '.', ',', ';', ':', '!', '?', '(', '。', '、', '，', '；', '：', '！', '？',
];
/// Quote marks a model puts around a quote (after normalisation, which
/// makes curly and low quotes straight).
const MARKS: &[char] = &[' ', '"', '「', '」', '『', '』'];

/// `start..end` of `text` trimmed as `trim_piece` trims a quote.
fn trim_bounds(text: &str, start: usize, end: usize) -> (usize, usize) {
    let trimmed = trim_piece(&text[start..end]);
    if trimmed.is_empty() {
        return (start, start);
    }
    // `trimmed` is a slice of `text[start..end]`.
    let offset = trimmed.as_ptr() as usize - text[start..end].as_ptr() as usize;
    (start + offset, start + offset + trimmed.len())
}

/// Strips what a model adds around a quote or leaves where it cut the
/// sentence: spaces, surrounding quote marks, trailing sentence
/// punctuation, leading commas.
fn trim_piece(piece: &str) -> &str {
    let mut piece = piece;
    loop {
        let before = piece.len();
        piece = piece
            .trim_matches(MARKS)
            .trim_end_matches(TRAIL)
            .trim_start_matches(LEAD);
        if piece.len() >= 2 && piece.starts_with('\'') && piece.ends_with('\'') {
            piece = &piece[1..piece.len() - 1];
        }
        if piece.len() == before {
            return piece;
        }
    }
}

/// Appends the rendered, whitespace-collapsed form of `text` to `out`, and
/// for each byte appended, its line (`first_line` is the line of `text`'s
/// first line). Drops what rendering drops or a model leaves out: markers at
/// line starts (blockquote, list, task box, ATX heading), Setext underlines
/// and thematic breaks, emphasis and code markers, link brackets and targets,
/// backslash escapes. Curly and low quotes and guillemets become straight,
/// "…" becomes "...". Returns, per line of `text`, the range its content
/// took in `out` (None when it left nothing).
fn normalise_into(
    text: &str,
    first_line: usize,
    out: &mut String,
    lines: &mut Vec<u32>,
) -> Vec<Option<(usize, usize)>> {
    let mut spans = Vec::new();
    let push = |out: &mut String, lines: &mut Vec<u32>, c: char, line: usize, space: &mut bool| {
        // Between two characters of a script without spaces, a line break
        // (or a space) separates nothing: Chinese and Japanese are wrapped
        // anywhere, and rendered without one.
        let joined = script::wide(c) && out.chars().next_back().is_some_and(script::wide);
        if *space && !joined && !out.is_empty() && !out.ends_with('\n') {
            out.push(' ');
            lines.push(line as u32);
        }
        *space = false;
        out.push(c);
        lines.extend(std::iter::repeat_n(line as u32, c.len_utf8()));
    };
    for (i, raw) in text.split('\n').enumerate() {
        let line = first_line + i;
        // A line break is a space, unless nothing precedes it.
        let mut space = true;
        let before = out.len();
        let content = strip_line_markers(raw);
        let mut chars = content.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '*' | '_' | '`' | '[' => {}
                '\\' if chars.peek().is_some_and(char::is_ascii_punctuation) => {
                    if let Some(escaped) = chars.next() {
                        push(out, lines, escaped, line, &mut space);
                    }
                }
                ']' => {
                    // A link target is not part of the rendered text.
                    if chars.peek() == Some(&'(') {
                        for skipped in chars.by_ref() {
                            if skipped == ')' {
                                break;
                            }
                        }
                    }
                }
                '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' | '\u{2039}'
                | '\u{203A}' => push(out, lines, '\'', line, &mut space),
                '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' | '\u{00AB}'
                | '\u{00BB}' => push(out, lines, '"', line, &mut space),
                '\u{2026}' => {
                    for dot in "...".chars() {
                        push(out, lines, dot, line, &mut space);
                    }
                }
                c if c.is_whitespace() => space = true,
                c => push(out, lines, c, line, &mut space),
            }
        }
        // A line's text never starts with a space: one there separates it
        // from the line before.
        spans.push((out.len() > before).then(|| {
            let start = before + usize::from(out.as_bytes()[before] == b' ');
            (start, out.len())
        }));
    }
    spans
}

/// The line without its block markers: indentation, blockquote `>`s, a list
/// bullet or number, a task box, ATX `#`s. Underlines and thematic breaks
/// (a line of only `=`, `-`, `*` or `_`) are empty.
fn strip_line_markers(line: &str) -> &str {
    let trimmed = line.trim();
    if !trimmed.is_empty()
        && ['=', '-', '*', '_']
            .iter()
            .any(|&m| trimmed.chars().all(|c| c == m || c == ' ' || c == '\t'))
    {
        return "";
    }
    let mut rest = line.trim_start();
    while let Some(after) = rest.strip_prefix('>') {
        rest = after.trim_start();
    }
    if let Some(after) = strip_list_marker(rest) {
        rest = after;
        for task in ["[ ] ", "[x] ", "[X] "] {
            if let Some(after) = rest.strip_prefix(task) {
                rest = after.trim_start();
            }
        }
    }
    let hashes = rest.len() - rest.trim_start_matches('#').len();
    if (1..=6).contains(&hashes) {
        let after = &rest[hashes..];
        if after.is_empty() || after.starts_with([' ', '\t']) {
            rest = after.trim_start();
        }
    }
    rest
}

fn strip_list_marker(line: &str) -> Option<&str> {
    let after = if let Some(after) = line.strip_prefix(['-', '*', '+']) {
        after
    } else {
        let digits = line.len() - line.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if !(1..=9).contains(&digits) {
            return None;
        }
        line[digits..].strip_prefix(['.', ')'])?
    };
    (after.is_empty() || after.starts_with([' ', '\t'])).then(|| after.trim_start())
}

#[cfg(test)]
mod tests {
    use super::super::markdown::parse;
    use super::*;

    const SPEC: &str = "# Library Catalog\n\
\n\
Users can search for books and see real-time availability status.\n\
Results are **sorted by relevance**, then by\n\
`publication_date` (newest first).\n\
\n\
## Borrowing\n\
\n\
- Members can borrow up to *five* books at a time.\n\
- A loan lasts three weeks and can be\n  renewed once.\n\
1. Overdue loans block new loans.\n\
> The librarian's decision is final.\n\
See the [loan policy](policy.md#loans) for details.\n\
It doesn\u{2019}t apply to \u{201C}reference\u{201D} books.\n";

    fn index() -> QuoteIndex {
        let doc = parse("specs/product/library.md", SPEC);
        let sections: Vec<(String, Section)> = doc
            .sections
            .iter()
            .map(|s| (doc.path.clone(), s.clone()))
            .collect();
        QuoteIndex::new(&sections)
    }

    fn line(quote: &str) -> Option<usize> {
        index().find(quote).map(|hit| hit.line)
    }

    #[test]
    fn exact_quote_is_found_with_section_and_line() {
        let hit = index().find("Users can search for books and see real-time availability status.");
        assert_eq!(
            hit,
            Some(QuoteHit {
                doc_path: "specs/product/library.md".to_string(),
                section: "Library Catalog".to_string(),
                line: 3,
            })
        );
    }

    #[test]
    fn quotes_across_wrapped_lines_start_on_the_right_line() {
        assert_eq!(
            line("sorted by relevance, then by publication_date (newest first)"),
            Some(4)
        );
        assert_eq!(
            line("A loan lasts three weeks and can be renewed once."),
            Some(10)
        );
        assert_eq!(line("then by publication_date (newest first)."), Some(4));
        assert_eq!(
            line("renewed once. Overdue loans block new loans."),
            Some(11)
        );
    }

    #[test]
    fn emphasis_code_markers_bullets_and_blockquotes_are_ignored() {
        assert_eq!(line("Results are sorted by relevance"), Some(4));
        assert_eq!(
            line("Results are **sorted by relevance**, then by `publication_date`"),
            Some(4)
        );
        assert_eq!(
            line("Members can borrow up to five books at a time."),
            Some(9)
        );
        assert_eq!(line("- Members can borrow up to *five* books"), Some(9));
        assert_eq!(line("Overdue loans block new loans"), Some(12));
        assert_eq!(line("The librarian's decision is final."), Some(13));
        assert_eq!(line("See the loan policy for details."), Some(14));
    }

    #[test]
    fn curly_and_straight_quotes_are_the_same() {
        assert_eq!(line("It doesn't apply to \"reference\" books."), Some(15));
        assert_eq!(line("The librarian\u{2019}s decision is final"), Some(13));
    }

    #[test]
    fn case_of_the_first_letter_and_surrounding_marks_are_tolerated() {
        assert_eq!(line("users can search for books"), Some(3));
        assert_eq!(line("\"Users can search for books.\""), Some(3));
        assert_eq!(line("\u{201C}Users can search for books\u{201D}"), Some(3));
        assert_eq!(line("'users can search for books'"), Some(3));
        // Dropping the final period, or ending one where the spec goes on.
        assert_eq!(line("see real-time availability status"), Some(3));
        assert_eq!(line("Users can search for books."), Some(3));
    }

    #[test]
    fn an_ellipsis_at_either_end_is_a_cut_sentence() {
        assert_eq!(line("... can borrow up to five books"), Some(9));
        assert_eq!(line("Members can borrow up to five books [...]"), Some(9));
        assert_eq!(line("(...) can borrow up to five books..."), Some(9));
        assert_eq!(
            line("\u{2026}see real-time availability status\u{2026}"),
            Some(3)
        );
    }

    #[test]
    fn an_ellipsis_inside_a_quote_is_not_a_wildcard() {
        // Each piece is in the spec, in order, in one section: stitched,
        // they still say something the spec does not.
        assert_eq!(
            line("Users can search for books ... availability status"),
            None
        );
        assert_eq!(line("Users can search\u{2026}sorted by relevance"), None);
        assert_eq!(line("Members can borrow [...] renewed once"), None);
        // An ellipsis the spec itself holds is text like any other.
        let doc = parse(
            "s.md",
            "# S\nA search with no match returns... nothing at all.\n",
        );
        let sections = vec![("s.md".to_string(), doc.sections[0].clone())];
        let index = QuoteIndex::new(&sections);
        assert!(index.find("no match returns... nothing at all").is_some());
        assert!(index.find("no match returns\u{2026} nothing").is_some());
    }

    #[test]
    fn a_changed_added_or_missing_word_is_not_found() {
        assert_eq!(
            line("Users can search for books and see live availability status"),
            None
        );
        assert_eq!(
            line("Users can search for all books and see real-time availability status"),
            None
        );
        assert_eq!(
            line("Users can search for and see real-time availability status"),
            None
        );
        assert_eq!(line("Users can search for book and see"), None);
        assert_eq!(line("sers can search for books"), None);
        assert_eq!(
            line("Users can search for books and see real-time availability statuses"),
            None
        );
        assert_eq!(line("USERS CAN SEARCH FOR BOOKS"), None);
        assert_eq!(line("Members can borrow up to 5 books at a time."), None);
    }

    #[test]
    fn empty_and_short_quotes_are_not_found() {
        assert_eq!(line(""), None);
        assert_eq!(line("   "), None);
        assert_eq!(line("\"...\""), None);
        assert_eq!(line("Users can"), None);
        assert_eq!(line("**Users** `can`"), None);
        assert_eq!(line("Users ... can ... search"), None);
    }

    #[test]
    fn first_section_in_the_given_order_wins() {
        let a = parse("a.md", "# A\nintro\n\nthe same words here\n");
        let b = parse("b.md", "# B\nthe same words here\n");
        let sections = vec![
            ("b.md".to_string(), b.sections[0].clone()),
            ("a.md".to_string(), a.sections[0].clone()),
        ];
        let hit = QuoteIndex::new(&sections).find("the same words here");
        assert_eq!(
            hit.map(|h| (h.doc_path, h.line)),
            Some(("b.md".to_string(), 2))
        );
        let only_a = QuoteIndex::new(&sections).find("intro the same words");
        assert_eq!(
            only_a.map(|h| (h.doc_path, h.section, h.line)),
            Some(("a.md".to_string(), "A".to_string(), 2))
        );
    }

    #[test]
    fn a_quote_never_spans_two_sections() {
        // "Catalog" ends the first section's text, "Borrowing" starts the next.
        assert_eq!(line("(newest first). Borrowing Members can"), None);
    }

    fn index_of(text: &str) -> QuoteIndex {
        let doc = parse("s.md", text);
        let sections: Vec<(String, Section)> = doc
            .sections
            .iter()
            .map(|s| ("s.md".to_string(), s.clone()))
            .collect();
        QuoteIndex::new(&sections)
    }

    const JAPANESE: &str = "# 決済\n\n## 返金\n\n返金はカード決済の場合、5営業日以内に処理する。\n部分返金は管理者のみが実行できる。\n\n- 優先度：P0\n- 担当：決済チーム\n";

    #[test]
    fn japanese_quotes_count_characters_not_words() {
        let index = index_of(JAPANESE);
        let line = |q: &str| index.look_up(q).map(|h| h.line);
        // A sentence, a clause inside it, with or without its final mark
        // or 「」 around it.
        assert_eq!(
            line("返金はカード決済の場合、5営業日以内に処理する。"),
            Ok(5)
        );
        assert_eq!(line("5営業日以内に処理する"), Ok(5));
        assert_eq!(line("「部分返金は管理者のみが実行できる」"), Ok(6));
        // Across the wrapped lines of one paragraph.
        assert_eq!(line("処理する。部分返金は管理者のみ"), Ok(5));
        // Too short to identify anything, but in the spec.
        assert_eq!(line("返金は"), Err(Miss::TooShort));
        assert_eq!(line("管理者"), Err(Miss::TooShort));
        // Whole list items count at any length.
        assert_eq!(line("優先度：P0"), Ok(8));
        assert_eq!(line("担当：決済チーム"), Ok(9));
        // Not in the spec.
        assert_eq!(
            line("返金はカード決済の場合、3営業日以内に処理する。"),
            Err(Miss::NotFound)
        );
    }

    #[test]
    fn german_quotes_with_low_quotes_and_umlauts() {
        let index = index_of(
            "# Zahlungen\n\n## Rückerstattung\n\nRückerstattungen werden innerhalb von „fünf Werktagen“ bearbeitet.\n\n**Priorität:** P0\nZuständig: Zahlungsteam\n",
        );
        let line = |q: &str| index.look_up(q).map(|h| h.line);
        assert_eq!(
            line("Rückerstattungen werden innerhalb von \"fünf Werktagen\" bearbeitet."),
            Ok(5)
        );
        assert_eq!(line("„Rückerstattungen werden innerhalb“"), Ok(5));
        assert_eq!(line("rückerstattungen werden innerhalb"), Ok(5));
        // Whole lines, though one paragraph when rendered.
        assert_eq!(line("Priorität: P0"), Ok(7));
        assert_eq!(line("Zuständig: Zahlungsteam."), Ok(8));
        assert_eq!(line("fünf Werktagen"), Err(Miss::TooShort));
        assert_eq!(line("sieben Werktagen"), Err(Miss::NotFound));
    }

    #[test]
    fn whole_lines_items_paragraphs_and_code_lines_count_at_any_length() {
        let index = index_of(
            "---\nowner: payments-team\n---\n# Refunds\n\nPriority: P0\n\n- Refund within 5 days\n- Partial refunds\n\n```sh\nflask run\n```\n\nA refund is logged.\nIt is final.\n## Partial refunds\n",
        );
        let found = |q: &str| index.look_up(q).map(|h| h.line);
        assert_eq!(found("owner: payments-team"), Ok(2));
        assert_eq!(found("Priority: P0"), Ok(6));
        assert_eq!(found("\"Priority: P0.\""), Ok(6));
        assert_eq!(found("Partial refunds"), Ok(9));
        assert_eq!(found("flask run"), Ok(12));
        assert_eq!(found("It is final."), Ok(16));
        // A fragment of a line is too short; a heading is no requirement.
        assert_eq!(found("Priority"), Err(Miss::TooShort));
        assert_eq!(found("a refund"), Err(Miss::TooShort));
        assert_eq!(found("Refunds"), Err(Miss::TooShort));
        assert_eq!(found("Priority: P1"), Err(Miss::NotFound));
        assert_eq!(found("   "), Err(Miss::NotFound));
    }

    #[test]
    fn lookups_over_a_large_spec_are_fast() {
        let mut spec = String::new();
        for i in 0..2000 {
            spec.push_str(&format!(
                "## Requirement {i}\n\nThe system must handle case {i} with care,\nlogging every \
                 step of item {i} to the audit trail.\n\n"
            ));
        }
        assert!(spec.len() > 200_000);
        let doc = parse("big.md", &spec);
        let sections: Vec<(String, Section)> = doc
            .sections
            .iter()
            .map(|s| ("big.md".to_string(), s.clone()))
            .collect();
        let index = QuoteIndex::new(&sections);
        let started = std::time::Instant::now();
        for i in 0..2000 {
            let found = index.find(&format!(
                "handle case {i} with care, logging every step of item {i}"
            ));
            assert_eq!(found.map(|h| h.line), Some(i * 5 + 3));
            assert_eq!(index.find(&format!("handle case {i} with caution")), None);
        }
        // Generous for an unoptimised build on a shared machine: a scan of the
        // whole text per lookup takes far longer.
        assert!(
            started.elapsed() < std::time::Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
    }
}
