//! Resolving one reference: through its path, its receiver's type, its
//! scope, then by name, with the confidence of the answer.

use super::names::PYTHON_BUILTIN_METHODS;
use super::*;

fn form_accepts(form: Form, kind: Kind) -> bool {
    match form {
        Form::Call => matches!(kind, Kind::Function | Kind::Struct | Kind::Class),
        Form::Type => kind.is_type(),
        Form::Macro => kind == Kind::Macro,
        Form::Value => matches!(
            kind,
            Kind::Function
                | Kind::Const
                | Kind::Static
                | Kind::Variable
                | Kind::Struct
                | Kind::Class
        ),
        _ => false,
    }
}

impl Index {
    /// Resolve one reference. Method syntax (`x.new()`) never calls a Rust
    /// function without `self`, whatever the receiver's type: `anchors`
    /// relies on it.
    pub fn resolve(&self, file: u32, r: &Ref) -> Resolution {
        let mut found = self.resolve_any(file, r);
        if r.form == Form::MethodCall && found.targets.iter().any(|&t| self.def(t).no_self) {
            found.targets.retain(|&t| !self.def(t).no_self);
            if found.targets.is_empty() {
                return Resolution::none();
            }
        }
        found
    }

    fn resolve_any(&self, file: u32, r: &Ref) -> Resolution {
        let m = self.scope_mod(file, r.scope);
        let lang = self.files[file as usize].lang;
        if !r.path.is_empty() {
            return self.resolve_qualified(file, m, r);
        }
        match &r.receiver {
            Receiver::None => self.resolve_plain(file, m, r),
            Receiver::SelfValue => {
                if let Some(t) = self.self_type(file, r.scope) {
                    let found = self.members_of(t, &r.name);
                    if !found.is_empty() {
                        return exact(found.into_iter().map(Target::Def).collect());
                    }
                    // `self.x = f` then `self.x()`: an attribute holding a
                    // callable, not a method of some other class.
                    if self.field_type(t, &r.name, 0).is_some() {
                        return Resolution::none();
                    }
                }
                self.by_method_name(file, r)
            }
            // A container (`x: list[T]`): its methods are the language's.
            Receiver::Type(t) if t.starts_with('[') => Resolution::none(),
            Receiver::Type(t) => self.on_declared_type(file, m, r, t, lang),
            Receiver::Returned(_)
            | Receiver::MethodReturn(..)
            | Receiver::Attribute(..)
            | Receiver::Item(_) => {
                match self.receiver_types(file, r.scope, m, &r.receiver) {
                    Some(types) => self.on_types(file, r, &types),
                    // Declared as a type from outside the project (`str`,
                    // a `list[…]`): none of its methods are the project's.
                    None if self.declared_outside(file, r.scope, m, &r.receiver) => {
                        Resolution::none()
                    }
                    // Undeclared or external.
                    None => self.by_method_name(file, r),
                }
            }
            Receiver::Name(n) => self.on_named(file, m, r, n, lang),
            Receiver::Super => {
                let Some(t) = self.self_type(file, r.scope) else {
                    return Resolution::none();
                };
                let found = self.base_members(t, &r.name);
                exact(found.into_iter().map(Target::Def).collect())
            }
            Receiver::Field(f) => self.on_own_field(file, r, f, lang),
            Receiver::Unknown => self.by_method_name(file, r),
        }
    }

    /// `a::b::f`, `Type::f`, `mod.f`: along the path.
    fn resolve_qualified(&self, file: u32, m: ModId, r: &Ref) -> Resolution {
        let f = &self.files[file as usize];
        let mut segs = r.path.clone();
        segs.push(r.name.clone());
        match self.resolve_path(m, &segs, f.lang) {
            PathOutcome::Found(ts) => exact(ts),
            PathOutcome::External => Resolution::none(),
            PathOutcome::Unresolved => {
                // `Type::f` where `Type` came in through a glob we could
                // not follow: same-unit types of that name.
                let owner = &r.path[r.path.len() - 1];
                if r.path.len() == 1 && owner.chars().next().is_some_and(char::is_uppercase) {
                    self.note_unit(f.unit, owner);
                    let owners: Vec<DefId> = self
                        .items
                        .get(owner.as_str())
                        .into_iter()
                        .flatten()
                        .copied()
                        .filter(|&d| {
                            self.files[d.file as usize].unit == f.unit && self.def(d).kind.is_type()
                        })
                        .collect();
                    let targets: Vec<DefId> = owners
                        .iter()
                        .flat_map(|&o| self.members_of(o, &r.name))
                        .collect();
                    self.by_name_filtered(&r.name, targets)
                } else {
                    Resolution::none()
                }
            }
        }
    }

