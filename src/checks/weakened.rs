//! The `test_weakened` check: the tests of the changed files, known by
//! their qualified names (`TestX.test_y`, `tests::parses`, a project
//! macro's `rgtest!(name, …)`), matched across the diff, and what became
//! of each: deleted, newly skipped, left with fewer assertions, or added
//! already skipped. A test moved to another file under its name, renamed
//! with its body unchanged, or rewritten where its file's tests went (a
//! file moved, with or without git seeing the rename), is the same test.
//!
//! Pure: outlines and macro kinds in, findings out. It stands down on a
//! file whose head side could not be read, or that a syntax error newly
//! breaks: its tests are unknown, not gone.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use super::assertions::Assertion;
use super::files::Read;
use super::macros::{self, Kinds};
use super::outline::{self, Outline, TestFn};

/// How many deleted tests a finding names before "and N more".
const NAMED: usize = 10;

/// One changed file, both sides.
pub struct File<'a> {
    /// The head path, or the base path for a deleted file.
    pub path: &'a str,
    pub old_path: &'a str,
    pub base: Option<&'a Outline>,
    pub head: Option<&'a Outline>,
    /// The head side exists but was not outlined: its tests are unknown.
    pub head_unread: bool,
    /// Head lines this diff added.
    pub added: HashSet<u32>,
}

/// A finding for `builtin` to file under `test_weakened`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub file: String,
    pub line: Option<u32>,
    pub message: String,
    /// A test added already skipped: worth a look, not a block.
    pub minor: bool,
}

/// The findings, and what could not be compared.
#[derive(Debug, Default)]
pub struct Outcome {
    pub found: Vec<Found>,
    pub notices: Vec<String>,
}

/// What a side's own macros are: those its changed Rust files define,
/// and those the files they call are defined in (`macros::find`), read
/// from `files`, the side's files by path.
pub fn kinds(outlines: &[(&str, &Outline)], files: &dyn Read) -> Kinds {
    let (mut kinds, wanted, from) = wanted(outlines);
    kinds.extend(macros::find(
        &wanted,
        &from,
        files,
        outline::is_test_attribute,
    ));
    kinds
}

/// The files `kinds` may parse on a side (`macros::plan`): the caller
/// keeps their trees, so a file the index parses too is parsed once.
pub fn plan(outlines: &[(&str, &Outline)], files: &dyn Read) -> Vec<String> {
    let (_, wanted, from) = wanted(outlines);
    macros::plan(&wanted, &from, files)
        .into_iter()
        .flatten()
        .collect()
}

/// The macros the outlines define, the names they call that may be
/// macros declaring tests or asserting, and the files calling them.
fn wanted<'a>(outlines: &[(&'a str, &Outline)]) -> (Kinds, BTreeSet<String>, Vec<&'a str>) {
    let mut kinds = Kinds::default();
    let mut wanted = BTreeSet::new();
    let mut from = Vec::new();
    for (path, o) in outlines {
        kinds.extend(o.macros.clone());
        // The macros that may declare tests, and those called inside
        // tests that may be the project's assertions.
        let called = o.tests.iter().flat_map(|t| &t.assertions);
        let called = called.chain(o.macro_calls.iter().flat_map(|c| &c.assertions));
        let names: Vec<String> = o
            .macro_calls
            .iter()
            .map(|c| c.macro_name.clone())
            .chain(called.filter(|a| !a.certain).map(|a| a.name.clone()))
            .collect();
        if !names.is_empty() {
            from.push(*path);
            wanted.extend(names);
        }
    }
    wanted.retain(|w| {
        !kinds.tests.contains(w) && !kinds.asserts.contains(w) && !macros::STD.contains(&w.as_str())
    });
    (kinds, wanted, from)
}

/// One test on one side, its assertions counted.
#[derive(Debug)]
struct Test {
    name: String,
    file: usize,
    line: u32,
    skipped_at: Option<u32>,
    skip_conditional: bool,
    body: u64,
    lines: Vec<u64>,
    assertions: u32,
    operands: u32,
    /// Assertions and operands by kind, for the message.
    by_kind: BTreeMap<String, (u32, u32)>,
    /// The text hash of each assertion counted.
    texts: Vec<u64>,
}

impl Test {
    /// `own` is the macro that declares the test, if one does: when it
    /// asserts too, each call is one assertion.
    fn new(
        file: usize,
        t: &TestFn,
        o: &Outline,
        kinds: &Kinds,
        rust: bool,
        own: Option<&str>,
    ) -> Self {
        let mut test = Test {
            name: t.name.clone(),
            file,
            line: t.line,
            skipped_at: t.skipped_at,
            skip_conditional: t.skip_conditional,
            body: t.body,
            lines: t.lines.clone(),
            assertions: 0,
            operands: 0,
            by_kind: BTreeMap::new(),
            texts: Vec::new(),
        };
        for a in &t.assertions {
            let helper = a.name.strip_suffix("()");
            // A helper of this file is counted by what it asserts, below.
            if !(a.certain || kinds.asserts.contains(&a.name))
                || helper.is_some_and(|h| o.helpers.contains_key(h))
            {
                continue;
            }
            let kind = match a.name.as_str() {
                "should_panic" if rust => "#[should_panic]".to_string(),
                n if rust && helper.is_none() => format!("{n}!"),
                n => n.to_string(),
            };
            test.count(kind, a);
        }
        for call in &t.calls {
            for a in o.helpers.get(call).into_iter().flatten() {
                test.count(format!("{call}()"), a);
            }
        }
        if let Some(m) = own.filter(|m| kinds.asserts.contains(*m)) {
            test.count(
                format!("{m}!"),
                &Assertion {
                    name: m.to_string(),
                    operands: 1,
                    certain: false,
                    text: t.body,
                },
            );
        }
        test
    }

