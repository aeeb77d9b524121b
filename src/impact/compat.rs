//! Whether callers can tell a function's new signature from its old one:
//! a signature change that no call can notice is not breaking, however
//! many call it. Read from both sides' trees of the changed file.
//!
//! Not noticed by any caller: a Rust parameter renamed (names are no part
//! of a Rust call) or its pattern's `mut`; a Python annotation refined (a
//! generic parameter added or changed, `Optional[X]` for `X | None`, quotes,
//! `typing.List` for `list`, a parameter's type widened or a return type
//! narrowed); a Python parameter added with a default, by position at the
//! end or keyword-only; a positional-only parameter renamed. Noticed: a
//! Rust type, receiver, generic, bound, qualifier or visibility changed; a
//! Python parameter renamed that callers may pass by keyword, one removed,
//! reordered, made required or made positional- or keyword-only, a default
//! changed (a call that leaves it out now gets another value), a
//! decorator changed, `async` added or removed.

use std::collections::BTreeSet;

use tree_sitter::Node;

use super::{Change, ChangedSymbol, Kind, Lang};
use crate::git::FileDiff;
use crate::syntax::{Key, Store};

/// Clear `breaking` of each changed function or method whose signature
/// change no call can notice (`unnoticed`), reading both sides of its
/// file from `store`.
pub fn unbreak_unnoticed(symbols: &mut [ChangedSymbol], changed: &[&FileDiff], store: &Store) {
    for s in symbols.iter_mut().filter(|s| {
        s.breaking
            && s.change == Change::SignatureChanged
            && matches!(
                s.kind,
                Kind::Function | Kind::Method | Kind::Class | Kind::Struct
            )
    }) {
        let Some(fd) = changed.iter().find(|f| f.path == s.file) else {
            continue;
        };
        let old_path = fd.old_path.as_deref().unwrap_or(&fd.path);
        let (Some(lang), Some(old), Some(new)) = (
            Lang::of_path(&fd.path).filter(|l| Lang::of_path(old_path) == Some(*l)),
            fd.old_blob.as_deref(),
            fd.new_blob.as_deref(),
        ) else {
            continue;
        };
        let (Ok(base), Ok(head)) = (
            store.tree(&Key::new(old, lang)),
            store.tree(&Key::new(new, lang)),
        ) else {
            continue;
        };
        let name = s
            .symbol
            .rsplit(lang.member_separator())
            .next()
            .unwrap_or(&s.symbol);
        let want = match s.kind {
            Kind::Class => CLASSES,
            // Its private fields are its module's: a use elsewhere cannot
            // tell them changed, and one in its file the diff did not
            // write may.
            Kind::Struct if lang == Lang::Rust => {
                let added = added_lines(fd);
                let Ok(text) = store.text(&Key::new(new, lang)) else {
                    continue;
                };
                let lines: Vec<&str> = text.as_str().lines().collect();
                let name = s.symbol.rsplit("::").next().unwrap_or(&s.symbol);
                if s.sites.iter().any(|site| {
                    !site.inside
                        && site.file == s.file
                        && !added.contains(&site.line)
                        && lines
                            .get(site.line.saturating_sub(1) as usize)
                            .is_some_and(|l| literal(l, name))
                }) {
                    continue;
                }
                STRUCTS
            }
            Kind::Struct => continue,
            _ => FUNCTIONS,
        };
        if unnoticed(
            lang,
            (base.root(), base.text().bytes()),
            (head.root(), head.text().bytes()),
            name,
            s.line,
            want,
        ) {
            s.breaking = false;
        }
    }
}

/// Whether `line` may write a struct literal or pattern of `name`
/// (`Name {`), not a type (`impl Name {`, `-> Name {`, `struct Name {`).
fn literal(line: &str, name: &str) -> bool {
    line.match_indices(name).any(|(at, _)| {
        let before = line[..at].trim_end();
        let after = line[at + name.len()..].trim_start();
        let word = before
            .rsplit(|c: char| !c.is_alphanumeric() && c != '_')
            .next();
        after.starts_with('{')
            && !before.ends_with("->")
            && !matches!(word, Some("impl" | "for" | "struct"))
            && !before.ends_with(|c: char| c.is_alphanumeric() || c == '_')
    })
}

