//! A test function as the outline of a file and the reader of a project's
//! test-declaring macros both see it: its qualified name, where it is
//! skipped, and its body (hashed whole, by line, and its assertions), so a
//! test moved or renamed is known again.

use tree_sitter::Node;

use super::assertions::{self, Assertion};

/// A test function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestFn {
    /// `name`, `Class.name` or `module::name` within its file.
    pub name: String,
    pub line: u32,
    /// Where the test is skipped or ignored (`#[ignore]`, `@pytest.mark.skip`,
    /// a skipped class), if it is.
    pub skipped_at: Option<u32>,
    /// The skip holds only under a condition (`skipif(sys.platform ==
    /// "win32")`): the test runs elsewhere.
    pub skip_conditional: bool,
    /// A hash of its body's text without blanks: the same body under
    /// another name is a rename, not a deletion.
    pub body: u64,
    /// Its assertions, and in Rust every macro it calls (see
    /// `assertions`).
    pub assertions: Vec<Assertion>,
    /// The functions it calls, by last name (`assertions::calls`).
    pub calls: Vec<String>,
    /// Its body's lines, hashed (`assertions::line_hashes`).
    pub lines: Vec<u64>,
}

/// A hash of a node's text with all whitespace removed.
pub fn body_hash(node: Node, src: &[u8]) -> u64 {
    assertions::hash_text(&src[node.byte_range()])
}
