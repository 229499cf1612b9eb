//! The operators that edit one added line (every operator but leaving a hunk out):
//! each reads the line's shape through [`super::syntax`] (its code without comments,
//! with literals masked so that nothing inside them is taken for code) and makes an
//! edit only where the line is a whole construct: a condition whose brackets close on
//! the line, a statement that starts and ends on it, a `return` of one expression.
//! Also the name of the function a line is in, for a reader.

use std::ops::Range;

use super::patch::Hunk;
use super::syntax::{self, CodeLine, Language};
use super::{Draft, Edit};
use crate::model::probe::MutationOperator;

/// Where a hunk starts in its file: what is open there (a docstring, a comment), the
/// depth of open brackets, and the first word of the statement it starts inside
/// (`from` for a line of `from x import (`). Read from the file before the fix when
/// it is at hand; a hunk of a file not at hand starts at the margin.
#[derive(Debug, Clone, Default)]
pub struct Start {
    pub open: syntax::Open,
    pub depth: i32,
    pub head: String,
}

impl Start {
    /// The state at the start of line `line` (from 1) of `text`.
    pub fn of(text: &str, line: u32, language: Language) -> Start {
        let before: Vec<&str> = text.lines().take(line.saturating_sub(1) as usize).collect();
        let scanned = syntax::scan_lines(before.iter().copied(), language);
        let mut start = Start::default();
        let braces_are_blocks = language != Language::Python;
        for (code, text) in scanned.iter().zip(&before) {
            if start.depth == 0 && !continues(text) {
                start.head = first_word(&code.masked());
            }
            start.depth = (start.depth + bracket_delta(&code.masked(), braces_are_blocks)).max(0);
        }
        // What is open at the line's start: the scan of the last line says.
        let mut open = syntax::Open::Nothing;
        for text in &before {
            open = syntax::scan(text, language, open).open_after;
        }
        start.open = open;
        start
    }
}

/// A line that ends with a backslash continues on the next one.
fn continues(text: &str) -> bool {
    text.trim_end().ends_with('\\')
}

fn first_word(masked: &str) -> String {
    masked
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '#'))
        .find(|word| !word.is_empty())
        .unwrap_or_default()
        .to_string()
}

/// Whether a statement that begins with `head` imports (or, in C, includes): an edit
/// of it is no fix (a missing name fails to load; an unused one changes nothing).
pub fn imports(head: &str, language: Language) -> bool {
    match language {
        Language::Python => head == "import" || head == "from",
        Language::Go | Language::Java => head == "import",
        Language::Script => head == "import" || head == "require",
        Language::Rust => head == "use",
        Language::C | Language::Cpp => head == "#include",
    }
}

/// A hunk's lines as code: the new side (context and added lines) and the old side
/// (context and removed lines) scanned in order, each by its index in the hunk.
pub struct HunkLines {
    new_side: Vec<Option<CodeLine>>,
    old_side: Vec<Option<CodeLine>>,
    /// The first word of the statement each line belongs to, on its own side.
    head: Vec<String>,
    /// Whether a line continues the one before it (a backslash), on its own side.
    continued: Vec<bool>,
    /// Depth of open expression brackets at the start of each new-side line (0 for
    /// others): a line that starts inside one continues a statement. A C-like
    /// language's braces open blocks, not expressions, and do not count.
    depth_before: Vec<i32>,
}

impl HunkLines {
    pub fn of(hunk: &Hunk, language: Language, start: &Start) -> HunkLines {
        let side = |keep: fn(char) -> bool| -> Vec<Option<CodeLine>> {
            let indices: Vec<usize> =
                hunk.lines.iter().enumerate().filter(|(_, line)| keep(line.marker)).map(|(index, _)| index).collect();
            let scanned = syntax::scan_lines_from(
                indices.iter().map(|&index| hunk.lines[index].text.as_str()),
                language,
                start.open,
            );
            let mut out: Vec<Option<CodeLine>> = vec![None; hunk.lines.len()];
            for (index, line) in indices.into_iter().zip(scanned) {
                out[index] = Some(line);
            }
            out
        };
        let new_side = side(|marker| marker == '+' || marker == ' ');
        let old_side = side(|marker| marker == '-' || marker == ' ');
        // Each line's depth, statement and continuation, read on its own side.
        let walk = |side: &[Option<CodeLine>]| -> Vec<(i32, String, bool)> {
            let (mut depth, mut current, mut after_backslash) = (start.depth, start.head.clone(), false);
            let braces_are_blocks = language != Language::Python;
            side.iter()
                .map(|line| {
                    let Some(line) = line else { return (0, String::new(), false) };
                    if depth == 0 && !after_backslash {
                        current = first_word(&line.masked());
                    }
                    let here = (depth, current.clone(), after_backslash);
                    depth = (depth + bracket_delta(&line.masked(), braces_are_blocks)).max(0);
                    after_backslash = continues(&line.text);
                    here
                })
                .collect()
        };
        let (new_walk, old_walk) = (walk(&new_side), walk(&old_side));
        let mut depth_before = vec![0; hunk.lines.len()];
        let mut head = vec![String::new(); hunk.lines.len()];
        let mut continued = vec![false; hunk.lines.len()];
        for (index, line) in hunk.lines.iter().enumerate() {
            let (depth, statement, after_backslash) =
                if line.removed() { old_walk[index].clone() } else { new_walk[index].clone() };
            depth_before[index] = depth;
            head[index] = statement;
            continued[index] = after_backslash;
        }
        HunkLines { new_side, old_side, head, continued, depth_before }
    }

    /// Whether line `index` belongs to an import statement.
    pub fn imports(&self, index: usize, language: Language) -> bool {
        imports(&self.head[index], language)
    }

    /// Whether line `index` (on its own side) is part of a guard: a line that raises
    /// (`raise`, `throw`, `panic!`, a Go or Rust `return` of an error), or an `if` whose
    /// block is only that. Decision (2026-12-07, read on the Lite dev rows): a guard the
    /// tests never reach is a check the issue did not ask for (when the issue asks for
    /// the error, its FAIL_TO_PASS test is the one that meets it), so no mutant is made
    /// of it and it makes no hunk worth leaving out.
    pub fn guard(&self, hunk: &Hunk, index: usize, language: Language, tested: &TestWords) -> bool {
        let side = |other: usize| -> Option<&CodeLine> {
            if hunk.lines[index].removed() { self.old_side[other].as_ref() } else { self.new_side[other].as_ref() }
        };
        let Some(line) = side(index) else { return false };
        if raises(&line.masked(), language) {
            return !tested.names_error_of(&line.code_text(), language);
        }
        let masked = line.masked();
        let trimmed = masked.trim();
        if !(trimmed.starts_with("if ") || trimmed.starts_with("if(") || trimmed.starts_with("} else if")) {
            return false;
        }
        // A one-line guard (`if (x) throw ...;`), or an `if` whose next code line raises
        // and the one after leaves its block.
        if raises(trimmed, language) {
            return true;
        }
        let indent = syntax::indent_of(&line.text);
        let mut following = (index + 1..hunk.lines.len()).filter_map(side).filter(|code| !code.is_inert());
        let Some(body) = following.next() else { return false };
        if syntax::indent_of(&body.text) <= indent || !raises(&body.masked(), language) {
            return false;
        }
        following.next().is_none_or(|after| syntax::indent_of(&after.text) <= indent)
            && !tested.names_error_of(&body.code_text(), language)
    }

