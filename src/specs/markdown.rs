//! Markdown → sections: splits a document at its top-level headings (ATX and
//! Setext, as CommonMark parses them) into sections with heading paths and
//! 1-based line ranges, and finds a section by the name a person or a model
//! gives it. It must not read files or interpret section content.

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

use super::{Document, Section};

/// Splits `text` into sections. Every line of the document belongs to exactly
/// one section; text before the first heading (front matter included) is a
/// level-0 preamble, and a document without headings is one level-0 section.
pub fn parse(path: &str, text: &str) -> Document {
    let lines = LineIndex::new(text);
    let body_start = front_matter_end(text);
    let headings = headings(text, body_start, &lines);

    let mut sections = Vec::with_capacity(headings.len() + 1);
    let first_heading_line = headings.first().map_or(lines.count + 1, |h| h.line);
    if first_heading_line > 1 {
        sections.push(Section {
            titles: Vec::new(),
            level: 0,
            start_line: 1,
            end_line: first_heading_line - 1,
            text: lines.slice(text, 1, first_heading_line - 1).to_string(),
        });
    }

    // The heading path is a stack of the open headings: a heading closes every
    // open heading of its own level or deeper, so skipped levels (# then ###)
    // nest under the nearest shallower heading.
    let mut open: Vec<(u8, String)> = Vec::new();
    for (i, heading) in headings.iter().enumerate() {
        while open
            .last()
            .is_some_and(|(level, _)| *level >= heading.level)
        {
            open.pop();
        }
        open.push((heading.level, heading.title.clone()));
        let end_line = headings
            .get(i + 1)
            .map_or(lines.count, |next| next.line - 1);
        sections.push(Section {
            titles: open.iter().map(|(_, title)| title.clone()).collect(),
            level: heading.level,
            start_line: heading.line,
            end_line,
            text: lines.slice(text, heading.line, end_line).to_string(),
        });
    }

    Document {
        path: path.to_string(),
        text: text.to_string(),
        sections,
    }
}

/// Finds the section a reference names: a full heading path ("A > B"), the end
/// of one ("B > C" for "A > B > C"), or a title, compared case-insensitively
/// with whitespace and emphasis markers normalised and leading `#`s ignored.
/// An exact full path wins over a title, a title over a path suffix; among
/// equals the first in document order wins (`matching` gives them all).
pub fn find_section<'a>(doc: &'a Document, name: &str) -> Option<&'a Section> {
    matching(doc, name)
        .first()
        .map(|&index| &doc.sections[index])
}

/// The indices of every section a reference names at the strongest kind of
/// match there is (full path, else title, else path suffix), in document
/// order: more than one means the reference is ambiguous.
pub fn matching(doc: &Document, name: &str) -> Vec<usize> {
    let wanted = normalise_name(name.trim_start().trim_start_matches('#'));
    if wanted.is_empty() {
        return Vec::new();
    }
    if wanted == "(preamble)" {
        return doc
            .sections
            .iter()
            .position(|s| s.level == 0)
            .into_iter()
            .collect();
    }
    let parts: Vec<String> = wanted
        .split('>')
        .map(normalise_name)
        .filter(|p| !p.is_empty())
        .collect();
    let paths: Vec<Vec<String>> = doc
        .sections
        .iter()
        .map(|s| s.titles.iter().map(|t| normalise_name(t)).collect())
        .collect();
    let all = |test: &dyn Fn(&Vec<String>) -> bool| -> Vec<usize> {
        paths
            .iter()
            .enumerate()
            .filter(|(_, p)| test(p))
            .map(|(i, _)| i)
            .collect()
    };
    let full = all(&|p| !p.is_empty() && *p == parts);
    if !full.is_empty() {
        return full;
    }
    // A title may itself contain '>', so the whole reference is also tried
    // as one title.
    let title = all(&|p| p.last().is_some_and(|t| *t == wanted));
    if !title.is_empty() {
        return title;
    }
    all(&|p| !parts.is_empty() && p.ends_with(&parts))
}

