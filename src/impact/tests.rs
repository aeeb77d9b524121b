//! Tests of the blast radius end to end: files in memory, changed symbols,
//! their dependents and the limits that cut the work.

use super::crates::read_manifest;
use super::*;

struct Mem(HashMap<String, Vec<u8>>);

impl Blobs for Mem {
    fn read(&self, blob: &str) -> Result<Vec<u8>, String> {
        self.0
            .get(blob)
            .cloned()
            .ok_or_else(|| format!("no blob {blob}"))
    }
}

const LIB_BASE: &str =
    "pub mod shelf;\n\npub fn helper(x: u32) -> u32 {\n    x + 1\n}\n\npub fn unused() {}\n";
const LIB_HEAD: &str = "pub mod shelf;\n\npub fn helper(x: u64) -> u64 {\n    x + 1\n}\n";
const SHELF: &str = "use crate::helper;\n\npub struct Shelf;\n\nimpl Shelf {\n    pub fn shelve(&self) -> u32 {\n        helper(1)\n    }\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() {\n        assert_eq!(super::Shelf.shelve(), 2);\n        crate::unused();\n    }\n}\n";

/// A diff changing one file from `base` to `head`, each given as
/// (text, blob id byte repeated to a full id).
fn one_file_diff(path: &str, base: (&str, &str), head: (&str, &str)) -> crate::git::Diff {
    let mut fd = changes::tests::diff(path, base.0, head.0);
    fd.old_blob = Some(base.1.repeat(20));
    fd.new_blob = Some(head.1.repeat(20));
    crate::git::Diff {
        base_commit: "base".into(),
        head_commit: "head".into(),
        files: vec![fd],
        sha256: String::new(),
    }
}

/// A two-file crate where `helper` changes signature and `unused`
/// (still called from a test) is removed.
fn scenario() -> (Vec<FileEntry>, crate::git::Diff, Mem) {
    let mut blobs = HashMap::new();
    let mut files = Vec::new();
    for (path, text, blob) in [
        ("Cargo.toml", "[package]\nname = \"demo\"\n", "c0"),
        ("src/lib.rs", LIB_HEAD, "b1"),
        ("src/shelf.rs", SHELF, "b2"),
    ] {
        let blob = blob.repeat(20);
        blobs.insert(blob.clone(), text.as_bytes().to_vec());
        files.push(FileEntry {
            path: path.to_string(),
            blob,
        });
    }
    blobs.insert("a1".repeat(20), LIB_BASE.as_bytes().to_vec());
    let diff = one_file_diff("src/lib.rs", (LIB_BASE, "a1"), (LIB_HEAD, "b1"));
    (files, diff, Mem(blobs))
}

#[test]
fn breaking_changes_rank_first_with_their_dependents() {
    let (files, diff, blobs) = scenario();
    let impact = analyze(&files, &diff, &blobs, CacheUse::Off).expect("analysis");
    let summary: Vec<(&str, Change, bool, Stability)> = impact
        .symbols
        .iter()
        .map(|s| (s.symbol.as_str(), s.change, s.breaking, s.stability))
        .collect();
    assert_eq!(
        summary,
        vec![
            ("helper", Change::SignatureChanged, true, Stability::Module),
            ("unused", Change::Removed, true, Stability::Module),
        ]
    );
    let helper = &impact.symbols[0];
    assert_eq!(helper.qualified, "demo::helper");
    assert_eq!(helper.dependents.symbols, 1);
    assert_eq!(
        (helper.dependents.production, helper.dependents.test),
        (1, 0)
    );
    assert_eq!(helper.radius, 2, "Shelf::add, then the test calling it");
    let unused = &impact.symbols[1];
    assert_eq!(
        (unused.dependents.production, unused.dependents.test),
        (0, 1)
    );
    let rows = impact.rows();
    assert_eq!(
        rows[0].top,
        vec!["src/shelf.rs:7".to_string()],
        "the call, not the use"
    );
    assert_eq!(rows[1].symbol, "unused (src/lib.rs:7)");
    let json = serde_json::to_value(&impact).expect("serializes");
    assert_eq!(json[0]["change"], "signature_changed");
    assert_eq!(json[1]["sites"][0]["line"], 16);
    assert_eq!(
        json[1]["sites"][0]["column"], 16,
        "`unused` in `crate::unused()`"
    );
    let helper_sites: Vec<(u32, u32)> = helper.sites.iter().map(|s| (s.line, s.column)).collect();
    assert_eq!(helper_sites, [(1, 12), (7, 9)], "the import, then the call");
}

#[test]
fn a_manifest_names_its_package_and_the_roots_it_places_off_convention() {
    let text = "[package]\nname = \"ripgrep\"\n\n[lib]\npath = \"src/lib.rs\"\n\n[[bin]]\nname = \"rg\"\npath = \"crates/core/main.rs\"\n\n[[bin]]\npath = \"./tools/gen.rs\"\n\n[[test]]\nname = \"integration\"\npath = \"tests/tests.rs\"\n";
    let blobs = Mem(HashMap::from([("m".to_string(), text.as_bytes().to_vec())]));
    let m = read_manifest(&blobs, "m", "rg")
        .expect("reads")
        .expect("a package");
    assert_eq!((m.dir.as_str(), m.name.as_str()), ("rg", "ripgrep"));
    assert_eq!(
        m.roots,
        [
            index::Root {
                path: "crates/core/main.rs".into(),
                kind: index::RootKind::Bin("rg".into())
            },
            index::Root {
                path: "tools/gen.rs".into(),
                kind: index::RootKind::Bin("gen".into())
            },
        ],
        "conventional places are left to the layout"
    );
    let workspace = Mem(HashMap::from([(
        "w".to_string(),
        b"[workspace]\nmembers = [\"a\"]\n".to_vec(),
    )]));
    assert!(read_manifest(&workspace, "w", "").expect("reads").is_none());
}

#[test]
fn top_dependents_show_a_use_rather_than_an_import_one_per_file() {
    let site = |file: &str, line: u32, form: Form, inside: bool| Site {
        file: file.into(),
        line,
        column: 1,
        form,
        confidence: Confidence::Exact,
        candidates: 1,
        dependent: "(module)".into(),
        test: false,
        inside,
    };
    let sites = [
        site("src/own.rs", 3, Form::Call, true),
        site("src/a.rs", 2, Form::Import, false),
        site("src/a.rs", 40, Form::Call, false),
        site("src/a.rs", 50, Form::Call, false),
        site("src/b.rs", 1, Form::Import, false),
        site("src/c.rs", 9, Form::Path, false),
        site("src/d.rs", 4, Form::Call, false),
    ];
    assert_eq!(
        top_sites(&sites),
        ["src/a.rs:40", "src/b.rs:1", "src/c.rs:9"],
        "the own file's recursion is not a dependent; b.rs only imports"
    );
}

#[test]
fn the_cache_serves_a_second_run_and_survives_damage() {
    let (files, diff, blobs) = scenario();
    let dir = tempfile::tempdir().expect("temporary directory");
    let first = analyze(&files, &diff, &blobs, CacheUse::ReadWrite(dir.path())).expect("cold");
    assert_eq!(first.stats.cache_hits, 0);
    let second = analyze(&files, &diff, &blobs, CacheUse::ReadWrite(dir.path())).expect("warm");
    assert_eq!((second.stats.cache_hits, second.stats.cache_misses), (3, 0));
    assert_eq!(second.symbols, first.symbols);
    // Damage every entry: the next run re-extracts and gives the same answer.
    let packs = packs(dir.path());
    assert_eq!(packs.len(), 1, "one pack holds the run's three entries");
    std::fs::write(&packs[0], b"SPI1\x05garbage").expect("overwrite");
    let third =
        analyze(&files, &diff, &blobs, CacheUse::ReadWrite(dir.path())).expect("after damage");
    assert_eq!(third.stats.cache_hits, 0);
    assert_eq!(third.symbols, first.symbols);
    let fourth =
        analyze(&files, &diff, &blobs, CacheUse::ReadWrite(dir.path())).expect("rewritten");
    assert_eq!((fourth.stats.cache_hits, fourth.stats.cache_misses), (3, 0));
}

/// `Mem`, noting every blob read.
struct Counting<'a>(&'a Mem, std::sync::Mutex<Vec<String>>);

impl Blobs for Counting<'_> {
    fn read(&self, blob: &str) -> Result<Vec<u8>, String> {
        self.1.lock().expect("reads").push(blob.to_string());
        self.0.read(blob)
    }
}

