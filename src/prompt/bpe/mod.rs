//! Byte-pair encoding as OpenAI's tiktoken does it, token for token: a
//! regex splits the text into pieces, and a piece that is not itself a token
//! is merged from its bytes, lowest-ranked pair first.
//!
//! Building tiktoken-rs's o200k_base decoded 200,000 base64 lines into hash
//! maps on every run (about 0.2 s); here the vocabularies are tables that
//! `build.rs` prepared (`vocab`), so an encoding costs only its regex, about
//! 2 ms. The regex is a lazy DFA run forward from each piece's start, since
//! every character starts a piece: a `regex::Regex` would also search
//! backwards for each start, and building that reverse automaton over these
//! Unicode classes cost more than the counting. It has no look-ahead, which
//! tiktoken's patterns use once, in `\s+(?!\S)`; `Pieces` does what that
//! look-ahead does.

mod table;
mod vocab;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::hash::BuildHasherDefault;
use std::sync::{Mutex, PoisonError};

use regex_automata::{Anchored, Input, hybrid};
use rustc_hash::FxHasher;

use vocab::Vocab;

/// A token's rank: its id in the encoding, and its merge priority.
pub(super) type Rank = u32;

/// tiktoken's o200k_base pattern with its last two alternatives,
/// `\s+(?!\S)|\s+`, written `\s+` (see `Pieces::trims`).
const O200K_PATTERN: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|\p{N}{1,3}",
    r"| ?[^\s\p{L}\p{N}]+[\r\n/]*",
    r"|\s*[\r\n]+",
    r"|\s+",
);

/// tiktoken's cl100k_base pattern, its possessive quantifiers made greedy
/// (nothing after them could backtrack into them, so they match the same)
/// and its last two alternatives, `\s+(?!\S)|\s`, written `\s+`.
const CL100K_PATTERN: &str = concat!(
    r"'(?i:[sdmt]|ll|ve|re)",
    r"|[^\r\n\p{L}\p{N}]?\p{L}+",
    r"|\p{N}{1,3}",
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*",
    r"|\s+$",
    r"|\s*[\r\n]",
    r"|\s+",
);

/// tiktoken's pattern for r50k_base and p50k_base (GPT-2's), rewritten the
/// same way.
const GPT2_PATTERN: &str = concat!(
    r"'(?:[sdmt]|ll|ve|re)",
    r"| ?\p{L}+",
    r"| ?\p{N}+",
    r"| ?[^\s\p{L}\p{N}]+",
    r"|\s+$",
    r"|\s+",
);

/// One encoding: how it splits text and its vocabulary.
pub(super) struct Bpe {
    vocab: &'static Vocab,
    pieces: Pieces,
    /// What counting needs besides the tables: each count takes one and
    /// gives it back, so the next count, on any thread, starts from what
    /// earlier ones built. Threads counting at once each take one of their
    /// own.
    scratch: Mutex<Vec<Scratch>>,
}

/// One count's working state, kept between counts.
struct Scratch {
    /// The lazy DFA's search states, built as text needs them (a count of
    /// text nothing has warmed builds states for most of its pieces and
    /// runs several times slower).
    search: hybrid::dfa::Cache,
    merger: Merger,
    /// The token count of each piece met so far. A prompt repeats its
    /// pieces (names, keywords, indentation), and looking one up in this
    /// small table costs less than in the vocabulary's 4 MB of tables,
    /// which a count reaches at random.
    counts: HashMap<Box<str>, u32, BuildHasherDefault<FxHasher>>,
}

/// Pieces longer than this are not remembered: they seldom repeat.
const REMEMBERED_PIECE: usize = 32;
/// At most this many pieces are remembered (a few MB at most).
const REMEMBERED_PIECES: usize = 1 << 16;

