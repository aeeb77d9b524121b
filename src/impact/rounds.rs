//! Which files an analysis parses, and when: the first pass reads every
//! blob (symbols from the cache where it has them), then rounds parse only
//! the files whose text holds a name the resolution asked about, until no
//! unparsed file could change an answer; the work is spread over all cores.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use crate::syntax::{Key, Store};

use super::cache::{Cache, Miss};
use super::index::{self, Index, Manifest, Probe, Source};
use super::lang;
use super::words::{self, Unparsed, Words};
use super::{
    BATCH_ALL_BYTES, Error, Extractor, FileEntry, FileSymbols, Impact, Lang, MAX_FILE_BYTES,
    Parsing,
};

/// What an analysis reads: every head source file and the base side of
/// each changed file, each blob once.
pub(super) struct Plan<'a> {
    pub(super) jobs: Vec<Job>,
    /// The head tree's source files, each with its job.
    pub(super) head_jobs: Vec<(&'a str, usize)>,
    /// The job of each changed file's base side, by its place in `changed`.
    pub(super) base_job: HashMap<usize, usize>,
    /// Jobs parsed whatever names are asked about: both sides of every
    /// changed file (they say what changed), or every job for `Parsing::All`.
    pub(super) must: Vec<bool>,
}

impl<'a> Plan<'a> {
    pub(super) fn new(
        head_files: &'a [FileEntry],
        changed: &[&crate::git::FileDiff],
        parsing: Parsing,
    ) -> Plan<'a> {
        let mut jobs: Vec<Job> = Vec::new();
        let mut job_of: HashMap<(String, Lang), usize> = HashMap::new();
        let mut add_job = |blob: &str, lang: Lang, jobs: &mut Vec<Job>| -> usize {
            *job_of.entry((blob.to_string(), lang)).or_insert_with(|| {
                jobs.push(Job {
                    key: Key::new(blob, lang),
                });
                jobs.len() - 1
            })
        };
        let mut head_jobs = Vec::new();
        for f in head_files {
            if let Some(lang) = Lang::of_path(&f.path) {
                head_jobs.push((f.path.as_str(), add_job(&f.blob, lang, &mut jobs)));
            }
        }
        let mut base_job: HashMap<usize, usize> = HashMap::new();
        for (i, fd) in changed.iter().enumerate() {
            let old_path = fd.old_path.as_deref().unwrap_or(&fd.path);
            if let (Some(blob), Some(lang)) = (&fd.old_blob, Lang::of_path(old_path)) {
                base_job.insert(i, add_job(blob, lang, &mut jobs));
            }
        }
        let mut must = vec![parsing == Parsing::All; jobs.len()];
        let changed_paths: HashSet<&str> = changed
            .iter()
            .filter(|fd| fd.new_blob.is_some())
            .map(|fd| fd.path.as_str())
            .collect();
        for (path, j) in &head_jobs {
            if changed_paths.contains(path) {
                must[*j] = true;
            }
        }
        for j in base_job.values() {
            must[*j] = true;
        }
        Plan {
            jobs,
            head_jobs,
            base_job,
            must,
        }
    }

    /// The index of one round, and each of its files' job. Every readable
    /// file takes part (unparsed ones without symbols), so files, crates
    /// and module paths are the full index's, in the same order; only what
    /// the unparsed files declare is missing.
    pub(super) fn index(&self, slots: &[Slot], manifests: &[Manifest]) -> (Index, Vec<usize>) {
        let mut sources = Vec::with_capacity(self.head_jobs.len());
        let mut file_job = Vec::with_capacity(self.head_jobs.len());
        for (path, j) in &self.head_jobs {
            let (syms, pending) = match &slots[*j] {
                Slot::Parsed(s) => (Arc::clone(s), false),
                Slot::Unparsed(_) => (Arc::default(), true),
                Slot::Failed(_) => continue,
            };
            sources.push(Source {
                path: path.to_string(),
                lang: self.jobs[*j].key.lang,
                syms,
                pending,
            });
            file_job.push(*j);
        }
        (Index::build(sources, manifests), file_job)
    }
}

