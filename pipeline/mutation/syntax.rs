//! Just enough of each language's syntax to mutate one line of it safely: which
//! files are code (by extension), where a line's comments and string literals are
//! (so that an operator never edits inside them by accident), which lines are only
//! comments or documentation, and the spellings that differ (`not` / `!`, `and` /
//! `&&`, `True` / `true`, each language's empty return value). A line-level scanner,
//! not a parser: what it cannot read with confidence it leaves alone, and a mutant
//! that does not compile is reported `stillborn`, never counted.

/// The languages mutants are made in: the project's six families.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    Python,
    Go,
    Rust,
    /// JavaScript and TypeScript.
    Script,
    Java,
    /// C (`.c`, and `.h`, which may be either) and C++.
    C,
    Cpp,
}

impl Language {
    /// The language of a file by its extension; `None` for what is not code (docs,
    /// data, configuration), which gets no mutant.
    pub fn of_path(path: &str) -> Option<Language> {
        let extension = path.rsplit_once('.').map(|(_, extension)| extension)?;
        Some(match extension {
            "py" | "pyx" => Language::Python,
            "go" => Language::Go,
            "rs" => Language::Rust,
            "js" | "jsx" | "mjs" | "cjs" | "ts" | "tsx" | "mts" | "cts" => Language::Script,
            "java" => Language::Java,
            "c" | "h" => Language::C,
            "cc" | "cpp" | "cxx" | "hpp" | "hh" | "hxx" | "ipp" => Language::Cpp,
            _ => return None,
        })
    }

    fn c_like(self) -> bool {
        self != Language::Python
    }

    /// `if` / `while` conditions need parentheses around them.
    pub fn parenthesised_conditions(self) -> bool {
        matches!(self, Language::Script | Language::Java | Language::C | Language::Cpp)
    }

    /// The prefix that negates a condition.
    pub fn negation(self) -> &'static str {
        if self == Language::Python { "not " } else { "!" }
    }

    pub fn and_or(self) -> [&'static str; 2] {
        if self == Language::Python { [" and ", " or "] } else { [" && ", " || "] }
    }

    pub fn booleans(self) -> [&'static str; 2] {
        if self == Language::Python { ["True", "False"] } else { ["true", "false"] }
    }

    /// Statements end with `;` (Go's and Python's do not).
    pub fn semicolons(self) -> bool {
        !matches!(self, Language::Python | Language::Go)
    }
}

/// A piece of one line of code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Piece {
    Code,
    /// A string or character literal, quotes and prefix included.
    Literal,
    Comment,
}

/// The pieces of `line` with their byte ranges, and whether a block comment or a
/// multi-line string is still open at its end. `open` says what was open at its start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Open {
    #[default]
    Nothing,
    BlockComment,
    /// A Python triple-quoted string (a docstring, mostly) with its quote.
    TripleQuote(char),
    /// A backtick string (JavaScript templates, Go raw strings).
    Backtick,
}

pub struct Scanned {
    pub pieces: Vec<(Piece, std::ops::Range<usize>)>,
    pub open_after: Open,
}

/// Splits one line into code, literals and comments.
pub fn scan(line: &str, language: Language, open: Open) -> Scanned {
    let bytes = line.as_bytes();
    let mut pieces: Vec<(Piece, std::ops::Range<usize>)> = Vec::new();
    let mut push = |piece: Piece, range: std::ops::Range<usize>| {
        if range.is_empty() {
            return;
        }
        match pieces.last_mut() {
            Some((last, last_range)) if *last == piece && last_range.end == range.start => last_range.end = range.end,
            _ => pieces.push((piece, range)),
        }
    };
    let mut at = 0;
    // What was open at the line's start runs first.
    match open {
        Open::Nothing => {}
        Open::BlockComment => match line.find("*/") {
            Some(end) => {
                push(Piece::Comment, 0..end + 2);
                at = end + 2;
            }
            None => {
                push(Piece::Comment, 0..line.len());
                return Scanned { pieces, open_after: Open::BlockComment };
            }
        },
        Open::TripleQuote(quote) => {
            let closing: String = std::iter::repeat_n(quote, 3).collect();
            match line.find(&closing) {
                Some(end) => {
                    push(Piece::Literal, 0..end + 3);
                    at = end + 3;
                }
                None => {
                    push(Piece::Literal, 0..line.len());
                    return Scanned { pieces, open_after: open };
                }
            }
        }
        Open::Backtick => match line.find('`') {
            Some(end) => {
                push(Piece::Literal, 0..end + 1);
                at = end + 1;
            }
            None => {
                push(Piece::Literal, 0..line.len());
                return Scanned { pieces, open_after: Open::Backtick };
            }
        },
    }
    let mut code_start = at;
    while at < bytes.len() {
        let rest = &line[at..];
        let c = bytes[at];
        // Comments.
        let line_comment = if language.c_like() { rest.starts_with("//") } else { c == b'#' };
        if line_comment {
            push(Piece::Code, code_start..at);
            push(Piece::Comment, at..line.len());
            return Scanned { pieces, open_after: Open::Nothing };
        }
        if language.c_like() && rest.starts_with("/*") {
            push(Piece::Code, code_start..at);
            match rest[2..].find("*/") {
                Some(end) => {
                    let end = at + 2 + end + 2;
                    push(Piece::Comment, at..end);
                    at = end;
                    code_start = at;
                    continue;
                }
                None => {
                    push(Piece::Comment, at..line.len());
                    return Scanned { pieces, open_after: Open::BlockComment };
                }
            }
        }
        // Literals.
        if let Some((end, open_after)) = literal_at(line, at, language) {
            // A Python prefix (r, b, f, u, rb, ...) belongs to the literal.
            let mut start = at;
            if language == Language::Python {
                while start > code_start && bytes[start - 1].is_ascii_alphabetic() && start + 3 > at {
                    start -= 1;
                }
                let prefix = &line[start..at];
                if !prefix.chars().all(|c| "rbfuRBFU".contains(c))
                    || (start > 0 && (bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'_'))
                {
                    start = at;
                }
            }
            push(Piece::Code, code_start..start);
            push(Piece::Literal, start..end);
            if open_after != Open::Nothing {
                return Scanned { pieces, open_after };
            }
            at = end;
            code_start = at;
            continue;
        }
        at += rest.chars().next().map_or(1, char::len_utf8);
    }
    push(Piece::Code, code_start..line.len());
    Scanned { pieces, open_after: Open::Nothing }
}