/// The head lines a file's diff added.
fn added_lines(fd: &FileDiff) -> std::collections::HashSet<u32> {
    fd.hunks
        .iter()
        .flat_map(|h| &h.lines)
        .filter(|l| l.kind == crate::git::LineKind::Added)
        .filter_map(|l| l.new_lineno)
        .collect()
}

const STRUCTS: &[&str] = &["struct_item"];

const FUNCTIONS: &[&str] = &[
    "function_item",
    "function_signature_item",
    "function_definition",
];

/// Whether some definition of `name` of the kinds `want` in `base` (the
/// old file) has a signature every call of the head definition at `line`
/// could not tell apart from it. Definitions are matched by name and by the names of the
/// classes, impls, traits and modules around them. False when either
/// side's definition cannot be found: the change stays breaking.
fn unnoticed(
    lang: Lang,
    base: (Node, &[u8]),
    head: (Node, &[u8]),
    name: &str,
    line: u32,
    want: &[&str],
) -> bool {
    let mut heads = Vec::new();
    functions(
        lang,
        head.0,
        head.1,
        name,
        want,
        &mut Vec::new(),
        &mut heads,
    );
    let within = |n: &Node| {
        (n.start_position().row as u32) < line && line <= n.end_position().row as u32 + 1
    };
    let Some(owner) = heads
        .iter()
        .find(|(_, n)| within(n))
        .map(|(o, _)| o.clone())
    else {
        return false;
    };
    // Calls bind to the implementation, not to an `@overload` stub.
    let implementation = |(o, n): &(Vec<String>, Node), src: &[u8]| {
        *o == owner && !(lang == Lang::Python && overload(*n, src))
    };
    let Some(new) = heads
        .iter()
        .filter(|d| implementation(d, head.1))
        .find(|(_, n)| within(n))
        .or_else(|| heads.iter().rfind(|d| implementation(d, head.1)))
        .map(|(_, n)| *n)
    else {
        return false;
    };
    let mut bases = Vec::new();
    functions(
        lang,
        base.0,
        base.1,
        name,
        want,
        &mut Vec::new(),
        &mut bases,
    );
    let olds: Vec<Node> = bases
        .iter()
        .filter(|d| implementation(d, base.1))
        .map(|(_, n)| *n)
        .collect();
    // A property's setter is compared with the old setter, not its getter.
    let same_kind: Vec<Node> = match lang {
        Lang::Python => {
            let decorators = |n: Node, src: &[u8]| python_view(n, src).map(|v| v.decorators);
            let want = decorators(new, head.1);
            olds.iter()
                .copied()
                .filter(|o| decorators(*o, base.1) == want)
                .collect()
        }
        Lang::Rust => Vec::new(),
    };
    let olds = if same_kind.is_empty() {
        olds
    } else {
        same_kind
    };
    !olds.is_empty()
        && olds.iter().all(|old| match lang {
            Lang::Rust if want == STRUCTS => public_view(*old, base.1) == public_view(new, head.1),
            Lang::Rust => rust_unnoticed(*old, base.1, new, head.1),
            Lang::Python if want == CLASSES => class_unnoticed(*old, base.1, new, head.1),
            Lang::Python => python_unnoticed(*old, base.1, new, head.1),
        })
}

