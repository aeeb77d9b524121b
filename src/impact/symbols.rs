//! What one source file declares and references, as extracted from its blob.
//! Plain data, cached per blob: it never refers to other files, so it can be
//! computed in parallel and reused across commits that share the blob.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

/// The kind of a definition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Function,
    Method,
    Struct,
    Enum,
    Variant,
    Trait,
    TypeAlias,
    Const,
    Static,
    Module,
    Macro,
    Class,
    Variable,
}

impl Kind {
    /// Types own members (methods, variants, associated items).
    pub fn is_type(self) -> bool {
        matches!(
            self,
            Kind::Struct | Kind::Enum | Kind::Trait | Kind::TypeAlias | Kind::Class
        )
    }

    /// Kinds that can enclose a reference as its "dependent symbol". A
    /// variant is part of its enum, so references inside it belong to the enum.
    pub fn is_scope(self) -> bool {
        !matches!(self, Kind::Variant)
    }

    pub fn label(self) -> &'static str {
        match self {
            Kind::Function => "function",
            Kind::Method => "method",
            Kind::Struct => "struct",
            Kind::Enum => "enum",
            Kind::Variant => "variant",
            Kind::Trait => "trait",
            Kind::TypeAlias => "type",
            Kind::Const => "const",
            Kind::Static => "static",
            Kind::Module => "module",
            Kind::Macro => "macro",
            Kind::Class => "class",
            Kind::Variable => "variable",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Visibility {
    /// `pub`, or a Python name without a leading underscore.
    Public,
    /// `pub(crate)`, `pub(super)`, `pub(in …)`.
    Crate,
    Private,
}

/// One definition in a file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Def {
    pub name: String,
    pub kind: Kind,
    /// The impl type, trait or class that owns this definition.
    pub container: Option<String>,
    /// The trait of `impl Trait for Type` that this method implements.
    pub trait_name: Option<String>,
    /// Python class bases as written (`Base`, `mod.Base`).
    pub bases: Vec<String>,
    /// Fields as (name, type path): Rust struct fields with a named type,
    /// Python `x: T` in a class body and every `self.x = …` (an empty type
    /// when the value's type is not evident).
    pub fields: Vec<(String, String)>,
    /// The type a function is declared to return, as a path (`T`, `a::T`,
    /// `mod.T`), with `Result`, `Option`, `Box`, `Rc` and `Arc` unwrapped to
    /// their first argument: what `let x = f()?; x.m()` calls `m` on. For
    /// a Python module variable, the type it is declared or constructed
    /// with (`g: Globals = …`, `app = App()`).
    pub returns: Option<String>,
    /// 1-based inclusive lines, attributes, doc comments and decorators included.
    pub start_line: u32,
    /// The line of its name (`start_line` counts attributes and doc comments).
    pub line: u32,
    /// The 1-based column of its name on `line`, in characters.
    pub column: u32,
    pub end_line: u32,
    /// Hash of the declaration without its body: a change here is a
    /// signature change, a change elsewhere inside the span a body change.
    pub signature: u64,
    /// A Rust struct's named fields or an enum's variants, each as the
    /// hash of its tokens, in order. `signature` then reads the list as
    /// `{}`, so a member added is told apart from any other change.
    pub members: Vec<u64>,
    pub visibility: Visibility,
    /// Index of the enclosing definition in `FileSymbols::defs`.
    pub parent: Option<u32>,
    /// Marked `#[test]`, inside `#[cfg(test)]`, or a Python `test_*`/`Test*`.
    pub test: bool,
    /// A Rust associated function without a `self` parameter (`Type::new`):
    /// only a path calls it, never method syntax (`x.new()`).
    pub no_self: bool,
}

/// How a reference names its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Form {
    /// `f(x)`
    Call,
    /// `x.f()`
    MethodCall,
    /// `Type::f`, `a::b::f`
    Path,
    /// A type in a signature, a struct literal, an `impl` header.
    Type,
    /// `m!(…)`
    Macro,
    /// `x.attr` without a call.
    Attribute,
    /// `use a::b` / `from a import b`.
    Import,
    /// A name used as a value: `map(f)`, `CONST`, `isinstance(x, Class)`.
    Value,
    /// An implementation of a trait's item: `fn f` in `impl Trait for T`.
    /// Only in reports: it is a definition, not a reference of the file.
    Impl,
}

impl Form {
    pub fn label(self) -> &'static str {
        match self {
            Form::Call => "call",
            Form::MethodCall => "method call",
            Form::Path => "path",
            Form::Type => "type",
            Form::Macro => "macro",
            Form::Attribute => "attribute",
            Form::Import => "import",
            Form::Value => "value",
            Form::Impl => "impl",
        }
    }
}

