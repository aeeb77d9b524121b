//! The gate's decision: given what a merge or a push brings in, which pieces
//! of work arrive at which commits, and whether an approval covers each.
//!
//! A task (or defect) *arrives* when its branch head is among the commits
//! brought in; it arrives *in part* when some of its branch's commits are
//! brought in but not its head (`git merge speed/task-3~1`), and then the
//! newest of those commits must be covered as if it were the head. A commit
//! of a task stacked on another arrives with that other task. Non-merge
//! commits that belong to no task or defect are listed as unknown.
//!
//! Whether an approval covers each arrival is `ledger::covers`'s answer, the
//! one batch mode and `speed show` give too. It reads git objects, task and
//! defect files, the verdict cache and the review log; never an index, a
//! tokenizer or a model.

use std::collections::{HashMap, HashSet};

use crate::git::{CommitNode, MainBranch, Repository};
use crate::ledger::covers::{self, Current, Ground, Question};
pub use crate::ledger::covers::{Cover, Miss};
use crate::ledger::verdicts;
use crate::work::{self, Subject, Work};

use super::Error;
use super::owners::Owner;

/// More new commits than this in one merge or push is refused rather than
/// walked (the time limit would stop it anyway; this says why).
const MAX_COMMITS: usize = 200_000;

/// What a merge or a push brings in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Incoming {
    /// The commits arriving: MERGE_HEAD's, or the pushed one.
    pub tips: Vec<String>,
    /// What the target already has: the main branch before the merge, the
    /// remote's old commit or, for a new branch, what the remote was last
    /// seen to have. Commits this repository lacks are left out.
    pub known: Vec<String>,
}

/// A piece of work arriving at a commit, and the verdict on it.
#[derive(Debug, Clone)]
pub struct Arrival {
    pub work: Work,
    pub branch: String,
    /// The commit that must be covered.
    pub commit: String,
    /// The branch's head; differs from `commit` when only part arrives.
    pub head: String,
    pub verdict: Result<Cover, Miss>,
    /// What is worth saying (an unreadable task file, a damaged cache file,
    /// a record not trusted).
    pub notes: Vec<String>,
}

impl Arrival {
    pub fn partial(&self) -> bool {
        self.commit != self.head
    }
}

/// The gate's findings about one merge or push.
#[derive(Debug, Clone, Default)]
pub struct Findings {
    pub arrivals: Vec<Arrival>,
    /// Non-merge commits brought in that belong to no task or defect.
    pub unknown: Vec<String>,
    /// How many commits the merge or push brings in.
    pub commits: usize,
}

/// What the gate reads.
pub struct Gate<'a> {
    pub repo: &'a Repository,
    pub main: &'a MainBranch,
    pub owners: &'a [Owner],
    pub store: &'a verdicts::Store,
}

