//! Supported languages: which files they cover, their tree-sitter grammar and
//! the node table the extractor reads, checked against the grammar and
//! resolved to node-kind ids once per process, shared by all threads.
//!
//! The table takes the place of a tree-sitter query. A query cursor visits
//! every node of the tree whatever its patterns (a third of extraction time
//! on real code), while the extractor walks every node anyway to read
//! reference sites: looking each node's kind up in this table costs nothing
//! extra.

use std::num::NonZeroU16;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};
use tree_sitter::{Language, Node};

use super::Error;
use super::symbols::Kind;

/// Bump when extraction changes what it produces for the same input: it is
/// part of the cache key, so stale entries are never read. Upgrading the
/// tree-sitter runtime counts (15: 0.25 to 0.27), as its error recovery
/// decides the tree of a file with syntax errors. 16: `let mut x` and
/// `move |x|` inside macro calls bind `x`. 17: signatures hash tokens
/// (comments, whitespace and trailing commas left out); method-chain
/// receivers; `use` and `mod` inside item macros. 18: columns of
/// definitions, references and imports. 19: `use Kind::*`
/// is sited at `Kind`. 20: receivers of call chains inside macros
/// and of calls of local closures. 21: item macros of plain items
/// (`cfg_net! { … }`) are read as those items. 22: `Arc::new(x)` has
/// `x`'s type; Python receivers that are attributes and elements of typed
/// values; annotations of containers and optionals. 23: names bound by
/// a tuple pattern (`let (tx, rx) = channel()`) and tuple return types.
/// 24: `#[path = "unix/mod.rs"] mod imp;` imports the module of that file.
/// 25: Rust receivers that are fields of fields (`guard.lock.s`), tuple
/// struct fields, `Pin::new(&mut x)`, `Self` and path-typed locals. 26:
/// Python module variables carry their declared or constructed type. 27:
/// a struct's named fields and an enum's variants hashed one by one.
const EXTRACTOR_VERSION: u32 = 27;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Lang {
    Rust,
    Python,
}

impl Lang {
    pub const ALL: [Lang; 2] = [Lang::Rust, Lang::Python];

    /// The language of a repository path, by extension.
    pub fn of_path(path: &str) -> Option<Lang> {
        let ext = path.rsplit_once('.').map(|(_, e)| e)?;
        match ext {
            "rs" => Some(Lang::Rust),
            "py" | "pyi" => Some(Lang::Python),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Lang::Rust => "rust",
            Lang::Python => "python",
        }
    }

    /// Between a type and its member in names shown to people.
    pub fn member_separator(self) -> &'static str {
        match self {
            Lang::Rust => "::",
            Lang::Python => ".",
        }
    }

    /// The nodes the extractor reads, by kind, with what each stands for.
    fn rules(self) -> &'static [(&'static str, Role)] {
        match self {
            Lang::Rust => RUST_RULES,
            Lang::Python => PYTHON_RULES,
        }
    }

    /// The tree-sitter language, made once: the names it hands out live
    /// as long as it does.
    fn language(self) -> &'static Language {
        static RUST: OnceLock<Language> = OnceLock::new();
        static PYTHON: OnceLock<Language> = OnceLock::new();
        match self {
            Lang::Rust => RUST.get_or_init(|| tree_sitter_rust::LANGUAGE.into()),
            Lang::Python => PYTHON.get_or_init(|| tree_sitter_python::LANGUAGE.into()),
        }
    }

    /// The grammar's node kind and field names by id, built once.
    pub fn names(self) -> &'static Names {
        static RUST: OnceLock<Names> = OnceLock::new();
        static PYTHON: OnceLock<Names> = OnceLock::new();
        let cell = match self {
            Lang::Rust => &RUST,
            Lang::Python => &PYTHON,
        };
        cell.get_or_init(|| Names::new(self.language()))
    }

    /// The grammar with its node table resolved, built once.
    pub fn grammar(self) -> Result<&'static Grammar, Error> {
        static RUST: OnceLock<Result<Grammar, String>> = OnceLock::new();
        static PYTHON: OnceLock<Result<Grammar, String>> = OnceLock::new();
        let cell = match self {
            Lang::Rust => &RUST,
            Lang::Python => &PYTHON,
        };
        cell.get_or_init(|| Grammar::compile(self, self.rules()))
            .as_ref()
            .map_err(|message| Error::Grammar {
                lang: self.name(),
                message: message.clone(),
            })
    }
}

