//! Self-contained HTML pages (`--format html`): a review's report with the
//! diff and each finding at its line (`review`), the statistics of the log
//! with inline SVG figures (`stats`), a spec review's session (`session`).
//! A page needs nothing but itself: no script, no style sheet or font from
//! elsewhere (its Content-Security-Policy forbids every fetch), so it opens
//! from `file://` and as a CI artifact alike.
//!
//! Every text from a task, spec, diff, model answer or log goes in through
//! `Html::text` or an attribute, escaped; tags and attribute names are
//! this code's own. The markup is well-formed XML as well as HTML (void
//! elements closed, every attribute quoted, control characters replaced),
//! so a test can parse a page with an XML parser. The pages read in order
//! and without colour: every state is also a word.

mod chart;
mod diff;
pub mod review;
pub mod session;
pub mod stats;

use std::fmt::Write;

/// A page being written: text is escaped, markup is not.
#[derive(Debug, Default)]
pub struct Html {
    out: String,
}

impl Html {
    /// `<tag a="v" …>`; attribute values are escaped.
    pub fn open(&mut self, tag: &str, attrs: &[(&str, &str)]) -> &mut Self {
        self.out.push('<');
        self.out.push_str(tag);
        for (name, value) in attrs {
            let _ = write!(self.out, " {name}=\"{}\"", escape(value));
        }
        self.out.push('>');
        self
    }

    pub fn close(&mut self, tag: &str) -> &mut Self {
        let _ = write!(self.out, "</{tag}>");
        self
    }

    /// `<tag …/>`: a void element, closed so XML reads it too.
    pub fn void(&mut self, tag: &str, attrs: &[(&str, &str)]) -> &mut Self {
        self.open(tag, attrs);
        self.out.pop();
        self.out.push_str("/>");
        self
    }

    pub fn text(&mut self, text: &str) -> &mut Self {
        self.out.push_str(&escape(text));
        self
    }

    /// `<tag …>text</tag>`.
    pub fn elem(&mut self, tag: &str, attrs: &[(&str, &str)], text: &str) -> &mut Self {
        self.open(tag, attrs).text(text).close(tag)
    }

    /// Markup this code made itself (never text from elsewhere).
    fn raw(&mut self, markup: &str) -> &mut Self {
        self.out.push_str(markup);
        self
    }

    pub fn newline(&mut self) -> &mut Self {
        self.out.push('\n');
        self
    }

    pub fn into_string(self) -> String {
        self.out
    }
}

/// Text made safe inside an element or a quoted attribute: the five
/// markup characters as references, and characters XML does not allow
/// (controls but tab and line breaks) as U+FFFD.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if c.is_control() || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// At most `max` characters of `text`, and a word that says so.
pub fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!(
            "{}… [{} more characters]",
            &text[..at],
            text[at..].chars().count()
        ),
        None => text.to_string(),
    }
}

/// A whole page around what `body` writes inside `<body>`.
pub fn document(title: &str, body: impl FnOnce(&mut Html)) -> String {
    let mut page = Html::default();
    page.raw("<!DOCTYPE html>\n")
        .open(
            "html",
            &[("lang", "en"), ("xmlns", "http://www.w3.org/1999/xhtml")],
        )
        .newline()
        .open("head", &[])
        .newline()
        .void("meta", &[("charset", "utf-8")])
        .newline()
        .void(
            "meta",
            &[
                ("http-equiv", "Content-Security-Policy"),
                (
                    "content",
                    "default-src 'none'; style-src 'unsafe-inline'; img-src data:",
                ),
            ],
        )
        .newline()
        .void(
            "meta",
            &[
                ("name", "viewport"),
                ("content", "width=device-width, initial-scale=1"),
            ],
        )
        .newline()
        .void("meta", &[("name", "generator"), ("content", GENERATOR)])
        .newline()
        .elem("title", &[], title)
        .newline()
        .open("style", &[])
        .raw(STYLE)
        .close("style")
        .newline()
        .close("head")
        .newline()
        .open("body", &[])
        .newline();
    body(&mut page);
    page.open("footer", &[])
        .elem("p", &[], &format!("Written by {GENERATOR}."))
        .close("footer")
        .newline()
        .close("body")
        .newline()
        .close("html")
        .newline();
    page.into_string()
}

const GENERATOR: &str = concat!("speed ", env!("CARGO_PKG_VERSION"));

/// The page printed when nothing could be shown: the error, and nothing else.
pub fn failure(error: &str) -> String {
    document("speed: error", |page| {
        page.open("main", &[])
            .elem("h1", &[], "speed could not make this page")
            .open("p", &[("role", "alert")])
            .elem("strong", &[], "Error: ")
            .text(error)
            .close("p")
            .close("main")
            .newline();
    })
}

