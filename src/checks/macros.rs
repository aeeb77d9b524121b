//! Tests and assertions a Rust project declares through its own macros,
//! known from their `macro_rules!` definitions rather than from a list of
//! names: ripgrep's `rgtest!(name, |dir, cmd| { … })` expands to
//! `#[test] fn $name()`, so each call is a test named by its first
//! argument; `eqnice!(a, b)` expands to a `panic!`, so each call is an
//! assertion. Also the tests written inside another macro's braces
//! (`proptest! { #[test] fn … }`, `quickcheck! { fn … }`), which
//! tree-sitter leaves as unparsed tokens.
//!
//! A macro used in one file is mostly defined in another of its crate (a
//! `#[macro_use] mod macros;` in the crate root): `find` reads the files
//! of the crate around a file, through a reader, never the whole tree.

use std::collections::{BTreeSet, HashSet};

use tree_sitter::Node;

use super::assertions::{self, Assertion};
use super::files::Read;
use super::test_fn::{TestFn, body_hash};
use crate::paths;

/// How many files, and bytes, `find` reads at most for one side of a
/// diff: a few per folder of changed Rust files.
const MAX_READS: usize = 512;
const MAX_READ_BYTES: usize = 32 << 20;

/// Files above this size are generated: not read for definitions.
const MAX_BYTES: usize = 1 << 20;

/// The standard library's macros: never a project's, so never looked
/// for (a search for one would read every folder it is allowed to).
pub const STD: &[&str] = &[
    "vec",
    "format",
    "format_args",
    "print",
    "println",
    "eprint",
    "eprintln",
    "write",
    "writeln",
    "panic",
    "unreachable",
    "todo",
    "unimplemented",
    "matches",
    "dbg",
    "concat",
    "stringify",
    "include",
    "include_str",
    "include_bytes",
    "env",
    "option_env",
    "cfg",
    "line",
    "column",
    "file",
    "module_path",
    "compile_error",
    "thread_local",
    "try",
];

/// What a project's own macros are, by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Kinds {
    /// A call declares a test named by its first argument.
    pub tests: HashSet<String>,
    /// A call asserts (its expansion panics or asserts).
    pub asserts: HashSet<String>,
}

impl Kinds {
    pub fn extend(&mut self, other: Kinds) {
        self.tests.extend(other.tests);
        self.asserts.extend(other.asserts);
    }
}

/// An item-level macro call whose first argument is a name: a test if
/// the macro turns out to declare one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// The macro's last path segment.
    pub macro_name: String,
    /// `module::first_argument`.
    pub name: String,
    pub line: u32,
    /// The call's arguments, hashed without blanks.
    pub body: u64,
    /// The macro calls inside its arguments.
    pub assertions: Vec<Assertion>,
    /// The functions called inside its arguments.
    pub calls: Vec<String>,
    /// Its arguments' lines, hashed (`assertions::line_hashes`).
    pub lines: Vec<u64>,
}

fn text<'a>(node: Node, src: &'a [u8]) -> &'a str {
    std::str::from_utf8(&src[node.byte_range()]).unwrap_or("")
}

fn line(node: Node) -> u32 {
    node.start_position().row as u32 + 1
}

/// The kinds of the `macro_rules!` definitions anywhere in a Rust tree.
pub fn definitions(root: Node, src: &[u8], is_test_attr: fn(&str) -> bool) -> Kinds {
    let mut found = Vec::new();
    assertions::each(root, |n| {
        if n.kind() != "macro_definition" {
            return true;
        }
        found.push(n);
        false
    });
    definitions_in(&found, src, is_test_attr)
}

