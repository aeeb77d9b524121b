//! Per-file extraction: parse one blob with tree-sitter and walk the tree
//! once, reading definitions, imports, locals and reference sites from the
//! nodes the language's node table names (see `lang`). It sees one file
//! only; resolving names across files is `index`'s job.

mod python;
mod rust;
mod tokens;

use std::collections::HashMap;

use tree_sitter::{Node, TreeCursor};

use super::Error;
use super::lang::{Fnv, FnvBuild, Lang, Names};
use super::symbols::{Def, FileSymbols, Kind, Receiver, Ref};

/// Reusable parsing state for one thread.
#[derive(Default)]
pub struct Extractor {
    parser: crate::syntax::Parser,
}

impl Extractor {
    pub fn new() -> Extractor {
        Extractor::default()
    }

    /// Extract the symbols of one file's contents. Bytes that are not UTF-8
    /// are replaced, so a stray byte costs a name, not the file.
    pub fn extract(&mut self, lang: Lang, bytes: &[u8]) -> Result<FileSymbols, Error> {
        let text = std::sync::Arc::new(crate::syntax::Text::new(bytes.to_vec()));
        let parsed = crate::syntax::Parsed::new(lang, text)?;
        self.extract_parsed(&parsed)
    }

    /// Extract the symbols of a parsed file (the review's store parsed it:
    /// `syntax::Store`).
    pub fn extract_parsed(&mut self, parsed: &crate::syntax::Parsed) -> Result<FileSymbols, Error> {
        let lang = parsed.lang();
        let grammar = crate::impact::lang::grammar(lang)?;
        let src = parsed.src();
        let root = parsed.root();
        // An item macro's body read as items is a text of its own, parsed
        // here: nobody else reads it.
        if lang == Lang::Rust {
            if let Some(rust::Opened {
                text,
                found,
                blanks,
            }) = rust::unwrap_item_macros(root, src, &mut self.parser)
            {
                // Parsed again from the file's tree, told where the text
                // changed: what lies outside the macros is reused, not
                // parsed twice (tokio wraps half its code in such macros).
                let mut old = parsed.tree().clone();
                edit_blanks(&mut old, src, &blanks);
                let tree = self.parser.reparse(lang, text.as_bytes(), &old)?;
                let root = tree.root_node();
                let mut out = rust::build(grammar, &text, root, &found);
                out.syntax_errors = root.has_error();
                return Ok(out);
            }
        }
        let mut out = match lang {
            Lang::Rust => rust::build(grammar, src, root, &[]),
            Lang::Python => python::build(grammar, src, root),
        };
        out.syntax_errors = root.has_error();
        Ok(out)
    }
}

/// Tell `tree` (of `src`) that the byte ranges `blanks` (in order, not
/// overlapping) were overwritten with as many bytes, line breaks kept: each
/// range's rows and columns stay.
fn edit_blanks(tree: &mut tree_sitter::Tree, src: &str, blanks: &[(usize, usize)]) {
    let bytes = src.as_bytes();
    // Rows counted once over the text, range by range.
    let (mut at, mut row, mut line_start) = (0, 0, 0);
    let mut point = |pos: usize| {
        for i in memchr::memchr_iter(b'\n', &bytes[at..pos]) {
            row += 1;
            line_start = at + i + 1;
        }
        at = pos;
        tree_sitter::Point::new(row, pos - line_start)
    };
    for &(from, to) in blanks {
        let (start, end) = (point(from), point(to));
        tree.edit(&tree_sitter::InputEdit {
            start_byte: from,
            old_end_byte: to,
            new_end_byte: to,
            start_position: start,
            old_end_position: end,
            new_end_position: end,
        });
    }
}

/// An ancestor during a walk: the node, and how many of its children come
/// after the one being visited.
#[derive(Clone, Copy)]
struct Frame<'t> {
    node: Node<'t>,
    after: u32,
}

