//! Signals of the tests against the issue and the gold patch: tests that use names
//! only the gold patch gives, tests that assert strings nobody could guess, a test
//! patch that rewrites existing expectations, a FAIL_TO_PASS list that is huge or
//! mostly untouched by the test patch, and tests that were flaky in validation.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex::Regex;

use super::Reading;
use crate::git::patch_text::{DiffFile, DiffLine, LineKind};
use crate::screen::assertions;
use crate::screen::code::{self, NameKind, collapse};
use crate::screen::flags::{Evidence, Flag, FlagCode, Source, quoted_list};
use crate::screen::text::regex;

/// A statement that checks something: the start of an assertion.
static ASSERTION: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)(\bassert|raises|\bwarns|\bmatch\s*=|expect|\bmsg\s*=|message|==|\.to(Be|Equal|Throw)|\bt\.(error|fatal))",
    )
});

/// A line that defines a function, a method or a class (Python, Go, Rust, JavaScript,
/// Java and C-like declarations of a test).
static DEFINITION_LINE: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"^\s*(@\w|(async\s+)?def\s|class\s|(pub\s+)?fn\s|func\s|function\s|((public|private|protected|static|final|void)\s+)+[\w<>\[\]]*\s*\w+\s*\()",
    )
});

/// The test's own name in a test id: pytest's `path::Class::name[param]`, Django's
/// `name (module.Class)`, Go's `TestName/sub`, or the id itself (SymPy's bare names,
/// a docstring's first line).
pub fn test_name(id: &str) -> &str {
    if let Some((name, _)) = id.split_once(" (") {
        if !name.contains(' ') {
            return name;
        }
    }
    let last = id.rsplit("::").next().unwrap_or(id);
    let last = last.split('[').next().unwrap_or(last);
    last.split('/').next().unwrap_or(last)
}

/// Whether the test of `id` lives in `file`: the id names the file (pytest's path,
/// Django's module), or the test's name appears in the file's diff.
pub fn test_is_in_file(id: &str, file: &DiffFile<'_>) -> bool {
    let path = file.path();
    if let Some((file_part, _)) = id.split_once("::") {
        return file_part == path;
    }
    if let Some((_, module)) = id.split_once(" (") {
        let module = module.trim_end_matches(')');
        // `module.Class`: the module is all but the last part.
        let module = module.rsplit_once('.').map(|(module, _)| module).unwrap_or(module);
        let module_path = module.replace('.', "/");
        if !module_path.is_empty() && path.trim_end_matches(".py").ends_with(&module_path) {
            return true;
        }
    }
    diff_names(file, test_name(id))
}

/// Whether a file's diff (its lines and its hunks' function context) names `name`;
/// a name with spaces (a docstring's line) is looked for as text.
fn diff_names(file: &DiffFile<'_>, name: &str) -> bool {
    let holds = |text: &str| {
        if name.contains(' ') {
            text.contains(name)
        } else {
            code::identifiers(text).iter().any(|word| word == name) || text.split_whitespace().any(|w| w == name)
        }
    };
    file.hunks.iter().any(|hunk| holds(hunk.context) || hunk.lines.iter().any(|line| holds(line.text)))
}

/// Names the gold patch introduces that the FAIL_TO_PASS tests use and the issue
/// never mentions. Returns the flag and how many names there are.
pub fn new_names(reading: &Reading<'_>) -> (Option<Flag>, usize) {
    let scope = reading.files_in_scope();
    let mut seen = BTreeSet::new();
    let mut names = Vec::new();
    let mut evidence = Vec::new();
    for file in &reading.patch {
        for (definition, defined_at) in code::definitions(file) {
            let name = definition.name.as_str();
            let known_before = if definition.kind == NameKind::ConfigKey {
                reading.before.holds(name)
            } else {
                reading.before.names(name)
            };
            if known_before
                || name.starts_with("test")
                || reading.issue.mentions(name)
                || !seen.insert(name.to_string())
            {
                continue;
            }
            let used: Vec<(&DiffFile<'_>, &DiffLine<'_>)> = scope
                .iter()
                .flat_map(|test_file| {
                    test_file
                        .lines_of(LineKind::Added)
                        .filter(|line| uses(line.text, name, definition.kind))
                        .map(move |line| (*test_file, line))
                })
                .collect();
            if used.is_empty() {
                continue;
            }
            let class = if definition.kind == NameKind::Function { enclosing_class(file, defined_at) } else { None };
            let Some((test_file, used_at)) =
                used.into_iter().find(|(_, line)| !only_on_other_classes(line.text, name, class.as_deref()))
            else {
                continue;
            };
            names.push(name.to_string());
            evidence.push(Evidence::in_diff(name, Source::TestPatch, test_file.path(), used_at));
            evidence.push(Evidence::in_diff(name, Source::Patch, file.path(), defined_at));
        }
    }
    if names.is_empty() {
        return (None, 0);
    }
    let count = names.len();
    let reason = format!(
        "the tests use {} that the gold patch introduces and the issue never mentions",
        if count == 1 {
            format!("the name {}", quoted_list(&names, 1))
        } else {
            format!("the names {}", quoted_list(&names, 4))
        }
    );
    (Some(Flag { code: FlagCode::TestsUseNewNames, reason, evidence, precision: None }), count)
}