    /// The line as code, on the side it belongs to (the old side for removed lines).
    pub fn code(&self, index: usize) -> Option<&CodeLine> {
        self.new_side[index].as_ref().or(self.old_side[index].as_ref())
    }

    /// The statements of one side's changed lines (added, or removed), each with its
    /// backslash continuations joined and its blanks removed, leaving out what is no
    /// code (blanks, comments, docs, imports, a `with` that only quiets warnings).
    pub fn changed_statements(&self, hunk: &Hunk, added: bool, language: Language, tested: &TestWords) -> Vec<String> {
        let mut statements = Vec::new();
        let mut pending = String::new();
        for (index, line) in hunk.lines.iter().enumerate() {
            let changed = if added { line.added() } else { line.removed() };
            if !changed {
                continue;
            }
            let Some(code) = self.code(index) else { continue };
            if code.is_inert() || self.imports(index, language) || quiets_warnings(code, language) {
                continue;
            }
            if (!added && self.dead_assignment(hunk, index)) || self.guard(hunk, index, language, tested) {
                continue;
            }
            // A line that only talks to people counts by its code, not its words.
            let text = if message_line(&code.code_text()) { words_blanked(code) } else { code.code_text() };
            pending.extend(text.chars().filter(|c| !c.is_whitespace() && *c != '\\'));
            if !continues(&code.text) {
                statements.push(std::mem::take(&mut pending));
            }
        }
        if !pending.is_empty() {
            statements.push(pending);
        }
        statements.sort();
        statements
    }

    /// Whether removed line `index` assigns a name that no line of the fixed code in the
    /// hunk mentions at all (neither reads nor writes again): keeping it, or removing
    /// it, changes nothing there.
    fn dead_assignment(&self, hunk: &Hunk, index: usize) -> bool {
        let Some(name) = self.code(index).and_then(|code| assigned_name(code.masked().trim())) else { return false };
        let word = regex_once(&format!(r"\b{}\b", regex::escape(&name)));
        !(0..hunk.lines.len())
            .filter(|&other| other != index)
            .any(|other| self.new_code(other).is_some_and(|line| word.is_match(&line.masked())))
    }

    fn new_code(&self, index: usize) -> Option<&CodeLine> {
        self.new_side[index].as_ref()
    }

    /// The new-side lines before `index` that hold code, nearest first.
    fn code_before(&self, index: usize) -> impl Iterator<Item = &CodeLine> {
        self.new_side[..index].iter().rev().flatten().filter(|line| !line.is_inert())
    }

    fn code_after(&self, index: usize) -> impl Iterator<Item = &CodeLine> {
        self.new_side[index + 1..].iter().flatten().filter(|line| !line.is_inert())
    }
}

fn bracket_delta(masked: &str, braces_are_blocks: bool) -> i32 {
    masked
        .chars()
        .map(|c| match c {
            '(' | '[' => 1,
            ')' | ']' => -1,
            '{' if !braces_are_blocks => 1,
            '}' if !braces_are_blocks => -1,
            _ => 0,
        })
        .sum()
}

/// The drafts of every line operator on the hunk's added lines (file and hunk are
/// filled in by the caller).
pub fn line_drafts(lines: &HunkLines, hunk: &Hunk, language: Language, tested: &TestWords) -> Vec<Draft> {
    let mut drafts = Vec::new();
    let mut push = |operator: MutationOperator, line: usize, edit: Edit, change: String| {
        drafts.push(Draft { operator, file: 0, hunk: 0, line, edit, change });
    };
    for (index, hunk_line) in hunk.lines.iter().enumerate() {
        if lines.imports(index, language) || lines.guard(hunk, index, language, tested) {
            continue;
        }
        if hunk_line.removed() && !hunk.line_is_marked(index) {
            if let Some(old) = kept_removal(lines, hunk, index, language) {
                push(
                    MutationOperator::RevertLine,
                    index,
                    Edit::Keep,
                    format!("the removed line `{}` stays", snippet(&old)),
                );
            }
            continue;
        }
        if !hunk_line.added() || hunk.line_is_marked(index) {
            continue;
        }
        let Some(code) = lines.new_code(index) else { continue };
        // A statement that only talks to people (a warning, a log line) is no behaviour;
        // an error raised is, as a whole (it can be reverted or dropped), but none of its
        // parts (the message, the arguments that build it) is.
        let head = lines.head[index].as_str();
        if code.is_inert() || quiets_warnings(code, language) || talks_to_people(head) {
            continue;
        }
        let text = &code.text;
        if let Some(old) = revert_partner(lines, hunk, index).filter(|_| !lines.continued[index] && !continues(text)) {
            push(
                MutationOperator::RevertLine,
                index,
                Edit::Replace(old.clone()),
                format!("`{}` keeps its old text `{}`", snippet(text), snippet(&old)),
            );
        }
        let whole = lines.depth_before[index] == 0
            && !lines.continued[index]
            && !continues(text)
            && syntax::balanced(&code.masked());
        // The operators that edit a part of the statement; an error raised keeps its parts.
        let parts = !raises_head(head);
        if parts && lines.depth_before[index] > 0 {
            if let Some((operator, change)) = continued_part(code, language) {
                push(operator, index, Edit::Drop, change);
            }
        }
        if let Some(condition) = condition_span(code, language).filter(|_| parts) {
            let inner = &text[condition.clone()];
            let negated =
                format!("{}{}{}", &text[..condition.start], negation(inner, language), &text[condition.end..]);
            push(
                MutationOperator::NegateCondition,
                index,
                Edit::Replace(negated),
                format!("the condition `{}` is negated", snippet(inner)),
            );
            for (clause, kept) in clauses_dropped(code, condition.clone(), language) {
                let edited = format!("{}{}{}", &text[..condition.start], kept, &text[condition.end..]);
                push(
                    MutationOperator::DropCondition,
                    index,
                    Edit::Replace(edited),
                    format!("the clause `{}` is dropped from the condition `{}`", snippet(&clause), snippet(inner)),
                );
            }
        }
        for (range, replacement) in boundaries(code).into_iter().filter(|_| parts) {
            let edited = format!("{}{}{}", &text[..range.start], replacement, &text[range.end..]);
            push(
                MutationOperator::MoveBoundary,
                index,
                Edit::Replace(edited),
                format!("`{}` becomes `{}` in `{}`", text[range].trim(), replacement.trim(), snippet(text)),
            );
        }
        for (range, replacement) in literals(code, language).into_iter().filter(|_| parts) {
            let edited = format!("{}{}{}", &text[..range.start], replacement, &text[range.end..]);
            push(
                MutationOperator::ReplaceLiteral,
                index,
                Edit::Replace(edited),
                format!("the literal `{}` becomes `{}` in `{}`", &text[range], replacement, snippet(text)),
            );
        }
        if whole {
            if let Some(edit) = drop_statement(lines, index, code, language) {
                push(
                    MutationOperator::DropStatement,
                    index,
                    edit,
                    format!("the statement `{}` is dropped", snippet(&code.code_text())),
                );
            }
            if !parts {
                continue;
            }
            if let Some((expression, default)) = return_default(lines, hunk, index, code, language) {
                let indent = &text[..syntax::indent_of(text)];
                let end = if language.semicolons() { ";" } else { "" };
                push(
                    MutationOperator::ReturnDefault,
                    index,
                    Edit::Replace(format!("{indent}return {default}{end}")),
                    format!("`return {}` returns `{default}` instead", snippet(&expression)),
                );
            }
            if let Some((range, expression, default)) = inline_value(code, language) {
                let edited = format!("{}{default}{}", &text[..range.start], &text[range.end..]);
                push(
                    MutationOperator::ReturnDefault,
                    index,
                    Edit::Replace(edited),
                    format!("the value `{}` of `{}` becomes `{default}`", snippet(&expression), snippet(text)),
                );
            }
            if let Some(expression) = rust_tail_expression(lines, index, code, language) {
                let indent = &text[..syntax::indent_of(text)];
                push(
                    MutationOperator::ReturnDefault,
                    index,
                    Edit::Replace(format!("{indent}Default::default()")),
                    format!("the function's value `{}` becomes `Default::default()`", snippet(&expression)),
                );
            }
        }
    }
    drafts
}

