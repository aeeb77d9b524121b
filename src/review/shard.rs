//! `--shard K/N`: the K-th of N partitions of the subjects a review
//! command selected, so N CI runners share one batch of tasks without a
//! scheduler of speed's own.

use crate::work::Subject;

/// `--shard K/N`: the K-th (1-based) of N partitions of the subjects.
///
/// A subject's shard follows from its identity alone (its feature and id,
/// a defect's name): it never moves to another shard as tasks come, go or
/// get approved, so N runners planning at different moments, or from
/// different checkouts, never review a task twice or leave one out.
/// Shards are even on average, not exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl Shard {
    /// Whether the subject known by `key` belongs to this shard.
    pub fn owns(&self, key: &str) -> bool {
        use sha2::{Digest, Sha256};
        let digest = Sha256::digest(key.as_bytes());
        let mut first = [0u8; 8];
        first.copy_from_slice(&digest[..8]);
        let bucket = u64::from_be_bytes(first) % u64::from(self.count.max(1));
        bucket + 1 == u64::from(self.index)
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_subject_belongs_to_exactly_one_shard_whatever_else_exists() {
        let keys: Vec<String> = (1..=200)
            .map(|i| work_key(Some(&i.to_string()), Some("shop"), None))
            .collect();
        for count in [1, 2, 3, 7] {
            let mut sizes = vec![0usize; count as usize];
            for key in &keys {
                let owners: Vec<u32> = (1..=count)
                    .filter(|index| {
                        Shard {
                            index: *index,
                            count,
                        }
                        .owns(key)
                    })
                    .collect();
                assert_eq!(owners.len(), 1, "{key:?} in {count} shards: {owners:?}");
                sizes[owners[0] as usize - 1] += 1;
            }
            // Even on average: no shard of 200 tasks is empty or holds most.
            let fair = 200 / count as usize;
            assert!(
                sizes.iter().all(|n| *n > fair / 2 && *n < fair * 2),
                "{sizes:?}"
            );
        }
        // The feature is part of the identity.
        let a = work_key(Some("1"), Some("a"), None);
        let b = work_key(Some("1"), Some("b"), None);
        assert_ne!(a, b);
    }
}
