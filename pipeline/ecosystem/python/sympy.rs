//! SymPy's own test runner: `bin/test -C --verbose FILES` (no cache, one line per
//! test), as SWE-bench runs it. Results come from that output ([`parse_log`]); a
//! test's id is its function name, SWE-bench's published form. The environment is
//! Python's ([`super::infer`], [`super::image`]) with the test command swapped, and
//! SWE-bench's warning filters (SymPy's runner turns some warnings into failures).

use super::Pytest;
use crate::ecosystem::{Ecosystem, ParsedRun};
use crate::model::TestStatus;

/// SymPy's runner.
pub struct SympyRunner;

/// The test command of inferred specs; the runner adds the files. SWE-bench's, plus
/// a time limit per test function: SymPy's runner skips a test function that runs
/// longer than 180 s (`--timeout`, printed `test_name Timeout T`, which no parser counts: the test gets no verdict).
/// Without it, a test that hangs for some hash seeds (`test_harmonic_rational` of
/// SymPy 1.1 hung in half of our runs of sympy__sympy-13437) holds the whole file until the run's
/// limit and the task is lost as a timeout; SymPy marks its legitimately slow tests
/// `@slow`, which the runner skips anyway. (With `--timeout` the runner does not
/// reseed `random` before each test; SymPy's randomised tests seed their own.)
pub const TEST_COMMAND: &str = "python bin/test -C --verbose --timeout 180";

/// The warning filters of every run.
const WARNINGS: &str = "export PYTHONWARNINGS='ignore::UserWarning,ignore::SyntaxWarning'";

/// Reads `bin/test --verbose` output: lines `test_name ok`, `test_name F` (failed),
/// `test_name E` (error), `test_name f` (expected failure), `test_name s` (skipped).
/// SWE-bench's `parse_log_sympy` reads the first three the same way; its entries
/// `path.py:test_name` (failed, from the failure report's headers) are left out, as
/// the test's own line already says it failed.
pub fn parse_log(log: &str) -> ParsedRun {
    let mut run = ParsedRun::default();
    for line in log.lines() {
        let line = line.trim();
        if !line.starts_with("test_") {
            continue;
        }
        let status = if line.ends_with(" ok") {
            TestStatus::Passed
        } else if line.ends_with(" F") {
            TestStatus::Failed
        } else if line.ends_with(" E") {
            TestStatus::Error
        } else if line.ends_with(" f") {
            TestStatus::Xfail
        } else if line.ends_with(" s") {
            TestStatus::Skipped
        } else {
            continue;
        };
        if let Some(name) = line.split_whitespace().next() {
            run.tests.insert(name.to_string(), status);
        }
    }
    run
}

impl Ecosystem for SympyRunner {
    fn name(&self) -> &'static str {
        "python-sympy"
    }

    super::shares_pytest_environment!(test_command: TEST_COMMAND);

    /// The `test_*.py` files of the diff.
    fn runnable_test_files(&self, diff: &str) -> Vec<String> {
        Pytest
            .runnable_test_files(diff)
            .into_iter()
            .filter(|file| file.rsplit('/').next().is_some_and(|name| name.starts_with("test_")))
            .collect()
    }

    fn script_setup(&self, version: &str) -> String {
        format!("{WARNINGS}\n{}", Pytest.script_setup(version))
    }

    /// SymPy's runner writes no report: `report` is left unused.
    fn test_invocation(&self, test_command: &str, _report: &str, files: &str) -> String {
        format!("{test_command} {files}")
    }

    fn parse_log(&self, log: &str, _test_files: &[String]) -> ParsedRun {
        parse_log(log)
    }

    fn harness_setup(&self, version: &str) -> Vec<String> {
        let mut lines = Pytest.harness_setup(version);
        lines.push(WARNINGS.to_string());
        lines
    }

    fn harness_test_command(&self, test_command: &str) -> String {
        test_command.to_string()
    }

    fn harness_log_parser(&self) -> &'static str {
        "parse_log_sympy"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbose_lines_give_function_names() {
        let log = "\
============================= test process starts ==============================
executable:         /opt/venv/bin/python  (3.9.20-final-0) [CPython]
random seed:        12345

sympy/printing/tests/test_ccode.py[3] 
test_printmethod ok
test_ccode_sinc F
test_ccode_Relational E
test_known f
test_slow s
                                                                          [FAIL]

________________________________________________________________________________
___________ sympy/printing/tests/test_ccode.py:test_ccode_sinc _________________
Traceback (most recent call last):
";
        let run = parse_log(log);
        let status = |id: &str| run.tests.get(id).copied();
        assert_eq!(status("test_printmethod"), Some(TestStatus::Passed));
        assert_eq!(status("test_ccode_sinc"), Some(TestStatus::Failed));
        assert_eq!(status("test_ccode_Relational"), Some(TestStatus::Error));
        assert_eq!(status("test_known"), Some(TestStatus::Xfail));
        assert_eq!(status("test_slow"), Some(TestStatus::Skipped));
        assert_eq!(run.tests.len(), 5, "{:?}", run.tests);
    }

    #[test]
    fn a_test_that_ran_out_of_time_has_no_verdict() {
        let run = parse_log("test_harmonic ok\ntest_harmonic_rational Timeout T\ntest_bell F\n");
        assert_eq!(run.tests.get("test_harmonic_rational"), None);
        assert_eq!(run.tests.len(), 2, "{:?}", run.tests);
    }

    #[test]
    fn only_test_modules_are_run() {
        let diff = "--- a/sympy/core/tests/test_basic.py\n+++ b/sympy/core/tests/test_basic.py\n\
                    --- a/sympy/core/basic.py\n+++ b/sympy/core/basic.py\n";
        assert_eq!(SympyRunner.runnable_test_files(diff), vec!["sympy/core/tests/test_basic.py".to_string()]);
    }
}
