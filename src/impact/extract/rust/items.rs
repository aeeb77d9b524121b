//! Rust definitions: each item with its owner, visibility, signature and
//! members, and the item macros whose body is plain items, opened up so
//! those items read as the module's own.

use super::*;

/// An item macro `unwrap_item_macros` opened: its name and where it is.
pub(in crate::impact::extract) struct Unwrapped {
    pub(super) name: String,
    pub(super) pos: usize,
}

/// A file's text with its item macros opened (`unwrap_item_macros`).
pub(in crate::impact::extract) struct Opened {
    pub(in crate::impact::extract) text: String,
    pub(in crate::impact::extract) found: Vec<Unwrapped>,
    /// The byte ranges made spaces, in order.
    pub(in crate::impact::extract) blanks: Vec<(usize, usize)>,
}

/// The source with every item macro whose body is plain items
/// (`cfg_net! { pub struct UdpSocket { … } }`, as tokio wraps most of its
/// items) opened up: the macro's name, `!` and braces become spaces, so
/// the items parse as the module's own, at the same lines and columns,
/// with their fields, bodies and references. None when there is none.
/// A body that is not items on its own (`lazy_static! { static ref … }`,
/// `bitflags!`) stays a macro, read token by token. With the text come the
/// byte ranges made spaces, in order, so that the file's tree can be
/// edited to match and parsed again incrementally.
pub(in crate::impact::extract) fn unwrap_item_macros(
    root: Node,
    src: &str,
    parser: &mut crate::syntax::Parser,
) -> Option<Opened> {
    let mut found = Vec::new();
    let mut blanks = Vec::new();
    item_macros(root, src, 0, parser, &mut found, &mut blanks);
    if found.is_empty() {
        return None;
    }
    let mut bytes = src.as_bytes().to_vec();
    blanks.sort_unstable();
    for &(from, to) in &blanks {
        for b in &mut bytes[from..to] {
            // Line breaks stay, so that lines do not move.
            if *b != b'\n' {
                *b = b' ';
            }
        }
    }
    // Only ASCII (a name, `!`, braces, spaces) was replaced by spaces.
    let text = String::from_utf8(bytes).ok()?;
    Some(Opened {
        text,
        found,
        blanks,
    })
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

/// A definition from its item node, its kind, its name node and the item's
/// ancestors (nearest last).
pub(super) fn def(
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
            no_self: kind == Kind::Method && !has_self_parameter(node),
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
pub(super) struct Lead {
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

/// Whether the function item `node` declares `self` (`&self`, `mut self`,
/// `self: Box<Self>`) among its parameters.
fn has_self_parameter(node: Node) -> bool {
    let Some(params) = child(node, "parameters") else {
        return false;
    };
    let mut cursor = params.walk();
    params
        .named_children(&mut cursor)
        .any(|p| match kind_of(p) {
            "self_parameter" => true,
            // `self: Box<Self>`
            "parameter" => child(p, "pattern").is_some_and(|pat| kind_of(pat) == "self"),
            _ => false,
        })
}

/// Variants and trait items are as visible as their enum or trait.
pub(super) fn inherit_visibility(defs: &mut Defs) {
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

impl<'a> Cx<'a> {
    /// The lead of the item `node`, when it is one, after noting whether
    /// `node` itself continues or ends a run of attributes and doc comments.
    pub(super) fn lead(&mut self, node: Node, shape: Shape, depth: usize) -> Option<Lead> {
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
    pub(super) fn capture(&mut self, node: Node, role: Role, anc: &[Frame], lead: Option<Lead>) {
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
}