/// The text of a removed line that a mutant could keep: code that the gold patch
/// deletes outright (no added line in its change block), whole on its line (its
/// brackets balance, it opens no block) and not a definition or an import.
fn kept_removal(lines: &HunkLines, hunk: &Hunk, index: usize, language: Language) -> Option<String> {
    let mut start = index;
    while start > 0 && hunk.lines[start - 1].removed() {
        start -= 1;
    }
    let mut end = index;
    while end + 1 < hunk.lines.len() && hunk.lines[end + 1].removed() {
        end += 1;
    }
    if hunk.lines.get(end + 1).is_some_and(|next| next.added()) {
        return None;
    }
    let old = lines.code(index)?;
    // A Python line whose block opener the patch removes too would be left orphaned.
    let indent = syntax::indent_of(&old.text);
    let orphaned = language == Language::Python
        && (start..index).any(|earlier| {
            lines.code(earlier).is_some_and(|line| {
                line.code_text().trim_end().ends_with(':') && syntax::indent_of(&line.text) < indent
            })
        });
    if orphaned {
        return None;
    }
    let masked = old.masked();
    let trimmed = masked.trim();
    // An assignment to a name the fixed code never reads is dead once kept.
    if lines.dead_assignment(hunk, index) {
        return None;
    }
    let first = trimmed.split(|c: char| !(c.is_alphanumeric() || c == '_')).next().unwrap_or_default();
    const DEFINITIONS: [&str; 11] =
        ["def", "class", "import", "from", "fn", "func", "use", "package", "struct", "impl", "async"];
    let opens_block = trimmed.ends_with(':') || trimmed.ends_with('{') || trimmed.ends_with('\\');
    (!old.is_inert()
        && syntax::balanced(&masked)
        && !opens_block
        && !DEFINITIONS.contains(&first)
        && !trimmed.starts_with(['@', '#'])
        && (language != Language::Python || !trimmed.ends_with(',')))
    .then(|| old.code_text().trim().to_string())
}

/// The words of the test patch's added lines: whether the tests name an error that a
/// guard raises.
#[derive(Debug, Clone, Default)]
pub struct TestWords {
    words: std::collections::BTreeSet<String>,
}

impl TestWords {
    pub fn of(test_patch: &str) -> TestWords {
        let word = regex_once(r"[A-Za-z_][A-Za-z0-9_]*");
        let words = test_patch
            .lines()
            .filter(|line| line.starts_with('+') && !line.starts_with("+++"))
            .flat_map(|line| word.find_iter(line).map(|found| found.as_str().to_string()).collect::<Vec<_>>())
            .collect();
        TestWords { words }
    }

    /// Whether the added test lines use `word`.
    pub fn contains(&self, word: &str) -> bool {
        self.words.contains(word)
    }

    /// Whether the tests name the error `raising` raises: its type (`raise ValueError(`,
    /// `throw new TypeError(`), or for Go and Rust, an error at all.
    fn names_error_of(&self, raising: &str, language: Language) -> bool {
        match language {
            Language::Go | Language::Rust => {
                ["err", "Err", "is_err", "Error", "EqualError", "ErrorContains", "should_panic", "unwrap_err"]
                    .iter()
                    .any(|word| self.words.contains(*word))
            }
            _ => regex_once(r"(?:raise|throw new|throw)\s+([A-Za-z_][A-Za-z0-9_.]*)")
                .captures(raising)
                .and_then(|found| found[1].rsplit('.').next().map(str::to_string))
                .is_some_and(|name| self.words.contains(&name)),
        }
    }
}

/// Whether a line raises an error: `raise`, `throw`, `panic!`, `bail!`, or a Go or
/// Rust `return` of one.
fn raises(masked: &str, language: Language) -> bool {
    let trimmed = masked.trim();
    let after_condition = trimmed.rsplit_once(':').map_or(trimmed, |(_, rest)| rest).trim();
    let starts = |text: &str| match language {
        Language::Python => text.starts_with("raise ") || text == "raise",
        Language::Rust => text.starts_with("panic!(") || text.starts_with("bail!(") || text.starts_with("return Err("),
        Language::Go => text.starts_with("return ") && (text.contains("errors.New(") || text.contains("fmt.Errorf(")),
        _ => text.starts_with("throw "),
    };
    starts(trimmed)
        || starts(after_condition)
        || trimmed.split_once(") ").is_some_and(|(_, rest)| starts(rest.trim_start_matches('{').trim()))
        || trimmed.split_once("{ ").is_some_and(|(_, rest)| starts(rest.trim()))
}

