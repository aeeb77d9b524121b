//! Rust: items with their impl or trait owner, `use` trees, locals (so a
//! local that shadows a function is not taken for it), reference sites, and
//! the identifiers inside macro calls.

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use tree_sitter::Node;

use super::tokens::{self, Tok, Token};
use super::{
    Defs, Field, Frame, Locals, Sig, column, column_at, finish, line, starts_upper, text, walk,
};
use crate::impact::lang::{Grammar, Lang, Role, is_rust_primitive};
use crate::impact::symbols::{
    Def, FileSymbols, Form, Import, Kind, MAX_CHAIN, Receiver, Ref, Visibility,
};

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

/// An item macro `unwrap_item_macros` opened: its name and where it is.
pub(super) struct Unwrapped {
    name: String,
    pos: usize,
}

/// The source with every item macro whose body is plain items
/// (`cfg_net! { pub struct UdpSocket { … } }`, as tokio wraps most of its
/// items) opened up: the macro's name, `!` and braces become spaces, so
/// the items parse as the module's own, at the same lines and columns,
/// with their fields, bodies and references. None when there is none.
/// A body that is not items on its own (`lazy_static! { static ref … }`,
/// `bitflags!`) stays a macro, read token by token.
pub(super) fn unwrap_item_macros(
    root: Node,
    src: &str,
    parser: &mut crate::syntax::Parser,
) -> Option<(String, Vec<Unwrapped>)> {
    let mut found = Vec::new();
    let mut blanks = Vec::new();
    item_macros(root, src, 0, parser, &mut found, &mut blanks);
    if found.is_empty() {
        return None;
    }
    let mut bytes = src.as_bytes().to_vec();
    for (from, to) in blanks {
        for b in &mut bytes[from..to] {
            // Line breaks stay, so that lines do not move.
            if *b != b'\n' {
                *b = b' ';
            }
        }
    }
    // Only ASCII (a name, `!`, braces, spaces) was replaced by spaces.
    let text = String::from_utf8(bytes).ok()?;
    Some((text, found))
}

/// The item macros among the items under `node` (a file or a block of
/// items, its text starting at byte `base` of `src`), nested ones too.
fn item_macros(
    node: Node,
    src: &str,
    base: usize,
    parser: &mut crate::syntax::Parser,
    found: &mut Vec<Unwrapped>,
    blanks: &mut Vec<(usize, usize)>,
) {
    let mut cursor = node.walk();
    for item in node.named_children(&mut cursor) {
        match kind_of(item) {
            "mod_item" | "impl_item" | "trait_item" => {
                if let Some(body) = child(item, "body") {
                    item_macros(body, src, base, parser, found, blanks);
                }
            }
            "macro_invocation" => {
                let (Some(name), Some(tt)) = (child(item, "macro"), item.named_child(1)) else {
                    continue;
                };
                let (open, close) = (base + tt.start_byte(), base + tt.end_byte());
                let braced = src.as_bytes().get(open) == Some(&b'{')
                    && src.as_bytes().get(close - 1) == Some(&b'}');
                if kind_of(name) != "identifier" || kind_of(tt) != "token_tree" || !braced {
                    continue;
                }
                let Some(body) = src.get(open + 1..close - 1) else {
                    continue;
                };
                let Ok(tree) = parser.parse(Lang::Rust, body.as_bytes()) else {
                    continue;
                };
                let inner = tree.root_node();
                if !holds_only_items(inner) {
                    continue;
                }
                found.push(Unwrapped {
                    name: src[base + name.start_byte()..base + name.end_byte()].to_string(),
                    pos: base + name.start_byte(),
                });
                blanks.push((base + item.start_byte(), open + 1));
                blanks.push((close - 1, close));
                item_macros(inner, src, open + 1, parser, found, blanks);
            }
            _ => {}
        }
    }
}

/// Whether a parsed macro body is items, without a syntax error: what a
/// module or an impl may hold.
fn holds_only_items(root: Node) -> bool {
    if root.has_error() {
        return false;
    }
    let mut cursor = root.walk();
    let mut items = 0;
    for c in root.named_children(&mut cursor) {
        match kind_of(c) {
            "line_comment" | "block_comment" | "attribute_item" | "inner_attribute_item" => {}
            "use_declaration"
            | "extern_crate_declaration"
            | "macro_invocation"
            | "macro_definition" => items += 1,
            k if k.ends_with("_item") || k == "function_signature_item" => items += 1,
            _ => return false,
        }
    }
    items > 0
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
        type_params: HashSet::new(),
        bounds: HashMap::new(),
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

/// A definition from its item node, its kind, its name node and the item's
/// ancestors (nearest last).
fn def(
    src: &str,
    node: Node,
    kind: Kind,
    name: Node,
    anc: &[Frame],
    lead: Option<Lead>,
) -> (Def, (usize, usize), Sig) {
    let mut kind = kind;
    let mut container = None;
    let mut trait_name = None;
    let parent = anc.last().map(|f| f.node);
    let grandparent = anc.len().checked_sub(2).map(|i| anc[i].node);
    if let Some(p) = parent {
        match kind_of(p) {
            "declaration_list" => {
                if let Some(owner) = grandparent {
                    match kind_of(owner) {
                        "impl_item" => {
                            container = child(owner, "type").and_then(|t| type_base(t, src));
                            trait_name = child(owner, "trait").and_then(|t| type_base(t, src));
                        }
                        "trait_item" => {
                            container = child(owner, "name").map(|n| text(n, src).to_string());
                        }
                        _ => {}
                    }
                    if container.is_some() && kind == Kind::Function {
                        kind = Kind::Method;
                    }
                }
            }
            "enum_variant_list" => {
                container = grandparent
                    .and_then(|e| child(e, "name"))
                    .map(|n| text(n, src).to_string());
            }
            _ => {}
        }
    }

    let mut visibility = Visibility::Private;
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        if kind_of(child) == "visibility_modifier" {
            let t = text(child, src);
            visibility = if t == "pub" {
                Visibility::Public
            } else {
                Visibility::Crate
            };
            break;
        }
    }
    if trait_name.is_some() {
        visibility = Visibility::Public;
    }

    let start = lead.map_or(node.start_position().row, |l| l.row);
    let test = lead.is_some_and(|l| l.test);

    let (s, e) = (node.start_byte(), node.end_byte());
    let field_start = |f: &str| child(node, f).map(|b| b.start_byte());
    let sig = match kind {
        Kind::Function | Kind::Method => Sig::new(s, field_start("body").unwrap_or(e)),
        Kind::Const | Kind::Static => Sig::new(s, field_start("value").unwrap_or(e)),
        Kind::Module => Sig::new(s, field_start("body").unwrap_or(e)),
        Kind::Macro => Sig::new(name.start_byte(), name.end_byte()),
        Kind::Trait => {
            let mut bodies = Vec::new();
            if let Some(body) = child(node, "body") {
                let mut cur = body.walk();
                for item in body.named_children(&mut cur) {
                    if let Some(b) = child(item, "body") {
                        bodies.push((b.start_byte(), b.end_byte()));
                    }
                }
            }
            Sig {
                bodies,
                ..Sig::new(s, e)
            }
        }
        Kind::Struct | Kind::Enum => member_sig(node, s, e),
        _ => Sig::new(s, e),
    };

    let returns = match kind {
        Kind::Function | Kind::Method => child(node, "return_type")
            .and_then(|t| returned_type(t, src))
            .and_then(|t| {
                if t == "Self" {
                    container.clone()
                } else {
                    Some(t)
                }
            }),
        _ => None,
    };

    let end = node.end_position();
    let end_line = if end.column == 0 && end.row > 0 {
        end.row
    } else {
        end.row + 1
    };
    (
        Def {
            name: text(name, src).to_string(),
            kind,
            container,
            trait_name,
            bases: Vec::new(),
            fields: if kind == Kind::Struct {
                struct_fields(node, src)
            } else {
                Vec::new()
            },
            returns,
            start_line: start as u32 + 1,
            line: super::line(name),
            column: column(name, src),
            end_line: end_line as u32,
            signature: 0,
            members: Vec::new(),
            visibility,
            parent: None,
            test,
        },
        (s, e),
        sig,
    )
}

