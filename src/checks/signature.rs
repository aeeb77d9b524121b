//! What callers of a function rely on, and whether a call still fits.
//!
//! A signature here is what a call site must match, not the text of the
//! declaration: in Rust the receiver and the number of parameters (types
//! are the compiler's business: a type named `Self` instead of `Command`,
//! a pattern `mut reader` instead of `reader`, a comment or a visibility
//! are no change to any caller); in Python the parameters' names, kinds and
//! whether each has a default (annotations change no call). A default's
//! value is kept too: changing it changes nothing a call must match, but
//! every call that leaves the parameter out gets the new value
//! (`Signature::changed_defaults`, `Signature::relies_on_default`).
//! `CallSites` reads the shape of a call where a reference stands, and
//! `Signature::accepts` says whether it binds. Everything here stands down
//! when unsure: an unreadable call, a `*args` splat, a macro's arguments.

use std::collections::{HashMap, HashSet};

use tree_sitter::Node;

use crate::syntax::{Lang, Parsed};

/// How a Rust method takes `self`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Receiver {
    None,
    Value,
    Ref,
    RefMut,
}

/// How a Python parameter is passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pass {
    /// Before `/`.
    Positional,
    /// By position or by name.
    Either,
    /// `*args`.
    Rest,
    /// After `*` or `*args`.
    Keyword,
    /// `**kwargs`.
    Keywords,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    pub name: String,
    pub pass: Pass,
    /// The default value's tokens (`True`, `(1,2)`, `"a b"`), when it has
    /// one: what a call that leaves the parameter out gets.
    pub default: Option<String>,
    /// The body tests the parameter by identity against its default
    /// (`if timeout is None:`): the default stands for a value the body
    /// decides, which a changed default may well keep.
    pub sentinel: bool,
}

impl Param {
    pub fn optional(&self) -> bool {
        self.default.is_some()
    }
}

/// A parameter whose default value changed while the signature stayed
/// compatible: every call that leaves it out now gets another value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DefaultChange {
    pub name: String,
    pub old: String,
    pub new: String,
}

/// How a Python callable is reached from a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Binding {
    Function,
    /// A method: `self` is bound when called on an instance.
    Method,
    /// `@classmethod`: `cls` is always bound.
    ClassMethod,
    StaticMethod,
    /// `@property` and its kin: read, not called.
    Property,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Signature {
    Rust {
        receiver: Receiver,
        /// Parameters besides `self`.
        params: usize,
    },
    Python {
        binding: Binding,
        /// Without the bound `self` or `cls`.
        params: Vec<Param>,
    },
}

/// A function or method as callers see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Callable {
    pub name: String,
    /// The type, trait or class it is defined in, as the impact analysis
    /// names it (`Command` of `Command::get`, `Model` of `Model.save`).
    pub owner: Option<String>,
    /// The line of its name.
    pub line: u32,
    /// An item of `impl Trait for Type`: the trait, not this item, is what
    /// callers rely on.
    pub trait_impl: bool,
    /// A Python `@overload` stub: a declaration for type checkers. Calls
    /// bind to the implementation that follows it.
    pub overload: bool,
    pub signature: Signature,
}

/// How a call names what it calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// `f(x)`
    Plain,
    /// `x.f()`, `self.f()`, `super().f()`
    Method,
    /// `Type::f(x)`, `Class.f(obj)`: a method's receiver is passed.
    Path,
}

/// The arguments of one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    pub form: Form,
    pub positional: usize,
    pub keywords: Vec<String>,
    /// `*args` or `**kwargs` (or a spread) among the arguments: how many
    /// values it passes is unknown.
    pub spread: bool,
}

impl Signature {
    /// Whether every call that fitted `old` fits `self`: no caller can
    /// tell the change.
    pub fn compatible_with(&self, old: &Signature) -> bool {
        match (old, self) {
            (Signature::Rust { .. }, Signature::Rust { .. }) => old == self,
            (
                Signature::Python {
                    binding: ob,
                    params: op,
                },
                Signature::Python {
                    binding: nb,
                    params: np,
                },
            ) => same_reach(*ob, *nb) && python_compatible(op, np),
            _ => false,
        }
    }

