//! SARIF 2.1.0, the format Semgrep, CodeQL, Bandit, clippy-sarif and most
//! analysers can write, so a tool speed does not know still gives located
//! findings. Each result of each run: its rule (`ruleId`, else the rule
//! its `ruleIndex` names), its level (the result's, else its rule's
//! default, else SARIF's default, warning), its message, its first
//! location's file (`artifactLocation.uri`, or the run's artifact its
//! `index` names; `file://` and percent-encoding undone) and region, and
//! its first fix's description as the suggestion. Suppressed results and
//! results a baseline says are `absent` are not findings, nor results whose
//! `kind` is not `fail` (pass, notApplicable, informational, review, open).

use serde_json::Value;

use super::{Collect, Level, Message, Parsed, Unreadable, number, string};

/// Runs read per log (a log of thousands of runs is not a tool's output).
const MAX_RUNS: usize = 100;

pub fn parse(text: &str) -> Result<Parsed, Unreadable> {
    let log: Value = serde_json::from_str(text.trim())
        .map_err(|e| Unreadable(format!("not a SARIF log (JSON): {e}")))?;
    let Some(runs) = log["runs"].as_array() else {
        return Err(Unreadable("not a SARIF log: no `runs` array".to_string()));
    };
    if let Some(version) = log["version"].as_str() {
        if !version.starts_with("2.") {
            return Err(Unreadable(format!(
                "SARIF version {} is not 2.1.0",
                super::clip(version, 20)
            )));
        }
    }
    let mut collect = Collect::default();
    for run in runs.iter().take(MAX_RUNS) {
        let rules = run["tool"]["driver"]["rules"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        let artifacts = run["artifacts"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        let Some(results) = run["results"].as_array() else {
            continue;
        };
        for result in results {
            if let Some(message) = message(result, rules, artifacts) {
                collect.push(message);
            }
        }
    }
    Ok(collect.done())
}

fn message(result: &Value, rules: &[Value], artifacts: &[Value]) -> Option<Message> {
    if result["kind"].as_str().is_some_and(|k| k != "fail") {
        return None;
    }
    if result["suppressions"]
        .as_array()
        .is_some_and(|s| !s.is_empty())
        || result["baselineState"] == "absent"
    {
        return None;
    }
    let rule_entry = result["ruleIndex"]
        .as_u64()
        .and_then(|i| rules.get(usize::try_from(i).ok()?))
        .or_else(|| {
            let id = result["ruleId"].as_str()?;
            rules.iter().find(|r| r["id"] == id)
        });
    let rule = string(&result["ruleId"])
        .or_else(|| string(&result["rule"]["id"]))
        .or_else(|| rule_entry.and_then(|r| string(&r["id"])));
    let level = string(&result["level"])
        .or_else(|| rule_entry.and_then(|r| string(&r["defaultConfiguration"]["level"])))
        .map(|l| Level::of_word(&l))
        .unwrap_or(Level::Warning);
    let text = string(&result["message"]["text"])
        .or_else(|| string(&result["message"]["markdown"]))
        .or_else(|| rule_entry.and_then(|r| string(&r["shortDescription"]["text"])))
        .or_else(|| rule.clone())?;
    let mut places = Vec::new();
    for location in result["locations"].as_array().into_iter().flatten().take(4) {
        let physical = &location["physicalLocation"];
        let artifact = &physical["artifactLocation"];
        let uri = string(&artifact["uri"]).or_else(|| {
            let i = usize::try_from(artifact["index"].as_u64()?).ok()?;
            string(&artifacts.get(i)?["location"]["uri"])
        });
        let region = &physical["region"];
        places.extend(super::place(
            uri.map(|u| path_of_uri(&u)),
            number(&region["startLine"]),
            number(&region["startColumn"]),
        ));
    }
    let suggestion = result["fixes"]
        .as_array()
        .and_then(|f| f.first())
        .and_then(|f| string(&f["description"]["text"]));
    Some(Message {
        level,
        places,
        rule,
        text,
        suggestion,
    })
}

/// A SARIF URI as a path: `file://` dropped, percent-escapes decoded
/// (invalid ones kept as written).
fn path_of_uri(uri: &str) -> String {
    let path = uri
        .strip_prefix("file://localhost")
        .or_else(|| uri.strip_prefix("file://"))
        .unwrap_or(uri);
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_bandit_sarif() {
        let text = std::fs::read_to_string(format!(
            "{}/fixtures/tools/python/bandit.sarif",
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
                    "{:?} {}:{}:{} {} {}",
                    m.level,
                    p.file,
                    p.line.unwrap(),
                    p.column.unwrap(),
                    m.rule.as_deref().unwrap(),
                    m.text
                )
            })
            .collect();
        assert_eq!(
            found,
            [
                "Note fines/export.py:2:1 B404 Consider possible security implications associated with the subprocess module.",
                "Error fines/export.py:7:12 B602 subprocess call with shell=True identified, security issue.",
            ]
        );
    }

    #[test]
    fn rules_by_index_artifacts_suppressions_and_uris() {
        let log = r#"{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"x","rules":[{"id":"R1","defaultConfiguration":{"level":"error"},"shortDescription":{"text":"Rule one"}}]}},
          "artifacts":[{"location":{"uri":"file:///src/my%20file.py"}}],
          "results":[
            {"ruleIndex":0,"message":{},"locations":[{"physicalLocation":{"artifactLocation":{"index":0},"region":{"startLine":3}}}]},
            {"ruleId":"R2","message":{"text":"quiet"},"suppressions":[{"kind":"inSource"}]},
            {"ruleId":"R3","kind":"pass","message":{"text":"fine"}},
            {"ruleId":"R4","message":{"text":"bad %zz"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"a%2"},"region":{"startLine":-1}}}]}
          ]}]}"#;
        let parsed = parse(log).unwrap();
        assert_eq!(parsed.messages.len(), 2);
        let first = &parsed.messages[0];
        assert_eq!(first.rule.as_deref(), Some("R1"));
        assert_eq!(first.level, Level::Error);
        assert_eq!(first.text, "Rule one");
        assert_eq!(first.places[0].file, "/src/my file.py");
        let second = &parsed.messages[1];
        assert_eq!(second.level, Level::Warning);
        assert_eq!(
            (second.places[0].file.as_str(), second.places[0].line),
            ("a%2", None)
        );
    }

    #[test]
    fn what_is_not_sarif() {
        assert!(parse("").is_err());
        assert!(parse("{}").unwrap_err().0.contains("runs"));
        assert!(parse("{\"version\":\"1.0.0\",\"runs\":[]}").is_err());
        let deep = format!("{{\"runs\":{}{}}}", "[".repeat(10_000), "]".repeat(10_000));
        assert!(parse(&deep).is_err());
    }
}