/// The name a simple assignment (`name = ...`, `name += ...`) writes.
fn assigned_name(masked: &str) -> Option<String> {
    let found = regex_once(r"^([A-Za-z_][A-Za-z0-9_]*)\s*(?:[-+*/|&]?=)[^=]").captures(masked)?;
    Some(found[1].to_string())
}

/// A Python `with` that only quiets warnings (`np.errstate`, `warnings.catch_warnings`,
/// `contextlib.suppress`): leaving it out changes what a test sees of no value.
pub fn quiets_warnings(line: &CodeLine, language: Language) -> bool {
    let masked = line.masked();
    let trimmed = masked.trim();
    language == Language::Python
        && trimmed.starts_with("with ")
        && ["errstate", "warnings", "suppress(", "catch_warnings"].iter().any(|mark| trimmed.contains(mark))
}

/// A line inside brackets that another line opened, which is one whole part of what
/// they hold: an argument or element (`x=1,`), or a clause of a condition written over
/// lines (`or y`, `&& z`). Dropping it is a wrong fix a model could write.
fn continued_part(code: &CodeLine, language: Language) -> Option<(MutationOperator, String)> {
    let masked = code.masked();
    let trimmed = masked.trim();
    if !syntax::balanced(trimmed) || trimmed.is_empty() {
        return None;
    }
    let [and, or] = language.and_or();
    let clause = [and, or].iter().any(|operator| trimmed.starts_with(operator.trim_start()));
    if clause {
        return Some((
            MutationOperator::DropCondition,
            format!("the clause `{}` is dropped", snippet(&code.code_text())),
        ));
    }
    (trimmed.ends_with(',') && trimmed.len() > 1)
        .then(|| (MutationOperator::DropArgument, format!("the argument `{}` is dropped", snippet(&code.code_text()))))
}

/// A reader's view of a line: trimmed, and cut at 80 characters.
fn snippet(text: &str) -> String {
    let text = text.trim();
    if text.chars().count() <= 80 {
        return text.to_string();
    }
    let cut: String = text.chars().take(77).collect();
    format!("{cut}...")
}

/// The old text of a changed line: in the block of removed lines just before the
/// run of added lines that holds `index`, the most similar line whose code differs
/// from the new line's (not only by blanks or comments).
fn revert_partner(lines: &HunkLines, hunk: &Hunk, index: usize) -> Option<String> {
    let mut start = index;
    while start > 0 && hunk.lines[start - 1].added() {
        start -= 1;
    }
    let mut removed_start = start;
    while removed_start > 0 && hunk.lines[removed_start - 1].removed() {
        removed_start -= 1;
    }
    let new = lines.new_code(index)?;
    let new_code = normalise(&new.code_text());
    // The old line must open and close what the new one does, or the file would not parse.
    let new_delta = bracket_delta(&new.masked(), false);
    (removed_start..start)
        .filter_map(|removed| {
            let old = lines.code(removed)?;
            let old_code = normalise(&old.code_text());
            (!old.is_inert()
                && old_code != new_code
                && bracket_delta(&old.masked(), false) == new_delta
                && !lines.continued[removed]
                && !continues(&old.text))
            .then(|| (similarity(&old_code, &new_code), hunk.lines[removed].text.clone()))
        })
        .filter(|(score, _)| *score >= 0.4)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, text)| text)
}

/// A line's code with its blanks made single and the words that only say who may see
/// or change a thing (`private`, `final`, `pub`, ...) left out: a changed line that
/// differs from its old text only by them behaves the same in every test.
fn normalise(code: &str) -> String {
    const MODIFIERS: [&str; 12] = [
        "private",
        "public",
        "protected",
        "final",
        "static",
        "readonly",
        "inline",
        "virtual",
        "override",
        "pub",
        "pub(crate)",
        "internal",
    ];
    code.split_whitespace().filter(|word| !MODIFIERS.contains(word)).collect::<Vec<_>>().join(" ")
}

/// How much of two lines their common start and end make up (0 to 1).
fn similarity(a: &str, b: &str) -> f64 {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let longest = a.len().max(b.len());
    if longest == 0 {
        return 1.0;
    }
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..].iter().rev().zip(b[prefix..].iter().rev()).take_while(|(x, y)| x == y).count();
    (prefix + suffix) as f64 / longest as f64
}

/// The byte range (in the line's code text) of the condition of an `if`, `elif` or
/// `while` that is whole on the line.
fn condition_span(code: &CodeLine, language: Language) -> Option<Range<usize>> {
    let masked = code.masked();
    let trimmed_end = masked.trim_end().len();
    let keyword_end = {
        let start = syntax::indent_of(&masked);
        let rest = &masked[start..];
        let rest_start = rest.strip_prefix("} ").map_or(start, |_| start + 2);
        let rest = &masked[rest_start..];
        let keyword = ["elif ", "else if ", "else if(", "if ", "if(", "while ", "while("]
            .into_iter()
            .find(|keyword| rest.starts_with(keyword))?;
        rest_start + keyword.trim_end_matches('(').len()
    };
    if language == Language::Python {
        if !masked[..trimmed_end].ends_with(':') {
            return None;
        }
        let span = skip_blanks(&masked, keyword_end)..trimmed_end - 1;
        let inner = masked[span.clone()].trim_end();
        return (!inner.is_empty() && syntax::balanced(inner)).then(|| span.start..span.start + inner.len());
    }
    if language.parenthesised_conditions() {
        let open = skip_blanks(&masked, keyword_end);
        if masked.as_bytes().get(open) != Some(&b'(') {
            return None;
        }
        let close = matching_close(&masked, open)?;
        // The rest of the line opens the block (or is one statement); it must balance.
        let rest = masked[close + 1..].trim_end();
        if !syntax::balanced(rest.strip_suffix('{').unwrap_or(rest)) {
            return None;
        }
        return (close > open + 1).then_some(open + 1..close);
    }
    // Go and Rust: `if cond {`, the brace last on the line.
    if !masked[..trimmed_end].ends_with('{') {
        return None;
    }
    let mut start = skip_blanks(&masked, keyword_end);
    if masked[start..].starts_with("let ") {
        return None;
    }
    let end = masked[..trimmed_end - 1].trim_end().len();
    if language == Language::Go {
        // `if v, ok := m[k]; ok {`: the condition is after the statement.
        if let Some(semicolon) = top_level(&masked[start..end], ';').last() {
            start = skip_blanks(&masked, start + semicolon + 1);
        }
    }
    (end > start && syntax::balanced(&masked[start..end])).then_some(start..end)
}

fn skip_blanks(text: &str, at: usize) -> usize {
    at + (text[at..].len() - text[at..].trim_start().len())
}