/// The class a method that an added line defines belongs to: the nearest `class` line
/// above it with less indentation, or the class its hunk's header names. `None` for a
/// function at the top level.
fn enclosing_class(file: &DiffFile<'_>, defined_at: &DiffLine<'_>) -> Option<String> {
    static CLASS_LINE: LazyLock<Regex> = LazyLock::new(|| regex(r"^(\s*)class\s+([A-Za-z_]\w*)"));
    let indent = |text: &str| text.len() - text.trim_start().len();
    let own = indent(defined_at.text);
    if own == 0 {
        return None;
    }
    let hunk = file.hunks.iter().find(|hunk| hunk.lines.iter().any(|line| line.diff_line == defined_at.diff_line))?;
    let above = hunk.lines.iter().take_while(|line| line.diff_line != defined_at.diff_line);
    let in_hunk = above
        .filter(|line| line.kind != LineKind::Removed)
        .filter_map(|line| CLASS_LINE.captures(line.text))
        .filter(|found| found[1].len() < own)
        .last()
        .map(|found| found[2].to_string());
    in_hunk.or_else(|| CLASS_LINE.captures(hunk.context.trim_start()).map(|found| found[2].to_string()))
}

/// Whether every use of `name` on a line of test code is a method of another class
/// (`QTable.read(...)` when the gold patch defines `read` in `RST`): then the test
/// uses a name that was there before, not the gold patch's.
fn only_on_other_classes(line: &str, name: &str, class: Option<&str>) -> bool {
    let Some(class) = class else { return false };
    let code = code::lex(line).code;
    let Ok(occurrence) = Regex::new(&format!(r"(?:([A-Za-z_]\w*)\.)?\b{}\b", regex::escape(name))) else {
        return false;
    };
    let mut any = false;
    for found in occurrence.captures_iter(&code) {
        any = true;
        let foreign = found
            .get(1)
            .is_some_and(|receiver| receiver.as_str().starts_with(char::is_uppercase) && receiver.as_str() != class);
        if !foreign {
            return false;
        }
    }
    any
}

/// Whether a line of test code uses `name` the way its kind is used: a parameter as a
/// keyword (`name=`), an attribute after a dot, a config key as a string, anything
/// else as an identifier.
fn uses(line: &str, name: &str, kind: NameKind) -> bool {
    let lexed = code::lex(line);
    match kind {
        NameKind::ConfigKey => lexed.literals.iter().any(|literal| literal == name),
        NameKind::Parameter => Regex::new(&format!(r"\b{}\s*=[^=]", regex::escape(name)))
            .map(|keyword| keyword.is_match(&lexed.code))
            .unwrap_or(false),
        NameKind::Attribute => {
            lexed.code.contains(&format!(".{name}")) && code::identifiers(line).iter().any(|word| word == name)
        }
        _ => code::identifiers(line).iter().any(|word| word == name),
    }
}

/// A string literal long enough to be a message or an output, not an identifier or a
/// key: at least ten characters and two words of prose. Markup (`<p>`, `</label>`, `<?xml ...?>`) is not words: the prose is what is
/// between the tags. A string must hold two words of prose (letters, with an
/// apostrophe, a hyphen or trailing punctuation), so that markup, paths, dotted names and
/// import lines are not taken for messages.
fn is_message_like(literal: &str) -> bool {
    static TAG: LazyLock<Regex> = LazyLock::new(|| regex(r"<[^<>]*>"));
    let flat = collapse(&TAG.replace_all(literal, " "));
    let prose = flat
        .split(' ')
        .filter(|word| {
            let word = word.trim_matches(|c: char| ",.;:!?()[]\"'`".contains(c));
            word.chars().filter(|c| c.is_alphabetic()).count() >= 2
                && word.chars().all(|c| c.is_alphabetic() || c == '\'' || c == '-')
        })
        .count();
    flat.chars().count() >= 10 && prose >= 2
}

/// The fixed parts of a string that is a template (`%s`, `%d`, `%(name)s`, `{}`,
/// `{0}`, `{name}`, Go's `%v`/`%q`): what a test asserts of it is those parts, not the
/// template whole. A string with no placeholder is its own one part.
fn template_parts(flat: &str) -> Vec<String> {
    static PLACEHOLDER: LazyLock<Regex> =
        LazyLock::new(|| regex(r"%(\([A-Za-z_]\w*\))?[-+ #0]*\d*(\.\d+)?[sdrifgeEGxXoqvcT%]|\{[A-Za-z_0-9.!:]*\}"));
    PLACEHOLDER
        .split(flat)
        .map(|part| part.trim().to_string())
        .filter(|part| part.chars().filter(|c| !c.is_whitespace()).count() >= 3)
        .collect()
}

