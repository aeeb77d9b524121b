use super::*;
use crate::impact::symbols::{Form, Receiver, Visibility};

fn extract(lang: Lang, src: &str) -> FileSymbols {
    Extractor::new()
        .extract(lang, src.as_bytes())
        .expect("extracts")
}

fn refs_named<'a>(s: &'a FileSymbols, name: &str) -> Vec<&'a Ref> {
    s.refs.iter().filter(|r| r.name == name).collect()
}

/// Every node of a tree: kind, byte range, rows, error or missing.
type Row = (u16, usize, usize, usize, usize, bool, bool);

fn nodes(tree: &tree_sitter::Tree) -> Vec<Row> {
    let mut out = Vec::new();
    let mut stack = vec![tree.root_node()];
    while let Some(n) = stack.pop() {
        out.push((
            n.kind_id(),
            n.start_byte(),
            n.end_byte(),
            n.start_position().row,
            n.end_position().column,
            n.is_error(),
            n.is_missing(),
        ));
        let mut c = n.walk();
        stack.extend(n.children(&mut c));
    }
    out
}

/// The text with its item macros opened, parsed from the file's tree
/// edited to match: the tree a fresh parse of that text gives.
fn reparsed_and_fresh(src: &str) -> (tree_sitter::Tree, tree_sitter::Tree) {
    let mut parser = crate::syntax::Parser::new();
    let tree = parser.parse(Lang::Rust, src.as_bytes()).unwrap();
    let rust::Opened { text, blanks, .. } =
        rust::unwrap_item_macros(tree.root_node(), src, &mut parser).expect("item macros");
    let mut old = tree.clone();
    edit_blanks(&mut old, src, &blanks);
    let again = parser.reparse(Lang::Rust, text.as_bytes(), &old).unwrap();
    let fresh = parser.parse(Lang::Rust, text.as_bytes()).unwrap();
    (again, fresh)
}

#[test]
fn item_macros_opened_by_an_incremental_parse_give_the_fresh_parse_s_tree() {
    for src in [
        // tokio's shape: nested item macros in a module and an impl,
        // items around them, a macro that is not items, a multi-byte
        // character before and inside.
        "//! é\nuse crate::a;\n\ncfg_net! {\n    /// A socket.\n    pub struct Udp {\n        io: Evented,\n    }\n    cfg_unix! {\n        pub fn bind() -> Udp { Udp::new(\"ü\") }\n    }\n}\nimpl Udp {\n    cfg_rt! {\n        fn new() -> Udp { todo!() }\n    }\n    fn other(&self) {}\n}\nlazy_static! {\n    static ref X: u8 = 1;\n}\nfn after() { cfg_net! { 1 } }\n",
        // A syntax error outside and next to the macros.
        "fn broken( {\ncfg_rt! {\n    pub fn f() {}\n}\nstruct S { a: }\ncfg_fs! { pub mod fs; }\n",
    ] {
        let (again, fresh) = reparsed_and_fresh(src);
        assert_eq!(
            again.root_node().to_sexp(),
            fresh.root_node().to_sexp(),
            "{src}"
        );
        assert_eq!(nodes(&again), nodes(&fresh), "{src}");
    }
}

