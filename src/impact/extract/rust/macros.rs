//! Inside Rust macro calls: the identifiers, paths, method calls, `use`
//! and `mod` items of a macro's tokens, read without a grammar.

use super::*;

impl<'a> Cx<'a> {
    /// Identifiers in a macro call's tokens: `f(…)` and `a::b(…)` are calls,
    /// `.m(…)` a method call, `m!` a macro, other names values unless they are
    /// locals of the enclosing function.
    pub(super) fn macro_body(&mut self, tt: Node, anc: &[Frame]) {
        let all = tokens::of_tree(tt, self.src);
        let mut skip = Vec::new();
        let items = anc.len() >= 2
            && matches!(
                kind_of(anc[anc.len() - 2].node),
                "source_file" | "declaration_list"
            );
        if items {
            self.macro_items(&all, &all[0], &mut skip);
        }
        self.macro_tree(&all, &all[0], anc, &skip);
    }

    /// A macro wrapping items (tokio's `cfg_rt! { pub use … ; mod … ; }`):
    /// the `use` declarations and `mod` declarations in it, read as they
    /// would be outside it, with those of macros nested in it. Returns
    /// (in `skip`) the byte ranges it read, which are not scanned again
    /// as plain tokens.
    fn macro_items(&mut self, all: &[Token], tree: &Token, skip: &mut Vec<(usize, usize)>) {
        let tokens = tokens::children(all, tree);
        let src: &'a str = self.src;
        let word = |k: usize| tokens.get(k).and_then(|t| src.get(t.start..t.end));
        let mut i = 0;
        while i < tokens.len() {
            let t = tokens[i];
            let is_use = t.kind == Tok::Keyword && word(i) == Some("use");
            let is_mod = t.kind != Tok::Tree && word(i) == Some("mod");
            if t.kind == Tok::Tree && i >= 2 && tokens[i - 1].kind == Tok::Bang {
                self.macro_items(all, &t, skip);
            }
            if !(is_use || is_mod) {
                i += 1;
                continue;
            }
            // `pub`, `pub(crate)` before it.
            let mut start = i;
            if start >= 1
                && tokens[start - 1].kind == Tok::Tree
                && start >= 2
                && word(start - 2) == Some("pub")
            {
                start -= 2;
            } else if start >= 1 && word(start - 1) == Some("pub") {
                start -= 1;
            }
            let Some(end) = (i + 1..tokens.len())
                .find(|&k| word(k) == Some(";") || (is_mod && tokens[k].kind == Tok::Tree))
            else {
                break;
            };
            let (from, to) = (tokens[start].start, tokens[end].end);
            if is_use {
                self.use_in_macro(from, to, tokens[start].line);
            } else if let Some(name) = (i + 1 < end)
                .then(|| tokens[i + 1])
                .filter(|n| n.kind == Tok::Ident)
            {
                self.mod_in_macro(from, to, name, start < i);
            }
            skip.push((from, to));
            i = end + 1;
        }
    }

    /// `use …;` at `src[from..to]`, inside a macro: parsed on its own.
    fn use_in_macro(&mut self, from: usize, to: usize, line: u32) {
        let Some(text) = self.src.get(from..to) else {
            return;
        };
        let Ok(tree) = crate::syntax::parse(Lang::Rust, text.as_bytes()) else {
            return;
        };
        let root = tree.root_node();
        let Some(decl) = root
            .named_child(0)
            .filter(|d| kind_of(*d) == "use_declaration")
        else {
            return;
        };
        let public = text.starts_with("pub");
        let scope = self.defs.innermost(from);
        let Some(arg) = child(decl, "argument") else {
            return;
        };
        let mut found = Vec::new();
        use_tree(arg, text, &[], &mut found);
        let statement = Site::at(self.src, line, from);
        for (path, alias, glob, row, pos) in found {
            let name = Site::at(self.src, line + row - 1, from + pos);
            self.push_import(path, alias, glob, public, statement, name, scope);
        }
    }

    /// `mod name;` or `mod name { … }` at `src[from..to]`, inside a macro.
    fn mod_in_macro(&mut self, from: usize, to: usize, name: Token, public: bool) {
        let visibility = match self.src.get(from..to) {
            Some(t) if t.starts_with("pub(") || t.starts_with("pub (") => Visibility::Crate,
            _ if public => Visibility::Public,
            _ => Visibility::Private,
        };
        let def = Def {
            name: self.token_text(name).to_string(),
            kind: Kind::Module,
            container: None,
            trait_name: None,
            bases: Vec::new(),
            fields: Vec::new(),
            returns: None,
            start_line: line_at(self.src, from),
            line: name.line,
            column: column_at(self.src, name.start),
            end_line: line_at(self.src, to.saturating_sub(1)),
            signature: 0,
            members: Vec::new(),
            visibility,
            parent: None,
            test: false,
            no_self: false,
        };
        self.defs.push(def, (from, to), Sig::new(from, to));
    }

