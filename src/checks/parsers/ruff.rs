//! ruff's `--output-format=json` (one array) or `json-lines` (one object
//! per line): each violation's `filename` (absolute, in the checkout),
//! `location` {row, column}, `code` (null for a syntax error), `message`,
//! and `fix.message` as the suggested fix. ruff gives every violation the
//! same weight: an error, unless its `severity` says otherwise.

use serde_json::Value;

use super::{Collect, Level, Message, Parsed, Unreadable, clip, number, string};

pub fn parse(text: &str) -> Result<Parsed, Unreadable> {
    let trimmed = text.trim_start();
    let items: Vec<Value> = if trimmed.starts_with('[') {
        serde_json::from_str::<Vec<Value>>(trimmed)
            .map_err(|e| Unreadable(format!("not a JSON array of violations: {e}")))?
    } else if trimmed.is_empty() {
        return Err(Unreadable(
            "no output (run it with --output-format=json)".to_string(),
        ));
    } else {
        let mut items = Vec::new();
        for (i, line) in trimmed.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let value: Value = serde_json::from_str(line).map_err(|e| {
                Unreadable(format!(
                    "expected ruff's JSON (--output-format=json), line {} is \"{}\": {e}",
                    i + 1,
                    clip(line, 60)
                ))
            })?;
            items.push(value);
        }
        items
    };
    let mut collect = Collect::default();
    for item in &items {
        let Some(text) = string(&item["message"]) else {
            continue;
        };
        let level = item["severity"]
            .as_str()
            .map(Level::of_word)
            .unwrap_or(Level::Error);
        let rule = string(&item["code"]).or_else(|| {
            // ruff reports syntax errors with a null code.
            (item["code"].is_null() && text.starts_with("SyntaxError"))
                .then(|| "syntax-error".to_string())
        });
        collect.push(Message {
            level,
            places: super::place(
                string(&item["filename"]),
                number(&item["location"]["row"]),
                number(&item["location"]["column"]),
            )
            .into_iter()
            .collect(),
            rule,
            text,
            suggestion: string(&item["fix"]["message"]),
        });
    }
    Ok(collect.done())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_ruff_violations() {
        let text = std::fs::read_to_string(format!(
            "{}/fixtures/tools/python/ruff.json",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap();
        let parsed = parse(&text).unwrap();
        let found: Vec<String> = parsed
            .messages
            .iter()
            .map(|m| {
                format!(
                    "{} {}:{} {}",
                    m.rule.as_deref().unwrap(),
                    m.places[0].file,
                    m.places[0].line.unwrap(),
                    m.text
                )
            })
            .collect();
        assert_eq!(
            found,
            [
                "F401 /tmp/speed-tools/py/fines/calc.py:2 `os` imported but unused",
                "F401 /tmp/speed-tools/py/fines/calc.py:3 `sys` imported but unused",
                "F841 /tmp/speed-tools/py/fines/calc.py:18 Local variable `grace` is assigned to but never used",
            ]
        );
        assert_eq!(
            parsed.messages[0].suggestion.as_deref(),
            Some("Remove unused import: `os`")
        );
        assert!(parsed.messages.iter().all(|m| m.level == Level::Error));
    }

    #[test]
    fn json_lines_and_hostile_input() {
        let lines = "{\"code\":\"E501\",\"message\":\"Line too long\",\"filename\":\"a.py\",\"location\":{\"row\":4,\"column\":89}}\n";
        let parsed = parse(lines).unwrap();
        assert_eq!(parsed.messages[0].places[0].line, Some(4));
        assert!(parse("error: Failed to parse pyproject.toml").is_err());
        assert!(parse("[{\"message\": ").is_err());
        assert!(parse("").is_err());
        assert_eq!(parse("[]").unwrap(), Parsed::default());
        let deep = format!("[{}{}]", "{\"a\":".repeat(5000), "}".repeat(5000));
        assert!(parse(&deep).is_err());
        // Wrong types are no places, not panics.
        let odd = "[{\"message\":\"m\",\"filename\":7,\"location\":{\"row\":\"x\"}}, 3, null]";
        let parsed = parse(odd).unwrap();
        assert_eq!(parsed.messages.len(), 1);
        assert!(parsed.messages[0].places.is_empty());
    }
}
