//! The run logs of environments the ladder left. A task's runs write their files
//! (`run-<attempt>.log`, `run-<attempt>-pre.xml`, ...) into the task's log folder,
//! where the review page and the diagnosis find them; each environment's runs would
//! overwrite the last one's (decision, 2026-11-29: a held-out babel row's log showed
//! only its last rung). So the ladder sets the files of an environment it leaves
//! aside, in a folder `rung-<n>-<rung>-<runtime>` of the task's log folder, and
//! brings them back when that environment's runs give the verdict after all.

use std::path::{Path, PathBuf};

use crate::model::EnvironmentSpec;

/// Whether a file of the task's log folder is one of its runs' own.
fn is_run_file(name: &str) -> bool {
    name.starts_with("run-")
}

/// Removes the folders an earlier validate of the task set aside, so that the
/// folder shows this validate's environments only.
pub fn clear(log_dir: &Path) {
    let Ok(entries) = fs_err::read_dir(log_dir) else { return };
    for entry in entries.flatten() {
        if entry.file_name().to_string_lossy().starts_with("rung-") && entry.path().is_dir() {
            if let Err(error) = fs_err::remove_dir_all(entry.path()) {
                tracing::warn!(%error, "could not remove an earlier validate's run logs");
            }
        }
    }
}

/// Moves the run files in `log_dir` into `rung-<number>-<rung>-<runtime>`; the
/// folder, when there were any.
pub fn set_aside(log_dir: &Path, number: usize, spec: &EnvironmentSpec) -> Option<PathBuf> {
    let files: Vec<PathBuf> = fs_err::read_dir(log_dir)
        .ok()?
        .flatten()
        .filter(|entry| is_run_file(&entry.file_name().to_string_lossy()) && entry.path().is_file())
        .map(|entry| entry.path())
        .collect();
    if files.is_empty() {
        return None;
    }
    let folder = log_dir.join(format!("rung-{number}-{}-{}", spec.rung, spec.runtime));
    if let Err(error) = move_files(&files, &folder) {
        tracing::warn!(%error, folder = %folder.display(), "could not set the run logs aside; the next runs overwrite them");
        return None;
    }
    Some(folder)
}

/// Moves the files that `folder` holds back into `log_dir`, and removes it.
pub fn bring_back(log_dir: &Path, folder: &Path) {
    let files: Vec<PathBuf> = match fs_err::read_dir(folder) {
        Ok(entries) => entries.flatten().map(|entry| entry.path()).collect(),
        Err(_) => return,
    };
    match move_files(&files, log_dir) {
        Ok(()) => {
            let _ = fs_err::remove_dir(folder);
        }
        Err(error) => tracing::warn!(%error, folder = %folder.display(), "could not bring the run logs back"),
    }
}

/// `detail` with its paths to files of `log_dir` pointing into `folder`.
pub fn pointing_into(detail: &str, log_dir: &Path, folder: &Path) -> String {
    detail.replace(&format!("{}/run-", log_dir.display()), &format!("{}/run-", folder.display()))
}

fn move_files(files: &[PathBuf], folder: &Path) -> std::io::Result<()> {
    fs_err::create_dir_all(folder)?;
    for file in files {
        if let Some(name) = file.file_name() {
            fs_err::rename(file, folder.join(name))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Rung;

    fn spec(rung: Rung, runtime: &str) -> EnvironmentSpec {
        EnvironmentSpec { rung, runtime: runtime.into(), ..Default::default() }
    }

    fn write(path: &Path, text: &str) {
        fs_err::write(path, text).unwrap();
    }

    #[test]
    fn an_environment_left_keeps_its_run_files_and_gets_them_back_when_its_verdict_stands() {
        let dir = tempfile::tempdir().unwrap();
        let log_dir = dir.path();
        write(&log_dir.join("run-1.log"), "first rung");
        write(&log_dir.join("run-1-pre.xml"), "<pre/>");
        write(&log_dir.join("coverage.log"), "not a run's");
        let first = set_aside(log_dir, 1, &spec(Rung::Dated, "node18")).unwrap();
        assert_eq!(first, log_dir.join("rung-1-dated-node18"));
        assert_eq!(fs_err::read_to_string(first.join("run-1.log")).unwrap(), "first rung");
        assert!(first.join("run-1-pre.xml").exists() && !log_dir.join("run-1.log").exists());
        assert!(log_dir.join("coverage.log").exists(), "only the runs' files move");
        let detail = format!("no test ran (log: {}/run-1.log)", log_dir.display());
        assert_eq!(
            pointing_into(&detail, log_dir, &first),
            format!("no test ran (log: {}/run-1.log)", first.display())
        );
        // The next environment's runs, then its failure: the first one's verdict stands.
        write(&log_dir.join("run-1.log"), "second rung");
        let second = set_aside(log_dir, 2, &spec(Rung::NeighbourRuntime, "node20")).unwrap();
        bring_back(log_dir, &first);
        assert_eq!(fs_err::read_to_string(log_dir.join("run-1.log")).unwrap(), "first rung");
        assert!(log_dir.join("run-1-pre.xml").exists() && !first.exists());
        assert_eq!(fs_err::read_to_string(second.join("run-1.log")).unwrap(), "second rung");
        assert_eq!(set_aside(log_dir, 3, &spec(Rung::Dated, "node18")).map(|_| ()), Some(()));
        assert_eq!(set_aside(log_dir, 4, &spec(Rung::Dated, "node18")), None, "nothing left to set aside");
        clear(log_dir);
        assert!(!second.exists() && log_dir.join("coverage.log").exists());
    }
}
