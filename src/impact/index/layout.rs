//! Where each file sits: crates and packages from the manifests and the
//! folders, module paths, and files added to the index (ghosts of removed
//! definitions included).

use super::*;

/// A Rust package manifest: directory (relative, "" for the root), name,
/// and the crate roots it declares where Cargo would not look for them.
#[derive(Debug, Clone)]
pub struct Manifest {
    pub dir: String,
    pub name: String,
    pub roots: Vec<Root>,
}

/// A crate root a manifest declares outside Cargo's conventional places
/// (`[[bin]] path = "crates/core/main.rs"`, as ripgrep has it): the files
/// in its folder and below are its modules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    /// Relative to the manifest's directory.
    pub path: String,
    pub kind: RootKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RootKind {
    Lib,
    /// A binary, by name.
    Bin(String),
}

impl Root {
    /// Whether Cargo's conventions already place a root at `path`
    /// (`src/lib.rs`, `src/main.rs`, `src/bin/…`, `tests/…`, `benches/…`,
    /// `examples/…`), which the layout reads without the manifest.
    pub fn conventional(path: &str) -> bool {
        let path = path.trim_start_matches("./");
        matches!(path, "src/lib.rs" | "src/main.rs")
            || ["src/bin/", "tests/", "benches/", "examples/"]
                .iter()
                .any(|d| path.starts_with(d))
    }

    fn dir(&self) -> &str {
        self.path.rsplit_once('/').map_or("", |(d, _)| d)
    }
}

impl Manifest {
    /// The target and module segments of the file at `rel` (relative to
    /// the manifest's directory) when it lies under a declared root's
    /// folder: the deepest such root.
    fn declared_module<'p>(&self, rel: &'p str, has_lib: bool) -> Option<(String, Vec<&'p str>)> {
        let root = self
            .roots
            .iter()
            .filter(|r| {
                let dir = r.dir();
                rel == r.path || (!dir.is_empty() && rel.starts_with(&format!("{dir}/")))
            })
            .max_by_key(|r| r.dir().len())?;
        let has_lib = has_lib || self.roots.iter().any(|r| r.kind == RootKind::Lib);
        let target = match &root.kind {
            RootKind::Lib => "lib".to_string(),
            RootKind::Bin(name) if has_lib => format!("bin/{name}"),
            // A package of binaries only: its root is the crate, as
            // `src/main.rs` is without a `src/lib.rs`.
            RootKind::Bin(_) => "lib".to_string(),
        };
        if rel == root.path {
            return Some((target, Vec::new()));
        }
        let inside = rel[root.dir().len()..].trim_end_matches(".rs");
        Some((target, module_segments(inside)))
    }
}

/// What module paths are computed from: the crates' manifests, the
/// directories that are Python packages and those holding a `src/lib.rs`.
/// The head tree has one layout and the base side of a diff another: a
/// deleted or renamed file had its module path in the base layout.
pub struct Layout {
    /// Deepest directory first, so a file maps to its innermost crate.
    manifests: Vec<Manifest>,
    py_packages: HashSet<String>,
    has_lib: HashSet<String>,
}

impl Layout {
    /// The layout of a tree holding `paths`.
    pub fn new<'a>(paths: impl IntoIterator<Item = &'a str>, manifests: &[Manifest]) -> Layout {
        let mut has_lib = HashSet::new();
        let mut inits: HashSet<&str> = HashSet::new();
        let mut holding_py: HashSet<&str> = HashSet::new();
        for p in paths {
            // A stub package (`__init__.pyi` alone, as in a bundled
            // typeshed) is a package all the same.
            if let Some(dir) = p
                .strip_suffix("/__init__.py")
                .or_else(|| p.strip_suffix("/__init__.pyi"))
            {
                inits.insert(dir);
            }
            if p.ends_with(".py") {
                let mut d = p;
                while let Some((parent, _)) = d.rsplit_once('/') {
                    if !holding_py.insert(parent) {
                        break;
                    }
                    d = parent;
                }
            }
            if let Some(prefix) = p.strip_suffix("src/lib.rs") {
                has_lib.insert(prefix.to_string());
            }
        }
        let py_packages = python_packages(&inits, &holding_py);
        let mut manifests = manifests.to_vec();
        manifests.sort_by_key(|m| std::cmp::Reverse(m.dir.len()));
        Layout {
            manifests,
            py_packages,
            has_lib,
        }
    }
}

