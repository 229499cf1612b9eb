//! The screen's flags: a closed set of codes (each spelled once, in [`FlagCode::as_str`],
//! the string that stores, rows and releases hold), and a raised flag with its one-line
//! reason and its evidence: the exact strings a review page highlights and where each
//! one is (the issue, the hints, the gold patch, the test patch, with file and line).
//!
//! The strings are a stored contract, like drop reasons: a code is never renamed, only
//! added.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// What a flag says about a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FlagCode {
    /// FAIL_TO_PASS tests use names (functions, classes, methods, parameters, config
    /// keys) that the gold patch introduces and the issue never mentions.
    TestsUseNewNames,
    /// The tests assert exact strings (messages, output) found neither in the issue nor
    /// in the code before the fix.
    TestsAssertUnseenStrings,
    /// The issue holds the solution: the gold patch's changed lines, or a diff.
    SolutionInIssue,
    /// The issue is too thin to act on: no expected behaviour, no reproduction, no error.
    IssueTooThin,
    /// The issue needs something outside the repository: a link's content, an image, a video.
    NeedsExternalResource,
    /// The pull request resolves several issues, or the issue asks for several changes.
    SeveralIssues,
    /// The issue is not written in English.
    NotEnglish,
    /// The test patch changes what existing tests expect beyond the issue's scope.
    ChangesExistingTests,
    /// The gold patch touches many files or mixes in unrelated changes (formatting,
    /// renames).
    SprawlingPatch,
    /// FAIL_TO_PASS is huge, or mostly tests that the test patch does not touch.
    FailToPassUnrelated,
    /// The new tests expect an exception type (`raises(X)`, `assertRaises(X)`) that
    /// neither the issue nor the hints name.
    TestsExpectUnnamedExceptions,
    /// Tests of the task gave different results across validation runs.
    FlakyTests,
    /// A wrong fix derived from the gold patch (probe's mutant) passes every
    /// FAIL_TO_PASS and PASS_TO_PASS test: the tests never check what it breaks.
    WeakTests,
}

impl FlagCode {
    /// Every code, in declaration order.
    pub const ALL: [FlagCode; 13] = [
        FlagCode::TestsUseNewNames,
        FlagCode::TestsAssertUnseenStrings,
        FlagCode::SolutionInIssue,
        FlagCode::IssueTooThin,
        FlagCode::NeedsExternalResource,
        FlagCode::SeveralIssues,
        FlagCode::NotEnglish,
        FlagCode::ChangesExistingTests,
        FlagCode::SprawlingPatch,
        FlagCode::FailToPassUnrelated,
        FlagCode::FlakyTests,
        FlagCode::WeakTests,
        FlagCode::TestsExpectUnnamedExceptions,
    ];

