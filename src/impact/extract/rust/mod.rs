//! Rust: items with their impl or trait owner, `use` trees, locals (so a
//! local that shadows a function is not taken for it), reference sites, and
//! the identifiers inside macro calls.
//!
//! Here: the walk and the reference sites it reads. `items` builds the
//! definitions (and opens item macros), `imports` the `use` trees and `mod`
//! declarations, `bindings` the locals, `types` what a value's type is, and
//! `macros` reads inside macro calls.

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use tree_sitter::Node;

use super::tokens::{self, Tok, Token};
use super::{
    Defs, Field, Frame, Locals, Sig, column, column_at, finish, line, starts_upper, text, walk,
};
use crate::impact::lang::{FnvBuild, Grammar, Lang, Role, is_rust_primitive};
use crate::impact::symbols::{
    Def, FileSymbols, Form, Import, Kind, MAX_CHAIN, Receiver, Ref, Visibility,
};

mod bindings;
mod imports;
mod items;
mod macros;
mod types;

use imports::use_tree;
use items::{Lead, Unwrapped, inherit_visibility};
pub(super) use items::{Opened, unwrap_item_macros};
use types::{declared, keeps_type, returned_type, type_base, type_path, value_type};

/// `node.kind()`, from the grammar's table.
fn kind_of(node: Node) -> &'static str {
    Lang::Rust.names().kind(node)
}

/// `node.child_by_field_name(name)`, from the grammar's table.
fn child<'t>(node: Node<'t>, name: &str) -> Option<Node<'t>> {
    Lang::Rust.names().child(node, name)
}

/// Whether `node` (a `generic_function`) is what `call` calls, as in
/// `f::<T>(x)`; asked of its node rather than kept for every ancestor,
/// since it is rare.
fn is_callee(node: Node, call: Node) -> bool {
    kind_of(call) == "call_expression" && child(call, "function") == Some(node)
}

/// What `Cx::visit` does with a node, by its kind. Looked up by kind id:
/// matching the kind's name against a dozen names on each of a million
/// nodes costs more than the dispatch itself.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    Identifier,
    TypeIdentifier,
    /// `a::b`, `a::B`.
    Path,
    FieldExpression,
    WherePredicate,
    TokenTree,
    /// `#[…]`: part of the lead of the item after it.
    Attribute,
    /// Doc comments are part of the lead of the item after them.
    Comment,
    /// Nothing inside is a reference the walk should see: literals, `use`
    /// (read as an import), macro definitions, labels and the like.
    Opaque,
    Other,
}

fn shape(kind: &str) -> Shape {
    match kind {
        "identifier" => Shape::Identifier,
        "type_identifier" => Shape::TypeIdentifier,
        "scoped_identifier" | "scoped_type_identifier" => Shape::Path,
        "field_expression" => Shape::FieldExpression,
        "where_predicate" => Shape::WherePredicate,
        "token_tree" => Shape::TokenTree,
        "attribute_item" => Shape::Attribute,
        "line_comment" | "block_comment" => Shape::Comment,
        "string_literal"
        | "raw_string_literal"
        | "char_literal"
        | "use_declaration"
        | "extern_crate_declaration"
        | "inner_attribute_item"
        | "macro_definition"
        | "visibility_modifier"
        | "lifetime"
        | "label" => Shape::Opaque,
        _ => Shape::Other,
    }
}

/// `shape(kind_of(node))` for a node of kind `id`.
fn shape_of_id(id: u16) -> Shape {
    static SHAPES: OnceLock<Vec<Shape>> = OnceLock::new();
    let shapes = SHAPES.get_or_init(|| {
        let names = Lang::Rust.names();
        (0..names.kind_count())
            .map(|id| shape(names.kind_of_id(id as u16)))
            .collect()
    });
    shapes.get(usize::from(id)).copied().unwrap_or(Shape::Other)
}

