//! What `evaluate` reports: per prediction, and in total per model.
//!
//! Totals are over the predictions that name a task of the release (one per task and
//! model; empty patches count, as not applied). SWT-Bench's metrics (`--mode swt`):
//! W, the share whose patch applies; S, the share whose tests reproduce the issue;
//! F→×, F→P and P→P, the shares with at least one test that fails on R, fails on R
//! and passes on R∘X, passes on both; mean ΔC over the tasks whose gold patch has
//! executable lines (a patch that does not apply covers nothing). `--mode swe`:
//! applied and resolved shares, also per difficulty bucket of the screen (the
//! release's `difficulty` column).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::swt::metrics::Transitions;

/// How a prediction fared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// It ran (whether or not its patch applied).
    Evaluated,
    /// No patch: nothing ran; counts as not applied.
    EmptyPatch,
    /// The release holds no task of this id: left out of the totals.
    UnknownTask,
    /// A second prediction of the same model for the same task: left out.
    Duplicate,
    /// The machinery failed (Docker, a missing image): left out, and the exit code is 1.
    Error,
}

/// Mutants a generated test suite rejects, of the mutants that ran to a verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MutantsKilled {
    pub killed: usize,
    pub viable: usize,
}

/// Passed out of expected, for FAIL_TO_PASS or PASS_TO_PASS (`--mode swe`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Passed {
    pub passed: usize,
    pub total: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PredictionReport {
    pub instance_id: String,
    pub model_name_or_path: String,
    pub status: Status,
    pub applied: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// `swt`: the tests reproduce the issue.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reproduced: Option<bool>,
    /// `swt`: the generated tests by their results on R and R∘X.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tests: Option<Transitions>,
    /// `swt`: ΔC of the generated tests; `None` when the gold patch's executable lines
    /// are unknown or none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub change_coverage: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub executable_lines: Option<usize>,
    /// `swt`: how many of the gold patch's mutants (probe's wrong fixes) the generated
    /// tests reject, of those that ran: a test that passes on R∘X and fails on R∘M
    /// kills M.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mutants_killed: Option<MutantsKilled>,
    /// `swe`: every FAIL_TO_PASS and PASS_TO_PASS test passes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolved: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fail_to_pass: Option<Passed>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pass_to_pass: Option<Passed>,
}

impl PredictionReport {
    pub fn new(instance_id: &str, model: &str, status: Status) -> PredictionReport {
        PredictionReport {
            instance_id: instance_id.to_string(),
            model_name_or_path: model.to_string(),
            status,
            applied: false,
            detail: None,
            reproduced: None,
            tests: None,
            change_coverage: None,
            executable_lines: None,
            mutants_killed: None,
            resolved: None,
            fail_to_pass: None,
            pass_to_pass: None,
        }
    }

    fn counted(&self) -> bool {
        matches!(self.status, Status::Evaluated | Status::EmptyPatch)
    }
}

/// The totals of one model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Totals {
    pub model_name_or_path: String,
    /// Predictions counted (known tasks, one per task).
    pub tasks: usize,
    pub applied: usize,
    /// W: applied / tasks.
    pub applied_share: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub swt: Option<SwtTotals>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub swe: Option<SweTotals>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SwtTotals {
    pub reproduced: usize,
    /// S.
    pub success_rate: f64,
    /// F→×: some test fails on R.
    pub fail_before_share: f64,
    /// F→P: some test fails on R and passes on R∘X.
    pub fail_to_pass_share: f64,
    /// P→P: some test passes on both.
    pub pass_to_pass_share: f64,
    /// Mean ΔC over `coverage_tasks`.
    pub mean_change_coverage: Option<f64>,
    pub coverage_tasks: usize,
    /// Mutants killed / mutants that ran, summed over the predictions that ran any.
    #[serde(default)]
    pub mutant_kill_rate: Option<f64>,
    #[serde(default)]
    pub mutants_viable: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweTotals {
    pub resolved: usize,
    pub resolved_share: f64,
}

/// The whole report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub mode: String,
    pub release: String,
    pub predictions_file: String,
    pub release_tasks: usize,
    pub predictions: Vec<PredictionReport>,
    pub totals: Vec<Totals>,
    /// `swe`: per model and difficulty bucket, the resolved share (releases made
    /// with the screen's `difficulty` column).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub by_difficulty: Vec<BucketTotals>,
    pub unknown_tasks: Vec<String>,
    pub empty_patches: usize,
    pub errors: usize,
}

