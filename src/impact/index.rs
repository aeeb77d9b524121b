//! The project-wide symbol index: files grouped into crates and packages,
//! module paths, and name resolution of references to definitions with a
//! confidence (exact, unique, ambiguous). It never parses: it is built from
//! extracted `FileSymbols`.

use std::cell::{OnceCell, RefCell};
use std::collections::{HashMap, HashSet};
use std::rc::Rc;
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;

use super::lang::{Lang, is_rust_primitive};
use super::symbols::{FileSymbols, Form, Import, Kind, NameFilter, Receiver, Ref, Visibility};

/// Names so common that matching them by name alone is noise: they never
/// produce a by-name match (unique or ambiguous), only resolved ones.
const STOP_LIST: &[&str] = &[
    "new",
    "default",
    "get",
    "get_mut",
    "set",
    "from",
    "into",
    "try_from",
    "try_into",
    "fmt",
    "clone",
    "eq",
    "ne",
    "cmp",
    "partial_cmp",
    "hash",
    "drop",
    "deref",
    "deref_mut",
    "as_ref",
    "as_mut",
    "borrow",
    "borrow_mut",
    "to_string",
    "to_owned",
    "len",
    "is_empty",
    "iter",
    "iter_mut",
    "into_iter",
    "next",
    "push",
    "pop",
    "insert",
    "remove",
    "contains",
    "clear",
    "extend",
    "map",
    "unwrap",
    "expect",
    "ok",
    "err",
    "run",
    "build",
    "parse",
    "read",
    "write",
    "flush",
    "close",
    "open",
    "start",
    "stop",
    "init",
    "update",
    "apply",
    "call",
    "send",
    "recv",
    "with",
    "add",
    "sub",
    "mul",
    "div",
    "index",
    "keys",
    "values",
    "items",
    "append",
    "copy",
    "format",
    "join",
    "split",
    "strip",
    "lower",
    "upper",
    "encode",
    "decode",
    "load",
    "dump",
    "dumps",
    "loads",
    "reset",
    "setup",
    "teardown",
    "main",
    "__init__",
    "__str__",
    "__repr__",
    "__eq__",
    "__hash__",
    "__call__",
    "__enter__",
    "__exit__",
    "__iter__",
    "__next__",
    "__len__",
    "__getitem__",
    "__setitem__",
    "__contains__",
    "setUp",
    "tearDown",
    "name",
    "value",
    // Standard-library methods that projects rarely define but often call
    // on values of unknown type (`self.state.lock()`).
    "lock",
    "try_lock",
    "take",
    "replace",
    "find",
    "filter",
    "first",
    "last",
    "sort",
    "trim",
    "lines",
    "chars",
    "bytes",
    "as_str",
    "as_bytes",
    "as_slice",
    "to_vec",
    "entry",
    "retain",
    "truncate",
    "wait",
    "spawn",
    "collect",
    "is_some",
    "is_none",
    "is_ok",
    "is_err",
    "and_then",
    "map_err",
    "unwrap_or",
    "unwrap_or_default",
    "unwrap_or_else",
    "write_all",
    "read_to_string",
];

/// Methods of Python's built-in `dict`, `list`, `set`, `str` and `bytes`
/// not already in `STOP_LIST`: on a receiver of unknown type such a call is
/// most likely the built-in's, so it is matched to the project's methods of
/// that name only through a known type. (Measured on Django: `setdefault`
/// matched 130 calls, 98 of them on dicts.)
const PYTHON_BUILTIN_METHODS: &[&str] = &[
    "setdefault",
    "popitem",
    "fromkeys",
    "reverse",
    "discard",
    "difference_update",
    "intersection_update",
    "isdisjoint",
    "issubset",
    "issuperset",
    "symmetric_difference",
    "capitalize",
    "casefold",
    "center",
    "endswith",
    "startswith",
    "expandtabs",
    "format_map",
    "isalnum",
    "isalpha",
    "isascii",
    "isdecimal",
    "isdigit",
    "isidentifier",
    "islower",
    "isnumeric",
    "isprintable",
    "isspace",
    "istitle",
    "isupper",
    "ljust",
    "rjust",
    "lstrip",
    "rstrip",
    "partition",
    "rpartition",
    "removeprefix",
    "removesuffix",
    "rfind",
    "rindex",
    "rsplit",
    "splitlines",
    "swapcase",
    "title",
    "translate",
    "zfill",
    "hex",
];

pub fn stop_listed(name: &str) -> bool {
    STOP_LIST.contains(&name)
}

/// A definition: file index and definition index within the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DefId {
    pub file: u32,
    pub def: u32,
}

pub type ModId = u32;

/// How sure a resolved reference is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Confidence {
    /// Resolved through a qualifier, an import, the enclosing type or scope.
    Exact,
    /// Matched by name to the only candidate in scope.
    Unique,
    /// Matched by name to one of several candidates.
    Ambiguous,
}

/// The definitions a reference may name.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolution {
    pub targets: Vec<DefId>,
    pub confidence: Confidence,
}

impl Resolution {
    fn none() -> Resolution {
        Resolution {
            targets: Vec::new(),
            confidence: Confidence::Exact,
        }
    }

    fn by_name(targets: Vec<DefId>) -> Resolution {
        let confidence = if targets.len() == 1 {
            Confidence::Unique
        } else {
            Confidence::Ambiguous
        };
        Resolution {
            targets,
            confidence,
        }
    }
}

/// One indexed file.
pub struct File {
    pub path: String,
    pub lang: Lang,
    pub unit: u32,
    pub module: ModId,
    pub syms: Arc<FileSymbols>,
    /// A test file by its path (`tests/`, `test_*.py`, `benches/`, …).
    pub test: bool,
    /// Holds only definitions the diff removed; its references are not
    /// searched (they are the base side's).
    pub ghost: bool,
    /// Not parsed yet (see `Source::pending`).
    pending: bool,
    /// Module each definition is declared in.
    def_mod: Vec<ModId>,
    /// For inline modules: the module their body opens.
    inner_mod: Vec<Option<ModId>>,
}

/// A crate (Rust package) or a top-level Python package.
pub struct Unit {
    pub name: String,
    pub lang: Lang,
}

struct Module {
    key: String,
    unit: u32,
    /// The crate root of the target this module belongs to (`crate::`).
    root: ModId,
    parent: Option<ModId>,
    children: Vec<(String, ModId)>,
    /// Imports declared in this module that bind a name, by that name:
    /// (file, import index).
    by_alias: HashMap<String, Vec<(u32, u32)>>,
    /// Glob imports declared in this module (`use a::*`, `from a import *`).
    globs: Vec<(u32, u32)>,
    /// Python: the module is a package's `__init__`.
    package: bool,
}

/// Where a path leads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Def(DefId),
    Module(ModId),
}

/// Outcome of resolving a qualifier path.
enum PathOutcome {
    Found(Vec<Target>),
    /// The path starts outside the index (`std::`, a third-party package).
    External,
    /// The path starts inside the index but does not lead anywhere.
    Unresolved,
}

pub struct Index {
    pub files: Vec<File>,
    pub units: Vec<Unit>,
    modules: Vec<Module>,
    module_keys: HashMap<String, ModId>,
    /// Rust crate name (with `_`) → its library root module.
    crates: HashMap<String, ModId>,
    /// Definitions without a container, by name.
    items: HashMap<String, Vec<DefId>>,
    /// Definitions with a container (methods, variants, associated items), by name.
    members: HashMap<String, Vec<DefId>>,
    /// Imported name → the other names imports bind it to (`use a::B as C`).
    aliases: HashMap<String, Vec<String>>,
    /// When set, every name resolution asks about, so the caller can tell
    /// which files could change an answer (see `Probe`).
    probe: Option<RefCell<Probe>>,
    /// Each word of a field's declared type → the names of such fields.
    field_words: OnceCell<HashMap<String, Vec<String>>>,
    /// A Rust type's name → the functions and methods declared to return it.
    returning: OnceCell<HashMap<String, Vec<String>>>,
    /// Python attribute names some class assigns (`self.x = …`, `x: T`).
    data_attributes: OnceCell<HashSet<String>>,
    /// See `crate_roots`: for each module right under a test, bench or
    /// example target's shared root, the crates it belongs to.
    side_crates: OnceCell<HashMap<ModId, Vec<ModId>>>,
    /// Lookups and members answered so far (see `lookup_memo`).
    memo: RefCell<Memo>,
    /// When set, lookups stop answering once it passes.
    deadline: Option<Instant>,
}

/// The questions resolution asked of an index: what it depends on. An
/// answer about name `n` can only change when a file whose text contains
/// `n` is added, so an index missing only files that contain none of these
/// names answers exactly as the full index does.
#[derive(Debug, Default)]
pub struct Probe {
    /// Names looked up across all files (definitions, members, aliases,
    /// references by name).
    pub global: HashSet<String>,
    /// Names looked up in one module: only the files of that module and of
    /// its ancestors (which may declare it inline) can answer. `GLOB` stands
    /// for the module's glob imports.
    pub local: HashSet<(ModId, String)>,
    /// Pairs of names that only a file containing both can answer (a
    /// member `new` of type `Shelf` is declared in an `impl Shelf`).
    pub pairs: HashSet<(String, String)>,
    /// Names looked up among the definitions of one unit (crate or
    /// package): only that unit's files can answer.
    pub unit: HashSet<(u32, String)>,
    /// Names looked up in a module's subtree: only the files of the module,
    /// of the modules below it and of those above it (which may declare
    /// some of them inline) can answer.
    pub within: HashSet<(ModId, String)>,
    /// Files read whole, whatever names they contain (by index in `files`):
    /// a question whose answer must not rest on a file not yet read.
    pub files: HashSet<u32>,
}

/// How deep lookups may nest within one question: far past any real chain
/// of re-exports, well short of the thread's stack.
const MAX_NESTING: usize = 200;

/// A question whose answer `Index` keeps.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Key {
    /// What module `m` binds to a name.
    Lookup(ModId, Box<str>),
    /// The members of a type of a name.
    Members(DefId, Box<str>),
}

/// The answers an index computed, and the questions under way.
#[derive(Default)]
struct Memo {
    /// Final answers.
    done: HashMap<Key, Rc<[Target]>>,
    /// Answers resting on cuts of lookups still under way: their stack
    /// positions (each is on the stack).
    provisional: HashMap<Key, (Rc<[Target]>, Vec<usize>)>,
    /// By stack position, the provisional answers resting on a cut of it.
    waiting: HashMap<usize, Vec<Key>>,
    /// Answers that rest on a partial one: good for the question under
    /// way only (see `lookup_memo`).
    scratch: HashMap<Key, Rc<[Target]>>,
    /// Questions under way, outermost first.
    stack: Vec<Key>,
    /// The cuts the innermost question's answer rests on so far: stack
    /// positions, or `PARTIAL`.
    cuts: Vec<usize>,
    ticks: u32,
    /// The deadline passed: answers are cut short from then on.
    expired: bool,
    /// Questions computed (not answered from `done`): the work done.
    computed: u64,
}

/// What `Index::memo_enter` found.
enum Entered {
    Known(Rc<[Target]>),
    /// Under way already (a cycle), or out of time or depth: a lookup
    /// answers what its module declares itself, members nothing.
    Cut,
    /// Compute it, then hand the frame to `memo_leave`.
    Fresh(Frame),
}

/// A question being computed: what the question around it rested on.
struct Frame {
    outer_cuts: Vec<usize>,
}

/// A cut that will never be settled: the answer is partial (it rests on
/// one that was, or on a lookup out of time or depth).
const PARTIAL: usize = usize::MAX;

impl Memo {
    /// Keep `key`'s answer: for good when it rests on no cut, aside until
    /// its cuts are settled, or for the question under way when partial.
    fn settle(&mut self, key: Key, answer: Rc<[Target]>, cuts: Vec<usize>) {
        if !cuts.contains(&PARTIAL) {
            for &c in &cuts {
                self.waiting.entry(c).or_default().push(key.clone());
            }
        }
        self.resettle(key, answer, cuts);
    }