#[test]
fn files_left_unparsed_are_answered_from_cached_words_until_one_is_wanted() {
    let (mut files, helper_diff, mut blobs) = scenario();
    // Names `Shelf`, never `helper` or `unused`: the first diff's
    // questions do not reach it.
    let other = "d4".repeat(20);
    blobs.0.insert(
        other.clone(),
        b"use crate::shelf::Shelf;\n\npub fn count(_s: &Shelf) -> usize {\n    0\n}\n".to_vec(),
    );
    files.push(FileEntry {
        path: "src/other.rs".into(),
        blob: other.clone(),
    });
    let dir = tempfile::tempdir().expect("temporary directory");
    let cache = CacheUse::ReadWrite(dir.path());
    let first = analyze(&files, &helper_diff, &blobs, cache).expect("first");
    assert_eq!(first.stats.files_parsed, first.stats.files_indexed - 1);

    // Same diff again: the unparsed file is answered by its words.
    let counting = Counting(&blobs, Default::default());
    let again = analyze(&files, &helper_diff, &counting, cache).expect("again");
    assert_eq!(again.symbols, first.symbols);
    assert_eq!(again.stats.words_cached, 1);
    assert!(!counting.1.lock().expect("reads").contains(&other));

    // A diff whose questions reach it: read then, parsed, same answer
    // as without any cache.
    let shelf_base = SHELF.replace("pub struct Shelf;", "pub struct Shelf {}");
    blobs
        .0
        .insert("e5".repeat(20), shelf_base.as_bytes().to_vec());
    let shelf_diff = one_file_diff("src/shelf.rs", (&shelf_base, "e5"), (SHELF, "b2"));
    let fresh = analyze(&files, &shelf_diff, &blobs, CacheUse::Off).expect("uncached");
    assert!(
        fresh.symbols[0]
            .sites
            .iter()
            .any(|site| site.file == "src/other.rs"),
        "{:?}",
        fresh.symbols
    );
    let counting = Counting(&blobs, Default::default());
    let cached = analyze(&files, &shelf_diff, &counting, cache).expect("cached words");
    assert_eq!(cached.symbols, fresh.symbols);
    assert!(counting.1.lock().expect("reads").contains(&other));
}

#[test]
fn a_flipped_byte_anywhere_in_the_cache_never_changes_the_answer() {
    let (files, diff, blobs) = scenario();
    let fresh = analyze(&files, &diff, &blobs, CacheUse::Off).expect("uncached");
    let dir = tempfile::tempdir().expect("temporary directory");
    analyze(&files, &diff, &blobs, CacheUse::ReadWrite(dir.path())).expect("fill");
    let pack = packs(dir.path()).pop().expect("a pack");
    let bytes = std::fs::read(&pack).expect("pack");
    // Every byte once would be slow in a debug build; a stride that is
    // not a multiple of the word size still visits every field kind.
    for at in (0..bytes.len()).step_by(7) {
        let mut damaged = bytes.clone();
        damaged[at] ^= 0x04;
        std::fs::write(&pack, &damaged).expect("damage");
        let read = analyze(&files, &diff, &blobs, CacheUse::Read(dir.path()))
            .unwrap_or_else(|e| panic!("byte {at}: {e}"));
        assert_eq!(read.symbols, fresh.symbols, "byte {at} of the pack");
    }
}

/// Every pack file under a cache folder.
fn packs(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("cache dir") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "pack") {
                found.push(p);
            }
        }
    }
    found
}

#[test]
fn a_read_only_cache_is_used_but_never_written() {
    let (files, diff, blobs) = scenario();
    let dir = tempfile::tempdir().expect("temporary directory");
    let cold = analyze(&files, &diff, &blobs, CacheUse::Read(dir.path())).expect("cold");
    assert_eq!(cold.stats.cache_hits, 0);
    assert_eq!(
        std::fs::read_dir(dir.path()).expect("dir").count(),
        0,
        "nothing written"
    );
    analyze(&files, &diff, &blobs, CacheUse::ReadWrite(dir.path())).expect("fill");
    let warm = analyze(&files, &diff, &blobs, CacheUse::Read(dir.path())).expect("warm");
    assert_eq!((warm.stats.cache_hits, warm.stats.cache_misses), (3, 0));
    assert_eq!(warm.symbols, cold.symbols);
}

#[test]
fn unreadable_files_are_listed_not_dropped() {
    let (mut files, diff, blobs) = scenario();
    files.push(FileEntry {
        path: "src/gone.rs".into(),
        blob: "ff".repeat(20),
    });
    let impact = analyze(&files, &diff, &blobs, CacheUse::Off).expect("analysis");
    assert_eq!(impact.skipped.len(), 1);
    assert_eq!(impact.skipped[0].path, "src/gone.rs");
    assert!(impact.skipped[0].reason.contains("unreadable"));
}

/// `tree` at head; `path` changes from `base` to its head text.
fn tree_with_change(tree: &[(&str, &str)], path: &str, base: &str) -> Impact {
    let mut blobs = HashMap::new();
    let mut files = Vec::new();
    for (i, (p, text)) in tree.iter().enumerate() {
        let blob = format!("{i:040}");
        blobs.insert(blob.clone(), text.as_bytes().to_vec());
        files.push(FileEntry {
            path: p.to_string(),
            blob,
        });
    }
    let head = tree
        .iter()
        .find(|(p, _)| *p == path)
        .expect("changed file")
        .1;
    let base_blob = "f".repeat(40);
    blobs.insert(base_blob.clone(), base.as_bytes().to_vec());
    let mut fd = changes::tests::diff(path, base, head);
    fd.old_blob = Some(base_blob);
    fd.new_blob = files
        .iter()
        .find(|f| f.path == path)
        .map(|f| f.blob.clone());
    let diff = crate::git::Diff {
        base_commit: "base".into(),
        head_commit: "head".into(),
        files: vec![fd],
        sha256: String::new(),
    };
    let full = analyze_with(
        &files,
        &diff,
        &Mem(blobs.clone()),
        CacheUse::Off,
        Parsing::All,
    )
    .expect("full analysis");
    let needed = analyze(&files, &diff, &Mem(blobs), CacheUse::Off).expect("analysis");
    assert_eq!(
        needed.symbols, full.symbols,
        "the prefilter changed the answer"
    );
    needed
}

fn sites_of(impact: &Impact, symbol: &str) -> Vec<(String, u32, Confidence)> {
    impact
        .symbols
        .iter()
        .find(|s| s.symbol == symbol)
        .unwrap_or_else(|| panic!("{symbol} changed"))
        .sites
        .iter()
        .map(|s| (s.file.clone(), s.line, s.confidence))
        .collect()
}

/// `file:line` of each site of `symbol`, in report order.
fn site_places(impact: &Impact, symbol: &str) -> Vec<String> {
    sites_of(impact, symbol)
        .into_iter()
        .map(|(file, line, _)| format!("{file}:{line}"))
        .collect()
}

/// Package `pkg` of `models.py` and `app.py`, `models.py` changed from
/// `base`.
fn pkg_with_change(models: &str, app: &str, base: &str) -> Impact {
    let tree = [
        ("pkg/__init__.py", ""),
        ("pkg/models.py", models),
        ("pkg/app.py", app),
    ];
    tree_with_change(&tree, "pkg/models.py", base)
}

#[test]
fn a_method_on_a_returned_value_resolves_through_the_declared_return_type() {
    let lib = "pub mod shelf;\npub mod store;\n\npub fn open_shelf() -> Result<shelf::Shelf, String> {\n    Ok(shelf::Shelf)\n}\n\npub fn report() -> Result<u32, String> {\n    let s = open_shelf().unwrap();\n    let again = crate::open_shelf()?.tally();\n    let tally = |x: u32| x;\n    let t = tally(1);\n    Ok(s.tally() + again + t.tally())\n}\n";
    let shelf = "pub struct Shelf;\n\nimpl Shelf {\n    pub fn tally(&self) -> u32 {\n        1\n    }\n}\n";
    let store = "pub struct Store;\n\nimpl Store {\n    pub fn tally(&self) -> u32 {\n        2\n    }\n}\n";
    let tree = [
        ("Cargo.toml", "[package]\nname = \"demo\"\n"),
        ("src/lib.rs", lib),
        ("src/shelf.rs", shelf),
        ("src/store.rs", store),
    ];
    let changed = tree_with_change(&tree, "src/shelf.rs", &shelf.replace('1', "0"));
    let lib = "src/lib.rs".to_string();
    let sites = sites_of(&changed, "Shelf::tally");
    assert!(
        sites.contains(&(lib.clone(), 10, Confidence::Exact)),
        "{sites:?}"
    );
    assert!(
        sites.contains(&(lib.clone(), 13, Confidence::Exact)),
        "{sites:?}"
    );
    let other = tree_with_change(&tree, "src/store.rs", &store.replace('2', "0"));
    let sites = sites_of(&other, "Store::tally");
    assert!(
        !sites
            .iter()
            .any(|s| s.0 == lib && s.2 != Confidence::Ambiguous),
        "a Shelf is not a Store: {sites:?}"
    );
}

