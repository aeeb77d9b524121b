//! Types of values: what a receiver, a field, a variable or a call's
//! return is, and the members a type has (its own, its bases', its
//! traits').

use super::*;

/// The elements of a tuple type's text, `(A, (B, C))` without its
/// parentheses: split at the commas outside brackets.
fn tuple_elements(inner: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut from) = (0i32, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '(' | '[' | '<' => depth += 1,
            ')' | ']' | '>' => depth -= 1,
            ',' if depth == 0 => {
                out.push(inner[from..i].trim());
                from = i + 1;
            }
            _ => {}
        }
    }
    out.push(inner[from..].trim());
    out
}

impl Index {
    /// The implementations of a Rust trait's item (`fn f` in `impl Trait
    /// for T`): they change with it. Empty for anything but a trait item.
    pub fn trait_impls(&self, item: DefId) -> Vec<DefId> {
        let d = self.def(item);
        let Some(trait_def) = d.parent.map(|p| DefId {
            file: item.file,
            def: p,
        }) else {
            return Vec::new();
        };
        let tr = self.def(trait_def);
        if tr.kind != Kind::Trait || self.files[item.file as usize].lang != Lang::Rust {
            return Vec::new();
        }
        // Files holding an impl name both the item and the trait.
        self.note_pair(&d.name, &tr.name);
        self.members_named(d.name.as_str())
            .filter(|&m| {
                self.def(m).trait_name.as_deref() == Some(tr.name.as_str())
                    && self.implements(m, trait_def)
            })
            .collect()
    }

    /// Whether the impl holding item `m` is of `trait_def`: the trait's name
    /// resolves to it in the impl's module, or, when it cannot be resolved
    /// there (a path like `crate::a::Trait`), no other trait has that name.
    pub(super) fn implements(&self, m: DefId, trait_def: DefId) -> bool {
        let name = &self.def(trait_def).name;
        match self.resolve_path(self.def_module(m), std::slice::from_ref(name), Lang::Rust) {
            PathOutcome::Found(ts) => ts.contains(&Target::Def(trait_def)),
            PathOutcome::External => false,
            PathOutcome::Unresolved => {
                self.note_global(name);
                self.items
                    .get(name.as_str())
                    .into_iter()
                    .flatten()
                    .all(|&t| t == trait_def || self.def(t).kind != Kind::Trait)
            }
        }
    }

    /// The types that the function at `path`, seen from module `m`, is
    /// declared to return (each looked up from the function's own module).
    /// `T::f` where `f` is not the project's (`T::default()`, a derived or
    /// std trait's constructor) is taken to make a `T`.
    fn returned_types(&self, m: ModId, path: &[String], lang: Lang) -> Vec<DefId> {
        let functions = match self.resolve_path(m, path, lang) {
            PathOutcome::Found(functions) => functions,
            _ if path.len() >= 2 => {
                let owner = &path[..path.len() - 1];
                return self.types_at(m, owner, lang).unwrap_or_default();
            }
            _ => return Vec::new(),
        };
        let mut out = Vec::new();
        for f in functions {
            let Target::Def(f) = f else { continue };
            out.extend(self.declared_return(f).unwrap_or_default());
        }
        out
    }

    /// The project types of the module variables `segs` names from
    /// module `m`, as declared or constructed.
    fn variable_types(&self, m: ModId, segs: &[String], lang: Lang) -> Option<Vec<DefId>> {
        let PathOutcome::Found(ts) = self.resolve_path(m, segs, lang) else {
            return None;
        };
        let mut out = Vec::new();
        for t in ts {
            let Target::Def(v) = t else { continue };
            for t in self.variable_type(v).unwrap_or_default() {
                if !out.contains(&t) {
                    out.push(t);
                }
            }
        }
        (!out.is_empty()).then_some(out)
    }

    /// The project types variable `v` is declared or constructed with.
    pub(super) fn variable_type(&self, v: DefId) -> Option<Vec<DefId>> {
        let d = self.def(v);
        let ty = d.returns.as_ref().filter(|_| d.kind == Kind::Variable)?;
        let lang = self.files[v.file as usize].lang;
        self.types_at(self.def_module(v), &split_path(ty, lang), lang)
    }

    /// The types function `f` is declared to return, if it says.
    fn declared_return(&self, f: DefId) -> Option<Vec<DefId>> {
        if self.def(f).kind == Kind::Variable {
            return None;
        }
        let ret = self.def(f).returns.as_ref()?;
        let lang = self.files[f.file as usize].lang;
        let segs = split_path(ret, lang);
        self.types_at(self.def_module(f), &segs, lang)
    }

