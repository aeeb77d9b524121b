//! The node table the extractor reads for each language (`syntax` says
//! which files are whose and parses them), checked against the grammar and
//! resolved to node-kind ids once per process, shared by all threads.
//!
//! The table takes the place of a tree-sitter query. A query cursor visits
//! every node of the tree whatever its patterns (a third of extraction time
//! on real code), while the extractor walks every node anyway to read
//! reference sites: looking each node's kind up in this table costs nothing
//! extra.

use std::sync::OnceLock;

use super::Error;
use super::symbols::Kind;
pub use crate::syntax::{Lang, Names};

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
const EXTRACTOR_VERSION: u32 = 28;

/// The node table of `lang`, resolved against its grammar once.
pub fn grammar(lang: Lang) -> Result<&'static Grammar, Error> {
    static RUST: OnceLock<Result<Grammar, String>> = OnceLock::new();
    static PYTHON: OnceLock<Result<Grammar, String>> = OnceLock::new();
    let cell = match lang {
        Lang::Rust => &RUST,
        Lang::Python => &PYTHON,
    };
    cell.get_or_init(|| Grammar::compile(lang, rules(lang)))
        .as_ref()
        .map_err(|message| {
            Error::Syntax(crate::syntax::Error::Grammar {
                lang: lang.name(),
                message: message.clone(),
            })
        })
}

/// The nodes the extractor reads, by kind, with what each stands for.
fn rules(lang: Lang) -> &'static [(&'static str, Role)] {
    match lang {
        Lang::Rust => RUST_RULES,
        Lang::Python => PYTHON_RULES,
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

/// A language's grammar with its node table resolved to kind ids.
pub struct Grammar {
    pub lang: Lang,
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

/// FNV-1a as the hasher of a map keyed by short names that is only looked
/// up, never iterated: an identifier's visit asks such maps (the locals,
/// the type parameters) once or twice, and SipHash's setup cost more than
/// hashing a name this way.
impl std::hash::Hasher for Fnv {
    fn write(&mut self, bytes: &[u8]) {
        Fnv::write(self, bytes);
    }

    fn finish(&self) -> u64 {
        Fnv::finish(self)
    }
}

/// Builds `Fnv` hashers: `HashMap<K, V, FnvBuild>`.
pub type FnvBuild = std::hash::BuildHasherDefault<Fnv>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_node_table_resolves_against_its_grammar() {
        for lang in Lang::ALL {
            let g = grammar(lang).unwrap_or_else(|e| panic!("{} node table: {e}", lang.name()));
            for &(kind, role) in rules(lang) {
                let id = lang.language().id_for_node_kind(kind, true);
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
}