#[test]
fn a_function_named_like_the_crate_does_not_hide_it_from_paths() {
    let parse = "pub struct Parser;\n\nimpl Parser {\n    pub fn new() -> Parser {\n        Parser\n    }\n}\n";
    let tree = [
        ("Cargo.toml", "[package]\nname = \"md-tool\"\n"),
        ("src/lib.rs", "mod parse;\npub use crate::parse::Parser;\n"),
        ("src/parse.rs", parse),
        (
            "src/main.rs",
            "use md_tool::Parser;\n\nfn main() {\n    md_tool();\n}\n\npub fn md_tool() {\n    let _ = md_tool::Parser::new();\n}\n",
        ),
    ];
    let base = parse.replace("pub struct", "pub(crate) struct");
    let changed = tree_with_change(&tree, "src/parse.rs", &base);
    let sites = sites_of(&changed, "Parser");
    for line in [1, 8] {
        assert!(
            sites.contains(&("src/main.rs".to_string(), line, Confidence::Exact)),
            "main.rs:{line} in {sites:?}"
        );
    }
}

#[test]
fn an_imported_external_module_is_not_the_crates_module_of_that_name() {
    let error = "pub struct Error;\n\nimpl Error {\n    pub fn custom() -> Error {\n        Error\n    }\n}\n";
    let tree = [
        ("Cargo.toml", "[package]\nname = \"wire\"\n"),
        ("src/lib.rs", "pub mod de;\npub mod error;\n"),
        ("src/error.rs", error),
        (
            "src/de.rs",
            "use serde::de;\nuse crate::error::Error;\n\npub fn read() -> Error {\n    let _ = de::Error::custom();\n    Error::custom()\n}\n",
        ),
        ("src/de/error.rs", ""),
    ];
    let base = error.replace("Error\n    }", "Error {}\n    }");
    let changed = tree_with_change(&tree, "src/error.rs", &base);
    assert_eq!(
        site_places(&changed, "Error::custom"),
        ["src/de.rs:6"],
        "de::Error is serde's, not this crate's"
    );
}

#[test]
fn self_in_a_trait_body_is_the_implementor_not_the_trait() {
    let shape = "pub trait Shape {\n    const SIDES: u32;\n    fn area(&self) -> f64;\n    fn unit() -> Self;\n    fn double(&self) -> f64 {\n        Self::scale() * self.area()\n    }\n    fn scale() -> f64;\n}\n\npub struct Square;\n\nimpl Shape for Square {\n    const SIDES: u32 = 4;\n    fn area(&self) -> f64 {\n        1.0\n    }\n    fn unit() -> Self {\n        Square\n    }\n    fn scale() -> f64 {\n        2.0\n    }\n}\n";
    let tree = [
        ("Cargo.toml", "[package]\nname = \"geo\"\n"),
        ("src/lib.rs", shape),
    ];
    let base = shape
        .replace("pub trait Shape {", "pub trait Shape:  Sized {")
        .replace("fn scale() -> f64;", "fn scale() -> f64 ;");
    let changed = tree_with_change(&tree, "src/lib.rs", &base);
    assert_eq!(
        site_places(&changed, "Shape"),
        ["src/lib.rs:13"],
        "only `impl Shape for Square` names the trait"
    );
    assert_eq!(
        site_places(&changed, "Shape::scale"),
        ["src/lib.rs:6", "src/lib.rs:21"],
        "Self::scale() still reaches the trait's item; Square's implementation changes with it"
    );
}

#[test]
fn trait_items_reach_their_impls_primitive_receivers_and_bounded_parameters() {
    let num = "pub trait Float {\n    fn halve(self) -> Self;\n}\n\nimpl Float for f64 {\n    fn halve(self) -> f64 {\n        self / 2.0\n    }\n}\n\nimpl Float for f32 {\n    #[inline]\n    fn halve(self) -> f32 {\n        self / 2.0\n    }\n}\n";
    let user = "use crate::num::Float;\n\npub fn quarter<F: Float>(x: F) -> F {\n    x.halve().halve()\n}\n\npub fn third<G>(g: G) -> G\nwhere\n    G: Clone + Float,\n{\n    g.halve()\n}\n\npub fn literal() -> f64 {\n    let y: f32 = 1.0;\n    let _ = y.halve();\n    4.0f64.halve()\n}\n\npub fn std_only(n: u8) -> u32 {\n    n.count_ones()\n}\n";
    let tree = [
        ("Cargo.toml", "[package]\nname = \"num\"\n"),
        ("src/lib.rs", "pub mod num;\npub mod user;\n"),
        ("src/num.rs", num),
        ("src/user.rs", user),
    ];
    let base = num.replace("fn halve(self) -> Self;", "fn halve(self) -> Self ;");
    let changed = tree_with_change(&tree, "src/num.rs", &base);
    assert_eq!(
        site_places(&changed, "Float::halve"),
        [
            // Calls through the bound (the chained second one on
            // what the first returns: `Self`, so a `Float`), then on
            // f32 and f64 values.
            "src/user.rs:4",
            "src/user.rs:4",
            "src/user.rs:11",
            "src/user.rs:16",
            "src/user.rs:17",
            // The implementations, at their names.
            "src/num.rs:6",
            "src/num.rs:13",
        ]
    );
}

#[test]
fn test_files_are_crate_roots_of_their_own() {
    let lib = "mod dfa;\n\npub fn suite() -> u32 {\n    1\n}\n";
    let helpers = "pub fn make() -> u32 {\n    2\n}\n";
    let tree = [
        ("Cargo.toml", "[package]\nname = \"re\"\n"),
        ("src/lib.rs", "pub fn suite() -> u32 {\n    0\n}\n"),
        ("tests/lib.rs", lib),
        ("tests/dfa/mod.rs", "mod onepass;\n"),
        (
            "tests/dfa/onepass.rs",
            "use crate::suite;\n\nfn run() -> u32 {\n    suite() + crate::suite() + super::super::suite()\n}\n",
        ),
        (
            "tests/it/main.rs",
            "mod helpers;\n\nfn go() -> u32 {\n    helpers::make()\n}\n",
        ),
        ("tests/it/helpers.rs", helpers),
        (
            "tests/it/other.rs",
            "fn more() -> u32 {\n    crate::helpers::make()\n}\n",
        ),
        ("tests/a.rs", "fn own() -> u32 {\n    crate::own() + 1\n}\n"),
    ];
    let changed = tree_with_change(&tree, "tests/lib.rs", &lib.replace("1\n", "10\n"));
    assert_eq!(
        site_places(&changed, "suite"),
        [
            "tests/dfa/onepass.rs:1",
            "tests/dfa/onepass.rs:4",
            "tests/dfa/onepass.rs:4",
            "tests/dfa/onepass.rs:4",
        ],
        "tests/lib.rs is the crate root of tests/dfa/onepass.rs, not src/lib.rs"
    );
    let base = helpers.replace("2\n", "20\n");
    let changed = tree_with_change(&tree, "tests/it/helpers.rs", &base);
    assert_eq!(
        site_places(&changed, "make"),
        ["tests/it/main.rs:4", "tests/it/other.rs:2"]
    );
}

#[test]
fn two_packages_of_one_name_stay_two_crates() {
    let m = "pub fn helper() -> u32 {\n    1\n}\n";
    let lib = "pub mod m;\npub use m::*;\n\npub fn user() -> u32 {\n    crate::helper()\n}\n";
    let tree = [
        ("a/Cargo.toml", "[package]\nname = \"dup\"\n"),
        ("a/src/lib.rs", lib),
        ("a/src/m.rs", m),
        ("b/Cargo.toml", "[package]\nname = \"dup\"\n"),
        ("b/src/lib.rs", lib),
        ("b/src/m.rs", "pub fn helper() -> u32 {\n    2\n}\n"),
    ];
    let changed = tree_with_change(&tree, "a/src/m.rs", &m.replace('1', "0"));
    let symbol = &changed.symbols[0];
    assert_eq!(symbol.qualified, "dup::m::helper");
    let sites = sites_of(&changed, "helper");
    assert_eq!(
        sites,
        vec![("a/src/lib.rs".to_string(), 5, Confidence::Exact)],
        "b's identical code calls b's own helper"
    );
}

