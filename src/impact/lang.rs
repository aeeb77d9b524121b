//! Supported languages: which files they cover, their tree-sitter grammar and
//! the extraction query, compiled once per process and shared by all threads.

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};
use tree_sitter::{Language, Query};

use super::Error;
use super::symbols::Kind;

/// Bump when extraction changes what it produces for the same input: it is
/// part of the cache key, so stale entries are never read.
const EXTRACTOR_VERSION: u32 = 5;

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

    fn query_source(self) -> &'static str {
        match self {
            Lang::Rust => include_str!("queries/rust.scm"),
            Lang::Python => include_str!("queries/python.scm"),
        }
    }

    fn language(self) -> Language {
        match self {
            Lang::Rust => tree_sitter_rust::LANGUAGE.into(),
            Lang::Python => tree_sitter_python::LANGUAGE.into(),
        }
    }

    /// The compiled grammar and query. Compiling a query costs milliseconds,
    /// far more than extracting a typical file, so it happens once.
    pub fn grammar(self) -> Result<&'static Grammar, Error> {
        static RUST: OnceLock<Result<Grammar, String>> = OnceLock::new();
        static PYTHON: OnceLock<Result<Grammar, String>> = OnceLock::new();
        let cell = match self {
            Lang::Rust => &RUST,
            Lang::Python => &PYTHON,
        };
        cell.get_or_init(|| Grammar::compile(self))
            .as_ref()
            .map_err(|message| Error::Query {
                lang: self.name(),
                message: message.clone(),
            })
    }
}

/// What a capture in the extraction query stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Def(Kind),
    Name,
    Import,
    Local,
    LocalType,
    LocalParams,
    LocalGlobal,
}

impl Role {
    fn parse(name: &str) -> Option<Role> {
        Some(match name {
            "def.function" => Role::Def(Kind::Function),
            "def.struct" => Role::Def(Kind::Struct),
            "def.enum" => Role::Def(Kind::Enum),
            "def.variant" => Role::Def(Kind::Variant),
            "def.trait" => Role::Def(Kind::Trait),
            "def.type" => Role::Def(Kind::TypeAlias),
            "def.const" => Role::Def(Kind::Const),
            "def.static" => Role::Def(Kind::Static),
            "def.module" => Role::Def(Kind::Module),
            "def.macro" => Role::Def(Kind::Macro),
            "def.class" => Role::Def(Kind::Class),
            "def.variable" => Role::Def(Kind::Variable),
            "name" => Role::Name,
            "import" => Role::Import,
            "local" => Role::Local,
            "local.type" => Role::LocalType,
            "local.params" => Role::LocalParams,
            "local.global" => Role::LocalGlobal,
            _ => return None,
        })
    }
}

/// A language's grammar with its compiled extraction query.
pub struct Grammar {
    pub lang: Lang,
    pub language: Language,
    pub query: Query,
    /// Role of each capture, by capture index.
    pub roles: Vec<Role>,
    /// Identifies grammar + query + extractor for the cache key.
    pub version: u64,
}

impl Grammar {
    fn compile(lang: Lang) -> Result<Grammar, String> {
        let language = lang.language();
        let source = lang.query_source();
        let query = Query::new(&language, source).map_err(|e| e.to_string())?;
        let roles = query
            .capture_names()
            .iter()
            .map(|name| Role::parse(name).ok_or_else(|| format!("unknown capture @{name}")))
            .collect::<Result<Vec<_>, _>>()?;
        let mut h = Fnv::new();
        h.write(source.as_bytes());
        h.write(&EXTRACTOR_VERSION.to_le_bytes());
        h.write(&(language.abi_version() as u64).to_le_bytes());
        h.write(&(language.node_kind_count() as u64).to_le_bytes());
        h.write(&(language.field_count() as u64).to_le_bytes());
        h.write(&(language.parse_state_count() as u64).to_le_bytes());
        Ok(Grammar {
            lang,
            language,
            query,
            roles,
            version: h.finish(),
        })
    }
}

/// FNV-1a: a stable hash (std's hasher may change between Rust releases,
/// and these values are stored in the cache).
pub struct Fnv(u64);

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
    fn every_query_compiles_with_known_captures() {
        for lang in Lang::ALL {
            let g = lang
                .grammar()
                .unwrap_or_else(|e| panic!("{} query: {e}", lang.name()));
            assert!(g.roles.iter().any(|r| matches!(r, Role::Def(_))));
            assert!(g.roles.contains(&Role::Import));
            assert!(
                g.roles
                    .iter()
                    .any(|r| matches!(r, Role::Local | Role::LocalParams))
            );
        }
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