    fn count(&mut self, kind: String, a: &Assertion) {
        self.assertions += 1;
        self.operands += a.operands;
        self.texts.push(a.text);
        let e = self.by_kind.entry(kind).or_default();
        e.0 += 1;
        e.1 += a.operands;
    }

    /// Skipped wherever it runs: its assertions assert nothing.
    fn never_runs(&self) -> bool {
        self.skipped_at.is_some() && !self.skip_conditional
    }

    /// `tests::parses` → `parses`, `TestX.test_y` → `test_y`.
    fn bare(&self) -> &str {
        let after = self.name.rsplit("::").next().unwrap_or(&self.name);
        after.rsplit('.').next().unwrap_or(after)
    }
}

/// The tests of one side of a file: its test functions, and the calls
/// of macros that declare tests (the call's arguments are the body).
fn side(file: usize, o: &Outline, kinds: &Kinds, rust: bool) -> Vec<Test> {
    let mut out: Vec<Test> = o
        .tests
        .iter()
        .map(|t| Test::new(file, t, o, kinds, rust, None))
        .collect();
    for c in &o.macro_calls {
        if !kinds.tests.contains(&c.macro_name) {
            continue;
        }
        let t = TestFn {
            name: c.name.clone(),
            line: c.line,
            skipped_at: None,
            skip_conditional: false,
            body: c.body,
            assertions: c.assertions.clone(),
            calls: c.calls.clone(),
            lines: c.lines.clone(),
        };
        out.push(Test::new(file, &t, o, kinds, rust, Some(&c.macro_name)));
    }
    out
}

/// How a head test was found to be a base test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Via {
    /// Same file, same name.
    Name,
    /// Another file, same name: moved.
    Moved,
    /// Same body, or in its file the same last name (`ParentListTests.
    /// test_x` → `AllParentsTests.test_x`): renamed.
    Renamed,
    /// Another name, most of its lines the same (or its assertions and
    /// some of its lines), in its file or where its file's tests went:
    /// rewritten.
    Rewritten,
}

/// How much of two bodies' lines are the same, from 0 to 1 (the Dice
/// coefficient of the two multisets).
fn similarity(a: &[u64], b: &[u64]) -> f64 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let mut left: HashMap<u64, u32> = HashMap::new();
    for l in a {
        *left.entry(*l).or_default() += 1;
    }
    let mut common = 0;
    for l in b {
        if let Some(n) = left.get_mut(l).filter(|n| **n > 0) {
            *n -= 1;
            common += 1;
        }
    }
    2.0 * common as f64 / (a.len() + b.len()) as f64
}

/// Half the lines the same: a test renamed as it was rewritten (rand
/// 0.10's `value_stability_choose_multiple`, now `_sample` after the
/// method it tests).
const REWRITTEN: f64 = 0.5;

/// How many (old, new) pairs of a file's unmatched tests are compared
/// line by line, and how many new tests a weakened one is compared with:
/// a file of thousands of renamed tests must not take minutes. Past it,
/// a renamed and rewritten test is reported as deleted.
const MAX_COMPARED: usize = 100_000;
const MAX_SPLIT_INTO: usize = 256;

/// A test rewritten as it moved to another file, keeping every assertion
/// it made word for word, needs fewer of its lines kept (in its own file
/// a new test repeating a common assertion is not enough): ripgrep 15 moved
/// `hyperlink_aliases.rs`'s `is_sorted` to `hyperlink/mod.rs` as
/// `aliases_are_sorted`, 5 of its 11 lines kept around the same `assert!`.
const KEPT_ASSERTIONS: f64 = 0.3;

/// Whether `h` makes every assertion `b` made, in the same words.
fn kept_assertions(b: &Test, h: &Test) -> bool {
    if b.texts.is_empty() {
        return false;
    }
    let mut left = multiset(&h.texts);
    b.texts.iter().all(|x| match left.get_mut(x) {
        Some(n) if *n > 0 => {
            *n -= 1;
            true
        }
        _ => false,
    })
}

/// Where a base file's unmatched tests may have gone: the file itself,
/// the files its other tests moved to under their names (a file moved
/// where git saw no rename, its tests with it), and, for a file with no
/// head side, any file.
struct Near {
    moved_to: HashMap<usize, HashSet<usize>>,
    gone: HashSet<usize>,
}

impl Near {
    fn new(
        base: &[Test],
        head: &[Test],
        pairs: &[Option<(usize, Via)>],
        gone: &HashSet<usize>,
    ) -> Near {
        let mut moved_to: HashMap<usize, HashSet<usize>> = HashMap::new();
        for (b, p) in pairs.iter().enumerate() {
            if let Some((h, Via::Moved)) = *p {
                moved_to
                    .entry(base[b].file)
                    .or_default()
                    .insert(head[h].file);
            }
        }
        Near {
            moved_to,
            gone: gone.clone(),
        }
    }