/// Rust's primitive types: values of them have std's methods, and those of
/// the project's traits implemented for them (`impl Float for f64`).
pub fn is_rust_primitive(name: &str) -> bool {
    matches!(
        name,
        "u8" | "u16"
            | "u32"
            | "u64"
            | "u128"
            | "usize"
            | "i8"
            | "i16"
            | "i32"
            | "i64"
            | "i128"
            | "isize"
            | "f32"
            | "f64"
            | "bool"
            | "char"
            | "str"
    )
}

/// What a node of a given kind stands for to the extractor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Defines a symbol of this kind, named by its `name` field.
    Def(Kind),
    /// Imports names (`use`, `import`, `from … import`).
    Import,
    /// Binds the names in the pattern held in this field.
    Bind(&'static str),
    /// Binds the names in each of its named children (closure parameters).
    BindChildren,
    /// Is itself a pattern binding names (a match arm's pattern).
    BindSelf,
    /// Declares a generic type parameter, named by its `name` field.
    TypeParam,
    /// A parameter list: each parameter binds names, some with a type.
    Params,
    /// `global` or `nonlocal`: the names it lists are not locals.
    Global,
    /// Python assignment: a module-level variable when it is a statement of
    /// the module, else it binds the names on its `left`.
    Assign,
}

/// Rust: items, `use`, and the patterns that bind locals.
const RUST_RULES: &[(&str, Role)] = &[
    ("function_item", Role::Def(Kind::Function)),
    ("function_signature_item", Role::Def(Kind::Function)),
    ("struct_item", Role::Def(Kind::Struct)),
    ("union_item", Role::Def(Kind::Struct)),
    ("enum_item", Role::Def(Kind::Enum)),
    ("enum_variant", Role::Def(Kind::Variant)),
    ("trait_item", Role::Def(Kind::Trait)),
    ("type_item", Role::Def(Kind::TypeAlias)),
    ("associated_type", Role::Def(Kind::TypeAlias)),
    ("const_item", Role::Def(Kind::Const)),
    ("static_item", Role::Def(Kind::Static)),
    ("mod_item", Role::Def(Kind::Module)),
    ("macro_definition", Role::Def(Kind::Macro)),
    ("use_declaration", Role::Import),
    ("extern_crate_declaration", Role::Import),
    ("let_declaration", Role::Bind("pattern")),
    ("parameter", Role::Bind("pattern")),
    ("for_expression", Role::Bind("pattern")),
    ("let_condition", Role::Bind("pattern")),
    ("closure_parameters", Role::BindChildren),
    ("match_pattern", Role::BindSelf),
    ("type_parameter", Role::TypeParam),
];

/// Python: definitions, imports, and what binds a function's locals.
const PYTHON_RULES: &[(&str, Role)] = &[
    ("function_definition", Role::Def(Kind::Function)),
    ("class_definition", Role::Def(Kind::Class)),
    ("import_statement", Role::Import),
    ("import_from_statement", Role::Import),
    ("parameters", Role::Params),
    ("lambda_parameters", Role::Params),
    ("assignment", Role::Assign),
    ("augmented_assignment", Role::Bind("left")),
    ("for_statement", Role::Bind("left")),
    ("for_in_clause", Role::Bind("left")),
    ("as_pattern", Role::Bind("alias")),
    ("named_expression", Role::Bind("name")),
    ("global_statement", Role::Global),
    ("nonlocal_statement", Role::Global),
];