    fn macro_tree(&mut self, all: &[Token], tree: &Token, anc: &[Frame], skip: &[(usize, usize)]) {
        let tokens = tokens::children(all, tree);
        let mut i = 0;
        while i < tokens.len() {
            let tok = tokens[i];
            if skip.iter().any(|&(s, e)| s <= tok.start && tok.start < e) {
                i += 1;
                continue;
            }
            match tok.kind {
                Tok::Tree => {
                    self.macro_tree(all, &tok, anc, skip);
                    i += 1;
                }
                Tok::Pipe | Tok::Let => i = self.macro_bindings(&tokens, i),
                Tok::Ident | Tok::SelfValue | Tok::Crate | Tok::Super => {
                    let mut segs = vec![self.token_text(tok).to_string()];
                    let mut sites = vec![Site::at(self.src, tok.line, tok.start)];
                    let mut j = i + 1;
                    while j + 1 < tokens.len()
                        && tokens[j].kind == Tok::PathSep
                        && tokens[j + 1].kind.is_word()
                    {
                        let seg = tokens[j + 1];
                        segs.push(self.token_text(seg).to_string());
                        sites.push(Site::at(self.src, seg.line, seg.start));
                        j += 2;
                    }
                    let prev = i.checked_sub(1).map(|k| tokens[k].kind);
                    let next = tokens.get(j);
                    let called = next.is_some_and(|n| {
                        n.kind == Tok::Tree && self.src.as_bytes().get(n.start) == Some(&b'(')
                    });
                    let next_kind = next.map(|n| n.kind);
                    self.macro_site(&tokens, i, (segs, sites), (prev, next_kind, called), anc);
                    i = j;
                }
                _ => i += 1,
            }
        }
    }

    /// The receiver a macro's tokens end with at `k` (just before a
    /// `.`): `self`, `self.field`, a local or a name, and chains of calls
    /// on them (`ig.matched("a", false)`, `make()?`, `m("a")` of a local
    /// closure), as `receiver` reads them from a syntax tree.
    fn macro_receiver(&self, tokens: &[Token], k: usize, depth: usize) -> Receiver {
        let kind = |k: Option<usize>| k.map(|k| tokens[k].kind);
        let tok = tokens[k];
        if depth > MAX_CHAIN {
            return Receiver::Unknown;
        }
        match tok.kind {
            Tok::SelfValue => Receiver::SelfValue,
            Tok::Ident if kind(k.checked_sub(1)) == Some(Tok::Dot) => {
                if k >= 2 && kind(Some(k - 2)) == Some(Tok::SelfValue) {
                    Receiver::Field(self.token_text(tok).to_string())
                } else {
                    Receiver::Unknown
                }
            }
            Tok::Ident if kind(k.checked_sub(1)) != Some(Tok::PathSep) => {
                self.named_receiver(self.token_text(tok), tok.start)
            }
            // `x.await` and `x?` have `x`'s receiver, as the tree's do.
            Tok::Keyword if self.token_text(tok) == "await" && k >= 2 => {
                if kind(Some(k - 1)) == Some(Tok::Dot) {
                    self.macro_receiver(tokens, k - 2, depth + 1)
                } else {
                    Receiver::Unknown
                }
            }
            Tok::Other if self.token_text(tok) == "?" && k >= 1 => {
                self.macro_receiver(tokens, k - 1, depth + 1)
            }
            Tok::Tree if self.src.as_bytes().get(tok.start) == Some(&b'(') && k >= 1 => {
                self.macro_call_value(tokens, k - 1, depth)
            }
            _ => Receiver::Unknown,
        }
    }

