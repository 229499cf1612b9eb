//! `evaluate`: grades predictions against a release with instance images.
//!
//! - `--mode swt` (test generation, SWT-Bench): `model_patch` adds or changes tests;
//!   each is run on R and on R∘X with the line counter on ([`grade::swt`]), and
//!   reported as applied, reproduced, F→P / F→F / P→P / P→F and ΔC.
//! - `--mode swe` (issue resolution): `model_patch` changes code; the task's own eval
//!   script runs, and FAIL_TO_PASS / PASS_TO_PASS decide ([`grade::swe`]).
//!
//! Predictions that are empty, do not apply or name unknown tasks are reported, never
//! fatal. Each graded prediction is appended to `<out>.progress.jsonl` as it
//! finishes, so a killed `evaluate` resumes where it stopped (errors are retried);
//! the final report replaces it.

pub mod grade;
pub mod inputs;
pub mod report;
mod settings;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::progress::Reporter;
use crate::sandbox::{Backend, Limits};
use grade::GradeContext;
use inputs::{Prediction, ReleaseTask};
use report::{PredictionReport, Report, Status};
pub use settings::{EvaluateFlags, EvaluateSettingsError};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Swe,
    Swt,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Swe => "swe",
            Mode::Swt => "swt",
        }
    }
}

#[derive(Debug, Clone)]
pub struct EvaluateSettings {
    /// `--mode swt`: how many mutants of each gold patch a generated test suite is run
    /// against (`probe.mutants`: the same mutants probe ran, since they are made
    /// deterministically); 0 for none.
    pub mutants: usize,
    /// The data dir and `SWE_HARVEST_MIRRORS`: where the mutants' mirrors are found.
    pub data_dir: PathBuf,
    pub mirrors_dir: Option<PathBuf>,
    pub release_dir: PathBuf,
    pub predictions_path: PathBuf,
    pub mode: Mode,
    pub workers: usize,
    pub limits: Limits,
    /// The final JSON report; its progress file sits next to it.
    pub out: PathBuf,
    pub logs_dir: PathBuf,
    /// The label of this run's containers (so a later run removes leftovers).
    pub data_dir_label: String,
}

/// `<out>.progress.jsonl`: the predictions graded so far, one JSON line each.
pub fn progress_path(out: &Path) -> PathBuf {
    let mut name = out.file_name().map(|name| name.to_os_string()).unwrap_or_default();
    name.push(".progress.jsonl");
    out.with_file_name(name)
}

/// What identifies a graded prediction across runs: mode, task, image, model, patch.
pub fn prediction_key(mode: Mode, task: &ReleaseTask, prediction: &Prediction) -> String {
    let mut hasher = Sha256::new();
    for part in
        [mode.name(), &task.instance_id, &task.image, &prediction.model, prediction.patch.as_deref().unwrap_or("")]
    {
        hasher.update(part.as_bytes());
        hasher.update([0]);
    }
    hex::encode(hasher.finalize())
}

/// One line of the progress file.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct ProgressLine {
    pub key: String,
    pub report: PredictionReport,
}

fn read_progress(path: &Path) -> BTreeMap<String, PredictionReport> {
    let Ok(file) = fs_err::File::open(path) else { return BTreeMap::new() };
    std::io::BufReader::new(file)
        .lines()
        .map_while(Result::ok)
        // A line cut short by a kill is not valid JSON: skipped, graded again.
        .filter_map(|line| serde_json::from_str::<ProgressLine>(&line).ok())
        .filter(|line| line.report.status != Status::Error)
        .map(|line| (line.key, line.report))
        .collect()
}