/// A grammar's node kind and field names by id, so extraction never asks
/// tree-sitter for them by string: `Node::kind` measures and UTF-8-checks a
/// C string on every call, and `Node::child_by_field_name` compares the
/// name with every field of the grammar (together a tenth of extraction).
pub struct Names {
    kinds: Vec<&'static str>,
    /// By kind id: whether nodes of the kind are named (not tokens like `;`).
    named: Vec<bool>,
    /// By field id; id 0 is no field.
    fields: Vec<&'static str>,
    /// Field ids by `field_slot` of their name, 0 where none; a name whose
    /// slot another took is found by scanning `fields`. Extraction asks
    /// for a child by field name hundreds of thousands of times per
    /// megabyte, and a binary search over the names cost nearly as much
    /// as tree-sitter's own lookup of the child.
    by_slot: Box<[u16; FIELD_SLOTS]>,
}

const FIELD_SLOTS: usize = 1024;

fn field_slot(name: &str) -> usize {
    let mut h = Fnv::new();
    h.write(name.as_bytes());
    h.finish() as usize % FIELD_SLOTS
}

impl Names {
    fn new(language: &'static Language) -> Names {
        let kinds = (0..language.node_kind_count())
            .map(|id| language.node_kind_for_id(id as u16).unwrap_or(""))
            .collect();
        let named = (0..language.node_kind_count())
            .map(|id| language.node_kind_is_named(id as u16))
            .collect();
        let fields: Vec<&'static str> = (0..=language.field_count())
            .map(|id| language.field_name_for_id(id as u16).unwrap_or(""))
            .collect();
        let mut by_slot = Box::new([0u16; FIELD_SLOTS]);
        for (id, name) in fields.iter().enumerate().skip(1) {
            let slot = &mut by_slot[field_slot(name)];
            if *slot == 0 {
                *slot = id as u16;
            }
        }
        Names {
            kinds,
            named,
            fields,
            by_slot,
        }
    }

    /// `node.kind()`.
    pub fn kind(&self, node: Node) -> &'static str {
        self.kind_of_id(node.kind_id())
    }

    /// How many node kinds the grammar has; ids run from 0 below it.
    pub fn kind_count(&self) -> usize {
        self.kinds.len()
    }

    /// The name of a node kind id.
    pub fn kind_of_id(&self, id: u16) -> &'static str {
        self.kinds.get(id as usize).copied().unwrap_or("")
    }

    /// Whether nodes of a kind id are named.
    pub fn is_named(&self, id: u16) -> bool {
        self.named.get(usize::from(id)).copied().unwrap_or(false)
    }

    /// The name of a field id, as a tree cursor gives it.
    pub fn field(&self, id: Option<NonZeroU16>) -> Option<&'static str> {
        self.fields.get(usize::from(id?.get())).copied()
    }

    /// `node.child_by_field_name(field)`.
    pub fn child<'t>(&self, node: Node<'t>, field: &str) -> Option<Node<'t>> {
        node.child_by_field_id(self.field_id(field)?.get())
    }

    /// The id of a field name.
    fn field_id(&self, field: &str) -> Option<NonZeroU16> {
        let id = self.by_slot[field_slot(field)];
        let id = if self.fields[usize::from(id)] == field {
            usize::from(id)
        } else {
            self.fields.iter().skip(1).position(|&f| f == field)? + 1
        };
        NonZeroU16::new(id as u16)
    }
}

/// A language's grammar with its node table resolved to kind ids.
pub struct Grammar {
    pub lang: Lang,
    pub language: &'static Language,
    /// Role of each node kind, by kind id.
    roles: Vec<Option<Role>>,
    /// Identifies grammar + node table + extractor for the cache key.
    pub version: u64,
}

