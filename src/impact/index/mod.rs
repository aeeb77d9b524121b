//! The project-wide symbol index: files grouped into crates and packages,
//! module paths, and name resolution of references to definitions with a
//! confidence (exact, unique, ambiguous). It never parses: it is built from
//! extracted `FileSymbols`.
//!
//! Here: the index's data and its accessors. `layout` places each file in
//! its crate or package and module; `lookup` says what a name means in a
//! module and where a path leads; `types` what a receiver, field or return
//! is and which members a type has; `resolve` resolves one reference with
//! its confidence; `modules` finds who names a module; `probe` records
//! which names the questions asked so far may reach; `names` holds the
//! names too common to match by name alone.

use std::cell::{OnceCell, RefCell};
use std::collections::{HashMap, HashSet};
use std::rc::Rc;
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;

use super::lang::{Lang, is_rust_primitive};
use super::symbols::{FileSymbols, Form, Import, Kind, NameFilter, Receiver, Ref, Visibility};

mod layout;
mod lookup;
mod modules;
mod names;
mod probe;
mod resolve;
#[cfg(test)]
mod tests;
mod types;

pub use layout::{Layout, Manifest, Root, RootKind, Source};
use lookup::{Entered, Key, Memo};
pub use modules::ModuleMention;
pub use names::stop_listed;
pub use probe::Probe;

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
    /// which files could change an answer (see `Probe`): what the first
    /// hop of the blast radius asks, then what the second hop asks.
    probe: Option<RefCell<[Probe; 2]>>,
    /// Which of the two probes resolution records into now.
    hop: std::cell::Cell<usize>,
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

impl File {
    /// Test code is never a candidate for production code's by-name matches.
    fn test_only_for(&self, user: &File) -> bool {
        self.test && !user.test
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

fn push_unique(out: &mut Vec<Target>, t: Target) {
    if !out.contains(&t) {
        out.push(t);
    }
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
            hop: std::cell::Cell::new(0),
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
}
