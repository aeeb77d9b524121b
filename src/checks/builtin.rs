//! The built-in checks, run on the diff model, the task's scope and
//! criteria, the impact analysis and the two sides of each changed Rust or
//! Python file (outlined with tree-sitter). Pure: blobs come through a
//! reader, findings go back as data.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::git::{Diff, FileDiff, LineKind};
use crate::impact::{self, Change, Confidence, Impact};
use crate::paths;
use crate::secrets::DiffSecret;
use crate::tasks::{Criterion, Scope};

use super::measure;
use super::outline::{self, Lang, Marker, Outline};
use super::signature::{Call, CallSites, Callable, DefaultChange, Signature};
use super::{Check, Config, Finding};

/// Files above this size are generated or vendored: not outlined.
const MAX_OUTLINE_BYTES: usize = 1 << 20;

/// How many places a message lists before "and N more".
const LISTED: usize = 3;

/// What the checks read.
pub struct Input<'a> {
    pub diff: &'a Diff,
    /// The task's declared files; None when there is no task.
    pub scope: Option<&'a Scope>,
    pub criteria: &'a [Criterion],
    /// None when the impact analysis failed (its notice says why).
    pub impact: Option<&'a Impact>,
    /// The secrets redacted from the diff (`secrets::redact_diff`).
    pub secrets: &'a [DiffSecret],
    pub blobs: &'a dyn impact::Blobs,
    /// A file at the head commit by its path, if there is one: call sites
    /// live in files the diff may not touch.
    pub head_file: &'a dyn Fn(&str) -> Option<Vec<u8>>,
}

/// The findings, and what the checks could not look at.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outcome {
    pub findings: Vec<Finding>,
    pub notices: Vec<String>,
}

/// Run every built-in check that is not off.
pub fn run(input: &Input, config: &Config) -> Outcome {
    let mut run = Run {
        input,
        config,
        outcome: Outcome::default(),
        sides: Sides::load(input),
    };
    let sides_notices = std::mem::take(&mut run.sides.notices);
    run.outcome.notices.extend(sides_notices);
    run.empty_diff();
    run.scope();
    run.breaking_change();
    run.secret();
    run.placeholder();
    run.debug_leftover();
    run.test_weakened();
    run.untested_criterion();
    run.large_diff();
    super::sort(&mut run.outcome.findings);
    run.outcome
}

/// Both sides of each changed Rust or Python file, outlined once.
struct Sides {
    /// By index into `diff.files`.
    head: HashMap<usize, Outline>,
    base: HashMap<usize, Outline>,
    notices: Vec<String>,
}

impl Sides {
    fn load(input: &Input) -> Sides {
        let mut sides = Sides {
            head: HashMap::new(),
            base: HashMap::new(),
            notices: Vec::new(),
        };
        for (i, file) in input.diff.files.iter().enumerate() {
            if file.binary {
                continue;
            }
            if let (Some(blob), Some(lang)) = (&file.new_blob, Lang::of_path(&file.path)) {
                if let Some(o) = sides.outline(input, blob, &file.path, lang) {
                    sides.head.insert(i, o);
                }
            }
            let old_path = file.old_path.as_deref().unwrap_or(&file.path);
            if let (Some(blob), Some(lang)) = (&file.old_blob, Lang::of_path(old_path)) {
                if let Some(o) = sides.outline(input, blob, old_path, lang) {
                    sides.base.insert(i, o);
                }
            }
        }
        sides
    }

    fn outline(&mut self, input: &Input, blob: &str, path: &str, lang: Lang) -> Option<Outline> {
        let bytes = match input.blobs.read(blob) {
            Ok(b) => b,
            Err(e) => {
                self.notices.push(format!(
                    "Checks: {path} could not be read ({e}), so it was not checked"
                ));
                return None;
            }
        };
        if bytes.len() > MAX_OUTLINE_BYTES {
            self.notices.push(format!(
                "Checks: {path} is over {} MiB, so its code was not checked",
                MAX_OUTLINE_BYTES >> 20
            ));
            return None;
        }
        let text = String::from_utf8_lossy(&bytes);
        let outline = outline::outline(lang, &text, paths::is_test(path), path.ends_with(".pyi"));
        if outline.is_none() {
            self.notices.push(format!(
                "Checks: {path} could not be parsed, so its code was not checked"
            ));
        }
        outline
    }
}

