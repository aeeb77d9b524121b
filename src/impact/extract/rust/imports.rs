//! Rust `use` trees and `mod` declarations: the imports of a file and the
//! modules it declares, with their paths.

use super::*;

/// A `use` tree flattened: (path, local name, glob, line and byte of the
/// name in the text parsed).
type UseLeaf = (Vec<String>, String, bool, u32, usize);

/// Flatten a `use` tree into its leaves.
pub(super) fn use_tree(node: Node, src: &str, prefix: &[String], out: &mut Vec<UseLeaf>) {
    let join = |tail: Option<Vec<String>>| -> Option<Vec<String>> {
        let mut p = prefix.to_vec();
        p.extend(tail?);
        Some(p)
    };
    match kind_of(node) {
        "identifier" | "crate" | "super" | "self" | "scoped_identifier" => {
            let Some(mut path) = join(path_segments(node, src)) else {
                return;
            };
            if path.len() > 1 && path.last().is_some_and(|s| s == "self") {
                path.pop();
            }
            let alias = path.last().cloned().unwrap_or_default();
            let name = last_segment(node);
            out.push((path, alias, false, line(name), name.start_byte()));
        }
        "use_as_clause" => {
            let Some(p) = child(node, "path") else {
                return;
            };
            let Some(mut path) = join(path_segments(p, src)) else {
                return;
            };
            if path.len() > 1 && path.last().is_some_and(|s| s == "self") {
                path.pop();
            }
            let alias = child(node, "alias")
                .map(|a| text(a, src).to_string())
                .unwrap_or_default();
            let name = last_segment(p);
            out.push((path, alias, false, line(name), name.start_byte()));
        }
        "use_wildcard" => {
            let inner = node.named_child(0);
            let path = match inner.and_then(|p| path_segments(p, src)) {
                Some(tail) => join(Some(tail)).unwrap_or_default(),
                None => prefix.to_vec(),
            };
            // `use Kind::*` names `Kind` where it is written.
            let name = inner.map_or(node, last_segment);
            out.push((path, String::new(), true, line(name), name.start_byte()));
        }
        "scoped_use_list" => {
            let base = match child(node, "path") {
                Some(p) => match join(path_segments(p, src)) {
                    Some(b) => b,
                    None => return,
                },
                None => prefix.to_vec(),
            };
            if let Some(list) = child(node, "list") {
                use_tree(list, src, &base, out);
            }
        }
        "use_list" => {
            let mut cursor = node.walk();
            for child in node.named_children(&mut cursor) {
                use_tree(child, src, prefix, out);
            }
        }
        _ => {}
    }
}

/// A path's last segment (`a::\n    b` is on `b`'s line).
fn last_segment(path: Node) -> Node {
    child(path, "name").unwrap_or(path)
}

impl<'a> Cx<'a> {
    pub(super) fn import(&mut self, node: Node) {
        let scope = self.defs.innermost(node.start_byte());
        let mut cursor = node.walk();
        let public = node
            .named_children(&mut cursor)
            .any(|c| kind_of(c) == "visibility_modifier");
        let statement = Site::of(node, self.src);
        if kind_of(node) == "extern_crate_declaration" {
            let Some(name) = child(node, "name") else {
                return;
            };
            let name = text(name, self.src).to_string();
            let alias = child(node, "alias")
                .map_or_else(|| name.clone(), |a| text(a, self.src).to_string());
            self.imports.push(Import {
                path: vec![name],
                alias,
                glob: false,
                public,
                module: true,
                line: statement.line,
                column: statement.column,
                scope,
            });
            return;
        }
        let Some(arg) = child(node, "argument") else {
            return;
        };
        let mut found = Vec::new();
        use_tree(arg, self.src, &[], &mut found);
        for (path, alias, glob, line, pos) in found {
            let name = Site::at(self.src, line, pos);
            self.push_import(path, alias, glob, public, statement, name, scope);
        }
    }

    /// `#[path = "unix/mod.rs"] mod imp;` (tokio): `imp` is the module of
    /// that file, which the layout names after its folder (`unix`), as if
    /// `use self::unix as imp;` were written. Paths leaving the folder
    /// (`../x.rs`) are not followed.
    pub(super) fn module_at_path(&mut self, item: Node, name: Node, scope: Option<u32>) {
        if child(item, "body").is_some() {
            return;
        }
        let mut prev = item.prev_named_sibling();
        let mut target = None;
        while let Some(a) = prev.filter(|a| kind_of(*a) == "attribute_item") {
            let t: String = text(a, self.src).split_whitespace().collect();
            if let Some(path) = t
                .strip_prefix("#[path=\"")
                .and_then(|r| r.strip_suffix("\"]"))
            {
                target = Some(path.to_string());
            }
            prev = a.prev_named_sibling();
        }
        let Some(path) = target else {
            return;
        };
        let stem = path
            .strip_suffix("/mod.rs")
            .or_else(|| path.strip_suffix(".rs"));
        let Some(segs) = stem.map(|s| s.split('/').collect::<Vec<_>>()) else {
            return;
        };
        if segs.iter().any(|s| s.is_empty() || *s == ".." || *s == ".") {
            return;
        }
        let alias = text(name, self.src).to_string();
        if segs == [alias.as_str()] {
            return;
        }
        let mut full = vec!["self".to_string()];
        full.extend(segs.iter().map(|s| s.to_string()));
        let at = Site::of(item, self.src);
        self.imports.push(Import {
            path: full,
            alias,
            glob: false,
            public: false,
            module: true,
            line: at.line,
            column: at.column,
            scope,
        });
    }

    /// One leaf of a `use` tree: the import (at `statement`), and the
    /// reference it makes (at `name`: a `use` list spans several lines).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn push_import(
        &mut self,
        path: Vec<String>,
        alias: String,
        glob: bool,
        public: bool,
        statement: Site,
        name_at: Site,
        scope: Option<u32>,
    ) {
        // `use Kind::*` uses the enum; `use super::*` names a module,
        // which module mentions cover.
        let glob_of_type = glob && path.last().is_some_and(|n| starts_upper(n));
        if !glob || glob_of_type {
            if let Some((name, prefix)) = path.split_last() {
                if !matches!(name.as_str(), "crate" | "self" | "super") {
                    self.refs.push(Ref {
                        name: name.clone(),
                        form: Form::Import,
                        path: prefix.to_vec(),
                        receiver: Receiver::None,
                        line: name_at.line,
                        column: name_at.column,
                        scope,
                    });
                }
            }
        }
        self.imports.push(Import {
            path,
            alias,
            glob,
            public,
            module: false,
            line: statement.line,
            column: statement.column,
            scope,
        });
    }
}
