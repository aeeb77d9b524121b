//! Tests on a candidate secret's text: its entropy, and whether it is a
//! placeholder or template rather than a real value. Shared by every rule.

/// Shannon entropy in bits per character.
pub fn entropy(text: &str) -> f64 {
    let bytes = text.as_bytes();
    if bytes.is_empty() {
        return 0.0;
    }
    let mut counts = [0u32; 256];
    for &b in bytes {
        counts[b as usize] += 1;
    }
    let n = bytes.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / n;
            -p * p.log2()
        })
        .sum()
}

/// Words that mark a value as a stand-in: documentation, templates,
/// examples. Matched case-insensitively anywhere in the value.
const PLACEHOLDER_WORDS: &[&str] = &[
    "xxxx",
    "****",
    "...",
    "example",
    "your",
    "changeme",
    "change_me",
    "change-me",
    "placeholder",
    "redacted",
    "dummy",
    "sample",
    "insert",
    "replace",
    "<",
    ">",
    "${",
    "{{",
    "}}",
    "%(",
];

/// A placeholder, template or reference rather than a value: `changeme`,
/// `<your-key>`, `${TOKEN}`, `{{ secret }}`, `xxxx`, `$API_KEY`, a run of
/// one character, or a sequence such as `abcdef…` or `123456…`.
pub fn is_placeholder(value: &str) -> bool {
    let lower = value.to_ascii_lowercase();
    if PLACEHOLDER_WORDS.iter().any(|w| lower.contains(w)) {
        return true;
    }
    if value.starts_with('$') || value.starts_with('%') {
        return true;
    }
    let first = value.chars().next();
    if value.chars().all(|c| Some(c) == first) {
        return true;
    }
    is_sequential(&lower)
}

/// `abcdefgh…`, `0123456…`, `qwerty…`: made up by a person.
fn is_sequential(lower: &str) -> bool {
    const RUNS: &[&str] = &[
        "abcdefghijklmnopqrstuvwxyz",
        "0123456789012345678901234567890123456789",
        "1234567890123456789012345678901234567890",
        "qwertyuiopasdfghjklzxcvbnm",
    ];
    let core: String = lower
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect();
    core.len() >= 6 && RUNS.iter().any(|run| run.contains(core.as_str()))
}

/// Counts of the character classes in a value.
pub struct Classes {
    pub lower: usize,
    pub upper: usize,
    pub digit: usize,
    pub other: usize,
}

pub fn classes(value: &str) -> Classes {
    let mut c = Classes {
        lower: 0,
        upper: 0,
        digit: 0,
        other: 0,
    };
    for ch in value.chars() {
        if ch.is_ascii_lowercase() {
            c.lower += 1;
        } else if ch.is_ascii_uppercase() {
            c.upper += 1;
        } else if ch.is_ascii_digit() {
            c.digit += 1;
        } else {
            c.other += 1;
        }
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entropy_of_simple_strings() {
        assert_eq!(entropy(""), 0.0);
        assert_eq!(entropy("aaaa"), 0.0);
        assert!((entropy("abab") - 1.0).abs() < 1e-9);
        assert!(entropy("R8fNq2Lx7TbV4mKc9WzP") > 4.0);
    }

    #[test]
    fn placeholders_are_recognised() {
        for p in [
            "changeme",
            "<your-api-key>",
            "${GITHUB_TOKEN}",
            "{{ secret_key }}",
            "xxxxxxxxxxxx",
            "$API_KEY",
            "%(password)s",
            "aaaaaaaaaa",
            "abcdefgh",
            "12345678",
            "YOUR_TOKEN_HERE",
            "AKIAIOSFODNN7EXAMPLE",
            "sk-...",
            "********",
        ] {
            assert!(is_placeholder(p), "{p}");
        }
        for real in ["R8fNq2Lx7TbV4mKc9WzP", "hunter2!xK", "c0rrect-h0rse"] {
            assert!(!is_placeholder(real), "{real}");
        }
    }
}
