//! The probe: which names and files the questions asked of the index so
//! far may reach, so that a round of parsing reads only the files that can
//! change the answer.

use super::*;

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

/// What resolution asked, in two parts: for the changed symbols and
/// their dependents (the first hop), and for the dependents' dependents
/// (the second hop, which only the radius counts).
#[derive(Debug, Default)]
pub struct Probes {
    pub first: Probe,
    pub second: Probe,
}

impl Probe {
    /// Everything `other` asked too.
    pub fn merge(&mut self, other: Probe) {
        self.global.extend(other.global);
        self.local.extend(other.local);
        self.pairs.extend(other.pairs);
        self.unit.extend(other.unit);
        self.within.extend(other.within);
        self.files.extend(other.files);
    }
}

impl Index {
    /// Start recording what resolution asks (see `Probe`), as the first hop.
    pub fn record(&mut self) {
        self.probe = Some(RefCell::new(Default::default()));
        self.hop.set(0);
    }

    /// From now on, what resolution asks is the second hop's.
    pub fn record_second_hop(&self) {
        self.hop.set(1);
    }

    /// What resolution asked since `record`.
    pub fn take_probes(&self) -> Probes {
        let [first, second] = self.probe.as_ref().map(|p| p.take()).unwrap_or_default();
        Probes { first, second }
    }

    /// The probe resolution records into now, if it records.
    fn probe(&self) -> Option<std::cell::RefMut<'_, Probe>> {
        let hop = self.hop.get();
        self.probe
            .as_ref()
            .map(|p| std::cell::RefMut::map(p.borrow_mut(), |p| &mut p[hop]))
    }

    pub(super) fn note_global(&self, name: &str) {
        if let Some(mut p) = self.probe() {
            if !p.global.contains(name) {
                p.global.insert(name.to_string());
            }
        }
    }

    pub(super) fn note_local(&self, m: ModId, name: &str) {
        self.note_in(|p| &mut p.local, m, name);
    }

    pub(super) fn note_unit(&self, unit: u32, name: &str) {
        self.note_in(|p| &mut p.unit, unit, name);
    }

    pub(super) fn note_within(&self, m: ModId, name: &str) {
        self.note_in(|p| &mut p.within, m, name);
    }

    /// Record (module or unit id, name) in the probe's set `pick` chooses.
    fn note_in(&self, pick: fn(&mut Probe) -> &mut HashSet<(u32, String)>, id: u32, name: &str) {
        if let Some(mut p) = self.probe() {
            pick(&mut p).insert((id, name.to_string()));
        }
    }

    pub(super) fn note_file(&self, file: u32) {
        if let Some(mut p) = self.probe() {
            p.files.insert(file);
        }
    }

    pub fn note_pair(&self, name: &str, anchor: &str) {
        if let Some(mut p) = self.probe() {
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
    /// An associated function of a type's own `impl` without `self`
    /// (`Shelf::new(…)`) has only a path: the type's names are its anchors.
    /// `None` for every other definition.
    pub fn anchors(&self, id: DefId) -> Option<Vec<String>> {
        let f = &self.files[id.file as usize];
        let d = self.def(id);
        let container = d.container.as_deref()?;
        if f.lang != Lang::Rust || d.kind == Kind::Variant || !stop_listed(&d.name) {
            return None;
        }
        let mut words = self.names_for(container);
        if d.no_self && d.trait_name.is_none() && !self.in_trait(id) {
            return Some(words);
        }
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
}
