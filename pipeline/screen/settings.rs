//! The screen's settings: `[screen]` in the config (the verdict's rule and the flags'
//! limits), and the resolved settings a run gets (defaults < config file <
//! environment < the command line's plain [`ScreenFlags`]).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::flags::FlagCode;
use super::verdict::VerdictRule;
use crate::model::RepoSlug;
use crate::settings::ConfigError;

/// `[screen]` in `configs/pipeline.toml`. The verdict's defaults and how they were
/// chosen: docs/screen.md ("The verdict").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ScreenConfig {
    /// Flags that are strong evidence: a task raising one gets `quality_verdict = flag`.
    pub flag_on: Vec<FlagCode>,
    /// A task whose `quality_score` is above this is `flag` whatever its flags.
    pub flag_above: f64,
    /// A task with no flag whose `quality_score` is above this is `uncertain` (at or
    /// below, `keep`); a score above `flag_above` is `flag` whatever this says.
    pub uncertain_above: f64,
    /// `sprawling_patch` from this many source files in the gold patch.
    pub many_files: usize,
    /// `fail_to_pass_unrelated` from this many FAIL_TO_PASS tests.
    pub huge_fail_to_pass: usize,
}

impl Default for ScreenConfig {
    fn default() -> Self {
        ScreenConfig {
            flag_on: DEFAULT_FLAG_ON.to_vec(),
            flag_above: DEFAULT_FLAG_ABOVE,
            uncertain_above: DEFAULT_UNCERTAIN_ABOVE,
            many_files: 5,
            huge_fail_to_pass: 50,
        }
    }
}

/// The strong flags by default: those whose precision on the development data is at
/// least [`super::verdict`]'s strength on enough tasks, and the observed ones.
pub const DEFAULT_FLAG_ON: [FlagCode; 3] =
    [FlagCode::TestsAssertUnseenStrings, FlagCode::FlakyTests, FlagCode::WeakTests];

/// No score alone reached the asked precision on the development data: off.
pub const DEFAULT_FLAG_ABOVE: f64 = 1.0;

/// The score above which the development tasks were filtered out well above the base rate.
pub const DEFAULT_UNCERTAIN_ABOVE: f64 = 0.691;

impl ScreenConfig {
    /// The values a config file may hold.
    pub fn check(&self, origin: &str) -> Result<(), ConfigError> {
        let invalid = |key: &str, message: &str| ConfigError::Invalid {
            origin: origin.to_string(),
            key: format!("screen.{key}"),
            message: message.to_string(),
        };
        if !(0.0..=1.0).contains(&self.flag_above) {
            return Err(invalid("flag_above", "must be between 0 and 1 (a probability)"));
        }
        if !(0.0..=1.0).contains(&self.uncertain_above) {
            return Err(invalid("uncertain_above", "must be between 0 and 1 (a probability)"));
        }

        if self.many_files == 0 {
            return Err(invalid("many_files", "must be at least 1"));
        }
        if self.huge_fail_to_pass == 0 {
            return Err(invalid("huge_fail_to_pass", "must be at least 1"));
        }
        Ok(())
    }
}

impl ScreenConfig {
    /// The verdict's part of the settings.
    pub fn verdict_rule(&self) -> VerdictRule {
        VerdictRule {
            flag_on: self.flag_on.clone(),
            flag_above: self.flag_above,
            uncertain_above: self.uncertain_above,
        }
    }
}

/// The command line's values, plain.
#[derive(Debug, Clone, Default)]
pub struct ScreenFlags {
    pub repos: Vec<RepoSlug>,
}

/// What a run of the screen works with.
#[derive(Debug, Clone)]
pub struct ScreenSettings {
    pub data_dir: PathBuf,
    /// Local mirrors besides the data dir's (`SWE_HARVEST_MIRRORS`).
    pub mirrors_dir: Option<PathBuf>,
    pub config: ScreenConfig,
    pub repos: Vec<RepoSlug>,
}

impl ScreenSettings {
    /// `config` is the config's `[screen]` (defaults < config file < environment).
    pub fn resolve(data_dir: PathBuf, config: &ScreenConfig, flags: &ScreenFlags) -> ScreenSettings {
        ScreenSettings {
            data_dir,
            mirrors_dir: std::env::var_os(crate::env_vars::SWE_HARVEST_MIRRORS).map(Into::into),
            config: config.clone(),
            repos: flags.repos.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_round_trip_and_out_of_range_values_are_refused() {
        let text = toml::to_string(&ScreenConfig::default()).unwrap();
        assert_eq!(toml::from_str::<ScreenConfig>(&text).unwrap(), ScreenConfig::default());
        assert!(ScreenConfig::default().check("x").is_ok());
        let error = ScreenConfig { flag_above: 1.5, ..ScreenConfig::default() }.check("pipeline.toml").unwrap_err();
        assert!(error.to_string().contains("screen.flag_above"), "{error}");
        let error = ScreenConfig { uncertain_above: -0.1, ..ScreenConfig::default() }.check("x").unwrap_err();
        assert!(error.to_string().contains("screen.uncertain_above"), "{error}");
        // An old config's `flag_above = 0.5` still works: above it is `flag`, whatever
        // `uncertain_above` says.
        assert!(ScreenConfig { flag_above: 0.5, ..ScreenConfig::default() }.check("x").is_ok());
        assert!(toml::from_str::<ScreenConfig>("flag_abov = 0.3").is_err(), "unknown keys are refused");
        let error = toml::from_str::<ScreenConfig>("flag_on = [\"tests_use_old_names\"]").unwrap_err().to_string();
        assert!(error.contains("tests_use_old_names") && error.contains("tests_use_new_names"), "{error}");
        let config: ScreenConfig = toml::from_str("flag_on = [\"weak_tests\"]\nflag_above = 0.5").unwrap();
        assert_eq!(config.verdict_rule().flag_on, [FlagCode::WeakTests]);
        assert_eq!(config.uncertain_above, DEFAULT_UNCERTAIN_ABOVE, "the other keys keep their defaults");
    }
}