/// The index of the bracket that closes the one at `open`.
fn matching_close(masked: &str, open: usize) -> Option<usize> {
    let mut depth = 0;
    for (index, c) in masked.char_indices().skip_while(|(index, _)| *index < open) {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(index);
                }
            }
            _ => {}
        }
    }
    None
}

/// Byte offsets of `needle` in `text` outside any bracket.
fn top_level(text: &str, needle: char) -> Vec<usize> {
    let mut depth = 0i32;
    let mut found = Vec::new();
    for (index, c) in text.char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            c if c == needle && depth == 0 => found.push(index),
            _ => {}
        }
    }
    found
}

fn negation(condition: &str, language: Language) -> String {
    format!("{}({condition})", language.negation())
}

/// For a condition of two or more clauses joined by one operator (all `and` or all
/// `or`), each clause with the condition that is left without it.
fn clauses_dropped(code: &CodeLine, span: Range<usize>, language: Language) -> Vec<(String, String)> {
    let masked = code.masked();
    let inner_masked = &masked[span.clone()];
    let inner = &code.text[span];
    for operator in language.and_or() {
        let other = language.and_or().into_iter().find(|other| *other != operator).expect("two operators");
        let mut depth = 0i32;
        let mut cuts = Vec::new();
        let mut mixed = false;
        let bytes = inner_masked.as_bytes();
        let mut index = 0;
        while index < bytes.len() {
            match bytes[index] {
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' => depth -= 1,
                _ if depth == 0 && inner_masked[index..].starts_with(operator) => {
                    cuts.push(index);
                    index += operator.len();
                    continue;
                }
                _ if depth == 0 && inner_masked[index..].starts_with(other) => mixed = true,
                _ => {}
            }
            index += 1;
        }
        if cuts.is_empty() || mixed {
            continue;
        }
        let mut clauses = Vec::new();
        let mut start = 0;
        for cut in &cuts {
            clauses.push(inner[start..*cut].trim().to_string());
            start = cut + operator.len();
        }
        clauses.push(inner[start..].trim().to_string());
        // A clause that only checks for null is a guard the tests rarely reach: left alone.
        return (0..clauses.len())
            .filter(|&dropped| !null_check(&clauses[dropped]))
            .map(|dropped| {
                let kept: Vec<&str> = clauses
                    .iter()
                    .enumerate()
                    .filter(|(index, _)| *index != dropped)
                    .map(|(_, clause)| clause.as_str())
                    .collect();
                (clauses[dropped].clone(), kept.join(operator))
            })
            .collect();
    }
    Vec::new()
}

/// Whether a clause only checks that something is there: a bare name (`ptr`, `!ptr`),
/// or a comparison with the language's null (`x is not None`, `p != NULL`, `e != nil`).
fn null_check(clause: &str) -> bool {
    regex_once(r"^!?\s*[A-Za-z_][A-Za-z0-9_.]*(->[A-Za-z_][A-Za-z0-9_]*)*$").is_match(clause.trim())
        || regex_once(
            r"^[A-Za-z_][A-Za-z0-9_.\[\]]*\s*(is not|is|!=|==|!==|===)\s*(None|NULL|nullptr|nil|null|undefined)$",
        )
        .is_match(clause.trim())
}

/// Each boundary of the line and what it becomes: comparisons written with blanks
/// around them (generics and arrows never are), and `+ 1` / `- 1` after an operand.
/// A comparison with a tolerance (`err < atol`) is left alone: for numbers measured,
/// `<` and `<=` differ on a set of measure zero.
fn boundaries(code: &CodeLine) -> Vec<(Range<usize>, String)> {
    let masked = code.masked();
    let mut found = Vec::new();
    let tolerance = regex_once(r"(?i)\b\w*(tol|eps|epsilon|tolerance|threshold)\w*\b");
    let compares_tolerance = tolerance.is_match(&masked);
    for (from, to) in
        [(" <= ", " < "), (" >= ", " > "), (" < ", " <= "), (" > ", " >= "), (" += 1", " -= 1"), (" -= 1", " += 1")]
    {
        let mut at = 0;
        while let Some(offset) = masked[at..].find(from) {
            let start = at + offset;
            let end = start + from.len();
            let digit_follows = masked[end..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '.' || c == '_');
            let comparison = !from.ends_with('1');
            // A step of `+ 1` inside a longer number is none; a tolerance's bound is left alone.
            let left_alone = (from.ends_with('1') && digit_follows) || (comparison && compares_tolerance);
            if !left_alone {
                found.push((start..end, to.to_string()));
            }
            at = end;
        }
    }
    let plus_minus_one = regex_once(r"([\w)\]])(\s*)([+-])(\s*)1\b");
    for captures in plus_minus_one.captures_iter(&masked) {
        let whole = captures.get(0).expect("match");
        let operator = captures.get(3).expect("group");
        if masked[whole.end()..].starts_with(|c: char| c == '.' || c.is_ascii_alphanumeric()) {
            continue;
        }
        // `x+=1` is the compound form above; `e-1` in a number is no operator.
        let before = &masked[..operator.start()];
        if masked[operator.end()..].starts_with('=') || before.ends_with(|c: char| c.is_ascii_digit()) {
            continue;
        }
        let flipped = if operator.as_str() == "+" { "-" } else { "+" };
        found.push((operator.start()..operator.end(), flipped.to_string()));
    }
    found.sort_by_key(|(range, _)| range.start);
    found.dedup_by_key(|(range, _)| range.start);
    found
}

/// The compiled `pattern`, compiled once per process: the operators ask for the same
/// few patterns on every line of every patch.
pub(super) fn regex_once(pattern: &str) -> regex::Regex {
    static COMPILED: std::sync::LazyLock<std::sync::Mutex<std::collections::HashMap<String, regex::Regex>>> =
        std::sync::LazyLock::new(Default::default);
    let mut compiled = COMPILED.lock().expect("not poisoned");
    if let Some(regex) = compiled.get(pattern) {
        return regex.clone();
    }
    let regex = regex::Regex::new(pattern).expect("a valid pattern");
    compiled.insert(pattern.to_string(), regex.clone());
    regex
}

/// A line's code with each literal emptied (`"..."` becomes `""`).
fn words_blanked(code: &CodeLine) -> String {
    let masked = code.masked();
    let mut out = String::new();
    let mut in_literal = false;
    for c in masked.chars() {
        if c == '\u{1}' {
            if !in_literal {
                out.push_str("\"\"");
            }
            in_literal = true;
        } else {
            in_literal = false;
            out.push(c);
        }
    }
    out
}

/// Whether a statement's head raises an error: the statement is behaviour, its message is not.
fn raises_head(head: &str) -> bool {
    matches!(head, "raise" | "throw" | "panic")
}