/// `definitions`, from the file's `macro_definition`s.
pub fn definitions_in(found: &[Node], src: &[u8], is_test_attr: fn(&str) -> bool) -> Kinds {
    let mut kinds = Kinds::default();
    for &n in found {
        let Some(name) = n.child_by_field_name("name").map(|x| text(x, src)) else {
            continue;
        };
        let mut c = n.walk();
        for rule in n.children(&mut c).filter(|r| r.kind() == "macro_rule") {
            let (Some(left), Some(right)) = (
                rule.child_by_field_name("left"),
                rule.child_by_field_name("right"),
            ) else {
                continue;
            };
            if declares_test(left, right, src, is_test_attr) {
                kinds.tests.insert(name.to_string());
            }
            if assertions::rust(right, src)
                .iter()
                .any(|a| a.certain || a.name == "panic")
            {
                kinds.asserts.insert(name.to_string());
            }
        }
    }
    kinds
}

/// A rule `($name:ident, …) => { … #[test] fn $name() … }`: its first
/// fragment is an identifier that names a test function.
fn declares_test(left: Node, right: Node, src: &[u8], is_test_attr: fn(&str) -> bool) -> bool {
    let mut c = left.walk();
    let Some(first) = left.named_children(&mut c).next() else {
        return false;
    };
    if first.kind() != "token_binding_pattern"
        || first
            .child_by_field_name("type")
            .is_none_or(|t| text(t, src) != "ident")
    {
        return false;
    }
    let Some(var) = first.child_by_field_name("name").map(|v| text(v, src)) else {
        return false;
    };
    let mut stack = vec![right];
    while let Some(n) = stack.pop() {
        if n.kind() == "token_tree" {
            let mut c = n.walk();
            let kids: Vec<Node> = n.children(&mut c).collect();
            for f in functions(&kids, src) {
                if f.name_kind == "metavariable"
                    && f.name == var
                    && f.attrs.iter().any(|(a, _)| is_test_attr(a))
                {
                    return true;
                }
            }
            stack.extend(kids);
        }
    }
    false
}

/// A `fn` written as tokens, with the attributes before it.
struct TokenFn<'t> {
    name: String,
    name_kind: &'static str,
    line: u32,
    attrs: Vec<(String, u32)>,
    body: Option<Node<'t>>,
}

/// The `[#[attr]…] [pub] [async|unsafe|const] fn name (…) [-> T] { … }`
/// runs among a token tree's children.
fn functions<'t>(kids: &[Node<'t>], src: &[u8]) -> Vec<TokenFn<'t>> {
    let mut out = Vec::new();
    for (i, k) in kids.iter().enumerate() {
        if k.kind() != "fn" {
            continue;
        }
        let Some(name) = kids.get(i + 1) else {
            continue;
        };
        if !matches!(name.kind(), "identifier" | "metavariable") {
            continue;
        }
        // Attributes and qualifiers before `fn`, nearest first.
        let mut attrs = Vec::new();
        let mut j = i;
        while j > 0 {
            let p = kids[j - 1];
            let word = text(p, src);
            if matches!(word, "pub" | "async" | "unsafe" | "const" | "extern")
                || matches!(
                    p.kind(),
                    "visibility_modifier" | "line_comment" | "block_comment"
                )
            {
                j -= 1;
            } else if p.kind() == "token_tree" && word.starts_with('[') && j >= 2 {
                if kids[j - 2].kind() != "#" {
                    break;
                }
                let inner = word[1..word.len().saturating_sub(1)].trim();
                attrs.push((inner.to_string(), line(kids[j - 2])));
                j -= 2;
            } else {
                break;
            }
        }
        // The body: the first `{ … }` after the name, before another `fn`.
        let body = kids[i + 2..]
            .iter()
            .take_while(|n| n.kind() != "fn")
            .find(|n| n.kind() == "token_tree" && text(**n, src).starts_with('{'))
            .copied();
        out.push(TokenFn {
            name: text(*name, src).to_string(),
            name_kind: if name.kind() == "metavariable" {
                "metavariable"
            } else {
                "identifier"
            },
            line: line(*k),
            attrs: attrs.into_iter().rev().collect(),
            body,
        });
    }
    out
}

