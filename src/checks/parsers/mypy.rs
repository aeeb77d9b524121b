//! mypy's lines, `file:line[:col][:end_line:end_col]: error: message  [code]`
//! (columns with `--show-column-numbers`), or its `--output json` objects.
//! A `note:` at the place of the error before it belongs to that error (a
//! hint, a revealed type); a note elsewhere is a message of its own. The
//! summary ("Found 3 errors in 1 file", "Success: …") is not a message.

use std::sync::OnceLock;

use serde_json::Value;

use super::{Collect, Level, Message, Parsed, Place, Unreadable, number, string, strip_ansi};

/// Note lines appended to one error.
const MAX_NOTES: usize = 8;

fn line_pattern() -> &'static regex::Regex {
    static RE: OnceLock<regex::Regex> = OnceLock::new();
    RE.get_or_init(|| {
        regex::Regex::new(
            r"^(?P<file>[^:\n]+?):(?P<line>[0-9]{1,9})(?::(?P<col>[0-9]{1,6}))?(?::[0-9]{1,9}:[0-9]{1,6})?: (?P<level>error|warning|note): (?P<message>.*?)(?:  \[(?P<code>[A-Za-z0-9_-]{1,60})\])?$",
        )
        .expect("a valid pattern")
    })
}

pub fn parse(text: &str) -> Result<Parsed, Unreadable> {
    let text = strip_ansi(text);
    let mut collect = Collect::default();
    let mut notes = 0;
    for line in text.lines() {
        let line = line.trim_end();
        if line.starts_with('{') {
            if let Some(message) = json_message(line) {
                collect.push(message);
                continue;
            }
        }
        let Some(caps) = line_pattern().captures(line) else {
            continue;
        };
        let place = Place {
            file: caps["file"].trim().to_string(),
            line: caps["line"].parse().ok(),
            column: caps.name("col").and_then(|c| c.as_str().parse().ok()),
        };
        let words = caps["message"].trim().to_string();
        let level = Level::of_word(&caps["level"]);
        if level == Level::Note {
            if let Some(last) = collect.last().filter(|m| {
                m.places
                    .first()
                    .is_some_and(|p| p.file == place.file && p.line == place.line)
            }) {
                notes += 1;
                if notes <= MAX_NOTES {
                    last.text.push_str("\nnote: ");
                    last.text.push_str(&words);
                }
                continue;
            }
        }
        notes = 0;
        collect.push(Message {
            level,
            places: vec![place],
            rule: caps.name("code").map(|c| c.as_str().to_string()),
            text: words,
            suggestion: None,
        });
    }
    Ok(collect.done())
}

/// One object of `--output json`: {file, line, column, message, hint,
/// code, severity}.
fn json_message(line: &str) -> Option<Message> {
    let value: Value = serde_json::from_str(line).ok()?;
    let text = string(&value["message"])?;
    Some(Message {
        level: value["severity"]
            .as_str()
            .map(Level::of_word)
            .unwrap_or(Level::Error),
        places: super::place(
            string(&value["file"]),
            number(&value["line"]),
            // mypy's JSON columns count from 0.
            number(&value["column"]).map(|c| c + 1),
        )
        .into_iter()
        .collect(),
        rule: string(&value["code"]),
        text,
        suggestion: string(&value["hint"]),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        std::fs::read_to_string(format!(
            "{}/fixtures/tools/python/{name}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
    }

    fn found(parsed: &Parsed) -> Vec<String> {
        parsed
            .messages
            .iter()
            .map(|m| {
                let p = &m.places[0];
                format!(
                    "{}:{}:{:?} {} {}",
                    p.file,
                    p.line.unwrap(),
                    p.column,
                    m.rule.as_deref().unwrap_or("-"),
                    m.text
                )
            })
            .collect()
    }

    #[test]
    fn real_mypy_errors_with_and_without_columns() {
        let plain = parse(&fixture("mypy.txt")).unwrap();
        assert_eq!(
            found(&plain),
            [
                "fines/calc.py:19:None assignment Incompatible types in assignment (expression has type \"int\", variable has type \"str\")",
                "fines/calc.py:20:None operator Unsupported operand types for > (\"str\" and \"int\")",
                "fines/calc.py:22:None return-value Incompatible return value type (got \"str\", expected \"int\")",
            ]
        );
        let columns = parse(&fixture("mypy-columns.txt")).unwrap();
        assert_eq!(columns.messages[0].places[0].column, Some(16));
        assert_eq!(columns.messages.len(), 3);
    }

    #[test]
    fn notes_join_their_error_and_json_output_is_read() {
        let text = "a.py:3: error: Name \"x\" is not defined  [name-defined]\na.py:3: note: Did you mean \"y\"?\nb.py:1: note: Revealed type is \"int\"\nFound 1 error in 1 file (checked 2 source files)\n";
        let parsed = parse(text).unwrap();
        assert_eq!(parsed.messages.len(), 2);
        assert_eq!(
            parsed.messages[0].text,
            "Name \"x\" is not defined\nnote: Did you mean \"y\"?"
        );
        assert_eq!(parsed.messages[1].level, Level::Note);
        let json = "{\"file\": \"a.py\", \"line\": 2, \"column\": 4, \"message\": \"Bad\", \"hint\": null, \"code\": \"misc\", \"severity\": \"error\"}\n";
        let parsed = parse(json).unwrap();
        assert_eq!(parsed.messages[0].places[0].column, Some(5));
        assert_eq!(
            parse("Success: no issues found in 3 source files\n")
                .unwrap()
                .messages,
            []
        );
        // A line too long for a number is no message.
        assert_eq!(
            parse("a.py:99999999999999: error: x\n").unwrap().messages,
            []
        );
    }
}
