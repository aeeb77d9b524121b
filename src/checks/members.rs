//! What code relies on about a Rust type's members. A struct gaining a
//! field or an enum gaining a variant changes no caller's behaviour, and
//! breaks exactly the places that list every member: a struct literal or
//! pattern without `..`, a `match` that names the enum's variants one by
//! one with no catch-all arm. This finds those places; it stands down on
//! anything it cannot read (a pattern it does not know, a macro's
//! arguments, `Self` outside the type's own `impl`).

use tree_sitter::Node;

/// A struct with named fields, or an enum, and its members' names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shape {
    pub name: String,
    pub line: u32,
    pub members: Vec<String>,
    /// An enum (its members are variants), else a struct (fields).
    pub variants: bool,
}

/// How a place lists a type's members.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listing {
    /// `S { a, b: 1 }` without `..base`.
    Literal,
    /// `S { a, b }` as a pattern, without `..`.
    Pattern,
    /// `match x { E::A => …, E::B => … }` without a catch-all arm.
    Match,
}

/// A place listing every member but some of the new ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lister {
    pub listing: Listing,
    /// The line the construct starts on.
    pub line: u32,
    /// The new members it leaves out.
    pub missing: Vec<String>,
}

fn text<'a>(node: Node, src: &'a [u8]) -> &'a str {
    std::str::from_utf8(&src[node.byte_range()]).unwrap_or("")
}

fn line(node: Node) -> u32 {
    node.start_position().row as u32 + 1
}

/// `Foo` of `crate::a::Foo<T>`.
fn last_segment(path: &str) -> &str {
    let path = path.split('<').next().unwrap_or(path).trim();
    path.rsplit("::").next().unwrap_or(path).trim()
}

/// The named-field structs and the enums a Rust file defines, at any depth.
pub fn shapes(root: Node, src: &[u8]) -> Vec<Shape> {
    let mut found = Vec::new();
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        if is_shape(n.kind()) {
            found.push(n);
            continue;
        }
        let mut c = n.walk();
        stack.extend(n.named_children(&mut c));
    }
    // Met last child first: the reverse of the file's order.
    found.reverse();
    shapes_in(&found, src)
}

/// Whether a node of `kind` is a struct or an enum `shapes` reads.
pub(super) fn is_shape(kind: &str) -> bool {
    matches!(kind, "struct_item" | "enum_item")
}

/// `shapes`, from the structs and enums of the file (`is_shape`) in the
/// file's order; the shapes come last first, as `shapes` lists them.
pub(super) fn shapes_in(items: &[Node], src: &[u8]) -> Vec<Shape> {
    let mut out = Vec::new();
    for &n in items.iter().rev() {
        let (list, member, variants) = match n.kind() {
            "struct_item" => ("field_declaration_list", "field_declaration", false),
            _ => ("enum_variant_list", "enum_variant", true),
        };
        let (Some(name), Some(body)) = (
            n.child_by_field_name("name"),
            n.child_by_field_name("body").filter(|b| b.kind() == list),
        ) else {
            continue;
        };
        let mut c = body.walk();
        let members = body
            .named_children(&mut c)
            .filter(|m| m.kind() == member)
            .filter_map(|m| m.child_by_field_name("name"))
            .map(|m| text(m, src).to_string())
            .collect();
        out.push(Shape {
            name: text(name, src).to_string(),
            line: line(name),
            members,
            variants,
        });
    }
    out
}