/// The field the walk's current node fills in its parent, found only when
/// asked: finding it walks the cursor's stack, and most nodes' field is
/// never read (a literal's, a block's, every node's in Python's first pass).
#[derive(Clone, Copy)]
struct Field<'c, 't> {
    cursor: &'c TreeCursor<'t>,
    names: &'c Names,
    id: u16,
}

impl Field<'_, '_> {
    fn get(self) -> Option<&'static str> {
        field_of(self.cursor, self.names, self.id)
    }
}

/// Visit the nodes under `root` in document order, each with its kind id,
/// the field it fills and its ancestors (nearest last); `visit` says
/// whether to descend.
/// Everything is read in this one pass: reference sites need every
/// identifier's parent and field, which a cursor knows for free while
/// `Node::parent` walks down from the root each time.
fn walk<'t>(
    root: Node<'t>,
    names: &Names,
    mut visit: impl FnMut(Node<'t>, u16, Field<'_, 't>, &[Frame<'t>]) -> bool,
) {
    let mut cursor = root.walk();
    let mut stack: Vec<Frame<'t>> = Vec::new();
    loop {
        let node = cursor.node();
        let id = node.kind_id();
        let field = Field {
            cursor: &cursor,
            names,
            id,
        };
        if visit(node, id, field, &stack) {
            // Most nodes are leaves, and asking a node for its child count
            // costs a tenth of a cursor's failed step down.
            let count = node.child_count();
            if count > 0 && cursor.goto_first_child() {
                stack.push(Frame {
                    node,
                    after: count - 1,
                });
                continue;
            }
        }
        // Up from the last child without trying its next sibling: a failed
        // step climbs through the hidden nodes above it, as costly as one
        // that succeeds.
        loop {
            let Some(parent) = stack.last_mut() else {
                return;
            };
            if parent.after > 0 {
                parent.after -= 1;
                if cursor.goto_next_sibling() {
                    break;
                }
            }
            debug_assert!(
                !cursor.clone().goto_next_sibling(),
                "a node's child count is the number of children its cursor visits"
            );
            cursor.goto_parent();
            stack.pop();
        }
    }
}

/// The field the cursor's node (of kind `id`) fills in its parent. Only
/// named nodes are asked: finding a field walks the cursor's stack, and no
/// extractor reads an anonymous token's (such as a binary operator's).
fn field_of(cursor: &TreeCursor, names: &Names, id: u16) -> Option<&'static str> {
    if names.is_named(id) {
        names.field(cursor.field_id())
    } else {
        None
    }
}

/// The text of a node; empty if its range is not on character boundaries,
/// which cannot happen for tokens of valid UTF-8.
fn text<'s>(node: Node, src: &'s str) -> &'s str {
    src.get(node.byte_range()).unwrap_or("")
}

fn line(node: Node) -> u32 {
    node.start_position().row as u32 + 1
}

/// The 1-based column of a node's first character on its line.
fn column(node: Node, src: &str) -> u32 {
    let pos = node.start_byte();
    chars_from(src, pos - node.start_position().column.min(pos), pos)
}

/// The 1-based column of byte `pos` on its line, in characters.
fn column_at(src: &str, pos: usize) -> u32 {
    let pos = pos.min(src.len());
    let start = memchr::memrchr(b'\n', &src.as_bytes()[..pos]).map_or(0, |i| i + 1);
    chars_from(src, start, pos)
}

/// One more than the characters in `src[start..pos]`: bytes when they
/// are all ASCII, as they nearly always are before a name.
fn chars_from(src: &str, start: usize, pos: usize) -> u32 {
    let bytes = &src.as_bytes()[start..pos];
    let n = if bytes.is_ascii() {
        bytes.len()
    } else {
        // Not on a character boundary only for a range that is not a
        // token of valid text: counted in bytes then.
        src.get(start..pos)
            .map_or(bytes.len(), |s| s.chars().count())
    };
    n as u32 + 1
}

