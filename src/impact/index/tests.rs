//! Tests of the symbol index: how names, paths, imports and receivers
//! resolve to definitions in Rust and Python.

use super::*;
use crate::impact::Extractor;

fn index_of(files: &[(&str, &str)]) -> Index {
    index_with(files, &[])
}

fn index_with(files: &[(&str, &str)], manifests: &[Manifest]) -> Index {
    let mut ex = Extractor::new();
    let sources = files
        .iter()
        .map(|(path, text)| {
            let lang = Lang::of_path(path).expect("a source file");
            Source {
                path: path.to_string(),
                lang,
                syms: Arc::new(ex.extract(lang, text.as_bytes()).expect("extracts")),
                pending: false,
            }
        })
        .collect();
    Index::build(sources, manifests)
}

fn file_id(index: &Index, path: &str) -> u32 {
    index
        .files
        .iter()
        .position(|f| f.path == path)
        .unwrap_or_else(|| panic!("{path} indexed")) as u32
}

/// The qualified names each reference named `name` in `path` resolves to.
fn resolved(index: &Index, path: &str, name: &str) -> Vec<Vec<String>> {
    let file = file_id(index, path);
    index.files[file as usize]
        .syms
        .refs
        .iter()
        .filter(|r| r.name == name && r.form != Form::Import)
        .map(|r| {
            let mut q: Vec<String> = index
                .resolve(file, r)
                .targets
                .iter()
                .map(|&d| index.qualified(d))
                .collect();
            q.sort();
            q
        })
        .collect()
}

fn module_key(index: &Index, path: &str) -> String {
    let f = &index.files[file_id(index, path) as usize];
    index.modules[f.module as usize].key.clone()
}

/// A package of `globs` relative glob imports of modules that are not
/// in the tree (C extensions), and a name none of them binds.
fn absent_globs(globs: usize) -> Index {
    let mut init = String::new();
    for i in 0..globs {
        init.push_str(&format!("from .ext{i} import *\n"));
    }
    let user = "from . import *\n\ndef f():\n    return missing(1)\n";
    index_of(&[("pkg/__init__.py", &init), ("pkg/user.py", user)])
}

#[test]
fn unresolvable_names_cost_work_linear_in_the_glob_imports() {
    let mut work = Vec::new();
    for globs in [16, 32, 64] {
        let index = absent_globs(globs);
        assert_eq!(
            resolved(&index, "pkg/user.py", "missing"),
            vec![Vec::<String>::new()]
        );
        work.push(index.lookups_computed());
    }
    // Each doubling of the glob imports at most doubles the work
    // (it multiplied it by about 30 when lookups were not memoized).
    assert!(
        work[1] <= 2 * work[0] + 4 && work[2] <= 2 * work[1] + 4,
        "{work:?}"
    );
    assert!(work[2] < 400, "{work:?}");
}

#[test]
fn glob_cycles_resolve_every_name_once_and_completely() {
    let index = index_of(&[
        ("pkg/__init__.py", "from .a import *\n"),
        (
            "pkg/a.py",
            "from .b import *\nfrom .c import *\n\ndef in_a():\n    pass\n",
        ),
        (
            "pkg/b.py",
            "from .a import *\nfrom .c import *\n\ndef in_b():\n    pass\n",
        ),
        (
            "pkg/c.py",
            "from .a import *\nfrom .b import *\n\ndef in_c():\n    pass\n",
        ),
        (
            "app.py",
            "from pkg import *\n\ndef run():\n    in_a()\n    in_b()\n    in_c()\n    gone()\n",
        ),
    ]);
    for (name, target) in [
        ("in_a", "pkg.a.in_a"),
        ("in_b", "pkg.b.in_b"),
        ("in_c", "pkg.c.in_c"),
    ] {
        assert_eq!(
            resolved(&index, "app.py", name),
            vec![vec![target.to_string()]],
            "{name}"
        );
    }
    assert_eq!(
        resolved(&index, "app.py", "gone"),
        vec![Vec::<String>::new()]
    );
    // A lookup cut short by the cycle was not kept: asked from inside
    // the cycle, the answer is whole.
    let b = file_id(&index, "pkg/b.py");
    let m = index.files[b as usize].module;
    let mut out = Vec::new();
    index.lookup(m, "in_c", &mut out);
    assert_eq!(out.len(), 1);
}

