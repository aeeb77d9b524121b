//! The outline of one Rust or Python file that the code checks read: its
//! test functions (and whether each is skipped), the regions that are test
//! code, and the markers a change can leave behind (`todo!()`, `dbg!`,
//! `breakpoint()`, a body that is only `pass`), and what `breaking_change`
//! compares across the diff: callables with their signatures, the names
//! defined and imported (`signature`), structs' fields and enums' variants
//! (`members`). Parsed with tree-sitter (`syntax`), so a marker in a
//! comment or a string is not a marker. Each test's assertions are counted
//! by `assertions`; tests a Rust project declares through its own macros
//! are only candidates here (`macro_calls`), known once `macros` has read
//! the definitions.

use std::collections::{HashMap, HashSet};

use tree_sitter::Node;

pub use crate::syntax::Lang;

use super::assertions::{self, Assertion};
pub use super::test_fn::{TestFn, body_hash};
use super::{macros, skips};

/// What a marker is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    Todo,
    Unimplemented,
    /// `raise NotImplementedError` as a function's whole body.
    NotImplemented,
    /// A function whose body is only `pass`.
    PassBody,
    /// A function whose body is only `...`.
    EllipsisBody,
    Dbg,
    Breakpoint,
    /// `pdb.set_trace()` and its cousins.
    SetTrace,
}

impl Marker {
    pub fn label(self) -> &'static str {
        match self {
            Marker::Todo => "todo!()",
            Marker::Unimplemented => "unimplemented!()",
            Marker::NotImplemented => "raise NotImplementedError",
            Marker::PassBody => "a body that is only `pass`",
            Marker::EllipsisBody => "a body that is only `...`",
            Marker::Dbg => "dbg!",
            Marker::Breakpoint => "breakpoint()",
            Marker::SetTrace => "set_trace()",
        }
    }
}

/// A marker and the line it is on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub marker: Marker,
    pub line: u32,
    /// The function it is in, for the message.
    pub function: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outline {
    pub tests: Vec<TestFn>,
    /// Inclusive 1-based line ranges of test code inside the file
    /// (`#[cfg(test)]` modules, test functions).
    pub test_regions: Vec<(u32, u32)>,
    pub markers: Vec<Found>,
    /// Functions and methods as their callers see them.
    pub callables: Vec<super::signature::Callable>,
    /// Every name the file defines (`signature::defined`).
    pub defined: HashSet<String>,
    /// Every name the file imports, with where from (`signature::imports`).
    pub imported: HashMap<String, HashSet<String>>,
    /// Modules this Rust file declares only for documentation (`#[cfg(doc)]
    /// mod x;`), by their path below this file's module (`x`, `sys::x`).
    pub doc_modules: HashSet<String>,
    /// Every name a Python class of this file derives from (`class
    /// Flask(App)` gives `App`): a base class's `raise NotImplementedError`
    /// method is abstract when another file derives from it.
    pub bases: HashSet<String>,
    /// Rust: item-level macro calls whose first argument is a name, each a
    /// test if its macro declares one.
    pub macro_calls: Vec<macros::Call>,
    /// Rust: the macros this file defines that declare tests or assert.
    pub macros: macros::Kinds,
    /// The parse met a syntax error: a test may be hidden in it.
    pub syntax_error: bool,
    /// The functions of this file that are not tests but assert, by
    /// name, with their assertions: a test calling one asserts through it.
    /// A name defined twice is left out (which one is called is unknown).
    pub helpers: HashMap<String, Vec<Assertion>>,
    /// Rust structs with named fields and enums, with their members.
    pub shapes: Vec<super::members::Shape>,
}

impl Outline {
    pub fn in_test_region(&self, line: u32) -> bool {
        self.test_regions
            .iter()
            .any(|&(a, b)| a <= line && line <= b)
    }
}

/// The outline of `text`, or None when the grammar cannot parse at all.
/// `test_file` says the whole file is test code (its functions named
/// `test*` are tests).
pub fn outline(lang: Lang, text: &str, test_file: bool, stub_file: bool) -> Option<Outline> {
    let tree = crate::syntax::parse(lang, text.as_bytes()).ok()?;
    Some(read(lang, &tree, text, test_file, stub_file))
}

