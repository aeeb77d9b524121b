//! The README and the pages under `docs/` hold together: every relative
//! link names a file that exists and every `#anchor` a heading of its page
//! (as GitHub makes anchors), every `see "Section"` names a heading, each
//! page's table of contents lists each of its sections, and the README stays
//! a front door: short, with the quickstart near the top.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};

/// The README's most lines, and the line by which its quickstart ends.
const README_MAX_LINES: usize = 400;
const QUICKSTART_ENDS_BY: usize = 80;

/// What one Markdown file holds for these checks.
struct Page {
    path: PathBuf,
    text: String,
    /// `(level, text)` of each heading, in order, markup removed.
    headings: Vec<(HeadingLevel, String)>,
    /// The anchors GitHub gives those headings.
    anchors: BTreeSet<String>,
    /// Each link or image target, with the line it is on.
    links: Vec<(usize, String)>,
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// README.md and every `docs/*.md`.
fn pages() -> Vec<Page> {
    let mut paths = vec![root().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .expect("docs/ exists")
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    docs.sort();
    assert!(
        docs.len() >= 10,
        "docs/ holds the reference pages: {docs:?}"
    );
    paths.extend(docs);
    paths.into_iter().map(|path| read(&path)).collect()
}

fn read(path: &Path) -> Page {
    let text = std::fs::read_to_string(path).unwrap();
    let line_of = |offset: usize| text[..offset].matches('\n').count() + 1;
    let mut headings = Vec::new();
    let mut links = Vec::new();
    let mut heading: Option<(HeadingLevel, String)> = None;
    let parser = Parser::new_ext(&text, Options::ENABLE_TABLES).into_offset_iter();
    for (event, range) in parser {
        match event {
            Event::Start(Tag::Heading { level, .. }) => heading = Some((level, String::new())),
            Event::End(TagEnd::Heading(_)) => headings.extend(heading.take()),
            Event::Text(t) | Event::Code(t) => {
                if let Some((_, h)) = heading.as_mut() {
                    h.push_str(&t);
                }
            }
            Event::Start(Tag::Link { dest_url, .. })
            | Event::Start(Tag::Image { dest_url, .. }) => {
                links.push((line_of(range.start), dest_url.to_string()));
            }
            _ => {}
        }
    }
    let mut anchors = BTreeSet::new();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for (_, h) in &headings {
        let slug = slug(h);
        let n = seen.entry(slug.clone()).or_insert(0);
        anchors.insert(if *n == 0 { slug } else { format!("{slug}-{n}") });
        *n += 1;
    }
    Page {
        path: path.to_path_buf(),
        text,
        headings,
        anchors,
        links,
    }
}

/// GitHub's anchor of a heading: lower case, punctuation dropped (but `-`
/// and `_`), each space a `-`.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

fn name(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string()
}

#[test]
fn slugs_are_githubs() {
    assert_eq!(
        slug("Looking back: `speed show`, `speed history`, `speed stats`"),
        "looking-back-speed-show-speed-history-speed-stats"
    );
    assert_eq!(slug("Pages: --format html"), "pages---format-html");
    assert_eq!(slug("A person's review"), "a-persons-review");
    assert_eq!(
        slug("Weakened tests (test_weakened)"),
        "weakened-tests-test_weakened"
    );
}

#[test]
fn every_relative_link_and_anchor_resolves() {
    let pages = pages();
    let by_path: BTreeMap<PathBuf, &Page> = pages
        .iter()
        .map(|p| (p.path.canonicalize().unwrap(), p))
        .collect();
    let mut broken = Vec::new();
    let mut checked = 0;
    for page in &pages {
        for (line, link) in &page.links {
            if link.contains("://") || link.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (file, anchor) = match link.split_once('#') {
                Some((file, anchor)) => (file, Some(anchor)),
                None => (link.as_str(), None),
            };
            let target = if file.is_empty() {
                page.path.clone()
            } else {
                page.path.parent().unwrap().join(file)
            };
            let Ok(target) = target.canonicalize() else {
                broken.push(format!("{}:{line}: {link}: no such file", name(&page.path)));
                continue;
            };
            let Some(anchor) = anchor else { continue };
            match by_path.get(&target) {
                Some(linked) if linked.anchors.contains(anchor) => {}
                Some(linked) => broken.push(format!(
                    "{}:{line}: {link}: {} has no heading whose anchor is #{anchor}",
                    name(&page.path),
                    name(&linked.path)
                )),
                None => broken.push(format!(
                    "{}:{line}: {link}: an anchor into a file that is not a page",
                    name(&page.path)
                )),
            }
        }
    }
    assert!(checked > 100, "only {checked} relative links were found");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// The text of a page outside fenced code, lines joined, so a `see "…"`
/// broken over two lines is still found.
fn prose(text: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            out.push_str(line.trim());
            out.push(' ');
        }
    }
    out
}

#[test]
fn every_see_section_names_a_heading() {
    let pages = pages();
    let headings: BTreeSet<String> = pages
        .iter()
        .flat_map(|p| p.headings.iter())
        .flat_map(|(_, h)| {
            let h = h.trim().to_lowercase();
            // "Looking back" names "Looking back: `speed show`, …".
            let short = h.split(':').next().unwrap_or(&h).trim().to_string();
            [h, short]
        })
        .collect();
    let see = regex::Regex::new(r#"(?i)\bsee (?:the )?"([^"]+)""#).unwrap();
    let mut unknown = Vec::new();
    let mut found = 0;
    for page in &pages {
        for capture in see.captures_iter(&prose(&page.text)) {
            found += 1;
            let section = capture[1].trim().to_lowercase();
            if !headings.contains(&section) {
                unknown.push(format!("{}: see \"{}\"", name(&page.path), &capture[1]));
            }
        }
    }
    assert!(
        unknown.is_empty(),
        "{found} `see \"…\"` found; these name no heading:\n{}",
        unknown.join("\n")
    );
}

#[test]
fn each_page_has_a_table_of_contents_of_its_sections() {
    for page in pages()
        .iter()
        .filter(|p| p.path.parent() == Some(&root().join("docs")))
    {
        let first = page.headings.first().map(|(level, _)| *level);
        assert_eq!(
            first,
            Some(HeadingLevel::H1),
            "{} opens with its title",
            name(&page.path)
        );
        let own: BTreeSet<&str> = page
            .links
            .iter()
            .filter_map(|(_, link)| link.strip_prefix('#'))
            .collect();
        for (level, heading) in &page.headings {
            if *level == HeadingLevel::H2 {
                let anchor = slug(heading);
                assert!(
                    own.contains(anchor.as_str()),
                    "{}: its contents do not list \"{heading}\" (#{anchor})",
                    name(&page.path)
                );
            }
        }
    }
}

#[test]
fn the_readme_is_a_front_door() {
    let readme = read(&root().join("README.md"));
    let lines: Vec<&str> = readme.text.lines().collect();
    assert!(
        lines.len() <= README_MAX_LINES,
        "README.md has {} lines; reference material belongs in docs/",
        lines.len()
    );
    let start = lines
        .iter()
        .position(|l| *l == "## Quickstart")
        .expect("README.md has a Quickstart");
    let end = lines[start + 1..]
        .iter()
        .position(|l| l.starts_with("## "))
        .map_or(lines.len(), |i| start + 1 + i);
    assert!(
        end <= QUICKSTART_ENDS_BY,
        "the quickstart runs to line {end}; it must end within the first {QUICKSTART_ENDS_BY}"
    );
    // Every docs page is reachable from the README.
    for page in pages().iter().skip(1) {
        let file = name(&page.path);
        assert!(
            readme
                .links
                .iter()
                .any(|(_, l)| l.split('#').next() == Some(&file)),
            "README.md does not link to {file}"
        );
    }
}

#[test]
fn no_word_of_the_projects_history_reaches_a_reader() {
    for page in pages() {
        let lower = page.text.to_lowercase();
        for word in ["seed 00", "seed's", "the contract (\"", "wave "] {
            assert!(
                !lower.contains(word),
                "{} says \"{word}\", which a reader cannot know",
                name(&page.path)
            );
        }
    }
}
