//! Results of C test runs: automake's `.trs` files as the helper joins them (each
//! after a line `:swe-harvest-test: ID`), CTest's JUnit XML (`ctest --output-junit`,
//! CMake 3.21 and later), or the log (the fallback, and what SWE-bench's `parse_log_jq`
//! reads): automake's `PASS: ID` lines, which the helper also prints for CTest and for
//! a plain make target.
//!
//! Automake's results: `PASS`, `FAIL`, `SKIP`, `XFAIL` (an expected failure, a pass
//! for grading), `XPASS` (an unexpected pass, a failure for automake), `ERROR` (the
//! test could not run). A `.trs` of a TAP test holds one `:test-result:` per test
//! case and a `:global-test-result:` for the script, which is its result.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use quick_xml::Reader;
use quick_xml::events::Event;
use regex::Regex;

use crate::ecosystem::ParsedRun;
use crate::model::TestStatus;

/// How the helper's statements of which tests it chose begin (test-helper.sh): the
/// touched files mapped to automake tests, CTest tests or a plain Makefile's targets,
/// or nothing mapped and every test run.
const SELECTION_STATEMENTS: &[&str] = &[
    "automake tests selected by the touched files: ",
    "no automake test named by the touched files;",
    "CTest tests that ",
    "no CTest test runs an executable of the touched files or names one;",
    "make targets that run the touched files: ",
    "no make target runs the touched files;",
    "Tcl harness units of the touched files: ",
    "harness tests selected by the touched files: ",
    "no touched file is a test of the harness;",
];

/// The helper's statements of which tests it chose in this run (`CTest tests that run
/// the executables of the targets that compile the touched files (unit): test-unit`),
/// joined; `None` when it made none (an older helper).
pub fn test_selection(log: &str) -> Option<String> {
    let mut statements: Vec<&str> = Vec::new();
    for line in log.lines() {
        let Some(statement) = line.trim().strip_prefix("swe-harvest: ") else { continue };
        if SELECTION_STATEMENTS.iter().any(|start| statement.starts_with(start)) && !statements.contains(&statement) {
            statements.push(statement);
        }
    }
    (!statements.is_empty()).then(|| statements.join("; "))
}

/// An automake result word as a status.
fn automake_status(word: &str) -> Option<TestStatus> {
    Some(match word {
        "PASS" => TestStatus::Passed,
        "FAIL" => TestStatus::Failed,
        "SKIP" => TestStatus::Skipped,
        "XFAIL" => TestStatus::Xfail,
        "XPASS" => TestStatus::Xpass,
        "ERROR" => TestStatus::Error,
        _ => return None,
    })
}

/// How bad a status is, to keep the worst of several results of one test.
fn rank(status: TestStatus) -> u8 {
    match status {
        TestStatus::Error => 5,
        TestStatus::Failed => 4,
        TestStatus::Xpass => 3,
        TestStatus::Passed => 2,
        TestStatus::Xfail => 1,
        TestStatus::Skipped => 0,
    }
}

/// The tests of the helper's automake report.
pub fn parse_trs_report(report: &str) -> ParsedRun {
    let mut run = ParsedRun::default();
    let mut current: Option<String> = None;
    let mut global: Option<TestStatus> = None;
    let mut worst: Option<TestStatus> = None;
    let finish = |id: Option<String>, global: Option<TestStatus>, worst: Option<TestStatus>, run: &mut ParsedRun| {
        if let (Some(id), Some(status)) = (id, global.or(worst)) {
            run.tests.insert(id, status);
        }
    };
    for line in report.lines() {
        if let Some(id) = line.strip_prefix(":swe-harvest-test: ") {
            finish(current.take(), global.take(), worst.take(), &mut run);
            current = Some(id.trim().to_string());
        } else if let Some(word) = line.strip_prefix(":global-test-result: ") {
            global = automake_status(word.trim());
        } else if let Some(status) = line
            .strip_prefix(":test-result: ")
            .and_then(|word| automake_status(word.split_whitespace().next().unwrap_or_default()))
        {
            worst = Some(worst.map_or(status, |known| if rank(status) > rank(known) { status } else { known }));
        }
    }
    finish(current, global, worst, &mut run);
    run
}