/// The function definitions named `name`, each with the names of the
/// definitions around it (for a decorated Python function, the decorated
/// definition, so its decorators come with it).
fn functions<'t>(
    lang: Lang,
    node: Node<'t>,
    src: &[u8],
    name: &str,
    want: &[&str],
    path: &mut Vec<String>,
    out: &mut Vec<(Vec<String>, Node<'t>)>,
) {
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        let (kind, def) = match (lang, child.kind()) {
            (Lang::Python, "decorated_definition") => match child.child_by_field_name("definition")
            {
                Some(d) => (d.kind(), d),
                None => continue,
            },
            (_, k) => (k, child),
        };
        let own = def
            .child_by_field_name("name")
            .map(|n| text(n, src).to_string());
        let is_fn = matches!(
            kind,
            "function_item" | "function_signature_item" | "function_definition"
        );
        if want.contains(&kind) && own.as_deref() == Some(name) {
            out.push((path.clone(), child));
        }
        let scope = match kind {
            "impl_item" => def
                .child_by_field_name("type")
                .map(|t| base_type(text(t, src)).to_string()),
            "class_definition" | "trait_item" | "mod_item" | "function_definition" => own,
            _ => None,
        };
        let body = def.child_by_field_name("body");
        match (scope, body) {
            (Some(s), Some(b)) => {
                path.push(s);
                functions(lang, b, src, name, want, path, out);
                path.pop();
            }
            (None, _) if !is_fn => functions(lang, child, src, name, want, path, out),
            _ => {}
        }
    }
}

const CLASSES: &[&str] = &["class_definition"];

/// Whether a Python class's users cannot tell `new`'s header from `old`'s:
/// the same decorators, and the same bases once their generic parameters,
/// modules and a `Generic[T]` or `Protocol` base added are left out
/// (`MutableMapping` → `MutableMapping[str, t.Any]`).
fn class_unnoticed(old: Node, old_src: &[u8], new: Node, new_src: &[u8]) -> bool {
    let header = |node: Node, src: &[u8]| -> (Vec<String>, BTreeSet<String>) {
        let mut cursor = node.walk();
        let decorators = node
            .named_children(&mut cursor)
            .filter(|c| c.kind() == "decorator")
            .map(|d| decorator(text(d, src)))
            .collect();
        let class = match node.kind() {
            "decorated_definition" => node.child_by_field_name("definition").unwrap_or(node),
            _ => node,
        };
        let mut bases = BTreeSet::new();
        if let Some(list) = class.child_by_field_name("superclasses") {
            let mut c = list.walk();
            for arg in list.named_children(&mut c) {
                if arg.kind() == "keyword_argument" {
                    bases.insert(squeeze(text(arg, src)));
                } else {
                    bases.extend(types(text(arg, src)));
                }
            }
        }
        bases.retain(|b| !matches!(b.as_str(), "Generic" | "Protocol" | "object"));
        (decorators, bases)
    };
    header(old, old_src) == header(new, new_src)
}

/// A Python `@overload` stub (`@overload`, `@typing.overload`).
fn overload(node: Node, src: &[u8]) -> bool {
    let mut cursor = node.walk();
    node.kind() == "decorated_definition"
        && node
            .named_children(&mut cursor)
            .any(|d| d.kind() == "decorator" && text(d, src).trim_end().ends_with("overload"))
}

/// `Foo` of `Foo<T>` or `crate::x::Foo`.
fn base_type(t: &str) -> &str {
    let t = t.split('<').next().unwrap_or(t);
    t.rsplit("::").next().unwrap_or(t).trim()
}

fn text<'a>(node: Node, src: &'a [u8]) -> &'a str {
    std::str::from_utf8(&src[node.byte_range()]).unwrap_or("")
}

/// Whether a Rust function's callers cannot tell `new` from `old`: the
/// same view (`rust_view`), a visibility as wide or wider, `const` kept,
/// `unsafe` not added, `async` and the ABI unchanged.
fn rust_unnoticed(old: Node, old_src: &[u8], new: Node, new_src: &[u8]) -> bool {
    let (o, n) = (rust_view(old, old_src), rust_view(new, new_src));
    let (om, nm) = (modifiers(old, old_src), modifiers(new, new_src));
    o == n
        && reach(old, old_src) <= reach(new, new_src)
        && (!om.contains("const") || nm.contains("const"))
        && (om.contains("unsafe") || !nm.contains("unsafe"))
        && om.contains("async") == nm.contains("async")
        && om
            .iter()
            .filter(|m| m.starts_with("extern"))
            .eq(nm.iter().filter(|m| m.starts_with("extern")))
}