#[test]
fn stub_packages_are_packages_and_relative_imports_stop_at_the_top() {
    let index = index_of(&[
        (
            "typeshed/stdlib/asyncio/__init__.pyi",
            "from .events import *\n",
        ),
        (
            "typeshed/stdlib/asyncio/events.pyi",
            "class AbstractEventLoop: ...\n",
        ),
        ("typeshed/stdlib/builtins.pyi", "class type: ...\n"),
        (
            "tool.py",
            "from . import helper\nfrom .. import other\n\nhelper()\nother()\n",
        ),
        (
            "use.py",
            "from asyncio import AbstractEventLoop\n\nx: AbstractEventLoop\n",
        ),
    ]);
    assert_eq!(
        module_key(&index, "typeshed/stdlib/asyncio/__init__.pyi"),
        "py:asyncio"
    );
    assert_eq!(
        module_key(&index, "typeshed/stdlib/asyncio/events.pyi"),
        "py:asyncio.events"
    );
    assert_eq!(
        module_key(&index, "typeshed/stdlib/builtins.pyi"),
        "py:builtins"
    );
    assert_eq!(
        resolved(&index, "use.py", "AbstractEventLoop"),
        vec![vec!["asyncio.events.AbstractEventLoop".to_string()]]
    );
    // `tool` is no package's module: `.` and `..` name nothing, not `tool`.
    assert_eq!(
        resolved(&index, "tool.py", "helper"),
        vec![Vec::<String>::new()]
    );
    assert_eq!(
        resolved(&index, "tool.py", "other"),
        vec![Vec::<String>::new()]
    );
}

#[test]
fn folders_without_an_init_inside_a_package_or_under_src_are_namespace_packages() {
    let index = index_of(&[
        ("src/flask/__init__.py", "from .app import Flask\n"),
        (
            "src/flask/sansio/app.py",
            "class App:\n    def add_url_rule(self):\n        pass\n",
        ),
        (
            "src/flask/app.py",
            "from .sansio.app import App as SansioApp\n\nclass Flask(SansioApp):\n    pass\n",
        ),
        ("src/nspkg/mod.py", "def f():\n    pass\n"),
        (
            "tests/test_app.py",
            "import flask\nfrom nspkg.mod import f\n\nf()\n",
        ),
        ("docs/conf-files/conf.py", "x = 1\n"),
    ]);
    assert_eq!(
        module_key(&index, "src/flask/sansio/app.py"),
        "py:flask.sansio.app"
    );
    assert_eq!(module_key(&index, "src/nspkg/mod.py"), "py:nspkg.mod");
    // Not packages: a test folder at the top, a name no import can spell.
    assert_eq!(module_key(&index, "tests/test_app.py"), "py:test_app");
    assert_eq!(module_key(&index, "docs/conf-files/conf.py"), "py:conf");
    assert_eq!(
        resolved(&index, "src/flask/app.py", "SansioApp"),
        vec![vec!["flask.sansio.app.App".to_string()]]
    );
    assert_eq!(
        resolved(&index, "tests/test_app.py", "f"),
        vec![vec!["nspkg.mod.f".to_string()]]
    );
}

#[test]
fn a_crate_root_the_manifest_places_elsewhere_roots_the_files_beside_it() {
    // ripgrep: `[[bin]] path = "crates/core/main.rs"`, no library.
    let manifest = Manifest {
        dir: "rg".into(),
        name: "ripgrep".into(),
        roots: vec![Root {
            path: "crates/core/main.rs".into(),
            kind: RootKind::Bin("rg".into()),
        }],
    };
    let index = index_with(
        &[
            (
                "rg/crates/core/main.rs",
                "mod flags;
fn main() { flags::parse(); }
",
            ),
            (
                "rg/crates/core/flags/mod.rs",
                "pub(crate) mod lowargs;
pub fn parse() {}
",
            ),
            (
                "rg/crates/core/flags/lowargs.rs",
                "pub(crate) enum SortModeKind { Path }
",
            ),
            (
                "rg/crates/core/flags/defs.rs",
                "use crate::flags::lowargs::SortModeKind;
fn f(k: SortModeKind) {}
",
            ),
        ],
        &[manifest],
    );
    assert_eq!(
        module_key(&index, "rg/crates/core/flags/defs.rs"),
        "rs:ripgrep:lib::flags::defs"
    );
    assert_eq!(
        resolved(&index, "rg/crates/core/flags/defs.rs", "SortModeKind"),
        vec![vec!["ripgrep::flags::lowargs::SortModeKind".to_string()]]
    );
    assert_eq!(
        resolved(&index, "rg/crates/core/main.rs", "parse"),
        vec![vec!["ripgrep::flags::parse".to_string()]]
    );
}

