//! The tree-sitter front end of every part that reads code (`impact`'s
//! index, the code `checks`): the languages speed reads and which files are
//! theirs, each grammar loaded once per process with its node kind and
//! field names resolved by id (`Names`), and parsers kept per thread.
//! tree-sitter's allocator is set here, before the process's first parser.
//! `store` keeps the texts and trees of one review, so that each file is
//! read once and parsed at most once, whatever asks for it.
//!
//! It says what the code is, never what it means: node tables, symbols and
//! findings belong to the parts above, and nothing here imports them.

use std::cell::RefCell;
use std::num::NonZeroU16;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};
use tree_sitter::{Language, Node, Tree};

mod store;

pub use store::{Blobs, Facts, Key, Parsed, Reader, ReaderId, Stats, Store, Text};

/// Why a file could not be parsed at all.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("the {lang} grammar cannot be loaded: {message}")]
    Grammar { lang: &'static str, message: String },
    #[error("the {lang} parser gave no tree")]
    Parse { lang: &'static str },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Lang {
    Rust,
    Python,
}

impl Lang {
    pub const ALL: [Lang; 2] = [Lang::Rust, Lang::Python];

    /// The language of a repository path, by extension.
    pub fn of_path(path: &str) -> Option<Lang> {
        let ext = path.rsplit_once('.').map(|(_, e)| e)?;
        match ext {
            "rs" => Some(Lang::Rust),
            "py" | "pyi" => Some(Lang::Python),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Lang::Rust => "rust",
            Lang::Python => "python",
        }
    }

    /// Between a type and its member in names shown to people.
    pub fn member_separator(self) -> &'static str {
        match self {
            Lang::Rust => "::",
            Lang::Python => ".",
        }
    }

    /// The tree-sitter language, made once: the names it hands out live
    /// as long as it does.
    pub fn language(self) -> &'static Language {
        static RUST: OnceLock<Language> = OnceLock::new();
        static PYTHON: OnceLock<Language> = OnceLock::new();
        match self {
            Lang::Rust => RUST.get_or_init(|| tree_sitter_rust::LANGUAGE.into()),
            Lang::Python => PYTHON.get_or_init(|| tree_sitter_python::LANGUAGE.into()),
        }
    }

    /// The grammar's node kind and field names by id, built once.
    pub fn names(self) -> &'static Names {
        static RUST: OnceLock<Names> = OnceLock::new();
        static PYTHON: OnceLock<Names> = OnceLock::new();
        let cell = match self {
            Lang::Rust => &RUST,
            Lang::Python => &PYTHON,
        };
        cell.get_or_init(|| Names::new(self.language()))
    }
}

/// A grammar's node kind and field names by id, so a reader never asks
/// tree-sitter for them by string: `Node::kind` measures and UTF-8-checks a
/// C string on every call, and `Node::child_by_field_name` compares the
/// name with every field of the grammar (together a tenth of extraction).
pub struct Names {
    kinds: Vec<&'static str>,
    /// By kind id: whether nodes of the kind are named (not tokens like `;`).
    named: Vec<bool>,
    /// By field id; id 0 is no field.
    fields: Vec<&'static str>,
    /// Field ids by `field_slot` of their name, 0 where none; a name whose
    /// slot another took is found by scanning `fields`. Extraction asks
    /// for a child by field name hundreds of thousands of times per
    /// megabyte, and a binary search over the names cost nearly as much
    /// as tree-sitter's own lookup of the child.
    by_slot: Box<[u16; FIELD_SLOTS]>,
}

const FIELD_SLOTS: usize = 1024;

/// FNV-1a of the name, folded into the slots.
fn field_slot(name: &str) -> usize {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in name.as_bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h as usize % FIELD_SLOTS
}

impl Names {
    fn new(language: &'static Language) -> Names {
        let kinds = (0..language.node_kind_count())
            .map(|id| language.node_kind_for_id(id as u16).unwrap_or(""))
            .collect();
        let named = (0..language.node_kind_count())
            .map(|id| language.node_kind_is_named(id as u16))
            .collect();
        let fields: Vec<&'static str> = (0..=language.field_count())
            .map(|id| language.field_name_for_id(id as u16).unwrap_or(""))
            .collect();
        let mut by_slot = Box::new([0u16; FIELD_SLOTS]);
        for (id, name) in fields.iter().enumerate().skip(1) {
            let slot = &mut by_slot[field_slot(name)];
            if *slot == 0 {
                *slot = id as u16;
            }
        }
        Names {
            kinds,
            named,
            fields,
            by_slot,
        }
    }

    /// `node.kind()`.
    pub fn kind(&self, node: Node) -> &'static str {
        self.kind_of_id(node.kind_id())
    }

    /// How many node kinds the grammar has; ids run from 0 below it.
    pub fn kind_count(&self) -> usize {
        self.kinds.len()
    }

    /// The name of a node kind id.
    pub fn kind_of_id(&self, id: u16) -> &'static str {
        self.kinds.get(id as usize).copied().unwrap_or("")
    }

    /// Whether nodes of a kind id are named.
    pub fn is_named(&self, id: u16) -> bool {
        self.named.get(usize::from(id)).copied().unwrap_or(false)
    }

    /// The name of a field id, as a tree cursor gives it.
    pub fn field(&self, id: Option<NonZeroU16>) -> Option<&'static str> {
        self.fields.get(usize::from(id?.get())).copied()
    }

    /// `node.child_by_field_name(field)`.
    pub fn child<'t>(&self, node: Node<'t>, field: &str) -> Option<Node<'t>> {
        node.child_by_field_id(self.field_id(field)?.get())
    }

    /// The id of a field name.
    fn field_id(&self, field: &str) -> Option<NonZeroU16> {
        let id = self.by_slot[field_slot(field)];
        let id = if self.fields[usize::from(id)] == field {
            usize::from(id)
        } else {
            self.fields.iter().skip(1).position(|&f| f == field)? + 1
        };
        NonZeroU16::new(id as u16)
    }
}

