//! `speed config`: the effective settings, one per line with where it came
//! from (human), or one JSON object. API keys never appear: settings hold
//! only the name of the variable (`llm.api_key_env`).

use crate::git::short;
use std::fmt::Write;

use serde_json::{Value, json};

use crate::prompt::TEMPLATE_NAMES;
use crate::settings::{CONFIG_PATH, ConfigSettings, Entry, Origin};

/// Settings grouped by table, as `key = value  # source` lines that read
/// like the config file.
pub fn human(config: &ConfigSettings) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# configuration: {}", file_line(config));
    match &config.main {
        Ok((branch, source)) => {
            let _ = writeln!(
                out,
                "# main branch: {} at {} ({})",
                branch.name,
                short(&branch.commit),
                source.describe()
            );
        }
        Err(why) => {
            let _ = writeln!(out, "# main branch: none ({why})");
        }
    }
    for name in TEMPLATE_NAMES {
        let from = config
            .prompts
            .iter()
            .find(|o| o.name == name)
            .map_or_else(|| "built in".to_string(), |o| o.from.clone());
        let _ = writeln!(out, "# prompt template {name}: {from}");
    }

    let mut table = "";
    let mut width = 0;
    for (i, entry) in config.entries.iter().enumerate() {
        let name = table_of(entry);
        if name != table {
            table = name;
            let _ = writeln!(out, "\n[{table}]");
            // Sources line up within a table, unless a long value would push
            // them all far right.
            width = config.entries[i..]
                .iter()
                .take_while(|e| table_of(e) == table)
                .map(|e| line(e).chars().count())
                .filter(|w| *w <= ALIGN_MAX)
                .max()
                .unwrap_or(0);
        }
        let line = line(entry);
        let pad = width.saturating_sub(line.chars().count());
        let _ = writeln!(
            out,
            "{line}{}  # {}",
            " ".repeat(pad),
            entry.source.describe()
        );
    }
    out
}

/// The same as one JSON object: `config_file`, `main_branch`, `templates`,
/// `settings` (each with `key`, `value`, `source` and `from`), `notices`
/// and `warnings`.
pub fn json(config: &ConfigSettings, notices: &[String], warnings: &[String]) -> String {
    let config_file = config.origin.as_ref().map(|origin| {
        let mut file = json!({
            "source": origin.kind(),
            "from": origin.describe(CONFIG_PATH),
            "found": config.file_found,
        });
        match origin {
            Origin::Main { branch, commit } => {
                file["path"] = json!(CONFIG_PATH);
                file["branch"] = json!(branch);
                file["commit"] = json!(commit);
            }
            Origin::WorkingTree => file["path"] = json!(CONFIG_PATH),
            Origin::Flag(path) => file["path"] = json!(path.display().to_string()),
        }
        file
    });
    let main_branch = match &config.main {
        Ok((branch, source)) => json!({
            "name": branch.name,
            "commit": branch.commit,
            "source": source.kind(),
            "from": source.describe(),
        }),
        Err(why) => json!({"error": why}),
    };
    let templates: Vec<Value> = TEMPLATE_NAMES
        .iter()
        .map(|name| {
            let found = config.prompts.iter().find(|o| o.name == *name);
            json!({
                "name": name,
                "from": found.map_or_else(|| "built in".to_string(), |o| o.from.clone()),
                "built_in": found.is_none(),
            })
        })
        .collect();
    let settings: Vec<Value> = config
        .entries
        .iter()
        .map(|e| {
            json!({
                "key": e.key,
                "value": e.value,
                "source": e.source.kind(),
                "from": e.source.describe(),
            })
        })
        .collect();
    pretty(&json!({
        "config_file": config_file,
        "main_branch": main_branch,
        "templates": templates,
        "settings": settings,
        "notices": notices,
        "warnings": warnings,
    }))
}

/// The object `speed config --json` prints when it cannot resolve settings.
pub fn json_failure(error: &str) -> String {
    pretty(&json!({"settings": [], "error": error}))
}

