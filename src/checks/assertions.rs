//! The assertions a test makes, read from its tree-sitter body, and how
//! much each one compares: `assert x == 3` compares two operands, `assert
//! x` one, so replacing the first by the second weakens the test though
//! it still asserts. Python: `assert`, `self.assert*`, `pytest.raises`,
//! `pytest.warns`. Rust: every macro the body invokes (inside other
//! macros' token trees too, where tree-sitter leaves code unparsed), of
//! which `assert*!` and `debug_assert*!` are assertions, and a project's
//! own macros are once their definitions are read (`macros`); and
//! `#[should_panic]`.
//!
//! Also the calls a test makes (a helper of its file that asserts counts
//! what it asserts) and the text hashes by which a test, its lines and
//! its assertions are known again after a move.
//!
//! Counting only: whether a test got weaker is `weakened`'s to decide.

use std::collections::{HashMap, HashSet};

use tree_sitter::Node;

/// One assertion, or in Rust one macro call that may be one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assertion {
    /// `assert`, `self.assertEqual`, `pytest.raises`; a Rust macro's last
    /// path segment (`assert_eq`), or `should_panic`.
    pub name: String,
    /// The operands it compares (`a == b`: 2, `a`: 1, `a == b && c`: 3).
    pub operands: u32,
    /// An assertion for sure; a Rust macro that is not is an assertion
    /// only if its project's definition makes it one.
    pub certain: bool,
    /// A hash of its text without blanks: the same assertion found in
    /// another test was moved there, not lost.
    pub text: u64,
}

impl Assertion {
    fn of(mut self, text: &[u8]) -> Assertion {
        self.text = hash_text(text);
        self
    }
}

/// Whether a Rust macro is an assertion by its name alone.
pub fn rust_assertion_name(name: &str) -> bool {
    name.starts_with("assert") || name.starts_with("debug_assert")
}

fn text<'a>(node: Node, src: &'a [u8]) -> &'a str {
    std::str::from_utf8(&src[node.byte_range()]).unwrap_or("")
}

/// The macro calls below a Rust node: parsed `macro_invocation`s and the
/// `name ! (…)` runs inside token trees.
pub fn rust(node: Node, src: &[u8]) -> Vec<Assertion> {
    let mut out = Vec::new();
    each(node, |n| {
        match n.kind() {
            "macro_invocation" => {
                let name = n
                    .child_by_field_name("macro")
                    .map(|m| text(m, src))
                    .unwrap_or("");
                let name = name.rsplit("::").next().unwrap_or(name);
                let mut c = n.walk();
                let args = n.children(&mut c).find(|k| k.kind() == "token_tree");
                out.push(rust_call(name, args, src).of(&src[n.byte_range()]));
            }
            "call_expression" => {
                let name = n
                    .child_by_field_name("function")
                    .map(|f| last_segment(text(f, src)))
                    .unwrap_or("");
                if name.starts_with("assert") {
                    let args = n.child_by_field_name("arguments").map_or(0, |a| {
                        let mut c = a.walk();
                        a.named_children(&mut c)
                            .filter(|k| !k.kind().ends_with("comment"))
                            .count()
                    });
                    out.push(helper(name, args).of(&src[n.byte_range()]));
                }
            }
            "token_tree" => {
                let mut c = n.walk();
                let kids: Vec<Node> = n.children(&mut c).collect();
                for (i, w) in kids.windows(3).enumerate() {
                    if w[0].kind() == "identifier"
                        && w[1].kind() == "!"
                        && w[2].kind() == "token_tree"
                    {
                        out.push(
                            rust_call(text(w[0], src), Some(w[2]), src)
                                .of(&src[w[0].start_byte()..w[2].end_byte()]),
                        );
                    }
                    // `assert_peer_cred(&a, &b)` inside a macro's tokens.
                    let name = text(w[0], src);
                    if w[0].kind() == "identifier"
                        && name.starts_with("assert")
                        && w[1].kind() == "token_tree"
                        && text(w[1], src).starts_with('(')
                        && (i == 0 || kids[i - 1].kind() != "fn")
                    {
                        out.push(
                            helper(name, split_args(w[1]).len())
                                .of(&src[w[0].start_byte()..w[1].end_byte()]),
                        );
                    }
                }
            }
            _ => {}
        }
        true
    });
    out
}

