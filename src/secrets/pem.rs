//! Private key blocks: `-----BEGIN … PRIVATE KEY-----`, a base64 body, and
//! `-----END … PRIVATE KEY-----`, written over many lines or on one line
//! with escaped newlines (a service account's JSON key file). A marker
//! alone is not a key (code that parses keys names the marker): a block
//! counts when its body holds at least 64 base64 characters.

use std::sync::OnceLock;

use regex::Regex;

use super::Span;

pub const RULE: &str = "private-key";

/// Base64 characters a key body must hold to be a key.
const MIN_BODY: usize = 64;

/// How many lines a block may span: a 16384-bit RSA key is under 200.
const MAX_LINES: usize = 400;

fn begin() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----")
            .unwrap_or_else(|e| panic!("pem begin: {e}"))
    })
}

fn end() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----")
            .unwrap_or_else(|e| panic!("pem end: {e}"))
    })
}

/// Every key block in `lines`, each as the spans that cover it.
pub fn blocks(lines: &[&str]) -> Vec<Vec<Span>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let Some(start) = (line.contains("PRIVATE KEY"))
            .then(|| begin().find(line))
            .flatten()
        else {
            i += 1;
            continue;
        };
        let after = &line[start.end()..];
        // One line: the body follows the marker with escaped newlines.
        let (count, stop, ended) = body_on_line(after);
        if ended || count >= MIN_BODY {
            if count >= MIN_BODY {
                out.push(vec![Span {
                    line: i,
                    start: start.start(),
                    end: start.end() + stop,
                    rule: RULE,
                }]);
            }
            i += 1;
            continue;
        }
        // Several lines: body lines until the end marker.
        let mut spans = vec![Span {
            line: i,
            start: start.start(),
            end: line.len(),
            rule: RULE,
        }];
        let mut total = count;
        let mut j = i + 1;
        let mut closed = false;
        while j < lines.len() && j - i <= MAX_LINES {
            let body = lines[j];
            if let Some(m) = end().find(body) {
                let (n, _, _) = body_on_line(&body[..m.start()]);
                total += n;
                spans.push(Span {
                    line: j,
                    start: 0,
                    end: m.end(),
                    rule: RULE,
                });
                closed = true;
                break;
            }
            match body_line(body) {
                Some(n) => {
                    total += n;
                    spans.push(Span {
                        line: j,
                        start: 0,
                        end: body.len(),
                        rule: RULE,
                    });
                }
                None => break,
            }
            j += 1;
        }
        if total >= MIN_BODY {
            // A block cut short (a diff hunk's end) still holds key material.
            out.push(spans);
            i = if closed { j + 1 } else { j };
        } else {
            i += 1;
        }
    }
    out
}

/// Base64 characters after a marker on the same line, with `\n` escapes and
/// spaces between them: (count, bytes to the end of the block, whether the
/// end marker was reached).
fn body_on_line(after: &str) -> (usize, usize, bool) {
    let bytes = after.as_bytes();
    let mut count = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b.is_ascii_alphanumeric() || b == b'+' || b == b'/' || b == b'=' {
            count += 1;
            i += 1;
        } else if b == b'\\' && matches!(bytes.get(i + 1), Some(b'n' | b'r')) {
            i += 2;
        } else if b == b' ' || b == b'\t' {
            i += 1;
        } else if b == b'-' {
            if let Some(m) = end().find(&after[i..]) {
                if m.start() == 0 {
                    return (count, i + m.end(), true);
                }
            }
            break;
        } else {
            break;
        }
    }
    (count, i, false)
}

