//! `cargo test` results, read from libtest's lines `test NAME ... ok|FAILED|ignored`
//! (cargo has no structured report on a stable toolchain: libtest's JSON output is
//! unstable). A line counts when it has the shape that SWE-bench 5.x's
//! `parse_log_cargo` reads (`^test\s+(\S+)\s+\.\.\.\s+(\w+)$`, on the trimmed line),
//! so that every id we label is one the harness can grade; Multi-SWE-bench's parser
//! reads the same `\S+` name. The two forms that pattern misses are read too, as the
//! helper rewrites them for the harness: `test NAME - should panic ... ok` and
//! `test NAME ... ignored, REASON`.
//!
//! Ids are the names libtest prints: the test's path inside its target
//! (`tests::unit_ok`, `bytes_mut::tests::test_original_capacity_to_repr`, or a bare
//! `test_get_int` in an integration test), with no crate or target; see the module
//! doc of [`super`]. The same name in two targets of one run is one id whose status
//! is the worse of the two.

use std::collections::BTreeSet;

use crate::ecosystem::ParsedRun;
use crate::model::TestStatus;

/// The wording of a missing network in a failed test's output (Rust's resolver and
/// socket errors; the resolver's message comes from the C library).
const NETWORK_ERRORS: &[&str] = &[
    "failed to lookup address information",
    "Temporary failure in name resolution",
    "Name or service not known",
    "No address associated with hostname",
    "Network is unreachable",
    "dns error",
];

/// One result line: the test's name and status.
pub fn result_line(line: &str) -> Option<(&str, TestStatus)> {
    let rest = line.trim().strip_prefix("test")?;
    if !rest.starts_with(char::is_whitespace) {
        return None;
    }
    let (name, verdict) = rest.trim_start().split_once(" ... ")?;
    let name = name.strip_suffix(" - should panic").unwrap_or(name).trim_end();
    if name.is_empty() || name.contains(char::is_whitespace) {
        return None;
    }
    let verdict = verdict.trim();
    let status = match verdict {
        "ok" => TestStatus::Passed,
        "FAILED" => TestStatus::Failed,
        "ignored" => TestStatus::Skipped,
        _ if verdict.starts_with("ignored, ") => TestStatus::Skipped,
        _ => return None,
    };
    Some((name, status))
}

/// The tests whose captured output (`---- NAME stdout ----` sections) says the
/// network is missing.
fn network_failures(log: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut current: Option<&str> = None;
    for line in log.lines() {
        let trimmed = line.trim();
        if let Some(name) = trimmed.strip_prefix("---- ").and_then(|rest| rest.strip_suffix(" stdout ----")) {
            current = Some(name.strip_suffix(" - should panic").unwrap_or(name));
            continue;
        }
        if trimmed == "failures:" || trimmed.starts_with("test result:") {
            current = None;
            continue;
        }
        if let Some(name) = current {
            if NETWORK_ERRORS.iter().any(|phrase| line.contains(phrase)) {
                found.insert(name.to_string());
            }
        }
    }
    found
}

/// The results in `cargo test` output.
pub fn parse_cargo_test_log(log: &str) -> ParsedRun {
    let mut run = ParsedRun::default();
    for (name, status) in log.lines().filter_map(result_line) {
        run.record(name, status);
    }
    run.network_failures =
        network_failures(log).into_iter().filter(|name| run.tests.get(name) == Some(&TestStatus::Failed)).collect();
    run
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Real output of Rust 1.63 and 1.85, one target per `cargo test` (see
    /// tests/fixtures/cargo/README.md).
    const RUST_1_63: &str = include_str!("../../../tests/fixtures/cargo/libtest-rust1.63.log");
    const RUST_1_85: &str = include_str!("../../../tests/fixtures/cargo/libtest-rust1.85.log");

    #[test]
    fn captured_output_of_both_toolchains_gives_the_same_results() {
        for log in [RUST_1_63, RUST_1_85] {
            let run = parse_cargo_test_log(log);
            let statuses: Vec<(&str, TestStatus)> =
                run.tests.iter().map(|(name, status)| (name.as_str(), *status)).collect();
            assert_eq!(
                statuses,
                vec![
                    ("a_neg", TestStatus::Failed),
                    ("a_ok", TestStatus::Passed),
                    ("fetch", TestStatus::Failed),
                    ("tests::nested::deep", TestStatus::Passed),
                    ("tests::unit_ignored", TestStatus::Skipped),
                    ("tests::unit_ignored_with_reason", TestStatus::Skipped),
                    ("tests::unit_ok", TestStatus::Passed),
                    ("tests::unit_should_panic", TestStatus::Passed),
                ]
            );
            // The target that does not compile reports nothing: its tests are missing.
            assert!(!run.tests.contains_key("b_mul"));
            assert_eq!(run.network_failures.iter().collect::<Vec<_>>(), vec!["fetch"]);
        }
    }

    #[test]
    fn lines_are_read_as_swebenchs_parse_log_cargo_reads_them() {
        assert_eq!(result_line("test tests::x ... ok"), Some(("tests::x", TestStatus::Passed)));
        assert_eq!(result_line("  test x ... FAILED  "), Some(("x", TestStatus::Failed)));
        assert_eq!(result_line("test\tx ... ok"), Some(("x", TestStatus::Passed)));
        // The summary, doc-tests (a name with spaces) and benches are not results.
        assert_eq!(result_line("test result: ok. 3 passed; 0 failed; 2 ignored"), None);
        assert_eq!(result_line("test src/lib.rs - add (line 3) ... ok"), None);
        assert_eq!(result_line("test bench_x ... bench:       1,234 ns/iter (+/- 5)"), None);
        assert_eq!(result_line("testing x ... ok"), None);
        // Printed output on the result line: not a verdict.
        assert_eq!(result_line("test x ... noise ok"), None);
    }

    #[test]
    fn the_worse_status_wins_for_a_name_in_two_targets() {
        let log = "test same ... ok\ntest same ... FAILED\ntest other ... ignored\ntest other ... ok\n";
        let run = parse_cargo_test_log(log);
        assert_eq!(run.tests["same"], TestStatus::Failed);
        assert_eq!(run.tests["other"], TestStatus::Passed);
    }
}