    /// The project types `segs` names from module `m`, if it names any.
    fn types_at(&self, m: ModId, segs: &[String], lang: Lang) -> Option<Vec<DefId>> {
        let PathOutcome::Found(ts) = self.resolve_path(m, segs, lang) else {
            return None;
        };
        let types: Vec<DefId> = ts
            .into_iter()
            .filter_map(|t| match t {
                Target::Def(d) if self.def(d).kind.is_type() => Some(d),
                _ => None,
            })
            .collect();
        (!types.is_empty()).then_some(types)
    }

    /// The project types a value of `receiver` has, seen from module `m`
    /// and `scope` of `file`; None when that is not known.
    pub(super) fn receiver_types(
        &self,
        file: u32,
        scope: Option<u32>,
        m: ModId,
        receiver: &Receiver,
    ) -> Option<Vec<DefId>> {
        let lang = self.files[file as usize].lang;
        match receiver {
            Receiver::SelfValue => self.self_type(file, scope).map(|t| vec![t]),
            Receiver::Type(t) => self.types_at(m, &split_path(t, lang), lang),
            // A class, or a module variable of a declared type (`flask.g`).
            Receiver::Name(t) => {
                let segs = split_path(t, lang);
                self.types_at(m, &segs, lang)
                    .or_else(|| self.variable_types(m, &segs, lang))
            }
            Receiver::Field(f) => {
                let owner = self.self_type(file, scope)?;
                let (home, ty) = self
                    .field_type(owner, f, 0)
                    .filter(|(_, t)| !t.is_empty())?;
                self.types_at(self.def_module(home), &split_path(ty, lang), lang)
            }
            Receiver::Returned(path) => {
                let types = self.returned_types(m, path, lang);
                (!types.is_empty()).then_some(types)
            }
            Receiver::MethodReturn(on, method) => {
                let mut out = Vec::new();
                for owner in self.receiver_types(file, scope, m, on)? {
                    for f in self.members_of(owner, method) {
                        for t in self.declared_return(f).unwrap_or_default() {
                            if !out.contains(&t) {
                                out.push(t);
                            }
                        }
                    }
                }
                (!out.is_empty()).then_some(out)
            }
            Receiver::Attribute(..) | Receiver::Item(_) => {
                let mut out = Vec::new();
                for (home, ty) in self.declared_types(file, scope, m, receiver) {
                    if ty.starts_with('[') {
                        continue;
                    }
                    for t in self
                        .types_at(home, &split_path(&ty, lang), lang)
                        .unwrap_or_default()
                    {
                        if !out.contains(&t) {
                            out.push(t);
                        }
                    }
                }
                (!out.is_empty()).then_some(out)
            }
            Receiver::None | Receiver::Super | Receiver::Unknown => None,
        }
    }

    /// Whether an attribute or element `receiver` is declared, and only
    /// as types from outside the project or containers.
    pub(super) fn declared_outside(
        &self,
        file: u32,
        scope: Option<u32>,
        m: ModId,
        receiver: &Receiver,
    ) -> bool {
        if !matches!(receiver, Receiver::Attribute(..) | Receiver::Item(_)) {
            return false;
        }
        let lang = self.files[file as usize].lang;
        let declared = self.declared_types(file, scope, m, receiver);
        !declared.is_empty()
            && declared.iter().all(|(home, ty)| {
                ty.starts_with('[')
                    || matches!(
                        self.resolve_path(*home, &split_path(ty, lang), lang),
                        PathOutcome::External
                    )
            })
    }

