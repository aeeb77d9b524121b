use super::*;

fn one(lang: Lang, text: &str) -> Callable {
    let (mut c, _) = read(lang, text).unwrap();
    assert_eq!(c.len(), 1, "{c:?}");
    c.remove(0)
}

fn same(lang: Lang, old: &str, new: &str) -> bool {
    one(lang, new)
        .signature
        .compatible_with(&one(lang, old).signature)
}

#[test]
fn rust_changes_no_caller_sees() {
    for (old, new) in [
        // A comment appended to the signature line.
        (
            "fn f(a: u32) -> u32 { a }",
            "fn f(a: u32) -> u32 // doubled later\n{ a }",
        ),
        (
            "fn f(a: u32) -> u32 { a }",
            "fn f(a: u32) -> u32 { // note\n a }",
        ),
        ("fn f(a: u32) {}", "pub(crate) fn f(a: u32) {}"),
        ("fn f(reader: R) {}", "fn f(mut reader: R) {}"),
        ("fn f(options: O) {}", "fn f(_options: O) {}"),
        (
            "impl C { fn g(&self) -> Option<&C> { None } }",
            "impl C { fn g(&self) -> Option<&Self> { None } }",
        ),
        ("fn f(a: u32) {}", "fn f(a: u64) {}"),
        (
            "fn f<T>(a: T) -> u8 { 0 }",
            "fn f<T, U>(a: T) -> U { todo!() }",
        ),
    ] {
        assert!(same(Lang::Rust, old, new), "{old} -> {new}");
    }
    for (old, new) in [
        ("fn f(a: u32) {}", "fn f(a: u32, b: u32) {}"),
        ("fn f(a: u32, b: u32) {}", "fn f(a: u32) {}"),
        ("impl C { fn g(&self) {} }", "impl C { fn g(&mut self) {} }"),
        ("impl C { fn g(&self) {} }", "impl C { fn g() {} }"),
    ] {
        assert!(!same(Lang::Rust, old, new), "{old} -> {new}");
    }
}

#[test]
fn python_changes_no_caller_sees() {
    for (old, new) in [
        (
            "def f(a, b):\n    pass\n",
            "def f(a, b):  # was f(a)\n    pass\n",
        ),
        (
            "def f(a, b=1):\n    pass\n",
            "def f(a: int, b: int = 2) -> None:\n    pass\n",
        ),
        ("def f(a):\n    pass\n", "def f(a, b=None):\n    pass\n"),
        (
            "def f(a, **kw):\n    pass\n",
            "def f(a, using=None, **kw):\n    pass\n",
        ),
        (
            "def get(path, data=None, *, headers=None, **extra):\n    pass\n",
            "def get(\n    path, data=None, *, headers=None, query_params=None, **extra\n):\n    pass\n",
        ),
        (
            "class C:\n    @property\n    def x(self):\n        return 1\n",
            "class C:\n    @cached_property\n    def x(self):\n        return 1\n",
        ),
    ] {
        assert!(same(Lang::Python, old, new), "{old} -> {new}");
    }
    for (old, new) in [
        ("def f(a):\n    pass\n", "def f(a, b):\n    pass\n"),
        ("def f(a, b=1):\n    pass\n", "def f(a, b):\n    pass\n"),
        ("def f(a, b):\n    pass\n", "def f(a, c):\n    pass\n"),
        (
            "def f(a, *args):\n    pass\n",
            "def f(a, *, k=1):\n    pass\n",
        ),
        ("def f(a, **kw):\n    pass\n", "def f(a):\n    pass\n"),
        ("def f(a):\n    pass\n", "def f(a, *, k):\n    pass\n"),
        (
            "class C:\n    def x(self):\n        return 1\n",
            "class C:\n    @property\n    def x(self):\n        return 1\n",
        ),
    ] {
        assert!(!same(Lang::Python, old, new), "{old} -> {new}");
    }
}

