//! The texts `speed init` writes: the configuration for the provider and
//! tools found, the product vision, a spec template whose headings show how
//! sections, requirements, criteria and references are written, a task
//! file template, and the `.gitignore` lines of speed's runtime state.
//! Text only: `init` decides where and whether to write them.

use std::fmt::Write as _;

use super::detect::{Languages, Provider};

/// Where speed reads the product vision by default
/// (`guardian.vision_file`).
pub const VISION: &str = "specs/product/overview.md";

/// The folder of product specs.
pub const SPECS_DIR: &str = "specs/product";

/// The task file template: beside the task files of a project without
/// features, under a name speed does not read as a task (`1.json` is).
pub const TASK_TEMPLATE: &str = ".speed/tasks/1.json.example";

/// speed's runtime state, never committed: reports and the log (locks
/// included), caches, the fix queue, spec review sessions.
pub const RUNTIME_STATE: &[&str] = &[
    "/.speed/reviews/",
    "/.speed/cache/",
    "/.speed/fixes/",
    "/.speed/spec-reviews/",
];

/// The comment above the `.gitignore` lines init adds.
pub const GITIGNORE_HEADER: &str =
    "# speed's runtime state (reports, caches, fix queue, spec review sessions): never committed";

/// The models written for a provider found by its key's variable. Any
/// model the key can use works; these are the configuration's starting
/// point, named in a comment as such.
pub const ANTHROPIC_MODEL: &str = "claude-sonnet-4-5";
pub const OPENAI_MODEL: &str = "gpt-4.1";

/// The tools installed for the checks suggested.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tools {
    pub cargo: bool,
    pub clippy: bool,
    pub ruff: bool,
    pub pytest: bool,
}

/// `.speed/config.toml` for what was found. Every line is valid for
/// `speed config` as it stands; what was not found is commented out.
pub fn config(provider: &Provider, languages: &Languages, tools: &Tools) -> String {
    let mut out = String::from(
        "# speed's configuration. speed reads it at the main branch's commit (so a
# branch under review cannot change its own reviewer): commit it on main.
# Every key is optional; `speed config` shows the settings a review uses and
# where each came from. All keys: docs/configuration.md in speed's repository.

",
    );
    out.push_str(&llm_block(provider));
    out.push_str(
        "
[review]
# token_budget = 60000        # the most tokens a review's prompt may use
# max_revisions = 2           # requests for changes before a task fails

[guardian]
# The product vision a second model call checks an approval against.
vision_file = \"specs/product/overview.md\"
",
    );
    out.push_str(&checks_block(languages, tools));
    out
}

