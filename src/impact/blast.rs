//! Blast radius: for each changed symbol, the sites that reference it, the
//! symbols and files that depend on it, a stability tier, and the transitive
//! radius to depth 2. Works on the index only; output is plain data.

use std::collections::{BTreeSet, HashMap, HashSet};

use serde::Serialize;

use super::changes::Change;
use super::index::{Confidence, DefId, Index, Resolution};
use super::symbols::{Form, Kind};

/// Dependent files at or above which a symbol is a hub.
const HUB_FILES: usize = 10;
/// Sites kept per symbol in the report; the rest are counted.
const MAX_SITES: usize = 100;

/// How far a symbol's dependents reach, from no one to much of the project.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stability {
    /// No dependents.
    Leaf,
    /// Dependents in its own file only.
    Local,
    /// Dependents in other files of its crate or package.
    Module,
    /// Production dependents in other crates or packages.
    Public,
    /// Dependents in many files.
    Hub,
}

impl Stability {
    pub fn label(self) -> &'static str {
        match self {
            Stability::Leaf => "leaf",
            Stability::Local => "local",
            Stability::Module => "module",
            Stability::Public => "public",
            Stability::Hub => "hub",
        }
    }
}

impl std::fmt::Display for Stability {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.label())
    }
}

/// One reference to a changed symbol.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Site {
    pub file: String,
    pub line: u32,
    pub form: Form,
    pub confidence: Confidence,
    /// How many definitions the reference may name (1 unless ambiguous).
    pub candidates: usize,
    /// The symbol containing the reference (`(module)` outside any).
    pub dependent: String,
    pub test: bool,
    /// Inside the changed symbol itself (recursion, `Self` in its own
    /// body): a reference, not a dependent.
    pub inside: bool,
}

/// Who depends on a changed symbol (exact and unique references only).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Dependents {
    /// Distinct dependent symbols.
    pub symbols: usize,
    pub production: usize,
    pub test: usize,
    /// Distinct files holding a reference, own file included.
    pub files: Vec<String>,
}

/// A changed symbol with its blast radius.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChangedSymbol {
    /// `Type::name` or `name`; `(module)` for module-level code.
    pub symbol: String,
    pub qualified: String,
    pub kind: Kind,
    pub file: String,
    pub line: u32,
    pub change: Change,
    /// Removed or signature changed while something still references it.
    pub breaking: bool,
    pub stability: Stability,
    /// Exact and unique reference sites from outside the symbol.
    pub references: usize,
    pub dependents: Dependents,
    /// Dependent symbols within two hops over exact and unique references.
    pub radius: usize,
    pub sites: Vec<Site>,
    pub sites_omitted: usize,
    /// References that may name this symbol or another of the same name.
    pub ambiguous: Vec<Site>,
    pub ambiguous_omitted: usize,
}

/// A dependent: a definition, or a file's module-level code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Dep {
    Def(DefId),
    Module(u32),
}

pub struct Blast<'a> {
    index: &'a Index,
    memo: HashMap<(u32, u32), Resolution>,
    /// Candidate references by name, for the names scanned so far.
    candidates: HashMap<String, Vec<(u32, u32)>>,
    scanned: HashSet<String>,
    /// The names each definition is referenced by, per definition.
    names: HashMap<DefId, Vec<String>>,
}

struct RawSite {
    file: u32,
    r: u32,
    confidence: Confidence,
    candidates: usize,
    /// Inside the target itself (recursion, `Self` in its own body).
    inside: bool,
}

/// The changed symbols with their blast radius, in the order given.
pub fn symbols(index: &Index, targets: &[(DefId, Change)]) -> Vec<ChangedSymbol> {
    let mut blast = Blast {
        index,
        memo: HashMap::new(),
        candidates: HashMap::new(),
        scanned: HashSet::new(),
        names: HashMap::new(),
    };
    // Two scans of all references: the targets' names, then the names of
    // their dependents (for the depth-2 radius).
    blast.scan(targets.iter().map(|t| t.0));
    let first: Vec<BTreeSet<Dep>> = targets.iter().map(|t| blast.dependents(t.0)).collect();
    blast.scan(first.iter().flatten().filter_map(|d| match d {
        Dep::Def(id) => Some(*id),
        Dep::Module(_) => None,
    }));
    targets
        .iter()
        .zip(first)
        .map(|(&(t, c), deps)| blast.symbol(t, c, deps))
        .collect()
}