/// The plain cursor walk `walk` must match: every node in document
/// order, with its field and depth, skipping what the visitor declines.
fn plain_walk(root: Node, names: &Names, out: &mut Vec<(u16, Option<&'static str>, usize, usize)>) {
    let mut cursor = root.walk();
    let mut depth = 0;
    loop {
        let node = cursor.node();
        let id = node.kind_id();
        out.push((id, field_of(&cursor, names, id), depth, node.start_byte()));
        if declined(id, depth) || !cursor.goto_first_child() {
            loop {
                if cursor.goto_next_sibling() {
                    break;
                }
                if !cursor.goto_parent() {
                    return;
                }
                depth -= 1;
            }
        } else {
            depth += 1;
        }
    }
}

/// Kinds the test visitor does not descend into: a spread of them, so
/// the walk climbs out of subtrees of every shape.
fn declined(id: u16, depth: usize) -> bool {
    depth > 0 && id % 7 == 3
}

#[test]
fn walk_visits_every_node_a_plain_cursor_walk_does() {
    let sources = [
        (Lang::Rust, include_str!("rust/mod.rs")),
        (Lang::Rust, include_str!("../index/resolve.rs")),
        // Syntax errors: ERROR and MISSING nodes.
        (
            Lang::Rust,
            "fn f( { let x = ; vec![1, 2 /* c */ ,];\n impl T for {}\n",
        ),
        (Lang::Rust, ""),
        (
            Lang::Python,
            include_str!("../../../fixtures/impact/python-pkg/head/library/store.py"),
        ),
        (
            Lang::Python,
            "def f(:\n    return [x for x in y if\nclass C(B, metaclass=M):\n    pass\n",
        ),
    ];
    for (lang, src) in sources {
        let tree = crate::syntax::parse(lang, src.as_bytes()).expect("parses");
        let names = lang.names();
        let mut expected = Vec::new();
        plain_walk(tree.root_node(), names, &mut expected);
        let mut seen = Vec::new();
        walk(tree.root_node(), names, |node, id, field, anc| {
            seen.push((id, field.get(), anc.len(), node.start_byte()));
            !declined(id, anc.len())
        });
        assert!(
            expected.len() > 1 || src.is_empty(),
            "{lang:?}: too few nodes"
        );
        assert_eq!(seen, expected, "{lang:?} source of {} bytes", src.len());
    }
}

/// (name, line, column) of every reference, in order.
fn places(s: &FileSymbols) -> Vec<(&str, u32, u32)> {
    s.refs
        .iter()
        .map(|r| (r.name.as_str(), r.line, r.column))
        .collect()
}

#[test]
fn every_site_has_the_column_of_its_name_in_characters() {
    let s = extract(
        Lang::Rust,
        "use crate::{a::B,\n    c::D as E};\nfn f() {\n    let s = \"é\"; a::b::Shelf::make(s);\n    x.go(); m!(crate::k::h(1), y.z());\n}\n",
    );
    assert_eq!(
        places(&s),
        [
            ("B", 1, 16),
            ("D", 2, 8),
            ("Shelf", 4, 24),
            ("make", 4, 31),
            ("go", 5, 7),
            ("x", 5, 5),
            ("m", 5, 13),
            ("h", 5, 26),
            ("y", 5, 32),
            ("z", 5, 34),
        ],
        "`é` is one character"
    );
    let f = s.defs.iter().find(|d| d.name == "f").expect("f");
    assert_eq!((f.line, f.column), (3, 4));
    let imports: Vec<(u32, u32)> = s.imports.iter().map(|i| (i.line, i.column)).collect();
    assert_eq!(imports, [(1, 1), (1, 1)], "an import is at its statement");
    let g = extract(Lang::Rust, "fn f() {\n    use ignore::WalkState::*;\n}\n");
    assert_eq!(places(&g), [("WalkState", 2, 17)], "the enum, not the path");
    let m = extract(
        Lang::Rust,
        "cfg_io! {\n    pub use crate::io::{Ready,\n        Interest};\n}\n",
    );
    assert_eq!(
        places(&m),
        [("cfg_io", 1, 1), ("Ready", 2, 25), ("Interest", 3, 9)]
    );
    assert_eq!((m.imports[0].line, m.imports[0].column), (2, 5));
    let p = extract(
        Lang::Python,
        "from .a import (b,\n    c as d)\nclass K(Base):\n    def go(self, x: \"mod.Node\") -> None:\n        «» = 1; self.run(); mod.f(x)\n",
    );
    let p_places: Vec<(&str, u32, u32)> = places(&p)
        .into_iter()
        .filter(|(n, _, _)| *n != "None")
        .collect();
    assert_eq!(
        p_places,
        [
            ("b", 1, 17),
            ("c", 2, 5),
            ("Base", 3, 9),
            ("mod", 4, 22),
            ("Node", 4, 26),
            ("run", 5, 22),
            ("f", 5, 33),
            ("mod", 5, 29),
        ]
    );
    let go = p.defs.iter().find(|d| d.name == "go").expect("go");
    assert_eq!((go.line, go.column), (4, 9));
}

#[test]
fn a_stray_byte_that_is_not_utf8_costs_nothing_around_it() {
    let src =
        b"// caf\xe9 latin-1\nfn helper() {}\nfn f() {\n    let s = \"\xff\";\n    helper();\n}\n";
    let s = Extractor::new().extract(Lang::Rust, src).expect("extracts");
    let defs: Vec<&str> = s.defs.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(defs, ["helper", "f"]);
    let calls = refs_named(&s, "helper");
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!((calls[0].form, calls[0].line), (Form::Call, 5));
}

#[test]
fn rust_locals_shadow_functions_but_earlier_calls_still_count() {
    let s = extract(
        Lang::Rust,
        "fn helper() -> u32 { 1 }\nfn f() -> u32 {\n    let helper = helper();\n    helper + 1\n}\n",
    );
    let calls = refs_named(&s, "helper");
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!((calls[0].form, calls[0].line), (Form::Call, 3));
}

#[test]
fn rust_macro_arguments_are_references_unless_local() {
    let s = extract(
        Lang::Rust,
        "fn t() {\n    let x = 1;\n    assert_eq!(compute(x), shelf::Shelf::count(&s), \"{}\", x);\n    v.push(vec![make()]);\n}\n",
    );
    let names: Vec<(&str, Form)> = s.refs.iter().map(|r| (r.name.as_str(), r.form)).collect();
    assert!(names.contains(&("compute", Form::Call)), "{names:?}");
    assert!(names.contains(&("count", Form::Path)), "{names:?}");
    assert!(names.contains(&("Shelf", Form::Type)), "{names:?}");
    assert!(names.contains(&("make", Form::Call)), "{names:?}");
    assert!(!names.iter().any(|(n, _)| *n == "x"), "{names:?}");
    // tokio: `assert_value!(tokio::net::TcpStream: Send & Sync)`; a
    // single name before `:` is a label.
    let s = extract(
        Lang::Rust,
        "fn t() {
    assert_value!(net::TcpStream: Send);
    m!(label: 1);
}
",
    );
    let names: Vec<(&str, Form)> = s.refs.iter().map(|r| (r.name.as_str(), r.form)).collect();
    assert!(names.contains(&("TcpStream", Form::Path)), "{names:?}");
    assert!(!names.iter().any(|(n, _)| *n == "label"), "{names:?}");
}