/// The assertion statements among a test file's added lines: each the line that starts
/// it (one that checks something) and the lines its open parentheses carry on to.
fn assertion_statements<'f, 'a>(file: &'f DiffFile<'a>) -> Vec<Vec<&'f DiffLine<'a>>> {
    let mut out: Vec<Vec<&'f DiffLine<'a>>> = Vec::new();
    let mut depth: i32 = 0;
    let mut open = false;
    for line in file.lines() {
        if line.kind != LineKind::Added {
            open = false;
            depth = 0;
            continue;
        }
        let lexed = code::lex(line.text);
        if !open || depth <= 0 {
            open = ASSERTION.is_match(&lexed.code);
            depth = 0;
            if open {
                out.push(Vec::new());
            }
        }
        if open {
            if let Some(statement) = out.last_mut() {
                statement.push(line);
            }
            depth += lexed
                .code
                .chars()
                .map(|c| {
                    if c == '(' || c == '[' || c == '{' {
                        1
                    } else if c == ')' || c == ']' || c == '}' {
                        -1
                    } else {
                        0
                    }
                })
                .sum::<i32>();
        }
    }
    out
}

/// The string literals that an assertion statement asks the fix for, each with its
/// line: every literal of the statement but the test framework's failure messages and
/// the tests' names ([`assertions::non_requirements`]).
fn asserted_literals<'f, 'a>(file: &'f DiffFile<'a>) -> Vec<(String, &'f DiffLine<'a>)> {
    let language = assertions::Language::of_path(file.path());
    let junit5 = file.lines().any(|line| line.text.contains("org.junit.jupiter") || line.text.contains("Assertions."));
    let mut out = Vec::new();
    for statement in assertion_statements(file) {
        let lexed: Vec<code::LexedLine> = statement.iter().map(|line| code::lex(line.text)).collect();
        let joined = lexed.iter().map(|line| line.code.as_str()).collect::<Vec<_>>().join("\n");
        let skipped = assertions::non_requirements(&joined, language, junit5);
        let mut index = 0;
        for (line, lexed) in statement.iter().zip(lexed) {
            for literal in lexed.literals {
                if !skipped.contains(&index) {
                    out.push((literal, *line));
                }
                index += 1;
            }
        }
    }
    out
}

/// Strings that the tests assert and that appear neither in the issue (nor its hints)
/// nor in the code before the fix. Returns the flag and how many strings there are.
pub fn unseen_strings(reading: &Reading<'_>) -> (Option<Flag>, usize) {
    // The gold patch's literals, run together: a message split over several literals
    // (Python's implicit concatenation) is found whole.
    let gold: Vec<(String, &DiffFile<'_>, &DiffLine<'_>)> = reading
        .patch
        .iter()
        .flat_map(|file| file.lines_of(LineKind::Added).map(move |line| (file, line)))
        .flat_map(|(file, line)| code::lex(line.text).literals.into_iter().map(move |literal| (literal, file, line)))
        .collect();
    let gold_text = collapse(&gold.iter().map(|(literal, _, _)| literal.as_str()).collect::<String>());
    let mut seen = BTreeSet::new();
    let mut strings = Vec::new();
    let mut evidence = Vec::new();
    let mut from_gold = 0;
    for file in reading.files_in_scope() {
        for (literal, line) in asserted_literals(file) {
            let flat = collapse(&literal);
            let known =
                |text: &str| reading.issue.holds(text) || reading.hints.holds(text) || reading.before.holds(text);
            // A template is seen when each of its fixed parts is.
            let parts = template_parts(&flat);
            if !is_message_like(&literal)
                || known(&flat)
                || (parts.len() > 1 && parts.iter().all(|part| known(part)))
                || !seen.insert(flat.clone())
            {
                continue;
            }
            evidence.push(Evidence::in_diff(&literal, Source::TestPatch, file.path(), line));
            if gold_text.contains(&flat) {
                from_gold += 1;
                let first_words: String = flat.split(' ').take(3).collect::<Vec<_>>().join(" ");
                if let Some((gold_literal, gold_file, gold_line)) =
                    gold.iter().find(|(gold_literal, _, _)| collapse(gold_literal).contains(&first_words))
                {
                    evidence.push(Evidence::in_diff(gold_literal, Source::Patch, gold_file.path(), gold_line));
                }
            }
            strings.push(flat);
        }
    }
    if strings.is_empty() {
        return (None, 0);
    }
    let count = strings.len();
    let origin = match from_gold {
        0 => String::new(),
        n if n == count => " (the gold patch's own wording)".to_string(),
        n => format!(" ({n} in the gold patch's own wording)"),
    };
    let reason = format!(
        "the tests assert {} {} found neither in the issue nor in the code before the fix{origin}",
        if count == 1 { "the string" } else { "the strings" },
        quoted_list(&strings, 2)
    );
    (Some(Flag { code: FlagCode::TestsAssertUnseenStrings, reason, evidence, precision: None }), count)
}

