//! Python projects tested with plain unittest: `python -m unittest -v FILES` (unittest
//! turns a file path into its dotted module), results read from the verbose output
//! ([`parse_verbose_log`]), which Django's runner prints too.
//!
//! Test ids are what the verbose line names, read as SWE-bench's `parse_log_django`
//! reads them, so that published rows and SWE-bench's harness agree with ours:
//! `test_name (module.Class)` (Python 3.11 and later print
//! `test_name (module.Class.test_name)`), or the first line of the test's docstring
//! when it has one (unittest prints the docstring on the line that gets the verdict).
//!
//! The environment is pytest's ([`super::infer`], [`super::image`]) with the test
//! command swapped.

use crate::ecosystem::{Ecosystem, ParsedRun};
use crate::model::TestStatus;

/// Python with `python -m unittest`.
pub struct Unittest;

/// The test command of inferred unittest specs; the runner adds the files.
pub const TEST_COMMAND: &str = "python -m unittest -v";

/// Reads unittest's verbose output (`-v`; Django's runner at `-v 2`) the way
/// SWE-bench's `parse_log_django` does: a line `ID ... ok` passed, `ID ... skipped
/// 'why'` skipped, `ID ... FAIL` failed, `ID ... ERROR` errored, and a line starting
/// with `ok` after a line with ` ... ` passes that line's test (output printed
/// between the test's name and its verdict). Expected failures and unexpected
/// successes are not recorded, as there.
pub fn parse_verbose_log(log: &str) -> ParsedRun {
    let mut run = ParsedRun::default();
    let mut previous: Option<String> = None;
    for line in log.lines() {
        let line = line.trim();
        if line.contains("--version is equivalent to version") {
            run.tests.insert("--version is equivalent to version".into(), TestStatus::Passed);
        }
        if let Some((name, _)) = line.split_once(" ... ") {
            previous = Some(name.to_string());
        }
        for suffix in [" ... ok", " ... OK", " ...  OK"] {
            if let Some(name) = line.strip_suffix(suffix) {
                run.tests.insert(name.to_string(), TestStatus::Passed);
                break;
            }
        }
        if let Some((name, _)) = line.split_once(" ... skipped") {
            run.tests.insert(name.to_string(), TestStatus::Skipped);
        }
        if let Some(name) = line.strip_suffix(" ... FAIL") {
            run.tests.insert(name.to_string(), TestStatus::Failed);
        }
        if let Some(name) = line.strip_suffix(" ... ERROR") {
            run.tests.insert(name.to_string(), TestStatus::Error);
        }
        if line.starts_with("ok") {
            if let Some(name) = &previous {
                run.tests.insert(name.clone(), TestStatus::Passed);
            }
        }
    }
    // Django's runner sometimes prints a multi-line message between a test's name
    // and its `ok` (SWE-bench reads these three forms).
    let interrupted = regex::Regex::new(
        r"(?m)^(.*?)\s\.\.\.\s(?:Testing against Django installed in (?s:.*?) silenced\)\.|Internal Server Error: /.*/|System check identified no issues \(0 silenced\))\nok$",
    )
    .expect("valid regex");
    for capture in interrupted.captures_iter(log) {
        run.tests.insert(capture[1].to_string(), TestStatus::Passed);
    }
    run
}

impl Ecosystem for Unittest {
    fn name(&self) -> &'static str {
        "python-unittest"
    }

    super::shares_pytest_environment!(test_command: TEST_COMMAND);

    /// unittest writes no report: `report` is left unused.
    fn test_invocation(&self, test_command: &str, _report: &str, files: &str) -> String {
        format!("{test_command} {files}")
    }

    fn parse_log(&self, log: &str, _test_files: &[String]) -> ParsedRun {
        parse_verbose_log(log)
    }

    fn harness_test_command(&self, test_command: &str) -> String {
        test_command.to_string()
    }

    /// SWE-bench has no parser named for unittest; `parse_log_django` reads unittest's
    /// verbose output.
    fn harness_log_parser(&self) -> &'static str {
        "parse_log_django"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbose_lines_give_ids_as_swe_bench_reads_them() {
        let log = "\
test_add (tests.test_calc.CalcTests) ... ok
test_sub (tests.test_calc.CalcTests.test_sub) ... FAIL
test_div (tests.test_calc.CalcTests) ... ERROR
test_skip (tests.test_calc.CalcTests) ... skipped 'no network'
test_known (tests.test_calc.CalcTests) ... expected failure
test_doc (tests.test_calc.CalcTests)
Adding zero changes nothing. ... ok
test_noisy (tests.test_calc.CalcTests) ... printed by the test
ok
test_loud (tests.test_calc.CalcTests) ... System check identified no issues (0 silenced).
ok

======================================================================
FAIL: test_sub (tests.test_calc.CalcTests.test_sub)
----------------------------------------------------------------------
";
        let run = parse_verbose_log(log);
        let status = |id: &str| run.tests.get(id).copied();
        assert_eq!(status("test_add (tests.test_calc.CalcTests)"), Some(TestStatus::Passed));
        assert_eq!(status("test_sub (tests.test_calc.CalcTests.test_sub)"), Some(TestStatus::Failed));
        assert_eq!(status("test_div (tests.test_calc.CalcTests)"), Some(TestStatus::Error));
        assert_eq!(status("test_skip (tests.test_calc.CalcTests)"), Some(TestStatus::Skipped));
        assert_eq!(status("test_known (tests.test_calc.CalcTests)"), None, "expected failures are not recorded");
        assert_eq!(status("Adding zero changes nothing."), Some(TestStatus::Passed), "the docstring names it");
        assert_eq!(status("test_noisy (tests.test_calc.CalcTests)"), Some(TestStatus::Passed));
        assert_eq!(status("test_loud (tests.test_calc.CalcTests)"), Some(TestStatus::Passed));
        assert_eq!(run.tests.len(), 7, "{:?}", run.tests);
    }

    #[test]
    fn unittest_runs_the_files_verbosely() {
        assert_eq!(
            Unittest.test_invocation(TEST_COMMAND, "/out/pre.xml", "tests/test_a.py"),
            "python -m unittest -v tests/test_a.py"
        );
        assert_eq!(Unittest.harness_log_parser(), "parse_log_django");
    }
}
