//! The tokens of a Rust macro call's arguments, as `rust::Cx::macro_body`
//! reads them.
//!
//! tree-sitter keeps a token tree's tokens as a balanced tree of hidden
//! nodes. Reading macro calls through a cursor cost 2.7% of a cold index's
//! instructions, most of it stepping through those nodes; lexing the text
//! brings that under 1%. So a well-formed token tree is lexed into the
//! tokens tree-sitter's Rust grammar makes of it, with the same kinds: a
//! keyword it does not list for token trees (`move`, `in`, `Self`) is an
//! identifier, a primitive type is not, and `1.max` is an integer, a dot
//! and a name. A tree with syntax errors is read from tree-sitter, whose
//! error recovery a lexer cannot repeat.

use tree_sitter::Node;

use crate::impact::lang::Lang;

/// The kinds of token `macro_body` tells apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Tok {
    /// A nested token tree, `(…)`, `[…]` or `{…}`.
    Tree,
    Ident,
    SelfValue,
    Crate,
    Super,
    Let,
    Mut,
    /// Any other word tree-sitter lexes as a keyword token (`fn`, `as`,
    /// `_`): not an identifier, but it can end a path.
    Keyword,
    Pipe,
    PathSep,
    Dot,
    Bang,
    Colon,
    Comma,
    Eq,
    FatArrow,
    Amp,
    OpenParen,
    /// Literals, comments, other punctuation, closing delimiters.
    Other,
}