/// One model's resolved share in one difficulty bucket.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BucketTotals {
    pub model_name_or_path: String,
    pub difficulty: String,
    pub tasks: usize,
    pub resolved: usize,
    pub resolved_share: f64,
}

/// Per model and difficulty bucket (`difficulty` by instance id; tasks without one are
/// left out), the resolved share of the counted predictions, buckets in
/// SWE-bench Verified's order.
pub fn resolved_by_difficulty(
    predictions: &[PredictionReport],
    difficulty: &BTreeMap<String, String>,
) -> Vec<BucketTotals> {
    let rank = |bucket: &str| {
        crate::screen::Difficulty::ALL.iter().position(|known| known.as_str() == bucket).unwrap_or(usize::MAX)
    };
    let mut counts: BTreeMap<(&str, usize, &str), (usize, usize)> = BTreeMap::new();
    for report in predictions.iter().filter(|report| report.counted()) {
        let Some(bucket) = difficulty.get(&report.instance_id) else { continue };
        let entry = counts.entry((&report.model_name_or_path, rank(bucket), bucket)).or_default();
        entry.0 += 1;
        entry.1 += usize::from(report.resolved == Some(true));
    }
    counts
        .into_iter()
        .map(|((model, _, bucket), (tasks, resolved))| BucketTotals {
            model_name_or_path: model.to_string(),
            difficulty: bucket.to_string(),
            tasks,
            resolved,
            resolved_share: share(resolved, tasks),
        })
        .collect()
}

fn share(count: usize, total: usize) -> f64 {
    if total == 0 { 0.0 } else { count as f64 / total as f64 }
}

/// Totals per model, from the prediction reports.
pub fn totals(predictions: &[PredictionReport], swt: bool) -> Vec<Totals> {
    let mut by_model: BTreeMap<&str, Vec<&PredictionReport>> = BTreeMap::new();
    for report in predictions.iter().filter(|report| report.counted()) {
        by_model.entry(&report.model_name_or_path).or_default().push(report);
    }
    by_model
        .into_iter()
        .map(|(model, reports)| {
            let tasks = reports.len();
            let applied = reports.iter().filter(|report| report.applied).count();
            let with = |test: fn(&Transitions) -> bool| {
                share(reports.iter().filter(|report| report.tests.as_ref().is_some_and(test)).count(), tasks)
            };
            let swt_totals = swt.then(|| {
                let reproduced = reports.iter().filter(|report| report.reproduced == Some(true)).count();
                let coverage: Vec<f64> = reports.iter().filter_map(|report| report.change_coverage).collect();
                let (killed, viable) = reports
                    .iter()
                    .filter_map(|report| report.mutants_killed)
                    .fold((0, 0), |(killed, viable), counts| (killed + counts.killed, viable + counts.viable));
                SwtTotals {
                    mutant_kill_rate: (viable > 0).then(|| share(killed, viable)),
                    mutants_viable: viable,
                    reproduced,
                    success_rate: share(reproduced, tasks),
                    fail_before_share: with(Transitions::fails_before),
                    fail_to_pass_share: with(|tests| !tests.fail_to_pass.is_empty()),
                    pass_to_pass_share: with(|tests| !tests.pass_to_pass.is_empty()),
                    mean_change_coverage: (!coverage.is_empty())
                        .then(|| coverage.iter().sum::<f64>() / coverage.len() as f64),
                    coverage_tasks: coverage.len(),
                }
            });
            let swe_totals = (!swt).then(|| {
                let resolved = reports.iter().filter(|report| report.resolved == Some(true)).count();
                SweTotals { resolved, resolved_share: share(resolved, tasks) }
            });
            Totals {
                model_name_or_path: model.to_string(),
                tasks,
                applied,
                applied_share: share(applied, tasks),
                swt: swt_totals,
                swe: swe_totals,
            }
        })
        .collect()
}

fn percent(value: f64) -> String {
    format!("{:.1}%", value * 100.0)
}

fn yes_no(value: bool) -> &'static str {
    if value { "yes" } else { "no" }
}

