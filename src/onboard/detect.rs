//! What this machine and this repository offer a first review: a model
//! provider (an API key's variable, a local OpenAI-compatible server, the
//! `claude` command), the languages of the repository and the tools
//! installed for them. Looking only: nothing is written, no key's value is
//! kept (only the variable's name), and a local server is asked for its
//! model list with a short limit.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::llm;

/// The environment variable that replaces the local servers asked (for a
/// server on another port, and for tests): a list of `host:port` or URLs,
/// separated by commas or spaces; empty asks none.
pub const LOCAL_SERVERS_ENV: &str = "SPEED_LOCAL_SERVERS";

/// How long a local server has to list its models: a server on this
/// machine answers in milliseconds; a closed port refuses at once.
pub const LOCAL_LIMIT: Duration = Duration::from_millis(800);

/// A local OpenAI-compatible server speed looks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Server {
    /// What usually listens there ("Ollama"), for people.
    pub name: String,
    /// The API root, `http://localhost:11434/v1`.
    pub base_url: String,
}

/// The servers asked: `SPEED_LOCAL_SERVERS` when set, else Ollama's,
/// llama.cpp's, vLLM's and LM Studio's usual ports on localhost.
pub fn local_servers(env: &dyn Fn(&str) -> Option<String>) -> Vec<Server> {
    if let Some(list) = env(LOCAL_SERVERS_ENV) {
        return list
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|s| !s.is_empty())
            .map(|entry| Server {
                name: "a server".to_string(),
                base_url: api_root(entry),
            })
            .collect();
    }
    [
        ("Ollama", 11434),
        ("llama.cpp", 8080),
        ("vLLM", 8000),
        ("LM Studio", 1234),
    ]
    .into_iter()
    .map(|(name, port)| Server {
        name: name.to_string(),
        base_url: format!("http://localhost:{port}/v1"),
    })
    .collect()
}

/// `host:port`, `http://host:port` or `http://host:port/v1` as the API root
/// (`…/v1`).
fn api_root(entry: &str) -> String {
    let with_scheme = if entry.contains("://") {
        entry.to_string()
    } else {
        format!("http://{entry}")
    };
    let trimmed = with_scheme.trim_end_matches('/');
    if trimmed.ends_with("/v1") {
        trimmed.to_string()
    } else {
        format!("{trimmed}/v1")
    }
}

/// The provider found, in the order a first review should prefer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Provider {
    /// `ANTHROPIC_API_KEY` is set.
    Anthropic { key_env: String },
    /// `OPENAI_API_KEY` is set.
    OpenAi { key_env: String },
    /// A server on this machine answered with its models.
    Local {
        server: Server,
        /// The model chosen, and the others it serves.
        model: String,
        others: Vec<String>,
    },
    /// `claude` is on `PATH`.
    Claude { program: PathBuf },
    /// Nothing was found.
    None,
}

/// The provider found and what was looked at on the way, for people
/// ("ANTHROPIC_API_KEY is not set", "nothing answered at …").
#[derive(Debug, Clone)]
pub struct Found {
    pub provider: Provider,
    pub looked: Vec<String>,
}

/// Looks for a provider: `ANTHROPIC_API_KEY`, `OPENAI_API_KEY`, a local
/// server answering its model list, `claude` on `PATH`, in that order; the
/// first found wins.
pub fn provider(env: &dyn Fn(&str) -> Option<String>) -> Found {
    let mut looked = Vec::new();
    for (var, anthropic) in [("ANTHROPIC_API_KEY", true), ("OPENAI_API_KEY", false)] {
        if env(var).is_some_and(|v| !v.trim().is_empty()) {
            let key_env = var.to_string();
            let provider = if anthropic {
                Provider::Anthropic { key_env }
            } else {
                Provider::OpenAi { key_env }
            };
            return Found { provider, looked };
        }
        looked.push(format!("{var} is not set"));
    }
    let servers = local_servers(env);
    match first_local(&servers) {
        Ok((server, model, others)) => {
            return Found {
                provider: Provider::Local {
                    server,
                    model,
                    others,
                },
                looked,
            };
        }
        Err(why) => looked.extend(why),
    }
    match which("claude", env) {
        Some(program) => Found {
            provider: Provider::Claude { program },
            looked,
        },
        None => {
            looked.push("`claude` is not on PATH".to_string());
            Found {
                provider: Provider::None,
                looked,
            }
        }
    }
}