/// The cases a GoogleTest program's output reports (`[       OK ] Suite.Case (3 ms)`,
/// `[  FAILED  ] Suite.Case (0 ms)`, `[  SKIPPED ] ...`): the lines with a time, not
/// the summary's list of failures.
fn googletest_cases(output: &str) -> Vec<(String, TestStatus)> {
    // Compiled once: it is asked of every test case of every CTest report.
    static LINE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^\[\s*(OK|FAILED|SKIPPED)\s*\] ([A-Za-z_][\w/.-]*\.[\w/.-]+)(?:, where .*)? \(\d+ ms\)$")
            .expect("valid regex")
    });
    let line = &*LINE;
    output
        .lines()
        .filter_map(|text| {
            let captures = line.captures(text.trim_end())?;
            let status = match &captures[1] {
                "OK" => TestStatus::Passed,
                "FAILED" => TestStatus::Failed,
                _ => TestStatus::Skipped,
            };
            Some((captures[2].to_string(), status))
        })
        .collect()
}

/// How the helper joins a doctest case's test case and subcases into an id (the
/// form of SWE-bench's doctest parser, `Test case > subcase`).
pub const DOCTEST_SEPARATOR: &str = " > ";

/// The line after which the helper's report lists the cases of doctest programs,
/// after CTest's XML (test-helper.sh's `DOCTEST_REPORT_MARKER`): one
/// `TEST<TAB>RESULT: ID` line each, ID as SWE-bench's doctest parser names a case
/// (`basic usage > conversion to json via free-functions`). CTest's XML never holds
/// the line: it escapes every `<` of a test's output.
const DOCTEST_CASES_MARKER: &str = "<!-- swe-harvest doctest cases -->";

/// The tests of the helper's CTest report: CTest's JUnit XML ([`parse_ctest_junit_xml`]),
/// then each doctest program's test replaced by the cases the helper listed after it
/// (decision, 2026-12-07, docs/languages/c.md: as a GoogleTest program's, each case
/// keeping the CTest test that ran it; SWE-bench Multilingual names nlohmann/json's
/// doctest subcases where CTest runs one program per file).
pub fn parse_ctest_junit(report: &str) -> ParsedRun {
    let (xml, doctest) = match report.rfind(DOCTEST_CASES_MARKER) {
        Some(at) => (&report[..at], &report[at + DOCTEST_CASES_MARKER.len()..]),
        None => (report, ""),
    };
    let mut run = parse_ctest_junit_xml(xml);
    for line in doctest.lines() {
        let Some((test, result)) = line.split_once('\t') else { continue };
        let Some((word, case)) = result.split_once(": ") else { continue };
        let Some(status) = automake_status(word) else { continue };
        if case.trim().is_empty() {
            continue;
        }
        in_place_of(&mut run, test, case, status);
        // A failed case of a program whose output named a network error failed for
        // want of it too.
        if matches!(status, TestStatus::Failed | TestStatus::Error) && run.network_failures.contains(test) {
            run.network_failures.insert(case.to_string());
        }
    }
    run
}

/// A case of a program (a GoogleTest or doctest case) in place of the CTest `test`
/// that ran it, keeping that test as its `part_of`.
fn in_place_of(run: &mut ParsedRun, test: &str, case: &str, status: TestStatus) {
    run.tests.remove(test);
    run.durations.remove(test);
    run.record(case, status);
    run.part_of.insert(case.to_string(), test.to_string());
}