    /// `x.f()` with `x: T` declared.
    fn on_declared_type(&self, file: u32, m: ModId, r: &Ref, t: &str, lang: Lang) -> Resolution {
        let segs: Vec<String> = t
            .split(if lang == Lang::Rust { "::" } else { "." })
            .map(str::to_string)
            .collect();
        match self.resolve_path(m, &segs, lang) {
            PathOutcome::Found(ts) => {
                let types: Vec<DefId> = ts
                    .into_iter()
                    .filter_map(|t| match t {
                        Target::Def(d) if self.def(d).kind.is_type() => Some(d),
                        _ => None,
                    })
                    .collect();
                if types.is_empty() {
                    // A value (a constant) rather than a type.
                    self.by_method_name(file, r)
                } else {
                    self.on_types(file, r, &types)
                }
            }
            PathOutcome::External if lang == Lang::Rust && is_rust_primitive(t) => {
                self.primitive_member(r, t)
            }
            PathOutcome::External => Resolution::none(),
            PathOutcome::Unresolved => self.by_method_name(file, r),
        }
    }

    /// `n.f()` where `n` is a name: a module, a type, or a variable.
    fn on_named(&self, file: u32, m: ModId, r: &Ref, n: &str, lang: Lang) -> Resolution {
        let segs: Vec<String> = n
            .split(if lang == Lang::Rust { "::" } else { "." })
            .map(str::to_string)
            .collect();
        match self.resolve_path(m, &segs, lang) {
            PathOutcome::Found(ts) => {
                let mut out = Vec::new();
                let mut typed = Vec::new();
                let mut value = false;
                for t in ts {
                    match t {
                        Target::Module(mm) => self.lookup(mm, &r.name, &mut out),
                        Target::Def(d) if self.def(d).kind.is_type() => {
                            out.extend(self.members_of(d, &r.name).into_iter().map(Target::Def));
                        }
                        // `flask.g` with `g: Globals = …`.
                        Target::Def(d) => match self.variable_type(d) {
                            Some(types) => typed.extend(types),
                            None => value = true,
                        },
                    }
                }
                if !out.is_empty() {
                    exact(out)
                } else if value {
                    self.by_method_name(file, r)
                } else if !typed.is_empty() {
                    self.on_types(file, r, &typed)
                } else {
                    Resolution::none()
                }
            }
            // A name no import binds is a value we do not track
            // (a nested function, a global set at run time).
            PathOutcome::External if !self.imported(m, &segs[0]) => self.by_method_name(file, r),
            PathOutcome::External => Resolution::none(),
            PathOutcome::Unresolved => self.by_method_name(file, r),
        }
    }

    /// `self.field.f()`: on the field's declared type.
    fn on_own_field(&self, file: u32, r: &Ref, f: &str, lang: Lang) -> Resolution {
        let Some(owner) = self.self_type(file, r.scope) else {
            return self.by_method_name(file, r);
        };
        let Some((home, ty)) = self.field_type(owner, f, 0).filter(|(_, t)| !t.is_empty()) else {
            return self.by_method_name(file, r);
        };
        let segs: Vec<String> = ty
            .split(if lang == Lang::Rust { "::" } else { "." })
            .map(str::to_string)
            .collect();
        match self.resolve_path(self.def_module(home), &segs, lang) {
            PathOutcome::Found(ts) => {
                let types: Vec<DefId> = ts
                    .into_iter()
                    .filter_map(|t| match t {
                        Target::Def(d) if self.def(d).kind.is_type() => Some(d),
                        _ => None,
                    })
                    .collect();
                if types.is_empty() {
                    self.by_method_name(file, r)
                } else {
                    self.on_types(file, r, &types)
                }
            }
            PathOutcome::External => Resolution::none(),
            PathOutcome::Unresolved => self.by_method_name(file, r),
        }
    }

    /// A method on a primitive value (`x.low_u16()`, `x: u32`): the item of
    /// a project trait implemented for that type, if any; else std's.
    fn primitive_member(&self, r: &Ref, ty: &str) -> Resolution {
        self.note_pair(&r.name, ty);
        let found: Vec<Target> = self
            .members_named(r.name.as_str())
            .filter(|&d| {
                let md = self.def(d);
                md.container.as_deref() == Some(ty)
                    && md.trait_name.is_some()
                    && self.files[d.file as usize].lang == Lang::Rust
            })
            .map(Target::Def)
            .collect();
        exact(found)
    }