/// The outline of a file the review's store parsed (`syntax::Store`).
pub fn of(parsed: &crate::syntax::Parsed, test_file: bool, stub_file: bool) -> Outline {
    read(
        parsed.lang(),
        parsed.tree(),
        parsed.src(),
        test_file,
        stub_file,
    )
}

fn read(
    lang: Lang,
    tree: &tree_sitter::Tree,
    text: &str,
    test_file: bool,
    stub_file: bool,
) -> Outline {
    let mut out = Outline::default();
    let src = text.as_bytes();
    out.syntax_error = tree.root_node().has_error();
    let found = Scan::of(lang, tree.root_node());
    match lang {
        Lang::Rust => {
            rust::walk(tree.root_node(), src, &mut out);
            if text.contains("macro_rules!") {
                out.macros = macros::definitions_in(&found.macros, src, is_test_attribute);
            }
        }
        Lang::Python => {
            let mut walker = python::Walker {
                src,
                out: &mut out,
                test_file,
                stub_file,
                pending: Vec::new(),
                bases: Default::default(),
            };
            walker.block(tree.root_node(), &python::Scope::default());
            walker.finish();
        }
    }
    out.callables = super::signature::callables(lang, tree.root_node(), src);
    out.defined = super::signature::defined_in(&found.named, &found.assignments, src);
    // Helpers matter to a file's tests only: most changed files have none.
    if !out.tests.is_empty() {
        let tests: HashSet<u32> = out.tests.iter().map(|t| t.line).collect();
        out.helpers = assertions::helpers(tree.root_node(), src, lang == Lang::Python, &tests);
    }
    out.imported = super::signature::imports_in(lang, &found.imports, src);
    if lang == Lang::Rust {
        out.shapes = super::members::shapes_in(&found.shapes, src);
    }
    out
}

/// The nodes that `signature::defined`, `signature::imports`,
/// `members::shapes` and `macros::definitions` read, found in one walk of
/// the tree: each walked the whole tree on its own, and four walks of a
/// large file cost more than its parse. Each finds what it found alone:
/// nothing nested in a node it stops at (an import, a shape, a macro
/// definition), no Python assignment inside a function.
struct Scan<'t> {
    /// Nodes defining the name in their `name` field, in the file's order.
    named: Vec<Node<'t>>,
    /// Python assignments outside function bodies.
    assignments: Vec<Node<'t>>,
    imports: Vec<Node<'t>>,
    /// Structs and enums, in the file's order.
    shapes: Vec<Node<'t>>,
    macros: Vec<Node<'t>>,
}

/// Where a node of the walk stands: inside what.
#[derive(Clone, Copy, Default)]
struct Within {
    function: bool,
    import: bool,
    shape: bool,
    macro_definition: bool,
}

impl<'t> Scan<'t> {
    fn of(lang: Lang, root: Node<'t>) -> Scan<'t> {
        let names = lang.names();
        let mut found = Scan {
            named: Vec::new(),
            assignments: Vec::new(),
            imports: Vec::new(),
            shapes: Vec::new(),
            macros: Vec::new(),
        };
        let mut cursor = root.walk();
        let mut within = vec![Within::default()];
        loop {
            let n = cursor.node();
            let kind = names.kind(n);
            let w = within.last().copied().unwrap_or_default();
            if super::signature::defines(lang, kind) {
                found.named.push(n);
            }
            if lang == Lang::Python && kind == "assignment" && !w.function {
                found.assignments.push(n);
            }
            let import = super::signature::imports_here(lang, kind);
            if import && !w.import {
                found.imports.push(n);
            }
            let shape = lang == Lang::Rust && super::members::is_shape(kind);
            if shape && !w.shape {
                found.shapes.push(n);
            }
            let definition = lang == Lang::Rust && kind == "macro_definition";
            if definition && !w.macro_definition {
                found.macros.push(n);
            }
            let inner = Within {
                function: w.function || kind == "function_definition",
                import: w.import || import,
                shape: w.shape || shape,
                macro_definition: w.macro_definition || definition,
            };
            if n.child_count() > 0 && cursor.goto_first_child() {
                within.push(inner);
                continue;
            }
            loop {
                if cursor.goto_next_sibling() {
                    break;
                }
                if !cursor.goto_parent() {
                    return found;
                }
                within.pop();
            }
        }
    }
}

fn text<'a>(node: Node, src: &'a [u8]) -> &'a str {
    std::str::from_utf8(&src[node.byte_range()]).unwrap_or("")
}

