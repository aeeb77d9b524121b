//! The trees of one review, shared by every part that reads code: each
//! blob's text is read once and parsed at most once, whoever asks for it
//! (the impact index, the outline of a changed file, the macro reader, the
//! call sites of a breaking change, a check added later).
//!
//! A text or a tree lives while someone holds it, and no longer: the store
//! keeps only a weak reference, so the index's thousand trees are freed
//! one by one as their symbols are taken. What several parts read is kept
//! on purpose (`keep`: both sides of each changed file, the files the macro
//! reader will open) until released. What a part needs of files it cannot
//! name yet (the call sites of a changed signature, known only once the
//! index has resolved them) it asks for as a `Reader`, registered before
//! the trees are made: the store runs it on the tree of each file it
//! selects, in the thread that parsed the file, and keeps what it read
//! after the tree is gone.
//!
//! A part that registers while the parsers already run (the checks
//! outline the changed files while the index reads and parses) holds the
//! store (`hold`) until it has. Nobody waits for it: every tree made while
//! the store is held is held with it, and when the last hold goes, the
//! readers registered meanwhile read the trees they select and the trees
//! nobody kept are let go. So a file is still parsed once, and the index
//! never stands idle while the checks outline.
//!
//! It knows nothing of what the trees mean: readers are the parts' own.
//!
//! `Store::unshared` is the same store sharing nothing: every asker reads
//! and parses for itself, as each part did before the store existed. A
//! review run with `SPEED_PARSE_FRESH=1` uses it, so that a test can show
//! that sharing the trees changes no finding, impact row or prompt byte.

use std::any::Any;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock, Weak};

use tree_sitter::{Node, Tree};

use super::Lang;

/// Reads blob contents by id, from several threads at once.
pub trait Blobs: Sync {
    fn read(&self, blob: &str) -> Result<Vec<u8>, String>;
}

/// A file's content: a blob read as one language.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Key {
    /// The blob id (hex).
    pub blob: String,
    pub lang: Lang,
}

impl Key {
    pub fn new(blob: &str, lang: Lang) -> Key {
        Key {
            blob: blob.to_string(),
            lang,
        }
    }
}

/// A file's text as its blob holds it, and as the parsers read it: the
/// bytes themselves when they are UTF-8, else a copy with each invalid
/// sequence replaced, so a stray byte costs a name, not the file.
pub struct Text {
    bytes: Vec<u8>,
    lossy: Option<String>,
}

impl Text {
    pub fn new(bytes: Vec<u8>) -> Text {
        // The strict check runs a word at a time over ASCII; the lossy one
        // goes byte by byte, so it only runs on text that needs it.
        let lossy = match std::str::from_utf8(&bytes) {
            Ok(_) => None,
            Err(_) => Some(String::from_utf8_lossy(&bytes).into_owned()),
        };
        Text { bytes, lossy }
    }

    /// The bytes as read.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The text the parsers read.
    pub fn as_str(&self) -> &str {
        match &self.lossy {
            Some(s) => s,
            // Checked in `new`.
            None => std::str::from_utf8(&self.bytes).unwrap_or_default(),
        }
    }

    /// The size of the blob, in bytes.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
}

/// A file's tree with the text it was parsed from.
pub struct Parsed {
    lang: Lang,
    text: Arc<Text>,
    tree: Tree,
}

impl Parsed {
    /// Parse `text` (outside any store: tests, tools).
    pub fn new(lang: Lang, text: Arc<Text>) -> Result<Parsed, super::Error> {
        let tree = super::parse(lang, text.as_str().as_bytes())?;
        Ok(Parsed { lang, text, tree })
    }

    pub fn lang(&self) -> Lang {
        self.lang
    }

    pub fn text(&self) -> &Arc<Text> {
        &self.text
    }

    /// The parsed text.
    pub fn src(&self) -> &str {
        self.text.as_str()
    }

    pub fn tree(&self) -> &Tree {
        &self.tree
    }

