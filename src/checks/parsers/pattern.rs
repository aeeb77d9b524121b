//! `parser = "regex"`: a pattern of the configuration, matched against each
//! line of the output (colours removed), for tools speed has no parser
//! for. Its named groups say what a match holds: `file`, `line`, `col`,
//! `severity` (error, warning, note, …), `message` (else the whole line)
//! and `rule`. A line that does not match is not a message. Rust's regex
//! engine runs in time linear in the line, whatever the pattern.

use serde::Serialize;

use super::{Collect, Level, Message, Parsed, Place, Unreadable, strip_ansi};

/// The groups a pattern may name.
pub const GROUPS: [&str; 6] = ["file", "line", "col", "severity", "message", "rule"];

/// A compiled pattern is capped (a pattern is configuration, but a huge
/// repetition count would cost memory at every run).
const SIZE_LIMIT: usize = 1 << 20;

#[derive(Debug, Clone)]
pub struct Pattern {
    regex: regex::Regex,
}

impl PartialEq for Pattern {
    fn eq(&self, other: &Pattern) -> bool {
        self.regex.as_str() == other.regex.as_str()
    }
}

impl Serialize for Pattern {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.regex.as_str())
    }
}

impl Pattern {
    /// Compile `source`; what is wrong with it, for the configuration's
    /// error: a syntax error, a group speed does not know, no group at all.
    pub fn new(source: &str) -> Result<Pattern, String> {
        let regex = regex::RegexBuilder::new(source)
            .size_limit(SIZE_LIMIT)
            .build()
            .map_err(|e| {
                e.to_string()
                    .lines()
                    .last()
                    .unwrap_or("")
                    .trim()
                    .to_string()
            })?;
        let names: Vec<&str> = regex.capture_names().flatten().collect();
        if let Some(unknown) = names.iter().find(|n| !GROUPS.contains(n)) {
            return Err(format!(
                "the group `{unknown}` is not one of {}",
                GROUPS.join(", ")
            ));
        }
        if !names.contains(&"file") && !names.contains(&"message") {
            return Err("it names neither a `file` nor a `message` group".to_string());
        }
        Ok(Pattern { regex })
    }

    pub fn as_str(&self) -> &str {
        self.regex.as_str()
    }

    pub(super) fn parse(&self, text: &str) -> Result<Parsed, Unreadable> {
        let text = strip_ansi(text);
        let mut collect = Collect::default();
        for line in text.lines() {
            let Some(caps) = self.regex.captures(line) else {
                continue;
            };
            let group = |name: &str| {
                caps.name(name)
                    .map(|m| m.as_str().trim())
                    .filter(|s| !s.is_empty())
            };
            let number = |name: &str| group(name).and_then(|n| n.parse::<u64>().ok());
            let places = group("file")
                .map(|file| Place {
                    file: file.to_string(),
                    line: number("line"),
                    column: number("col"),
                })
                .into_iter()
                .collect();
            collect.push(Message {
                level: group("severity")
                    .map(Level::of_word)
                    .unwrap_or(Level::Error),
                places,
                rule: group("rule").map(str::to_string),
                text: group("message").unwrap_or(line.trim()).to_string(),
                suggestion: None,
            });
        }
        Ok(collect.done())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pattern_reads_shellcheck_gcc_style_lines() {
        let p = Pattern::new(
            r"^(?P<file>[^:]+):(?P<line>\d+):(?P<col>\d+): (?P<severity>\w+): (?P<message>.*?)(?: \[(?P<rule>SC\d+)\])?$",
        )
        .unwrap();
        let text = "\u{1b}[1mrun.sh:3:5: warning: Quote this to prevent word splitting. [SC2086]\u{1b}[0m\nIn run.sh line 3:\nrun.sh:9:1: error: Couldn't parse this if expression.\n";
        let parsed = p.parse(text).unwrap();
        assert_eq!(parsed.messages.len(), 2);
        let m = &parsed.messages[0];
        assert_eq!(m.level, Level::Warning);
        assert_eq!(m.rule.as_deref(), Some("SC2086"));
        assert_eq!(
            (
                m.places[0].file.as_str(),
                m.places[0].line,
                m.places[0].column
            ),
            ("run.sh", Some(3), Some(5))
        );
        assert_eq!(parsed.messages[1].level, Level::Error);
    }

    #[test]
    fn a_pattern_reads_a_real_tools_lines() {
        // mypy's real output, read by a pattern instead of its own parser.
        let text = std::fs::read_to_string(format!(
            "{}/fixtures/tools/python/mypy-columns.txt",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap();
        let p = Pattern::new(
            r"^(?P<file>[^:]+):(?P<line>\d+):(?P<col>\d+): (?P<severity>\w+): (?P<message>.*?)  \[(?P<rule>[a-z-]+)\]$",
        )
        .unwrap();
        let parsed = p.parse(&text).unwrap();
        let rules: Vec<&str> = parsed
            .messages
            .iter()
            .map(|m| m.rule.as_deref().unwrap())
            .collect();
        assert_eq!(rules, ["assignment", "operator", "return-value"]);
        assert_eq!(parsed.messages[2].places[0].column, Some(12));
    }

    #[test]
    fn bad_patterns_say_why() {
        assert!(Pattern::new("(?P<file>[").unwrap_err().contains("unclosed"));
        assert!(
            Pattern::new("(?P<lnie>\\d+)")
                .unwrap_err()
                .contains("`lnie`")
        );
        assert!(Pattern::new("\\d+").unwrap_err().contains("neither"));
        assert!(Pattern::new("(?P<message>a{1000}{1000})").is_err());
        // Without a message group, the line is the message.
        let p = Pattern::new("^(?P<file>\\S+) is bad$").unwrap();
        let parsed = p.parse("x.c is bad\n").unwrap();
        assert_eq!(parsed.messages[0].text, "x.c is bad");
    }
}
