//! Which changed source file a changed test file tests, by module and file
//! name: `src/foo.rs` with `tests/foo.rs` or `src/foo/tests.rs`,
//! `pkg/x.py` with `tests/test_x.py`, `book.go` with `book_test.go`,
//! `web/cart.ts` with `web/cart.spec.ts`, `tokio/src/sync/broadcast.rs`
//! with `tokio/tests/sync_broadcast.rs`. The review order puts each test
//! right after its source file, so a review in parts shows code together
//! with its tests. Pure functions of paths.

/// File stems that name their directory's module rather than one of their
/// own.
const MODULE_FILES: &[&str] = &["mod", "lib", "main", "__init__", "index", "tests", "test"];
/// Directories that say nothing of the module a file belongs to.
const GENERIC_DIRS: &[&str] = &["src", "lib", "tests", "test", "__tests__", "pkg", "spec"];

/// For each test of `tests` (indices into `paths`), the source of `sources`
/// it tests, if any; `sources` in review order, the first of equally good
/// matches chosen.
pub fn pair(paths: &[&str], sources: &[usize], tests: &[usize]) -> Vec<(usize, Option<usize>)> {
    let keys: Vec<(usize, String)> = sources
        .iter()
        .map(|&s| (s, source_key(paths[s])))
        .filter(|(_, k)| k.len() >= 3)
        .collect();
    tests
        .iter()
        .map(|&t| {
            let key = test_key(paths[t]);
            let mut best: Option<(usize, usize)> = None;
            for (s, source) in &keys {
                let score = match_score(&key, source);
                if score == 0 {
                    continue;
                }
                let score = score * 100 + shared_dirs(paths[t], paths[*s]).min(99);
                if best.is_none_or(|(b, _)| score > b) {
                    best = Some((score, *s));
                }
            }
            (t, best.map(|(_, s)| s))
        })
        .collect()
}

/// 3: the same module name; 2: the test's name holds it as whole words
/// (`sync_broadcast_weak` holds `broadcast`); 0: unrelated.
fn match_score(test: &str, source: &str) -> usize {
    if test == source {
        return 3;
    }
    let words: Vec<&str> = test.split(['_', '-', '.']).collect();
    let wanted: Vec<&str> = source.split(['_', '-', '.']).collect();
    if words.windows(wanted.len()).any(|w| w == wanted.as_slice()) {
        2
    } else {
        0
    }
}

/// Directory names both paths hold, beyond the generic ones.
fn shared_dirs(a: &str, b: &str) -> usize {
    let dirs = |p: &str| -> Vec<String> {
        let mut parts: Vec<String> = p.split('/').map(str::to_ascii_lowercase).collect();
        parts.pop();
        parts
    };
    let (a, b) = (dirs(a), dirs(b));
    a.iter()
        .filter(|d| !GENERIC_DIRS.contains(&d.as_str()) && b.contains(d))
        .count()
}

fn stem_and_dir(path: &str) -> (String, String) {
    let lower = path.to_ascii_lowercase();
    let mut parts = lower.rsplit('/');
    let name = parts.next().unwrap_or_default().to_string();
    let dir = parts.next().unwrap_or_default().to_string();
    let stem = name.split('.').next().unwrap_or_default().to_string();
    (stem, dir)
}

/// A source file's module name: its stem, or its directory's for
/// `mod.rs`, `__init__.py`, `index.ts`, ….
fn source_key(path: &str) -> String {
    let (stem, dir) = stem_and_dir(path);
    if MODULE_FILES.contains(&stem.as_str()) {
        dir
    } else {
        stem
    }
}

/// A test file's module name: its stem without `test_`, `_test`, `_tests`,
/// `_spec` (and `.test`/`.spec`, gone with the extension), or its
/// directory's for `tests.rs`, `__init__.py`, ….
fn test_key(path: &str) -> String {
    let (stem, dir) = stem_and_dir(path);
    let mut key = stem.as_str();
    for prefix in ["test_", "tests_"] {
        key = key.strip_prefix(prefix).unwrap_or(key);
    }
    for suffix in ["_tests", "_test", "_spec"] {
        key = key.strip_suffix(suffix).unwrap_or(key);
    }
    if MODULE_FILES.contains(&key) || key.is_empty() {
        dir
    } else {
        key.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paired(paths: &[&str], sources: &[usize], tests: &[usize]) -> Vec<(String, String)> {
        pair(paths, sources, tests)
            .into_iter()
            .map(|(t, s)| {
                (
                    paths[t].to_string(),
                    s.map_or("-".to_string(), |s| paths[s].to_string()),
                )
            })
            .collect()
    }

    #[test]
    fn tests_pair_with_their_module() {
        let paths = [
            "src/shelf.rs",
            "pkg/catalog.py",
            "tokio/src/sync/broadcast.rs",
            "src/render/mod.rs",
            "web/cart.ts",
            "book.go",
            "tests/shelf.rs",
            "tests/test_catalog.py",
            "tokio/tests/sync_broadcast_weak.rs",
            "src/render/tests.rs",
            "web/cart.spec.ts",
            "book_test.go",
            "tests/regression.rs",
        ];
        let got = paired(&paths, &[0, 1, 2, 3, 4, 5], &[6, 7, 8, 9, 10, 11, 12]);
        let want = [
            ("tests/shelf.rs", "src/shelf.rs"),
            ("tests/test_catalog.py", "pkg/catalog.py"),
            (
                "tokio/tests/sync_broadcast_weak.rs",
                "tokio/src/sync/broadcast.rs",
            ),
            ("src/render/tests.rs", "src/render/mod.rs"),
            ("web/cart.spec.ts", "web/cart.ts"),
            ("book_test.go", "book.go"),
            ("tests/regression.rs", "-"),
        ];
        let want: Vec<(String, String)> = want
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn the_closest_of_two_modules_of_the_same_name_wins() {
        let paths = [
            "crates/printer/src/json.rs",
            "crates/core/json.rs",
            "crates/core/tests/json.rs",
        ];
        assert_eq!(
            paired(&paths, &[0, 1], &[2]),
            [(
                "crates/core/tests/json.rs".to_string(),
                "crates/core/json.rs".to_string()
            )]
        );
        // An exact name beats a name held as a word.
        let paths = ["src/sync.rs", "src/async_sync.rs", "tests/async_sync.rs"];
        assert_eq!(paired(&paths, &[0, 1], &[2])[0].1, "src/async_sync.rs");
    }
}