#[test]
fn integration_tests_share_their_support_module() {
    let helpers = "pub fn make_repo() -> u32 {\n    1\n}\n";
    let tree = [
        ("Cargo.toml", "[package]\nname = \"demo\"\n"),
        ("src/lib.rs", "pub fn x() {}\n"),
        ("tests/support/mod.rs", "pub mod helpers;\n"),
        ("tests/support/helpers.rs", helpers),
        (
            "tests/a.rs",
            "mod support;\n\nuse support::helpers::make_repo;\n\n#[test]\nfn a() {\n    make_repo();\n}\n",
        ),
        (
            "tests/b.rs",
            "mod support;\n\n#[test]\nfn b() {\n    support::helpers::make_repo();\n}\n",
        ),
    ];
    let changed = tree_with_change(
        &tree,
        "tests/support/helpers.rs",
        &helpers.replace('1', "2"),
    );
    let sites = sites_of(&changed, "make_repo");
    for site in [("tests/a.rs", 3), ("tests/a.rs", 7), ("tests/b.rs", 5)] {
        assert!(
            sites.contains(&(site.0.to_string(), site.1, Confidence::Exact)),
            "{site:?} in {sites:?}"
        );
    }
}

#[test]
fn a_python_method_on_a_returned_value_resolves_through_the_annotation() {
    let models = "class Shelf:\n    def tally(self):\n        return 1\n\n\nclass Store:\n    def tally(self):\n        return 2\n\n\ndef open_shelf() -> Shelf:\n    return Shelf()\n";
    let app = "from pkg import models\nfrom pkg.models import open_shelf\n\n\ndef report():\n    s = open_shelf()\n    return s.tally() + models.open_shelf().tally()\n";
    let tree = [
        ("pkg/__init__.py", ""),
        ("pkg/models.py", models),
        ("pkg/app.py", app),
    ];
    let changed = tree_with_change(
        &tree,
        "pkg/models.py",
        &models.replace("return 1", "return 0"),
    );
    let sites = sites_of(&changed, "Shelf.tally");
    let site = ("pkg/app.py".to_string(), 7, Confidence::Exact);
    assert_eq!(sites, vec![site.clone(), site], "both calls on line 7");
}

#[test]
fn python_forward_references_nested_classes_and_callable_attributes() {
    let models = "class Tree:\n    class Leaf:\n        pass\n\n    def grow(self):\n        return 1\n\n\nclass Finder:\n    def report(self, msg):\n        return msg\n";
    let app = "from pkg import models\nfrom pkg.models import Tree\n\n\nclass Context:\n    def __init__(self, report):\n        self.report = report\n\n    def fail(self) -> \"models.Tree\":\n        self.report(\"x\")\n        return Tree.Leaf()\n";
    let base = models
        .replace("class Tree:", "class Tree:  # a tree")
        .replace("pass", "x = 1")
        .replace("return 1", "return 0")
        .replace("return msg", "return None");
    let changed = pkg_with_change(models, app, &base);
    assert_eq!(
        site_places(&changed, "Tree.Leaf"),
        ["pkg/app.py:11"],
        "Tree.Leaf() names the nested class"
    );
    assert!(
        site_places(&changed, "Tree").contains(&"pkg/app.py:9".to_string()),
        "a string annotation names its type"
    );
    assert!(
        site_places(&changed, "Finder.report").is_empty(),
        "self.report holds a callable: not Finder's method"
    );
}

#[test]
fn a_python_property_is_read_through_receivers_of_unknown_type() {
    let models = "class Node:\n    def __init__(self):\n        self.kind = 1\n\n    @property\n    def depth(self):\n        return 0\n\n    @property\n    def kind_name(self):\n        return 'x'\n\n\nclass Other:\n    def kind(self):\n        return 2\n";
    let app = "def show(node, other):\n    print(node.depth)\n    print(node.kind)\n    return other.kind\n";
    let base = models
        .replace("return 0", "return 1")
        .replace("return 2", "return 3");
    let changed = pkg_with_change(models, app, &base);
    assert_eq!(
        site_places(&changed, "Node.depth"),
        ["pkg/app.py:2"],
        "a property read on an untyped value"
    );
    assert!(
        site_places(&changed, "Other.kind").is_empty(),
        "`kind` is also a data attribute: `x.kind` is not matched by name"
    );
}

#[test]
fn a_python_attribute_write_is_a_reference() {
    let models = "DEBUG = False\n\n\nclass Node:\n    @property\n    def pos(self):\n        return self._pos\n\n    @pos.setter\n    def pos(self, value):\n        self._pos = value\n\n    def move(self):\n        self.pos = 1\n";
    let app = "from pkg import models\n\n\ndef enable():\n    models.DEBUG = True\n";
    let base = models
        .replace("DEBUG = False", "DEBUG = None")
        .replace("return self._pos", "return 0");
    let changed = pkg_with_change(models, app, &base);
    assert_eq!(site_places(&changed, "DEBUG"), ["pkg/app.py:5"]);
    assert!(
        site_places(&changed, "Node.pos").contains(&"pkg/models.py:14".to_string()),
        "self.pos = 1 calls the setter"
    );
}

/// A tree of `(path, text)` files, each text its own blob, plus the
/// blobs of `extra` texts (base sides).
fn tree(files: &[(&str, &str)], extra: &[&str]) -> (Vec<FileEntry>, Mem) {
    let mut blobs = HashMap::new();
    let mut entries = Vec::new();
    for (path, text) in files {
        blobs.insert(blob_of(text), text.as_bytes().to_vec());
        entries.push(FileEntry {
            path: path.to_string(),
            blob: blob_of(text),
        });
    }
    for text in extra {
        blobs.insert(blob_of(text), text.as_bytes().to_vec());
    }
    (entries, Mem(blobs))
}

fn blob_of(text: &str) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    format!("{:040x}", h.finish())
}

fn modified(path: &str, old: &str, new: &str) -> crate::git::FileDiff {
    let mut fd = changes::tests::diff(path, old, new);
    fd.old_blob = Some(blob_of(old));
    fd.new_blob = Some(blob_of(new));
    fd
}

fn renamed(old_path: &str, path: &str, old: &str, new: &str) -> crate::git::FileDiff {
    let mut fd = modified(path, old, new);
    if old == new {
        fd.hunks.clear();
    }
    fd.old_path = Some(old_path.to_string());
    fd.status = crate::git::FileStatus::Renamed;
    fd.similarity = Some(100);
    fd
}

fn deleted(path: &str, old: &str) -> crate::git::FileDiff {
    let mut fd = modified(path, old, "");
    fd.new_blob = None;
    fd.status = crate::git::FileStatus::Deleted;
    fd
}

fn diff_of(files: Vec<crate::git::FileDiff>) -> crate::git::Diff {
    crate::git::Diff {
        base_commit: "base".into(),
        head_commit: "head".into(),
        files,
        sha256: String::new(),
    }
}

/// The analysis, checked against the full index: the prefilter must
/// parse every file that names a module.
fn analyze_checked(files: &[FileEntry], diff: &crate::git::Diff, blobs: &Mem) -> Impact {
    let full =
        analyze_with(files, diff, blobs, CacheUse::Off, Parsing::All).expect("full analysis");
    let needed = analyze(files, diff, blobs, CacheUse::Off).expect("analysis");
    assert_eq!(needed.symbols, full.symbols, "prefiltered = full index");
    assert_eq!(needed.skipped, full.skipped);
    needed
}

fn module<'a>(impact: &'a Impact, file: &str) -> &'a ChangedSymbol {
    impact
        .symbols
        .iter()
        .find(|s| s.symbol == "(module)" && s.file == file)
        .unwrap_or_else(|| panic!("no (module) symbol for {file}: {:#?}", impact.symbols))
}

fn site_list(s: &ChangedSymbol) -> Vec<String> {
    let mut out: Vec<String> = s
        .sites
        .iter()
        .map(|x| format!("{}:{}", x.file, x.line))
        .collect();
    out.sort();
    out
}