/// The tests inside an item-level macro call's token tree: a `fn` with a
/// test attribute (`proptest! { #[test] fn p(x in 0..9) { … } }`), or any
/// `fn` of `quickcheck! { … }`, whose functions are all properties. Each
/// with the last line of its body. `path` is the module they are in.
pub fn inner_tests(
    call: Node,
    src: &[u8],
    path: &str,
    is_test_attr: fn(&str) -> bool,
) -> Vec<(TestFn, u32)> {
    let macro_name = call
        .child_by_field_name("macro")
        .map(|m| text(m, src))
        .unwrap_or("");
    let all = macro_name.rsplit("::").next() == Some("quickcheck");
    let mut c = call.walk();
    let Some(tree) = call.children(&mut c).find(|k| k.kind() == "token_tree") else {
        return Vec::new();
    };
    let mut c = tree.walk();
    let kids: Vec<Node> = tree.children(&mut c).collect();
    let mut out = Vec::new();
    for f in functions(&kids, src) {
        let Some(body) = f.body else { continue };
        if f.name_kind != "identifier" || !(all || f.attrs.iter().any(|(a, _)| is_test_attr(a))) {
            continue;
        }
        let ignored_at = f
            .attrs
            .iter()
            .find(|(a, _)| super::skips::rust(a))
            .map(|a| a.1);
        let mut found = assertions::rust(body, src);
        found.extend(
            f.attrs
                .iter()
                .filter_map(|(a, _)| assertions::should_panic(a)),
        );
        let test = TestFn {
            name: qualified(path, &f.name),
            line: f.line,
            skipped_at: ignored_at,
            skip_conditional: false,
            body: body_hash(body, src),
            assertions: found,
            calls: assertions::calls(body, src, false),
            lines: assertions::line_hashes(body, src),
        };
        out.push((test, body.end_position().row as u32 + 1));
    }
    out
}

fn qualified(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}::{name}")
    }
}

/// An item-level macro call whose first argument is a name followed by
/// a comma or nothing: `rgtest!(r16, |dir, cmd| { … })`.
pub fn call(node: Node, src: &[u8], path: &str) -> Option<Call> {
    let macro_name = text(node.child_by_field_name("macro")?, src);
    let macro_name = macro_name.rsplit("::").next().unwrap_or(macro_name);
    let mut c = node.walk();
    let tree = node.children(&mut c).find(|k| k.kind() == "token_tree")?;
    let mut c = tree.walk();
    let kids: Vec<Node> = tree.children(&mut c).collect();
    let first = kids.get(1)?;
    if first.kind() != "identifier" || !matches!(kids.get(2).map(|k| k.kind()), Some("," | ")")) {
        return None;
    }
    let name = qualified(path, text(*first, src));
    Some(Call {
        macro_name: macro_name.to_string(),
        name,
        line: line(node),
        body: body_hash(tree, src),
        assertions: assertions::rust(tree, src),
        calls: assertions::calls(tree, src, false),
        lines: assertions::line_hashes(tree, src),
    })
}