/// The directories that are Python packages: those holding an
/// `__init__.py` or `__init__.pyi`, and namespace packages (PEP 420): a
/// directory without one, named like a module, holding Python source
/// below it, inside a package or right under a `src/` folder (flask's
/// `src/flask/sansio/`). Other folders without an `__init__` (`tests/`,
/// a stub tree's root) hold top-level modules.
fn python_packages(inits: &HashSet<&str>, holding_py: &HashSet<&str>) -> HashSet<String> {
    let mut dirs: Vec<&str> = inits.iter().chain(holding_py).copied().collect();
    dirs.sort_by_key(|d| (d.matches('/').count(), *d));
    dirs.dedup();
    let mut packages: HashSet<String> = HashSet::new();
    for d in dirs {
        let (parent, name) = d.rsplit_once('/').unwrap_or(("", d));
        let namespace = || {
            is_identifier(name)
                && (packages.contains(parent) || parent == "src" || parent.ends_with("/src"))
        };
        if inits.contains(d) || namespace() {
            packages.insert(d.to_string());
        }
    }
    packages
}

fn is_identifier(name: &str) -> bool {
    name.chars()
        .next()
        .is_some_and(|c| c == '_' || c.is_alphabetic())
        && name.chars().all(|c| c == '_' || c.is_alphanumeric())
}

/// Input for one file.
pub struct Source {
    pub path: String,
    pub lang: Lang,
    pub syms: Arc<FileSymbols>,
    /// Not parsed yet: `syms` is empty until a later round.
    pub pending: bool,
}

/// A Rust file that is a crate root of its own next to `src/`:
/// `tests/cli.rs`, `benches/speed.rs`, `examples/demo.rs`.
fn is_side_target_root(path: &str) -> bool {
    let mut parts = path.rsplit('/');
    let file = parts.next().unwrap_or("");
    file.ends_with(".rs") && matches!(parts.next(), Some("tests" | "benches" | "examples"))
}

/// A crate root outside `src/`: `tests/a.rs` or `tests/it/main.rs` (and
/// the same under `benches/` and `examples/`).
pub(super) fn is_side_crate_file(path: &str) -> bool {
    if is_side_target_root(path) {
        return true;
    }
    let mut parts = path.rsplit('/');
    parts.next() == Some("main.rs")
        && parts.next().is_some()
        && matches!(parts.next(), Some("tests" | "benches" | "examples"))
}

/// `a/b/mod` → `[a, b]`; `/a/b` → `[a, b]`.
fn module_segments(path: &str) -> Vec<&str> {
    let mut segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    if segs.last() == Some(&"mod") {
        segs.pop();
    }
    segs
}

impl Index {
    fn unit_id(&mut self, name: &str, lang: Lang) -> u32 {
        if let Some(i) = self
            .units
            .iter()
            .position(|u| u.name == name && u.lang == lang)
        {
            return i as u32;
        }
        self.units.push(Unit {
            name: name.to_string(),
            lang,
        });
        (self.units.len() - 1) as u32
    }

    fn ensure_module(&mut self, key: &str, unit: u32, parent: Option<ModId>, name: &str) -> ModId {
        if let Some(&m) = self.module_keys.get(key) {
            return m;
        }
        let id = self.modules.len() as ModId;
        let root = parent.map_or(id, |p| self.modules[p as usize].root);
        self.modules.push(Module {
            key: key.to_string(),
            unit,
            root,
            parent,
            children: Vec::new(),
            by_alias: HashMap::new(),
            globs: Vec::new(),
            package: false,
        });
        if let Some(p) = parent {
            self.modules[p as usize]
                .children
                .push((name.to_string(), id));
        }
        self.module_keys.insert(key.to_string(), id);
        id
    }