fn line(node: Node) -> u32 {
    node.start_position().row as u32 + 1
}

fn end_line(node: Node) -> u32 {
    node.end_position().row as u32 + 1
}

/// A `NotImplementedError` or an `unimplemented!()` that explains itself
/// (`"subclasses must provide get()"`, `"use register_borrowed instead"`)
/// is a decision; a bare one, or one saying "TODO", is a placeholder.
fn deliberate(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    let words = m.chars().filter(|c| c.is_alphanumeric()).count();
    words > 0
        && ![
            "todo",
            "fixme",
            "not yet",
            "later",
            "implement me",
            "not implemented",
            "unimplemented",
            "to be implemented",
            "tbd",
        ]
        .iter()
        .any(|w| m.contains(w))
}

/// Whether a Rust attribute (without `#[…]`) makes its function a test.
pub fn is_test_attribute(attr: &str) -> bool {
    rust::is_test_attr(attr)
}

mod rust {
    use super::*;

    /// Walk items, keeping the module path and whether we are in test code.
    pub fn walk(root: Node, src: &[u8], out: &mut Outline) {
        items(root, src, out, "", false);
    }

    /// The attributes written before `item` (its preceding siblings).
    fn attributes<'a>(item: Node<'a>, src: &'a [u8]) -> Vec<(String, u32)> {
        let mut attrs = Vec::new();
        let mut prev = item.prev_sibling();
        while let Some(p) = prev {
            match p.kind() {
                "attribute_item" => {
                    if let Some(a) = p.named_child(0) {
                        attrs.push((text(a, src).to_string(), line(p)));
                    }
                }
                "line_comment" | "block_comment" => {}
                _ => break,
            }
            prev = p.prev_sibling();
        }
        attrs
    }

    /// `#[test]`, `#[tokio::test]`, `#[rstest]`, `#[test_case(…)]`, …, and
    /// any of them behind a condition (`#[cfg_attr(not(wasm),
    /// tokio::test(flavor = "multi_thread"))]`): the function is a test on
    /// some target, and rewriting its attribute that way deletes nothing.
    pub fn is_test_attr(attr: &str) -> bool {
        if let Some(inner) = cfg_attr_inner(attr) {
            return inner.into_iter().any(is_test_attr);
        }
        let path = attr.split(['(', '=', ' ']).next().unwrap_or("").trim();
        path == "test"
            || path.ends_with("::test")
            || matches!(path, "rstest" | "test_case" | "quickcheck" | "proptest")
    }

    /// The attributes a `cfg_attr(condition, a, b, …)` applies, or None
    /// when `attr` is not one. Commas inside parentheses or strings do not
    /// split.
    fn cfg_attr_inner(attr: &str) -> Option<Vec<&str>> {
        let args = attr
            .strip_prefix("cfg_attr")?
            .trim_start()
            .strip_prefix('(')?
            .strip_suffix(')')?;
        let mut parts = Vec::new();
        let (mut depth, mut quoted, mut escaped, mut start) = (0i32, false, false, 0);
        for (i, c) in args.char_indices() {
            match c {
                _ if escaped => escaped = false,
                '\\' if quoted => escaped = true,
                '"' => quoted = !quoted,
                '(' | '[' if !quoted => depth += 1,
                ')' | ']' if !quoted => depth -= 1,
                ',' if !quoted && depth == 0 => {
                    parts.push(args[start..i].trim());
                    start = i + 1;
                }
                _ => {}
            }
        }
        parts.push(args[start..].trim());
        // The first part is the condition.
        Some(
            parts
                .into_iter()
                .skip(1)
                .filter(|p| !p.is_empty())
                .collect(),
        )
    }

    /// `cfg(test)`, `cfg(all(test, unix))`, but not `cfg(not(test))`.
    fn is_cfg_test(attr: &str) -> bool {
        let Some(args) = attr.strip_prefix("cfg") else {
            return false;
        };
        !args.contains("not(")
            && args
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .any(|w| w == "test")
    }

    fn items(node: Node, src: &[u8], out: &mut Outline, path: &str, in_test: bool) {
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            // Templates and documentation-only items are not code that runs:
            // `macro_rules!` bodies, `#[cfg(doc)]` stand-ins.
            if child.kind() == "macro_definition"
                || attributes(child, src).iter().any(|(a, _)| a == "cfg(doc)")
            {
                // `#[cfg(doc)] mod not_implemented;`: that file is
                // documentation too (rustix).
                if child.kind() == "mod_item" && child.child_by_field_name("body").is_none() {
                    if let Some(name) = child.child_by_field_name("name") {
                        out.doc_modules.insert(join(path, text(name, src)));
                    }
                }
                continue;
            }
            match child.kind() {
                "mod_item" => {
                    let attrs = attributes(child, src);
                    let test = in_test || attrs.iter().any(|(a, _)| is_cfg_test(a));
                    let name = child
                        .child_by_field_name("name")
                        .map(|n| text(n, src))
                        .unwrap_or("");
                    let start = attrs.iter().map(|a| a.1).min().unwrap_or(line(child));
                    if test && !in_test {
                        out.test_regions.push((start, end_line(child)));
                    }
                    if let Some(body) = child.child_by_field_name("body") {
                        let path = join(path, name);
                        items(body, src, out, &path, test);
                    }
                }
                "function_item" => function(child, src, out, path, in_test, None),
                "impl_item" | "trait_item" => {
                    let ty = child
                        .child_by_field_name("type")
                        .or_else(|| child.child_by_field_name("name"))
                        .map(|n| text(n, src).to_string());
                    if let Some(body) = child.child_by_field_name("body") {
                        let mut c = body.walk();
                        for item in body.children(&mut c) {
                            if item.kind() == "function_item" {
                                function(item, src, out, path, in_test, ty.as_deref());
                            } else {
                                markers(item, src, out, None);
                            }
                        }
                    }
                }
                "macro_invocation" | "expression_statement" => {
                    let call = if child.kind() == "expression_statement" {
                        child
                            .named_child(0)
                            .filter(|c| c.kind() == "macro_invocation")
                    } else {
                        Some(child)
                    };
                    // A candidate test of a project macro; the tests
                    // written inside (`proptest! { #[test] fn … }`).
                    if let Some(call) = call {
                        out.macro_calls.extend(macros::call(call, src, path));
                        for (t, end) in macros::inner_tests(call, src, path, is_test_attr) {
                            if !in_test {
                                out.test_regions.push((t.line, end));
                            }
                            out.tests.push(t);
                        }
                    }
                    markers(child, src, out, None)
                }
                _ => markers(child, src, out, None),
            }
        }
    }

    fn join(path: &str, name: &str) -> String {
        if path.is_empty() {
            name.to_string()
        } else {
            format!("{path}::{name}")
        }
    }

    fn function(
        node: Node,
        src: &[u8],
        out: &mut Outline,
        path: &str,
        in_test: bool,
        owner: Option<&str>,
    ) {
        let name = node
            .child_by_field_name("name")
            .map(|n| text(n, src))
            .unwrap_or("");
        let qualified = match owner {
            Some(t) => join(path, &format!("{t}::{name}")),
            None => join(path, name),
        };
        let attrs = attributes(node, src);
        if attrs.iter().any(|(a, _)| is_test_attr(a)) {
            let skipped_at = attrs.iter().find(|(a, _)| skips::rust(a)).map(|a| a.1);
            let body = node.child_by_field_name("body");
            let mut found = body.map(|b| assertions::rust(b, src)).unwrap_or_default();
            found.extend(
                attrs
                    .iter()
                    .filter_map(|(a, _)| assertions::should_panic(a)),
            );
            out.tests.push(TestFn {
                name: qualified.clone(),
                line: line(node),
                skipped_at,
                skip_conditional: false,
                body: body.map_or(0, |b| body_hash(b, src)),
                assertions: found,
                calls: body
                    .map(|b| assertions::calls(b, src, false))
                    .unwrap_or_default(),
                lines: body
                    .map(|b| assertions::line_hashes(b, src))
                    .unwrap_or_default(),
            });
            if !in_test {
                let start = attrs.iter().map(|a| a.1).min().unwrap_or(line(node));
                out.test_regions.push((start, end_line(node)));
            }
        }
        if let Some(body) = node.child_by_field_name("body") {
            let before = out.markers.len();
            markers(body, src, out, Some(&qualified));
            // `unimplemented!()` as a whole body is a stub; in a match arm,
            // or with a message saying why (`unimplemented!("use
            // register_borrowed instead")`), it is a case left unsupported
            // on purpose. `todo!()` inside a function named `todo` is that
            // function's API (winnow).
            let whole = only_macro(body, src).is_some_and(|(name, call)| {
                name == "unimplemented" && !deliberate(&macro_message(call, src))
            });
            let mut i = before;
            while i < out.markers.len() {
                let m = out.markers[i].marker;
                if (m == Marker::Unimplemented && !whole) || (m == Marker::Todo && name == "todo") {
                    out.markers.remove(i);
                } else {
                    i += 1;
                }
            }
        }
    }

    /// The text of a macro call's arguments, without its delimiters.
    fn macro_message(call: Node, src: &[u8]) -> String {
        let mut c = call.walk();
        let args = call
            .children(&mut c)
            .find(|n| n.kind() == "token_tree")
            .map(|t| text(t, src))
            .unwrap_or("");
        args.trim_start_matches(['(', '[', '{'])
            .trim_end_matches([')', ']', '}'])
            .to_string()
    }

    /// The macro a block consists of, if it is one call and nothing else.
    fn only_macro<'a>(block: Node<'a>, src: &'a [u8]) -> Option<(&'a str, Node<'a>)> {
        let mut c = block.walk();
        let kids: Vec<Node> = block
            .named_children(&mut c)
            .filter(|n| !n.kind().ends_with("comment"))
            .collect();
        let [only] = kids.as_slice() else {
            return None;
        };
        let call = if only.kind() == "expression_statement" {
            only.named_child(0)?
        } else {
            *only
        };
        if call.kind() != "macro_invocation" {
            return None;
        }
        let name = text(call.child_by_field_name("macro")?, src);
        Some((name.rsplit("::").next().unwrap_or(name), call))
    }

    /// Macro calls anywhere below `node`, including inside other macros'
    /// token trees (`vec![todo!()]`), which tree-sitter leaves unparsed.
    fn markers(node: Node, src: &[u8], out: &mut Outline, function: Option<&str>) {
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            match n.kind() {
                "macro_invocation" => {
                    if let Some(m) = n.child_by_field_name("macro") {
                        let name = text(m, src);
                        let name = name.rsplit("::").next().unwrap_or(name);
                        push(out, name, line(n), function);
                    }
                }
                "token_tree" => {
                    // identifier `!` token_tree
                    let mut c = n.walk();
                    let kids: Vec<Node> = n.children(&mut c).collect();
                    // Inside another macro (libc's `s! { … }`) the code is
                    // unparsed tokens; `unimplemented!` counts as it does in a
                    // parsed function: the whole of a `{ … }` body, saying
                    // nothing of why.
                    let sole = kids
                        .iter()
                        .filter(|k| {
                            !matches!(k.kind(), "{" | "}" | ";" | "line_comment" | "block_comment")
                        })
                        .count()
                        == 3
                        && kids.first().is_some_and(|k| k.kind() == "{");
                    for w in kids.windows(3) {
                        if w[0].kind() == "identifier"
                            && w[1].kind() == "!"
                            && w[2].kind() == "token_tree"
                        {
                            let name = text(w[0], src);
                            if name == "unimplemented" {
                                let message = text(w[2], src)
                                    .trim_start_matches(['(', '[', '{'])
                                    .trim_end_matches([')', ']', '}']);
                                if !sole || deliberate(message) {
                                    continue;
                                }
                            }
                            push(out, name, line(w[0]), function);
                        }
                    }
                }
                "macro_definition" => continue,
                "function_item" if n != node => {
                    // A nested function: its own name in messages.
                    let name = n
                        .child_by_field_name("name")
                        .map(|x| text(x, src).to_string());
                    if let Some(body) = n.child_by_field_name("body") {
                        markers(body, src, out, name.as_deref().or(function));
                    }
                    continue;
                }
                _ => {}
            }
            let mut c = n.walk();
            for child in n.children(&mut c) {
                stack.push(child);
            }
        }
    }

    fn push(out: &mut Outline, name: &str, line: u32, function: Option<&str>) {
        let marker = match name {
            "todo" => Marker::Todo,
            "unimplemented" => Marker::Unimplemented,
            "dbg" => Marker::Dbg,
            _ => return,
        };
        out.markers.push(Found {
            marker,
            line,
            function: function.map(str::to_string),
        });
    }
}

