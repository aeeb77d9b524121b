//! Specs: markdown documents split into sections with heading paths and line
//! ranges, selection of the sections relevant to a task, the vision's
//! sentences, and quote lookup.
//! Pure text in, plain data out: this module never reads git or files itself.

pub mod blocks;
pub mod comments;
pub mod links;
pub mod markdown;
pub mod quote;
pub mod relevance;
pub mod resolve;
pub mod rules;
pub mod script;
pub mod select;
pub mod similar;
pub mod vision;

pub use markdown::{find_section, parse};
pub use quote::{QuoteHit, QuoteIndex};
pub use resolve::{Reference, Resolved};
pub use select::{Candidate, rank, related, spec_paths, split_spec_arg};

use serde::Serialize;

/// A spec reference that names something not in the loaded specs. Selection
/// never fails on one; the caller reports it (or refuses to go on).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    #[error("spec reference names {path}, which is not among the specs loaded")]
    MissingDocument { path: String },
    #[error("spec {path} has no section matching \"{section}\"{hint}")]
    MissingSection {
        path: String,
        section: String,
        /// The closest headings ("; did you mean …?"), or the document's
        /// outline when none is close, so the user can fix the reference.
        hint: String,
    },
}

/// A parsed markdown document.
#[derive(Debug, Clone, Serialize)]
pub struct Document {
    /// Path relative to the repository root (or as given on the command line).
    pub path: String,
    pub text: String,
    pub sections: Vec<Section>,
}

/// One section: a heading and the text up to the next heading of any level.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Section {
    /// Heading titles from the top level down to this section's heading;
    /// empty for text before the first heading (or a file without headings).
    pub titles: Vec<String>,
    /// Heading level 1–6; 0 for text before the first heading.
    pub level: u8,
    /// 1-based, inclusive line range in the document, heading line included.
    pub start_line: usize,
    pub end_line: usize,
    /// The section's source text, heading line included.
    pub text: String,
}

/// A path as given, trimmed, without a leading `./`.
fn clean_path(path: &str) -> String {
    let path = path.trim();
    path.strip_prefix("./").unwrap_or(path).to_string()
}

impl Document {
    /// The section at `head` and the sections nested under it (those that follow
    /// it with a deeper level). A preamble has no subsections.
    pub fn subtree(&self, head: usize) -> impl Iterator<Item = usize> + '_ {
        let level = self.sections[head].level;
        let end = if level == 0 {
            head + 1
        } else {
            self.sections[head + 1..]
                .iter()
                .position(|s| s.level <= level)
                .map_or(self.sections.len(), |offset| head + 1 + offset)
        };
        head..end
    }
}

impl Section {
    /// "Library Catalog > Search"; "(preamble)" for text before any heading.
    pub fn heading_path(&self) -> String {
        if self.titles.is_empty() {
            "(preamble)".to_string()
        } else {
            self.titles.join(" > ")
        }
    }

    /// The section's own title: the last element of its heading path.
    pub fn title(&self) -> &str {
        self.titles
            .last()
            .map(String::as_str)
            .unwrap_or("(preamble)")
    }

    /// The text after the heading (an ATX line, or a Setext title and its
    /// underline); the whole text for a preamble.
    pub fn body(&self) -> &str {
        if self.level == 0 {
            return &self.text;
        }
        let mut rest = self.text.as_str();
        let atx = rest.trim_start_matches(' ').starts_with('#');
        while let Some((line, after)) = rest.split_once('\n') {
            rest = after;
            if atx || is_setext_underline(line) {
                return rest;
            }
        }
        ""
    }
}

fn is_setext_underline(line: &str) -> bool {
    let line = line.trim();
    !line.is_empty() && (line.bytes().all(|b| b == b'=') || line.bytes().all(|b| b == b'-'))
}

#[cfg(test)]
mod tests {
    use super::markdown::parse;

    #[test]
    fn body_is_the_text_after_the_heading() {
        let doc = parse(
            "s.md",
            "intro\n# ATX\nbody one\n\nMulti\nline\n---\nbody two\n## Empty\n",
        );
        let bodies: Vec<&str> = doc.sections.iter().map(|s| s.body()).collect();
        assert_eq!(bodies, vec!["intro\n", "body one\n\n", "body two\n", ""]);
        assert_eq!(doc.sections[2].title(), "Multi line");
    }
}