impl Blast<'_> {
    /// Make the references to these definitions (by any alias) available.
    fn scan(&mut self, defs: impl Iterator<Item = DefId>) {
        let mut names: Vec<String> = Vec::new();
        for d in defs {
            for n in self.names_of(d) {
                if !self.scanned.contains(&n) && !names.contains(&n) {
                    names.push(n);
                }
            }
        }
        let wanted: HashSet<&str> = names.iter().map(String::as_str).collect();
        let found = self.index.refs_named(&wanted);
        self.candidates.extend(found);
        self.scanned.extend(names);
    }

    /// The names under which `d` can be referenced: its own and every
    /// alias, or only its own for a member only reachable through its type
    /// (no `use Type::method` exists). Tells the index's probe which files
    /// may hold such references.
    fn names_of(&mut self, d: DefId) -> Vec<String> {
        if let Some(names) = self.names.get(&d) {
            return names.clone();
        }
        let index = self.index;
        let name = &index.def(d).name;
        let names = match index.anchors(d) {
            Some(words) => {
                for w in &words {
                    index.note_pair(name, w);
                }
                vec![name.clone()]
            }
            None => index.names_for(name),
        };
        self.names.insert(d, names.clone());
        names
    }

    fn sites(&mut self, target: DefId) -> Vec<RawSite> {
        let index = self.index;
        let mut out = Vec::new();
        let names = self.names_of(target);
        let mut list: Vec<(u32, u32)> = Vec::new();
        for n in &names {
            if let Some(l) = self.candidates.get(n) {
                list.extend_from_slice(l);
            }
        }
        for (f, r) in list {
            let file = index.file(f);
            let rf = &file.syms.refs[r as usize];
            // A symbol's references to itself (recursion, its own body) are
            // references, but do not make it a dependent of itself.
            let inside = f == target.file && within(index, f, rf.scope, target.def);
            let res = self
                .memo
                .entry((f, r))
                .or_insert_with(|| index.resolve(f, rf));
            if res.targets.contains(&target) {
                out.push(RawSite {
                    file: f,
                    r,
                    confidence: res.confidence,
                    candidates: res.targets.len(),
                    inside,
                });
            }
        }
        out
    }

    fn dep_of(&self, file: u32, r: u32) -> Dep {
        let f = self.index.file(file);
        let mut cur = f.syms.refs[r as usize].scope;
        while let Some(s) = cur {
            if f.syms.defs[s as usize].kind.is_scope() {
                return Dep::Def(DefId { file, def: s });
            }
            cur = f.syms.defs[s as usize].parent;
        }
        Dep::Module(file)
    }

    fn is_certain(c: Confidence) -> bool {
        matches!(c, Confidence::Exact | Confidence::Unique)
    }

    /// Dependents one hop away over exact and unique references.
    fn dependents(&mut self, target: DefId) -> BTreeSet<Dep> {
        let sites = self.sites(target);
        sites
            .iter()
            .filter(|s| Self::is_certain(s.confidence) && !s.inside)
            .filter(|s| self.index.file(s.file).syms.refs[s.r as usize].form != Form::Import)
            .map(|s| self.dep_of(s.file, s.r))
            .collect()
    }

    fn dep_name(&self, d: Dep) -> String {
        match d {
            Dep::Def(id) => {
                let f = self.index.file(id.file);
                f.syms
                    .display_name(id.def as usize, f.lang.member_separator())
            }
            Dep::Module(_) => "(module)".to_string(),
        }
    }

    fn dep_is_test(&self, d: Dep) -> bool {
        match d {
            Dep::Def(id) => self.index.file(id.file).test || self.index.def(id).test,
            Dep::Module(f) => self.index.file(f).test,
        }
    }

    /// The full entry for a changed definition whose one-hop dependents
    /// are `first`.
    fn symbol(&mut self, target: DefId, change: Change, first: BTreeSet<Dep>) -> ChangedSymbol {
        let index = self.index;
        let own = index.file(target.file);
        let def = index.def(target);
        let raw = self.sites(target);
        let mut sites = Vec::new();
        let mut ambiguous = Vec::new();
        let mut deps: BTreeSet<Dep> = BTreeSet::new();
        let mut files: BTreeSet<u32> = BTreeSet::new();
        for s in &raw {
            let f = index.file(s.file);
            let rf = &f.syms.refs[s.r as usize];
            let dep = self.dep_of(s.file, s.r);
            let test = f.test || f.syms.in_test(rf.scope);
            let site = Site {
                file: f.path.clone(),
                line: rf.line,
                form: rf.form,
                confidence: s.confidence,
                candidates: s.candidates,
                dependent: self.dep_name(dep),
                test,
                inside: s.inside,
            };
            if Self::is_certain(s.confidence) {
                if !s.inside {
                    files.insert(s.file);
                    if rf.form != Form::Import {
                        deps.insert(dep);
                    }
                }
                sites.push(site);
            } else {
                ambiguous.push(site);
            }
        }
        let references = sites.iter().filter(|s| !s.inside).count();
        let production = deps.iter().filter(|d| !self.dep_is_test(**d)).count();
        let test = deps.len() - production;
        let other_files = files
            .iter()
            .filter(|&&f| index.file(f).path != own.path)
            .count();
        let stability = if files.is_empty() {
            Stability::Leaf
        } else if other_files >= HUB_FILES {
            Stability::Hub
        } else if files
            .iter()
            .any(|&f| index.file(f).unit != own.unit && !index.file(f).test)
        {
            Stability::Public
        } else if other_files > 0 {
            Stability::Module
        } else {
            Stability::Local
        };

        // Depth 2 over exact and unique edges.
        let mut reach: HashSet<Dep> = first.iter().copied().collect();
        for d in &first {
            if let Dep::Def(id) = *d {
                if id != target {
                    reach.extend(self.dependents(id));
                }
            }
        }
        reach.remove(&Dep::Def(target));

        // Production before tests, other files before the symbol's own.
        let own_path = own.path.clone();
        let order = |s: &Site| (s.inside, s.test, s.file == own_path, s.file.clone(), s.line);
        sites.sort_by_key(order);
        ambiguous.sort_by_key(order);
        let sites_omitted = sites.len().saturating_sub(MAX_SITES);
        sites.truncate(MAX_SITES);
        let ambiguous_omitted = ambiguous.len().saturating_sub(MAX_SITES);
        ambiguous.truncate(MAX_SITES);

        ChangedSymbol {
            symbol: own
                .syms
                .display_name(target.def as usize, own.lang.member_separator()),
            qualified: index.qualified(target),
            kind: def.kind,
            file: own.path.clone(),
            line: def.start_line,
            change,
            breaking: matches!(change, Change::Removed | Change::SignatureChanged)
                && references > 0,
            stability,
            references,
            dependents: Dependents {
                symbols: deps.len(),
                production,
                test,
                files: files.iter().map(|&f| index.file(f).path.clone()).collect(),
            },
            radius: reach.len(),
            sites,
            sites_omitted,
            ambiguous,
            ambiguous_omitted,
        }
    }
}

/// Whether `scope` is `def` or lies inside it.
fn within(index: &Index, file: u32, scope: Option<u32>, def: u32) -> bool {
    let f = index.file(file);
    let mut cur = scope;
    while let Some(s) = cur {
        if s == def {
            return true;
        }
        cur = f.syms.defs[s as usize].parent;
    }
    false
}
