//! Changed symbols: map the zero-context hunks of a file diff to the
//! definitions they touch on each side and classify each change. Pure logic
//! over the diff model and extracted symbols; it never reads blobs.

use std::collections::{BTreeSet, HashMap};

use serde::Serialize;

use super::symbols::{Def, FileSymbols, Kind};
use crate::git::{FileDiff, LineKind};

/// How a definition changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    Added,
    /// A struct that gained named fields or an enum that gained variants,
    /// nothing else of it changed: no caller's behaviour changes.
    MembersAdded,
    BodyChanged,
    SignatureChanged,
    Removed,
}

impl Change {
    pub fn label(self) -> &'static str {
        match self {
            Change::Added => "added",
            Change::MembersAdded => "members added",
            Change::BodyChanged => "body changed",
            Change::SignatureChanged => "signature changed",
            Change::Removed => "removed",
        }
    }
}

impl std::fmt::Display for Change {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.label())
    }
}

/// A touched definition, by its index on the side where it exists at head
/// (or on the base side for a removal). `None` is the file's module-level
/// code (lines outside any definition).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Touched {
    pub def: Option<u32>,
    /// True when `def` indexes the base-side symbols (removals).
    pub base_side: bool,
    pub change: Change,
}

/// One run of consecutive changed lines: removed base lines and added head
/// lines, each (line number, blank).
#[derive(Debug, Default, PartialEq)]
struct Block {
    removed: Vec<(u32, bool)>,
    added: Vec<(u32, bool)>,
}

fn blocks(fd: &FileDiff) -> Vec<Block> {
    let mut out = Vec::new();
    for hunk in &fd.hunks {
        let mut cur = Block::default();
        for line in &hunk.lines {
            let blank = line.text.trim().is_empty();
            match (line.kind, line.old_lineno, line.new_lineno) {
                (LineKind::Removed, Some(n), _) => cur.removed.push((n, blank)),
                (LineKind::Added, _, Some(n)) => cur.added.push((n, blank)),
                _ => {
                    if !cur.removed.is_empty() || !cur.added.is_empty() {
                        out.push(std::mem::take(&mut cur));
                    }
                }
            }
        }
        if !cur.removed.is_empty() || !cur.added.is_empty() {
            out.push(cur);
        }
    }
    out
}

/// Definitions touched by `lines` (one block on one side): the innermost
/// definition around each line and every definition wholly inside the block.
/// Returns whether a non-blank line fell outside every definition.
fn touch(syms: &FileSymbols, lines: &[(u32, bool)], out: &mut BTreeSet<u32>) -> bool {
    let mut module = false;
    for &(l, blank) in lines {
        let inner = syms
            .defs
            .iter()
            .enumerate()
            .filter(|(_, d)| d.start_line <= l && l <= d.end_line)
            .max_by_key(|(i, d)| (d.start_line, *i))
            .map(|(i, _)| i as u32);
        match inner {
            Some(i) => {
                out.insert(i);
            }
            None if !blank => module = true,
            None => {}
        }
    }
    let lo = lines.iter().map(|l| l.0).min().unwrap_or(0);
    let hi = lines.iter().map(|l| l.0).max().unwrap_or(0);
    for (i, d) in syms.defs.iter().enumerate() {
        if d.start_line >= lo && d.end_line <= hi {
            out.insert(i as u32);
        }
    }
    module
}

/// How a definition present on both sides changed.
fn classify(base: &Def, head: &Def) -> Change {
    if base.signature != head.signature {
        Change::SignatureChanged
    } else if base.members == head.members {
        Change::BodyChanged
    } else if subsequence(&base.members, &head.members) {
        Change::MembersAdded
    } else {
        Change::SignatureChanged
    }
}

/// Whether `a` is `b` with some items left out, in order.
fn subsequence(a: &[u64], b: &[u64]) -> bool {
    let mut rest = b.iter();
    a.iter().all(|x| rest.any(|y| y == x))
}