mod python {
    use super::*;

    /// Where a statement sits.
    #[derive(Debug, Clone, Default)]
    pub struct Scope {
        /// Enclosing class name, if directly in a class body.
        pub class: Option<String>,
        /// The same with the classes it is nested in (`TestA.TestB`).
        pub class_path: Option<String>,
        /// The class is a test case: its `test*` methods are tests.
        pub test_class: bool,
        /// The class is an interface (a Protocol or ABC): bodies of `...`
        /// and `pass` there are declarations.
        pub interface: bool,
        /// A skip decorator on the class, applying to its tests: its line,
        /// and whether it holds only under a condition.
        pub class_skip: Option<(u32, bool)>,
        /// Inside a function (nested definitions are not tests).
        pub function: Option<String>,
        /// Under `if TYPE_CHECKING:`, where bodies are declarations.
        pub type_checking: bool,
    }

    pub struct Walker<'a, 'o> {
        pub src: &'a [u8],
        pub out: &'o mut Outline,
        pub test_file: bool,
        /// A `.pyi` stub: every body is a declaration.
        pub stub_file: bool,
        /// `raise NotImplementedError` bodies of methods, with their class:
        /// kept unless the class turns out to be a base class.
        pub pending: Vec<(Found, String)>,
        /// Every name a class of this file derives from.
        pub bases: HashSet<String>,
    }