#[test]
fn attributes_and_elements_of_typed_values_resolve_on_their_declared_types() {
    // mypy: `o.expr.accept(self)` with `o: ExpressionStmt`, listed
    // before for every `accept` of the project.
    let index = index_of(&[
        ("pkg/__init__.py", ""),
        (
            "pkg/nodes.py",
            "class Expression:\n    def accept(self, v):\n        pass\n\nclass Call(Expression):\n    def accept(self, v):\n        pass\n\nclass Stmt:\n    expr: Expression\n\n    def __init__(self, args: Sequence[Expression], name: str) -> None:\n        self.args = list(args)\n        self.name = name\n\n    def accept(self, v):\n        pass\n\n    @property\n    def first(self) -> Expression:\n        return self.args[0]\n",
        ),
        (
            "pkg/use.py",
            "from pkg.nodes import Stmt\n\ndef f(o: Stmt, v):\n    o.expr.accept(v)\n    for a in o.args:\n        a.accept(v)\n    o.args[0].accept(v)\n    o.first.accept(v)\n    o.name.accept(v)\n    o.args.accept(v)\n",
        ),
    ]);
    let expression = vec!["pkg.nodes.Expression.accept".to_string()];
    assert_eq!(
        resolved(&index, "pkg/use.py", "accept"),
        [
            expression.clone(),
            expression.clone(),
            expression.clone(),
            expression,
            vec![],
            vec![]
        ],
        "a `str` attribute and a list are not the project's"
    );
}

#[test]
fn generic_calls_explicit_re_exports_and_module_aliases_resolve() {
    // flask: `ConfigAttribute[bool]("TESTING")`, `from .blueprints
    // import Blueprint as Blueprint`; `import a.b as c`.
    let index = index_of(&[
        (
            "pkg/__init__.py",
            "from .blueprints import Blueprint as Blueprint\n",
        ),
        (
            "pkg/config.py",
            "class ConfigAttribute(t.Generic[T]):\n    def __init__(self, name):\n        self.name = name\n",
        ),
        (
            "pkg/blueprints.py",
            "class Blueprint:\n    def route(self, rule):\n        pass\n",
        ),
        (
            "pkg/app.py",
            "from .config import ConfigAttribute\n\nclass App:\n    testing = ConfigAttribute[bool](\"TESTING\")\n",
        ),
        (
            "user.py",
            "import pkg.blueprints as bp\nfrom pkg import Blueprint\n\ndef f():\n    Blueprint()\n    bp.Blueprint()\n",
        ),
    ]);
    assert!(
        resolved(&index, "pkg/app.py", "ConfigAttribute")
            .iter()
            .all(|r| r == &["pkg.config.ConfigAttribute".to_string()]),
        "{:?}",
        resolved(&index, "pkg/app.py", "ConfigAttribute")
    );
    let blueprint = vec!["pkg.blueprints.Blueprint".to_string()];
    assert_eq!(
        resolved(&index, "user.py", "Blueprint"),
        [blueprint.clone(), blueprint],
        "through the package's `as` re-export, and the module alias"
    );
}

#[test]
fn a_module_declared_with_a_path_attribute_is_the_file_it_names() {
    // tokio: `#[path = "unix/mod.rs"] mod imp;`, then `imp::orphan::Wait`.
    let index = index_of(&[
        ("src/lib.rs", "pub mod process;\n"),
        (
            "src/process/mod.rs",
            "#[path = \"unix/mod.rs\"]\n#[cfg(unix)]\nmod imp;\n\n#[path = \"windows.rs\"]\n#[cfg(windows)]\nmod imp;\n\nfn f() {\n    imp::orphan::wait();\n}\n",
        ),
        ("src/process/unix/mod.rs", "pub(crate) mod orphan;\n"),
        ("src/process/unix/orphan.rs", "pub(crate) fn wait() {}\n"),
        (
            "src/process/unix/reaper.rs",
            "use crate::process::imp::orphan::wait;\n\nfn g() {\n    wait();\n}\n",
        ),
        ("src/process/windows.rs", "pub(crate) fn other() {}\n"),
    ]);
    let wait = || vec!["crate::process::unix::orphan::wait".to_string()];
    assert_eq!(resolved(&index, "src/process/mod.rs", "wait"), [wait()]);
    assert_eq!(
        resolved(&index, "src/process/unix/reaper.rs", "wait"),
        [wait()]
    );
}