/// How many lines of expectations the test patch removes from existing tests: any
/// removed line of a test file that holds no FAIL_TO_PASS test, and removed assertion
/// lines of the files that do. Raised at one line outside the FAIL_TO_PASS files or
/// three inside them. Returns the flag and the count.
pub fn changes_existing_tests(reading: &Reading<'_>) -> (Option<Flag>, usize) {
    let scope: Vec<&str> = reading.files_in_scope().iter().map(|file| file.path()).collect();
    let all_in_scope = scope.len() == reading.tests.len();
    let (mut inside, mut outside) = (0, 0);
    let mut evidence = Vec::new();
    let mut files = Vec::new();
    for file in &reading.tests {
        let in_scope = all_in_scope || scope.contains(&file.path());
        for line in file.lines_of(LineKind::Removed) {
            let lexed = code::lex(line.text);
            if lexed.code.trim().is_empty() && lexed.literals.is_empty() {
                continue;
            }
            // A test's `def` line (renamed, or its signature changed) is a name, not an
            // expectation: the lines of its body say what it checks.
            let counts = if in_scope { ASSERTION.is_match(&lexed.code) } else { true };
            if !counts {
                continue;
            }
            // A test's `def` line (renamed, or its signature changed) is a name, not an
            // expectation: the lines of its body say what it checks.
            if DEFINITION_LINE.is_match(&lexed.code) {
                continue;
            }
            if in_scope {
                inside += 1;
            } else {
                outside += 1;
            }
            if evidence.len() < 8 {
                evidence.push(Evidence::in_diff(line.text.trim(), Source::TestPatch, file.path(), line));
            }
            if !files.contains(&file.path().to_string()) {
                files.push(file.path().to_string());
            }
        }
    }
    let count = inside + outside;
    if outside == 0 && inside < 3 {
        return (None, count);
    }
    let reason = if outside > 0 {
        format!(
            "the test patch removes {outside} line(s) of existing tests in files that hold no FAIL_TO_PASS test ({})",
            quoted_list(&files, 2)
        )
    } else {
        format!("the test patch rewrites {inside} existing assertion lines in {}", quoted_list(&files, 2))
    };
    (Some(Flag { code: FlagCode::ChangesExistingTests, reason, evidence, precision: None }), count)
}

/// FAIL_TO_PASS that is huge (at least `huge` tests), or mostly tests whose names the
/// test patch never shows (at least three, more than half). Returns the flag and the
/// share of untouched tests.
pub fn fail_to_pass_unrelated(reading: &Reading<'_>, huge: usize) -> (Option<Flag>, f64) {
    let ids = reading.task.fail_to_pass;
    let untouched: Vec<(usize, &String)> = ids
        .iter()
        .enumerate()
        .filter(|(_, id)| !reading.tests.iter().any(|file| diff_names(file, test_name(id))))
        .collect();
    let share = if ids.is_empty() { 0.0 } else { untouched.len() as f64 / ids.len() as f64 };
    let mostly_untouched = untouched.len() >= 3 && untouched.len() * 2 > ids.len();
    if ids.len() < huge && !mostly_untouched {
        return (None, share);
    }
    let names: Vec<String> = untouched.iter().map(|(_, id)| id.to_string()).collect();
    let reason = if ids.len() >= huge {
        format!("FAIL_TO_PASS holds {} tests ({} of them not in the test patch)", ids.len(), untouched.len())
    } else {
        format!(
            "{} of the {} FAIL_TO_PASS tests do not appear in the test patch, e.g. {}",
            untouched.len(),
            ids.len(),
            quoted_list(&names, 2)
        )
    };
    let evidence =
        untouched.iter().take(10).map(|(position, id)| Evidence::in_list(id, Source::FailToPass, *position)).collect();
    (Some(Flag { code: FlagCode::FailToPassUnrelated, reason, evidence, precision: None }), share)
}

/// Tests that gave different results across validation runs.
pub fn flaky(reading: &Reading<'_>) -> Option<Flag> {
    let flaky = reading.task.flaky_tests;
    if flaky.is_empty() {
        return None;
    }
    Some(Flag {
        code: FlagCode::FlakyTests,
        reason: format!(
            "validation saw {} flaky: {}",
            if flaky.len() == 1 { "one test" } else { "tests" },
            quoted_list(flaky, 3)
        ),
        evidence: flaky
            .iter()
            .enumerate()
            .map(|(position, id)| Evidence::in_list(id, Source::Validation, position))
            .collect(),
        precision: None,
    })
}