/// The first server, in `servers`' order, that lists a model: that
/// server, the model chosen and the others. Every server is asked at
/// once, so the slowest bounds the wait, not their sum.
/// No key is sent: a key variable in the environment is for its provider,
/// not for whatever listens on this machine.
fn first_local(servers: &[Server]) -> Result<(Server, String, Vec<String>), Vec<String>> {
    let answers: Vec<Result<Vec<String>, String>> = std::thread::scope(|scope| {
        let handles: Vec<_> = servers
            .iter()
            .map(|server| {
                scope.spawn(move || {
                    let config = llm::Config {
                        base_url: Some(server.base_url.clone()),
                        ..llm::Config::default()
                    };
                    llm::served_models(&config, &|_| None, LOCAL_LIMIT).map_err(|e| e.to_string())
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err("the probe failed".to_string()))
            })
            .collect()
    });
    let mut why = Vec::new();
    for (server, answer) in servers.iter().zip(answers) {
        match answer {
            Ok(models) => match choose(&models) {
                Some(model) => {
                    let others = models.iter().filter(|m| **m != model).cloned().collect();
                    return Ok((server.clone(), model, others));
                }
                None => why.push(format!(
                    "{} ({}) serves no chat model",
                    server.base_url, server.name
                )),
            },
            Err(_) => why.push(format!("nothing answered at {}", server.base_url)),
        }
    }
    if servers.is_empty() {
        why.push(format!(
            "no local server asked ({LOCAL_SERVERS_ENV} is empty)"
        ));
    }
    Err(why)
}

/// The model to review with: the first that is not an embedding model
/// (Ollama lists `nomic-embed-text` beside chat models).
fn choose(models: &[String]) -> Option<String> {
    models
        .iter()
        .find(|m| {
            let lower = m.to_lowercase();
            !lower.contains("embed") && !lower.contains("rerank")
        })
        .cloned()
}

/// The program `name` as a shell would find it on `PATH` (an executable
/// file), or None.
pub fn which(name: &str, env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    if name.contains('/') {
        let path = PathBuf::from(name);
        return executable(&path).then_some(path);
    }
    let path = env("PATH")?;
    std::env::split_paths(&path)
        .filter(|dir| !dir.as_os_str().is_empty())
        .map(|dir| dir.join(name))
        .find(|candidate| executable(candidate))
}

fn executable(path: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(path) else {
        return false;
    };
    if !meta.is_file() {
        return false;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        true
    }
}

/// The languages of a repository speed suggests checks for, and the tools
/// found for them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Languages {
    /// `Cargo.toml` at the root, or Rust files near it.
    pub rust: bool,
    /// `pyproject.toml`, `setup.py`, `setup.cfg` or `requirements.txt` at
    /// the root, or Python files near it.
    pub python: bool,
    /// A Python project's folder of code in a checkout (`src`, `.`), which
    /// the suggested pytest puts first on `sys.path`; None when its pytest
    /// configuration sets `pythonpath` (`python::import_root`, which `init`
    /// asks).
    pub python_import_root: Option<&'static str>,
}

/// Folders never looked into for source files.
const SKIPPED_DIRS: &[&str] = &[
    "target",
    "node_modules",
    "venv",
    "__pycache__",
    "build",
    "dist",
];

/// The most entries looked at: enough for the top of any repository, and
/// a bound on a huge one.
const MAX_ENTRIES: usize = 4000;