/// Grades every prediction; returns the report (also written to `settings.out`).
pub async fn run(
    settings: &EvaluateSettings,
    backend: std::sync::Arc<dyn Backend>,
    tasks: &BTreeMap<String, ReleaseTask>,
    predictions: &[Prediction],
    reporter: &dyn Reporter,
) -> anyhow::Result<Report> {
    // From here on, Ctrl-C and SIGTERM stop the grading cleanly instead of killing the process.
    let mut interruption = crate::interrupt::Interruption::listen();
    let removed = backend.sweep(&settings.data_dir_label).await;
    if removed > 0 {
        tracing::info!(removed, "removed containers left by an earlier, interrupted run");
    }
    let progress_path = progress_path(&settings.out);
    let mut done = read_progress(&progress_path);
    if !done.is_empty() {
        tracing::info!(graded = done.len(), path = %progress_path.display(), "resuming: predictions graded before are kept");
    }
    if let Some(parent) = progress_path.parent() {
        fs_err::create_dir_all(parent)?;
    }

    // Decide each prediction's fate; collect the ones to run.
    let mut reports: Vec<Option<PredictionReport>> = vec![None; predictions.len()];
    let mut seen = BTreeSet::new();
    let mut todo = Vec::new();
    for (index, prediction) in predictions.iter().enumerate() {
        let Some(task) = tasks.get(&prediction.instance_id) else {
            reports[index] =
                Some(PredictionReport::new(&prediction.instance_id, &prediction.model, Status::UnknownTask));
            continue;
        };
        // Both become folders of the logs: a release's id or a model's name that is not
        // one safe path component is an error of this prediction, not of the run.
        let checked = crate::model::ids::check_id("instance_id", &task.instance_id).and_then(|()| {
            crate::model::ids::check_id(
                "model_name_or_path (as a folder name)",
                &grade::model_folder(&prediction.model),
            )
        });
        if let Err(error) = checked {
            reports[index] = Some(PredictionReport {
                detail: Some(error.to_string()),
                ..PredictionReport::new(&prediction.instance_id, &prediction.model, Status::Error)
            });
            continue;
        }
        if !seen.insert((prediction.model.clone(), prediction.instance_id.clone())) {
            reports[index] = Some(PredictionReport::new(&prediction.instance_id, &prediction.model, Status::Duplicate));
            continue;
        }
        if prediction.patch.as_deref().is_none_or(|patch| patch.trim().is_empty()) {
            let mut report = PredictionReport::new(&prediction.instance_id, &prediction.model, Status::EmptyPatch);
            if settings.mode == Mode::Swt {
                report.reproduced = Some(false);
                report.change_coverage = task.change_coverage_of_nothing();
            } else {
                report.resolved = Some(false);
            }
            reports[index] = Some(report);
            continue;
        }
        let key = prediction_key(settings.mode, task, prediction);
        match done.remove(&key) {
            Some(report) => reports[index] = Some(report),
            None => todo.push((index, key, task, prediction)),
        }
    }

    // Images must be on the engine: a missing one is an error for its predictions.
    let mut missing_images = BTreeSet::new();
    for image in todo.iter().map(|(_, _, task, _)| task.image.clone()).collect::<BTreeSet<_>>() {
        if backend.image_id(&image).await.is_none() {
            missing_images.insert(image);
        }
    }

    let context = GradeContext {
        backend: backend.as_ref(),
        mutants: settings.mutants,
        data_dir: settings.data_dir.clone(),
        mirrors_dir: settings.mirrors_dir.clone(),
        limits: settings.limits,
        logs_dir: settings.logs_dir.clone(),
        data_dir_label: settings.data_dir_label.clone(),
    };
    let mut progress = fs_err::OpenOptions::new().create(true).append(true).open(&progress_path)?;
    reporter.start(&format!("evaluate {}", settings.mode.name()), Some(todo.len() as u64));
    let jobs = todo.into_iter().map(|(index, key, task, prediction)| {
                let (context, missing_images) = (&context, &missing_images);
                async move {
                    let patch = prediction.patch.as_deref().unwrap_or_default();
                    let report = if missing_images.contains(&task.image) {
                        PredictionReport {
                            detail: Some(format!(
                                "the instance image `{}` is not on the Docker engine; pull it, or make the release with `--images` on this machine",
                                task.image
                            )),
                            ..PredictionReport::new(&task.instance_id, &prediction.model, Status::Error)
                        }
                    } else {
                        match settings.mode {
                            Mode::Swt => grade::swt(context, task, &prediction.model, patch).await,
                            Mode::Swe => grade::swe(context, task, &prediction.model, patch).await,
                        }
                    };
                    (index, key, report)
                }
            });
    // Each result is recorded as it comes, so that an interrupted run resumes after it.
    let (graded, interrupted) = crate::interrupt::pooled(
        &mut interruption,
        jobs,
        settings.workers,
        |(_, key, report): &(usize, String, PredictionReport)| {
            reporter.advance(1);
            let line = serde_json::to_string(&ProgressLine { key: key.clone(), report: report.clone() })
                .expect("reports serialize");
            if let Err(error) = writeln!(progress, "{line}").and_then(|()| progress.sync_data()) {
                tracing::warn!(%error, "could not record progress");
            }
        },
    )
    .await;
    backend.remove_running().await;
    reporter.finish();
    if let Some(interrupt) = interrupted {
        anyhow::bail!(
            "interrupted by {interrupt}: the graded predictions are kept in `{}`; run the same command again to resume",
            progress_path.display()
        );
    }
    for (index, _, report) in graded {
        reports[index] = Some(report);
    }
    let predictions_reports: Vec<PredictionReport> =
        reports.into_iter().map(|report| report.expect("every prediction is graded")).collect();
    let report = Report {
        mode: settings.mode.name().to_string(),
        release: settings.release_dir.display().to_string(),
        predictions_file: settings.predictions_path.display().to_string(),
        release_tasks: tasks.len(),
        totals: report::totals(&predictions_reports, settings.mode == Mode::Swt),
        by_difficulty: if settings.mode == Mode::Swe {
            let buckets = tasks
                .iter()
                .filter_map(|(id, task)| task.difficulty.clone().map(|difficulty| (id.clone(), difficulty)))
                .collect();
            report::resolved_by_difficulty(&predictions_reports, &buckets)
        } else {
            Vec::new()
        },
        unknown_tasks: predictions_reports
            .iter()
            .filter(|report| report.status == Status::UnknownTask)
            .map(|report| report.instance_id.clone())
            .collect(),
        empty_patches: predictions_reports.iter().filter(|report| report.status == Status::EmptyPatch).count(),
        errors: predictions_reports.iter().filter(|report| report.status == Status::Error).count(),
        predictions: predictions_reports,
    };
    let text = serde_json::to_string_pretty(&report).expect("reports serialize") + "\n";
    crate::dataset::write_durably(&settings.out, |file| file.write_all(text.as_bytes()))?;
    let _ = fs_err::remove_file(&progress_path);
    Ok(report)
}