    fn anywhere(&self, from: usize) -> bool {
        self.gone.contains(&from)
    }

    fn holds(&self, from: usize, to: usize) -> bool {
        from == to
            || self.anywhere(from)
            || self.moved_to.get(&from).is_some_and(|m| m.contains(&to))
    }
}

/// Base tests paired with head tests: `pairs[b] = Some((h, via))`.
/// `gone`: the files without a head side (deleted, or moved where git
/// did not see it).
fn pair(base: &[Test], head: &[Test], gone: &HashSet<usize>) -> Vec<Option<(usize, Via)>> {
    let mut pairs: Vec<Option<(usize, Via)>> = vec![None; base.len()];
    let mut taken = vec![false; head.len()];
    // Same file and name, in order (a name defined twice in a file is
    // two tests, the later one shadowing in Python).
    let mut by_file_name: HashMap<(usize, &str), Vec<usize>> = HashMap::new();
    for (h, t) in head.iter().enumerate().rev() {
        by_file_name.entry((t.file, &t.name)).or_default().push(h);
    }
    for (b, t) in base.iter().enumerate() {
        if let Some(h) = by_file_name
            .get_mut(&(t.file, t.name.as_str()))
            .and_then(|v| v.pop())
        {
            pairs[b] = Some((h, Via::Name));
            taken[h] = true;
        }
    }
    // Then by name anywhere, by the same body anywhere, and in a file by
    // the last part of the name when only one test on each side has it
    // (a class renamed). Across files a last name alone is too common
    // (`test_string`).
    let keys: [&dyn Fn(&Test) -> String; 3] =
        [&|t| t.name.clone(), &|t| format!("{:x}", t.body), &|t| {
            format!("{} {}", t.file, t.bare())
        }];
    let vias = [Via::Moved, Via::Renamed, Via::Renamed];
    for (pass, key) in keys.iter().enumerate() {
        let mut free: HashMap<String, Vec<usize>> = HashMap::new();
        for (h, t) in head.iter().enumerate().rev() {
            if !taken[h] {
                free.entry(key(t)).or_default().push(h);
            }
        }
        if pass == 2 {
            let mut wanting: HashMap<String, usize> = HashMap::new();
            for (b, t) in base.iter().enumerate() {
                if pairs[b].is_none() {
                    *wanting.entry(key(t)).or_default() += 1;
                }
            }
            free.retain(|k, v| v.len() == 1 && wanting.get(k) == Some(&1));
        }
        for (b, t) in base.iter().enumerate() {
            if pairs[b].is_some() {
                continue;
            }
            if let Some(h) = free.get_mut(&key(t)).and_then(|v| v.pop()) {
                pairs[b] = Some((h, vias[pass]));
                taken[h] = true;
            }
        }
    }
    // Last, the most alike of the rest, best first, within a file or
    // where its tests went (`near`).
    let near = Near::new(base, head, &pairs, gone);
    let mut unmatched: HashMap<usize, (usize, usize)> = HashMap::new();
    for (t, _) in base.iter().zip(&pairs).filter(|(_, p)| p.is_none()) {
        unmatched.entry(t.file).or_default().0 += 1;
    }
    for (t, _) in head.iter().zip(&taken).filter(|(_, taken)| !**taken) {
        unmatched.entry(t.file).or_default().1 += 1;
    }
    let free_head: usize = unmatched.values().map(|(_, y)| y).sum();
    let mut alike: Vec<(f64, usize, usize)> = Vec::new();
    for (b, bt) in base.iter().enumerate() {
        let within = unmatched.get(&bt.file).is_some_and(|(x, y)| {
            let y = if near.anywhere(bt.file) {
                free_head
            } else {
                *y
            };
            x * y <= MAX_COMPARED
        });
        if pairs[b].is_some() || !within {
            continue;
        }
        for (h, ht) in head.iter().enumerate() {
            if taken[h] || !near.holds(bt.file, ht.file) {
                continue;
            }
            let s = similarity(&bt.lines, &ht.lines);
            let moved = ht.file != bt.file;
            if s >= REWRITTEN || (moved && s >= KEPT_ASSERTIONS && kept_assertions(bt, ht)) {
                alike.push((s, b, h));
            }
        }
    }
    alike.sort_by(|x, y| y.0.total_cmp(&x.0).then(x.1.cmp(&y.1)).then(x.2.cmp(&y.2)));
    for (_, b, h) in alike {
        if pairs[b].is_none() && !taken[h] {
            pairs[b] = Some((h, Via::Rewritten));
            taken[h] = true;
        }
    }
    pairs
}

