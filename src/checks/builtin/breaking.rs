//! `breaking_change`: what a diff breaks where it does not update it. A
//! removed symbol still named; a function whose callers can tell its new
//! signature from the old, called where a call no longer fits; a changed
//! Python default that calls leave to it; a type that gained members,
//! where a place lists every member. What the index cannot be sure of is
//! left to the model, which sees the impact table.

use super::*;
use crate::checks::members::{self, Lister};
use crate::checks::signature::{
    Call, CallFacts, CallSites, Callable, DefaultChange, NewMembers, Signature,
};

impl Run<'_> {
    /// What really breaks (see the module's doc), one finding per changed
    /// symbol or, for changed defaults, per parameter. A change the index
    /// cannot be sure of (a name still defined, a method call by name
    /// alone, a call it cannot read) is left to the model.
    pub(super) fn breaking_change(&mut self) {
        let Some(impact) = self.impact else {
            return;
        };
        if !self.on(Check::BreakingChange) {
            return;
        }
        let mut pass = Pass {
            added: added_lines(self.input.diff),
            // Names the head still defines among the changed symbols: a
            // removal of one of them is a move (to another file, a derive,
            // a conditional definition).
            present: impact
                .symbols
                .iter()
                .filter(|s| s.change != Change::Removed)
                .map(|s| bare(&s.symbol))
                .collect(),
            sites: CallFiles::default(),
        };
        let callable = |k: impact::Kind| matches!(k, impact::Kind::Function | impact::Kind::Method);
        let mut findings = Vec::new();
        for symbol in &impact.symbols {
            match symbol.change {
                Change::Removed => findings.extend(self.removal_finding(symbol, &mut pass)),
                Change::MembersAdded => {
                    findings.extend(self.members_finding(symbol, &mut pass.sites));
                }
                Change::SignatureChanged if callable(symbol.kind) => {
                    findings.extend(self.signature_findings(symbol, &mut pass));
                }
                _ => {}
            }
        }
        for (file, line, message) in findings {
            self.push(Check::BreakingChange, Some(&file), Some(line), message);
        }
    }

    /// A removed symbol still named where the diff does not update it.
    fn removal_finding(
        &self,
        symbol: &impact::ChangedSymbol,
        pass: &mut Pass,
    ) -> Option<(String, u32, String)> {
        let name = bare(&symbol.symbol);
        let dunder = name.starts_with("__") && name.ends_with("__");
        if dunder
            || pass.present.contains(name)
            || self.still_defined(&symbol.file, name)
            || self
                .base_callable(&symbol.file, symbol.line, name)
                .is_some_and(|c| c.trait_impl)
        {
            return None;
        }
        // Provided from elsewhere now: only a reference through the removed
        // item's own module (`rng::Rng`, `from fines.rules import fine`) is
        // surely broken.
        let module = module_name(&symbol.file);
        let through_module = |line: &str| {
            line.contains(&format!("{module}::{name}"))
                || line.contains(&format!("{module}.{name}"))
                || (line.contains("import")
                    && line
                        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                        .any(|w| w == module))
        };
        let reimported = self.newly_imported(&symbol.file, name);
        // A removed symbol has no signature to update to: a line this diff
        // wrote that names it is broken too.
        let sites = &mut pass.sites;
        let left: Vec<&impact::Site> = symbol
            .sites
            .iter()
            .filter(|s| certain(s))
            .filter(|s| {
                (symbol.kind != impact::Kind::Module
                    || !sites.declares_module(self.input, &s.file, s.line, name))
                    && (!reimported || through_module(&sites.line(self.input, &s.file, s.line)))
            })
            .collect();
        left_finding(symbol, &left)
    }

    /// A function whose signature changed: the calls that no longer fit
    /// it, or, when every call that fitted still does, the calls that
    /// leave a parameter whose default changed to that default.
    fn signature_findings(
        &self,
        symbol: &impact::ChangedSymbol,
        pass: &mut Pass,
    ) -> Vec<(String, u32, String)> {
        let name = bare(&symbol.symbol);
        let Some(new) = self.head_callable(&symbol.file, symbol.line, name) else {
            return Vec::new();
        };
        // Calls bind to the implementation, not to a trait's item's impl or
        // an `@overload` stub.
        if new.trait_impl || new.overload {
            return Vec::new();
        }
        let old = self.base_callables(&symbol.file, name, new.owner.as_deref());
        if old.is_empty() {
            return Vec::new();
        }
        let signature = new.signature.clone();
        if let Some(o) = old.iter().find(|o| signature.compatible_with(&o.signature)) {
            return signature
                .changed_defaults(&o.signature)
                .iter()
                .filter_map(|change| {
                    let relying = self.relying_on_default(
                        symbol,
                        &signature,
                        &change.name,
                        &pass.added,
                        &mut pass.sites,
                    );
                    let message = default_message(symbol, change, &relying)?;
                    Some((symbol.file.clone(), symbol.line, message))
                })
                .collect();
        }
        let added = &pass.added;
        let sites = &mut pass.sites;
        let left: Vec<&impact::Site> = symbol
            .sites
            .iter()
            .filter(|s| certain(s))
            // A caller on a line this diff wrote was updated.
            .filter(|s| {
                !added
                    .get(s.file.as_str())
                    .is_some_and(|l| l.contains(&s.line))
            })
            .filter(|s| {
                sites
                    .calls(self.input, &s.file, s.line, name)
                    .iter()
                    .any(|c| !signature.accepts(c))
            })
            .collect();
        left_finding(symbol, &left).into_iter().collect()
    }

    /// The calls of a changed function that the diff does not update and
    /// that leave `param` to its default. A Python method called by its
    /// name alone counts when that name is the project's only definition
    /// of it (the index already turns away names of built-in types'
    /// methods): the call must still bind to the new signature.
    fn relying_on_default<'s>(
        &self,
        symbol: &'s impact::ChangedSymbol,
        signature: &Signature,
        param: &str,
        added: &HashMap<&str, HashSet<u32>>,
        sites_read: &mut CallFiles,
    ) -> Vec<&'s impact::Site> {
        let name = bare(&symbol.symbol);
        let mut out: Vec<&impact::Site> = symbol
            .sites
            .iter()
            .filter(|s| !s.inside && s.confidence != Confidence::Ambiguous)
            .filter(|s| {
                !added
                    .get(s.file.as_str())
                    .is_some_and(|l| l.contains(&s.line))
            })
            .filter(|s| {
                sites_read
                    .calls(self.input, &s.file, s.line, name)
                    .iter()
                    .any(|c| signature.relies_on_default(c, param))
            })
            .collect();
        out.dedup_by(|a, b| a.file == b.file && a.line == b.line);
        out
    }

    /// A struct that gained fields or an enum that gained variants breaks
    /// the places that list every member: struct literals and patterns
    /// without `..`, matches without a catch-all arm. The finding is at
    /// the first of them.
    fn members_finding(
        &self,
        symbol: &impact::ChangedSymbol,
        sites_read: &mut CallFiles,
    ) -> Option<(String, u32, String)> {
        let name = bare(&symbol.symbol);
        let head = self
            .head_outline(&symbol.file)?
            .shapes
            .iter()
            .find(|s| s.name == name && s.line == symbol.line)?;
        let base = self
            .base_outline(&symbol.file)?
            .shapes
            .iter()
            .find(|s| s.name == name && s.variants == head.variants)?;
        let new: Vec<String> = head
            .members
            .iter()
            .filter(|m| !base.members.contains(m))
            .cloned()
            .collect();
        if new.is_empty() {
            return None;
        }
        let mut places: Vec<(String, u32)> = Vec::new();
        let mut left_out: Vec<String> = Vec::new();
        for site in symbol.sites.iter().filter(|s| certain(s)) {
            let text = sites_read.raw_line(self.input, &site.file, site.line);
            if !members::may_list(&text, name, head.variants) {
                continue;
            }
            for l in sites_read.listers(self.input, &site.file, site.line, name, &new) {
                if !places
                    .iter()
                    .any(|(f, line)| *f == site.file && *line == l.line)
                {
                    places.push((site.file.clone(), l.line));
                }
                for m in l.missing {
                    if !left_out.contains(&m) {
                        left_out.push(m);
                    }
                }
            }
        }
        let (file, line) = places.first().cloned()?;
        let n = places.len();
        let s = if n == 1 { "" } else { "s" };
        let members = left_out
            .iter()
            .map(|m| format!("`{m}`"))
            .collect::<Vec<_>>()
            .join(", ");
        let (what, listing) = if head.variants {
            (
                if left_out.len() == 1 {
                    "variant"
                } else {
                    "variants"
                },
                format!(
                    "{n} match{} list{} its variants one by one, with no catch-all arm",
                    if n == 1 { "" } else { "es" },
                    if n == 1 { "s" } else { "" },
                ),
            )
        } else {
            (
                if left_out.len() == 1 {
                    "field"
                } else {
                    "fields"
                },
                format!(
                    "{n} struct literal{s} or pattern{s} name{} every other field, with no `..`",
                    if n == 1 { "s" } else { "" },
                ),
            )
        };
        let places = listed(places.iter().map(|(f, l)| format!("{f}:{l}")));
        let message = format!(
            "{} ({}:{}) gained the {what} {members}, but {listing}, so {} not compile: {places}.",
            symbol.symbol,
            symbol.file,
            symbol.line,
            if n == 1 { "it does" } else { "they do" },
        );
        Some((file, line, message))
    }

    fn still_defined(&self, path: &str, name: &str) -> bool {
        self.head_outline(path)
            .is_some_and(|o| o.defined.contains(name))
    }

    /// Whether a changed file now imports `name` from a path it did not
    /// import it from before (rand 0.10 removed its own `Rng` and
    /// re-exported `rand_core::Rng` in its place): the name is provided
    /// from elsewhere. An import naming the removed symbol's own module
    /// does not count: that import is as broken as the rest.
    fn newly_imported(&self, removed_from: &str, name: &str) -> bool {
        let module = module_name(removed_from);
        self.input.sides.head.iter().any(|(i, head)| {
            let before = self
                .input
                .sides
                .base
                .get(i)
                .and_then(|b| b.imported.get(name));
            head.imported.get(name).is_some_and(|paths| {
                paths.iter().any(|p| {
                    !before.is_some_and(|b| b.contains(p))
                        && !p
                            .split(['.', ':'])
                            .rev()
                            .skip(1)
                            .any(|segment| segment == module)
                })
            })
        })
    }

    fn head_callable(&self, path: &str, line: u32, name: &str) -> Option<&Callable> {
        self.head_outline(path)?
            .callables
            .iter()
            .find(|c| c.line == line && c.name == name)
    }

    fn base_callable(&self, path: &str, line: u32, name: &str) -> Option<&Callable> {
        self.base_outline(path)?
            .callables
            .iter()
            .find(|c| c.line == line && c.name == name)
    }

    /// The base side's definitions of `owner`'s `name` (a conditional
    /// definition may have several), `@overload` stubs left out: calls
    /// bind to the implementation.
    fn base_callables(&self, path: &str, name: &str, owner: Option<&str>) -> Vec<&Callable> {
        self.base_outline(path)
            .map(|o| {
                o.callables
                    .iter()
                    .filter(|c| c.name == name && c.owner.as_deref() == owner && !c.overload)
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// The last name of `Type::name` or `Class.name`.
/// The module a source file is (`src/rng.rs` → `rng`, `pkg/x/__init__.py`
/// and `src/x/mod.rs` → `x`).
fn module_name(path: &str) -> &str {
    let mut parts = path.rsplit('/');
    let file = parts.next().unwrap_or(path);
    let stem = file.split('.').next().unwrap_or(file);
    if matches!(stem, "mod" | "__init__" | "lib") {
        parts.next().unwrap_or(stem)
    } else {
        stem
    }
}

fn bare(symbol: &str) -> &str {
    let after = symbol.rsplit("::").next().unwrap_or(symbol);
    after.rsplit('.').next().unwrap_or(after)
}

/// A reference that names the symbol for sure: resolved through a path,
/// an import or the enclosing scope, or the only definition of its name
/// when called by that name. A method called on a value of unknown type
/// (`x.write_vectored(…)`) may be any type's, a trait's or the standard
/// library's, so only an exact resolution counts.
fn certain(site: &impact::Site) -> bool {
    !site.inside
        && match site.confidence {
            Confidence::Exact => true,
            Confidence::Unique => !matches!(
                site.form,
                impact::Form::MethodCall | impact::Form::Attribute
            ),
            Confidence::Ambiguous => false,
        }
}

/// What one run of the check reads once.
struct Pass<'d> {
    /// The lines the diff added, by file.
    added: HashMap<&'d str, HashSet<u32>>,
    /// The changed symbols' names the head still defines.
    present: HashSet<&'d str>,
    sites: CallFiles,
}

/// The finding for a removed symbol or a changed signature and the places
/// left using it, at the first of them; None when none is left.
fn left_finding(
    symbol: &impact::ChangedSymbol,
    left: &[&impact::Site],
) -> Option<(String, u32, String)> {
    let first = left.first()?;
    let at = match &symbol.renamed_to {
        Some(to) => format!("{} → {to}", symbol.file),
        None => format!("{}:{}", symbol.file, symbol.line),
    };
    let mut places: Vec<String> = left
        .iter()
        .map(|s| format!("{}:{}", s.file, s.line))
        .collect();
    places.dedup();
    let places = listed(places.into_iter());
    let n = left.len();
    let message = match symbol.change {
        Change::Removed => format!(
            "{} ({at}) is removed, but {n} reference{} the diff does not update still use{} it: {places}.",
            symbol.symbol,
            if n == 1 { "" } else { "s" },
            if n == 1 { "s" } else { "" },
        ),
        _ => format!(
            "{} ({at}) has a changed signature, but {n} call{} the diff does not update no longer fit{} it: {places}.",
            symbol.symbol,
            if n == 1 { "" } else { "s" },
            if n == 1 { "s" } else { "" },
        ),
    };
    Some((first.file.clone(), first.line, message))
}

/// The finding for a changed default that calls rely on, at the
/// definition, naming them; None when no call does.
fn default_message(
    symbol: &impact::ChangedSymbol,
    change: &DefaultChange,
    relying: &[&impact::Site],
) -> Option<String> {
    if relying.is_empty() {
        return None;
    }
    let n = relying.len();
    let places = listed(relying.iter().map(|s| format!("{}:{}", s.file, s.line)));
    Some(format!(
        "{} ({}:{}) changes the default of `{}` from `{}` to `{}`, but {n} call{} the diff does not update leave{} it out and now get{} the new value: {places}.",
        symbol.symbol,
        symbol.file,
        symbol.line,
        change.name,
        clipped(&change.old),
        clipped(&change.new),
        if n == 1 { "" } else { "s" },
        if n == 1 { "s" } else { "" },
        if n == 1 { "s" } else { "" },
    ))
}

/// A default value as a message shows it: at most 40 characters.
fn clipped(value: &str) -> String {
    match value.char_indices().nth(40) {
        Some((i, _)) => format!("{}…", &value[..i]),
        None => value.to_string(),
    }
}

/// A file's text at the head commit, read once, with where each of its
/// lines starts.
type Text = (std::sync::Arc<crate::syntax::Text>, Vec<usize>);

/// Files of call sites, each read and parsed once: what `CallReader` read
/// of them while the index parsed them, else their trees from the store.
#[derive(Default)]
struct CallFiles {
    texts: HashMap<String, Option<Text>>,
    facts: HashMap<String, Option<std::sync::Arc<CallFacts>>>,
    parsed: HashMap<String, Option<CallSites>>,
}

impl CallFiles {
    fn calls(&mut self, input: &Input, path: &str, line: u32, name: &str) -> Vec<Call> {
        if input.calls.is_some_and(|r| r.names.contains(name)) {
            if let Some(facts) = self.facts(input, path) {
                return facts.at(line, name);
            }
        }
        self.file(input, path)
            .map(|s| s.at(line, name))
            .unwrap_or_default()
    }

    /// The text of 1-based `line`, or "" past the end.
    fn line(&mut self, input: &Input, path: &str, line: u32) -> String {
        self.text(input, path)
            .and_then(|(text, _)| {
                text.as_str()
                    .lines()
                    .nth((line as usize).saturating_sub(1))
                    .map(str::to_string)
            })
            .unwrap_or_default()
    }

    fn listers(
        &mut self,
        input: &Input,
        path: &str,
        line: u32,
        name: &str,
        new: &[String],
    ) -> Vec<Lister> {
        let read = input.calls.is_some_and(|r| {
            r.shapes
                .iter()
                .any(|(n, m, _)| n == name && m.as_slice() == new)
        });
        if let Some(found) = read
            .then(|| self.facts(input, path))
            .flatten()
            .and_then(|f| f.listers(line, name, new))
        {
            return found;
        }
        self.file(input, path)
            .map(|s| s.listers(line, name, new))
            .unwrap_or_default()
    }

    fn declares_module(&mut self, input: &Input, path: &str, line: u32, name: &str) -> bool {
        if input.calls.is_some_and(|r| r.modules.contains(name)) {
            if let Some(facts) = self.facts(input, path) {
                return facts.declares_module(line, name);
            }
        }
        self.file(input, path)
            .is_some_and(|s| s.declares_module(line, name))
    }

    /// The text of 1-based `line`, read without parsing the file.
    fn raw_line(&mut self, input: &Input, path: &str, line: u32) -> String {
        let Some((text, starts)) = self.text(input, path) else {
            return String::new();
        };
        let bytes = text.bytes();
        let Some(&start) = starts.get((line as usize).saturating_sub(1)) else {
            return String::new();
        };
        let end = memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |n| start + n);
        String::from_utf8_lossy(&bytes[start..end]).into_owned()
    }

    fn text(&mut self, input: &Input, path: &str) -> Option<&Text> {
        self.texts
            .entry(path.to_string())
            .or_insert_with(|| {
                let text = input.files.text(Side::Head, path)?;
                if text.len() > MAX_OUTLINE_BYTES {
                    return None;
                }
                let starts = std::iter::once(0)
                    .chain(memchr::memchr_iter(b'\n', text.bytes()).map(|i| i + 1))
                    .collect();
                Some((text, starts))
            })
            .as_ref()
    }

    /// What the call reader read of `path`: kept from when the index parsed
    /// it, or read now.
    fn facts(&mut self, input: &Input, path: &str) -> Option<std::sync::Arc<CallFacts>> {
        let reader = input.calls?;
        if !self.facts.contains_key(path) {
            let facts = match (self.text(input, path), input.files.key(Side::Head, path)) {
                (Some(_), Some(key)) => input
                    .files
                    .store()
                    .facts(reader.id, &key)
                    .ok()
                    .and_then(|f| f.downcast::<CallFacts>().ok()),
                _ => None,
            };
            self.facts.insert(path.to_string(), facts);
        }
        self.facts.get(path)?.clone()
    }

    fn file(&mut self, input: &Input, path: &str) -> Option<&CallSites> {
        if !self.parsed.contains_key(path) {
            let sites = match self.text(input, path) {
                Some(_) => input.files.tree(Side::Head, path).map(CallSites::new),
                None => None,
            };
            self.parsed.insert(path.to_string(), sites);
        }
        self.parsed.get(path)?.as_ref()
    }
}

/// What `breaking_change` will read at call sites, registered with the
/// review's store before the index parses (`syntax::Reader`): the calls of
/// each function whose signature the diff changes, the listings of each
/// type that gains members, the module declarations of files naming a
/// removed module. The index parses every file holding a reference it
/// resolves, so the call sites are read from its trees, never parsed
/// again.
pub struct CallReader {
    /// Functions and methods whose head signature differs from every base
    /// definition of the same name and owner.
    names: HashSet<String>,
    shapes: Vec<NewMembers>,
    /// Names the base side of a changed file defines and its head side
    /// does not, and the modules of deleted or renamed files: a removed
    /// module's declarations are looked for.
    modules: HashSet<String>,
    /// Every name a file must hold for the reader to read it.
    words: Option<aho_corasick::AhoCorasick>,
}

/// A registered `CallReader`.
#[derive(Clone, Copy)]
pub struct CallReaderId<'a> {
    pub id: crate::syntax::ReaderId,
    reader: &'a CallReader,
}