    /// A class meant to be derived from, by its name.
    fn abstract_name(class: &str) -> bool {
        class.starts_with("Base")
            || class.starts_with("Abstract")
            || ["Base", "Mixin", "Interface", "Protocol", "ABC"]
                .iter()
                .any(|s| class.ends_with(s))
    }

    /// A function whose name says it does nothing on purpose.
    fn no_op_name(name: &str) -> bool {
        let n = name.to_ascii_lowercase();
        [
            "noop", "no_op", "nop", "nothing", "dummy", "ignore", "null", "stub", "blank", "empty",
        ]
        .iter()
        .any(|w| n.contains(w))
    }

    /// Decorators that make a body a declaration, not a placeholder.
    fn is_declaration(decorator: &str) -> bool {
        let d = decorator.trim_start_matches('@').trim();
        let path = d.split('(').next().unwrap_or(d).trim();
        let last = path.rsplit('.').next().unwrap_or(path);
        matches!(
            last,
            "abstractmethod"
                | "abstractproperty"
                | "abstractclassmethod"
                | "abstractstaticmethod"
                | "overload"
        )
    }

    impl Walker<'_, '_> {
        /// Keep the pending methods whose class no class here derives from.
        pub fn finish(self) {
            for (found, class) in self.pending {
                if !self.bases.contains(&class) {
                    self.out.markers.push(found);
                }
            }
            self.out.bases = self.bases;
        }

