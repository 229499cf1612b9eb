//! The signals: pure functions over one task read once ([`Reading`]), each returning
//! the flag it raises (with its reason and evidence) and the numbers the score is
//! made from. One file per concern: the tests against the issue and the gold patch
//! ([`test_patch`]), the issue itself ([`issue`]), the gold patch's shape ([`patch`]),
//! what probe found ([`probe`]) and what the validation runs say ([`runs`]).

pub mod issue;
pub mod patch;
pub mod probe;
pub mod runs;
pub mod test_patch;

use crate::git::patch_text::{self, DiffFile};

use super::code::CodeBefore;
use super::text::IssueText;

/// A task as the screen reads it: the text fields of its row and its labels.
#[derive(Debug, Clone, Copy)]
pub struct TaskText<'a> {
    /// `owner/name`: links to the repository's own code are not outside it.
    pub repo: &'a str,
    pub problem_statement: &'a str,
    pub hints_text: &'a str,
    pub patch: &'a str,
    pub test_patch: &'a str,
    pub fail_to_pass: &'a [String],
    pub flaky_tests: &'a [String],
    /// The issues the pull request resolves (`issue_numbers`), when known.
    pub issue_numbers: &'a [u64],
    /// Probe's outcome for the task as it is, when it was probed.
    pub probe: Option<&'a crate::model::probe::ProbeOutcome>,
    /// What the validation runs said besides the labels, when they are at hand.
    pub runs: Option<&'a runs::RunEvidence>,
}

impl<'a> TaskText<'a> {
    /// A candidate's texts with its labels; `repo` is its `owner/name`.
    pub fn of_candidate(
        candidate: &'a crate::model::Candidate,
        repo: &'a str,
        fail_to_pass: &'a [String],
        flaky_tests: &'a [String],
        issue_numbers: &'a [u64],
    ) -> TaskText<'a> {
        TaskText {
            repo,
            problem_statement: &candidate.problem_statement,
            hints_text: &candidate.hints_text,
            patch: &candidate.patch,
            test_patch: &candidate.test_patch,
            fail_to_pass,
            flaky_tests,
            issue_numbers,
            probe: None,
            runs: None,
        }
    }

    /// A task of `repo` made of an issue and two patches alone (no hints, no flaky
    /// tests, no issue numbers).
    pub fn of_texts(
        repo: &'a str,
        problem_statement: &'a str,
        patch: &'a str,
        test_patch: &'a str,
        fail_to_pass: &'a [String],
    ) -> TaskText<'a> {
        TaskText {
            repo,
            problem_statement,
            hints_text: "",
            patch,
            test_patch,
            fail_to_pass,
            flaky_tests: &[],
            issue_numbers: &[],
            probe: None,
            runs: None,
        }
    }
}

/// What the signals share: the task's texts parsed once.
#[derive(Debug)]
pub struct Reading<'a> {
    pub task: TaskText<'a>,
    pub issue: IssueText<'a>,
    pub hints: IssueText<'a>,
    /// The gold patch's files.
    pub patch: Vec<DiffFile<'a>>,
    /// The test patch's files.
    pub tests: Vec<DiffFile<'a>>,
    pub before: CodeBefore,
}

impl<'a> Reading<'a> {
    /// Reads a task; `mirror_files` are the files the patches touch as they were at the
    /// base commit (empty without a mirror).
    pub fn new(task: TaskText<'a>, mirror_files: Vec<String>) -> Reading<'a> {
        let patch = patch_text::parse(task.patch);
        let tests = patch_text::parse(task.test_patch);
        let before = CodeBefore::from_diffs(&[&patch, &tests]).with_files(mirror_files);
        Reading {
            task,
            issue: IssueText::new(task.problem_statement),
            hints: IssueText::new(task.hints_text),
            patch,
            tests,
            before,
        }
    }

    /// The test patch's files that hold a FAIL_TO_PASS test: by the test id's path
    /// (pytest's `path::name`, Django's `name (module.Class)`), else by the test's name
    /// appearing in the file's diff. All test files when no id maps to one.
    pub fn files_in_scope(&self) -> Vec<&DiffFile<'a>> {
        let in_scope: Vec<&DiffFile<'a>> = self
            .tests
            .iter()
            .filter(|file| self.task.fail_to_pass.iter().any(|id| test_patch::test_is_in_file(id, file)))
            .collect();
        if in_scope.is_empty() { self.tests.iter().collect() } else { in_scope }
    }
}

/// `ln(1 + x)`: how counts enter the score, so that the tenth name adds less than the first.
pub fn log_count(count: usize) -> f64 {
    (count as f64).ln_1p()
}

/// A one-line fix of `calc.add`: the gold patch of the signals' tests.
#[cfg(test)]
const CALC_FIX: &str = "\
diff --git a/calc.py b/calc.py
--- a/calc.py
+++ b/calc.py
@@ -1,2 +1,2 @@
 def add(a, b):
-    return a - b
+    return a + b
";