/// What a method call or attribute access is applied to.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Receiver {
    /// Not a method call or attribute access.
    None,
    /// `self.f()`, `cls.f()`.
    SelfValue,
    /// `super().f()`: a base class of the enclosing class.
    Super,
    /// `self.field.f()`: the field of the enclosing type.
    Field(String),
    /// A local whose type is evident (`let x: T`, `x = T(…)`): `T` or `a::T`.
    Type(String),
    /// The value a call to the function at this path returns:
    /// `let x = make(); x.f()`, `a::make()?.f()`, `x = mod.make(); x.f()`.
    Returned(Vec<String>),
    /// A name that is not a local: a module alias, a class, a static (`m.f`, `a.b.f`).
    Name(String),
    /// The value a method call returns: the method, on a receiver
    /// (`b.hidden(true).build()`, `self.app().run()`), nested at most
    /// `MAX_CHAIN` deep.
    MethodReturn(Box<Receiver>, String),
    /// An attribute of a value of the receiver: `o.expr.accept()` with
    /// `o: ExpressionStmt` (Python), nested at most `MAX_CHAIN` deep.
    Attribute(Box<Receiver>, String),
    /// An element of a container value of the receiver: `for t in types`
    /// with `types: list[Type]`, `types[0]` (Python).
    Item(Box<Receiver>),
    /// Anything else: the target is known only by its name.
    Unknown,
}

/// How many method calls a `Receiver::MethodReturn` chain follows.
pub const MAX_CHAIN: usize = 8;

impl Receiver {
    /// The value `method` returns called on this receiver; unknown when
    /// this one is, or the chain is too long.
    pub fn then_call(self, method: &str) -> Receiver {
        self.wrap(|on| Receiver::MethodReturn(on, method.to_string()))
    }

    /// The attribute `name` of a value of this receiver.
    pub fn then_attribute(self, name: &str) -> Receiver {
        self.wrap(|on| Receiver::Attribute(on, name.to_string()))
    }

    /// An element of a container value of this receiver.
    pub fn then_item(self) -> Receiver {
        self.wrap(Receiver::Item)
    }

    /// This receiver one step further down a chain; unknown when it is,
    /// or the chain is too long.
    fn wrap(self, step: impl FnOnce(Box<Receiver>) -> Receiver) -> Receiver {
        let mut depth = 0;
        let mut cur = &self;
        while let Receiver::MethodReturn(on, _) | Receiver::Attribute(on, _) | Receiver::Item(on) =
            cur
        {
            depth += 1;
            cur = on;
        }
        match self {
            Receiver::None | Receiver::Unknown => Receiver::Unknown,
            _ if depth >= MAX_CHAIN => Receiver::Unknown,
            on => step(Box::new(on)),
        }
    }
}

/// One reference site.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ref {
    pub name: String,
    pub form: Form,
    /// Qualifier segments before the name: `["crate", "a"]` for `crate::a::f`;
    /// for a Python relative import the first segment is the dots (`".."`).
    pub path: Vec<String>,
    pub receiver: Receiver,
    /// 1-based line.
    pub line: u32,
    /// The 1-based column of the name on `line`, in characters.
    pub column: u32,
    /// Innermost enclosing definition (index in `FileSymbols::defs`).
    pub scope: Option<u32>,
}

/// One name bound by an import.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Import {
    /// Full path of the imported item: `["crate", "a", "B"]`, Python
    /// `["pkg", "mod", "name"]` or `["..", "mod", "name"]`.
    pub path: Vec<String>,
    /// The local name; empty for a glob.
    pub alias: String,
    pub glob: bool,
    /// `pub use` re-export (Python imports are always visible to importers).
    pub public: bool,
    /// Python `import a.b [as x]`: binds a module, not a member.
    pub module: bool,
    pub line: u32,
    /// The 1-based column of the import statement (`use`, `pub use`,
    /// `import`, `from`) on `line`, in characters.
    pub column: u32,
    /// Innermost enclosing definition: an inline module or a function.
    pub scope: Option<u32>,
}

/// Everything extracted from one file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FileSymbols {
    pub defs: Vec<Def>,
    pub refs: Vec<Ref>,
    pub imports: Vec<Import>,
    /// The parser recovered from syntax errors: some sites may be missing.
    pub syntax_errors: bool,
    /// `name_hash` of each reference's name, in `refs` order (see
    /// `refs_named`). Derived from `refs`, never stored.
    #[serde(skip)]
    pub(crate) ref_hashes: Vec<u32>,
}

/// A 32-bit FNV-1a hash of a name.
pub fn name_hash(name: &str) -> u32 {
    name.bytes().fold(0x811c_9dc5, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

/// A set of names that rejects most other names by their hash alone.
pub struct NameFilter<'a> {
    names: &'a HashSet<&'a str>,
    /// Bit `h % 4096` is set for the hash `h` of every name.
    bits: Box<[u64; 64]>,
}

impl<'a> NameFilter<'a> {
    pub fn new(names: &'a HashSet<&'a str>) -> NameFilter<'a> {
        let mut bits = Box::new([0u64; 64]);
        for n in names {
            let h = name_hash(n) as usize % 4096;
            bits[h / 64] |= 1 << (h % 64);
        }
        NameFilter { names, bits }
    }

    fn may_hold(&self, hash: u32) -> bool {
        let h = hash as usize % 4096;
        self.bits[h / 64] & (1 << (h % 64)) != 0
    }

    fn holds(&self, name: &str) -> bool {
        self.names.contains(name)
    }
}

