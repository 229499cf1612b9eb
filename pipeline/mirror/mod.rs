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

mod settings;

use std::path::PathBuf;
use std::time::Instant;

use serde::Serialize;

use crate::git::mirror::{clone_url_for, mirror_path, sync_mirror};
use crate::model::drop_reason::MirrorDropReason;
use crate::model::{Rejection, RepoSlug, Stage};
use crate::progress::Reporter;
use crate::secret::redact_url;
use crate::store::{self, Store};

pub use settings::{MirrorConfig, MirrorSettings};

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