const CARGO: &str = "[package]\nname = \"demo\"\n";
const RS_LIB: &str = "pub mod shelf;\nmod util;\npub mod user;\n\npub use shelf::Shelf;\n";
const RS_SHELF: &str = "use crate::util::tidy;\n\npub struct Shelf;\n\npub fn stack() -> u32 {\n    tidy(1)\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n}\n";
const RS_UTIL: &str = "pub fn tidy(x: u32) -> u32 {\n    x\n}\n";
const RS_USER: &str = "use crate::shelf::{self, Shelf};\nuse super::shelf::*;\n\npub fn make() -> Shelf {\n    shelf::stack();\n    crate::shelf::Shelf\n}\n";
const RS_TEST: &str = "use demo::shelf::Shelf;\n\n#[test]\nfn works() {\n    let _ = Shelf;\n    demo::util::tidy(1);\n}\n";

fn rust_tree(shelf: &str) -> (Vec<FileEntry>, Mem) {
    tree(
        &[
            ("Cargo.toml", CARGO),
            ("src/lib.rs", RS_LIB),
            ("src/shelf.rs", shelf),
            ("src/util.rs", RS_UTIL),
            ("src/user.rs", RS_USER),
            ("tests/it.rs", RS_TEST),
        ],
        &[RS_SHELF],
    )
}

#[test]
fn a_rust_module_level_edit_reaches_every_importer() {
    let head = RS_SHELF.replace("use crate::util::tidy;", "use crate::util::{self, tidy};");
    let (files, blobs) = rust_tree(&head);
    let diff = diff_of(vec![modified("src/shelf.rs", RS_SHELF, &head)]);
    let impact = analyze_checked(&files, &diff, &blobs);
    let m = module(&impact, "src/shelf.rs");
    assert_eq!(m.qualified, "demo::shelf");
    assert_eq!((m.change, m.breaking), (Change::BodyChanged, false));
    // The declaration, a re-export, imports (`{self, ..}`, a glob through
    // `super`), paths through the module, another target's import; not
    // the module's own `use super::*`.
    assert_eq!(
        site_list(m),
        vec![
            "src/lib.rs:1",
            "src/lib.rs:5",
            "src/user.rs:1",
            "src/user.rs:2",
            "src/user.rs:5",
            "src/user.rs:6",
            "tests/it.rs:1"
        ]
    );
    assert!(m.sites.iter().all(|s| s.confidence == Confidence::Exact));
    assert_eq!(
        m.dependents.symbols, 4,
        "lib and user module code, make, the test file"
    );
    assert_eq!((m.dependents.production, m.dependents.test), (3, 1));
    assert_eq!(
        m.dependents.files,
        vec!["src/lib.rs", "src/user.rs", "tests/it.rs"]
    );
    assert_eq!(m.stability, Stability::Module);
    let make = m
        .sites
        .iter()
        .find(|s| s.file == "src/user.rs" && s.line == 5)
        .expect("call site");
    assert_eq!((make.dependent.as_str(), make.form), ("make", Form::Path));
    let decl = &m
        .sites
        .iter()
        .find(|s| s.file == "src/lib.rs")
        .expect("decl");
    assert_eq!((decl.line, decl.form), (1, Form::Import));
}

#[test]
fn a_private_module_is_named_only_inside_its_parent() {
    let head = "pub fn tidy(x: u32) -> u32 {\n    x\n}\n\nuse std::fmt;\n";
    let (files, blobs) = tree(
        &[
            ("Cargo.toml", CARGO),
            ("src/lib.rs", RS_LIB),
            ("src/shelf.rs", RS_SHELF),
            ("src/util.rs", head),
            ("src/user.rs", RS_USER),
            ("tests/it.rs", RS_TEST),
        ],
        &[RS_UTIL],
    );
    let diff = diff_of(vec![modified("src/util.rs", RS_UTIL, head)]);
    let impact = analyze_checked(&files, &diff, &blobs);
    let m = module(&impact, "src/util.rs");
    // `demo::util::tidy` in the integration test cannot name a private
    // module of the library, and its file is not even parsed.
    assert_eq!(site_list(m), vec!["src/lib.rs:2", "src/shelf.rs:1"]);
    assert_eq!(m.stability, Stability::Module);
    let all = analyze_with(&files, &diff, &blobs, CacheUse::Off, Parsing::All).expect("full");
    assert!(impact.stats.files_parsed < all.stats.files_parsed);
}

#[test]
fn a_changed_mod_declaration_is_judged_by_the_modules_importers() {
    let head = RS_LIB.replace("pub mod shelf;", "mod shelf;");
    let (files, blobs) = tree(
        &[
            ("Cargo.toml", CARGO),
            ("src/lib.rs", &head),
            ("src/shelf.rs", RS_SHELF),
            ("src/util.rs", RS_UTIL),
            ("src/user.rs", RS_USER),
            ("tests/it.rs", RS_TEST),
        ],
        &[RS_LIB],
    );
    let diff = diff_of(vec![modified("src/lib.rs", RS_LIB, &head)]);
    let impact = analyze_checked(&files, &diff, &blobs);
    let shelf = impact
        .symbols
        .iter()
        .find(|s| s.symbol == "shelf")
        .expect("the declaration");
    assert_eq!(shelf.kind, Kind::Module);
    assert_eq!(
        (shelf.change, shelf.breaking),
        (Change::SignatureChanged, true)
    );
    // Now private: the integration test's import is out of its reach
    // (and broken, which the compiler reports).
    assert_eq!(
        site_list(shelf),
        vec![
            "src/lib.rs:5",
            "src/user.rs:1",
            "src/user.rs:2",
            "src/user.rs:5",
            "src/user.rs:6"
        ]
    );
}

const RS_OLD: &str = "pub struct Thing;\n";

fn rename_tree(lib: &str, user: &str) -> (Vec<FileEntry>, Mem) {
    tree(
        &[
            ("Cargo.toml", CARGO),
            ("src/lib.rs", lib),
            ("src/new.rs", RS_OLD),
            ("src/user.rs", user),
        ],
        &["pub mod old;\npub mod user;\n", "use crate::old::Thing;\n"],
    )
}

#[test]
fn a_renamed_module_breaks_whoever_still_names_the_old_path() {
    let base_lib = "pub mod old;\npub mod user;\n";
    let head_lib = "pub mod new;\npub mod user;\n";
    let user = "use crate::old::Thing;\n";
    let (files, blobs) = rename_tree(head_lib, user);
    let diff = diff_of(vec![
        modified("src/lib.rs", base_lib, head_lib),
        renamed("src/old.rs", "src/new.rs", RS_OLD, RS_OLD),
    ]);
    let impact = analyze_checked(&files, &diff, &blobs);
    let m = module(&impact, "src/old.rs");
    assert_eq!(m.qualified, "demo::old");
    assert_eq!(m.renamed_to.as_deref(), Some("src/new.rs"));
    assert_eq!((m.change, m.breaking), (Change::Removed, true));
    assert_eq!(site_list(m), vec!["src/user.rs:1"]);
    assert_eq!(impact.symbols[0], *m, "the riskiest change ranks first");
    // The removed `mod old;` is that same removal, not a second row.
    assert!(!impact.symbols.iter().any(|s| s.symbol == "old"));
    let rows = impact.rows();
    assert_eq!(rows[0].symbol, "(module) (src/old.rs → src/new.rs)");
    let json = serde_json::to_value(&impact).expect("serializes");
    assert_eq!(json[0]["renamed_to"], "src/new.rs");
    assert_eq!(json[0]["sites"][0]["form"], "import");
}

#[test]
fn a_rename_everyone_followed_breaks_nothing() {
    let base_lib = "pub mod old;\npub mod user;\n";
    let head_lib = "pub mod new;\npub mod user;\n";
    let (base_user, head_user) = ("use crate::old::Thing;\n", "use crate::new::Thing;\n");
    let (files, blobs) = rename_tree(head_lib, head_user);
    let diff = diff_of(vec![
        modified("src/lib.rs", base_lib, head_lib),
        renamed("src/old.rs", "src/new.rs", RS_OLD, RS_OLD),
        modified("src/user.rs", base_user, head_user),
    ]);
    let impact = analyze_checked(&files, &diff, &blobs);
    let m = module(&impact, "src/old.rs");
    assert_eq!((m.change, m.breaking), (Change::Removed, false));
    assert!(m.sites.is_empty());
    assert_eq!(m.stability, Stability::Leaf);
}

#[test]
fn a_deleted_module_still_declared_is_breaking() {
    let lib = "pub mod old;\npub mod user;\n";
    let user = "use crate::old::Thing;\n";
    let (files, blobs) = tree(
        &[
            ("Cargo.toml", CARGO),
            ("src/lib.rs", lib),
            ("src/user.rs", user),
        ],
        &[RS_OLD],
    );
    let diff = diff_of(vec![deleted("src/old.rs", RS_OLD)]);
    let impact = analyze_checked(&files, &diff, &blobs);
    let m = module(&impact, "src/old.rs");
    assert_eq!(
        (m.change, m.breaking, m.renamed_to.as_deref()),
        (Change::Removed, true, None)
    );
    assert_eq!(site_list(m), vec!["src/lib.rs:1", "src/user.rs:1"]);
}

