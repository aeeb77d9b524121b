use super::*;

fn problems(text: &str) -> Vec<Problem> {
    match parse(text, "cfg.toml") {
        Err(Error::Invalid { problems, .. }) => problems.0,
        other => panic!("expected problems, got {other:?}"),
    }
}

fn one(text: &str) -> String {
    let p = problems(text);
    assert_eq!(p.len(), 1, "{p:?}");
    p[0].to_string()
}

#[test]
fn the_contract_example_parses() {
    let text = r#"
[git]
main_branch = "main"

[llm]
provider = "openai"
base_url = "http://localhost:11434/v1"
model = "qwen2.5-coder:32b"
api_key_env = "OPENAI_API_KEY"
command = ["claude", "-p"]
timeout_secs = 120

[review]
token_budget = 60000
max_revisions = 2

[guardian]
enabled = true
vision_file = "specs/product/overview.md"

[checks]
scope = "major"
large_diff = { lines = 400, files = 20, severity = "minor" }

[[checks.command]]
name = "clippy"
run = ["cargo", "clippy", "--all-targets", "--", "-D", "warnings"]
severity = "major"
timeout_secs = 600

[defect]
max_lines = 100
max_files = 3
exempt = ["tests/**", "**/test_*.py", "*.lock", "package.json", "requirements.txt"]

[hook]
review_on_miss = false
unknown = "allow"
"#;
    let f = parse(text, "cfg.toml").unwrap();
    assert_eq!(f.git.main_branch.as_deref(), Some("main"));
    assert_eq!(
        f.llm.config.provider,
        Choice::Model(crate::llm::ProviderKind::OpenAi)
    );
    assert!(f.llm.has("provider") && f.llm.has("timeout_secs") && !f.llm.has("seed"));
    assert_eq!(f.llm.config.timeout, std::time::Duration::from_secs(120));
    assert_eq!(f.review.token_budget, Some(60000));
    assert_eq!(f.guardian.enabled, Some(true));
    assert_eq!(
        f.checks.levels,
        [
            (Check::Scope, Some(Severity::Major)),
            (Check::LargeDiff, Some(Severity::Minor))
        ]
    );
    assert_eq!(f.checks.large_diff_lines, Some(400));
    let commands = f.checks.commands.unwrap();
    assert_eq!(commands[0].name, "clippy");
    assert_eq!(commands[0].run[0], "cargo");
    assert_eq!(commands[0].timeout_secs, Some(600.0));
    assert_eq!(f.defect.exempt.unwrap().len(), 5);
    assert_eq!(f.hook.unknown, Some(AllowOrBlock::Allow));
}

#[test]
fn a_typo_names_file_line_key_and_the_closest_key() {
    let err = parse(
        "[llm]\nmodel = \"m\"\ntimout_secs = 5\n",
        ".speed/config.toml",
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        err,
        ".speed/config.toml: line 3: llm.timout_secs: unknown key; did you mean `timeout_secs`?"
    );
}

#[test]
fn a_key_in_the_wrong_table_points_to_its_table() {
    assert_eq!(
        one("[llm]\ntoken_budget = 5\n"),
        "line 2: llm.token_budget: unknown key; did you mean `review.token_budget` (in [review])?"
    );
    assert_eq!(
        one("provider = \"openai\"\n"),
        "line 1: provider: unknown key or table; did you mean `llm.provider` (in [llm])?"
    );
    assert_eq!(
        one("[gaurdian]\nenabled = false\n"),
        "line 1: gaurdian: unknown key or table; did you mean [guardian]?"
    );
}

#[test]
fn an_unknown_key_far_from_any_lists_the_known_ones() {
    let msg = one("[hook]\nzzz = 1\n");
    assert!(
        msg.contains("known keys: review_on_miss, unknown, on_error"),
        "{msg}"
    );
}

#[test]
fn wrong_types_say_what_was_expected() {
    assert_eq!(
        one("[llm]\ntimeout_secs = \"2m\"\n"),
        "line 2: llm.timeout_secs: expected a number of seconds above 0 and at most 86400, found the string \"2m\""
    );
    assert_eq!(
        one("[guardian]\nenabled = \"no\"\n"),
        "line 2: guardian.enabled: expected true or false, found the string \"no\""
    );
    assert_eq!(
        one("[review]\nmax_revisions = 2.5\n"),
        "line 2: review.max_revisions: expected an integer from 0 to 100, found float 2.5"
    );
    assert_eq!(
        one("llm = 3\n"),
        "line 1: llm: expected a table ([llm]), found integer 3"
    );
    assert_eq!(
        one("[llm]\ncommand = \"claude -p\"\n"),
        "line 2: llm.command: expected a non-empty array of strings, found the string \"claude -p\""
    );
}