/// The report as tables for a terminal.
pub fn render(report: &Report) -> String {
    let mut text = String::new();
    let swt = report.mode == "swt";
    let _ = writeln!(
        text,
        "evaluate --mode {}: {} predictions from {} on {} ({} tasks)\n",
        report.mode,
        report.predictions.len(),
        report.predictions_file,
        report.release,
        report.release_tasks
    );
    let mut rows: Vec<Vec<String>> = Vec::new();
    if swt {
        rows.push(
            [
                "instance_id",
                "model",
                "status",
                "applied",
                "reproduced",
                "F→P",
                "F→F",
                "P→P",
                "P→F",
                "ΔC",
                "mutants killed",
            ]
            .map(String::from)
            .to_vec(),
        );
    } else {
        rows.push(
            ["instance_id", "model", "status", "applied", "resolved", "FAIL_TO_PASS", "PASS_TO_PASS"]
                .map(String::from)
                .to_vec(),
        );
    }
    for prediction in &report.predictions {
        let status = serde_json::to_value(prediction.status)
            .ok()
            .and_then(|value| value.as_str().map(String::from))
            .unwrap_or_default();
        let mut row = vec![
            prediction.instance_id.clone(),
            prediction.model_name_or_path.clone(),
            status,
            yes_no(prediction.applied).to_string(),
        ];
        if swt {
            let count = |pick: fn(&Transitions) -> usize| {
                prediction.tests.as_ref().map(|tests| pick(tests).to_string()).unwrap_or_else(|| "-".into())
            };
            row.push(prediction.reproduced.map(|value| yes_no(value).to_string()).unwrap_or_else(|| "-".into()));
            row.push(count(|tests| tests.fail_to_pass.len()));
            row.push(count(|tests| tests.fail_to_fail.len()));
            row.push(count(|tests| tests.pass_to_pass.len()));
            row.push(count(|tests| tests.pass_to_fail.len()));
            row.push(prediction.change_coverage.map(percent).unwrap_or_else(|| "-".into()));
            row.push(
                prediction
                    .mutants_killed
                    .map(|counts| format!("{}/{}", counts.killed, counts.viable))
                    .unwrap_or_else(|| "-".into()),
            );
        } else {
            let passed = |value: Option<Passed>| {
                value.map(|value| format!("{}/{}", value.passed, value.total)).unwrap_or_else(|| "-".into())
            };
            row.push(prediction.resolved.map(|value| yes_no(value).to_string()).unwrap_or_else(|| "-".into()));
            row.push(passed(prediction.fail_to_pass));
            row.push(passed(prediction.pass_to_pass));
        }
        rows.push(row);
    }
    write_table(&mut text, &rows);
    let _ = writeln!(text);
    let mut rows: Vec<Vec<String>> = Vec::new();
    if swt {
        rows.push(
            ["model", "tasks", "W", "S", "F→×", "F→P", "P→P", "mean ΔC", "mutants killed"].map(String::from).to_vec(),
        );
    } else {
        rows.push(["model", "tasks", "applied", "resolved"].map(String::from).to_vec());
    }
    for totals in &report.totals {
        let mut row = vec![totals.model_name_or_path.clone(), totals.tasks.to_string(), percent(totals.applied_share)];
        if let Some(swt) = &totals.swt {
            row.extend([
                percent(swt.success_rate),
                percent(swt.fail_before_share),
                percent(swt.fail_to_pass_share),
                percent(swt.pass_to_pass_share),
                swt.mean_change_coverage.map(percent).unwrap_or_else(|| "-".into()),
                swt.mutant_kill_rate
                    .map(|rate| format!("{} of {}", percent(rate), swt.mutants_viable))
                    .unwrap_or_else(|| "-".into()),
            ]);
        }
        if let Some(swe) = &totals.swe {
            row.push(format!("{} ({})", percent(swe.resolved_share), swe.resolved));
        }
        rows.push(row);
    }
    write_table(&mut text, &rows);
    if !report.by_difficulty.is_empty() {
        let _ = writeln!(text, "\nresolved by difficulty (the screen's estimate):");
        let mut rows: Vec<Vec<String>> = vec![["model", "difficulty", "tasks", "resolved"].map(String::from).to_vec()];
        for bucket in &report.by_difficulty {
            rows.push(vec![
                bucket.model_name_or_path.clone(),
                bucket.difficulty.clone(),
                bucket.tasks.to_string(),
                format!("{} ({})", percent(bucket.resolved_share), bucket.resolved),
            ]);
        }
        write_table(&mut text, &rows);
    }
    if !report.unknown_tasks.is_empty() {
        let _ =
            writeln!(text, "\npredictions for tasks the release does not hold: {}", report.unknown_tasks.join(", "));
    }
    if report.empty_patches > 0 {
        let _ = writeln!(text, "empty patches: {} (counted as not applied)", report.empty_patches);
    }
    if report.errors > 0 {
        let _ = writeln!(
            text,
            "errors: {} (see `detail` in the JSON report; run evaluate again to retry them)",
            report.errors
        );
    }
    text
}