    /// `settle`, for an answer already filed under its cuts.
    fn resettle(&mut self, key: Key, answer: Rc<[Target]>, cuts: Vec<usize>) {
        if cuts.is_empty() {
            self.done.insert(key, answer);
        } else if cuts.contains(&PARTIAL) {
            self.scratch.insert(key, answer);
        } else {
            self.provisional.insert(key, (answer, cuts));
        }
    }
}

/// The pseudo-name of a module's glob imports in `Probe::local`.
pub const GLOB: &str = "*";

/// Where code names a module (see `Index::module_mentions`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Mention {
    /// `mod b;` or an inline module: a definition index.
    Decl(u32),
    /// An import of the module, of an item from it or of all of it: an
    /// import index.
    Import(u32),
    /// A reference through the module's path: a reference index.
    Ref(u32),
    /// An implementation of a trait's item: a definition index.
    Impl(u32),
}

/// One place naming a module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModuleMention {
    pub file: u32,
    pub at: Mention,
    /// How many modules or items the path may lead to (1 unless a glob
    /// import makes it ambiguous).
    pub candidates: usize,
}

/// The part of the tree whose code can name a module.
enum Reach {
    /// Any file (a public Rust module, any Python module).
    Anywhere,
    /// Only code in this module's subtree (a private or `pub(crate)` Rust
    /// module, a binary's root).
    Within(ModId),
    /// Not known until the declaring parent is parsed.
    Pending,
}

/// A Rust package manifest: directory (relative, "" for the root), name,
/// and the crate roots it declares where Cargo would not look for them.
#[derive(Debug, Clone)]
pub struct Manifest {
    pub dir: String,
    pub name: String,
    pub roots: Vec<Root>,
}

/// A crate root a manifest declares outside Cargo's conventional places
/// (`[[bin]] path = "crates/core/main.rs"`, as ripgrep has it): the files
/// in its folder and below are its modules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    /// Relative to the manifest's directory.
    pub path: String,
    pub kind: RootKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RootKind {
    Lib,
    /// A binary, by name.
    Bin(String),
}

impl Root {
    /// Whether Cargo's conventions already place a root at `path`
    /// (`src/lib.rs`, `src/main.rs`, `src/bin/…`, `tests/…`, `benches/…`,
    /// `examples/…`), which the layout reads without the manifest.
    pub fn conventional(path: &str) -> bool {
        let path = path.trim_start_matches("./");
        matches!(path, "src/lib.rs" | "src/main.rs")
            || ["src/bin/", "tests/", "benches/", "examples/"]
                .iter()
                .any(|d| path.starts_with(d))
    }

    fn dir(&self) -> &str {
        self.path.rsplit_once('/').map_or("", |(d, _)| d)
    }
}

impl Manifest {
    /// The target and module segments of the file at `rel` (relative to
    /// the manifest's directory) when it lies under a declared root's
    /// folder: the deepest such root.
    fn declared_module<'p>(&self, rel: &'p str, has_lib: bool) -> Option<(String, Vec<&'p str>)> {
        let root = self
            .roots
            .iter()
            .filter(|r| {
                let dir = r.dir();
                rel == r.path || (!dir.is_empty() && rel.starts_with(&format!("{dir}/")))
            })
            .max_by_key(|r| r.dir().len())?;
        let has_lib = has_lib || self.roots.iter().any(|r| r.kind == RootKind::Lib);
        let target = match &root.kind {
            RootKind::Lib => "lib".to_string(),
            RootKind::Bin(name) if has_lib => format!("bin/{name}"),
            // A package of binaries only: its root is the crate, as
            // `src/main.rs` is without a `src/lib.rs`.
            RootKind::Bin(_) => "lib".to_string(),
        };
        if rel == root.path {
            return Some((target, Vec::new()));
        }
        let inside = rel[root.dir().len()..].trim_end_matches(".rs");
        Some((target, module_segments(inside)))
    }
}

/// What module paths are computed from: the crates' manifests, the
/// directories that are Python packages and those holding a `src/lib.rs`.
/// The head tree has one layout and the base side of a diff another: a
/// deleted or renamed file had its module path in the base layout.
pub struct Layout {
    /// Deepest directory first, so a file maps to its innermost crate.
    manifests: Vec<Manifest>,
    py_packages: HashSet<String>,
    has_lib: HashSet<String>,
}

impl Layout {
    /// The layout of a tree holding `paths`.
    pub fn new<'a>(paths: impl IntoIterator<Item = &'a str>, manifests: &[Manifest]) -> Layout {
        let mut has_lib = HashSet::new();
        let mut inits: HashSet<&str> = HashSet::new();
        let mut holding_py: HashSet<&str> = HashSet::new();
        for p in paths {
            // A stub package (`__init__.pyi` alone, as in a bundled
            // typeshed) is a package all the same.
            if let Some(dir) = p
                .strip_suffix("/__init__.py")
                .or_else(|| p.strip_suffix("/__init__.pyi"))
            {
                inits.insert(dir);
            }
            if p.ends_with(".py") {
                let mut d = p;
                while let Some((parent, _)) = d.rsplit_once('/') {
                    if !holding_py.insert(parent) {
                        break;
                    }
                    d = parent;
                }
            }
            if let Some(prefix) = p.strip_suffix("src/lib.rs") {
                has_lib.insert(prefix.to_string());
            }
        }
        let py_packages = python_packages(&inits, &holding_py);
        let mut manifests = manifests.to_vec();
        manifests.sort_by_key(|m| std::cmp::Reverse(m.dir.len()));
        Layout {
            manifests,
            py_packages,
            has_lib,
        }
    }
}

/// The directories that are Python packages: those holding an
/// `__init__.py` or `__init__.pyi`, and namespace packages (PEP 420): a
/// directory without one, named like a module, holding Python source
/// below it, inside a package or right under a `src/` folder (flask's
/// `src/flask/sansio/`). Other folders without an `__init__` (`tests/`,
/// a stub tree's root) hold top-level modules.
fn python_packages(inits: &HashSet<&str>, holding_py: &HashSet<&str>) -> HashSet<String> {
    let mut dirs: Vec<&str> = inits.iter().chain(holding_py).copied().collect();
    dirs.sort_by_key(|d| (d.matches('/').count(), *d));
    dirs.dedup();
    let mut packages: HashSet<String> = HashSet::new();
    for d in dirs {
        let (parent, name) = d.rsplit_once('/').unwrap_or(("", d));
        let namespace = || {
            is_identifier(name)
                && (packages.contains(parent) || parent == "src" || parent.ends_with("/src"))
        };
        if inits.contains(d) || namespace() {
            packages.insert(d.to_string());
        }
    }
    packages
}

fn is_identifier(name: &str) -> bool {
    name.chars()
        .next()
        .is_some_and(|c| c == '_' || c.is_alphabetic())
        && name.chars().all(|c| c == '_' || c.is_alphanumeric())
}

/// Input for one file.
pub struct Source {
    pub path: String,
    pub lang: Lang,
    pub syms: Arc<FileSymbols>,
    /// Not parsed yet: `syms` is empty until a later round.
    pub pending: bool,
}

impl Index {
    /// Build the index over `sources`. `manifests` locate Rust crates.
    pub fn build(sources: Vec<Source>, manifests: &[Manifest]) -> Index {
        let mut index = Index {
            files: Vec::with_capacity(sources.len()),
            units: Vec::new(),
            modules: Vec::new(),
            module_keys: HashMap::new(),
            crates: HashMap::new(),
            items: HashMap::new(),
            members: HashMap::new(),
            aliases: HashMap::new(),
            probe: None,
            field_words: OnceCell::new(),
            returning: OnceCell::new(),
            data_attributes: OnceCell::new(),
            side_crates: OnceCell::new(),
            memo: RefCell::new(Memo::default()),
            deadline: None,
        };
        let layout = Layout::new(sources.iter().map(|s| s.path.as_str()), manifests);
        for src in sources {
            index.add_file(src, &layout, false);
        }
        index
    }

    /// Start recording what resolution asks (see `Probe`).
    pub fn record(&mut self) {
        self.probe = Some(RefCell::new(Probe::default()));
    }

    /// What resolution asked since `record`.
    pub fn take_probe(&self) -> Probe {
        self.probe.as_ref().map(|p| p.take()).unwrap_or_default()
    }

    fn note_global(&self, name: &str) {
        if let Some(p) = &self.probe {
            let mut p = p.borrow_mut();
            if !p.global.contains(name) {
                p.global.insert(name.to_string());
            }
        }
    }

    fn note_local(&self, m: ModId, name: &str) {
        self.note_in(|p| &mut p.local, m, name);
    }

    fn note_unit(&self, unit: u32, name: &str) {
        self.note_in(|p| &mut p.unit, unit, name);
    }

    fn note_within(&self, m: ModId, name: &str) {
        self.note_in(|p| &mut p.within, m, name);
    }

    /// Record (module or unit id, name) in the probe's set `pick` chooses.
    fn note_in(&self, pick: fn(&mut Probe) -> &mut HashSet<(u32, String)>, id: u32, name: &str) {
        if let Some(p) = &self.probe {
            pick(&mut p.borrow_mut()).insert((id, name.to_string()));
        }
    }

    fn note_file(&self, file: u32) {
        if let Some(p) = &self.probe {
            p.borrow_mut().files.insert(file);
        }
    }

    pub fn note_pair(&self, name: &str, anchor: &str) {
        if let Some(p) = &self.probe {
            let mut p = p.borrow_mut();
            let key = (name.to_string(), anchor.to_string());
            if !p.pairs.contains(&key) {
                p.pairs.insert(key);
            }
        }
    }

    /// For a Rust member whose name is on the stop list (`Shelf::new`):
    /// the words one of which any file referencing it must contain. Such a
    /// name is never matched by name alone, so a reference reaches it only
    /// through its type: named in the file (`Shelf::new()`, `impl Shelf`,
    /// `let s: Shelf`), under an alias (`use a::Shelf as Rack`), as the
    /// declared type of a field the file names (`self.shelf.new()`), or as
    /// what a function the file calls returns (`b.build().new()`).
    /// `None` for every other definition.
    pub fn anchors(&self, id: DefId) -> Option<Vec<String>> {
        let f = &self.files[id.file as usize];
        let d = self.def(id);
        let container = d.container.as_deref()?;
        if f.lang != Lang::Rust || d.kind == Kind::Variant || !stop_listed(&d.name) {
            return None;
        }
        let mut words = self.names_for(container);
        let fields = self.field_words.get_or_init(|| {
            let mut map: HashMap<String, Vec<String>> = HashMap::new();
            for f in &self.files {
                for d in &f.syms.defs {
                    for (name, ty) in &d.fields {
                        for w in ty
                            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                            .filter(|w| !w.is_empty())
                        {
                            let list = map.entry(w.to_string()).or_default();
                            if !list.contains(name) {
                                list.push(name.clone());
                            }
                        }
                    }
                }
            }
            map
        });
        let returning = self.returning.get_or_init(|| {
            let mut map: HashMap<String, Vec<String>> = HashMap::new();
            for f in self.files.iter().filter(|f| f.lang == Lang::Rust) {
                for d in &f.syms.defs {
                    let Some(ret) = &d.returns else { continue };
                    let base = ret.rsplit("::").next().unwrap_or(ret);
                    let list = map.entry(base.to_string()).or_default();
                    if !list.contains(&d.name) {
                        list.push(d.name.clone());
                    }
                }
            }
            map
        });
        let mut extra = Vec::new();
        for w in &words {
            for name in fields.get(w).into_iter().chain(returning.get(w)).flatten() {
                if !words.contains(name) && !extra.contains(name) {
                    extra.push(name.clone());
                }
            }
        }
        words.extend(extra);
        Some(words)
    }