        pub fn block(&mut self, node: Node, scope: &Scope) {
            let mut c = node.walk();
            let children: Vec<Node> = node.children(&mut c).collect();
            for child in children {
                self.statement(child, scope);
            }
        }

        fn statement(&mut self, node: Node, scope: &Scope) {
            match node.kind() {
                "decorated_definition" => {
                    let mut decorators = Vec::new();
                    let mut c = node.walk();
                    for d in node.children(&mut c) {
                        if d.kind() == "decorator" {
                            decorators.push((text(d, self.src).to_string(), line(d)));
                        }
                    }
                    if let Some(def) = node.child_by_field_name("definition") {
                        self.definition(def, &decorators, scope, line(node));
                    }
                }
                "function_definition" | "class_definition" => {
                    self.definition(node, &[], scope, line(node))
                }
                "if_statement" => {
                    let condition = node
                        .child_by_field_name("condition")
                        .map(|n| text(n, self.src))
                        .unwrap_or("");
                    let mut inner = scope.clone();
                    if condition.ends_with("TYPE_CHECKING") {
                        inner.type_checking = true;
                    }
                    self.calls(node, scope, &inner);
                }
                _ => self.calls(node, scope, scope),
            }
        }

        /// Debugger calls in a statement, and definitions nested in blocks
        /// (under `if`, `try`, `with`), walked with `inner` scope.
        ///
        /// The nodes are taken last child first (each node before what it
        /// holds), the order in which a stack of children pops them, which
        /// is the order of what this finds. That order is the reverse of a
        /// cursor's walk that takes each node after what it holds, so one
        /// cursor walk collects the calls and blocks and they are taken
        /// back to front: a cursor and a vector for every node cost more
        /// than the file's parse.
        fn calls(&mut self, node: Node, scope: &Scope, inner: &Scope) {
            let names = Lang::Python.names();
            let mut found = Vec::new();
            let mut cursor = node.walk();
            'walk: loop {
                let n = cursor.node();
                let kind = names.kind(n);
                let nested_block = kind == "block" && n != node;
                if !nested_block && cursor.goto_first_child() {
                    continue;
                }
                // `n` holds nothing more to walk: it and each ancestor whose
                // last child this is are done.
                loop {
                    let done = cursor.node();
                    match names.kind(done) {
                        "block" if done != node => found.push((done, true)),
                        "call" => found.push((done, false)),
                        _ => {}
                    }
                    if done == node {
                        break 'walk;
                    }
                    if cursor.goto_next_sibling() {
                        break;
                    }
                    if !cursor.goto_parent() {
                        break 'walk;
                    }
                }
            }
            for (n, block) in found.into_iter().rev() {
                if block {
                    self.block(n, inner);
                } else {
                    self.call(n, scope);
                }
            }
        }