/// What an identifier's parent says of it (`Cx::ident`), by the parent's
/// kind: looked up by kind id, since an identifier is one node in six and
/// matching its parent's kind name against thirty names cost more than the
/// rest of its visit.
#[derive(Clone, Copy, PartialEq, Eq)]
enum IdentParent {
    /// `call_expression`: a call when the identifier is its `function`.
    Call,
    /// `generic_function`: a call when it is the callee's `function`.
    Generic,
    /// `macro_invocation`: the macro's name.
    Macro,
    /// `shorthand_field_initializer`: a value.
    Shorthand,
    /// Never a reference: paths (read whole), `use` trees, labels,
    /// declarations' own names, token trees and macro fragments.
    Never,
    /// `const_item`, `static_item`: not a reference as its `name`.
    NamedItem,
    /// `tuple_struct_pattern`: a value as its `type`, else a pattern.
    TupleStruct,
    /// `let`, `for`, `let` conditions: not a reference as their `pattern`.
    Binding,
    /// `parameter`: not a reference as its `pattern`.
    Parameter,
    /// `match_pattern`: a pattern unless it is the guard (`condition`).
    MatchPattern,
    /// Patterns: only a capitalised name (a constant or a unit struct) is
    /// a reference.
    Pattern,
    Other,
}

fn ident_parent(kind: &str) -> IdentParent {
    match kind {
        "call_expression" => IdentParent::Call,
        "generic_function" => IdentParent::Generic,
        "macro_invocation" => IdentParent::Macro,
        "shorthand_field_initializer" => IdentParent::Shorthand,
        "scoped_identifier"
        | "scoped_type_identifier"
        | "scoped_use_list"
        | "use_as_clause"
        | "use_list"
        | "use_wildcard"
        | "use_declaration"
        | "extern_crate_declaration"
        | "visibility_modifier"
        | "attribute"
        | "attribute_item"
        | "inner_attribute_item"
        | "label"
        | "lifetime"
        | "function_item"
        | "function_signature_item"
        | "mod_item"
        | "macro_definition"
        | "enum_variant"
        | "const_parameter"
        | "field_declaration" => IdentParent::Never,
        "const_item" | "static_item" => IdentParent::NamedItem,
        "tuple_struct_pattern" => IdentParent::TupleStruct,
        "let_declaration" | "for_expression" | "let_condition" => IdentParent::Binding,
        "parameter" => IdentParent::Parameter,
        "match_pattern" => IdentParent::MatchPattern,
        "closure_parameters" | "tuple_pattern" | "slice_pattern" | "or_pattern" | "ref_pattern"
        | "mut_pattern" | "captured_pattern" | "field_pattern" | "reference_pattern"
        | "struct_pattern" => IdentParent::Pattern,
        k if k.starts_with("token_") || k.starts_with("macro_") => IdentParent::Never,
        _ => IdentParent::Other,
    }
}

/// `ident_parent` of the kind `id`.
fn ident_parent_of_id(id: u16) -> IdentParent {
    static TABLE: OnceLock<Vec<IdentParent>> = OnceLock::new();
    let table = TABLE.get_or_init(|| kind_table(ident_parent));
    table
        .get(usize::from(id))
        .copied()
        .unwrap_or(IdentParent::Other)
}

/// What a type identifier's parent says of it (`Cx::type_ident`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum TypeParent {
    /// A type's own declaration: not a reference as its `name`.
    Declared,
    /// A path (read whole), a token tree or a macro fragment.
    Never,
    Other,
}

fn type_parent(kind: &str) -> TypeParent {
    match kind {
        "struct_item" | "enum_item" | "union_item" | "trait_item" | "type_item"
        | "associated_type" | "type_parameter" => TypeParent::Declared,
        "scoped_type_identifier" => TypeParent::Never,
        k if k.starts_with("token_") || k.starts_with("macro_") => TypeParent::Never,
        _ => TypeParent::Other,
    }
}

/// `type_parent` of the kind `id`.
fn type_parent_of_id(id: u16) -> TypeParent {
    static TABLE: OnceLock<Vec<TypeParent>> = OnceLock::new();
    let table = TABLE.get_or_init(|| kind_table(type_parent));
    table
        .get(usize::from(id))
        .copied()
        .unwrap_or(TypeParent::Other)
}

/// `class` of every kind of the grammar, by kind id.
fn kind_table<T>(class: fn(&str) -> T) -> Vec<T> {
    let names = Lang::Rust.names();
    (0..names.kind_count())
        .map(|id| class(names.kind_of_id(id as u16)))
        .collect()
}

