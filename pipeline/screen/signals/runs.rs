//! What only this pipeline has: the validation runs. How the FAIL_TO_PASS tests fail
//! before the fix (an import, attribute, name or compile error on a name, or an
//! assertion on a value), whether they are new tests or changed ones, the gold patch's
//! change coverage, and probe's mutation score, read into a [`TestsReading`] that every
//! record keeps; and `tests_use_new_names` confirmed by the runs: the tests fail before
//! the fix on a name that the gold patch introduces and the issue never mentions (the
//! classic test that rejects other valid fixes), with the run's error line as evidence.
//!
//! The runs' output before the fix is read as a whole (the `pre` section of each run
//! log, between the random-token markers), not test by test: the touched tests that
//! fail before the fix are the FAIL_TO_PASS tests and the tests that fail after it too,
//! and a name counts only when the gold patch defines it.

use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::Reading;
use super::test_patch::test_name;
use crate::git::patch_text::LineKind;
use crate::screen::code::{self, NameKind};
use crate::screen::flags::{Evidence, Flag, FlagCode, Source, quoted_list};
use crate::screen::text::regex;

/// What the screen reads of a task's validation besides its labels.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunEvidence {
    /// Each run's output before the fix (base commit and test patch), in run order.
    pub before_fix: Vec<String>,
    /// The golden tests' change coverage (ΔC), when it was measured.
    pub change_coverage: Option<f64>,
}

impl RunEvidence {
    /// The output of a run log's phase before the fix: what lies between the markers
    /// `@@swe-harvest TOKEN pre begin` and `@@swe-harvest TOKEN pre end`.
    pub fn before_fix_of_log(log: &str) -> Option<&str> {
        static BEGIN: LazyLock<Regex> = LazyLock::new(|| regex(r"(?m)^@@swe-harvest (\S+) pre begin\s*$"));
        let found = BEGIN.captures(log)?;
        let start = found.get(0)?.end();
        let end_marker = format!("@@swe-harvest {} pre end", &found[1]);
        let end = log[start..].find(&end_marker).map(|at| start + at).unwrap_or(log.len());
        Some(&log[start..end])
    }

    /// A hash of the evidence, so that a record can say which runs it read.
    pub fn digest(&self) -> String {
        let text = serde_json::to_string(self).expect("run evidence serializes");
        hex::encode(Sha256::digest(text.as_bytes()))
    }
}

/// How the tests fail before the fix, by the runs' output; stored as its snake_case
/// name (`missing_new_name`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailingBefore {
    /// On a name the gold patch introduces and the issue never mentions.
    MissingNewName,
    /// On a name (import, attribute, name or compile error) that is not one of those.
    MissingName,
    /// On an assertion about a value.
    Assertion,
    /// With another error.
    Error,
    /// The output says nothing this reading knows.
    Unknown,
}

/// What the screen reads of a task's tests, kept with its record (measured against
/// the annotations where runs exist; docs/screen.md).
/// A value not known (no runs, no coverage, not probed) is `null`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TestsReading {
    pub fail_to_pass: usize,
    /// FAIL_TO_PASS tests that the test patch adds; the others existed before it
    /// (changed by it, or not).
    pub new_tests: usize,
    /// `None` when no run output was at hand.
    pub failing_before: Option<FailingBefore>,
    pub scores: TestScores,
}

/// What was measured of the tests, when it was.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TestScores {
    /// The golden tests' change coverage (`validate --coverage`).
    pub change_coverage: Option<f64>,
    /// Probe's mutation score.
    pub mutation_score: Option<f64>,
}

/// Errors that name a missing name, in the languages the pipeline runs: Python's
/// import, attribute, name and keyword errors; Go's, Rust's, TypeScript's and Java's
/// compile errors; JavaScript's `is not a function` and `is not defined`.
static MISSING_NAME: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    [
        r"ImportError: cannot import name '(\w+)'",
        r"AttributeError: .*has no attribute '(\w+)'",
        r"NameError: name '(\w+)' is not defined",
        r"TypeError: .*got an unexpected keyword argument '(\w+)'",
        r"ModuleNotFoundError: No module named '(?:[\w.]+\.)?(\w+)'",
        r"\bundefined: (?:\w+\.)?(\w+)",
        r"has no field or method (\w+)",
        r"unknown field '?(\w+)'? in struct literal",
        r"cannot find (?:function|value|type|struct|macro|trait|module|crate) `(\w+)`",
        r"no method named `(\w+)` found",
        r"no function or associated item named `(\w+)`",
        r"no variant or associated item named `(\w+)`",
        r"no field `(\w+)` on",
        r"unresolved import `(?:[\w:]+::)?(\w+)`",
        r"(?:[\w$]+\.)*([\w$]+) is not a function",
        r"ReferenceError: (\w+) is not defined",
        r"does not provide an export named '(\w+)'",
        r"Property '(\w+)' does not exist on type",
        r"has no exported member '(\w+)'",
        r"Cannot find name '(\w+)'",
        r"symbol:\s+(?:method|class|variable|constructor|interface)\s+(\w+)",
    ]
    .into_iter()
    .map(regex)
    .collect()
});