    /// The stored code.
    pub fn as_str(self) -> &'static str {
        match self {
            FlagCode::TestsUseNewNames => "tests_use_new_names",
            FlagCode::TestsAssertUnseenStrings => "tests_assert_unseen_strings",
            FlagCode::SolutionInIssue => "solution_in_issue",
            FlagCode::IssueTooThin => "issue_too_thin",
            FlagCode::NeedsExternalResource => "needs_external_resource",
            FlagCode::SeveralIssues => "several_issues",
            FlagCode::NotEnglish => "not_english",
            FlagCode::ChangesExistingTests => "changes_existing_tests",
            FlagCode::SprawlingPatch => "sprawling_patch",
            FlagCode::FailToPassUnrelated => "fail_to_pass_unrelated",
            FlagCode::FlakyTests => "flaky_tests",
            FlagCode::WeakTests => "weak_tests",
            FlagCode::TestsExpectUnnamedExceptions => "tests_expect_unnamed_exceptions",
        }
    }

    /// What the flag means, in one line (the dataset card's legend).
    pub fn meaning(self) -> &'static str {
        match self {
            FlagCode::TestsUseNewNames => {
                "FAIL_TO_PASS tests use names that the gold patch introduces and the issue never mentions"
            }
            FlagCode::TestsAssertUnseenStrings => {
                "the tests assert exact strings found neither in the issue nor in the code before the fix"
            }
            FlagCode::SolutionInIssue => "the issue holds the solution (the gold patch's changed lines or a diff)",
            FlagCode::IssueTooThin => "the issue gives no expected behaviour, no reproduction and no error",
            FlagCode::NeedsExternalResource => "the issue needs a link's content, an image or a video",
            FlagCode::SeveralIssues => {
                "the pull request resolves several issues, or the issue asks for several changes"
            }
            FlagCode::NotEnglish => "the issue is not written in English",
            FlagCode::ChangesExistingTests => "the test patch changes what existing tests expect beyond the issue",
            FlagCode::SprawlingPatch => "the gold patch touches many files or mixes in formatting or renames",
            FlagCode::FailToPassUnrelated => "FAIL_TO_PASS is huge or mostly tests the test patch does not touch",
            FlagCode::FlakyTests => "tests of the task gave different results across validation runs",
            FlagCode::WeakTests => "a wrong fix derived from the gold patch (probe's mutant) passes every listed test",
            FlagCode::TestsExpectUnnamedExceptions => {
                "the tests expect an exception type that neither the issue nor the hints name"
            }
        }
    }
}

/// A string that names no flag.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{code}` is not a screen flag; known: {known}")]
pub struct UnknownFlag {
    pub code: String,
    pub known: String,
}

impl FromStr for FlagCode {
    type Err = UnknownFlag;
    fn from_str(code: &str) -> Result<Self, Self::Err> {
        FlagCode::ALL.into_iter().find(|flag| flag.as_str() == code).ok_or_else(|| UnknownFlag {
            code: code.to_string(),
            known: FlagCode::ALL.map(FlagCode::as_str).join(", "),
        })
    }
}

impl fmt::Display for FlagCode {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.as_str())
    }
}

impl AsRef<str> for FlagCode {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

crate::spelled::serde_by_spelling!(FlagCode);

/// Which text of the task a piece of evidence is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// `problem_statement`.
    Issue,
    /// `hints_text`.
    Hints,
    /// The gold patch, `patch`.
    Patch,
    /// `test_patch`.
    TestPatch,
    /// The FAIL_TO_PASS list.
    FailToPass,
    /// The validation runs (flaky tests).
    Validation,
    /// Probe's surviving mutants (the text is the mutant's diff against the base commit).
    Probe,
}

/// One exact string to highlight, and where it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Evidence {
    /// The string, exactly as it appears at that place.
    pub text: String,
    pub source: Source,
    /// For `patch` and `test_patch`: the file of the diff.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// For `patch` and `test_patch`: the line in that file (the new file; the old one
    /// for a removed line). For `issue` and `hints`: the line of that text, from 1.
    /// For lists: the position in the list, from 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// For `patch` and `test_patch`: the line of the diff text itself, from 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff_line: Option<u32>,
}

impl Evidence {
    /// A string in the issue or the hints, at a line of that text.
    pub fn in_text(text: &str, source: Source, line: u32) -> Evidence {
        Evidence { text: text.to_string(), source, file: None, line: Some(line), diff_line: None }
    }

    /// A string on one line of a diff.
    pub fn in_diff(text: &str, source: Source, file: &str, line: &crate::git::patch_text::DiffLine<'_>) -> Evidence {
        Evidence {
            text: text.to_string(),
            source,
            file: Some(file.to_string()),
            line: Some(line.file_line()),
            diff_line: Some(line.diff_line),
        }
    }

    /// An entry of a list (FAIL_TO_PASS, the flaky tests), at its position.
    pub fn in_list(text: &str, source: Source, position: usize) -> Evidence {
        Evidence { text: text.to_string(), source, file: None, line: Some(position as u32 + 1), diff_line: None }
    }
}

