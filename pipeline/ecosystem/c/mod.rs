//! C and C++ projects tested with `make check` (automake's test harness, or a plain
//! Makefile's `check`/`test` target) or CTest: recognised by a top-level
//! `configure.ac`/`configure.in`, `CMakeLists.txt` or Makefile (asked last of all
//! ecosystems: many projects of other languages carry a Makefile), the build system,
//! the compiler and the `-dev` packages of the libraries it looks for inferred by
//! [`infer`], the repository built once at the environment commit into the image and
//! every run started from that warm tree ([`image`]), results read by [`results`].
//!
//! Test ids (decision): automake's test names as it prints them (`PASS: tests/jqtest`:
//! the `TESTS` entry, relative to the folder of the Makefile that runs it), which is
//! how Multi-SWE-bench names jq's tests (`f2p_tests`: `tests/jqtest`, `tests/shtest`)
//! and what SWE-bench 5.x's `parse_log_jq` reads; CTest's test names (`add_test`'s
//! `NAME`), or the GoogleTest cases a test's output reports, or a doctest program's
//! cases from one more run of it (`case > subcase`, [`results`]);
//! for a plain Makefile's target, the `RESULT: ID` lines its own harness prints (zstd's
//! `cli-tests/run.py`), else `make-<target>` (its exit code); for a Tcl harness
//! (Redis's `./runtest`), its test names (`GETRANGE against string value`); for a
//! harness over a build in a folder ([`harness`]: micropython's `tests/run-tests.py`
//! over `ports/unix`), the tests as it prints them (`basics/int_big.py`).
//!
//! Which tests run (decision): a test file of a C project is seldom the test that
//! runs (jq's `tests/jq.test` is data that the script `tests/jqtest` reads), so the
//! helper chooses at run time, in the container: automake's `TESTS` entries (as the
//! Makefile of that phase declares them, after a patched `Makefile.am` is taken in)
//! that a touched file selects: the entry is a touched file, or the program built
//! from a touched source (`tests/foo` from `tests/foo.c`), or a script that names a
//! touched file; CTest's tests whose command names a touched file; a plain Makefile's
//! targets whose recipe runs a touched file, the program of a touched source, or a
//! harness script in a folder above a touched file. When none is
//! selected, every test runs (`make -k check`, `ctest`). A test that a patch adds
//! runs only once the build knows it (jq's `tests/uritest`, which the gold patch adds
//! to `TESTS`): absent before, passing after, it is FAIL_TO_PASS (Multi-SWE-bench's
//! `n2p`).

pub mod harness;
pub mod image;
pub mod infer;
pub mod results;
pub mod runtimes;

use super::{Ecosystem, ParsedRun, Parts};
use crate::git::diff::files_changed_by;

/// The ecosystem's name in environment specs, and the language.
pub const NAME: &str = "c";

/// C and C++ with make or CTest.
pub struct MakeCheck;

/// Extensions of other languages' sources: a test patch that touches one is not C's.
const OTHER_LANGUAGES: &[&str] = &[
    ".py", ".js", ".ts", ".jsx", ".tsx", ".mjs", ".cjs", ".go", ".rs", ".java", ".kt", ".rb", ".php", ".cs", ".swift",
];

/// Whether a path is a test file of a C project: under a folder named `t` or whose
/// name holds `test` (`tests`, `testsuite`, Catch2's `SelfTest/UsageTests`), or a file
/// whose name starts or ends with `test` or has a `.test`/`.tests` part (`test_x.c`,
/// `x_test.cc`, `jq.test`, `Approx.tests.cpp`).
pub fn is_c_test_path(path: &str) -> bool {
    let components: Vec<&str> = path.split('/').collect();
    let (name, folders) = components.split_last().expect("split yields one part");
    let stem = name.split('.').next().unwrap_or_default().to_ascii_lowercase();
    let parts: Vec<String> = name.to_ascii_lowercase().split('.').map(str::to_string).collect();
    folders.iter().any(|folder| *folder == "t" || folder.to_ascii_lowercase().contains("test"))
        || stem.starts_with("test")
        || stem.ends_with("test")
        || parts[1..].iter().any(|part| part == "test" || part == "tests")
}

/// The test files of a diff: none when it touches another language's sources.
pub fn c_test_files(diff: &str) -> Vec<String> {
    let files = files_changed_by(diff);
    if files.iter().any(|file| OTHER_LANGUAGES.iter().any(|extension| file.ends_with(extension))) {
        return Vec::new();
    }
    files.into_iter().filter(|file| is_c_test_path(file)).collect()
}