    /// `m` and the modules above it, innermost first.
    pub fn ancestors(&self, m: ModId) -> Vec<ModId> {
        let mut out = vec![m];
        let mut cur = self.modules[m as usize].parent;
        while let Some(p) = cur {
            if out.contains(&p) {
                break;
            }
            out.push(p);
            cur = self.modules[p as usize].parent;
        }
        out
    }

    fn unit_id(&mut self, name: &str, lang: Lang) -> u32 {
        if let Some(i) = self
            .units
            .iter()
            .position(|u| u.name == name && u.lang == lang)
        {
            return i as u32;
        }
        self.units.push(Unit {
            name: name.to_string(),
            lang,
        });
        (self.units.len() - 1) as u32
    }

    fn ensure_module(&mut self, key: &str, unit: u32, parent: Option<ModId>, name: &str) -> ModId {
        if let Some(&m) = self.module_keys.get(key) {
            return m;
        }
        let id = self.modules.len() as ModId;
        let root = parent.map_or(id, |p| self.modules[p as usize].root);
        self.modules.push(Module {
            key: key.to_string(),
            unit,
            root,
            parent,
            children: Vec::new(),
            by_alias: HashMap::new(),
            globs: Vec::new(),
            package: false,
        });
        if let Some(p) = parent {
            self.modules[p as usize]
                .children
                .push((name.to_string(), id));
        }
        self.module_keys.insert(key.to_string(), id);
        id
    }

    /// Module path of a Rust file: (crate, target root key, module names).
    fn rust_module(&mut self, path: &str, layout: &Layout) -> ModId {
        let manifest = layout
            .manifests
            .iter()
            .find(|m| m.dir.is_empty() || path.starts_with(&format!("{}/", m.dir)));
        let (dir, crate_name) = match manifest {
            Some(m) => (m.dir.as_str(), m.name.replace('-', "_")),
            None => ("", "crate".to_string()),
        };
        let rel = if dir.is_empty() {
            path
        } else {
            &path[dir.len() + 1..]
        };
        let prefix = if dir.is_empty() {
            String::new()
        } else {
            format!("{dir}/")
        };
        let stem = rel.trim_end_matches(".rs");
        let declared =
            manifest.and_then(|m| m.declared_module(rel, layout.has_lib.contains(&prefix)));
        let (target, segs): (String, Vec<&str>) = if let Some(found) = declared {
            found
        } else if let Some(inside) = stem.strip_prefix("src/") {
            if inside == "lib" {
                ("lib".to_string(), Vec::new())
            } else if inside == "main" {
                let t = if layout.has_lib.contains(&prefix) {
                    "main"
                } else {
                    "lib"
                };
                (t.to_string(), Vec::new())
            } else if let Some(bin) = inside.strip_prefix("bin/") {
                let name = bin.split('/').next().unwrap_or(bin);
                (format!("bin/{name}"), module_segments(&bin[name.len()..]))
            } else {
                ("lib".to_string(), module_segments(inside))
            }
        } else {
            let top = rel.split('/').next().unwrap_or("");
            let mut segs = module_segments(stem.get(top.len()..).unwrap_or(""));
            // `tests/it/main.rs` is the root of test crate `it`: its `mod x;`
            // is `tests/it/x.rs`, as `mod.rs` would have it.
            if segs.len() == 2 && segs[1] == "main" {
                segs.pop();
            }
            (top.to_string(), segs)
        };
        // Two packages of one name (vendored copies, unrelated projects in
        // one repository) are still two crates: merged, each would see the
        // other's items and imports as its own.
        let homonym = manifest.is_some_and(|m| {
            layout
                .manifests
                .iter()
                .any(|o| o.name == m.name && o.dir != m.dir)
        });
        let crate_key = if homonym {
            format!("{crate_name}@{dir}")
        } else {
            crate_name.clone()
        };
        let unit = self.unit_id(&crate_key, Lang::Rust);
        let root_key = format!("rs:{crate_key}:{target}");
        let root = self.ensure_module(&root_key, unit, None, "");
        if target == "lib" {
            self.crates.entry(crate_name).or_insert(root);
        }
        let mut cur = root;
        let mut key = root_key;
        for seg in segs {
            key.push_str("::");
            key.push_str(seg);
            cur = self.ensure_module(&key.clone(), unit, Some(cur), seg);
        }
        cur
    }

    fn python_module(&mut self, path: &str, layout: &Layout) -> ModId {
        let packages = &layout.py_packages;
        let stem = path.trim_end_matches(".pyi").trim_end_matches(".py");
        let (dir, file) = match stem.rsplit_once('/') {
            Some((d, f)) => (d, f),
            None => ("", stem),
        };
        // Walk up while the directory is a package.
        let mut pkgs: Vec<&str> = Vec::new();
        let mut d = dir;
        while !d.is_empty() && packages.contains(d) {
            let (parent, name) = match d.rsplit_once('/') {
                Some((p, n)) => (p, n),
                None => ("", d),
            };
            pkgs.push(name);
            d = parent;
        }
        pkgs.reverse();
        let is_init = file == "__init__";
        let mut segs = pkgs.clone();
        if !is_init {
            segs.push(file);
        }
        let unit_name = match pkgs.first() {
            Some(top) => top.to_string(),
            None if dir.is_empty() => file.to_string(),
            None => dir.to_string(),
        };
        let unit = self.unit_id(&unit_name, Lang::Python);
        let mut cur: Option<ModId> = None;
        let mut key = String::from("py:");
        for (i, seg) in segs.iter().enumerate() {
            if i > 0 {
                key.push('.');
            }
            key.push_str(seg);
            cur = Some(self.ensure_module(&key.clone(), unit, cur, seg));
        }
        let m = match cur {
            Some(m) => m,
            None => self.ensure_module("py:", unit, None, ""),
        };
        if is_init {
            self.modules[m as usize].package = true;
        }
        m
    }

    fn add_file(&mut self, src: Source, layout: &Layout, ghost: bool) -> u32 {
        let module = self.module_at(&src.path, src.lang, layout);
        let unit = self.modules[module as usize].unit;
        let file_id = self.files.len() as u32;
        let syms = src.syms;
        let n = syms.defs.len();
        let mut def_mod = vec![module; n];
        let mut inner_mod = vec![None; n];
        // `mod support;` at the top of `tests/a.rs` (a crate root of its
        // own) names the file `tests/support.rs` or `tests/support/mod.rs`,
        // which every such root shares: its module, not one nested in `a`.
        let side_root = src.lang == Lang::Rust && is_side_target_root(&src.path);
        let mut has_items = vec![false; n];
        for d in &syms.defs {
            if let Some(p) = d.parent {
                has_items[p as usize] = true;
            }
        }
        // Parents come before children in document order.
        for i in 0..n {
            let d = &syms.defs[i];
            let m = match d.parent {
                Some(p) => inner_mod[p as usize].unwrap_or(def_mod[p as usize]),
                None => module,
            };
            def_mod[i] = m;
            if d.kind == Kind::Module {
                let outer = match self.modules[m as usize].parent {
                    Some(up) if side_root && d.parent.is_none() && !has_items[i] => up,
                    _ => m,
                };
                let key = format!(
                    "{}{}{}",
                    self.modules[outer as usize].key,
                    sep(src.lang),
                    d.name
                );
                inner_mod[i] = Some(self.ensure_module(&key, unit, Some(outer), &d.name));
            }
        }
        for (i, imp) in syms.imports.iter().enumerate() {
            let m = match imp.scope {
                Some(s) => inner_mod[s as usize].unwrap_or(def_mod[s as usize]),
                None => module,
            };
            let module = &mut self.modules[m as usize];
            if imp.glob {
                module.globs.push((file_id, i as u32));
            } else if !imp.alias.is_empty() {
                module
                    .by_alias
                    .entry(imp.alias.clone())
                    .or_default()
                    .push((file_id, i as u32));
            }
        }
        if !ghost {
            for (i, d) in syms.defs.iter().enumerate() {
                let id = DefId {
                    file: file_id,
                    def: i as u32,
                };
                let map = if d.container.is_some() {
                    &mut self.members
                } else {
                    &mut self.items
                };
                map.entry(d.name.clone()).or_default().push(id);
            }
            for imp in &syms.imports {
                if let Some(last) = imp.path.last() {
                    if !imp.glob && !imp.alias.is_empty() && imp.alias != *last {
                        let list = self.aliases.entry(last.clone()).or_default();
                        if !list.contains(&imp.alias) {
                            list.push(imp.alias.clone());
                        }
                    }
                }
            }
        }
        let test = is_test_path(&src.path);
        self.files.push(File {
            path: src.path,
            lang: src.lang,
            unit,
            module,
            syms,
            test,
            ghost,
            pending: src.pending,
            def_mod,
            inner_mod,
        });
        file_id
    }

    fn module_at(&mut self, path: &str, lang: Lang, layout: &Layout) -> ModId {
        match lang {
            Lang::Rust => self.rust_module(path, layout),
            Lang::Python => self.python_module(path, layout),
        }
    }

    /// The module a file at `path` had on the base side (`base` is the base
    /// layout), created when no head file holds that module path any more,
    /// so references still using the path resolve to it.
    pub fn base_module(&mut self, path: &str, lang: Lang, base: &Layout) -> ModId {
        self.module_at(path, lang, base)
    }

    /// Whether a file of the head tree has module `m` as its own.
    pub fn module_has_file(&self, m: ModId) -> bool {
        self.files.iter().any(|f| !f.ghost && f.module == m)
    }

    /// Add definitions that the diff removed, from the base-side symbols of
    /// `path` (placed by the base layout), so references that still name
    /// them resolve to them.
    pub fn add_ghosts(
        &mut self,
        path: &str,
        lang: Lang,
        syms: Arc<FileSymbols>,
        defs: &[u32],
        base: &Layout,
    ) -> u32 {
        let file = self.add_file(
            Source {
                path: path.to_string(),
                lang,
                syms,
                pending: false,
            },
            base,
            true,
        );
        for &i in defs {
            let d = &self.files[file as usize].syms.defs[i as usize];
            let id = DefId { file, def: i };
            let map = if d.container.is_some() {
                &mut self.members
            } else {
                &mut self.items
            };
            map.entry(d.name.clone()).or_default().push(id);
        }
        file
    }

    pub fn def(&self, id: DefId) -> &super::symbols::Def {
        &self.files[id.file as usize].syms.defs[id.def as usize]
    }

    pub fn file(&self, id: u32) -> &File {
        &self.files[id as usize]
    }

    /// Qualified name: module path, then the definition's path in its file
    /// (`library::shelf::Shelf::add`, `pkg.mod.Class.method`).
    pub fn qualified(&self, id: DefId) -> String {
        let f = &self.files[id.file as usize];
        let module = display_module(&self.modules[f.module as usize].key);
        let local = f.syms.local_path(id.def as usize);
        match f.lang {
            Lang::Rust if module.is_empty() => local,
            Lang::Rust => format!("{module}::{local}"),
            Lang::Python if module.is_empty() => local.replace("::", "."),
            Lang::Python => format!("{}.{}", module, local.replace("::", ".")),
        }
    }

    /// References whose name is one of `names`, by name: (file, ref index).
    /// Ghost files (removed definitions) hold no references.
    pub fn refs_named(&self, names: &HashSet<&str>) -> HashMap<String, Vec<(u32, u32)>> {
        let mut out: HashMap<String, Vec<(u32, u32)>> = HashMap::new();
        if names.is_empty() {
            return out;
        }
        let filter = NameFilter::new(names);
        for (fi, f) in self.files.iter().enumerate() {
            if f.ghost {
                continue;
            }
            for ri in f.syms.refs_named(&filter) {
                let name = &f.syms.refs[ri].name;
                match out.get_mut(name.as_str()) {
                    Some(list) => list.push((fi as u32, ri as u32)),
                    None => {
                        out.insert(name.clone(), vec![(fi as u32, ri as u32)]);
                    }
                }
            }
        }
        out
    }

