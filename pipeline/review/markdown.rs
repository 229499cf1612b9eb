//! Issue text (untrusted: anyone can write an issue) rendered as Markdown for the
//! review page, with pulldown-cmark, so that nothing in it runs or loads:
//!
//! - raw HTML, block or inline, is shown as text (a block as an `html` code block);
//! - a link keeps its destination only when it is `http:`, `https:` or `mailto:` (or
//!   a fragment): `javascript:` and `data:` links become plain text;
//! - an image becomes a link to it, `[image: alt]`, never an `<img>`: the page loads
//!   nothing from elsewhere, and the reviewer sees that the issue relies on an image.
//!
//! The page's Content-Security-Policy forbids inline scripts and other origins as well;
//! this module is the first wall, that header the second.

use pulldown_cmark::{CodeBlockKind, CowStr, Event, LinkType, Options, Parser, Tag, TagEnd};

/// `markdown` as HTML that is safe to insert into the page.
pub fn render(markdown: &str) -> String {
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    // Per open link or image: whether its start was kept (its end must match).
    let mut kept_links: Vec<bool> = Vec::new();
    let mut events: Vec<Event<'_>> = Vec::new();
    for event in Parser::new_ext(markdown, options) {
        match event {
            Event::Html(text) | Event::InlineHtml(text) => events.push(Event::Text(text)),
            Event::Start(Tag::HtmlBlock) => {
                events.push(Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(CowStr::Borrowed("html")))))
            }
            Event::End(TagEnd::HtmlBlock) => events.push(Event::End(TagEnd::CodeBlock)),
            Event::Start(Tag::Link { link_type, dest_url, title, id }) => {
                let safe = is_safe_destination(&dest_url);
                kept_links.push(safe);
                if safe {
                    events.push(Event::Start(Tag::Link { link_type, dest_url, title, id }));
                }
            }
            Event::End(TagEnd::Link) => {
                if kept_links.pop().unwrap_or(false) {
                    events.push(Event::End(TagEnd::Link));
                }
            }
            Event::Start(Tag::Image { dest_url, title, id, .. }) => {
                let safe = is_safe_destination(&dest_url);
                kept_links.push(safe);
                if safe {
                    events.push(Event::Start(Tag::Link { link_type: LinkType::Inline, dest_url, title, id }));
                }
                events.push(Event::Text(CowStr::Borrowed("[image: ")));
            }
            Event::End(TagEnd::Image) => {
                events.push(Event::Text(CowStr::Borrowed("]")));
                if kept_links.pop().unwrap_or(false) {
                    events.push(Event::End(TagEnd::Link));
                }
            }
            other => events.push(other),
        }
    }
    let mut html = String::with_capacity(markdown.len() * 3 / 2);
    pulldown_cmark::html::push_html(&mut html, events.into_iter());
    html
}

/// Whether a link may point there: the web, mail, or a place on the page.
fn is_safe_destination(destination: &str) -> bool {
    let lowered = destination.trim().to_ascii_lowercase();
    lowered.starts_with("http://")
        || lowered.starts_with("https://")
        || lowered.starts_with("mailto:")
        || lowered.starts_with('#')
}

#[cfg(test)]
mod tests {
    use super::render;

    #[test]
    fn markdown_is_rendered_with_code_blocks_lists_and_tables() {
        let html = render("Title\n\n```python\nx = 1 < 2\n```\n\n- a\n- b\n\n| a | b |\n|---|---|\n| 1 | 2 |\n");
        assert!(html.contains("<pre><code class=\"language-python\">x = 1 &lt; 2\n</code></pre>"), "{html}");
        assert!(html.contains("<li>a</li>"), "{html}");
        assert!(html.contains("<table>"), "{html}");
    }

    #[test]
    fn raw_html_from_an_issue_is_shown_as_text_and_never_becomes_markup() {
        let html = render(
            "Hi <script>alert(1)</script> and <img src=x onerror=alert(2)>\n\n<div onclick=\"x()\">\nblock\n</div>\n",
        );
        assert!(!html.contains("<script"), "{html}");
        assert!(!html.contains("<img"), "{html}");
        assert!(!html.contains("<div"), "{html}");
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "{html}");
        assert!(html.contains("&lt;div onclick=\"x()\"&gt;"), "{html}");
    }

    #[test]
    fn only_web_and_mail_links_keep_their_destination_and_images_become_links() {
        let html = render(
            "[ok](https://example.com/a?b=\"c\") [bad](javascript:alert(1)) [data](data:text/html,x) \
             ![screenshot](https://example.com/s.png) ![local](javascript:x)",
        );
        assert!(html.contains("<a href=\"https://example.com/a?b=%22c%22\">ok</a>"), "{html}");
        assert!(!html.contains("javascript:"), "{html}");
        assert!(!html.contains("data:text"), "{html}");
        assert!(html.contains(" bad "), "{html}");
        assert!(html.contains("<a href=\"https://example.com/s.png\">[image: screenshot]</a>"), "{html}");
        assert!(html.contains("[image: local]"), "{html}");
        assert!(!html.contains("<img"), "{html}");
    }
}