/// A tree-sitter parser that keeps its language between files of the
/// same one. One per thread: `parse` keeps one for each thread that asks.
pub struct Parser {
    inner: tree_sitter::Parser,
    lang: Option<Lang>,
}

impl Default for Parser {
    fn default() -> Self {
        Parser::new()
    }
}

impl Parser {
    pub fn new() -> Parser {
        use_fast_allocator();
        Parser {
            inner: tree_sitter::Parser::new(),
            lang: None,
        }
    }

    /// The tree of `text`; a file with syntax errors still has one, with
    /// error nodes where the grammar could not follow.
    pub fn parse(&mut self, lang: Lang, text: &[u8]) -> Result<Tree, Error> {
        self.parse_from(lang, text, None)
    }

    /// The tree of `text`, an edit of the text `old` was parsed from, with
    /// `old` already told of the edit (`Tree::edit`): tree-sitter reuses
    /// what the edit left alone. The same tree as `parse` gives.
    pub fn reparse(&mut self, lang: Lang, text: &[u8], old: &Tree) -> Result<Tree, Error> {
        self.parse_from(lang, text, Some(old))
    }

    fn parse_from(&mut self, lang: Lang, text: &[u8], old: Option<&Tree>) -> Result<Tree, Error> {
        if self.lang != Some(lang) {
            self.inner
                .set_language(lang.language())
                .map_err(|e| Error::Grammar {
                    lang: lang.name(),
                    message: e.to_string(),
                })?;
            self.lang = Some(lang);
        }
        self.inner
            .parse(text, old)
            .ok_or(Error::Parse { lang: lang.name() })
    }
}

/// `text` parsed with this thread's parser.
pub fn parse(lang: Lang, text: &[u8]) -> Result<Tree, Error> {
    thread_local! {
        static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
    }
    PARSER.with(|cell| {
        cell.borrow_mut()
            .get_or_insert_with(Parser::new)
            .parse(lang, text)
    })
}

/// tree-sitter allocates its trees a node at a time with the C allocator;
/// mimalloc serves those blocks faster than glibc's malloc when both cores
/// parse (a full cold index of 5.5 MB of Rust: 380 ms to 345 ms).
fn use_fast_allocator() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: tree-sitter objects must be freed by the allocator that
        // made them. This runs once, before the process's first parser
        // exists: every parser is made by `Parser::new`, and a language
        // (the only other tree-sitter object) is static data, never freed.
        unsafe {
            tree_sitter::set_allocator(Some(tree_sitter::Allocator {
                malloc: libmimalloc_sys::mi_malloc,
                calloc: libmimalloc_sys::mi_calloc,
                realloc: libmimalloc_sys::mi_realloc,
                free: libmimalloc_sys::mi_free,
            }));
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_name_finds_its_id_and_no_other_name_does() {
        for lang in Lang::ALL {
            let language = lang.language();
            let names = lang.names();
            let mut by_slot = 0;
            for id in 1..=language.field_count() as u16 {
                let name = language.field_name_for_id(id).expect("named field");
                assert_eq!(
                    names.field_id(name).map(NonZeroU16::get),
                    Some(id),
                    "{name}"
                );
                by_slot += usize::from(names.by_slot[field_slot(name)] == id);
            }
            // The slots, not the fallback scan, answer for nearly every name.
            assert!(by_slot + 3 >= language.field_count(), "{by_slot}");
            assert_eq!(names.field_id("no_such_field"), None);
            assert_eq!(names.field_id(""), None);
        }
    }

    #[test]
    fn languages_by_extension() {
        assert_eq!(Lang::of_path("src/a/b.rs"), Some(Lang::Rust));
        assert_eq!(Lang::of_path("pkg/__init__.py"), Some(Lang::Python));
        assert_eq!(Lang::of_path("pkg/stubs.pyi"), Some(Lang::Python));
        assert_eq!(Lang::of_path("README.md"), None);
        assert_eq!(Lang::of_path("Makefile"), None);
    }

    #[test]
    fn one_parser_reads_either_language_in_turn() {
        let mut p = Parser::new();
        for (lang, text, root) in [
            (Lang::Rust, "fn f() {}\n", "source_file"),
            (Lang::Python, "def f():\n    pass\n", "module"),
            (Lang::Rust, "struct S;\n", "source_file"),
        ] {
            let tree = p.parse(lang, text.as_bytes()).expect("parses");
            assert_eq!(tree.root_node().kind(), root);
            assert!(!tree.root_node().has_error());
            let again = parse(lang, text.as_bytes()).expect("parses");
            assert_eq!(again.root_node().to_sexp(), tree.root_node().to_sexp());
        }
        // A file with syntax errors still has a tree.
        let broken = parse(Lang::Python, b"def f(:\n").expect("a tree");
        assert!(broken.root_node().has_error());
    }
}
