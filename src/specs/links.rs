//! The spec files a spec points to: relative Markdown links
//! (`[ledger](ledger.md)`, reference definitions) and names of Markdown
//! files in its text (`see ledger.md`), resolved against the spec's folder.
//! A team splits a spec into files that link to each other; the files a
//! task's spec links to are candidates for its review like the spec's own
//! sections. Pure: the caller reads what exists.

use pulldown_cmark::{Event, Options, Parser, Tag};

use super::Document;

/// Repository paths `doc` may point to, in order of first mention, without
/// duplicates or `doc` itself. A link is resolved against the document's
/// folder; a bare name with a folder in it (`specs/ledger.md`) also against
/// the repository root, since prose rarely says which it means. Links
/// with a scheme, absolute paths and paths climbing out of the repository
/// are not spec files of this repository.
pub fn linked(doc: &Document) -> Vec<String> {
    let folder = match doc.path.rsplit_once('/') {
        Some((folder, _)) => folder,
        None => "",
    };
    let mut out: Vec<String> = Vec::new();
    let mut add = |path: Option<String>| {
        if let Some(path) = path {
            if path != doc.path && !out.contains(&path) {
                out.push(path);
            }
        }
    };
    let options = Options::ENABLE_TABLES | Options::ENABLE_FOOTNOTES;
    for event in Parser::new_ext(&doc.text, options) {
        match event {
            Event::Start(Tag::Link { dest_url, .. }) => {
                if let Some(target) = markdown_target(&dest_url) {
                    add(join(folder, &target));
                }
            }
            Event::Text(text) | Event::Code(text) => {
                for name in mentioned(&text) {
                    add(join(folder, name));
                    if name.contains('/') {
                        add(join("", name));
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// The file part of a link's target when it is a relative path to a
/// Markdown file (fragment and query dropped, `%20` decoded).
fn markdown_target(dest: &str) -> Option<String> {
    let path = dest.split(['#', '?']).next()?.trim();
    if path.is_empty() || path.starts_with('/') || path.contains(':') {
        return None;
    }
    let path = path.replace("%20", " ");
    is_markdown(&path).then_some(path)
}

/// Names of Markdown files in prose: runs of path characters ending in
/// `.md` or `.markdown`, not part of an address (after `@` or `:`).
fn mentioned(text: &str) -> Vec<&str> {
    let path_char = |c: char| c.is_alphanumeric() || matches!(c, '.' | '/' | '_' | '-');
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    let mut previous: Option<char> = None;
    for (i, c) in text.char_indices().chain([(text.len(), ' ')]) {
        if path_char(c) && i < text.len() {
            if start.is_none() {
                start = Some(i);
                if matches!(previous, Some('@' | ':')) {
                    start = Some(usize::MAX);
                }
            }
        } else if let Some(from) = start.take() {
            if from != usize::MAX {
                let word = text[from..i].trim_end_matches('.');
                if is_markdown(word) && !word.starts_with('/') {
                    out.push(word);
                }
            }
        }
        previous = Some(c);
    }
    out
}

fn is_markdown(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    let name = lower.rsplit('/').next().unwrap_or(&lower);
    (name.ends_with(".md") && name.len() > 3) || (name.ends_with(".markdown") && name.len() > 9)
}

/// `folder/relative`, with `.` and `..` resolved; None when it climbs out
/// of the repository.
fn join(folder: &str, relative: &str) -> Option<String> {
    let mut parts: Vec<&str> = folder.split('/').filter(|p| !p.is_empty()).collect();
    for part in relative.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            part => parts.push(part),
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::super::markdown::parse;
    use super::*;

    #[test]
    fn links_and_mentions_resolve_against_the_specs_folder() {
        let doc = parse(
            "specs/product/payments.md",
            "# Payments\n\nFees are in [the ledger](ledger.md#fees); see also refunds.md.\n\
             Shared terms: [glossary][g], `../shared/terms.md` and specs/product/ledger.md.\n\n\
             [g]: ./glossary.md\n\nNot these: [site](https://example.com/a.md), [abs](/etc/x.md), \
             [up](../../../out.md), [image](diagram.png), [self](payments.md), mailto:x@y.md.\n",
        );
        assert_eq!(
            linked(&doc),
            [
                "specs/product/ledger.md",
                "specs/product/refunds.md",
                "specs/product/glossary.md",
                "specs/shared/terms.md",
                "specs/product/specs/product/ledger.md",
            ]
        );
    }

    #[test]
    fn a_spec_at_the_root_and_names_with_spaces() {
        let doc = parse(
            "SPEC.md",
            "See [the fees](docs/Fee%20Rules.md) and NOTES.markdown.\n",
        );
        assert_eq!(linked(&doc), ["docs/Fee Rules.md", "NOTES.markdown"]);
    }
}