/// The last names of the functions and methods a body calls, one per
/// call (`helper(x)`, `self.check(y)`, `Self::verify(z)`, and in Rust's
/// unparsed macro tokens `name(…)`): a call of a helper of the same file
/// that asserts is worth that helper's assertions.
pub fn calls(node: Node, src: &[u8], python: bool) -> Vec<String> {
    let mut out = Vec::new();
    each(node, |n| {
        match n.kind() {
            "call" | "call_expression" => {
                if let Some(f) = n.child_by_field_name("function") {
                    let name = last_segment(text(f, src));
                    if name.chars().all(|c| c.is_alphanumeric() || c == '_') {
                        out.push(name.to_string());
                    }
                }
            }
            "token_tree" if !python => {
                let mut c = n.walk();
                let kids: Vec<Node> = n.children(&mut c).collect();
                for (i, w) in kids.windows(2).enumerate() {
                    if w[0].kind() == "identifier"
                        && w[1].kind() == "token_tree"
                        && text(w[1], src).starts_with('(')
                        && (i == 0 || kids[i - 1].kind() != "fn")
                    {
                        out.push(text(w[0], src).to_string());
                    }
                }
            }
            _ => {}
        }
        true
    });
    out
}

/// The functions of a file that are not tests (not starting on a line of
/// `tests`) and assert, by name, with their assertions. A name defined
/// twice is left out: which one a call reaches is unknown. A function
/// defined inside a test is there with no assertions: the test's own
/// count holds what it asserts, and a call of it adds nothing.
pub fn helpers(
    root: Node,
    src: &[u8],
    python: bool,
    tests: &HashSet<u32>,
) -> HashMap<String, Vec<Assertion>> {
    let kind = if python {
        "function_definition"
    } else {
        "function_item"
    };
    let mut seen: HashMap<&str, u32> = HashMap::new();
    let mut found: HashMap<String, Vec<Assertion>> = HashMap::new();
    let mut nested: Vec<&str> = Vec::new();
    let name_of = |n: Node| n.child_by_field_name("name").map(|x| text(x, src));
    each(root, |n| {
        if n.kind() != kind {
            return true;
        }
        let (Some(name), Some(body)) = (name_of(n), n.child_by_field_name("body")) else {
            return true;
        };
        if tests.contains(&(n.start_position().row as u32 + 1)) {
            // A test: the functions inside it are its own.
            each(body, |inner| {
                if inner.kind() == kind {
                    if let Some(name) = name_of(inner) {
                        *seen.entry(name).or_default() += 1;
                        nested.push(name);
                    }
                }
                true
            });
            return false;
        }
        *seen.entry(name).or_default() += 1;
        let asserts: Vec<Assertion> = if python {
            self::python(body, src)
        } else {
            rust(body, src)
        }
        .into_iter()
        .filter(|a| a.certain)
        .collect();
        if !asserts.is_empty() {
            found.insert(name.to_string(), asserts);
        }
        true
    });
    found.retain(|name, _| seen.get(name.as_str()) == Some(&1));
    for name in nested {
        found.insert(name.to_string(), Vec::new());
    }
    found
}

/// A hash of text with all whitespace removed (FNV-1a: a byte at a
/// time, and a hasher per byte was a measurable share of a review).
pub fn hash_text(text: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.iter().filter(|b| !b.is_ascii_whitespace()) {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The hashes of a node's lines without blanks, leaving out lines of
/// only brackets and punctuation: what two versions of a rewritten test
/// still share.
pub fn line_hashes(node: Node, src: &[u8]) -> Vec<u64> {
    src[node.byte_range()]
        .split(|b| *b == b'\n')
        .filter(|l| l.iter().any(|b| b.is_ascii_alphanumeric()))
        .map(hash_text)
        .collect()
}

/// `a::b::c` or `x.c` → `c`.
fn last_segment(path: &str) -> &str {
    let after = path.rsplit("::").next().unwrap_or(path);
    after.rsplit('.').next().unwrap_or(after).trim()
}

/// A call of a function named `assert…` (`assert_peer_cred(&a, &b)`,
/// `mock.assert_called_once_with(x)`): by the convention of both
/// languages, a helper that asserts. Each argument is an operand.
fn helper(name: &str, args: usize) -> Assertion {
    Assertion {
        name: format!("{name}()"),
        operands: args.max(1) as u32,
        certain: true,
        text: 0,
    }
}

/// Visit `node` and the nodes below it in source order, going below a
/// node only when `visit` says so. One cursor for the whole walk: a
/// cursor per node costs more than the visit (tokio's tests, measured).
pub fn each<'t>(node: Node<'t>, mut visit: impl FnMut(Node<'t>) -> bool) {
    let mut cursor = node.walk();
    loop {
        if visit(cursor.node()) && cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.node() == node {
                return;
            }
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return;
            }
        }
    }
}

