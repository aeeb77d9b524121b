//! Where a Python project's code is imported from. A command check runs in
//! a temporary checkout of the commit under review, but a Python
//! environment with the project installed in editable mode (`pip install
//! -e .`, the usual way to work on one) imports the package from the
//! working tree it was installed from: the tests would run the working
//! tree's code, not the commit's. `init` suggests a pytest that puts the
//! checkout's code first (`-o pythonpath=src`); `doctor` names an editable
//! install of this repository in the environment a check runs in.
//!
//! The environment is found from the program itself: a Python script's
//! `#!` line names its interpreter, whose prefix holds
//! `lib/python*/site-packages`, where each installed distribution's
//! `*.dist-info/direct_url.json` (PEP 610) says whether it was installed
//! editable, and from where.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use super::detect;

/// The configuration files where pytest's `pythonpath` may be set.
const PYTEST_CONFIGS: &[&str] = &["pyproject.toml", "pytest.ini", "setup.cfg", "tox.ini"];

/// The most bytes read of a configuration file, a `#!` line or a
/// `direct_url.json`.
const READ_LIMIT: u64 = 1 << 20;

/// The folder a checkout's Python code is imported from, for pytest's
/// `-o pythonpath=…`: `src` for a src layout (a package or module under
/// `src/`), `.` otherwise; None when the project's pytest configuration
/// sets `pythonpath` itself (it decides, relative to the checkout).
pub fn import_root(root: &Path) -> Option<&'static str> {
    let sets_pythonpath = PYTEST_CONFIGS.iter().any(|name| {
        read_limited(&root.join(name)).is_some_and(|text| {
            text.lines()
                .any(|line| line.trim_start().starts_with("pythonpath"))
        })
    });
    if sets_pythonpath {
        return None;
    }
    Some(if src_layout(root) { "src" } else { "." })
}

/// `src/` holds a package (a folder with `__init__.py`) or a module.
fn src_layout(root: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(root.join("src")) else {
        return false;
    };
    entries.flatten().any(|entry| {
        let path = entry.path();
        if path.is_dir() {
            path.join("__init__.py").is_file()
        } else {
            path.extension().is_some_and(|e| e == "py")
        }
    })
}

/// A distribution installed in editable mode from inside the repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Editable {
    /// Its name, as its `.dist-info` folder spells it.
    pub name: String,
    /// Where it was installed from (a folder of the working tree).
    pub from: PathBuf,
    /// The environment's `site-packages` it is recorded in.
    pub site_packages: PathBuf,
}