fn file_line(config: &ConfigSettings) -> String {
    match (&config.origin, config.file_found) {
        (Some(origin), true) => origin.describe(CONFIG_PATH),
        (Some(origin), false) => format!("none ({} does not exist)", origin.describe(CONFIG_PATH)),
        (None, _) => "none (no main branch to read it from)".to_string(),
    }
}

/// Lines longer than this are not used to align the sources.
const ALIGN_MAX: usize = 48;

fn line(entry: &Entry) -> String {
    format!("{} = {}", local_key(entry), inline(&entry.value))
}

fn table_of(entry: &Entry) -> &str {
    entry.key.split('.').next().unwrap_or("")
}

fn local_key(entry: &Entry) -> &str {
    entry
        .key
        .split_once('.')
        .map_or(entry.key.as_str(), |(_, k)| k)
}

/// A JSON value written the way TOML writes it inline; unset is `(not set)`.
fn inline(value: &Value) -> String {
    match value {
        Value::Null => "(not set)".to_string(),
        Value::String(s) => Value::String(s.clone()).to_string(),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(inline).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Object(map) => {
            let fields: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{k} = {}", inline(v)))
                .collect();
            format!("{{ {} }}", fields.join(", "))
        }
        other => other.to_string(),
    }
}

fn pretty(value: &Value) -> String {
    let mut text = serde_json::to_string_pretty(value).unwrap_or_else(|_| "{}".to_string());
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::MainBranch;
    use crate::settings::Source;

    fn config() -> ConfigSettings {
        let origin = Origin::Main {
            branch: "main".to_string(),
            commit: "6f4bc06c71aa".to_string(),
        };
        ConfigSettings {
            json: false,
            strict: false,
            origin: Some(origin.clone()),
            file_found: true,
            main: Ok((
                MainBranch {
                    name: "main".to_string(),
                    commit: "6f4bc06c71aa".to_string(),
                },
                Source::Default,
            )),
            prompts: Vec::new(),
            entries: vec![
                Entry {
                    key: "llm.provider".to_string(),
                    value: json!("anthropic"),
                    source: Source::File(origin),
                },
                Entry {
                    key: "llm.model".to_string(),
                    value: Value::Null,
                    source: Source::Default,
                },
                Entry {
                    key: "review.token_budget".to_string(),
                    value: json!(9000),
                    source: Source::Flag("--budget"),
                },
                Entry {
                    key: "checks.command".to_string(),
                    value: json!([{"name": "t", "run": ["make", "test"]}]),
                    source: Source::Default,
                },
            ],
        }
    }

    #[test]
    fn human_lines_read_like_the_file_with_their_source() {
        let text = human(&config());
        assert!(
            text.starts_with(
                "# configuration: .speed/config.toml at main (6f4bc06c71)\n# main branch: main at 6f4bc06c71 (default)\n# prompt template review.md: built in\n"
            ),
            "{text}"
        );
        assert!(text.contains("\n[llm]\nprovider = \"anthropic\"  # .speed/config.toml at main (6f4bc06c71)\nmodel = (not set)"), "{text}");
        assert!(text.contains("\n[review]\ntoken_budget = 9000"), "{text}");
        assert!(text.contains("# flag --budget"), "{text}");
        assert!(
            text.contains("command = [{ name = \"t\", run = [\"make\", \"test\"] }]"),
            "{text}"
        );
    }

    #[test]
    fn json_names_each_source() {
        let v: Value = serde_json::from_str(&json(&config(), &["n".to_string()], &[])).unwrap();
        assert_eq!(v["config_file"]["source"], "main");
        assert_eq!(v["config_file"]["commit"], "6f4bc06c71aa");
        assert_eq!(v["main_branch"]["source"], "default");
        assert_eq!(v["settings"][0]["key"], "llm.provider");
        assert_eq!(v["settings"][0]["source"], "main");
        assert_eq!(v["settings"][2]["source"], "flag");
        assert_eq!(v["settings"][2]["from"], "flag --budget");
        assert_eq!(v["templates"][1]["built_in"], true);
        assert_eq!(v["notices"][0], "n");
    }
}
