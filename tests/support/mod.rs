//! Support code shared by the integration tests.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The `swe-harvest` binary with a clean environment: no `SWE_HARVEST_*` or token
/// variables leak in from the developer's shell, and the working directory is a
/// temporary folder (so `configs/pipeline.toml` is not picked up by accident).
pub struct SweHarvest {
    pub data_dir: PathBuf,
    pub work_dir: tempfile::TempDir,
}

impl SweHarvest {
    pub fn new() -> SweHarvest {
        let work_dir = tempfile::tempdir().expect("temp dir");
        SweHarvest { data_dir: work_dir.path().join("data"), work_dir }
    }

    pub fn command(&self) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_swe-harvest"));
        for (name, _) in std::env::vars() {
            if name.starts_with("SWE_HARVEST_") || name.starts_with("GITHUB_TOKEN") || name == "RUST_LOG" {
                command.env_remove(name);
            }
        }
        command.current_dir(self.work_dir.path()).arg("--data-dir").arg(&self.data_dir);
        command
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.command().args(args).output().expect("the swe-harvest binary runs")
    }

    pub fn path(&self, relative: &str) -> PathBuf {
        self.work_dir.path().join(relative)
    }
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The repository root (for `configs/`, `../shared/`).
pub fn project_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}
