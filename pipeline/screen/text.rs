//! The issue (or the hints) as the screen reads it: its numbered lines (without the
//! lines that only an HTML comment fills: an issue template's instructions are not the
//! issue), which of them are code (fenced or Trac `{{{ }}}` blocks, indented blocks,
//! `>>>` sessions, tracebacks) and which are prose, its words, and the questions the signals ask of
//! it (does it mention a name, hold a string, show an error, say what it expects).
//! Pure text; no knowledge of patches or tests.

use std::collections::HashSet;
use std::sync::LazyLock;

use regex::Regex;

/// A regex of one of the screen's fixed patterns: valid by construction, so a panic
/// here is a typo in the pattern, which any test of its signal shows.
pub(crate) fn regex(pattern: &str) -> Regex {
    Regex::new(pattern).expect("a valid regex")
}

/// An identifier: what code names things with.
pub(crate) static IDENTIFIER: LazyLock<Regex> = LazyLock::new(|| regex(r"[A-Za-z_][A-Za-z0-9_]*"));

static URL: LazyLock<Regex> = LazyLock::new(|| regex(r#"https?://[^\s<>()\[\]"'`]+[^\s<>()\[\]"'`.,;:!?]"#));

static EXPECTATION: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)\b(expect(ed|s|ation|ing)?|should(n't)?|instead|would like|wants?|desired?|correct(ly)?|supposed to|ought to|must|needs? to|would be (nice|good|better|great|useful)|it'd be|rather than|propos(e|al)|suggest(ion)?|intended|proper(ly)?)\b",
    )
});

static ERROR: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)(traceback|\w*(error|exception)\b|\bwarning\b|\bfail(s|ed|ing|ure)?\b|\bcrash(es|ed)?\b|\bpanic(ked)?\b|segfault|\bbroken\b|\bwrong\b|\bincorrect(ly)?\b)",
    )
});

/// Inline code that calls something: `` `f(x)` `` (a reproduction in a sentence).
static INLINE_CALL: LazyLock<Regex> = LazyLock::new(|| regex(r"`[^`\n]*[A-Za-z_]\w*\([^`\n]*\)[^`\n]*`"));

/// A call with arguments and what it gives, in plain prose: `Clamp(15, 0, 10) returns
/// 15` (a reproduction, though not marked as code).
static PROSE_CALL: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)\b[A-Za-z_][\w.]*\([^()\n]*[^()\s][^()\n]*\)\s*(returns?|gives?|raises?|throws?|prints?|yields?|outputs?|produces?|is|equals?|=|==|->)\b",
    )
});

/// One line of the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextLine<'a> {
    /// From 1.
    pub number: u32,
    pub text: &'a str,
    pub is_code: bool,
}

/// A text of the task (the issue, the hints), read once.
#[derive(Debug, Clone)]
pub struct IssueText<'a> {
    pub text: &'a str,
    pub lines: Vec<TextLine<'a>>,
    /// Every identifier of the text, lower case.
    words: HashSet<String>,
    /// The kept lines' text lower case, whitespace collapsed to single spaces.
    normalized: String,
}

/// Per line, whether nothing but an HTML comment (or blanks) is on it.
fn comment_lines(text: &str) -> Vec<bool> {
    let mut inside = false;
    text.lines()
        .map(|line| {
            let mut rest = line;
            let mut visible = String::new();
            let mut had_comment = inside;
            loop {
                if inside {
                    match rest.find("-->") {
                        Some(end) => {
                            rest = &rest[end + 3..];
                            inside = false;
                        }
                        None => break,
                    }
                } else {
                    match rest.find("<!--") {
                        Some(start) => {
                            visible.push_str(&rest[..start]);
                            rest = &rest[start + 4..];
                            inside = true;
                            had_comment = true;
                        }
                        None => {
                            visible.push_str(rest);
                            break;
                        }
                    }
                }
            }
            had_comment && visible.trim().is_empty()
        })
        .collect()
}

impl<'a> IssueText<'a> {
    pub fn new(text: &'a str) -> IssueText<'a> {
        let mut lines = Vec::new();
        let mut fenced = false;
        let mut trac = false;
        let mut traceback = false;
        let comments = comment_lines(text);
        for (index, line) in text.lines().enumerate() {
            if comments[index] {
                continue;
            }
            let trimmed = line.trim();
            let fence = trimmed.starts_with("```") || trimmed.starts_with("~~~");
            let trac_open = trimmed.starts_with("{{{");
            let trac_close = trimmed.ends_with("}}}");
            if trimmed.starts_with("Traceback (most recent call last)") {
                traceback = true;
            }
            // Indentation makes code in Markdown; Trac's issues (Django's) indent prose
            // by one tab, so a tab alone does not.
            let indented = line.starts_with("    ") && !trimmed.is_empty();
            let session = trimmed.starts_with(">>> ") || trimmed.starts_with("... ") || trimmed.starts_with("$ ");
            let is_code = fenced || trac || fence || trac_open || indented || session || traceback;
            lines.push(TextLine { number: index as u32 + 1, text: line, is_code });
            if fence {
                fenced = !fenced;
            }
            if trac_open && !trac_close {
                trac = true;
            } else if trac && trac_close {
                trac = false;
            }
            // A traceback ends at its exception line (unindented, after the frames).
            if traceback && !trimmed.is_empty() && !line.starts_with(' ') && !trimmed.starts_with("Traceback") {
                traceback = false;
            }
        }
        let kept: String = lines.iter().map(|line: &TextLine<'_>| line.text).collect::<Vec<_>>().join("\n");
        let words = IDENTIFIER.find_iter(&kept).map(|word| word.as_str().to_lowercase()).collect();
        let normalized = normalize(&kept);
        IssueText { text, lines, words, normalized }
    }

    /// The lines that are prose.
    pub fn prose(&self) -> impl Iterator<Item = &TextLine<'a>> {
        self.lines.iter().filter(|line| !line.is_code)
    }

    /// Words of prose (whitespace-separated, outside code).
    pub fn prose_words(&self) -> usize {
        self.prose().map(|line| line.text.split_whitespace().count()).sum()
    }

    /// Whether the text names `name` as a whole word (ignoring case); a dotted name
    /// counts when its last part is named.
    pub fn mentions(&self, name: &str) -> bool {
        let last = name.rsplit('.').next().unwrap_or(name);
        self.words.contains(&name.to_lowercase()) || self.words.contains(&last.to_lowercase())
    }

    /// Whether the text holds `needle`, ignoring case and differences of whitespace.
    pub fn holds(&self, needle: &str) -> bool {
        let needle = normalize(needle);
        !needle.is_empty() && self.normalized.contains(&needle)
    }

    /// The first line that holds `needle` (ignoring case and whitespace), if one does.
    pub fn line_holding(&self, needle: &str) -> Option<&TextLine<'a>> {
        let needle = normalize(needle);
        if needle.is_empty() {
            return None;
        }
        self.lines.iter().find(|line| normalize(line.text).contains(&needle))
    }