/// The tests of CTest's JUnit XML: `<testcase name=... status="run|fail|notrun|disabled">`,
/// with `<failure>` or `<skipped>` inside. A test whose output (`<system-out>`) reports
/// GoogleTest cases is replaced by them (decision, 2026-11-27: c-ares's CTest runs one
/// GoogleTest program, `arestest`, and the published ids are its cases,
/// `LibraryTest.ParseMultipleOptRejected`); a case the program never reached (it
/// crashed first) has no result.
fn parse_ctest_junit_xml(xml: &str) -> ParsedRun {
    let mut run = ParsedRun::default();
    let mut reader = Reader::from_str(xml);
    let mut current: Option<(String, TestStatus)> = None;
    let mut output = String::new();
    loop {
        match reader.read_event() {
            Ok(Event::Start(element)) | Ok(Event::Empty(element)) if element.name().as_ref() == b"testcase" => {
                let mut name = None;
                let mut status = TestStatus::Passed;
                let mut time = None;
                for attribute in element.attributes().flatten() {
                    let value = attribute.unescape_value().map(|value| value.into_owned()).unwrap_or_default();
                    match attribute.key.as_ref() {
                        b"name" => name = Some(value),
                        b"status" => {
                            status = match value.as_str() {
                                "fail" => TestStatus::Failed,
                                "notrun" | "disabled" => TestStatus::Skipped,
                                _ => TestStatus::Passed,
                            }
                        }
                        b"time" => time = value.parse::<f64>().ok(),
                        _ => {}
                    }
                }
                if let Some(name) = name {
                    if let Some(time) = time {
                        run.durations.insert(name.clone(), time);
                    }
                    run.tests.insert(name.clone(), status);
                    current = Some((name, status));
                }
            }
            Ok(Event::Start(element)) | Ok(Event::Empty(element)) => {
                if let Some((name, _)) = &current {
                    match element.name().as_ref() {
                        b"failure" | b"error" => {
                            run.tests.insert(name.clone(), TestStatus::Failed);
                        }
                        b"skipped" => {
                            // An executable that is not there (its target did not build):
                            // no result, not a skip.
                            let missing = element.attributes().flatten().any(|attribute| {
                                attribute.key.as_ref() == b"message"
                                    && attribute.value.as_ref().starts_with(b"Unable to find executable")
                            });
                            if missing {
                                run.tests.remove(name);
                            } else {
                                run.tests.insert(name.clone(), TestStatus::Skipped);
                            }
                        }
                        _ => {}
                    }
                }
            }
            // (Entity references come as events of their own; no case name holds one.)
            Ok(Event::Text(text)) if current.is_some() => output.push_str(&text.decode().unwrap_or_default()),
            Ok(Event::CData(text)) if current.is_some() => output.push_str(&String::from_utf8_lossy(&text)),
            Ok(Event::End(element)) if element.name().as_ref() == b"testcase" => {
                if let Some((name, _)) = &current {
                    let failed = matches!(run.tests.get(name), Some(TestStatus::Failed | TestStatus::Error));
                    if failed && NETWORK_ERRORS.iter().any(|phrase| output.contains(phrase)) {
                        run.network_failures.insert(name.clone());
                    }
                }
                let cases = googletest_cases(&output);
                if let Some((name, _)) = current.take().filter(|_| !cases.is_empty()) {
                    for (case, status) in cases {
                        in_place_of(&mut run, &name, &case, status);
                    }
                }
                output.clear();
            }
            Ok(Event::Eof) | Err(_) => break,
            _ => {}
        }
    }
    run
}

/// The line after which the helper prints every result once, as `RESULT: ID`.
const RESULTS_MARKER: &str = "swe-harvest results:";

/// The tests of a log: automake's `RESULT: ID` lines (the worst of repeats). After
/// the helper's last `swe-harvest results:` line, when there is one, only its lines,
/// whose ids may hold spaces (a Tcl harness's test names, `GETRANGE against string
/// value`); elsewhere an id with a space is some program's output, no result.
pub fn parse_automake_log(log: &str) -> ParsedRun {
    let mut run = ParsedRun::default();
    let lines: Vec<&str> = log.lines().collect();
    let (lines, spaces_allowed) = match lines.iter().rposition(|line| line.trim_end() == RESULTS_MARKER) {
        Some(marker) => (&lines[marker + 1..], true),
        None => (&lines[..], false),
    };
    for line in lines {
        let Some((word, id)) = line.trim_end().split_once(": ") else { continue };
        let Some(status) = automake_status(word) else { continue };
        let id = id.trim();
        if id.is_empty() || (!spaces_allowed && id.contains(char::is_whitespace)) {
            continue;
        }
        let merged = match run.tests.get(id) {
            Some(known) if rank(*known) >= rank(status) => *known,
            _ => status,
        };
        run.tests.insert(id.to_string(), merged);
    }
    run
}

/// The wording of a missing network in a C test's output: curl's and git's (a
/// fixture that clones its test data: nlohmann/json's `download_test_data`), and the
/// C library's resolver.
const NETWORK_ERRORS: &[&str] = &[
    "Could not resolve host",
    "Could not resolve hostname",
    "Failed to connect to",
    "unable to access 'http",
    "Could not read from remote repository",
    "Temporary failure in name resolution",
    "Name or service not known",
    "Network is unreachable",
];