    pub fn root(&self) -> Node<'_> {
        self.tree.root_node()
    }
}

/// What a part reads from the trees of files it cannot name yet. Register
/// it (`Store::add_reader`) before the trees are made; its `read` runs on
/// the tree of every file it `selects`, whoever parses it.
pub trait Reader: Send + Sync {
    /// Whether a file is one to read, by its key and text (a cheap test:
    /// it runs on every file parsed).
    fn selects(&self, key: &Key, text: &Text) -> bool;
    /// What to keep of the file once its tree is gone.
    fn read(&self, parsed: &Parsed) -> Facts;
}

/// What a reader kept of one file; the reader's own type, behind `Any`.
pub type Facts = Arc<dyn Any + Send + Sync>;

/// A registered reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReaderId(usize);

/// Counts of one store's work.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Blobs read.
    pub texts: usize,
    /// Trees made.
    pub trees: usize,
    /// Trees made of a file parsed before: work a `keep` or a reader would
    /// have saved.
    pub repeated: usize,
    /// Readers run.
    pub reads: usize,
}

/// The texts and trees of one review (see the module's doc).
pub struct Store<'b> {
    blobs: &'b dyn Blobs,
    entries: Mutex<HashMap<Key, Arc<Mutex<Entry>>>>,
    readers: RwLock<Vec<Arc<dyn Reader>>>,
    texts: AtomicUsize,
    trees: AtomicUsize,
    repeated: AtomicUsize,
    reads: AtomicUsize,
    /// Parts still registering readers and keeps, and the trees made
    /// meanwhile (see `hold`).
    holds: Mutex<Held>,
    /// Nothing shared (see `unshared`).
    fresh: bool,
}

/// The holds on a store and what they hold.
#[derive(Default)]
struct Held {
    count: usize,
    /// Every tree made while `count > 0`, with its key.
    trees: Vec<(Key, Arc<Parsed>)>,
}

/// One file's state. Its lock is held while the file is read or parsed,
/// so that a second asker waits for the first one's tree instead of
/// making its own.
#[derive(Default)]
struct Entry {
    text: Weak<Text>,
    tree: Weak<Parsed>,
    /// Set by `keep`: held until `release`.
    kept: bool,
    kept_text: Option<Arc<Text>>,
    kept_tree: Option<Arc<Parsed>>,
    /// Why the blob could not be read, once it failed.
    unreadable: Option<String>,
    /// Why its text could not be parsed, once it failed.
    unparsable: Option<String>,
    parsed: bool,
    /// What each reader kept, by its id.
    facts: Vec<(usize, Facts)>,
}