#[test]
fn moving_a_module_between_a_rs_and_a_mod_rs_keeps_its_path() {
    let lib = "pub mod old;\npub mod user;\n";
    let user = "use crate::old::Thing;\n";
    let (files, blobs) = tree(
        &[
            ("Cargo.toml", CARGO),
            ("src/lib.rs", lib),
            ("src/old/mod.rs", RS_OLD),
            ("src/user.rs", user),
        ],
        &[],
    );
    let diff = diff_of(vec![renamed(
        "src/old.rs",
        "src/old/mod.rs",
        RS_OLD,
        RS_OLD,
    )]);
    let impact = analyze_checked(&files, &diff, &blobs);
    assert!(impact.symbols.is_empty(), "{:#?}", impact.symbols);
}

#[test]
fn a_renamed_crate_directory_keeps_its_module_paths() {
    let manifest = "[package]\nname = \"core\"\n";
    let lib = "pub mod a;\n";
    let a = "pub fn f() {}\n";
    let (files, blobs) = tree(
        &[
            ("crates/kernel/Cargo.toml", manifest),
            ("crates/kernel/src/lib.rs", lib),
            ("crates/kernel/src/a.rs", a),
        ],
        &[],
    );
    let mut toml = renamed(
        "crates/core/Cargo.toml",
        "crates/kernel/Cargo.toml",
        manifest,
        manifest,
    );
    toml.hunks.clear();
    let diff = diff_of(vec![
        toml,
        renamed(
            "crates/core/src/lib.rs",
            "crates/kernel/src/lib.rs",
            lib,
            lib,
        ),
        renamed("crates/core/src/a.rs", "crates/kernel/src/a.rs", a, a),
    ]);
    let impact = analyze_checked(&files, &diff, &blobs);
    assert!(impact.symbols.is_empty(), "{:#?}", impact.symbols);
}

const PY_MODELS: &str = "import os\n\n\ndef slug(x):\n    return x\n";
const PY_STORE: &str = "from . import models\nfrom .models import slug\nfrom .models import *\nimport pkg.models as m\n\n\nclass Shelf:\n    def label(self):\n        return models.slug(m.slug(self))\n";
const PY_APP: &str = "import pkg.models\nfrom pkg import models as md\n\n\ndef run():\n    return pkg.models.slug(md.slug(1))\n";

#[test]
fn a_python_module_level_edit_reaches_every_importer() {
    let head = PY_MODELS.replace("import os", "import os.path");
    let (files, blobs) = tree(
        &[
            ("pkg/__init__.py", "from .store import Shelf\n"),
            ("pkg/models.py", &head),
            ("pkg/store.py", PY_STORE),
            ("app.py", PY_APP),
        ],
        &[PY_MODELS],
    );
    let diff = diff_of(vec![modified("pkg/models.py", PY_MODELS, &head)]);
    let impact = analyze_checked(&files, &diff, &blobs);
    let m = module(&impact, "pkg/models.py");
    assert_eq!(m.qualified, "pkg.models");
    // `import pkg.models` (app.py:1) binds `pkg` but imports the module.
    assert_eq!(
        site_list(m),
        vec![
            "app.py:1",
            "app.py:2",
            "app.py:6",
            "pkg/store.py:1",
            "pkg/store.py:2",
            "pkg/store.py:3",
            "pkg/store.py:4",
            "pkg/store.py:9"
        ]
    );
    assert_eq!(
        m.dependents.symbols, 4,
        "two files' module code, run, Shelf.label"
    );
    assert_eq!(
        m.stability,
        Stability::Public,
        "app.py is a unit of its own"
    );
}

#[test]
fn a_python_package_edit_reaches_its_relative_importers() {
    let init = "from .store import Shelf\n";
    let head = "import logging\nfrom .store import Shelf\n";
    let sub = "from . import Shelf\nfrom .. import store\n";
    let (files, blobs) = tree(
        &[
            ("pkg/__init__.py", head),
            ("pkg/store.py", "class Shelf:\n    pass\n"),
            ("pkg/sub/__init__.py", ""),
            ("pkg/sub/leaf.py", sub),
            ("pkg/views.py", "from . import Shelf\n"),
        ],
        &[init],
    );
    let diff = diff_of(vec![modified("pkg/__init__.py", init, head)]);
    let impact = analyze_checked(&files, &diff, &blobs);
    let m = module(&impact, "pkg/__init__.py");
    // `from .. import store` names the module `store`, not the package.
    assert_eq!(site_list(m), vec!["pkg/views.py:1"]);
}

#[test]
fn an_edited_all_list_reaches_the_packages_importers() {
    let init = "from .store import Shelf\n\n__all__ = [\"Shelf\"]\n";
    let head = "from .store import Shelf\n\n__all__ = []\n";
    let (files, blobs) = tree(
        &[
            ("pkg/__init__.py", head),
            ("pkg/store.py", "class Shelf:\n    pass\n"),
            ("app.py", "from pkg import *\nimport pkg\n"),
        ],
        &[init],
    );
    let diff = diff_of(vec![modified("pkg/__init__.py", init, head)]);
    let impact = analyze_checked(&files, &diff, &blobs);
    let all = impact
        .symbols
        .iter()
        .find(|s| s.symbol == "__all__")
        .expect("__all__ changed");
    assert_eq!(site_list(all), vec!["app.py:1", "app.py:2"]);
    assert_eq!(all.dependents.symbols, 1, "app.py's module code");
}

#[test]
fn a_renamed_python_package_breaks_imports_of_its_old_path() {
    let init = "";
    let body = "def f():\n    return 1\n";
    let app = "from pkg_a.mod import f\n";
    let (files, blobs) = tree(
        &[
            ("pkg_b/__init__.py", init),
            ("pkg_b/mod.py", body),
            ("app.py", app),
        ],
        &[],
    );
    let diff = diff_of(vec![
        renamed("pkg_a/__init__.py", "pkg_b/__init__.py", init, init),
        renamed("pkg_a/mod.py", "pkg_b/mod.py", body, body),
    ]);
    let impact = analyze_checked(&files, &diff, &blobs);
    let m = module(&impact, "pkg_a/mod.py");
    assert_eq!(m.qualified, "pkg_a.mod");
    assert_eq!(m.renamed_to.as_deref(), Some("pkg_b/mod.py"));
    assert!(m.breaking);
    assert_eq!(site_list(m), vec!["app.py:1"]);
}

#[test]
fn the_time_limit_ends_the_analysis_with_a_notice_and_keeps_the_changes() {
    let (files, diff, blobs) = scenario();
    let cut = analyze_within(
        &files,
        &diff,
        &blobs,
        CacheUse::Off,
        Parsing::Needed,
        Duration::ZERO,
    )
    .expect("analysis");
    let mut changed: Vec<(&str, Change)> = cut
        .symbols
        .iter()
        .map(|s| (s.symbol.as_str(), s.change))
        .collect();
    changed.sort();
    assert_eq!(
        changed,
        [
            ("helper", Change::SignatureChanged),
            ("unused", Change::Removed)
        ]
    );
    assert_eq!(cut.limits.len(), 1, "{:?}", cut.limits);
    assert!(
        cut.limits[0].starts_with("Impact assessment stopped at its 0 s time limit"),
        "{}",
        cut.limits[0]
    );
    let whole = analyze(&files, &diff, &blobs, CacheUse::Off).expect("analysis");
    assert!(whole.limits.is_empty(), "{:?}", whole.limits);
}

#[test]
fn a_hold_on_the_store_neither_delays_nor_changes_the_analysis() {
    let (files, diff, blobs) = scenario();
    let store = Store::new(&blobs);
    let impact = std::thread::scope(|scope| {
        let registering = store.hold();
        let index = scope.spawn(|| {
            analyze_in(
                &store,
                &files,
                &diff,
                CacheUse::Off,
                Parsing::Needed,
                TIME_LIMIT,
            )
        });
        // The checks are still registering when the analysis is done.
        let impact = index.join().expect("the index thread");
        drop(registering);
        impact
    })
    .expect("analysis");
    assert!(impact.limits.is_empty(), "{:?}", impact.limits);
    let whole = analyze(&files, &diff, &blobs, CacheUse::Off).expect("analysis");
    assert_eq!(
        format!("{:?}", impact.symbols),
        format!("{:?}", whole.symbols)
    );
}