    /// The types a value of `receiver` is declared to have, as written
    /// (`[T]` for a container of `T`), each with the module that reads
    /// it: what an attribute or an element of the value needs.
    fn declared_types(
        &self,
        file: u32,
        scope: Option<u32>,
        m: ModId,
        receiver: &Receiver,
    ) -> Vec<(ModId, String)> {
        let lang = self.files[file as usize].lang;
        let returns = |f: DefId| {
            let d = self.def(f);
            let called = d.kind != Kind::Variable;
            d.returns
                .clone()
                .filter(|_| called)
                .map(|r| (self.def_module(f), r))
        };
        match receiver {
            Receiver::Type(t) => vec![(m, t.clone())],
            Receiver::Field(f) => self
                .self_type(file, scope)
                .and_then(|owner| self.field_type(owner, f, 0))
                .filter(|(_, t)| !t.is_empty())
                .map(|(home, t)| vec![(self.def_module(home), t.to_string())])
                .unwrap_or_default(),
            Receiver::Attribute(on, name) => {
                // `let (tx, rx) = channel();`: the element of a tuple.
                if let Ok(i) = name.parse::<usize>() {
                    let elements: Vec<(ModId, String)> = self
                        .declared_types(file, scope, m, on)
                        .into_iter()
                        .filter_map(|(home, t)| {
                            let inner = t.strip_prefix('(')?.strip_suffix(')')?;
                            let element = tuple_elements(inner).into_iter().nth(i)?;
                            (element != "_").then(|| (home, element.to_string()))
                        })
                        .collect();
                    if !elements.is_empty() {
                        return elements;
                    }
                }
                // Else a field (`guard.lock.s`, a tuple struct's `w.0`).
                let owners = self.receiver_types(file, scope, m, on).unwrap_or_default();
                let mut out = Vec::new();
                for owner in owners {
                    match self
                        .field_type(owner, name, 0)
                        .filter(|(_, t)| !t.is_empty())
                    {
                        Some((home, t)) => out.push((self.def_module(home), t.to_string())),
                        // A Python property: what its method returns. A
                        // Rust method is never read as a field.
                        None if lang == Lang::Python => {
                            out.extend(self.members_of(owner, name).into_iter().filter_map(returns))
                        }
                        None => {}
                    }
                }
                out
            }
            Receiver::Item(on) => self
                .declared_types(file, scope, m, on)
                .into_iter()
                .filter_map(|(home, t)| {
                    let inner = t.strip_prefix('[')?.strip_suffix(']')?;
                    Some((home, inner.to_string()))
                })
                .collect(),
            Receiver::Returned(path) => match self.resolve_path(m, path, lang) {
                PathOutcome::Found(fs) => fs
                    .into_iter()
                    .filter_map(|f| match f {
                        Target::Def(f) => returns(f),
                        Target::Module(_) => None,
                    })
                    .collect(),
                _ => Vec::new(),
            },
            Receiver::MethodReturn(on, method) => {
                let owners = self.receiver_types(file, scope, m, on).unwrap_or_default();
                owners
                    .into_iter()
                    .flat_map(|owner| self.members_of(owner, method))
                    .filter_map(returns)
                    .collect()
            }
            _ => Vec::new(),
        }
    }

    /// `r` on a value of the project types `types`: their members of that
    /// name. When they have none, the method is one of a trait (Rust) or of
    /// a base outside the project: same-name methods of other types are not
    /// candidates, only trait items may be.
    pub(super) fn on_types(&self, file: u32, r: &Ref, types: &[DefId]) -> Resolution {
        let found: Vec<Target> = types
            .iter()
            .flat_map(|&t| self.members_of(t, &r.name))
            .map(Target::Def)
            .collect();
        if !found.is_empty() {
            return exact(found);
        }
        if self.files[file as usize].lang == Lang::Python {
            return Resolution::none();
        }
        // A type that dereferences to another (`CachePadded<Idle>`) has
        // the target's methods too, which its declaration does not name.
        if types.iter().any(|&t| self.derefs(t)) {
            return self.by_method_name(file, r);
        }
        let by_name = self.by_method_name(file, r);
        let targets: Vec<DefId> = by_name
            .targets
            .into_iter()
            .filter(|&d| self.def(d).trait_name.is_some() || self.in_trait(d))
            .collect();
        self.by_name_filtered(&r.name, targets)
    }

    /// Whether the Rust type `t` implements `Deref`.
    fn derefs(&self, t: DefId) -> bool {
        self.members_of(t, "deref")
            .into_iter()
            .any(|d| self.def(d).trait_name.as_deref() == Some("Deref"))
    }

    /// Whether `d` is declared in a trait's body (a default method).
    pub(super) fn in_trait(&self, d: DefId) -> bool {
        self.def(d).parent.is_some_and(|p| {
            self.def(DefId {
                file: d.file,
                def: p,
            })
            .kind
                == Kind::Trait
        })
    }