/// The end of a literal that starts at `at`, and what stays open after the line when
/// it does not end on it; `None` when no literal starts there.
fn literal_at(line: &str, at: usize, language: Language) -> Option<(usize, Open)> {
    let bytes = line.as_bytes();
    let c = bytes[at];
    match c {
        b'"' | b'\'' if language == Language::Python && line[at..].starts_with(&(c as char).to_string().repeat(3)) => {
            let closing = (c as char).to_string().repeat(3);
            match line[at + 3..].find(&closing) {
                Some(end) => Some((at + 3 + end + 3, Open::Nothing)),
                None => Some((line.len(), Open::TripleQuote(c as char))),
            }
        }
        b'`' if matches!(language, Language::Script | Language::Go) => match line[at + 1..].find('`') {
            Some(end) => Some((at + 1 + end + 1, Open::Nothing)),
            None => Some((line.len(), Open::Backtick)),
        },
        b'\'' if language == Language::Rust => {
            // A char literal ('a', '\n', '\u{..}') or a lifetime ('a): only the first closes.
            let rest = &line[at + 1..];
            let end = if rest.starts_with('\\') {
                rest.find('\'').filter(|&end| end > 1)
            } else {
                let mut chars = rest.char_indices();
                chars.next();
                chars.next().filter(|(_, c)| *c == '\'').map(|(index, _)| index)
            };
            end.map(|end| (at + 1 + end + 1, Open::Nothing))
        }
        b'"' | b'\'' => {
            let mut index = at + 1;
            while index < bytes.len() {
                match bytes[index] {
                    b'\\' => index += 2,
                    quote if quote == c => return Some((index + 1, Open::Nothing)),
                    _ => index += 1,
                }
            }
            // Unterminated on this line: leave the rest of the line alone.
            Some((line.len(), Open::Nothing))
        }
        _ => None,
    }
}

/// What a line of the fixed file is, for the operators.
#[derive(Debug, Clone)]
pub struct CodeLine {
    pub text: String,
    pub pieces: Vec<(Piece, std::ops::Range<usize>)>,
}

impl CodeLine {
    /// Nothing but blanks, comments and literals that stand alone (docstrings): a
    /// change to it changes no behaviour that tests could see.
    pub fn is_inert(&self) -> bool {
        let code = self.code_text();
        let code = code.trim();
        if code.is_empty() {
            return true;
        }
        // A statement that is a lone literal (a docstring's line) does nothing.
        self.pieces.iter().all(|(piece, range)| *piece != Piece::Code || self.text[range.clone()].trim().is_empty())
            || code.chars().all(|c| matches!(c, '(' | ')' | '[' | ']' | '{' | '}' | ',' | ';'))
    }

    /// The line with its comments removed and its literals kept: what runs.
    pub fn code_text(&self) -> String {
        self.pieces
            .iter()
            .filter(|(piece, _)| *piece != Piece::Comment)
            .map(|(_, range)| &self.text[range.clone()])
            .collect()
    }

    /// The line with literals blanked out and comments turned to blanks, byte for
    /// byte as long as the line: where an operator may look for tokens, whose
    /// offsets are then the line's own.
    pub fn masked(&self) -> String {
        let mut out = String::with_capacity(self.text.len());
        for (piece, range) in &self.pieces {
            match piece {
                Piece::Code => out.push_str(&self.text[range.clone()]),
                Piece::Literal => out.extend(std::iter::repeat_n('\u{1}', self.text[range.clone()].len())),
                Piece::Comment => out.extend(std::iter::repeat_n(' ', self.text[range.clone()].len())),
            }
        }
        out
    }

