//! `[dimensions.<name>]`: a built-in quality dimension changed, or a custom
//! one added. Each table takes `weight`, `min_score`, `description` and
//! `enabled`; a name is a word of lowercase letters, digits and `_`, since
//! the model's answer is keyed by it. A custom dimension needs a
//! description: the model is told what it rates.

use super::{Dimension, Reader, Table, limits};

const DIMENSION_KEYS: &[&str] = &["weight", "min_score", "description", "enabled"];

impl Reader<'_> {
    pub(super) fn dimensions(&mut self, t: &Table) -> Vec<Dimension> {
        let builtin = crate::verdict::dimensions::builtin();
        let mut out = Vec::new();
        // In the file's order: custom dimensions are listed as written.
        let mut entries: Vec<_> = t.entries.iter().collect();
        entries.sort_by_key(|(key, _)| key.span().start);
        for (key, value) in entries {
            let name = key.get_ref().as_ref();
            let Some(entries) = value.get_ref().as_table() else {
                let found = self.found(value);
                self.problem(
                    value.span(),
                    t.path(name),
                    format!("expected a table ([dimensions.{name}]) of weight, min_score, description, enabled; found {found}"),
                );
                continue;
            };
            let valid = !name.is_empty()
                && name.len() <= 64
                && name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
            if !valid {
                self.problem(
                    key.span(),
                    t.path(name),
                    "a dimension's name is lowercase letters, digits and _ (at most 64)"
                        .to_string(),
                );
                continue;
            }
            let table = Table {
                name: t.path(name),
                entries,
            };
            self.check_keys(&table, DIMENSION_KEYS);
            let dimension = Dimension {
                name: name.to_string(),
                weight: self.u32(&table, "weight", limits::WEIGHT),
                min_score: self.u32(&table, "min_score", limits::SCORE),
                description: self.string(&table, "description"),
                enabled: self.bool(&table, "enabled"),
            };
            let custom = !builtin.iter().any(|d| d.name == name);
            if custom && dimension.description.is_none() && table.get("description").is_none() {
                self.problem(
                    key.span(),
                    table.name.clone(),
                    "a custom dimension needs a description: the model is told what it rates"
                        .to_string(),
                );
            }
            out.push(dimension);
        }
        out
    }
}
