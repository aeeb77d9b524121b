//! Exact token counting, token for token as OpenAI's tiktoken counts
//! (`bpe`). A `Counter` compiles its encoding's regex (about 2 ms), so it is
//! built once and shared by reference; a `PendingCounter` builds it on first
//! use, so a command that counts nothing never pays for it.

use std::fmt;
use std::sync::OnceLock;

use super::Error;
use super::bpe::Bpe;

/// Counts tokens exactly as the named encoding would.
pub struct Counter {
    name: &'static str,
    bpe: Bpe,
}

impl Counter {
    /// The encoding used when none is configured.
    pub const DEFAULT: &'static str = "o200k_base";
    /// The encodings `new` accepts.
    pub const KNOWN: [&'static str; 4] = ["o200k_base", "cl100k_base", "p50k_base", "r50k_base"];

    /// Builds the named encoding; an unknown name is an error listing the known ones.
    pub fn new(name: &str) -> Result<Counter, Error> {
        let name = known(name)?;
        Counter::build(name).map_err(|message| Error::Encoding {
            name: name.to_string(),
            message,
        })
    }

    /// Builds a known encoding; the error is why it could not be built.
    fn build(name: &'static str) -> Result<Counter, String> {
        let bpe = Bpe::new(name)
            .unwrap_or_else(|| Err("the encoder does not know this encoding".to_string()))?;
        Ok(Counter { name, bpe })
    }

    pub fn name(&self) -> &str {
        self.name
    }

    /// The exact number of tokens in `text`. Special-token text such as
    /// `<|endoftext|>` is counted as ordinary text, which is how a provider
    /// treats it inside a user message, and never fails on untrusted input.
    pub fn count(&self, text: &str) -> usize {
        self.bpe.count(text)
    }

    /// Count what review prompts are made of (the review instructions and
    /// a sample of a diff, a spec and an answer), so that the counts of a
    /// review's prompts find the tokenizer's search states built and its
    /// tables paged in: for a thread with time to spare before the first
    /// prompt is counted. It changes no count.
    pub fn warm(&self) {
        self.bpe.page_in();
        self.bpe.count(super::template::REVIEW_TEXT);
        self.bpe.count(WARM_SAMPLE);
    }
}

/// Text like the rest of a prompt: a diff of Rust and Python, spec prose,
/// a table and JSON.
const WARM_SAMPLE: &str = r#"## Diff
```diff
@@ -118,9 +118,14 @@ impl Store {
-    pub fn tree(&self, key: &Key) -> Result<Arc<Parsed>, String> {
+    /// The tree of `key`, parsed at most once.
+    pub fn tree(&self, key: &Key) -> Result<Arc<Parsed>, String> {
         let entry = self.entry(key);
-        let mut e = lock(&entry);
+        let mut e = entry.lock().unwrap_or_else(|p| p.into_inner());
+        if e.count > 0 && !self.fresh { return Ok(Arc::clone(&e.tree)); }
         self.tree_locked(key, &mut e)
     }
@@ -1269,7 +1269,7 @@ class Flask(App):
-    def make_response(self, rv: ft.ResponseReturnValue) -> Response:
+    def make_response(self, rv: ft.ResponseReturnValue, *, status=None) -> Response:
         """Convert the return value from a view function to an instance of
         :attr:`response_class`."""
         if isinstance(rv, tuple):
             len_rv = len(rv)  # 2 or 3
             raise TypeError(f"The view function did not return a valid response ({len_rv}).")
         for i in range(0, 10): x[i] += 1_000 * 3.14 - y ** 2 >= z != w
```
## Spec
1. A session token MUST expire after 30 minutes; requests with an expired
   token are rejected with `401 Unauthorized`, and nothing is written.
- The limit (`max_content_length`) applies per request, not per app.

| symbol | file | line | dependents |
| --- | --- | ---: | ---: |
| `Flask.make_response` | src/flask/app.py | 1269 | 6 |

{"verdict": "request_changes", "scores": {"spec_alignment": 62}, "issues": [{"severity": "major", "file": "src/lib.rs", "line": 42, "quote": "MUST expire"}]}
"#;

/// The `'static` spelling of a known encoding name.
fn known(name: &str) -> Result<&'static str, Error> {
    Counter::KNOWN
        .iter()
        .find(|k| **k == name)
        .copied()
        .ok_or_else(|| unknown(name))
}

