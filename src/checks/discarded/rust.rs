//! The discards of one Rust file, and what its functions return.

use std::rc::Rc;

use tree_sitter::Node;

use crate::syntax::{Lang, Names};

use super::{Discard, Found, Kind, Needs, Returns, items, line, shown, text};

/// std methods that return a `Result` whatever their receiver, with the
/// fewest arguments they take. A name also common on types that do not
/// fail is left out: `send` (a channel's, failing only once its receiver
/// is gone: `let _ = tx.send(x)` is the idiom for "nobody waits any
/// more"), `recv`, `wait`, `shutdown`, `status`.
const FALLIBLE_METHODS: &[(&str, usize)] = &[
    ("write_all", 1),
    ("write_fmt", 1),
    ("write", 1),
    ("flush", 0),
    ("sync_all", 0),
    ("sync_data", 0),
    ("set_len", 1),
    ("read_exact", 1),
    ("read_to_end", 1),
    ("read_to_string", 1),
    ("read_line", 1),
    ("remove_file", 1),
    ("remove_dir", 1),
    ("remove_dir_all", 1),
    ("create_dir", 1),
    ("create_dir_all", 1),
    ("set_permissions", 1),
    ("set_nonblocking", 1),
    ("set_read_timeout", 1),
    ("set_write_timeout", 1),
    ("set_nodelay", 1),
    ("kill", 0),
];

/// Methods whose `Result` carries an I/O error: what `unwrap_or_default()`
/// must not turn into an empty value.
const IO_METHODS: &[&str] = &[
    "read_to_string",
    "read_to_end",
    "read_line",
    "read_dir",
    "metadata",
    "symlink_metadata",
    "canonicalize",
    "read_link",
];

/// Writing to these cannot fail: a `String` or a `Vec<u8>`.
const SINK_DECLARATIONS: &[&str] = &[
    ": String",
    ": &mut String",
    " = String::",
    ": Vec<u8>",
    ": &mut Vec<u8>",
    " = Vec::",
    " = vec![",
    " = format!(",
];

/// The discards of one file and what its functions return, without
/// walking the whole tree (this runs on every changed file, in the pass
/// that a dry run's time is measured by): each is looked up where its
/// words are in the text (`let _`, `.ok()`, `unwrap_or_default`, `Err`,
/// `fn`), the tree deciding what is there.
pub(super) fn find(root: Node, src: &str) -> Found {
    let mut walk = Walk {
        names: Lang::Rust.names(),
        src,
        found: Found::default(),
    };
    walk.items(root);
    for (at, word) in words(src) {
        let Some(node) = root.descendant_for_byte_range(at, at + word.len()) else {
            continue;
        };
        match word {
            "let _" => {
                if let Some(l) = walk
                    .up(node, "let_declaration", 1)
                    .filter(|l| l.start_byte() == at)
                {
                    let function = walk.within(l);
                    walk.let_underscore(l, &function);
                }
            }
            "ok" | "unwrap_or_default" => {
                let call = walk
                    .up(node, "field_expression", 1)
                    .and_then(|f| walk.up(f, "call_expression", 1));
                let Some(call) = call else {
                    continue;
                };
                let function = walk.within(call);
                if word == "unwrap_or_default" {
                    walk.unwrap_or_default(call, &function);
                } else if let Some(statement) = walk.up(call, "expression_statement", 1) {
                    walk.ok_statement(statement, &function);
                }
            }
            _ => {
                let arm = walk
                    .up(node, "tuple_struct_pattern", 2)
                    .and_then(|p| walk.up(p, "match_pattern", 1))
                    .and_then(|p| walk.up(p, "match_arm", 1));
                if let Some(arm) = arm {
                    let function = walk.within(arm);
                    walk.arm(arm, &function);
                }
            }
        }
    }
    walk.found
        .discards
        .sort_by(|a, b| (a.line, &a.code).cmp(&(b.line, &b.code)));
    walk.found.discards.dedup();
    walk.found
}

