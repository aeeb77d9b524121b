//! What a Rust value's type is, when it is evident: a declared type, a
//! literal's, a constructor's or a call's declared return, a bound on a
//! generic parameter, a closure's return.

use super::*;

/// Like `type_base`, keeping the path: `a::Foo<T>` → `a::Foo`; also
/// through `Pin<&mut T>`, since a method call auto-derefs to `T` too.
pub(super) fn type_path(node: Node, src: &str) -> Option<String> {
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
pub(super) fn declared(node: Node, src: &str) -> Option<Receiver> {
    let t = type_path(node, src)?;
    Some(if t == "Self" {
        Receiver::SelfValue
    } else {
        Receiver::Type(t)
    })
}

/// The name of the type an `impl` or local is about: `Foo` for `Foo<T>`,
/// `&mut Foo`, `a::Foo`, `Box<Foo>`.
pub(super) fn type_base(node: Node, src: &str) -> Option<String> {
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
pub(super) fn value_type(node: Node, src: &str) -> Option<Receiver> {
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
pub(super) fn keeps_type(method: &str) -> bool {
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
pub(super) fn returned_type(node: Node, src: &str) -> Option<String> {
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

impl<'a> Cx<'a> {
    /// Note what a type parameter is bound by, or that it is not.
    pub(super) fn bound(&mut self, param: &'a str, bounds: Option<Node>) {
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

    /// `Returned` from a call of a local (a closure), not of a function.
    fn calls_local(&self, ty: &Receiver, pos: usize) -> bool {
        matches!(ty, Receiver::Returned(path) if path.len() == 1 && self.is_local(&path[0], pos))
    }

    /// `ty`, unless it is the value of a call of a local: then what that
    /// closure is known to return, if anything.
    pub(super) fn through_closure(&self, ty: Receiver, pos: usize) -> Option<Receiver> {
        match &ty {
            Receiver::Returned(path) if path.len() == 1 && self.is_local(&path[0], pos) => {
                self.closure_returns(&path[0], pos)
            }
            _ => Some(ty),
        }
    }

    /// What calling the local closure `name` at `pos` returns, when its
    /// body says (`let m = |p| ig.matched(p, false);`, then `m("a")`).
    pub(super) fn closure_returns(&self, name: &str, pos: usize) -> Option<Receiver> {
        let func = self.defs.function_of(self.defs.innermost(pos));
        self.locals.before(func, name, pos)?.calls.clone()
    }

    /// `let m = |…| body;` with a body whose value is evident: the
    /// receiver a call of `m` returns.
    pub(super) fn closure_bound(&self, pattern: Node, parent: Option<Node>) -> Option<Receiver> {
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

    /// The receiver `name` at `pos`: a local's type if it has one, else the
    /// name itself when it may be a module or a type.
    pub(super) fn named_receiver(&self, name: &str, pos: usize) -> Receiver {
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

    pub(super) fn receiver(&self, value: Node) -> Receiver {
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
    pub(super) fn method_chain(&self, call: Node, depth: usize) -> Option<Receiver> {
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
}