#[test]
fn names_bound_by_a_tuple_pattern_have_the_element_types() {
    // tokio: `let (tx, mut rx) = mpsc::channel(8); rx.recv()`.
    let index = index_of(&[
        (
            "src/lib.rs",
            "pub mod mpsc;\npub mod other;\n\nfn f() {\n    let (tx, mut rx) = mpsc::channel::<u8>(8);\n    rx.recv();\n    tx.send();\n    let (_, r) = mpsc::channel::<u8>(1);\n    r.recv();\n}\n",
        ),
        (
            "src/mpsc.rs",
            "pub struct Sender;\npub struct Receiver;\n\npub fn channel<T>(n: usize) -> (Sender<T>, Receiver<T>) { todo!() }\n\nimpl Sender {\n    pub fn send(&self) {}\n}\n\nimpl Receiver {\n    pub fn recv(&mut self) {}\n}\n",
        ),
        (
            "src/other.rs",
            "pub struct Queue;\n\nimpl Queue {\n    pub fn recv(&mut self) {}\n    pub fn send(&self) {}\n}\n",
        ),
    ]);
    let recv = vec!["crate::mpsc::Receiver::recv".to_string()];
    assert_eq!(resolved(&index, "src/lib.rs", "recv"), [recv.clone(), recv]);
    assert_eq!(
        resolved(&index, "src/lib.rs", "send"),
        [vec!["crate::mpsc::Sender::send".to_string()]]
    );
}

#[test]
fn rust_receivers_through_fields_of_fields_reach_the_field_types_methods() {
    // tokio: `guard.lock.s.release(1)` with `lock: Arc<RwLock<T>>`,
    // `let this = this.skip_drop(); this.s.release(1)` with `this: Self`,
    // `rt_handle.io()` with `rt_handle: &driver::Handle`, and
    // `self.shared.idle.notify()` through `idle: CachePadded<Idle>`.
    let index = index_of(&[
        (
            "src/lib.rs",
            "pub mod semaphore;\npub mod rwlock;\npub mod pool;\npub mod driver;\npub mod io;\npub mod idle;\n",
        ),
        (
            "src/semaphore.rs",
            "pub struct Semaphore;\n\nimpl Semaphore {\n    pub fn release(&self, n: usize) {}\n}\n",
        ),
        (
            "src/pool.rs",
            "pub struct Pool;\n\nimpl Pool {\n    pub fn release(&self, n: usize) {}\n}\n",
        ),
        (
            "src/rwlock.rs",
            "use crate::semaphore::Semaphore;\nuse std::sync::Arc;\n\npub struct RwLock<T> {\n    s: Semaphore,\n    c: std::cell::Cell<T>,\n}\n\npub struct Guard<T> {\n    lock: Arc<RwLock<T>>,\n}\n\nstruct Inner<'a> {\n    s: &'a Semaphore,\n}\n\nstruct Wrapper(Guard<u8>);\n\nimpl<T> Guard<T> {\n    fn skip_drop(self) -> Inner<'static> {\n        todo!()\n    }\n\n    fn downgrade(this: Self) {\n        let guard = Guard { lock: this.lock };\n        guard.lock.s.release(1);\n        let this = this.skip_drop();\n        this.s.release(1);\n        guard.lock.c.release(1);\n    }\n}\n\nimpl Wrapper {\n    fn drop(&mut self) {\n        self.0.lock.s.release(1);\n    }\n}\n",
        ),
        (
            "src/driver.rs",
            "pub struct Handle;\n\nimpl Handle {\n    pub fn io(&self) {}\n}\n",
        ),
        (
            "src/io.rs",
            "use crate::driver;\n\npub struct Handle;\n\nimpl Handle {\n    pub fn io(&self) {}\n}\n\nfn park(rt_handle: &driver::Handle) {\n    rt_handle.io();\n}\n",
        ),
        (
            "src/idle.rs",
            "use std::ops::Deref;\n\npub struct Padded<T>(T);\n\nimpl<T> Deref for Padded<T> {\n    type Target = T;\n    fn deref(&self) -> &T {\n        &self.0\n    }\n}\n\npub struct Idle;\n\nimpl Idle {\n    pub fn notify_one(&self) {}\n}\n\npub struct Shared {\n    idle: Padded<Idle>,\n}\n\npub struct Worker {\n    shared: Shared,\n}\n\nimpl Worker {\n    fn wake(&self) {\n        self.shared.idle.notify_one();\n    }\n}\n",
        ),
    ]);
    let release = vec!["crate::semaphore::Semaphore::release".to_string()];
    assert_eq!(
        resolved(&index, "src/rwlock.rs", "release"),
        [release.clone(), release.clone(), vec![], release],
        "a field of std's `Cell` has none of the project's methods"
    );
    assert_eq!(
        resolved(&index, "src/io.rs", "io"),
        [vec!["crate::driver::Handle::io".to_string()]],
        "the parameter's type is the one its path names"
    );
    assert_eq!(
        resolved(&index, "src/idle.rs", "notify_one"),
        [vec!["crate::idle::Idle::notify_one".to_string()]],
        "a type that dereferences has its target's methods"
    );
}