/// The first words of statements that only talk to people (a log line, a warning, a
/// print, an assertion).
fn talks_to_people(head: &str) -> bool {
    const HEADS: [&str; 9] = ["warnings", "logging", "logger", "log", "LOG", "print", "println", "assert", "console"];
    HEADS.contains(&head)
}

/// Lines where a string is a message to people (an error, a log line, an assertion's
/// text) or a name of something outside the program (an import): replacing it
/// changes no behaviour a fix is asked for.
fn message_line(code: &str) -> bool {
    const MARKS: [&str; 37] = [
        "raise ",
        "throw ",
        "Error(",
        "Exception(",
        "panic!(",
        "panic(",
        "errors.New(",
        "Errorf(",
        "log.",
        "logger.",
        "logging.",
        "LOG.",
        "warn(",
        "warnings.",
        "console.",
        "print(",
        "println",
        "printf(",
        "eprint",
        "assert",
        ".error(",
        ".warning(",
        ".warn(",
        ".info(",
        ".debug(",
        "import ",
        "require(",
        "#include",
        "@",
        "expect(",
        "message=",
        "msg=",
        "match=",
        "help=",
        "reason=",
        "_error(",
        "_msg(",
    ];
    MARKS.iter().any(|mark| code.contains(mark)) || code.trim_start().starts_with("use ")
}

/// Each literal of the line that can be replaced, as a range of the line's text, and
/// its replacement: booleans flip, integers move by one (0 and 1 swap), strings
/// become empty (an empty one becomes `"x"`).
fn literals(code: &CodeLine, language: Language) -> Vec<(Range<usize>, String)> {
    let masked = code.masked();
    let text = &code.text;
    let mut found = Vec::new();
    let word = |index: usize| masked.as_bytes().get(index).is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_');
    let [truth, falsity] = language.booleans();
    for (from, to) in [(truth, falsity), (falsity, truth)] {
        for (start, _) in masked.match_indices(from) {
            let end = start + from.len();
            if (start == 0 || !word(start - 1)) && !word(end) {
                found.push((start..end, to.to_string()));
            }
        }
    }
    let number = regex_once(r"\b\d+\b");
    for matched in number.find_iter(&masked) {
        let (start, end) = (matched.start(), matched.end());
        let before = masked[..start].chars().next_back();
        let after = masked[end..].chars().next();
        if before.is_some_and(|c| c == '.' || c == '_' || c.is_ascii_alphanumeric())
            || after.is_some_and(|c| c == '.' || c == '_' || c.is_ascii_alphanumeric())
        {
            continue;
        }
        let Ok(value) = matched.as_str().parse::<u64>() else { continue };
        let replacement = match value {
            0 => 1,
            1 => 0,
            n => n + 1,
        };
        found.push((start..end, replacement.to_string()));
    }
    if !message_line(&code.code_text()) {
        let definition = definition_name(&code.code_text(), language).is_some();
        for range in code.literals() {
            let literal = &text[range.clone()];
            // A type named in a string (`node: "Unknown"`, `-> "Self"`) is no value.
            let before = masked[..range.start].trim_end();
            if before.ends_with("->") || (definition && before.ends_with(':')) {
                continue;
            }
            if let Some(replacement) = replaced_string(literal, language) {
                found.push((range, replacement));
            }
        }
    }
    found.sort_by_key(|(range, _)| range.start);
    found
}

/// The replacement of a string literal, keeping its quotes; `None` for what is not a
/// plain string (a char, a template with holes, an f-string, a triple-quoted one).
fn replaced_string(literal: &str, language: Language) -> Option<String> {
    let quote = literal.chars().next()?;
    let plain_quotes = match language {
        Language::Python | Language::Script => quote == '"' || quote == '\'',
        _ => quote == '"',
    };
    if !plain_quotes || literal.len() < 2 || !literal.ends_with(quote) || literal.starts_with("\"\"\"") {
        return None;
    }
    let content = &literal[1..literal.len() - 1];
    Some(if content.is_empty() { format!("{quote}x{quote}") } else { format!("{quote}{quote}") })
}

/// The edit that drops the statement of line `index`: a Python statement alone in
/// its block becomes `pass`. `None` when the line is not a whole simple statement
/// (a declaration, a block's head or end, a `return`, an import, a jump).
fn drop_statement(lines: &HunkLines, index: usize, code: &CodeLine, language: Language) -> Option<Edit> {
    let code_text = code.code_text();
    let trimmed = code_text.trim();
    let first = trimmed.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '@' || c == '#')).next()?;
    const NEVER: [&str; 31] = [
        "def", "class", "return", "import", "from", "elif", "else", "except", "finally", "try", "with", "for", "while",
        "if", "pass", "break", "continue", "global", "nonlocal", "lambda", "async", "let", "const", "var", "func",
        "type", "package", "use", "fn", "case", "default",
    ];
    if NEVER.contains(&first) || first.starts_with('@') || first.starts_with('#') || trimmed.starts_with('}') {
        return None;
    }
    // Calls that only make writes durable or wait change no value a test can see.
    if regex_once(r"\b(fsync|fdatasync|flush|sleep|gc\.collect)\(").is_match(trimmed) {
        return None;
    }
    match language {
        Language::Python => {
            if trimmed.ends_with([':', ',', '\\', '(', '[', '{']) {
                return None;
            }
            // Alone in its block: the line before opens the block and the next line
            // (if any) is not deeper.
            let indent = syntax::indent_of(&code.text);
            let opener = lines.code_before(index).next();
            let alone =
                opener.is_some_and(|before| {
                    before.code_text().trim_end().ends_with(':') && syntax::indent_of(&before.text) < indent
                }) && lines.code_after(index).next().is_none_or(|after| syntax::indent_of(&after.text) < indent);
            Some(if alone { Edit::Replace(format!("{}pass", &code.text[..indent])) } else { Edit::Drop })
        }
        Language::Go => {
            let masked = code.masked();
            let masked = masked.trim();
            if masked.contains(":=")
                || masked.ends_with(['{', '(', ',', '+', '-', '*', '/', '&', '|', '='])
                || ["go", "defer", "switch", "select", "goto"].contains(&first)
            {
                return None;
            }
            Some(Edit::Drop)
        }
        _ => {
            let masked = code.masked();
            let masked = masked.trim();
            let complete = masked.ends_with(';')
                || (language == Language::Script && masked.ends_with(')') && !masked.starts_with(['.', '?', ':']));
            if !complete || declaration(masked) {
                return None;
            }
            Some(Edit::Drop)
        }
    }
}