#[test]
fn numbers_are_range_checked() {
    for (text, key) in [
        ("[llm]\ntimeout_secs = 1e20\n", "llm.timeout_secs"),
        ("[llm]\ntimeout_secs = 0\n", "llm.timeout_secs"),
        ("[llm]\ntimeout_secs = -1\n", "llm.timeout_secs"),
        ("[llm]\ntimeout_secs = nan\n", "llm.timeout_secs"),
        ("[llm]\ntimeout_secs = inf\n", "llm.timeout_secs"),
        (
            "[llm]\nconnect_timeout_secs = 100000\n",
            "llm.connect_timeout_secs",
        ),
        ("[llm]\nmax_retries = 1000\n", "llm.max_retries"),
        ("[llm]\nretry_base_ms = -5\n", "llm.retry_base_ms"),
        ("[llm]\ntemperature = 3\n", "llm.temperature"),
        ("[llm]\nseed = -1\n", "llm.seed"),
        ("[llm]\nmax_output_tokens = 0\n", "llm.max_output_tokens"),
        ("[llm]\nrpm = 0\n", "llm.rpm"),
        ("[llm]\ntpm = 0\n", "llm.tpm"),
        ("[llm]\nmax_answer_bytes = 10\n", "llm.max_answer_bytes"),
        ("[review]\ntoken_budget = 0\n", "review.token_budget"),
        (
            "[review]\ntoken_budget = 99999999999\n",
            "review.token_budget",
        ),
        ("[review]\nconcurrency = 0\n", "review.concurrency"),
        ("[review]\nconcurrency = 1000\n", "review.concurrency"),
        ("[review]\nmax_parts = 0\n", "review.max_parts"),
        ("[review]\nmax_revisions = -1\n", "review.max_revisions"),
        ("[guardian]\ntoken_budget = 0\n", "guardian.token_budget"),
        ("[defect]\nmax_lines = 0\n", "defect.max_lines"),
        ("[defect]\nmax_files = -3\n", "defect.max_files"),
        (
            "[checks]\nlarge_diff = { lines = 0 }\n",
            "checks.large_diff.lines",
        ),
        (
            "[[checks.command]]\nname = \"t\"\nrun = [\"t\"]\ntimeout_secs = 1e9\n",
            "checks.command[0].timeout_secs",
        ),
    ] {
        let p = problems(text);
        assert_eq!(p.len(), 1, "{text}: {p:?}");
        assert_eq!(p[0].key, key, "{text}");
        assert!(p[0].message.starts_with("expected"), "{text}: {}", p[0]);
    }
}

#[test]
fn numbers_in_range_are_read_in_every_notation() {
    let f = parse(
        "[llm]\ntimeout_secs = 0.5\nseed = 0x10\nrpm = 1_000\n[review]\ntoken_budget = 60_000\n",
        "c",
    )
    .unwrap();
    assert_eq!(f.llm.config.timeout, std::time::Duration::from_millis(500));
    assert_eq!(f.llm.config.seed, 16);
    assert_eq!(f.llm.config.rpm, Some(1000));
    assert_eq!(f.review.token_budget, Some(60000));
}

#[test]
fn every_problem_is_reported_at_once() {
    let p = problems("[llm]\nprovidr = \"x\"\ntimeout_secs = 0\n[review]\nconcurrency = 0\n");
    let keys: Vec<&str> = p.iter().map(|p| p.key.as_str()).collect();
    assert_eq!(
        keys,
        ["llm.providr", "llm.timeout_secs", "review.concurrency"]
    );
    let err = parse("[llm]\nprovidr = 1\n[hook]\nunknown = 2\n", "f.toml")
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("f.toml: 2 problems\n  line 2: llm.providr"),
        "{err}"
    );
}

#[test]
fn words_are_checked_with_a_suggestion() {
    assert_eq!(
        one("[llm]\nprovider = \"opnai\"\n"),
        "line 2: llm.provider: expected one of \"openai\", \"anthropic\", \"command\" or \"none\", found the string \"opnai\" (did you mean \"openai\"?)"
    );
    assert!(one("[checks]\nscope = \"majr\"\n").contains("did you mean \"major\"?"));
    assert!(one("[hook]\nunknown = \"deny\"\n").contains("\"allow\" or \"block\""));
    assert!(one("[review]\ntokenizer = \"gpt2\"\n").contains("o200k_base"));
    let f = parse(
        "[llm]\nprovider = \"none\"\n[checks]\nsecret = \"off\"\n",
        "c",
    )
    .unwrap();
    assert_eq!(f.llm.config.provider, Choice::Offline);
    assert_eq!(f.checks.levels, [(Check::Secret, None)]);
}