#[test]
fn what_breaks_ranks_first_and_a_type_that_only_gained_fields_last() {
    const BASE: &str = "pub mod u1;\npub mod u2;\npub mod u3;\npub mod caller;\n\npub struct Args {\n    pub a: u8,\n}\n\npub fn size(s: &str) -> u64 {\n    s.len() as u64\n}\n\npub fn scale(x: u32) -> u32 {\n    x\n}\n\npub fn gone() {}\n";
    let head = BASE
        .replace("    pub a: u8,\n", "    pub a: u8,\n    pub b: u8,\n")
        .replace("s.len() as u64\n", "s.len() as u64 * 2\n")
        .replace("scale(x: u32)", "scale(x: u32, by: u32)")
        .replace("x\n}\n\npub fn gone() {}\n", "x * by\n}\n");
    let user = |n: u8| format!("use crate::Args;\n\npub fn f{n}(a: &Args) -> u8 {{\n    a.a\n}}\n");
    let caller_base = "pub fn run() -> u64 {\n    crate::gone();\n    crate::scale(1) as u64 + crate::size(\"x\")\n}\n";
    let caller_head = caller_base.replace("crate::scale(1)", "crate::scale(1, 2)");
    let (u1, u2, u3) = (user(1), user(2), user(3));
    let (files, blobs) = tree(
        &[
            ("Cargo.toml", CARGO),
            ("src/lib.rs", &head),
            ("src/u1.rs", &u1),
            ("src/u2.rs", &u2),
            ("src/u3.rs", &u3),
            ("src/caller.rs", &caller_head),
        ],
        &[BASE, caller_base],
    );
    let diff = diff_of(vec![
        modified("src/lib.rs", BASE, &head),
        modified("src/caller.rs", caller_base, &caller_head),
    ]);
    let impact = analyze_checked(&files, &diff, &blobs);
    let order: Vec<(&str, Change, bool, usize)> = impact
        .symbols
        .iter()
        .filter(|s| s.symbol != "(module)" && s.symbol != "run")
        .map(|s| {
            (
                s.symbol.as_str(),
                s.change,
                s.breaking,
                s.dependents.files.len(),
            )
        })
        .collect();
    assert_eq!(
        order,
        vec![
            ("gone", Change::Removed, true, 1),
            // Its one caller is on a line the diff wrote: updated.
            ("scale", Change::SignatureChanged, false, 1),
            ("size", Change::BodyChanged, false, 1),
            ("Args", Change::MembersAdded, false, 3),
        ]
    );
}

#[test]
fn an_associated_function_without_self_is_looked_for_only_through_its_type() {
    let glob =
        "pub struct Glob;\n\nimpl Glob {\n    pub fn new() -> Glob {\n        Glob\n    }\n}\n";
    let base = glob.replace("        Glob\n", "        Self\n");
    // `Other::new()` beside `Glob::new()`: which `new` it calls is not
    // asked, so `other.rs` (where the only other `new` is) stays unparsed.
    let files = [
        (
            "src/lib.rs",
            "pub mod glob;\npub mod other;\npub mod user;\n",
        ),
        ("src/glob.rs", glob),
        (
            "src/user.rs",
            "use crate::glob::Glob;\nuse crate::other::Other;\n\npub fn make() {\n    \
             Glob::new();\n    Other::new();\n}\n",
        ),
        (
            "src/other.rs",
            "pub struct Other;\n\nimpl Other {\n    pub fn new() -> Other {\n        Other\n    }\n}\n",
        ),
    ];
    let impact = tree_with_change(&files, "src/glob.rs", &base);
    assert_eq!(
        site_places(&impact, "Glob::new"),
        ["src/user.rs:5"],
        "{:?}",
        impact.symbols
    );
    assert_eq!(impact.stats.files_parsed, 3, "{:?}", impact.stats);
}

/// A change whose dependents' dependents live in `far` files of
/// `padding` bytes each: the first analysis parses what it needs, the
/// second every file.
fn second_hop(far: usize, padding: usize) -> (Impact, Impact) {
    let base = "def hub():\n    return 0\n";
    let head = "def hub():\n    return 1\n";
    let filler = format!("# {}\n", "lorem ipsum ".repeat(padding / 12));
    let texts: Vec<(String, String)> = (0..far)
        .map(|i| {
            (
                format!("far{i:02}.py"),
                format!(
                    "from caller import caller\n{filler}\n\ndef far{i}():\n    return caller()\n"
                ),
            )
        })
        .collect();
    let caller = "from hub import hub\n\n\ndef caller():\n    return hub()\n";
    let mut files: Vec<(&str, &str)> = vec![("hub.py", head), ("caller.py", caller)];
    files.extend(texts.iter().map(|(p, t)| (p.as_str(), t.as_str())));
    let (head_files, blobs) = tree(&files, &[base]);
    let diff = crate::git::Diff {
        base_commit: "base".into(),
        head_commit: "head".into(),
        files: vec![modified("hub.py", base, head)],
        sha256: String::new(),
    };
    let needed = analyze(&head_files, &diff, &blobs, CacheUse::Off).expect("analysis");
    let all = analyze_with(&head_files, &diff, &blobs, CacheUse::Off, Parsing::All).expect("full");
    (needed, all)
}

#[test]
fn the_second_hop_parses_at_most_half_of_a_large_tree_and_says_so() {
    // 30 files of 40 kB mention the dependent `caller`: 1.2 MB, more than
    // half of what is left unparsed.
    let (needed, all) = second_hop(30, 40_000);
    let (hub, full) = (&needed.symbols[0], &all.symbols[0]);
    assert_eq!(full.radius, 31);
    assert_eq!(full.radius_unread, None);
    // Only the first hop's files were read: `caller`, not its 30 callers.
    assert_eq!(needed.stats.files_parsed, 2);
    assert_eq!(hub.radius, 1);
    assert_eq!(hub.radius_unread, Some(30));
    // Everything the first hop finds is the full analysis's.
    assert_eq!(hub.dependents, full.dependents);
    assert_eq!(hub.sites, full.sites);
    let json = serde_json::to_value(&needed).expect("serializes");
    assert_eq!(json[0]["radius_unread"], 30);
    assert!(
        serde_json::to_value(&all).expect("serializes")[0]
            .get("radius_unread")
            .is_none()
    );
    // Not said to the model, which is never shown the radius.
    assert!(needed.limits.is_empty(), "{:?}", needed.limits);

    // A small tree is cheap to read whole: the radius is exact.
    let (needed, all) = second_hop(30, 1_000);
    assert_eq!(needed.symbols, all.symbols);
    assert_eq!(needed.symbols[0].radius, 31);
}

#[test]
fn a_hub_radius_follows_a_bounded_number_of_dependents_and_says_so() {
    let callers = RADIUS_FOLLOWED + 10;
    let base = "def hub():\n    return 0\n";
    let head = "def hub():\n    return 1\n";
    let texts: Vec<(String, String)> = (0..callers)
        .map(|i| {
            (
                format!("m{i:03}.py"),
                format!(
                    "from hub import hub\n\n\ndef c{i}():\n    return hub()\n\n\ndef d{i}():\n    return c{i}()\n"
                ),
            )
        })
        .collect();
    let mut files: Vec<(&str, &str)> = vec![("hub.py", head)];
    files.extend(texts.iter().map(|(p, t)| (p.as_str(), t.as_str())));
    let impact = tree_with_change(&files, "hub.py", base);
    let hub = &impact.symbols[0];
    assert_eq!(hub.dependents.symbols, callers);
    assert_eq!(
        hub.radius_truncated,
        Some(RadiusCut {
            followed: RADIUS_FOLLOWED,
            dependents: callers
        })
    );
    // Every caller, and the callers of the first ones followed.
    assert_eq!(hub.radius, callers + RADIUS_FOLLOWED);
    assert_eq!(
        impact.limits,
        [format!(
            "Impact assessment: the depth-2 radius of hub (hub.py:1) counts the dependents \
             of {RADIUS_FOLLOWED} of its {callers} dependents, so it is a lower bound"
        )]
    );
    let json = serde_json::to_value(&impact).expect("serializes");
    assert_eq!(
        json[0]["radius_truncated"],
        serde_json::json!({"followed": RADIUS_FOLLOWED, "dependents": callers})
    );
}