/// The unparsed text of `jobs`, in bytes.
pub(super) fn unparsed_bytes(slots: &[Slot], jobs: &mut dyn Iterator<Item = usize>) -> usize {
    jobs.map(|j| match &slots[j] {
        Slot::Unparsed(u) => u.len(),
        _ => 0,
    })
    .sum()
}

/// The files the next round parses, and how many files only the second
/// hop wanted and did not get. Every file an answer about the changed
/// symbols and their dependents may rest on is parsed. The second hop (the
/// dependents' dependents) only adds to the radius, a count: the files
/// only it wants are parsed while at least half of the text left unparsed
/// at first (`unparsed` bytes) stays unparsed, or the tree is small. On a
/// hub whose dependents have common names (`run`, `sleep`), it would have
/// every file of the tree parsed for that one number.
pub(super) fn next_round(
    index: &Index,
    file_job: &[usize],
    jobs: &[Job],
    slots: &[Slot],
    scanned: &mut Scanned,
    unparsed: usize,
) -> Result<(Vec<usize>, usize), Error> {
    let mut probes = index.take_probes();
    if unparsed <= BATCH_ALL_BYTES {
        // A small tree is read whatever the second hop asks: one scan.
        probes.first.merge(probes.second);
        return Ok((
            wanted(index, file_job, jobs, slots, probes.first, scanned)?,
            0,
        ));
    }
    let mut want = wanted(index, file_job, jobs, slots, probes.first, scanned)?;
    let mut tried = scanned.clone();
    let second: Vec<usize> = wanted(index, file_job, jobs, slots, probes.second, &mut tried)?
        .into_iter()
        .filter(|j| want.binary_search(j).is_err())
        .collect();
    if second.is_empty() {
        return Ok((want, 0));
    }
    let pending = unparsed_bytes(slots, &mut (0..slots.len()));
    let taken = unparsed_bytes(slots, &mut want.iter().chain(&second).copied());
    if 2 * pending.saturating_sub(taken) >= unparsed {
        want.extend(second);
        want.sort_unstable();
        *scanned = tried;
        Ok((want, 0))
    } else {
        Ok((want, second.len()))
    }
}

/// The jobs the next round parses: the `wanted` ones, or every unparsed
/// one when the names asked about reach nearly all of the text left
/// unparsed (of `unparsed` bytes at first): rounds cost an index each, and
/// parsing more never changes the answer.
pub(super) fn next_batch(wanted: Vec<usize>, slots: &[Slot], unparsed: usize) -> Vec<usize> {
    let pending = unparsed_bytes(slots, &mut (0..slots.len()));
    let reached = unparsed - pending + unparsed_bytes(slots, &mut wanted.iter().copied());
    if unparsed > BATCH_ALL_BYTES && 10 * reached > 9 * unparsed {
        (0..slots.len())
            .filter(|&j| matches!(slots[j], Slot::Unparsed(_)))
            .collect()
    } else {
        wanted
    }
}

/// A blob read as one language: the store's key for its text and tree.
pub(super) struct Job {
    key: Key,
}

/// Where one job stands.
pub(super) enum Slot {
    /// Extracted, or read from the cache; shared with every round's index.
    Parsed(Arc<FileSymbols>),
    /// Not parsed: no name asked about so far occurs in it.
    Unparsed(Unparsed),
    /// Unreadable or too large: listed in `Impact::skipped`.
    Failed(String),
}

/// What earlier rounds already scanned the unparsed text for: every file
/// holding one of these was parsed then.
#[derive(Default, Clone)]
pub(super) struct Scanned {
    names: HashSet<String>,
    pairs: HashSet<(String, String)>,
    units: HashSet<(u32, String)>,
}

