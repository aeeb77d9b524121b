//! Blast radius: for each changed symbol, the sites that reference it, the
//! symbols and files that depend on it, a stability tier, and the transitive
//! radius to depth 2. A changed module's sites are the places naming it: its
//! importers. Works on the index only; output is plain data.

use std::collections::{BTreeSet, HashMap, HashSet};

use serde::Serialize;

use super::changes::Change;
use super::index::{Confidence, DefId, Index, Mention, ModId, ModuleMention, Resolution};
use super::lang::Lang;
use super::symbols::{Form, Kind, Ref};

/// Dependent files at or above which a symbol is a hub.
const HUB_FILES: usize = 10;

/// How many of a changed symbol's dependents the depth-2 radius follows.
/// Each one followed asks about its own names, and every file holding one
/// of those must be parsed: over a hub's hundreds of dependents that is
/// the whole tree. Past this, the radius counts what the first ones reach
/// and says so (`radius_truncated`).
pub const RADIUS_FOLLOWED: usize = 150;

/// The most definitions a by-name match may have and still be listed
/// among a symbol's ambiguous sites. A call like `x.poll(cx)` or
/// `node.accept(self)` on a value of unknown type matches every method of
/// that name: in tokio, mypy and ripgrep that is dozens of unrelated types,
/// and such sites name the changed one about one time in a hundred (26 of
/// 2,619 on 200 sampled definitions each of ripgrep, tokio and mypy, against
/// rust-analyzer and jedi: `benches/impact_score.py`), so listing them buries
/// the few that do. Past this they are counted (`ambiguous_unlisted`), not
/// listed. Below it they are worth reading: 24 of tokio's 75 sites with 11
/// or 12 candidates are references.
pub const MAX_LISTED_CANDIDATES: usize = 12;

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
    /// The 1-based column of the name on `line`, in characters (of the
    /// statement, for an import naming a module).
    pub column: u32,
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
    /// The dependent symbols, production first.
    pub list: Vec<Dependent>,
}

/// A symbol holding a reference to a changed one: a definition, or a
/// file's module-level code (`(module)`, line 1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Dependent {
    pub symbol: String,
    pub file: String,
    pub line: u32,
    pub test: bool,
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
    /// Removed, or signature changed, while something the diff does not
    /// update still references it.
    pub breaking: bool,
    pub stability: Stability,
    /// Exact and unique reference sites from outside the symbol.
    pub references: usize,
    pub dependents: Dependents,
    /// Dependent symbols within two hops over exact and unique references.
    pub radius: usize,
    /// Set when the radius followed only some of the dependents (see
    /// `RADIUS_FOLLOWED`): it is then a lower bound.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub radius_truncated: Option<RadiusCut>,
    /// Set when the radius's second hop was counted over the files read
    /// only (see `rounds::next_round`): how many files not read mention a
    /// name it asked about. The radius may then be a lower bound.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub radius_unread: Option<usize>,
    /// The radius followed at least one dependent definition.
    #[serde(skip)]
    pub followed: bool,
    /// A renamed file's module: the head path it moved to. Its sites are
    /// the places still naming the old path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub renamed_to: Option<String>,
    /// Every exact and unique reference site: the report carries them all
    /// (the prompt's table shows a few).
    pub sites: Vec<Site>,
    /// References that may name this symbol or one of a few others of
    /// the same name (at most `MAX_LISTED_CANDIDATES` in all).
    pub ambiguous: Vec<Site>,
    /// References matched by name to more definitions than that, or only
    /// to implementations of an outside trait's item (its other
    /// implementors are outside the project): counted, not listed.
    #[serde(skip_serializing_if = "is_zero")]
    pub ambiguous_unlisted: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// How much of the depth-2 radius was followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RadiusCut {
    /// Dependents whose own dependents were counted.
    pub followed: usize,
    /// All the dependents.
    pub dependents: usize,
}

impl std::fmt::Display for RadiusCut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "counts the dependents of {} of its {} dependents",
            self.followed, self.dependents
        )
    }
}

/// A changed module: its module-level code edited, or its path gone (a
/// deleted file, or a renamed one whose module path changed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModuleChange {
    pub module: ModId,
    /// Its file: the head path, or the base path when the path is gone.
    pub file: String,
    pub change: Change,
    /// A renamed file's head path.
    pub renamed_to: Option<String>,
}