pub(super) fn build(
    grammar: &Grammar,
    src: &str,
    root: Node,
    unwrapped: &[Unwrapped],
) -> FileSymbols {
    let mut cx = Cx {
        grammar,
        src,
        defs: Defs::default(),
        locals: Locals::default(),
        type_params: HashSet::default(),
        bounds: HashMap::default(),
        refs: Vec::new(),
        imports: Vec::new(),
        leads: Vec::new(),
    };
    walk(root, Lang::Rust.names(), |node, id, field, anc| {
        cx.visit(node, id, field, anc)
    });
    // An opened item macro is still a use of the macro.
    for m in unwrapped {
        let at = Site::at(src, line_at(src, m.pos), m.pos);
        cx.push(&m.name, Form::Macro, Vec::new(), Receiver::None, at);
    }
    let Cx {
        mut defs,
        refs,
        imports,
        ..
    } = cx;
    inherit_visibility(&mut defs);
    finish(src, defs, refs, imports)
}

/// `a::b::C` → `["a", "b", "C"]`; None for paths built from macro variables.
fn path_segments(node: Node, src: &str) -> Option<Vec<String>> {
    let mut segs = Vec::new();
    path_walk(node, &mut |seg| segs.push(text(seg, src).to_string()))?;
    Some(segs)
}

/// `path_segments`, each segment with its node.
fn path_nodes<'t>(node: Node<'t>, src: &str) -> Option<Vec<(String, Node<'t>)>> {
    let mut segs = Vec::new();
    path_walk(node, &mut |seg| {
        segs.push((text(seg, src).to_string(), seg))
    })?;
    Some(segs)
}

/// Hand each segment of a path to `seg`, first to last.
fn path_walk<'t>(node: Node<'t>, seg: &mut impl FnMut(Node<'t>)) -> Option<()> {
    match kind_of(node) {
        "identifier" | "type_identifier" | "self" | "super" | "crate" => seg(node),
        "scoped_identifier" | "scoped_type_identifier" => {
            if let Some(p) = child(node, "path") {
                path_walk(p, seg)?;
            }
            seg(child(node, "name")?);
        }
        "generic_type" | "qualified_type" | "generic_type_with_turbofish" => {
            path_walk(child(node, "type")?, seg)?
        }
        "bracketed_type" => path_walk(node.named_child(0)?, seg)?,
        _ => return None,
    }
    Some(())
}

/// Where a reference is: its line and column, and the byte that places it
/// in its enclosing definition.
#[derive(Clone, Copy)]
struct Site {
    line: u32,
    column: u32,
    pos: usize,
}

impl Site {
    fn of(node: Node, src: &str) -> Site {
        Site {
            line: line(node),
            column: column(node, src),
            pos: node.start_byte(),
        }
    }

    /// The site of a token at byte `pos` on line `line`.
    fn at(src: &str, line: u32, pos: usize) -> Site {
        Site {
            line,
            column: column_at(src, pos),
            pos,
        }
    }
}

/// The state of the walk: what the file defines, binds and references so
/// far. Rust names are visible from their binding on, so one walk in
/// document order knows every local a reference could mean when it meets it.
struct Cx<'a> {
    grammar: &'a Grammar,
    src: &'a str,
    defs: Defs,
    locals: Locals,
    /// Looked up for every type name and path, never iterated (FNV).
    type_params: HashSet<&'a str, FnvBuild>,
    /// Type parameters with a telling trait bound (`R: Read`, `where R:
    /// Read`): a value of type `R` has `Read`'s methods.
    bounds: HashMap<&'a str, String, FnvBuild>,
    refs: Vec<Ref>,
    imports: Vec<Import>,
    /// Per depth of the walk, the attributes and doc comments met since
    /// the last other sibling: gathered as the walk passes them, since
    /// `Node::prev_sibling` rescans the parent's children on every call.
    leads: Vec<Option<Lead>>,
}

impl<'a> Cx<'a> {
    fn push(&mut self, name: &str, form: Form, path: Vec<String>, receiver: Receiver, at: Site) {
        self.refs.push(Ref {
            name: name.to_string(),
            form,
            path,
            receiver,
            line: at.line,
            column: at.column,
            scope: self.defs.innermost(at.pos),
        });
    }

    fn is_local(&self, name: &str, pos: usize) -> bool {
        let func = self.defs.function_of(self.defs.innermost(pos));
        func.is_some() && self.locals.before(func, name, pos).is_some()
    }