/// Whether a line naming the type `name` may be where a place listing its
/// members starts, read from its text alone so that most files holding a
/// reference need not be parsed: a variant path (`Mode::Fast`, `Self::Fast`)
/// for an enum, the type's name (or `Self`) followed by `{` for a struct.
pub fn may_list(line: &str, name: &str, variants: bool) -> bool {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    [name, "Self"].iter().any(|n| {
        line.match_indices(n).any(|(i, _)| {
            let before = &line[..i];
            if before.chars().next_back().is_some_and(word) {
                return false;
            }
            // `impl Args {`, `impl Display for Args {`: a header, not a literal.
            let keyword = before
                .trim_end()
                .rsplit(|c: char| !word(c))
                .next()
                .unwrap_or("");
            if matches!(
                keyword,
                "impl" | "for" | "struct" | "enum" | "union" | "trait"
            ) {
                return false;
            }
            let rest = &line[i + n.len()..];
            if variants {
                return rest.starts_with("::");
            }
            let rest = rest.trim_start();
            let rest = match rest.strip_prefix('<') {
                // `S<T> {`: past the generic arguments.
                Some(generic) => {
                    let mut depth = 1;
                    let end = generic.char_indices().find_map(|(j, c)| {
                        match c {
                            '<' => depth += 1,
                            '>' => depth -= 1,
                            _ => {}
                        }
                        (depth == 0).then_some(j + 1)
                    });
                    match end {
                        Some(j) => generic[j..].trim_start(),
                        None => return false,
                    }
                }
                None => rest,
            };
            rest.starts_with('{')
        })
    })
}

/// The places around `row` (0-based) that list `name`'s members one by
/// one and leave out some of `new`: struct literals and patterns naming
/// the type on that row, and the `match` expressions enclosing it whose
/// every arm is one of the enum's variants.
pub fn listers(root: Node, src: &[u8], row: usize, name: &str, new: &[String]) -> Vec<Lister> {
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        if n.start_position().row > row || n.end_position().row < row {
            continue;
        }
        let found = match n.kind() {
            "struct_expression" => literal(n, src, row, name, new),
            "struct_pattern" => pattern(n, src, row, name, new),
            "match_expression" => enumerating(n, src, name, new),
            _ => None,
        };
        out.extend(found);
        let mut c = n.walk();
        stack.extend(n.named_children(&mut c));
    }
    out
}

/// Whether a type path as written names `name`: its last segment, or
/// `Self` inside `name`'s own `impl`.
fn names_type(path: &str, at: Node, src: &[u8], name: &str) -> bool {
    match last_segment(path) {
        "Self" => impl_type(at, src).is_some_and(|t| t == name),
        s => s == name,
    }
}

/// The type of the `impl` enclosing `node`.
fn impl_type<'a>(node: Node, src: &'a [u8]) -> Option<&'a str> {
    let mut cur = node.parent();
    while let Some(n) = cur {
        if n.kind() == "impl_item" {
            return n
                .child_by_field_name("type")
                .map(|t| last_segment(text(t, src)));
        }
        cur = n.parent();
    }
    None
}

fn missing(new: &[String], named: &[&str]) -> Vec<String> {
    new.iter()
        .filter(|m| !named.contains(&m.as_str()))
        .cloned()
        .collect()
}

fn literal(n: Node, src: &[u8], row: usize, name: &str, new: &[String]) -> Option<Lister> {
    let ty = n.child_by_field_name("name")?;
    if ty.start_position().row != row || !names_type(text(ty, src), n, src, name) {
        return None;
    }
    let body = n.child_by_field_name("body")?;
    let mut named = Vec::new();
    let mut c = body.walk();
    for f in body.named_children(&mut c) {
        match f.kind() {
            "base_field_initializer" => return None,
            "shorthand_field_initializer" => named.push(text(f, src).trim()),
            "field_initializer" => {
                named.push(f.child_by_field_name("field").map_or("", |x| text(x, src)))
            }
            _ => {}
        }
    }
    let missing = missing(new, &named);
    (!missing.is_empty()).then(|| Lister {
        listing: Listing::Literal,
        line: line(n),
        missing,
    })
}