    /// Every definition with a container (a method, variant, associated
    /// item) named `name`.
    pub(super) fn members_named<'s>(&'s self, name: &str) -> impl Iterator<Item = DefId> + 's {
        self.members.get(name).into_iter().flatten().copied()
    }

    /// Members named `name` of the type `owner` (and, for Python classes,
    /// of its bases), computed once per index like `lookup_memo` (class
    /// hierarchies may have cycles too).
    pub(super) fn members_of(&self, owner: DefId, name: &str) -> Vec<DefId> {
        if !self.def(owner).kind.is_type() {
            return Vec::new();
        }
        let key = Key::Members(owner, name.into());
        let found = match self.memo_enter(&key) {
            Entered::Known(found) => found,
            Entered::Cut => return Vec::new(),
            Entered::Fresh(frame) => {
                let found = self
                    .members_uncached(owner, name)
                    .into_iter()
                    .map(Target::Def)
                    .collect();
                self.memo_leave(key, frame, found)
            }
        };
        found
            .iter()
            .filter_map(|t| match *t {
                Target::Def(d) => Some(d),
                Target::Module(_) => None,
            })
            .collect()
    }

    fn members_uncached(&self, owner: DefId, name: &str) -> Vec<DefId> {
        let od = self.def(owner);
        let unit = self.files[owner.file as usize].unit;
        let python = self.files[owner.file as usize].lang == Lang::Python;
        // Several types of this name in the crate: an impl belongs to the
        // one its own module resolves the name to.
        // Python members are in the owner's own file; Rust ones in a file
        // naming both the member and the owner (`impl Owner`).
        if !python {
            self.note_unit(unit, &od.name);
            self.note_pair(name, &od.name);
        }
        let homonyms = !python
            && self
                .items
                .get(od.name.as_str())
                .into_iter()
                .flatten()
                .filter(|&&d| {
                    d != owner
                        && self.files[d.file as usize].unit == unit
                        && self.def(d).kind.is_type()
                })
                .count()
                > 0;
        let mut out: Vec<DefId> = self
            .members_named(name)
            .filter(|&d| {
                let md = self.def(d);
                if python {
                    // A Python class's members are in its body.
                    return d.file == owner.file && md.parent == Some(owner.def);
                }
                if self.files[d.file as usize].unit != unit
                    || md.container.as_deref() != Some(od.name.as_str())
                {
                    return false;
                }
                if !homonyms || (md.parent == Some(owner.def) && d.file == owner.file) {
                    return true;
                }
                let mut found = Vec::new();
                self.lookup(self.def_module(d), &od.name, &mut found);
                found.is_empty() || found.contains(&Target::Def(owner))
            })
            .collect();
        // Rust looks in inherent impls before trait impls: `x.len()` on a
        // type with both calls the inherent one.
        if !python && out.iter().any(|&d| self.def(d).trait_name.is_none()) {
            out.retain(|&d| self.def(d).trait_name.is_none());
        }
        if out.is_empty() {
            out = self.base_members(owner, name);
        }
        out
    }

    /// Members named `name` of the bases of `owner` (Python classes).
    pub(super) fn base_members(&self, owner: DefId, name: &str) -> Vec<DefId> {
        let od = self.def(owner);
        let mut out = Vec::new();
        let m = self.def_module(owner);
        let lang = self.files[owner.file as usize].lang;
        for base in &od.bases {
            let segs: Vec<String> = base.split('.').map(str::to_string).collect();
            if let PathOutcome::Found(ts) = self.resolve_path(m, &segs, lang) {
                for t in ts {
                    if let Target::Def(b) = t {
                        if b != owner {
                            out.extend(self.members_of(b, name));
                        }
                    }
                }
            }
        }
        out
    }

    /// The declared type of field `name` of `owner` (or of a Python base),
    /// with the definition that declares it.
    pub(super) fn field_type<'s>(
        &'s self,
        owner: DefId,
        name: &str,
        depth: u8,
    ) -> Option<(DefId, &'s str)> {
        let od = self.def(owner);
        if let Some((_, ty)) = od.fields.iter().find(|(n, _)| n == name) {
            return Some((owner, ty.as_str()));
        }
        if depth > 4 {
            return None;
        }
        let m = self.def_module(owner);
        let lang = self.files[owner.file as usize].lang;
        for base in &od.bases {
            let segs: Vec<String> = base.split('.').map(str::to_string).collect();
            if let PathOutcome::Found(ts) = self.resolve_path(m, &segs, lang) {
                for t in ts {
                    if let Target::Def(b) = t {
                        if b != owner {
                            if let Some(found) = self.field_type(b, name, depth + 1) {
                                return Some(found);
                            }
                        }
                    }
                }
            }
        }
        None
    }

    /// The type that `self` stands for inside `scope`.
    pub(super) fn self_type(&self, file: u32, scope: Option<u32>) -> Option<DefId> {
        let f = &self.files[file as usize];
        let mut cur = scope;
        while let Some(s) = cur {
            let d = &f.syms.defs[s as usize];
            if d.kind.is_type() {
                return Some(DefId { file, def: s });
            }
            if let Some(c) = &d.container {
                // Prefer the type declared in the same module, else any of
                // that name in the unit (impls may live in other files).
                let m = f.def_mod[s as usize];
                let mut out = Vec::new();
                self.lookup(m, c, &mut out);
                let found = out.into_iter().find_map(|t| match t {
                    Target::Def(d) if self.def(d).kind.is_type() => Some(d),
                    _ => None,
                });
                return found.or_else(|| self.type_in_unit(f.unit, c));
            }
            cur = d.parent;
        }
        None
    }

    fn type_in_unit(&self, unit: u32, name: &str) -> Option<DefId> {
        self.note_unit(unit, name);
        self.items
            .get(name)?
            .iter()
            .copied()
            .find(|&d| self.files[d.file as usize].unit == unit && self.def(d).kind.is_type())
    }
}
