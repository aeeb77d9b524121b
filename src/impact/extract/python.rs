//! Python: functions, methods, classes and module-level names, imports
//! (aliases, relative, star), function locals (so a parameter that shadows a
//! module-level function is not taken for it), and reference sites.

use std::collections::HashSet;

use tree_sitter::Node;

use super::{
    Defs, Field, Frame, Locals, Sig, column, column_at, finish, line, starts_upper, text, walk,
};
use crate::impact::lang::{Grammar, Lang, Role};
use crate::impact::symbols::{
    Def, FileSymbols, Form, Import, Kind, MAX_CHAIN, Receiver, Ref, Visibility,
};

/// `node.kind()`, from the grammar's table.
fn kind_of(node: Node) -> &'static str {
    Lang::Python.names().kind(node)
}

/// `node.child_by_field_name(name)`, from the grammar's table.
fn child<'t>(node: Node<'t>, name: &str) -> Option<Node<'t>> {
    Lang::Python.names().child(node, name)
}

/// Python names are function-wide: a name assigned anywhere in a function
/// is local in all of it. So the one walk of the tree gathers definitions,
/// imports and bindings, and notes each reference site with what the walk
/// alone knows of it (its parent, field and form); the sites are read once
/// every local is known, in the order the walk met them.
pub(super) fn build(grammar: &Grammar, src: &str, root: Node) -> FileSymbols {
    let mut defs = Defs::default();
    let mut import_nodes = Vec::new();
    let mut binders = Vec::new();
    let mut sites: Vec<Site> = Vec::new();
    // The depth of a subtree whose names are not reference sites (an
    // import, a `global`, an annotation's string, read on its own): the
    // walk still descends into it for definitions and comments.
    let mut quiet: Option<usize> = None;
    walk(root, Lang::Python.names(), |node, id, field, anc| {
        if quiet.is_some_and(|depth| anc.len() <= depth) {
            quiet = None;
        }
        match grammar.role(id) {
            Some(Role::Def(kind)) => {
                if let Some(name) = child(node, "name") {
                    let (d, range, sig) = def(src, node, kind, name);
                    defs.push(d, range, sig);
                }
            }
            Some(Role::Import) => import_nodes.push(node),
            Some(Role::Assign) => {
                if let Some(name) = module_variable(node, anc) {
                    let (d, range, sig) = def(src, node, Kind::Variable, name);
                    defs.push(d, range, sig);
                }
                binders.push((node, Role::Assign));
            }
            Some(role) => binders.push((node, role)),
            None if kind_of(node) == "comment" => {
                defs.comment(node);
                return false;
            }
            None => {}
        }
        if quiet.is_none() {
            match Lang::Python.names().kind_of_id(id) {
                "identifier" => sites.extend(ident_site(node, field.get(), anc)),
                "attribute" => sites.extend(attr_site(node, field, anc)),
                "string" if anc.iter().any(|f| kind_of(f.node) == "type") => {
                    sites.push(Site::Annotation(node));
                    quiet = Some(anc.len());
                }
                "import_statement"
                | "import_from_statement"
                | "future_import_statement"
                | "global_statement"
                | "nonlocal_statement" => quiet = Some(anc.len()),
                // Nothing in a string but its interpolations is code: the
                // walk skips the rest, a sixth of a test file's nodes.
                "string" => return interpolated(node, src),
                _ => {}
            }
        } else if kind_of(node) == "string" {
            return interpolated(node, src);
        }
        true
    });

    let mut locals = Locals::default();
    let mut globals: HashSet<(Option<u32>, &str)> = HashSet::new();
    for (node, role) in binders {
        let func = defs.function_of(defs.innermost(node.start_byte()));
        if func.is_none() {
            continue;
        }
        match role {
            Role::Params => params(node, src, func, &mut locals),
            Role::Assign => {
                let Some(left) = child(node, "left") else {
                    continue;
                };
                let ty = if kind_of(left) == "identifier" {
                    child(node, "type")
                        .and_then(|t| type_name(t, src))
                        .map(Receiver::Type)
                        .or_else(|| child(node, "right").and_then(|r| value_type(r, src)))
                } else {
                    None
                };
                bind(left, src, func, ty, &mut locals);
            }
            Role::Bind(field) => {
                // `for t in types` with `types: list[Type]`: `t` is a `Type`.
                let item = matches!(kind_of(node), "for_statement" | "for_in_clause")
                    .then(|| child(node, "right"))
                    .flatten()
                    .and_then(|r| simple_receiver(r, src, func, &locals, 0))
                    .map(Receiver::then_item)
                    .filter(|r| *r != Receiver::Unknown);
                match child(node, field) {
                    // A comprehension's name is used before it is bound
                    // (`[t.go() for t in ts]`): bound from its start.
                    Some(target)
                        if kind_of(node) == "for_in_clause" && kind_of(target) == "identifier" =>
                    {
                        let from = node.parent().map_or(node.start_byte(), |p| p.start_byte());
                        locals.add(func, text(target, src), from, item);
                    }
                    Some(target) => bind(target, src, func, item, &mut locals),
                    None => {}
                }
            }
            Role::Global => {
                let mut cursor = node.walk();
                for n in node.named_children(&mut cursor) {
                    globals.insert((func, text(n, src)));
                }
            }
            _ => {}
        }
    }

    let mut cx = Cx {
        src,
        defs: &defs,
        locals: &locals,
        globals,
        refs: Vec::new(),
        fields: Vec::new(),
    };
    for site in sites {
        cx.site(site);
    }
    let mut imports = Vec::new();
    for node in import_nodes {
        cx.import(node, &mut imports);
    }
    let Cx { refs, fields, .. } = cx;
    // One entry per field: the first typed assignment, else untyped.
    for (class, name, ty) in fields {
        let d = &mut defs.defs[class as usize];
        match d.fields.iter_mut().find(|(n, _)| *n == name) {
            Some((_, known)) if known.is_empty() => *known = ty,
            Some(_) => {}
            None => d.fields.push((name, ty)),
        }
    }
    finish(src, defs, refs, imports)
}