fn pattern(n: Node, src: &[u8], row: usize, name: &str, new: &[String]) -> Option<Lister> {
    let ty = n.child_by_field_name("type")?;
    if ty.start_position().row != row || !names_type(text(ty, src), n, src, name) {
        return None;
    }
    let mut named = Vec::new();
    let mut c = n.walk();
    for f in n.named_children(&mut c) {
        match f.kind() {
            "remaining_field_pattern" => return None,
            "field_pattern" => {
                // `a`, `ref a`, `mut a` or `a: p`: the field's name.
                let field = f.child_by_field_name("name").map_or("", |x| text(x, src));
                named.push(field);
            }
            _ => {}
        }
    }
    let missing = missing(new, &named);
    (!missing.is_empty()).then(|| Lister {
        listing: Listing::Pattern,
        line: line(n),
        missing,
    })
}

/// A `match` whose arms are all variants of `name` and none a catch-all,
/// when it leaves out some of `new`.
fn enumerating(n: Node, src: &[u8], name: &str, new: &[String]) -> Option<Lister> {
    let body = n.child_by_field_name("body")?;
    let mut variants: Vec<&str> = Vec::new();
    let mut c = body.walk();
    let mut arms = 0;
    for arm in body.named_children(&mut c) {
        if arm.kind() != "match_arm" {
            continue;
        }
        arms += 1;
        let pattern = arm.child_by_field_name("pattern")?;
        // The pattern itself comes first, then its `if` guard, if any.
        let top = pattern.child(0)?;
        if pattern.child_by_field_name("condition").is_some() {
            // A guarded arm covers nothing for exhaustiveness; it still
            // tells that the match is over this enum.
            variant_names(top, src, n, name, &mut Vec::new())?;
            continue;
        }
        variant_names(top, src, n, name, &mut variants)?;
    }
    if arms == 0 {
        return None;
    }
    let missing = missing(new, &variants);
    (!missing.is_empty()).then(|| Lister {
        listing: Listing::Match,
        line: line(n),
        missing,
    })
}