/// Compare the tests of the changed files.
/// `kinds` are the project's macros as either side defines them: a
/// macro known on one side only (its definition out of `macros::find`'s
/// reach there) must not make its tests look deleted or new.
pub fn check(files: &[File], kinds: &Kinds) -> Outcome {
    let mut outcome = Outcome::default();
    let mut base = Vec::new();
    let mut head = Vec::new();
    let mut unknown: HashSet<usize> = HashSet::new();
    for (i, f) in files.iter().enumerate() {
        let rust = f.path.ends_with(".rs");
        let newly_broken =
            f.head.is_some_and(|h| h.syntax_error) && f.base.is_some_and(|b| !b.syntax_error);
        if f.head_unread || newly_broken {
            unknown.insert(i);
            if f.base
                .is_some_and(|b| !b.tests.is_empty() || !b.macro_calls.is_empty())
            {
                outcome.notices.push(format!(
                    "Checks: {} {} at the head commit, so its tests were not compared",
                    f.path,
                    if newly_broken {
                        "has a syntax error"
                    } else {
                        "could not be read"
                    }
                ));
            }
        }
        if let Some(o) = f.base {
            base.extend(side(i, o, kinds, rust));
        }
        if let Some(o) = f.head {
            head.extend(side(i, o, kinds, rust));
        }
    }
    let gone: HashSet<usize> = files
        .iter()
        .enumerate()
        .filter(|(_, f)| f.head.is_none() && !f.head_unread)
        .map(|(i, _)| i)
        .collect();
    let pairs = pair(&base, &head, &gone);
    let mut paired_head = vec![false; head.len()];
    for (h, _) in pairs.iter().flatten() {
        paired_head[*h] = true;
    }
    let new: Vec<&Test> = head
        .iter()
        .zip(&paired_head)
        .filter(|(t, paired)| !**paired && !t.never_runs())
        .map(|(t, _)| t)
        .collect();
    for (b, p) in pairs.iter().enumerate() {
        let Some((h, via)) = *p else { continue };
        if unknown.contains(&base[b].file) || unknown.contains(&head[h].file) {
            continue;
        }
        if let Some(found) = weaker(&base[b], &head[h], via, files, &new) {
            outcome.found.push(found);
        }
    }
    deleted(&base, &head, &pairs, files, &unknown, &mut outcome.found);
    skipped(
        &base,
        &head,
        &pairs,
        &paired_head,
        files,
        &mut outcome.found,
    );
    outcome
}

/// A test whose assertions compare fewer operands than before: one
/// removed (each compares at least one), or one replaced by a weaker one
/// (`assert x == 3` → `assert x`). Assertions merged into one (`assert
/// a; assert b` → `assert a and b`) compare as much. A test that did not
/// run before (`#[ignore]`, `@pytest.mark.skip`) lost nothing.
fn weaker(b: &Test, h: &Test, via: Via, files: &[File], new: &[&Test]) -> Option<Found> {
    if h.operands >= b.operands || b.never_runs() {
        return None;
    }
    if split(b, h, new) {
        return None;
    }
    let mut lost = Vec::new();
    for (kind, &(count, operands)) in &b.by_kind {
        let (now, now_operands) = h.by_kind.get(kind).copied().unwrap_or((0, 0));
        if now < count {
            lost.push(format!("{kind} {count} → {now}"));
        } else if now_operands < operands {
            lost.push(format!("{kind} {operands} → {now_operands} operands"));
        }
    }
    let name = match via {
        Via::Name => h.name.clone(),
        Via::Moved => format!("{} (moved from {})", h.name, files[b.file].old_path),
        Via::Renamed | Via::Rewritten => {
            let how = if via == Via::Renamed {
                "renamed"
            } else {
                "rewritten"
            };
            let place = if b.file == h.file {
                String::new()
            } else {
                format!(" of {}", files[b.file].old_path)
            };
            format!("{} ({how} from {}{place})", h.name, b.name)
        }
    };
    let what = if h.assertions < b.assertions {
        format!(
            "makes fewer assertions: {} now, {} before this change",
            h.assertions, b.assertions
        )
    } else {
        format!(
            "asserts less: its {} assertions compare {} operands now, {} before this change",
            h.assertions, h.operands, b.operands
        )
    };
    let detail = if lost.is_empty() {
        String::new()
    } else {
        format!(" ({})", lost.join(", "))
    };
    Some(Found {
        file: files[h.file].path.to_string(),
        line: Some(h.line),
        message: format!("Test {name} {what}{detail}."),
        minor: false,
    })
}

/// Whether the assertions a test lost went, with the lines around them,
/// to new tests of its file: a test split in two (rand 0.10 moved the
/// error cases of `test_weightedindex` to `weighted_index_new_errors`).
/// A new test that merely repeats a common assertion is not made of the
/// old test's lines, and does not count.
fn split(b: &Test, h: &Test, new: &[&Test]) -> bool {
    let mut removed = multiset(&b.lines);
    for l in &h.lines {
        if let Some(n) = removed.get_mut(l) {
            *n -= 1;
        }
    }
    let mut gone = multiset(&b.texts);
    for x in &h.texts {
        if let Some(n) = gone.get_mut(x) {
            *n -= 1;
        }
    }
    gone.retain(|_, n| *n > 0);
    if gone.is_empty() {
        return false;
    }
    for n in new
        .iter()
        .filter(|n| n.file == b.file || n.file == h.file)
        .take(MAX_SPLIT_INTO)
    {
        let mut left = removed.clone();
        let from_old = n
            .lines
            .iter()
            .filter(|l| match left.get_mut(*l) {
                Some(c) if *c > 0 => {
                    *c -= 1;
                    true
                }
                _ => false,
            })
            .count();
        if n.lines.is_empty() || (from_old as f64) < REWRITTEN * n.lines.len() as f64 {
            continue;
        }
        for x in &n.texts {
            if let Some(c) = gone.get_mut(x) {
                *c -= 1;
            }
        }
    }
    gone.values().all(|n| *n <= 0)
}