/// Whether a string may hold interpolations (code): its prefix, the
/// letters before its first quote, says it is formatted (`f`) or a
/// template (`t`). Any other string is text alone.
fn interpolated(string: Node, src: &str) -> bool {
    src.as_bytes()[string.start_byte()..string.end_byte()]
        .iter()
        .take_while(|b| b.is_ascii_alphabetic())
        .any(|b| matches!(b, b'f' | b'F' | b't' | b'T'))
}

/// The name of a module-level variable: `x = …` or `x: T = …` as a
/// statement of the module itself.
fn module_variable<'t>(assignment: Node<'t>, anc: &[Frame]) -> Option<Node<'t>> {
    let n = anc.len();
    let statement = anc.get(n.checked_sub(1)?)?;
    let module = anc.get(n.checked_sub(2)?)?;
    if kind_of(statement.node) != "expression_statement" || kind_of(module.node) != "module" {
        return None;
    }
    child(assignment, "left").filter(|l| kind_of(*l) == "identifier")
}

fn def(src: &str, node: Node, kind: Kind, name: Node) -> (Def, (usize, usize), Sig) {
    let name_text = text(name, src).to_string();
    let outer = node
        .parent()
        .filter(|p| kind_of(*p) == "decorated_definition")
        .unwrap_or(node);
    let mut kind = kind;
    let mut container = None;
    if matches!(kind, Kind::Function | Kind::Class) {
        let owner = outer
            .parent()
            .filter(|b| kind_of(*b) == "block")
            .and_then(|b| b.parent());
        // A method, or a class nested in a class (`Outer.Inner`).
        if let Some(class) = owner.filter(|o| kind_of(*o) == "class_definition") {
            if kind == Kind::Function {
                kind = Kind::Method;
            }
            container = child(class, "name").map(|n| text(n, src).to_string());
        }
    }
    let mut bases = Vec::new();
    if kind == Kind::Class {
        if let Some(args) = child(node, "superclasses") {
            let mut cursor = args.walk();
            for arg in args.named_children(&mut cursor) {
                // `Base[T]` derives from `Base`.
                let base = match kind_of(arg) {
                    "subscript" => child(arg, "value"),
                    _ => Some(arg),
                };
                if let Some(b) = base.filter(|b| matches!(kind_of(*b), "identifier" | "attribute"))
                {
                    bases.push(text(b, src).to_string());
                }
            }
        }
    }
    let visibility = if name_text.starts_with('_') && !name_text.ends_with("__") {
        Visibility::Private
    } else {
        Visibility::Public
    };
    let test = match kind {
        Kind::Function | Kind::Method => name_text.starts_with("test"),
        Kind::Class => name_text.starts_with("Test"),
        _ => false,
    };
    let (s, e) = (outer.start_byte(), outer.end_byte());
    // Decorators are part of it: they change how it is called.
    let sig = match kind {
        Kind::Variable => {
            let end = child(node, "type")
                .or_else(|| child(node, "left"))
                .map_or(e, |n| n.end_byte());
            Sig::new(node.start_byte(), end)
        }
        _ => Sig::new(s, child(node, "body").map_or(e, |b| b.start_byte())),
    };
    let returns = match kind {
        Kind::Function | Kind::Method => child(node, "return_type")
            .and_then(|t| type_name(t, src))
            .and_then(|t| match t.as_str() {
                // A method returning `Self` (builders) returns its class.
                "Self" | "typing.Self" | "typing_extensions.Self" => container.clone(),
                _ => Some(t),
            }),
        // `g: Globals = …` or `app = App(…)`: what a use of it holds.
        Kind::Variable => child(node, "type")
            .and_then(|t| type_name(t, src))
            .or_else(
                || match child(node, "right").and_then(|r| value_type(r, src)) {
                    Some(Receiver::Type(t)) => Some(t),
                    _ => None,
                },
            ),
        _ => None,
    };
    let end = outer.end_position();
    let end_line = if end.column == 0 && end.row > 0 {
        end.row
    } else {
        end.row + 1
    };
    (
        Def {
            name: name_text,
            kind,
            container,
            trait_name: None,
            bases,
            fields: Vec::new(),
            returns,
            start_line: outer.start_position().row as u32 + 1,
            line: super::line(name),
            column: column(name, src),
            end_line: end_line as u32,
            signature: 0,
            members: Vec::new(),
            visibility,
            parent: None,
            test,
            no_self: false,
        },
        (node.start_byte(), node.end_byte()),
        sig,
    )
}