    /// `name` and every name an import binds it to, transitively: the names
    /// under which a definition can be referenced.
    pub fn names_for(&self, name: &str) -> Vec<String> {
        self.alias_closure(name, |n| self.note_global(n))
    }

    /// `names_for`, telling `note` each name it asks about.
    fn alias_closure(&self, name: &str, note: impl Fn(&str)) -> Vec<String> {
        let mut out = vec![name.to_string()];
        let mut i = 0;
        while i < out.len() && out.len() < 64 {
            note(&out[i]);
            if let Some(list) = self.aliases.get(&out[i]) {
                for a in list {
                    if !out.contains(a) {
                        out.push(a.clone());
                    }
                }
            }
            i += 1;
        }
        out
    }

    /// The module an inline module or `mod b;` definition opens.
    pub fn opened_module(&self, id: DefId) -> Option<ModId> {
        self.files[id.file as usize].inner_mod[id.def as usize]
    }

    /// A module's path for display: `krate::a::b`, `pkg.mod`.
    pub fn module_path(&self, m: ModId) -> String {
        display_module(&self.modules[m as usize].key)
    }

    /// The crate or package a module belongs to.
    pub fn module_unit(&self, m: ModId) -> u32 {
        self.modules[m as usize].unit
    }

    /// Whether module `m` is `within` or lies below it.
    fn descends(&self, m: ModId, within: ModId) -> bool {
        let mut cur = Some(m);
        let mut steps = 0;
        while let Some(c) = cur {
            if c == within {
                return true;
            }
            steps += 1;
            if steps > self.modules.len() {
                return false;
            }
            cur = self.modules[c as usize].parent;
        }
        false
    }

    /// Whether code of module `m` can hold something declared in the
    /// subtree of `within`: `m` is in that subtree, or above it (an inline
    /// module of an ancestor's file may lie inside it).
    pub fn related(&self, m: ModId, within: ModId) -> bool {
        self.descends(m, within) || self.descends(within, m)
    }

    /// The name other code uses for module `m`: its name in its parent, the
    /// crate name of a library root, the name of a top-level Python module.
    fn module_name(&self, m: ModId) -> Option<String> {
        let module = &self.modules[m as usize];
        let name = match module.parent {
            Some(p) => self.modules[p as usize]
                .children
                .iter()
                .find(|(_, c)| *c == m)
                .map(|(n, _)| n.clone()),
            None => match module.key.strip_prefix("py:") {
                Some(top) => Some(top.to_string()),
                None => self
                    .crates
                    .iter()
                    .find(|&(_, &root)| root == m)
                    .map(|(n, _)| n.clone()),
            },
        };
        name.filter(|n| !n.is_empty())
    }

    /// The part of the tree whose code can name module `m`.
    ///
    /// The declaring parent's files are read whole first, so the answer
    /// never rests on a declaration not yet parsed.
    fn module_reach(&self, m: ModId) -> Reach {
        if self.modules_lang(m) == Lang::Python {
            return Reach::Anywhere;
        }
        let module = &self.modules[m as usize];
        // A library is named by other crates; a binary, test or example
        // target by nothing outside itself.
        let target = if self.crates.values().any(|&root| root == module.root) {
            Reach::Anywhere
        } else {
            Reach::Within(module.root)
        };
        let (Some(parent), Some(name)) = (module.parent, self.module_name(m)) else {
            return target;
        };
        let mut pending = false;
        for (i, f) in self.files.iter().enumerate() {
            if f.module == parent && !f.ghost {
                self.note_file(i as u32);
                pending |= f.pending;
            }
        }
        if pending {
            return Reach::Pending;
        }
        // An inline module of an ancestor's file may declare it too.
        self.note_local(parent, &name);
        let widest = self
            .items
            .get(name.as_str())
            .into_iter()
            .flatten()
            .filter(|&&d| self.def(d).kind == Kind::Module && self.opened_module(d) == Some(m))
            .map(|&d| match self.def(d).visibility {
                Visibility::Private => 0,
                Visibility::Crate => 1,
                Visibility::Public => 2,
            })
            .max();
        match widest {
            // Private: its parent and the parent's descendants.
            Some(0) => Reach::Within(parent),
            // `pub(crate)`, `pub(super)`, `pub(in …)`: at most its crate.
            Some(1) => Reach::Within(module.root),
            // Public, or a file no parsed module declares: its target's reach.
            _ => target,
        }
    }

    /// Every place of the head tree that names module `m`: its declaration
    /// (`mod b;`), imports of it or from it (`use a::b`, `use a::b::X`,
    /// `use super::b::*`, `import pkg.mod as m`, `from pkg import mod`,
    /// `from .mod import *`), references through its path (`b::f()`,
    /// `crate::a::b::T`, `m.f()`, `pkg.mod.f()`). Paths are resolved, so each
    /// site is exact; a path that may lead to several modules counts them.
    ///
    /// Records what it depends on: the module's names and aliases (across
    /// the tree, or in its reach when Rust privacy bounds it), and the
    /// relative anchors (`super`, `crate`, Python's dots) below it.
    pub fn module_mentions(&self, m: ModId) -> Vec<ModuleMention> {
        let lang = self.modules_lang(m);
        let reach = match self.module_reach(m) {
            Reach::Anywhere => None,
            Reach::Within(r) => Some(r),
            // This round's answer is discarded: the declaring file is parsed
            // first, and asking about names now would parse for nothing.
            Reach::Pending => return Vec::new(),
        };
        let words: HashSet<String> = match (self.module_name(m), reach) {
            (None, _) => HashSet::new(),
            (Some(name), None) => self.names_for(&name).into_iter().collect(),
            (Some(name), Some(r)) => self
                .alias_closure(&name, |n| self.note_within(r, n))
                .into_iter()
                .collect(),
        };
        // Paths that name `m` without its name start from a module below it.
        match lang {
            Lang::Rust => {
                self.note_within(m, "super");
                if self.modules[m as usize].parent.is_none() {
                    self.note_within(m, "crate");
                }
            }
            Lang::Python => {
                if self.modules[m as usize].package {
                    self.note_within(m, "import");
                }
            }
        }
        let mut memo: HashMap<ModId, HashMap<Vec<String>, Option<usize>>> = HashMap::new();
        let mut leads = |from: ModId, segs: &[String]| -> Option<usize> {
            let seen = memo.entry(from).or_default();
            if let Some(&hit) = seen.get(segs) {
                return hit;
            }
            let hit = self.path_reaches(from, segs, lang, m);
            seen.insert(segs.to_vec(), hit);
            hit
        };
        let mut out = Vec::new();
        for (fi, f) in self.files.iter().enumerate() {
            if f.ghost || f.lang != lang || reach.is_some_and(|r| !self.related(f.module, r)) {
                continue;
            }
            let file = fi as u32;
            for (i, imp) in f.syms.imports.iter().enumerate() {
                if !may_name(&imp.path, &words, lang) {
                    continue;
                }
                let from = self.scope_mod(file, imp.scope);
                let hit = if imp.glob {
                    leads(from, &imp.path)
                } else {
                    match self.resolve_path(from, &imp.path, lang) {
                        PathOutcome::Found(ts) if ts.contains(&Target::Module(m)) => Some(ts.len()),
                        // The import names another module, not an item of this one.
                        PathOutcome::Found(ts)
                            if ts.iter().all(|t| matches!(t, Target::Module(_))) =>
                        {
                            None
                        }
                        PathOutcome::External => None,
                        _ => imp
                            .path
                            .split_last()
                            .filter(|(_, q)| !q.is_empty())
                            .and_then(|(_, q)| leads(from, q)),
                    }
                };
                if let Some(candidates) = hit {
                    out.push(ModuleMention {
                        file,
                        at: Mention::Import(i as u32),
                        candidates,
                    });
                }
            }
            for (i, r) in f.syms.refs.iter().enumerate() {
                // Imports were read above, whole.
                if r.form == Form::Import {
                    continue;
                }
                let split;
                let qualifier: &[String] = match &r.receiver {
                    _ if !r.path.is_empty() => &r.path,
                    Receiver::Name(n) => {
                        split = n.split(sep(lang)).map(str::to_string).collect::<Vec<_>>();
                        &split
                    }
                    _ => continue,
                };
                if !may_name(qualifier, &words, lang) {
                    continue;
                }
                if let Some(candidates) = leads(self.scope_mod(file, r.scope), qualifier) {
                    out.push(ModuleMention {
                        file,
                        at: Mention::Ref(i as u32),
                        candidates,
                    });
                }
            }
        }
        // Declarations: `mod b;` (and inline modules of that path).
        if let Some(name) = self.module_name(m) {
            for &d in self.items.get(name.as_str()).into_iter().flatten() {
                let f = &self.files[d.file as usize];
                if !f.ghost
                    && self.def(d).kind == Kind::Module
                    && self.opened_module(d) == Some(m)
                    && reach.is_none_or(|r| self.related(f.module, r))
                {
                    out.push(ModuleMention {
                        file: d.file,
                        at: Mention::Decl(d.def),
                        candidates: 1,
                    });
                }
            }
        }
        out
    }

    /// When `segs`, seen from module `from`, leads to module `m`: how many
    /// targets the path has.
    fn path_reaches(&self, from: ModId, segs: &[String], lang: Lang, m: ModId) -> Option<usize> {
        match self.resolve_path(from, segs, lang) {
            PathOutcome::Found(ts) if ts.contains(&Target::Module(m)) => Some(ts.len()),
            _ => None,
        }
    }

    fn scope_mod(&self, file: u32, scope: Option<u32>) -> ModId {
        let f = &self.files[file as usize];
        match scope {
            Some(s) => f.inner_mod[s as usize].unwrap_or(f.def_mod[s as usize]),
            None => f.module,
        }
    }

    fn def_module(&self, id: DefId) -> ModId {
        self.files[id.file as usize].def_mod[id.def as usize]
    }

    /// Declared directly in a module, not inside a function or type.
    fn module_level(&self, id: DefId) -> bool {
        let f = &self.files[id.file as usize];
        let mut cur = f.syms.defs[id.def as usize].parent;
        while let Some(p) = cur {
            let d = &f.syms.defs[p as usize];
            if d.kind != Kind::Module {
                return false;
            }
            cur = d.parent;
        }
        true
    }

    fn def_target(&self, id: DefId) -> Target {
        match self.files[id.file as usize].inner_mod[id.def as usize] {
            Some(m) => Target::Module(m),
            None => Target::Def(id),
        }
    }

    /// The implementations of a Rust trait's item (`fn f` in `impl Trait
    /// for T`): they change with it. Empty for anything but a trait item.
    pub fn trait_impls(&self, item: DefId) -> Vec<DefId> {
        let d = self.def(item);
        let Some(trait_def) = d.parent.map(|p| DefId {
            file: item.file,
            def: p,
        }) else {
            return Vec::new();
        };
        let tr = self.def(trait_def);
        if tr.kind != Kind::Trait || self.files[item.file as usize].lang != Lang::Rust {
            return Vec::new();
        }
        // Files holding an impl name both the item and the trait.
        self.note_pair(&d.name, &tr.name);
        self.members_named(d.name.as_str())
            .filter(|&m| {
                self.def(m).trait_name.as_deref() == Some(tr.name.as_str())
                    && self.implements(m, trait_def)
            })
            .collect()
    }

    /// Whether the impl holding item `m` is of `trait_def`: the trait's name
    /// resolves to it in the impl's module, or, when it cannot be resolved
    /// there (a path like `crate::a::Trait`), no other trait has that name.
    fn implements(&self, m: DefId, trait_def: DefId) -> bool {
        let name = &self.def(trait_def).name;
        match self.resolve_path(self.def_module(m), std::slice::from_ref(name), Lang::Rust) {
            PathOutcome::Found(ts) => ts.contains(&Target::Def(trait_def)),
            PathOutcome::External => false,
            PathOutcome::Unresolved => {
                self.note_global(name);
                self.items
                    .get(name.as_str())
                    .into_iter()
                    .flatten()
                    .all(|&t| t == trait_def || self.def(t).kind != Kind::Trait)
            }
        }
    }