/// A Rust struct as code outside its module sees it: its tokens with
/// its private named fields and comments left out.
fn public_view(node: Node, src: &[u8]) -> String {
    fn walk(node: Node, src: &[u8], out: &mut Vec<String>) {
        if node.kind().ends_with("comment") {
            return;
        }
        if node.kind() == "field_declaration" {
            let mut c = node.walk();
            if !node
                .children(&mut c)
                .any(|x| x.kind() == "visibility_modifier")
            {
                return;
            }
        }
        if node.child_count() == 0 {
            out.push(text(node, src).to_string());
            return;
        }
        let mut c = node.walk();
        for child in node.children(&mut c) {
            walk(child, src, out);
        }
    }
    let mut out = Vec::new();
    walk(node, src, &mut out);
    // Commas left by the fields taken out are no tokens either.
    out.dedup_by(|a, b| a == "," && b == ",");
    let mut kept: Vec<String> = Vec::with_capacity(out.len());
    for t in out {
        if (t == "}" && kept.last().is_some_and(|l| l == ","))
            || (t == "," && kept.last().is_some_and(|l| l == "{"))
        {
            if t == "}" {
                kept.pop();
                kept.push(t);
            }
            continue;
        }
        kept.push(t);
    }
    kept.join(" ")
}

/// How far a Rust item is visible: private, a module's (`pub(super)`,
/// `pub(in …)`, `pub(self)`), the crate's, everyone's.
fn reach(node: Node, src: &[u8]) -> u8 {
    let mut cursor = node.walk();
    let vis = node
        .children(&mut cursor)
        .find(|c| c.kind() == "visibility_modifier")
        .map(|v| squeeze(text(v, src)));
    match vis.as_deref() {
        None | Some("pub(self)") => 0,
        Some("pub") => 3,
        Some("pub(crate)") => 2,
        Some(_) => 1,
    }
}

/// A Rust function's qualifiers (`const`, `async`, `unsafe`, `extern "C"`).
fn modifiers(node: Node, src: &[u8]) -> BTreeSet<String> {
    let mut cursor = node.walk();
    let mut out = BTreeSet::new();
    for m in node
        .children(&mut cursor)
        .filter(|c| c.kind() == "function_modifiers")
    {
        let mut c = m.walk();
        for q in m.children(&mut c) {
            out.insert(squeeze(text(q, src)));
        }
    }
    out
}

/// A Rust function as its callers see it: its tokens without its body,
/// visibility or qualifiers,
/// each parameter's pattern read as `_`, `mut self` as `self`, comments,
/// a trailing comma and an elided lifetime said (`<'_>`) left out.
fn rust_view(node: Node, src: &[u8]) -> String {
    let mut out = Vec::new();
    let body = node.child_by_field_name("body").map(|b| b.id());
    rust_tokens(node, src, body, &mut out);
    // A trailing comma before a closing bracket is no token.
    let mut kept: Vec<String> = Vec::with_capacity(out.len());
    for t in out {
        if matches!(t.as_str(), ")" | ">" | "]" | "}") && kept.last().is_some_and(|l| l == ",") {
            kept.pop();
        }
        kept.push(t);
    }
    // `Data<'_>` is `Data` with its elided lifetime said (Rust 2024's
    // lint asks for it).
    kept.join(" ").replace(" < ' _ >", "")
}

fn rust_tokens(node: Node, src: &[u8], body: Option<usize>, out: &mut Vec<String>) {
    if Some(node.id()) == body
        || node.kind().ends_with("comment")
        || matches!(node.kind(), "visibility_modifier" | "function_modifiers")
    {
        return;
    }
    match node.kind() {
        "parameter" => {
            let pattern = node.child_by_field_name("pattern").map(|p| p.id());
            out.push("_".to_string());
            let mut cursor = node.walk();
            for c in node.children(&mut cursor) {
                if Some(c.id()) != pattern && c.kind() != "mutable_specifier" {
                    rust_tokens(c, src, body, out);
                }
            }
            return;
        }
        "self_parameter" => {
            // `mut self` is the body's business; `&mut self` is not.
            let t: String = text(node, src)
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            out.push(t.strip_prefix("mut ").unwrap_or(&t).to_string());
            return;
        }
        _ => {}
    }
    if node.child_count() == 0 {
        out.push(text(node, src).to_string());
        return;
    }
    let mut cursor = node.walk();
    for c in node.children(&mut cursor) {
        rust_tokens(c, src, body, out);
    }
}