/// Where each word a discard is made of stands in the text, by byte:
/// `let _`, the `ok` of `.ok()`, the `unwrap_or_default` of
/// `.unwrap_or_default()`, the `Err` of `Err(`.
fn words(src: &str) -> Vec<(usize, &'static str)> {
    const WORDS: [(&str, usize, &str); 4] = [
        ("let _", 0, "let _"),
        (".ok()", 1, "ok"),
        (".unwrap_or_default()", 1, "unwrap_or_default"),
        ("Err(", 0, "Err"),
    ];
    WORDS
        .iter()
        .flat_map(|&(text, skip, word)| {
            src.match_indices(text)
                .map(move |(at, _)| (at + skip, word))
        })
        .collect()
}

struct Walk<'s> {
    names: &'static Names,
    src: &'s str,
    found: Found,
}

impl Walk<'_> {
    fn text(&self, node: Node) -> &str {
        text(node, self.src)
    }

    fn kind(&self, node: Node) -> &'static str {
        self.names.kind(node)
    }

    fn push(
        &mut self,
        kind: Kind,
        at: Node,
        lines: &[Node],
        code: &str,
        function: &Option<Rc<str>>,
        needs: Needs,
    ) {
        let mut lines: Vec<u32> = lines.iter().map(|n| line(*n)).collect();
        lines.push(line(at));
        lines.sort_unstable();
        lines.dedup();
        self.found.discards.push(Discard {
            kind,
            line: line(at),
            lines,
            code: shown(code),
            function: function.as_deref().map(str::to_string),
            needs,
        });
    }

    /// What the functions of the file return, found where `fn` is.
    fn items(&mut self, root: Node) {
        for (at, _) in self.src.match_indices("fn ") {
            let item = root
                .descendant_for_byte_range(at, at + 2)
                .and_then(|n| n.parent())
                .filter(|f| matches!(self.kind(*f), "function_item" | "function_signature_item"));
            if let Some(item) = item {
                self.function(item);
            }
        }
    }

    /// `node`, or an ancestor at most `levels` up, of `kind`.
    fn up<'t>(&self, node: Node<'t>, kind: &str, levels: usize) -> Option<Node<'t>> {
        let mut at = node;
        for _ in 0..=levels {
            if self.kind(at) == kind {
                return Some(at);
            }
            at = at.parent()?;
        }
        None
    }

    /// The name of the function `node` is in.
    fn within(&self, node: Node) -> Option<Rc<str>> {
        let mut at = node.parent();
        while let Some(n) = at {
            if matches!(self.kind(n), "function_item") {
                return self
                    .names
                    .child(n, "name")
                    .map(|name| Rc::from(self.text(name)));
            }
            at = n.parent();
        }
        None
    }

    /// Record what a function returns.
    fn function(&mut self, node: Node) {
        let Some(name) = self.names.child(node, "name") else {
            return;
        };
        let name = self.text(name).to_string();
        let returns = match self.names.child(node, "return_type") {
            Some(t) => returns(self.text(t)),
            None => Returns::Other,
        };
        self.found
            .returns
            .entry(name)
            .and_modify(|seen| *seen = seen.and(returns))
            .or_insert(returns);
    }

    /// `Err(_) => continue`, `Err(..) => Ok(None)`, `Err(_e) => {}`.
    fn arm(&mut self, arm: Node, function: &Option<Rc<str>>) {
        let Some(pattern) = self.names.child(arm, "pattern") else {
            return;
        };
        // A guard looks at the error or at the state: it is handled.
        if self.names.child(pattern, "condition").is_some() {
            return;
        }
        let Some(err) = pattern.named_child(0) else {
            return;
        };
        if self.kind(err) != "tuple_struct_pattern" {
            return;
        }
        let Some(ty) = self.names.child(err, "type") else {
            return;
        };
        let ty_text = self.text(ty);
        if ty_text != "Err" && !ty_text.ends_with("::Err") {
            return;
        }
        let mut cursor = err.walk();
        let inside: Vec<Node> = err
            .children(&mut cursor)
            .filter(|c| c.id() != ty.id() && !matches!(self.kind(*c), "(" | ")" | ","))
            .collect();
        let [binding] = inside[..] else {
            return;
        };
        let Some(value) = self.names.child(arm, "value") else {
            return;
        };
        // A `Result` kept in a field is often an either, not a failure
        // (ripgrep's `DecompressionReader { rdr: Result<CommandReader, File> }`).
        let scrutinee = arm
            .parent()
            .and_then(|block| block.parent())
            .and_then(|m| self.names.child(m, "value"));
        if scrutinee.is_none_or(|s| self.kind(s) == "field_expression") {
            return;
        }
        match self.kind(binding) {
            "_" | "remaining_field_pattern" => {}
            "identifier" => {
                let name = self.text(binding);
                if !name.starts_with('_') && self.uses(value, name) {
                    return;
                }
            }
            _ => return,
        }
        if !self.carries_on(value) {
            return;
        }
        let code = format!("{} => {}", self.text(err), self.text(value));
        self.push(Kind::ErrArm, err, &[value], &code, function, Needs::Nothing);
    }

    /// Whether `name` is read anywhere in `node`.
    fn uses(&self, node: Node, name: &str) -> bool {
        let mut stack = vec![node];
        let mut cursor = node.walk();
        while let Some(n) = stack.pop() {
            match self.kind(n) {
                // A macro's arguments are tokens, its names identifiers.
                "identifier" if self.text(n) == name => return true,
                // `format!("{e}")`, `"{e:?}"`.
                "string_literal" | "raw_string_literal"
                    if self.text(n).contains(&format!("{{{name}}}"))
                        || self.text(n).contains(&format!("{{{name}:")) =>
                {
                    return true;
                }
                _ => {}
            }
            stack.extend(n.children(&mut cursor));
        }
        false
    }

    /// An arm's value that goes on as if nothing failed: a default, `Ok(…)`,
    /// `break`, `continue`, a plain `return`, an empty block, or a block
    /// holding only one of these.
    fn carries_on(&self, value: Node) -> bool {
        match self.kind(value) {
            "block" => match items(self.names, value)[..] {
                [] => true,
                [only] => {
                    let only = match self.kind(only) {
                        "expression_statement" => match only.named_child(0) {
                            Some(e) => e,
                            None => return false,
                        },
                        _ => only,
                    };
                    self.carries_on(only)
                }
                _ => false,
            },
            "continue_expression" => true,
            "break_expression" => value
                .named_children(&mut value.walk())
                .all(|c| self.kind(c) == "label" || self.default_value(c)),
            "return_expression" => match value.named_child(0) {
                None => true,
                Some(v) => self.default_value(v) || self.ok_call(v),
            },
            _ => self.default_value(value) || self.ok_call(value),
        }
    }

    /// `Ok(…)`.
    fn ok_call(&self, node: Node) -> bool {
        self.kind(node) == "call_expression"
            && self
                .names
                .child(node, "function")
                .is_some_and(|f| self.text(f) == "Ok")
    }

    /// A literal, `()`, `None`, `Default::default()`, `T::new()`, `vec![]`.
    fn default_value(&self, node: Node) -> bool {
        match self.kind(node) {
            "integer_literal" | "float_literal" | "boolean_literal" | "string_literal"
            | "raw_string_literal" | "char_literal" | "unit_expression" | "negative_literal" => {
                true
            }
            "identifier" => self.text(node) == "None",
            "call_expression" => {
                let (Some(f), Some(args)) = (
                    self.names.child(node, "function"),
                    self.names.child(node, "arguments"),
                ) else {
                    return false;
                };
                let f = self.text(f);
                items(self.names, args).is_empty()
                    && (f.ends_with("::default") || f.ends_with("::new"))
            }
            "macro_invocation" => {
                let t: String = self.text(node).split_whitespace().collect();
                t == "vec![]" || t == "vec!()"
            }
            _ => false,
        }
    }

    /// `let _ = <a Result>;`
    fn let_underscore(&mut self, node: Node, function: &Option<Rc<str>>) {
        let (Some(pattern), Some(value)) = (
            self.names.child(node, "pattern"),
            self.names.child(node, "value"),
        ) else {
            return;
        };
        if self.text(pattern) != "_" {
            return;
        }
        let Some((needs, call)) = self.result(value) else {
            return;
        };
        let code = format!("let _ = {}", self.text(value));
        self.push(Kind::LetUnderscore, node, &[call], &code, function, needs);
    }

    /// Whether a value is a `Result`, what must hold for it to be, and the
    /// node that says so (the call).
    fn result<'t>(&self, value: Node<'t>) -> Option<(Needs, Node<'t>)> {
        let value = self.awaited(value);
        match self.kind(value) {
            "macro_invocation" => {
                let name = self.text(self.names.child(value, "macro")?);
                let name = name.rsplit("::").next().unwrap_or(name);
                if !matches!(name, "write" | "writeln") {
                    return None;
                }
                let args = self.text(value.named_child(1)?);
                let args = args.get(1..).unwrap_or("");
                let target = args.split(',').next().unwrap_or("");
                (!self.infallible_sink(target)).then_some((Needs::Nothing, value))
            }
            "call_expression" => Some((self.call_result(value)?, value)),
            _ => None,
        }
    }

    /// `x.await` is what `x` gives: a call's `Result` is found under it.
    fn awaited<'t>(&self, mut node: Node<'t>) -> Node<'t> {
        while self.kind(node) == "await_expression" {
            match node.named_child(0) {
                Some(inner) => node = inner,
                None => break,
            }
        }
        node
    }

    /// What makes a call's value a `Result`, if anything can.
    fn call_result(&self, call: Node) -> Option<Needs> {
        let mut f = self.names.child(call, "function")?;
        if self.kind(f) == "generic_function" {
            f = self.names.child(f, "function")?;
        }
        let argc = items(self.names, self.names.child(call, "arguments")?).len();
        match self.kind(f) {
            "identifier" => Some(Needs::Result(self.text(f).to_string())),
            "scoped_identifier" => {
                let path = self.text(f);
                let (owner, name) = path.rsplit_once("::")?;
                if std_fallible_path(owner, name) {
                    Some(Needs::Nothing)
                } else if in_std(owner) {
                    None
                } else {
                    Some(Needs::Result(name.to_string()))
                }
            }
            "field_expression" => {
                let name = self.text(self.names.child(f, "field")?);
                let receiver = self.names.child(f, "value")?;
                if let Some(&(_, min)) = FALLIBLE_METHODS.iter().find(|(m, _)| *m == name) {
                    let writes = matches!(name, "write_all" | "write_fmt" | "write" | "flush");
                    if argc < min || (writes && self.infallible_sink(self.text(receiver))) {
                        return None;
                    }
                    return Some(Needs::StdMethod(name.to_string()));
                }
                if name == "join" && argc == 0 {
                    return Some(Needs::StdMethod(name.to_string()));
                }
                if matches!(name, "output" | "spawn" | "status") && self.runs_command(receiver) {
                    return Some(Needs::Nothing);
                }
                (self.text(receiver) == "self").then(|| Needs::Result(name.to_string()))
            }
            _ => None,
        }
    }

    /// A receiver chain built from `Command::new(…)`.
    fn runs_command(&self, receiver: Node) -> bool {
        let t = self.text(receiver);
        t.contains("Command::new(")
    }

    /// Whether writing to `target` cannot fail, or has nowhere to report
    /// to: a `String` or `Vec<u8>` this file declares by that name, or
    /// standard error.
    fn infallible_sink(&self, target: &str) -> bool {
        let t = target.trim();
        if t.contains("stderr") {
            return true;
        }
        let t = t.trim_start_matches('&').trim_start();
        let t = t.strip_prefix("mut ").unwrap_or(t).trim_start_matches('*');
        let name = t.rsplit('.').next().unwrap_or(t).trim();
        if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
            return false;
        }
        SINK_DECLARATIONS
            .iter()
            .any(|d| declared(self.src, &format!("{name}{d}")))
    }

    /// `x.ok();`
    fn ok_statement(&mut self, node: Node, function: &Option<Rc<str>>) {
        let Some(call) = node.named_child(0) else {
            return;
        };
        let Some(receiver) = self.method_call(call, "ok") else {
            return;
        };
        let Some(semicolon) = node.child(node.child_count().saturating_sub(1)) else {
            return;
        };
        if self.kind(semicolon) != ";" {
            return;
        }
        let field = self
            .names
            .child(call, "function")
            .and_then(|f| self.names.child(f, "field"));
        let code = format!("{};", self.text(call));
        self.push(
            Kind::OkStatement,
            field.unwrap_or(call),
            &[receiver],
            &code,
            function,
            Needs::StdMethod("ok".to_string()),
        );
    }

    /// `<io call>.unwrap_or_default()`
    fn unwrap_or_default(&mut self, call: Node, function: &Option<Rc<str>>) {
        let Some(receiver) = self.method_call(call, "unwrap_or_default") else {
            return;
        };
        let Some(needs) = self.io(receiver) else {
            return;
        };
        let field = self
            .names
            .child(call, "function")
            .and_then(|f| self.names.child(f, "field"));
        let code = self.text(call).to_string();
        self.push(
            Kind::UnwrapOrDefault,
            field.unwrap_or(call),
            &[receiver],
            &code,
            function,
            needs,
        );
    }

    /// The receiver of `receiver.method()` called without arguments.
    fn method_call<'t>(&self, call: Node<'t>, method: &str) -> Option<Node<'t>> {
        if self.kind(call) != "call_expression" {
            return None;
        }
        let f = self.names.child(call, "function")?;
        if self.kind(f) != "field_expression"
            || self.text(self.names.child(f, "field")?) != method
            || !items(self.names, self.names.child(call, "arguments")?).is_empty()
        {
            return None;
        }
        self.names.child(f, "value")
    }

    /// Whether a call's `Result` is I/O's.
    fn io(&self, receiver: Node) -> Option<Needs> {
        let call = self.awaited(receiver);
        if self.kind(call) != "call_expression" {
            return None;
        }
        let mut f = self.names.child(call, "function")?;
        if self.kind(f) == "generic_function" {
            f = self.names.child(f, "function")?;
        }
        match self.kind(f) {
            "identifier" => Some(Needs::IoResult(self.text(f).to_string())),
            "scoped_identifier" => {
                let (owner, name) = self.text(f).rsplit_once("::")?;
                if std_fallible_path(owner, name) {
                    Some(Needs::Nothing)
                } else if in_std(owner) {
                    None
                } else {
                    Some(Needs::IoResult(name.to_string()))
                }
            }
            "field_expression" => {
                let name = self.text(self.names.child(f, "field")?);
                let receiver = self.names.child(f, "value")?;
                if IO_METHODS.contains(&name) {
                    Some(Needs::StdMethod(name.to_string()))
                } else if name == "output" && self.runs_command(receiver) {
                    Some(Needs::Nothing)
                } else {
                    (self.text(receiver) == "self").then(|| Needs::IoResult(name.to_string()))
                }
            }
            _ => None,
        }
    }
}