/// The directory of a path, `""` at the top.
fn dir(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

/// The files of the crate around `file` that a macro it calls is
/// defined in, as a reviewer would look: the file itself, its folder's
/// crate or module roots (`lib.rs`, `main.rs`, `mod.rs`, the parent's
/// `dir.rs`, and the `[lib]`, `[[bin]]`, `[[test]]` and `[[bench]]` paths
/// of the nearest `Cargo.toml` that lie in that folder), and the modules
/// those declare (`#[macro_use] mod macros;`). A macro from another crate
/// is not found: its calls are not counted as tests on either side.
///
/// The files of `from` are the caller's outlined files, whose definitions
/// it has (`Outline::macros`): they are read for the modules they declare,
/// not parsed again. Folder by folder, the files defining macros are
/// parsed until every wanted name is known.
pub fn find(
    wanted: &BTreeSet<String>,
    from: &[&str],
    files: &dyn Read,
    is_test_attr: fn(&str) -> bool,
) -> Kinds {
    let mut kinds = Kinds::default();
    for defining in plan(wanted, from, files) {
        if wanted
            .iter()
            .all(|w| kinds.tests.contains(w) || kinds.asserts.contains(w))
        {
            break;
        }
        for path in defining {
            if let Some(parsed) = files.tree(&path) {
                kinds.extend(definitions(
                    parsed.root(),
                    parsed.src().as_bytes(),
                    is_test_attr,
                ));
            }
        }
    }
    kinds.tests.retain(|n| wanted.contains(n));
    kinds.asserts.retain(|n| wanted.contains(n));
    kinds
}

/// The files `find` may parse, folder by folder in the order it looks
/// (test folders first, so that the limits do not run out before them):
/// those that define macros (`macro_rules!`), the files of `from` left
/// out. Texts only: a caller keeps these trees for `find` before anything
/// else may parse them (`syntax::Store::keep`).
pub fn plan(wanted: &BTreeSet<String>, from: &[&str], files: &dyn Read) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    if wanted.is_empty() {
        return out;
    }
    let mut budget = Budget {
        files,
        seen: HashSet::new(),
        reads: 0,
        bytes: 0,
    };
    let mut dirs: Vec<&str> = Vec::new();
    for f in from.iter().filter(|f| paths::is_test(f)).chain(from) {
        if !dirs.contains(&dir(f)) {
            dirs.push(dir(f));
        }
    }
    // Folder by folder, each with its roots then their modules, so that
    // one folder's many files cannot use up another's reads.
    for d in dirs {
        let mut defining = Vec::new();
        let mut roots: Vec<String> = from
            .iter()
            .filter(|f| dir(f) == d)
            .map(|f| f.to_string())
            .collect();
        for root in ["lib.rs", "main.rs", "mod.rs"] {
            roots.push(join(d, root));
        }
        if !d.is_empty() {
            roots.push(format!("{d}.rs"));
        }
        roots.extend(manifest_targets(d, &mut |p| {
            budget.read(p).map(|t| t.bytes().to_vec())
        }));
        let mut modules: Vec<String> = Vec::new();
        for root in &roots {
            let Some(text) = budget.read(root) else {
                continue;
            };
            let text = text.as_str();
            // Parsed only to read definitions: most roots have none.
            if text.contains("macro_rules!") && !from.contains(&root.as_str()) {
                defining.push(root.clone());
            }
            let rd = dir(root);
            let stem = root
                .rsplit('/')
                .next()
                .unwrap_or(root)
                .trim_end_matches(".rs");
            for m in declared_modules(text) {
                // A crate root's modules sit beside it; another file's, in
                // the folder of its name. Which one `root` is, is not known.
                modules.push(join(rd, &format!("{m}.rs")));
                modules.push(join(rd, &format!("{m}/mod.rs")));
                if !matches!(stem, "lib" | "main" | "mod") {
                    modules.push(join(&join(rd, stem), &format!("{m}.rs")));
                }
            }
        }
        for module in modules {
            let Some(text) = budget.read(&module) else {
                continue;
            };
            if text.as_str().contains("macro_rules!") && !from.contains(&module.as_str()) {
                defining.push(module);
            }
        }
        out.push(defining);
    }
    out
}

/// The reads `plan` may still make: each path once, within the limits.
struct Budget<'r> {
    files: &'r dyn Read,
    seen: HashSet<String>,
    reads: usize,
    bytes: usize,
}

impl Budget<'_> {
    fn read(&mut self, path: &str) -> Option<std::sync::Arc<crate::syntax::Text>> {
        if self.reads >= MAX_READS
            || self.bytes >= MAX_READ_BYTES
            || !self.seen.insert(path.to_string())
        {
            return None;
        }
        self.reads += 1;
        let text = self.files.text(path).filter(|t| t.len() <= MAX_BYTES)?;
        self.bytes += text.len();
        Some(text)
    }
}