/// A failed check of a value: Python's `AssertionError` or pytest's `assert`, Rust's
/// `assertion ... failed`, Go's `file_test.go:N:` messages, Jest's `expect(received)`,
/// JUnit's `AssertionFailedError` and `expected:<`.
static ASSERTION_FAILED: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(AssertionError|^E\s+assert\b|assertion .*failed|assertion failed|_test\.go:\d+:|expect\(received\)|AssertionFailedError|ComparisonFailure|expected:\s*<)",
    )
});

/// Another error: an exception, a panic, a compile error.
static OTHER_ERROR: LazyLock<Regex> =
    LazyLock::new(|| regex(r"(\b\w+(Error|Exception)\b|panicked at|error\[E\d+\]|cannot find symbol|\bFAIL\b)"));

/// The names that the runs' errors before the fix say are missing, each with the line
/// that says it, in the order of the output.
pub fn missing_names(output: &str) -> Vec<(String, &str)> {
    let mut out: Vec<(String, &str)> = Vec::new();
    for line in output.lines() {
        for pattern in MISSING_NAME.iter() {
            for found in pattern.captures_iter(line) {
                let name = found[1].to_string();
                if !out.iter().any(|(seen, _)| *seen == name) {
                    out.push((name, line.trim()));
                }
            }
        }
    }
    out
}

/// The names the gold patch introduces that the issue never mentions (and the code
/// before the fix never names), each with the file and line that defines it.
fn new_gold_names<'r>(reading: &'r Reading<'_>) -> Vec<(String, &'r str, &'r crate::git::patch_text::DiffLine<'r>)> {
    let mut out = Vec::new();
    for file in &reading.patch {
        for (definition, defined_at) in code::definitions(file) {
            let name = definition.name;
            let known_before = if definition.kind == NameKind::ConfigKey {
                reading.before.holds(&name)
            } else {
                reading.before.names(&name)
            };
            if known_before || reading.issue.mentions(&name) || out.iter().any(|(seen, _, _)| *seen == name) {
                continue;
            }
            out.push((name, file.path(), defined_at));
        }
    }
    out
}

/// How the tests fail before the fix, by the runs' output (`None` without any).
pub fn failing_before(reading: &Reading<'_>) -> Option<FailingBefore> {
    let runs = reading.task.runs?;
    if runs.before_fix.is_empty() {
        return None;
    }
    let output = runs.before_fix.join("\n");
    let missing = missing_names(&output);
    let new_names = new_gold_names(reading);
    Some(if missing.iter().any(|(name, _)| new_names.iter().any(|(new, _, _)| new == name)) {
        FailingBefore::MissingNewName
    } else if !missing.is_empty() {
        FailingBefore::MissingName
    } else if output.lines().any(|line| ASSERTION_FAILED.is_match(line)) {
        FailingBefore::Assertion
    } else if output.lines().any(|line| OTHER_ERROR.is_match(line)) {
        FailingBefore::Error
    } else {
        FailingBefore::Unknown
    })
}

/// Whether the test patch adds the test of `id` (its definition is an added line),
/// rather than changing one that existed.
pub fn is_new_test(reading: &Reading<'_>, id: &str) -> bool {
    static DEFINES: LazyLock<Regex> =
        LazyLock::new(|| regex(r"^\s*(?:async\s+)?(?:def|fn|func|function|void|public|it|test|describe)\b"));
    let name = test_name(id);
    reading.tests.iter().any(|file| {
        file.lines_of(LineKind::Added).any(|line| {
            DEFINES.is_match(line.text)
                && (code::identifiers(line.text).iter().any(|word| word == name)
                    || (name.contains(' ') && line.text.contains(name)))
        })
    })
}