fn write_table(text: &mut String, rows: &[Vec<String>]) {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|column| rows.iter().filter_map(|row| row.get(column)).map(|cell| cell.chars().count()).max().unwrap_or(0))
        .collect();
    for row in rows {
        let cells: Vec<String> =
            row.iter().enumerate().map(|(column, cell)| format!("{cell:<width$}", width = widths[column])).collect();
        let _ = writeln!(text, "{}", cells.join("  ").trim_end());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn swt_report(
        model: &str,
        applied: bool,
        reproduced: bool,
        tests: Transitions,
        coverage: Option<f64>,
    ) -> PredictionReport {
        PredictionReport {
            applied,
            reproduced: Some(reproduced),
            tests: Some(tests),
            change_coverage: coverage,
            ..PredictionReport::new("x", model, Status::Evaluated)
        }
    }

    #[test]
    fn resolved_shares_are_counted_per_difficulty_bucket_in_swe_bench_verifieds_order() {
        let resolved = |id: &str, value: bool| PredictionReport {
            resolved: Some(value),
            ..PredictionReport::new(id, "m", Status::Evaluated)
        };
        let reports = vec![
            resolved("a", true),
            resolved("b", false),
            resolved("c", true),
            resolved("d", true),
            PredictionReport::new("e", "m", Status::EmptyPatch),
            PredictionReport::new("f", "m", Status::UnknownTask),
        ];
        let buckets: BTreeMap<String, String> = [
            ("a", "15 min - 1 hour"),
            ("b", "15 min - 1 hour"),
            ("c", "<15 min fix"),
            ("e", "<15 min fix"),
            ("f", "<15 min fix"),
        ]
        .iter()
        .map(|(id, bucket)| (id.to_string(), bucket.to_string()))
        .collect();
        let totals = resolved_by_difficulty(&reports, &buckets);
        let rows: Vec<(&str, usize, usize)> =
            totals.iter().map(|bucket| (bucket.difficulty.as_str(), bucket.tasks, bucket.resolved)).collect();
        assert_eq!(rows, [("<15 min fix", 2, 1), ("15 min - 1 hour", 2, 1)], "d has no bucket, f is unknown");
        assert_eq!(totals[0].resolved_share, 0.5);
    }

    #[test]
    fn swt_totals_follow_swt_benchs_definitions() {
        let test = |name: &str| vec![name.to_string()];
        let reports = vec![
            swt_report("m", true, true, Transitions { fail_to_pass: test("a"), ..Transitions::default() }, Some(1.0)),
            swt_report("m", true, false, Transitions { pass_to_pass: test("b"), ..Transitions::default() }, Some(0.5)),
            swt_report("m", true, false, Transitions { fail_to_fail: test("c"), ..Transitions::default() }, Some(0.5)),
            swt_report("m", false, false, Transitions::default(), Some(0.0)),
            PredictionReport::new("y", "m", Status::UnknownTask),
            PredictionReport::new("z", "m", Status::EmptyPatch),
        ];
        let totals = totals(&reports, true);
        assert_eq!(totals.len(), 1);
        let (totals, swt) = (&totals[0], totals[0].swt.as_ref().unwrap());
        assert_eq!(totals.tasks, 5, "the unknown task is left out, the empty patch counts");
        assert_eq!(totals.applied, 3);
        assert_eq!(swt.reproduced, 1);
        assert!((swt.success_rate - 0.2).abs() < 1e-9);
        assert!((swt.fail_before_share - 0.4).abs() < 1e-9, "F→P and F→F count as F→×");
        assert!((swt.fail_to_pass_share - 0.2).abs() < 1e-9);
        assert!((swt.pass_to_pass_share - 0.2).abs() < 1e-9);
        assert_eq!(swt.coverage_tasks, 4);
        assert!((swt.mean_change_coverage.unwrap() - 0.5).abs() < 1e-9);
    }
}