impl Bpe {
    /// The named encoding; `None` for a name that is not one of
    /// `super::Counter::KNOWN`. Compiling its regex is the only work; the
    /// error says why it failed.
    pub(super) fn new(name: &str) -> Option<Result<Bpe, String>> {
        let (vocab, pattern, newline_alternative) = match name {
            "o200k_base" => (&vocab::O200K_BASE, O200K_PATTERN, true),
            "cl100k_base" => (&vocab::CL100K_BASE, CL100K_PATTERN, true),
            "p50k_base" => (&vocab::P50K_BASE, GPT2_PATTERN, false),
            "r50k_base" => (&vocab::R50K_BASE, GPT2_PATTERN, false),
            _ => return None,
        };
        Some(Pieces::new(pattern, newline_alternative).map(|pieces| Bpe {
            vocab,
            pieces,
            scratch: Mutex::default(),
        }))
    }

    /// How many tokens `text` encodes to, as tiktoken's `encode_ordinary`
    /// would give.
    pub(super) fn count(&self, text: &str) -> usize {
        // A poisoned list lost at worst a scratch: a new one is made.
        let spare = self
            .scratch
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        let mut scratch = spare.unwrap_or_else(|| Scratch {
            search: self.pieces.dfa.create_cache(),
            merger: Merger::default(),
            counts: HashMap::default(),
        });
        let Scratch {
            search,
            merger,
            counts,
        } = &mut scratch;
        let mut count = 0;
        self.pieces.each_with(search, text, |piece| {
            if let Some(&n) = counts.get(piece) {
                count += n as usize;
                return;
            }
            let n = match self.vocab.rank(piece.as_bytes()) {
                Some(_) => 1,
                None => merger.merge(self.vocab, piece.as_bytes(), |_| {}),
            };
            if piece.len() <= REMEMBERED_PIECE && counts.len() < REMEMBERED_PIECES {
                counts.insert(piece.into(), n as u32);
            }
            count += n;
        });
        self.scratch
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(scratch);
        count
    }

    /// Page in the vocabulary's tables (see `Vocab::page_in`).
    pub(super) fn page_in(&self) {
        self.vocab.page_in();
    }

    /// The tokens of `text`, as tiktoken's `encode_ordinary` gives them.
    #[cfg(test)]
    pub(super) fn encode(&self, text: &str) -> Vec<Rank> {
        let mut merger = Merger::default();
        let mut tokens = Vec::new();
        let mut search = self.pieces.dfa.create_cache();
        self.pieces.each_with(&mut search, text, |piece| match self.vocab.rank(piece.as_bytes()) {
            Some(rank) => tokens.push(rank),
            None => {
                merger.merge(self.vocab, piece.as_bytes(), |part| {
                    tokens.push(
                        self.vocab
                            .rank(part)
                            .expect("a merged part is a token: every byte is one, and merges only make tokens"),
                    )
                });
            }
        });
        tokens
    }
}

/// Splits text into the pieces tiktoken's regex finds.
struct Pieces {
    /// The pattern with `\s+` in place of `\s+(?!\S)` and what follows it,
    /// searched forward from a piece's start for the piece's end.
    dfa: hybrid::dfa::DFA,
    /// Whether an earlier alternative takes every whitespace run that holds
    /// a newline (o200k_base and cl100k_base have one, GPT-2's has not).
    newline_alternative: bool,
}

impl Pieces {
    fn new(pattern: &str, newline_alternative: bool) -> Result<Pieces, String> {
        let dfa = hybrid::dfa::DFA::new(pattern).map_err(|e| e.to_string())?;
        Ok(Pieces {
            dfa,
            newline_alternative,
        })
    }

    fn each_with(&self, cache: &mut hybrid::dfa::Cache, text: &str, mut piece: impl FnMut(&str)) {
        let mut at = 0;
        while at < text.len() {
            let Some(mut end) = self.end(cache, text, at) else {
                // Nothing starts here, so tiktoken's search, which finds the
                // leftmost match, skips it. Every character starts a piece in
                // these patterns; this keeps the search exact all the same.
                at += text[at..].chars().next().map_or(1, char::len_utf8);
                continue;
            };
            let found = &text[at..end];
            if self.trims(found, end < text.len()) {
                // `found` is two or more whitespace characters, so it has a last one.
                end -= found.chars().next_back().map_or(0, char::len_utf8);
            }
            piece(&text[at..end]);
            at = end;
        }
    }

