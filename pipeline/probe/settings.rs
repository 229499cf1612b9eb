//! Probe's settings: `[probe]` in the config (on or off, how many mutants a task
//! gets, probe's time limit per mutant, stopping a mutant's tests at their first
//! failure), and the resolved settings a run gets (defaults < config file <
//! environment < the command line's plain [`ProbeFlags`]). The containers' limits
//! (memory, CPUs, processes, file size) are validate's: a mutant runs under the same
//! sandbox as the task's validation.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::model::RepoSlug;
use crate::sandbox::Limits;
use crate::settings::{ConfigError, invalid};

/// `[probe]` in `configs/pipeline.toml`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ProbeConfig {
    /// Whether `run` probes its validated tasks (`probe` itself always does).
    pub enabled: bool,
    /// At most this many mutants per task (see `probe::mutants` for how they are chosen).
    pub mutants: usize,
    /// A mutant's tests may run this many times as long as the slowest validation
    /// run after the gold patch, ...
    pub timeout_factor: f64,
    /// ... and never less than this (nor more than `validate.run_timeout_secs`).
    pub min_timeout_secs: u64,
    /// Stop a mutant's tests at their first failure where the runner can (pytest
    /// `-x`, `go test -failfast`): a killed mutant needs no more.
    pub stop_at_first_failure: bool,
}

impl Default for ProbeConfig {
    fn default() -> Self {
        ProbeConfig {
            enabled: true,
            mutants: 8,
            timeout_factor: 5.0,
            min_timeout_secs: 60,
            stop_at_first_failure: true,
        }
    }
}

/// A value of `[probe]` that is not allowed: the key under `probe.` and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("probe.{key}: {message}")]
pub struct InvalidProbeSetting {
    pub key: &'static str,
    pub message: &'static str,
}

impl ProbeConfig {
    /// The values a config file may hold; the error names the file (or variable) and
    /// the key, `probe.<key>`.
    pub fn check(&self, origin: &str) -> Result<(), ConfigError> {
        self.check_values().map_err(|refused| invalid(origin, &format!("probe.{}", refused.key), refused.message))
    }

    /// The values allowed, wherever they come from (the config, or `--mutants`).
    pub fn check_values(&self) -> Result<(), InvalidProbeSetting> {
        if self.mutants == 0 || self.mutants > 1000 {
            return Err(InvalidProbeSetting {
                key: "mutants",
                message: "must be between 1 and 1000 (turn probe off with probe.enabled = false)",
            });
        }
        if !(self.timeout_factor >= 1.0 && self.timeout_factor.is_finite()) {
            return Err(InvalidProbeSetting { key: "timeout_factor", message: "must be at least 1" });
        }
        if self.min_timeout_secs == 0 {
            return Err(InvalidProbeSetting { key: "min_timeout_secs", message: "must be at least 1" });
        }
        Ok(())
    }

    /// A mutant's time limit, from the slowest validation run after the gold patch (in
    /// seconds; `None` when none is known), within `[min_timeout_secs, ceiling]`.
    pub fn mutant_timeout(&self, slowest_post_secs: Option<f64>, ceiling: Duration) -> Duration {
        let floor = Duration::from_secs(self.min_timeout_secs);
        let wanted = match slowest_post_secs {
            Some(seconds) => Duration::from_secs_f64((seconds * self.timeout_factor).max(0.0)).max(floor),
            None => ceiling,
        };
        wanted.min(ceiling).max(floor.min(ceiling))
    }
}

/// The command line's values, plain.
#[derive(Debug, Clone, Default)]
pub struct ProbeFlags {
    pub repos: Vec<RepoSlug>,
    pub instances: Vec<String>,
    /// `--mutants`: overrides `probe.mutants`.
    pub mutants: Option<usize>,
}

/// What a run of probe works with.
#[derive(Debug, Clone)]
pub struct ProbeSettings {
    pub data_dir: PathBuf,
    /// Local mirrors besides the data dir's (`SWE_HARVEST_MIRRORS`).
    pub mirrors_dir: Option<PathBuf>,
    pub config: ProbeConfig,
    /// The containers' limits (validate's); `run_timeout` is the ceiling of a
    /// mutant's time limit.
    pub limits: Limits,
    pub workers: usize,
    pub repos: Vec<RepoSlug>,
    pub instances: Vec<String>,
}

impl ProbeSettings {
    /// Defaults < config file < environment (all in `config`) < `flags`; the limits
    /// and workers are validate's, resolved by the caller.
    pub fn resolve(
        data_dir: PathBuf,
        config: &ProbeConfig,
        limits: Limits,
        workers: usize,
        flags: &ProbeFlags,
    ) -> Result<ProbeSettings, InvalidProbeSetting> {
        let mut config = config.clone();
        if let Some(mutants) = flags.mutants {
            config.mutants = mutants;
        }
        config.check_values()?;
        Ok(ProbeSettings {
            data_dir,
            mirrors_dir: std::env::var_os(crate::env_vars::SWE_HARVEST_MIRRORS).map(Into::into),
            config,
            limits,
            workers: workers.max(1),
            repos: flags.repos.clone(),
            instances: flags.instances.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_round_trip_and_out_of_range_values_are_refused() {
        let text = toml::to_string(&ProbeConfig::default()).unwrap();
        assert_eq!(toml::from_str::<ProbeConfig>(&text).unwrap(), ProbeConfig::default());
        assert!(ProbeConfig::default().check_values().is_ok());
        let error = ProbeConfig { mutants: 0, ..ProbeConfig::default() }.check_values().unwrap_err();
        assert_eq!(
            error.to_string(),
            "probe.mutants: must be between 1 and 1000 (turn probe off with probe.enabled = false)"
        );
        assert!(ProbeConfig { timeout_factor: 0.5, ..ProbeConfig::default() }.check_values().is_err());
        assert!(toml::from_str::<ProbeConfig>("mutant = 3").is_err(), "unknown keys are refused");
    }

    #[test]
    fn a_mutants_time_limit_follows_the_validation_runs_within_its_bounds() {
        let config = ProbeConfig { timeout_factor: 5.0, min_timeout_secs: 60, ..ProbeConfig::default() };
        let ceiling = Duration::from_secs(1800);
        assert_eq!(config.mutant_timeout(Some(3.0), ceiling), Duration::from_secs(60));
        assert_eq!(config.mutant_timeout(Some(100.0), ceiling), Duration::from_secs(500));
        assert_eq!(config.mutant_timeout(Some(1000.0), ceiling), ceiling);
        assert_eq!(config.mutant_timeout(None, ceiling), ceiling);
        assert_eq!(config.mutant_timeout(Some(1.0), Duration::from_secs(30)), Duration::from_secs(30));
    }
}