#[test]
fn overload_stubs_are_told_from_the_implementation() {
    let (c, _) = read(
            Lang::Python,
            "import typing as t\n\n@t.overload\ndef bar(*, length: int) -> int: ...\n\n@overload\ndef bar(it=None, length=...) -> int: ...\n\ndef bar(it=None, length=None):\n    return 1\n",
        )
        .unwrap();
    let flags: Vec<(u32, bool)> = c.iter().map(|c| (c.line, c.overload)).collect();
    assert_eq!(flags, [(4, true), (7, true), (9, false)]);
}

#[test]
fn trait_items_and_receivers() {
    let (c, _) = read(
            Lang::Rust,
            "impl Ord for P { fn cmp(&self, o: &Self) -> Ordering { todo!() } }\nimpl P { fn new(x: u8, y: u8) -> P { P } fn by(self: Box<Self>) {} }\n",
        )
        .unwrap();
    let got: Vec<(&str, bool, Signature)> = c
        .iter()
        .map(|c| (c.name.as_str(), c.trait_impl, c.signature.clone()))
        .collect();
    assert_eq!(
        got,
        vec![
            (
                "cmp",
                true,
                Signature::Rust {
                    receiver: Receiver::Ref,
                    params: 1
                }
            ),
            (
                "new",
                false,
                Signature::Rust {
                    receiver: Receiver::None,
                    params: 2
                }
            ),
            (
                "by",
                false,
                Signature::Rust {
                    receiver: Receiver::Value,
                    params: 0
                }
            ),
        ]
    );
}

fn calls(lang: Lang, text: &str, line: u32, name: &str) -> Vec<Call> {
    CallSites::parse(lang, text.as_bytes().to_vec())
        .unwrap()
        .at(line, name)
}

#[test]
fn rust_calls_fit_by_arity() {
    let sig = one(Lang::Rust, "impl S { fn f(&self, a: u8) {} }").signature;
    let text = "fn g(s: S) {\n    s.f(1);\n    S::f(&s, 1);\n    s.f(1, 2);\n    s.f::<u8>(3);\n    assert!(s.f(1, 2));\n}\n";
    let fits = |line| {
        calls(Lang::Rust, text, line, "f")
            .iter()
            .map(|c| sig.accepts(c))
            .collect::<Vec<_>>()
    };
    assert_eq!(fits(2), [true]);
    assert_eq!(fits(3), [true]);
    assert_eq!(fits(4), [false]);
    assert_eq!(fits(5), [true]);
    // Inside a macro: not parsed, so nothing to judge.
    assert!(fits(6).is_empty());
}

#[test]
fn python_calls_bind_like_python() {
    let sig = one(
        Lang::Python,
        "class M:\n    def save(self, *, force_insert=False, using=None):\n        pass\n",
    )
    .signature;
    let text = "m.save()\nm.save(using='x')\nm.save(True)\nM.save(m, using='x')\nm.save(**opts)\nm.save(usin='x')\n";
    let fits: Vec<bool> = (1..=6)
        .map(|l| sig.accepts(&calls(Lang::Python, text, l, "save")[0]))
        .collect();
    assert_eq!(fits, [true, true, false, true, true, false]);

    let f = one(Lang::Python, "def f(a, b=1, /, c=2):\n    pass\n").signature;
    let text = "f(1)\nf(1, 2, 3)\nf(a=1)\nf()\nf(x for x in y)\n";
    let fits: Vec<bool> = (1..=5)
        .map(|l| f.accepts(&calls(Lang::Python, text, l, "f")[0]))
        .collect();
    assert_eq!(fits, [true, true, false, false, true]);
}

