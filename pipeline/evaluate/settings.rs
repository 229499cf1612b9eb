//! Resolving `evaluate`'s settings: the command line's plain values over the
//! config (containers and limits as for validate), where the report and logs go,
//! and the checks that the release folder and the predictions file exist. The
//! grading itself is in the rest of `evaluate`.

use std::path::{Path, PathBuf};

use super::{EvaluateSettings, Mode};
use crate::UsageError;
use crate::probe::ProbeConfig;
use crate::validate::ValidateConfig;

/// Evaluate's command-line values, plain (no clap types).
#[derive(Debug, Clone)]
pub struct EvaluateFlags {
    /// `--release`: `<data-dir>/releases/NAME/VERSION`.
    pub release: PathBuf,
    /// `--predictions`.
    pub predictions: PathBuf,
    pub mode: Mode,
    /// `--workers`; as for validate when `None`.
    pub workers: Option<usize>,
    /// `--out`; `<data-dir>/evaluations/<name>-<version>.<mode>.<predictions>.json` when `None`.
    pub out: Option<PathBuf>,
}

#[derive(Debug, thiserror::Error)]
pub enum EvaluateSettingsError {
    /// Bad usage (exit code 2).
    #[error(transparent)]
    Usage(#[from] UsageError),
    #[error("failed to create the data dir; pass a writable `--data-dir`")]
    DataDir(#[source] std::io::Error),
}

impl EvaluateSettings {
    /// Defaults < config file < environment (all three in `containers`, the config's
    /// `[validate]`, whose containers and limits evaluate's jobs share, and in `probe`,
    /// whose mutants `--mode swt` runs) < `flags`; creates the data dir, whose
    /// canonical path labels this run's containers.
    pub fn resolve(
        data_dir: &Path,
        containers: &ValidateConfig,
        probe: &ProbeConfig,
        flags: &EvaluateFlags,
    ) -> Result<EvaluateSettings, EvaluateSettingsError> {
        if !flags.release.is_dir() {
            return Err(UsageError::new(format!("the release folder `{}` does not exist", flags.release.display()))
                .with_hint("pass `<data-dir>/releases/NAME/VERSION`, made by `swe-harvest release ... --images`")
                .into());
        }
        if !flags.predictions.is_file() {
            return Err(UsageError::new(format!(
                "the predictions file `{}` does not exist",
                flags.predictions.display()
            ))
            .into());
        }
        let run_name =
            format!("{}.{}.{}", release_label(&flags.release), flags.mode.name(), file_stem(&flags.predictions));
        let out = flags.out.clone().unwrap_or_else(|| data_dir.join("evaluations").join(format!("{run_name}.json")));
        fs_err::create_dir_all(data_dir).map_err(EvaluateSettingsError::DataDir)?;
        let data_dir_label =
            fs_err::canonicalize(data_dir).unwrap_or_else(|_| data_dir.to_path_buf()).display().to_string();
        Ok(EvaluateSettings {
            mutants: probe.mutants,
            data_dir: data_dir.to_path_buf(),
            mirrors_dir: std::env::var_os(crate::env_vars::SWE_HARVEST_MIRRORS).map(Into::into),
            release_dir: flags.release.clone(),
            predictions_path: flags.predictions.clone(),
            mode: flags.mode,
            workers: containers.workers(flags.workers),
            limits: containers.container_limits(),
            out,
            logs_dir: data_dir.join("logs").join("evaluate").join(&run_name),
            data_dir_label,
        })
    }
}

fn file_stem(path: &Path) -> String {
    path.file_stem().map(|stem| stem.to_string_lossy().into_owned()).unwrap_or_else(|| "predictions".into())
}

/// `<name>-<version>` of a release folder `.../releases/<name>/<version>`.
fn release_label(dir: &Path) -> String {
    let canonical = fs_err::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let version = canonical.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
    let name = canonical
        .parent()
        .and_then(Path::file_name)
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!("{name}-{version}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_report_is_named_after_the_release_mode_and_predictions() {
        let root = tempfile::tempdir().unwrap();
        let release = root.path().join("releases").join("bench").join("2026.11");
        fs_err::create_dir_all(&release).unwrap();
        let predictions = root.path().join("preds.jsonl");
        fs_err::write(&predictions, "").unwrap();
        let data_dir = root.path().join("data");
        let flags = EvaluateFlags { release, predictions, mode: Mode::Swt, workers: Some(2), out: None };
        let settings =
            EvaluateSettings::resolve(&data_dir, &ValidateConfig::default(), &ProbeConfig::default(), &flags).unwrap();
        assert_eq!(settings.out, data_dir.join("evaluations").join("bench-2026.11.swt.preds.json"));
        assert_eq!(settings.logs_dir, data_dir.join("logs").join("evaluate").join("bench-2026.11.swt.preds"));
        assert_eq!(settings.workers, 2);
        assert!(data_dir.is_dir(), "the data dir is created");
    }

    #[test]
    fn a_missing_release_folder_is_bad_usage() {
        let root = tempfile::tempdir().unwrap();
        let flags = EvaluateFlags {
            release: root.path().join("nowhere"),
            predictions: root.path().join("preds.jsonl"),
            mode: Mode::Swe,
            workers: None,
            out: None,
        };
        let error = EvaluateSettings::resolve(root.path(), &ValidateConfig::default(), &ProbeConfig::default(), &flags)
            .unwrap_err();
        assert!(matches!(error, EvaluateSettingsError::Usage(_)), "{error}");
    }
}