impl<'b> Store<'b> {
    pub fn new(blobs: &'b dyn Blobs) -> Store<'b> {
        Store::with(blobs, false)
    }

    /// A store that shares nothing: each `text` reads the blob again, each
    /// `tree` parses again, `keep` keeps nothing, and a reader runs only
    /// when its facts are asked for, on a tree parsed for it. What every
    /// part read before the store, for the tests that compare the two.
    pub fn unshared(blobs: &'b dyn Blobs) -> Store<'b> {
        Store::with(blobs, true)
    }

    fn with(blobs: &'b dyn Blobs, fresh: bool) -> Store<'b> {
        Store {
            fresh,
            blobs,
            entries: Mutex::default(),
            readers: RwLock::default(),
            texts: AtomicUsize::new(0),
            trees: AtomicUsize::new(0),
            repeated: AtomicUsize::new(0),
            reads: AtomicUsize::new(0),
            holds: Mutex::default(),
        }
    }

    /// What the store still holds (kept texts and trees, what readers
    /// kept), the store gone: to be freed where nothing waits for it (two
    /// kept trees of 60 kB of Python took a millisecond).
    pub fn into_contents(self) -> impl Send + 'static {
        (
            self.entries
                .into_inner()
                .unwrap_or_else(|poisoned| poisoned.into_inner()),
            self.readers
                .into_inner()
                .unwrap_or_else(|poisoned| poisoned.into_inner()),
        )
    }

    /// The blob reader the store reads through, for what it does not
    /// parse (manifests).
    pub fn blobs(&self) -> &'b dyn Blobs {
        self.blobs
    }

    pub fn stats(&self) -> Stats {
        Stats {
            texts: self.texts.load(Ordering::Relaxed),
            trees: self.trees.load(Ordering::Relaxed),
            repeated: self.repeated.load(Ordering::Relaxed),
            reads: self.reads.load(Ordering::Relaxed),
        }
    }

    fn entry(&self, key: &Key) -> Arc<Mutex<Entry>> {
        // A poisoned map only lost an insertion: the entries stand.
        let mut entries = self
            .entries
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        match entries.get(key) {
            Some(e) => Arc::clone(e),
            None => {
                let e = Arc::new(Mutex::new(Entry::default()));
                entries.insert(key.clone(), Arc::clone(&e));
                e
            }
        }
    }

    /// Keep the text and tree of `key`, once made, until `release`.
    pub fn keep(&self, key: &Key) {
        if self.fresh {
            return;
        }
        let entry = self.entry(key);
        let mut e = lock(&entry);
        e.kept = true;
        e.kept_text = e.kept_text.take().or_else(|| e.text.upgrade());
        e.kept_tree = e.kept_tree.take().or_else(|| e.tree.upgrade());
    }

    /// Let go of what `keep` held for `key`.
    pub fn release(&self, key: &Key) {
        let entry = self.entry(key);
        let mut e = lock(&entry);
        e.kept = false;
        e.kept_text = None;
        e.kept_tree = None;
    }

    /// The text of `key`, read once while anyone holds it.
    pub fn text(&self, key: &Key) -> Result<Arc<Text>, String> {
        let entry = self.entry(key);
        let mut e = lock(&entry);
        self.text_locked(key, &mut e)
    }

    fn text_locked(&self, key: &Key, e: &mut Entry) -> Result<Arc<Text>, String> {
        if let Some(t) = e.text.upgrade().filter(|_| !self.fresh) {
            return Ok(t);
        }
        if let Some(reason) = &e.unreadable {
            return Err(reason.clone());
        }
        let bytes = match self.blobs.read(&key.blob) {
            Ok(b) => b,
            Err(reason) => {
                e.unreadable = Some(reason.clone());
                return Err(reason);
            }
        };
        self.texts.fetch_add(1, Ordering::Relaxed);
        let text = Arc::new(Text::new(bytes));
        e.text = Arc::downgrade(&text);
        if e.kept {
            e.kept_text = Some(Arc::clone(&text));
        }
        Ok(text)
    }

    /// The tree of `key`, parsed at most once while anyone holds it or it
    /// is kept.
    pub fn tree(&self, key: &Key) -> Result<Arc<Parsed>, String> {
        let entry = self.entry(key);
        let mut e = lock(&entry);
        self.tree_locked(key, &mut e)
    }

    fn tree_locked(&self, key: &Key, e: &mut Entry) -> Result<Arc<Parsed>, String> {
        if let Some(t) = e.tree.upgrade().filter(|_| !self.fresh) {
            return Ok(t);
        }
        if let Some(reason) = &e.unparsable {
            return Err(reason.clone());
        }
        let text = self.text_locked(key, e)?;
        let parsed = match Parsed::new(key.lang, text) {
            Ok(p) => Arc::new(p),
            Err(err) => {
                let reason = err.to_string();
                e.unparsable = Some(reason.clone());
                return Err(reason);
            }
        };
        self.trees.fetch_add(1, Ordering::Relaxed);
        if e.parsed {
            self.repeated.fetch_add(1, Ordering::Relaxed);
        }
        e.parsed = true;
        e.tree = Arc::downgrade(&parsed);
        if e.kept {
            e.kept_tree = Some(Arc::clone(&parsed));
        }
        if self.fresh {
            // Readers read only when asked, on a tree of their own.
            return Ok(parsed);
        }
        // Held before the readers run, so that a reader registered after
        // they looked reads it when the hold goes (see `settle`).
        {
            let mut held = lock_held(&self.holds);
            if held.count > 0 {
                held.trees.push((key.clone(), Arc::clone(&parsed)));
            }
        }
        self.run_readers(key, e, &parsed);
        Ok(parsed)
    }

    /// Run every registered reader that selects `key` and has not read it.
    fn run_readers(&self, key: &Key, e: &mut Entry, parsed: &Parsed) {
        let readers = self
            .readers
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        for (id, reader) in readers.iter().enumerate() {
            if !e.facts.iter().any(|(i, _)| *i == id) && reader.selects(key, parsed.text()) {
                self.reads.fetch_add(1, Ordering::Relaxed);
                e.facts.push((id, reader.read(parsed)));
            }
        }
    }

    /// The last hold is gone: the readers registered while it stood read
    /// the trees made meanwhile, and those trees are held no longer (a
    /// `keep` or an asker still holding one keeps it).
    fn settle(&self, trees: Vec<(Key, Arc<Parsed>)>) {
        for (key, parsed) in trees {
            let entry = self.entry(&key);
            let mut e = lock(&entry);
            self.run_readers(&key, &mut e, &parsed);
        }
    }

    /// Say that readers and keeps are still to come. A part that must see
    /// every tree made (a reader) or have one kept takes a hold before the
    /// parsers start; until the last hold is dropped, every tree made is
    /// held, so that what the part registers late still finds it (see the
    /// module's doc). The parsers never wait.
    pub fn hold(&self) -> Hold<'_> {
        lock_held(&self.holds).count += 1;
        Hold { store: self }
    }

