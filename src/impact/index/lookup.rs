//! Names in modules: what a name means in a module (declared, imported,
//! glob-imported, memoized once per module and name, cut off past a
//! deadline) and where a path leads.

use super::layout::is_side_crate_file;
use super::*;

/// How deep lookups may nest within one question: far past any real chain
/// of re-exports, well short of the thread's stack.
const MAX_NESTING: usize = 200;

/// A question whose answer `Index` keeps.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) enum Key {
    /// What module `m` binds to a name.
    Lookup(ModId, Box<str>),
    /// The members of a type of a name.
    Members(DefId, Box<str>),
}

/// The answers an index computed, and the questions under way.
#[derive(Default)]
pub(super) struct Memo {
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
pub(super) enum Entered {
    Known(Rc<[Target]>),
    /// Under way already (a cycle), or out of time or depth: a lookup
    /// answers what its module declares itself, members nothing.
    Cut,
    /// Compute it, then hand the frame to `memo_leave`.
    Fresh(Frame),
}

/// A question being computed: what the question around it rested on.
pub(super) struct Frame {
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

impl Index {
    pub(super) fn scope_mod(&self, file: u32, scope: Option<u32>) -> ModId {
        let f = &self.files[file as usize];
        match scope {
            Some(s) => f.inner_mod[s as usize].unwrap_or(f.def_mod[s as usize]),
            None => f.module,
        }
    }

    pub(super) fn def_module(&self, id: DefId) -> ModId {
        self.files[id.file as usize].def_mod[id.def as usize]
    }

    /// Declared directly in a module, not inside a function or type.
    pub(super) fn module_level(&self, id: DefId) -> bool {
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

    /// The names a module binds to `name`: its items, submodules, imports,
    /// then glob imports.
    pub(super) fn lookup(&self, m: ModId, name: &str, out: &mut Vec<Target>) {
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
    pub(super) fn lookup_memo(&self, m: ModId, name: &str) -> Rc<[Target]> {
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
    pub(super) fn declared(&self, m: ModId, name: &str) -> Vec<Target> {
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
    pub(super) fn memo_enter(&self, key: &Key) -> Entered {
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
    pub(super) fn memo_leave(&self, key: Key, frame: Frame, found: Vec<Target>) -> Rc<[Target]> {
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
    pub(super) fn lookups_computed(&self) -> u64 {
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

    pub(super) fn modules_lang(&self, m: ModId) -> Lang {
        if self.modules[m as usize].key.starts_with("py:") {
            Lang::Python
        } else {
            Lang::Rust
        }
    }

    pub(super) fn resolve_path(&self, m: ModId, segs: &[String], lang: Lang) -> PathOutcome {
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
    pub(super) fn crate_roots(&self, m: ModId) -> Vec<ModId> {
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
}
