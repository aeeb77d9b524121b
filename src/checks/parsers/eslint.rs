//! ESLint's `-f json`: an array of files, each with its absolute
//! `filePath` and `messages` ({ruleId, severity 1 = warning, 2 = error,
//! message, line, column, fix, suggestions}). A parse error is `fatal`
//! with no rule.

use serde_json::Value;

use super::{Collect, Level, Message, Parsed, Unreadable, number, string};

pub fn parse(text: &str) -> Result<Parsed, Unreadable> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err(Unreadable("no output (run it with -f json)".to_string()));
    }
    let files: Vec<Value> = serde_json::from_str(trimmed).map_err(|e| {
        Unreadable(format!(
            "expected ESLint's JSON (-f json), an array of files: {e}"
        ))
    })?;
    let mut collect = Collect::default();
    for file in &files {
        let path = string(&file["filePath"]);
        let Some(messages) = file["messages"].as_array() else {
            continue;
        };
        for m in messages {
            let Some(text) = string(&m["message"]) else {
                continue;
            };
            let level = match m["severity"].as_u64() {
                Some(1) => Level::Warning,
                Some(0) => Level::Note,
                _ => Level::Error,
            };
            let rule = string(&m["ruleId"])
                .or_else(|| (m["fatal"] == true).then(|| "parse-error".to_string()));
            let suggestion = m["suggestions"]
                .as_array()
                .and_then(|s| s.first())
                .and_then(|s| string(&s["desc"]))
                .or_else(|| {
                    m["fix"]
                        .is_object()
                        .then(|| "eslint --fix can fix it".to_string())
                });
            collect.push(Message {
                level,
                places: super::place(path.clone(), number(&m["line"]), number(&m["column"]))
                    .into_iter()
                    .collect(),
                rule,
                text,
                suggestion,
            });
        }
    }
    Ok(collect.done())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_eslint_errors_and_warnings() {
        let text = std::fs::read_to_string(format!(
            "{}/fixtures/tools/js/eslint.json",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap();
        let parsed = parse(&text).unwrap();
        let found: Vec<String> = parsed
            .messages
            .iter()
            .map(|m| {
                let p = &m.places[0];
                format!(
                    "{:?} {}:{}:{} {}",
                    m.level,
                    p.file,
                    p.line.unwrap(),
                    p.column.unwrap(),
                    m.rule.as_deref().unwrap()
                )
            })
            .collect();
        assert_eq!(
            found,
            [
                "Error /tmp/speed-tools/js/src/fines.js:3:9 no-unused-vars",
                "Error /tmp/speed-tools/js/src/fines.js:4:12 eqeqeq",
                "Error /tmp/speed-tools/js/src/fines.js:7:3 no-undef",
                "Warning /tmp/speed-tools/js/src/fines.js:7:3 no-console",
            ]
        );
    }

    #[test]
    fn fatal_errors_and_garbage() {
        let text = r#"[{"filePath":"/r/a.js","messages":[{"fatal":true,"severity":2,"message":"Parsing error: Unexpected token","line":1,"column":5}]}]"#;
        let parsed = parse(text).unwrap();
        assert_eq!(parsed.messages[0].rule.as_deref(), Some("parse-error"));
        assert!(parse("Oops! Something went wrong!").is_err());
        assert!(parse("{\"filePath\": 1}").is_err());
        assert!(parse(&"[".repeat(1000)).is_err());
    }
}