/// Readable without colour: colour only repeats what a word says. System
/// fonts only, nothing fetched.
const STYLE: &str = r#"
:root { --fg: #1b1b1b; --muted: #5b5b5b; --line: #d0d0d0; --bg-add: #e6ffec; --bg-del: #ffebe9;
  --bg-note: #fff8c5; --error: #b3261e; --warning: #8a5a00; --ok: #1a7f37; }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg);
  margin: 0 auto; max-width: 72rem; padding: 1rem 1.5rem 3rem; line-height: 1.45; }
h1 { font-size: 1.6rem; margin: .5rem 0 1rem; } h2 { font-size: 1.3rem; margin-top: 2rem;
  border-bottom: 1px solid var(--line); padding-bottom: .25rem; } h3 { font-size: 1.05rem; }
code, pre, .code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .85rem; }
table { border-collapse: collapse; margin: .5rem 0 1rem; }
th, td { border: 1px solid var(--line); padding: .2rem .5rem; text-align: left; vertical-align: top; }
caption { text-align: left; font-weight: 600; padding: .25rem 0; }
table.parts th { white-space: nowrap; }
.wide { overflow-x: auto; } .wide th, .wide td { white-space: nowrap; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; }
dl.facts dt { font-weight: 600; } dl.facts dd { margin: 0; }
.verdict { font-size: 1.15rem; font-weight: 700; }
.level-error, .not-found, .rejected { color: var(--error); }
.level-warning, .flagged, .unanswered, .unseen { color: var(--warning); }
.found, .approved, .aligned { color: var(--ok); }
table.diff { width: 100%; table-layout: fixed; border: 1px solid var(--line); }
table.diff td { border: 0; padding: 0 .4rem; white-space: pre-wrap; word-break: break-all; }
table.diff col.num { width: 3.5rem; } table.diff col.mark { width: 1.5rem; }
table.diff td.num { color: var(--muted); text-align: right; user-select: none; }
table.diff tr.added td { background: var(--bg-add); } table.diff tr.removed td { background: var(--bg-del); }
table.diff tr.hunk td { color: var(--muted); background: #f3f3f3; }
table.diff tr.finding-row td { white-space: normal; padding: 0; }
.finding { background: var(--bg-note); border-left: .3rem solid var(--fg); margin: .3rem 0 .3rem 4rem;
  padding: .3rem .6rem; font-family: system-ui, sans-serif; white-space: normal; word-break: normal; }
.finding p { margin: .15rem 0; } .finding p.message { white-space: pre-wrap; }
/* Errors, warnings and notes are told apart by more than a word. */
.finding[data-level="error"] { border-left-color: var(--error); }
.finding[data-level="warning"] { border-left-color: var(--warning); }
.finding[data-level="note"] { background: #f3f3f3; border-left-color: var(--muted); }
/* The diff's +/- marks: a title for screen readers, no dotted underline. */
table.diff abbr { text-decoration: none; border: 0; }
/* Reached by a link, a finding shows the lines above it too. */
.finding { scroll-margin-top: 10rem; }
li > .finding { margin-left: 0; }
.note { color: var(--muted); }
.vh { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
figure { margin: 1rem 0; } figcaption { font-weight: 600; margin-bottom: .3rem; }
svg text { font-family: system-ui, sans-serif; font-size: 11px; fill: var(--fg); }
footer { margin-top: 3rem; color: var(--muted); font-size: .85rem; }
@media print { .finding { break-inside: avoid; } }
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_attributes_are_inert() {
        let mut page = Html::default();
        page.elem(
            "p",
            &[("data-file", "a\"><script>x</script>")],
            "<script>alert('x')</script> & \u{7}",
        );
        let out = page.into_string();
        assert_eq!(
            out,
            "<p data-file=\"a&quot;&gt;&lt;script&gt;x&lt;/script&gt;\">&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; \u{FFFD}</p>"
        );
    }

    #[test]
    fn a_page_is_well_formed_xml_and_fetches_nothing() {
        let page = failure("<b>boom</b>");
        let doc = roxmltree::Document::parse_with_options(
            &page,
            roxmltree::ParsingOptions {
                allow_dtd: true,
                ..Default::default()
            },
        )
        .unwrap();
        assert!(
            doc.descendants()
                .all(|n| !n.has_tag_name("script") && !n.has_tag_name("link"))
        );
        assert!(page.contains("&lt;b&gt;boom&lt;/b&gt;"));
        let policy = doc
            .descendants()
            .find(|n| n.attribute("http-equiv") == Some("Content-Security-Policy"))
            .and_then(|n| n.attribute("content"));
        assert!(policy.is_some_and(|p| p.starts_with("default-src 'none'")));
    }

    #[test]
    fn clipping_says_how_much_was_cut() {
        assert_eq!(clip("abcdef", 3), "abc… [3 more characters]");
        assert_eq!(clip("abc", 3), "abc");
    }
}