    /// The first line that names `name` as a word.
    pub fn line_naming(&self, name: &str) -> Option<&TextLine<'a>> {
        let name = name.to_lowercase();
        self.lines.iter().find(|line| IDENTIFIER.find_iter(line.text).any(|word| word.as_str().to_lowercase() == name))
    }

    /// Whether some part of the text is code (a block, a session), a call in inline code,
    /// or a call with its result in prose.
    pub fn has_code(&self) -> bool {
        self.lines.iter().any(|line| line.is_code && !line.text.trim().is_empty())
            || INLINE_CALL.is_match(self.text)
            || self.lines.iter().any(|line| PROSE_CALL.is_match(line.text))
    }

    /// The first line that shows an error (a traceback, an exception's name, "fails").
    pub fn error_line(&self) -> Option<&TextLine<'a>> {
        self.lines.iter().find(|line| ERROR.is_match(line.text))
    }

    /// The first prose line that says what should happen.
    pub fn expectation_line(&self) -> Option<&TextLine<'a>> {
        self.prose().find(|line| EXPECTATION.is_match(line.text))
    }

    /// Every URL, with its line.
    pub fn urls(&self) -> Vec<(&TextLine<'a>, &'a str)> {
        self.lines.iter().flat_map(|line| URL.find_iter(line.text).map(move |url| (line, url.as_str()))).collect()
    }
}

/// Lower case, whitespace collapsed to single spaces, trimmed.
pub fn normalize(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_blocks_sessions_and_tracebacks_are_code_and_the_rest_prose() {
        let text = "Title here\nSome prose.\n```python\nx = f(1)\n```\n>>> g()\nTraceback (most recent call last):\n  File \"a.py\", line 1\nValueError: bad\nMore prose.\n{{{\ncode()\n}}}\n\tIndented Trac prose.\n";
        let issue = IssueText::new(text);
        let code: Vec<u32> = issue.lines.iter().filter(|line| line.is_code).map(|line| line.number).collect();
        assert_eq!(code, [3, 4, 5, 6, 7, 8, 9, 11, 12, 13]);
        let prose: Vec<&str> = issue.prose().map(|line| line.text).collect();
        assert_eq!(prose, ["Title here", "Some prose.", "More prose.", "\tIndented Trac prose."]);
        assert!(issue.has_code());
        assert_eq!(issue.error_line().unwrap().number, 7);
    }

    #[test]
    fn lines_that_only_an_html_comment_fills_are_left_out() {
        let issue = IssueText::new(
            "Title\n<!-- Add screenshots\nhere -->\nReal text <!-- a note --> kept\n<!-- one --> <!-- two -->\n",
        );
        let kept: Vec<u32> = issue.lines.iter().map(|line| line.number).collect();
        assert_eq!(kept, [1, 4]);
        assert!(!issue.mentions("screenshots"));
    }

    #[test]
    fn mentions_are_whole_words_ignoring_case_and_dotted_names_count_by_their_last_part() {
        let issue = IssueText::new("Calling `Widget.render()` fails; the ID_FOR_LABEL is odd.");
        for (name, mentioned) in
            [("render", true), ("id_for_label", true), ("forms.Widget", true), ("rend", false), ("label_tag", false)]
        {
            assert_eq!(issue.mentions(name), mentioned, "{name}");
        }
        assert_eq!(issue.line_naming("widget").unwrap().number, 1);
    }

    #[test]
    fn strings_are_found_across_whitespace_and_case() {
        let issue = IssueText::new("It says\n  Related_name has   no effect\non this field");
        assert!(issue.holds("related_name has no effect on"));
        assert!(!issue.holds("has an effect"));
        assert!(!issue.holds("   "));
        assert_eq!(issue.line_holding("no effect").unwrap().number, 2);
    }

    #[test]
    fn urls_expectations_and_prose_words() {
        let issue = IssueText::new(
            "See https://example.com/page.png, and (https://x.org/a).\nIt should return 1.\nWhy? Really?",
        );
        let urls: Vec<&str> = issue.urls().iter().map(|(_, url)| *url).collect();
        assert_eq!(urls, ["https://example.com/page.png", "https://x.org/a"]);
        assert_eq!(issue.expectation_line().unwrap().number, 2);
        assert_eq!(issue.prose_words(), 10);
        assert!(IssueText::new("Nothing to see.").expectation_line().is_none());
    }
}
