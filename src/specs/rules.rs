//! A spec section's rules: its sentences and list items that say what must,
//! must not or cannot be (must, never, always, only, shall, should, nothing,
//! is refused, …), each as written with the line it starts on. A review
//! prompt that cannot hold a section whole may still carry its rules: a
//! cross-cutting sentence ("a value read from `app.config` is never stored
//! on a class") shares few words with the code that breaks it, and the
//! sections around it are descriptive. Pure text in, plain data out.

use super::vision::sentences_of;

/// One rule of a section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// 1-based line of the document where the sentence starts.
    pub line: usize,
    /// The sentence, its wrapped lines joined by spaces, list and quote
    /// markers taken off.
    pub text: String,
    /// It says what must, must never or cannot be (must, never, always,
    /// shall, nothing, is refused, do not, …), not what should or only
    /// may be: a prompt short of room takes these first.
    pub strong: bool,
}

/// Words that make a sentence a strong rule. Narrower than the vision's
/// constraint words: a spec's descriptive sentences say "not", "no",
/// "none" (`Default: None`) and "every" all the time.
const STRONG_WORDS: &[&str] = &[
    "must",
    "mustn't",
    "never",
    "always",
    "shall",
    "cannot",
    "can't",
    "nothing",
    "refuse",
    "refuses",
    "refused",
    "reject",
    "rejects",
    "rejected",
    "forbid",
    "forbids",
    "forbidden",
    "prohibited",
];
/// Phrases that do the same.
const STRONG_PHRASES: &[&str] = &[
    "do not ",
    "don't ",
    "may not ",
    "is not allowed",
    "are not allowed",
    "not permitted",
];
/// Words of a weaker rule: what should be, or only is.
const WEAK_WORDS: &[&str] = &["only", "should", "shouldn't", "required", "doesn't"];
/// Phrases that do the same.
const WEAK_PHRASES: &[&str] = &["does not "];
/// A sentence longer than this (in bytes) is a paragraph the splitter could
/// not cut, not a rule one can hold on a line.
const MAX_RULE_BYTES: usize = 600;
/// A hostile section of thousands of rules is cut here; a prompt's share is
/// far smaller anyway.
const MAX_RULES: usize = 200;

/// The rules of a section's `text`, whose first line is the document's
/// line `first_line`, in its order. A question is no rule.
pub fn rules(text: &str, first_line: usize) -> Vec<Rule> {
    sentences_of(text, first_line)
        .into_iter()
        .filter(|s| s.text.len() <= MAX_RULE_BYTES && !s.text.ends_with('?'))
        .filter_map(|s| {
            let strong = strength(&s.text)?;
            Some(Rule {
                line: s.line,
                text: s.text,
                strong,
            })
        })
        .take(MAX_RULES)
        .collect()
}

/// Whether a sentence is a rule: Some(true) when it says what must, must
/// never or cannot be, Some(false) when only what should or only is, None
/// when it is no rule.
pub fn strength(sentence: &str) -> Option<bool> {
    let lower = format!("{} ", sentence.to_lowercase().replace('\u{2019}', "'"));
    let has = |words: &[&str], phrases: &[&str]| {
        lower
            .split(|c: char| !(c.is_alphanumeric() || c == '\''))
            .any(|w| words.contains(&w))
            || phrases.iter().any(|p| lower.contains(p))
    };
    if has(STRONG_WORDS, STRONG_PHRASES) {
        Some(true)
    } else if has(WEAK_WORDS, WEAK_PHRASES) {
        Some(false)
    } else {
        None
    }
}

/// Whether a sentence says what must, must not, should or only is.
pub fn is_rule(sentence: &str) -> bool {
    strength(sentence).is_some()
}

#[cfg(test)]
mod tests {
    use super::super::markdown::parse;
    use super::*;

    const SPEC: &str = "# Flask\n\n## Configuration\n\nThe application object is created once per process.\nConfiguration is per application: a value read from `app.config` is never\nstored on a class, a module or a global.\n\n- Keys are upper case.\n- Environment files are loaded by the CLI only.\n\n```python\n# must not be a rule\napp.config[\"X\"] = 1  # never\n```\n\n> Paths that climb out with `..` are refused.\n\nIt does not matter which loader runs first. Nothing else is said.\n";

    #[test]
    fn rules_are_the_normative_sentences_with_their_lines() {
        let doc = parse("specs/flask.md", SPEC);
        let section = doc
            .sections
            .iter()
            .find(|s| s.title() == "Configuration")
            .expect("the section");
        let found: Vec<(usize, String)> = rules(&section.text, section.start_line)
            .into_iter()
            .map(|r| (r.line, r.text))
            .collect();
        assert_eq!(
            found,
            vec![
                (
                    6,
                    "Configuration is per application: a value read from `app.config` is never stored on a class, a module or a global.".to_string()
                ),
                (10, "Environment files are loaded by the CLI only.".to_string()),
                (17, "Paths that climb out with `..` are refused.".to_string()),
                (19, "It does not matter which loader runs first.".to_string()),
                (19, "Nothing else is said.".to_string()),
            ]
        );
    }

    #[test]
    fn descriptive_sentences_are_no_rules() {
        for sentence in [
            "The request object wraps the WSGI environ.",
            "Timers fire with a resolution of one millisecond.",
            "A view may return a string, bytes or a dict.",
            "This is not a list of every option.",
        ] {
            assert!(!is_rule(sentence), "{sentence}");
        }
        for sentence in [
            "Sending never blocks.",
            "A hook must not sleep.",
            "Values don’t leak.",
            "Secrets shall stay out of logs.",
            "An absolute path is rejected.",
        ] {
            assert!(is_rule(sentence), "{sentence}");
        }
    }

    #[test]
    fn a_huge_section_is_cut() {
        let text = format!("# Rules\n{}", "Every change must be small. ".repeat(1_000));
        let doc = parse("s.md", &text);
        let section = &doc.sections[0];
        assert_eq!(rules(&section.text, section.start_line).len(), MAX_RULES);
    }
}