/// What `root` is written in: its manifests at the root, else the files of
/// its first two levels of folders (hidden ones and build output skipped).
/// (`python_import_root` is left to the caller: `python::import_root`.)
pub fn languages(root: &Path) -> Languages {
    let has = |name: &str| root.join(name).is_file();
    let mut found = Languages {
        rust: has("Cargo.toml"),
        python: [
            "pyproject.toml",
            "setup.py",
            "setup.cfg",
            "requirements.txt",
        ]
        .iter()
        .any(|n| has(n)),
        python_import_root: None,
    };
    if found.rust && found.python {
        return found;
    }
    let mut seen = 0;
    let mut dirs = vec![(root.to_path_buf(), 0)];
    while let Some((dir, depth)) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > MAX_ENTRIES {
                return found;
            }
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.starts_with('.') {
                continue;
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                if depth < 2 && !SKIPPED_DIRS.contains(&name.as_ref()) {
                    dirs.push((entry.path(), depth + 1));
                }
            } else if name.ends_with(".rs") {
                found.rust = true;
            } else if name.ends_with(".py") {
                found.python = true;
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + use<> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |key| map.get(key).cloned()
    }

    #[test]
    fn a_key_is_found_by_its_name_and_anthropic_comes_first() {
        let env = env_of(&[
            ("ANTHROPIC_API_KEY", "sk-ant-secret"),
            ("OPENAI_API_KEY", "sk-x"),
        ]);
        let found = provider(&env);
        assert_eq!(
            found.provider,
            Provider::Anthropic {
                key_env: "ANTHROPIC_API_KEY".to_string()
            }
        );
        let env = env_of(&[("ANTHROPIC_API_KEY", "  "), ("OPENAI_API_KEY", "sk-x")]);
        let found = provider(&env);
        assert_eq!(
            found.provider,
            Provider::OpenAi {
                key_env: "OPENAI_API_KEY".to_string()
            }
        );
        assert_eq!(found.looked, vec!["ANTHROPIC_API_KEY is not set"]);
    }

    #[test]
    fn local_servers_come_from_the_variable_or_the_usual_ports() {
        let usual = local_servers(&|_| None);
        assert_eq!(usual[0].base_url, "http://localhost:11434/v1");
        assert_eq!(usual.len(), 4);
        let env = env_of(&[(
            LOCAL_SERVERS_ENV,
            "127.0.0.1:9,http://127.0.0.1:10/v1/, http://h:11",
        )]);
        let urls: Vec<String> = local_servers(&env)
            .into_iter()
            .map(|s| s.base_url)
            .collect();
        assert_eq!(
            urls,
            vec![
                "http://127.0.0.1:9/v1",
                "http://127.0.0.1:10/v1",
                "http://h:11/v1"
            ]
        );
        assert!(local_servers(&env_of(&[(LOCAL_SERVERS_ENV, "")])).is_empty());
    }

    #[test]
    fn an_embedding_model_is_not_chosen() {
        let models = vec![
            "nomic-embed-text:latest".to_string(),
            "qwen2.5-coder:7b".to_string(),
        ];
        assert_eq!(choose(&models).as_deref(), Some("qwen2.5-coder:7b"));
        assert_eq!(choose(&["bge-reranker".to_string()]), None);
    }

    #[test]
    fn languages_from_manifests_and_files() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(languages(dir.path()), Languages::default());
        std::fs::create_dir_all(dir.path().join("src/pkg")).unwrap();
        std::fs::write(dir.path().join("src/pkg/mod.py"), "").unwrap();
        assert!(languages(dir.path()).python);
        std::fs::write(dir.path().join("Cargo.toml"), "").unwrap();
        assert!(languages(dir.path()).rust);
    }

    #[test]
    fn which_finds_executables_only() {
        let dir = tempfile::tempdir().unwrap();
        let tool = dir.path().join("tool");
        std::fs::write(&tool, "#!/bin/sh\n").unwrap();
        let path = dir.path().display().to_string();
        let env = env_of(&[("PATH", &path)]);
        #[cfg(unix)]
        {
            assert_eq!(which("tool", &env), None);
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        assert_eq!(which("tool", &env), Some(tool));
        assert_eq!(which("absent", &env), None);
    }
}