/// Lower-cased, whitespace collapsed, emphasis and code markers removed: the
/// form in which references and titles are compared.
pub(super) fn normalise_name(name: &str) -> String {
    name.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .filter(|c| !matches!(c, '*' | '`'))
        .flat_map(char::to_lowercase)
        .collect::<String>()
        .trim()
        .to_string()
}

struct Heading {
    line: usize,
    level: u8,
    title: String,
}

/// Top-level headings of `text[body_start..]`, in order. Headings nested in a
/// blockquote, list item or footnote are part of their container's section,
/// as they are in a rendered outline.
fn headings(text: &str, body_start: usize, lines: &LineIndex) -> Vec<Heading> {
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS;
    let body = &text[body_start..];
    let mut found = Vec::new();
    let mut depth = 0usize;
    let mut current: Option<(usize, u8, String)> = None;
    for (event, range) in Parser::new_ext(body, options).into_offset_iter() {
        match event {
            Event::Start(Tag::Heading { level, .. }) => {
                if depth == 0 {
                    current = Some((body_start + range.start, level as u8, String::new()));
                }
                depth += 1;
            }
            Event::End(TagEnd::Heading(_)) => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    if let Some((offset, level, raw)) = current.take() {
                        found.push(Heading {
                            line: lines.line_of(offset),
                            level,
                            title: raw.split_whitespace().collect::<Vec<_>>().join(" "),
                        });
                    }
                }
            }
            Event::Start(_) => depth += 1,
            Event::End(_) => depth = depth.saturating_sub(1),
            Event::Text(t) | Event::Code(t) | Event::InlineMath(t) | Event::DisplayMath(t) => {
                if let Some((_, _, title)) = current.as_mut() {
                    title.push_str(&t);
                }
            }
            Event::SoftBreak | Event::HardBreak => {
                if let Some((_, _, title)) = current.as_mut() {
                    title.push(' ');
                }
            }
            _ => {}
        }
    }
    found
}

/// Byte offset where the body starts after YAML (`---` … `---`/`...`) or TOML
/// (`+++` … `+++`) front matter, or 0 when there is none. Detected here rather
/// than by the parser so that an unusual block (blank lines inside, say) can
/// never turn into a thematic break followed by a Setext heading.
fn front_matter_end(text: &str) -> usize {
    let start = if text.starts_with('\u{feff}') { 3 } else { 0 };
    let mut lines = text[start..].split_inclusive('\n');
    let Some(first) = lines.next() else {
        return 0;
    };
    let closers: &[&str] = match first.trim_end() {
        "---" => &["---", "..."],
        "+++" => &["+++"],
        _ => return 0,
    };
    let mut offset = start + first.len();
    for line in lines {
        offset += line.len();
        if closers.contains(&line.trim_end()) {
            return offset;
        }
    }
    0
}

/// Maps byte offsets to 1-based line numbers and line ranges back to text.
struct LineIndex {
    /// Byte offset where each line starts; the first is 0.
    starts: Vec<usize>,
    /// Number of lines; an empty document has one (empty) line, and a final
    /// newline does not start another.
    count: usize,
}

impl LineIndex {
    fn new(text: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(
            text.match_indices('\n')
                .map(|(i, _)| i + 1)
                .filter(|&i| i < text.len()),
        );
        let count = starts.len();
        LineIndex { starts, count }
    }

    fn line_of(&self, offset: usize) -> usize {
        self.starts.partition_point(|&s| s <= offset)
    }