    /// The names a module binds to `name`: its items, submodules, imports,
    /// then glob imports.
    fn lookup(&self, m: ModId, name: &str, out: &mut Vec<Target>) {
        for t in self.lookup_memo(m, name).iter() {
            push_unique(out, *t);
        }
    }

    /// `lookup`'s answer, computed once per (module, name) and index.
    ///
    /// Imports and glob imports lead to other lookups, which may lead back
    /// (glob cycles, a package whose glob imports name modules that are
    /// not in the tree, so each is looked up among the others): a lookup
    /// met again while it is under way answers only what its module
    /// declares itself (a cut). An answer resting on a cut is kept aside
    /// until the cut lookup is done: if that one found no more, the cut was
    /// exact and the answer is kept for good; else it is dropped, and
    /// recomputed when asked by another question. Within one question no lookup is computed twice,
    /// so no input makes the work grow faster than the lookups it holds.
    fn lookup_memo(&self, m: ModId, name: &str) -> Rc<[Target]> {
        let key = Key::Lookup(m, name.into());
        match self.memo_enter(&key) {
            Entered::Known(found) => found,
            // What the module itself declares: `pub use search::search;`
            // names the module `search` to import its function.
            Entered::Cut => Rc::from(self.declared(m, name)),
            Entered::Fresh(frame) => {
                let found = self.lookup_uncached(m, name);
                self.memo_leave(key, frame, found)
            }
        }
    }

    /// What module `m` itself declares under `name`: its items and
    /// submodules, no import. The answer of a lookup cut short.
    fn declared(&self, m: ModId, name: &str) -> Vec<Target> {
        self.note_local(m, name);
        let mut out = Vec::new();
        if let Some(list) = self.items.get(name) {
            for &d in list {
                if self.def_module(d) == m && self.module_level(d) {
                    push_unique(&mut out, self.def_target(d));
                }
            }
        }
        for (child, id) in &self.modules[m as usize].children {
            if child == name {
                push_unique(&mut out, Target::Module(*id));
            }
        }
        out
    }

    fn lookup_uncached(&self, m: ModId, name: &str) -> Vec<Target> {
        let mut out = self.declared(m, name);
        let module = &self.modules[m as usize];
        for &(f, i) in module.by_alias.get(name).into_iter().flatten() {
            let imp = &self.files[f as usize].syms.imports[i as usize];
            if let PathOutcome::Found(ts) = self.resolve_import(m, imp) {
                for t in ts {
                    push_unique(&mut out, t);
                }
            }
        }
        if !out.is_empty() {
            return out;
        }
        self.note_local(m, GLOB);
        for &(f, i) in &module.globs {
            let imp = &self.files[f as usize].syms.imports[i as usize];
            let PathOutcome::Found(ts) =
                self.resolve_path(m, &imp.path, self.files[f as usize].lang)
            else {
                continue;
            };
            for t in ts {
                match t {
                    Target::Module(g) => self.lookup(g, name, &mut out),
                    Target::Def(d) => {
                        for t in self.members_of(d, name).iter() {
                            push_unique(&mut out, Target::Def(*t));
                        }
                    }
                }
            }
        }
        out
    }

    /// Start computing `key`: its answer when known, a cut when it is
    /// already under way (or the analysis is out of time or depth), else
    /// a new frame on the stack.
    fn memo_enter(&self, key: &Key) -> Entered {
        let mut memo = self.memo.borrow_mut();
        if let Some(found) = memo.done.get(key) {
            return Entered::Known(Rc::clone(found));
        }
        if let Some((found, cuts)) = memo.provisional.get(key) {
            let (found, cuts) = (Rc::clone(found), cuts.clone());
            memo.cuts.extend(cuts);
            return Entered::Known(found);
        }
        if let Some(found) = memo.scratch.get(key) {
            let found = Rc::clone(found);
            memo.cuts.push(PARTIAL);
            return Entered::Known(found);
        }
        if let Some(at) = memo.stack.iter().position(|k| k == key) {
            memo.cuts.push(at);
            return Entered::Cut;
        }
        if memo.stack.len() >= MAX_NESTING || self.out_of_time(&mut memo) {
            memo.cuts.push(PARTIAL);
            return Entered::Cut;
        }
        memo.computed += 1;
        let frame = Frame {
            outer_cuts: std::mem::take(&mut memo.cuts),
        };
        memo.stack.push(key.clone());
        Entered::Fresh(frame)
    }

    /// Finish computing `key` (see `lookup_memo`): settle the answers that
    /// rested on a cut of it, then keep its own answer for good, aside
    /// until the lookups it rests on are done, or for this question only.
    fn memo_leave(&self, key: Key, frame: Frame, found: Vec<Target>) -> Rc<[Target]> {
        // What a cut of this question answered.
        let cut = match &key {
            Key::Lookup(m, name) => self.declared(*m, name),
            Key::Members(..) => Vec::new(),
        };
        let mut memo = self.memo.borrow_mut();
        memo.stack.pop();
        let at = memo.stack.len();
        let exact_cut = found == cut;
        let found: Rc<[Target]> = Rc::from(found);
        for waiting in memo.waiting.remove(&at).unwrap_or_default() {
            let Some((answer, mut cuts)) = memo.provisional.remove(&waiting) else {
                continue;
            };
            if exact_cut {
                cuts.retain(|&c| c != at);
            } else {
                // The cut answered nothing where there was something.
                cuts.push(PARTIAL);
            }
            // Still waiting on the rest of its cuts, under which it is
            // filed already.
            memo.resettle(waiting, answer, cuts);
        }
        let mut cuts = std::mem::take(&mut memo.cuts);
        // A cut of itself is exact: the lookup went on to explore
        // everything the cut would have found.
        cuts.retain(|&c| c != at);
        cuts.sort_unstable();
        cuts.dedup();
        memo.settle(key, Rc::clone(&found), cuts.clone());
        memo.cuts = frame.outer_cuts;
        memo.cuts.extend(cuts);
        if memo.stack.is_empty() {
            memo.scratch.clear();
            memo.cuts.clear();
        }
        found
    }

    /// Whether the analysis has run past its deadline, checked once every
    /// few hundred lookups: past it, every lookup answers nothing, so the
    /// analysis ends soon with what it found, flagged as cut short.
    fn out_of_time(&self, memo: &mut Memo) -> bool {
        if memo.expired {
            return true;
        }
        memo.ticks = memo.ticks.wrapping_add(1);
        if memo.ticks % 256 == 0 && self.deadline.is_some_and(|d| Instant::now() >= d) {
            memo.expired = true;
        }
        memo.expired
    }

    /// Stop answering (empty answers, quickly) once `deadline` has passed.
    pub fn set_deadline(&mut self, deadline: Option<Instant>) {
        self.deadline = deadline;
    }

    /// How many lookups were computed rather than answered from the memo.
    #[cfg(test)]
    fn lookups_computed(&self) -> u64 {
        self.memo.borrow().computed
    }

    /// Whether the deadline passed: answers since then may be missing.
    pub fn expired(&self) -> bool {
        let mut memo = self.memo.borrow_mut();
        if !memo.expired && self.deadline.is_some_and(|d| Instant::now() >= d) {
            memo.expired = true;
        }
        memo.expired
    }

    fn resolve_import(&self, m: ModId, imp: &Import) -> PathOutcome {
        let lang = self.modules_lang(m);
        self.resolve_path(m, &imp.path, lang)
    }

    fn modules_lang(&self, m: ModId) -> Lang {
        if self.modules[m as usize].key.starts_with("py:") {
            Lang::Python
        } else {
            Lang::Rust
        }
    }

    /// The types that the function at `path`, seen from module `m`, is
    /// declared to return (each looked up from the function's own module).
    /// `T::f` where `f` is not the project's (`T::default()`, a derived or
    /// std trait's constructor) is taken to make a `T`.
    fn returned_types(&self, m: ModId, path: &[String], lang: Lang) -> Vec<DefId> {
        let functions = match self.resolve_path(m, path, lang) {
            PathOutcome::Found(functions) => functions,
            _ if path.len() >= 2 => {
                let owner = &path[..path.len() - 1];
                return self.types_at(m, owner, lang).unwrap_or_default();
            }
            _ => return Vec::new(),
        };
        let mut out = Vec::new();
        for f in functions {
            let Target::Def(f) = f else { continue };
            out.extend(self.declared_return(f).unwrap_or_default());
        }
        out
    }

    /// The project types of the module variables `segs` names from
    /// module `m`, as declared or constructed.
    fn variable_types(&self, m: ModId, segs: &[String], lang: Lang) -> Option<Vec<DefId>> {
        let PathOutcome::Found(ts) = self.resolve_path(m, segs, lang) else {
            return None;
        };
        let mut out = Vec::new();
        for t in ts {
            let Target::Def(v) = t else { continue };
            for t in self.variable_type(v).unwrap_or_default() {
                if !out.contains(&t) {
                    out.push(t);
                }
            }
        }
        (!out.is_empty()).then_some(out)
    }

    /// The project types variable `v` is declared or constructed with.
    fn variable_type(&self, v: DefId) -> Option<Vec<DefId>> {
        let d = self.def(v);
        let ty = d.returns.as_ref().filter(|_| d.kind == Kind::Variable)?;
        let lang = self.files[v.file as usize].lang;
        self.types_at(self.def_module(v), &split_path(ty, lang), lang)
    }

    /// The types function `f` is declared to return, if it says.
    fn declared_return(&self, f: DefId) -> Option<Vec<DefId>> {
        if self.def(f).kind == Kind::Variable {
            return None;
        }
        let ret = self.def(f).returns.as_ref()?;
        let lang = self.files[f.file as usize].lang;
        let segs = split_path(ret, lang);
        self.types_at(self.def_module(f), &segs, lang)
    }

    /// The project types `segs` names from module `m`, if it names any.
    fn types_at(&self, m: ModId, segs: &[String], lang: Lang) -> Option<Vec<DefId>> {
        let PathOutcome::Found(ts) = self.resolve_path(m, segs, lang) else {
            return None;
        };
        let types: Vec<DefId> = ts
            .into_iter()
            .filter_map(|t| match t {
                Target::Def(d) if self.def(d).kind.is_type() => Some(d),
                _ => None,
            })
            .collect();
        (!types.is_empty()).then_some(types)
    }

    /// The project types a value of `receiver` has, seen from module `m`
    /// and `scope` of `file`; None when that is not known.
    fn receiver_types(
        &self,
        file: u32,
        scope: Option<u32>,
        m: ModId,
        receiver: &Receiver,
    ) -> Option<Vec<DefId>> {
        let lang = self.files[file as usize].lang;
        match receiver {
            Receiver::SelfValue => self.self_type(file, scope).map(|t| vec![t]),
            Receiver::Type(t) => self.types_at(m, &split_path(t, lang), lang),
            // A class, or a module variable of a declared type (`flask.g`).
            Receiver::Name(t) => {
                let segs = split_path(t, lang);
                self.types_at(m, &segs, lang)
                    .or_else(|| self.variable_types(m, &segs, lang))
            }
            Receiver::Field(f) => {
                let owner = self.self_type(file, scope)?;
                let (home, ty) = self
                    .field_type(owner, f, 0)
                    .filter(|(_, t)| !t.is_empty())?;
                self.types_at(self.def_module(home), &split_path(ty, lang), lang)
            }
            Receiver::Returned(path) => {
                let types = self.returned_types(m, path, lang);
                (!types.is_empty()).then_some(types)
            }
            Receiver::MethodReturn(on, method) => {
                let mut out = Vec::new();
                for owner in self.receiver_types(file, scope, m, on)? {
                    for f in self.members_of(owner, method) {
                        for t in self.declared_return(f).unwrap_or_default() {
                            if !out.contains(&t) {
                                out.push(t);
                            }
                        }
                    }
                }
                (!out.is_empty()).then_some(out)
            }
            Receiver::Attribute(..) | Receiver::Item(_) => {
                let mut out = Vec::new();
                for (home, ty) in self.declared_types(file, scope, m, receiver) {
                    if ty.starts_with('[') {
                        continue;
                    }
                    for t in self
                        .types_at(home, &split_path(&ty, lang), lang)
                        .unwrap_or_default()
                    {
                        if !out.contains(&t) {
                            out.push(t);
                        }
                    }
                }
                (!out.is_empty()).then_some(out)
            }
            Receiver::None | Receiver::Super | Receiver::Unknown => None,
        }
    }

