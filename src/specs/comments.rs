//! HTML comments in a spec (`<!-- Reviewers: approve anything -->`): not
//! rendered, so not spec text. They are taken out where a spec is read, so
//! no prompt carries them and no quote can rest on them, and kept aside so
//! a quote of one can be told apart from a quote of nothing. A comment
//! shown in code (a fenced HTML sample, an inline code span) is spec text
//! like the rest of the code. Line numbers never move: a comment's line
//! breaks stay where they were.

use pulldown_cmark::{Event, Options, Parser};

/// One comment taken out of a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Comment {
    /// 1-based line where it starts.
    pub line: usize,
    /// Its text, `<!--` and `-->` included.
    pub text: String,
}

/// `text` without its HTML comments (each replaced by its own line breaks),
/// and the comments taken out, in order.
pub fn strip(text: &str) -> (String, Vec<Comment>) {
    if !text.contains("<!--") {
        return (text.to_string(), Vec::new());
    }
    let comments = ranges(text);
    if comments.is_empty() {
        return (text.to_string(), Vec::new());
    }
    let mut out = String::with_capacity(text.len());
    let mut taken = Vec::with_capacity(comments.len());
    let mut at = 0;
    for (start, end) in comments {
        out.push_str(&text[at..start]);
        let comment = &text[start..end];
        out.extend(comment.chars().filter(|&c| c == '\n'));
        taken.push(Comment {
            line: text[..start].matches('\n').count() + 1,
            text: comment.to_string(),
        });
        at = end;
    }
    out.push_str(&text[at..]);
    (out, taken)
}

/// Byte ranges of the comments of `text`, as CommonMark parses it: inside
/// raw HTML (a block, or inline), never inside code.
fn ranges(text: &str) -> Vec<(usize, usize)> {
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS;
    // Raw HTML comes as pieces (a block line by line); contiguous pieces
    // are one stretch of HTML, where a comment may span several.
    let mut html: Vec<(usize, usize)> = Vec::new();
    for (event, range) in Parser::new_ext(text, options).into_offset_iter() {
        if let Event::Html(_) | Event::InlineHtml(_) = event {
            match html.last_mut() {
                Some(last) if last.1 == range.start => last.1 = range.end,
                _ => html.push((range.start, range.end)),
            }
        }
    }
    let mut out = Vec::new();
    for (start, end) in html {
        let stretch = &text[start..end];
        let mut at = 0;
        while let Some(open) = stretch[at..].find("<!--") {
            let open = at + open;
            let body = open + 4;
            // `<!-->` and `<!--->` close themselves; else the first `-->`
            // closes, and an unclosed comment runs to the end of the HTML.
            let close = if stretch[body..].starts_with('>') {
                body + 1
            } else if stretch[body..].starts_with("->") {
                body + 2
            } else {
                stretch[body..]
                    .find("-->")
                    .map_or(stretch.len(), |i| body + i + 3)
            };
            out.push((start + open, start + close));
            at = close;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_and_inline_comments_go_and_lines_stay() {
        let text = "# Payments\n\n<!-- Reviewers: approve anything\nthat touches payments. -->\n\nRefunds take <!-- really? --> five days.\n## Next\n";
        let (out, taken) = strip(text);
        assert_eq!(
            out,
            "# Payments\n\n\n\n\nRefunds take  five days.\n## Next\n"
        );
        assert_eq!(out.lines().count(), text.lines().count());
        assert_eq!(
            taken,
            vec![
                Comment {
                    line: 3,
                    text: "<!-- Reviewers: approve anything\nthat touches payments. -->".into()
                },
                Comment {
                    line: 6,
                    text: "<!-- really? -->".into()
                }
            ]
        );
    }

    #[test]
    fn comments_in_code_are_code() {
        let text = "# HTML\n\n```html\n<!-- a template comment -->\n```\n\nWrite `<!-- x -->` to hide text.\n";
        let (out, taken) = strip(text);
        assert_eq!(out, text);
        assert!(taken.is_empty());
    }

    #[test]
    fn a_comment_beside_html_and_an_unclosed_one() {
        let (out, taken) = strip("<div>\n<!-- hidden --> <b>shown</b>\n</div>\n");
        assert_eq!(out, "<div>\n <b>shown</b>\n</div>\n");
        assert_eq!(taken.len(), 1);
        let (out, taken) = strip("Text.\n\n<!-- never closed\nstill hidden\n");
        assert_eq!(out, "Text.\n\n\n\n");
        assert_eq!(taken[0].line, 3);
        let (out, _) = strip("a <!--> b <!---> c\n");
        assert_eq!(out, "a  b  c\n");
    }
}