    /// The end of the piece that starts at `at`, if one does.
    fn end(&self, cache: &mut hybrid::dfa::Cache, text: &str, at: usize) -> Option<usize> {
        let input = Input::new(text).range(at..).anchored(Anchored::Yes);
        self.dfa
            .try_search_fwd(cache, &input)
            // A lazy DFA fails only on a quit byte (these patterns have no
            // Unicode word boundary, which is what sets them) or when told to
            // give up on a thrashing cache (not set here).
            .expect("the lazy DFA of a tokenizer pattern never fails")
            .map(|found| found.offset())
    }

    /// Whether `found` came from the `\s+` alternative and `\s+(?!\S)` would
    /// have left its last character to the next piece. `\s+` is only
    /// reached by a whitespace run (every other alternative holds a letter,
    /// a digit or a symbol) without a newline when a newline alternative
    /// comes first; the run ends at a non-space unless it ends the text;
    /// then tiktoken's `\s+(?!\S)` stops one character short, and a single
    /// character is what its last alternative takes whole.
    fn trims(&self, found: &str, more_text: bool) -> bool {
        more_text
            && found.chars().nth(1).is_some()
            && found.chars().all(char::is_whitespace)
            && !(self.newline_alternative && found.contains(['\r', '\n']))
    }
}

/// Merges the bytes of one piece into tokens, lowest rank first and, among
/// equal ranks, leftmost first: the order tiktoken's merge follows. A heap
/// keeps it O(n log n), so a megabyte of symbols without a space (a
/// minified file, a base64 blob) costs no more than its size.
#[derive(Default)]
struct Merger {
    /// `next[i]`: where the part starting at byte `i` ends; 0 once the part
    /// was merged into the one before it.
    next: Vec<usize>,
    /// `prev[i]`: where the part before the one at `i` starts.
    prev: Vec<usize>,
    /// Candidate merges `(rank, start, end)`; a candidate whose parts have
    /// changed since is skipped when it comes out.
    heap: BinaryHeap<Reverse<(Rank, usize, usize)>>,
}

impl Merger {
    /// Merges `piece` (two bytes or more, not itself a token), calls `part`
    /// with each resulting token's bytes and returns how many there are.
    fn merge(&mut self, vocab: &Vocab, piece: &[u8], mut part: impl FnMut(&[u8])) -> usize {
        let n = piece.len();
        self.next.clear();
        self.next.extend(1..=n);
        self.prev.clear();
        self.prev.extend((0..n).map(|i| i.wrapping_sub(1)));
        self.heap.clear();
        for start in 0..n.saturating_sub(1) {
            self.push(vocab, piece, start, start + 2);
        }
        let mut parts = n;
        while let Some(Reverse((_, start, end))) = self.heap.pop() {
            let mid = self.next[start];
            if mid == 0 || mid >= n || self.next[mid] != end {
                continue;
            }
            self.next[start] = end;
            self.next[mid] = 0;
            parts -= 1;
            if end < n {
                self.prev[end] = start;
                self.push(vocab, piece, start, self.next[end]);
            }
            if start > 0 {
                self.push(vocab, piece, self.prev[start], end);
            }
        }
        let mut start = 0;
        while start < n {
            part(&piece[start..self.next[start]]);
            start = self.next[start];
        }
        parts
    }