/// A raised flag.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Flag {
    pub code: FlagCode,
    /// One line that names the evidence (the identifier, the string, the URL).
    pub reason: String,
    pub evidence: Vec<Evidence>,
    /// How often the annotators filtered out the development tasks that raise this
    /// flag ([`super::precision`]); set by the screen for every flag it raises.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision: Option<FlagPrecision>,
}

/// A flag's measured precision: of the development tasks raising it, how many careful
/// annotators filtered out. `precision` is `None` when no development task raises it
/// (the flag is not measured there, and the reason says so wherever it is shown).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FlagPrecision {
    pub precision: Option<f64>,
    pub filtered_out: usize,
    pub tasks: usize,
    /// The set it was measured on: `development` (see docs/screen.md).
    pub set: String,
}

impl FlagPrecision {
    /// `precision 0.88 (7 of 8 development tasks filtered out)`, or `not measured (no
    /// development task raises it)`.
    pub fn describe(&self) -> String {
        match self.precision {
            Some(precision) => format!(
                "precision {precision:.2} ({} of {} {} tasks raising it filtered out)",
                self.filtered_out, self.tasks, self.set
            ),
            None => format!("precision not measured (no {} task raises it)", self.set),
        }
    }
}

/// `a`, `a and b`, `a, b and 3 more`: names quoted for a one-line reason.
pub(crate) fn quoted_list(items: &[String], shown: usize) -> String {
    let quoted: Vec<String> = items.iter().take(shown).map(|item| format!("`{}`", one_line(item, 80))).collect();
    let more = items.len().saturating_sub(shown);
    match (quoted.len(), more) {
        (0, _) => String::new(),
        (1, 0) => quoted[0].clone(),
        (_, 0) => format!("{} and {}", quoted[..quoted.len() - 1].join(", "), quoted[quoted.len() - 1]),
        (_, more) => format!("{} and {more} more", quoted.join(", ")),
    }
}

/// `text` on one line, cut to `limit` characters with an ellipsis.
pub(crate) fn one_line(text: &str, limit: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= limit {
        flat
    } else {
        let cut: String = flat.chars().take(limit.saturating_sub(1)).collect();
        format!("{cut}…")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The codes as stores and releases hold them; a changed string would change the
    /// meaning of stored data.
    const STORED: [&str; 13] = [
        "tests_use_new_names",
        "tests_assert_unseen_strings",
        "solution_in_issue",
        "issue_too_thin",
        "needs_external_resource",
        "several_issues",
        "not_english",
        "changes_existing_tests",
        "sprawling_patch",
        "fail_to_pass_unrelated",
        "flaky_tests",
        "weak_tests",
        "tests_expect_unnamed_exceptions",
    ];

    #[test]
    fn every_code_round_trips_and_keeps_its_stored_string() {
        assert_eq!(FlagCode::ALL.map(FlagCode::as_str), STORED);
        for flag in FlagCode::ALL {
            assert_eq!(flag.as_str().parse::<FlagCode>().unwrap(), flag);
            let json = serde_json::to_string(&flag).unwrap();
            assert_eq!(serde_json::from_str::<FlagCode>(&json).unwrap(), flag);
            assert!(!flag.meaning().is_empty());
        }
        let error = "tests_use_old_names".parse::<FlagCode>().unwrap_err().to_string();
        assert!(error.contains("tests_use_old_names") && error.contains("tests_use_new_names"), "{error}");
    }

    #[test]
    fn lists_are_quoted_and_cut() {
        let items: Vec<String> = ["a", "b", "c", "d"].map(String::from).to_vec();
        assert_eq!(quoted_list(&items[..1], 3), "`a`");
        assert_eq!(quoted_list(&items[..2], 3), "`a` and `b`");
        assert_eq!(quoted_list(&items, 2), "`a`, `b` and 2 more");
        assert_eq!(one_line("x\n  y", 10), "x y");
        assert_eq!(one_line("abcdefghijkl", 5), "abcd…");
    }
}