    /// Register `reader`: it reads every file parsed from now on that it
    /// selects.
    pub fn add_reader(&self, reader: Arc<dyn Reader>) -> ReaderId {
        let mut readers = self
            .readers
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        readers.push(reader);
        ReaderId(readers.len() - 1)
    }

    /// What `reader` kept of `key`: read when the file was parsed, or now
    /// (from its tree, parsed if it must be), whether or not it selects
    /// the file.
    pub fn facts(&self, reader: ReaderId, key: &Key) -> Result<Facts, String> {
        let entry = self.entry(key);
        let mut e = lock(&entry);
        let kept = |e: &Entry| {
            e.facts
                .iter()
                .find(|(i, _)| *i == reader.0)
                .map(|(_, f)| Arc::clone(f))
        };
        if let Some(f) = kept(&e).filter(|_| !self.fresh) {
            return Ok(f);
        }
        let parsed = self.tree_locked(key, &mut e)?;
        if let Some(f) = kept(&e).filter(|_| !self.fresh) {
            return Ok(f);
        }
        let r = {
            let readers = self
                .readers
                .read()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            readers
                .get(reader.0)
                .map(Arc::clone)
                .ok_or_else(|| "no such reader".to_string())?
        };
        self.reads.fetch_add(1, Ordering::Relaxed);
        let facts = r.read(&parsed);
        if !self.fresh {
            e.facts.push((reader.0, Arc::clone(&facts)));
        }
        Ok(facts)
    }
}

/// A part registering readers and keeps (see `Store::hold`); dropping
/// the last one, even while unwinding from a panic, lets go of the trees
/// made meanwhile.
pub struct Hold<'s> {
    store: &'s Store<'s>,
}

impl Drop for Hold<'_> {
    fn drop(&mut self) {
        let trees = {
            let mut held = lock_held(&self.store.holds);
            held.count = held.count.saturating_sub(1);
            if held.count > 0 {
                return;
            }
            std::mem::take(&mut held.trees)
        };
        // A reader that failed while the stack unwinds would end the
        // process: the trees are let go unread, and a reader reads a file
        // it missed when asked (`Store::facts`).
        if !std::thread::panicking() {
            self.store.settle(trees);
        }
    }
}