impl std::ops::Deref for CallReaderId<'_> {
    type Target = CallReader;
    fn deref(&self) -> &CallReader {
        self.reader
    }
}

impl CallReader {
    /// What the diff's changed files, outlined, may have broken; None when
    /// nothing (a change inside bodies).
    pub fn of(diff: &Diff, sides: &Sides) -> Option<CallReader> {
        let mut names = HashSet::new();
        let mut shapes = Vec::new();
        let mut removed = HashSet::new();
        for (i, file) in diff.files.iter().enumerate() {
            let (base, head) = (sides.base.get(&i), sides.head.get(&i));
            if let (Some(b), Some(h)) = (base, head) {
                for c in &h.callables {
                    let same = b.callables.iter().any(|o| {
                        o.name == c.name && o.owner == c.owner && o.signature == c.signature
                    });
                    if !same {
                        names.insert(c.name.clone());
                    }
                }
                for hs in &h.shapes {
                    let Some(bs) = b
                        .shapes
                        .iter()
                        .find(|s| s.name == hs.name && s.variants == hs.variants)
                    else {
                        continue;
                    };
                    let new: Vec<String> = hs
                        .members
                        .iter()
                        .filter(|m| !bs.members.contains(m))
                        .cloned()
                        .collect();
                    if !new.is_empty() {
                        shapes.push((hs.name.clone(), new, hs.variants));
                    }
                }
            }
            if let Some(b) = base {
                let kept = head.map(|h| &h.defined);
                removed.extend(
                    b.defined
                        .iter()
                        .filter(|n| !kept.is_some_and(|k| k.contains(*n)))
                        .cloned(),
                );
            }
            if base.is_some() && (head.is_none() || file.old_path.is_some()) {
                let old = file.old_path.as_deref().unwrap_or(&file.path);
                removed.insert(module_name(old).to_string());
            }
        }
        if names.is_empty() && shapes.is_empty() && removed.is_empty() {
            return None;
        }
        let mut words: Vec<&str> = names.iter().map(String::as_str).collect();
        words.extend(shapes.iter().map(|s| s.0.as_str()));
        words.extend(removed.iter().map(String::as_str));
        words.retain(|w| !w.is_empty());
        let words = aho_corasick::AhoCorasick::new(&words).ok();
        Some(CallReader {
            names,
            shapes,
            modules: removed,
            words,
        })
    }

    /// Register with `store`: files parsed from now on are read.
    pub fn register<'a>(&'a self, store: &crate::syntax::Store) -> CallReaderId<'a> {
        let id = store.add_reader(std::sync::Arc::new(Registered {
            names: self.names.clone(),
            shapes: self.shapes.clone(),
            modules: self.modules.clone(),
            words: self.words.clone(),
        }));
        CallReaderId { id, reader: self }
    }
}

/// The store's copy of a `CallReader`.
struct Registered {
    names: HashSet<String>,
    shapes: Vec<NewMembers>,
    modules: HashSet<String>,
    words: Option<aho_corasick::AhoCorasick>,
}

impl crate::syntax::Reader for Registered {
    fn selects(&self, _key: &crate::syntax::Key, text: &crate::syntax::Text) -> bool {
        // Without an automaton (too many names), every file is read.
        self.words.as_ref().is_none_or(|w| w.is_match(text.bytes()))
    }

    fn read(&self, parsed: &crate::syntax::Parsed) -> crate::syntax::Facts {
        std::sync::Arc::new(CallFacts::read(
            parsed,
            &self.names,
            &self.modules,
            &self.shapes,
        ))
    }
}
