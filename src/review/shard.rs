//! `--shard K/N`: the K-th of N partitions of the subjects a review
//! command selected, so N CI runners share one batch of tasks without a
//! scheduler of speed's own.

use std::collections::HashSet;

use crate::work::Subject;

/// `--shard K/N`: the K-th (1-based) of N partitions of the subjects.
///
/// The subjects are sorted by a stable hash of their identity (a task's
/// feature and id, a defect's name) and dealt round-robin: shard sizes
/// differ by at most one, even for five tasks over two runners, and a
/// subject's shard follows from the set dealt, never from the order the
/// task files were read in or from the runner. The caller deals what the
/// checkout decides (every candidate, approved or not), so runners that
/// plan at different moments from the same commit deal the same hands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl Shard {
    /// The keys (subject identities, see `key`) this shard holds when all
    /// of `keys` are dealt over the N shards. Repeated keys count once.
    pub fn deal<'k>(&self, keys: impl IntoIterator<Item = &'k str>) -> HashSet<&'k str> {
        let mut order: Vec<([u8; 32], &str)> = keys.into_iter().map(|k| (hash(k), k)).collect();
        order.sort_unstable();
        order.dedup_by(|a, b| a.1 == b.1);
        let count = self.count.max(1) as usize;
        let seat = (self.index.max(1) - 1) as usize;
        order
            .into_iter()
            .enumerate()
            .filter(|(i, _)| i % count == seat)
            .map(|(_, (_, key))| key)
            .collect()
    }

    /// `1/2`.
    pub fn label(&self) -> String {
        format!("{}/{}", self.index, self.count)
    }
}

fn hash(key: &str) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    Sha256::digest(key.as_bytes()).into()
}

/// What a subject's shard is decided by: its feature and id.
pub fn key(subject: &Subject) -> String {
    match subject {
        Subject::Task(task) => work_key(Some(&task.id), task.feature.as_deref(), None),
        Subject::Defect(review) => work_key(None, None, Some(&review.defect.name)),
        Subject::Branch { branch, .. } => format!("branch\0{branch}"),
    }
}

/// The identity of a task (its feature and id) or a defect (its name).
pub fn work_key(task: Option<&str>, feature: Option<&str>, defect: Option<&str>) -> String {
    match (task, defect) {
        (Some(id), _) => format!("task\0{}\0{id}", feature.unwrap_or("")),
        (None, Some(name)) => format!("defect\0{name}"),
        (None, None) => String::new(),
    }
}

/// What a shard holds, for the line every format prints on stderr and for
/// a report that would otherwise say nothing (an empty shard's JUnit).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Share {
    pub shard: Shard,
    /// Tasks and defects this shard reviews.
    pub tasks: usize,
    pub defects: usize,
    /// Subjects this shard holds that need no review (approved and still
    /// covered, waiting for a person or in a provider batch).
    pub skipped: usize,
    /// Subjects to review that were dealt to the other shards.
    pub others: usize,
}

impl Share {
    /// `shard 1/2: 3 tasks, 2 left to other shards`.
    pub fn line(&self) -> String {
        let mut held = Vec::new();
        if self.tasks > 0 || self.defects == 0 {
            held.push(plural(self.tasks, "task"));
        }
        if self.defects > 0 {
            held.push(plural(self.defects, "defect"));
        }
        let mut line = format!("shard {}: {}", self.shard.label(), held.join(" and "));
        if self.skipped > 0 {
            line.push_str(&format!(" ({} more need no review)", self.skipped));
        }
        line.push_str(&format!(", {} left to other shards", self.others));
        line
    }

    /// Nothing to review here, by the partition rather than by accident.
    pub fn is_empty(&self) -> bool {
        self.tasks == 0 && self.defects == 0
    }
}

fn plural(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(n: usize) -> Vec<String> {
        (1..=n)
            .map(|i| work_key(Some(&i.to_string()), Some("shop"), None))
            .collect()
    }

    #[test]
    fn every_subject_is_dealt_to_exactly_one_shard_and_sizes_differ_by_one_at_most() {
        for n in [0, 1, 2, 3, 5, 7, 200] {
            let keys = keys(n);
            for count in [1, 2, 3, 7] {
                let hands: Vec<HashSet<&str>> = (1..=count)
                    .map(|index| Shard { index, count }.deal(keys.iter().map(String::as_str)))
                    .collect();
                for key in &keys {
                    let owners = hands.iter().filter(|h| h.contains(key.as_str())).count();
                    assert_eq!(owners, 1, "{key:?} of {n} in {count} shards");
                }
                let sizes: Vec<usize> = hands.iter().map(HashSet::len).collect();
                let (min, max) = (sizes.iter().min(), sizes.iter().max());
                assert!(
                    max.unwrap() - min.unwrap() <= 1,
                    "{n} over {count}: {sizes:?}"
                );
            }
        }
    }

    #[test]
    fn the_deal_follows_from_the_set_not_its_order() {
        let keys = keys(9);
        let mut reversed = keys.clone();
        reversed.reverse();
        let shard = Shard { index: 2, count: 3 };
        assert_eq!(
            shard.deal(keys.iter().map(String::as_str)),
            shard.deal(reversed.iter().map(String::as_str))
        );
        // The feature is part of the identity.
        let a = work_key(Some("1"), Some("a"), None);
        let b = work_key(Some("1"), Some("b"), None);
        assert_ne!(a, b);
    }

    #[test]
    fn the_line_says_what_the_shard_holds() {
        let share = |tasks, defects, skipped, others| Share {
            shard: Shard { index: 1, count: 2 },
            tasks,
            defects,
            skipped,
            others,
        };
        assert_eq!(
            share(3, 0, 0, 2).line(),
            "shard 1/2: 3 tasks, 2 left to other shards"
        );
        assert_eq!(
            share(1, 1, 2, 1).line(),
            "shard 1/2: 1 task and 1 defect (2 more need no review), 1 left to other shards"
        );
        assert_eq!(
            share(0, 0, 0, 5).line(),
            "shard 1/2: 0 tasks, 5 left to other shards"
        );
        assert!(share(0, 0, 1, 5).is_empty());
    }
}
