//! The `mirror` stage: one bare mirror per repository at
//! `<data-dir>/mirrors/<owner>__<name>.git`, cloned from the clone URL (a URL or a
//! local path, `{owner}` / `{name}` replaced) with branches, tags and GitHub's PR heads
//! (`refs/pull/*/head`), and fetched incrementally on later runs.
//!
//! This module is the stage: which repositories, where their mirrors live, what the
//! funnel records (one item per repository, `passed`, or dropped with
//! [`MirrorDropReason::FetchFailed`]) and what the command prints from. The fetch
//! itself ([`git::mirror::sync_mirror`](crate::git::mirror::sync_mirror)) stays in
//! `git`: it is git2 machinery, and `git` owns the mirror's on-disk layout
//! (`mirror_path`, the refspecs) that extract, validate and the tests read too.
//! PR heads that a mirror lacks are extract's concern (`pull_head_missing`).
//!
//! Secrets: credentials inside the clone URL are redacted ([`redact_url`]) in every
//! message, log line and funnel row; `GITHUB_TOKEN` authenticates to github.com
//! through git2's credentials callback (see [`crate::git::mirror`]), never through
//! the URL, so it reaches neither the mirror's config nor a log.

use std::path::PathBuf;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::git::mirror::{clone_url_for, mirror_path, sync_mirror};
use crate::model::drop_reason::MirrorDropReason;
use crate::model::{Rejection, RepoSlug, Stage};
use crate::progress::Reporter;
use crate::secret::{Secret, redact_url};
use crate::store::{self, Store};

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
    /// printed, logged and stored only through [`redact_url`].
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

/// What happened to one repository.
#[derive(Debug, Clone, Serialize)]
pub struct MirrorOutcome {
    pub repo: String,
    pub path: PathBuf,
    /// `true` when this run created the mirror, `false` when it fetched into it.
    pub cloned: bool,
    pub pull_heads: usize,
    pub received_objects: usize,
    pub received_bytes: usize,
    pub seconds: f64,
    /// The error, when the fetch failed.
    pub error: Option<String>,
}

/// Clones or fetches every repository; one failing repository does not stop the
/// others. Returns one outcome per repository; errors of the store stop the run.
pub fn run(
    store: &mut Store,
    repos: &[RepoSlug],
    settings: &MirrorSettings,
    reporter: &dyn Reporter,
) -> Result<Vec<MirrorOutcome>, store::StoreError> {
    let mut outcomes = Vec::new();
    reporter.start("mirror", Some(repos.len() as u64));
    for repo in repos {
        let path = mirror_path(&settings.data_dir, repo);
        let url = clone_url_for(&settings.clone_url, repo);
        let started = Instant::now();
        let cloned = !path.join("HEAD").exists();
        reporter.message(&format!("{} {repo}", if cloned { "cloning" } else { "fetching" }));
        let result = sync_mirror(&path, &url, settings.token.as_ref(), reporter);
        let mut outcome = MirrorOutcome {
            repo: repo.to_string(),
            path: path.clone(),
            cloned,
            pull_heads: 0,
            received_objects: 0,
            received_bytes: 0,
            seconds: 0.0,
            error: None,
        };
        match result {
            Ok(stats) => {
                outcome.received_objects = stats.received_objects;
                outcome.received_bytes = stats.received_bytes;
                outcome.pull_heads = crate::git::Mirror::open(&path)
                    .and_then(|mirror| mirror.pull_heads())
                    .map_or(0, |heads| heads.len());
                tracing::info!(repo = %repo, path = %path.display(), pull_heads = outcome.pull_heads, objects = stats.received_objects, "mirror up to date");
                store.transaction(|transaction| {
                    store::record_passed(transaction, Stage::Mirror, repo, &repo.to_string())
                })?;
            }
            Err(error) => {
                // Redacted again: a message of any layer may quote the URL.
                let message = redact_url(&crate::error_chain(&error));
                tracing::error!(repo = %repo, "{message}");
                outcome.error = Some(message.clone());
                store.transaction(|transaction| {
                    store::record_dropped(
                        transaction,
                        &Rejection::new(MirrorDropReason::FetchFailed, repo.clone(), repo.to_string(), message),
                    )
                })?;
            }
        }
        outcome.seconds = started.elapsed().as_secs_f64();
        outcomes.push(outcome);
        reporter.advance(1);
    }
    reporter.finish();
    Ok(outcomes)
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
