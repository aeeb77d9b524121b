//! One parse per file and side: a review whose index and checks all read
//! the same files (a changed file whose tests its crate's own macro
//! declares, a function taking a parameter more with a caller in another
//! file, a struct gaining a field that the caller lists) parses each of
//! them once, as its log says, and every check still finds what it finds.

use serde_json::Value;

use crate::code_checks::{declared, repo_with};
use crate::support::speed::speed;

const LIB: &str = "#[macro_use]\nmod macros;\npub mod desk;\npub mod shelf;\n";

const MACROS: &str = "macro_rules! shelf_test {\n    ($name:ident, $body:block) => {\n        #[test]\n        fn $name() $body\n    };\n}\n";

const DESK: &str = "use crate::shelf::{add, Book};\n\npub fn lend(shelf: &mut Vec<Book>) {\n    add(shelf, Book { title: \"b\".into(), pages: 2 });\n}\n";

fn shelf(fields: &str, params: &str, tests: &str) -> String {
    format!(
        "pub struct Book {{\n{fields}}}\n\npub fn add(shelf: &mut Vec<Book>, book: Book{params}) {{\n    shelf.push(book);\n}}\n\n#[cfg(test)]\nmod tests {{\n    use super::*;\n\n{tests}}}\n"
    )
}

const FIELDS: &str = "    pub title: String,\n    pub pages: u32,\n";
const ONE: &str = "    shelf_test!(adds_one, {\n        let mut s = Vec::new();\n        s.push(Book { title: \"a\".into(), pages: 1 });\n        assert_eq!(s.len(), 1);\n    });\n";
const TWO: &str = "    shelf_test!(adds_two, {\n        let s: Vec<Book> = Vec::new();\n        assert_eq!(s.len(), 0);\n    });\n";

#[test]
fn each_file_is_parsed_once_whatever_reads_it() {
    let repo = repo_with(
        &[
            ("Cargo.toml", "[package]\nname = \"shelf\"\n"),
            ("src/lib.rs", LIB),
            ("src/macros.rs", MACROS),
            ("src/desk.rs", DESK),
            ("src/shelf.rs", &shelf(FIELDS, "", &format!("{ONE}\n{TWO}"))),
        ],
        &[(
            "src/shelf.rs",
            &shelf(&format!("{FIELDS}    pub year: u32,\n"), ", at: usize", ONE),
        )],
        &[],
        declared(),
    );
    let run = speed(
        repo.path(),
        &["review", "--task-id", "1", "--offline", "--json", "-v"],
        &[],
    );
    assert_eq!(run.code, 50, "{}", run.transcript());
    let out: Value = serde_json::from_str(&run.stdout).unwrap();
    let found: Vec<(String, String)> = out["reviews"][0]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                format!(
                    "{} {}:{}",
                    c["check"].as_str().unwrap(),
                    c["file"].as_str().unwrap_or(""),
                    c["line"].as_u64().unwrap_or(0)
                ),
                c["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let at: Vec<&str> = found.iter().map(|(a, _)| a.as_str()).collect();
    assert_eq!(
        at,
        [
            "breaking_change src/desk.rs:4",
            "breaking_change src/desk.rs:4",
            "test_weakened src/shelf.rs:0",
        ],
        "{found:#?}"
    );
    let messages: Vec<&str> = found.iter().map(|(_, m)| m.as_str()).collect();
    assert!(
        messages
            .iter()
            .any(|m| m.contains("add (src/shelf.rs:7) has a changed signature")),
        "{messages:#?}"
    );
    assert!(
        messages
            .iter()
            .any(|m| m.contains("Book (src/shelf.rs:1) gained the field `year`")),
        "{messages:#?}"
    );
    assert!(
        messages
            .iter()
            .any(|m| m.contains("tests::adds_two") && m.contains("deleted")),
        "{messages:#?}"
    );
    // The index, the outline, the macro reader and the call sites shared
    // the trees: none was made twice.
    let trees = run
        .stderr
        .lines()
        .find(|l| l.contains("trees:"))
        .unwrap_or_else(|| panic!("no trees line in the log:\n{}", run.stderr));
    assert!(
        trees.contains("(0 of files parsed before)"),
        "{trees}\n{}",
        run.stderr
    );
}