/// The type an annotation gives, as the index reads it: `Foo`,
/// `mod.Foo`, a forward reference `"Foo"`, `Optional[Foo]` and
/// `Foo | None` as `Foo`, and a container of `Foo` (`list[Foo]`,
/// `Sequence["Foo"]`, `tuple[Foo, ...]`) as `[Foo]`. None for anything
/// else (unions of several types, mappings, callables).
fn type_name(node: Node, src: &str) -> Option<String> {
    annotation_type(text(node, src), 0)
}

/// `type_name` of an annotation's text, `depth` containers deep.
fn annotation_type(t: &str, depth: usize) -> Option<String> {
    let t = t.trim();
    let t = t
        .strip_prefix(['"', '\''])
        .and_then(|u| u.strip_suffix(['"', '\'']))
        .unwrap_or(t)
        .trim();
    if depth > 4 || t.is_empty() {
        return None;
    }
    // `A | None`: the type that is not `None`.
    let alternatives = top_level_split(t, '|');
    if alternatives.len() > 1 {
        let mut kept = alternatives.into_iter().filter(|a| a.trim() != "None");
        let only = kept.next()?;
        return kept
            .next()
            .is_none()
            .then(|| annotation_type(only, depth + 1))
            .flatten();
    }
    if let Some((outer, inner)) = t.strip_suffix(']').and_then(|u| u.split_once('[')) {
        let name = outer.trim().rsplit('.').next().unwrap_or(outer);
        let args = top_level_split(inner, ',');
        return match name {
            "Optional" | "Final" | "ClassVar" | "Annotated" => annotation_type(args[0], depth + 1),
            "list" | "List" | "Sequence" | "MutableSequence" | "Iterable" | "Iterator"
            | "Collection" | "set" | "Set" | "frozenset" | "FrozenSet" | "AbstractSet"
            | "MutableSet" | "deque" | "Deque" | "Generator"
                if !args.is_empty() =>
            {
                annotation_type(args[0], depth + 1).map(|e| format!("[{e}]"))
            }
            "tuple" | "Tuple" if args.len() == 2 && args[1].trim() == "..." => {
                annotation_type(args[0], depth + 1).map(|e| format!("[{e}]"))
            }
            "Union" => {
                let mut kept = args.into_iter().filter(|a| a.trim() != "None");
                let only = kept.next()?;
                kept.next()
                    .is_none()
                    .then(|| annotation_type(only, depth + 1))
                    .flatten()
            }
            _ => None,
        };
    }
    let dotted = t.split('.').all(|s| {
        s.chars()
            .next()
            .is_some_and(|c| c == '_' || c.is_alphabetic())
            && s.chars().all(|c| c == '_' || c.is_alphanumeric())
    });
    dotted.then(|| t.to_string())
}

/// `t` split at `sep` outside brackets.
fn top_level_split(t: &str, sep: char) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut from) = (0i32, 0);
    for (i, c) in t.char_indices() {
        match c {
            '[' | '(' => depth += 1,
            ']' | ')' => depth -= 1,
            c if c == sep && depth == 0 => {
                out.push(&t[from..i]);
                from = i + c.len_utf8();
            }
            _ => {}
        }
    }
    out.push(&t[from..]);
    out
}

/// `Foo(…)` or `mod.Foo(…)`: an instance of the class; `make(…)` or
/// `mod.make(…)`: whatever the function is declared to return;
/// `self.make(…)`, `self.app.make(…)`, `make().build()`: what the method
/// returns on that receiver.
fn value_type(node: Node, src: &str) -> Option<Receiver> {
    value_type_within(node, src, 0)
}