    fn push(&mut self, vocab: &Vocab, piece: &[u8], start: usize, end: usize) {
        if let Some(rank) = vocab.rank(&piece[start..end]) {
            self.heap.push(Reverse((rank, start, end)));
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    const NAMES: [&str; 4] = ["o200k_base", "cl100k_base", "p50k_base", "r50k_base"];

    /// tiktoken-rs, the reference: slow to build, so built once per encoding.
    fn reference(name: &str) -> &'static tiktoken_rs::CoreBPE {
        use std::sync::OnceLock;
        static BUILT: [OnceLock<tiktoken_rs::CoreBPE>; 4] = [const { OnceLock::new() }; 4];
        let i = NAMES.iter().position(|n| *n == name).expect("a known name");
        BUILT[i].get_or_init(|| {
            match name {
                "o200k_base" => tiktoken_rs::o200k_base(),
                "cl100k_base" => tiktoken_rs::cl100k_base(),
                "p50k_base" => tiktoken_rs::p50k_base(),
                _ => tiktoken_rs::r50k_base(),
            }
            .expect("tiktoken-rs builds its own encodings")
        })
    }

    fn bpe(name: &str) -> Bpe {
        Bpe::new(name)
            .expect("known")
            .expect("the pattern compiles")
    }

    /// Every text file of the repository's own code, docs and fixtures.
    fn real_texts() -> Vec<(String, String)> {
        fn walk(dir: &Path, out: &mut Vec<(String, String)>) {
            let mut entries: Vec<_> = std::fs::read_dir(dir)
                .expect("a repository folder")
                .map(|e| e.expect("a folder entry").path())
                .collect();
            entries.sort();
            for path in entries {
                if path.is_dir() {
                    walk(&path, out);
                } else if path.extension().is_some_and(|e| e != "tiktoken") {
                    if let Ok(text) = std::fs::read_to_string(&path) {
                        out.push((path.display().to_string(), text));
                    }
                }
            }
        }
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut texts = Vec::new();
        for dir in [
            "src",
            "tests",
            "fixtures",
            "prompts",
            "specs-example",
            "benches",
        ] {
            walk(&root.join(dir), &mut texts);
        }
        let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
        texts.push(("README.md".to_string(), readme));
        texts
    }

    /// Texts made of pieces chosen to reach every branch of the patterns:
    /// scripts with and without case, combining marks, digits of other
    /// scripts, contractions in both cases, every kind of whitespace run
    /// (before letters, digits, symbols, newlines and the end), symbols
    /// with newlines and slashes after them, and pieces long enough for
    /// the merge to work hard.
    fn made_texts() -> Vec<String> {
        const BITS: &[&str] = &[
            "hello",
            "Hello",
            "HELLO",
            "hELLo",
            "don't",
            "DON'T",
            "we'LL",
            "it's",
            "I'm",
            "'s",
            "'ve",
            "they're",
            "x'd",
            "fn",
            "main",
            "println!",
            "self.count",
            "Vec<u8>",
            "std::fs::read",
            "0",
            "7",
            "42",
            "123",
            "1234567",
            "3.14159",
            "1,000,000",
            "0x7fff",
            "!=",
            "->",
            "=>",
            "::",
            "/*",
            "*/",
            "//",
            "...",
            "\"",
            "'",
            "`",
            "{",
            "}",
            "();",
            "#[",
            "]",
            "<|endoftext|>",
            "<|fim_prefix|>",
            "<|endofprompt|>",
            " ",
            "  ",
            "   ",
            "\t",
            "\t\t",
            "\n",
            "\r\n",
            "\r",
            "\n\n\n",
            "   \n  ",
            " \n",
            "\n ",
            "\u{a0}",
            "\u{3000}",
            "\u{85}",
            "\u{2028}",
            "\u{b}",
            "\u{c}",
            "\u{200b}",
            " \u{a0} ",
            "héllo",
            "e\u{301}",
            "\u{301}",
            "naïve",
            "Straße",
            "ǅemal",
            "ʰa",
            "Ⅻ",
            "½",
            "٣٤٥",
            "१२३",
            "日本語のテキスト",
            "中文字符",
            "한국어",
            "العربية",
            "हिन्दी",
            "Ελληνικά",
            "ΑΘΗΝΑ",
            "Привет",
            "МИР",
            "👍🏽",
            "👨\u{200d}👩\u{200d}👧",
            "🇫🇷",
            "€",
            "©",
            "∑",
            "\u{feff}",
            "\u{fffd}",
            "/",
            "\n/",
            ";\n",
            ".\r\n",
            ")\n\n",
        ];
        let mut rng = fastrand::Rng::with_seed(22);
        let mut texts: Vec<String> = BITS.iter().map(|b| b.to_string()).collect();
        for len in [1, 2, 3, 5, 8, 20, 80, 300] {
            for _ in 0..60 {
                texts.push((0..len).map(|_| BITS[rng.usize(..BITS.len())]).collect());
            }
        }
        // Long single pieces: a symbol run, a letter run, digits, and
        // whitespace runs, past tiktoken's 100-byte switch of merge method.
        let letters: String = (0..3000).map(|_| rng.alphabetic()).collect();
        texts.extend([
            "=".repeat(5000),
            "-=".repeat(700),
            letters.clone(),
            letters.to_lowercase(),
            format!(" {letters}"),
            "9".repeat(1000),
            " ".repeat(500),
            format!("{}x", " ".repeat(500)),
            format!("{}\n{}x", " ".repeat(200), "\t".repeat(200)),
            "\u{3000}".repeat(150) + "a",
            "é".repeat(400),
            "日本".repeat(400),
        ]);
        texts
    }

    fn assert_same(bpe: &Bpe, name: &str, label: &str, text: &str) {
        let ours = bpe.encode(text);
        let theirs = reference(name).encode_ordinary(text);
        if ours != theirs {
            let at = ours.iter().zip(&theirs).take_while(|(a, b)| a == b).count();
            panic!(
                "{name} differs from tiktoken on {label} at token {at}: ours {:?}, tiktoken {:?}",
                &ours[at..(at + 5).min(ours.len())],
                &theirs[at..(at + 5).min(theirs.len())],
            );
        }
        assert_eq!(bpe.count(text), theirs.len(), "{name} count of {label}");
    }

    #[test]
    fn encodes_the_repository_exactly_as_tiktoken() {
        let texts = real_texts();
        assert!(
            texts.len() > 100 && texts.iter().map(|(_, t)| t.len()).sum::<usize>() > 500_000,
            "too little real text to compare"
        );
        // All of it for the default encoding; every fifth file for the
        // others, whose patterns the made texts below cover as well (this
        // test runs unoptimized, so a full pass over each costs seconds).
        for (n, name) in NAMES.into_iter().enumerate() {
            let bpe = bpe(name);
            let step = if n == 0 { 1 } else { 5 };
            for (path, text) in texts.iter().step_by(step) {
                assert_same(&bpe, name, path, text);
            }
        }
    }

    #[test]
    fn encodes_unicode_whitespace_and_long_pieces_exactly_as_tiktoken() {
        let texts = made_texts();
        for name in NAMES {
            let bpe = bpe(name);
            for (i, text) in texts.iter().enumerate() {
                assert_same(&bpe, name, &format!("made text {i} {text:?}"), text);
            }
        }
    }

    #[test]
    fn every_token_of_every_vocabulary_is_tiktoken_s() {
        for name in NAMES {
            let bpe = bpe(name);
            let reference = reference(name);
            let mut tokens = 0;
            for rank in 0..bpe.vocab.ranks() {
                let ours = bpe.vocab.token(rank);
                if ours.is_empty() {
                    // A rank the file skips: tiktoken gives it to a special token.
                    continue;
                }
                tokens += 1;
                let theirs = reference
                    .decode_bytes(&[rank])
                    .expect("tiktoken has the rank");
                assert_eq!(ours, theirs.as_slice(), "{name} rank {rank}");
                assert_eq!(
                    bpe.vocab.rank(ours),
                    Some(rank),
                    "{name} lookup of rank {rank}"
                );
            }
            assert!(tokens >= 50_256, "{name} has {tokens} tokens");
            for byte in 0..=255u8 {
                assert!(
                    bpe.vocab.rank(&[byte]).is_some(),
                    "{name} lacks byte {byte}"
                );
            }
            assert_eq!(bpe.vocab.rank(b"not a token in any vocabulary"), None);
        }
    }
}