    /// Module path of a Rust file: (crate, target root key, module names).
    fn rust_module(&mut self, path: &str, layout: &Layout) -> ModId {
        let manifest = layout
            .manifests
            .iter()
            .find(|m| m.dir.is_empty() || path.starts_with(&format!("{}/", m.dir)));
        let (dir, crate_name) = match manifest {
            Some(m) => (m.dir.as_str(), m.name.replace('-', "_")),
            None => ("", "crate".to_string()),
        };
        let rel = if dir.is_empty() {
            path
        } else {
            &path[dir.len() + 1..]
        };
        let prefix = if dir.is_empty() {
            String::new()
        } else {
            format!("{dir}/")
        };
        let stem = rel.trim_end_matches(".rs");
        let declared =
            manifest.and_then(|m| m.declared_module(rel, layout.has_lib.contains(&prefix)));
        let (target, segs): (String, Vec<&str>) = if let Some(found) = declared {
            found
        } else if let Some(inside) = stem.strip_prefix("src/") {
            if inside == "lib" {
                ("lib".to_string(), Vec::new())
            } else if inside == "main" {
                let t = if layout.has_lib.contains(&prefix) {
                    "main"
                } else {
                    "lib"
                };
                (t.to_string(), Vec::new())
            } else if let Some(bin) = inside.strip_prefix("bin/") {
                let name = bin.split('/').next().unwrap_or(bin);
                (format!("bin/{name}"), module_segments(&bin[name.len()..]))
            } else {
                ("lib".to_string(), module_segments(inside))
            }
        } else {
            let top = rel.split('/').next().unwrap_or("");
            let mut segs = module_segments(stem.get(top.len()..).unwrap_or(""));
            // `tests/it/main.rs` is the root of test crate `it`: its `mod x;`
            // is `tests/it/x.rs`, as `mod.rs` would have it.
            if segs.len() == 2 && segs[1] == "main" {
                segs.pop();
            }
            (top.to_string(), segs)
        };
        // Two packages of one name (vendored copies, unrelated projects in
        // one repository) are still two crates: merged, each would see the
        // other's items and imports as its own.
        let homonym = manifest.is_some_and(|m| {
            layout
                .manifests
                .iter()
                .any(|o| o.name == m.name && o.dir != m.dir)
        });
        let crate_key = if homonym {
            format!("{crate_name}@{dir}")
        } else {
            crate_name.clone()
        };
        let unit = self.unit_id(&crate_key, Lang::Rust);
        let root_key = format!("rs:{crate_key}:{target}");
        let root = self.ensure_module(&root_key, unit, None, "");
        if target == "lib" {
            self.crates.entry(crate_name).or_insert(root);
        }
        let mut cur = root;
        let mut key = root_key;
        for seg in segs {
            key.push_str("::");
            key.push_str(seg);
            cur = self.ensure_module(&key.clone(), unit, Some(cur), seg);
        }
        cur
    }

    fn python_module(&mut self, path: &str, layout: &Layout) -> ModId {
        let packages = &layout.py_packages;
        let stem = path.trim_end_matches(".pyi").trim_end_matches(".py");
        let (dir, file) = match stem.rsplit_once('/') {
            Some((d, f)) => (d, f),
            None => ("", stem),
        };
        // Walk up while the directory is a package.
        let mut pkgs: Vec<&str> = Vec::new();
        let mut d = dir;
        while !d.is_empty() && packages.contains(d) {
            let (parent, name) = match d.rsplit_once('/') {
                Some((p, n)) => (p, n),
                None => ("", d),
            };
            pkgs.push(name);
            d = parent;
        }
        pkgs.reverse();
        let is_init = file == "__init__";
        let mut segs = pkgs.clone();
        if !is_init {
            segs.push(file);
        }
        let unit_name = match pkgs.first() {
            Some(top) => top.to_string(),
            None if dir.is_empty() => file.to_string(),
            None => dir.to_string(),
        };
        let unit = self.unit_id(&unit_name, Lang::Python);
        let mut cur: Option<ModId> = None;
        let mut key = String::from("py:");
        for (i, seg) in segs.iter().enumerate() {
            if i > 0 {
                key.push('.');
            }
            key.push_str(seg);
            cur = Some(self.ensure_module(&key.clone(), unit, cur, seg));
        }
        let m = match cur {
            Some(m) => m,
            None => self.ensure_module("py:", unit, None, ""),
        };
        if is_init {
            self.modules[m as usize].package = true;
        }
        m
    }