impl Grammar {
    /// Resolve the node table. Every kind and field it names must exist in
    /// the grammar: a grammar upgrade that renames one fails here, loudly,
    /// instead of quietly finding nothing.
    fn compile(lang: Lang, rules: &[(&str, Role)]) -> Result<Grammar, String> {
        let language = lang.language();
        let mut roles = vec![None; language.node_kind_count()];
        let mut h = Fnv::new();
        for &(kind, role) in rules {
            // A name may have several ids (aliases); each gets the role.
            let ids: Vec<usize> = (0..language.node_kind_count())
                .filter(|&id| {
                    language.node_kind_is_named(id as u16)
                        && language.node_kind_for_id(id as u16) == Some(kind)
                })
                .collect();
            if ids.is_empty() {
                return Err(format!("the grammar has no node kind `{kind}`"));
            }
            let field = match role {
                Role::Def(_) | Role::TypeParam => Some("name"),
                Role::Bind(f) => Some(f),
                Role::Assign => Some("left"),
                _ => None,
            };
            if let Some(f) = field {
                if language.field_id_for_name(f).is_none() {
                    return Err(format!("the grammar has no field `{f}` (for `{kind}`)"));
                }
            }
            for id in ids {
                roles[id] = Some(role);
            }
            h.write(kind.as_bytes());
            h.write(format!("{role:?}").as_bytes());
        }
        h.write(&EXTRACTOR_VERSION.to_le_bytes());
        h.write(&(language.abi_version() as u64).to_le_bytes());
        h.write(&(language.node_kind_count() as u64).to_le_bytes());
        h.write(&(language.field_count() as u64).to_le_bytes());
        h.write(&(language.parse_state_count() as u64).to_le_bytes());
        Ok(Grammar {
            lang,
            language,
            roles,
            version: h.finish(),
        })
    }

    /// What a node of this kind stands for, if anything.
    pub fn role(&self, kind_id: u16) -> Option<Role> {
        self.roles.get(kind_id as usize).copied().flatten()
    }
}

/// FNV-1a: a stable hash (std's hasher may change between Rust releases,
/// and these values are stored in the cache).
pub struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Fnv {
        Fnv::new()
    }
}

impl Fnv {
    pub fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    pub fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }

    pub fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_node_table_resolves_against_its_grammar() {
        for lang in Lang::ALL {
            let g = lang
                .grammar()
                .unwrap_or_else(|e| panic!("{} node table: {e}", lang.name()));
            for &(kind, role) in lang.rules() {
                let id = g.language.id_for_node_kind(kind, true);
                assert_eq!(g.role(id), Some(role), "{} `{kind}`", lang.name());
            }
            let roles: Vec<Role> = g.roles.iter().flatten().copied().collect();
            assert!(roles.iter().any(|r| matches!(r, Role::Def(_))));
            assert!(roles.contains(&Role::Import));
            assert!(
                roles
                    .iter()
                    .any(|r| matches!(r, Role::Bind(_) | Role::Params))
            );
        }
    }

    #[test]
    fn every_field_name_finds_its_id_and_no_other_name_does() {
        for lang in Lang::ALL {
            let language = lang.language();
            let names = lang.names();
            let mut by_slot = 0;
            for id in 1..=language.field_count() as u16 {
                let name = language.field_name_for_id(id).expect("named field");
                assert_eq!(
                    names.field_id(name).map(NonZeroU16::get),
                    Some(id),
                    "{name}"
                );
                by_slot += usize::from(names.by_slot[field_slot(name)] == id);
            }
            // The slots, not the fallback scan, answer for nearly every name.
            assert!(by_slot + 3 >= language.field_count(), "{by_slot}");
            assert_eq!(names.field_id("no_such_field"), None);
            assert_eq!(names.field_id(""), None);
        }
    }

    #[test]
    fn an_unknown_node_kind_or_field_is_an_error_not_an_empty_index() {
        let kind = Grammar::compile(Lang::Rust, &[("function_itemz", Role::Def(Kind::Function))]);
        assert_eq!(
            kind.err().as_deref(),
            Some("the grammar has no node kind `function_itemz`")
        );
        let field = Grammar::compile(Lang::Python, &[("for_statement", Role::Bind("lefty"))]);
        assert_eq!(
            field.err().as_deref(),
            Some("the grammar has no field `lefty` (for `for_statement`)")
        );
    }

    #[test]
    fn languages_by_extension() {
        assert_eq!(Lang::of_path("src/a/b.rs"), Some(Lang::Rust));
        assert_eq!(Lang::of_path("pkg/__init__.py"), Some(Lang::Python));
        assert_eq!(Lang::of_path("pkg/stubs.pyi"), Some(Lang::Python));
        assert_eq!(Lang::of_path("README.md"), None);
        assert_eq!(Lang::of_path("Makefile"), None);
    }
}
