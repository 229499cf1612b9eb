//! The test-generation view of a task (SWT-Bench): given the issue and the code
//! before the fix, write tests that fail before the gold patch and pass after it.
//!
//! - [`lines`]: the lines a patch removes (on R) and adds (on R∘X);
//! - [`metrics`]: executable lines, change coverage ΔC, transitions, reproduction;
//! - [`flow`]: the container script that runs T^R and T^R ∪ T on R and R∘X with the
//!   line counter ([`TRACER`]) on, and the parse of what it left;
//! - [`coverage`]: one task's golden change coverage, measured in one container.
//!
//! `validate --coverage` runs the flow with the golden test patch and stores each
//! task's executable lines and ΔC; `evaluate --mode swt` runs it with generated tests.
//!
//! Why our own counter rather than coverage.py: ΔC compares execution *counts*
//! (SWT-Bench traces with a counting `trace` module), coverage.py records only which
//! lines ran, and the environment images are installed offline without it. The
//! counter is standard-library Python that runs on every runtime we build.

pub mod coverage;
pub mod flow;
pub mod lines;
pub mod metrics;

/// The line counter, installed as `sitecustomize` for traced test runs.
pub const TRACER: &str = include_str!("tracer.py");

use crate::store::coverage::GoldenCoverage;

/// The columns a release (and `validate --input`) adds for test generation, in order:
/// the gold patch's executable lines (a count), the golden tests' change coverage
/// ΔC (a share with four decimals), and the executable lines themselves (JSON
/// `{"removed": {path: [line, ...]}, "added": {...}}`, which `evaluate --mode swt`
/// grades against). Empty strings when coverage was not measured; ΔC is also empty
/// when the patch has no executable line.
pub const COVERAGE_COLUMNS: [&str; 3] = ["gold_executable_lines", "golden_change_coverage", "gold_executable_line_map"];

pub fn coverage_columns(coverage: Option<&GoldenCoverage>) -> [String; 3] {
    match coverage {
        Some(GoldenCoverage::Measured { executable, coverage }) => [
            coverage.executable.to_string(),
            coverage.share().map(|share| format!("{share:.4}")).unwrap_or_default(),
            serde_json::to_string(executable).expect("line maps serialize"),
        ],
        _ => [String::new(), String::new(), String::new()],
    }
}