    pub(super) fn add_file(&mut self, src: Source, layout: &Layout, ghost: bool) -> u32 {
        let module = self.module_at(&src.path, src.lang, layout);
        let unit = self.modules[module as usize].unit;
        let file_id = self.files.len() as u32;
        let syms = src.syms;
        let n = syms.defs.len();
        let mut def_mod = vec![module; n];
        let mut inner_mod = vec![None; n];
        // `mod support;` at the top of `tests/a.rs` (a crate root of its
        // own) names the file `tests/support.rs` or `tests/support/mod.rs`,
        // which every such root shares: its module, not one nested in `a`.
        let side_root = src.lang == Lang::Rust && is_side_target_root(&src.path);
        let mut has_items = vec![false; n];
        for d in &syms.defs {
            if let Some(p) = d.parent {
                has_items[p as usize] = true;
            }
        }
        // Parents come before children in document order.
        for i in 0..n {
            let d = &syms.defs[i];
            let m = match d.parent {
                Some(p) => inner_mod[p as usize].unwrap_or(def_mod[p as usize]),
                None => module,
            };
            def_mod[i] = m;
            if d.kind == Kind::Module {
                let outer = match self.modules[m as usize].parent {
                    Some(up) if side_root && d.parent.is_none() && !has_items[i] => up,
                    _ => m,
                };
                let key = format!(
                    "{}{}{}",
                    self.modules[outer as usize].key,
                    sep(src.lang),
                    d.name
                );
                inner_mod[i] = Some(self.ensure_module(&key, unit, Some(outer), &d.name));
            }
        }
        for (i, imp) in syms.imports.iter().enumerate() {
            let m = match imp.scope {
                Some(s) => inner_mod[s as usize].unwrap_or(def_mod[s as usize]),
                None => module,
            };
            let module = &mut self.modules[m as usize];
            if imp.glob {
                module.globs.push((file_id, i as u32));
            } else if !imp.alias.is_empty() {
                module
                    .by_alias
                    .entry(imp.alias.clone())
                    .or_default()
                    .push((file_id, i as u32));
            }
        }
        if !ghost {
            for (i, d) in syms.defs.iter().enumerate() {
                let id = DefId {
                    file: file_id,
                    def: i as u32,
                };
                let map = if d.container.is_some() {
                    &mut self.members
                } else {
                    &mut self.items
                };
                map.entry(d.name.clone()).or_default().push(id);
            }
            for imp in &syms.imports {
                if let Some(last) = imp.path.last() {
                    if !imp.glob && !imp.alias.is_empty() && imp.alias != *last {
                        let list = self.aliases.entry(last.clone()).or_default();
                        if !list.contains(&imp.alias) {
                            list.push(imp.alias.clone());
                        }
                    }
                }
            }
        }
        let test = is_test_path(&src.path);
        self.files.push(File {
            path: src.path,
            lang: src.lang,
            unit,
            module,
            syms,
            test,
            ghost,
            pending: src.pending,
            def_mod,
            inner_mod,
        });
        file_id
    }

    fn module_at(&mut self, path: &str, lang: Lang, layout: &Layout) -> ModId {
        match lang {
            Lang::Rust => self.rust_module(path, layout),
            Lang::Python => self.python_module(path, layout),
        }
    }

    /// The module a file at `path` had on the base side (`base` is the base
    /// layout), created when no head file holds that module path any more,
    /// so references still using the path resolve to it.
    pub fn base_module(&mut self, path: &str, lang: Lang, base: &Layout) -> ModId {
        self.module_at(path, lang, base)
    }

    /// Whether a file of the head tree has module `m` as its own.
    pub fn module_has_file(&self, m: ModId) -> bool {
        self.files.iter().any(|f| !f.ghost && f.module == m)
    }

    /// Add definitions that the diff removed, from the base-side symbols of
    /// `path` (placed by the base layout), so references that still name
    /// them resolve to them.
    pub fn add_ghosts(
        &mut self,
        path: &str,
        lang: Lang,
        syms: Arc<FileSymbols>,
        defs: &[u32],
        base: &Layout,
    ) -> u32 {
        let file = self.add_file(
            Source {
                path: path.to_string(),
                lang,
                syms,
                pending: false,
            },
            base,
            true,
        );
        for &i in defs {
            let d = &self.files[file as usize].syms.defs[i as usize];
            let id = DefId { file, def: i };
            let map = if d.container.is_some() {
                &mut self.members
            } else {
                &mut self.items
            };
            map.entry(d.name.clone()).or_default().push(id);
        }
        file
    }
}