/// `fs::remove_file`, `std::fs::write`, `tokio::fs::read`, `File::open`,
/// `io::copy`: every one returns `io::Result`.
fn std_fallible_path(owner: &str, name: &str) -> bool {
    let last = owner.rsplit("::").next().unwrap_or(owner);
    match last {
        "fs" => true,
        "File" => matches!(name, "open" | "create" | "create_new"),
        "io" => matches!(name, "copy" | "read_to_string"),
        _ => false,
    }
}

/// A path into std (`std::env`, `core::mem`): no function of the
/// repository.
fn in_std(owner: &str) -> bool {
    matches!(owner.split("::").next(), Some("std" | "core" | "alloc"))
}

/// What a return type says: `io::Result<T>`, `Result<T, io::Error>`,
/// `anyhow::Result<T>`, `fmt::Result`, `Result<T>` (an alias), or else.
fn returns(ty: &str) -> Returns {
    let ty: String = ty.split_whitespace().collect();
    let (head, args) = ty.split_once('<').unwrap_or((&ty, ""));
    if head.rsplit("::").next() != Some("Result") {
        return Returns::Other;
    }
    let owner = head.strip_suffix("Result").unwrap_or("");
    if owner.ends_with("io::") || args.contains("io::Error") {
        Returns::IoResult
    } else {
        Returns::Result
    }
}

/// Whether `declaration` is in `src` after something that is not part of
/// a name (`buf: String`, not `out_buf: String`).
fn declared(src: &str, declaration: &str) -> bool {
    src.match_indices(declaration).any(|(at, _)| {
        src[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_'))
    })
}