/// The distributions installed editable from inside `root` in the Python
/// environment `program` runs with, when `program` is a Python script (its
/// `#!` line names a Python) or a Python interpreter. Empty for anything
/// else (a compiled tool such as ruff imports nothing of the project).
pub fn editable_installs(
    program: &Path,
    root: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Vec<Editable> {
    let Some(interpreter) = interpreter(program, env) else {
        return Vec::new();
    };
    let Ok(root) = root.canonicalize() else {
        return Vec::new();
    };
    // The interpreter's prefix: the folder above its `bin` (a venv, pyenv,
    // /usr). The link is not followed: a venv's python links to the base
    // interpreter, and the venv is what holds the install.
    let Some(prefix) = interpreter.parent().and_then(Path::parent) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for lib in ["lib", "lib64"] {
        let Ok(versions) = std::fs::read_dir(prefix.join(lib)) else {
            continue;
        };
        for version in versions.flatten() {
            if !version.file_name().to_string_lossy().starts_with("python") {
                continue;
            }
            let site = version.path().join("site-packages");
            found.extend(editable_in(&site, &root));
        }
    }
    found.sort_by(|a, b| a.name.cmp(&b.name));
    found.dedup_by(|a, b| a.name == b.name && a.from == b.from);
    found
}

/// The Python a program runs with: itself when it is one (`python3`,
/// `python3.11`), else the interpreter its `#!` line names (through
/// `/usr/bin/env NAME`, found on PATH).
fn interpreter(program: &Path, env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let name = program.file_name()?.to_string_lossy().into_owned();
    if name.starts_with("python") {
        return Some(program.to_path_buf());
    }
    let mut head = Vec::new();
    std::fs::File::open(program)
        .ok()?
        .take(512)
        .read_to_end(&mut head)
        .ok()?;
    let line = head.split(|b| *b == b'\n').next()?;
    let line = std::str::from_utf8(line).ok()?.strip_prefix("#!")?.trim();
    let mut words = line.split_whitespace();
    let first = PathBuf::from(words.next()?);
    let python = if first.file_name().is_some_and(|n| n == "env") {
        let named = words.find(|w| !w.starts_with('-'))?;
        detect::which(named, env)?
    } else {
        first
    };
    python
        .file_name()?
        .to_string_lossy()
        .starts_with("python")
        .then_some(python)
}

/// The editable installs recorded in `site` whose source is inside `root`.
fn editable_in(site: &Path, root: &Path) -> Vec<Editable> {
    let Ok(entries) = std::fs::read_dir(site) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for entry in entries.flatten() {
        let folder = entry.file_name().to_string_lossy().into_owned();
        let Some(stem) = folder.strip_suffix(".dist-info") else {
            continue;
        };
        let Some(text) = read_limited(&entry.path().join("direct_url.json")) else {
            continue;
        };
        let Ok(record) = serde_json::from_str::<serde_json::Value>(&text) else {
            continue;
        };
        let editable = record
            .pointer("/dir_info/editable")
            .and_then(serde_json::Value::as_bool)
            == Some(true);
        let Some(from) = record
            .get("url")
            .and_then(serde_json::Value::as_str)
            .and_then(file_url_path)
        else {
            continue;
        };
        let from = from.canonicalize().unwrap_or(from);
        if editable && from.starts_with(root) {
            found.push(Editable {
                name: stem.split('-').next().unwrap_or(stem).to_string(),
                from,
                site_packages: site.to_path_buf(),
            });
        }
    }
    found
}

/// The path of a `file://` URL, its %-escapes decoded.
fn file_url_path(url: &str) -> Option<PathBuf> {
    let rest = url.strip_prefix("file://")?;
    // file://host/path: only the local host is a path here.
    let path = match rest.strip_prefix("localhost") {
        Some(path) => path,
        None => rest,
    };
    if !path.starts_with('/') {
        return None;
    }
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Some(PathBuf::from(String::from_utf8(out).ok()?))
}

fn read_limited(path: &Path) -> Option<String> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(READ_LIMIT)
        .read_to_end(&mut bytes)
        .ok()?;
    String::from_utf8(bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_urls() {
        assert_eq!(
            file_url_path("file:///tmp/my%20shop"),
            Some(PathBuf::from("/tmp/my shop"))
        );
        assert_eq!(
            file_url_path("file://localhost/srv/shop"),
            Some(PathBuf::from("/srv/shop"))
        );
        assert_eq!(file_url_path("https://example.com/x"), None);
        assert_eq!(file_url_path("file://server/share"), None);
        assert_eq!(file_url_path("file:///a%2"), Some(PathBuf::from("/a%2")));
    }

    #[test]
    fn the_import_root_follows_the_layout_and_the_projects_own_setting() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        assert_eq!(import_root(root), Some("."));
        std::fs::create_dir_all(root.join("src/shop")).unwrap();
        assert_eq!(import_root(root), Some("."));
        std::fs::write(root.join("src/shop/__init__.py"), "").unwrap();
        assert_eq!(import_root(root), Some("src"));
        std::fs::write(
            root.join("pyproject.toml"),
            "[tool.pytest.ini_options]\npythonpath = [\"src\"]\n",
        )
        .unwrap();
        assert_eq!(import_root(root), None);
    }
}