/// How a Python parameter is passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pass {
    Positional,
    Either,
    Rest,
    Keyword,
    Keywords,
}

#[derive(Debug)]
struct Param {
    name: String,
    pass: Pass,
    default: Option<String>,
    /// The annotation's types (`types`); None without one.
    types: Option<BTreeSet<String>>,
}

/// A Python function as its callers see it.
#[derive(Debug)]
struct PyView {
    decorators: Vec<String>,
    is_async: bool,
    params: Vec<Param>,
    returns: Option<BTreeSet<String>>,
}

fn python_view(node: Node, src: &[u8]) -> Option<PyView> {
    let (decorators, def) = if node.kind() == "decorated_definition" {
        let mut cursor = node.walk();
        let decorators = node
            .named_children(&mut cursor)
            .filter(|c| c.kind() == "decorator")
            .map(|d| decorator(text(d, src)))
            .collect();
        (decorators, node.child_by_field_name("definition")?)
    } else {
        (Vec::new(), node)
    };
    let is_async = {
        let mut cursor = def.walk();
        def.children(&mut cursor).any(|c| c.kind() == "async")
    };
    let params = python_params(def.child_by_field_name("parameters")?, src);
    let returns = def
        .child_by_field_name("return_type")
        .map(|r| types(text(r, src)));
    Some(PyView {
        decorators,
        is_async,
        params,
        returns,
    })
}

/// A decorator as callers feel it: without its module (`functools.cache`
/// is `cache`), `lru_cache(maxsize=None)` being `cache`.
fn decorator(t: &str) -> String {
    let t = squeeze(t.trim_start_matches('@'));
    let (head, args) = match t.find('(') {
        Some(i) => (&t[..i], &t[i..]),
        None => (t.as_str(), ""),
    };
    let name = head.rsplit('.').next().unwrap_or(head);
    match (name, args.replace(' ', "").as_str()) {
        ("lru_cache", "(maxsize=None)") => "cache".to_string(),
        // `@x.setter` names the property it sets: kept whole.
        _ if matches!(name, "setter" | "getter" | "deleter") => t.clone(),
        _ => format!("{name}{args}"),
    }
}

fn squeeze(t: &str) -> String {
    t.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn python_params(node: Node, src: &[u8]) -> Vec<Param> {
    let mut out: Vec<Param> = Vec::new();
    let mut keyword_only = false;
    let mut cursor = node.walk();
    for p in node.named_children(&mut cursor) {
        let default = p
            .child_by_field_name("value")
            .filter(|_| matches!(p.kind(), "default_parameter" | "typed_default_parameter"))
            .map(|v| squeeze(text(v, src)));
        let annotation = p.child_by_field_name("type").map(|t| types(text(t, src)));
        let core = match p.kind() {
            "typed_parameter" => p.named_child(0).unwrap_or(p),
            "default_parameter" | "typed_default_parameter" => {
                p.child_by_field_name("name").unwrap_or(p)
            }
            _ => p,
        };
        let (name, pass) = match core.kind() {
            "identifier" => (
                text(core, src),
                if keyword_only {
                    Pass::Keyword
                } else {
                    Pass::Either
                },
            ),
            "list_splat_pattern" => {
                keyword_only = true;
                (text(core, src).trim_start_matches('*'), Pass::Rest)
            }
            "dictionary_splat_pattern" => (text(core, src).trim_start_matches('*'), Pass::Keywords),
            "keyword_separator" => {
                keyword_only = true;
                continue;
            }
            "positional_separator" => {
                for q in out.iter_mut().filter(|q| q.pass == Pass::Either) {
                    q.pass = Pass::Positional;
                }
                continue;
            }
            _ => continue,
        };
        out.push(Param {
            name: name.to_string(),
            pass,
            default,
            types: annotation,
        });
    }
    out
}

/// An annotation's types, as a caller tells them apart: the members of a
/// union (`A | B`, `Union[A, B]`, `Optional[A]` as `A | None`), each without
/// its generic parameters, quotes or module (`t.Optional["os.PathLike[str]"]`
/// is {`None`, `PathLike`}), `typing`'s aliases as the builtins.
fn types(annotation: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    add_types(annotation, &mut out);
    out
}

fn add_types(t: &str, out: &mut BTreeSet<String>) {
    let t = t.trim().trim_matches(|c| c == '"' || c == '\'').trim();
    let members = split_top(t, '|');
    if members.len() > 1 {
        for m in members {
            add_types(m, out);
        }
        return;
    }
    let (head, args) = match t.find('[') {
        Some(i) if t.ends_with(']') => (&t[..i], Some(&t[i + 1..t.len() - 1])),
        _ => (t, None),
    };
    let name = head.rsplit('.').next().unwrap_or(head).trim();
    match (name, args) {
        ("Optional", Some(a)) => {
            add_types(a, out);
            out.insert("None".to_string());
        }
        ("Union", Some(a)) => {
            for m in split_top(a, ',') {
                add_types(m, out);
            }
        }
        ("NoneType", _) => {
            out.insert("None".to_string());
        }
        _ => {
            let builtin = match name {
                "List" => "list",
                "Dict" => "dict",
                "Tuple" => "tuple",
                "Set" => "set",
                "FrozenSet" => "frozenset",
                "Type" => "type",
                "Text" => "str",
                other => other,
            };
            out.insert(builtin.to_string());
        }
    }
}

/// `t` split at `sep` outside brackets and quotes.
fn split_top(t: &str, sep: char) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut quote, mut start) = (0i32, None, 0);
    for (i, c) in t.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '[' | '(' | '{') => depth += 1,
            (None, ']' | ')' | '}') => depth -= 1,
            (None, c) if c == sep && depth == 0 => {
                out.push(&t[start..i]);
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    out.push(&t[start..]);
    out
}

