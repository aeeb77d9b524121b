//! The impact table's claim on the budget: its rows, riskiest first, while
//! its share lasts (and then while what the code leaves lasts), with a
//! count of the rows left out.

use crate::prompt::{ImpactRow, Omission};

use super::{Ctx, GROUPED_NAMES, OMITTED_FOR_BUDGET, cell, omission};

/// An added or removed symbol that nothing references: it is in the diff,
/// and no code outside it can break.
fn unreferenced(row: &ImpactRow) -> bool {
    (row.change == "added" || row.change == "removed")
        && row.dependents == 0
        && !row.file.is_empty()
}

/// Impact rows, already ranked by risk, with the added and the removed
/// symbols nothing references grouped per file at the end: a prefix that
/// fits its share.
pub(super) struct ImpactPlan {
    /// `None`: impact analysis did not run.
    rows: Option<Vec<(String, String, usize)>>,
    shown: usize,
}

const IMPACT_HEADER: &str = "| symbol | kind | change | dependents | dependent files | stability | top dependents |\n|---|---|---|---|---|---|---|\n";

impl ImpactPlan {
    pub(super) fn new(ctx: &Ctx, rows: Option<&[ImpactRow]>) -> ImpactPlan {
        let rows = rows.map(|rows| {
            let row = |symbol: &str, kind: &str, change: &str, r: &ImpactRow| {
                format!(
                    "| {} | {} | {} | {} | {} | {} | {} |\n",
                    cell(symbol),
                    cell(kind),
                    cell(change),
                    r.dependents,
                    r.dependent_files,
                    cell(&r.stability),
                    cell(&r.top.join(", "))
                )
            };
            let (grouped, ranked): (Vec<&ImpactRow>, Vec<&ImpactRow>) =
                rows.iter().partition(|r| unreferenced(r));
            let mut out: Vec<(String, String, usize)> = ranked
                .iter()
                .map(|r| (row(&r.symbol, &r.kind, &r.change, r), r.symbol.clone()))
                .map(|(line, item)| {
                    let tokens = ctx.count(&line);
                    (line, item, tokens)
                })
                .collect();
            // Added symbols nothing references yet, and removed ones
            // nothing referenced, carry little risk: one row per file and
            // change names them all, rather than a row each.
            let mut files: Vec<(&str, &str, Vec<&ImpactRow>)> = Vec::new();
            for r in grouped {
                match files
                    .iter_mut()
                    .find(|(f, c, _)| *f == r.file && *c == r.change)
                {
                    Some((_, _, list)) => list.push(r),
                    None => files.push((&r.file, &r.change, vec![r])),
                }
            }
            for (file, change, list) in files {
                let (line, item) = if list.len() == 1 {
                    let r = list[0];
                    (row(&r.symbol, &r.kind, &r.change, r), r.symbol.clone())
                } else {
                    let mut names: Vec<String> = list
                        .iter()
                        .take(GROUPED_NAMES)
                        .map(|r| r.name.clone())
                        .collect();
                    if list.len() > GROUPED_NAMES {
                        names.push(format!("and {} more", list.len() - GROUPED_NAMES));
                    }
                    let mut kinds: Vec<&str> = Vec::new();
                    for r in &list {
                        if !kinds.contains(&r.kind.as_str()) {
                            kinds.push(&r.kind);
                        }
                    }
                    let symbol = format!("{} ({file})", names.join(", "));
                    let line = format!(
                        "| {} | {} | {change}, {} symbols, none referenced | 0 | 0 | - | - |\n",
                        cell(&symbol),
                        cell(&kinds.join(", ")),
                        list.len()
                    );
                    (line, symbol)
                };
                let tokens = ctx.count(&line);
                out.push((line, item, tokens));
            }
            out
        });
        ImpactPlan { rows, shown: 0 }
    }

    /// Shows the riskiest rows within `cap`; returns the spend.
    pub(super) fn pack(&mut self, ctx: &Ctx, cap: usize) -> usize {
        self.shown = 0;
        self.pack_more(ctx, cap)
    }

    /// Shows more rows within `extra` more tokens; returns the tokens
    /// spent.
    pub(super) fn pack_more(&mut self, ctx: &Ctx, extra: usize) -> usize {
        let Some(rows) = &self.rows else { return 0 };
        let before = self.spend(ctx);
        let mut used = if self.shown == 0 {
            ctx.fence_tokens + ctx.count(IMPACT_HEADER) + 24
        } else {
            before
        };
        let mut shown = self.shown;
        for (_, _, tokens) in &rows[shown..] {
            if used + tokens > before + extra {
                break;
            }
            used += tokens;
            shown += 1;
        }
        self.shown = shown;
        self.spend(ctx) - before
    }

    /// What the rows shown cost.
    pub(super) fn spend(&self, ctx: &Ctx) -> usize {
        match &self.rows {
            Some(rows) if self.shown > 0 => {
                ctx.fence_tokens
                    + ctx.count(IMPACT_HEADER)
                    + 24
                    + rows[..self.shown].iter().map(|r| r.2).sum::<usize>()
            }
            _ => 0,
        }
    }

    /// Shows no row: code comes first.
    pub(super) fn clear(&mut self) {
        self.shown = 0;
    }

    pub(super) fn render(&self, ctx: &Ctx) -> String {
        match &self.rows {
            None => "(impact analysis not available)".to_string(),
            Some(rows) if rows.is_empty() => "(no changed symbols with dependents)".to_string(),
            Some(rows) if self.shown == 0 => {
                format!("(all {} impact rows omitted for budget)", rows.len())
            }
            Some(rows) => {
                let mut table = IMPACT_HEADER.to_string();
                for (line, _, _) in &rows[..self.shown] {
                    table.push_str(line);
                }
                let left = rows.len() - self.shown;
                let mut out = ctx.fence.wrap(&table);
                if left > 0 {
                    out.push_str(&format!(
                        "\n({left} lower-risk rows of {} omitted for budget)",
                        rows.len()
                    ));
                }
                out
            }
        }
    }

    pub(super) fn drop_rows(&mut self, need: usize) -> bool {
        let Some(rows) = &self.rows else { return false };
        let mut freed = 0;
        let before = self.shown;
        while self.shown > 0 && freed < need {
            self.shown -= 1;
            freed += rows[self.shown].2;
        }
        self.shown < before
    }

    pub(super) fn omissions(&self) -> Vec<Omission> {
        self.rows
            .iter()
            .flatten()
            .skip(self.shown)
            .map(|(_, symbol, _)| omission(symbol.clone(), OMITTED_FOR_BUDGET))
            .collect()
    }
}
