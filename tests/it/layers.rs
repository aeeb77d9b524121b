//! The layers of `src/` are a fact of the code, checked here from its own
//! paths (`use crate::…`, `super::…`, and `crate::…` written inline; test
//! modules apart): a part never imports a part above it, and no two files
//! import each other, directly or round a circle, inside a part or across
//! parts. The order below is the one `src/lib.rs` describes.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The parts of speed, lowest first. A part may import any part on a
/// lower line, and none on its own line or above.
const LAYERS: &[&[&str]] = &[
    &[
        "severity",
        "digest",
        "exit",
        "memory",
        "numbers",
        "paths",
        "interrupt",
    ],
    &["fsx", "process"],
    &["git"],
    &["specs"],
    &["secrets"],
    &["tasks"],
    &["syntax"],
    &["impact"],
    &["checks"],
    &["defects"],
    &["prompt"],
    &["llm"],
    &["verdict"],
    &["spec_review"],
    &["work"],
    &["ledger"],
    &["history"],
    &["fixes"],
    &["review"],
    &["hook"],
    &["render"],
    &["cli"],
    &["settings"],
    &["onboard"],
    &["app"],
];

fn layer_of(part: &str) -> Option<usize> {
    LAYERS.iter().position(|line| line.contains(&part))
}

/// One import: the file it is in, its line, and the module path it names.
struct Import {
    file: String,
    line: usize,
    module: Vec<String>,
}

#[test]
fn no_part_imports_a_part_above_it_and_no_files_import_each_other_round_a_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let modules = module_files(&src);
    let mut problems = Vec::new();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, file) in &modules {
        let text = std::fs::read_to_string(file).unwrap();
        for import in imports(&text, module, &modules, &rel(&src, file)) {
            let from = &module[0];
            let to = &import.module[0];
            if from == to {
                // Within a part: only the file graph matters.
            } else {
                match (layer_of(from), layer_of(to)) {
                    (Some(a), Some(b)) if b > a => problems.push(format!(
                        "{}:{}: {from} imports {to}, a part above it",
                        import.file, import.line
                    )),
                    (Some(a), Some(b)) if a == b => problems.push(format!(
                        "{}:{}: {from} imports {to}, beside it on one line of the layers",
                        import.file, import.line
                    )),
                    (None, _) | (_, None) if from != "lib" && from != "main" => {
                        problems.push(format!(
                            "{}:{}: {from} or {to} is in no layer of tests/it/layers.rs",
                            import.file, import.line
                        ))
                    }
                    _ => {}
                }
            }
            if let Some(target) = owning_file(&import.module, &modules) {
                let this = rel(&src, file);
                if target != this {
                    edges.entry(this).or_default().insert(target);
                }
            }
        }
    }
    for circle in circles(&edges) {
        problems.push(format!("import circle: {}", circle.join(" -> ")));
    }
    assert!(
        problems.is_empty(),
        "the layers of src/ are broken:\n{}",
        problems.join("\n")
    );
}

fn rel(src: &Path, file: &Path) -> String {
    format!("src/{}", file.strip_prefix(src).unwrap().to_string_lossy())
}

/// Every module of the crate and its file: `lib`, `review`, `review::ask`, …
fn module_files(src: &Path) -> BTreeMap<Vec<String>, PathBuf> {
    let mut out = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().and_then(|e| e.to_str()) != Some("rs") {
                continue;
            }
            let rel = path.strip_prefix(src).unwrap().with_extension("");
            let mut parts: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if parts.last().map(String::as_str) == Some("mod") {
                parts.pop();
            }
            out.insert(parts, path);
        }
    }
    out
}

/// The file that defines `module` or the item it names: its longest prefix
/// that is a module of the crate.
fn owning_file(module: &[String], modules: &BTreeMap<Vec<String>, PathBuf>) -> Option<String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    (1..=module.len())
        .rev()
        .find_map(|n| modules.get(&module[..n]))
        .map(|file| rel(&src, file))
}