/// The types a name of which is sure to be no alias of another.
const BUILTIN: &[&str] = &[
    "None",
    "bool",
    "bytearray",
    "bytes",
    "complex",
    "dict",
    "float",
    "frozenset",
    "int",
    "list",
    "set",
    "str",
    "tuple",
    "type",
];

/// Whether a caller passing what `old` (a parameter's types) allowed is
/// still allowed: the new types take in the old, or either is unsaid, or
/// what the new ones left out may be what a new name stands for (`dict`
/// → `WSGIEnvironment`, an alias speed cannot see through). Only a
/// builtin left out while every new type is a builtin is noticed.
fn widened(old: &Option<BTreeSet<String>>, new: &Option<BTreeSet<String>>) -> bool {
    let (Some(o), Some(n)) = (old, new) else {
        return true;
    };
    if n.contains("Any") || n.contains("object") || o.contains("Any") {
        return true;
    }
    let builtin = |t: &String| BUILTIN.contains(&t.as_str());
    !(o.difference(n).any(builtin) && n.iter().all(builtin))
}

fn python_unnoticed(old: Node, old_src: &[u8], new: Node, new_src: &[u8]) -> bool {
    let (Some(o), Some(n)) = (python_view(old, old_src), python_view(new, new_src)) else {
        return false;
    };
    if o.decorators != n.decorators || o.is_async != n.is_async {
        return false;
    }
    // A return type narrowed is what callers already handled.
    if !widened(&n.returns, &o.returns) {
        return false;
    }
    let positional = |ps: &[Param]| -> Vec<usize> {
        (0..ps.len())
            .filter(|&i| matches!(ps[i].pass, Pass::Positional | Pass::Either))
            .collect()
    };
    let (op, np) = (positional(&o.params), positional(&n.params));
    let has = |ps: &[Param], pass: Pass| ps.iter().any(|p| p.pass == pass);
    let same = |a: &Param, b: &Param| a.default == b.default && widened(&a.types, &b.types);
    // Each position keeps its meaning, its name when callers may name it,
    // its default and what it takes.
    for (k, &i) in op.iter().enumerate() {
        let Some(&j) = np.get(k) else {
            return false;
        };
        let (a, b) = (&o.params[i], &n.params[j]);
        if (a.pass == Pass::Either && (b.pass != Pass::Either || b.name != a.name)) || !same(a, b) {
            return false;
        }
    }
    // New positions take a default, and cannot take what `*args` took.
    if np[op.len().min(np.len())..]
        .iter()
        .any(|&j| n.params[j].default.is_none())
        || (np.len() > op.len() && has(&o.params, Pass::Rest))
    {
        return false;
    }
    for pass in [Pass::Rest, Pass::Keywords] {
        if has(&o.params, pass) != has(&n.params, pass) && has(&o.params, pass) {
            return false;
        }
    }
    // Every name a caller could pass by keyword alone is still taken, as
    // it was.
    for a in o.params.iter().filter(|p| p.pass == Pass::Keyword) {
        match n
            .params
            .iter()
            .find(|b| b.name == a.name && matches!(b.pass, Pass::Either | Pass::Keyword))
        {
            Some(b) if same(a, b) => {}
            _ => return false,
        }
    }
    // A new keyword-only parameter takes a default.
    !n.params.iter().any(|b| {
        b.pass == Pass::Keyword && b.default.is_none() && !o.params.iter().any(|a| a.name == b.name)
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::syntax::{Parsed, Text};

    fn unnoticed_in(lang: Lang, old: &str, new: &str, name: &str, line: u32) -> bool {
        unnoticed_kind(lang, old, new, name, line, FUNCTIONS)
    }

    fn unnoticed_kind(
        lang: Lang,
        old: &str,
        new: &str,
        name: &str,
        line: u32,
        want: &[&str],
    ) -> bool {
        let parse =
            |src: &str| Parsed::new(lang, Arc::new(Text::new(src.as_bytes().to_vec()))).unwrap();
        let (a, b) = (parse(old), parse(new));
        unnoticed(
            lang,
            (a.root(), old.as_bytes()),
            (b.root(), new.as_bytes()),
            name,
            line,
            want,
        )
    }

    fn py(old: &str, new: &str) -> bool {
        let line = new.lines().position(|l| l.contains("def f")).unwrap() as u32 + 1;
        unnoticed_in(Lang::Python, old, new, "f", line)
    }

    fn rs(old: &str, new: &str) -> bool {
        let line = new.lines().position(|l| l.contains("fn f")).unwrap() as u32 + 1;
        unnoticed_in(Lang::Rust, old, new, "f", line)
    }

    #[test]
    fn a_rust_parameter_renamed_is_unnoticed_a_type_changed_is_not() {
        let old = "impl Budget {\n    pub fn f(&self, src: impl AsRef<Path>, mut n: u32) -> u32 { n }\n}\n";
        assert!(rs(
            old,
            &old.replace("src:", "original:").replace("mut n", "count")
        ));
        assert!(rs(old, &old.replace("u32) ->", "u32,) ->")));
        assert!(!rs(old, &old.replace("mut n: u32", "n: u64")));
        assert!(!rs(old, &old.replace("pub fn", "pub(crate) fn")));
        // Made wider, or `const`: unnoticed; `unsafe` or `async`: noticed.
        let local = old.replace("pub fn", "pub(super) fn");
        assert!(rs(
            &local,
            &local.replace("pub(super) fn", "pub(crate) const fn")
        ));
        assert!(!rs(old, &old.replace("pub fn", "pub unsafe fn")));
        assert!(!rs(old, &old.replace("pub fn", "pub async fn")));
        assert!(rs(
            &old.replace("u32 { n }", "Data { n }"),
            &old.replace("u32 { n }", "Data<'_> { n }")
        ));
        assert!(!rs(old, &old.replace("&self", "&mut self")));
        // Another type's method of the same name is not the one compared.
        let other = "impl Other {\n    pub fn f(&self) {}\n}\n";
        assert!(!rs(other, old));
    }

    #[test]
    fn python_annotations_refined_and_defaults_added_are_unnoticed() {
        let old = "class Flask:\n    def f(self, import_name: str, static_folder: t.Optional[t.Union[str, os.PathLike]] = \"static\", *, host: \"str | None\" = None) -> t.List:\n        pass\n";
        let refined = old
            .replace(
                "t.Optional[t.Union[str, os.PathLike]]",
                "str | os.PathLike[str] | None",
            )
            .replace("\"str | None\"", "str | None")
            .replace("-> t.List", "-> list[str]");
        assert!(py(old, &refined));
        // Added with a default, by position at the end or keyword-only.
        assert!(py(
            old,
            &old.replace("*, host", "root_path: str | None = None, *, host")
        ));
        assert!(py(
            old,
            &old.replace("= None)", "= None, subdomain: str | None = None)")
        ));
        // Renamed where a caller may name it: noticed; positional-only: not.
        assert!(!py(old, &old.replace("import_name:", "name:")));
        let positional = old.replace("import_name: str,", "import_name: str, /,");
        assert!(py(
            &positional,
            &positional.replace("import_name:", "name:")
        ));
        // Required, narrowed, a default changed, a decorator: noticed.
        assert!(!py(old, &old.replace("*, host", "root_path: str, *, host")));
        assert!(!py(
            old,
            &old.replace("t.Optional[t.Union[str, os.PathLike]]", "str")
        ));
        assert!(!py(
            old,
            &old.replace("import_name: str", "import_name: int")
        ));
        // A name that may be an alias (`dict` → `WSGIEnvironment`): unnoticed.
        assert!(py(
            old,
            &old.replace("import_name: str", "import_name: ImportName")
        ));
        // `@overload` stubs added: the implementation is compared.
        let overloads = old.replace(
            "    def f",
            "    @t.overload\n    def f(self, import_name: str) -> list[str]: ...\n\n    def f",
        );
        assert!(py(old, &overloads));
        // A property's setter is compared with the old setter.
        let property = "class A:\n    @property\n    def f(self) -> str:\n        pass\n\n    @f.setter\n    def f(self, value: str | os.PathLike | None) -> None:\n        pass\n";
        let line = property
            .lines()
            .position(|l| l.contains("@f.setter"))
            .unwrap() as u32
            + 2;
        let refined = property.replace("os.PathLike |", "os.PathLike[str] |");
        assert!(unnoticed_in(Lang::Python, property, &refined, "f", line));
        // `functools.lru_cache(maxsize=None)` is `cache`.
        let cached = old.replace("    def f", "    @lru_cache(maxsize=None)\n    def f");
        assert!(py(
            &cached,
            &cached.replace("@lru_cache(maxsize=None)", "@functools.cache")
        ));
        assert!(!py(old, &old.replace("= \"static\"", "= \"public\"")));
        assert!(!py(
            old,
            &old.replace("    def f", "    @property\n    def f")
        ));
    }

    #[test]
    fn a_python_class_given_generic_parameters_is_unnoticed_a_base_changed_is_not() {
        let class = |header: &str| format!("{header}\n    pass\n");
        let same = |a: &str, b: &str| {
            unnoticed_kind(Lang::Python, &class(a), &class(b), "Session", 1, CLASSES)
        };
        assert!(same(
            "class Session(CallbackDict, Mixin):",
            "class Session(CallbackDict[str, t.Any], Mixin):"
        ));
        assert!(same("class Session:", "class Session(t.Generic[T]):"));
        assert!(!same("class Session(Mixin):", "class Session(dict):"));
    }

    #[test]
    fn a_rust_struct_whose_private_fields_changed_is_unnoticed_a_public_field_is_not() {
        let old = "pub struct Builder {\n    config: Config,\n    decomp: Decomp,\n    pub name: String,\n}\n";
        let same = |new: &str| unnoticed_kind(Lang::Rust, old, new, "Builder", 1, STRUCTS);
        assert!(same(
            &old.replace("decomp: Decomp", "decomp: Option<Decomp>")
        ));
        assert!(same(&old.replace("    decomp: Decomp,\n", "")));
        assert!(!same(
            &old.replace("pub name: String", "pub name: Box<str>")
        ));
        assert!(!same(
            &old.replace("pub struct Builder {", "pub struct Builder<T> {")
        ));
        assert!(literal("        Builder { config, decomp }", "Builder"));
        assert!(!literal("impl Builder {", "Builder"));
        assert!(!literal("    pub fn new() -> Builder {", "Builder"));
    }
}