/// A dependent: a definition, or a file's module-level code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Dep {
    Def(DefId),
    Module(u32),
}

/// What a blast radius is computed for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    /// A definition, found through references that resolve to it.
    Def(DefId),
    /// A module, found through the places that name it, with the definition
    /// declaring it when that is what changed (`mod b;`, an inline module).
    Module(ModId, Option<DefId>),
}

pub struct Blast<'a> {
    index: &'a Index,
    /// The resolution of each reference resolved so far.
    memo: HashMap<(u32, u32), Resolution>,
    /// Candidate references by name, for the names scanned so far.
    candidates: HashMap<String, Vec<(u32, u32)>>,
    scanned: HashSet<String>,
    /// The references resolved so far, by the definitions they may name:
    /// each reference is resolved once, whatever the number of targets
    /// sharing its name.
    by_target: HashMap<DefId, Vec<(u32, u32)>>,
    /// Names whose candidate references are all in `by_target`.
    resolved: HashSet<String>,
    /// The names each definition is referenced by, per definition.
    names: HashMap<DefId, Vec<String>>,
    /// The places naming each module asked about.
    mentions: HashMap<ModId, Vec<ModuleMention>>,
}

struct RawSite {
    file: u32,
    at: Mention,
    confidence: Confidence,
    candidates: usize,
    /// A by-name match whose candidates all implement an outside trait's
    /// item: the rest of them are outside the project, uncounted.
    open: bool,
    /// Inside the target itself (recursion, `Self` in its own body, a
    /// module's own code).
    inside: bool,
}

/// What a changed symbol's entry says about the symbol itself.
struct Header {
    symbol: String,
    qualified: String,
    kind: Kind,
    file: String,
    line: u32,
    change: Change,
    unit: u32,
    renamed_to: Option<String>,
}

/// The changed definitions and modules with their blast radius, in the
/// order given (definitions first).
pub fn symbols(
    index: &Index,
    defs: &[(DefId, Change)],
    modules: &[ModuleChange],
) -> Vec<ChangedSymbol> {
    let mut blast = Blast {
        index,
        memo: HashMap::new(),
        candidates: HashMap::new(),
        scanned: HashSet::new(),
        by_target: HashMap::new(),
        resolved: HashSet::new(),
        names: HashMap::new(),
        mentions: HashMap::new(),
    };
    let targets: Vec<Target> = defs
        .iter()
        .map(|&(d, _)| blast.target_of(d))
        .chain(modules.iter().map(|m| Target::Module(m.module, None)))
        .collect();
    // Two scans of all references: the targets' names, then the names of
    // their dependents (for the depth-2 radius).
    blast.scan(targets.iter().filter_map(|t| match t {
        Target::Def(d) => Some(*d),
        Target::Module(..) => None,
    }));
    let first: Vec<BTreeSet<Dep>> = targets.iter().map(|&t| blast.dependents(t)).collect();
    let headers: Vec<Header> = defs
        .iter()
        .map(|&(d, c)| blast.def_header(d, c))
        .chain(modules.iter().map(|m| blast.module_header(m)))
        .collect();
    // Everything asked from here on only counts toward the radius.
    index.record_second_hop();
    let second: Vec<DefId> = first
        .iter()
        .flat_map(|deps| deps.iter().take(RADIUS_FOLLOWED))
        .filter_map(|d| match d {
            Dep::Def(id) => match blast.target_of(*id) {
                Target::Def(id) => Some(id),
                Target::Module(..) => None,
            },
            Dep::Module(_) => None,
        })
        .collect();
    blast.scan(second.into_iter());
    targets
        .iter()
        .zip(first)
        .zip(headers)
        .map(|((&t, deps), header)| blast.symbol(t, header, deps))
        .collect()
}