/// Exception types the new tests expect (`raises(X`, `assertRaises(X`; `assert_raises(X` too)
/// that the issue never names: tests that check a behaviour the issue leaves open (a
/// fix that raises another type, or returns instead of raising, fails them). Returns
/// the flag and how many such types there are.
pub fn unnamed_exceptions(reading: &Reading<'_>) -> (Option<Flag>, usize) {
    static EXPECTED_EXCEPTION: LazyLock<Regex> =
        LazyLock::new(|| regex(r"(?:raises|assertRaises\w*|warns|assertWarns\w*)\(\s*([A-Za-z_][\w.]*)"));
    let mut names: Vec<String> = Vec::new();
    let mut evidence = Vec::new();
    for file in reading.files_in_scope() {
        for line in file.lines_of(LineKind::Added) {
            for found in EXPECTED_EXCEPTION.captures_iter(&code::lex(line.text).code) {
                let written = found[1].to_string();
                let name = written.rsplit('.').next().unwrap_or(&written).to_string();
                // A maintainer's "it should raise X" in the hints names it too.
                if reading.issue.mentions(&name) || reading.hints.mentions(&name) || names.contains(&name) {
                    continue;
                }
                evidence.push(Evidence::in_diff(&written, Source::TestPatch, file.path(), line));
                names.push(name);
            }
        }
    }
    if names.is_empty() {
        return (None, 0);
    }
    let count = names.len();
    let reason = format!(
        "the tests expect {} {} that neither the issue nor the hints name",
        if count == 1 { "the exception" } else { "the exceptions" },
        quoted_list(&names, 3)
    );
    (Some(Flag { code: FlagCode::TestsExpectUnnamedExceptions, reason, evidence, precision: None }), count)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::screen::signals::TaskText;

    fn task<'a>(issue: &'a str, patch: &'a str, test_patch: &'a str, f2p: &'a [String]) -> TaskText<'a> {
        TaskText::of_texts("acme/widgets", issue, patch, test_patch, f2p)
    }

    pub(crate) const GOLD: &str = "\
diff --git a/widgets/forms.py b/widgets/forms.py
--- a/widgets/forms.py
+++ b/widgets/forms.py
@@ -10,3 +10,8 @@ class PasswordWidget(Widget):
     def render(self):
         return self.text
 
+    def id_for_label(self, id_):
+        return None
+
+    def check(self):
+        raise ValueError('the password widget has no labelable element')
";

    const TESTS: &str = "\
diff --git a/tests/test_forms.py b/tests/test_forms.py
--- a/tests/test_forms.py
+++ b/tests/test_forms.py
@@ -1,3 +1,9 @@
 from widgets.forms import PasswordWidget
 
+def test_label():
+    widget = PasswordWidget()
+    assert widget.id_for_label('id') is None
+    with pytest.raises(ValueError, match='the password widget has no '
+                       'labelable element'):
+        widget.check()
";

    fn f2p() -> Vec<String> {
        vec!["tests/test_forms.py::test_label".to_string()]
    }

    /// An issue that names neither the gold patch's new methods nor its message.
    const VAGUE_ISSUE: &str = "The label of PasswordWidget points nowhere.";

    /// The flag `signal` raises on the vague issue's task, with the count it gives.
    fn raised_on_the_vague_issue(signal: fn(&Reading<'_>) -> (Option<Flag>, usize)) -> (Flag, usize) {
        let f2p = f2p();
        let (flag, count) = signal(&Reading::new(task(VAGUE_ISSUE, GOLD, TESTS, &f2p), vec![]));
        (flag.expect("raised"), count)
    }

    #[test]
    fn test_ids_name_their_test_and_their_file() {
        for (id, name) in [
            ("tests/test_x.py::TestA::test_b[1-2]", "test_b"),
            ("test_b (app.tests.TestA)", "test_b"),
            ("TestClamp/high", "TestClamp"),
            ("test_sympify", "test_sympify"),
            ("Widget doesn't contain a label", "Widget doesn't contain a label"),
        ] {
            assert_eq!(test_name(id), name);
        }
        let files = crate::git::patch_text::parse(TESTS);
        assert!(test_is_in_file("tests/test_forms.py::test_label", &files[0]));
        assert!(test_is_in_file("test_label (tests.test_forms.FormTests)", &files[0]));
        assert!(test_is_in_file("test_label", &files[0]));
        assert!(!test_is_in_file("test_other", &files[0]));
    }

    #[test]
    fn new_names_are_raised_for_a_method_the_issue_never_names() {
        let (flag, count) = raised_on_the_vague_issue(new_names);
        assert_eq!(count, 2, "{flag:?}");
        assert!(flag.reason.contains("`id_for_label` and `check`"), "{}", flag.reason);
        let places: Vec<(Source, Option<&str>, Option<u32>)> =
            flag.evidence.iter().map(|evidence| (evidence.source, evidence.file.as_deref(), evidence.line)).collect();
        assert_eq!(
            places[..2],
            [
                (Source::TestPatch, Some("tests/test_forms.py"), Some(5)),
                (Source::Patch, Some("widgets/forms.py"), Some(13))
            ]
        );
        assert_eq!(flag.evidence[2].text, "check");
    }

    #[test]
    fn new_names_are_not_raised_when_the_issue_names_them_or_they_existed() {
        let f2p = f2p();
        let issue = "PasswordWidget should implement id_for_label() returning None, and check() should raise.";
        let (flag, _) = new_names(&Reading::new(task(issue, GOLD, TESTS, &f2p), vec![]));
        assert!(flag.is_none());
        // The mirror shows the method was there before the fix.
        let before =
            vec!["class PasswordWidget:\n    def id_for_label(self, id_): ...\n    def check(self): ...\n".to_string()];
        let (flag, _) = new_names(&Reading::new(task(VAGUE_ISSUE, GOLD, TESTS, &f2p), before));
        assert!(flag.is_none());
    }

    #[test]
    fn unseen_strings_are_raised_for_the_gold_patchs_own_message() {
        let (flag, count) = raised_on_the_vague_issue(unseen_strings);
        assert_eq!(count, 2, "{flag:?}");
        assert!(flag.reason.contains("`the password widget has no`"), "{}", flag.reason);
        assert!(flag.reason.contains("gold patch's own wording"), "{}", flag.reason);
        assert_eq!(flag.evidence[0].line, Some(6));
        assert_eq!(flag.evidence[1].source, Source::Patch);
    }

    #[test]
    fn unseen_strings_are_not_raised_when_the_issue_or_the_old_code_holds_them() {
        let f2p = f2p();
        let issue = "check() should raise: the password widget has no labelable element";
        let (flag, _) = unseen_strings(&Reading::new(task(issue, GOLD, TESTS, &f2p), vec![]));
        assert!(flag.is_none(), "{flag:?}");
        let before = vec!["MESSAGE = 'the password widget has no labelable element'".to_string()];
        let (flag, _) = unseen_strings(&Reading::new(task("It fails.", GOLD, TESTS, &f2p), before));
        assert!(flag.is_none(), "the mirror's tree holds it: {flag:?}");
    }

    const REWRITE: &str = "\
diff --git a/tests/test_forms.py b/tests/test_forms.py
--- a/tests/test_forms.py
+++ b/tests/test_forms.py
@@ -1,2 +1,2 @@
 def test_label():
-    assert render() == 'a'
+    assert render() == 'b'
diff --git a/tests/test_models.py b/tests/test_models.py
--- a/tests/test_models.py
+++ b/tests/test_models.py
@@ -1,2 +1,2 @@
 class Person:
-    friends = Field('self', related_name='friends')
+    friends = Field('self')
";

    #[test]
    fn changed_expectations_are_raised_outside_the_fail_to_pass_files_only() {
        let f2p = f2p();
        let (flag, count) = changes_existing_tests(&Reading::new(task("x", GOLD, REWRITE, &f2p), vec![]));
        let flag = flag.expect("raised");
        assert_eq!(count, 2);
        assert!(flag.reason.contains("`tests/test_models.py`"), "{}", flag.reason);
        assert_eq!(flag.evidence.last().unwrap().text, "friends = Field('self', related_name='friends')");
        // Only the FAIL_TO_PASS file's one assertion changes: within the issue's scope.
        let one_file = REWRITE.split("diff --git a/tests/test_models.py").next().unwrap();
        let (flag, count) = changes_existing_tests(&Reading::new(task("x", GOLD, one_file, &f2p), vec![]));
        assert!(flag.is_none());
        assert_eq!(count, 1);
    }

    #[test]
    fn fail_to_pass_is_raised_when_mostly_untouched_or_huge() {
        let ids: Vec<String> =
            ["tests/test_forms.py::test_label", "test_a", "test_b", "test_c"].map(String::from).to_vec();
        let (flag, share) = fail_to_pass_unrelated(&Reading::new(task("x", GOLD, TESTS, &ids), vec![]), 50);
        let flag = flag.expect("raised");
        assert_eq!(share, 0.75);
        assert!(flag.reason.starts_with("3 of the 4"), "{}", flag.reason);
        assert_eq!(flag.evidence[0].line, Some(2));
        let (flag, share) = fail_to_pass_unrelated(&Reading::new(task("x", GOLD, TESTS, &ids[..1]), vec![]), 50);
        assert!(flag.is_none());
        assert_eq!(share, 0.0);
        let (flag, _) = fail_to_pass_unrelated(&Reading::new(task("x", GOLD, TESTS, &ids[..1]), vec![]), 1);
        assert!(flag.expect("huge at 1").reason.contains("holds 1 tests"));
    }

    #[test]
    fn flaky_tests_are_raised_only_when_validation_saw_some() {
        let f2p = f2p();
        let flaky = vec!["tests/test_t.py::test_timing".to_string()];
        let mut text = task("x", GOLD, TESTS, &f2p);
        assert!(flaky_of(text).is_none());
        text.flaky_tests = &flaky;
        let flag = flaky_of(text).expect("raised");
        assert_eq!(flag.evidence[0].source, Source::Validation);
        assert!(flag.reason.contains("`tests/test_t.py::test_timing`"));
    }

    fn flaky_of(text: TaskText<'_>) -> Option<Flag> {
        flaky(&Reading::new(text, vec![]))
    }

    #[test]
    fn expected_exceptions_the_issue_never_names_are_raised_and_named_ones_are_not() {
        let (flag, count) = raised_on_the_vague_issue(unnamed_exceptions);
        assert_eq!(count, 1);
        assert_eq!(
            flag.reason,
            "the tests expect the exception `ValueError` that neither the issue nor the hints name"
        );
        assert_eq!((flag.evidence[0].text.as_str(), flag.evidence[0].line), ("ValueError", Some(6)));
        let f2p = f2p();
        let (flag, count) =
            unnamed_exceptions(&Reading::new(task("It raises no ValueError.", GOLD, TESTS, &f2p), vec![]));
        assert!(flag.is_none() && count == 0);
        // A maintainer's hint names it.
        let mut hinted = task("It breaks.", GOLD, TESTS, &f2p);
        hinted.hints_text = "It should raise ValueError.";
        let (flag, count) = unnamed_exceptions(&Reading::new(hinted, vec![]));
        assert!(flag.is_none() && count == 0);
    }

    /// A test file of `path` whose added lines are `lines`, as a one-hunk diff.
    pub(crate) fn test_file(path: &str, lines: &[&str]) -> String {
        let body: String = lines.iter().map(|line| format!("+{line}\n")).collect();
        crate::git::patch_text::fixtures::modified(
            path,
            &format!("@@ -1,1 +1,{} @@\n context\n{body}", lines.len() + 1),
        )
    }

    /// The unseen strings flag of a test file `path` with `lines` on an issue that says
    /// nothing of them.
    fn unseen_in(path: &str, lines: &[&str]) -> Option<Flag> {
        let tests = test_file(path, lines);
        let f2p: Vec<String> = vec!["TestX".to_string()];
        unseen_strings(&Reading::new(task("It breaks.", GOLD, &tests, &f2p), vec![])).0
    }

    #[test]
    fn failure_messages_are_not_asserted_strings_in_python_go_rust_javascript_and_java() {
        // Each case: a test whose only long string is the framework's failure message
        // (not raised), and the same test asserting an output the issue never gives (raised).
        let cases: [(&str, &[&str], &[&str], &str); 5] = [
            (
                "tests/test_clamp.py",
                &[
                    "def test_high():",
                    "    assert clamp(15, 0, 10) == 10, \"clamp of a high value is wrong\"",
                    "    self.assertEqual(clamp(1, 0, 3), 1, msg=\"clamp of a low value\")",
                ],
                &["def test_high():", "    assert render(15) == \"fifteen over the top\", \"rendered wrong\""],
                "fifteen over the top",
            ),
            (
                "clamp_test.go",
                &[
                    "func TestX(t *testing.T) {",
                    "\tif got := Clamp(15, 0, 10); got != 10 {",
                    "\t\tt.Fatalf(\"Clamp(15, 0, 10) = %d, want 10\", got)",
                    "\t}",
                    "}",
                ],
                &[
                    "func TestX(t *testing.T) {",
                    "\tassert.Equal(t, \"fifteen over the top\", Render(15), \"render of %d\", 15)",
                    "}",
                ],
                "fifteen over the top",
            ),
            (
                "tests/clamp.rs",
                &[
                    "#[test]",
                    "fn test_x() {",
                    "    assert_eq!(clamp(15, 0, 10), 10, \"clamp of {} is wrong\", 15);",
                    "    assert!(ok(), \"should be fine by now\");",
                    "}",
                ],
                &[
                    "#[test]",
                    "fn test_x() {",
                    "    assert_eq!(render(15), \"fifteen over the top\", \"render of {}\", 15);",
                    "}",
                ],
                "fifteen over the top",
            ),
            (
                "src/clamp.test.js",
                &[
                    "it(\"clamps values above the range\", () => {",
                    "  expect(clamp(15, 0, 10), \"clamp of a high value\").toBe(10);",
                    "  assert.strictEqual(clamp(1, 0, 3), 1, \"clamp of a low value\");",
                    "});",
                ],
                &[
                    "test(\"renders\", () => {",
                    "  expect(render(15), \"render of fifteen\").toBe(\"fifteen over the top\");",
                    "});",
                ],
                "fifteen over the top",
            ),
            (
                "src/test/java/ClampTest.java",
                &[
                    "@Test",
                    "public void testX() {",
                    "    assertEquals(\"clamp of a high value\", 10, Clamp.clamp(15, 0, 10));",
                    "    assertTrue(\"should be in the range\", Clamp.ok());",
                    "    fail(\"no exception expected here\");",
                    "}",
                ],
                &[
                    "@Test",
                    "public void testX() {",
                    "    assertEquals(\"render of fifteen\", \"fifteen over the top\", Render.of(15));",
                    "}",
                ],
                "fifteen over the top",
            ),
        ];
        for (path, messages_only, asserted, wanted) in cases {
            assert_eq!(unseen_in(path, messages_only), None, "{path}: failure messages are not asserted strings");
            let flag = unseen_in(path, asserted).unwrap_or_else(|| panic!("{path}: the asserted output is raised"));
            assert!(flag.reason.contains(wanted), "{path}: {}", flag.reason);
            assert_eq!(
                flag.evidence.len(),
                1,
                "{path}: only the asserted string, not the message: {:?}",
                flag.evidence
            );
        }
    }

    #[test]
    fn a_method_the_gold_patch_adds_is_not_a_new_name_when_the_tests_call_another_class_of_that_name() {
        // astropy-14182: the gold patch adds `RST.read`; the test calls `QTable.read`,
        // which was there long before.
        let gold = crate::git::patch_text::fixtures::modified(
            "io/rst.py",
            "@@ -60,3 +60,6 @@ class RST(FixedWidth):\n     def write(self, lines):\n         return lines\n+\n+    def read(self, table):\n+        return super().read(table)\n",
        );
        let calls = |line: &str| test_file("tests/test_rst.py", &["def test_rows():", line]);
        let f2p = vec!["tests/test_rst.py::test_rows".to_string()];
        let other_class = calls("tbl = QTable.read(lines, format='ascii.rst')");
        let (flag, _) = new_names(&Reading::new(task("Support header rows.", &gold, &other_class, &f2p), vec![]));
        assert!(flag.is_none(), "{flag:?}");
        for line in ["tbl = RST().read(lines)", "tbl = RST.read(lines)", "tbl = reader.read(lines)"] {
            let tests = calls(line);
            let (flag, _) = new_names(&Reading::new(task("Support header rows.", &gold, &tests, &f2p), vec![]));
            assert!(flag.is_some_and(|flag| flag.reason.contains("`read`")), "{line}");
        }
    }

    #[test]
    fn markup_import_lines_and_templates_whose_parts_the_issue_gives_are_not_unseen_strings() {
        let f2p = f2p();
        let asserting = |line: &str| test_file("tests/test_forms.py", &["def test_label():", line]);
        let issue = "The query ends in ORDER BY id ASC; it should be DESC.";
        for line in [
            r#"self.assertXMLEqual(out, """<?xml version="1.0" encoding="UTF-8"?>""")"#,
            r#"self.assertSerializedResultEqual(cls, ("x", {'import migrations.test_writer'}))"#,
            r#"self.assertIn('ORDER BY %s.%s DESC' % (table, pk), sql)"#,
        ] {
            let tests = asserting(line);
            let (flag, _) = unseen_strings(&Reading::new(task(issue, GOLD, &tests, &f2p), vec![]));
            assert!(flag.is_none(), "{line}: {flag:?}");
        }
        // Prose inside markup, and a template whose fixed words the issue never gives, are.
        for (line, wanted) in [
            (r#"self.assertHTMLEqual(out, '<label>Hash field:</label>')"#, "<label>Hash field:</label>"),
            (r#"self.assertIn('NULLS LAST ordering on %s' % table, sql)"#, "NULLS LAST ordering on %s"),
        ] {
            let tests = asserting(line);
            let (flag, _) = unseen_strings(&Reading::new(task(issue, GOLD, &tests, &f2p), vec![]));
            assert!(flag.is_some_and(|flag| flag.evidence[0].text == wanted), "{line}");
        }
    }

    /// The FAIL_TO_PASS test of [`f2p`], added in a file of its own.
    fn new_test() -> String {
        test_file("tests/test_forms.py", &["def test_label():", "    assert render() == 'b'"])
    }

    #[test]
    fn a_renamed_test_is_not_a_changed_expectation() {
        // matplotlib-23314: an existing test renamed to make room for the new one.
        let renamed = crate::git::patch_text::fixtures::modified(
            "tests/test_axes.py",
            "@@ -7319,3 +7319,3 @@ def test_redraw_in_frame():\n-def test_invisible_axes():\n+def test_invisible_axes_events():\n     fig, ax = plt.subplots()\n     assert fig.canvas.inaxes((200, 200)) is not None\n",
        );
        let f2p = f2p();
        let (flag, count) =
            changes_existing_tests(&Reading::new(task("x", GOLD, &format!("{}{renamed}", new_test()), &f2p), vec![]));
        assert!(flag.is_none() && count == 0, "{flag:?}");
        let rewritten = renamed.replace(
            "-def test_invisible_axes():\n+def test_invisible_axes_events():\n",
            "-    assert ax.get_visible()\n+    assert not ax.get_visible()\n",
        );
        let (flag, _) =
            changes_existing_tests(&Reading::new(task("x", GOLD, &format!("{}{rewritten}", new_test()), &f2p), vec![]));
        assert!(flag.is_some(), "a removed assertion outside the FAIL_TO_PASS file is raised");
    }
}