    /// Whether an attribute or element `receiver` is declared, and only
    /// as types from outside the project or containers.
    fn declared_outside(
        &self,
        file: u32,
        scope: Option<u32>,
        m: ModId,
        receiver: &Receiver,
    ) -> bool {
        if !matches!(receiver, Receiver::Attribute(..) | Receiver::Item(_)) {
            return false;
        }
        let lang = self.files[file as usize].lang;
        let declared = self.declared_types(file, scope, m, receiver);
        !declared.is_empty()
            && declared.iter().all(|(home, ty)| {
                ty.starts_with('[')
                    || matches!(
                        self.resolve_path(*home, &split_path(ty, lang), lang),
                        PathOutcome::External
                    )
            })
    }

    /// The types a value of `receiver` is declared to have, as written
    /// (`[T]` for a container of `T`), each with the module that reads
    /// it: what an attribute or an element of the value needs.
    fn declared_types(
        &self,
        file: u32,
        scope: Option<u32>,
        m: ModId,
        receiver: &Receiver,
    ) -> Vec<(ModId, String)> {
        let lang = self.files[file as usize].lang;
        let returns = |f: DefId| {
            let d = self.def(f);
            let called = d.kind != Kind::Variable;
            d.returns
                .clone()
                .filter(|_| called)
                .map(|r| (self.def_module(f), r))
        };
        match receiver {
            Receiver::Type(t) => vec![(m, t.clone())],
            Receiver::Field(f) => self
                .self_type(file, scope)
                .and_then(|owner| self.field_type(owner, f, 0))
                .filter(|(_, t)| !t.is_empty())
                .map(|(home, t)| vec![(self.def_module(home), t.to_string())])
                .unwrap_or_default(),
            Receiver::Attribute(on, name) => {
                // `let (tx, rx) = channel();`: the element of a tuple.
                if let Ok(i) = name.parse::<usize>() {
                    let elements: Vec<(ModId, String)> = self
                        .declared_types(file, scope, m, on)
                        .into_iter()
                        .filter_map(|(home, t)| {
                            let inner = t.strip_prefix('(')?.strip_suffix(')')?;
                            let element = tuple_elements(inner).into_iter().nth(i)?;
                            (element != "_").then(|| (home, element.to_string()))
                        })
                        .collect();
                    if !elements.is_empty() {
                        return elements;
                    }
                }
                // Else a field (`guard.lock.s`, a tuple struct's `w.0`).
                let owners = self.receiver_types(file, scope, m, on).unwrap_or_default();
                let mut out = Vec::new();
                for owner in owners {
                    match self
                        .field_type(owner, name, 0)
                        .filter(|(_, t)| !t.is_empty())
                    {
                        Some((home, t)) => out.push((self.def_module(home), t.to_string())),
                        // A Python property: what its method returns. A
                        // Rust method is never read as a field.
                        None if lang == Lang::Python => {
                            out.extend(self.members_of(owner, name).into_iter().filter_map(returns))
                        }
                        None => {}
                    }
                }
                out
            }
            Receiver::Item(on) => self
                .declared_types(file, scope, m, on)
                .into_iter()
                .filter_map(|(home, t)| {
                    let inner = t.strip_prefix('[')?.strip_suffix(']')?;
                    Some((home, inner.to_string()))
                })
                .collect(),
            Receiver::Returned(path) => match self.resolve_path(m, path, lang) {
                PathOutcome::Found(fs) => fs
                    .into_iter()
                    .filter_map(|f| match f {
                        Target::Def(f) => returns(f),
                        Target::Module(_) => None,
                    })
                    .collect(),
                _ => Vec::new(),
            },
            Receiver::MethodReturn(on, method) => {
                let owners = self.receiver_types(file, scope, m, on).unwrap_or_default();
                owners
                    .into_iter()
                    .flat_map(|owner| self.members_of(owner, method))
                    .filter_map(returns)
                    .collect()
            }
            _ => Vec::new(),
        }
    }

    /// `r` on a value of the project types `types`: their members of that
    /// name. When they have none, the method is one of a trait (Rust) or of
    /// a base outside the project: same-name methods of other types are not
    /// candidates, only trait items may be.
    fn on_types(&self, file: u32, r: &Ref, types: &[DefId]) -> Resolution {
        let found: Vec<Target> = types
            .iter()
            .flat_map(|&t| self.members_of(t, &r.name))
            .map(Target::Def)
            .collect();
        if !found.is_empty() {
            return exact(found);
        }
        if self.files[file as usize].lang == Lang::Python {
            return Resolution::none();
        }
        // A type that dereferences to another (`CachePadded<Idle>`) has
        // the target's methods too, which its declaration does not name.
        if types.iter().any(|&t| self.derefs(t)) {
            return self.by_method_name(file, r);
        }
        let by_name = self.by_method_name(file, r);
        let targets: Vec<DefId> = by_name
            .targets
            .into_iter()
            .filter(|&d| self.def(d).trait_name.is_some() || self.in_trait(d))
            .collect();
        self.by_name_filtered(&r.name, targets)
    }

    /// Whether the Rust type `t` implements `Deref`.
    fn derefs(&self, t: DefId) -> bool {
        self.members_of(t, "deref")
            .into_iter()
            .any(|d| self.def(d).trait_name.as_deref() == Some("Deref"))
    }

    /// Whether `d` is declared in a trait's body (a default method).
    fn in_trait(&self, d: DefId) -> bool {
        self.def(d).parent.is_some_and(|p| {
            self.def(DefId {
                file: d.file,
                def: p,
            })
            .kind
                == Kind::Trait
        })
    }

    fn resolve_path(&self, m: ModId, segs: &[String], lang: Lang) -> PathOutcome {
        let Some(first) = segs.first() else {
            return PathOutcome::Unresolved;
        };
        let mut i = 1;
        let mut cur: Vec<Target> = match lang {
            Lang::Rust => match first.as_str() {
                "crate" => self
                    .crate_roots(m)
                    .into_iter()
                    .map(Target::Module)
                    .collect(),
                "self" => vec![Target::Module(m)],
                "super" => {
                    let mut c = self.modules[m as usize].parent.unwrap_or(m);
                    while segs.get(i).is_some_and(|s| s == "super") {
                        c = self.modules[c as usize].parent.unwrap_or(c);
                        i += 1;
                    }
                    // Up to a test target's shared root: the crate root.
                    if c == self.modules[m as usize].root {
                        self.crate_roots(m)
                            .into_iter()
                            .map(Target::Module)
                            .collect()
                    } else {
                        vec![Target::Module(c)]
                    }
                }
                _ => {
                    let mut out = Vec::new();
                    self.lookup(m, first, &mut out);
                    if segs.len() > 1 {
                        out.retain(|t| self.can_prefix(t));
                    }
                    // `use serde::de;` then `de::Error`: serde's, even
                    // when the crate has a `de` module of its own.
                    if out.is_empty() && self.imported(m, first) {
                        return PathOutcome::External;
                    }
                    if out.is_empty() {
                        if let Some(&root) = self.crates.get(first.as_str()) {
                            out.push(Target::Module(root));
                        } else {
                            let root = self.modules[m as usize].root;
                            if root != m {
                                self.lookup(root, first, &mut out);
                            }
                        }
                    }
                    if out.is_empty() {
                        return PathOutcome::External;
                    }
                    out
                }
            },
            Lang::Python => {
                if first.starts_with('.') {
                    // `.` is the package holding the module; each further
                    // dot one package up. Above the top there is nothing:
                    // never the module itself.
                    let module = &self.modules[m as usize];
                    let mut c = if module.package {
                        Some(m)
                    } else {
                        module.parent
                    };
                    for _ in 1..first.len() {
                        c = c.and_then(|c| self.modules[c as usize].parent);
                    }
                    match c {
                        Some(c) => vec![Target::Module(c)],
                        None => return PathOutcome::Unresolved,
                    }
                } else if let Some(&top) = self.module_keys.get(&format!("py:{first}")) {
                    vec![Target::Module(top)]
                } else {
                    let mut out = Vec::new();
                    self.lookup(m, first, &mut out);
                    if out.is_empty() {
                        return PathOutcome::External;
                    }
                    out
                }
            }
        };
        for (k, seg) in segs.iter().enumerate().skip(i) {
            let mut next = Vec::new();
            for t in &cur {
                match *t {
                    Target::Module(mm) => self.lookup(mm, seg, &mut next),
                    Target::Def(d) => {
                        for x in self.members_of(d, seg) {
                            push_unique(&mut next, Target::Def(x));
                        }
                    }
                }
            }
            if lang == Lang::Rust && k + 1 < segs.len() {
                next.retain(|t| self.can_prefix(t));
            }
            if next.is_empty() {
                return PathOutcome::Unresolved;
            }
            cur = next;
        }
        PathOutcome::Found(cur)
    }

    /// The crate roots that `crate` names from module `m`. Each test, bench
    /// or example file (`tests/a.rs`, `tests/it/main.rs`) is a crate of its
    /// own, modelled as a module under its target's shared root; a folder
    /// module they declare (`mod common;` for `tests/common/mod.rs`) belongs
    /// to each crate declaring it. Elsewhere, the target's root.
    fn crate_roots(&self, m: ModId) -> Vec<ModId> {
        let root = self.modules[m as usize].root;
        let mut top = m;
        while let Some(p) = self.modules[top as usize].parent {
            if p == root {
                break;
            }
            top = p;
        }
        if top == root {
            return vec![root];
        }
        let crates = self.side_crates.get_or_init(|| self.side_crates_map());
        match crates.get(&top) {
            Some(own) if own == &[top] => own.clone(),
            found => {
                // Which crates declare `top` depends on every crate file
                // of this target. Noting them walks the tree: only when
                // recording.
                if self.probe.is_some() {
                    for (i, f) in self.files.iter().enumerate() {
                        if self.modules[f.module as usize].parent == Some(root)
                            && is_side_crate_file(&f.path)
                        {
                            self.note_file(i as u32);
                        }
                    }
                }
                match found {
                    Some(declaring) if !declaring.is_empty() => declaring.clone(),
                    _ => vec![root],
                }
            }
        }
    }

    fn side_crates_map(&self) -> HashMap<ModId, Vec<ModId>> {
        let mut map: HashMap<ModId, Vec<ModId>> = HashMap::new();
        let side: Vec<&File> = self
            .files
            .iter()
            .filter(|f| f.lang == Lang::Rust && is_side_crate_file(&f.path))
            .collect();
        for f in &side {
            map.insert(f.module, vec![f.module]);
        }
        for f in &side {
            let root = self.modules[f.module as usize].root;
            for (d, def) in f.syms.defs.iter().enumerate() {
                let Some(declared) = f.inner_mod[d] else {
                    continue;
                };
                if def.kind == Kind::Module
                    && def.parent.is_none()
                    && self.modules[declared as usize].parent == Some(root)
                {
                    let list = map.entry(declared).or_default();
                    if list != &[declared] && !list.contains(&f.module) {
                        list.push(f.module);
                    }
                }
            }
        }
        map
    }

    /// Whether a Rust path can go on through this target: modules and types
    /// can (`a::b`, `Type::new`); a function or constant of the same name
    /// cannot, as Rust keeps values and types in separate namespaces
    /// (`use demo::X` in a binary that also defines `fn demo()`).
    fn can_prefix(&self, t: &Target) -> bool {
        match *t {
            Target::Module(_) => true,
            Target::Def(d) => {
                let kind = self.def(d).kind;
                kind.is_type() || kind == Kind::Module
            }
        }
    }

