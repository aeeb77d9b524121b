//! tsc's diagnostics: `file(line,col): error TS2322: message` when its
//! output is a pipe, `file:line:col - error TS2322: message` with
//! `--pretty` (colours removed first), `error TS5023: message` for one
//! about the project. The indented lines after a diagnostic elaborate it
//! (why one type does not fit another) and join it; in pretty output the
//! quoted source lines under it do not.

use std::sync::OnceLock;

use super::{Collect, Level, Message, Parsed, Place, Unreadable, strip_ansi};

/// Elaboration lines appended to one diagnostic.
const MAX_MORE: usize = 8;

fn patterns() -> &'static [regex::Regex; 3] {
    static RE: OnceLock<[regex::Regex; 3]> = OnceLock::new();
    RE.get_or_init(|| {
        let tail = r"(?P<level>error|warning|message) (?P<code>TS[0-9]{1,6}): (?P<message>.*)$";
        [
            regex::Regex::new(&format!(
                r"^(?P<file>[^\s(][^(]*?)\((?P<line>[0-9]{{1,9}}),(?P<col>[0-9]{{1,6}})\): {tail}"
            )),
            regex::Regex::new(&format!(
                r"^(?P<file>[^\s:][^:]*?):(?P<line>[0-9]{{1,9}}):(?P<col>[0-9]{{1,6}}) - {tail}"
            )),
            regex::Regex::new(&format!(r"^{tail}")),
        ]
        .map(|r| r.expect("a valid pattern"))
    })
}

pub fn parse(text: &str) -> Result<Parsed, Unreadable> {
    let text = strip_ansi(text);
    let mut collect = Collect::default();
    let mut more = None::<usize>;
    for line in text.lines() {
        let line = line.trim_end();
        let caps = patterns().iter().find_map(|re| re.captures(line));
        let Some(caps) = caps else {
            // "  Type 'x' is not assignable to type 'y'." under a plain
            // diagnostic; pretty output's quoted code starts with a number
            // or a `~` marker and is left out.
            let elaborates = line.starts_with("  ")
                && !line
                    .trim_start()
                    .starts_with(|c: char| c.is_ascii_digit() || c == '~');
            match (&mut more, elaborates) {
                (Some(n), true) if *n < MAX_MORE => {
                    *n += 1;
                    if let Some(last) = collect.last() {
                        last.text.push('\n');
                        last.text.push_str(line.trim());
                    }
                }
                (_, true) => {}
                _ => more = None,
            }
            continue;
        };
        more = Some(0);
        let places = caps
            .name("file")
            .map(|file| Place {
                file: file.as_str().trim().to_string(),
                line: caps.name("line").and_then(|l| l.as_str().parse().ok()),
                column: caps.name("col").and_then(|c| c.as_str().parse().ok()),
            })
            .into_iter()
            .collect();
        collect.push(Message {
            level: Level::of_word(&caps["level"]),
            places,
            rule: Some(caps["code"].to_string()),
            text: caps["message"].trim().to_string(),
            suggestion: None,
        });
    }
    Ok(collect.done())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(name: &str) -> Vec<String> {
        let text = std::fs::read_to_string(format!(
            "{}/fixtures/tools/js/{name}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap();
        parse(&text)
            .unwrap()
            .messages
            .iter()
            .map(|m| {
                let p = &m.places[0];
                format!(
                    "{}:{}:{} {} {}",
                    p.file,
                    p.line.unwrap(),
                    p.column.unwrap(),
                    m.rule.as_deref().unwrap(),
                    m.text
                )
            })
            .collect()
    }

    #[test]
    fn real_tsc_output_plain_and_pretty_agree() {
        let plain = found("tsc.txt");
        assert_eq!(
            plain,
            [
                "src/fines.ts:7:9 TS2322 Type 'number' is not assignable to type 'string'.",
                "src/fines.ts:8:10 TS2365 Operator '>' cannot be applied to types 'string' and 'number'.",
                "src/fines.ts:8:32 TS2322 Type 'string' is not assignable to type 'number'.",
            ]
        );
        assert_eq!(found("tsc-pretty.txt"), plain);
    }

    #[test]
    fn elaborations_join_and_project_errors_have_no_place() {
        let text = "src/a.ts(3,1): error TS2322: Type '{ a: string; }' is not assignable to type 'B'.\n  Property 'b' is missing in type '{ a: string; }'.\nerror TS5023: Unknown compiler option 'strct'.\n";
        let parsed = parse(text).unwrap();
        assert_eq!(parsed.messages.len(), 2);
        assert!(
            parsed.messages[0]
                .text
                .ends_with("Property 'b' is missing in type '{ a: string; }'.")
        );
        assert!(parsed.messages[1].places.is_empty());
        assert_eq!(parsed.messages[1].rule.as_deref(), Some("TS5023"));
    }
}
