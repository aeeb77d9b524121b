//! Exact token counting with a real BPE tokenizer (tiktoken-rs). Building a
//! BPE takes 100 ms or more, so a `Counter` is built once and shared by
//! reference; it must not be rebuilt per count.

use std::fmt;

use tiktoken_rs::CoreBPE;

use super::Error;

/// Counts tokens exactly as the named encoding would.
pub struct Counter {
    name: &'static str,
    bpe: CoreBPE,
}

impl Counter {
    /// The encoding used when none is configured.
    pub const DEFAULT: &'static str = "o200k_base";
    /// The encodings `new` accepts.
    pub const KNOWN: [&'static str; 4] = ["o200k_base", "cl100k_base", "p50k_base", "r50k_base"];

    /// Builds the named encoding; an unknown name is an error listing the known ones.
    pub fn new(name: &str) -> Result<Counter, Error> {
        let (name, built) = match name {
            "o200k_base" => ("o200k_base", tiktoken_rs::o200k_base()),
            "cl100k_base" => ("cl100k_base", tiktoken_rs::cl100k_base()),
            "p50k_base" => ("p50k_base", tiktoken_rs::p50k_base()),
            "r50k_base" => ("r50k_base", tiktoken_rs::r50k_base()),
            other => {
                return Err(Error::UnknownEncoding {
                    name: other.to_string(),
                    known: Self::KNOWN.join(", "),
                });
            }
        };
        let bpe = built.map_err(|e| Error::Encoding {
            name: name.to_string(),
            message: e.to_string(),
        })?;
        Ok(Counter { name, bpe })
    }

    pub fn name(&self) -> &str {
        self.name
    }

    /// The exact number of tokens in `text`. Special-token text such as
    /// `<|endoftext|>` is counted as ordinary text, which is how a provider
    /// treats it inside a user message, and never fails on untrusted input.
    pub fn count(&self, text: &str) -> usize {
        if text.is_empty() {
            return 0;
        }
        self.bpe.encode_ordinary(text).len()
    }
}

impl fmt::Debug for Counter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Counter").field("name", &self.name).finish()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::sync::OnceLock;

    use super::*;

    /// One shared counter for every test in the crate: building it is slow.
    pub(crate) fn counter() -> &'static Counter {
        static COUNTER: OnceLock<Counter> = OnceLock::new();
        COUNTER.get_or_init(|| Counter::new(Counter::DEFAULT).expect("o200k_base is built in"))
    }

    #[test]
    fn counts_exactly() {
        let c = counter();
        assert_eq!(c.count(""), 0);
        assert_eq!(c.count("hello"), 1);
        assert_eq!(c.count("hello world"), 2);
    }

    #[test]
    fn special_token_text_is_ordinary_text() {
        let c = counter();
        // Would panic with `encode` and a restricted special set; here it is just text.
        assert!(c.count("<|endoftext|> <|fim_prefix|>") > 2);
    }

    #[test]
    fn unknown_encoding_lists_known_names() {
        let err = Counter::new("gpt5_base").unwrap_err().to_string();
        assert!(err.contains("gpt5_base"), "{err}");
        for known in Counter::KNOWN {
            assert!(err.contains(known), "{err}");
        }
    }

    #[test]
    fn other_encodings_build_and_differ() {
        let r50k = Counter::new("r50k_base").unwrap();
        assert_eq!(r50k.name(), "r50k_base");
        let text = "    fn main() {\n        println!(\"héllo\");\n    }\n";
        assert!(r50k.count(text) > counter().count(text));
    }

    #[test]
    fn counter_can_be_shared_across_threads() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<Counter>();
    }
}
