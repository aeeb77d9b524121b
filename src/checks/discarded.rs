//! `error_discarded`: an error the change throws away, found in the tree
//! of the head side of each changed Rust or Python file. In Rust: an
//! `Err(_)` arm that carries on as if nothing failed (`=> 0`, `=> break`,
//! `=> continue`, `=> Ok(…)`, `=> {}`, `=> None`, `=> return Ok(…)`, …),
//! `let _ =` on a `Result`, `.ok();` as a statement, `unwrap_or_default()`
//! on I/O. In Python: a bare `except:` that does not raise again, and an
//! `except Exception:` (or `BaseException`, or a tuple holding either)
//! whose body is only `pass`, `continue`, `break` or a `return` of a
//! default.
//!
//! Without types, "is a `Result`" is known two ways: calls std documents
//! as fallible (`write!`, `write_all`, `flush`, `std::fs::*`, `File::open`,
//! a thread's `join()`, …), and functions the changed files define with a
//! `Result` return type (`io::Result` for "is I/O"), by name, when no
//! changed file defines the name otherwise. Anything else stands down: a
//! fact for the reviewer that is wrong teaches them to skip the rest.
//! What stands down on purpose, with why, is in docs/checks.md.
//!
//! `find` reads one file's tree while the checks outline it (`sides`);
//! `report` keeps what lines the diff adds outside test code.

use std::collections::{HashMap, HashSet};

use tree_sitter::Node;

use crate::git::{FileDiff, LineKind};
use crate::paths;
use crate::syntax::{Names, Parsed};

use super::outline::{Lang, Outline};

mod python;
mod rust;

/// What throws the error away.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `Err(_) => continue`
    ErrArm,
    /// `let _ = fs::remove_file(p);`
    LetUnderscore,
    /// `file.flush().ok();`
    OkStatement,
    /// `fs::read_to_string(p).unwrap_or_default()`
    UnwrapOrDefault,
    /// `except:` that does not raise again.
    BareExcept,
    /// `except Exception: pass`
    BroadExcept,
}

/// What must hold for the value to be a `Result` (or I/O's), beyond what
/// the tree says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Needs {
    /// Known from the code alone.
    Nothing,
    /// A std method known to return a `Result`: unless a changed file
    /// defines a function of that name that does not.
    StdMethod(String),
    /// A function of the repository: a changed file defines it, and every
    /// definition of the name there returns a `Result`.
    Result(String),
    /// The same, returning `io::Result` (or `Result<_, io::Error>`).
    IoResult(String),
}

/// What a Rust function of the changed files is declared to return.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Returns {
    IoResult,
    Result,
    Other,
}

impl Returns {
    /// Two definitions of one name: the name returns a `Result` only if
    /// both do, and I/O's only if both are.
    fn and(self, other: Returns) -> Returns {
        match (self, other) {
            (Returns::Other, _) | (_, Returns::Other) => Returns::Other,
            (Returns::IoResult, Returns::IoResult) => Returns::IoResult,
            _ => Returns::Result,
        }
    }
}

/// One place that may discard an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Discard {
    pub kind: Kind,
    /// The line reported.
    pub line: u32,
    /// The lines that make the discard: any of them added makes it the
    /// change's (an arm's pattern or its value, a call or its `.ok()`).
    pub lines: Vec<u32>,
    /// The code, on one line and shortened, for the message.
    pub code: String,
    /// The function it is in.
    pub function: Option<String>,
    pub needs: Needs,
}

/// What one file holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Found {
    pub discards: Vec<Discard>,
    /// Rust: the functions it defines, by name (a name defined twice is
    /// merged with `Returns::and`).
    pub returns: HashMap<String, Returns>,
}

/// The discards in one parsed file.
pub fn find(parsed: &Parsed) -> Found {
    match parsed.lang() {
        Lang::Rust => rust::find(parsed.root(), parsed.src()),
        Lang::Python => python::find(parsed.root(), parsed.src()),
    }
}

/// A discard the change makes: where, and what it is, in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reported {
    pub file: String,
    pub line: u32,
    pub message: String,
}