#[test]
fn constructors_builders_and_typed_receivers_reach_their_methods_only() {
    let models = "class Node:\n    def accept(self, v):\n        return v\n\n\nclass Other:\n    def accept(self, v):\n        return v\n\n\nclass Shelf:\n    def __init__(self, size):\n        self.size = size\n\n    def sized(self, n) -> \"Shelf\":\n        return self\n\n    def label(self):\n        return 1\n";
    let app = "from models import Node, Shelf\n\n\ndef run(n: Node, x):\n    n.accept(1)\n    x.accept(2)\n    s = Shelf(3)\n    s.sized(4).label()\n    return Shelf(5).sized(6).label()\n";
    let tree = [("models.py", models), ("app.py", app)];
    let base = models.replace("self.size = size", "self.size = size + 0");
    let changed = tree_with_change(&tree, "models.py", &base);
    assert_eq!(
        site_places(&changed, "Shelf.__init__"),
        ["app.py:7", "app.py:9"],
        "a class called is its __init__ called"
    );
    let base = models.replace("        return 1\n", "        return 0\n");
    let changed = tree_with_change(&tree, "models.py", &base);
    assert_eq!(
        site_places(&changed, "Shelf.label"),
        ["app.py:8", "app.py:9"],
        "through what `sized` returns"
    );
    // `n: Node` calls Node's `accept`, never Other's; an untyped `x`
    // may call either.
    let base = models.replace(
        "class Other:\n    def accept(self, v):\n        return v",
        "class Other:\n    def accept(self, v):\n        return None",
    );
    let changed = tree_with_change(&tree, "models.py", &base);
    let other = changed
        .symbols
        .iter()
        .find(|s| s.symbol == "Other.accept")
        .expect("changed");
    assert!(other.sites.is_empty());
    let ambiguous: Vec<u32> = other.ambiguous.iter().map(|s| s.line).collect();
    assert_eq!(ambiguous, [6]);
}

#[test]
fn a_python_builtin_method_name_on_an_untyped_value_is_not_the_projects() {
    let models = "class Session:\n    def setdefault(self, key, value):\n        return value\n";
    let app = "from models import Session\n\n\ndef run(s: Session, d):\n    d.setdefault(1, [])\n    return s.setdefault(2, 3)\n";
    let tree = [("models.py", models), ("app.py", app)];
    let base = models.replace("return value", "return None");
    let changed = tree_with_change(&tree, "models.py", &base);
    assert_eq!(
        site_places(&changed, "Session.setdefault"),
        ["app.py:6"],
        "the typed call only: `d` is most likely a dict"
    );
    let sym = changed
        .symbols
        .iter()
        .find(|s| s.symbol == "Session.setdefault")
        .expect("changed");
    assert!(sym.ambiguous.is_empty(), "{:?}", sym.ambiguous);
}

#[test]
fn a_module_variable_of_a_declared_type_is_a_typed_receiver() {
    // flask's `g: _AppCtxGlobals = LocalProxy(…)`, re-exported by the
    // package and used as `flask.g.setdefault(…)`.
    let ctx = "class Globals:\n    def setdefault(self, key, value):\n        return value\n\n\nclass Other:\n    def setdefault(self, key, value):\n        return key\n";
    let globals = "from .ctx import Globals, Other\n\ng: Globals = make()\nother = Other()\n";
    let init = "from .globals import g as g\nfrom .globals import other as other\n";
    let app = "import pkg\nfrom pkg.globals import other\n\n\ndef run():\n    pkg.g.setdefault(1, 2)\n    other.setdefault(3, 4)\n";
    let tree = [
        ("pkg/__init__.py", init),
        ("pkg/ctx.py", ctx),
        ("pkg/globals.py", globals),
        ("app.py", app),
    ];
    let base = ctx.replacen("return value", "return None", 1);
    let changed = tree_with_change(&tree, "pkg/ctx.py", &base);
    assert_eq!(site_places(&changed, "Globals.setdefault"), ["app.py:6"]);
    let base = ctx.replacen("return key", "return None", 1);
    let changed = tree_with_change(&tree, "pkg/ctx.py", &base);
    assert_eq!(site_places(&changed, "Other.setdefault"), ["app.py:7"]);
}

#[test]
fn by_name_matches_of_a_crowded_name_are_counted_not_listed() {
    // `accept` on an untyped value: with two classes defining it the
    // site is listed; with more than MAX_LISTED_CANDIDATES it is only
    // counted.
    let class = |i: usize| format!("class C{i}:\n    def accept(self, v):\n        return v\n\n\n");
    let app = "def run(x):\n    return x.accept(1)\n";
    for (classes, listed, unlisted) in [(2, 1, 0), (blast::MAX_LISTED_CANDIDATES + 1, 0, 1)] {
        let models: String = (0..classes).map(class).collect();
        let tree = [("models.py", models.as_str()), ("app.py", app)];
        let base = models.replacen("return v", "return None", 1);
        let changed = tree_with_change(&tree, "models.py", &base);
        let c0 = changed
            .symbols
            .iter()
            .find(|s| s.symbol == "C0.accept")
            .expect("changed");
        assert!(c0.sites.is_empty());
        assert_eq!(
            (c0.ambiguous.len(), c0.ambiguous_unlisted),
            (listed, unlisted),
            "{classes} classes"
        );
    }
}

#[test]
fn a_method_of_an_outside_trait_on_an_untyped_value_is_not_unique() {
    // hyper's `impl Buf for BufList`: `front.copy_to_bytes(n)` on a
    // value of unknown type is as likely `Bytes`' as the project's one.
    let lib = "use bytes::Buf;\n\npub struct BufList;\n\nimpl Buf for BufList {\n    fn copy_to_bytes(&mut self, n: usize) -> usize {\n        n\n    }\n}\n\npub fn take(all: &mut [Other], list: &mut BufList) -> usize {\n    list.copy_to_bytes(2) + all.iter_mut().map(|front| front.copy_to_bytes(1)).sum::<usize>()\n}\n";
    let tree = [
        ("Cargo.toml", "[package]\nname = \"bufs\"\n"),
        ("src/lib.rs", lib),
    ];
    let base = lib.replace("        n\n", "        n + 0\n");
    let changed = tree_with_change(&tree, "src/lib.rs", &base);
    let sym = changed
        .symbols
        .iter()
        .find(|s| s.symbol == "BufList::copy_to_bytes")
        .expect("changed");
    let exact: Vec<(u32, u32)> = sym.sites.iter().map(|s| (s.line, s.column)).collect();
    assert_eq!(exact, [(12, 10)], "the typed call only");
    assert!(sym.ambiguous.is_empty(), "{:?}", sym.ambiguous);
    assert_eq!(sym.ambiguous_unlisted, 1, "the untyped call is counted");
}

#[test]
fn a_rust_builder_chain_reaches_the_built_types_methods() {
    let lib = "pub struct WalkBuilder;\npub struct Walk;\n\nimpl WalkBuilder {\n    pub fn new() -> WalkBuilder {\n        WalkBuilder\n    }\n\n    pub fn hidden(&mut self, yes: bool) -> &mut WalkBuilder {\n        self\n    }\n\n    pub fn build(&self) -> Walk {\n        Walk\n    }\n}\n\nimpl Walk {\n    pub fn run(&self) -> u32 {\n        1\n    }\n}\n\npub struct Other;\n\nimpl Other {\n    pub fn run(&self) -> u32 {\n        2\n    }\n}\n";
    let user = "use crate::WalkBuilder;\n\npub fn go() -> u32 {\n    let w = WalkBuilder::new().hidden(true).build();\n    w.run() + WalkBuilder::new().build().run()\n}\n";
    let tree = [
        ("Cargo.toml", "[package]\nname = \"walk\"\n"),
        ("src/lib.rs", lib),
        ("src/user.rs", user),
    ];
    let base = lib.replace("        1\n", "        0\n");
    let changed = tree_with_change(&tree, "src/lib.rs", &base);
    let run = changed
        .symbols
        .iter()
        .find(|s| s.symbol == "Walk::run")
        .expect("changed");
    let exact: Vec<u32> = run.sites.iter().map(|s| s.line).collect();
    assert_eq!(exact, [5, 5], "both chains");
    assert!(run.ambiguous.is_empty(), "{:?}", run.ambiguous);
}

#[test]
fn a_diff_without_source_files_indexes_nothing() {
    let (files, mut diff, blobs) = scenario();
    diff.files[0].path = "README.md".into();
    let impact = analyze(&files, &diff, &blobs, CacheUse::Off).expect("analysis");
    assert!(impact.symbols.is_empty());
    assert_eq!(impact.stats.files_indexed, 0);
}
