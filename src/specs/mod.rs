//! Specs: markdown documents split into sections with heading paths and line
//! ranges, selection of the sections relevant to a task, and quote lookup.
//! Pure text in, plain data out: this module never reads git or files itself.

use serde::Serialize;

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
        self.titles.last().map(String::as_str).unwrap_or("(preamble)")
    }
}
