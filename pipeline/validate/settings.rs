//! Validate's settings: `[validate]` in the config ([`ValidateConfig`], with its checks:
//! the runs here, the containers' limits, backend and registries sandbox's, the
//! runtime keys ecosystem's), and what a run works with, resolved (defaults < config
//! file < environment < the command line's plain [`ValidateFlags`]).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::ValidateError;
use crate::ecosystem::runtimes;
use crate::sandbox::images::ImageSettings;
use crate::sandbox::registries::{self, Registries};
use crate::sandbox::{LimitSettings, Limits};
use crate::settings::{ConfigError, invalid};

/// `[validate]` in `configs/pipeline.toml`: the runs, and the containers that every
/// stage running code shares (evaluate's jobs, release's image builds).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ValidateConfig {
    /// Tasks validated at once; 0 chooses from cores and memory.
    pub workers: usize,
    /// Repetitions of the pre and of the post run.
    pub runs: u32,
    /// Wall-time limit of one test run inside a container.
    pub run_timeout_secs: u64,
    /// Wall-time limit of the ladder's check run of a new environment image (at most
    /// `run_timeout_secs`): a check that runs out of time does not condemn the image.
    pub check_timeout_secs: u64,
    /// Wall-time limit of building one environment image.
    pub build_timeout_secs: u64,
    pub memory_bytes: u64,
    /// CPUs per container (fractions allowed).
    pub cpus: f64,
    pub pids_limit: i64,
    /// The largest file a job's processes may write (`ulimit -f`): past it a write fails
    /// (SIGXFSZ stops a process that does not ignore it, "File size limit exceeded";
    /// Python gets "File too large"). zstd's `playTests.sh` writes a 4 GiB file; raise
    /// this for such a project.
    pub file_size_bytes: u64,
    /// Base image per runtime: Python's by version (`3.11`), Go's as `go1.24`, Java's as `jdk17`,
    /// Rust's as `rust1.85`, C's as `gcc12` (the forms of the runtime catalogue,
    /// [`crate::ecosystem::runtimes`]). The defaults are the catalogue's images, made by
    /// scripts/setup.sh; a config's entries are added to them (the same key: replaced).
    #[serde(deserialize_with = "over_default_base_images")]
    pub base_images: BTreeMap<String, String>,
    /// A CA bundle made available inside containers at build time (for a
    /// TLS-intercepting proxy in front of the package index).
    pub extra_ca_file: Option<PathBuf>,
    /// Gradle distributions downloaded elsewhere (services.gradle.org cannot be
    /// reached from image builds), by the version a project's wrapper asks for:
    /// `{ "8.5" = "/srv/gradle/gradle-8.5-bin.zip" }`. Put into the environment image
    /// of a Gradle project that wants that version (see `ecosystem::java::gradle`).
    pub gradle_distributions: BTreeMap<String, PathBuf>,
    /// The package registries that environment image builds reach, one per language.
    pub registries: Registries,
    /// Deprecated: the PyPI index, now `registries.pypi_index` (still read; setting
    /// both to different values is an error).
    pub index_url: Option<String>,
    /// Where the runs go: `local` (the Docker engine) or `swarm` (a swarm whose
    /// manager is that engine); `--backend` overrides it.
    pub backend: crate::sandbox::BackendKind,
    /// The registry the swarm backend pushes job images to and every node pulls
    /// from (`host:port`); credentials come from the environment only.
    pub registry: Option<String>,
    /// Swarm placement constraints for every job, e.g. `["node.role==worker"]`.
    pub swarm_constraints: Vec<String>,
}