/// `value_type`, `depth` calls into a chain (none past `MAX_CHAIN`).
fn value_type_within(node: Node, src: &str, depth: usize) -> Option<Receiver> {
    if kind_of(node) != "call" || depth > MAX_CHAIN {
        return None;
    }
    let f = child(node, "function")?;
    if kind_of(f) == "attribute" {
        let obj = child(f, "object")?;
        let method = text(child(f, "attribute")?, src);
        let on = match kind_of(obj) {
            "identifier" if matches!(text(obj, src), "self" | "cls") => Some(Receiver::SelfValue),
            "attribute" => {
                let t = text(obj, src);
                match t.split_once('.') {
                    Some(("self", field)) if !field.contains('.') => {
                        Some(Receiver::Field(field.to_string()))
                    }
                    _ => None,
                }
            }
            "call" => value_type_within(obj, src, depth + 1),
            _ => None,
        };
        if let Some(on) = on {
            return Some(on.then_call(method)).filter(|r| *r != Receiver::Unknown);
        }
    }
    if !matches!(kind_of(f), "identifier" | "attribute") {
        return None;
    }
    let t = text(f, src);
    if !t
        .bytes()
        .all(|b| b == b'.' || b == b'_' || b.is_ascii_alphanumeric())
    {
        return None;
    }
    let mut segs = t.split('.');
    let first = segs.next().unwrap_or("");
    let last = t.rsplit('.').next().unwrap_or(t);
    if starts_upper(last) {
        Some(Receiver::Type(t.to_string()))
    } else if matches!(first, "self" | "cls" | "super") {
        None
    } else {
        Some(Receiver::Returned(
            t.split('.').map(str::to_string).collect(),
        ))
    }
}

/// What a value is, read before the walk (for loops' containers):
/// `self`, a local with a type, attributes and elements of them, a call's
/// value.
fn simple_receiver(
    node: Node,
    src: &str,
    func: Option<u32>,
    locals: &Locals,
    depth: usize,
) -> Option<Receiver> {
    if depth > MAX_CHAIN {
        return None;
    }
    match kind_of(node) {
        "identifier" => match text(node, src) {
            "self" | "cls" => Some(Receiver::SelfValue),
            name => locals.any(func, name)?.ty.clone(),
        },
        "attribute" => {
            let on = simple_receiver(child(node, "object")?, src, func, locals, depth + 1)?;
            let name = text(child(node, "attribute")?, src);
            Some(match on {
                Receiver::SelfValue => Receiver::Field(name.to_string()),
                on => on.then_attribute(name),
            })
        }
        "subscript" => {
            let on = simple_receiver(child(node, "value")?, src, func, locals, depth + 1)?;
            Some(on.then_item())
        }
        "call" => copied(node, src, func, locals, depth).or_else(|| value_type(node, src)),
        _ => None,
    }
}

/// `list(xs)`, `sorted(xs)`, `tuple(xs)` of a container: a container of
/// the same elements.
fn copied(
    call: Node,
    src: &str,
    func: Option<u32>,
    locals: &Locals,
    depth: usize,
) -> Option<Receiver> {
    let f = child(call, "function")?;
    if !matches!(
        text(f, src),
        "list" | "sorted" | "tuple" | "set" | "reversed"
    ) {
        return None;
    }
    let args = child(call, "arguments")?;
    if args.named_child_count() != 1 {
        return None;
    }
    match simple_receiver(args.named_child(0)?, src, func, locals, depth + 1)? {
        Receiver::Type(t) if t.starts_with('[') => Some(Receiver::Type(t)),
        _ => None,
    }
}

/// The class an assignment's value is an instance of, when evident.
fn instance_type(node: Node, src: &str) -> Option<String> {
    match value_type(node, src)? {
        Receiver::Type(t) => Some(t),
        _ => None,
    }
}

fn params(node: Node, src: &str, func: Option<u32>, locals: &mut Locals) {
    let mut cursor = node.walk();
    for p in node.named_children(&mut cursor) {
        let pos = p.start_byte();
        match kind_of(p) {
            "identifier" => locals.add(func, text(p, src), pos, None),
            "typed_parameter" => {
                let ty = child(p, "type")
                    .and_then(|t| type_name(t, src))
                    .map(Receiver::Type);
                if let Some(n) = p.named_child(0) {
                    bind(n, src, func, ty, locals);
                }
            }
            "default_parameter" | "typed_default_parameter" => {
                let ty = child(p, "type")
                    .and_then(|t| type_name(t, src))
                    .map(Receiver::Type);
                if let Some(n) = child(p, "name") {
                    bind(n, src, func, ty, locals);
                }
            }
            _ => bind(p, src, func, None, locals),
        }
    }
}