/// A C-like declaration: two or more words before the first `=` (`int x = 1;`,
/// `final Foo f = g();`), or words with neither a call nor an assignment (`int x;`).
fn declaration(masked: &str) -> bool {
    let assignment = masked
        .char_indices()
        .find(|(index, c)| {
            *c == '='
                && !masked[index + 1..].starts_with('=')
                && !masked[..*index].ends_with(['=', '!', '<', '>', '+', '-', '*', '/', '%', '&', '|', '^'])
        })
        .map(|(index, _)| index);
    match assignment {
        Some(at) => masked[..at].split_whitespace().filter(|word| !word.is_empty()).count() >= 2,
        None => !masked.contains('(') && !masked.contains("++") && !masked.contains("--"),
    }
}

/// The expression of a `return` on line `index` and the default value that replaces
/// it, by the language (and for Go and Java by the enclosing function's declared
/// types); `None` where the line is no such return or the type is not known.
fn return_default(
    lines: &HunkLines,
    hunk: &Hunk,
    index: usize,
    code: &CodeLine,
    language: Language,
) -> Option<(String, String)> {
    let code_text = code.code_text();
    let trimmed = code_text.trim();
    let body = trimmed.strip_prefix("return ")?;
    let expression = if language.semicolons() { body.strip_suffix(';')?.trim() } else { body.trim() };
    if expression.is_empty() {
        return None;
    }
    let default = match language {
        Language::Python => shaped_default(expression, "None", ["\"\"", "0", "False", "[]", "{}"]),
        Language::Script => shaped_default(expression, "null", ["''", "0", "false", "[]", "{}"]),
        Language::Rust => "Default::default()".to_string(),
        Language::C => "0".to_string(),
        Language::Cpp => "{}".to_string(),
        Language::Go => {
            let signature = enclosing_definition(lines, hunk, index, language)?;
            let results = go_results(&signature)?;
            let values: Vec<String> = results.iter().map(|result| go_zero(result)).collect();
            if top_level(expression, ',').len() + 1 != values.len() {
                return None;
            }
            values.join(", ")
        }
        Language::Java => {
            let signature = enclosing_definition(lines, hunk, index, language)?;
            java_default(&signature)?
        }
    };
    let same = |a: &str, b: &str| a.replace(' ', "") == b.replace(' ', "");
    let already_empty =
        same(expression, &default) || (language == Language::C && ["NULL", "false", "nullptr"].contains(&expression));
    (!already_empty).then(|| (expression.to_string(), default))
}

/// A function's value written on its head's line: `int f(...) { return EXPR; }` in a
/// C-like language, a JavaScript arrow function's concise body (`(a, b) => EXPR;`).
/// The range of EXPR in the line, EXPR, and the value that empties it.
fn inline_value(code: &CodeLine, language: Language) -> Option<(Range<usize>, String, String)> {
    let masked = code.masked();
    let text = &code.text;
    let (range, head) = match language {
        Language::Script => {
            let arrow = masked.rfind("=> ")?;
            let start = arrow + 3;
            let end = masked.trim_end().trim_end_matches(';').len();
            if masked[start..].trim_start().starts_with('{') || end <= start {
                return None;
            }
            (start..end, &masked[..arrow])
        }
        Language::C | Language::Cpp | Language::Java => {
            let found = regex_once(r"\{\s*return\s+([^;]+);\s*\}\s*$").captures(&masked)?;
            let expression = found.get(1)?;
            (expression.start()..expression.end(), &masked[..found.get(0)?.start()])
        }
        _ => return None,
    };
    if !syntax::balanced(&masked[range.clone()]) {
        return None;
    }
    let expression = text[range.clone()].trim().to_string();
    let default = match language {
        Language::Script => shaped_default(&expression, "null", ["''", "0", "false", "[]", "{}"]),
        Language::C => "0".to_string(),
        Language::Cpp => "{}".to_string(),
        Language::Java => java_default(head)?,
        _ => return None,
    };
    (expression.replace(' ', "") != default.replace(' ', "")).then_some((range, expression, default))
}

/// The expression of a Rust function's last line, its value (no `;`, and the next
/// code line closes the block, less indented); `None` for any other line.
fn rust_tail_expression(lines: &HunkLines, index: usize, code: &CodeLine, language: Language) -> Option<String> {
    if language != Language::Rust {
        return None;
    }
    let code_text = code.code_text();
    let expression = code_text.trim();
    let first = expression.split(|c: char| !(c.is_alphanumeric() || c == '_')).next().unwrap_or_default();
    const NOT_VALUES: [&str; 12] =
        ["let", "if", "match", "for", "while", "loop", "return", "fn", "use", "pub", "impl", "struct"];
    if expression.is_empty()
        || expression.ends_with([';', '{', ',', '}'])
        || expression.starts_with(['}', '#', '.', '?'])
        || NOT_VALUES.contains(&first)
        || expression == "Default::default()"
    {
        return None;
    }
    let closes = lines.new_side[index + 1..]
        .iter()
        .flatten()
        .find(|after| !after.code_text().trim().is_empty())
        .is_some_and(|after| {
            after.code_text().trim().starts_with('}') && syntax::indent_of(&after.text) < syntax::indent_of(&code.text)
        });
    closes.then(|| expression.to_string())
}

/// The empty value of the expression's own shape: a string, a number, a boolean, a
/// list or a map, else the language's null.
fn shaped_default(expression: &str, null: &str, [string, number, boolean, list, map]: [&str; 5]) -> String {
    let first = expression.chars().next().unwrap_or(' ');
    if first == '"' || first == '\'' || first == '`' {
        string
    } else if first.is_ascii_digit() {
        number
    } else if ["True", "False", "true", "false"].contains(&expression) {
        boolean
    } else if first == '[' && expression.ends_with(']') {
        list
    } else if first == '{' && expression.ends_with('}') {
        map
    } else {
        null
    }
    .to_string()
}

/// The nearest definition (function or method head) above line `index`: in the
/// hunk's new side, else the hunk header's context.
fn enclosing_definition(lines: &HunkLines, hunk: &Hunk, index: usize, language: Language) -> Option<String> {
    lines.new_side[..index]
        .iter()
        .rev()
        .flatten()
        .map(|line| line.code_text())
        .find(|text| definition_name(text, language).is_some())
        .or_else(|| definition_name(&hunk.context, language).map(|_| hunk.context.clone()))
}