/// `#[should_panic]` as an assertion: with `expected = "…"` it also
/// checks the message.
pub fn should_panic(attr: &str) -> Option<Assertion> {
    let rest = attr.strip_prefix("should_panic")?;
    if rest.starts_with(|c: char| c.is_alphanumeric() || c == '_') {
        return None;
    }
    // `#[should_panic(expected = "…")]` and `#[should_panic = "…"]`.
    let message = rest.contains("expected") || rest.trim_start().starts_with('=');
    Some(
        Assertion {
            name: "should_panic".to_string(),
            operands: if message { 2 } else { 1 },
            certain: true,
            text: 0,
        }
        .of(attr.as_bytes()),
    )
}

fn rust_call(name: &str, args: Option<Node>, src: &[u8]) -> Assertion {
    let args = args.map(|a| split_args(a)).unwrap_or_default();
    let operands = if name.ends_with("_eq") || name.ends_with("_ne") {
        2
    } else if name == "assert" || name == "debug_assert" {
        args.first().map_or(1, |first| rust_condition(first, src))
    } else {
        args.len().max(1) as u32
    };
    Assertion {
        name: name.to_string(),
        operands,
        certain: rust_assertion_name(name),
        text: 0,
    }
}

/// A token tree's tokens between its delimiters, split at top-level commas.
fn split_args(tree: Node) -> Vec<Vec<Node>> {
    let mut c = tree.walk();
    let kids: Vec<Node> = tree.children(&mut c).collect();
    let inner = kids.get(1..kids.len().saturating_sub(1)).unwrap_or(&[]);
    let mut args = vec![Vec::new()];
    for k in inner {
        if k.kind() == "," {
            args.push(Vec::new());
        } else if let Some(last) = args.last_mut() {
            last.push(*k);
        }
    }
    args.retain(|a| !a.is_empty());
    args
}

/// Operands of a condition written as tokens: one, plus one per
/// comparison, plus one per `&&` (`a == b && c` is three). `::<…>` is a
/// type, not two comparisons.
fn rust_condition(tokens: &[Node], src: &[u8]) -> u32 {
    let mut operands = 1;
    let mut angle = 0u32;
    let mut prev = "";
    for t in tokens {
        let k = t.kind();
        match k {
            "<" if prev == "::" => angle += 1,
            ">" if angle > 0 => angle -= 1,
            "<" if angle > 0 => angle += 1,
            "==" | "!=" | "<=" | ">=" | "<" | ">" | "&&" if angle == 0 => operands += 1,
            _ => {}
        }
        prev = if t.child_count() == 0 {
            text(*t, src)
        } else {
            ""
        };
    }
    operands
}

/// The assertions below a Python node.
pub fn python(node: Node, src: &[u8]) -> Vec<Assertion> {
    let mut out = Vec::new();
    each(node, |n| {
        match n.kind() {
            "assert_statement" => out.push(
                Assertion {
                    name: "assert".to_string(),
                    operands: n.named_child(0).map_or(1, python_condition),
                    certain: true,
                    text: 0,
                }
                .of(&src[n.byte_range()]),
            ),
            "call" => {
                if let Some(a) = python_call(n, src) {
                    out.push(a.of(&src[n.byte_range()]));
                }
            }
            _ => {}
        }
        true
    });
    out
}

/// Operands of a Python condition: a comparison's operands (`a < b < c`
/// is three), an `and`'s on both sides, what a `not` negates.
fn python_condition(node: Node) -> u32 {
    match node.kind() {
        "comparison_operator" => {
            let mut c = node.walk();
            let operands = node
                .children(&mut c)
                .enumerate()
                .filter(|(i, k)| {
                    k.is_named() && node.field_name_for_child(*i as u32) != Some("operators")
                })
                .count();
            operands.max(1) as u32
        }
        "boolean_operator" => {
            let and = node
                .child_by_field_name("operator")
                .is_some_and(|o| o.kind() == "and");
            match (
                and,
                node.child_by_field_name("left"),
                node.child_by_field_name("right"),
            ) {
                (true, Some(l), Some(r)) => python_condition(l) + python_condition(r),
                _ => 1,
            }
        }
        "not_operator" => node
            .child_by_field_name("argument")
            .map_or(1, python_condition),
        "parenthesized_expression" => node.named_child(0).map_or(1, python_condition),
        _ => 1,
    }
}