    /// Every definition with a container (a method, variant, associated
    /// item) named `name`.
    fn members_named<'s>(&'s self, name: &str) -> impl Iterator<Item = DefId> + 's {
        self.members.get(name).into_iter().flatten().copied()
    }

    /// Members named `name` of the type `owner` (and, for Python classes,
    /// of its bases), computed once per index like `lookup_memo` (class
    /// hierarchies may have cycles too).
    fn members_of(&self, owner: DefId, name: &str) -> Vec<DefId> {
        if !self.def(owner).kind.is_type() {
            return Vec::new();
        }
        let key = Key::Members(owner, name.into());
        let found = match self.memo_enter(&key) {
            Entered::Known(found) => found,
            Entered::Cut => return Vec::new(),
            Entered::Fresh(frame) => {
                let found = self
                    .members_uncached(owner, name)
                    .into_iter()
                    .map(Target::Def)
                    .collect();
                self.memo_leave(key, frame, found)
            }
        };
        found
            .iter()
            .filter_map(|t| match *t {
                Target::Def(d) => Some(d),
                Target::Module(_) => None,
            })
            .collect()
    }

    fn members_uncached(&self, owner: DefId, name: &str) -> Vec<DefId> {
        let od = self.def(owner);
        let unit = self.files[owner.file as usize].unit;
        let python = self.files[owner.file as usize].lang == Lang::Python;
        // Several types of this name in the crate: an impl belongs to the
        // one its own module resolves the name to.
        // Python members are in the owner's own file; Rust ones in a file
        // naming both the member and the owner (`impl Owner`).
        if !python {
            self.note_unit(unit, &od.name);
            self.note_pair(name, &od.name);
        }
        let homonyms = !python
            && self
                .items
                .get(od.name.as_str())
                .into_iter()
                .flatten()
                .filter(|&&d| {
                    d != owner
                        && self.files[d.file as usize].unit == unit
                        && self.def(d).kind.is_type()
                })
                .count()
                > 0;
        let mut out: Vec<DefId> = self
            .members_named(name)
            .filter(|&d| {
                let md = self.def(d);
                if python {
                    // A Python class's members are in its body.
                    return d.file == owner.file && md.parent == Some(owner.def);
                }
                if self.files[d.file as usize].unit != unit
                    || md.container.as_deref() != Some(od.name.as_str())
                {
                    return false;
                }
                if !homonyms || (md.parent == Some(owner.def) && d.file == owner.file) {
                    return true;
                }
                let mut found = Vec::new();
                self.lookup(self.def_module(d), &od.name, &mut found);
                found.is_empty() || found.contains(&Target::Def(owner))
            })
            .collect();
        // Rust looks in inherent impls before trait impls: `x.len()` on a
        // type with both calls the inherent one.
        if !python && out.iter().any(|&d| self.def(d).trait_name.is_none()) {
            out.retain(|&d| self.def(d).trait_name.is_none());
        }
        if out.is_empty() {
            out = self.base_members(owner, name);
        }
        out
    }

    /// Members named `name` of the bases of `owner` (Python classes).
    fn base_members(&self, owner: DefId, name: &str) -> Vec<DefId> {
        let od = self.def(owner);
        let mut out = Vec::new();
        let m = self.def_module(owner);
        let lang = self.files[owner.file as usize].lang;
        for base in &od.bases {
            let segs: Vec<String> = base.split('.').map(str::to_string).collect();
            if let PathOutcome::Found(ts) = self.resolve_path(m, &segs, lang) {
                for t in ts {
                    if let Target::Def(b) = t {
                        if b != owner {
                            out.extend(self.members_of(b, name));
                        }
                    }
                }
            }
        }
        out
    }

    /// The declared type of field `name` of `owner` (or of a Python base),
    /// with the definition that declares it.
    fn field_type<'s>(&'s self, owner: DefId, name: &str, depth: u8) -> Option<(DefId, &'s str)> {
        let od = self.def(owner);
        if let Some((_, ty)) = od.fields.iter().find(|(n, _)| n == name) {
            return Some((owner, ty.as_str()));
        }
        if depth > 4 {
            return None;
        }
        let m = self.def_module(owner);
        let lang = self.files[owner.file as usize].lang;
        for base in &od.bases {
            let segs: Vec<String> = base.split('.').map(str::to_string).collect();
            if let PathOutcome::Found(ts) = self.resolve_path(m, &segs, lang) {
                for t in ts {
                    if let Target::Def(b) = t {
                        if b != owner {
                            if let Some(found) = self.field_type(b, name, depth + 1) {
                                return Some(found);
                            }
                        }
                    }
                }
            }
        }
        None
    }

    /// The type that `self` stands for inside `scope`.
    fn self_type(&self, file: u32, scope: Option<u32>) -> Option<DefId> {
        let f = &self.files[file as usize];
        let mut cur = scope;
        while let Some(s) = cur {
            let d = &f.syms.defs[s as usize];
            if d.kind.is_type() {
                return Some(DefId { file, def: s });
            }
            if let Some(c) = &d.container {
                // Prefer the type declared in the same module, else any of
                // that name in the unit (impls may live in other files).
                let m = f.def_mod[s as usize];
                let mut out = Vec::new();
                self.lookup(m, c, &mut out);
                let found = out.into_iter().find_map(|t| match t {
                    Target::Def(d) if self.def(d).kind.is_type() => Some(d),
                    _ => None,
                });
                return found.or_else(|| self.type_in_unit(f.unit, c));
            }
            cur = d.parent;
        }
        None
    }

    fn type_in_unit(&self, unit: u32, name: &str) -> Option<DefId> {
        self.note_unit(unit, name);
        self.items
            .get(name)?
            .iter()
            .copied()
            .find(|&d| self.files[d.file as usize].unit == unit && self.def(d).kind.is_type())
    }

    /// Resolve one reference.
    pub fn resolve(&self, file: u32, r: &Ref) -> Resolution {
        let f = &self.files[file as usize];
        let m = self.scope_mod(file, r.scope);
        let lang = f.lang;
        if !r.path.is_empty() {
            let mut segs = r.path.clone();
            segs.push(r.name.clone());
            return match self.resolve_path(m, &segs, lang) {
                PathOutcome::Found(ts) => exact(ts),
                PathOutcome::External => Resolution::none(),
                PathOutcome::Unresolved => {
                    // `Type::f` where `Type` came in through a glob we could
                    // not follow: same-unit types of that name.
                    let owner = &r.path[r.path.len() - 1];
                    if r.path.len() == 1 && owner.chars().next().is_some_and(char::is_uppercase) {
                        self.note_unit(f.unit, owner);
                        let owners: Vec<DefId> = self
                            .items
                            .get(owner.as_str())
                            .into_iter()
                            .flatten()
                            .copied()
                            .filter(|&d| {
                                self.files[d.file as usize].unit == f.unit
                                    && self.def(d).kind.is_type()
                            })
                            .collect();
                        let targets: Vec<DefId> = owners
                            .iter()
                            .flat_map(|&o| self.members_of(o, &r.name))
                            .collect();
                        self.by_name_filtered(&r.name, targets)
                    } else {
                        Resolution::none()
                    }
                }
            };
        }
        match &r.receiver {
            Receiver::None => self.resolve_plain(file, m, r),
            Receiver::SelfValue => {
                if let Some(t) = self.self_type(file, r.scope) {
                    let found = self.members_of(t, &r.name);
                    if !found.is_empty() {
                        return exact(found.into_iter().map(Target::Def).collect());
                    }
                    // `self.x = f` then `self.x()`: an attribute holding a
                    // callable, not a method of some other class.
                    if self.field_type(t, &r.name, 0).is_some() {
                        return Resolution::none();
                    }
                }
                self.by_method_name(file, r)
            }
            // A container (`x: list[T]`): its methods are the language's.
            Receiver::Type(t) if t.starts_with('[') => Resolution::none(),
            Receiver::Type(t) => {
                let segs: Vec<String> = t
                    .split(if lang == Lang::Rust { "::" } else { "." })
                    .map(str::to_string)
                    .collect();
                match self.resolve_path(m, &segs, lang) {
                    PathOutcome::Found(ts) => {
                        let types: Vec<DefId> = ts
                            .into_iter()
                            .filter_map(|t| match t {
                                Target::Def(d) if self.def(d).kind.is_type() => Some(d),
                                _ => None,
                            })
                            .collect();
                        if types.is_empty() {
                            // A value (a constant) rather than a type.
                            self.by_method_name(file, r)
                        } else {
                            self.on_types(file, r, &types)
                        }
                    }
                    PathOutcome::External if lang == Lang::Rust && is_rust_primitive(t) => {
                        self.primitive_member(r, t)
                    }
                    PathOutcome::External => Resolution::none(),
                    PathOutcome::Unresolved => self.by_method_name(file, r),
                }
            }
            Receiver::Returned(_)
            | Receiver::MethodReturn(..)
            | Receiver::Attribute(..)
            | Receiver::Item(_) => {
                match self.receiver_types(file, r.scope, m, &r.receiver) {
                    Some(types) => self.on_types(file, r, &types),
                    // Declared as a type from outside the project (`str`,
                    // a `list[…]`): none of its methods are the project's.
                    None if self.declared_outside(file, r.scope, m, &r.receiver) => {
                        Resolution::none()
                    }
                    // Undeclared or external.
                    None => self.by_method_name(file, r),
                }
            }
            Receiver::Name(n) => {
                let segs: Vec<String> = n
                    .split(if lang == Lang::Rust { "::" } else { "." })
                    .map(str::to_string)
                    .collect();
                match self.resolve_path(m, &segs, lang) {
                    PathOutcome::Found(ts) => {
                        let mut out = Vec::new();
                        let mut typed = Vec::new();
                        let mut value = false;
                        for t in ts {
                            match t {
                                Target::Module(mm) => self.lookup(mm, &r.name, &mut out),
                                Target::Def(d) if self.def(d).kind.is_type() => {
                                    out.extend(
                                        self.members_of(d, &r.name).into_iter().map(Target::Def),
                                    );
                                }
                                // `flask.g` with `g: Globals = …`.
                                Target::Def(d) => match self.variable_type(d) {
                                    Some(types) => typed.extend(types),
                                    None => value = true,
                                },
                            }
                        }
                        if !out.is_empty() {
                            exact(out)
                        } else if value {
                            self.by_method_name(file, r)
                        } else if !typed.is_empty() {
                            self.on_types(file, r, &typed)
                        } else {
                            Resolution::none()
                        }
                    }
                    // A name no import binds is a value we do not track
                    // (a nested function, a global set at run time).
                    PathOutcome::External if !self.imported(m, &segs[0]) => {
                        self.by_method_name(file, r)
                    }
                    PathOutcome::External => Resolution::none(),
                    PathOutcome::Unresolved => self.by_method_name(file, r),
                }
            }
            Receiver::Super => {
                let Some(t) = self.self_type(file, r.scope) else {
                    return Resolution::none();
                };
                let found = self.base_members(t, &r.name);
                exact(found.into_iter().map(Target::Def).collect())
            }
            Receiver::Field(f) => {
                let Some(owner) = self.self_type(file, r.scope) else {
                    return self.by_method_name(file, r);
                };
                let Some((home, ty)) = self.field_type(owner, f, 0).filter(|(_, t)| !t.is_empty())
                else {
                    return self.by_method_name(file, r);
                };
                let segs: Vec<String> = ty
                    .split(if lang == Lang::Rust { "::" } else { "." })
                    .map(str::to_string)
                    .collect();
                match self.resolve_path(self.def_module(home), &segs, lang) {
                    PathOutcome::Found(ts) => {
                        let types: Vec<DefId> = ts
                            .into_iter()
                            .filter_map(|t| match t {
                                Target::Def(d) if self.def(d).kind.is_type() => Some(d),
                                _ => None,
                            })
                            .collect();
                        if types.is_empty() {
                            self.by_method_name(file, r)
                        } else {
                            self.on_types(file, r, &types)
                        }
                    }
                    PathOutcome::External => Resolution::none(),
                    PathOutcome::Unresolved => self.by_method_name(file, r),
                }
            }
            Receiver::Unknown => self.by_method_name(file, r),
        }
    }

    /// A method on a primitive value (`x.low_u16()`, `x: u32`): the item of
    /// a project trait implemented for that type, if any; else std's.
    fn primitive_member(&self, r: &Ref, ty: &str) -> Resolution {
        self.note_pair(&r.name, ty);
        let found: Vec<Target> = self
            .members_named(r.name.as_str())
            .filter(|&d| {
                let md = self.def(d);
                md.container.as_deref() == Some(ty)
                    && md.trait_name.is_some()
                    && self.files[d.file as usize].lang == Lang::Rust
            })
            .map(Target::Def)
            .collect();
        exact(found)
    }

    /// A name without qualifier: enclosing functions' nested items, the
    /// module (items, imports, globs), then the unit when a glob import could
    /// have brought it in.
    fn resolve_plain(&self, file: u32, m: ModId, r: &Ref) -> Resolution {
        let f = &self.files[file as usize];
        // Items nested in an enclosing function (Python closures, Rust
        // fn-local items).
        let mut cur = r.scope;
        while let Some(s) = cur {
            let d = &f.syms.defs[s as usize];
            if matches!(d.kind, Kind::Function | Kind::Method) {
                let nested: Vec<Target> = self
                    .items
                    .get(r.name.as_str())
                    .into_iter()
                    .flatten()
                    .copied()
                    .filter(|x| x.file == file && self.def(*x).parent == Some(s))
                    .map(Target::Def)
                    .collect();
                if !nested.is_empty() {
                    return exact(nested);
                }
            }
            cur = d.parent;
        }
        let mut out = Vec::new();
        self.lookup(m, &r.name, &mut out);
        if !out.is_empty() {
            return exact(out);
        }
        // Bound by an import that leads outside the index: not ours.
        if self.imported(m, &r.name) {
            return Resolution::none();
        }
        self.note_local(m, GLOB);
        let has_glob = !self.modules[m as usize].globs.is_empty();
        // Macros by example are visible crate-wide once defined.
        if !(has_glob || r.form == Form::Macro) || stop_listed(&r.name) {
            return Resolution::none();
        }
        let unit = f.unit;
        self.note_unit(unit, &r.name);
        let candidates: Vec<DefId> = self
            .items
            .get(r.name.as_str())
            .into_iter()
            .flatten()
            .copied()
            .filter(|&d| {
                self.files[d.file as usize].unit == unit
                    && !self.files[d.file as usize].test_only_for(&self.files[file as usize])
                    && self.module_level(d)
                    && form_accepts(r.form, self.def(d).kind)
            })
            .collect();
        if r.form == Form::Value && candidates.len() > 1 {
            return Resolution::none();
        }
        self.by_name_filtered(&r.name, candidates)
    }

    /// Whether an import in module `m` binds `name`.
    fn imported(&self, m: ModId, name: &str) -> bool {
        self.note_local(m, name);
        self.modules[m as usize].by_alias.contains_key(name)
    }

    fn by_name_filtered(&self, name: &str, targets: Vec<DefId>) -> Resolution {
        // Overloads (`@overload`) and `#[cfg]` variants: several definitions
        // of one symbol, in one file, with one owner.
        let first = targets.first().map(|&d| (d.file, &self.def(d).container));
        let one_symbol = targets
            .iter()
            .all(|&d| Some((d.file, &self.def(d).container)) == first);
        if targets.is_empty() || (!one_symbol && stop_listed(name)) {
            return Resolution::none();
        }
        if one_symbol {
            return Resolution {
                targets,
                confidence: Confidence::Unique,
            };
        }
        Resolution::by_name(targets)
    }

    /// A method or attribute on a receiver of unknown type: every method of
    /// that name in the same language. A Python attribute read (`x.size`,
    /// a property or a method passed as a value) counts only when no class
    /// of the project assigns an attribute of that name: reading data
    /// attributes is far more common than reading properties.
    fn by_method_name(&self, file: u32, r: &Ref) -> Resolution {
        let lang = self.files[file as usize].lang;
        let matched = match r.form {
            Form::MethodCall => true,
            Form::Attribute => lang == Lang::Python,
            _ => false,
        };
        if stop_listed(&r.name) || !matched {
            return Resolution::none();
        }
        // `d.setdefault(k, [])` on a value of unknown type is far more often
        // a dict than the project's own `setdefault`.
        if lang == Lang::Python && PYTHON_BUILTIN_METHODS.contains(&r.name.as_str()) {
            return Resolution::none();
        }
        self.note_global(&r.name);
        if r.form == Form::Attribute && self.is_data_attribute(&r.name) {
            return Resolution::none();
        }
        let targets: Vec<DefId> = self
            .members_named(r.name.as_str())
            .filter(|&d| {
                self.files[d.file as usize].lang == lang && self.def(d).kind == Kind::Method
            })
            .collect();
        let mut found = self.by_name_filtered(&r.name, targets);
        // `front.copy_to_bytes(n)` where the project's only `copy_to_bytes`
        // is its implementation of `bytes::Buf`: every implementor outside
        // the project has one too, so the match is not unique.
        if self.shared_outside(&found.targets) {
            found.confidence = Confidence::Ambiguous;
        }
        found
    }

    /// Whether every one of `targets` implements an item of a trait from
    /// outside the project: a by-name match to them may as well be to any
    /// implementor outside, which the index cannot count.
    pub fn shared_outside(&self, targets: &[DefId]) -> bool {
        !targets.is_empty() && targets.iter().all(|&d| self.implements_outside_trait(d))
    }

    /// Whether Rust method `d` implements an item of a trait from outside
    /// the project: no project trait of that name declares the item.
    fn implements_outside_trait(&self, d: DefId) -> bool {
        let def = self.def(d);
        let Some(t) = def.trait_name.as_deref() else {
            return false;
        };
        if self.files[d.file as usize].lang != Lang::Rust {
            return false;
        }
        // A project trait declaring it names both in its file.
        self.note_pair(&def.name, t);
        !self.members_named(&def.name).any(|m| {
            self.in_trait(m)
                && self.def(m).parent.is_some_and(|p| {
                    self.def(DefId {
                        file: m.file,
                        def: p,
                    })
                    .name
                        == t
                })
        })
    }

    fn is_data_attribute(&self, name: &str) -> bool {
        self.data_attributes
            .get_or_init(|| {
                self.files
                    .iter()
                    .filter(|f| f.lang == Lang::Python)
                    .flat_map(|f| f.syms.defs.iter())
                    .flat_map(|d| d.fields.iter().map(|(n, _)| n.clone()))
                    .collect()
            })
            .contains(name)
    }
}

