//! Modules as things that are named: their ancestors and relations, how
//! far a module's name reaches, and every place that names it.

use super::*;

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

impl Index {
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
