//! The mirror stage's settings: `[mirror]` in the config ([`MirrorConfig`]) and what a
//! run works with, resolved (the `--clone-url` flag over the config, the token from
//! the environment).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::secret::Secret;

/// `[mirror]` in `configs/pipeline.toml`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MirrorConfig {
    /// Where mirrors are cloned from; `{owner}` and `{name}` are replaced.
    pub clone_url: String,
}

impl Default for MirrorConfig {
    fn default() -> Self {
        MirrorConfig { clone_url: "https://github.com/{owner}/{name}.git".into() }
    }
}

impl MirrorConfig {
    /// Nothing to refuse: a clone URL without placeholders is one URL for every
    /// repository, which is said in the log.
    pub fn check(&self, _origin: &str) -> Result<(), crate::settings::ConfigError> {
        if !self.clone_url.contains("{owner}") && !self.clone_url.contains("{name}") {
            tracing::debug!("mirror.clone_url has no placeholders: every repository is cloned from one URL");
        }
        Ok(())
    }
}

/// Resolved settings of the stage.
#[derive(Debug, Clone)]
pub struct MirrorSettings {
    pub data_dir: PathBuf,
    /// A URL or path; `{owner}` and `{name}` are replaced. May hold credentials: it is
    /// printed, logged and stored only through [`redact_url`](crate::secret::redact_url).
    pub clone_url: String,
    /// `GITHUB_TOKEN` (the first of `GITHUB_TOKENS`): answers github.com's
    /// authentication challenge, never put in a URL or the mirror's config.
    pub token: Option<Secret>,
}

impl MirrorSettings {
    /// `clone_url` (the `--clone-url` flag) > `SWE_HARVEST_MIRROR__CLONE_URL` >
    /// config file > default; the config's `mirror` already holds the last three. The
    /// token comes from the environment.
    pub fn resolve(data_dir: PathBuf, mirror: &MirrorConfig, clone_url: Option<&str>) -> MirrorSettings {
        MirrorSettings {
            data_dir,
            clone_url: clone_url.map(String::from).unwrap_or_else(|| mirror.clone_url.clone()),
            token: crate::env_vars::github_tokens().into_iter().next(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clone_url_flag_beats_the_config() {
        let config = MirrorConfig { clone_url: "file:///mirrors/{owner}/{name}".into() };
        let data_dir = PathBuf::from("data");
        let from_config = MirrorSettings::resolve(data_dir.clone(), &config, None);
        assert_eq!(from_config.clone_url, "file:///mirrors/{owner}/{name}");
        let from_flag = MirrorSettings::resolve(data_dir, &config, Some("/srv/{name}.git"));
        assert_eq!(from_flag.clone_url, "/srv/{name}.git");
    }
}