    /// Whether `call` fits this signature; true when that cannot be told.
    pub fn accepts(&self, call: &Call) -> bool {
        match self {
            Signature::Rust { receiver, params } => {
                let expected = match (call.form, receiver) {
                    (Form::Path, Receiver::None) | (Form::Plain, _) => *params,
                    (Form::Path, _) => params + 1,
                    // `x.f()` of a function without `self`: another type's
                    // method of the same name, most likely.
                    (Form::Method, Receiver::None) => return true,
                    (Form::Method, _) => *params,
                };
                call.spread || call.positional == expected
            }
            Signature::Python { binding, params } => {
                if call.spread || *binding == Binding::Property {
                    return true;
                }
                let mut positional = call.positional;
                if *binding == Binding::Method && call.form == Form::Path {
                    // `Class.method(obj, …)`: the instance comes first.
                    if positional == 0 {
                        return true;
                    }
                    positional -= 1;
                }
                python_binds(params, positional, &call.keywords)
            }
        }
    }
}

impl Signature {
    /// The parameters of a compatible signature whose default value
    /// changed from `old`'s (Python; Rust has no defaults).
    pub fn changed_defaults(&self, old: &Signature) -> Vec<DefaultChange> {
        let (Signature::Python { params: new, .. }, Signature::Python { params: old, .. }) =
            (self, old)
        else {
            return Vec::new();
        };
        new.iter()
            .filter_map(|n| {
                let o = old.iter().find(|o| o.name == n.name && o.pass == n.pass)?;
                if o.sentinel || n.sentinel {
                    return None;
                }
                match (&o.default, &n.default) {
                    (Some(a), Some(b)) if a != b => Some(DefaultChange {
                        name: n.name.clone(),
                        old: a.clone(),
                        new: b.clone(),
                    }),
                    _ => None,
                }
            })
            .collect()
    }

    /// Whether `call` binds to this signature and leaves `param` to its
    /// default. A call that spreads `*args` or `**kwargs` may pass it, so
    /// it is never said to rely on the default.
    pub fn relies_on_default(&self, call: &Call, param: &str) -> bool {
        let Signature::Python { binding, params } = self else {
            return false;
        };
        if call.spread || *binding == Binding::Property || !self.accepts(call) {
            return false;
        }
        let Some(p) = params.iter().find(|p| p.name == param) else {
            return false;
        };
        if p.default.is_none() || call.keywords.iter().any(|k| k == param) {
            return false;
        }
        let mut positional = call.positional;
        if *binding == Binding::Method && call.form == Form::Path {
            positional = positional.saturating_sub(1);
        }
        match p.pass {
            Pass::Keyword => true,
            Pass::Positional | Pass::Either => {
                let slot = params
                    .iter()
                    .filter(|q| matches!(q.pass, Pass::Positional | Pass::Either))
                    .position(|q| q.name == param);
                slot.is_some_and(|i| positional <= i)
            }
            Pass::Rest | Pass::Keywords => false,
        }
    }
}

/// Property-ness is what a caller sees: `cached_property` for `property`
/// is no change, a method becoming a property is.
fn same_reach(old: Binding, new: Binding) -> bool {
    (old == Binding::Property) == (new == Binding::Property)
        && (old == Binding::StaticMethod) == (new == Binding::StaticMethod)
}

fn python_compatible(old: &[Param], new: &[Param]) -> bool {
    let positional = |ps: &[Param]| -> Vec<Param> {
        ps.iter()
            .filter(|p| matches!(p.pass, Pass::Positional | Pass::Either))
            .cloned()
            .collect()
    };
    let (op, np) = (positional(old), positional(new));
    let has = |ps: &[Param], pass: Pass| ps.iter().any(|p| p.pass == pass);
    // Every position keeps its meaning, its name (callers may name it) and
    // its default.
    for (i, o) in op.iter().enumerate() {
        let Some(n) = np.get(i) else {
            return false;
        };
        if (o.pass == Pass::Either && (n.pass != Pass::Either || n.name != o.name))
            || (o.optional() && !n.optional())
        {
            return false;
        }
    }
    // New positions must be optional, and cannot take what `*args` took.
    if np[op.len()..].iter().any(|n| !n.optional()) {
        return false;
    }
    if np.len() > op.len() && has(old, Pass::Rest) {
        return false;
    }
    for pass in [Pass::Rest, Pass::Keywords] {
        if has(old, pass) && !has(new, pass) {
            return false;
        }
    }
    // Every name a caller could pass is still taken, optional if it was.
    for o in old.iter().filter(|p| p.pass == Pass::Keyword) {
        match new
            .iter()
            .find(|n| n.name == o.name && matches!(n.pass, Pass::Either | Pass::Keyword))
        {
            Some(n) if n.optional() || !o.optional() => {}
            _ => return false,
        }
    }
    // A new required name breaks every caller.
    !new.iter()
        .any(|n| n.pass == Pass::Keyword && !n.optional() && !old.iter().any(|o| o.name == n.name))
}