/// A struct with named fields or an enum: its list of members reads as
/// `{}`, each member hashed on its own. Other structs (tuple, unit) are
/// their whole text: a field added to `W(A)` changes every `W(a)` call.
fn member_sig(node: Node, s: usize, e: usize) -> Sig {
    let Some(body) = child(node, "body")
        .filter(|b| matches!(kind_of(*b), "field_declaration_list" | "enum_variant_list"))
    else {
        return Sig::new(s, e);
    };
    let mut cursor = body.walk();
    let members = body
        .named_children(&mut cursor)
        .filter(|m| matches!(kind_of(*m), "field_declaration" | "enum_variant"))
        .map(|m| (m.start_byte(), m.end_byte()))
        .collect();
    Sig {
        bodies: vec![(body.start_byte(), body.end_byte())],
        members,
        ..Sig::new(s, e)
    }
}

/// The attributes and doc comments right before an item: siblings of it
/// in the tree, but part of it to a reviewer.
#[derive(Debug, Clone, Copy)]
struct Lead {
    /// The row of the first of them.
    row: usize,
    /// One of them marks a test (`#[test]`, `#[cfg(test)]`, `#[tokio::test]`).
    test: bool,
}

fn is_test_attribute(attr: &str) -> bool {
    let inner = attr.trim_start_matches("#[").trim_end_matches(']').trim();
    inner == "test"
        || inner.ends_with("::test")
        || (inner.starts_with("cfg(") && inner.contains("test") && !inner.contains("not("))
}

fn is_doc_comment(comment: &str) -> bool {
    (comment.starts_with("///") && !comment.starts_with("////")) || comment.starts_with("/**")
}

/// Fields whose type has a base name: `inner: Arc<Inner>` → `Inner`; the
/// fields of a tuple struct by their place: `struct W(Arc<Inner>)` → `0`.
fn struct_fields(node: Node, src: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let Some(body) = child(node, "body") else {
        return out;
    };
    let mut cursor = body.walk();
    if kind_of(body) == "ordered_field_declaration_list" {
        for (i, t) in body.children_by_field_name("type", &mut cursor).enumerate() {
            if let Some(ty) = type_path(t, src) {
                out.push((i.to_string(), ty));
            }
        }
        return out;
    }
    for f in body.named_children(&mut cursor) {
        if kind_of(f) != "field_declaration" {
            continue;
        }
        let name = child(f, "name").map(|n| text(n, src));
        let ty = child(f, "type").and_then(|t| type_path(t, src));
        if let (Some(name), Some(ty)) = (name, ty) {
            out.push((name.to_string(), ty));
        }
    }
    out
}

/// Like `type_base`, keeping the path: `a::Foo<T>` → `a::Foo`; also
/// through `Pin<&mut T>`, since a method call auto-derefs to `T` too.
fn type_path(node: Node, src: &str) -> Option<String> {
    match kind_of(node) {
        "scoped_type_identifier" => path_segments(node, src).map(|s| s.join("::")),
        "reference_type" | "pointer_type" => type_path(child(node, "type")?, src),
        "generic_type" => {
            let base = type_base(child(node, "type")?, src)?;
            if matches!(base.as_str(), "Box" | "Rc" | "Arc" | "Pin") {
                let args = child(node, "type_arguments")?;
                type_path(args.named_child(0)?, src)
            } else {
                type_path(child(node, "type")?, src)
            }
        }
        _ => type_base(node, src),
    }
}

/// The receiver a value declared with type `node` is: `Type` of its path,
/// or `SelfValue` for `Self` (`this: Self`, `Pin<&mut Self>`), which
/// stands for the enclosing impl's type as `self` does.
fn declared(node: Node, src: &str) -> Option<Receiver> {
    let t = type_path(node, src)?;
    Some(if t == "Self" {
        Receiver::SelfValue
    } else {
        Receiver::Type(t)
    })
}

/// Variants and trait items are as visible as their enum or trait.
fn inherit_visibility(defs: &mut Defs) {
    for i in 0..defs.defs.len() {
        let Some(p) = defs.defs[i].parent else {
            continue;
        };
        let parent = &defs.defs[p as usize];
        if matches!(parent.kind, Kind::Enum | Kind::Trait) {
            let vis = parent.visibility;
            defs.defs[i].visibility = vis;
        }
    }
}

/// The name of the type an `impl` or local is about: `Foo` for `Foo<T>`,
/// `&mut Foo`, `a::Foo`, `Box<Foo>`.
fn type_base(node: Node, src: &str) -> Option<String> {
    match kind_of(node) {
        "type_identifier" => Some(text(node, src).to_string()),
        "scoped_type_identifier" => child(node, "name").map(|n| text(n, src).to_string()),
        "reference_type" | "pointer_type" => type_base(child(node, "type")?, src),
        "generic_type" => {
            let base = type_base(child(node, "type")?, src)?;
            if matches!(base.as_str(), "Box" | "Rc" | "Arc") {
                let args = child(node, "type_arguments")?;
                type_base(args.named_child(0)?, src)
            } else {
                Some(base)
            }
        }
        // `&dyn Events`, `impl Events`: calls go to the trait's methods.
        "dynamic_type" | "abstract_type" => type_base(child(node, "trait")?, src),
        // `impl Float for f64`, `x: u32`: methods of the project's traits.
        "primitive_type" => Some(text(node, src).to_string()),
        _ => None,
    }
}

/// The type of a literal: its suffix (`1u8`, `0.5f32`) or Rust's default.
fn literal_type(node: Node, src: &str) -> Option<&'static str> {
    const SUFFIXES: [&str; 14] = [
        "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128", "isize",
        "f32", "f64",
    ];
    let suffixed = |default: &'static str| {
        let t = text(node, src);
        SUFFIXES
            .into_iter()
            .find(|s| t.ends_with(s))
            .unwrap_or(default)
    };
    match kind_of(node) {
        "integer_literal" => Some(suffixed("i32")),
        "float_literal" => Some(suffixed("f64")),
        "string_literal" | "raw_string_literal" => Some("str"),
        "char_literal" => Some("char"),
        "boolean_literal" => Some("bool"),
        _ => None,
    }
}