impl Gate<'_> {
    /// What every one of `incoming` brings, together.
    pub fn check_all(&self, incoming: &[Incoming]) -> Result<Findings, Error> {
        let mut all = Findings::default();
        for incoming in incoming {
            let found = self.check(incoming)?;
            all.arrivals.extend(found.arrivals);
            all.unknown.extend(found.unknown);
            all.commits += found.commits;
        }
        Ok(all)
    }

    /// Which work arrives with `incoming`, at which commit, and whether each
    /// is covered.
    pub fn check(&self, incoming: &Incoming) -> Result<Findings, Error> {
        let known: Vec<String> = incoming
            .known
            .iter()
            .filter(|id| self.repo.has_commit(id))
            .cloned()
            .collect();
        let new = self
            .repo
            .commits_between(&incoming.tips, &known, MAX_COMMITS)?;
        if new.is_empty() {
            return Ok(Findings::default());
        }
        let graph: HashMap<&str, &CommitNode> = new.iter().map(|c| (c.id.as_str(), c)).collect();
        let heads: Vec<(usize, String)> = self
            .owners
            .iter()
            .enumerate()
            .filter_map(|(i, o)| self.head_of(o).map(|h| (i, h)))
            .collect();

        // Work whose head arrives, and every commit that comes with it.
        let mut arriving: Vec<(usize, String, String)> = Vec::new();
        let mut claimed: HashSet<&str> = HashSet::new();
        for (i, head) in &heads {
            if let Some((&id, _)) = graph.get_key_value(head.as_str()) {
                arriving.push((*i, head.clone(), head.clone()));
                claimed.extend(reachable(&graph, &[id]));
            }
        }
        let rest: Vec<&CommitNode> = new
            .iter()
            .filter(|c| !claimed.contains(c.id.as_str()))
            .collect();

        let mut unknown = Vec::new();
        if !rest.is_empty() {
            let (parts, unowned) = self.partial_arrivals(&heads, &known, &rest)?;
            arriving.extend(parts);
            unknown = unowned;
        }
        arriving
            .sort_by(|a, b| (&self.owners[a.0].work, &a.1).cmp(&(&self.owners[b.0].work, &b.1)));
        arriving.dedup_by(|a, b| a.0 == b.0 && a.1 == b.1);

        let arrivals = arriving
            .into_iter()
            .map(|(i, commit, head)| self.judge(&self.owners[i], commit, head))
            .collect::<Result<Vec<_>, Error>>()?;
        Ok(Findings {
            arrivals,
            unknown,
            commits: new.len(),
        })
    }

    /// For the commits no arriving head brought: the work they belong to
    /// (arriving in part, at the newest of its commits here) and those that
    /// belong to no work.
    #[allow(clippy::type_complexity)]
    fn partial_arrivals(
        &self,
        heads: &[(usize, String)],
        known: &[String],
        rest: &[&CommitNode],
    ) -> Result<(Vec<(usize, String, String)>, Vec<String>), Error> {
        // Every commit of every branch that the target does not have yet.
        let tips: Vec<String> = {
            let mut t: Vec<String> = heads.iter().map(|(_, h)| h.clone()).collect();
            t.sort();
            t.dedup();
            t
        };
        let unmerged = self.repo.commits_between(&tips, known, MAX_COMMITS)?;
        let owned: HashMap<&str, &CommitNode> =
            unmerged.iter().map(|c| (c.id.as_str(), c)).collect();
        let rest_ids: HashSet<&str> = rest.iter().map(|c| c.id.as_str()).collect();

        let mut parts = Vec::new();
        let mut belongs: HashSet<&str> = HashSet::new();
        for (i, head) in heads {
            let Some((&id, _)) = owned.get_key_value(head.as_str()) else {
                continue;
            };
            let mut range = reachable(&owned, &[id]);
            // What the branch started from is not its work.
            let start = self.start_of(&self.owners[*i], head, known.is_empty());
            if let Some((&start, _)) = start.and_then(|s| owned.get_key_value(s.as_str())) {
                for before in reachable(&owned, &[start]) {
                    range.remove(before);
                }
            }
            let here: HashSet<&str> = range.intersection(&rest_ids).copied().collect();
            if here.is_empty() {
                continue;
            }
            belongs.extend(here.iter().copied());
            // The newest commits of this branch that arrive: no child of
            // theirs on the branch arrives too.
            let parents_here: HashSet<&str> = here
                .iter()
                .flat_map(|c| owned[c].parents.iter().map(String::as_str))
                .collect();
            let mut tips: Vec<&str> = here
                .iter()
                .copied()
                .filter(|c| !parents_here.contains(c))
                .collect();
            tips.sort_unstable();
            parts.extend(tips.into_iter().map(|t| (*i, t.to_string(), head.clone())));
        }
        let unowned = rest
            .iter()
            .filter(|c| c.parents.len() < 2 && !belongs.contains(c.id.as_str()))
            .map(|c| c.id.clone())
            .collect();
        Ok((parts, unowned))
    }

    /// The commit a branch's own work starts after: the task's declared base
    /// (`execution_base_commit`, `base_commit`); with nothing the target had
    /// to measure from (a push creating the branch), where it forked from
    /// the main branch.
    fn start_of(&self, owner: &Owner, head: &str, no_reference: bool) -> Option<String> {
        let declared = owner.task.as_ref().and_then(|t| {
            [&t.execution_base_commit, &t.base_commit]
                .into_iter()
                .flatten()
                .find_map(|c| self.repo.resolve_commit(c).ok())
        });
        declared.or_else(|| {
            no_reference
                .then(|| self.repo.merge_base(&self.main.commit, head).ok())
                .flatten()
                .filter(|fork| fork != head)
        })
    }

    /// The head of `owner`'s work: its branch's, else (a task whose branch
    /// was deleted once merged, as hosts do) the last head a review of it
    /// saw, so its commits arriving on a push are still its own.
    fn head_of(&self, owner: &Owner) -> Option<String> {
        self.repo.newest_tip(&owner.branch).or_else(|| {
            owner
                .task
                .as_deref()
                .and_then(work::reviewed_head)
                .and_then(|head| self.repo.resolve_commit(&head).ok())
        })
    }

    /// Whether `commit` of `owner`'s work is covered (`ledger::covers`
    /// decides; the task file is not one of its sources here, since a
    /// branch can carry a task file of its own making).
    fn judge(&self, owner: &Owner, commit: String, head: String) -> Result<Arrival, Error> {
        let mut notes: Vec<String> = owner.problem.iter().cloned().collect();
        let subject = owner
            .task
            .as_ref()
            .map(|task| Subject::Task(Box::new((**task).clone())));
        let current = match &subject {
            Some(subject) if commit == head => Current::Of(subject),
            _ => Current::NotTheHead,
        };
        let ground = Ground {
            repo: self.repo,
            main: self.main,
            store: self.store,
        };
        // A review (or a person) writing its decision about this work right
        // now finishes first: the records read below are whole.
        let _record = match crate::ledger::locks::recording(self.repo.state_root(), &owner.work) {
            Ok(lock) => Some(lock),
            Err(err) => {
                notes.push(format!(
                    "read without waiting for the decision being written: {err}"
                ));
                None
            }
        };
        let answer = covers::covers(
            &ground,
            &Question {
                work: &owner.work,
                commit: &commit,
                current,
                task: None,
            },
        );
        notes.extend(answer.notes);
        Ok(Arrival {
            work: owner.work.clone(),
            branch: owner.branch.clone(),
            commit,
            head,
            verdict: answer.verdict,
            notes,
        })
    }
}

