//! The discards of one Python file: a bare `except:` that does not raise
//! again, and an `except Exception:` whose body only gives up.

use std::rc::Rc;

use tree_sitter::Node;

use crate::syntax::{Lang, Names};

use super::{Discard, Found, Kind, Needs, items, line, shown, text};

/// Calls that make an empty value: `return dict()`.
const EMPTY_CALLS: &[&str] = &["list", "dict", "set", "tuple", "str", "bytes", "frozenset"];

/// The discards of one file, looked up where `except` is in the text
/// (the tree deciding what each is) rather than by walking the tree.
pub(super) fn find(root: Node, src: &str) -> Found {
    let mut found = Found::default();
    let names = Lang::Python.names();
    for (at, _) in src.match_indices("except") {
        let clause = root
            .descendant_for_byte_range(at, at + "except".len())
            .and_then(|n| n.parent())
            .filter(|c| names.kind(*c) == "except_clause" && c.start_byte() == at);
        if let Some(clause) = clause {
            found
                .discards
                .extend(except(names, src, clause, &within(names, src, clause)));
        }
    }
    found
}

/// The name of the function `node` is in.
fn within(names: &Names, src: &str, node: Node) -> Option<Rc<str>> {
    let mut at = node.parent();
    while let Some(n) = at {
        if names.kind(n) == "function_definition" {
            return names.child(n, "name").map(|name| Rc::from(text(name, src)));
        }
        at = n.parent();
    }
    None
}

/// The discard an `except` clause makes, if it makes one.
fn except(names: &Names, src: &str, clause: Node, function: &Option<Rc<str>>) -> Option<Discard> {
    let block = items(names, clause)
        .into_iter()
        .rfind(|c| names.kind(*c) == "block")?;
    let body = items(names, block);
    let first = *body.first()?;
    // Up to its colon: a comment after it is not the header.
    let mut cursor = clause.walk();
    let colon = clause
        .children(&mut cursor)
        .filter(|c| names.kind(*c) == ":" && c.end_byte() <= block.start_byte())
        .last()
        .map_or(block.start_byte(), |c| c.end_byte());
    let header = src
        .get(clause.start_byte()..colon)
        .unwrap_or("except:")
        .trim_end();
    let (kind, code) = match names.child(clause, "value") {
        None => {
            // `except:` then `raise`: cleanup, nothing discarded.
            if raises(names, block) {
                return None;
            }
            (Kind::BareExcept, header.to_string())
        }
        Some(value) => {
            let [only] = body[..] else {
                return None;
            };
            if !broad(names, src, value) || !gives_up(names, src, only) {
                return None;
            }
            (Kind::BroadExcept, format!("{header} {}", text(only, src)))
        }
    };
    Some(Discard {
        kind,
        line: line(clause),
        lines: vec![line(clause), line(first)],
        code: shown(&code),
        function: function.as_deref().map(str::to_string),
        needs: Needs::Nothing,
    })
}

/// `Exception`, `BaseException`, `builtins.Exception`, or a tuple holding
/// one (`(OSError, Exception)`).
fn broad(names: &Names, src: &str, value: Node) -> bool {
    match names.kind(value) {
        "identifier" | "attribute" => {
            let t = text(value, src);
            let last = t.rsplit('.').next().unwrap_or(t);
            matches!(last, "Exception" | "BaseException")
        }
        "tuple" | "parenthesized_expression" | "as_pattern" | "expression_list" => {
            items(names, value).iter().any(|v| broad(names, src, *v))
        }
        _ => false,
    }
}

/// A body that gives up: `pass`, `continue`, `break`, `...`, or a
/// `return` of nothing or of a default (`None`, `False`, `0`, `""`, `[]`,
/// `{}`, `()`, `dict()`, …).
fn gives_up(names: &Names, src: &str, statement: Node) -> bool {
    match names.kind(statement) {
        "pass_statement" | "continue_statement" | "break_statement" => true,
        "expression_statement" => {
            matches!(&items(names, statement)[..], [e] if names.kind(*e) == "ellipsis")
        }
        "return_statement" => match &items(names, statement)[..] {
            [] => true,
            [value] => default(names, src, *value),
            _ => false,
        },
        _ => false,
    }
}

fn default(names: &Names, src: &str, value: Node) -> bool {
    match names.kind(value) {
        "none" | "false" => true,
        "integer" | "float" => matches!(text(value, src), "0" | "0.0"),
        "string" => !items(names, value)
            .iter()
            .any(|c| matches!(names.kind(*c), "string_content" | "interpolation")),
        "list" | "dictionary" | "tuple" | "set" => items(names, value).is_empty(),
        "call" => {
            let (Some(f), Some(args)) = (
                names.child(value, "function"),
                names.child(value, "arguments"),
            ) else {
                return false;
            };
            EMPTY_CALLS.contains(&text(f, src)) && items(names, args).is_empty()
        }
        _ => false,
    }
}

/// Whether a block raises, outside the functions and classes it defines.
fn raises(names: &Names, block: Node) -> bool {
    let mut stack = vec![block];
    let mut cursor = block.walk();
    while let Some(n) = stack.pop() {
        match names.kind(n) {
            "raise_statement" => return true,
            "function_definition" | "class_definition" | "lambda" => continue,
            _ => stack.extend(n.named_children(&mut cursor)),
        }
    }
    false
}