impl Blast<'_> {
    /// A definition that opens a module is changed as that module, and a
    /// Python module's `__all__` (what `from m import *` binds) as its
    /// module: their dependents are the places naming the module.
    fn target_of(&self, d: DefId) -> Target {
        let index = self.index;
        let def = index.def(d);
        let file = index.file(d.file);
        match index.opened_module(d) {
            Some(m) if def.kind == Kind::Module => Target::Module(m, Some(d)),
            _ if file.lang == Lang::Python && def.name == "__all__" && def.parent.is_none() => {
                Target::Module(file.module, Some(d))
            }
            _ => Target::Def(d),
        }
    }

    /// Make the references to these definitions (by any alias) available.
    fn scan(&mut self, defs: impl Iterator<Item = DefId>) {
        let mut names: Vec<String> = Vec::new();
        let index = self.index;
        let defs: Vec<DefId> = defs
            .flat_map(|d| std::iter::once(d).chain(constructed_class(index, d)))
            .collect();
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

    fn sites(&mut self, target: Target) -> Vec<RawSite> {
        match target {
            Target::Def(d) => self.def_sites(d),
            Target::Module(m, decl) => self.module_sites(m, decl),
        }
    }

    /// References resolving to `target`, and for a trait's item its
    /// implementations and the references resolving to them (a call on a
    /// value of the implementing type).
    fn def_sites(&mut self, target: DefId) -> Vec<RawSite> {
        let index = self.index;
        let mut out = Vec::new();
        let impls = index.trait_impls(target);
        for &imp in &impls {
            // Registers the impl's own anchors with the probe.
            self.names_of(imp);
            out.push(RawSite {
                file: imp.file,
                at: Mention::Impl(imp.def),
                confidence: Confidence::Exact,
                candidates: 1,
                open: false,
                inside: false,
            });
        }
        let names = self.names_of(target);
        match index.anchors(target).filter(|_| index.def(target).no_self) {
            // Only a path through its type reaches it (see `anchors`):
            // `Glob::new`, `globset::Glob::new`, `Self::new`. The other
            // references of that name (every `Other::new()`) are not
            // resolved for it, nor what resolving them would ask.
            Some(words) => {
                let through_type = |r: &Ref| {
                    r.path
                        .last()
                        .is_some_and(|q| q == "Self" || words.contains(q))
                };
                for n in &names {
                    self.resolve_named_where(n, through_type);
                }
            }
            None => {
                for n in &names {
                    self.resolve_named(n);
                }
            }
        }
        let mut list: Vec<(u32, u32)> = Vec::new();
        for t in std::iter::once(&target).chain(&impls) {
            list.extend(self.by_target.get(t).into_iter().flatten());
        }
        // A Python class called is its `__init__` called.
        if let Some(class) = constructed_class(index, target) {
            for n in &self.names_of(class) {
                self.resolve_named(n);
            }
            list.extend(
                self.by_target
                    .get(&class)
                    .into_iter()
                    .flatten()
                    .filter(|&&(f, r)| index.file(f).syms.refs[r as usize].form == Form::Call),
            );
        }
        list.sort_unstable();
        list.dedup();
        for (f, r) in list {
            let rf = &index.file(f).syms.refs[r as usize];
            // A symbol's references to itself (recursion, its own body) are
            // references, but do not make it a dependent of itself.
            let inside = f == target.file && within(index, f, rf.scope, target.def);
            let res = &self.memo[&(f, r)];
            out.push(RawSite {
                file: f,
                at: Mention::Ref(r),
                confidence: res.confidence,
                candidates: res.targets.len(),
                open: res.confidence == Confidence::Ambiguous && index.shared_outside(&res.targets),
                inside,
            });
        }
        out
    }

    /// Resolve every scanned reference named `name`, once, filing each
    /// under the definitions it may name.
    fn resolve_named(&mut self, name: &str) {
        if self.resolved.contains(name) {
            return;
        }
        self.resolved.insert(name.to_string());
        self.resolve_named_where(name, |_| true);
    }

    /// `resolve_named`, for the references `keep` keeps.
    fn resolve_named_where(&mut self, name: &str, keep: impl Fn(&Ref) -> bool) {
        let index = self.index;
        for &(f, r) in self.candidates.get(name).into_iter().flatten() {
            if self.memo.contains_key(&(f, r)) {
                continue;
            }
            let rf = &index.file(f).syms.refs[r as usize];
            if !keep(rf) {
                continue;
            }
            let res = index.resolve(f, rf);
            for &t in &res.targets {
                self.by_target.entry(t).or_default().push((f, r));
            }
            self.memo.insert((f, r), res);
        }
    }

    /// The places naming module `m` from outside its own code, one per line.
    /// The module's own file (its `use super::*` tests, `self::` paths) and
    /// the changed declaration itself are not importers.
    fn module_sites(&mut self, m: ModId, decl: Option<DefId>) -> Vec<RawSite> {
        let index = self.index;
        let mentions = self
            .mentions
            .entry(m)
            .or_insert_with(|| index.module_mentions(m));
        let mut seen: HashSet<(u32, u32)> = HashSet::new();
        let mut out = Vec::new();
        for mention in mentions.iter() {
            let (line, _, _, scope) = place(index, mention.file, mention.at);
            let own = index.file(mention.file).module == m
                || decl.is_some_and(|d| {
                    d.file == mention.file
                        && (mention.at == Mention::Decl(d.def)
                            || within(index, d.file, scope, d.def))
                });
            if own || !seen.insert((mention.file, line)) {
                continue;
            }
            out.push(RawSite {
                file: mention.file,
                at: mention.at,
                confidence: Confidence::Exact,
                candidates: mention.candidates,
                open: false,
                inside: false,
            });
        }
        out
    }

    fn dep_of(&self, file: u32, scope: Option<u32>) -> Dep {
        let f = self.index.file(file);
        let mut cur = scope;
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

    /// Whether a site makes its enclosing symbol a dependent. Importing a
    /// definition is not using it (the uses are sites of their own), but
    /// importing a module is what depending on a module is.
    fn depends(&self, target: Target, s: &RawSite) -> bool {
        let form = place(self.index, s.file, s.at).2;
        Self::is_certain(s.confidence)
            && !s.inside
            && (matches!(target, Target::Module(..)) || form != Form::Import)
    }

    /// Dependents one hop away over exact and unique references.
    fn dependents(&mut self, target: Target) -> BTreeSet<Dep> {
        let sites = self.sites(target);
        sites
            .iter()
            .filter(|s| self.depends(target, s))
            .map(|s| self.dep_of(s.file, place(self.index, s.file, s.at).3))
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

    fn dependent(&self, d: Dep) -> Dependent {
        let (file, line) = match d {
            Dep::Def(id) => (id.file, self.index.def(id).line),
            Dep::Module(f) => (f, 1),
        };
        Dependent {
            symbol: self.dep_name(d),
            file: self.index.file(file).path.clone(),
            line,
            test: self.dep_is_test(d),
        }
    }

    fn dep_is_test(&self, d: Dep) -> bool {
        match d {
            Dep::Def(id) => self.index.file(id.file).test || self.index.def(id).test,
            Dep::Module(f) => self.index.file(f).test,
        }
    }

    fn def_header(&self, d: DefId, change: Change) -> Header {
        let index = self.index;
        let own = index.file(d.file);
        let def = index.def(d);
        Header {
            symbol: own
                .syms
                .display_name(d.def as usize, own.lang.member_separator()),
            qualified: index.qualified(d),
            kind: def.kind,
            file: own.path.clone(),
            line: def.line,
            change,
            unit: own.unit,
            renamed_to: None,
        }
    }

    fn module_header(&self, m: &ModuleChange) -> Header {
        Header {
            symbol: "(module)".to_string(),
            qualified: self.index.module_path(m.module),
            kind: Kind::Module,
            file: m.file.clone(),
            line: 1,
            change: m.change,
            unit: self.index.module_unit(m.module),
            renamed_to: m.renamed_to.clone(),
        }
    }

    /// The full entry for a changed symbol whose one-hop dependents are
    /// `first`.
    fn symbol(&mut self, target: Target, header: Header, first: BTreeSet<Dep>) -> ChangedSymbol {
        let index = self.index;
        let raw = self.sites(target);
        let mut sites = Vec::new();
        let mut ambiguous = Vec::new();
        let mut ambiguous_unlisted = 0;
        let mut deps: BTreeSet<Dep> = BTreeSet::new();
        let mut files: BTreeSet<u32> = BTreeSet::new();
        for s in &raw {
            if !Self::is_certain(s.confidence) && (s.candidates > MAX_LISTED_CANDIDATES || s.open) {
                ambiguous_unlisted += 1;
                continue;
            }
            let f = index.file(s.file);
            let (line, column, form, scope) = place(index, s.file, s.at);
            let dep = self.dep_of(s.file, scope);
            let test = f.test || f.syms.in_test(scope) || is_test_decl(index, s.file, s.at);
            let site = Site {
                file: f.path.clone(),
                line,
                column,
                form,
                confidence: s.confidence,
                candidates: s.candidates,
                dependent: self.dep_name(dep),
                test,
                inside: s.inside,
            };
            if Self::is_certain(s.confidence) {
                if !s.inside {
                    files.insert(s.file);
                }
                if self.depends(target, s) {
                    deps.insert(dep);
                }
                sites.push(site);
            } else {
                ambiguous.push(site);
            }
        }
        let references = sites.iter().filter(|s| !s.inside).count();
        let mut list: Vec<Dependent> = deps.iter().map(|&d| self.dependent(d)).collect();
        list.sort_by(|a, b| (a.test, &a.file, a.line).cmp(&(b.test, &b.file, b.line)));
        let production = list.iter().filter(|d| !d.test).count();
        let test = list.len() - production;
        let other_files = files
            .iter()
            .filter(|&&f| index.file(f).path != header.file)
            .count();
        let stability = if files.is_empty() {
            Stability::Leaf
        } else if other_files >= HUB_FILES {
            Stability::Hub
        } else if files
            .iter()
            .any(|&f| index.file(f).unit != header.unit && !index.file(f).test)
        {
            Stability::Public
        } else if other_files > 0 {
            Stability::Module
        } else {
            Stability::Local
        };

        // Depth 2 over exact and unique edges.
        let own_def = match target {
            Target::Def(d) => Some(d),
            Target::Module(_, decl) => decl,
        };
        let mut reach: HashSet<Dep> = first.iter().copied().collect();
        let radius_truncated = (first.len() > RADIUS_FOLLOWED).then_some(RadiusCut {
            followed: RADIUS_FOLLOWED,
            dependents: first.len(),
        });
        let mut followed = false;
        for d in first.iter().take(RADIUS_FOLLOWED) {
            if let Dep::Def(id) = *d {
                if Some(id) != own_def {
                    let next = self.target_of(id);
                    reach.extend(self.dependents(next));
                    followed = true;
                }
            }
        }
        if let Some(d) = own_def {
            reach.remove(&Dep::Def(d));
        }

        // Production before tests, other files before the symbol's own.
        let own_path = header.file.clone();
        let order = |s: &Site| {
            let place = (s.file.clone(), s.line, s.column);
            (s.inside, s.test, s.file == own_path, place)
        };
        sites.sort_by_key(order);
        ambiguous.sort_by_key(order);

        ChangedSymbol {
            symbol: header.symbol,
            qualified: header.qualified,
            kind: header.kind,
            file: header.file,
            line: header.line,
            change: header.change,
            breaking: matches!(header.change, Change::Removed | Change::SignatureChanged)
                && references > 0,
            stability,
            references,
            dependents: Dependents {
                symbols: deps.len(),
                production,
                test,
                files: files.iter().map(|&f| index.file(f).path.clone()).collect(),
                list,
            },
            radius: reach.len(),
            radius_truncated,
            radius_unread: None,
            followed,
            renamed_to: header.renamed_to,
            sites,
            ambiguous,
            ambiguous_unlisted,
        }
    }
}

/// The class whose `__init__` `d` is, for a Python constructor.
fn constructed_class(index: &Index, d: DefId) -> Option<DefId> {
    let def = index.def(d);
    if def.name != "__init__" || index.file(d.file).lang != Lang::Python {
        return None;
    }
    let class = DefId {
        file: d.file,
        def: def.parent?,
    };
    (index.def(class).kind == Kind::Class).then_some(class)
}

/// Line, column, form and enclosing definition of a site. A declaration
/// (`mod b;`) brings its module into the crate, so it reads as an import;
/// it is enclosed by what encloses the declaration.
fn place(index: &Index, file: u32, at: Mention) -> (u32, u32, Form, Option<u32>) {
    let syms = &index.file(file).syms;
    match at {
        Mention::Ref(r) => {
            let r = &syms.refs[r as usize];
            (r.line, r.column, r.form, r.scope)
        }
        Mention::Import(i) => {
            let imp = &syms.imports[i as usize];
            (imp.line, imp.column, Form::Import, imp.scope)
        }
        Mention::Decl(d) => {
            let d = &syms.defs[d as usize];
            (d.line, d.column, Form::Import, d.parent)
        }
        // The implementing item itself depends on the trait's.
        Mention::Impl(i) => {
            let d = &syms.defs[i as usize];
            (d.line, d.column, Form::Impl, Some(i))
        }
    }
}

/// A declaration marked as test code (`#[cfg(test)] mod tests;`).
fn is_test_decl(index: &Index, file: u32, at: Mention) -> bool {
    match at {
        Mention::Decl(d) => index.file(file).syms.defs[d as usize].test,
        _ => false,
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