/// Python's binding of a call's arguments to parameters.
fn python_binds(params: &[Param], positional: usize, keywords: &[String]) -> bool {
    let slots: Vec<&Param> = params
        .iter()
        .filter(|p| matches!(p.pass, Pass::Positional | Pass::Either))
        .collect();
    let rest = params.iter().any(|p| p.pass == Pass::Rest);
    let any_keyword = params.iter().any(|p| p.pass == Pass::Keywords);
    if positional > slots.len() && !rest {
        return false;
    }
    let mut filled: HashSet<&str> = slots
        .iter()
        .take(positional)
        .map(|p| p.name.as_str())
        .collect();
    for k in keywords {
        let named = params
            .iter()
            .find(|p| p.name == *k && matches!(p.pass, Pass::Either | Pass::Keyword));
        match named {
            Some(p) => {
                if !filled.insert(p.name.as_str()) {
                    return false;
                }
            }
            None if any_keyword => {}
            None => return false,
        }
    }
    params.iter().all(|p| {
        p.optional()
            || matches!(p.pass, Pass::Rest | Pass::Keywords)
            || filled.contains(p.name.as_str())
    })
}

fn text<'a>(node: Node, src: &'a [u8]) -> &'a str {
    std::str::from_utf8(&src[node.byte_range()]).unwrap_or("")
}

fn line(node: Node) -> u32 {
    node.start_position().row as u32 + 1
}

/// Every function and method of a file with its signature.
pub fn callables(lang: Lang, root: Node, src: &[u8]) -> Vec<Callable> {
    let mut out = Vec::new();
    match lang {
        Lang::Rust => rust_items(root, src, None, &mut out),
        Lang::Python => python_block(root, src, None, &mut out),
    }
    out
}

/// Where a Rust item sits: its impl's or trait's type, and whether that
/// is an `impl Trait for Type`.
type Within = Option<(String, bool)>;

fn rust_items(node: Node, src: &[u8], within: Within, out: &mut Vec<Callable>) {
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        match child.kind() {
            "function_item" | "function_signature_item" => {
                if let Some(c) = rust_callable(child, src, &within) {
                    out.push(c);
                }
            }
            "impl_item" => {
                let of_trait = child.child_by_field_name("trait").is_some();
                let owner = child
                    .child_by_field_name("type")
                    .map(|t| type_name(text(t, src)));
                if let Some(body) = child.child_by_field_name("body") {
                    rust_items(body, src, owner.map(|o| (o, of_trait)), out);
                }
            }
            "trait_item" => {
                let owner = child
                    .child_by_field_name("name")
                    .map(|n| text(n, src).to_string());
                if let Some(body) = child.child_by_field_name("body") {
                    rust_items(body, src, owner.map(|o| (o, false)), out);
                }
            }
            "mod_item" => {
                if let Some(body) = child.child_by_field_name("body") {
                    rust_items(body, src, None, out);
                }
            }
            _ => {}
        }
    }
}

/// `Foo` of `&'a mut crate::x::Foo<T>`.
fn type_name(t: &str) -> String {
    let t = t.split('<').next().unwrap_or(t);
    let t = t.rsplit("::").next().unwrap_or(t);
    t.trim_start_matches(|c: char| c == '&' || c.is_whitespace())
        .split_whitespace()
        .last()
        .unwrap_or("")
        .to_string()
}

fn rust_callable(node: Node, src: &[u8], within: &Within) -> Option<Callable> {
    let name = node.child_by_field_name("name")?;
    let params = node.child_by_field_name("parameters")?;
    let mut receiver = Receiver::None;
    let mut count = 0;
    let mut cursor = params.walk();
    for p in params.named_children(&mut cursor) {
        match p.kind() {
            "self_parameter" => receiver = receiver_of(text(p, src)),
            // `self: &Self`, `self: Box<Self>`
            "parameter"
                if p.child_by_field_name("pattern")
                    .is_some_and(|pat| text(pat, src) == "self") =>
            {
                let ty = p.child_by_field_name("type").map_or("", |t| text(t, src));
                receiver = receiver_of(ty);
                if receiver == Receiver::None {
                    receiver = Receiver::Value;
                }
            }
            "parameter" | "variadic_parameter" => count += 1,
            _ => {}
        }
    }
    Some(Callable {
        name: text(name, src).to_string(),
        owner: within.as_ref().map(|w| w.0.clone()),
        line: line(name),
        trait_impl: within.as_ref().is_some_and(|w| w.1),
        overload: false,
        signature: Signature::Rust {
            receiver,
            params: count,
        },
    })
}

