//! `evaluate`: grades predictions against a release with instance images, prints the
//! per-prediction and per-model tables on stdout and writes the JSON report.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;

use swe_harvest::UsageError;
use swe_harvest::evaluate::{self, EvaluateSettings, Mode, inputs};
use swe_harvest::validate::ValidateSettings;

use super::args::{EvaluateArgs, EvaluateMode};
use super::logging::CliReporter;
use super::{ExitStatus, GlobalSettings};

fn file_stem(path: &Path) -> String {
    path.file_stem().map(|stem| stem.to_string_lossy().into_owned()).unwrap_or_else(|| "predictions".into())
}

/// `<name>-<version>` of a release folder `.../releases/<name>/<version>`.
fn release_label(dir: &Path) -> String {
    let canonical = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let version = canonical.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
    let name = canonical
        .parent()
        .and_then(Path::file_name)
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!("{name}-{version}")
}

pub fn evaluate(settings: &GlobalSettings, args: &EvaluateArgs) -> anyhow::Result<ExitStatus> {
    if !args.release.is_dir() {
        return Err(UsageError::new(format!("the release folder `{}` does not exist", args.release.display()))
            .with_hint("pass `<data-dir>/releases/NAME/VERSION`, made by `swe-harvest release ... --images`")
            .into());
    }
    if !args.predictions.is_file() {
        return Err(
            UsageError::new(format!("the predictions file `{}` does not exist", args.predictions.display())).into()
        );
    }
    let mode = match args.mode {
        EvaluateMode::Swe => Mode::Swe,
        EvaluateMode::Swt => Mode::Swt,
    };
    let tasks = inputs::read_release(&args.release)?;
    let predictions = inputs::read_predictions(&args.predictions)?;
    let validate_settings =
        ValidateSettings::resolve(settings.data_dir.clone(), settings.config.clone(), args.workers, None, None)?;
    let run_name = format!("{}.{}.{}", release_label(&args.release), mode.name(), file_stem(&args.predictions));
    let out: PathBuf =
        args.out.clone().unwrap_or_else(|| settings.data_dir.join("evaluations").join(format!("{run_name}.json")));
    fs_err::create_dir_all(&settings.data_dir)?;
    let data_dir_label =
        std::fs::canonicalize(&settings.data_dir).unwrap_or_else(|_| settings.data_dir.clone()).display().to_string();
    let evaluate_settings = EvaluateSettings {
        release_dir: args.release.clone(),
        predictions_path: args.predictions.clone(),
        mode,
        workers: validate_settings.workers,
        limits: validate_settings.limits,
        out: out.clone(),
        logs_dir: settings.data_dir.join("logs").join("evaluate").join(&run_name),
        data_dir_label,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("failed to start the async runtime")?;
    let reporter = CliReporter::new();
    let report = runtime.block_on(async {
        let backend = swe_harvest::sandbox::connect(swe_harvest::sandbox::BackendKind::Local).await?;
        evaluate::run(&evaluate_settings, backend, &tasks, &predictions, &reporter).await
    })?;
    std::io::stdout()
        .lock()
        .write_all(evaluate::report::render(&report).as_bytes())
        .context("failed to write to stdout")?;
    eprintln!("evaluate: report written to {}", out.display());
    Ok(if report.errors > 0 { ExitStatus::Failure } else { ExitStatus::Success })
}