/// The jobs whose unparsed text could change an answer `probe` records
/// of `index`: those containing a name it was asked about, across the
/// tree, in the unit, or in the module (or a module above it) that was
/// asked.
fn wanted(
    index: &Index,
    file_job: &[usize],
    jobs: &[Job],
    slots: &[Slot],
    probe: Probe,
    scanned: &mut Scanned,
) -> Result<Vec<usize>, Error> {
    let mut want: BTreeSet<usize> = BTreeSet::new();
    let unparsed = |j: usize| match &slots[j] {
        Slot::Unparsed(u) => Some(u),
        _ => None,
    };
    // A name scanned in an earlier round already had every file holding it parsed.
    let fresh: Vec<&str> = probe
        .global
        .iter()
        .map(String::as_str)
        .filter(|n| !n.is_empty() && !scanned.names.contains(*n))
        .collect();
    if !fresh.is_empty() {
        match aho_corasick::AhoCorasick::new(&fresh) {
            // Every unparsed byte of the tree is searched: on all cores.
            Ok(ac) => {
                let hits = parallel(slots.len(), 32, |j, _| {
                    Ok(match unparsed(j) {
                        Some(Unparsed::Text(t)) => ac
                            .find_overlapping_iter(t.bytes())
                            .any(|m| words::is_word(t.bytes(), m.start(), m.end())),
                        Some(Unparsed::Words(w)) => fresh.iter().any(|n| w.contains(n)),
                        None => false,
                    })
                })?;
                want.extend((0..slots.len()).filter(|&j| hits[j]));
            }
            // Too many names for an automaton: parse everything, which is
            // what the full index does anyway.
            Err(_) => want.extend((0..slots.len()).filter(|&j| unparsed(j).is_some())),
        }
        scanned.names.extend(fresh.iter().map(|n| n.to_string()));
    }
    let mut by_module: HashMap<u32, Vec<usize>> = HashMap::new();
    let mut by_unit: HashMap<u32, Vec<usize>> = HashMap::new();
    for (f, &j) in index.files.iter().zip(file_job) {
        if unparsed(j).is_some() {
            by_module.entry(f.module).or_default().push(j);
            by_unit.entry(f.unit).or_default().push(j);
        }
    }
    for key in &probe.unit {
        let (unit, name) = key;
        if scanned.names.contains(name) || scanned.units.contains(key) {
            continue;
        }
        for &j in by_unit.get(unit).into_iter().flatten() {
            if !want.contains(&j) && unparsed(j).is_some_and(|u| u.contains_word(name)) {
                want.insert(j);
            }
        }
    }
    scanned.units.extend(probe.unit);
    if !by_module.is_empty() {
        for (m, name) in &probe.local {
            for a in index.ancestors(*m) {
                for &j in by_module.get(&a).into_iter().flatten() {
                    if want.contains(&j) {
                        continue;
                    }
                    let Some(file) = unparsed(j) else { continue };
                    let hit = if name == index::GLOB {
                        file.may_glob_import(jobs[j].key.lang)
                    } else {
                        file.contains_word(name)
                    };
                    if hit {
                        want.insert(j);
                    }
                }
            }
        }
    }
    // Pairs: files holding both names.
    let mut by_name: HashMap<&str, Vec<&str>> = HashMap::new();
    for (name, anchor) in &probe.pairs {
        if !probe.global.contains(name) && !scanned.pairs.contains(&(name.clone(), anchor.clone()))
        {
            by_name
                .entry(name.as_str())
                .or_default()
                .push(anchor.as_str());
        }
    }
    for (name, anchors) in &by_name {
        for (j, _) in slots.iter().enumerate() {
            if want.contains(&j) {
                continue;
            }
            let Some(file) = unparsed(j) else { continue };
            if file.contains_word(name) && anchors.iter().any(|a| file.contains_word(a)) {
                want.insert(j);
            }
        }
    }
    drop(by_name);
    scanned.pairs.extend(probe.pairs);
    // Files asked for whole.
    for &f in &probe.files {
        if let Some(&j) = file_job.get(f as usize) {
            if unparsed(j).is_some() {
                want.insert(j);
            }
        }
    }
    // Names asked about in a module's subtree; a name already scanned
    // across the tree had every file holding it parsed.
    let within: Vec<&(index::ModId, String)> = probe
        .within
        .iter()
        .filter(|(_, name)| !name.is_empty() && !scanned.names.contains(name))
        .collect();
    if !within.is_empty() {
        for (f, &j) in index.files.iter().zip(file_job) {
            if want.contains(&j) {
                continue;
            }
            let Some(file) = unparsed(j) else { continue };
            if within
                .iter()
                .any(|(m, name)| index.related(f.module, *m) && file.contains_word(name))
            {
                want.insert(j);
            }
        }
    }
    Ok(want.into_iter().collect())
}