    pub fn literals(&self) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
        self.pieces.iter().filter(|(piece, _)| *piece == Piece::Literal).map(|(_, range)| range.clone())
    }

    /// The byte where a trailing comment starts (or the line's end).
    pub fn code_end(&self) -> usize {
        self.pieces
            .iter()
            .rev()
            .find(|(piece, range)| *piece != Piece::Comment && !self.text[range.clone()].trim().is_empty())
            .map_or(0, |(_, range)| range.end)
    }
}

/// Scans the lines of one side of a hunk in order, carrying what stays open from a
/// line to the next.
pub fn scan_lines<'a>(lines: impl IntoIterator<Item = &'a str>, language: Language) -> Vec<CodeLine> {
    scan_lines_from(lines, language, Open::Nothing)
}

/// [`scan_lines`] from lines where `open` was open at the first one's start.
pub fn scan_lines_from<'a>(lines: impl IntoIterator<Item = &'a str>, language: Language, open: Open) -> Vec<CodeLine> {
    let mut open = open;
    lines
        .into_iter()
        .map(|text| {
            let scanned = scan(text, language, open);
            open = scanned.open_after;
            CodeLine { text: text.to_string(), pieces: scanned.pieces }
        })
        .collect()
}

/// Whether brackets balance on `masked` (literals blanked): a line that opens more
/// than it closes, or the reverse, is part of a longer construct.
pub fn balanced(masked: &str) -> bool {
    let mut depth = 0i32;
    for c in masked.chars() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => {
                depth -= 1;
                if depth < 0 {
                    return false;
                }
            }
            _ => {}
        }
    }
    depth == 0
}

/// Indentation of a line, in bytes of leading blanks.
pub fn indent_of(text: &str) -> usize {
    text.len() - text.trim_start().len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(line: &str, language: Language) -> Vec<(Piece, &str)> {
        scan(line, language, Open::Nothing).pieces.into_iter().map(|(piece, range)| (piece, &line[range])).collect()
    }

    #[test]
    fn literals_and_comments_are_found_in_each_language() {
        assert_eq!(
            pieces(r#"x = f"a{b}" + 'c\'d'  # note"#, Language::Python),
            vec![
                (Piece::Code, "x = "),
                (Piece::Literal, r#"f"a{b}""#),
                (Piece::Code, " + "),
                (Piece::Literal, r"'c\'d'"),
                (Piece::Code, "  "),
                (Piece::Comment, "# note")
            ]
        );
        assert_eq!(
            pieces(r#"if (s === "//") { /* c */ return `t`; }"#, Language::Script),
            vec![
                (Piece::Code, "if (s === "),
                (Piece::Literal, r#""//""#),
                (Piece::Code, ") { "),
                (Piece::Comment, "/* c */"),
                (Piece::Code, " return "),
                (Piece::Literal, "`t`"),
                (Piece::Code, "; }")
            ]
        );
        // A Rust lifetime is code; a char literal is a literal.
        assert_eq!(
            pieces("fn f<'a>(c: &'a str) -> bool { c == 'x' }", Language::Rust),
            vec![(Piece::Code, "fn f<'a>(c: &'a str) -> bool { c == "), (Piece::Literal, "'x'"), (Piece::Code, " }")]
        );
        // An identifier that ends in a prefix letter is no prefix.
        assert_eq!(pieces("ab'x'", Language::Python)[0], (Piece::Code, "ab"));
    }

    #[test]
    fn docstrings_and_block_comments_carry_over_lines_and_make_them_inert() {
        let lines = scan_lines(
            ["    \"\"\"Clamp x.", "    Returns low.", "    \"\"\"", "    return low  # done"],
            Language::Python,
        );
        assert!(lines[0].is_inert() && lines[1].is_inert() && lines[2].is_inert());
        assert!(!lines[3].is_inert());
        assert_eq!(lines[3].code_text().trim(), "return low");
        let lines = scan_lines(["/* a", " * b */ x++;", "// only"], Language::C);
        assert!(lines[0].is_inert() && !lines[1].is_inert() && lines[2].is_inert());
        assert_eq!(lines[1].masked().trim(), "x++;");
    }

    #[test]
    fn balance_ignores_brackets_in_literals() {
        let line = &scan_lines(["call(\"(\", x)"], Language::Go)[0];
        assert!(balanced(&line.masked()));
        assert!(!balanced("call(a,"));
        assert!(!balanced("})"));
    }

    #[test]
    fn code_files_are_recognised_by_extension_and_docs_are_not_code() {
        assert_eq!(Language::of_path("src/a.py"), Some(Language::Python));
        assert_eq!(Language::of_path("lib/x.tsx"), Some(Language::Script));
        assert_eq!(Language::of_path("inc/x.hpp"), Some(Language::Cpp));
        assert_eq!(Language::of_path("docs/changes.rst"), None);
        assert_eq!(Language::of_path("Makefile"), None);
    }
}