fn multiset(items: &[u64]) -> HashMap<u64, i64> {
    let mut out = HashMap::new();
    for x in items {
        *out.entry(*x).or_default() += 1;
    }
    out
}

/// The base tests with no head test, by file.
fn deleted(
    base: &[Test],
    head: &[Test],
    pairs: &[Option<(usize, Via)>],
    files: &[File],
    unknown: &HashSet<usize>,
    out: &mut Vec<Found>,
) {
    let mut gone: BTreeMap<usize, Vec<&Test>> = BTreeMap::new();
    for (b, t) in base.iter().enumerate() {
        if pairs[b].is_none() && !unknown.contains(&t.file) {
            gone.entry(t.file).or_default().push(t);
        }
    }
    for (i, tests) in gone {
        let f = &files[i];
        let before = base.iter().filter(|t| t.file == i).count();
        let after = head.iter().filter(|t| t.file == i).count();
        let tests_word = if after == 1 { "test" } else { "tests" };
        let holds = format!("the file holds {after} {tests_word}, {before} before");
        let message = match tests.as_slice() {
            [t] => format!(
                "Test {} ({}:{} before this change) is deleted; {holds}.",
                t.name, f.old_path, t.line
            ),
            _ => {
                let mut names: Vec<String> = tests
                    .iter()
                    .take(NAMED)
                    .map(|t| format!("{} (line {})", t.name, t.line))
                    .collect();
                if tests.len() > NAMED {
                    names.push(format!("and {} more", tests.len() - NAMED));
                }
                format!(
                    "{} tests of {} are deleted: {}; {holds}.",
                    tests.len(),
                    f.old_path,
                    names.join(", ")
                )
            }
        };
        out.push(Found {
            file: f.path.to_string(),
            line: None,
            message,
            minor: false,
        });
    }
}

/// Tests skipped by a line this diff added: newly, if they ran before;
/// from the start, if they are new (minor). A skip under a condition
/// (`skipif`) on a new test is a platform's, not a test left unrun.
fn skipped(
    base: &[Test],
    head: &[Test],
    pairs: &[Option<(usize, Via)>],
    paired_head: &[bool],
    files: &[File],
    out: &mut Vec<Found>,
) {
    let mut newly: BTreeMap<(usize, u32), Vec<&str>> = BTreeMap::new();
    for (b, p) in pairs.iter().enumerate() {
        let Some((h, _)) = *p else { continue };
        let (bt, ht) = (&base[b], &head[h]);
        if let (None, Some(at)) = (bt.skipped_at, ht.skipped_at) {
            if files[ht.file].added.contains(&at) {
                newly.entry((ht.file, at)).or_default().push(&ht.name);
            }
        }
    }
    let mut added: BTreeMap<(usize, u32), Vec<&str>> = BTreeMap::new();
    for (h, t) in head.iter().enumerate() {
        let Some(at) = t.skipped_at else { continue };
        if !paired_head[h] && !t.skip_conditional && files[t.file].added.contains(&t.line) {
            added.entry((t.file, at)).or_default().push(&t.name);
        }
    }
    for (group, minor) in [(newly, false), (added, true)] {
        for ((file, line), names) in group {
            let what = match (names.as_slice(), minor) {
                ([one], false) => {
                    format!("Test {one} is newly skipped: it ran before this change.")
                }
                (_, false) => format!(
                    "{} tests are newly skipped ({}): they ran before this change.",
                    names.len(),
                    listed(&names)
                ),
                ([one], true) => format!(
                    "Test {one} is added already skipped: it does not run, so it tests nothing."
                ),
                (_, true) => format!(
                    "{} tests are added already skipped ({}): they do not run, so they test nothing.",
                    names.len(),
                    listed(&names)
                ),
            };
            out.push(Found {
                file: files[file].path.to_string(),
                line: Some(line),
                message: what,
                minor,
            });
        }
    }
}