impl Default for ValidateConfig {
    fn default() -> Self {
        ValidateConfig {
            workers: 0,
            runs: 3,
            run_timeout_secs: 900,
            check_timeout_secs: 300,
            build_timeout_secs: 1_800,
            memory_bytes: 4 * 1024 * 1024 * 1024,
            cpus: 1.0,
            pids_limit: 512,
            file_size_bytes: crate::sandbox::DEFAULT_FILE_SIZE_BYTES,
            base_images: crate::ecosystem::runtimes::default_base_images(),
            extra_ca_file: None,
            gradle_distributions: BTreeMap::new(),
            registries: Registries::default(),
            index_url: None,
            backend: crate::sandbox::BackendKind::Local,
            registry: None,
            swarm_constraints: Vec::new(),
        }
    }
}

impl ValidateConfig {
    /// The registries in effect: `registries`, with the deprecated `index_url` as the
    /// PyPI index when it is set.
    pub fn effective_registries(&self) -> Registries {
        let mut registries = self.registries.clone();
        if let Some(index_url) = &self.index_url {
            registries.pypi_index = index_url.clone();
        }
        registries
    }

    /// The limits of every job's container, validate's and evaluate's alike.
    pub fn container_limits(&self) -> Limits {
        self.limit_settings().limits()
    }

    /// This section's keys that sandbox reads as a container's limits.
    pub fn limit_settings(&self) -> LimitSettings {
        LimitSettings {
            memory_bytes: self.memory_bytes,
            cpus: self.cpus,
            pids_limit: self.pids_limit,
            file_size_bytes: self.file_size_bytes,
            run_timeout_secs: self.run_timeout_secs,
        }
    }

    /// How many jobs run at once: `flag` (`--workers`) when it is above 0, else
    /// `workers`, else (0) from the machine.
    pub fn workers(&self, flag: Option<usize>) -> usize {
        flag.filter(|&workers| workers > 0).unwrap_or(match self.workers {
            0 => default_workers(self.memory_bytes),
            workers => workers,
        })
    }
}

/// Workers from the machine: one per core, no more than memory allows at the
/// per-container limit, at least one.
fn default_workers(memory_bytes: u64) -> usize {
    let cores = std::thread::available_parallelism().map(|cores| cores.get()).unwrap_or(1);
    let memory = fs_err::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|line| line.starts_with("MemTotal:"))
                .and_then(|line| line.split_whitespace().nth(1))
                .and_then(|kib| kib.parse::<u64>().ok())
        })
        .map(|kib| kib * 1024);
    let by_memory = memory.map_or(cores, |total| (total / memory_bytes.max(1)) as usize);
    cores.min(by_memory).max(1)
}

impl ValidateConfig {
    /// The values serde cannot check: counts, limits (sandbox's), runtime keys and
    /// Gradle versions (ecosystem's), registries (sandbox's) and the deprecated
    /// `index_url` beside them.
    pub fn check(&self, origin: &str) -> Result<(), ConfigError> {
        if self.runs == 0 {
            return Err(invalid(origin, "validate.runs", "must be at least 1"));
        }
        self.limit_settings().check(origin, "validate")?;
        for version in self.base_images.keys() {
            if !runtimes::is_runtime_key(version) {
                return Err(invalid(
                    origin,
                    &format!("validate.base_images.\"{version}\""),
                    format!("keys are runtime versions of the forms {}", runtimes::key_forms()),
                ));
            }
        }
        self.registries.check_urls(origin, "validate.registries")?;
        // The allowlist of the registries in effect, the deprecated `index_url` included.
        self.effective_registries().check_allowlist(origin, "validate.registries")?;
        if let Some(index_url) = &self.index_url {
            registries::check_url(origin, "validate.index_url", index_url)?;
            if self.registries.pypi_index != Registries::PYPI && self.registries.pypi_index != *index_url {
                return Err(invalid(
                    origin,
                    "validate.index_url",
                    "is the deprecated name of validate.registries.pypi_index, and both are set to different URLs; \
                     keep only validate.registries.pypi_index",
                ));
            }
            tracing::warn!("validate.index_url is deprecated: set validate.registries.pypi_index instead");
        }
        for version in self.gradle_distributions.keys() {
            if !crate::ecosystem::is_gradle_version(version) {
                return Err(invalid(
                    origin,
                    &format!("validate.gradle_distributions.\"{version}\""),
                    "keys are Gradle versions as a wrapper's distributionUrl names them (`8.5`, `7.6.4`)",
                ));
            }
        }
        Ok(())
    }
}

