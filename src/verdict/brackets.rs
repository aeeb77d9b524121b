//! Where each bracket of a model's answer closes: for every `{` and `[`, the
//! bracket that closes it when a JSON-aware scan starts there (outside a
//! string, skipping strings and their escapes), or none when the scan meets
//! a bracket of the wrong kind or the end of the text.
//!
//! Scanning from each bracket in turn is quadratic: 80,000 unclosed `{` took
//! 25 s. Here every scan runs at once in a single pass. A scan that meets a
//! nested bracket waits for that bracket's own scan, which is the same work;
//! and scans standing at the same byte in the same state (outside a string,
//! in one, or just after a backslash in one) have the same future, so they
//! are merged and share their outcome. At most three groups of scans are
//! ever active, so the pass is linear in the length of the text. It knows nothing of
//! objects or values: `extract` decides what to parse.

/// No bracket: a link, a group or a closer that does not exist.
const NONE: u32 = u32::MAX;

/// The opening brackets of a text, in order, with where each one closes.
pub(crate) struct Brackets {
    scans: Vec<Scan>,
}

/// The scan from one opening bracket. Scans are named by their index; a
/// group is a set of scans with the same future, named by its first member,
/// its members linked through `next`.
pub(crate) struct Scan {
    /// Offset of the bracket.
    open: u32,
    /// Offset of its closer, or `NONE`.
    close: u32,
    /// Next member of the same group.
    next: u32,
    /// As a group: its last member.
    tail: u32,
    /// The group that waits for this scan to close (the scans that met its
    /// bracket outside a string), or `NONE`.
    waiter: u32,
}

impl Brackets {
    /// Scans `bytes`, which must be shorter than 4 GiB (the caller refuses
    /// longer answers long before).
    pub(crate) fn scan(bytes: &[u8]) -> Brackets {
        debug_assert!(bytes.len() < NONE as usize);
        // Counted first: a hostile answer may hold millions, and growing
        // the vector by doubling would copy them over and over.
        let opens = memchr::memchr2_iter(b'{', b'[', bytes).count();
        let mut pass = Pass {
            bytes,
            scans: Vec::with_capacity(opens),
        };
        pass.run();
        Brackets { scans: pass.scans }
    }

    /// Every opening bracket, in order.
    pub(crate) fn all(&self) -> &[Scan] {
        &self.scans
    }
}

impl Scan {
    /// The offset of the opening bracket.
    pub(crate) fn open(&self) -> usize {
        self.open as usize
    }

    /// The offset of its closer, if the scan from it closes.
    pub(crate) fn close(&self) -> Option<usize> {
        (self.close != NONE).then_some(self.close as usize)
    }
}

/// The single pass over the text.
struct Pass<'b> {
    bytes: &'b [u8],
    scans: Vec<Scan>,
}