fn bind(node: Node, src: &str, func: Option<u32>, ty: Option<Receiver>, locals: &mut Locals) {
    match kind_of(node) {
        "identifier" => locals.add(func, text(node, src), node.start_byte(), ty),
        "attribute" | "subscript" => {}
        _ => {
            let mut cursor = node.walk();
            for child in node.named_children(&mut cursor) {
                bind(child, src, func, None, locals);
            }
        }
    }
}

struct Cx<'a> {
    src: &'a str,
    defs: &'a Defs,
    locals: &'a Locals,
    globals: HashSet<(Option<u32>, &'a str)>,
    refs: Vec<Ref>,
    /// (class, field, type) from `self.x = T(…)` and `x: T` in class bodies.
    fields: Vec<(u32, String, String)>,
}

impl Cx<'_> {
    fn push(&mut self, name: &str, form: Form, path: Vec<String>, receiver: Receiver, node: Node) {
        self.refs.push(Ref {
            name: name.to_string(),
            form,
            path,
            receiver,
            line: line(node),
            column: column(node, self.src),
            scope: self.defs.innermost(node.start_byte()),
        });
    }

    /// An annotation written as a string (a forward reference: `-> "Tree"`,
    /// `Optional["Node"]`, `"mod.Leaf | None"`) names its types all the
    /// same: each dotted name in it is a type reference.
    fn string_annotation(&mut self, string: Node) {
        let mut cursor = string.walk();
        for part in string.named_children(&mut cursor) {
            if kind_of(part) != "string_content" {
                continue;
            }
            let body = text(part, self.src);
            let first_line = line(part);
            let scope = self.defs.innermost(part.start_byte());
            for (at, name) in annotation_names(body) {
                let row = first_line + body[..at].matches('\n').count() as u32;
                let segs: Vec<&str> = name.split('.').collect();
                if self.local(segs[0], part.start_byte()).is_some() {
                    continue;
                }
                let mut pos = part.start_byte() + at;
                for (i, seg) in segs.iter().enumerate() {
                    let receiver = match i {
                        0 => Receiver::None,
                        _ => Receiver::Name(segs[..i].join(".")),
                    };
                    self.refs.push(Ref {
                        name: seg.to_string(),
                        form: Form::Type,
                        path: Vec::new(),
                        receiver,
                        line: row,
                        column: column_at(self.src, pos),
                        scope,
                    });
                    pos += seg.len() + 1;
                }
            }
        }
    }

    /// A local of the enclosing function or of a function enclosing it
    /// (closures see their parents' locals).
    fn local(&self, name: &str, pos: usize) -> Option<&super::Local> {
        let mut func = self.defs.function_of(self.defs.innermost(pos));
        while let Some(f) = func {
            if self.globals.contains(&(Some(f), name)) {
                return None;
            }
            // The binding before `pos` says what the name holds there;
            // one after it still makes the name local.
            if let Some(l) = self
                .locals
                .before(Some(f), name, pos)
                .or_else(|| self.locals.any(Some(f), name))
            {
                return Some(l);
            }
            func = self.defs.function_of(self.defs.defs[f as usize].parent);
        }
        None
    }

    /// Read one reference site noted by the walk.
    fn site(&mut self, site: Site) {
        match site {
            Site::Name { node, form } => {
                let name = text(node, self.src);
                if matches!(name, "self" | "cls") || self.local(name, node.start_byte()).is_some() {
                    return;
                }
                self.push(name, form, Vec::new(), Receiver::None, node);
            }
            Site::ClassField { assignment } => {
                // The name is the assignment's `left`, where the walk met it.
                let Some(node) = child(assignment, "left") else {
                    return;
                };
                // `x: T` in a class body declares a typed field.
                let class = self.defs.innermost(node.start_byte());
                if let Some(c) = class.filter(|&c| self.defs.defs[c as usize].kind == Kind::Class) {
                    if let Some(ty) = self.assigned_type(assignment) {
                        self.fields.push((c, text(node, self.src).to_string(), ty));
                    }
                }
            }
            Site::Attribute { node, form } => self.attr(node, None, form),
            // The attribute is the assignment's `left`, where the walk met it.
            Site::Written { assignment, form } => {
                if let Some(node) = child(assignment, "left") {
                    self.attr(node, Some(assignment), form);
                }
            }
            Site::Annotation(string) => self.string_annotation(string),
        }
    }

    /// The class whose body (or method) holds `pos`.
    fn enclosing_class(&self, pos: usize) -> Option<u32> {
        let mut cur = self.defs.innermost(pos);
        while let Some(i) = cur {
            let d = &self.defs.defs[i as usize];
            if d.kind == Kind::Class {
                return Some(i);
            }
            cur = d.parent;
        }
        None
    }

    /// `x: T` or `x = T(…)` assigned to `name` at `assignment`, typed.
    fn assigned_type(&self, assignment: Node) -> Option<String> {
        let right = child(assignment, "right");
        child(assignment, "type")
            .and_then(|t| type_name(t, self.src))
            .or_else(|| right.and_then(|r| instance_type(r, self.src)))
            // `self.expr = expr` with a parameter `expr: Expression`;
            // `self.args = list(args)` with `args: Sequence[Type]`.
            .or_else(|| {
                let r = right?;
                let func = self.defs.function_of(self.defs.innermost(r.start_byte()));
                let value = match kind_of(r) {
                    "identifier" => self.local(text(r, self.src), r.start_byte())?.ty.clone(),
                    "call" => copied(r, self.src, func, self.locals, 0),
                    _ => None,
                };
                match value? {
                    Receiver::Type(t) => Some(t),
                    _ => None,
                }
            })
    }

    /// An attribute `obj.name`; `assignment` when it is assigned to.
    fn attr(&mut self, node: Node, assignment: Option<Node>, form: Form) {
        if let Some(parent) = assignment {
            let obj = child(node, "object");
            let attr = child(node, "attribute");
            if let (Some(o), Some(a)) = (obj, attr) {
                if text(o, self.src) == "self" {
                    // Recorded untyped too (empty type): `self.x()` then
                    // calls an attribute, not some other class's method `x`.
                    let ty = self.assigned_type(parent).unwrap_or_default();
                    if let Some(class) = self.enclosing_class(node.start_byte()) {
                        self.fields.push((class, text(a, self.src).to_string(), ty));
                    }
                }
            }
            // A write is a reference too: to a module's variable
            // (`config.debug = True`) or a property's setter.
        }
        let (Some(obj), Some(attr)) = (child(node, "object"), child(node, "attribute")) else {
            return;
        };
        let receiver = self.receiver(obj);
        let name = text(attr, self.src);
        self.push(name, form, Vec::new(), receiver, attr);
    }

    /// A local's type as the index can use it: `x = y.make()` with `y` a
    /// local is what `make` returns on `y`'s type; a call of a local (a
    /// closure) is unknown.
    fn settle(&self, ty: Receiver, pos: usize, depth: usize) -> Receiver {
        match ty {
            Receiver::Returned(path) if path.len() == 2 && depth < 4 => {
                match self.local(&path[0], pos) {
                    Some(l) => {
                        l.ty.clone()
                            .map_or(Receiver::Unknown, |t| self.settle(t, pos, depth + 1))
                            .then_call(&path[1])
                    }
                    None => Receiver::Returned(path),
                }
            }
            t if self.calls_local(&t, pos) => Receiver::Unknown,
            t => t,
        }
    }

    /// `Returned` from a call through a local (a parameter, a closure),
    /// not of a module-level function.
    fn calls_local(&self, ty: &Receiver, pos: usize) -> bool {
        matches!(ty, Receiver::Returned(path)
            if path.first().is_some_and(|f| self.local(f, pos).is_some()))
    }

    fn receiver(&self, obj: Node) -> Receiver {
        match kind_of(obj) {
            "identifier" => {
                let name = text(obj, self.src);
                if matches!(name, "self" | "cls") {
                    return Receiver::SelfValue;
                }
                match self.local(name, obj.start_byte()) {
                    Some(l) => {
                        l.ty.clone()
                            .map_or(Receiver::Unknown, |t| self.settle(t, obj.start_byte(), 0))
                    }
                    None => Receiver::Name(name.to_string()),
                }
            }
            "attribute" => {
                let t = text(obj, self.src);
                let mut parts = t.split('.');
                let first = parts.next().unwrap_or("");
                if !t
                    .bytes()
                    .all(|b| b == b'.' || b == b'_' || b.is_ascii_alphanumeric())
                {
                    return Receiver::Unknown;
                }
                if matches!(first, "self" | "cls") || self.local(first, obj.start_byte()).is_some()
                {
                    // `self.a.b`, `o.expr`: attributes of a value.
                    let (Some(on), Some(attr)) = (child(obj, "object"), child(obj, "attribute"))
                    else {
                        return Receiver::Unknown;
                    };
                    let name = text(attr, self.src);
                    match self.receiver(on) {
                        Receiver::SelfValue => Receiver::Field(name.to_string()),
                        on => on.then_attribute(name),
                    }
                } else {
                    Receiver::Name(t.to_string())
                }
            }
            // `items[0].go()`: an element of the container.
            "subscript" => {
                child(obj, "value").map_or(Receiver::Unknown, |v| match self.receiver(v) {
                    Receiver::Name(_) => Receiver::Unknown,
                    on => on.then_item(),
                })
            }
            "call" if child(obj, "function").is_some_and(|f| text(f, self.src) == "super") => {
                Receiver::Super
            }
            // `x.make().run()` on a local `x`: what `make` returns on it.
            "call"
                if child(obj, "function").is_some_and(|f| {
                    kind_of(f) == "attribute"
                        && child(f, "object").is_some_and(|o| {
                            kind_of(o) == "identifier"
                                && self.local(text(o, self.src), o.start_byte()).is_some()
                        })
                }) =>
            {
                let f = child(obj, "function");
                match (
                    f.and_then(|f| child(f, "object")),
                    f.and_then(|f| child(f, "attribute")),
                ) {
                    (Some(o), Some(a)) => self.receiver(o).then_call(text(a, self.src)),
                    _ => Receiver::Unknown,
                }
            }
            _ => value_type(obj, self.src)
                .filter(|t| !self.calls_local(t, obj.start_byte()))
                .unwrap_or(Receiver::Unknown),
        }
    }

    fn import(&mut self, node: Node, out: &mut Vec<Import>) {
        let scope = self.defs.innermost(node.start_byte());
        let line = line(node);
        let column = column(node, self.src);
        let mut cursor = node.walk();
        if kind_of(node) == "import_statement" {
            for n in node.children_by_field_name("name", &mut cursor) {
                let (path, alias) = match kind_of(n) {
                    "dotted_name" => {
                        let segs = dotted(n, self.src);
                        let first = segs.first().cloned().unwrap_or_default();
                        // `import a.b` binds only `a`, but it imports `a.b`
                        // too: that module's importers must see this line.
                        // An empty alias binds no name.
                        if segs.len() > 1 {
                            out.push(Import {
                                path: segs,
                                alias: String::new(),
                                glob: false,
                                public: true,
                                module: true,
                                line,
                                column,
                                scope,
                            });
                        }
                        (vec![first.clone()], first)
                    }
                    "aliased_import" => {
                        let segs = child(n, "name")
                            .map(|d| dotted(d, self.src))
                            .unwrap_or_default();
                        let alias = child(n, "alias")
                            .map(|a| text(a, self.src).to_string())
                            .unwrap_or_default();
                        (segs, alias)
                    }
                    _ => continue,
                };
                if !alias.is_empty() {
                    out.push(Import {
                        path,
                        alias,
                        glob: false,
                        public: true,
                        module: true,
                        line,
                        column,
                        scope,
                    });
                }
            }
            return;
        }
        let Some(module) = child(node, "module_name") else {
            return;
        };
        let base = match kind_of(module) {
            "dotted_name" => dotted(module, self.src),
            "relative_import" => {
                let mut segs = Vec::new();
                let mut c2 = module.walk();
                for part in module.named_children(&mut c2) {
                    match kind_of(part) {
                        "import_prefix" => segs.insert(0, text(part, self.src).trim().to_string()),
                        "dotted_name" => segs.extend(dotted(part, self.src)),
                        _ => {}
                    }
                }
                segs
            }
            _ => return,
        };
        let mut c3 = node.walk();
        if node
            .named_children(&mut c3)
            .any(|c| kind_of(c) == "wildcard_import")
        {
            out.push(Import {
                path: base,
                alias: String::new(),
                glob: true,
                public: true,
                module: false,
                line,
                column,
                scope,
            });
            return;
        }
        for n in node.children_by_field_name("name", &mut cursor) {
            let (name, alias) = match kind_of(n) {
                "dotted_name" => {
                    let t = text(n, self.src).to_string();
                    (t.clone(), t)
                }
                "aliased_import" => {
                    let name = child(n, "name")
                        .map(|d| text(d, self.src).to_string())
                        .unwrap_or_default();
                    let alias = child(n, "alias")
                        .map(|a| text(a, self.src).to_string())
                        .unwrap_or_default();
                    (name, alias)
                }
                _ => continue,
            };
            self.refs.push(Ref {
                name: name.clone(),
                form: Form::Import,
                path: base.clone(),
                receiver: Receiver::None,
                line: self::line(n),
                column: self::column(n, self.src),
                scope,
            });
            let mut path = base.clone();
            path.push(name);
            out.push(Import {
                path,
                alias,
                glob: false,
                public: true,
                module: false,
                line,
                column,
                scope,
            });
        }
    }
}