fn unknown(name: &str) -> Error {
    Error::UnknownEncoding {
        name: name.to_string(),
        known: Counter::KNOWN.join(", "),
    }
}

/// A `Counter` named now (an unknown name is an error at once) and built
/// when first asked for, once, however many threads ask.
pub struct PendingCounter {
    name: &'static str,
    built: OnceLock<Result<Counter, String>>,
}

impl PendingCounter {
    pub fn start(name: &str) -> Result<PendingCounter, Error> {
        Ok(PendingCounter {
            name: known(name)?,
            built: OnceLock::new(),
        })
    }

    /// The counter, built on the first call.
    pub fn get(&self) -> Result<&Counter, Error> {
        let built = self.built.get_or_init(|| Counter::build(self.name));
        built.as_ref().map_err(|message| Error::Encoding {
            name: self.name.to_string(),
            message: message.clone(),
        })
    }
}

impl fmt::Debug for PendingCounter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PendingCounter")
            .field("name", &self.name)
            .finish()
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

    /// One shared counter for every test in the crate.
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
    fn warming_and_counting_on_several_threads_change_no_count() {
        let fresh = Counter::new(Counter::DEFAULT).expect("o200k_base is built in");
        let texts = [
            WARM_SAMPLE,
            "fn main() { println!(\"héllo, 世界\"); }\n\n\t  x += 1;",
            "   trailing spaces and\r\nCRLF lines   ",
        ];
        let cold: Vec<usize> = texts.iter().map(|t| fresh.count(t)).collect();
        fresh.warm();
        let warm: Vec<usize> = texts.iter().map(|t| fresh.count(t)).collect();
        assert_eq!(cold, warm);
        // Each thread counting at once takes a search state of its own.
        let counts: Vec<Vec<usize>> = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..4)
                .map(|_| scope.spawn(|| texts.iter().map(|t| fresh.count(t)).collect::<Vec<_>>()))
                .collect();
            workers
                .into_iter()
                .map(|w| w.join().expect("counts"))
                .collect()
        });
        for c in counts {
            assert_eq!(c, cold);
        }
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
        assert_send_sync::<PendingCounter>();
    }

    #[test]
    fn a_pending_counter_builds_nothing_until_a_count_asks_for_it() {
        let pending = PendingCounter::start("o200k_base").expect("known");
        assert!(
            pending.built.get().is_none(),
            "built before it was asked for"
        );
        assert_eq!(pending.get().expect("builds").count("hello world"), 2);
        assert!(pending.built.get().is_some());
    }

    #[test]
    fn a_pending_counter_refuses_unknown_names_at_once_and_builds_once() {
        let err = PendingCounter::start("o300k").expect_err("unknown");
        assert!(err.to_string().contains("o200k_base"), "{err}");
        let pending = PendingCounter::start("cl100k_base").expect("known");
        // (tokens counted, address of the counter) from three threads at once.
        let counts: Vec<(usize, usize)> = std::thread::scope(|s| {
            let waiters: Vec<_> = (0..3)
                .map(|_| {
                    s.spawn(|| {
                        let c = pending.get().expect("builds");
                        (c.count("hello world"), c as *const Counter as usize)
                    })
                })
                .collect();
            waiters
                .into_iter()
                .map(|w| w.join().expect("waiter"))
                .collect()
        });
        assert!(
            counts.iter().all(|c| *c == counts[0]),
            "one counter, one answer"
        );
        assert_eq!(counts[0].0, 2);
        assert_eq!(pending.get().expect("built").name(), "cl100k_base");
    }
}