    /// A name without qualifier: enclosing functions' nested items, the
    /// module (items, imports, globs), then the unit when a glob import could
    /// have brought it in.
    fn resolve_plain(&self, file: u32, m: ModId, r: &Ref) -> Resolution {
        let f = &self.files[file as usize];
        // Items nested in an enclosing function (Python closures, Rust
        // fn-local items).
        let mut cur = r.scope;
        while let Some(s) = cur {
            let d = &f.syms.defs[s as usize];
            if matches!(d.kind, Kind::Function | Kind::Method) {
                let nested: Vec<Target> = self
                    .items
                    .get(r.name.as_str())
                    .into_iter()
                    .flatten()
                    .copied()
                    .filter(|x| x.file == file && self.def(*x).parent == Some(s))
                    .map(Target::Def)
                    .collect();
                if !nested.is_empty() {
                    return exact(nested);
                }
            }
            cur = d.parent;
        }
        let mut out = Vec::new();
        self.lookup(m, &r.name, &mut out);
        if !out.is_empty() {
            return exact(out);
        }
        // Bound by an import that leads outside the index: not ours.
        if self.imported(m, &r.name) {
            return Resolution::none();
        }
        self.note_local(m, GLOB);
        let has_glob = !self.modules[m as usize].globs.is_empty();
        // Macros by example are visible crate-wide once defined.
        if !(has_glob || r.form == Form::Macro) || stop_listed(&r.name) {
            return Resolution::none();
        }
        let unit = f.unit;
        self.note_unit(unit, &r.name);
        let candidates: Vec<DefId> = self
            .items
            .get(r.name.as_str())
            .into_iter()
            .flatten()
            .copied()
            .filter(|&d| {
                self.files[d.file as usize].unit == unit
                    && !self.files[d.file as usize].test_only_for(&self.files[file as usize])
                    && self.module_level(d)
                    && form_accepts(r.form, self.def(d).kind)
            })
            .collect();
        if r.form == Form::Value && candidates.len() > 1 {
            return Resolution::none();
        }
        self.by_name_filtered(&r.name, candidates)
    }

    /// Whether an import in module `m` binds `name`.
    pub(super) fn imported(&self, m: ModId, name: &str) -> bool {
        self.note_local(m, name);
        self.modules[m as usize].by_alias.contains_key(name)
    }

    pub(super) fn by_name_filtered(&self, name: &str, targets: Vec<DefId>) -> Resolution {
        // Overloads (`@overload`) and `#[cfg]` variants: several definitions
        // of one symbol, in one file, with one owner.
        let first = targets.first().map(|&d| (d.file, &self.def(d).container));
        let one_symbol = targets
            .iter()
            .all(|&d| Some((d.file, &self.def(d).container)) == first);
        if targets.is_empty() || (!one_symbol && stop_listed(name)) {
            return Resolution::none();
        }
        if one_symbol {
            return Resolution {
                targets,
                confidence: Confidence::Unique,
            };
        }
        Resolution::by_name(targets)
    }

    /// A method or attribute on a receiver of unknown type: every method of
    /// that name in the same language. A Python attribute read (`x.size`,
    /// a property or a method passed as a value) counts only when no class
    /// of the project assigns an attribute of that name: reading data
    /// attributes is far more common than reading properties.
    pub(super) fn by_method_name(&self, file: u32, r: &Ref) -> Resolution {
        let lang = self.files[file as usize].lang;
        let matched = match r.form {
            Form::MethodCall => true,
            Form::Attribute => lang == Lang::Python,
            _ => false,
        };
        if stop_listed(&r.name) || !matched {
            return Resolution::none();
        }
        // `d.setdefault(k, [])` on a value of unknown type is far more often
        // a dict than the project's own `setdefault`.
        if lang == Lang::Python && PYTHON_BUILTIN_METHODS.contains(&r.name.as_str()) {
            return Resolution::none();
        }
        self.note_global(&r.name);
        if r.form == Form::Attribute && self.is_data_attribute(&r.name) {
            return Resolution::none();
        }
        let targets: Vec<DefId> = self
            .members_named(r.name.as_str())
            .filter(|&d| {
                self.files[d.file as usize].lang == lang && self.def(d).kind == Kind::Method
            })
            .collect();
        let mut found = self.by_name_filtered(&r.name, targets);
        // `front.copy_to_bytes(n)` where the project's only `copy_to_bytes`
        // is its implementation of `bytes::Buf`: every implementor outside
        // the project has one too, so the match is not unique.
        if self.shared_outside(&found.targets) {
            found.confidence = Confidence::Ambiguous;
        }
        found
    }

    /// Whether every one of `targets` implements an item of a trait from
    /// outside the project: a by-name match to them may as well be to any
    /// implementor outside, which the index cannot count.
    pub fn shared_outside(&self, targets: &[DefId]) -> bool {
        !targets.is_empty() && targets.iter().all(|&d| self.implements_outside_trait(d))
    }

    /// Whether Rust method `d` implements an item of a trait from outside
    /// the project: no project trait of that name declares the item.
    fn implements_outside_trait(&self, d: DefId) -> bool {
        let def = self.def(d);
        let Some(t) = def.trait_name.as_deref() else {
            return false;
        };
        if self.files[d.file as usize].lang != Lang::Rust {
            return false;
        }
        // A project trait declaring it names both in its file.
        self.note_pair(&def.name, t);
        !self.members_named(&def.name).any(|m| {
            self.in_trait(m)
                && self.def(m).parent.is_some_and(|p| {
                    self.def(DefId {
                        file: m.file,
                        def: p,
                    })
                    .name
                        == t
                })
        })
    }

    fn is_data_attribute(&self, name: &str) -> bool {
        self.data_attributes
            .get_or_init(|| {
                self.files
                    .iter()
                    .filter(|f| f.lang == Lang::Python)
                    .flat_map(|f| f.syms.defs.iter())
                    .flat_map(|d| d.fields.iter().map(|(n, _)| n.clone()))
                    .collect()
            })
            .contains(name)
    }
}