/// The task's [`TestsReading`].
pub fn tests_reading(reading: &Reading<'_>) -> TestsReading {
    let fail_to_pass = reading.task.fail_to_pass;
    let new_tests = fail_to_pass.iter().filter(|id| is_new_test(reading, id)).count();
    TestsReading {
        fail_to_pass: fail_to_pass.len(),
        new_tests,
        failing_before: failing_before(reading),
        scores: TestScores {
            change_coverage: reading.task.runs.and_then(|runs| runs.change_coverage),
            mutation_score: reading.task.probe.and_then(|probe| probe.mutation_score),
        },
    }
}

/// `tests_use_new_names` as the runs confirm it: the tests fail before the fix on a
/// name the gold patch introduces and the issue never mentions. The flag read from the
/// patches (`from_patches`) gets the runs' error line as evidence for its names, and
/// names only the runs show are added; without runs, it is returned as it was.
pub fn confirm_new_names(reading: &Reading<'_>, from_patches: Option<Flag>) -> Option<Flag> {
    let Some(runs) = reading.task.runs else { return from_patches };
    let output = runs.before_fix.join("\n");
    let missing = missing_names(&output);
    let confirmed: Vec<(String, &str, &str, &crate::git::patch_text::DiffLine<'_>)> = new_gold_names(reading)
        .into_iter()
        .filter(|(name, _, _)| !name.starts_with("test"))
        .filter_map(|(name, file, defined_at)| {
            let (_, line) = missing.iter().find(|(missing, _)| *missing == name)?;
            Some((name, *line, file, defined_at))
        })
        .collect();
    if confirmed.is_empty() {
        return from_patches;
    }
    let names: Vec<String> = confirmed.iter().map(|(name, _, _, _)| name.clone()).collect();
    let mut flag = from_patches.unwrap_or_else(|| Flag {
        code: FlagCode::TestsUseNewNames,
        reason: String::new(),
        evidence: Vec::new(),
        precision: None,
    });
    for (name, line, file, defined_at) in &confirmed {
        let position = runs.before_fix.iter().position(|output| output.contains(line)).unwrap_or(0);
        flag.evidence.push(Evidence::in_list(line, Source::Validation, position));
        if !flag.evidence.iter().any(|evidence| evidence.source == Source::Patch && evidence.text == *name) {
            flag.evidence.push(Evidence::in_diff(name, Source::Patch, file, defined_at));
        }
    }
    let runs_say = format!("the runs before the fix fail on {}", quoted_list(&names, 3));
    flag.reason = if flag.reason.is_empty() {
        format!("{runs_say}, which the gold patch introduces and the issue never mentions")
    } else {
        format!("{}; {runs_say}", flag.reason)
    };
    Some(flag)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::screen::signals::TaskText;

    use crate::screen::signals::test_patch::tests::{GOLD, test_file};

    /// A test that reaches the new method through a helper (the patches alone do not
    /// show the test using the name).
    fn tests() -> String {
        test_file("tests/test_forms.py", &["def test_label():", "    assert label_of(PasswordWidget()) is None"])
    }

    fn run_log(output: &str) -> String {
        format!(
            "@@swe-harvest tok install begin\nok\n@@swe-harvest tok install end 0\n@@swe-harvest tok pre begin\n{output}\n@@swe-harvest tok pre end 1\n@@swe-harvest tok post begin\nall passed\n@@swe-harvest tok post end 0\n"
        )
    }

    fn reading_with<'a>(runs: &'a RunEvidence, f2p: &'a [String], issue: &'a str, tests: &'a str) -> Reading<'a> {
        let mut text = TaskText::of_texts("acme/widgets", issue, GOLD, tests, f2p);
        text.runs = Some(runs);
        Reading::new(text, Vec::new())
    }

    #[test]
    fn the_before_fix_section_is_read_between_its_markers() {
        let log = run_log("E   AttributeError: 'PasswordWidget' object has no attribute 'id_for_label'");
        let section = RunEvidence::before_fix_of_log(&log).unwrap();
        assert!(section.contains("AttributeError") && !section.contains("all passed"), "{section}");
        assert_eq!(RunEvidence::before_fix_of_log("no markers"), None);
    }

    #[test]
    fn missing_names_are_read_in_every_language() {
        for (line, name) in [
            ("ImportError: cannot import name 'parse_header' from 'http'", "parse_header"),
            ("E   AttributeError: 'Widget' object has no attribute 'id_for_label'", "id_for_label"),
            ("NameError: name 'clamp' is not defined", "clamp"),
            ("TypeError: render() got an unexpected keyword argument 'strict'", "strict"),
            ("./clamp_test.go:12:9: undefined: ClampHigh", "ClampHigh"),
            ("w.Label undefined (type Widget has no field or method Label)", "Label"),
            ("error[E0425]: cannot find function `clamp_high` in this scope", "clamp_high"),
            ("error[E0599]: no method named `label` found for struct `Widget`", "label"),
            ("TypeError: widget.idForLabel is not a function", "idForLabel"),
            ("SyntaxError: The requested module './w.js' does not provide an export named 'slugify'", "slugify"),
            ("error TS2339: Property 'label' does not exist on type 'Widget'.", "label"),
            ("  symbol:   method idForLabel(java.lang.String)", "idForLabel"),
        ] {
            let found = missing_names(line);
            assert_eq!(found.first().map(|(found, _)| found.as_str()), Some(name), "{line}");
        }
        assert!(missing_names("AssertionError: 1 != 2").is_empty());
    }

    #[test]
    fn a_run_failing_on_a_new_name_confirms_tests_use_new_names_and_an_assertion_does_not() {
        let f2p = vec!["tests/test_forms.py::test_label".to_string()];
        let missing = RunEvidence {
            before_fix: vec!["E   AttributeError: 'PasswordWidget' object has no attribute 'id_for_label'".into()],
            change_coverage: Some(1.0),
        };
        let tests = tests();
        let reading = reading_with(&missing, &f2p, "The label points nowhere.", &tests);
        assert_eq!(failing_before(&reading), Some(FailingBefore::MissingNewName));
        let flag = confirm_new_names(&reading, None).expect("raised by the runs alone");
        assert_eq!(flag.code, FlagCode::TestsUseNewNames);
        assert!(flag.reason.contains("the runs before the fix fail on `id_for_label`"), "{}", flag.reason);
        assert_eq!(flag.evidence[0].source, Source::Validation);
        assert!(flag.evidence[0].text.contains("has no attribute 'id_for_label'"));
        assert_eq!((flag.evidence[1].source, flag.evidence[1].line), (Source::Patch, Some(13)));
        // The issue names it: an expected name, not a new one.
        let named = reading_with(&missing, &f2p, "PasswordWidget needs id_for_label() returning None.", &tests);
        assert_eq!(failing_before(&named), Some(FailingBefore::MissingName));
        assert!(confirm_new_names(&named, None).is_none());
        // An assertion on a value.
        let assertion = RunEvidence { before_fix: vec!["E   assert 'x' is None".into()], change_coverage: None };
        let reading = reading_with(&assertion, &f2p, "The label points nowhere.", &tests);
        assert_eq!(failing_before(&reading), Some(FailingBefore::Assertion));
        assert!(confirm_new_names(&reading, None).is_none());
        // No runs: nothing to say.
        let text = TaskText::of_texts("acme/widgets", "x", GOLD, &tests, &f2p);
        assert_eq!(failing_before(&Reading::new(text, Vec::new())), None);
    }

    #[test]
    fn the_tests_reading_counts_new_tests_and_carries_coverage_and_mutation_score() {
        let f2p = vec!["tests/test_forms.py::test_label".to_string(), "tests/test_forms.py::test_render".to_string()];
        let runs = RunEvidence { before_fix: vec!["AssertionError".into()], change_coverage: Some(0.5) };
        let outcome =
            crate::model::probe::ProbeOutcome { mutation_score: Some(0.75), surviving_mutants: Vec::new(), viable: 4 };
        let tests = tests();
        let mut text = TaskText::of_texts("acme/widgets", "x", GOLD, &tests, &f2p);
        text.runs = Some(&runs);
        text.probe = Some(&outcome);
        let reading = tests_reading(&Reading::new(text, Vec::new()));
        assert_eq!(
            reading,
            TestsReading {
                fail_to_pass: 2,
                new_tests: 1,
                failing_before: Some(FailingBefore::Assertion),
                scores: TestScores { change_coverage: Some(0.5), mutation_score: Some(0.75) },
            }
        );
    }
}