#[test]
fn rust_names_bound_inside_macro_arguments_are_locals() {
    let s = extract(
        Lang::Rust,
        "fn t() {\n    check!(data, |stream| {\n        assert_eq!(stream.offset(), 1);\n    });\n    vec![{ let total = sum(); total.max(1) }];\n}\n",
    );
    let recv = |n: &str| {
        refs_named(&s, n)
            .iter()
            .map(|r| r.receiver.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        recv("offset"),
        vec![Receiver::Unknown],
        "a closure parameter, not a path"
    );
    assert_eq!(
        recv("max"),
        vec![Receiver::Unknown],
        "a let binding, not a path"
    );
    assert!(refs_named(&s, "total").is_empty());
    assert_eq!(refs_named(&s, "sum").len(), 1);
    assert_eq!(
        refs_named(&s, "data").len(),
        1,
        "names before the closure still count"
    );
}

#[test]
fn rust_mut_and_move_bindings_inside_macro_arguments_are_locals() {
    // `mut` once hid the name after it, and `move` the closure after it.
    let s = extract(
        Lang::Rust,
        "fn t() {\n    check!({ let mut count = 0; count += step(); count });\n    spawn!(move |job, mut acc| job.run(acc));\n    fold!(items, |mut total: u32, item| total + item);\n}\n",
    );
    for local in ["count", "job", "acc", "total", "item"] {
        assert!(refs_named(&s, local).is_empty(), "{local}: {:?}", s.refs);
    }
    assert_eq!(refs_named(&s, "step").len(), 1);
    assert_eq!(refs_named(&s, "items").len(), 1);
    let run = refs_named(&s, "run");
    assert_eq!(run.len(), 1);
    assert_eq!(run[0].receiver, Receiver::Unknown, "a closure parameter");
}

#[test]
fn rust_turbofish_calls_are_calls_and_turbofish_values_are_values() {
    // The callee of `f::<T>(x)` is a `generic_function` filling the
    // call's `function` field; `f::<T>` alone is a value.
    let s = extract(
        Lang::Rust,
        "fn t(v: V) {\n    helper::<u8>(1);\n    let g = helper::<u8>;\n    v.build::<u8>();\n    v.build::<u8>;\n    take(helper::<u16>);\n}\n",
    );
    let helper: Vec<(Form, u32)> = refs_named(&s, "helper")
        .iter()
        .map(|r| (r.form, r.line))
        .collect();
    assert_eq!(
        helper,
        [(Form::Call, 2), (Form::Value, 3), (Form::Value, 6)]
    );
    let build: Vec<(Form, u32)> = refs_named(&s, "build")
        .iter()
        .map(|r| (r.form, r.line))
        .collect();
    assert_eq!(build, [(Form::MethodCall, 4)], "{:?}", s.refs);
}

#[test]
fn rust_methods_know_their_impl_type_and_trait() {
    let s = extract(
        Lang::Rust,
        "struct S;\nimpl S {\n    fn new() -> Self { Self::make() }\n}\nimpl std::fmt::Display for S {\n    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result { Ok(()) }\n}\n",
    );
    let fmt = s.defs.iter().position(|d| d.name == "fmt").expect("fmt");
    assert_eq!(s.local_path(fmt), "<S as Display>::fmt");
    assert_eq!(s.defs[fmt].kind, Kind::Method);
    let make = refs_named(&s, "make");
    assert_eq!(make[0].path, vec!["S".to_string()]);
    assert!(
        refs_named(&s, "S")
            .iter()
            .any(|r| r.form == Form::Type && r.line == 3)
    );
}

#[test]
fn rust_test_code_and_doc_comments() {
    let s = extract(
        Lang::Rust,
        "/// Doc.\n#[inline]\npub fn f() {}\n#[cfg(test)]\nmod tests {\n    fn helper() {}\n    #[test]\n    fn works() {}\n}\n#[test]\nfn top() {}\n",
    );
    let by = |n: &str| s.defs.iter().find(|d| d.name == n).expect(n);
    assert_eq!(
        (by("f").start_line, by("f").end_line, by("f").test),
        (1, 3, false)
    );
    assert!(by("helper").test && by("works").test && by("top").test);
    assert_eq!(by("f").visibility, Visibility::Public);
}

#[test]
fn rust_receivers_with_evident_types() {
    let s = extract(
        Lang::Rust,
        "fn f(shelf: &Shelf) {\n    let store = Store::new();\n    let b: Box<Book> = get();\n    shelf.count();\n    store.add();\n    b.label();\n    self.inner.run();\n    other().go();\n}\n",
    );
    let recv = |n: &str| refs_named(&s, n)[0].receiver.clone();
    assert_eq!(recv("count"), Receiver::Type("Shelf".into()));
    assert_eq!(
        recv("add"),
        Receiver::Returned(vec!["Store".into(), "new".into()])
    );
    assert_eq!(recv("label"), Receiver::Type("Book".into()));
    assert_eq!(recv("run"), Receiver::Field("inner".into()));
    assert_eq!(recv("go"), Receiver::Returned(vec!["other".into()]));
    let t = extract(
        Lang::Rust,
        "impl W {\n    fn f(&self, e: &dyn Events, g: impl Sink) {\n        e.event();\n        g.pour();\n        let i = self.index;\n        i.file();\n    }\n}\n",
    );
    let recv = |n: &str| refs_named(&t, n)[0].receiver.clone();
    assert_eq!(recv("event"), Receiver::Type("Events".into()));
    assert_eq!(recv("pour"), Receiver::Type("Sink".into()));
    assert_eq!(recv("file"), Receiver::Field("index".into()));
}

#[test]
fn rust_receivers_through_fields_pointers_and_blocks() {
    // tokio: `self.lock.s.release(1)`, `this.s.release(n)` with
    // `this: Self`, `Pin::new(&mut self.std).poll_flush(cx)`,
    // `rt_handle.io()` with `rt_handle: &driver::Handle`.
    let src = "struct Guard<'a> {\n    lock: &'a RwLock,\n    p: Pin<Box<Io>>,\n}\nstruct Half(Arc<Inner>, pub u8);\nimpl Guard<'_> {\n    fn f(&self, this: Self, h: &driver::Handle, p: Pin<&mut Io>) {\n        self.lock.s.release(1);\n        this.s.acquire();\n        h.io();\n        p.poll_io();\n        Pin::new(&mut self.std).poll_flush();\n        self.0.is_write_vectored();\n        (*self.boxed).run();\n        let l = {\n            Sock::new()\n        };\n        l.accept();\n        let m = {\n            let s = Sock::new();\n            s\n        };\n        m.bind();\n        let g = unsafe { Fd::register() }.unwrap();\n        g.ready();\n        let k = h.lock.s;\n        k.close();\n        let e = { s.listen(8); };\n        e.never();\n        let t = &mut *self;\n        t.mine();\n        let w = &mut Sock::new();\n        w.shut();\n        other().x.y.go();\n    }\n}\n";
    let s = extract(Lang::Rust, src);
    let by = |n: &str| s.defs.iter().find(|d| d.name == n).expect(n);
    let fields = |n: &str| by(n).fields.clone();
    let field = |n: &str, t: &str| (n.to_string(), t.to_string());
    assert_eq!(
        fields("Guard"),
        [field("lock", "RwLock"), field("p", "Io")],
        "through `&`, `Pin` and `Box`"
    );
    assert_eq!(
        fields("Half"),
        [field("0", "Inner"), field("1", "u8")],
        "a tuple struct's fields by place"
    );
    let recv = |n: &str| refs_named(&s, n)[0].receiver.clone();
    let lock = Receiver::Field("lock".into());
    let handle = Receiver::Type("driver::Handle".into());
    assert_eq!(recv("release"), lock.then_attribute("s"));
    assert_eq!(recv("acquire"), Receiver::Field("s".into()), "`this: Self`");
    assert_eq!(recv("io"), handle.clone(), "the path is kept");
    assert_eq!(recv("poll_io"), Receiver::Type("Io".into()));
    assert_eq!(recv("poll_flush"), Receiver::Field("std".into()));
    assert_eq!(recv("is_write_vectored"), Receiver::Field("0".into()));
    assert_eq!(recv("run"), Receiver::Field("boxed".into()));
    let sock = Receiver::Returned(vec!["Sock".into(), "new".into()]);
    assert_eq!(recv("accept"), sock.clone(), "a block's value");
    assert_eq!(recv("bind"), Receiver::Unknown, "names the block binds");
    assert_eq!(
        recv("ready"),
        Receiver::Returned(vec!["Fd".into(), "register".into()])
    );
    assert_eq!(
        recv("close"),
        handle.then_attribute("lock").then_attribute("s")
    );
    assert_eq!(recv("never"), Receiver::Unknown, "a block of statements");
    assert_eq!(recv("mine"), Receiver::SelfValue);
    assert_eq!(recv("shut"), sock.clone(), "`&mut` is not the value");
    let other = Receiver::Returned(vec!["other".into()]);
    assert_eq!(recv("go"), other.then_attribute("x").then_attribute("y"));
}

#[test]
fn item_macros_of_plain_items_are_read_as_the_items_they_hold() {
    // tokio: `cfg_net! { pub struct UdpSocket { io: … } }`.
    let src = "cfg_net! {\n    /// A socket.\n    pub struct Udp {\n        io: Evented,\n    }\n    cfg_unix! {\n        pub fn bind() -> Udp { Udp::new() }\n    }\n}\nimpl Udp {\n    cfg_rt! {\n        fn new() -> Udp { todo!() }\n    }\n}\nbitflags! {\n    pub struct Flags: u32 {\n        const A = 1;\n    }\n}\n";
    let s = extract(Lang::Rust, src);
    let udp = s.defs.iter().find(|d| d.name == "Udp").expect("the struct");
    assert_eq!((udp.line, udp.column), (3, 16), "at its place in the file");
    assert_eq!(udp.fields, [("io".to_string(), "Evented".to_string())]);
    let bind = s.defs.iter().find(|d| d.name == "bind").expect("nested");
    assert_eq!((bind.line, bind.returns.as_deref()), (7, Some("Udp")));
    let new = s.defs.iter().find(|d| d.name == "new").expect("in an impl");
    assert_eq!(new.container.as_deref(), Some("Udp"));
    let calls: Vec<(u32, u32)> = refs_named(&s, "new")
        .iter()
        .map(|r| (r.line, r.column))
        .collect();
    assert_eq!(calls, [(7, 37)]);
    let macros: Vec<(&str, u32, u32)> = s
        .refs
        .iter()
        .filter(|r| r.form == Form::Macro)
        .map(|r| (r.name.as_str(), r.line, r.column))
        .collect();
    assert!(macros.contains(&("cfg_unix", 6, 5)), "{macros:?}");
    assert!(macros.contains(&("cfg_net", 1, 1)) && macros.contains(&("cfg_rt", 11, 5)));
    assert!(
        !s.defs.iter().any(|d| d.name == "Flags"),
        "a body that is not plain items stays a macro"
    );
    assert!(!s.syntax_errors);
}

#[test]
fn a_shared_pointer_made_of_a_value_has_the_value_s_methods() {
    let s = extract(
        Lang::Rust,
        "fn t() {\n    let sem = Arc::new(Semaphore::new(2));\n    sem.forget_permits(1);\n    let b = Box::pin(make());\n    b.go();\n    let v = Arc::new(x);\n    v.stop();\n}\n",
    );
    let recv = |n: &str| refs_named(&s, n)[0].receiver.clone();
    let semaphore = Receiver::Returned(vec!["Semaphore".into(), "new".into()]);
    assert_eq!(recv("forget_permits"), semaphore);
    assert_eq!(recv("go"), Receiver::Returned(vec!["make".into()]));
    assert_eq!(
        recv("stop"),
        Receiver::Unknown,
        "a value of no evident type"
    );
}

#[test]
fn chains_inside_macros_and_calls_of_closures_keep_their_receivers() {
    // ripgrep's `ignore` tests: `assert!(ig.matched("a", false).is_ignore())`
    // and `let m = |p| gi.matched_path_or_any_parents(p, false);`.
    let s = extract(
        Lang::Rust,
        "fn t(b: B) {\n    let ov = ov(&[]);\n    assert!(ov.matched(\"a\", false).is_ignore());\n    let m = |p: &str| {\n        b.find(p, false)\n    };\n    assert!(m(\"a\").is_some_one());\n    let x = m(\"b\");\n    x.is_none_one();\n    check!(a::make()?.go().await.step(), self.k.len_of());\n    let f = |p| p;\n    f(1).unknown();\n}\n",
    );
    let recv = |n: &str| refs_named(&s, n)[0].receiver.clone();
    let ov = || Receiver::Returned(vec!["ov".into()]);
    assert_eq!(recv("is_ignore"), ov().then_call("matched"));
    let found = || Receiver::Type("B".into()).then_call("find");
    assert_eq!(recv("is_some_one"), found(), "a closure's call");
    assert_eq!(recv("is_none_one"), found(), "a closure's call's value");
    let make = || Receiver::Returned(vec!["a".into(), "make".into()]);
    assert_eq!(
        recv("step"),
        make().then_call("go"),
        "through `?` and `.await`"
    );
    assert_eq!(recv("len_of"), Receiver::Field("k".into()));
    assert_eq!(
        recv("unknown"),
        Receiver::Unknown,
        "a closure of no evident value"
    );
}

#[test]
fn method_chains_are_receivers_of_what_each_call_returns() {
    let s = extract(
        Lang::Rust,
        "fn f(b: Builder) {\n    let w = WalkBuilder::new(p).hidden(true).build();\n    w.run();\n    b.step()?.finish().await.done();\n    let n = b.size().unwrap();\n    n.get();\n}\n",
    );
    let recv = |n: &str| refs_named(&s, n)[0].receiver.clone();
    let new = || Receiver::Returned(vec!["WalkBuilder".into(), "new".into()]);
    assert_eq!(recv("hidden"), new());
    assert_eq!(recv("build"), new().then_call("hidden"));
    assert_eq!(recv("run"), new().then_call("hidden").then_call("build"));
    let b = || Receiver::Type("Builder".into());
    assert_eq!(recv("done"), b().then_call("step").then_call("finish"));
    assert_eq!(recv("get"), b().then_call("size"), "unwrap keeps the type");
    let p = extract(
        Lang::Python,
        "class App:\n    def go(self, x: Shelf):\n        self.make().run()\n        self.store.open().read_all()\n        y = x.copy()\n        y.label()\n        Book().save().close()\n\n    def make(self) -> \"Self\":\n        return self\n",
    );
    let recv = |n: &str| refs_named(&p, n)[0].receiver.clone();
    assert_eq!(recv("run"), Receiver::SelfValue.then_call("make"));
    assert_eq!(
        recv("read_all"),
        Receiver::Field("store".into()).then_call("open")
    );
    assert_eq!(
        recv("label"),
        Receiver::Type("Shelf".into()).then_call("copy")
    );
    assert_eq!(
        recv("close"),
        Receiver::Type("Book".into()).then_call("save")
    );
    let make = p.defs.iter().find(|d| d.name == "make").expect("make");
    assert_eq!(make.returns.as_deref(), Some("App"), "Self is the class");
}

#[test]
fn long_method_chains_cost_time_linear_in_their_length() {
    // Each call's receiver is the chain before it: read once per call,
    // and only so deep (reading it twice per call once made this
    // chain take 2^300 steps).
    let chain = ".step()".repeat(300);
    for (lang, src) in [
        (Lang::Rust, format!("fn f(b: B) {{\n    b{chain};\n}}\n")),
        (Lang::Python, format!("def f(b: B):\n    b{chain}\n")),
    ] {
        let s = extract(lang, &src);
        let steps = refs_named(&s, "step");
        assert_eq!(steps.len(), 300, "{lang:?}");
        let has = |r: Receiver| steps.iter().any(|s| s.receiver == r);
        assert!(has(Receiver::Type("B".into())), "{lang:?}");
        assert!(
            has(Receiver::Type("B".into()).then_call("step")),
            "{lang:?}"
        );
        let unknown = steps.iter().filter(|s| s.receiver == Receiver::Unknown);
        assert!(unknown.count() > 250, "{lang:?}: deep in the chain");
    }
}

#[test]
fn declared_return_types_unwrap_results_options_and_boxes() {
    let s = extract(
        Lang::Rust,
        "fn a() -> std::io::Result<Box<Shelf>> { todo() }\nfn b() -> &'static store::Store { todo() }\nfn c() -> u32 { 1 }\nimpl Shelf {\n    fn new() -> Self { Shelf }\n    fn get(&self) -> Option<Vec<u8>> { None }\n}\n",
    );
    let returns: Vec<(&str, Option<&str>)> = s
        .defs
        .iter()
        .filter(|d| matches!(d.kind, Kind::Function | Kind::Method))
        .map(|d| (d.name.as_str(), d.returns.as_deref()))
        .collect();
    assert_eq!(
        returns,
        vec![
            ("a", Some("Shelf")),
            ("b", Some("store::Store")),
            ("c", Some("u32")),
            ("new", Some("Shelf")),
            ("get", Some("Vec")),
        ]
    );
    let p = extract(
        Lang::Python,
        "def make() -> models.Shelf:\n    pass\n\ndef other():\n    pass\n",
    );
    let returns: Vec<Option<&str>> = p.defs.iter().map(|d| d.returns.as_deref()).collect();
    assert_eq!(returns, vec![Some("models.Shelf"), None]);
}

#[test]
fn rust_use_trees() {
    let s = extract(
        Lang::Rust,
        "pub use crate::a::{b::C as D, self, e::*};\nuse super::F;\nuse crate::{\n    g::H,\n    I as J,\n};\n",
    );
    // Each imported name is referenced on its own line of a `use` list.
    let lines: Vec<(&str, u32)> = s
        .refs
        .iter()
        .filter(|r| r.form == Form::Import)
        .map(|r| (r.name.as_str(), r.line))
        .collect();
    assert_eq!(
        lines,
        vec![("C", 1), ("a", 1), ("F", 2), ("H", 4), ("I", 5)]
    );
    let imports: Vec<(String, &str, bool, bool)> = s
        .imports
        .iter()
        .map(|i| (i.path.join("::"), i.alias.as_str(), i.glob, i.public))
        .collect();
    assert_eq!(
        imports,
        vec![
            ("crate::a::b::C".to_string(), "D", false, true),
            ("crate::a".to_string(), "a", false, true),
            ("crate::a::e".to_string(), "", true, true),
            ("super::F".to_string(), "F", false, false),
            ("crate::g::H".to_string(), "H", false, false),
            ("crate::I".to_string(), "J", false, false),
        ]
    );
}

#[test]
fn rust_use_and_mod_inside_item_macros_are_read_as_outside() {
    let s = extract(
        Lang::Rust,
        "cfg_io! {\n    pub(crate) mod interest;\n    pub use interest::Interest;\n    cfg_net! {\n        pub use self::ready::{Ready, Other as O};\n    }\n}\nmod x {\n    cfg_rt! { use crate::a::B; }\n}\nfn f() {\n    m! { use a::b; }\n}\n",
    );
    let imports: Vec<(String, &str, bool, u32)> = s
        .imports
        .iter()
        .map(|i| (i.path.join("::"), i.alias.as_str(), i.public, i.line))
        .collect();
    assert_eq!(
        imports,
        [
            ("interest::Interest".to_string(), "Interest", true, 3),
            ("self::ready::Ready".to_string(), "Ready", true, 5),
            ("self::ready::Other".to_string(), "O", true, 5),
            ("crate::a::B".to_string(), "B", false, 9),
        ]
    );
    let x = s.defs.iter().position(|d| d.name == "x").expect("x");
    assert_eq!(s.imports[3].scope, Some(x as u32));
    let interest = s.defs.iter().find(|d| d.name == "interest").expect("mod");
    assert_eq!(
        (interest.kind, interest.visibility, interest.line),
        (Kind::Module, Visibility::Crate, 2)
    );
    // Each imported name is an import reference, once.
    let names: Vec<(&str, Form)> = s
        .refs
        .iter()
        .filter(|r| ["Interest", "Ready", "Other", "B"].contains(&r.name.as_str()))
        .map(|r| (r.name.as_str(), r.form))
        .collect();
    assert_eq!(
        names,
        [
            ("Interest", Form::Import),
            ("Ready", Form::Import),
            ("Other", Form::Import),
            ("B", Form::Import)
        ]
    );
}

#[test]
fn python_annotations_attributes_and_elements_type_receivers() {
    let s = extract(
        Lang::Python,
        "def f(o: ExprStmt, ts: list[Type], m: Optional[\"Node\"], u: Node | None, p: tuple[A, ...], d: dict[str, B]):\n    o.expr.accept(v)\n    for t in ts:\n        t.accept(v)\n    [x.serialize() for x in o.items]\n    ts[0].copy()\n    m.go()\n    u.go2()\n    p[1].go3()\n    d.get()\n    self.a.b.run()\n",
    );
    let recv = |n: &str| refs_named(&s, n)[0].receiver.clone();
    let o = || Receiver::Type("ExprStmt".into());
    assert_eq!(recv("accept"), o().then_attribute("expr"));
    let ts = || Receiver::Type("[Type]".into());
    assert_eq!(
        refs_named(&s, "accept")[1].receiver,
        ts().then_item(),
        "a loop's name"
    );
    assert_eq!(
        recv("serialize"),
        o().then_attribute("items").then_item(),
        "a comprehension's name, used before it is bound"
    );
    assert_eq!(recv("copy"), ts().then_item(), "indexing");
    assert_eq!(
        recv("go"),
        Receiver::Type("Node".into()),
        "Optional of a forward reference"
    );
    assert_eq!(recv("go2"), Receiver::Type("Node".into()));
    assert_eq!(recv("go3"), Receiver::Type("[A]".into()).then_item());
    assert_eq!(recv("get"), Receiver::Unknown, "a mapping is not read");
    assert_eq!(recv("run"), Receiver::Field("a".into()).then_attribute("b"));
}

#[test]
fn python_imports_locals_and_receivers() {
    let s = extract(
        Lang::Python,
        "import a.b as ab\nimport c.d\nfrom ..pkg import mod as m, thing\nfrom . import *\n\nclass C(Base):\n    def go(self, helper, x: Shelf):\n        helper()\n        self.run()\n        x.count()\n        m.call()\n        super().go()\n        y = Book()\n        y.label()\n\ndef helper():\n    pass\n",
    );
    let imports: Vec<(String, &str, bool, bool)> = s
        .imports
        .iter()
        .map(|i| (i.path.join("."), i.alias.as_str(), i.glob, i.module))
        .collect();
    assert_eq!(
        imports,
        vec![
            ("a.b".to_string(), "ab", false, true),
            ("c.d".to_string(), "", false, true),
            ("c".to_string(), "c", false, true),
            ("...pkg.mod".to_string(), "m", false, false),
            ("...pkg.thing".to_string(), "thing", false, false),
            (".".to_string(), "", true, false),
        ]
    );
    assert!(
        refs_named(&s, "helper").is_empty(),
        "the parameter shadows the function"
    );
    let recv = |n: &str| refs_named(&s, n)[0].receiver.clone();
    assert_eq!(recv("run"), Receiver::SelfValue);
    assert_eq!(recv("count"), Receiver::Type("Shelf".into()));
    assert_eq!(recv("call"), Receiver::Name("m".into()));
    assert_eq!(recv("go"), Receiver::Super);
    assert_eq!(recv("label"), Receiver::Type("Book".into()));
    let c = s.defs.iter().find(|d| d.name == "C").expect("class");
    assert_eq!(c.bases, vec!["Base".to_string()]);
    let go = s.defs.iter().find(|d| d.name == "go").expect("method");
    assert_eq!(
        (go.kind, go.container.as_deref()),
        (Kind::Method, Some("C"))
    );
}

#[test]
fn python_forward_references_except_aliases_nested_and_generic_classes() {
    let s = extract(
        Lang::Python,
        "class Tree(Generic[T], Base[int]):\n    class Leaf:\n        pass\n\n    def kids(self) -> \"list[Tree] | None\":\n        self.hook = make()\n        self.size = Size()\n        try:\n            pass\n        except Broken as e:\n            raise e\n\n    def other(self, x: 'mod.Node', y: \"Literal['Tree']\"):\n        pass\n",
    );
    let tree = s.defs.iter().find(|d| d.name == "Tree").expect("class");
    assert_eq!(tree.bases, vec!["Generic".to_string(), "Base".to_string()]);
    let leaf = s
        .defs
        .iter()
        .find(|d| d.name == "Leaf")
        .expect("nested class");
    assert_eq!(
        (leaf.kind, leaf.container.as_deref()),
        (Kind::Class, Some("Tree"))
    );
    // Untyped attributes are fields of unknown type; typed ones keep it.
    assert_eq!(
        tree.fields,
        vec![
            ("hook".to_string(), String::new()),
            ("size".to_string(), "Size".to_string())
        ]
    );
    let at = |n: &str| -> Vec<(u32, Form, Receiver)> {
        refs_named(&s, n)
            .iter()
            .map(|r| (r.line, r.form, r.receiver.clone()))
            .collect()
    };
    assert_eq!(
        at("Tree"),
        vec![(5, Form::Type, Receiver::None)],
        "not inside Literal['Tree']"
    );
    assert_eq!(at("Broken"), vec![(10, Form::Value, Receiver::None)]);
    assert_eq!(at("mod"), vec![(13, Form::Type, Receiver::None)]);
    assert_eq!(
        at("Node"),
        vec![(13, Form::Type, Receiver::Name("mod".into()))]
    );
    assert!(at("None").is_empty() && at("e").is_empty());
}

#[test]
fn an_associated_function_without_self_is_marked_as_reached_by_path_only() {
    let s = extract(
        Lang::Rust,
        "struct S;\nimpl S {\n    pub fn new() -> S { S }\n    fn get(&self) -> u8 { 0 }\n    \
         fn owned(mut self) {}\n    fn boxed(self: Box<Self>) {}\n    \
         fn pinned(mut self: Pin<&mut Self>, cx: &mut Context<'_>) {}\n    \
         fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> { Poll::Ready(()) }\n    fn lived(&'a mut self) {}\n}\n\
         trait T {\n    fn make() -> Self;\n    fn run(&mut self);\n}\nfn free() {}\n",
    );
    let no_self = |name: &str| {
        s.defs
            .iter()
            .find(|d| d.name == name)
            .unwrap_or_else(|| panic!("{name} extracted"))
            .no_self
    };
    assert!(no_self("new") && no_self("make"));
    for name in [
        "get", "owned", "boxed", "pinned", "poll", "lived", "run", "free", "S", "T",
    ] {
        assert!(!no_self(name), "{name}");
    }
}