/// A line inside a block: base64 (possibly quoted, with a trailing `\n`,
/// comma or `+` when the key is written as a string literal), a header
/// such as `Proc-Type: 4,ENCRYPTED`, or blank. Returns its base64 count.
fn body_line(line: &str) -> Option<usize> {
    let t = line.trim();
    if t.is_empty() {
        return Some(0);
    }
    if let Some((key, _)) = t.split_once(": ") {
        if ["Proc-Type", "DEK-Info", "Comment", "Version", "Hash"].contains(&key) {
            return Some(0);
        }
    }
    let t = t
        .trim_start_matches(['"', '\'', '+', ' '])
        .trim_end_matches([',', ';', '+', ' ', '"', '\'', ')']);
    let t = t.strip_suffix("\\n").unwrap_or(t);
    let t = t.strip_suffix("\\r").unwrap_or(t);
    if !t.is_empty()
        && t.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/' || b == b'=')
    {
        Some(t.len())
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::super::{CODE, Context, redact};

    const BODY: &str = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\n\
                        MzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu\n\
                        NMoSfm76oqFvAp8Gy0iz5sxjZmSnXyCdPEovGhLa0VzMaQ8s+CLOyS56YyCFGeJZ";

    #[test]
    fn a_block_over_several_lines_is_redacted_whole() {
        let text = format!(
            "let key = r#\"\n-----BEGIN RSA PRIVATE KEY-----\n{BODY}\n-----END RSA PRIVATE KEY-----\n\"#;\n"
        );
        let out = redact(&text, CODE);
        assert_eq!(out.found, vec![(2, "private-key")]);
        assert!(!out.text.contains("MIIEvQ"), "{}", out.text);
        assert!(!out.text.contains("MzEfYy"), "{}", out.text);
        assert!(
            out.text
                .starts_with("let key = r#\"\n[REDACTED:private-key]\n")
        );
        assert!(
            out.text.ends_with("[REDACTED:private-key]\n\"#;\n"),
            "{}",
            out.text
        );
    }

    #[test]
    fn a_block_on_one_line_with_escaped_newlines() {
        let body = BODY.replace('\n', "\\n");
        let text = format!(
            "  \"private_key\": \"-----BEGIN PRIVATE KEY-----\\n{body}\\n-----END PRIVATE KEY-----\\n\","
        );
        let out = redact(&text, Context::file("key.json", false));
        assert_eq!(out.found, vec![(1, "private-key")]);
        assert_eq!(
            out.text,
            "  \"private_key\": \"[REDACTED:private-key]\\n\","
        );
    }

    #[test]
    fn openssh_pgp_and_encrypted_keys() {
        for (begin, end) in [
            (
                "-----BEGIN OPENSSH PRIVATE KEY-----",
                "-----END OPENSSH PRIVATE KEY-----",
            ),
            (
                "-----BEGIN PGP PRIVATE KEY BLOCK-----",
                "-----END PGP PRIVATE KEY BLOCK-----",
            ),
            (
                "-----BEGIN ENCRYPTED PRIVATE KEY-----",
                "-----END ENCRYPTED PRIVATE KEY-----",
            ),
            (
                "-----BEGIN EC PRIVATE KEY-----",
                "-----END EC PRIVATE KEY-----",
            ),
        ] {
            let text = format!("{begin}\nComment: made by a tool\n\n{BODY}\n{end}\n");
            let out = redact(&text, Context::PROSE);
            assert_eq!(out.found, vec![(1, "private-key")], "{begin}");
            assert!(!out.text.contains("MIIEvQ"));
        }
    }

    #[test]
    fn a_block_cut_short_by_a_hunk_is_still_redacted() {
        let text = format!("-----BEGIN PRIVATE KEY-----\n{BODY}");
        let out = redact(&text, CODE);
        assert_eq!(out.found, vec![(1, "private-key")]);
        assert!(!out.text.contains("MIIEvQ"));
    }

    #[test]
    fn markers_without_key_material_are_not_keys() {
        for text in [
            "if line.starts_with(\"-----BEGIN PRIVATE KEY-----\") {",
            "const BEGIN: &str = \"-----BEGIN RSA PRIVATE KEY-----\";\nconst END: &str = \"-----END RSA PRIVATE KEY-----\";",
            "-----BEGIN PRIVATE KEY-----\n...\n-----END PRIVATE KEY-----",
            "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADAN\n-----END PRIVATE KEY-----",
            "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAu1SU1LfVLPHCozMxH2Mo\n-----END PUBLIC KEY-----",
            "-----BEGIN CERTIFICATE-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAu1SU1LfVLPHCozMxH2Mo\n-----END CERTIFICATE-----",
            "\"-----BEGIN PRIVATE KEY-----\\n<your key>\\n-----END PRIVATE KEY-----\"",
        ] {
            let out = redact(text, CODE);
            assert!(out.found.is_empty(), "{text:?}: {out:?}");
        }
    }

    #[test]
    fn the_body_of_a_block_ends_at_prose() {
        let text = format!(
            "-----BEGIN PRIVATE KEY-----\n{BODY}\n-----END PRIVATE KEY-----\nthe key above is for tests\n"
        );
        let out = redact(&text, Context::PROSE);
        assert!(out.text.contains("the key above is for tests"));
    }
}