/// The module paths a file names, made absolute; test modules are left out.
fn imports(
    text: &str,
    module: &[String],
    modules: &BTreeMap<Vec<String>, PathBuf>,
    file: &str,
) -> Vec<Import> {
    let code = code_only(text);
    // Test modules close the file by convention: what follows the first
    // `#[cfg(test)]` at the start of a line is left out.
    let end = code
        .match_indices("#[cfg(test)]")
        .find(|(at, _)| *at == 0 || code[..*at].ends_with('\n'))
        .map_or(code.len(), |(at, _)| at);
    let code = &code[..end];
    let mut out = Vec::new();
    for (at, path) in paths_in(code) {
        let absolute = match path.first().map(String::as_str) {
            Some("crate") => path[1..].to_vec(),
            Some("super") => {
                let mut base = module.to_vec();
                let mut rest = &path[..];
                while rest.first().map(String::as_str) == Some("super") {
                    base.pop();
                    rest = &rest[1..];
                }
                base.extend(rest.iter().cloned());
                base
            }
            Some("self") => {
                let mut base = module.to_vec();
                base.extend(path[1..].iter().cloned());
                base
            }
            _ => continue,
        };
        if absolute.is_empty() || !modules.keys().any(|m| m[0] == absolute[0]) {
            continue;
        }
        out.push(Import {
            file: file.to_string(),
            line: code[..at].matches('\n').count() + 1,
            module: absolute,
        });
    }
    out
}

/// `crate::a::b`, `super::x`, `self::y` paths in code, with where each
/// starts; `use` trees (`a::{b, c::{d, e}}`, over several lines) give one
/// path per leaf.
fn paths_in(code: &str) -> Vec<(usize, Vec<String>)> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let starts_word = i == 0
            || !(chars[i - 1].is_alphanumeric() || chars[i - 1] == '_' || chars[i - 1] == ':');
        let head = ["crate", "super", "self"].iter().find(|h| {
            starts_word
                && chars[i..].starts_with(&h.chars().collect::<Vec<_>>())
                && chars.get(i + h.len()) == Some(&':')
                && chars.get(i + h.len() + 1) == Some(&':')
        });
        let Some(head) = head else {
            i += 1;
            continue;
        };
        let mut leaves = Vec::new();
        let end = use_tree(&chars, i, vec![], &mut leaves);
        for leaf in leaves {
            if leaf.first().map(String::as_str) == Some(*head) {
                out.push((i, leaf));
            }
        }
        i = end.max(i + 1);
    }
    out
}

/// Reads a path or use tree starting at `i` below `prefix`, pushing each
/// leaf; returns where it ends.
fn use_tree(
    chars: &[char],
    mut i: usize,
    prefix: Vec<String>,
    leaves: &mut Vec<Vec<String>>,
) -> usize {
    let skip_space = |mut i: usize| {
        while i < chars.len() && chars[i].is_whitespace() {
            i += 1;
        }
        i
    };
    let mut path = prefix;
    loop {
        i = skip_space(i);
        if i < chars.len() && chars[i] == '{' {
            i += 1;
            loop {
                i = skip_space(i);
                if i >= chars.len() {
                    return i;
                }
                if chars[i] == '}' {
                    return i + 1;
                }
                if chars[i] == ',' {
                    i += 1;
                    continue;
                }
                let before = i;
                i = use_tree(chars, i, path.clone(), leaves);
                if i == before {
                    i += 1;
                }
            }
        }
        let start = i;
        while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
            i += 1;
        }
        let name: String = chars[start..i].iter().collect();
        if !name.is_empty() && (name != "self" || path.is_empty()) {
            path.push(name);
        }
        if chars.get(i) == Some(&':') && chars.get(i + 1) == Some(&':') {
            i += 2;
            continue;
        }
        if chars.get(i) == Some(&'*') {
            i += 1;
        }
        if !path.is_empty() {
            leaves.push(path);
        }
        return i;
    }
}