/// How the helper prints what a failed fixture setup test said (test-helper.sh):
/// `swe-harvest: fixture setup NAME: LINE`.
const FIXTURE_SETUP_OUTPUT: &str = "swe-harvest: fixture setup ";

/// The tests of a CTest run that its log shows failed for want of the network: the
/// fixtures' setup tests whose output (as the helper printed it) names a network
/// error, and the tests that require one of them (CTest's `Failed test dependencies:
/// NAME` before its `Not Run`), which need the network unless they pass without it
/// ([`ParsedRun::network_dependents`]).
pub fn offline_fixtures(log: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    static RESULT: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^\s*\d+/\d+ Test\s+#\d+: (\S+) ").expect("valid regex"));
    let mut setups: BTreeSet<String> = BTreeSet::new();
    for line in log.lines() {
        let Some((name, said)) = line.strip_prefix(FIXTURE_SETUP_OUTPUT).and_then(|rest| rest.split_once(": ")) else {
            continue;
        };
        if NETWORK_ERRORS.iter().any(|phrase| said.contains(phrase)) {
            setups.insert(name.to_string());
        }
    }
    let mut dependents = BTreeSet::new();
    if setups.is_empty() {
        return (setups, dependents);
    }
    let mut pending = false;
    for line in log.lines() {
        if let Some(failed) = line.trim().strip_prefix("Failed test dependencies: ") {
            pending = failed.split([' ', ',', ';']).any(|setup| setups.contains(setup));
        } else if let Some(captures) = RESULT.captures(line) {
            if std::mem::take(&mut pending) {
                dependents.insert(captures[1].to_string());
            }
        }
    }
    (setups, dependents)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The helper's reports of jq-3161 (Multi-SWE-bench's row) in the gcc12 image:
    /// before the gold patch `tests/jqtest` fails; after it, it passes and so does
    /// `tests/uritest`, which the gold patch adds to `TESTS`.
    const JQ_PRE: &str = include_str!("fixtures/automake-jq-3161-pre-report.txt");
    const JQ_POST: &str = include_str!("fixtures/automake-jq-3161-post-report.txt");
    /// CTest 3.25's `--output-junit` of a real run: one test passed, one failed, one
    /// disabled.
    const CTEST_JUNIT: &str = include_str!("fixtures/ctest-3.25-junit.xml");
    /// The console of the same pre run (automake 1.16's harness, then the helper's lines).
    const AUTOMAKE_LOG: &str = include_str!("fixtures/automake-1.16-jq-3161-pre-make-check.log");

    #[test]
    fn trs_files_give_one_result_per_test_the_global_one_for_tap_scripts() {
        let pre = parse_trs_report(JQ_PRE);
        assert_eq!(pre.tests.iter().collect::<Vec<_>>(), vec![(&"tests/jqtest".to_string(), &TestStatus::Failed)]);
        let post = parse_trs_report(JQ_POST);
        assert_eq!(post.tests.get("tests/jqtest"), Some(&TestStatus::Passed), "{post:?}");
        assert_eq!(post.tests.get("tests/uritest"), Some(&TestStatus::Passed), "{post:?}");
        let tap = parse_trs_report(
            ":swe-harvest-test: t/a.sh\n:test-result: PASS\n:test-result: FAIL\n:global-test-result: FAIL\n\
             :swe-harvest-test: t/b.sh\n:test-result: PASS\n:test-result: XFAIL\n\
             :swe-harvest-test: c\n:test-result: SKIP\n",
        );
        assert_eq!(tap.tests["t/a.sh"], TestStatus::Failed);
        assert_eq!(tap.tests["t/b.sh"], TestStatus::Passed, "XFAIL is no worse than a pass");
        assert_eq!(tap.tests["c"], TestStatus::Skipped);
    }

    #[test]
    fn ctest_junit_gives_names_with_failures_and_skips() {
        let run = parse_ctest_junit(CTEST_JUNIT);
        assert_eq!(run.tests.get("adds"), Some(&TestStatus::Passed), "{run:?}");
        assert_eq!(run.tests.get("subtracts"), Some(&TestStatus::Failed), "{run:?}");
        assert_eq!(run.tests.get("later"), Some(&TestStatus::Skipped), "{run:?}");
    }

    #[test]
    fn a_ctest_test_whose_executable_is_not_there_has_no_result_and_a_skip_is_a_skip() {
        // CTest 3.25's report of a test whose executable was removed (its target did
        // not build) beside one that skipped by its return code.
        let run = parse_ctest_junit(include_str!("fixtures/ctest-3.25-junit-unbuilt.xml"));
        assert_eq!(run.tests.get("runs"), Some(&TestStatus::Passed), "{run:?}");
        assert_eq!(run.tests.get("skips"), Some(&TestStatus::Skipped), "{run:?}");
        assert_eq!(run.tests.get("unbuilt"), None, "{run:?}");
    }

    #[test]
    fn the_helpers_statements_of_which_tests_it_chose_are_read_from_the_log_and_nothing_else() {
        assert_eq!(
            test_selection(AUTOMAKE_LOG).as_deref(),
            Some("automake tests selected by the touched files: tests/jqtest")
        );
        let ctest = "swe-harvest: building the targets that compile the touched files: unit\n\
                     swe-harvest: CTest tests that run the executables of the targets that compile the touched files (unit): a b\n\
                     swe-harvest: the fixture setup test(s) data failed, so ...\n\
                     1/2 Test #1: a ....   Passed\n";
        assert_eq!(
            test_selection(ctest).as_deref(),
            Some("CTest tests that run the executables of the targets that compile the touched files (unit): a b")
        );
        let whole =
            "swe-harvest: no CTest test runs an executable of the touched files or names one; running all of them\n";
        assert_eq!(test_selection(whole).as_deref(), Some(whole.trim().trim_start_matches("swe-harvest: ")));
        let make = "swe-harvest: make targets that run the touched files: test-unit, test-cli-tests (in tests/)\n\
                    swe-harvest: make -C tests test-cli-tests\n\
                    PASS: basic/help.sh\nswe-harvest results:\nPASS: basic/help.sh\n";
        assert_eq!(
            test_selection(make).as_deref(),
            Some("make targets that run the touched files: test-unit, test-cli-tests (in tests/)"),
            "the targets run are no statement of their own"
        );
        let whole = "swe-harvest: no make target runs the touched files; running make check\n";
        assert_eq!(test_selection(whole).as_deref(), Some(whole.trim().trim_start_matches("swe-harvest: ")));
        assert_eq!(
            test_selection("PASS: make-check\nswe-harvest results:\n"),
            None,
            "an older helper's log states nothing"
        );
    }

    #[test]
    fn a_googletest_program_that_ctest_runs_as_one_test_gives_its_cases_instead() {
        // CTest 3.25's report of a GoogleTest 1.12 program run as the one test `unit`
        // (bookworm's gcc12 image, `--test-output-size-passed`): one case passes, one fails.
        let run = parse_ctest_junit(include_str!("fixtures/ctest-3.25-junit-googletest.xml"));
        assert_eq!(
            run.tests.iter().map(|(name, status)| (name.as_str(), *status)).collect::<Vec<_>>(),
            [("Add.Negative", TestStatus::Failed), ("Add.Small", TestStatus::Passed)],
            "the summary's list of failures is no second result, and `unit` gives way to its cases"
        );
        assert!(!run.durations.contains_key("unit"));
        assert_eq!(
            run.part_of.iter().map(|(case, test)| (case.as_str(), test.as_str())).collect::<Vec<_>>(),
            [("Add.Negative", "unit"), ("Add.Small", "unit")],
            "each case keeps the CTest test that ran it"
        );
        let parameterised = googletest_cases(
            "[       OK ] Sizes/ParseTest.Reads/0 (1 ms)\n[  SKIPPED ] Net.Online (0 ms)\n\
             [  FAILED  ] Sizes/ParseTest.Reads/1, where GetParam() = 8 (2 ms)\n[  FAILED  ] 1 test, listed below:\n",
        );
        assert_eq!(
            parameterised,
            [
                ("Sizes/ParseTest.Reads/0".to_string(), TestStatus::Passed),
                ("Net.Online".to_string(), TestStatus::Skipped),
                ("Sizes/ParseTest.Reads/1".to_string(), TestStatus::Failed)
            ]
        );
        // A CTest test without GoogleTest output keeps its own name.
        let plain = parse_ctest_junit(CTEST_JUNIT);
        assert_eq!(plain.tests.get("adds"), Some(&TestStatus::Passed));
        assert!(plain.part_of.is_empty(), "{:?}", plain.part_of);
    }

    /// The helper's report of a CTest run of a doctest program (`unit`) beside a plain
    /// test (`other`): CTest's XML (3.25's shape), then the cases the helper read from
    /// the program's run with `--reporters=xml`.
    const DOCTEST_REPORT: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuite name=\"(empty)\" tests=\"2\" failures=\"1\">\n\
        \t<testcase name=\"unit\" classname=\"unit\" time=\"0.0074\" status=\"fail\">\n\t\t<failure message=\"\"/>\n\
        \t\t<system-out>[doctest] doctest version is &quot;2.4.9&quot;\n[doctest] test cases: 2 | 1 passed | 1 failed | 0 skipped\n</system-out>\n\
        \t</testcase>\n\t<testcase name=\"other\" classname=\"other\" time=\"0.001\" status=\"run\">\n\
        \t\t<system-out>hi\n</system-out>\n\t</testcase>\n</testsuite>\n\n\
        <!-- swe-harvest doctest cases -->\n\
        unit\tPASS: add > small\n\
        unit\tFAIL: add > negative & <odd> \"name\"\n\
        unit\tPASS: add > outer > inner a\n\
        unit\tSKIP: later\n";

    #[test]
    fn a_doctest_program_that_ctest_runs_as_one_test_gives_the_cases_the_helper_listed_instead() {
        let run = parse_ctest_junit(DOCTEST_REPORT);
        assert_eq!(
            run.tests.iter().map(|(name, status)| (name.as_str(), *status)).collect::<Vec<_>>(),
            [
                ("add > negative & <odd> \"name\"", TestStatus::Failed),
                ("add > outer > inner a", TestStatus::Passed),
                ("add > small", TestStatus::Passed),
                ("later", TestStatus::Skipped),
                ("other", TestStatus::Passed),
            ],
            "`unit` gives way to its cases, `other` keeps its own result"
        );
        assert_eq!(run.part_of.get("add > small").map(String::as_str), Some("unit"), "{:?}", run.part_of);
        assert_eq!(run.part_of.len(), 4, "{:?}", run.part_of);
        assert!(!run.durations.contains_key("unit") && run.durations.contains_key("other"), "{:?}", run.durations);
        // Without the helper's list, the program is its CTest test.
        let xml = DOCTEST_REPORT.split(DOCTEST_CASES_MARKER).next().unwrap();
        assert_eq!(parse_ctest_junit(xml).tests.get("unit"), Some(&TestStatus::Failed));
        // A program whose output named a network error: its failed cases failed for
        // want of it, its passing ones did not.
        let offline = parse_ctest_junit(
            &DOCTEST_REPORT.replace("[doctest] test cases", "Could not resolve host: x\n[doctest] test cases"),
        );
        assert_eq!(
            offline.network_failures.iter().map(String::as_str).collect::<Vec<_>>(),
            ["add > negative & <odd> \"name\"", "unit"]
        );
    }

    /// The helper's reading of a doctest program's XML report (its awk program
    /// `DOCTEST_CASES`), run on the reports doctest 2.4.11 and 2.3.1 (nlohmann/json's
    /// bundled versions) wrote for one test program: `add` with a passing, a failing
    /// and two nested subcases, a test case without subcases, one that throws in a
    /// subcase, a skipped one, one that fails by `FAIL_CHECK`, and one whose own body
    /// fails beside passing subcases.
    #[test]
    fn the_helper_reads_a_doctest_xml_report_as_innermost_subcases_under_their_test_case() {
        let script = crate::ecosystem::c::image::C_TEST_HELPER_SCRIPT;
        let program = script
            .split_once("\nDOCTEST_CASES='")
            .and_then(|(_, rest)| rest.split_once("\n}'\n"))
            .map(|(program, _)| format!("{program}\n}}"))
            .expect("the helper defines DOCTEST_CASES");
        let read = |xml: &str| {
            let dir = tempfile::tempdir().unwrap();
            let report = dir.path().join("report.xml");
            fs_err::write(&report, xml).unwrap();
            let output = std::process::Command::new("awk").arg(&program).arg(&report).output().unwrap();
            assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
            String::from_utf8(output.stdout).unwrap()
        };
        let expected = "PASS: add > small\nFAIL: add > negative & <odd> \"name\"\nPASS: add > outer > inner a\n\
                        FAIL: add > outer > inner b\nPASS: plain\nFAIL: throws > x\nSKIP: skipped\nFAIL: fails\n\
                        FAIL: body > a\nFAIL: body > b\n";
        let recent = include_str!("fixtures/doctest-2.4.11-xml-report.xml");
        assert_eq!(read(recent), expected);
        assert_eq!(read(include_str!("fixtures/doctest-2.3.1-xml-report.xml")), expected);
        // A report cut off inside a subcase (the program killed): what ran so far, and
        // the subcase it was in fails.
        let cut = &recent[..recent.find("<SubCase name=\"inner a\"").unwrap()];
        assert_eq!(
            read(&format!("{cut}<SubCase name=\"inner a\" filename=\"calc_test.cpp\" line=\"10\">\n")),
            "PASS: add > small\nFAIL: add > negative & <odd> \"name\"\nFAIL: add > outer > inner a\n"
        );
    }

    /// The helper's log of a real run (CTest 3.25, the network off) of a project whose
    /// tests `add` and `add_data` require a fixture set up by `git clone
    /// https://example.invalid/...`: the setup fails, both tests are `Not Run`, and run
    /// again without it `add` passes and `add_data` fails (its data is not there).
    const OFFLINE_FIXTURE_LOG: &str = include_str!("fixtures/ctest-3.25-offline-fixture-helper.log");

    #[test]
    fn a_fixture_setup_that_found_no_network_and_the_tests_that_require_it_are_read_from_the_log() {
        let run = parse_automake_log(OFFLINE_FIXTURE_LOG);
        assert_eq!(run.tests.get("add"), Some(&TestStatus::Passed));
        assert_eq!(run.tests.get("add_data"), Some(&TestStatus::Failed));
        let (setups, dependents) = offline_fixtures(OFFLINE_FIXTURE_LOG);
        assert_eq!(setups.into_iter().collect::<Vec<_>>(), ["download_test_data"]);
        assert_eq!(dependents.into_iter().collect::<Vec<_>>(), ["add", "add_data"]);
        // A setup that failed for another reason says nothing of the network.
        let other = OFFLINE_FIXTURE_LOG
            .replace("unable to access 'https", "found no repository at 'https")
            .replace("Could not resolve host", "Repository not found");
        assert_eq!(offline_fixtures(&other), Default::default());
    }

    #[test]
    fn a_failed_ctest_test_whose_output_names_a_network_error_needs_the_network() {
        let xml = "<testsuite><testcase name=\"fetch\" status=\"fail\"><failure message=\"\"/>\
                   <system-out>curl: (6) Could not resolve host: example.invalid</system-out></testcase>\
                   <testcase name=\"local\" status=\"run\"><system-out>Could not resolve host is a message we print</system-out></testcase></testsuite>";
        let run = parse_ctest_junit(xml);
        assert_eq!(run.network_failures.into_iter().collect::<Vec<_>>(), ["fetch"], "a passing test needs nothing");
    }

    #[test]
    fn the_log_gives_automakes_result_lines() {
        let run = parse_automake_log(AUTOMAKE_LOG);
        assert_eq!(run.tests.iter().collect::<Vec<_>>(), vec![(&"tests/jqtest".to_string(), &TestStatus::Failed)]);
        let made_up = parse_automake_log("PASS: a\nFAIL: a\nNote: something else here\nPASS:\nXPASS: b\n");
        assert_eq!(made_up.tests.len(), 2);
        assert_eq!(made_up.tests["a"], TestStatus::Failed, "the worst of repeats");
        assert_eq!(made_up.tests["b"], TestStatus::Xpass);
        // After the helper's results line its ids may hold spaces; before it nothing
        // counts then.
        let tcl = parse_automake_log(
            "FAIL: a thing the build printed\nPASS: early\nswe-harvest results:\nFAIL: GETRANGE against string value\nPASS: SET and GET\n",
        );
        assert_eq!(
            tcl.tests.into_iter().collect::<Vec<_>>(),
            vec![
                ("GETRANGE against string value".to_string(), TestStatus::Failed),
                ("SET and GET".to_string(), TestStatus::Passed)
            ]
        );
    }
}
