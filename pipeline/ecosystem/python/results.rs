//! pytest's results: its JUnit XML report (the primary source) and its `-rA` short
//! summary (the fallback when no report was written). Pure functions over text.
//! Also which failures mean that the network is off ([`is_network_failure`]): jobs
//! run without one, so such a test is reported as needing it, never labelled.
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
    // The open <testcase>: its id, duration, status so far and failure text.
    let mut open: Option<OpenCase> = None;
    // Inside a <failure> or <error> of the open test case.
    let mut in_failure = false;
    loop {
        let event = reader
            .read_event()
            .map_err(|error| JunitError { position: reader.error_position(), message: error.to_string() })?;
        match event {
            Event::Start(element) if element.name().as_ref() == b"testcase" => {
                let (id, time) = testcase(&element, test_files);
                open = Some(OpenCase { id, time, status: TestStatus::Passed, failure: String::new() });
            }
            Event::Empty(element) if element.name().as_ref() == b"testcase" => {
                let (id, time) = testcase(&element, test_files);
                record(&mut run, id, time, TestStatus::Passed);
            }
            Event::Start(ref element) | Event::Empty(ref element) if open.is_some() => {
                let status = match element.name().as_ref() {
                    // pytest 2 reports a module that does not collect as a failure.
                    b"failure"
                        if attribute(element, "message").is_some_and(|message| message == "collection failure") =>
                    {
                        Some(TestStatus::Error)
                    }
                    b"failure" => Some(TestStatus::Failed),
                    b"error" => Some(TestStatus::Error),
                    b"skipped" => {
                        let xfail = attribute(element, "type").is_some_and(|kind| kind == "pytest.xfail");
                        Some(if xfail { TestStatus::Xfail } else { TestStatus::Skipped })
                    }
                    _ => None,
                };
                let failure = matches!(status, Some(TestStatus::Failed | TestStatus::Error));
                if let (Some(status), Some(case)) = (status, open.as_mut()) {
                    case.status = worst(case.status, status);
                    if failure {
                        case.failure.push_str(&attribute(element, "message").unwrap_or_default());
                        case.failure.push('\n');
                    }
                }
                in_failure = failure && matches!(event, Event::Start(_));
            }
            Event::Text(text) if in_failure => {
                if let (Some(case), Ok(text)) = (open.as_mut(), text.decode()) {
                    case.failure.push_str(&text);
                }
            }
            // `&apos;`, `&#10;`: the text between them comes in events of its own.
            Event::GeneralRef(reference) if in_failure => {
                let resolved = match reference.resolve_char_ref() {
                    Ok(Some(c)) => Some(c.to_string()),
                    _ => reference
                        .decode()
                        .ok()
                        .and_then(|name| quick_xml::escape::resolve_xml_entity(&name).map(str::to_string)),
                };
                if let (Some(case), Some(resolved)) = (open.as_mut(), resolved) {
                    case.failure.push_str(&resolved);
                }
            }
            Event::CData(text) if in_failure => {
                if let Some(case) = open.as_mut() {
                    case.failure.push_str(&String::from_utf8_lossy(&text));
                }
            }
            Event::End(element) if matches!(element.name().as_ref(), b"failure" | b"error") => in_failure = false,
            Event::End(element) if element.name().as_ref() == b"testcase" => {
                in_failure = false;
                if let Some(case) = open.take() {
                    if is_network_failure(&case.failure) {
                        run.network_failures.insert(case.id.clone());
                    }
                    record(&mut run, case.id, case.time, case.status);
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(run)
}

/// A `<testcase>` being read.
struct OpenCase {
    id: String,
    time: f64,
    status: TestStatus,
    /// The messages and texts of its `<failure>` and `<error>` elements.
    failure: String,
}

/// Failures that only a missing network explains: a name that does not resolve, a
/// network that cannot be reached. Python's, urllib3's, requests', curl's wording.
const NETWORK_ERRORS: &[&str] = &[
    "Temporary failure in name resolution",
    "Name or service not known",
    "nodename nor servname provided",
    "No address associated with hostname",
    "Network is unreachable",
    "No route to host",
    "getaddrinfo failed",
    "socket.gaierror",
    "NameResolutionError",
    "Failed to resolve",
    "Could not resolve host",
];

/// Failures to connect, which need the network only when the host is not this
/// machine (a test's own server on localhost that did not start is the test's fault).
const CONNECTION_ERRORS: &[&str] = &[
    "ConnectionError",
    "Connection refused",
    "Failed to establish a new connection",
    "NewConnectionError",
    "Max retries exceeded",
    "urlopen error",
    "ConnectTimeout",
];

/// Whether a test's failure text says it failed because the network is off: a name
/// resolution or unreachable network error ([`NETWORK_ERRORS`]), or a connection
/// error ([`CONNECTION_ERRORS`]) that names a host other than this machine
/// (`host='pypi.org'`, `https://pypi.org/...`).
pub fn is_network_failure(text: &str) -> bool {
    if NETWORK_ERRORS.iter().any(|phrase| text.contains(phrase)) {
        return true;
    }
    CONNECTION_ERRORS.iter().any(|phrase| text.contains(phrase)) && named_hosts(text).any(|host| !is_local(&host))
}

/// The first line of a session's output that says it failed for want of the network
/// ([`is_network_failure`], or urllib's `URLError`, which astropy's `download_file`
/// raises), trimmed: a collection error or a conftest that downloads a data file.
pub fn network_evidence(log: &str) -> Option<String> {
    log.lines()
        .map(str::trim)
        .find(|line| is_network_failure(line) || line.contains("urllib.error.URLError"))
        .map(str::to_string)
}

/// The hosts a failure text names: `host='…'` (urllib3, requests) and URLs.
fn named_hosts(text: &str) -> impl Iterator<Item = String> + '_ {
    let quoted = ["host='", "host=\""].into_iter().flat_map(move |prefix| {
        text.match_indices(prefix).filter_map(move |(index, _)| {
            let rest = &text[index + prefix.len()..];
            let end = rest.find(['\'', '"'])?;
            Some(rest[..end].to_string())
        })
    });
    let urls = text.match_indices("://").filter_map(move |(index, _)| {
        let rest = &text[index + 3..];
        let end = rest.find(['/', ':', '\'', '"', ' ', ')', '>', '\n']).unwrap_or(rest.len());
        let host = rest[..end].rsplit('@').next().unwrap_or_default();
        (!host.is_empty()).then(|| host.to_string())
    });
    quoted.chain(urls)
}

/// Whether a host is this machine (where a test's own server would listen).
fn is_local(host: &str) -> bool {
    let host = host.trim_matches(['[', ']']).to_ascii_lowercase();
    host == "localhost"
        || host.ends_with(".localhost")
        || host.starts_with("127.")
        || host == "::1"
        || host == "0.0.0.0"
        || host.is_empty()
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
        let (id, message) = rest.split_once(" - ").unwrap_or((rest, ""));
        let id = id.trim();
        if id.is_empty() {
            continue;
        }
        if matches!(status, TestStatus::Failed | TestStatus::Error) && is_network_failure(message) {
            run.network_failures.insert(id.to_string());
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

    /// pytest 8's output (Python 3.11, the network off) for a conftest that fetches
    /// its test data at import with `urllib.request.urlopen`.
    const CONFTEST_OFFLINE_DOWNLOAD: &str = include_str!("fixtures/pytest-conftest-offline-download.log");

    #[test]
    fn a_session_that_tried_to_download_a_file_offline_is_read_as_reaching_for_the_network() {
        assert_eq!(
            network_evidence(CONFTEST_OFFLINE_DOWNLOAD).as_deref(),
            Some("E   urllib.error.URLError: <urlopen error [Errno -3] Temporary failure in name resolution>")
        );
        let local = "E   ConnectionRefusedError: [Errno 111] Connection refused (host='localhost', urlopen error)";
        assert_eq!(network_evidence(local), None, "a test's own server that did not start");
        assert_eq!(
            network_evidence("ImportError while loading conftest\nE   ModuleNotFoundError: No module named 'py'"),
            None
        );
    }

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
<testcase classname="" name="tests.test_old" time="0"><failure message="collection failure">TypeError: Call constructor takes at most 3 positional arguments</failure></testcase>
</testsuite></testsuites>"#;

    #[test]
    fn junit_report_gives_node_ids_statuses_and_durations() {
        let run =
            parse_junit(JUNIT, &files(&["tests/test_calc.py", "tests/test_broken.py", "tests/test_old.py"])).unwrap();
        let expected: BTreeMap<String, TestStatus> = [
            ("tests/test_calc.py::test_add", TestStatus::Passed),
            ("tests/test_calc.py::TestDivide::test_by_zero[1.5-x]", TestStatus::Failed),
            ("tests/test_calc.py::TestDivide::Nested::test_deep", TestStatus::Skipped),
            ("tests/test_calc.py::test_xfail", TestStatus::Xfail),
            ("tests/test_calc.py::test_teardown", TestStatus::Error),
            ("tests/test_broken.py", TestStatus::Error),
            // As pytest 2 writes a module that does not collect.
            ("tests/test_old.py", TestStatus::Error),
        ]
        .into_iter()
        .map(|(id, status)| (id.to_string(), status))
        .collect();
        assert_eq!(run.tests, expected);
        assert!((run.durations["tests/test_calc.py::TestDivide::test_by_zero[1.5-x]"] - 0.25).abs() < 1e-9);
        assert!((run.durations["tests/test_calc.py::test_teardown"] - 0.3).abs() < 1e-9);
    }

    /// As pytest writes it for requests/urllib3/urllib tests run without a network
    /// (urllib3 1.x and 2.x wording), next to a test whose own local server is down
    /// and tests that fail for their own reasons.
    const OFFLINE_JUNIT: &str = r#"<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" errors="1" failures="5" skipped="0" tests="7" time="1.2">
<testcase classname="tests.test_requests.TestRequests" name="test_HTTP_200_OK_GET" time="0.050"><failure message="requests.exceptions.ConnectionError: HTTPConnectionPool(host=&apos;httpbin.org&apos;, port=80): Max retries exceeded with url: /get (Caused by NewConnectionError(&apos;&lt;urllib3.connection.HTTPConnection object at 0x7f3c2a&gt;: Failed to establish a new connection: [Errno -3] Temporary failure in name resolution&apos;))">self = &lt;urllib3.connection.HTTPConnection object at 0x7f3c2a&gt;

    def _new_conn(self):
&gt;       conn = connection.create_connection(
E       socket.gaierror: [Errno -3] Temporary failure in name resolution

/opt/venv/lib/python3.11/site-packages/urllib3/util/connection.py:72: gaierror</failure></testcase>
<testcase classname="tests.test_requests.TestRequests" name="test_https" time="0.030"><failure message="requests.exceptions.ConnectionError: HTTPSConnectionPool(host=&apos;pypi.org&apos;, port=443): Max retries exceeded with url: /simple/ (Caused by NameResolutionError(&quot;&lt;urllib3.connection.HTTPSConnection object at 0x7f&gt;: Failed to resolve &apos;pypi.org&apos; ([Errno -3] Temporary failure in name resolution)&quot;))">trace</failure></testcase>
<testcase classname="tests.test_requests.TestRequests" name="test_ip_literal" time="0.001"><error message="requests.exceptions.ConnectionError: HTTPConnectionPool(host=&apos;93.184.216.34&apos;, port=80): Max retries exceeded with url: / (Caused by NewConnectionError(&apos;...: Failed to establish a new connection: [Errno 101] Network is unreachable&apos;))">trace</error></testcase>
<testcase classname="tests.test_urllib" name="test_urlopen" time="0.002"><failure message="urllib.error.URLError: &lt;urlopen error [Errno -2] Name or service not known&gt;">    def test_urlopen():
&gt;       urllib.request.urlopen("https://example.com/data.json")</failure></testcase>
<testcase classname="tests.test_requests.TestLocal" name="test_local_server" time="0.010"><failure message="requests.exceptions.ConnectionError: HTTPConnectionPool(host=&apos;localhost&apos;, port=8080): Max retries exceeded with url: / (Caused by NewConnectionError(&apos;...: Failed to establish a new connection: [Errno 111] Connection refused&apos;))">trace</failure></testcase>
<testcase classname="tests.test_requests.TestErrors" name="test_connection_error_message" time="0.001"><failure message="AssertionError: assert &apos;ConnectionError&apos; in &apos;Timeout&apos;">trace</failure></testcase>
<testcase classname="tests.test_requests.TestErrors" name="test_passes" time="0.001"><system-out>Temporary failure in name resolution</system-out></testcase>
</testsuite></testsuites>"#;

    #[test]
    fn junit_failures_of_a_missing_network_are_recognised_and_others_are_not() {
        let run = parse_junit(OFFLINE_JUNIT, &files(&["tests/test_requests.py", "tests/test_urllib.py"])).unwrap();
        let network: Vec<&str> = run.network_failures.iter().map(String::as_str).collect();
        assert_eq!(
            network,
            [
                "tests/test_requests.py::TestRequests::test_HTTP_200_OK_GET",
                "tests/test_requests.py::TestRequests::test_https",
                "tests/test_requests.py::TestRequests::test_ip_literal",
                "tests/test_urllib.py::test_urlopen",
            ]
        );
        // Their statuses are read as before.
        assert_eq!(run.tests["tests/test_requests.py::TestRequests::test_ip_literal"], TestStatus::Error);
        assert_eq!(run.tests["tests/test_requests.py::TestErrors::test_passes"], TestStatus::Passed);
        assert_eq!(run.tests.len(), 7);
    }

    #[test]
    fn network_failures_need_a_resolver_error_or_a_host_other_than_this_machine() {
        assert!(is_network_failure("socket.gaierror: [Errno -2] Name or service not known"));
        assert!(is_network_failure("curl: (6) Could not resolve host: github.com"));
        assert!(is_network_failure(
            "requests.exceptions.ConnectionError: HTTPSConnectionPool(host='httpbin.org', port=443): Max retries exc..."
        ));
        assert!(is_network_failure(
            "ConnectionRefusedError: [Errno 111] Connection refused to https://api.example.com/v1"
        ));
        assert!(!is_network_failure("ConnectionRefusedError: [Errno 111] Connection refused"));
        assert!(!is_network_failure("Failed to establish a new connection: host='127.0.0.1' Connection refused"));
        assert!(!is_network_failure("urlopen error [Errno 111] Connection refused: http://localhost:8000/"));
        assert!(!is_network_failure("assert 1 == 2"));
    }

    #[test]
    fn log_summary_messages_of_a_missing_network_are_recognised() {
        let log = "\
=========================== short test summary info ============================
FAILED tests/test_api.py::test_get - requests.exceptions.ConnectionError: HTTPSConnectionPool(host='httpbin.org', port=443): Max retries exceeded with url: /get (Caused by NewConnec...
FAILED tests/test_api.py::test_local - requests.exceptions.ConnectionError: HTTPConnectionPool(host='localhost', port=5000): Max retries exceeded
FAILED tests/test_api.py::test_math - assert 1 == 2
PASSED tests/test_api.py::test_ok
";
        let run = parse_pytest_log(log);
        assert_eq!(run.network_failures.iter().collect::<Vec<_>>(), ["tests/test_api.py::test_get"]);
        assert_eq!(run.tests.len(), 4);
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