/// Read every job, from the cache when possible, on all cores. A file the
/// cache holds no symbols for is kept unparsed, as its text or as its
/// cached words, for the rounds; except the jobs to `parse_now` (both
/// sides of each changed file), which go first and are parsed at once:
/// every later step waits on what they say changed, and the checks'
/// outline takes the same trees.
pub(super) fn first_pass(
    jobs: &[Job],
    parse_now: &[bool],
    store: &Store,
    cache: Option<&Cache>,
    impact: &mut Impact,
) -> Result<Vec<Slot>, Error> {
    for lang in Lang::ALL {
        lang::grammar(lang)?;
    }
    let hits = AtomicUsize::new(0);
    let word_hits = AtomicUsize::new(0);
    let order: Vec<usize> = (0..jobs.len())
        .filter(|&j| parse_now[j])
        .chain((0..jobs.len()).filter(|&j| !parse_now[j]))
        .collect();
    // A thread for each file to parse; reading alone, one per 16 files.
    let per_thread = if parse_now.contains(&true) { 1 } else { 16 };
    let done = parallel(jobs.len(), per_thread, |i, extractor| {
        let j = order[i];
        let job = &jobs[j];
        let grammar = lang::grammar(job.key.lang)?;
        if let Some(c) = cache {
            match c.get(grammar, &job.key.blob) {
                Ok(syms) => {
                    hits.fetch_add(1, Ordering::Relaxed);
                    return Ok(Slot::Parsed(Arc::new(syms)));
                }
                Err(Miss::Absent | Miss::Corrupt) => {}
            }
            // Unparsed by an earlier run: its words answer for it until
            // a round wants it parsed.
            if !parse_now[j] {
                if let Some(words) = c.get_words(grammar, &job.key.blob) {
                    word_hits.fetch_add(1, Ordering::Relaxed);
                    return Ok(Slot::Unparsed(Unparsed::Words(words)));
                }
            }
        }
        match read(job, store) {
            Err(reason) => Ok(Slot::Failed(reason)),
            Ok(_) if parse_now[j] => extract_one(job, store, cache, extractor),
            Ok(text) => Ok(Slot::Unparsed(Unparsed::Text(text))),
        }
    })?;
    let hits = hits.load(Ordering::Relaxed);
    impact.stats.cache_hits = hits;
    impact.stats.words_cached = word_hits.load(Ordering::Relaxed);
    impact.stats.cache_misses = jobs.len() - hits;
    let mut slots: Vec<(usize, Slot)> = order.into_iter().zip(done).collect();
    slots.sort_unstable_by_key(|(j, _)| *j);
    Ok(slots.into_iter().map(|(_, slot)| slot).collect())
}

/// A job's text, or why it is left out of the index.
pub(super) fn read(job: &Job, store: &Store) -> Result<Arc<crate::syntax::Text>, String> {
    let text = store
        .text(&job.key)
        .map_err(|e| format!("blob {} unreadable: {e}", job.key.blob))?;
    if text.len() > MAX_FILE_BYTES {
        return Err(format!(
            "{} bytes, over the {} byte limit for indexing",
            text.len(),
            MAX_FILE_BYTES
        ));
    }
    Ok(text)
}

/// `parse_more`, largest file first: with the work handed out a file at a
/// time, a big file started last would finish alone while the other cores
/// wait.
pub(super) fn parse_largest_first(
    jobs: &[Job],
    mut wanted: Vec<usize>,
    slots: &mut [Slot],
    store: &Store,
    cache: Option<&Cache>,
    deadline: Option<Instant>,
) -> Result<(), Error> {
    wanted.sort_by_key(|&j| match &slots[j] {
        Slot::Unparsed(u) => std::cmp::Reverse(u.len()),
        _ => std::cmp::Reverse(0),
    });
    parse_more(jobs, &wanted, slots, store, cache, deadline)
}