/// The definitions a file diff changes, classified. `base` and `head` are
/// the symbols of each side (None where the side does not exist).
pub fn touched(
    fd: &FileDiff,
    base: Option<&FileSymbols>,
    head: Option<&FileSymbols>,
) -> Vec<Touched> {
    let mut head_t = BTreeSet::new();
    let mut base_t = BTreeSet::new();
    let mut module = false;
    for b in blocks(fd) {
        if let Some(h) = head {
            if !b.added.is_empty() {
                module |= touch(h, &b.added, &mut head_t);
            }
        }
        if let Some(s) = base {
            if !b.removed.is_empty() {
                module |= touch(s, &b.removed, &mut base_t);
            }
        }
    }
    let key =
        |syms: &FileSymbols, i: u32| (syms.local_path(i as usize), syms.defs[i as usize].kind);
    let ids = |syms: Option<&FileSymbols>| -> HashMap<(String, Kind), Vec<u32>> {
        let mut m: HashMap<(String, Kind), Vec<u32>> = HashMap::new();
        if let Some(s) = syms {
            for i in 0..s.defs.len() as u32 {
                m.entry(key(s, i)).or_default().push(i);
            }
        }
        m
    };
    let base_ids = ids(base);
    let head_ids = ids(head);
    // Pair same-named definitions by their order of occurrence.
    let counterpart = |syms: &FileSymbols,
                       i: u32,
                       other: &HashMap<(String, Kind), Vec<u32>>,
                       own: &HashMap<(String, Kind), Vec<u32>>| {
        let k = key(syms, i);
        let pos = own.get(&k)?.iter().position(|&x| x == i)?;
        other.get(&k)?.get(pos).copied()
    };

    // A variant added to an enum changes the enum: its users are the ones
    // to look at, and whether they list every variant.
    if let Some(h) = head {
        let enums: Vec<u32> = head_t
            .iter()
            .filter(|&&i| h.defs[i as usize].kind == Kind::Variant)
            .filter(|&&i| counterpart(h, i, &base_ids, &head_ids).is_none())
            .filter_map(|&i| h.defs[i as usize].parent)
            .filter(|&p| h.defs[p as usize].kind == Kind::Enum)
            .collect();
        head_t.extend(enums);
    }

    let mut out: Vec<Touched> = Vec::new();
    let mut head_done = BTreeSet::new();
    if let Some(h) = head {
        for &i in &head_t {
            let change =
                match base.and_then(|s| counterpart(h, i, &base_ids, &head_ids).map(|j| (s, j))) {
                    Some((s, j)) => classify(&s.defs[j as usize], &h.defs[i as usize]),
                    None => Change::Added,
                };
            head_done.insert(i);
            out.push(Touched {
                def: Some(i),
                base_side: false,
                change,
            });
        }
    }
    if let Some(s) = base {
        for &j in &base_t {
            match head.and_then(|h| counterpart(s, j, &head_ids, &base_ids).map(|i| (h, i))) {
                Some((h, i)) => {
                    if head_done.insert(i) {
                        let change = classify(&s.defs[j as usize], &h.defs[i as usize]);
                        out.push(Touched {
                            def: Some(i),
                            base_side: false,
                            change,
                        });
                    }
                }
                None => out.push(Touched {
                    def: Some(j),
                    base_side: true,
                    change: Change::Removed,
                }),
            }
        }
    }
    // A definition added or removed with its parent is part of that change,
    // and so is a variant added to an enum that is otherwise kept.
    let collapsed: Vec<Touched> =
        out.iter()
            .filter(|t| {
                let Some(i) = t.def else { return true };
                if !matches!(t.change, Change::Added | Change::Removed) {
                    return true;
                }
                let syms = if t.base_side { base } else { head };
                let Some(syms) = syms else { return true };
                let def = &syms.defs[i as usize];
                if t.change == Change::Added && def.kind == Kind::Variant {
                    if let Some(p) = def.parent {
                        if out.iter().any(|o| o.def == Some(p) && !o.base_side) {
                            return false;
                        }
                    }
                }
                let mut cur = def.parent;
                while let Some(p) = cur {
                    if out.iter().any(|o| {
                        o.def == Some(p) && o.base_side == t.base_side && o.change == t.change
                    }) {
                        return false;
                    }
                    cur = syms.defs[p as usize].parent;
                }
                true
            })
            .cloned()
            .collect();
    let mut out = collapsed;
    if module {
        let change = match (base.is_some(), head.is_some()) {
            (false, true) => Change::Added,
            (true, false) => Change::Removed,
            _ => Change::BodyChanged,
        };
        out.push(Touched {
            def: None,
            base_side: head.is_none(),
            change,
        });
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::git::{FileStatus, Hunk, Line};
    use crate::impact::{Extractor, Lang};

    /// A zero-context diff of two texts (longest common subsequence).
    pub(crate) fn diff(path: &str, old: &str, new: &str) -> FileDiff {
        let a: Vec<&str> = old.lines().collect();
        let b: Vec<&str> = new.lines().collect();
        let mut lcs = vec![vec![0usize; b.len() + 1]; a.len() + 1];
        for i in (0..a.len()).rev() {
            for j in (0..b.len()).rev() {
                lcs[i][j] = if a[i] == b[j] {
                    lcs[i + 1][j + 1] + 1
                } else {
                    lcs[i + 1][j].max(lcs[i][j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        let mut lines = Vec::new();
        let line = |kind, o: Option<usize>, n: Option<usize>, text: &str| Line {
            kind,
            old_lineno: o.map(|x| x as u32 + 1),
            new_lineno: n.map(|x| x as u32 + 1),
            text: text.to_string(),
            no_newline: false,
        };
        while i < a.len() || j < b.len() {
            if i < a.len() && j < b.len() && a[i] == b[j] {
                lines.push(line(LineKind::Context, Some(i), Some(j), a[i]));
                i += 1;
                j += 1;
            } else if j < b.len() && (i == a.len() || lcs[i][j + 1] >= lcs[i + 1][j]) {
                lines.push(line(LineKind::Added, None, Some(j), b[j]));
                j += 1;
            } else {
                lines.push(line(LineKind::Removed, Some(i), None, a[i]));
                i += 1;
            }
        }
        FileDiff {
            path: path.to_string(),
            old_path: None,
            similarity: None,
            status: FileStatus::Modified,
            binary: false,
            old_mode: None,
            new_mode: None,
            old_blob: Some("a".repeat(40)),
            new_blob: Some("b".repeat(40)),
            hunks: vec![Hunk {
                old_start: 1,
                old_lines: a.len() as u32,
                new_start: 1,
                new_lines: b.len() as u32,
                context: String::new(),
                lines,
            }],
            additions: 0,
            deletions: 0,
            not_utf8: false,
        }
    }

    fn classify(old: &str, new: &str) -> Vec<(String, Change)> {
        classify_in(Lang::Rust, old, new)
    }

    fn classify_in(lang: Lang, old: &str, new: &str) -> Vec<(String, Change)> {
        let mut ex = Extractor::new();
        let base = ex.extract(lang, old.as_bytes()).expect("base parses");
        let head = ex.extract(lang, new.as_bytes()).expect("head parses");
        let fd = diff("src/lib.rs", old, new);
        let mut out: Vec<(String, Change)> = touched(&fd, Some(&base), Some(&head))
            .into_iter()
            .map(|t| {
                let name = match (t.def, t.base_side) {
                    (None, _) => "(module)".to_string(),
                    (Some(d), true) => base.local_path(d as usize),
                    (Some(d), false) => head.local_path(d as usize),
                };
                (name, t.change)
            })
            .collect();
        out.sort();
        out
    }

    const BASE: &str = "use std::fmt;\n\npub struct Shelf {\n    books: Vec<u32>,\n}\n\nimpl Shelf {\n    /// Adds a book.\n    pub fn add(&mut self, id: u32) {\n        self.books.push(id);\n    }\n\n    pub fn count(&self) -> usize {\n        self.books.len()\n    }\n}\n\nfn helper() -> u32 {\n    1\n}\n";

    #[test]
    fn a_body_edit_changes_only_the_enclosing_function() {
        let new = BASE.replace("self.books.len()", "self.books.len() + 0");
        assert_eq!(
            classify(BASE, &new),
            vec![("Shelf::count".to_string(), Change::BodyChanged)]
        );
    }

    #[test]
    fn a_parameter_type_edit_is_a_signature_change() {
        let new = BASE.replace("id: u32)", "id: u64)");
        assert_eq!(
            classify(BASE, &new),
            vec![("Shelf::add".to_string(), Change::SignatureChanged)]
        );
    }

    #[test]
    fn a_doc_comment_edit_belongs_to_its_item_without_changing_its_signature() {
        let new = BASE.replace("/// Adds a book.", "/// Adds one book.");
        assert_eq!(
            classify(BASE, &new),
            vec![("Shelf::add".to_string(), Change::BodyChanged)]
        );
    }

    #[test]
    fn added_and_removed_functions_are_classified_on_their_side() {
        let new = BASE.replace(
            "fn helper() -> u32 {\n    1\n}\n",
            "fn other() -> u32 {\n    2\n}\n",
        );
        assert_eq!(
            classify(BASE, &new),
            vec![
                ("helper".to_string(), Change::Removed),
                ("other".to_string(), Change::Added)
            ]
        );
    }

    #[test]
    fn a_struct_field_edit_is_a_signature_change_of_the_struct() {
        let new = BASE.replace("books: Vec<u32>", "books: Vec<u64>");
        assert_eq!(
            classify(BASE, &new),
            vec![("Shelf".to_string(), Change::SignatureChanged)]
        );
    }

    #[test]
    fn lines_outside_definitions_are_the_module() {
        let new = BASE.replace("use std::fmt;", "use std::fmt::Display;");
        assert_eq!(
            classify(BASE, &new),
            vec![("(module)".to_string(), Change::BodyChanged)]
        );
    }

    #[test]
    fn a_removed_impl_block_reports_each_method_and_its_header_as_module_code() {
        let new = BASE.replace(
            "impl Shelf {\n    /// Adds a book.\n    pub fn add(&mut self, id: u32) {\n        self.books.push(id);\n    }\n\n    pub fn count(&self) -> usize {\n        self.books.len()\n    }\n}\n\n",
            "",
        );
        assert_eq!(
            classify(BASE, &new),
            vec![
                ("(module)".to_string(), Change::BodyChanged),
                ("Shelf::add".to_string(), Change::Removed),
                ("Shelf::count".to_string(), Change::Removed)
            ]
        );
    }

    fn members(name: &str) -> Vec<(String, Change)> {
        vec![(name.to_string(), Change::MembersAdded)]
    }

    #[test]
    fn a_struct_gaining_named_fields_only_gains_members() {
        let new = BASE.replace(
            "    books: Vec<u32>,\n",
            "    books: Vec<u32>,\n    /// Who lent them.\n    pub lender: Option<String>,\n",
        );
        assert_eq!(classify(BASE, &new), members("Shelf"));
        let new = BASE.replace(
            "    books: Vec<u32>,\n",
            "    first: u8,\n    books: Vec<u32>,\n",
        );
        assert_eq!(classify(BASE, &new), members("Shelf"), "inserted first");
        // Anything else of it changed is a signature change: a field gone,
        // retyped or renamed, a generic parameter, a visibility.
        for new in [
            BASE.replace("    books: Vec<u32>,\n", "    more: u8,\n"),
            BASE.replace(
                "    books: Vec<u32>,\n",
                "    books: Vec<u64>,\n    more: u8,\n",
            ),
            BASE.replace("pub struct Shelf {", "pub struct Shelf<T> {")
                .replace(
                    "    books: Vec<u32>,\n",
                    "    books: Vec<u32>,\n    more: T,\n",
                ),
            BASE.replace("pub struct Shelf {", "struct Shelf {")
                .replace(
                    "    books: Vec<u32>,\n",
                    "    books: Vec<u32>,\n    more: u8,\n",
                ),
        ] {
            assert_eq!(classify(BASE, &new), signature("Shelf"), "{new}");
        }
        // A tuple struct's new field changes every `W(a)`.
        assert_eq!(
            classify("pub struct W(u8);\n", "pub struct W(u8, u16);\n"),
            signature("W")
        );
    }

    const ENUM: &str = "pub enum Mode {\n    /// Fast.\n    Fast,\n    Slow(u8),\n}\n";

    #[test]
    fn an_enum_gaining_a_variant_gains_members_and_a_removed_variant_is_removed() {
        let new = ENUM.replace(
            "    Slow(u8),\n",
            "    Slow(u8),\n    /// Careful.\n    Careful { depth: u8 },\n",
        );
        assert_eq!(classify(ENUM, &new), members("Mode"));
        let new = ENUM.replace("    Fast,\n", "    Fast,\n    Medium,\n");
        assert_eq!(classify(ENUM, &new), members("Mode"));
        let new = ENUM.replace("    /// Fast.\n    Fast,\n", "");
        assert_eq!(
            classify(ENUM, &new),
            vec![("Mode::Fast".to_string(), Change::Removed)]
        );
        let new = ENUM.replace("Slow(u8)", "Slow(u16)");
        assert_eq!(classify(ENUM, &new), signature("Mode::Slow"));
    }

    fn body(name: &str) -> Vec<(String, Change)> {
        vec![(name.to_string(), Change::BodyChanged)]
    }

    fn signature(name: &str) -> Vec<(String, Change)> {
        vec![(name.to_string(), Change::SignatureChanged)]
    }

    #[test]
    fn comments_in_a_rust_signature_are_not_tokens() {
        let new = BASE.replace(
            "pub fn count(&self) -> usize {",
            "pub fn count(&self /* shared */) -> usize { // cheap",
        );
        assert_eq!(classify(BASE, &new), body("Shelf::count"));
        // A field's comment, doc comment or trailing note is no change of
        // the struct's fields.
        let new = BASE.replace(
            "    books: Vec<u32>,\n",
            "    /// The ids.\n    books: Vec<u32>, // sorted\n    // more later\n",
        );
        assert_eq!(classify(BASE, &new), body("Shelf"));
    }

    #[test]
    fn reformatting_and_trailing_commas_are_not_rust_signature_changes() {
        let new = BASE.replace(
            "pub fn add(&mut self, id: u32) {",
            "pub fn add(\n        &mut self,\n        id:u32,\n    ) {",
        );
        assert_eq!(classify(BASE, &new), body("Shelf::add"));
        let new = BASE.replace("books: Vec<u32>,", "books: Vec<u32,>,");
        assert_eq!(classify(BASE, &new), body("Shelf"));
        // Tokens that change the meaning still do.
        let new = BASE.replace(
            "pub fn add(&mut self, id: u32)",
            "pub fn add(&mut self, id: u32, n: u8)",
        );
        assert_eq!(classify(BASE, &new), signature("Shelf::add"));
        let new = BASE.replace("pub fn count(&self)", "pub(crate) fn count(&self)");
        assert_eq!(classify(BASE, &new), signature("Shelf::count"));
        let new = BASE.replace("fn helper() -> u32", "fn helper() -> u 32");
        assert_eq!(classify(BASE, &new), signature("helper"));
    }

    const PY: &str = "import os\n\n\nclass Shelf(Base):\n    @property\n    def size(self):\n        return 1\n\n    @route(\"/add\", methods=[\"POST\"])\n    def add(self, book, count=1):\n        return book\n";

    #[test]
    fn comments_reformatting_and_trailing_commas_are_not_python_signature_changes() {
        let py = |old: &str, new: &str| classify_in(Lang::Python, old, new);
        let new = PY.replace(
            "def add(self, book, count=1):",
            "def add(self, book, count=1):  # may raise",
        );
        assert_eq!(py(PY, &new), body("Shelf::add"));
        let new = PY.replace("class Shelf(Base):", "class Shelf(Base):  # see docs");
        assert_eq!(py(PY, &new), body("Shelf"));
        let new = PY.replace(
            "def add(self, book, count=1):",
            "def add(\n        self,\n        book,  # a Book\n        count = 1,\n    ):",
        );
        assert_eq!(py(PY, &new), body("Shelf::add"));
        let new = PY.replace(
            "@route(\"/add\", methods=[\"POST\"])",
            "@route(\n        \"/add\",\n        methods=[\"POST\",],\n    )  # the form",
        );
        assert_eq!(py(PY, &new), body("Shelf::add"));
        let new = PY.replace("count=1", "count=2");
        assert_eq!(py(PY, &new), signature("Shelf::add"));
    }

    #[test]
    fn python_decorators_are_part_of_the_signature() {
        let py = |old: &str, new: &str| classify_in(Lang::Python, old, new);
        let new = PY.replace("    @property\n", "    @functools.cached_property\n");
        assert_eq!(py(PY, &new), signature("Shelf::size"));
        let new = PY.replace("    @property\n", "");
        assert_eq!(py(PY, &new), signature("Shelf::size"));
        let new = PY.replace("methods=[\"POST\"]", "methods=[\"PUT\"]");
        assert_eq!(py(PY, &new), signature("Shelf::add"));
    }
}
