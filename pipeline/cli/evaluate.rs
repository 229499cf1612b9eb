//! `evaluate`: grades predictions against a release with instance images, prints the
//! per-prediction and per-model tables on stdout and writes the JSON report.

use std::io::Write;

use anyhow::Context;

use swe_harvest::evaluate::{self, EvaluateFlags, EvaluateSettings, Mode, inputs};

use super::args::{EvaluateArgs, EvaluateMode};
use super::logging::CliReporter;
use super::{ExitStatus, GlobalSettings, runtime};

/// The command line's values for the library.
fn flags(args: &EvaluateArgs) -> EvaluateFlags {
    EvaluateFlags {
        release: args.release.clone(),
        predictions: args.predictions.clone(),
        mode: match args.mode {
            EvaluateMode::Swe => Mode::Swe,
            EvaluateMode::Swt => Mode::Swt,
        },
        workers: args.workers,
        out: args.out.clone(),
    }
}

pub fn evaluate(global: &GlobalSettings, args: &EvaluateArgs) -> anyhow::Result<ExitStatus> {
    let mut settings = EvaluateSettings::resolve(
        &global.data_dir,
        &global.config.config.validate,
        &global.config.config.probe,
        &flags(args),
    )?;
    let tasks = inputs::read_release(&settings.release_dir)?;
    let predictions = inputs::read_predictions(&settings.predictions_path)?;
    let reporter = CliReporter::new();
    let report = runtime()?.block_on(async {
        let (kind, options) = super::validate::backend_of(global, args.backend);
        let backend = swe_harvest::sandbox::connect_with(kind, &options).await?;
        settings.workers =
            super::validate::workers_on(backend.as_ref(), global, args.workers, settings.workers, settings.limits)
                .await;
        evaluate::run(&settings, backend, &tasks, &predictions, &reporter).await
    })?;
    std::io::stdout()
        .lock()
        .write_all(evaluate::report::render(&report).as_bytes())
        .context("failed to write to stdout")?;
    eprintln!("evaluate: report written to {}", settings.out.display());
    Ok(if report.errors > 0 { ExitStatus::Failure } else { ExitStatus::Success })
}