fn receiver_of(t: &str) -> Receiver {
    let t: String = t.chars().filter(|c| !c.is_whitespace()).collect();
    if t.starts_with("&mut") || t.starts_with("&'") && t.contains("mut") {
        Receiver::RefMut
    } else if t.starts_with('&') {
        Receiver::Ref
    } else if t.contains("self") || t.contains("Self") {
        Receiver::Value
    } else {
        Receiver::None
    }
}

/// Definitions of a Python block: functions at the top level and methods
/// directly in classes (nested functions are no one's API).
fn python_block(node: Node, src: &[u8], class: Option<&str>, out: &mut Vec<Callable>) {
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        let (def, decorators) = match child.kind() {
            "decorated_definition" => {
                let mut c = child.walk();
                let decorators: Vec<String> = child
                    .named_children(&mut c)
                    .filter(|d| d.kind() == "decorator")
                    .map(|d| text(d, src).trim_start_matches('@').trim().to_string())
                    .collect();
                match child.child_by_field_name("definition") {
                    Some(d) => (d, decorators),
                    None => continue,
                }
            }
            "function_definition" | "class_definition" => (child, Vec::new()),
            // Definitions under `if`, `try`, `with` at the same level.
            "if_statement" | "try_statement" | "with_statement" | "else_clause" | "elif_clause"
            | "except_clause" | "finally_clause" | "block" => {
                python_block(child, src, class, out);
                continue;
            }
            _ => continue,
        };
        match def.kind() {
            "class_definition" => {
                let name = def.child_by_field_name("name").map(|n| text(n, src));
                if let (Some(body), Some(name)) = (def.child_by_field_name("body"), name) {
                    python_block(body, src, Some(name), out);
                }
            }
            "function_definition" => {
                if let Some(c) = python_callable(def, src, class, &decorators) {
                    out.push(c);
                }
            }
            _ => {}
        }
    }
}

fn python_callable(
    def: Node,
    src: &[u8],
    class: Option<&str>,
    decorators: &[String],
) -> Option<Callable> {
    let name = def.child_by_field_name("name")?;
    let last = |d: &String| {
        let path = d.split('(').next().unwrap_or(d).trim().to_string();
        path.rsplit('.').next().unwrap_or(&path).to_string()
    };
    let names: Vec<String> = decorators.iter().map(last).collect();
    let has = |n: &str| names.iter().any(|d| d == n);
    let binding = if has("property")
        || has("cached_property")
        || has("setter")
        || has("getter")
        || has("deleter")
    {
        Binding::Property
    } else if class.is_none() {
        Binding::Function
    } else if has("staticmethod") {
        Binding::StaticMethod
    } else if has("classmethod") {
        Binding::ClassMethod
    } else {
        Binding::Method
    };
    let mut params = python_params(def.child_by_field_name("parameters")?, src);
    // Only a default can be a sentinel the body tests; the body's text,
    // normalized, is the cost of each callable that has one.
    let defaults = params.iter().any(|p| p.default.is_some());
    if let Some(body) = def.child_by_field_name("body").filter(|_| defaults) {
        let body = text(body, src)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        for p in &mut params {
            if let Some(d) = &p.default {
                p.sentinel = tests_identity(&body, &p.name, d);
            }
        }
    }
    if matches!(
        binding,
        Binding::Method | Binding::ClassMethod | Binding::Property
    ) && params
        .first()
        .is_some_and(|p| matches!(p.pass, Pass::Positional | Pass::Either))
    {
        params.remove(0);
    }
    Some(Callable {
        name: text(name, src).to_string(),
        owner: class.map(str::to_string),
        line: line(name),
        trait_impl: false,
        overload: has("overload"),
        signature: Signature::Python { binding, params },
    })
}

/// Whether `body` (blanks collapsed) holds `name is value` or `name is
/// not value`, `name` standing as a word of its own.
fn tests_identity(body: &str, name: &str, value: &str) -> bool {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    [
        format!("{name} is {value}"),
        format!("{name} is not {value}"),
    ]
    .iter()
    .any(|needle| {
        body.match_indices(needle.as_str()).any(|(i, _)| {
            let before = body[..i].chars().next_back();
            let after = body[i + needle.len()..].chars().next();
            !before.is_some_and(|c| word(c) || c == '.') && !after.is_some_and(word)
        })
    })
}