fn listed(names: &[&str]) -> String {
    let mut out: Vec<String> = names.iter().take(3).map(|n| n.to_string()).collect();
    if names.len() > 3 {
        out.push(format!("and {} more", names.len() - 3));
    }
    out.join(", ")
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::checks::outline::Lang;

    /// Both sides of each file (None: no such side), checked; added lines
    /// are the head lines whose text the base side does not have.
    fn run(files: &[(&str, Option<&str>, Option<&str>)]) -> Vec<Found> {
        let outline = |path: &str, text: &str| {
            outline::outline(Lang::of_path(path).unwrap(), text, true, false).unwrap()
        };
        let sides: Vec<(Option<Outline>, Option<Outline>)> = files
            .iter()
            .map(|(p, b, h)| (b.map(|t| outline(p, t)), h.map(|t| outline(p, t))))
            .collect();
        let compared: Vec<File> = files
            .iter()
            .zip(&sides)
            .map(|((path, b, h), (bo, ho))| {
                let mut old: HashMap<&str, u32> = HashMap::new();
                for l in b.unwrap_or("").lines() {
                    *old.entry(l).or_default() += 1;
                }
                let added = h
                    .unwrap_or("")
                    .lines()
                    .enumerate()
                    .filter(|(_, l)| match old.get_mut(l) {
                        Some(n) if *n > 0 => {
                            *n -= 1;
                            false
                        }
                        _ => true,
                    })
                    .map(|(i, _)| i as u32 + 1)
                    .collect();
                File {
                    path,
                    old_path: path,
                    base: bo.as_ref(),
                    head: ho.as_ref(),
                    head_unread: false,
                    added,
                }
            })
            .collect();
        let all: Vec<(&str, &Outline)> = files
            .iter()
            .zip(&sides)
            .flat_map(|((p, _, _), (b, h))| {
                [b.as_ref(), h.as_ref()]
                    .into_iter()
                    .flatten()
                    .map(move |o| (*p, o))
            })
            .collect();
        let kinds = kinds(&all, &HashMap::<String, String>::new());
        check(&compared, &kinds).found
    }

    fn messages(found: &[Found]) -> Vec<String> {
        found
            .iter()
            .map(|f| match f.line {
                Some(l) => format!("{}:{l} {}", f.file, f.message),
                None => format!("{} {}", f.file, f.message),
            })
            .collect()
    }

    const PY: &str = "class TestA:\n    def test_one(self):\n        assert f(1) == 10\n\n    def test_two(self):\n        assert f(2) == 20\n        assert g(2)\n\n\nclass TestB:\n    def test_one(self):\n        assert f(3) == 30\n";

    #[test]
    fn a_test_deleted_from_a_file_that_gains_tests_is_found_by_its_qualified_name() {
        let head = PY.replace("class TestB:\n    def test_one(self):\n        assert f(3) == 30\n", "class TestB:\n    def test_new(self):\n        assert h(1) == 1\n\n    def test_newer(self):\n        assert h(2) == 2\n");
        let found = messages(&run(&[("tests/test_f.py", Some(PY), Some(&head))]));
        assert_eq!(
            found,
            [
                "tests/test_f.py Test TestB.test_one (tests/test_f.py:11 before this change) is deleted; the file holds 4 tests, 3 before."
            ]
        );
    }

    #[test]
    fn moved_renamed_and_rewritten_tests_are_the_same_tests() {
        // Moved to another file under its name; renamed with its body.
        let rest = "class TestA:\n    def test_one(self):\n        assert f(1) == 10\n";
        let moved = "class TestA:\n    def test_two(self):\n        assert f(2) == 20\n        assert g(2)\n\n\nclass TestB:\n    def test_first(self):\n        assert f(3) == 30\n";
        let found = run(&[
            ("tests/test_f.py", Some(PY), Some(rest)),
            ("tests/test_g.py", None, Some(moved)),
        ]);
        assert!(found.is_empty(), "{found:?}");
        // Renamed as it was rewritten: most of its lines kept.
        let base = "def test_choose_multiple():\n    rng = seeded(412)\n    buf = [0] * 8\n    assert choose_multiple(rng, buf) == 3\n    assert buf[0:3] == [1, 2, 3]\n    assert rng.state() == 412\n";
        let head = "def test_sample():\n    rng = seeded(412)\n    buf = [0] * 8\n    assert sample(rng, buf) == 3\n    assert buf[0:3] == [1, 2, 3]\n    assert rng.state() == 412\n";
        let found = run(&[("tests/test_s.py", Some(base), Some(head))]);
        assert!(found.is_empty(), "{found:?}");
        // Rewritten past recognition: deleted.
        let head = "def test_sample():\n    assert sample(seeded(1), []) == 0\n";
        let found = messages(&run(&[("tests/test_s.py", Some(base), Some(head))]));
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].contains("Test test_choose_multiple"), "{found:?}");
    }

    #[test]
    fn tests_rewritten_where_their_file_went_are_the_same_tests() {
        // The file deleted here, its tests added there (no rename git
        // sees): one under its name with an assertion less, one renamed
        // and rewritten around the same assertion.
        let base = "class TestA:\n    def test_one(self):\n        assert f(1) == 10\n        assert f(0) == 0\n\n    def test_sorted(self):\n        prev = ALIASES[0]\n        for name in ALIASES[1:]:\n            assert name > prev, f\"{prev} before {name}\"\n            prev = name\n";
        let head = "class TestA:\n    def test_one(self):\n        assert f(1) == 10\n\n    def test_aliases_sorted(self):\n        aliases = hyperlink_aliases()\n        prev = aliases[0].name\n        for alias in aliases[1:]:\n            name = alias.name\n            assert name > prev, f\"{prev} before {name}\"\n            prev = name\n";
        let found = messages(&run(&[
            ("tests/test_aliases.py", Some(base), None),
            ("tests/hyperlink/test_mod.py", None, Some(head)),
        ]));
        assert_eq!(
            found,
            [
                "tests/hyperlink/test_mod.py:2 Test TestA.test_one (moved from tests/test_aliases.py) makes fewer assertions: 1 now, 2 before this change (assert 2 → 1)."
            ]
        );
        // In its own file, the same assertion in a new test is not enough.
        let head = head.replace("test_one", "test_two");
        let found = messages(&run(&[("tests/test_aliases.py", Some(base), Some(&head))]));
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(
            found[1].contains(
                "Test TestA.test_sorted (tests/test_aliases.py:6 before this change) is deleted"
            ),
            "{found:?}"
        );
    }

    #[test]
    fn fewer_assertions_or_fewer_operands_weaken_a_test() {
        // `assert x == 3` → `assert x`.
        let head = PY.replace("assert f(2) == 20", "assert f(2)");
        let found = messages(&run(&[("tests/test_f.py", Some(PY), Some(&head))]));
        assert_eq!(
            found,
            [
                "tests/test_f.py:5 Test TestA.test_two asserts less: its 2 assertions compare 2 operands now, 3 before this change (assert 3 → 2 operands)."
            ]
        );
        // An assertion removed.
        let head = PY.replace("        assert g(2)\n", "");
        let found = messages(&run(&[("tests/test_f.py", Some(PY), Some(&head))]));
        assert_eq!(
            found,
            [
                "tests/test_f.py:5 Test TestA.test_two makes fewer assertions: 1 now, 2 before this change (assert 2 → 1)."
            ]
        );
        // Merged into one that compares as much; or more assertions.
        let head = PY.replace(
            "assert f(2) == 20\n        assert g(2)",
            "assert f(2) == 20 and g(2)",
        );
        assert!(run(&[("tests/test_f.py", Some(PY), Some(&head))]).is_empty());
        let head = PY.replace(
            "assert g(2)",
            "assert g(2)\n        self.assertEqual(g(3), 3)",
        );
        assert!(run(&[("tests/test_f.py", Some(PY), Some(&head))]).is_empty());
    }

    #[test]
    fn assertions_moved_to_a_new_test_made_of_their_lines_are_not_lost() {
        let base = "def test_all():\n    assert f(1) == 1\n    assert f(2) == 2\n    err = g(-1)\n    assert err.kind == 'negative'\n    assert err.value == -1\n";
        let split = "def test_all():\n    assert f(1) == 1\n    assert f(2) == 2\n\n\ndef test_errors():\n    err = g(-1)\n    assert err.kind == 'negative'\n    assert err.value == -1\n";
        assert!(run(&[("tests/test_g.py", Some(base), Some(split))]).is_empty());
        // A new test that only repeats one of them does not excuse its loss.
        let other = "def test_all():\n    assert f(1) == 1\n    assert f(2) == 2\n    err = g(-1)\n    assert err.kind == 'negative'\n\n\ndef test_other():\n    err = h(-2)\n    print(err)\n    assert err.value == -1\n";
        let found = messages(&run(&[("tests/test_g.py", Some(base), Some(other))]));
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].contains("Test test_all makes fewer assertions: 3 now, 4 before"),
            "{found:?}"
        );
    }

    #[test]
    fn assertions_moved_into_a_helper_of_the_file_still_count() {
        // tokio 1.54's `uds_cred`: the checks became `assert_peer_cred`.
        let base = "#[tokio::test]\nasync fn pair() {\n    let (a, b) = pair();\n    assert_eq!(a.uid(), uid());\n    assert_eq!(b.uid(), uid());\n    assert_eq!(a.gid(), gid());\n}\n";
        let head = "#[tokio::test]\nasync fn pair() {\n    let (a, b) = pair();\n    peer_cred(&a, &b);\n}\n\nfn peer_cred(a: &S, b: &S) {\n    assert_eq!(a.uid(), uid());\n    assert_eq!(b.uid(), uid());\n    assert_eq!(a.gid(), gid());\n}\n";
        assert!(run(&[("tests/cred.rs", Some(base), Some(head))]).is_empty());
        // Nested classes name their tests by the whole path.
        let base = "class TestOuter:\n    class TestInner:\n        def test_x(self):\n            self.check(1)\n\n        def check(self, v):\n            assert v == 1\n";
        let head = base.replace("            self.check(1)\n", "            pass\n");
        let found = messages(&run(&[("tests/test_n.py", Some(base), Some(&head))]));
        assert_eq!(
            found,
            [
                "tests/test_n.py:3 Test TestOuter.TestInner.test_x makes fewer assertions: 0 now, 1 before this change (check() 1 → 0)."
            ]
        );
    }

    #[test]
    fn a_last_name_alone_pairs_tests_in_one_file_only() {
        // Django 5.1: `FunctionTests.test_string` went with its file; a
        // `VerboseNameRawTests.test_string` elsewhere is another test.
        let gone = "class FunctionTests(SimpleTestCase):\n    def test_string(self):\n        assert length_is(\"a\", 1) is True\n";
        let other = "class VerboseNameRawTests(SimpleTestCase):\n    def test_string(self):\n        assert verbose(\"a\") == \"a\"\n";
        let found = messages(&run(&[
            ("tests/test_length_is.py", Some(gone), None),
            ("tests/test_meta.py", None, Some(other)),
        ]));
        assert_eq!(
            found,
            [
                "tests/test_length_is.py Test FunctionTests.test_string (tests/test_length_is.py:2 before this change) is deleted; the file holds 0 tests, 1 before."
            ]
        );
        // In one file, a class renamed keeps its tests.
        let renamed = gone.replace("class FunctionTests", "class LengthIsTests");
        assert!(run(&[("tests/test_length_is.py", Some(gone), Some(&renamed))]).is_empty());
    }

    #[test]
    fn a_function_defined_inside_a_test_is_counted_once_whatever_its_name() {
        // Django's `test_trunc_func` defines `test_date_kind` inside and
        // calls it; another test of the file defines one of the same name.
        let base = "def test_trunc():\n    def check_kind(k):\n        assert trunc(k) == k\n\n    check_kind(1)\n    check_kind(2)\n\n\ndef test_round():\n    def other(k):\n        assert round(k) == k\n\n    other(1)\n";
        let head = base.replace("other", "check_kind");
        assert!(run(&[("tests/test_t.py", Some(base), Some(&head))]).is_empty());
        assert!(run(&[("tests/test_t.py", Some(&head), Some(base))]).is_empty());
        let renamed = base.replace("check_kind", "assertKind");
        assert!(run(&[("tests/test_t.py", Some(&renamed), Some(&head))]).is_empty());
    }

    #[test]
    fn a_test_that_did_not_run_before_loses_nothing() {
        let base = "#[test]\n#[ignore]\nfn io() {\n    assert_eq!(kind(), Other);\n    assert_eq!(text(), \"shutdown\");\n}\n";
        let head = "#[test]\nfn io() {\n    assert!(is_shutdown());\n}\n";
        assert!(run(&[("tests/io.rs", Some(base), Some(head))]).is_empty());
    }

    #[test]
    fn rust_should_panic_removed_and_macro_declared_tests_deleted() {
        let macros = "macro_rules! rgtest {\n    ($name:ident, $fun:expr) => {\n        #[test]\n        fn $name() { $fun() }\n    };\n}\n";
        let base = format!(
            "{macros}\nrgtest!(one, || {{ assert_eq!(f(1), 1); }});\n\nrgtest!(two, || {{ assert_eq!(f(2), 2); }});\n\nproptest! {{\n    #[test]\n    fn prop(x in 0..9) {{ assert!(x < 9); }}\n}}\n\n#[test]\n#[should_panic(expected = \"negative\")]\nfn panics() {{\n    f(-1);\n}}\n"
        );
        let head = base
            .replace("rgtest!(two, || { assert_eq!(f(2), 2); });\n", "")
            .replace(
                "    #[test]\n    fn prop(x in 0..9) { assert!(x < 9); }\n",
                "",
            )
            .replace("#[should_panic(expected = \"negative\")]\n", "");
        let found = messages(&run(&[("tests/t.rs", Some(&base), Some(&head))]));
        assert_eq!(
            found,
            [
                "tests/t.rs:15 Test panics makes fewer assertions: 0 now, 1 before this change (#[should_panic] 1 → 0).",
                "tests/t.rs 2 tests of tests/t.rs are deleted: prop (line 14), two (line 10); the file holds 2 tests, 4 before."
            ]
        );
    }

    #[test]
    fn skips_newly_added_or_added_with_the_test() {
        let head = PY.replace(
            "    def test_two",
            "    @pytest.mark.skip(reason=\"flaky\")\n    def test_two",
        );
        let found = run(&[("tests/test_f.py", Some(PY), Some(&head))]);
        assert_eq!(
            messages(&found),
            ["tests/test_f.py:5 Test TestA.test_two is newly skipped: it ran before this change."]
        );
        assert!(!found[0].minor);
        // Added already skipped: minor. Skipped on one platform: not.
        let head = format!(
            "{PY}\n\n@pytest.mark.xfail(reason=\"todo\")\ndef test_new():\n    assert f(4) == 40\n\n\n@pytest.mark.skipif(sys.platform == \"win32\", reason=\"posix\")\ndef test_posix():\n    assert f(5) == 50\n"
        );
        let found = run(&[("tests/test_f.py", Some(PY), Some(&head))]);
        assert_eq!(
            messages(&found),
            [
                "tests/test_f.py:15 Test test_new is added already skipped: it does not run, so it tests nothing."
            ]
        );
        assert!(found[0].minor);
    }

    #[test]
    fn thousands_of_renamed_tests_are_compared_in_bounded_time() {
        let side = |prefix: &str| -> String {
            (0..2000)
                .map(|i| format!("def test_{prefix}{i}():\n    x = make({i})\n    assert check_{prefix}(x) == {i}\n\n"))
                .collect()
        };
        let (base, head) = (side("old"), side("new"));
        let started = std::time::Instant::now();
        let found = run(&[("tests/test_many.py", Some(&base), Some(&head))]);
        assert!(started.elapsed().as_secs() < 20, "{:?}", started.elapsed());
        assert_eq!(found.len(), 1);
        assert!(
            found[0]
                .message
                .starts_with("2000 tests of tests/test_many.py are deleted: test_old0 (line 1),"),
            "{}",
            found[0].message
        );
        assert!(
            found[0]
                .message
                .ends_with("and 1990 more; the file holds 2000 tests, 2000 before."),
            "{}",
            found[0].message
        );
    }

    #[test]
    fn a_file_whose_head_is_unknown_deletes_nothing() {
        let o = outline::outline(Lang::Python, PY, true, false).unwrap();
        let broken = outline::outline(
            Lang::Python,
            "class TestA:\n    def test_one(self:\n",
            true,
            false,
        )
        .unwrap();
        for (head, unread) in [(None, true), (Some(&broken), false)] {
            let files = [File {
                path: "tests/test_f.py",
                old_path: "tests/test_f.py",
                base: Some(&o),
                head,
                head_unread: unread,
                added: HashSet::new(),
            }];
            let outcome = check(&files, &Kinds::default());
            assert!(outcome.found.is_empty(), "{:?}", outcome.found);
            assert_eq!(outcome.notices.len(), 1, "{:?}", outcome.notices);
        }
    }
}