/// The `mod name;` declarations of a file (`#[macro_use] mod macros;`,
/// `pub(crate) mod util;`), read line by line: a file is parsed only when
/// it defines macros. One in a comment costs a read that finds nothing.
fn declared_modules(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut rest = line.trim();
        // Attributes before it on the same line, and a visibility.
        while let Some(after) = rest.strip_prefix("#[") {
            rest = after.split_once(']').map_or("", |(_, r)| r).trim_start();
        }
        if let Some(after) = rest.strip_prefix("pub") {
            rest = match after.trim_start().strip_prefix('(') {
                Some(inner) => inner.split_once(')').map_or("", |(_, r)| r),
                None => after,
            }
            .trim_start();
        }
        let Some(after) = rest.strip_prefix("mod ") else {
            continue;
        };
        let Some(name) = after.trim().strip_suffix(';') else {
            continue;
        };
        let name = name.trim();
        if !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_') {
            out.push(name.to_string());
        }
    }
    out
}

/// The target paths of the nearest `Cargo.toml` at or above `d` that lie
/// in `d` itself.
fn manifest_targets(d: &str, read: &mut dyn FnMut(&str) -> Option<Vec<u8>>) -> Vec<String> {
    let mut at = Some(d);
    while let Some(a) = at {
        if let Some(bytes) = read(&join(a, "Cargo.toml")) {
            let Ok(manifest) = toml::from_str::<toml::Table>(&String::from_utf8_lossy(&bytes))
            else {
                return Vec::new();
            };
            let mut paths = Vec::new();
            if let Some(p) = manifest
                .get("lib")
                .and_then(|l| l.get("path"))
                .and_then(|p| p.as_str())
            {
                paths.push(p.to_string());
            }
            for kind in ["bin", "test", "bench", "example"] {
                for t in manifest
                    .get(kind)
                    .and_then(|v| v.as_array())
                    .into_iter()
                    .flatten()
                {
                    if let Some(p) = t.get("path").and_then(|p| p.as_str()) {
                        paths.push(p.to_string());
                    }
                }
            }
            return paths
                .into_iter()
                .map(|p| join(a, p.trim_start_matches("./")))
                .filter(|p| dir(p) == d)
                .collect();
        }
        at = if a.is_empty() { None } else { Some(dir(a)) };
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn is_test(a: &str) -> bool {
        a == "test" || a.ends_with("::test")
    }

    fn parse(text: &str) -> tree_sitter::Tree {
        crate::syntax::parse(crate::syntax::Lang::Rust, text.as_bytes()).unwrap()
    }

    fn files(files: &[(&str, &str)]) -> HashMap<String, String> {
        files
            .iter()
            .map(|(p, t)| (p.to_string(), t.to_string()))
            .collect()
    }

    const MACROS: &str = "#[macro_export]\nmacro_rules! rgtest {\n    ($name:ident, $fun:expr) => {\n        #[test]\n        fn $name() {\n            $fun(dir, cmd);\n        }\n    };\n}\n\nmacro_rules! eqnice {\n    ($expected:expr, $got:expr) => {\n        if $expected != $got { panic!(\"differ\") }\n    };\n}\n\nmacro_rules! helper {\n    ($name:ident) => { fn $name() {} };\n}\n\nmacro_rules! second {\n    ($x:expr, $name:ident) => { #[test] fn $name() {} };\n}\n\nmacro_rules! tokio_case {\n    ($name:ident) => { #[tokio::test] async fn $name() { assert!(true) } };\n}\n";

    #[test]
    fn definitions_know_test_and_assertion_macros_by_their_bodies() {
        let tree = parse(MACROS);
        let kinds = definitions(tree.root_node(), MACROS.as_bytes(), is_test);
        let mut tests: Vec<&str> = kinds.tests.iter().map(String::as_str).collect();
        tests.sort_unstable();
        assert_eq!(tests, ["rgtest", "tokio_case"]);
        let mut asserts: Vec<&str> = kinds.asserts.iter().map(String::as_str).collect();
        asserts.sort_unstable();
        assert_eq!(asserts, ["eqnice", "tokio_case"]);
    }

    #[test]
    fn calls_and_inner_tests() {
        let text = "rgtest!(r16, |dir: Dir, mut cmd: TestCommand| {\n    eqnice!(\"x\", cmd.stdout());\n});\nlazy_static! { static ref X: u8 = 1; }\nproptest! {\n    #[test]\n    // slow\n    #[ignore]\n    fn p(x in 0..10) { assert!(x < 10); }\n\n    fn not_a_test() {}\n}\nquickcheck! {\n    fn prop(xs: Vec<u8>) -> bool { xs.len() < 9 }\n}\n";
        let tree = parse(text);
        let root = tree.root_node();
        let mut calls = Vec::new();
        let mut inner = Vec::new();
        let mut stack = vec![root];
        while let Some(n) = stack.pop() {
            if n.kind() == "macro_invocation" {
                calls.extend(call(n, text.as_bytes(), "m"));
                inner.extend(
                    inner_tests(n, text.as_bytes(), "m", is_test)
                        .into_iter()
                        .map(|(t, _)| (t.name, t.line, t.skipped_at)),
                );
                continue;
            }
            let mut c = n.walk();
            stack.extend(n.children(&mut c));
        }
        assert_eq!(calls.len(), 1);
        assert_eq!((calls[0].name.as_str(), calls[0].line), ("m::r16", 1));
        assert_eq!(calls[0].assertions[0].name, "eqnice");
        inner.sort();
        assert_eq!(
            inner,
            [
                ("m::p".to_string(), 9, Some(8)),
                ("m::prop".to_string(), 14, None)
            ]
        );
    }

    #[test]
    fn module_declarations_line_by_line() {
        let text = "#[macro_use]\nmod macros;\npub(crate) mod util;\n#[cfg(test)] mod tests;\npub mod api;\n// mod commented;\nmod inline {\n}\nmodule_path!();\n";
        assert_eq!(declared_modules(text), ["macros", "util", "tests", "api"]);
    }

    #[test]
    fn find_follows_the_manifest_and_the_crate_roots_modules() {
        let read = files(&[
            (
                "Cargo.toml",
                "[package]\nname = \"rg\"\n\n[[test]]\nname = \"integration\"\npath = \"tests/tests.rs\"\n",
            ),
            (
                "tests/tests.rs",
                "#[macro_use]\nmod macros;\nmod regression;\n",
            ),
            ("tests/macros.rs", MACROS),
            ("tests/regression.rs", "rgtest!(r1, |d, c| {});\n"),
            (
                "other/macros.rs",
                "macro_rules! far { ($n:ident) => { #[test] fn $n() {} } }\n",
            ),
        ]);
        let wanted: BTreeSet<String> = ["rgtest", "eqnice", "far", "unknown"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let kinds = find(&wanted, &["tests/regression.rs"], &read, is_test);
        assert_eq!(kinds.tests, HashSet::from(["rgtest".to_string()]));
        assert_eq!(kinds.asserts, HashSet::from(["eqnice".to_string()]));
        // A test file that is its own crate, with `mod common;` beside it.
        let read = files(&[
            ("tests/a.rs", "mod common;\nrgtest!(x, |d, c| {});\n"),
            ("tests/common/mod.rs", MACROS),
        ]);
        let kinds = find(&wanted, &["tests/a.rs"], &read, is_test);
        assert_eq!(kinds.tests, HashSet::from(["rgtest".to_string()]));
    }
}
