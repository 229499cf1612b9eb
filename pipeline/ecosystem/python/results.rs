//! pytest's results: its JUnit XML report (the primary source) and its `-rA` short
//! summary (the fallback when no report was written). Pure functions over text.
//!
//! The code under test can print anything, including lines that look like pytest's
//! summary: only the last `short test summary info` section of a step is read
//! (pytest prints captured output of the tests before it).

use quick_xml::events::{BytesStart, Event};

use crate::ecosystem::ParsedRun;
use crate::model::TestStatus;

#[derive(Debug, thiserror::Error)]
#[error("the JUnit XML report is malformed at byte {position}: {message}")]
pub struct JunitError {
    pub position: u64,
    pub message: String,
}

/// Reads pytest's JUnit XML report. Test ids are pytest node ids, recovered from the
/// dotted `classname` through `test_files` (the files the test patch touches; see
/// [`node_id`]). A test reported twice (a failure in the call and an error in
/// teardown) keeps its worst status.
pub fn parse_junit(xml: &str, test_files: &[String]) -> Result<ParsedRun, JunitError> {
    let mut reader = quick_xml::Reader::from_str(xml);
    let mut run = ParsedRun::default();
    // The open <testcase>: its id, duration and status so far.
    let mut open: Option<(String, f64, TestStatus)> = None;
    loop {
        let event = reader
            .read_event()
            .map_err(|error| JunitError { position: reader.error_position(), message: error.to_string() })?;
        match event {
            Event::Start(element) if element.name().as_ref() == b"testcase" => {
                let (id, time) = testcase(&element, test_files);
                open = Some((id, time, TestStatus::Passed));
            }
            Event::Empty(element) if element.name().as_ref() == b"testcase" => {
                let (id, time) = testcase(&element, test_files);
                record(&mut run, id, time, TestStatus::Passed);
            }
            Event::Start(element) | Event::Empty(element) if open.is_some() => {
                let status = match element.name().as_ref() {
                    b"failure" => Some(TestStatus::Failed),
                    b"error" => Some(TestStatus::Error),
                    b"skipped" => {
                        let xfail = attribute(&element, "type").is_some_and(|kind| kind == "pytest.xfail");
                        Some(if xfail { TestStatus::Xfail } else { TestStatus::Skipped })
                    }
                    _ => None,
                };
                if let (Some(status), Some((_, _, current))) = (status, open.as_mut()) {
                    *current = worst(*current, status);
                }
            }
            Event::End(element) if element.name().as_ref() == b"testcase" => {
                if let Some((id, time, status)) = open.take() {
                    record(&mut run, id, time, status);
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(run)
}

fn record(run: &mut ParsedRun, id: String, time: f64, status: TestStatus) {
    let status = match run.tests.get(&id) {
        Some(previous) => worst(*previous, status),
        None => status,
    };
    *run.durations.entry(id.clone()).or_default() += time;
    run.tests.insert(id, status);
}

/// Of two statuses of one test, the one that says more is wrong.
fn worst(a: TestStatus, b: TestStatus) -> TestStatus {
    let rank = |status: TestStatus| match status {
        TestStatus::Passed => 0,
        TestStatus::Xpass => 1,
        TestStatus::Skipped => 2,
        TestStatus::Xfail => 3,
        TestStatus::Failed => 4,
        TestStatus::Error => 5,
    };
    if rank(b) > rank(a) { b } else { a }
}

fn attribute(element: &BytesStart<'_>, name: &str) -> Option<String> {
    element
        .attributes()
        .flatten()
        .find(|attribute| attribute.key.as_ref() == name.as_bytes())
        .and_then(|attribute| attribute.unescape_value().ok().map(|value| value.into_owned()))
}

fn testcase(element: &BytesStart<'_>, test_files: &[String]) -> (String, f64) {
    let classname = attribute(element, "classname").unwrap_or_default();
    let name = attribute(element, "name").unwrap_or_default();
    let time = attribute(element, "time").and_then(|time| time.parse().ok()).unwrap_or(0.0);
    (node_id(&classname, &name, test_files), time)
}

/// The pytest node id of a JUnit test case. pytest derives `classname` from the node
/// id (`tests/test_x.py::TestA::test_b` -> `tests.test_x.TestA`), which loses where
/// the path ends; the test files give it back (the longest file whose dotted module
/// is a prefix of `classname`). Without a match, the segments before the first
/// capitalised one are taken as the path. A collection error has an empty classname
/// and the dotted module as its name; its id is the file.
pub fn node_id(classname: &str, name: &str, test_files: &[String]) -> String {
    let dotted = |file: &str| file.strip_suffix(".py").unwrap_or(file).replace('/', ".");
    if classname.is_empty() {
        return test_files
            .iter()
            .find(|file| dotted(file) == name)
            .cloned()
            .unwrap_or_else(|| format!("{}.py", name.replace('.', "/")));
    }
    let matched = test_files
        .iter()
        .filter(|file| {
            let module = dotted(file);
            classname == module || classname.starts_with(&format!("{module}."))
        })
        .max_by_key(|file| file.len());
    let (path, classes) = match matched {
        Some(file) => {
            let module = dotted(file);
            (file.clone(), classname[module.len()..].trim_start_matches('.').to_string())
        }
        None => {
            let segments: Vec<&str> = classname.split('.').collect();
            let split = segments
                .iter()
                .position(|segment| segment.starts_with(|c: char| c.is_ascii_uppercase()))
                .unwrap_or(segments.len());
            (format!("{}.py", segments[..split].join("/")), segments[split..].join("."))
        }
    };
    let mut id = path;
    for class in classes.split('.').filter(|class| !class.is_empty()) {
        id.push_str("::");
        id.push_str(class);
    }
    id.push_str("::");
    id.push_str(name);
    id
}

/// Reads the `-rA` short test summary that pytest prints at the end of a run: lines
/// `PASSED id`, `FAILED id - message`, `ERROR id - message`, `XFAIL id - reason`,
/// `XPASS id`. `SKIPPED` lines name a file and line, not a test, and are left out.
/// Only the last summary section counts, so summaries printed by the tests
/// themselves (captured output shown earlier) are ignored.
pub fn parse_pytest_log(log: &str) -> ParsedRun {
    let lines: Vec<&str> = log.lines().collect();
    let is_header = |line: &str| {
        let trimmed = line.trim_matches('=');
        line.starts_with('=') && line.ends_with('=') && trimmed.trim() == "short test summary info"
    };
    let mut run = ParsedRun::default();
    let Some(start) = lines.iter().rposition(|line| is_header(line)) else { return run };
    for line in &lines[start + 1..] {
        if line.starts_with('=') {
            break;
        }
        let Some((word, rest)) = line.split_once(' ') else { continue };
        let status = match word {
            "PASSED" => TestStatus::Passed,
            "FAILED" => TestStatus::Failed,
            "ERROR" => TestStatus::Error,
            "XFAIL" => TestStatus::Xfail,
            "XPASS" => TestStatus::Xpass,
            _ => continue,
        };
        let id = rest.split_once(" - ").map_or(rest, |(id, _)| id).trim();
        if id.is_empty() {
            continue;
        }
        let status = match run.tests.get(id) {
            Some(previous) => worst(*previous, status),
            None => status,
        };
        run.tests.insert(id.to_string(), status);
    }
    run
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn files(list: &[&str]) -> Vec<String> {
        list.iter().map(|file| file.to_string()).collect()
    }

    const JUNIT: &str = r#"<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" errors="1" failures="1" skipped="2" tests="7" time="0.1">
<testcase classname="tests.test_calc" name="test_add" time="0.001" />
<testcase classname="tests.test_calc.TestDivide" name="test_by_zero[1.5-x]" time="0.250"><failure message="assert 1 == 2">trace</failure></testcase>
<testcase classname="tests.test_calc.TestDivide.Nested" name="test_deep" time="0.002"><skipped type="pytest.skip" message="no">skip</skipped></testcase>
<testcase classname="tests.test_calc" name="test_xfail" time="0.003"><skipped type="pytest.xfail" message="known" /></testcase>
<testcase classname="tests.test_calc" name="test_teardown" time="0.1" />
<testcase classname="tests.test_calc" name="test_teardown" time="0.2"><error message="teardown failed">boom</error></testcase>
<testcase classname="" name="tests.test_broken" time="0.0"><error message="collection failure">ImportError</error></testcase>
</testsuite></testsuites>"#;

    #[test]
    fn junit_report_gives_node_ids_statuses_and_durations() {
        let run = parse_junit(JUNIT, &files(&["tests/test_calc.py", "tests/test_broken.py"])).unwrap();
        let expected: BTreeMap<String, TestStatus> = [
            ("tests/test_calc.py::test_add", TestStatus::Passed),
            ("tests/test_calc.py::TestDivide::test_by_zero[1.5-x]", TestStatus::Failed),
            ("tests/test_calc.py::TestDivide::Nested::test_deep", TestStatus::Skipped),
            ("tests/test_calc.py::test_xfail", TestStatus::Xfail),
            ("tests/test_calc.py::test_teardown", TestStatus::Error),
            ("tests/test_broken.py", TestStatus::Error),
        ]
        .into_iter()
        .map(|(id, status)| (id.to_string(), status))
        .collect();
        assert_eq!(run.tests, expected);
        assert!((run.durations["tests/test_calc.py::TestDivide::test_by_zero[1.5-x]"] - 0.25).abs() < 1e-9);
        assert!((run.durations["tests/test_calc.py::test_teardown"] - 0.3).abs() < 1e-9);
    }

    #[test]
    fn node_ids_use_the_longest_matching_test_file_and_guess_without_one() {
        let known = files(&["tests/test_a.py", "tests/test_a/test_b.py"]);
        assert_eq!(node_id("tests.test_a.test_b.TestX", "test_y", &known), "tests/test_a/test_b.py::TestX::test_y");
        assert_eq!(node_id("tests.test_a", "test_z", &known), "tests/test_a.py::test_z");
        assert_eq!(node_id("pkg.tests.test_c.TestK", "test_m", &known), "pkg/tests/test_c.py::TestK::test_m");
        assert_eq!(node_id("pkg.test_d", "test_n", &[]), "pkg/test_d.py::test_n");
    }

    #[test]
    fn malformed_junit_is_an_error() {
        assert!(parse_junit("<testsuite><testcase name='a'></testsuite>", &[]).is_err());
    }

    #[test]
    fn log_parser_reads_the_last_summary_and_ignores_forged_lines() {
        let log = "\
============================= test session starts ==============================
collected 5 items

tests/test_x.py .F.xX                                                    [100%]

==================================== PASSES ====================================
_________________________________ test_forger __________________________________
----------------------------- Captured stdout call -----------------------------
=========================== short test summary info ============================
PASSED tests/test_x.py::test_fails_really
=========================== short test summary info ============================
PASSED tests/test_x.py::test_ok
PASSED tests/test_x.py::test_forger
FAILED tests/test_x.py::test_fails_really - assert 1 == 2 - with a dash
XFAIL tests/test_x.py::test_known - reason: bug 12
XPASS tests/test_x.py::test_lucky
ERROR tests/test_x.py::test_setup - fixture 'db' not found
SKIPPED [1] tests/test_x.py:40: no network
=================== 1 failed, 2 passed, 1 xfailed, 1 xpassed in 0.12s ===================
PASSED tests/test_x.py::test_after_the_end
";
        let run = parse_pytest_log(log);
        let expected: BTreeMap<String, TestStatus> = [
            ("tests/test_x.py::test_ok", TestStatus::Passed),
            ("tests/test_x.py::test_forger", TestStatus::Passed),
            ("tests/test_x.py::test_fails_really", TestStatus::Failed),
            ("tests/test_x.py::test_known", TestStatus::Xfail),
            ("tests/test_x.py::test_lucky", TestStatus::Xpass),
            ("tests/test_x.py::test_setup", TestStatus::Error),
        ]
        .into_iter()
        .map(|(id, status)| (id.to_string(), status))
        .collect();
        assert_eq!(run.tests, expected);
    }

    #[test]
    fn log_without_a_summary_has_no_results() {
        assert!(parse_pytest_log("ERROR: file or directory not found: tests/x.py\n").tests.is_empty());
    }
}