struct Run<'a> {
    input: &'a Input<'a>,
    config: &'a Config,
    outcome: Outcome,
    sides: Sides,
}

impl Run<'_> {
    fn push(&mut self, check: Check, file: Option<&str>, line: Option<u32>, message: String) {
        if let Some(severity) = self.config.severity(check) {
            self.outcome.findings.push(Finding {
                check: check.name().to_string(),
                severity,
                file: file.map(str::to_string),
                line,
                message,
            });
        }
    }

    fn on(&self, check: Check) -> bool {
        self.config.severity(check).is_some()
    }

    fn empty_diff(&mut self) {
        if !self.on(Check::EmptyDiff) {
            return;
        }
        let files = &self.input.diff.files;
        if files.is_empty() {
            self.push(
                Check::EmptyDiff,
                None,
                None,
                "Nothing was implemented: the branch does not differ from its base.".to_string(),
            );
        } else if files.iter().all(|f| paths::is_speed(&f.path)) {
            self.push(
                Check::EmptyDiff,
                None,
                None,
                "Nothing was implemented: the diff only changes speed's own files under .speed/."
                    .to_string(),
            );
        }
    }

    fn scope(&mut self) {
        let Some(scope) = self.input.scope.filter(|s| !s.is_empty()) else {
            return;
        };
        if !self.on(Check::Scope) {
            return;
        }
        let covered = |path: &str| {
            scope.declares(path)
                || paths::is_test(path)
                || paths::is_lockfile(path)
                || paths::is_speed(path)
        };
        for out in measure::outside(self.input.diff, &covered) {
            let (path, verb) = (out.path, out.change);
            let line = first_added(out.file);
            self.push(
                Check::Scope,
                Some(path),
                line,
                format!(
                    "{path} is {verb}, but the task does not declare it (files_touched, files_to_create, files_to_modify, files_to_delete)."
                ),
            );
        }
    }

    /// What really breaks: a removed symbol still named where it no
    /// longer exists, a function whose callers can tell its new
    /// signature from the old, called where the call no longer fits, a
    /// changed default that calls leave to it, or a type that gained
    /// members where a place lists every member. A
    /// change the index cannot be sure of (a name still defined, a method
    /// call by name alone, a call it cannot read) is left to the model,
    /// which sees the impact table.
    fn breaking_change(&mut self) {
        let Some(impact) = self.input.impact else {
            return;
        };
        if !self.on(Check::BreakingChange) {
            return;
        }
        let added = added_lines(self.input.diff);
        // Names the head still defines among the changed symbols: a
        // removal of one of them is a move (to another file, a derive, a
        // conditional definition).
        let present: HashSet<&str> = impact
            .symbols
            .iter()
            .filter(|s| s.change != Change::Removed)
            .map(|s| bare(&s.symbol))
            .collect();
        let callable = |k: impact::Kind| matches!(k, impact::Kind::Function | impact::Kind::Method);
        let mut sites_read = CallFiles::default();
        let mut findings = Vec::new();
        for symbol in &impact.symbols {
            let name = bare(&symbol.symbol);
            let left: Vec<&impact::Site> = match symbol.change {
                Change::Removed => {
                    let dunder = name.starts_with("__") && name.ends_with("__");
                    if dunder
                        || present.contains(name)
                        || self.still_defined(&symbol.file, name)
                        || self
                            .base_callable(&symbol.file, symbol.line, name)
                            .is_some_and(|c| c.trait_impl)
                    {
                        continue;
                    }
                    // Provided from elsewhere now: only a reference through
                    // the removed item's own module (`rng::Rng`, `from
                    // fines.rules import fine`) is surely broken.
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
                    // A removed symbol has no signature to update to: a
                    // line this diff wrote that names it is broken too.
                    symbol
                        .sites
                        .iter()
                        .filter(|s| certain(s))
                        .filter(|s| {
                            (symbol.kind != impact::Kind::Module
                                || !sites_read.declares_module(self.input, &s.file, s.line, name))
                                && (!reimported
                                    || through_module(
                                        &sites_read.line(self.input, &s.file, s.line),
                                    ))
                        })
                        .collect()
                }
                Change::MembersAdded => {
                    if let Some(found) = self.members_finding(symbol, &mut sites_read) {
                        findings.push(found);
                    }
                    continue;
                }
                Change::SignatureChanged if callable(symbol.kind) => {
                    let Some(new) = self.head_callable(&symbol.file, symbol.line, name) else {
                        continue;
                    };
                    // Calls bind to the implementation, not to a trait's
                    // item's impl or an `@overload` stub.
                    if new.trait_impl || new.overload {
                        continue;
                    }
                    let old = self.base_callables(&symbol.file, name, new.owner.as_deref());
                    if old.is_empty() {
                        continue;
                    }
                    if let Some(o) = old
                        .iter()
                        .find(|o| new.signature.compatible_with(&o.signature))
                    {
                        let changed = new.signature.changed_defaults(&o.signature);
                        let signature = new.signature.clone();
                        for change in changed {
                            let relying = self.relying_on_default(
                                symbol,
                                &signature,
                                &change.name,
                                &added,
                                &mut sites_read,
                            );
                            if let Some(message) = default_message(symbol, &change, &relying) {
                                findings.push((symbol.file.clone(), symbol.line, message));
                            }
                        }
                        continue;
                    }
                    let signature = new.signature.clone();
                    symbol
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
                            sites_read
                                .calls(self.input, &s.file, s.line, name)
                                .iter()
                                .any(|c| !signature.accepts(c))
                        })
                        .collect()
                }
                _ => continue,
            };
            let Some(first) = left.first() else { continue };
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
            findings.push((first.file.clone(), first.line, message));
        }
        for (file, line, message) in findings {
            self.push(Check::BreakingChange, Some(&file), Some(line), message);
        }
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

    /// The head side's outline of a file named by its base or head path.
    fn head_outline(&self, path: &str) -> Option<&Outline> {
        let i = self
            .input
            .diff
            .files
            .iter()
            .position(|f| f.path == path || f.old_path.as_deref() == Some(path))?;
        self.sides.head.get(&i)
    }

    fn base_outline(&self, path: &str) -> Option<&Outline> {
        let i = self
            .input
            .diff
            .files
            .iter()
            .position(|f| f.old_path.as_deref().unwrap_or(&f.path) == path)?;
        self.sides.base.get(&i)
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
        self.sides.head.iter().any(|(i, head)| {
            let before = self.sides.base.get(i).and_then(|b| b.imported.get(name));
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

    fn secret(&mut self) {
        let found: Vec<DiffSecret> = self
            .input
            .secrets
            .iter()
            .filter(|s| s.added)
            .cloned()
            .collect();
        for s in found {
            self.push(
                Check::Secret,
                Some(&s.file),
                Some(s.line),
                format!(
                    "A secret ({}) is added here. speed replaced it with {} in everything it sends or writes; remove it from the branch's history and rotate it.",
                    s.rule,
                    crate::secrets::placeholder(s.rule)
                ),
            );
        }
    }

    /// Markers of the given kinds on lines this diff adds, with their file.
    fn added_markers(&self, kinds: &[Marker], in_tests: bool) -> Vec<(String, outline::Found)> {
        let mut out = Vec::new();
        let documentation = self.doc_module_files();
        for (i, file) in self.input.diff.files.iter().enumerate() {
            let Some(head) = self.sides.head.get(&i) else {
                continue;
            };
            if (!in_tests && paths::is_test(&file.path)) || documentation.contains(&file.path) {
                continue;
            }
            let added: HashSet<u32> = file_added_lines(file).collect();
            for m in &head.markers {
                if kinds.contains(&m.marker)
                    && added.contains(&m.line)
                    && (in_tests || !head.in_test_region(m.line))
                {
                    out.push((file.path.clone(), m.clone()));
                }
            }
        }
        out
    }

    /// The files of the modules a changed Rust file declares for
    /// documentation only (`#[cfg(doc)] mod not_implemented;` in
    /// `src/lib.rs` is `src/not_implemented.rs` or its `mod.rs`).
    fn doc_module_files(&self) -> HashSet<String> {
        let mut out = HashSet::new();
        for (i, head) in &self.sides.head {
            let declaring = &self.input.diff.files[*i].path;
            let (dir, file) = declaring.rsplit_once('/').unwrap_or(("", declaring));
            let stem = file.trim_end_matches(".rs");
            // `lib.rs`, `main.rs` and `mod.rs` hold their folder's modules;
            // `foo.rs` holds those in `foo/`.
            let base = if matches!(stem, "lib" | "main" | "mod") {
                dir.to_string()
            } else if dir.is_empty() {
                stem.to_string()
            } else {
                format!("{dir}/{stem}")
            };
            for module in &head.doc_modules {
                let rel = module.replace("::", "/");
                let at = if base.is_empty() {
                    rel
                } else {
                    format!("{base}/{rel}")
                };
                out.insert(format!("{at}.rs"));
                out.insert(format!("{at}/mod.rs"));
            }
        }
        out
    }

    fn placeholder(&mut self) {
        if !self.on(Check::Placeholder) {
            return;
        }
        let kinds = [
            Marker::Todo,
            Marker::Unimplemented,
            Marker::NotImplemented,
            Marker::PassBody,
            Marker::EllipsisBody,
        ];
        // `raise NotImplementedError` in a method of a class that a changed
        // file derives from is an abstract method (flask's sansio `App`,
        // derived by `Flask` in another file); the file itself already
        // stood down for its own subclasses.
        let derived: HashSet<&str> = self
            .sides
            .head
            .values()
            .flat_map(|o| o.bases.iter().map(String::as_str))
            .collect();
        let abstract_method = |m: &outline::Found| {
            m.marker == Marker::NotImplemented
                && m.function
                    .as_deref()
                    .and_then(|f| f.rsplit_once('.'))
                    .and_then(|(owner, _)| owner.rsplit('.').next())
                    .is_some_and(|class| derived.contains(class))
        };
        let found: Vec<(String, outline::Found)> = self
            .added_markers(&kinds, false)
            .into_iter()
            .filter(|(_, m)| !abstract_method(m))
            .collect();
        for (file, m) in found {
            let within = m
                .function
                .as_deref()
                .map(|f| format!(" in {f}"))
                .unwrap_or_default();
            self.push(
                Check::Placeholder,
                Some(&file),
                Some(m.line),
                format!(
                    "{}{within}: a placeholder where an implementation belongs.",
                    m.marker.label()
                ),
            );
        }
    }

    fn debug_leftover(&mut self) {
        if !self.on(Check::DebugLeftover) {
            return;
        }
        // `dbg!` in a test prints only when the test fails: often kept on
        // purpose. A debugger stop anywhere hangs whoever runs the code.
        let mut found = self.added_markers(&[Marker::Dbg], false);
        found.extend(self.added_markers(&[Marker::Breakpoint, Marker::SetTrace], true));
        found.sort_by(|a, b| (&a.0, a.1.line).cmp(&(&b.0, b.1.line)));
        for (file, m) in found {
            self.push(
                Check::DebugLeftover,
                Some(&file),
                Some(m.line),
                format!(
                    "{} left in: a debugging aid, not part of the change.",
                    m.marker.label()
                ),
            );
        }
    }

    fn test_weakened(&mut self) {
        if !self.on(Check::TestWeakened) {
            return;
        }
        let files = &self.input.diff.files;
        // Every test on the head side of the changed files, by name and body.
        let mut head_names: HashSet<&str> = HashSet::new();
        let mut head_bodies: HashSet<u64> = HashSet::new();
        for o in self.sides.head.values() {
            for t in &o.tests {
                head_names.insert(t.name.as_str());
                head_bodies.insert(t.body);
            }
        }
        let mut base_tests: HashMap<&str, (usize, &outline::TestFn)> = HashMap::new();
        let mut findings = Vec::new();
        // A file that holds as many tests as before had its tests rewritten
        // along with the code they test, not deleted; a file with fewer had
        // some deleted (another file adding tests does not bring them
        // back), and the ones gone, by name and by body, are named.
        let mut base_order: Vec<usize> = self.sides.base.keys().copied().collect();
        base_order.sort_unstable();
        for i in base_order {
            let o = &self.sides.base[&i];
            let file = &files[i];
            let old_path = file.old_path.as_deref().unwrap_or(&file.path);
            let before = o.tests.len();
            let after = self.sides.head.get(&i).map_or(0, |h| h.tests.len());
            for t in &o.tests {
                base_tests.entry(t.name.as_str()).or_insert((i, t));
                // Gone by name and by body: deleted, not renamed or moved.
                if after < before
                    && !head_names.contains(t.name.as_str())
                    && !head_bodies.contains(&t.body)
                {
                    let path = if file.new_blob.is_some() {
                        &file.path
                    } else {
                        old_path
                    };
                    findings.push((
                        path.to_string(),
                        None,
                        format!(
                            "Test {} ({old_path}:{} before this change) is deleted; the file holds {after} tests, {before} before.",
                            t.name, t.line
                        ),
                    ));
                }
            }
        }
        // Newly skipped: skipped on the head side, run on the base side.
        let mut skips: BTreeMap<(String, u32), Vec<&str>> = BTreeMap::new();
        let mut head_order: Vec<usize> = self.sides.head.keys().copied().collect();
        head_order.sort_unstable();
        for i in head_order {
            let file = &files[i];
            let added: HashSet<u32> = file_added_lines(file).collect();
            for t in &self.sides.head[&i].tests {
                let Some(at) = t.skipped_at else { continue };
                let was_run = base_tests
                    .get(t.name.as_str())
                    .is_some_and(|(_, b)| b.skipped_at.is_none());
                if was_run && added.contains(&at) {
                    skips
                        .entry((file.path.clone(), at))
                        .or_default()
                        .push(t.name.as_str());
                }
            }
        }
        for ((path, line), names) in skips {
            let what = if names.len() == 1 {
                format!("Test {} is newly skipped", names[0])
            } else {
                format!(
                    "{} tests are newly skipped ({})",
                    names.len(),
                    listed(names.iter().map(|n| n.to_string()))
                )
            };
            findings.push((
                path,
                Some(line),
                format!("{what}: it ran before this change."),
            ));
        }
        for (file, line, message) in findings {
            self.push(Check::TestWeakened, Some(&file), line, message);
        }
    }

    /// Whether the diff changes a test: a test file, or test code (a test
    /// function, a `#[cfg(test)]` module) inside another file.
    fn changes_a_test(&self) -> bool {
        self.input.diff.files.iter().enumerate().any(|(i, file)| {
            let sides = [Some(file.path.as_str()), file.old_path.as_deref()];
            if sides.into_iter().flatten().any(paths::is_test) {
                return true;
            }
            let head = self.sides.head.get(&i);
            let base = self.sides.base.get(&i);
            file.hunks
                .iter()
                .flat_map(|h| &h.lines)
                .any(|l| match l.kind {
                    LineKind::Added => head
                        .zip(l.new_lineno)
                        .is_some_and(|(o, n)| o.in_test_region(n)),
                    LineKind::Removed => base
                        .zip(l.old_lineno)
                        .is_some_and(|(o, n)| o.in_test_region(n)),
                    LineKind::Context => false,
                })
        })
    }

    fn untested_criterion(&mut self) {
        if !self.on(Check::UntestedCriterion) {
            return;
        }
        let by_test: Vec<&Criterion> = self
            .input
            .criteria
            .iter()
            .filter(|c| c.verify_by.as_deref().is_some_and(verified_by_test))
            .collect();
        if by_test.is_empty() || self.changes_a_test() {
            return;
        }
        let messages: Vec<String> = by_test
            .iter()
            .map(|c| {
                format!(
                    "{} is to be verified by {}, but the diff changes no test.",
                    c.id,
                    c.verify_by.as_deref().unwrap_or("test")
                )
            })
            .collect();
        for message in messages {
            self.push(Check::UntestedCriterion, None, None, message);
        }
    }

    fn large_diff(&mut self) {
        if !self.on(Check::LargeDiff) {
            return;
        }
        let (max_lines, max_files) = (self.config.large_diff_lines, self.config.large_diff_files);
        let size = measure::size(self.input.diff, max_lines, max_files);
        if size.large {
            let (lines, files) = (size.lines, size.files);
            self.push(
                Check::LargeDiff,
                None,
                None,
                format!(
                    "The diff changes {lines} lines in {files} files (limits: {max_lines} lines, {max_files} files; lockfiles and .speed/ not counted): hard to review as one change."
                ),
            );
        }
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

/// Files of call sites, each read and parsed once.
#[derive(Default)]
struct CallFiles {
    parsed: HashMap<String, Option<CallSites>>,
}

impl CallFiles {
    fn calls(&mut self, input: &Input, path: &str, line: u32, name: &str) -> Vec<Call> {
        self.file(input, path)
            .map(|s| s.at(line, name))
            .unwrap_or_default()
    }

    fn line(&mut self, input: &Input, path: &str, line: u32) -> String {
        self.file(input, path)
            .map(|s| s.line(line).to_string())
            .unwrap_or_default()
    }

    fn listers(
        &mut self,
        input: &Input,
        path: &str,
        line: u32,
        name: &str,
        new: &[String],
    ) -> Vec<super::members::Lister> {
        self.file(input, path)
            .map(|s| s.listers(line, name, new))
            .unwrap_or_default()
    }

    fn declares_module(&mut self, input: &Input, path: &str, line: u32, name: &str) -> bool {
        self.file(input, path)
            .is_some_and(|s| s.declares_module(line, name))
    }

    fn file(&mut self, input: &Input, path: &str) -> Option<&CallSites> {
        self.parsed
            .entry(path.to_string())
            .or_insert_with(|| {
                let lang = Lang::of_path(path)?;
                let bytes = (input.head_file)(path)?;
                if bytes.len() > MAX_OUTLINE_BYTES {
                    return None;
                }
                CallSites::parse(lang, bytes)
            })
            .as_ref()
    }
}

/// `verify_by` values that mean an automated test: "test", "unit test",
/// "pytest", "integration_test", … but not "manual test".
fn verified_by_test(verify_by: &str) -> bool {
    let v = verify_by.to_ascii_lowercase();
    (v.contains("test") || v.contains("spec")) && !v.contains("manual")
}

fn file_added_lines(file: &FileDiff) -> impl Iterator<Item = u32> + '_ {
    file.hunks
        .iter()
        .flat_map(|h| &h.lines)
        .filter(|l| l.kind == LineKind::Added)
        .filter_map(|l| l.new_lineno)
}

fn first_added(file: &FileDiff) -> Option<u32> {
    file_added_lines(file).next()
}

/// Added line numbers by head path.
fn added_lines(diff: &Diff) -> HashMap<&str, HashSet<u32>> {
    diff.files
        .iter()
        .map(|f| (f.path.as_str(), file_added_lines(f).collect()))
        .collect()
}

/// The first few items, then "and N more".
fn listed(items: impl Iterator<Item = String>) -> String {
    let items: Vec<String> = items.collect();
    let mut out = items
        .iter()
        .take(LISTED)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if items.len() > LISTED {
        out.push_str(&format!(" and {} more", items.len() - LISTED));
    }
    out
}