/// Extract the `wanted` jobs (all held as text) on all cores; past the
/// deadline, the files not started yet stay unparsed.
fn parse_more(
    jobs: &[Job],
    wanted: &[usize],
    slots: &mut [Slot],
    store: &Store,
    cache: Option<&Cache>,
    deadline: Option<Instant>,
) -> Result<(), Error> {
    let done = {
        let slots: &[Slot] = slots;
        // Every file here is parsed: worth a thread each.
        parallel(wanted.len(), 1, |i, extractor| {
            let j = wanted[i];
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return Ok(None);
            }
            Ok(Some(match &slots[j] {
                Slot::Unparsed(Unparsed::Text(_)) => extract_one(&jobs[j], store, cache, extractor),
                // Known by its words only: read it now.
                Slot::Unparsed(Unparsed::Words(_)) => match read(&jobs[j], store) {
                    Ok(_) => extract_one(&jobs[j], store, cache, extractor),
                    Err(reason) => Ok(Slot::Failed(reason)),
                },
                Slot::Parsed(s) => Ok(Slot::Parsed(Arc::clone(s))),
                Slot::Failed(r) => Ok(Slot::Failed(r.clone())),
            }?))
        })?
    };
    for (&j, slot) in wanted.iter().zip(done) {
        if let Some(slot) = slot {
            slots[j] = slot;
        }
    }
    Ok(())
}

/// Cache the words of every file read but left unparsed, so the next run
/// can answer the prefilter without reading them.
pub(super) fn keep_words(jobs: &[Job], slots: &[Slot], cache: &Cache) -> Result<(), Error> {
    let texts: Vec<usize> = (0..slots.len())
        .filter(|&j| matches!(slots[j], Slot::Unparsed(Unparsed::Text(_))))
        .collect();
    parallel(texts.len(), 64, |i, _| {
        let job = &jobs[texts[i]];
        if let Slot::Unparsed(Unparsed::Text(text)) = &slots[texts[i]] {
            cache.put_words(
                lang::grammar(job.key.lang)?,
                &job.key.blob,
                &Words::of(job.key.lang, text.bytes()),
            );
        }
        Ok(())
    })?;
    Ok(())
}

/// Extract one file (its tree from the store: parsed now, or kept from a
/// check that parsed it first) and store it in the cache. A file the
/// parser cannot handle is skipped, not fatal.
fn extract_one(
    job: &Job,
    store: &Store,
    cache: Option<&Cache>,
    extractor: &mut Extractor,
) -> Result<Slot, Error> {
    let grammar = lang::grammar(job.key.lang)?;
    let parsed = match store.tree(&job.key) {
        Ok(p) => p,
        Err(reason) => return Ok(Slot::Failed(reason)),
    };
    let syms = match extractor.extract_parsed(&parsed) {
        Ok(s) => s,
        Err(e) => return Ok(Slot::Failed(e.to_string())),
    };
    drop(parsed);
    if let Some(c) = cache {
        c.put(grammar, &job.key.blob, &syms);
    }
    Ok(Slot::Parsed(Arc::new(syms)))
}

/// `work(0..count)` on all cores, each thread with its own extractor,
/// results in order.
pub(super) fn parallel<T: Send>(
    count: usize,
    per_thread: usize,
    work: impl Fn(usize, &mut Extractor) -> Result<T, Error> + Sync,
) -> Result<Vec<T>, Error> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(count.div_ceil(per_thread))
        .max(1);
    let next = AtomicUsize::new(0);
    let outcome = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut extractor = Extractor::new();
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= count {
                            break;
                        }
                        done.push((i, work(i, &mut extractor)));
                    }
                    done
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join()).collect::<Vec<_>>()
    });
    let mut results: Vec<Option<T>> = (0..count).map(|_| None).collect();
    for worker in outcome {
        for (i, r) in worker.map_err(|_| Error::Thread)? {
            results[i] = Some(r?);
        }
    }
    results
        .into_iter()
        .map(|r| r.ok_or(Error::Thread))
        .collect()
}