    /// The type that `Self` stands for under these ancestors.
    fn self_type(&self, anc: &[Frame]) -> Option<String> {
        anc.iter().rev().find_map(|f| match kind_of(f.node) {
            "impl_item" => type_base(child(f.node, "type")?, self.src),
            "trait_item" => Some(text(child(f.node, "name")?, self.src).to_string()),
            _ => None,
        })
    }

    /// Whether `Self` here is a trait's implementor (inside a trait body),
    /// which is not a use of the trait itself.
    fn self_is_implementor(anc: &[Frame]) -> bool {
        anc.iter()
            .rev()
            .find_map(|f| match kind_of(f.node) {
                "impl_item" => Some(false),
                "trait_item" => Some(true),
                _ => None,
            })
            .unwrap_or(false)
    }

    /// `Self::item`: the path with `Self` replaced by the type it stands
    /// for, and from which segment on the path's types are uses (1 inside
    /// a trait, where `Self` is not the trait). None outside impls and traits.
    fn self_path(&self, mut segs: Vec<String>, anc: &[Frame]) -> Option<(Vec<String>, usize)> {
        if segs.first().is_none_or(|s| s != "Self") {
            return Some((segs, 0));
        }
        segs[0] = self.self_type(anc)?;
        let from = usize::from(Self::self_is_implementor(anc));
        Some((segs, from))
    }

    /// Dispatch one node of the walk; returns whether to descend.
    fn visit(&mut self, node: Node, id: u16, field: Field, anc: &[Frame]) -> bool {
        let shape = shape_of_id(id);
        if shape == Shape::Comment {
            self.defs.comment(node);
        }
        let lead = self.lead(node, shape, anc.len());
        if let Some(role) = self.grammar.role(id) {
            self.capture(node, role, anc, lead);
        }
        match shape {
            Shape::Identifier => {
                self.ident(node, field.get(), anc);
                false
            }
            Shape::TypeIdentifier => {
                self.type_ident(node, field, anc);
                false
            }
            Shape::Path => {
                self.path(node, field, anc);
                true
            }
            Shape::FieldExpression => {
                let n = anc.len();
                let called = match (
                    n.checked_sub(1).map(|i| anc[i]),
                    n.checked_sub(2).map(|i| anc[i]),
                ) {
                    (Some(p), _) if kind_of(p.node) == "call_expression" => {
                        field.get() == Some("function")
                    }
                    (Some(p), Some(g)) if kind_of(p.node) == "generic_function" => {
                        field.get() == Some("function") && is_callee(p.node, g.node)
                    }
                    _ => false,
                };
                if called {
                    self.method(node);
                }
                true
            }
            Shape::WherePredicate => {
                if let Some(left) = child(node, "left").filter(|l| kind_of(*l) == "type_identifier")
                {
                    let param = text(left, self.src);
                    if self.type_params.contains(param) {
                        self.bound(param, child(node, "bounds"));
                    }
                }
                true
            }
            Shape::TokenTree => {
                if anc
                    .last()
                    .is_some_and(|p| kind_of(p.node) == "macro_invocation")
                {
                    self.macro_body(node, anc);
                }
                false
            }
            Shape::Attribute | Shape::Comment | Shape::Opaque => false,
            Shape::Other => true,
        }
    }

    fn ident(&mut self, node: Node, field: Option<&'static str>, anc: &[Frame]) {
        let Some(p) = anc.last() else { return };
        let name = text(node, self.src);
        let pattern_value = || {
            if starts_upper(name) {
                Some(Form::Value)
            } else {
                None
            }
        };
        let function = field == Some("function");
        let form = match ident_parent_of_id(p.node.kind_id()) {
            IdentParent::Call if function => Some(Form::Call),
            IdentParent::Generic if function => {
                let called = anc.len() >= 2 && is_callee(p.node, anc[anc.len() - 2].node);
                Some(if called { Form::Call } else { Form::Value })
            }
            IdentParent::Macro => Some(Form::Macro),
            IdentParent::Shorthand => Some(Form::Value),
            IdentParent::Never => None,
            IdentParent::NamedItem if field == Some("name") => None,
            IdentParent::TupleStruct if field == Some("type") => Some(Form::Value),
            IdentParent::Binding | IdentParent::Parameter if field == Some("pattern") => None,
            IdentParent::MatchPattern if field != Some("condition") => pattern_value(),
            IdentParent::Pattern | IdentParent::TupleStruct => pattern_value(),
            _ => Some(Form::Value),
        };
        let Some(form) = form else { return };
        if form != Form::Macro && self.is_local(name, node.start_byte()) {
            return;
        }
        self.push(
            name,
            form,
            Vec::new(),
            Receiver::None,
            Site::of(node, self.src),
        );
    }