impl Ecosystem for MakeCheck {
    fn name(&self) -> &'static str {
        NAME
    }

    fn recognises(&self, paths: &[String]) -> bool {
        paths.iter().any(|path| {
            matches!(
                path.as_str(),
                "configure.ac" | "configure.in" | "CMakeLists.txt" | "Makefile" | "GNUmakefile" | "makefile"
            )
        })
    }

    fn project_files(&self) -> &'static str {
        "C/C++: configure.ac, configure.in, CMakeLists.txt, Makefile, GNUmakefile, makefile"
    }

    fn runtime_needed(
        &self,
        _files: &super::RepoFiles,
        date: chrono::DateTime<chrono::Utc>,
        runtimes: &[String],
    ) -> Option<super::RuntimeNeed> {
        infer::runtime_needed(date, runtimes)
    }

    fn parts(&self) -> &'static Parts {
        super::language_parts!(runnable_test_files: c_test_files)
    }

    /// A harness over a build in a folder runs the touched files of its `tests` folder,
    /// whatever their language (micropython's tests are Python scripts: [`harness`]).
    fn tests_to_run(&self, test_patch: &str, spec: &crate::model::EnvironmentSpec) -> Vec<String> {
        if harness::is_harness_command(&spec.test_command) {
            harness::test_files(test_patch)
        } else {
            super::default_tests_to_run(self, test_patch, spec)
        }
    }

    fn test_invocation(&self, test_command: &str, report: &str, files: &str) -> String {
        format!("bash {} {report} {test_command} -- {files}", image::C_TEST_HELPER)
    }

    /// CTest's JUnit XML, or the helper's joined `.trs` files of automake.
    fn parse_report(&self, report: &str, _test_files: &[String]) -> ParsedRun {
        if report.trim_start().starts_with('<') {
            results::parse_ctest_junit(report)
        } else {
            results::parse_trs_report(report)
        }
    }

    fn parse_log(&self, log: &str, _test_files: &[String]) -> ParsedRun {
        results::parse_automake_log(log)
    }

    /// A CTest fixture's setup that found no network, and the tests that require it,
    /// with the cases their programs reported (nlohmann/json's every test requires
    /// the fixture that clones its test data).
    fn read_network_failures(&self, log: &str, run: &mut ParsedRun) {
        let (setups, dependents) = results::offline_fixtures(log);
        run.network_failures.extend(setups);
        let cases: Vec<String> =
            run.part_of.iter().filter(|(_, test)| dependents.contains(*test)).map(|(case, _)| case.clone()).collect();
        run.network_dependents.extend(dependents);
        run.network_dependents.extend(cases);
    }

    /// The helper's own words on which tests it chose (the module's "Which tests run").
    fn test_selection(&self, log: &str) -> Option<String> {
        results::test_selection(log)
    }

    /// The same helper as the validation runs, its output cut to the result lines
    /// (`PASS: ID`), which is what `parse_log_jq` reads: it stops at any other line of
    /// the shape `WORD: WORD` (make's and the compiler's output has some). The
    /// `swe-harvest results:` line stays, so that our own reading of the log takes
    /// ids with spaces (a Tcl harness's test names) after it.
    fn harness_test_command(&self, test_command: &str) -> String {
        format!(
            "swe_harvest_c_test() {{ bash {} /tmp/swe-harvest-c-report {test_command} -- \"$@\" > /tmp/swe-harvest-c-test.log 2>&1; \
             sed -n '/^swe-harvest results:$/,$p' /tmp/swe-harvest-c-test.log | grep -E '^(swe-harvest results:$|(PASS|FAIL|SKIP|XFAIL|ERROR): )'; }}; swe_harvest_c_test",
            image::C_TEST_HELPER
        )
    }

    fn harness_log_parser(&self) -> &'static str {
        "parse_log_jq"
    }

    /// Multi-SWE-bench's parsers of CTest output publish the names in lower case
    /// (Catch2's `RunTests` as `runtests`); SWE-bench's doctest parser names a nested
    /// subcase by its test case and its own name alone (`case > inner` for our
    /// `case > outer > inner`).
    fn published_forms(&self, id: &str) -> Vec<String> {
        let mut forms = Vec::new();
        let lower = id.to_lowercase();
        if lower != id {
            forms.push(lower);
        }
        let parts: Vec<&str> = id.split(results::DOCTEST_SEPARATOR).collect();
        if let [case, _, .., inner] = parts.as_slice() {
            forms.push(format!("{case}{}{inner}", results::DOCTEST_SEPARATOR));
        }
        forms
    }

    /// A doctest subcase's enclosing subcases and its test case (`case > outer` and
    /// `case` for `case > outer > inner`): SWE-bench's doctest parser publishes an
    /// enclosing subcase too, which holds ours.
    fn published_parents(&self, id: &str) -> Vec<String> {
        let parts: Vec<&str> = id.split(results::DOCTEST_SEPARATOR).collect();
        (1..parts.len()).rev().map(|n| parts[..n].join(results::DOCTEST_SEPARATOR)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn published_forms_are_the_lower_case_name() {
        assert_eq!(MakeCheck.published_forms("RunTests"), vec!["runtests".to_string()]);
        assert!(MakeCheck.published_forms("tests/jqtest").is_empty());
    }

    /// SWE-bench's doctest parser: every subcase at any depth as `case > subcase`.
    #[test]
    fn a_nested_doctest_subcase_is_published_by_its_own_name_under_its_case_and_held_by_the_subcases_around_it() {
        assert_eq!(MakeCheck.published_forms("parse > object > empty"), ["parse > empty"]);
        assert!(MakeCheck.published_forms("parse > empty").is_empty());
        assert_eq!(MakeCheck.published_parents("parse > object > empty"), ["parse > object", "parse"]);
        assert_eq!(MakeCheck.published_parents("parse > empty"), ["parse"]);
        assert!(MakeCheck.published_parents("Add.Small").is_empty());
    }
    use crate::ecosystem::ResultsSource;
    use crate::ecosystem::fixtures::diff_of;

    #[test]
    fn c_projects_are_recognised_by_their_build_files_at_the_root() {
        crate::ecosystem::fixtures::assert_recognition(
            &MakeCheck,
            &[&["configure.ac", "src/jq.h"], &["CMakeLists.txt"]],
            &[&["src/Makefile", "README"]],
        );
    }

    #[test]
    fn test_files_are_under_test_folders_or_named_for_tests_and_never_another_languages() {
        assert_eq!(
            c_test_files(&diff_of(&[
                "tests/jq.test",
                "tests/shtest",
                "src/builtin.c",
                "docs/manual.yml",
                "src/test_x.c",
                "projects/SelfTest/UsageTests/Approx.tests.cpp",
                "src/Approx.cpp"
            ])),
            vec![
                "tests/jq.test".to_string(),
                "tests/shtest".to_string(),
                "src/test_x.c".to_string(),
                "projects/SelfTest/UsageTests/Approx.tests.cpp".to_string()
            ]
        );
        assert!(c_test_files(&diff_of(&["tests/test_x.py", "tests/data/input"])).is_empty(), "a Python row");
        // The released `language` of jq's rows, and of no other language's.
        assert_eq!(crate::ecosystem::language_of_test_patch(&diff_of(&["tests/jq.test"])), "c");
        assert_eq!(crate::ecosystem::language_of_test_patch(&diff_of(&["tests/shtest", "tests/uritest"])), "c");
        assert_eq!(crate::ecosystem::language_of_test_patch(&diff_of(&["tests/test_x.py", "tests/x.txt"])), "python");
    }

    /// The cases of a CTest test that requires a fixture whose setup found no network
    /// depend on it as their test does.
    #[test]
    fn the_cases_of_a_test_that_requires_an_offline_fixture_depend_on_it_too() {
        let report = "<testsuite>\n\t<testcase name=\"unit\" status=\"fail\">\n\t</testcase>\n</testsuite>\n\
                      <!-- swe-harvest doctest cases -->\nunit\tFAIL: reads > data\nunit\tPASS: add > small\n";
        let log = "swe-harvest: fixture setup download_test_data: fatal: unable to access 'https://example.invalid/data.git/': Could not resolve host: example.invalid\n\
                   Failed test dependencies: download_test_data\n1/1 Test #1: unit .....***Not Run   0.00 sec\n";
        let (run, _) = MakeCheck.parse_results(Some(report), log, &[]);
        assert_eq!(
            run.network_dependents.iter().map(String::as_str).collect::<Vec<_>>(),
            ["add > small", "reads > data", "unit"]
        );
    }

    #[test]
    fn results_come_from_the_report_and_else_from_the_log() {
        let (run, source) = MakeCheck.parse_results(Some(":swe-harvest-test: tests/a\n:test-result: FAIL\n"), "", &[]);
        assert_eq!((source, run.tests.len()), (ResultsSource::Report, 1));
        let (run, source) = MakeCheck.parse_results(Some(""), "PASS: make-check\n", &[]);
        assert_eq!(source, ResultsSource::Log);
        assert_eq!(run.tests.keys().collect::<Vec<_>>(), vec!["make-check"]);
    }
}