/// The discards on lines the diff adds, outside test code: test files
/// (`paths::is_test`), and test functions and `#[cfg(test)]` modules
/// (the outline's test regions). `found` and `heads` are by index into
/// `files`.
pub fn report(
    files: &[FileDiff],
    found: &HashMap<usize, Found>,
    heads: &HashMap<usize, Outline>,
) -> Vec<Reported> {
    let mut returns: HashMap<&str, Returns> = HashMap::new();
    for f in found.values() {
        for (name, r) in &f.returns {
            returns
                .entry(name)
                .and_modify(|seen| *seen = seen.and(*r))
                .or_insert(*r);
        }
    }
    let mut out = Vec::new();
    let mut indexes: Vec<&usize> = found.keys().collect();
    indexes.sort_unstable();
    for &i in indexes {
        let (Some(file), Some(f)) = (files.get(i), found.get(&i)) else {
            continue;
        };
        if paths::is_test(&file.path) {
            continue;
        }
        let added: HashSet<u32> = file
            .hunks
            .iter()
            .flat_map(|h| &h.lines)
            .filter(|l| l.kind == LineKind::Added)
            .filter_map(|l| l.new_lineno)
            .collect();
        let head = heads.get(&i);
        for d in &f.discards {
            if !d.lines.iter().any(|l| added.contains(l))
                || head.is_some_and(|o| o.in_test_region(d.line))
                || !holds(&d.needs, &returns)
            {
                continue;
            }
            out.push(Reported {
                file: file.path.clone(),
                line: d.line,
                message: message(d),
            });
        }
    }
    out
}

fn holds(needs: &Needs, returns: &HashMap<&str, Returns>) -> bool {
    match needs {
        Needs::Nothing => true,
        Needs::StdMethod(name) => returns.get(name.as_str()) != Some(&Returns::Other),
        Needs::Result(name) => matches!(
            returns.get(name.as_str()),
            Some(Returns::Result | Returns::IoResult)
        ),
        Needs::IoResult(name) => returns.get(name.as_str()) == Some(&Returns::IoResult),
    }
}

fn message(d: &Discard) -> String {
    let code = &d.code;
    let within = d
        .function
        .as_deref()
        .map(|f| format!(" in `{f}`"))
        .unwrap_or_default();
    match d.kind {
        Kind::ErrArm => format!(
            "`{code}`{within}: the error is discarded and the code carries on as if nothing failed."
        ),
        Kind::LetUnderscore => {
            format!("`{code}`{within}: the error this call may return is discarded.")
        }
        Kind::OkStatement => format!(
            "`{code}`{within}: `.ok()` turns the Result into an Option that is dropped, so the error is discarded."
        ),
        Kind::UnwrapOrDefault => format!(
            "`{code}`{within}: a failed read gives an empty value, so the I/O error is discarded."
        ),
        Kind::BareExcept => format!(
            "`{code}`{within}: a bare `except:` catches every exception, KeyboardInterrupt and SystemExit included, and does not raise it again."
        ),
        Kind::BroadExcept => {
            format!("`{code}`{within}: every error the `try` body raises is discarded.")
        }
    }
}

/// The text of a node.
fn text<'s>(node: Node, src: &'s str) -> &'s str {
    src.get(node.byte_range()).unwrap_or("")
}

/// The 1-based line a node starts on.
fn line(node: Node) -> u32 {
    node.start_position().row as u32 + 1
}

/// Code for a message: on one line, spaces collapsed, shortened.
fn shown(code: &str) -> String {
    const MAX: usize = 72;
    let one: String = code.split_whitespace().collect::<Vec<_>>().join(" ");
    if one.chars().count() <= MAX {
        return one;
    }
    let mut cut: String = one.chars().take(MAX - 1).collect();
    cut.push('…');
    cut
}

/// A node's named children, comments left out.
fn items<'t>(names: &Names, node: Node<'t>) -> Vec<Node<'t>> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor)
        .filter(|c| !matches!(names.kind(*c), "line_comment" | "block_comment" | "comment"))
        .collect()
}

#[cfg(test)]
mod tests;
