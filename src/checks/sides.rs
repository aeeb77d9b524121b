//! Both sides of each changed Rust or Python file, outlined once for every
//! check that reads them (`builtin`, `coordination`), on all cores, and
//! the head side's discarded errors found in the same pass (`discarded`). Their
//! trees come from the review's store and stay kept in it: the index
//! parses the changed files first and finds them there.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::paths;
use crate::syntax::Lang;

use super::discarded;
use super::files::{Files, Side};
use super::outline::{self, Outline};

/// Files above this size are generated or vendored: not outlined.
pub const MAX_OUTLINE_BYTES: usize = 1 << 20;

/// How much text of the changed files the store keeps parsed for the
/// index: beyond it (a diff of hundreds of large files) a tree is dropped
/// once outlined, and the index parses the file again rather than hold
/// every tree at once.
const KEEP_BYTES: usize = 4 << 20;

/// The outlines of the diff's changed files.
#[derive(Debug, Default)]
pub struct Sides {
    /// By index into `diff.files`.
    pub head: HashMap<usize, Outline>,
    pub base: HashMap<usize, Outline>,
    /// The head side's discarded errors (`discarded::find`), by index into
    /// `diff.files`; test files are not read.
    pub discards: HashMap<usize, discarded::Found>,
    /// What could not be outlined, and why.
    pub notices: Vec<String>,
}

/// One side of one changed file to outline.
struct Task<'a> {
    file: usize,
    side: Side,
    path: &'a str,
    blob: &'a str,
    lang: Lang,
}

impl Sides {
    /// Outline both sides of every changed file of `files`' diff.
    pub fn load(files: &Files) -> Sides {
        let mut tasks = Vec::new();
        for (i, file) in files.diff().files.iter().enumerate() {
            if file.binary {
                continue;
            }
            if let (Some(blob), Some(lang)) = (&file.new_blob, Lang::of_path(&file.path)) {
                tasks.push(Task {
                    file: i,
                    side: Side::Head,
                    path: &file.path,
                    blob,
                    lang,
                });
            }
            let old_path = file.old_path.as_deref().unwrap_or(&file.path);
            if let (Some(blob), Some(lang)) = (&file.old_blob, Lang::of_path(old_path)) {
                tasks.push(Task {
                    file: i,
                    side: Side::Base,
                    path: old_path,
                    blob,
                    lang,
                });
            }
        }
        let kept = AtomicUsize::new(0);
        let done = parallel(tasks.len(), |t| outline_one(files, &tasks[t], &kept));
        let mut sides = Sides::default();
        for (task, (outline, notice, discards)) in tasks.iter().zip(done) {
            sides.notices.extend(notice);
            if let Some(d) = discards {
                sides.discards.insert(task.file, d);
            }
            if let Some(o) = outline {
                match task.side {
                    Side::Head => sides.head.insert(task.file, o),
                    Side::Base => sides.base.insert(task.file, o),
                };
            }
        }
        sides
    }
}

/// One side's outline, or the notice saying why there is none; the head
/// side's discarded errors.
fn outline_one(
    files: &Files,
    task: &Task,
    kept: &AtomicUsize,
) -> (Option<Outline>, Option<String>, Option<discarded::Found>) {
    let store = files.store();
    let key = crate::syntax::Key::new(task.blob, task.lang);
    let path = task.path;
    let text = match store.text(&key) {
        Ok(t) => t,
        Err(e) => {
            return (
                None,
                Some(format!(
                    "Checks: {path} could not be read ({e}), so it was not checked"
                )),
                None,
            );
        }
    };
    if text.len() > MAX_OUTLINE_BYTES {
        return (
            None,
            Some(format!(
                "Checks: {path} is over {} MiB, so its code was not checked",
                MAX_OUTLINE_BYTES >> 20
            )),
            None,
        );
    }
    if kept.fetch_add(text.len(), Ordering::Relaxed) + text.len() <= KEEP_BYTES {
        store.keep(&key);
    }
    let test_file = paths::is_test(path);
    match store.tree(&key) {
        Ok(parsed) => (
            Some(outline::of(&parsed, test_file, path.ends_with(".pyi"))),
            None,
            (task.side == Side::Head && !test_file).then(|| discarded::find(&parsed)),
        ),
        Err(_) => (
            None,
            Some(format!(
                "Checks: {path} could not be parsed, so its code was not checked"
            )),
            None,
        ),
    }
}

/// `work(0..count)` on all cores, results in order.
pub(super) fn parallel<T: Send>(count: usize, work: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(count);
    if threads <= 1 {
        return (0..count).map(work).collect();
    }
    let next = AtomicUsize::new(0);
    let mut done: Vec<(usize, T)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= count {
                            break;
                        }
                        mine.push((i, work(i)));
                    }
                    mine
                })
            })
            .collect();
        workers
            .into_iter()
            // A worker that panicked takes its panic to the caller.
            .flat_map(|w| w.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, t)| t).collect()
}