#[test]
fn a_key_pasted_as_api_key_env_is_not_echoed() {
    let msg = one("[llm]\napi_key_env = \"sk-live-abc123def456\"\n");
    assert!(!msg.contains("sk-live"), "{msg}");
    assert!(msg.contains("not the key itself"), "{msg}");
    assert_eq!(
        parse("[llm]\napi_key_env = \"MY_KEY_2\"\n", "c")
            .unwrap()
            .llm
            .config
            .api_key_env
            .as_deref(),
        Some("MY_KEY_2")
    );
}

#[test]
fn strings_and_paths_are_checked() {
    assert!(one("[llm]\nbase_url = \"localhost:11434\"\n").contains("http://"));
    assert!(one("[llm]\nmodel = \"\"\n").contains("non-empty string"));
    assert!(one("[guardian]\nvision_file = \"../outside.md\"\n").contains("relative"));
    assert!(one("[guardian]\nvision_file = \"/etc/passwd\"\n").contains("relative"));
    assert!(one("[git]\nmain_branch = \"my main\"\n").contains("branch name"));
    assert!(one("[review]\nactor = \"../x\"\n").contains("letters, digits"));
    assert!(one("[llm]\ncommand = []\n").contains("non-empty array"));
    assert!(one("[llm]\ncommand = [\"claude\", 1]\n").contains("element"));
    assert!(one("[defect]\nexempt = [\"tests/[a\"]\n").contains("not a valid glob"));
    assert_eq!(
        parse("[defect]\nexempt = []\n", "c").unwrap().defect.exempt,
        Some(vec![])
    );
}

#[test]
fn large_diff_takes_a_severity_or_a_table() {
    let f = parse("[checks]\nlarge_diff = \"off\"\n", "c").unwrap();
    assert_eq!(f.checks.levels, [(Check::LargeDiff, None)]);
    let f = parse("[checks.large_diff]\nfiles = 50\n", "c").unwrap();
    assert_eq!(f.checks.large_diff_files, Some(50));
    assert!(f.checks.levels.is_empty());
    assert!(one("[checks]\nlarge_diff = { line = 3 }\n").contains("did you mean `lines`?"));
    assert!(one("[checks]\nlarge_diff = 3\n").contains("expected a table"));
}

#[test]
fn command_checks_need_a_name_and_a_run_list() {
    assert!(one("[[checks.command]]\nrun = [\"x\"]\n").contains("missing name"));
    assert!(
        one("[[checks.command]]\nname = \"a\"\nrun = \"make test\"\n")
            .contains("non-empty array of strings")
    );
    assert!(
            one("[[checks.command]]\nname = \"a\"\nrun = [\"x\"]\n[[checks.command]]\nname = \"a\"\nrun = [\"y\"]\n")
                .contains("a second check is named \"a\"")
        );
    assert!(
        one("[[checks.command]]\nname = \"a\"\nrun = [\"x\"]\nseverity = \"off\"\n")
            .contains("remove the entry")
    );
    assert!(one("[checks]\ncommand = [\"cargo\"]\n").contains("array of tables"));
    assert!(one("[checks.command]\nname = \"a\"\n").contains("array of tables"));
    assert!(
        one("[[checks.command]]\nname = \"a\"\nrun = [\"x\"]\ntimeout = 5\n")
            .contains("did you mean `timeout_secs`?")
    );
}

#[test]
fn invalid_toml_names_the_file_and_line() {
    let err = parse("[llm]\nprovider = \n", ".speed/config.toml")
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with(".speed/config.toml is not valid TOML"),
        "{err}"
    );
    assert!(err.contains("line 2"), "{err}");
}

#[test]
fn closest_is_for_typos_only() {
    let known = ["provider", "model", "seed", "rpm"];
    assert_eq!(closest("provder", known.iter().copied()), Some("provider"));
    assert_eq!(closest("Model", known.iter().copied()), Some("model"));
    assert_eq!(closest("sed", known.iter().copied()), Some("seed"));
    assert_eq!(closest("temperature", known.iter().copied()), None);
    assert_eq!(closest("x", known.iter().copied()), None);
    assert_eq!(
        closest(
            "timeout",
            ["connect_timeout_secs", "timeout_secs"].into_iter()
        ),
        Some("timeout_secs")
    );
}