impl Tok {
    /// Whether the token can follow `::` in a path: keywords such as
    /// `default` and `union` are tokens of their own kind inside a token
    /// tree, but names all the same after `::`.
    pub(super) fn is_word(self) -> bool {
        matches!(self, Tok::Ident | Tok::Keyword | Tok::Let)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Token {
    pub kind: Tok,
    /// Byte range in the file.
    pub start: usize,
    pub end: usize,
    pub line: u32,
    /// For a tree, where its tokens are in the list: from `first`
    /// (its opening delimiter) to just before `after`.
    pub first: usize,
    pub after: usize,
}

/// The tokens of the token tree `tt`, in one list: the tree itself first,
/// then its tokens, each nested tree followed by its own.
pub(super) fn of_tree(tt: Node, src: &str) -> Vec<Token> {
    if !tt.has_error() {
        let line = tt.start_position().row as u32 + 1;
        if let Some(tokens) = lex(src, tt.start_byte(), tt.end_byte(), line) {
            return tokens;
        }
    }
    let mut out = Vec::new();
    from_nodes(tt, src, &mut out);
    out
}

/// The tokens directly inside `tree` (one of `tokens`), nested trees as
/// one token each.
pub(super) fn children(tokens: &[Token], tree: &Token) -> Vec<Token> {
    let mut out = Vec::new();
    let mut k = tree.first;
    while k < tree.after {
        let t = tokens[k];
        out.push(t);
        k = if t.kind == Tok::Tree { t.after } else { k + 1 };
    }
    out
}

/// The same list read from tree-sitter's nodes.
fn from_nodes(tt: Node, src: &str, out: &mut Vec<Token>) {
    let at = out.len();
    out.push(token(Tok::Tree, tt));
    let names = Lang::Rust.names();
    let mut cursor = tt.walk();
    for child in tt.children(&mut cursor) {
        let kind = match names.kind(child) {
            "token_tree" => {
                from_nodes(child, src, out);
                continue;
            }
            "identifier" => Tok::Ident,
            "self" => Tok::SelfValue,
            "crate" => Tok::Crate,
            "super" => Tok::Super,
            "let" => Tok::Let,
            "mutable_specifier" | "mut" => Tok::Mut,
            "|" => Tok::Pipe,
            "::" => Tok::PathSep,
            "." => Tok::Dot,
            "!" => Tok::Bang,
            ":" => Tok::Colon,
            "," => Tok::Comma,
            "=" => Tok::Eq,
            "=>" => Tok::FatArrow,
            "&" => Tok::Amp,
            "(" => Tok::OpenParen,
            _ if !child.is_named() && src.get(child.byte_range()).is_some_and(is_word) => {
                Tok::Keyword
            }
            _ => Tok::Other,
        };
        out.push(token(kind, child));
    }
    let after = out.len();
    out[at].first = at + 1;
    out[at].after = after;
}

fn token(kind: Tok, node: Node) -> Token {
    Token {
        kind,
        start: node.start_byte(),
        end: node.end_byte(),
        line: node.start_position().row as u32 + 1,
        first: 0,
        after: 0,
    }
}

fn is_word(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b == b'_' || b.is_ascii_alphanumeric())
}

/// The kind of the word `text`: tree-sitter's Rust grammar lexes the
/// keywords it lists for token trees (`_non_special_token`) as keyword
/// tokens, `true`, `false` and the primitive types as literals and types,
/// and any other word as an identifier.
fn word_kind(text: &str) -> Tok {
    match text {
        "self" => Tok::SelfValue,
        "crate" => Tok::Crate,
        "super" => Tok::Super,
        "let" => Tok::Let,
        "mut" => Tok::Mut,
        "as" | "async" | "await" | "break" | "const" | "continue" | "default" | "enum" | "fn"
        | "for" | "gen" | "if" | "impl" | "loop" | "match" | "mod" | "pub" | "return"
        | "static" | "struct" | "trait" | "type" | "union" | "unsafe" | "use" | "where"
        | "while" | "_" => Tok::Keyword,
        "true" | "false" | "u8" | "i8" | "u16" | "i16" | "u32" | "i32" | "u64" | "i64" | "u128"
        | "i128" | "isize" | "usize" | "f32" | "f64" | "bool" | "str" | "char" => Tok::Other,
        _ => Tok::Ident,
    }
}

/// The suffixes an integer literal may carry, longest first.
const NUMERIC_SUFFIXES: &[&str] = &[
    "u128", "i128", "usize", "isize", "u16", "i16", "u32", "i32", "u64", "i64", "f32", "f64", "u8",
    "i8",
];

/// The punctuation token at the start of `rest`, the longest that
/// matches, with its length: `+ - * / % ^ ! & | && || << >> += -= *= /=
/// %= ^= &= |= <<= >>= = == != > < >= <= @ . .. ... ..= , ; : :: -> =>
/// # ? $`. None if no token starts there.
fn punctuation(rest: &[u8]) -> Option<(usize, Tok)> {
    let next = |k: usize| rest.get(k).copied().unwrap_or(0);
    let (one, two) = (next(1), next(2));
    let assign = |kind: Tok| {
        if one == b'=' {
            (2, Tok::Other)
        } else {
            (1, kind)
        }
    };
    Some(match *rest.first()? {
        b'<' | b'>' if one == rest[0] => (if two == b'=' { 3 } else { 2 }, Tok::Other),
        b'<' | b'>' | b'+' | b'*' | b'/' | b'%' | b'^' => assign(Tok::Other),
        b'-' if one == b'>' => (2, Tok::Other),
        b'-' => assign(Tok::Other),
        b'!' => assign(Tok::Bang),
        b'&' if one == b'&' => (2, Tok::Other),
        b'&' => assign(Tok::Amp),
        b'|' if one == b'|' => (2, Tok::Other),
        b'|' => assign(Tok::Pipe),
        b'=' if one == b'>' => (2, Tok::FatArrow),
        b'=' => assign(Tok::Eq),
        b'.' if one == b'.' => (if two == b'.' || two == b'=' { 3 } else { 2 }, Tok::Other),
        b'.' => (1, Tok::Dot),
        b':' if one == b':' => (2, Tok::PathSep),
        b':' => (1, Tok::Colon),
        b',' => (1, Tok::Comma),
        b'@' | b';' | b'#' | b'?' | b'$' => (1, Tok::Other),
        _ => return None,
    })
}

/// Lex `src[start..end]`, a token tree. None if it is not one this lexer
/// reads as tree-sitter does: unbalanced, unterminated, or holding a
/// character no token starts with.
fn lex(src: &str, start: usize, end: usize, line: u32) -> Option<Vec<Token>> {
    let mut lexer = Lexer {
        bytes: &src.as_bytes()[..end],
        src,
        pos: start,
        line,
    };
    let mut out: Vec<Token> = Vec::new();
    // Indices of the trees still open.
    let mut open: Vec<usize> = Vec::new();
    loop {
        lexer.skip_space();
        if lexer.pos >= end {
            break;
        }
        // Nothing may follow the outermost tree's closing delimiter.
        if !out.is_empty() && open.is_empty() {
            return None;
        }
        let (start, line) = (lexer.pos, lexer.line);
        let b = lexer.bytes[start];
        if out.is_empty() && !matches!(b, b'(' | b'[' | b'{') {
            return None;
        }
        let kind = match b {
            b'(' | b'[' | b'{' => {
                open.push(out.len());
                out.push(Token {
                    kind: Tok::Tree,
                    start,
                    end: start,
                    line,
                    first: out.len() + 1,
                    after: 0,
                });
                lexer.pos += 1;
                if b == b'(' {
                    Tok::OpenParen
                } else {
                    Tok::Other
                }
            }
            b')' | b']' | b'}' => {
                let tree = open.pop()?;
                let opener = lexer.bytes[out[tree].start];
                if !matches!((opener, b), (b'(', b')') | (b'[', b']') | (b'{', b'}')) {
                    return None;
                }
                lexer.pos += 1;
                out.push(Token {
                    kind: Tok::Other,
                    start,
                    end: lexer.pos,
                    line,
                    first: 0,
                    after: 0,
                });
                let after = out.len();
                out[tree].end = lexer.pos;
                out[tree].after = after;
                continue;
            }
            _ => lexer.token()?,
        };
        out.push(Token {
            kind,
            start,
            end: lexer.pos,
            line,
            first: 0,
            after: 0,
        });
    }
    if out.is_empty() || !open.is_empty() {
        return None;
    }
    Some(out)
}

struct Lexer<'s> {
    /// The file up to the end of the tree.
    bytes: &'s [u8],
    src: &'s str,
    pos: usize,
    line: u32,
}