/// `validate.base_images` as a config gives it: its entries over the defaults (the
/// catalogue's images), so that naming one runtime of one's own keeps the others.
fn over_default_base_images<'de, D>(deserializer: D) -> Result<BTreeMap<String, String>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    let mut base_images = runtimes::default_base_images();
    base_images.extend(BTreeMap::<String, String>::deserialize(deserializer)?);
    Ok(base_images)
}

/// Everything the stage needs, resolved (defaults < config < environment < flags).
#[derive(Debug, Clone)]
pub struct ValidateSettings {
    pub data_dir: PathBuf,
    /// Extra place to look for mirrors (`SWE_HARVEST_MIRRORS`).
    pub mirrors_dir: Option<PathBuf>,
    pub workers: usize,
    pub runs: u32,
    /// Also measure the golden tests' change coverage (`--coverage`).
    pub coverage: bool,
    pub limits: Limits,
    /// The ladder's check run's time limit (`validate.check_timeout_secs`, at most the run's).
    pub check_timeout: Duration,
    pub images: ImageSettings,
    /// The folder of per-repository files (`configs/repos/`): read per task, and
    /// written by `--write-config`.
    pub repos_dir: PathBuf,
}

/// Validate's command-line values, plain (no clap types): each overrides the config.
#[derive(Debug, Clone, Default)]
pub struct ValidateFlags {
    /// `--workers`; `None` or 0 leaves it to the config (0 there: from the machine).
    pub workers: Option<usize>,
    /// `--runs`; `None` or 0 leaves it to the config.
    pub runs: Option<u32>,
    /// `--coverage`.
    pub coverage: bool,
}

impl ValidateSettings {
    /// Defaults < config file < environment (all three in `validate`, the config's
    /// `[validate]`; `SWE_HARVEST_MIRRORS` names an extra folder of mirrors) < `flags`.
    /// Reads `validate.extra_ca_file`.
    pub fn resolve(
        data_dir: PathBuf,
        validate: &ValidateConfig,
        repos_dir: PathBuf,
        flags: &ValidateFlags,
    ) -> Result<ValidateSettings, ValidateError> {
        let extra_ca = match &validate.extra_ca_file {
            Some(path) => {
                Some(fs_err::read(path).map_err(|source| ValidateError::ExtraCa { path: path.clone(), source })?)
            }
            None => None,
        };
        for (version, path) in &validate.gradle_distributions {
            fs_err::File::open(path).map_err(|source| ValidateError::GradleDistribution {
                version: version.clone(),
                path: path.clone(),
                source,
            })?;
        }
        let workers = validate.workers(flags.workers);
        let limits = validate.container_limits();
        Ok(ValidateSettings {
            workers,
            runs: flags.runs.filter(|&runs| runs > 0).unwrap_or(validate.runs),
            coverage: flags.coverage,
            check_timeout: Duration::from_secs(validate.check_timeout_secs).min(limits.run_timeout),
            limits,
            images: ImageSettings {
                base_images: validate.base_images.clone(),
                extra_ca,
                gradle_distributions: validate.gradle_distributions.clone(),
                registries: validate.effective_registries(),
                build_timeout: Duration::from_secs(validate.build_timeout_secs),
                build_limits: crate::sandbox::BuildLimits::of(&limits),
                logs_dir: data_dir.join("logs"),
            },
            mirrors_dir: std::env::var_os(crate::env_vars::SWE_HARVEST_MIRRORS).map(Into::into),
            data_dir,
            repos_dir,
        })
    }
}