#[test]
fn a_changed_default_and_the_calls_that_leave_it_out() {
    let old = one(
            Lang::Python,
            "class Config:\n    def get_namespace(self, namespace, lowercase=True, trim=True, *, sep = '_'):\n        pass\n",
        )
        .signature;
    let new = one(
            Lang::Python,
            "class Config:\n    def get_namespace(\n        self, namespace: str, lowercase: bool = False, trim=True, *, sep='_'  # the separator\n    ):\n        pass\n",
        )
        .signature;
    assert!(new.compatible_with(&old));
    assert_eq!(
        new.changed_defaults(&old),
        [DefaultChange {
            name: "lowercase".into(),
            old: "True".into(),
            new: "False".into()
        }]
    );
    let text = "c.get_namespace('A')\nc.get_namespace('A', lowercase=False)\nc.get_namespace('A', False)\nc.get_namespace('A', trim=False)\nc.get_namespace(*args)\nc.get_namespace('A', **options)\nConfig.get_namespace(c, 'A')\nConfig.get_namespace(c, 'A', True)\nc.get_namespace('A', 'B', 'C', 'D')\n";
    let relies: Vec<bool> = (1..=9)
        .map(|l| {
            new.relies_on_default(
                &calls(Lang::Python, text, l, "get_namespace")[0],
                "lowercase",
            )
        })
        .collect();
    assert_eq!(
        relies,
        [true, false, false, true, false, false, true, false, false]
    );
    // A keyword-only parameter is left out unless named.
    assert!(new.relies_on_default(&calls(Lang::Python, text, 1, "get_namespace")[0], "sep"));
    // Values compare by their tokens: spacing and comments are no change.
    let spaced = one(
        Lang::Python,
        "def f(a=(1, 2), b=\"x  y\", c=f( 1 )):\n    pass\n",
    )
    .signature;
    let tight = one(
        Lang::Python,
        "def f(a=(1,2), b=\"x y\", c=f(1)):\n    pass\n",
    )
    .signature;
    let changed: Vec<String> = tight
        .changed_defaults(&spaced)
        .into_iter()
        .map(|c| format!("{}: {} -> {}", c.name, c.old, c.new))
        .collect();
    assert_eq!(changed, ["b: \"x  y\" -> \"x y\""]);
    // A default the body tests by identity stands for what the body
    // decides (click's `catch_exceptions=None` meaning the runner's).
    let (old, _) = read(
        Lang::Python,
        "def invoke(cli, catch_exceptions=True):\n    return catch_exceptions\n",
    )
    .unwrap();
    let (new, _) = read(
            Lang::Python,
            "def invoke(cli, catch_exceptions=None):\n    if catch_exceptions  is   None:\n        catch_exceptions = RUNNER\n    return catch_exceptions\n",
        )
        .unwrap();
    assert!(
        new[0]
            .signature
            .changed_defaults(&old[0].signature)
            .is_empty()
    );
    let (new, _) = read(
            Lang::Python,
            "def invoke(cli, catch_exceptions=None):\n    if other.catch_exceptions is None:\n        pass\n",
        )
        .unwrap();
    assert_eq!(
        new[0].signature.changed_defaults(&old[0].signature).len(),
        1
    );
    // Rust has no defaults.
    let r = one(Lang::Rust, "fn f(a: u8) {}").signature;
    assert!(r.changed_defaults(&r).is_empty());
}

#[test]
fn names_a_file_still_defines() {
    let (_, names) = read(
            Lang::Python,
            "import sys\nif sys.version_info > (3,):\n    target = 1\nelse:\n    target, other = 2, 3\nclass K:\n    attr = 1\n    def m(self):\n        local = 2\n",
        )
        .unwrap();
    for n in ["target", "other", "K", "attr", "m"] {
        assert!(names.contains(n), "{n}: {names:?}");
    }
    assert!(!names.contains("local"));
    let (_, names) = read(
        Lang::Rust,
        "#[cfg(a)]\nmod x { pub fn f() {} }\nmacro_rules! regex { () => {} }\n",
    )
    .unwrap();
    assert!(names.contains("f") && names.contains("regex") && names.contains("x"));
}
