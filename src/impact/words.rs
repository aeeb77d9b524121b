//! What the prefilter needs to know of a file it has not parsed: which
//! words it holds and whether it may hold a glob import. A file's text
//! answers directly; the cache keeps the same answers as a `Words` (the
//! file's words, hashed), so a later run need not read the blobs it did
//! not parse either. Either form gives the same answer for every name: a
//! word is a maximal run of ASCII letters, digits and `_`, which is what
//! `contains_word` matches.

use std::sync::Arc;

use super::lang::{Fnv, Lang};

/// A file's text (as the review's store holds it), or its words from the
/// cache.
pub enum Unparsed {
    Text(Arc<crate::syntax::Text>),
    Words(Words),
}

impl Unparsed {
    /// Whether `word` occurs in the file as a whole word.
    pub fn contains_word(&self, word: &str) -> bool {
        match self {
            Unparsed::Text(text) => contains_word(text.bytes(), word.as_bytes()),
            Unparsed::Words(words) => words.contains(word),
        }
    }

    /// Whether the file may hold a glob import (`use a::*;`, `from a import *`).
    pub fn may_glob_import(&self, lang: Lang) -> bool {
        match self {
            Unparsed::Text(text) => may_glob_import(lang, text.bytes()),
            Unparsed::Words(words) => words.glob,
        }
    }

    /// The file's size in bytes.
    pub fn len(&self) -> usize {
        match self {
            Unparsed::Text(text) => text.len(),
            Unparsed::Words(words) => words.bytes,
        }
    }
}

/// The words of a file, hashed, sorted and without repeats.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Words {
    hashes: Vec<u32>,
    glob: bool,
    /// The size of the text they were read from.
    bytes: usize,
}

const MAGIC: &[u8; 4] = b"SPW1";

impl Words {
    pub fn of(lang: Lang, text: &[u8]) -> Words {
        let mut hashes = Vec::new();
        let mut start = None;
        for (i, &b) in text.iter().enumerate() {
            match (is_word_byte(b), start) {
                (true, None) => start = Some(i),
                (false, Some(s)) => {
                    hashes.push(hash(&text[s..i]));
                    start = None;
                }
                _ => {}
            }
        }
        if let Some(s) = start {
            hashes.push(hash(&text[s..]));
        }
        hashes.sort_unstable();
        hashes.dedup();
        Words {
            hashes,
            glob: may_glob_import(lang, text),
            bytes: text.len(),
        }
    }

    /// Exact for words of ASCII letters, digits and `_` (up to a hash
    /// collision, which only costs a parse); anything else may occur, so
    /// the answer is yes.
    pub fn contains(&self, word: &str) -> bool {
        if word.is_empty() || !word.bytes().all(is_word_byte) {
            return true;
        }
        self.hashes.binary_search(&hash(word.as_bytes())).is_ok()
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(4 + 1 + 8 + 4 + 4 * self.hashes.len());
        out.extend_from_slice(MAGIC);
        out.push(u8::from(self.glob));
        out.extend_from_slice(&(self.bytes as u64).to_le_bytes());
        out.extend_from_slice(&(self.hashes.len() as u32).to_le_bytes());
        for h in &self.hashes {
            out.extend_from_slice(&h.to_le_bytes());
        }
        out
    }

    /// None for anything that is not a complete, well-formed entry.
    pub fn decode(bytes: &[u8]) -> Option<Words> {
        let rest = bytes.strip_prefix(MAGIC)?;
        let (&glob, rest) = rest.split_first()?;
        let (size, rest) = rest.split_first_chunk::<8>()?;
        let (count, rest) = rest.split_first_chunk::<4>()?;
        let count = u32::from_le_bytes(*count) as usize;
        if glob > 1 || rest.len() != count.checked_mul(4)? {
            return None;
        }
        let hashes: Vec<u32> = rest
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        // Written sorted without repeats: anything else is damage.
        if hashes.windows(2).any(|w| w[0] >= w[1]) {
            return None;
        }
        Some(Words {
            hashes,
            glob: glob == 1,
            bytes: usize::try_from(u64::from_le_bytes(*size)).ok()?,
        })
    }
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

fn hash(word: &[u8]) -> u32 {
    let mut h = Fnv::new();
    h.write(word);
    let h = h.finish();
    (h ^ (h >> 32)) as u32
}

/// Whether `text[start..end]` is a whole word: names are identifiers, so a
/// match inside a longer identifier is not one. Non-ASCII bytes count as
/// separators, which errs towards a match.
pub fn is_word(text: &[u8], start: usize, end: usize) -> bool {
    let before = start.checked_sub(1).and_then(|i| text.get(i));
    !before.copied().is_some_and(is_word_byte) && !text.get(end).copied().is_some_and(is_word_byte)
}

fn contains_word(text: &[u8], word: &[u8]) -> bool {
    memchr::memmem::find_iter(text, word).any(|i| is_word(text, i, i + word.len()))
}

/// Whether a file may hold a glob import (`use a::*;`, `use a::{b, *}`,
/// `from a import *`). Errs towards yes: a false yes costs one parse.
fn may_glob_import(lang: Lang, bytes: &[u8]) -> bool {
    memchr::memchr_iter(b'*', bytes).any(|i| {
        let before = bytes[..i].trim_ascii_end();
        match lang {
            Lang::Rust => matches!(before.last(), Some(b':' | b'{' | b',')),
            Lang::Python => before.ends_with(b"import"),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "use crate::shelf::*;\n// see Shelf_2 and r#type, café\nfn add_book(b: Book) -> u32 { b.id + 1 }\n";

    #[test]
    fn words_answer_as_the_text_does() {
        let words = Words::of(Lang::Rust, TEXT.as_bytes());
        let text = Unparsed::Text(std::sync::Arc::new(crate::syntax::Text::new(
            TEXT.as_bytes().to_vec(),
        )));
        let cached = Unparsed::Words(words.clone());
        for name in [
            "crate", "shelf", "Shelf_2", "type", "add_book", "add", "book", "Book", "b", "id", "1",
            "u32", "u3", "caf", "Shelf", "self", "fn",
        ] {
            assert_eq!(
                cached.contains_word(name),
                text.contains_word(name),
                "{name}"
            );
        }
        assert!(cached.may_glob_import(Lang::Rust) && text.may_glob_import(Lang::Rust));
        assert_eq!(cached.len(), TEXT.len());
        // Not a word of ASCII letters: possibly there, so yes.
        assert!(cached.contains_word("café") && cached.contains_word("a::b"));
    }

    #[test]
    fn words_round_trip_and_damage_decodes_as_none() {
        let words = Words::of(Lang::Python, b"from pkg import *\nx = make()\n");
        assert!(words.glob);
        let bytes = words.encode();
        assert_eq!(Words::decode(&bytes), Some(words));
        for cut in [0, 3, 4, 12, bytes.len() - 1] {
            assert_eq!(Words::decode(&bytes[..cut]), None, "cut at {cut}");
        }
        let mut unsorted = bytes.clone();
        let n = unsorted.len();
        unsorted[n - 4..].copy_from_slice(&0u32.to_le_bytes());
        assert_eq!(Words::decode(&unsorted), None);
    }
}