        fn call(&mut self, node: Node, scope: &Scope) {
            let Some(f) = node.child_by_field_name("function") else {
                return;
            };
            let name = text(f, self.src);
            let marker = match name {
                "breakpoint" => Marker::Breakpoint,
                "pdb.set_trace" | "ipdb.set_trace" | "pudb.set_trace" | "pytest.set_trace" => {
                    Marker::SetTrace
                }
                _ => return,
            };
            self.out.markers.push(Found {
                marker,
                line: line(node),
                function: scope.function.clone(),
            });
        }

        fn definition(
            &mut self,
            def: Node,
            decorators: &[(String, u32)],
            scope: &Scope,
            start: u32,
        ) {
            let name = def
                .child_by_field_name("name")
                .map(|n| text(n, self.src).to_string())
                .unwrap_or_default();
            let Some(body) = def.child_by_field_name("body") else {
                return;
            };
            if def.kind() == "class_definition" {
                let bases = def
                    .child_by_field_name("superclasses")
                    .map(|n| text(n, self.src))
                    .unwrap_or("");
                for base in bases.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.')) {
                    let last = base.rsplit('.').next().unwrap_or(base);
                    if !last.is_empty() {
                        self.bases.insert(last.to_string());
                    }
                }
                let interface = ["Protocol", "ABC", "ABCMeta", "Interface", "TypedDict"]
                    .iter()
                    .any(|b| {
                        bases
                            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                            .any(|w| w == *b)
                    });
                // In a test file, Django's `FooTests(BarTests)` too.
                let named = |n: &str| n.ends_with("Test") || n.ends_with("Tests");
                let test_class = scope.function.is_none()
                    && (name.starts_with("Test")
                        || bases.contains("TestCase")
                        || (self.test_file
                            && (named(&name) || bases.split([',', '(', ')', ' ']).any(named))));
                let inner = Scope {
                    class: Some(name.clone()),
                    class_path: Some(match &scope.class_path {
                        Some(outer) => format!("{outer}.{name}"),
                        None => name.clone(),
                    }),
                    test_class,
                    interface,
                    class_skip: decorators
                        .iter()
                        .find_map(|(d, l)| skips::python(d).map(|c| (*l, c)))
                        .or(scope.class_skip),
                    function: scope.function.clone(),
                    type_checking: scope.type_checking,
                };
                self.block(body, &inner);
                return;
            }
            let qualified = match &scope.class_path {
                Some(class) => format!("{class}.{name}"),
                None => name.clone(),
            };
            let is_test = scope.function.is_none()
                && name.starts_with("test")
                && ((self.test_file && scope.class.is_none()) || scope.test_class);
            if is_test {
                let skip = decorators
                    .iter()
                    .find_map(|(d, l)| skips::python(d).map(|c| (*l, c)))
                    .or(scope.class_skip);
                self.out.tests.push(TestFn {
                    name: qualified.clone(),
                    line: line(def),
                    skipped_at: skip.map(|s| s.0),
                    skip_conditional: skip.is_some_and(|s| s.1),
                    body: body_hash(body, self.src),
                    assertions: assertions::python(body, self.src),
                    calls: assertions::calls(body, self.src, true),
                    lines: assertions::line_hashes(body, self.src),
                });
                if !self.test_file {
                    self.out.test_regions.push((start, end_line(def)));
                }
            }
            let declaration = self.stub_file
                || scope.interface
                || scope.type_checking
                || decorators.iter().any(|(d, _)| is_declaration(d));
            if !declaration {
                self.placeholder_body(body, &qualified, scope);
            }
            let inner = Scope {
                class: None,
                class_path: None,
                test_class: false,
                interface: false,
                class_skip: None,
                function: Some(qualified),
                type_checking: scope.type_checking,
            };
            self.block(body, &inner);
        }

        /// A body that is only `pass`, `...` or `raise NotImplementedError`
        /// (after an optional docstring).
        fn placeholder_body(&mut self, body: Node, function: &str, scope: &Scope) {
            let mut c = body.walk();
            let statements: Vec<Node> = body
                .named_children(&mut c)
                .filter(|n| n.kind() != "comment")
                .collect();
            let statements: &[Node] = match statements.split_first() {
                Some((first, rest)) if is_docstring(*first) && !rest.is_empty() => rest,
                _ => &statements,
            };
            let [only] = statements else {
                return;
            };
            let marker = match only.kind() {
                "pass_statement" => Marker::PassBody,
                "expression_statement"
                    if only.named_child(0).is_some_and(|e| e.kind() == "ellipsis") =>
                {
                    Marker::EllipsisBody
                }
                "raise_statement" => {
                    let raised = only.named_child(0).map(|e| text(e, self.src)).unwrap_or("");
                    let (name, message) = raised.split_once('(').unwrap_or((raised, ""));
                    let name = name.trim();
                    if name != "NotImplementedError" && name != "NotImplemented" {
                        return;
                    }
                    if deliberate(message) {
                        return;
                    }
                    Marker::NotImplemented
                }
                _ => return,
            };
            let name = function.rsplit('.').next().unwrap_or(function);
            // A method doing nothing overrides a hook on purpose
            // (`def log_message(self, *args): pass`), and so does a
            // function named for it (`def noop(*args): pass`).
            if marker == Marker::PassBody && (scope.class.is_some() || no_op_name(name)) {
                return;
            }
            let found = Found {
                marker,
                line: line(*only),
                function: Some(function.to_string()),
            };
            // `raise NotImplementedError` in a base class is how Python
            // declares an abstract method without `abc`.
            match (&scope.class, marker) {
                (Some(class), Marker::NotImplemented) => {
                    if !abstract_name(class) {
                        self.pending.push((found, class.clone()));
                    }
                }
                _ => self.out.markers.push(found),
            }
        }
    }

    fn is_docstring(node: Node) -> bool {
        node.kind() == "expression_statement"
            && node.named_child(0).is_some_and(|e| e.kind() == "string")
    }
}

#[cfg(test)]
mod tests;