    /// The value of a call whose callee ends at `k` in a macro's tokens:
    /// a method's return on its receiver, a function's, a tuple struct.
    fn macro_call_value(&self, tokens: &[Token], k: usize, depth: usize) -> Receiver {
        let kind = |k: usize| tokens.get(k).map(|t| t.kind);
        let callee = tokens[k];
        if callee.kind != Tok::Ident {
            return Receiver::Unknown;
        }
        let name = self.token_text(callee);
        if k >= 2 && kind(k - 1) == Some(Tok::Dot) {
            let on = self.macro_receiver(tokens, k - 2, depth + 1);
            return if keeps_type(name) {
                on
            } else {
                on.then_call(name)
            };
        }
        // A path `a::b::f`: its segments, first to last.
        let mut segs = vec![name.to_string()];
        let mut j = k;
        while j >= 2 && kind(j - 1) == Some(Tok::PathSep) && kind(j - 2).is_some_and(Tok::is_word) {
            segs.insert(0, self.token_text(tokens[j - 2]).to_string());
            j -= 2;
        }
        if segs.len() == 1 {
            if self.is_local(name, callee.start) {
                return self
                    .closure_returns(name, callee.start)
                    .unwrap_or(Receiver::Unknown);
            }
            return if starts_upper(name) {
                Receiver::Type(name.to_string())
            } else {
                Receiver::Returned(segs)
            };
        }
        let owner = &segs[segs.len() - 2];
        if owner == "Self" {
            Receiver::Unknown
        } else {
            Receiver::Returned(segs)
        }
    }

    fn token_text(&self, token: Token) -> &'a str {
        self.src.get(token.start..token.end).unwrap_or("")
    }

    /// Names a macro's tokens bind at `i`: closure parameters (`|a, b: T|`
    /// after `(`, `,`, `=`, `=>` or `move`) and `let` names. They are locals
    /// from there on, so `|stream| stream.offset()` is not taken for a module
    /// `stream`. Returns where to go on scanning.
    fn macro_bindings(&mut self, tokens: &[Token], i: usize) -> usize {
        let kind = |k: usize| tokens.get(k).map(|t| t.kind);
        let func = self.defs.function_of(self.defs.innermost(tokens[i].start));
        if kind(i) == Some(Tok::Let) {
            let mut j = i + 1;
            while kind(j) == Some(Tok::Mut) {
                j += 1;
            }
            if kind(j) == Some(Tok::Ident) {
                let name = self.token_text(tokens[j]);
                self.locals.add(func, name, tokens[j].end, None);
                return j + 1;
            }
            return i + 1;
        }
        let opens = i == 0
            || matches!(
                kind(i - 1),
                Some(Tok::OpenParen | Tok::Comma | Tok::Eq | Tok::FatArrow)
            )
            || (kind(i - 1) == Some(Tok::Ident) && self.token_text(tokens[i - 1]) == "move");
        if !opens {
            return i + 1;
        }
        let Some(close) = (i + 1..tokens.len().min(i + 24)).find(|&k| kind(k) == Some(Tok::Pipe))
        else {
            return i + 1;
        };
        for k in i + 1..close {
            let named = kind(k) == Some(Tok::Ident)
                && matches!(
                    kind(k - 1),
                    Some(Tok::Pipe | Tok::Comma | Tok::Mut | Tok::Amp)
                )
                && matches!(kind(k + 1), Some(Tok::Comma | Tok::Colon | Tok::Pipe));
            if named {
                let name = self.token_text(tokens[k]);
                self.locals.add(func, name, tokens[close].end, None);
            }
        }
        close + 1
    }

    fn macro_site(
        &mut self,
        tokens: &[Token],
        i: usize,
        (segs, sites): (Vec<String>, Vec<Site>),
        (prev, next, called): (Option<Tok>, Option<Tok>, bool),
        anc: &[Frame],
    ) {
        let tok = tokens[i];
        let at = sites[0];
        if matches!(segs[0].as_str(), "self" | "crate" | "super") && segs.len() == 1 {
            return;
        }
        if prev == Some(Tok::Dot) {
            if !called || segs.len() != 1 {
                return;
            }
            let receiver = match i.checked_sub(2) {
                Some(k) => self.macro_receiver(tokens, k, 0),
                None => Receiver::Unknown,
            };
            self.push(&segs[0], Form::MethodCall, Vec::new(), receiver, at);
            return;
        }
        if next == Some(Tok::Bang) {
            if let (Some((name, path)), Some(&at)) = (segs.split_last(), sites.last()) {
                self.push(name, Form::Macro, path.to_vec(), Receiver::None, at);
            }
            return;
        }
        // `name: value` inside a macro is a field or argument label; a
        // path is not (`assert_value!(tokio::net::TcpStream: Send)`).
        if next == Some(Tok::Colon) && segs.len() == 1 {
            return;
        }
        if segs.len() > 1 {
            if let Some((segs, from)) = self.self_path(segs, anc) {
                self.push_path(segs, &sites, Form::Path, from);
            }
            return;
        }
        let name = &segs[0];
        if self.type_params.contains(name.as_str()) || self.is_local(name, tok.start) {
            return;
        }
        let form = if called { Form::Call } else { Form::Value };
        self.push(name, form, Vec::new(), Receiver::None, at);
    }
}