    /// The text of lines `first..=last`, final newline included.
    fn slice<'t>(&self, text: &'t str, first: usize, last: usize) -> &'t str {
        let from = self.starts[first - 1];
        let to = self.starts.get(last).copied().unwrap_or(text.len());
        &text[from..to]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outline(doc: &Document) -> Vec<(String, u8, usize, usize)> {
        doc.sections
            .iter()
            .map(|s| (s.heading_path(), s.level, s.start_line, s.end_line))
            .collect()
    }

    fn o(path: &str, level: u8, start: usize, end: usize) -> (String, u8, usize, usize) {
        (path.to_string(), level, start, end)
    }

    /// Every line belongs to exactly one section, in order, and the sections'
    /// texts put back together are the document.
    fn assert_partition(doc: &Document) {
        let mut next = 1;
        for s in &doc.sections {
            assert_eq!(
                s.start_line,
                next,
                "gap or overlap before {}",
                s.heading_path()
            );
            assert!(s.end_line >= s.start_line);
            next = s.end_line + 1;
        }
        let lines = LineIndex::new(&doc.text).count;
        assert_eq!(next, lines + 1, "sections stop short of the last line");
        let joined: String = doc.sections.iter().map(|s| s.text.as_str()).collect();
        assert_eq!(joined, doc.text);
    }

    #[test]
    fn atx_headings_nest_into_paths_with_line_ranges() {
        let text = "# Library Catalog\n\nIntro.\n\n## Search\n\nUsers can search.\n\n## Borrowing\nRules.\n# Accounts\nLogin.\n";
        let doc = parse("specs/product/library.md", text);
        assert_eq!(
            outline(&doc),
            vec![
                o("Library Catalog", 1, 1, 4),
                o("Library Catalog > Search", 2, 5, 8),
                o("Library Catalog > Borrowing", 2, 9, 10),
                o("Accounts", 1, 11, 12),
            ]
        );
        assert_eq!(doc.sections[1].text, "## Search\n\nUsers can search.\n\n");
        assert_eq!(doc.path, "specs/product/library.md");
        assert_partition(&doc);
    }

    #[test]
    fn setext_headings_start_at_their_text_line() {
        let text = "Catalog\n=======\n\nBooks.\n\nSearch\n------\nFind books.\n";
        let doc = parse("s.md", text);
        assert_eq!(
            outline(&doc),
            vec![o("Catalog", 1, 1, 5), o("Catalog > Search", 2, 6, 8)]
        );
        assert_partition(&doc);
    }

    #[test]
    fn hashes_inside_code_fences_are_not_headings() {
        let text = "# Setup\n\n```sh\n# install it\npip install x\n```\n\n~~~\n## not either\n~~~\n## Real\nx\n";
        let doc = parse("s.md", text);
        assert_eq!(
            outline(&doc),
            vec![o("Setup", 1, 1, 10), o("Setup > Real", 2, 11, 12)]
        );
        assert_partition(&doc);
    }

    #[test]
    fn yaml_front_matter_is_preamble_not_a_heading() {
        let text = "---\ntitle: Catalog\n\ntags: [a]\n---\n# Catalog\nBody.\n";
        let doc = parse("s.md", text);
        assert_eq!(
            outline(&doc),
            vec![o("(preamble)", 0, 1, 5), o("Catalog", 1, 6, 7)]
        );
        assert_partition(&doc);
    }

    #[test]
    fn toml_front_matter_is_preamble_not_a_heading() {
        let text = "+++\ntitle = \"Catalog\"\n+++\nSome intro\n---\n\n# Catalog\n";
        let doc = parse("s.md", text);
        // "Some intro\n---" after the front matter is a real Setext heading.
        assert_eq!(
            outline(&doc),
            vec![
                o("(preamble)", 0, 1, 3),
                o("Some intro", 2, 4, 6),
                o("Catalog", 1, 7, 7)
            ]
        );
        assert_partition(&doc);
    }

    #[test]
    fn a_document_without_headings_is_one_level_zero_section() {
        let doc = parse("notes.md", "Just text.\nMore text.");
        assert_eq!(outline(&doc), vec![o("(preamble)", 0, 1, 2)]);
        assert_eq!(doc.sections[0].text, "Just text.\nMore text.");
        assert_partition(&doc);

        let empty = parse("empty.md", "");
        assert_eq!(outline(&empty), vec![o("(preamble)", 0, 1, 1)]);
        assert_partition(&empty);
    }

    #[test]
    fn text_before_the_first_heading_is_a_preamble() {
        let doc = parse("s.md", "Draft, do not share.\n\n# Catalog\nBody\n");
        assert_eq!(
            outline(&doc),
            vec![o("(preamble)", 0, 1, 2), o("Catalog", 1, 3, 4)]
        );
        assert_partition(&doc);
    }

    #[test]
    fn skipped_levels_nest_under_the_nearest_shallower_heading() {
        let doc = parse("s.md", "# A\n### C\n## B\n#### D\n# E\n");
        assert_eq!(
            outline(&doc),
            vec![
                o("A", 1, 1, 1),
                o("A > C", 3, 2, 2),
                o("A > B", 2, 3, 3),
                o("A > B > D", 4, 4, 4),
                o("E", 1, 5, 5)
            ]
        );
    }

    #[test]
    fn heading_titles_drop_inline_markup_and_closing_hashes() {
        let doc = parse(
            "s.md",
            "## The *fast* path ##\n# `speed review` and [links](x.md)\n#   Spaced    out   #\n",
        );
        let titles: Vec<&str> = doc.sections.iter().map(Section::title).collect();
        assert_eq!(
            titles,
            vec!["The fast path", "speed review and links", "Spaced out"]
        );
    }

    #[test]
    fn headings_inside_blockquotes_and_lists_stay_in_their_section() {
        let doc = parse("s.md", "# Top\n> # Quoted\n- ## Listed\n\n## Next\n");
        assert_eq!(
            outline(&doc),
            vec![o("Top", 1, 1, 4), o("Top > Next", 2, 5, 5)]
        );
    }

    #[test]
    fn crlf_line_endings_keep_line_numbers() {
        let doc = parse("s.md", "# A\r\ntext\r\n## B\r\nmore\r\n");
        assert_eq!(outline(&doc), vec![o("A", 1, 1, 2), o("A > B", 2, 3, 4)]);
        assert_eq!(doc.sections[1].title(), "B");
        assert_partition(&doc);
    }

    fn catalog() -> Document {
        parse(
            "s.md",
            "intro\n# Library Catalog\n## Search\n### Filters\n# Admin\n## Search\n## A > B\n",
        )
    }

    #[test]
    fn find_section_by_full_path_suffix_or_title() {
        let doc = catalog();
        let path = |name: &str| find_section(&doc, name).map(|s| (s.heading_path(), s.start_line));
        assert_eq!(path("Admin > Search"), Some(("Admin > Search".into(), 6)));
        assert_eq!(
            path("  ##  admin   >search "),
            Some(("Admin > Search".into(), 6))
        );
        assert_eq!(
            path("Search > Filters"),
            Some(("Library Catalog > Search > Filters".into(), 4))
        );
        assert_eq!(
            path("filters"),
            Some(("Library Catalog > Search > Filters".into(), 4))
        );
        // An ambiguous title resolves to the first in document order.
        assert_eq!(path("Search"), Some(("Library Catalog > Search".into(), 3)));
        assert_eq!(path("A > B"), Some(("Admin > A > B".into(), 7)));
        assert_eq!(path("(preamble)"), Some(("(preamble)".into(), 1)));
        assert_eq!(path("Checkout"), None);
        assert_eq!(path("Admin > Filters"), None);
        assert_eq!(path("#"), None);
    }

    #[test]
    fn find_section_ignores_emphasis_in_references() {
        let doc = parse("s.md", "## The *fast* path\n");
        assert_eq!(
            find_section(&doc, "the *FAST* path").map(Section::title),
            Some("The fast path")
        );
    }
}