/// The text a definition's signature is read from: `start..end`, less the
/// `bodies` inside it (a trait's default method bodies), which count as
/// one token `{}`. Hashed once the file's comments are known (`finish`).
#[derive(Debug, Clone, Default)]
struct Sig {
    start: usize,
    end: usize,
    bodies: Vec<(usize, usize)>,
    /// Members hashed one by one (`Def::members`), inside `bodies`.
    members: Vec<(usize, usize)>,
}

impl Sig {
    fn new(start: usize, end: usize) -> Sig {
        Sig {
            start,
            end,
            bodies: Vec::new(),
            members: Vec::new(),
        }
    }
}

/// Hash the tokens of a signature: comments and whitespace are not
/// tokens (a space is kept only where it separates two words), and a
/// trailing comma before a closing bracket is not either, so reformatting,
/// a comment or a formatter's trailing comma is not a signature change.
/// `comments` are the file's comment ranges, in order.
fn signature_hash(src: &str, sig: &Sig, comments: &[(usize, usize)]) -> u64 {
    let bytes = src.as_bytes();
    // Bodies and comments inside the signature, in order (`true`: a body).
    let mut skips: Vec<(usize, usize, bool)> = sig
        .bodies
        .iter()
        .map(|&(s, e)| (s, e, true))
        .chain(
            comments[comments.partition_point(|c| c.1 <= sig.start)..]
                .iter()
                .take_while(|c| c.0 < sig.end)
                .map(|&(s, e)| (s, e, false)),
        )
        .filter(|&(s, _, _)| s >= sig.start && s < sig.end)
        .collect();
    skips.sort_unstable();
    let mut skips = skips.into_iter().peekable();
    let mut h = TokenHash::default();
    let mut pos = sig.start;
    while pos < sig.end {
        if let Some(&(s, e, body)) = skips.peek() {
            if pos >= s {
                pos = e.max(pos);
                skips.next();
                if body {
                    h.token(b"{}");
                } else {
                    h.space = true;
                }
                continue;
            }
        }
        let b = bytes[pos];
        if b.is_ascii_whitespace() {
            h.space = true;
        } else {
            h.token(&[b]);
        }
        pos += 1;
    }
    h.finish()
}

/// `signature_hash`'s state: the hash of what was written, and what is
/// held back until the next token says whether it counts.
#[derive(Default)]
struct TokenHash {
    h: Fnv,
    /// The last byte written.
    prev: u8,
    /// Whitespace or a comment since the last token.
    space: bool,
    /// A comma since the last token.
    comma: bool,
}

impl TokenHash {
    fn token(&mut self, token: &[u8]) {
        let word = |b: u8| b == b'_' || b.is_ascii_alphanumeric() || b >= 0x80;
        let first = token[0];
        if std::mem::take(&mut self.comma) && !matches!(first, b')' | b']' | b'}' | b'>') {
            self.h.write(b",");
            self.prev = b',';
        }
        if std::mem::take(&mut self.space) && word(self.prev) && word(first) {
            self.h.write(b" ");
        }
        if token == b"," {
            self.comma = true;
        } else {
            self.h.write(token);
            self.prev = token[token.len() - 1];
        }
    }

    fn finish(mut self) -> u64 {
        if self.comma {
            self.h.write(b",");
        }
        self.h.finish()
    }
}

/// Definitions under construction, in document order, with their byte
/// ranges for scope lookup.
#[derive(Default)]
struct Defs {
    defs: Vec<Def>,
    ranges: Vec<(usize, usize)>,
    /// Each definition's signature text (see `Sig`).
    sigs: Vec<Sig>,
    /// The definitions whose range the last one pushed is inside.
    open: Vec<u32>,
    /// The file's comments, in order.
    comments: Vec<(usize, usize)>,
}

impl Defs {
    /// Add the next definition met in a walk (document order: a definition
    /// comes before the ones inside it), linked to the one enclosing it.
    fn push(&mut self, mut def: Def, range: (usize, usize), sig: Sig) {
        while let Some(&top) = self.open.last() {
            if range.0 >= self.ranges[top as usize].1 {
                self.open.pop();
            } else {
                break;
            }
        }
        def.parent = self.open.last().copied();
        if let Some(p) = def.parent {
            def.test |= self.defs[p as usize].test;
        }
        self.open.push(self.defs.len() as u32);
        self.defs.push(def);
        self.ranges.push(range);
        self.sigs.push(sig);
    }