/// The commits of `graph` reachable from `from` through parents in `graph`.
fn reachable<'g>(graph: &HashMap<&'g str, &'g CommitNode>, from: &[&'g str]) -> HashSet<&'g str> {
    let mut seen: HashSet<&str> = HashSet::new();
    let mut stack: Vec<&str> = from.to_vec();
    while let Some(id) = stack.pop() {
        let Some((&key, node)) = graph.get_key_value(id) else {
            continue;
        };
        if seen.insert(key) {
            stack.extend(node.parents.iter().map(String::as_str));
        }
    }
    seen
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reachable_stays_inside_the_graph() {
        let node = |id: &str, parents: &[&str]| CommitNode {
            id: id.to_string(),
            parents: parents.iter().map(|p| p.to_string()).collect(),
        };
        // d merges b and c; a is outside the graph (already merged).
        let nodes = [node("b", &["a"]), node("c", &["a"]), node("d", &["b", "c"])];
        let graph: HashMap<&str, &CommitNode> = nodes.iter().map(|n| (n.id.as_str(), n)).collect();
        let mut got: Vec<&str> = reachable(&graph, &["d"]).into_iter().collect();
        got.sort_unstable();
        assert_eq!(got, ["b", "c", "d"]);
        assert_eq!(reachable(&graph, &["c"]).len(), 1);
        assert!(reachable(&graph, &["a"]).is_empty());
    }
}