/// `self.assertEqual(a, b)`, `pytest.raises(E, match=…)`, as assertions.
fn python_call(call: Node, src: &[u8]) -> Option<Assertion> {
    let function = call.child_by_field_name("function")?;
    let name = text(function, src);
    let (owner, method) = name.rsplit_once('.').unwrap_or(("", name));
    let args = call.child_by_field_name("arguments")?;
    let mut c = args.walk();
    let given: Vec<Node> = args
        .named_children(&mut c)
        .filter(|a| a.kind() != "comment")
        .collect();
    let operands = if matches!(owner, "self" | "cls") && method.starts_with("assert") {
        // The message is no operand; a one-value assertion compares one.
        let compared = given
            .iter()
            .filter(|a| {
                a.kind() != "keyword_argument"
                    || a.child_by_field_name("name")
                        .is_some_and(|n| text(n, src) != "msg")
            })
            .count();
        let arity = match method {
            "assertTrue" | "assertFalse" | "assertIsNone" | "assertIsNotNone" => 1,
            _ => 2,
        };
        compared.clamp(1, arity) as u32
    } else if owner == "pytest" && matches!(method, "raises" | "warns") {
        given.len().max(1) as u32
    } else if method.starts_with("assert") {
        return Some(helper(name, given.len()));
    } else {
        return None;
    };
    Some(Assertion {
        name: name.to_string(),
        operands,
        certain: true,
        text: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tree_sitter::Parser;

    fn parse(python: bool, text: &str) -> tree_sitter::Tree {
        let mut parser = Parser::new();
        let language: tree_sitter::Language = if python {
            tree_sitter_python::LANGUAGE.into()
        } else {
            tree_sitter_rust::LANGUAGE.into()
        };
        parser.set_language(&language).unwrap();
        parser.parse(text, None).unwrap()
    }

    fn counted(found: &[Assertion]) -> Vec<(&str, u32)> {
        found
            .iter()
            .filter(|a| a.certain)
            .map(|a| (a.name.as_str(), a.operands))
            .collect()
    }

    #[test]
    fn rust_assertions_and_what_they_compare() {
        let text = "fn t() {\n    assert!(x);\n    assert!(x == 3, \"m {}\", y);\n    assert_eq!(a, b, \"m\");\n    debug_assert_ne!(a, b);\n    assert!(f::<u8>() > 1 && ok);\n    std::assert!(a < b);\n    vec![assert!(c)];\n    eqnice!(a, b);\n    rgtest!(r1, |dir, cmd| { assert_eq!(1, 1); assert_same(dir, cmd); });\n    common::assert_peer_cred(&a, &b);\n}\n";
        let tree = parse(false, text);
        let found = rust(tree.root_node(), text.as_bytes());
        assert_eq!(
            counted(&found),
            vec![
                ("assert", 1),
                ("assert", 2),
                ("assert_eq", 2),
                ("debug_assert_ne", 2),
                ("assert", 3),
                ("assert", 2),
                ("assert", 1),
                ("assert_eq", 2),
                ("assert_same()", 2),
                ("assert_peer_cred()", 2)
            ]
        );
        // Not an assertion by name: counted if its definition makes it one.
        let eqnice = found.iter().find(|a| a.name == "eqnice").unwrap();
        assert_eq!((eqnice.operands, eqnice.certain), (2, false));
    }

    #[test]
    fn should_panic_is_an_assertion_and_expected_is_a_second_operand() {
        assert_eq!(should_panic("should_panic").map(|a| a.operands), Some(1));
        assert_eq!(
            should_panic("should_panic(expected = \"boom\")").map(|a| a.operands),
            Some(2)
        );
        assert_eq!(should_panic("should_panicky"), None);
        assert_eq!(should_panic("test"), None);
    }

    #[test]
    fn python_assertions_and_what_they_compare() {
        let text = r#"
def test_a(self):
    assert x
    assert x == 3, "three"
    assert not (a and b < c < d)
    assert a or b
    self.assertEqual(a, b, msg="m")
    self.assertTrue(a, "m")
    self.assertIn(a)
    self.helper(a, b)
    with pytest.raises(ValueError, match="bad"):
        pass
    pytest.warns(UserWarning)
    def inner():
        assert y is None
    other.assertEqual(a, b)
"#;
        let tree = parse(true, text);
        let found = python(tree.root_node(), text.as_bytes());
        assert_eq!(
            counted(&found),
            vec![
                ("assert", 1),
                ("assert", 2),
                ("assert", 4),
                ("assert", 1),
                ("self.assertEqual", 2),
                ("self.assertTrue", 1),
                ("self.assertIn", 1),
                ("pytest.raises", 2),
                ("pytest.warns", 1),
                ("assert", 2),
                ("other.assertEqual()", 2)
            ]
        );
    }
}
