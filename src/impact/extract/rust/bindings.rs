//! Rust locals: the names a pattern binds (`let`, parameters, `for`,
//! `match`, closures), with their type when it is evident.

use super::*;

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
pub(super) fn bind(
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

impl<'a> Cx<'a> {
    pub(super) fn bind_pattern(&mut self, pattern: Node, parent: Option<Node>) {
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
}