impl FileSymbols {
    /// A file's symbols, its references' names hashed for `refs_named`.
    pub fn new(defs: Vec<Def>, refs: Vec<Ref>, imports: Vec<Import>) -> FileSymbols {
        let ref_hashes = refs.iter().map(|r| name_hash(&r.name)).collect();
        FileSymbols {
            defs,
            refs,
            imports,
            syntax_errors: false,
            ref_hashes,
        }
    }

    /// The indexes of the references named one of `filter`'s names. A
    /// whole-tree scan asks this of every file for a handful of names:
    /// reading a hash per reference instead of each reference's name cuts
    /// the memory it walks through twentyfold.
    pub fn refs_named<'s>(&'s self, filter: &'s NameFilter) -> impl Iterator<Item = usize> + 's {
        let hashed = self.ref_hashes.len() == self.refs.len();
        (0..self.refs.len()).filter(move |&i| {
            (!hashed || filter.may_hold(self.ref_hashes[i])) && filter.holds(&self.refs[i].name)
        })
    }

    /// Name of `def` qualified within its file: inline modules, container
    /// (`<Type as Trait>` for trait impls), name. Unique enough to pair a
    /// definition on the base side with the same one on the head side.
    pub fn local_path(&self, def: usize) -> String {
        let mut parts = Vec::new();
        let mut cur = self.defs[def].parent;
        while let Some(p) = cur {
            let pd = &self.defs[p as usize];
            if pd.kind == Kind::Module {
                parts.push(pd.name.as_str());
            }
            cur = pd.parent;
        }
        parts.reverse();
        let d = &self.defs[def];
        let mut out = parts.join("::");
        let owner = match (&d.container, &d.trait_name) {
            (Some(c), Some(t)) => Some(format!("<{c} as {t}>")),
            (Some(c), None) => Some(c.clone()),
            _ => None,
        };
        for part in owner.iter().map(String::as_str).chain([d.name.as_str()]) {
            if !out.is_empty() {
                out.push_str("::");
            }
            out.push_str(part);
        }
        out
    }

    /// Short display name: `Type::name` (Rust), `Class.name` (Python, with
    /// `sep` "."), or `name`.
    pub fn display_name(&self, def: usize, sep: &str) -> String {
        let d = &self.defs[def];
        match &d.container {
            Some(c) => format!("{c}{sep}{}", d.name),
            None => d.name.clone(),
        }
    }

    /// Inline modules enclosing `scope`, outermost first.
    pub fn module_chain(&self, scope: Option<u32>) -> Vec<&str> {
        let mut parts = Vec::new();
        let mut cur = scope;
        while let Some(p) = cur {
            let pd = &self.defs[p as usize];
            if pd.kind == Kind::Module {
                parts.push(pd.name.as_str());
            }
            cur = pd.parent;
        }
        parts.reverse();
        parts
    }

    /// Whether `scope` or one of its parents is marked as test code.
    pub fn in_test(&self, scope: Option<u32>) -> bool {
        scope.is_some_and(|s| self.defs[s as usize].test)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::impact::{Extractor, Lang};

    fn named(syms: &FileSymbols, names: &[&str]) -> Vec<usize> {
        let set: HashSet<&str> = names.iter().copied().collect();
        syms.refs_named(&NameFilter::new(&set)).collect()
    }

    #[test]
    fn refs_named_finds_every_reference_of_the_names_and_no_other() {
        let src = "fn f() {\n    open();\n    shelf::open(1);\n    close(open_all());\n    x.open();\n    opened();\n}\n";
        let mut syms = Extractor::new()
            .extract(Lang::Rust, src.as_bytes())
            .expect("extracts");
        assert_eq!(syms.ref_hashes.len(), syms.refs.len());
        let by_name = |names: &[&str]| -> Vec<usize> {
            (0..syms.refs.len())
                .filter(|&i| names.contains(&syms.refs[i].name.as_str()))
                .collect()
        };
        for names in [&["open"][..], &["open", "close"], &["missing"], &[]] {
            let expected = by_name(names);
            assert_eq!(named(&syms, names), expected, "{names:?}");
        }
        assert_eq!(named(&syms, &["open"]).len(), 3);
        // Symbols without hashes (deserialized from JSON) are scanned by name.
        let expected = named(&syms, &["open", "close"]);
        syms.ref_hashes.clear();
        assert_eq!(named(&syms, &["open", "close"]), expected);
    }
}