/// The text with comments, strings and char literals blanked, lines kept.
fn code_only(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            continue;
        }
        if c == '/' && next == Some('*') {
            i += 2;
            while i + 1 < chars.len() && !(chars[i] == '*' && chars[i + 1] == '/') {
                if chars[i] == '\n' {
                    out.push('\n');
                }
                i += 1;
            }
            i += 2;
            continue;
        }
        if c == 'r' && (next == Some('"') || next == Some('#')) && !prev_is_ident(&chars, i) {
            let mut j = i + 1;
            let mut hashes = 0;
            while j < chars.len() && chars[j] == '#' {
                hashes += 1;
                j += 1;
            }
            if j < chars.len() && chars[j] == '"' {
                j += 1;
                loop {
                    if j >= chars.len() {
                        break;
                    }
                    if chars[j] == '"'
                        && chars[j + 1..]
                            .iter()
                            .take(hashes)
                            .filter(|c| **c == '#')
                            .count()
                            == hashes
                    {
                        j += 1 + hashes;
                        break;
                    }
                    if chars[j] == '\n' {
                        out.push('\n');
                    }
                    j += 1;
                }
                i = j;
                out.push_str("\"\"");
                continue;
            }
        }
        if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    i += 1;
                }
                if chars.get(i) == Some(&'\n') {
                    out.push('\n');
                }
                i += 1;
            }
            i += 1;
            out.push_str("\"\"");
            continue;
        }
        if c == '\'' {
            // A char literal ('x', '\n', '\u{..}'); a lifetime has no
            // closing quote right after its name.
            if next == Some('\\') {
                let close = chars[i + 2..].iter().position(|c| *c == '\'');
                if let Some(p) = close {
                    i += 2 + p + 1;
                    out.push_str("' '");
                    continue;
                }
            } else if chars.get(i + 2) == Some(&'\'') {
                i += 3;
                out.push_str("' '");
                continue;
            }
        }
        out.push(c);
        i += 1;
    }
    out
}

fn prev_is_ident(chars: &[char], i: usize) -> bool {
    i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_')
}

/// Every circle of the file graph (its strongly connected components of
/// more than one file), each as the files in order.
fn circles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    // Tarjan's algorithm, iteratively simple enough for a few hundred files.
    struct State<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        next: usize,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        s.index.insert(v, s.next);
        s.low.insert(v, s.next);
        s.next += 1;
        s.stack.push(v);
        s.on_stack.insert(v);
        if let Some(targets) = s.edges.get(v) {
            for w in targets {
                let w = w.as_str();
                if !s.index.contains_key(w) {
                    visit(s, w);
                    let low = s.low[v].min(s.low[w]);
                    s.low.insert(v, low);
                } else if s.on_stack.contains(w) {
                    let low = s.low[v].min(s.index[w]);
                    s.low.insert(v, low);
                }
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.out.push(component);
            }
        }
    }
    let mut state = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        next: 0,
        out: Vec::new(),
    };
    let nodes: Vec<&str> = edges.keys().map(String::as_str).collect();
    for v in nodes {
        if !state.index.contains_key(v) {
            visit(&mut state, v);
        }
    }
    state.out
}

#[test]
fn the_checker_reads_paths_the_way_the_code_writes_them() {
    let lines = [
        (
            "use crate::git::{self, Diff, short};",
            vec!["crate::git", "crate::git::Diff", "crate::git::short"],
        ),
        (
            "    let x = crate::verdict::decide(&a);",
            vec!["crate::verdict::decide"],
        ),
        (
            "use super::super::{Event, Events};",
            vec!["super::super::Event", "super::super::Events"],
        ),
        (
            "use super::{macros, skips};",
            vec!["super::macros", "super::skips"],
        ),
        (
            "use super::{\n    a::{B, c::D},\n    e,\n};",
            vec!["super::a::B", "super::a::c::D", "super::e"],
        ),
        ("use crate::x::*;", vec!["crate::x"]),
        ("let s = \"crate::app::x\"; // crate::app", vec![]),
    ];
    for (text, expected) in lines {
        let code = code_only(text);
        let found: Vec<String> = paths_in(&code).iter().map(|(_, p)| p.join("::")).collect();
        assert_eq!(found, expected, "{text}");
    }
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    edges.entry("a".into()).or_default().insert("b".into());
    edges.entry("b".into()).or_default().insert("c".into());
    edges.entry("c".into()).or_default().insert("a".into());
    edges.entry("c".into()).or_default().insert("d".into());
    assert_eq!(circles(&edges), vec![vec!["a", "b", "c"]]);
}