#[test]
fn an_extern_crate_re_exported_under_another_name_resolves() {
    // grep: `pub extern crate grep_cli as cli;`, then `grep::cli::is_tty()`.
    let manifests = [
        Manifest {
            dir: "grep".into(),
            name: "grep".into(),
            roots: Vec::new(),
        },
        Manifest {
            dir: "grep-cli".into(),
            name: "grep-cli".into(),
            roots: Vec::new(),
        },
        Manifest {
            dir: "rg".into(),
            name: "ripgrep".into(),
            roots: Vec::new(),
        },
    ];
    let index = index_with(
        &[
            ("grep/src/lib.rs", "pub extern crate grep_cli as cli;\n"),
            ("grep-cli/src/lib.rs", "pub fn is_tty() -> bool { true }\n"),
            (
                "rg/src/main.rs",
                "use grep::cli;\n\nfn main() {\n    cli::is_tty();\n    grep::cli::is_tty();\n}\n",
            ),
        ],
        &manifests,
    );
    let is_tty = vec!["grep_cli::is_tty".to_string()];
    assert_eq!(
        resolved(&index, "rg/src/main.rs", "is_tty"),
        [is_tty.clone(), is_tty]
    );
}

#[test]
fn a_re_export_through_a_module_of_the_same_name_resolves() {
    // The import's own path names the module `search`, which the
    // import's name would shadow were the lookup not cut at itself.
    let index = index_of(&[
        (
            "src/lib.rs",
            "pub mod search;\npub mod user;\npub use search::search;\n",
        ),
        ("src/search.rs", "pub fn search() {}\n"),
        (
            "src/user.rs",
            "use crate::search;\n\npub fn u() {\n    search();\n}\n",
        ),
    ]);
    assert_eq!(
        resolved(&index, "src/user.rs", "search"),
        vec![vec!["crate::search::search".to_string()]]
    );
}

#[test]
fn a_passed_deadline_stops_answering() {
    let mut index = absent_globs(8);
    index.set_deadline(Some(Instant::now()));
    for _ in 0..300 {
        resolved(&index, "pkg/user.py", "missing");
    }
    assert!(index.expired());
}

#[test]
fn method_syntax_never_calls_an_associated_function_without_self() {
    let index = index_of(&[(
        "src/lib.rs",
        "pub struct S;\nimpl S {\n    pub fn new() -> S { S }\n    pub fn get(&self) -> u8 { 0 }\n}\n\
         pub fn f(s: S) {\n    S::new();\n    s.new();\n    s.get();\n}\n",
    )]);
    let new = vec!["crate::S::new".to_string()];
    assert_eq!(resolved(&index, "src/lib.rs", "new"), [new, vec![]]);
    assert_eq!(
        resolved(&index, "src/lib.rs", "get"),
        [vec!["crate::S::get".to_string()]]
    );
    let file = file_id(&index, "src/lib.rs");
    let def = |name: &str| DefId {
        file,
        def: index.files[file as usize]
            .syms
            .defs
            .iter()
            .position(|d| d.name == name)
            .expect("defined") as u32,
    };
    // Reached by path only: the type's names are its anchors.
    assert_eq!(index.anchors(def("new")), Some(vec!["S".to_string()]));
}