    fn type_ident(&mut self, node: Node, field: Field, anc: &[Frame]) {
        let Some(p) = anc.last() else { return };
        match type_parent_of_id(p.node.kind_id()) {
            TypeParent::Declared if field.get() == Some("name") => return,
            TypeParent::Never => return,
            _ => {}
        }
        let name = text(node, self.src);
        if self.type_params.contains(name) {
            return;
        }
        if name == "Self" {
            if Self::self_is_implementor(anc) {
                return;
            }
            if let Some(t) = self.self_type(anc) {
                self.push(
                    &t,
                    Form::Type,
                    Vec::new(),
                    Receiver::None,
                    Site::of(node, self.src),
                );
            }
            return;
        }
        self.push(
            name,
            Form::Type,
            Vec::new(),
            Receiver::None,
            Site::of(node, self.src),
        );
    }

    fn path(&mut self, node: Node, field: Field, anc: &[Frame]) {
        let Some(p) = anc.last() else { return };
        let pk = kind_of(p.node);
        if matches!(pk, "scoped_identifier" | "scoped_type_identifier")
            && field.get() == Some("path")
        {
            return;
        }
        if matches!(pk, "generic_type" | "bracketed_type" | "qualified_type")
            && anc.len() >= 2
            && matches!(
                kind_of(anc[anc.len() - 2].node),
                "scoped_identifier" | "scoped_type_identifier" | "bracketed_type"
            )
        {
            return;
        }
        let Some(nodes) = path_nodes(node, self.src) else {
            return;
        };
        let sites: Vec<Site> = nodes.iter().map(|(_, n)| Site::of(*n, self.src)).collect();
        let segs = nodes.into_iter().map(|(s, _)| s).collect();
        let Some((segs, from)) = self.self_path(segs, anc) else {
            return;
        };
        let form = match pk {
            "macro_invocation" => Form::Macro,
            _ if kind_of(node) == "scoped_type_identifier" => Form::Type,
            _ => Form::Path,
        };
        self.push_path(segs, &sites, form, from);
    }

    /// A path reference names its last segment and, for `Type::item`, the
    /// type too (`Foo::new()` is a use of `Foo`), from segment `from` on;
    /// each at its own site (`sites`, one a segment).
    fn push_path(&mut self, segs: Vec<String>, sites: &[Site], form: Form, from: usize) {
        for k in from..segs.len().saturating_sub(1) {
            if starts_upper(&segs[k]) && !self.type_params.contains(segs[k].as_str()) {
                let path = segs[..k].to_vec();
                self.push(&segs[k], Form::Type, path, Receiver::None, sites[k]);
            }
        }
        if let (Some((name, path)), Some(&at)) = (segs.split_last(), sites.last()) {
            if path
                .first()
                .is_some_and(|s| self.type_params.contains(s.as_str()))
            {
                return;
            }
            self.push(name, form, path.to_vec(), Receiver::None, at);
        }
    }

    fn method(&mut self, node: Node) {
        let Some(field) = child(node, "field") else {
            return;
        };
        if kind_of(field) != "field_identifier" {
            return;
        }
        let receiver = match child(node, "value") {
            Some(v) => self.receiver(v),
            None => Receiver::Unknown,
        };
        let name = text(field, self.src);
        self.push(
            name,
            Form::MethodCall,
            Vec::new(),
            receiver,
            Site::of(field, self.src),
        );
    }
}

/// The 1-based line of byte `pos`.
fn line_at(src: &str, pos: usize) -> u32 {
    let pos = pos.min(src.len());
    src.as_bytes()[..pos]
        .iter()
        .filter(|&&b| b == b'\n')
        .count() as u32
        + 1
}