/// The holds: a count or list is never left half-changed, so a poisoned
/// lock's is still right.
fn lock_held(holds: &Mutex<Held>) -> std::sync::MutexGuard<'_, Held> {
    holds
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// An entry's lock: a thread that panicked while holding it left at worst
/// a text or tree not recorded, which the next asker makes again.
fn lock(entry: &Mutex<Entry>) -> std::sync::MutexGuard<'_, Entry> {
    entry
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three Python files, `a`, `b` and `c`.
    struct ThreeFiles;

    impl Blobs for ThreeFiles {
        fn read(&self, blob: &str) -> Result<Vec<u8>, String> {
            Ok(format!("def {blob}():\n    return 1\n").into_bytes())
        }
    }

    /// Selects every file; counts what it read.
    #[derive(Default)]
    struct Everything {
        read: Mutex<Vec<String>>,
    }

    impl Reader for Everything {
        fn selects(&self, _: &Key, _: &Text) -> bool {
            true
        }

        fn read(&self, parsed: &Parsed) -> Facts {
            lock_vec(&self.read).push(parsed.src().to_string());
            Arc::new(())
        }
    }

    fn lock_vec(m: &Mutex<Vec<String>>) -> std::sync::MutexGuard<'_, Vec<String>> {
        m.lock().unwrap_or_else(|p| p.into_inner())
    }

    #[test]
    fn what_registers_late_still_finds_the_trees_made_while_the_store_was_held() {
        let store = Store::new(&ThreeFiles);
        let key = |b: &str| Key::new(b, Lang::Python);
        let first = store.hold();
        let second = store.hold();
        // The parsers do not wait: two trees made and let go by their asker.
        drop(store.tree(&key("a")).expect("a parses"));
        drop(store.tree(&key("c")).expect("c parses"));
        // A keep registered late finds its tree.
        store.keep(&key("a"));
        let reader = Arc::new(Everything::default());
        let id = store.add_reader(Arc::clone(&reader) as Arc<dyn Reader>);
        // A tree made after the reader registered is read at once.
        drop(store.tree(&key("b")).expect("b parses"));
        assert_eq!(lock_vec(&reader.read).len(), 1);
        drop(first);
        assert_eq!(lock_vec(&reader.read).len(), 1, "one hold is left");
        // The last hold goes: the reader reads what was made before it
        // registered, once.
        drop(second);
        let mut read = lock_vec(&reader.read).clone();
        read.sort();
        assert_eq!(
            read,
            [
                "def a():\n    return 1\n",
                "def b():\n    return 1\n",
                "def c():\n    return 1\n"
            ]
        );
        store.facts(id, &key("a")).expect("facts of a");
        store.tree(&key("a")).expect("a is kept");
        assert_eq!(store.stats().repeated, 0, "nothing parsed twice");
        // What nobody kept was let go with the last hold.
        store.tree(&key("c")).expect("c parses again");
        assert_eq!(store.stats().repeated, 1);
        assert_eq!(store.stats().reads, 3);
    }

    #[test]
    fn a_hold_dropped_by_a_panic_lets_the_trees_go_and_readers_read_when_asked() {
        let store = Store::new(&ThreeFiles);
        let key = Key::new("a", Lang::Python);
        let hold = store.hold();
        drop(store.tree(&key).expect("a parses"));
        let reader = Arc::new(Everything::default());
        let id = store.add_reader(Arc::clone(&reader) as Arc<dyn Reader>);
        let panicked = std::thread::scope(|scope| {
            scope
                .spawn(move || {
                    let _hold = hold;
                    panic!("a check failed while registering");
                })
                .join()
        });
        assert!(panicked.is_err());
        assert!(
            lock_vec(&reader.read).is_empty(),
            "nothing read while unwinding"
        );
        // Asked, the reader reads the file: parsed again, its tree gone.
        store.facts(id, &key).expect("facts of a");
        assert_eq!(lock_vec(&reader.read).len(), 1);
        assert_eq!(store.stats().repeated, 1);
    }
}