/// Traits so common as bounds that they say nothing of a value's methods.
const MARKER_BOUNDS: [&str; 14] = [
    "Sized",
    "Send",
    "Sync",
    "Copy",
    "Clone",
    "Debug",
    "Default",
    "PartialEq",
    "Eq",
    "Hash",
    "PartialOrd",
    "Ord",
    "Display",
    "Unpin",
];

/// The first trait of a `T: A + B` bound that tells what `T` can do.
fn telling_bound(bounds: Node, src: &str) -> Option<String> {
    let mut cursor = bounds.walk();
    bounds
        .named_children(&mut cursor)
        .filter_map(|b| type_base(b, src))
        .find(|b| !MARKER_BOUNDS.contains(&b.as_str()))
}

/// What a value is when it is evident: a `Type` for `T::new(..)`,
/// `T { .. }`, `T(..)`; `Returned` for a call of a function by name or path
/// (`make()`, `a::make()`), whose declared return type the index looks up.
/// `?`, `.await`, `&` and `.unwrap()`-like calls keep the value's type.
fn value_type(node: Node, src: &str) -> Option<Receiver> {
    if let Some(t) = literal_type(node, src) {
        return Some(Receiver::Type(t.to_string()));
    }
    match kind_of(node) {
        "try_expression" | "await_expression" | "parenthesized_expression" => {
            value_type(node.named_child(0)?, src)
        }
        // `&mut T::new()`: the value, not `mut`.
        "reference_expression" => value_type(child(node, "value")?, src),
        "struct_expression" => declared(child(node, "name")?, src),
        // `let index = self.index;`: the field's declared type.
        "field_expression" => {
            let base = child(node, "value")?;
            let field = child(node, "field")?;
            (kind_of(base) == "self" && kind_of(field) == "field_identifier")
                .then(|| Receiver::Field(text(field, src).to_string()))
        }
        // A unit struct used as a value: `Marker.method()`, `a::Marker.method()`.
        "identifier" | "scoped_identifier" => {
            let segs = path_segments(node, src)?;
            let last = segs.last()?;
            // `f64::MAX.to_bits()`: a constant of a primitive type.
            if let [ty, _] = segs.as_slice() {
                if is_rust_primitive(ty) {
                    return Some(Receiver::Type(ty.clone()));
                }
            }
            (starts_upper(last) && last.chars().any(char::is_lowercase))
                .then(|| Receiver::Type(segs.join("::")))
        }
        "call_expression" => {
            let f = child(node, "function")?;
            // `channel::<u8>(8)`: the function, whatever its arguments.
            let f = if kind_of(f) == "generic_function" {
                child(f, "function")?
            } else {
                f
            };
            match kind_of(f) {
                "identifier" => {
                    let t = text(f, src);
                    Some(if starts_upper(t) {
                        Receiver::Type(t.to_string())
                    } else {
                        Receiver::Returned(vec![t.to_string()])
                    })
                }
                "scoped_identifier" => {
                    if let Some(inner) = pointer_of(node, src) {
                        return value_type(inner, src);
                    }
                    let segs = path_segments(f, src)?;
                    let owner = segs.get(segs.len().checked_sub(2)?)?;
                    // `T::f(..)`: what `f` is declared to return, which
                    // the index takes to be a `T` when `f` is not the
                    // project's (`T::default()`).
                    (owner != "Self").then_some(Receiver::Returned(segs))
                }
                "field_expression" => {
                    let method = text(child(f, "field")?, src);
                    keeps_type(method)
                        .then(|| value_type(child(f, "value")?, src))
                        .flatten()
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// The value a pointer is made of, in a call that makes one:
/// `Arc::new(Semaphore::new(1))`, `Pin::new(&mut self.io)`. A pointer
/// dereferences to its value, so it has the value's methods.
fn pointer_of<'t>(call: Node<'t>, src: &str) -> Option<Node<'t>> {
    let f = child(call, "function")?;
    if kind_of(f) != "scoped_identifier" {
        return None;
    }
    let segs = path_segments(f, src)?;
    let [ptr, make] = segs.as_slice() else {
        return None;
    };
    let pointer = matches!(ptr.as_str(), "Arc" | "Rc" | "Box" | "Pin");
    let makes = matches!(make.as_str(), "new" | "pin" | "from" | "new_unchecked");
    if !(pointer && makes) {
        return None;
    }
    child(call, "arguments")?.named_child(0)
}

/// The expression a closure's body or a block evaluates to: the body
/// itself, or a block's only expression (`|p| { a.f(p) }`); None for a
/// block of statements.
fn tail_value(body: Node) -> Option<Node> {
    if kind_of(body) != "block" {
        return Some(body);
    }
    let mut cursor = body.walk();
    let mut inner = body
        .named_children(&mut cursor)
        .filter(|c| !matches!(kind_of(*c), "line_comment" | "block_comment"));
    let only = inner.next()?;
    let statement = matches!(
        kind_of(only),
        "expression_statement" | "let_declaration" | "empty_statement"
    ) || kind_of(only).ends_with("_item");
    (inner.next().is_none() && !statement).then_some(only)
}

/// Methods whose value has the type of the value they are called on
/// (`Option<T>` and `Result<T, E>` unwrapped, `T` cloned).
fn keeps_type(method: &str) -> bool {
    matches!(
        method,
        "unwrap"
            | "expect"
            | "unwrap_or_default"
            | "unwrap_or_else"
            | "unwrap_or"
            | "clone"
            | "to_owned"
    )
}

/// The type a function's value has once `?` or `.unwrap()` is applied:
/// `T` for `T`, `&T`, `a::T`, `Result<T, E>`, `Option<T>`, `Box<T>`.
fn returned_type(node: Node, src: &str) -> Option<String> {
    match kind_of(node) {
        "generic_type" => {
            let base = type_base(child(node, "type")?, src)?;
            if matches!(base.as_str(), "Result" | "Option" | "Box" | "Rc" | "Arc") {
                let args = child(node, "type_arguments")?;
                returned_type(args.named_child(0)?, src)
            } else {
                type_path(node, src)
            }
        }
        "reference_type" | "pointer_type" => returned_type(child(node, "type")?, src),
        // `(Sender<T>, Receiver<T>)`: `(Sender, Receiver)`, an element
        // `_` when its type says nothing.
        "tuple_type" => {
            let mut cursor = node.walk();
            let elements: Vec<String> = node
                .named_children(&mut cursor)
                .map(|e| returned_type(e, src).unwrap_or_else(|| "_".to_string()))
                .collect();
            Some(format!("({})", elements.join(", ")))
        }
        _ => type_path(node, src),
    }
}

/// Where a pattern's bindings start to be visible, and the bound type when
/// the pattern is a single name with an evident type. `parent` is the node
/// holding the pattern.
fn binding_site(pattern: Node, parent: Option<Node>, src: &str) -> (usize, Option<Receiver>) {
    let Some(p) = parent else {
        return (pattern.start_byte(), None);
    };
    let single = matches!(kind_of(pattern), "identifier" | "mut_pattern");
    match kind_of(p) {
        // `let foo = foo();` calls the function: the binding starts after.
        "let_declaration" => {
            let ty = if single {
                child(p, "type")
                    .and_then(|t| declared(t, src))
                    .or_else(|| child(p, "value").and_then(|v| value_type(v, src)))
            } else {
                None
            };
            (p.end_byte(), ty)
        }
        "parameter" => {
            let ty = if single {
                child(p, "type").and_then(|t| declared(t, src))
            } else {
                None
            };
            (pattern.start_byte(), ty)
        }
        _ => (pattern.start_byte(), None),
    }
}

/// Record every name a pattern binds. Capitalised names in patterns are
/// variants or constants, not bindings.
fn bind(
    node: Node,
    src: &str,
    func: Option<u32>,
    pos: usize,
    ty: Option<Receiver>,
    locals: &mut Locals,
) {
    match kind_of(node) {
        "identifier" | "shorthand_field_identifier" => {
            let name = text(node, src);
            if !starts_upper(name) {
                locals.add(func, name, pos, ty);
            }
        }
        "parameter" => {
            if let Some(p) = child(node, "pattern") {
                let ty = child(node, "type").and_then(|t| declared(t, src));
                bind(p, src, func, pos, ty, locals);
            }
        }
        "mut_pattern" => {
            if let Some(inner) =
                node.named_child((node.named_child_count() as u32).saturating_sub(1))
            {
                bind(inner, src, func, pos, ty, locals);
            }
        }
        "scoped_identifier"
        | "field_identifier"
        | "type_identifier"
        | "primitive_type"
        | "reference_type"
        | "generic_type"
        | "scoped_type_identifier" => {}
        _ => {
            let skip = child(node, "type").or_else(|| child(node, "condition"));
            let mut cursor = node.walk();
            for child in node.named_children(&mut cursor) {
                if Some(child) != skip {
                    bind(child, src, func, pos, None, locals);
                }
            }
        }
    }
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
    type_params: HashSet<&'a str>,
    /// Type parameters with a telling trait bound (`R: Read`, `where R:
    /// Read`): a value of type `R` has `Read`'s methods.
    bounds: HashMap<&'a str, String>,
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

    /// The lead of the item `node`, when it is one, after noting whether
    /// `node` itself continues or ends a run of attributes and doc comments.
    fn lead(&mut self, node: Node, shape: Shape, depth: usize) -> Option<Lead> {
        self.leads.truncate(depth + 1);
        self.leads.resize(depth + 1, None);
        let slot = &mut self.leads[depth];
        match shape {
            Shape::Attribute => {
                let row = node.start_position().row;
                let lead = slot.get_or_insert(Lead { row, test: false });
                lead.test |= is_test_attribute(text(node, self.src));
                None
            }
            Shape::Comment => {
                if is_doc_comment(text(node, self.src)) {
                    let row = node.start_position().row;
                    slot.get_or_insert(Lead { row, test: false });
                } else {
                    *slot = None;
                }
                None
            }
            _ => slot.take(),
        }
    }

    /// Record what a node of the node table stands for.
    fn capture(&mut self, node: Node, role: Role, anc: &[Frame], lead: Option<Lead>) {
        match role {
            Role::Def(kind) => {
                if let Some(name) = child(node, "name") {
                    let scope = self.defs.innermost(node.start_byte());
                    let (def, range, sig) = def(self.src, node, kind, name, anc, lead);
                    self.defs.push(def, range, sig);
                    if kind == Kind::Module {
                        self.module_at_path(node, name, scope);
                    }
                }
            }
            Role::Import => self.import(node),
            Role::Bind(field) => {
                if let Some(pattern) = child(node, field) {
                    self.bind_pattern(pattern, Some(node));
                }
            }
            Role::BindChildren => {
                let mut cursor = node.walk();
                for child in node.named_children(&mut cursor) {
                    self.bind_pattern(child, Some(node));
                }
            }
            Role::BindSelf => self.bind_pattern(node, anc.last().map(|f| f.node)),
            Role::TypeParam => {
                if let Some(name) = child(node, "name") {
                    let name = text(name, self.src);
                    self.type_params.insert(name);
                    self.bound(name, child(node, "bounds"));
                }
            }
            Role::Params | Role::Global | Role::Assign => {}
        }
    }

    /// Note what a type parameter is bound by, or that it is not.
    fn bound(&mut self, param: &'a str, bounds: Option<Node>) {
        match bounds.and_then(|b| telling_bound(b, self.src)) {
            Some(t) => {
                self.bounds.insert(param, t);
            }
            None => {
                self.bounds.remove(param);
            }
        }
    }

    /// A value of a bounded type parameter has its bound's methods.
    fn through_bound(&self, r: Receiver) -> Receiver {
        match r {
            Receiver::Type(t) => match self.bounds.get(t.as_str()) {
                Some(b) => Receiver::Type(b.clone()),
                None => Receiver::Type(t),
            },
            other => other,
        }
    }

    fn bind_pattern(&mut self, pattern: Node, parent: Option<Node>) {
        let func = self
            .defs
            .function_of(self.defs.innermost(pattern.start_byte()));
        let (pos, ty) = binding_site(pattern, parent, self.src);
        if let Some(calls) = self.closure_bound(pattern, parent) {
            let name = text(pattern, self.src);
            self.locals.add_closure(func, name, pos, calls);
            return;
        }
        if self.bind_tuple(pattern, parent, func, pos) {
            return;
        }
        let ty = ty.and_then(|t| self.through_closure(t, pattern.start_byte()));
        // `let w = b.hidden(true).build();`: a method chain's value;
        // `let s = guard.lock.s;` a field's, `let fd = unsafe { f() };`
        // a block's, `let this = &mut *self;` the value's.
        let ty = ty.or_else(|| {
            let p = parent.filter(|p| kind_of(*p) == "let_declaration")?;
            if !matches!(kind_of(pattern), "identifier" | "mut_pattern")
                || child(p, "type").is_some()
            {
                return None;
            }
            let mut value = child(p, "value")?;
            while matches!(kind_of(value), "try_expression" | "await_expression") {
                value = value.named_child(0)?;
            }
            match kind_of(value) {
                "call_expression" => self.method_chain(value, 0),
                _ => Some(self.receiver(value)),
            }
            .filter(|r| *r != Receiver::Unknown)
        });
        bind(pattern, self.src, func, pos, ty, &mut self.locals);
    }

    /// `let (tx, mut rx) = mpsc::channel(8);`: each name is the element
    /// of the value at its place. Whether the pattern was bound here.
    fn bind_tuple(
        &mut self,
        pattern: Node,
        parent: Option<Node>,
        func: Option<u32>,
        pos: usize,
    ) -> bool {
        let Some(p) = parent.filter(|p| kind_of(*p) == "let_declaration") else {
            return false;
        };
        if kind_of(pattern) != "tuple_pattern" || child(p, "type").is_some() {
            return false;
        }
        let Some(value) = child(p, "value") else {
            return false;
        };
        let whole = self.receiver(value);
        if whole == Receiver::Unknown {
            return false;
        }
        // Every element counts for the places, `_` (not a named node) too.
        let mut cursor = pattern.walk();
        let elements: Vec<Node> = pattern
            .children(&mut cursor)
            .filter(|e| {
                !matches!(
                    kind_of(*e),
                    "(" | ")" | "," | "line_comment" | "block_comment"
                )
            })
            .collect();
        for (i, e) in elements.into_iter().enumerate() {
            let name = match kind_of(e) {
                "identifier" => Some(e),
                "mut_pattern" => {
                    let mut c = e.walk();
                    e.named_children(&mut c)
                        .find(|n| kind_of(*n) == "identifier")
                }
                _ => None,
            };
            match name {
                Some(n) => {
                    let ty = whole.clone().then_attribute(&i.to_string());
                    self.locals.add(func, text(n, self.src), pos, Some(ty));
                }
                None => bind(e, self.src, func, pos, None, &mut self.locals),
            }
        }
        true
    }

    /// `Returned` from a call of a local (a closure), not of a function.
    fn calls_local(&self, ty: &Receiver, pos: usize) -> bool {
        matches!(ty, Receiver::Returned(path) if path.len() == 1 && self.is_local(&path[0], pos))
    }

    /// `ty`, unless it is the value of a call of a local: then what that
    /// closure is known to return, if anything.
    fn through_closure(&self, ty: Receiver, pos: usize) -> Option<Receiver> {
        match &ty {
            Receiver::Returned(path) if path.len() == 1 && self.is_local(&path[0], pos) => {
                self.closure_returns(&path[0], pos)
            }
            _ => Some(ty),
        }
    }

    /// What calling the local closure `name` at `pos` returns, when its
    /// body says (`let m = |p| ig.matched(p, false);`, then `m("a")`).
    fn closure_returns(&self, name: &str, pos: usize) -> Option<Receiver> {
        let func = self.defs.function_of(self.defs.innermost(pos));
        self.locals.before(func, name, pos)?.calls.clone()
    }

    /// `let m = |…| body;` with a body whose value is evident: the
    /// receiver a call of `m` returns.
    fn closure_bound(&self, pattern: Node, parent: Option<Node>) -> Option<Receiver> {
        let p = parent.filter(|p| kind_of(*p) == "let_declaration")?;
        if kind_of(pattern) != "identifier" {
            return None;
        }
        let value = child(p, "value").filter(|v| kind_of(*v) == "closure_expression")?;
        let body = tail_value(child(value, "body")?)?;
        // The closure's own parameters are not bound yet: a body that
        // starts from one (`|p| p.go()`) has no evident value here.
        let mut first = body;
        while let Some(c) = first.child(0) {
            first = c;
        }
        let params = child(value, "parameters")?;
        let mut cursor = params.walk();
        let own = text(first, self.src);
        if params
            .named_children(&mut cursor)
            .any(|p| text(p, self.src).split(':').next().map(str::trim) == Some(own))
        {
            return None;
        }
        Some(self.receiver(body)).filter(|r| *r != Receiver::Unknown)
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
        let form = match kind_of(p.node) {
            "call_expression" if field == Some("function") => Form::Call,
            "generic_function" if field == Some("function") => {
                let called = anc.len() >= 2 && is_callee(p.node, anc[anc.len() - 2].node);
                if called { Form::Call } else { Form::Value }
            }
            "macro_invocation" => Form::Macro,
            "shorthand_field_initializer" => Form::Value,
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
            | "field_declaration" => return,
            "const_item" | "static_item" if field == Some("name") => return,
            "tuple_struct_pattern" if field == Some("type") => Form::Value,
            "let_declaration" | "for_expression" | "let_condition" if field == Some("pattern") => {
                return;
            }
            "parameter" if field == Some("pattern") => return,
            "match_pattern" if field != Some("condition") => {
                if starts_upper(name) {
                    Form::Value
                } else {
                    return;
                }
            }
            "closure_parameters"
            | "tuple_pattern"
            | "slice_pattern"
            | "or_pattern"
            | "ref_pattern"
            | "mut_pattern"
            | "captured_pattern"
            | "field_pattern"
            | "reference_pattern"
            | "tuple_struct_pattern"
            | "struct_pattern" => {
                if starts_upper(name) {
                    Form::Value
                } else {
                    return;
                }
            }
            k if k.starts_with("token_") || k.starts_with("macro_") => return,
            _ => Form::Value,
        };
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
        match kind_of(p.node) {
            "struct_item" | "enum_item" | "union_item" | "trait_item" | "type_item"
            | "associated_type" | "type_parameter"
                if field.get() == Some("name") =>
            {
                return;
            }
            "scoped_type_identifier" => return,
            k if k.starts_with("token_") || k.starts_with("macro_") => return,
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

    /// The receiver `name` at `pos`: a local's type if it has one, else the
    /// name itself when it may be a module or a type.
    fn named_receiver(&self, name: &str, pos: usize) -> Receiver {
        let func = self.defs.function_of(self.defs.innermost(pos));
        match self.locals.before(func, name, pos) {
            Some(local) => local
                .ty
                .clone()
                .map_or(Receiver::Unknown, |t| self.through_bound(t)),
            None if func.is_some() || starts_upper(name) => Receiver::Name(name.to_string()),
            None => Receiver::Unknown,
        }
    }

    fn receiver(&self, value: Node) -> Receiver {
        self.receiver_within(value, 0)
    }

    /// `receiver`, `depth` method calls into a chain: past `MAX_CHAIN`
    /// the receiver is unknown (the chain is not walked further).
    fn receiver_within(&self, value: Node, depth: usize) -> Receiver {
        if depth > MAX_CHAIN {
            return Receiver::Unknown;
        }
        match kind_of(value) {
            "try_expression" | "await_expression" | "parenthesized_expression" => {
                value.named_child(0).map_or(Receiver::Unknown, |inner| {
                    self.receiver_within(inner, depth + 1)
                })
            }
            // `&mut x`, `*x`: method calls auto-reference and dereference,
            // and the types of fields and locals are kept without `&`.
            "reference_expression" => child(value, "value").map_or(Receiver::Unknown, |inner| {
                self.receiver_within(inner, depth + 1)
            }),
            "unary_expression" if value.child(0).is_some_and(|op| kind_of(op) == "*") => {
                value.named_child(0).map_or(Receiver::Unknown, |inner| {
                    self.receiver_within(inner, depth + 1)
                })
            }
            // `unsafe { AsyncFd::new(a) }`: a block of one expression (the
            // walk has not bound the names a longer block binds yet).
            "block" => tail_value(value).map_or(Receiver::Unknown, |tail| {
                self.receiver_within(tail, depth + 1)
            }),
            "unsafe_block" => value.named_child(0).map_or(Receiver::Unknown, |block| {
                self.receiver_within(block, depth + 1)
            }),
            "self" => Receiver::SelfValue,
            "identifier" => self.named_receiver(text(value, self.src), value.start_byte()),
            // `self.lock.s`, `guard.lock.s`, `self.0`: a field of a value.
            "field_expression" => {
                let (Some(base), Some(field)) = (child(value, "value"), child(value, "field"))
                else {
                    return Receiver::Unknown;
                };
                if !matches!(kind_of(field), "field_identifier" | "integer_literal") {
                    return Receiver::Unknown;
                }
                let name = text(field, self.src);
                match self.receiver_within(base, depth + 1) {
                    Receiver::SelfValue => Receiver::Field(name.to_string()),
                    on => on.then_attribute(name),
                }
            }
            "call_expression" => match pointer_of(value, self.src) {
                // `Pin::new(&mut self.io)`: the pointer has its value's methods.
                Some(inner) => self.receiver_within(inner, depth + 1),
                // `a.b(..)`: what the method returns, on `a`'s receiver.
                None => self.method_chain(value, depth).unwrap_or_else(|| {
                    value_type(value, self.src)
                        .and_then(|t| self.through_closure(t, value.start_byte()))
                        .unwrap_or(Receiver::Unknown)
                }),
            },
            _ => value_type(value, self.src)
                .filter(|t| !self.calls_local(t, value.start_byte()))
                .unwrap_or(Receiver::Unknown),
        }
    }

    /// The value of a method call `a.m(..)` (`m` not one that keeps `a`'s
    /// type, like `unwrap`): `m`'s return on `a`'s receiver.
    fn method_chain(&self, call: Node, depth: usize) -> Option<Receiver> {
        let f = child(call, "function")?;
        let f = if kind_of(f) == "generic_function" {
            child(f, "function")?
        } else {
            f
        };
        if kind_of(f) != "field_expression" {
            return None;
        }
        let method = text(child(f, "field")?, self.src);
        let on = self.receiver_within(child(f, "value")?, depth + 1);
        if keeps_type(method) {
            return Some(on);
        }
        Some(on.then_call(method))
    }

    /// Identifiers in a macro call's tokens: `f(…)` and `a::b(…)` are calls,
    /// `.m(…)` a method call, `m!` a macro, other names values unless they are
    /// locals of the enclosing function.
    fn macro_body(&mut self, tt: Node, anc: &[Frame]) {
        let all = tokens::of_tree(tt, self.src);
        let mut skip = Vec::new();
        let items = anc.len() >= 2
            && matches!(
                kind_of(anc[anc.len() - 2].node),
                "source_file" | "declaration_list"
            );
        if items {
            self.macro_items(&all, &all[0], &mut skip);
        }
        self.macro_tree(&all, &all[0], anc, &skip);
    }

    /// A macro wrapping items (tokio's `cfg_rt! { pub use … ; mod … ; }`):
    /// the `use` declarations and `mod` declarations in it, read as they
    /// would be outside it, with those of macros nested in it. Returns
    /// (in `skip`) the byte ranges it read, which are not scanned again
    /// as plain tokens.
    fn macro_items(&mut self, all: &[Token], tree: &Token, skip: &mut Vec<(usize, usize)>) {
        let tokens = tokens::children(all, tree);
        let src: &'a str = self.src;
        let word = |k: usize| tokens.get(k).and_then(|t| src.get(t.start..t.end));
        let mut i = 0;
        while i < tokens.len() {
            let t = tokens[i];
            let is_use = t.kind == Tok::Keyword && word(i) == Some("use");
            let is_mod = t.kind != Tok::Tree && word(i) == Some("mod");
            if t.kind == Tok::Tree && i >= 2 && tokens[i - 1].kind == Tok::Bang {
                self.macro_items(all, &t, skip);
            }
            if !(is_use || is_mod) {
                i += 1;
                continue;
            }
            // `pub`, `pub(crate)` before it.
            let mut start = i;
            if start >= 1
                && tokens[start - 1].kind == Tok::Tree
                && start >= 2
                && word(start - 2) == Some("pub")
            {
                start -= 2;
            } else if start >= 1 && word(start - 1) == Some("pub") {
                start -= 1;
            }
            let Some(end) = (i + 1..tokens.len())
                .find(|&k| word(k) == Some(";") || (is_mod && tokens[k].kind == Tok::Tree))
            else {
                break;
            };
            let (from, to) = (tokens[start].start, tokens[end].end);
            if is_use {
                self.use_in_macro(from, to, tokens[start].line);
            } else if let Some(name) = (i + 1 < end)
                .then(|| tokens[i + 1])
                .filter(|n| n.kind == Tok::Ident)
            {
                self.mod_in_macro(from, to, name, start < i);
            }
            skip.push((from, to));
            i = end + 1;
        }
    }

    /// `use …;` at `src[from..to]`, inside a macro: parsed on its own.
    fn use_in_macro(&mut self, from: usize, to: usize, line: u32) {
        let Some(text) = self.src.get(from..to) else {
            return;
        };
        let Ok(tree) = crate::syntax::parse(Lang::Rust, text.as_bytes()) else {
            return;
        };
        let root = tree.root_node();
        let Some(decl) = root
            .named_child(0)
            .filter(|d| kind_of(*d) == "use_declaration")
        else {
            return;
        };
        let public = text.starts_with("pub");
        let scope = self.defs.innermost(from);
        let Some(arg) = child(decl, "argument") else {
            return;
        };
        let mut found = Vec::new();
        use_tree(arg, text, &[], &mut found);
        let statement = Site::at(self.src, line, from);
        for (path, alias, glob, row, pos) in found {
            let name = Site::at(self.src, line + row - 1, from + pos);
            self.push_import(path, alias, glob, public, statement, name, scope);
        }
    }

    /// `mod name;` or `mod name { … }` at `src[from..to]`, inside a macro.
    fn mod_in_macro(&mut self, from: usize, to: usize, name: Token, public: bool) {
        let visibility = match self.src.get(from..to) {
            Some(t) if t.starts_with("pub(") || t.starts_with("pub (") => Visibility::Crate,
            _ if public => Visibility::Public,
            _ => Visibility::Private,
        };
        let def = Def {
            name: self.token_text(name).to_string(),
            kind: Kind::Module,
            container: None,
            trait_name: None,
            bases: Vec::new(),
            fields: Vec::new(),
            returns: None,
            start_line: line_at(self.src, from),
            line: name.line,
            column: column_at(self.src, name.start),
            end_line: line_at(self.src, to.saturating_sub(1)),
            signature: 0,
            members: Vec::new(),
            visibility,
            parent: None,
            test: false,
        };
        self.defs.push(def, (from, to), Sig::new(from, to));
    }

    fn macro_tree(&mut self, all: &[Token], tree: &Token, anc: &[Frame], skip: &[(usize, usize)]) {
        let tokens = tokens::children(all, tree);
        let mut i = 0;
        while i < tokens.len() {
            let tok = tokens[i];
            if skip.iter().any(|&(s, e)| s <= tok.start && tok.start < e) {
                i += 1;
                continue;
            }
            match tok.kind {
                Tok::Tree => {
                    self.macro_tree(all, &tok, anc, skip);
                    i += 1;
                }
                Tok::Pipe | Tok::Let => i = self.macro_bindings(&tokens, i),
                Tok::Ident | Tok::SelfValue | Tok::Crate | Tok::Super => {
                    let mut segs = vec![self.token_text(tok).to_string()];
                    let mut sites = vec![Site::at(self.src, tok.line, tok.start)];
                    let mut j = i + 1;
                    while j + 1 < tokens.len()
                        && tokens[j].kind == Tok::PathSep
                        && tokens[j + 1].kind.is_word()
                    {
                        let seg = tokens[j + 1];
                        segs.push(self.token_text(seg).to_string());
                        sites.push(Site::at(self.src, seg.line, seg.start));
                        j += 2;
                    }
                    let prev = i.checked_sub(1).map(|k| tokens[k].kind);
                    let next = tokens.get(j);
                    let called = next.is_some_and(|n| {
                        n.kind == Tok::Tree && self.src.as_bytes().get(n.start) == Some(&b'(')
                    });
                    let next_kind = next.map(|n| n.kind);
                    self.macro_site(&tokens, i, (segs, sites), (prev, next_kind, called), anc);
                    i = j;
                }
                _ => i += 1,
            }
        }
    }

    /// The receiver a macro's tokens end with at `k` (just before a
    /// `.`): `self`, `self.field`, a local or a name, and chains of calls
    /// on them (`ig.matched("a", false)`, `make()?`, `m("a")` of a local
    /// closure), as `receiver` reads them from a syntax tree.
    fn macro_receiver(&self, tokens: &[Token], k: usize, depth: usize) -> Receiver {
        let kind = |k: Option<usize>| k.map(|k| tokens[k].kind);
        let tok = tokens[k];
        if depth > MAX_CHAIN {
            return Receiver::Unknown;
        }
        match tok.kind {
            Tok::SelfValue => Receiver::SelfValue,
            Tok::Ident if kind(k.checked_sub(1)) == Some(Tok::Dot) => {
                if k >= 2 && kind(Some(k - 2)) == Some(Tok::SelfValue) {
                    Receiver::Field(self.token_text(tok).to_string())
                } else {
                    Receiver::Unknown
                }
            }
            Tok::Ident if kind(k.checked_sub(1)) != Some(Tok::PathSep) => {
                self.named_receiver(self.token_text(tok), tok.start)
            }
            // `x.await` and `x?` have `x`'s receiver, as the tree's do.
            Tok::Keyword if self.token_text(tok) == "await" && k >= 2 => {
                if kind(Some(k - 1)) == Some(Tok::Dot) {
                    self.macro_receiver(tokens, k - 2, depth + 1)
                } else {
                    Receiver::Unknown
                }
            }
            Tok::Other if self.token_text(tok) == "?" && k >= 1 => {
                self.macro_receiver(tokens, k - 1, depth + 1)
            }
            Tok::Tree if self.src.as_bytes().get(tok.start) == Some(&b'(') && k >= 1 => {
                self.macro_call_value(tokens, k - 1, depth)
            }
            _ => Receiver::Unknown,
        }
    }

    /// The value of a call whose callee ends at `k` in a macro's tokens:
    /// a method's return on its receiver, a function's, a tuple struct.
    fn macro_call_value(&self, tokens: &[Token], k: usize, depth: usize) -> Receiver {
        let kind = |k: usize| tokens.get(k).map(|t| t.kind);
        let callee = tokens[k];
        if callee.kind != Tok::Ident {
            return Receiver::Unknown;
        }
        let name = self.token_text(callee);
        if k >= 2 && kind(k - 1) == Some(Tok::Dot) {
            let on = self.macro_receiver(tokens, k - 2, depth + 1);
            return if keeps_type(name) {
                on
            } else {
                on.then_call(name)
            };
        }
        // A path `a::b::f`: its segments, first to last.
        let mut segs = vec![name.to_string()];
        let mut j = k;
        while j >= 2 && kind(j - 1) == Some(Tok::PathSep) && kind(j - 2).is_some_and(Tok::is_word) {
            segs.insert(0, self.token_text(tokens[j - 2]).to_string());
            j -= 2;
        }
        if segs.len() == 1 {
            if self.is_local(name, callee.start) {
                return self
                    .closure_returns(name, callee.start)
                    .unwrap_or(Receiver::Unknown);
            }
            return if starts_upper(name) {
                Receiver::Type(name.to_string())
            } else {
                Receiver::Returned(segs)
            };
        }
        let owner = &segs[segs.len() - 2];
        if owner == "Self" {
            Receiver::Unknown
        } else {
            Receiver::Returned(segs)
        }
    }

    fn token_text(&self, token: Token) -> &'a str {
        self.src.get(token.start..token.end).unwrap_or("")
    }

    /// Names a macro's tokens bind at `i`: closure parameters (`|a, b: T|`
    /// after `(`, `,`, `=`, `=>` or `move`) and `let` names. They are locals
    /// from there on, so `|stream| stream.offset()` is not taken for a module
    /// `stream`. Returns where to go on scanning.
    fn macro_bindings(&mut self, tokens: &[Token], i: usize) -> usize {
        let kind = |k: usize| tokens.get(k).map(|t| t.kind);
        let func = self.defs.function_of(self.defs.innermost(tokens[i].start));
        if kind(i) == Some(Tok::Let) {
            let mut j = i + 1;
            while kind(j) == Some(Tok::Mut) {
                j += 1;
            }
            if kind(j) == Some(Tok::Ident) {
                let name = self.token_text(tokens[j]);
                self.locals.add(func, name, tokens[j].end, None);
                return j + 1;
            }
            return i + 1;
        }
        let opens = i == 0
            || matches!(
                kind(i - 1),
                Some(Tok::OpenParen | Tok::Comma | Tok::Eq | Tok::FatArrow)
            )
            || (kind(i - 1) == Some(Tok::Ident) && self.token_text(tokens[i - 1]) == "move");
        if !opens {
            return i + 1;
        }
        let Some(close) = (i + 1..tokens.len().min(i + 24)).find(|&k| kind(k) == Some(Tok::Pipe))
        else {
            return i + 1;
        };
        for k in i + 1..close {
            let named = kind(k) == Some(Tok::Ident)
                && matches!(
                    kind(k - 1),
                    Some(Tok::Pipe | Tok::Comma | Tok::Mut | Tok::Amp)
                )
                && matches!(kind(k + 1), Some(Tok::Comma | Tok::Colon | Tok::Pipe));
            if named {
                let name = self.token_text(tokens[k]);
                self.locals.add(func, name, tokens[close].end, None);
            }
        }
        close + 1
    }

    fn macro_site(
        &mut self,
        tokens: &[Token],
        i: usize,
        (segs, sites): (Vec<String>, Vec<Site>),
        (prev, next, called): (Option<Tok>, Option<Tok>, bool),
        anc: &[Frame],
    ) {
        let tok = tokens[i];
        let at = sites[0];
        if matches!(segs[0].as_str(), "self" | "crate" | "super") && segs.len() == 1 {
            return;
        }
        if prev == Some(Tok::Dot) {
            if !called || segs.len() != 1 {
                return;
            }
            let receiver = match i.checked_sub(2) {
                Some(k) => self.macro_receiver(tokens, k, 0),
                None => Receiver::Unknown,
            };
            self.push(&segs[0], Form::MethodCall, Vec::new(), receiver, at);
            return;
        }
        if next == Some(Tok::Bang) {
            if let (Some((name, path)), Some(&at)) = (segs.split_last(), sites.last()) {
                self.push(name, Form::Macro, path.to_vec(), Receiver::None, at);
            }
            return;
        }
        // `name: value` inside a macro is a field or argument label; a
        // path is not (`assert_value!(tokio::net::TcpStream: Send)`).
        if next == Some(Tok::Colon) && segs.len() == 1 {
            return;
        }
        if segs.len() > 1 {
            if let Some((segs, from)) = self.self_path(segs, anc) {
                self.push_path(segs, &sites, Form::Path, from);
            }
            return;
        }
        let name = &segs[0];
        if self.type_params.contains(name.as_str()) || self.is_local(name, tok.start) {
            return;
        }
        let form = if called { Form::Call } else { Form::Value };
        self.push(name, form, Vec::new(), Receiver::None, at);
    }

    fn import(&mut self, node: Node) {
        let scope = self.defs.innermost(node.start_byte());
        let mut cursor = node.walk();
        let public = node
            .named_children(&mut cursor)
            .any(|c| kind_of(c) == "visibility_modifier");
        let statement = Site::of(node, self.src);
        if kind_of(node) == "extern_crate_declaration" {
            let Some(name) = child(node, "name") else {
                return;
            };
            let name = text(name, self.src).to_string();
            let alias = child(node, "alias")
                .map_or_else(|| name.clone(), |a| text(a, self.src).to_string());
            self.imports.push(Import {
                path: vec![name],
                alias,
                glob: false,
                public,
                module: true,
                line: statement.line,
                column: statement.column,
                scope,
            });
            return;
        }
        let Some(arg) = child(node, "argument") else {
            return;
        };
        let mut found = Vec::new();
        use_tree(arg, self.src, &[], &mut found);
        for (path, alias, glob, line, pos) in found {
            let name = Site::at(self.src, line, pos);
            self.push_import(path, alias, glob, public, statement, name, scope);
        }
    }

    /// `#[path = "unix/mod.rs"] mod imp;` (tokio): `imp` is the module of
    /// that file, which the layout names after its folder (`unix`), as if
    /// `use self::unix as imp;` were written. Paths leaving the folder
    /// (`../x.rs`) are not followed.
    fn module_at_path(&mut self, item: Node, name: Node, scope: Option<u32>) {
        if child(item, "body").is_some() {
            return;
        }
        let mut prev = item.prev_named_sibling();
        let mut target = None;
        while let Some(a) = prev.filter(|a| kind_of(*a) == "attribute_item") {
            let t: String = text(a, self.src).split_whitespace().collect();
            if let Some(path) = t
                .strip_prefix("#[path=\"")
                .and_then(|r| r.strip_suffix("\"]"))
            {
                target = Some(path.to_string());
            }
            prev = a.prev_named_sibling();
        }
        let Some(path) = target else {
            return;
        };
        let stem = path
            .strip_suffix("/mod.rs")
            .or_else(|| path.strip_suffix(".rs"));
        let Some(segs) = stem.map(|s| s.split('/').collect::<Vec<_>>()) else {
            return;
        };
        if segs.iter().any(|s| s.is_empty() || *s == ".." || *s == ".") {
            return;
        }
        let alias = text(name, self.src).to_string();
        if segs == [alias.as_str()] {
            return;
        }
        let mut full = vec!["self".to_string()];
        full.extend(segs.iter().map(|s| s.to_string()));
        let at = Site::of(item, self.src);
        self.imports.push(Import {
            path: full,
            alias,
            glob: false,
            public: false,
            module: true,
            line: at.line,
            column: at.column,
            scope,
        });
    }

    /// One leaf of a `use` tree: the import (at `statement`), and the
    /// reference it makes (at `name`: a `use` list spans several lines).
    #[allow(clippy::too_many_arguments)]
    fn push_import(
        &mut self,
        path: Vec<String>,
        alias: String,
        glob: bool,
        public: bool,
        statement: Site,
        name_at: Site,
        scope: Option<u32>,
    ) {
        // `use Kind::*` uses the enum; `use super::*` names a module,
        // which module mentions cover.
        let glob_of_type = glob && path.last().is_some_and(|n| starts_upper(n));
        if !glob || glob_of_type {
            if let Some((name, prefix)) = path.split_last() {
                if !matches!(name.as_str(), "crate" | "self" | "super") {
                    self.refs.push(Ref {
                        name: name.clone(),
                        form: Form::Import,
                        path: prefix.to_vec(),
                        receiver: Receiver::None,
                        line: name_at.line,
                        column: name_at.column,
                        scope,
                    });
                }
            }
        }
        self.imports.push(Import {
            path,
            alias,
            glob,
            public,
            module: false,
            line: statement.line,
            column: statement.column,
            scope,
        });
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

/// A `use` tree flattened: (path, local name, glob, line and byte of the
/// name in the text parsed).
type UseLeaf = (Vec<String>, String, bool, u32, usize);

/// Flatten a `use` tree into its leaves.
fn use_tree(node: Node, src: &str, prefix: &[String], out: &mut Vec<UseLeaf>) {
    let join = |tail: Option<Vec<String>>| -> Option<Vec<String>> {
        let mut p = prefix.to_vec();
        p.extend(tail?);
        Some(p)
    };
    match kind_of(node) {
        "identifier" | "crate" | "super" | "self" | "scoped_identifier" => {
            let Some(mut path) = join(path_segments(node, src)) else {
                return;
            };
            if path.len() > 1 && path.last().is_some_and(|s| s == "self") {
                path.pop();
            }
            let alias = path.last().cloned().unwrap_or_default();
            let name = last_segment(node);
            out.push((path, alias, false, line(name), name.start_byte()));
        }
        "use_as_clause" => {
            let Some(p) = child(node, "path") else {
                return;
            };
            let Some(mut path) = join(path_segments(p, src)) else {
                return;
            };
            if path.len() > 1 && path.last().is_some_and(|s| s == "self") {
                path.pop();
            }
            let alias = child(node, "alias")
                .map(|a| text(a, src).to_string())
                .unwrap_or_default();
            let name = last_segment(p);
            out.push((path, alias, false, line(name), name.start_byte()));
        }
        "use_wildcard" => {
            let inner = node.named_child(0);
            let path = match inner.and_then(|p| path_segments(p, src)) {
                Some(tail) => join(Some(tail)).unwrap_or_default(),
                None => prefix.to_vec(),
            };
            // `use Kind::*` names `Kind` where it is written.
            let name = inner.map_or(node, last_segment);
            out.push((path, String::new(), true, line(name), name.start_byte()));
        }
        "scoped_use_list" => {
            let base = match child(node, "path") {
                Some(p) => match join(path_segments(p, src)) {
                    Some(b) => b,
                    None => return,
                },
                None => prefix.to_vec(),
            };
            if let Some(list) = child(node, "list") {
                use_tree(list, src, &base, out);
            }
        }
        "use_list" => {
            let mut cursor = node.walk();
            for child in node.named_children(&mut cursor) {
                use_tree(child, src, prefix, out);
            }
        }
        _ => {}
    }
}

/// A path's last segment (`a::\n    b` is on `b`'s line).
fn last_segment(path: Node) -> Node {
    child(path, "name").unwrap_or(path)
}