impl Pass<'_> {
    fn run(&mut self) {
        // The active groups by state, `NONE` when there is none: outside a
        // string, inside one, and inside one just after a backslash. Plain
        // indexing and sentinels rather than iterator adapters and options:
        // this loop runs once per byte of answers of megabytes, in
        // unoptimised test builds too.
        let mut out = NONE;
        let mut string = NONE;
        let mut escaped = NONE;
        let bytes = self.bytes;
        let len = bytes.len();
        // Bytes other than brackets, quotes and backslashes change nothing
        // unless they follow a backslash: the pass jumps from one of those
        // to the next. A search takes three bytes, so the six take two
        // searches; each resumes where it stopped, so together they read
        // the text once.
        let find_a = |from: usize| memchr::memchr3(b'{', b'[', b'}', &bytes[from..]);
        let find_b = |from: usize| memchr::memchr3(b']', b'"', b'\\', &bytes[from..]);
        let mut next_a = find_a(0).unwrap_or(len);
        let mut next_b = find_b(0).unwrap_or(len);
        let mut i = 0;
        while i < len {
            if escaped == NONE {
                if next_a < i {
                    next_a = find_a(i).map_or(len, |p| i + p);
                }
                if next_b < i {
                    next_b = find_b(i).map_or(len, |p| i + p);
                }
                i = next_a.min(next_b);
                if i == len {
                    break;
                }
            }
            let b = bytes[i];
            if escaped != NONE && b != b'"' && b != b'\\' {
                // Any byte after a backslash is part of the string.
                string = self.merge(string, escaped);
                escaped = NONE;
            }
            match b {
                b'{' | b'[' => {
                    let id = self.scans.len() as u32;
                    self.scans.push(Scan {
                        open: i as u32,
                        close: NONE,
                        next: NONE,
                        tail: id,
                        waiter: out,
                    });
                    out = id;
                }
                b'}' | b']' if out != NONE => out = self.end(out, i as u32, b),
                b'"' => {
                    let outside = out;
                    out = string;
                    string = self.merge(outside, escaped);
                    escaped = NONE;
                }
                // A backslash in a string escapes the next byte; one that is
                // itself escaped is just text.
                b'\\' => std::mem::swap(&mut escaped, &mut string),
                _ => {}
            }
            i += 1;
        }
        // The scans still going at the end never close, nor do the ones
        // waiting on them: their `close` stays `NONE`.
    }

    /// One group with the members of both (either may be `NONE`).
    fn merge(&mut self, a: u32, b: u32) -> u32 {
        if a == NONE {
            return b;
        }
        if b != NONE {
            let last = self.scans[a as usize].tail as usize;
            self.scans[last].next = b;
            self.scans[a as usize].tail = self.scans[b as usize].tail;
        }
        a
    }

    /// Group `g` meets the closer `closer` at `at` outside a string: each
    /// member's scan ends there, closed if the kinds match. The groups that
    /// waited for the closed ones go on after it, as one.
    fn end(&mut self, g: u32, at: u32, closer: u8) -> u32 {
        let mut resumed = NONE;
        let mut member = g;
        while member != NONE {
            let m = member as usize;
            let opener = self.bytes[self.scans[m].open as usize];
            let waiter = self.scans[m].waiter;
            if (opener == b'{') == (closer == b'}') {
                self.scans[m].close = at;
                resumed = self.merge(resumed, waiter);
            }
            // Otherwise the scan met the wrong kind: it never closes, nor
            // does the group waiting on it, which is dropped.
            member = self.scans[m].next;
        }
        resumed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scan from one bracket, as the extraction did it before: the
    /// reference the single pass must agree with.
    fn closing(bytes: &[u8], start: usize) -> Option<usize> {
        let mut stack: Vec<u8> = Vec::new();
        let mut in_string = false;
        let mut escaped = false;
        for (i, &b) in bytes.iter().enumerate().skip(start) {
            if in_string {
                match b {
                    _ if escaped => escaped = false,
                    b'\\' => escaped = true,
                    b'"' => in_string = false,
                    _ => {}
                }
                continue;
            }
            match b {
                b'"' => in_string = true,
                b'{' => stack.push(b'}'),
                b'[' => stack.push(b']'),
                b'}' | b']' => {
                    if stack.pop() != Some(b) {
                        return None;
                    }
                    if stack.is_empty() {
                        return Some(i);
                    }
                }
                _ => {}
            }
        }
        None
    }

    fn check(text: &[u8]) {
        let got: Vec<(usize, Option<usize>)> = Brackets::scan(text)
            .all()
            .iter()
            .map(|s| (s.open(), s.close()))
            .collect();
        let want: Vec<(usize, Option<usize>)> = text
            .iter()
            .enumerate()
            .filter(|(_, b)| matches!(b, b'{' | b'['))
            .map(|(i, _)| (i, closing(text, i)))
            .collect();
        assert_eq!(got, want, "{:?}", String::from_utf8_lossy(text));
    }

    #[test]
    fn simple_cases() {
        for text in [
            "",
            "{}",
            "[{}]",
            r#"{"a": [1, {"b": "}"}]}"#,
            r#"{"a\"}": 1}"#,
            "{ ] }",
            "{ [ }",
            r#"x "{" y {"k": "v"} z"#,
            r#"{"\\"}"#,
            r#"{"a": "\\\"}"}"#,
            "{{{{",
            "}}}}{",
            r#"{"x": "{\"", "y": "}"}"#,
        ] {
            check(text.as_bytes());
        }
    }

    /// Agrees with a scan per bracket on every text of a small alphabet
    /// that makes strings, escapes and brackets interleave.
    #[test]
    fn agrees_with_one_scan_per_bracket() {
        let alphabet = b"{}[]\"\\ a";
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..20_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let len = (state % 24) as usize;
            let mut seed = state;
            let text: Vec<u8> = (0..len)
                .map(|_| {
                    seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                    alphabet[(seed >> 33) as usize % alphabet.len()]
                })
                .collect();
            check(&text);
        }
    }

    #[test]
    fn every_scan_closing_after_a_shared_escape_is_linear() {
        // `{"{\"{\"…`: every scan stays inside a string of the ones before
        // it, so a scan per bracket walks to the end each time.
        let mut text = String::from("{\"");
        for _ in 0..200_000 {
            text.push_str("{\\\"");
        }
        let started = std::time::Instant::now();
        let b = Brackets::scan(text.as_bytes());
        assert!(b.all().iter().all(|s| s.close().is_none()));
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
    }
}