/// A reference site as the walk met it, with what only the walk knows
/// (the node's parent and field, whether it is in an annotation); read
/// once the file's locals are known (`Cx::site`). One node each: a file's
/// sites are all held at once.
enum Site<'t> {
    /// A name used (`f`, `Shelf`), not yet checked against the locals.
    Name { node: Node<'t>, form: Form },
    /// `x = …` or `x: T` assigned as a statement (the name is its `left`):
    /// a class body's field.
    ClassField { assignment: Node<'t> },
    /// `obj.name` read or called.
    Attribute { node: Node<'t>, form: Form },
    /// `obj.name = …` or `obj.name += …`: the attribute is the
    /// assignment's `left`.
    Written { assignment: Node<'t>, form: Form },
    /// A string in an annotation: a forward reference.
    Annotation(Node<'t>),
}

/// The site of an identifier filling `field` of its parent, unless it is
/// not a reference (a definition's name, a binding, an attribute's name).
fn ident_site<'t>(
    node: Node<'t>,
    field: Option<&'static str>,
    anc: &[Frame<'t>],
) -> Option<Site<'t>> {
    let p = anc.last()?;
    let form = match kind_of(p.node) {
        "function_definition" | "class_definition" if field == Some("name") => return None,
        "default_parameter"
        | "typed_default_parameter"
        | "keyword_argument"
        | "named_expression"
            if field == Some("name") =>
        {
            return None;
        }
        "attribute" if field == Some("attribute") => return None,
        "assignment" if field == Some("left") => {
            return Some(Site::ClassField { assignment: p.node });
        }
        "augmented_assignment" | "for_statement" | "for_in_clause" if field == Some("left") => {
            return None;
        }
        "except_clause" if field == Some("alias") => return None,
        "parameters"
        | "lambda_parameters"
        | "typed_parameter"
        | "list_splat_pattern"
        | "dictionary_splat_pattern"
        | "dotted_name"
        | "aliased_import"
        | "pattern_list"
        | "tuple_pattern"
        | "list_pattern"
        | "as_pattern_target" => return None,
        // `except Error as e`, `with lock as held`: the value is used.
        "as_pattern" => Form::Value,
        k if k.contains("pattern") => return None,
        "call" if field == Some("function") => Form::Call,
        "decorator" => Form::Call,
        "argument_list"
            if anc.len() >= 2 && kind_of(anc[anc.len() - 2].node) == "class_definition" =>
        {
            Form::Type
        }
        _ if in_annotation(anc) => Form::Type,
        _ => Form::Value,
    };
    Some(Site::Name { node, form })
}

/// The site of an attribute, with its form: a method call (`@group.command`
/// applies the attribute to the function below), a type, or a read or
/// write.
fn attr_site<'t>(node: Node<'t>, field: Field, anc: &[Frame<'t>]) -> Option<Site<'t>> {
    let p = anc.last()?;
    let parent = kind_of(p.node);
    let written =
        matches!(parent, "assignment" | "augmented_assignment") && field.get() == Some("left");
    let form = if (parent == "call" && field.get() == Some("function")) || parent == "decorator" {
        Form::MethodCall
    } else if in_annotation(anc) {
        Form::Type
    } else {
        Form::Attribute
    };
    Some(if written {
        Site::Written {
            assignment: p.node,
            form,
        }
    } else {
        Site::Attribute { node, form }
    })
}

fn dotted(node: Node, src: &str) -> Vec<String> {
    text(node, src)
        .split('.')
        .map(|s| s.trim().to_string())
        .collect()
}

/// The dotted names of an annotation's text with their byte offsets,
/// leaving out quoted literals (`Literal['a']`) and Python's constants.
fn annotation_names(body: &str) -> Vec<(usize, &str)> {
    let bytes = body.as_bytes();
    let word = |b: u8| b == b'_' || b.is_ascii_alphanumeric();
    let mut out = Vec::new();
    let mut quote = None;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match quote {
            Some(q) => {
                if b == q {
                    quote = None;
                }
                i += 1;
            }
            None if b == b'\'' || b == b'"' => {
                quote = Some(b);
                i += 1;
            }
            None if word(b) && !b.is_ascii_digit() => {
                let start = i;
                while i < bytes.len()
                    && (word(bytes[i])
                        || (bytes[i] == b'.' && i + 1 < bytes.len() && word(bytes[i + 1])))
                {
                    i += 1;
                }
                let name = &body[start..i];
                if !matches!(
                    name,
                    "None" | "True" | "False" | "not" | "and" | "or" | "in" | "is"
                ) {
                    out.push((start, name));
                }
            }
            None => i += 1,
        }
    }
    out
}

/// Inside a type annotation (parameter, return or variable type).
fn in_annotation(anc: &[Frame]) -> bool {
    anc.iter().rev().take(4).any(|f| kind_of(f.node) == "type")
}