/// The name a definition line defines (`def name(`, `func (r T) Name(`, `fn name`,
/// `function name(`, a Java or C method head); `None` for other lines.
pub fn definition_name(text: &str, language: Language) -> Option<String> {
    let trimmed = text.trim();
    let identifier = |rest: &str| -> Option<String> {
        let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '$').collect();
        (!name.is_empty()).then_some(name)
    };
    match language {
        Language::Python => {
            let rest = trimmed.strip_prefix("async ").unwrap_or(trimmed);
            rest.strip_prefix("def ").or_else(|| rest.strip_prefix("class ")).and_then(identifier)
        }
        Language::Go => {
            let rest = trimmed.strip_prefix("func ")?;
            let rest = if rest.starts_with('(') { rest[matching_close(rest, 0)? + 1..].trim_start() } else { rest };
            identifier(rest)
        }
        Language::Rust => {
            let at = trimmed.find("fn ")?;
            let before = &trimmed[..at];
            let words_ok = before.split_whitespace().all(|word| {
                ["pub", "pub(crate)", "pub(super)", "async", "const", "unsafe", "extern", "\"C\""].contains(&word)
            });
            words_ok.then(|| identifier(&trimmed[at + 3..])).flatten()
        }
        Language::Script => {
            if let Some(rest) = trimmed.strip_prefix("export ").map(str::trim_start).or(Some(trimmed)) {
                let rest = rest.strip_prefix("async ").unwrap_or(rest);
                if let Some(rest) = rest.strip_prefix("function ") {
                    return identifier(rest.trim_start_matches('*').trim_start());
                }
            }
            // A method head `name(args) {`.
            let name = identifier(trimmed)?;
            let after = &trimmed[name.len()..];
            let keyword = ["if", "for", "while", "switch", "catch", "return", "function"].contains(&name.as_str());
            (!keyword && after.starts_with('(') && trimmed.ends_with('{')).then_some(name)
        }
        Language::Java | Language::C | Language::Cpp => {
            let open = trimmed.find('(')?;
            let head = &trimmed[..open];
            let words: Vec<&str> = head.split_whitespace().collect();
            const NOT_TYPES: [&str; 10] =
                ["return", "new", "if", "else", "while", "for", "switch", "catch", "throw", "case"];
            if words.len() < 2 || words.iter().any(|word| NOT_TYPES.contains(word)) || head.contains('=') {
                return None;
            }
            let name = words.last()?.trim_start_matches(['*', '&']);
            let name = name.rsplit("::").next().unwrap_or(name);
            identifier(name).filter(|found| found.len() == name.len())
        }
    }
}

/// The function a line is in, for a reader: none for a line at the margin (module
/// level, or a definition's own head), else the nearest definition above it in the
/// hunk that is less indented, else the one the hunk header names.
pub fn function_at(hunk: &Hunk, index: usize, language: Language) -> String {
    let lines = HunkLines::of(hunk, language, &Start::default());
    let Some(indent) = lines.code(index).map(|line| syntax::indent_of(&line.text)) else { return String::new() };
    if indent == 0 {
        return String::new();
    }
    let above = lines.new_side[..index.min(hunk.lines.len())]
        .iter()
        .rev()
        .flatten()
        .filter(|line| syntax::indent_of(&line.text) < indent)
        .find_map(|line| definition_name(&line.code_text(), language));
    above.or_else(|| definition_name(&hunk.context, language)).unwrap_or_default()
}

/// The result types of a Go function head (`func f(a int) (int, error) {`).
fn go_results(signature: &str) -> Option<Vec<String>> {
    let rest = signature.trim().strip_prefix("func ")?;
    let mut rest = rest;
    if rest.starts_with('(') {
        rest = rest[matching_close(rest, 0)? + 1..].trim_start();
    }
    let open = rest.find('(')?;
    let close = matching_close(rest, open)?;
    let results = rest[close + 1..].trim().trim_end_matches('{').trim();
    if results.is_empty() {
        return None;
    }
    let inner = match results.strip_prefix('(') {
        Some(inner) => inner.strip_suffix(')')?,
        None => results,
    };
    let parts: Vec<String> = split_top_level(inner, ',');
    // Named results (`n int, err error`, `a, b int`): a part of one word takes the
    // type of the next part that has two.
    let named = parts.iter().any(|part| part.split_whitespace().count() >= 2 && !part.starts_with("func"));
    if !named {
        return Some(parts);
    }
    let mut types = vec![String::new(); parts.len()];
    let mut next_type = None;
    for (index, part) in parts.iter().enumerate().rev() {
        match part.split_once(char::is_whitespace) {
            Some((_, kind)) => {
                next_type = Some(kind.trim().to_string());
                types[index] = kind.trim().to_string();
            }
            None => types[index] = next_type.clone()?,
        }
    }
    Some(types)
}

fn split_top_level(text: &str, separator: char) -> Vec<String> {
    let mut parts = Vec::new();
    let mut start = 0;
    for cut in top_level(text, separator) {
        parts.push(text[start..cut].trim().to_string());
        start = cut + separator.len_utf8();
    }
    parts.push(text[start..].trim().to_string());
    parts.retain(|part| !part.is_empty());
    parts
}

/// The zero value of a Go type, written as a reader would.
fn go_zero(kind: &str) -> String {
    const NUMBERS: [&str; 17] = [
        "int",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "uintptr",
        "float32",
        "float64",
        "complex64",
        "complex128",
        "byte",
        "rune",
    ];
    match kind {
        "error" | "any" => "nil".into(),
        "string" => "\"\"".into(),
        "bool" => "false".into(),
        kind if NUMBERS.contains(&kind) => "0".into(),
        kind if kind.starts_with(['*', '[']) && kind.starts_with("[]") || kind.starts_with('*') => "nil".into(),
        kind if kind.starts_with("map[") || kind.starts_with("chan ") || kind.starts_with("func(") => "nil".into(),
        kind if kind.starts_with("interface") => "nil".into(),
        kind => format!("*new({kind})"),
    }
}

/// The default value of a Java method's declared return type (`None` for `void`
/// and for a `char`).
fn java_default(signature: &str) -> Option<String> {
    let head = &signature[..signature.find('(')?];
    let words: Vec<&str> = head.split_whitespace().collect();
    let kind = words.get(words.len().checked_sub(2)?)?;
    Some(
        match *kind {
            "void" | "char" => return None,
            "boolean" => "false",
            "int" | "long" | "short" | "byte" | "float" | "double" => "0",
            _ => "null",
        }
        .to_string(),
    )
}

/// The name a line defines, when it opens a definition by its keyword: `def name(`,
/// `func name(` or `func (r *T) name(`, `fn name`, `function name`, `class name`,
/// `struct name`, `interface name`, `type name`, `enum name`, `trait name`.
pub fn defined_name(line: &str) -> Option<String> {
    regex_once(
        r"^\s*(?:(?:pub(?:\([^)]*\))?|export|default|public|private|protected|static|final|abstract|async|unsafe|const)\s+)*(?:def|func(?:\s*\([^)]*\))?|fn|function\*?|class|struct|interface|type|enum|trait)\s+([A-Za-z_][A-Za-z0-9_]*)",
    )
    .captures(line)
    .map(|found| found[1].to_string())
}