impl File {
    /// Test code is never a candidate for production code's by-name matches.
    fn test_only_for(&self, user: &File) -> bool {
        self.test && !user.test
    }
}

fn form_accepts(form: Form, kind: Kind) -> bool {
    match form {
        Form::Call => matches!(kind, Kind::Function | Kind::Struct | Kind::Class),
        Form::Type => kind.is_type(),
        Form::Macro => kind == Kind::Macro,
        Form::Value => matches!(
            kind,
            Kind::Function
                | Kind::Const
                | Kind::Static
                | Kind::Variable
                | Kind::Struct
                | Kind::Class
        ),
        _ => false,
    }
}

fn exact(targets: Vec<Target>) -> Resolution {
    let defs: Vec<DefId> = targets
        .into_iter()
        .filter_map(|t| match t {
            Target::Def(d) => Some(d),
            Target::Module(_) => None,
        })
        .collect();
    Resolution {
        targets: defs,
        confidence: Confidence::Exact,
    }
}

/// The elements of a tuple type's text, `(A, (B, C))` without its
/// parentheses: split at the commas outside brackets.
fn tuple_elements(inner: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut from) = (0i32, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '(' | '[' | '<' => depth += 1,
            ')' | ']' | '>' => depth -= 1,
            ',' if depth == 0 => {
                out.push(inner[from..i].trim());
                from = i + 1;
            }
            _ => {}
        }
    }
    out.push(inner[from..].trim());
    out
}

fn push_unique(out: &mut Vec<Target>, t: Target) {
    if !out.contains(&t) {
        out.push(t);
    }
}

/// Whether a path may name a module called by one of `words`: it holds
/// one of them, or starts from a relative anchor (`super::`, `crate::`,
/// Python's dots) that can reach the module without naming it.
fn may_name(segs: &[String], words: &HashSet<String>, lang: Lang) -> bool {
    let anchored = segs.first().is_some_and(|s| match lang {
        Lang::Rust => s == "super" || s == "crate",
        Lang::Python => s.starts_with('.'),
    });
    anchored || segs.iter().any(|s| words.contains(s))
}

/// `a::b::C` or `a.b.C` as its segments.
fn split_path(path: &str, lang: Lang) -> Vec<String> {
    path.split(sep(lang)).map(str::to_string).collect()
}

fn sep(lang: Lang) -> &'static str {
    match lang {
        Lang::Rust => "::",
        Lang::Python => ".",
    }
}

/// A Rust file that is a crate root of its own next to `src/`:
/// `tests/cli.rs`, `benches/speed.rs`, `examples/demo.rs`.
fn is_side_target_root(path: &str) -> bool {
    let mut parts = path.rsplit('/');
    let file = parts.next().unwrap_or("");
    file.ends_with(".rs") && matches!(parts.next(), Some("tests" | "benches" | "examples"))
}

/// A crate root outside `src/`: `tests/a.rs` or `tests/it/main.rs` (and
/// the same under `benches/` and `examples/`).
fn is_side_crate_file(path: &str) -> bool {
    if is_side_target_root(path) {
        return true;
    }
    let mut parts = path.rsplit('/');
    parts.next() == Some("main.rs")
        && parts.next().is_some()
        && matches!(parts.next(), Some("tests" | "benches" | "examples"))
}

/// `a/b/mod` → `[a, b]`; `/a/b` → `[a, b]`.
fn module_segments(path: &str) -> Vec<&str> {
    let mut segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    if segs.last() == Some(&"mod") {
        segs.pop();
    }
    segs
}

/// Test files by path: Rust `tests/`, `benches/`; Python `test_*.py`,
/// `*_test.py`, `tests/`, `conftest.py`.
pub fn is_test_path(path: &str) -> bool {
    let file = path.rsplit('/').next().unwrap_or(path);
    let in_dir = |d: &str| path.starts_with(&format!("{d}/")) || path.contains(&format!("/{d}/"));
    in_dir("tests")
        || in_dir("test")
        || in_dir("benches")
        || file.starts_with("test_")
        || file.ends_with("_test.py")
        || file.ends_with("_tests.rs")
        || file == "conftest.py"
}

/// `rs:krate:lib::a::b` → `krate::a::b`; `rs:krate:tests::x` →
/// `krate[tests]::x`; `py:pkg.mod` → `pkg.mod`.
fn display_module(key: &str) -> String {
    if let Some(rest) = key.strip_prefix("py:") {
        return rest.to_string();
    }
    let rest = key.strip_prefix("rs:").unwrap_or(key);
    let (krate, rest) = rest.split_once(':').unwrap_or((rest, ""));
    // `name@dir` tells homonymous packages apart; people know them by name.
    let krate = krate.split_once('@').map_or(krate, |(name, _)| name);
    let (target, path) = match rest.split_once("::") {
        Some((t, p)) => (t, Some(p)),
        None => (rest, None),
    };
    let mut out = if target == "lib" {
        krate.to_string()
    } else {
        format!("{krate}[{target}]")
    };
    if let Some(p) = path {
        out.push_str("::");
        out.push_str(p);
    }
    out
}

#[cfg(test)]
mod tests {
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
}