fn python_params(node: Node, src: &[u8]) -> Vec<Param> {
    let mut out: Vec<Param> = Vec::new();
    let mut keyword_only = false;
    let mut cursor = node.walk();
    for p in node.named_children(&mut cursor) {
        let (inner, default) = match p.kind() {
            "default_parameter" | "typed_default_parameter" => (
                p,
                Some(
                    p.child_by_field_name("value")
                        .map_or(String::new(), |v| tokens(unparenthesized(v), src)),
                ),
            ),
            _ => (p, None),
        };
        fn first(n: Node) -> Option<Node> {
            let mut c = n.walk();
            n.named_children(&mut c).next()
        }
        // A typed parameter wraps its name or splat pattern.
        let core = match inner.kind() {
            "typed_parameter" => first(inner).unwrap_or(inner),
            "default_parameter" | "typed_default_parameter" => {
                inner.child_by_field_name("name").unwrap_or(inner)
            }
            _ => inner,
        };
        let push = |out: &mut Vec<Param>, name: Node, pass: Pass| {
            out.push(Param {
                name: text(name, src).to_string(),
                pass,
                default: default.clone(),
                sentinel: false,
            })
        };
        match core.kind() {
            "identifier" => {
                let pass = if keyword_only {
                    Pass::Keyword
                } else {
                    Pass::Either
                };
                push(&mut out, core, pass);
            }
            "list_splat_pattern" => {
                push(&mut out, first(core).unwrap_or(core), Pass::Rest);
                keyword_only = true;
            }
            "dictionary_splat_pattern" => {
                push(&mut out, first(core).unwrap_or(core), Pass::Keywords)
            }
            "keyword_separator" => keyword_only = true,
            "positional_separator" => {
                for p in out.iter_mut() {
                    if p.pass == Pass::Either {
                        p.pass = Pass::Positional;
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// `x` of `((x))`: the same value.
fn unparenthesized(mut node: Node) -> Node {
    while node.kind() == "parenthesized_expression" && node.named_child_count() == 1 {
        match node.named_child(0) {
            Some(inner) if inner.kind() != "comment" => node = inner,
            _ => break,
        }
    }
    node
}

/// An expression as its tokens, comments left out, a space kept only
/// between two words: `( 1,2 )` and `(1, 2)` read the same, `"a  b"` keeps
/// its spaces.
fn tokens(node: Node, src: &[u8]) -> String {
    let mut out = String::new();
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        if n.kind() == "comment" {
            continue;
        }
        if n.child_count() == 0 || matches!(n.kind(), "string" | "concatenated_string") {
            let t = text(n, src);
            let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
            if word(out.chars().last()) && word(t.chars().next()) {
                out.push(' ');
            }
            out.push_str(t);
            continue;
        }
        let mut c = n.walk();
        let children: Vec<Node> = n.children(&mut c).collect();
        stack.extend(children.into_iter().rev());
    }
    out
}

/// Every name a file defines, at any depth: items in Rust; functions,
/// classes and assigned names outside function bodies in Python. A name
/// removed from one place and still defined in the file was moved.
pub fn defined(lang: Lang, root: Node, src: &[u8]) -> HashSet<String> {
    let mut named = Vec::new();
    let mut assignments = Vec::new();
    let mut stack = vec![(root, false)];
    while let Some((n, in_function)) = stack.pop() {
        let kind = n.kind();
        if defines(lang, kind) {
            named.push(n);
        }
        if lang == Lang::Python && kind == "assignment" && !in_function {
            assignments.push(n);
        }
        let inside = in_function || kind == "function_definition";
        let mut c = n.walk();
        for child in n.named_children(&mut c) {
            stack.push((child, inside));
        }
    }
    defined_in(&named, &assignments, src)
}

/// Whether a node of `kind` defines the name in its `name` field.
pub(super) fn defines(lang: Lang, kind: &str) -> bool {
    match lang {
        Lang::Rust => matches!(
            kind,
            "function_item"
                | "function_signature_item"
                | "struct_item"
                | "enum_item"
                | "union_item"
                | "type_item"
                | "trait_item"
                | "const_item"
                | "static_item"
                | "mod_item"
                | "macro_definition"
        ),
        Lang::Python => matches!(kind, "function_definition" | "class_definition"),
    }
}

/// `defined`, from the nodes that define a name (`defines`) and Python's
/// assignments outside function bodies.
pub(super) fn defined_in(named: &[Node], assignments: &[Node], src: &[u8]) -> HashSet<String> {
    let mut out = HashSet::new();
    for n in named {
        if let Some(name) = n.child_by_field_name("name") {
            out.insert(text(name, src).to_string());
        }
    }
    for n in assignments {
        if let Some(left) = n.child_by_field_name("left") {
            let mut targets = vec![left];
            while let Some(t) = targets.pop() {
                match t.kind() {
                    "identifier" => {
                        out.insert(text(t, src).to_string());
                    }
                    "pattern_list" | "tuple_pattern" | "list_pattern" => {
                        let mut c = t.walk();
                        targets.extend(t.named_children(&mut c));
                    }
                    _ => {}
                }
            }
        }
    }
    out
}

/// The names a file imports, each with the paths it imports them from
/// (`use rand_core::{Rng as R}` gives `R` from `rand_core::Rng`; `from .x
/// import y` gives `y` from `.x.y`). A symbol removed in one place and
/// imported from somewhere new is provided by that import.
pub fn imports(lang: Lang, root: Node, src: &[u8]) -> HashMap<String, HashSet<String>> {
    let mut found = Vec::new();
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        if imports_here(lang, n.kind()) {
            found.push(n);
            continue;
        }
        let mut c = n.walk();
        stack.extend(n.named_children(&mut c));
    }
    imports_in(lang, &found, src)
}

/// Whether a node of `kind` is an import statement `imports` reads.
pub(super) fn imports_here(lang: Lang, kind: &str) -> bool {
    matches!(
        (lang, kind),
        (Lang::Rust, "use_declaration") | (Lang::Python, "import_from_statement")
    )
}

/// `imports`, from the import statements (`imports_here`).
pub(super) fn imports_in(
    lang: Lang,
    statements: &[Node],
    src: &[u8],
) -> HashMap<String, HashSet<String>> {
    let mut out: HashMap<String, HashSet<String>> = HashMap::new();
    let mut add = |name: &str, from: String| {
        out.entry(name.to_string()).or_default().insert(from);
    };
    for &n in statements {
        match lang {
            Lang::Rust => {
                if let Some(arg) = n.child_by_field_name("argument") {
                    rust_use(arg, src, "", &mut add);
                }
            }
            Lang::Python => {
                let module = n
                    .child_by_field_name("module_name")
                    .map_or("", |m| text(m, src));
                let mut c = n.walk();
                for name in n.children_by_field_name("name", &mut c) {
                    let (path, alias) = match name.kind() {
                        "aliased_import" => (
                            name.child_by_field_name("name")
                                .map_or("", |x| text(x, src)),
                            name.child_by_field_name("alias")
                                .map_or("", |x| text(x, src)),
                        ),
                        _ => (text(name, src), text(name, src)),
                    };
                    if !alias.is_empty() {
                        add(alias, format!("{module}.{path}"));
                    }
                }
            }
        }
    }
    out
}

fn rust_use(node: Node, src: &[u8], prefix: &str, add: &mut impl FnMut(&str, String)) {
    let join = |p: &str| {
        if prefix.is_empty() {
            p.to_string()
        } else {
            format!("{prefix}::{p}")
        }
    };
    match node.kind() {
        "identifier" | "scoped_identifier" | "self" | "crate" | "super" => {
            let path = join(text(node, src));
            let name = node
                .child_by_field_name("name")
                .map_or(text(node, src), |x| text(x, src));
            // `use a::b::{self}` imports `b`.
            let name = if name == "self" {
                prefix.rsplit("::").next().unwrap_or("")
            } else {
                name
            };
            if !name.is_empty() {
                add(name, path);
            }
        }
        "use_as_clause" => {
            if let (Some(path), Some(alias)) = (
                node.child_by_field_name("path"),
                node.child_by_field_name("alias"),
            ) {
                add(text(alias, src), join(text(path, src)));
            }
        }
        "scoped_use_list" => {
            let inner = node
                .child_by_field_name("path")
                .map_or(prefix.to_string(), |p| join(text(p, src)));
            if let Some(list) = node.child_by_field_name("list") {
                rust_use(list, src, &inner, add);
            }
        }
        "use_list" => {
            let mut c = node.walk();
            for item in node.named_children(&mut c) {
                rust_use(item, src, prefix, add);
            }
        }
        _ => {}
    }
}

/// A file's tree, read for the calls it holds (the review's store parsed
/// it once: `syntax::Store`).
pub struct CallSites {
    parsed: std::sync::Arc<Parsed>,
}

impl CallSites {
    pub fn new(parsed: std::sync::Arc<Parsed>) -> CallSites {
        CallSites { parsed }
    }

    pub fn parse(lang: Lang, src: Vec<u8>) -> Option<CallSites> {
        let text = std::sync::Arc::new(crate::syntax::Text::new(src));
        Parsed::new(lang, text)
            .ok()
            .map(|p| CallSites::new(std::sync::Arc::new(p)))
    }

    fn src(&self) -> &[u8] {
        self.parsed.src().as_bytes()
    }

    /// Whether `line` declares a module named `name` (`mod snapshot;`):
    /// each test crate under `tests/` declares its own, so a sibling's
    /// `mod snapshot;` does not refer to a removed one.
    pub fn declares_module(&self, line: u32, name: &str) -> bool {
        if self.parsed.lang() != Lang::Rust {
            return false;
        }
        let mut stack = vec![self.parsed.root()];
        while let Some(n) = stack.pop() {
            let (start, end) = (
                n.start_position().row as u32 + 1,
                n.end_position().row as u32 + 1,
            );
            if line < start || line > end {
                continue;
            }
            if n.kind() == "mod_item"
                && n.child_by_field_name("name").is_some_and(|x| {
                    x.start_position().row as u32 + 1 == line && text(x, self.src()) == name
                })
            {
                return true;
            }
            let mut c = n.walk();
            stack.extend(n.named_children(&mut c));
        }
        false
    }

    /// The places around `line` that list every member of the type `name`
    /// but some of `new` (`members::listers`).
    pub fn listers(&self, line: u32, name: &str, new: &[String]) -> Vec<super::members::Lister> {
        if self.parsed.lang() != Lang::Rust {
            return Vec::new();
        }
        let row = line.saturating_sub(1) as usize;
        super::members::listers(self.parsed.root(), self.src(), row, name, new)
    }

    /// The calls of `name` whose name stands on `line`. Calls inside a
    /// macro's arguments are not parsed, so not found.
    pub fn at(&self, line: u32, name: &str) -> Vec<Call> {
        let row = line.saturating_sub(1) as usize;
        let lang = self.parsed.lang();
        let mut out = Vec::new();
        let mut stack = vec![self.parsed.root()];
        while let Some(n) = stack.pop() {
            if n.start_position().row > row || n.end_position().row < row {
                continue;
            }
            if n.kind() == call_kind(lang) {
                if let Some((last, call)) = call_of(lang, n, self.src()) {
                    if text(last, self.src()) == name && last.start_position().row == row {
                        out.push(call);
                    }
                }
            }
            let mut c = n.walk();
            stack.extend(n.named_children(&mut c));
        }
        out
    }
}

fn call_kind(lang: Lang) -> &'static str {
    match lang {
        Lang::Rust => "call_expression",
        Lang::Python => "call",
    }
}

/// A call node's callee name (the last segment of its path) and its
/// arguments, when they can be read.
fn call_of<'t>(lang: Lang, n: Node<'t>, src: &[u8]) -> Option<(Node<'t>, Call)> {
    let mut callee = n.child_by_field_name("function")?;
    if callee.kind() == "generic_function" {
        callee = callee.child_by_field_name("function")?;
    }
    let (last, form) = match (lang, callee.kind()) {
        (_, "identifier") => (callee, Form::Plain),
        (Lang::Rust, "field_expression") => (callee.child_by_field_name("field")?, Form::Method),
        (Lang::Rust, "scoped_identifier") => (callee.child_by_field_name("name")?, Form::Path),
        (Lang::Python, "attribute") => {
            let object = callee.child_by_field_name("object")?;
            let o = text(object, src);
            // `Class.method(obj)` passes the instance; `module.f(x)`,
            // `obj.f(x)` and `super().f(x)` do not.
            let form = if object.kind() == "identifier"
                && o.chars().next().is_some_and(char::is_uppercase)
            {
                Form::Path
            } else {
                Form::Method
            };
            (callee.child_by_field_name("attribute")?, form)
        }
        _ => return None,
    };
    let args = n.child_by_field_name("arguments")?;
    let mut call = Call {
        form,
        positional: 0,
        keywords: Vec::new(),
        spread: false,
    };
    if args.kind() == "generator_expression" {
        call.positional = 1;
        return Some((last, call));
    }
    let mut c = args.walk();
    for a in args.named_children(&mut c) {
        match a.kind() {
            "comment" | "line_comment" | "block_comment" | "attribute_item" => {}
            "keyword_argument" => {
                let k = a.child_by_field_name("name").map_or("", |k| text(k, src));
                call.keywords.push(k.to_string());
            }
            "list_splat" | "dictionary_splat" => call.spread = true,
            _ => call.positional += 1,
        }
    }
    Some((last, call))
}

/// What `CallSites` answers for a few names, read from a file's tree
/// while the index holds it, so that the file need not be parsed again
/// when `breaking_change` looks at its call sites: every call of each
/// name (by the line the name stands on), the module declarations of each
/// module name, and the places listing each shape's members (on the lines
/// that may list them). Read from where the names stand in the text, not
/// by walking the whole tree: a name like `new` is in every file.
#[derive(Debug, Default)]
pub struct CallFacts {
    calls: HashMap<(u32, String), Vec<Call>>,
    listers: HashMap<(u32, String, Vec<String>), Vec<super::members::Lister>>,
    modules: HashSet<(u32, String)>,
}

/// A shape whose new members `breaking_change` looks for where it is
/// listed: its name, the members, and whether it is an enum.
pub type NewMembers = (String, Vec<String>, bool);

/// How many ancestors up from a callee's name its call can be
/// (`call → generic_function → scoped_identifier → name`).
const CALL_DEPTH: usize = 4;

impl CallFacts {
    /// Read `parsed` for the calls of `names`, the declarations of the
    /// modules `modules` and the listings of `shapes`.
    pub fn read(
        parsed: &Parsed,
        names: &HashSet<String>,
        modules: &HashSet<String>,
        shapes: &[NewMembers],
    ) -> CallFacts {
        let lang = parsed.lang();
        let src = parsed.src().as_bytes();
        let root = parsed.root();
        let mut facts = CallFacts::default();
        for name in names.iter().chain(modules) {
            let (call, module) = (names.contains(name), modules.contains(name));
            for at in word_at(src, name) {
                let Some(node) = root.descendant_for_byte_range(at, at + name.len()) else {
                    continue;
                };
                if node.byte_range() != (at..at + name.len()) {
                    continue;
                }
                let line = node.start_position().row as u32 + 1;
                if module && lang == Lang::Rust {
                    let declared = node.parent().is_some_and(|p| {
                        p.kind() == "mod_item" && p.child_by_field_name("name") == Some(node)
                    });
                    if declared {
                        facts.modules.insert((line, name.clone()));
                    }
                }
                if !call {
                    continue;
                }
                let mut up = node.parent();
                for _ in 0..CALL_DEPTH {
                    let Some(n) = up else { break };
                    if n.kind() == call_kind(lang) {
                        if let Some((last, c)) = call_of(lang, n, src) {
                            if last == node {
                                facts.calls.entry((line, name.clone())).or_default().push(c);
                                break;
                            }
                        }
                    }
                    up = n.parent();
                }
            }
        }
        if lang == Lang::Rust && !shapes.is_empty() {
            for (i, line) in parsed.src().split('\n').enumerate() {
                for (name, new, variants) in shapes {
                    if super::members::may_list(line, name, *variants) {
                        let found = super::members::listers(root, src, i, name, new);
                        facts
                            .listers
                            .insert((i as u32 + 1, name.clone(), new.clone()), found);
                    }
                }
            }
        }
        facts
    }

    /// `CallSites::at`, when `name` was read.
    pub fn at(&self, line: u32, name: &str) -> Vec<Call> {
        self.calls
            .get(&(line, name.to_string()))
            .cloned()
            .unwrap_or_default()
    }

    /// `CallSites::listers` on a line that may list the shape, when the
    /// shape was read.
    pub fn listers(
        &self,
        line: u32,
        name: &str,
        new: &[String],
    ) -> Option<Vec<super::members::Lister>> {
        self.listers
            .get(&(line, name.to_string(), new.to_vec()))
            .cloned()
    }

    /// `CallSites::declares_module`, when `name` was read as a module.
    pub fn declares_module(&self, line: u32, name: &str) -> bool {
        self.modules.contains(&(line, name.to_string()))
    }
}

/// Where `word` stands in `src` as a whole word (a byte past ASCII counts
/// as part of a word: a longer identifier).
fn word_at<'a>(src: &'a [u8], word: &'a str) -> impl Iterator<Item = usize> + 'a {
    let part = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80;
    memchr::memmem::find_iter(src, word.as_bytes()).filter(move |&at| {
        let end = at + word.len();
        !word.is_empty()
            && (at == 0 || !part(src[at - 1]))
            && src.get(end).is_none_or(|&b| !part(b))
    })
}

/// Parse `text` and list its callables and defined names.
pub fn read(lang: Lang, text: &str) -> Option<(Vec<Callable>, HashSet<String>)> {
    let sites = CallSites::parse(lang, text.as_bytes().to_vec())?;
    let root = sites.parsed.root();
    Some((
        callables(lang, root, sites.src()),
        defined(lang, root, sites.src()),
    ))
}

#[cfg(test)]
mod tests;