fn llm_block(provider: &Provider) -> String {
    let mut out = String::from("[llm]\n");
    match provider {
        Provider::Anthropic { key_env } => {
            let _ = write!(
                out,
                "# Found: {key_env} is set. The key stays in the environment; only the
# variable's name is written here.
provider = \"anthropic\"
model = \"{ANTHROPIC_MODEL}\"        # any model the key can use
api_key_env = \"{key_env}\"
"
            );
        }
        Provider::OpenAi { key_env } => {
            let _ = write!(
                out,
                "# Found: {key_env} is set. The key stays in the environment; only the
# variable's name is written here.
provider = \"openai\"
base_url = \"https://api.openai.com/v1\"
model = \"{OPENAI_MODEL}\"                  # any model the key can use
api_key_env = \"{key_env}\"
"
            );
        }
        Provider::Local {
            server,
            model,
            others,
        } => {
            let _ = writeln!(
                out,
                "# Found: {} answering at {}.",
                server.name, server.base_url
            );
            if !others.is_empty() {
                let _ = writeln!(
                    out,
                    "# It also serves: {}.",
                    others
                        .iter()
                        .take(12)
                        .cloned()
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
            let _ = write!(
                out,
                "provider = \"openai\"                     # any OpenAI-compatible server
base_url = {}
model = {}
timeout_secs = 600                        # a local model may take minutes on a large diff
",
                toml_string(&server.base_url),
                toml_string(model)
            );
        }
        Provider::Claude { .. } => {
            out.push_str(
                "# Found: `claude` on PATH. speed writes the prompt on its stdin and reads
# the answer from its stdout.
provider = \"command\"
command = [\"claude\", \"-p\"]
timeout_secs = 600
",
            );
        }
        Provider::None => {
            out.push_str(
                "# No model was found on this machine: reviews are offline (speed's own
# checks alone; an offline review never approves). To ask a model, replace
# `provider = \"none\"` with one of the blocks below.
provider = \"none\"

# provider = \"anthropic\"                # with ANTHROPIC_API_KEY set
# model = \"claude-sonnet-4-5\"

# provider = \"openai\"                   # OpenAI, or a server on this machine:
# base_url = \"http://localhost:11434/v1\" # Ollama; llama.cpp, vLLM and LM Studio work alike
# model = \"qwen2.5-coder:32b\"
# api_key_env = \"OPENAI_API_KEY\"        # for OpenAI: the variable's name, never the key

# provider = \"command\"                  # a program: the prompt on stdin, the answer on stdout
# command = [\"claude\", \"-p\"]
",
            );
        }
    }
    out
}

/// The suggested command checks: Rust's clippy and tests through the
/// `cargo` parser, Python's ruff (never fixing) and pytest through
/// `junit`; each commented out unless its tool is installed.
fn checks_block(languages: &Languages, tools: &Tools) -> String {
    let mut out = String::new();
    if !languages.rust && !languages.python {
        out.push_str(
            "
# Command checks run your tools (linters, type checkers, tests) in a
# temporary checkout of the branch; see docs/checks.md. For example:
# [[checks.command]]
# name = \"tests\"
# run = [\"make\", \"test\"]
# category = \"test\"
",
        );
        return out;
    }
    out.push_str(
        "
# Command checks: your tools, run in a temporary checkout of the branch
# under review (never in your working tree), each finding at its file and
# line. A check whose tool is not installed here is commented out.
",
    );
    if languages.rust {
        entry(
            &mut out,
            tools.cargo && tools.clippy,
            "clippy (cargo clippy)",
            &[
                "name = \"clippy\"",
                "run = [\"cargo\", \"clippy\", \"--all-targets\", \"--message-format=json\", \"--\", \"-D\", \"warnings\"]",
                "parser = \"cargo\"",
                "category = \"lint\"",
                "timeout_secs = 900",
            ],
        );
        entry(
            &mut out,
            tools.cargo,
            "cargo",
            &[
                "name = \"tests\"",
                "run = [\"cargo\", \"test\", \"--message-format=json\"]",
                "parser = \"cargo\"",
                "category = \"test\"",
                "timeout_secs = 1800",
            ],
        );
    }
    if languages.python {
        entry(
            &mut out,
            tools.ruff,
            "ruff",
            &[
                "name = \"ruff\"",
                "run = [\"ruff\", \"check\", \"--no-fix\", \"--output-format=json\", \".\"]  # --no-fix: a check reports; it never edits what it checks",
                "parser = \"ruff\"",
                "category = \"lint\"",
            ],
        );
        // The checkout's code first on sys.path: an editable install of
        // the working tree (pip install -e .) would be imported instead.
        let run = match languages.python_import_root {
            Some(dir) => format!(
                "run = [\"pytest\", \"-q\", \"-o\", \"pythonpath={dir}\", \"--junitxml=speed-pytest.xml\"]  # pythonpath: the checkout's code, not an editable install's (pip install -e)"
            ),
            None => "run = [\"pytest\", \"-q\", \"--junitxml=speed-pytest.xml\"]".to_string(),
        };
        entry(
            &mut out,
            tools.pytest,
            "pytest",
            &[
                "name = \"pytest\"",
                &run,
                "parser = \"junit\"",
                "report = \"speed-pytest.xml\"",
                "category = \"test\"",
                "timeout_secs = 1800",
            ],
        );
    }
    out
}

fn entry(out: &mut String, installed: bool, tool: &str, lines: &[&str]) {
    out.push('\n');
    if installed {
        out.push_str("[[checks.command]]\n");
        for line in lines {
            let _ = writeln!(out, "{line}");
        }
    } else {
        let _ = writeln!(out, "# Not installed here: {tool}.");
        out.push_str("# [[checks.command]]\n");
        for line in lines {
            let _ = writeln!(out, "# {line}");
        }
    }
}

/// A TOML basic string.
fn toml_string(text: &str) -> String {
    toml::Value::String(text.to_string()).to_string()
}

/// `specs/product/overview.md`: the product vision the guardian checks an
/// approval against.
pub fn vision(product: &str) -> String {
    format!(
        "# {product}: product vision

<!-- speed init wrote this file. It is the product vision: what the product
is for and what it must never become. The guardian (a second model call
after an approval) checks each approved change against it, and reviews
show it beside the spec. Replace this text; keep it short. Sentences with
\"must\", \"never\", \"only\" or \"every\" carry the most weight. -->

{product} is for …

It must never …
"
    )
}

/// The spec template: a product spec whose headings and comments show how
/// speed reads one.
pub fn spec(product: &str, path: &str) -> String {
    format!(
        "# {product}

<!-- speed init wrote this template. A spec is the source of truth a change
is judged against: speed splits it into sections by heading, sends the
sections a change needs, and the model must quote them word for word; every
quote is checked. Text inside HTML comments like this one is not spec text.
Replace the example below with your product's sections. -->

One paragraph: what this part of the product does, and for whom.

## Search

<!-- A section per feature or behaviour. Its heading path
(`{product} > Search`) is how tasks and reviews name it:
`speed review --branch B --spec {path}#Search`. -->

Members find books by title or author.

### Requirements

<!-- One requirement per line or list item, each something a reviewer can
check in the code: an obligation (must, never), a limit, a condition, an
observable result. -->

- A query shorter than 2 characters is refused with a message saying so.
- Results come 20 to a page, the best match first.
- Search never reads loans or members.

### Acceptance criteria

<!-- Criteria a task must meet, each with its id and how it is verified.
A task file lists its own in `acceptance_criteria`; `--criteria FILE` gives
them to a branch review, one per line in this form. -->

- [AC-1] Searching \"dune\" returns \"Dune\" first [verify: test]
- [AC-2] A one-letter query returns the error message, not an empty page [verify: test]

### References

<!-- Other sections and files this one relies on. A task names the sections
it implements in `spec_references`:
{{\"spec\": \"{path}\", \"section\": \"Search\", \"requirement\": \"Paging\"}} -->

- The product vision: [overview](overview.md).
"
    )
}

/// The task file template, naming `spec` in its references.
pub fn task(spec: &str) -> String {
    let task = serde_json::json!({
        "id": "1",
        "title": "What this task achieves, in one line",
        "description": "What the change does and for whom, as the spec describes it.",
        "status": "pending",
        "branch": "speed/task-1",
        "acceptance_criteria": [
            {"criterion": "Searching \"dune\" returns \"Dune\" first", "verify_by": "test"},
            {"criterion": "A one-letter query returns the error message", "verify_by": "test"}
        ],
        "files_to_modify": ["src/search.rs"],
        "files_to_create": [],
        "spec_references": [
            {"spec": spec, "section": "Search", "requirement": "Results come 20 to a page"}
        ]
    });
    let mut text = serde_json::to_string_pretty(&task).unwrap_or_default();
    text.push('\n');
    text
}

/// A spec's file name for a product: its name in lower case, words joined
/// by `-`; `product` when nothing is left or it would be the vision's.
pub fn spec_name(product: &str) -> String {
    let mut name = String::new();
    for c in product.chars() {
        if c.is_ascii_alphanumeric() {
            name.push(c.to_ascii_lowercase());
        } else if !name.ends_with('-') && !name.is_empty() {
            name.push('-');
        }
    }
    let name = name.trim_matches('-').to_string();
    if name.is_empty() || name == "overview" {
        "product".to_string()
    } else {
        name
    }
}

#[cfg(test)]
mod tests {
    use super::super::detect::Server;
    use super::*;

    fn parses(text: &str) {
        if let Err(err) = crate::settings::check_config(text, ".speed/config.toml") {
            panic!("{err}\n{text}");
        }
    }

    #[test]
    fn every_configuration_is_valid_as_written() {
        let providers = [
            Provider::Anthropic {
                key_env: "ANTHROPIC_API_KEY".into(),
            },
            Provider::OpenAi {
                key_env: "OPENAI_API_KEY".into(),
            },
            Provider::Local {
                server: Server {
                    name: "Ollama".into(),
                    base_url: "http://localhost:11434/v1".into(),
                },
                model: "qwen\"2.5".into(),
                others: vec!["llama3".into()],
            },
            Provider::Claude {
                program: "/usr/bin/claude".into(),
            },
            Provider::None,
        ];
        let all = Tools {
            cargo: true,
            clippy: true,
            ruff: true,
            pytest: true,
        };
        for provider in &providers {
            for languages in [
                Languages::default(),
                Languages {
                    rust: true,
                    python: true,
                    python_import_root: Some("src"),
                },
            ] {
                for tools in [Tools::default(), all] {
                    parses(&config(provider, &languages, &tools));
                }
            }
        }
    }

    #[test]
    fn a_tool_not_installed_is_commented_out() {
        let python = Languages {
            rust: false,
            python: true,
            python_import_root: None,
        };
        let text = config(&Provider::None, &python, &Tools::default());
        assert!(text.contains("# Not installed here: ruff."), "{text}");
        assert!(!text.contains("\n[[checks.command]]"), "{text}");
        let text = config(
            &Provider::None,
            &python,
            &Tools {
                ruff: true,
                ..Tools::default()
            },
        );
        assert!(
            text.contains("\n[[checks.command]]\nname = \"ruff\""),
            "{text}"
        );
        assert!(text.contains("\"--no-fix\""), "{text}");
    }

    #[test]
    fn spec_names() {
        assert_eq!(spec_name("Flask"), "flask");
        assert_eq!(spec_name("my_repo.rs"), "my-repo-rs");
        assert_eq!(spec_name("überall"), "berall");
        assert_eq!(spec_name("---"), "product");
        assert_eq!(spec_name("Overview"), "product");
    }
}