    /// Note a comment met in the walk (document order).
    fn comment(&mut self, node: Node) {
        self.comments.push((node.start_byte(), node.end_byte()));
    }

    /// The innermost definition whose range contains `pos`.
    fn innermost(&self, pos: usize) -> Option<u32> {
        let idx = self.ranges.partition_point(|r| r.0 <= pos);
        let mut cur = idx.checked_sub(1).map(|i| i as u32);
        while let Some(i) = cur {
            let (s, e) = self.ranges[i as usize];
            if s <= pos && pos < e {
                return Some(i);
            }
            cur = self.defs[i as usize].parent;
        }
        None
    }

    /// The nearest enclosing function or method: the scope of locals.
    fn function_of(&self, mut scope: Option<u32>) -> Option<u32> {
        while let Some(i) = scope {
            let d = &self.defs[i as usize];
            if matches!(d.kind, Kind::Function | Kind::Method) {
                return Some(i);
            }
            scope = d.parent;
        }
        None
    }
}

/// A name bound inside a function: a parameter, `let`, loop or match binding.
struct Local {
    pos: usize,
    /// What calling a method on it means, when evident: `Receiver::Type`
    /// or `Receiver::Returned`.
    ty: Option<Receiver>,
    /// For a closure (`let m = |p| a.f(p);`): what calling it returns,
    /// when evident.
    calls: Option<Receiver>,
}

/// Locals by name, each with its function.
#[derive(Default)]
struct Locals {
    /// Looked up for every identifier, never iterated: hashed with FNV.
    by_name: HashMap<String, Vec<(Option<u32>, Local)>, FnvBuild>,
}

impl Locals {
    fn add(&mut self, func: Option<u32>, name: &str, pos: usize, ty: Option<Receiver>) {
        self.by_name.entry(name.to_string()).or_default().push((
            func,
            Local {
                pos,
                ty,
                calls: None,
            },
        ));
    }

    /// A closure bound to `name`, calling which returns `calls`.
    fn add_closure(&mut self, func: Option<u32>, name: &str, pos: usize, calls: Receiver) {
        self.by_name.entry(name.to_string()).or_default().push((
            func,
            Local {
                pos,
                ty: None,
                calls: Some(calls),
            },
        ));
    }

    /// The latest binding of `name` in `func` at or before `pos`.
    fn before(&self, func: Option<u32>, name: &str, pos: usize) -> Option<&Local> {
        let list = self.by_name.get(name)?;
        list.iter()
            .filter(|(f, l)| *f == func && l.pos <= pos)
            .map(|(_, l)| l)
            .max_by_key(|l| l.pos)
    }

    /// Any binding of `name` in `func`, wherever it is.
    fn any(&self, func: Option<u32>, name: &str) -> Option<&Local> {
        let list = self.by_name.get(name)?;
        list.iter().rev().find(|(f, _)| *f == func).map(|(_, l)| l)
    }
}

/// Finished symbols: signatures hashed, references sorted by line for
/// stable output.
fn finish(
    src: &str,
    mut defs: Defs,
    mut refs: Vec<Ref>,
    imports: Vec<super::symbols::Import>,
) -> FileSymbols {
    for (d, sig) in defs.defs.iter_mut().zip(&defs.sigs) {
        d.signature = signature_hash(src, sig, &defs.comments);
        d.members = sig
            .members
            .iter()
            .map(|&(s, e)| signature_hash(src, &Sig::new(s, e), &defs.comments))
            .collect();
    }
    refs.sort_by_key(|r| r.line);
    FileSymbols::new(defs.defs, refs, imports)
}

fn starts_upper(s: &str) -> bool {
    s.chars().next().is_some_and(char::is_uppercase)
}

#[cfg(test)]
mod tests;