impl Lexer<'_> {
    fn peek(&self, ahead: usize) -> u8 {
        self.bytes.get(self.pos + ahead).copied().unwrap_or(0)
    }

    fn rest(&self) -> &[u8] {
        &self.bytes[self.pos..]
    }

    /// Move to `to`, counting the lines passed.
    fn advance_to(&mut self, to: usize) {
        let to = to.min(self.bytes.len());
        self.line += memchr::memchr_iter(b'\n', &self.bytes[self.pos..to]).count() as u32;
        self.pos = to;
    }

    fn char_at(&self, pos: usize) -> Option<char> {
        self.src.get(pos..self.bytes.len())?.chars().next()
    }

    fn skip_space(&mut self) {
        loop {
            match self.peek(0) {
                b'\n' => {
                    self.line += 1;
                    self.pos += 1;
                }
                b' ' | b'\t' | b'\r' | 0x0b | 0x0c => self.pos += 1,
                b if b >= 0x80 => match self.char_at(self.pos) {
                    Some(c) if c.is_whitespace() => self.pos += c.len_utf8(),
                    _ => return,
                },
                _ => return,
            }
        }
    }

    /// One token other than a delimiter, starting at `pos`.
    fn token(&mut self) -> Option<Tok> {
        let b = self.peek(0);
        match b {
            b'/' if self.peek(1) == b'/' => {
                // A doc comment (`///`, `//!`, not `////`) ends after its
                // newline, a plain one before it.
                let rest = self.rest();
                let doc = (rest.starts_with(b"///") && !rest.starts_with(b"////"))
                    || rest.starts_with(b"//!");
                let end = match memchr::memchr(b'\n', rest) {
                    Some(n) => self.pos + n + usize::from(doc),
                    None => self.bytes.len(),
                };
                self.advance_to(end);
                Some(Tok::Other)
            }
            b'/' if self.peek(1) == b'*' => self.block_comment(),
            b'"' => self.string(1),
            b'b' | b'c' if self.peek(1) == b'"' => self.string(2),
            b'b' if self.peek(1) == b'\'' => {
                if self.char_literal(1) {
                    Some(Tok::Other)
                } else {
                    self.word()
                }
            }
            b'r' | b'b' | b'c' if self.raw_string()? => Some(Tok::Other),
            b'\'' => {
                if !self.char_literal(0) {
                    self.pos += 1;
                }
                Some(Tok::Other)
            }
            b'0'..=b'9' => {
                self.number();
                Some(Tok::Other)
            }
            b'_' | b'a'..=b'z' | b'A'..=b'Z' => self.word(),
            b if b >= 0x80 => match self.char_at(self.pos) {
                Some(c) if c.is_alphabetic() => self.word(),
                _ => None,
            },
            _ => {
                let (len, kind) = punctuation(self.rest())?;
                self.pos += len;
                Some(kind)
            }
        }
    }

    /// `/* … */`, nested.
    fn block_comment(&mut self) -> Option<Tok> {
        let mut depth = 0usize;
        let mut p = self.pos;
        loop {
            let rest = self.bytes.get(p..)?;
            if rest.starts_with(b"/*") {
                depth += 1;
                p += 2;
            } else if rest.starts_with(b"*/") {
                depth -= 1;
                p += 2;
                if depth == 0 {
                    self.advance_to(p);
                    return Some(Tok::Other);
                }
            } else if rest.is_empty() {
                return None;
            } else {
                p += 1;
            }
        }
    }

    /// A string whose text starts `open` bytes from here.
    fn string(&mut self, open: usize) -> Option<Tok> {
        let mut p = self.pos + open;
        loop {
            match *self.bytes.get(p)? {
                b'\\' => p += 2,
                b'"' => break,
                _ => p += 1,
            }
        }
        self.advance_to(p + 1);
        Some(Tok::Other)
    }

    /// `r"…"`, `r#"…"#`, `br"…"`, `cr"…"`: Some(true) if one starts here,
    /// Some(false) if not, None if one starts but never ends.
    fn raw_string(&mut self) -> Option<bool> {
        let mut p = self.pos;
        if matches!(self.bytes[p], b'b' | b'c') {
            p += 1;
        }
        if self.bytes.get(p) != Some(&b'r') {
            return Some(false);
        }
        p += 1;
        let hashes = self.bytes[p..].iter().take_while(|&&b| b == b'#').count();
        p += hashes;
        if self.bytes.get(p) != Some(&b'"') {
            return Some(false);
        }
        p += 1;
        loop {
            let quote = p + memchr::memchr(b'"', self.bytes.get(p..)?)?;
            p = quote + 1;
            let closing = self.bytes[p..]
                .iter()
                .take(hashes)
                .take_while(|&&b| b == b'#');
            let found = closing.count();
            p += found;
            if found == hashes {
                self.advance_to(p);
                return Some(true);
            }
        }
    }

    /// A character literal starting `prefix` bytes from here (after a `b`):
    /// `'x'`, `'\n'`, `'\x41'`, `'\u{41}'`, `''`. False, without moving,
    /// if there is none (a lifetime's quote).
    fn char_literal(&mut self, prefix: usize) -> bool {
        let start = self.pos + prefix + 1;
        let hex = |p: usize, n: usize| {
            self.bytes.len() >= p + n && self.bytes[p..p + n].iter().all(u8::is_ascii_hexdigit)
        };
        let body_end = match self.bytes.get(start) {
            Some(b'\'') => Some(start),
            Some(b'\\') => match self.bytes.get(start + 1) {
                Some(b'u') if self.bytes.get(start + 2) == Some(&b'{') => {
                    let digits = self.bytes[start + 3..]
                        .iter()
                        .take_while(|b| b.is_ascii_hexdigit())
                        .count();
                    (digits > 0 && self.bytes.get(start + 3 + digits) == Some(&b'}'))
                        .then_some(start + 4 + digits)
                }
                Some(b'u') => hex(start + 2, 4).then_some(start + 6),
                Some(b'x') => hex(start + 2, 2).then_some(start + 4),
                Some(_) => self.char_at(start + 1).map(|c| start + 1 + c.len_utf8()),
                None => None,
            },
            Some(_) => self.char_at(start).map(|c| start + c.len_utf8()),
            None => None,
        };
        match body_end {
            Some(e) if self.bytes.get(e) == Some(&b'\'') => {
                self.advance_to(e + 1);
                true
            }
            _ => false,
        }
    }

    /// An integer or float literal, split as tree-sitter-rust splits them:
    /// its scanner takes a float if it finds a fraction or an exponent, and
    /// `1.max` and `1..2` start with an integer.
    fn number(&mut self) {
        let end = self.float().unwrap_or_else(|| self.integer());
        self.pos = end;
    }

    /// Where a float literal starting here ends, if one does.
    fn float(&self) -> Option<usize> {
        let num = |b: u8| b == b'_' || b.is_ascii_digit();
        let at = |p: usize| self.bytes.get(p).copied().unwrap_or(0);
        let mut p = self.pos + 1;
        while num(at(p)) {
            p += 1;
        }
        let fraction = at(p) == b'.';
        if fraction {
            p += 1;
            if at(p) == b'.' || self.char_at(p).is_some_and(char::is_alphabetic) {
                return None;
            }
            while num(at(p)) {
                p += 1;
            }
        }
        let exponent = matches!(at(p), b'e' | b'E');
        if exponent {
            let mut q = p + 1;
            if matches!(at(q), b'+' | b'-') {
                q += 1;
            }
            if !num(at(q)) {
                // `1e` or `1.0e+`: the float ends before the `e`.
                return Some(p);
            }
            while num(at(q)) {
                q += 1;
            }
            p = q;
        }
        if !fraction && !exponent {
            return None;
        }
        if matches!(at(p), b'u' | b'i' | b'f') && at(p + 1).is_ascii_digit() {
            p += 1;
            while at(p).is_ascii_digit() {
                p += 1;
            }
        }
        Some(p)
    }

    /// Where the integer literal starting here ends: the longest of its
    /// decimal, hex, octal and binary forms, then a type suffix if one
    /// follows.
    fn integer(&self) -> usize {
        let run = |from: usize, ok: fn(u8) -> bool| {
            self.bytes[from.min(self.bytes.len())..]
                .iter()
                .take_while(|&&b| ok(b))
                .count()
        };
        let mut end = self.pos + 1 + run(self.pos + 1, |b| b == b'_' || b.is_ascii_digit());
        if self.bytes[self.pos] == b'0' {
            let digits: Option<fn(u8) -> bool> = match self.peek(1) {
                b'x' => Some(|b| b == b'_' || b.is_ascii_hexdigit()),
                b'o' => Some(|b| matches!(b, b'0'..=b'7' | b'_')),
                b'b' => Some(|b| matches!(b, b'0' | b'1' | b'_')),
                _ => None,
            };
            if let Some(ok) = digits {
                let n = run(self.pos + 2, ok);
                if n > 0 {
                    end = end.max(self.pos + 2 + n);
                }
            }
        }
        let rest = &self.bytes[end..];
        match NUMERIC_SUFFIXES
            .iter()
            .find(|s| rest.starts_with(s.as_bytes()))
        {
            Some(s) => end + s.len(),
            None => end,
        }
    }

    /// A word: an identifier (`r#type` too) or a keyword.
    fn word(&mut self) -> Option<Tok> {
        let start = self.pos;
        let raw = self.rest().starts_with(b"r#")
            && self
                .char_at(start + 2)
                .is_some_and(|c| c == '_' || c.is_alphabetic());
        let mut p = if raw { start + 2 } else { start };
        loop {
            match self.bytes.get(p) {
                Some(&b) if b == b'_' || b.is_ascii_alphanumeric() => p += 1,
                Some(&b) if b >= 0x80 => match self.char_at(p) {
                    Some(c) if c.is_alphanumeric() => p += c.len_utf8(),
                    _ => break,
                },
                _ => break,
            }
        }
        self.pos = p;
        Some(if raw {
            Tok::Ident
        } else {
            word_kind(&self.src[start..p])
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every macro call's token tree in `src`, lexed and read from
    /// tree-sitter: the two lists must be the same, token for token.
    fn assert_lexed_as_parsed(src: &str) -> usize {
        let tree = crate::syntax::parse(Lang::Rust, src.as_bytes()).expect("parses");
        let names = Lang::Rust.names();
        let mut trees = Vec::new();
        let mut stack = vec![tree.root_node()];
        while let Some(node) = stack.pop() {
            let mut cursor = node.walk();
            for child in node.children(&mut cursor) {
                if names.kind(child) == "token_tree" && names.kind(node) == "macro_invocation" {
                    trees.push(child);
                } else {
                    stack.push(child);
                }
            }
        }
        let mut lexed = 0;
        for tt in trees.iter().filter(|t| !t.has_error()) {
            let line = tt.start_position().row as u32 + 1;
            let tokens = lex(src, tt.start_byte(), tt.end_byte(), line);
            let mut parsed = Vec::new();
            from_nodes(*tt, src, &mut parsed);
            assert_eq!(tokens.as_ref(), Some(&parsed), "{}", &src[tt.byte_range()]);
            lexed += 1;
        }
        lexed
    }

    /// Every kind of token, and the splits that are easy to get wrong.
    const TRICKY: &str = r####"
fn f() {
    m!(a.b(c), x::y::z!(), 1.max(2), 1..2, 1.0..2.5, 1e5, 1e, 2.5e-3f32, 0x1f_u8, 0b102, 0o17i64,
       7usize, 3ms, 1f32, 1_000.0_1, x.0.1, t.0.len(), 'a', '\n', '\'', '\u{1F600}', '\x41', '',
       'static, 'a: loop {}, b'x', b"bytes", c"c", r"raw", r#"ra"w"#, br##"x"#y"##, cr"c",
       r#type, r#fn(), r, br, b, move |x, mut y: u8| x + y, |&a| a, || 0, a || b, a && b,
       let mut z = 0, Self::new(), self.f.g(), crate::k(), super::s, $x, $, # [attr], a -> b,
       a => b, a ..= b, a ... b, a <<= b, a >>= 1, a != b, !a, a @ b, _, _x, __, true, false,
       u8::MAX, str, char, bool, default, union, gen, raw, dyn, in, else, Self, async, await,
       "esc \" \\ quote", "multi
line", /* block /* nested */ */ a, // line
       b, /// doc
       c, //! inner
       d, //// four
       e, /**/ f, /***/ g, /** doc */ h, é, 日本, [1, 2], {3}, (((deep))), a?, a;b, a^b%c);
    vec![make(), x.y];
    assert_eq!(compute(x), shelf::Shelf::count(&s), "{}", x);
}
"####;

    #[test]
    fn macro_arguments_lex_into_the_tokens_tree_sitter_makes() {
        assert!(assert_lexed_as_parsed(TRICKY) >= 3);
        for src in [
            include_str!("rust/mod.rs"),
            include_str!("mod.rs"),
            include_str!("../index/tests.rs"),
            include_str!("../mod.rs"),
            include_str!("../../../tests/it/impact_review.rs"),
        ] {
            assert!(assert_lexed_as_parsed(src) > 0, "no macro call compared");
        }
    }

    #[test]
    fn a_tree_with_syntax_errors_is_read_from_tree_sitter() {
        let src = "fn f() { m!(a, ~b, \\c); }\n";
        let tree = crate::syntax::parse(Lang::Rust, src.as_bytes()).expect("parses");
        let start = src.find("a,").expect("a");
        let tt = tree
            .root_node()
            .descendant_for_byte_range(start, start)
            .and_then(|n| {
                std::iter::successors(Some(n), |n| n.parent())
                    .find(|n| Lang::Rust.names().kind(*n) == "token_tree")
            })
            .expect("token tree");
        assert!(lex(src, tt.start_byte(), tt.end_byte(), 1).is_none());
        let tokens = of_tree(tt, src);
        let idents: Vec<&str> = tokens
            .iter()
            .filter(|t| t.kind == Tok::Ident)
            .map(|t| &src[t.start..t.end])
            .collect();
        assert!(idents.contains(&"a"), "{idents:?}");
    }

    #[test]
    fn any_text_between_delimiters_lexes_or_is_refused_without_panicking() {
        let starts = (0..TRICKY.len()).filter(|&i| TRICKY.is_char_boundary(i));
        for i in starts {
            let ends = (i..TRICKY.len().min(i + 40)).filter(|&e| TRICKY.is_char_boundary(e));
            for e in ends {
                let text = format!("({})", &TRICKY[i..e]);
                if let Some(tokens) = lex(&text, 0, text.len(), 1) {
                    assert_eq!(tokens[0].after, tokens.len(), "{text}");
                    assert!(
                        tokens
                            .iter()
                            .all(|t| t.start <= t.end && t.end <= text.len())
                    );
                }
            }
        }
    }

    #[test]
    fn unbalanced_or_unterminated_text_is_not_lexed() {
        for text in [
            "(a",
            "(a]",
            "(a))",
            "a",
            "(\"open)",
            "(/* open)",
            "(r#\"open\")",
            "(a) b",
        ] {
            assert_eq!(lex(text, 0, text.len(), 1), None, "{text}");
        }
        let ok = "(a\n b)";
        let tokens = lex(ok, 0, ok.len(), 7).expect("lexes");
        let b = tokens
            .iter()
            .find(|t| &ok[t.start..t.end] == "b")
            .expect("b");
        assert_eq!((b.kind, b.line), (Tok::Ident, 8));
    }
}