/// The variants of `name` a pattern names, or None when it is anything
/// else (a catch-all `_` or binding, a literal, a tuple, another type).
fn variant_names<'a>(
    p: Node,
    src: &'a [u8],
    at: Node,
    name: &str,
    out: &mut Vec<&'a str>,
) -> Option<()> {
    let path = match p.kind() {
        "scoped_identifier" => p,
        "tuple_struct_pattern" | "struct_pattern" => p.child_by_field_name("type")?,
        "or_pattern" => {
            let mut c = p.walk();
            for alt in p.named_children(&mut c) {
                variant_names(alt, src, at, name, out)?;
            }
            return Some(());
        }
        "reference_pattern" | "captured_pattern" => {
            let mut c = p.walk();
            let inner = p.named_children(&mut c).last()?;
            return variant_names(inner, src, at, name, out);
        }
        _ => return None,
    };
    let full = text(path, src);
    let (qualifier, variant) = full.rsplit_once("::")?;
    if !names_type(qualifier, at, src, name) {
        return None;
    }
    out.push(variant.trim());
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    fn parse(text: &str) -> tree_sitter::Tree {
        crate::syntax::parse(crate::syntax::Lang::Rust, text.as_bytes()).unwrap()
    }

    fn found(text: &str, line: u32, name: &str, new: &[&str]) -> Vec<(Listing, u32, Vec<String>)> {
        let tree = parse(text);
        let new: Vec<String> = new.iter().map(|s| s.to_string()).collect();
        let mut got: Vec<(Listing, u32, Vec<String>)> = listers(
            tree.root_node(),
            text.as_bytes(),
            line as usize - 1,
            name,
            &new,
        )
        .into_iter()
        .map(|l| (l.listing, l.line, l.missing))
        .collect();
        got.sort_by_key(|g| g.1);
        got
    }

    #[test]
    fn shapes_name_fields_and_variants_not_tuple_fields() {
        let text = "pub struct A { pub x: u8, y: Vec<u8> }\nstruct T(u8);\nmod m { pub enum E { One, Two(u8), Three { z: u8 } } }\n";
        let tree = parse(text);
        let got = shapes(tree.root_node(), text.as_bytes());
        let mut got: Vec<(String, Vec<String>, bool)> = got
            .into_iter()
            .map(|s| (s.name, s.members, s.variants))
            .collect();
        got.sort();
        assert_eq!(
            got,
            vec![
                ("A".into(), vec!["x".into(), "y".into()], false),
                (
                    "E".into(),
                    vec!["One".into(), "Two".into(), "Three".into()],
                    true
                ),
            ]
        );
    }

    #[test]
    fn literals_and_patterns_naming_every_field() {
        let text = "fn f(o: &S) -> S {\n    let S { a, b: _ } = o;\n    let S { a, .. } = o;\n    let s = S { a: 1, b };\n    let t = S { a: 1, ..S::default() };\n    let u = crate::x::S { a, b, c };\n    S { a, b }\n}\n";
        let new = ["c"];
        assert_eq!(
            found(text, 2, "S", &new),
            [(Listing::Pattern, 2, vec!["c".to_string()])]
        );
        assert!(found(text, 3, "S", &new).is_empty(), "`..`");
        assert_eq!(
            found(text, 4, "S", &new),
            [(Listing::Literal, 4, vec!["c".to_string()])]
        );
        assert!(found(text, 5, "S", &new).is_empty(), "`..base`");
        assert!(found(text, 6, "S", &new).is_empty(), "already names it");
        assert_eq!(found(text, 7, "S", &new).len(), 1);
        assert!(found(text, 4, "Other", &new).is_empty());
    }

    #[test]
    fn lines_that_may_start_a_listing() {
        for (line, variants) in [
            ("    let s = Args { a: 1 };", false),
            ("    let Args<'a> { a, .. } = x;", false),
            ("        Self { a }", false),
            ("        Mode::Fast => 1,", true),
            ("        &Self::Fast | Self::Slow => 2,", true),
        ] {
            let name = if variants { "Mode" } else { "Args" };
            assert!(may_list(line, name, variants), "{line}");
        }
        for (line, variants) in [
            ("fn f(a: &Args) -> u8 {", false),
            ("impl Args {", false),
            ("impl<'a> fmt::Display for Args<'a> {", false),
            ("    let x = MyArgs { a: 1 };", false),
            ("    a.args.len()", false),
            ("fn f(m: Mode) {", true),
            ("use crate::Mode;", true),
        ] {
            let name = if variants { "Mode" } else { "Args" };
            assert!(!may_list(line, name, variants), "{line}");
        }
    }

    #[test]
    fn matches_listing_every_variant_without_a_catch_all() {
        let text = "fn f(m: Mode) -> u8 {\n    match m {\n        Mode::A => 1,\n        Mode::B(_) | Mode::C { .. } => 2,\n    }\n}\nfn g(m: Mode) -> u8 {\n    match m {\n        Mode::A => 1,\n        _ => 2,\n    }\n}\nfn h(m: Mode) -> u8 {\n    match m {\n        Mode::A => 1,\n        other => 2,\n    }\n}\nfn i(m: Mode) -> u8 {\n    match m {\n        Mode::A if true => 1,\n        Mode::A | Mode::B(_) | Mode::C { .. } | Mode::New => 2,\n    }\n}\nimpl Mode {\n    fn j(&self) -> u8 {\n        match self {\n            &Self::A => 1,\n            Self::B(_) | Self::C { .. } => 2,\n        }\n    }\n}\n";
        let new = ["New"];
        assert_eq!(
            found(text, 3, "Mode", &new),
            [(Listing::Match, 2, vec!["New".to_string()])]
        );
        assert!(found(text, 9, "Mode", &new).is_empty(), "`_`");
        assert!(found(text, 15, "Mode", &new).is_empty(), "a binding");
        assert!(found(text, 21, "Mode", &new).is_empty(), "updated");
        assert_eq!(found(text, 28, "Mode", &new).len(), 1, "`Self` in its impl");
        assert!(found(text, 28, "Other", &new).is_empty());
    }
}
