//! The `mirror` stage: one bare mirror per repository at
//! `<data-dir>/mirrors/<owner>__<name>.git`, cloned from the clone URL (a URL or a
//! local path, `{owner}` / `{name}` replaced) with branches, tags and GitHub's PR heads
//! (`refs/pull/*/head`), and fetched incrementally on later runs.
//!
//! A clone is `git init --bare` followed by a fetch, so a run killed mid-clone is
//! resumed by the next fetch: refs are only written once the objects are in. The
//! funnel gets one item per repository (`passed`, or `dropped` with `fetch_failed`).
//! PR heads that a mirror lacks are extract's concern (`pull_head_missing`).

use std::path::{Path, PathBuf};
use std::time::Instant;

use git2::{AutotagOption, FetchOptions, FetchPrune, RemoteCallbacks, Repository};
use serde::Serialize;

use super::GitError;
use crate::model::{Rejection, RepoSlug, Stage};
use crate::progress::Reporter;
use crate::store::{self, Store};

/// The refspecs of a mirror: branches, tags and PR heads, forced.
pub const MIRROR_REFSPECS: [&str; 3] =
    ["+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*", "+refs/pull/*/head:refs/pull/*/head"];

/// The folder of mirrors inside the data dir.
pub const MIRRORS_DIR: &str = "mirrors";

/// Resolved settings of the stage.
#[derive(Debug, Clone)]
pub struct MirrorSettings {
    pub data_dir: PathBuf,
    /// A URL or path; `{owner}` and `{name}` are replaced.
    pub clone_url: String,
}

/// Where a repository's mirror lives.
pub fn mirror_path(data_dir: &Path, repo: &RepoSlug) -> PathBuf {
    data_dir.join(MIRRORS_DIR).join(format!("{}.git", repo.double_underscore()))
}

/// The clone URL of one repository.
pub fn clone_url_for(template: &str, repo: &RepoSlug) -> String {
    template.replace("{owner}", repo.owner()).replace("{name}", repo.name())
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
        let result = sync_mirror(&path, &url, reporter);
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
                outcome.pull_heads =
                    super::Mirror::open(&path).and_then(|mirror| mirror.pull_heads()).map_or(0, |heads| heads.len());
                tracing::info!(repo = %repo, path = %path.display(), pull_heads = outcome.pull_heads, objects = stats.received_objects, "mirror up to date");
                store.transaction(|transaction| {
                    store::record_passed(transaction, Stage::Mirror, repo, &repo.to_string())
                })?;
            }
            Err(error) => {
                let message = crate::error_chain(&error);
                tracing::error!(repo = %repo, "{message}");
                outcome.error = Some(message.clone());
                store.transaction(|transaction| {
                    store::record_dropped(
                        transaction,
                        &Rejection {
                            stage: Stage::Mirror,
                            repo: repo.clone(),
                            item: repo.to_string(),
                            reason: "fetch_failed".into(),
                            detail: message,
                        },
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

/// Transfer figures of one fetch.
#[derive(Debug, Clone, Copy, Default)]
pub struct FetchStats {
    pub received_objects: usize,
    pub received_bytes: usize,
}

/// Creates the bare mirror at `path` when missing, then fetches branches, tags and
/// PR heads from `url` into it. A local path is accepted as the URL.
pub fn sync_mirror(path: &Path, url: &str, reporter: &dyn Reporter) -> Result<FetchStats, GitError> {
    let repository = if path.join("HEAD").exists() {
        Repository::open_bare(path).map_err(|source| GitError::Open { path: path.to_path_buf(), source })?
    } else {
        std::fs::create_dir_all(path).map_err(|error| GitError::Create {
            path: path.to_path_buf(),
            source: git2::Error::from_str(&error.to_string()),
        })?;
        Repository::init_bare(path).map_err(|source| GitError::Create { path: path.to_path_buf(), source })?
    };
    let url = local_path_as_url(url);
    let fetch_error = |source| GitError::Fetch { url: url.clone(), path: path.to_path_buf(), source };
    let mut remote = repository.remote_anonymous(&url).map_err(fetch_error)?;

    // The default branch, so that the mirror's HEAD names it as GitHub's does.
    let default_branch = remote
        .connect(git2::Direction::Fetch)
        .and_then(|()| remote.default_branch())
        .ok()
        .and_then(|name| name.as_str().ok().map(String::from));
    let _ = remote.disconnect();

    let mut callbacks = RemoteCallbacks::new();
    let mut last_report = Instant::now();
    callbacks.transfer_progress(move |progress| {
        if last_report.elapsed().as_secs() >= 2 {
            last_report = Instant::now();
            reporter.message(&format!(
                "{}/{} objects, {} MiB",
                progress.received_objects(),
                progress.total_objects(),
                progress.received_bytes() / (1024 * 1024)
            ));
        }
        true
    });
    let mut options = FetchOptions::new();
    options.remote_callbacks(callbacks).download_tags(AutotagOption::None).prune(FetchPrune::On);
    remote.fetch(&MIRROR_REFSPECS, Some(&mut options), Some("swe-harvest mirror")).map_err(fetch_error)?;
    let stats = remote.stats();
    let stats = FetchStats { received_objects: stats.received_objects(), received_bytes: stats.received_bytes() };

    let head_target = default_branch.filter(|name| repository.find_reference(name).is_ok()).or_else(|| {
        ["refs/heads/main", "refs/heads/master"]
            .into_iter()
            .find(|name| repository.find_reference(name).is_ok())
            .map(String::from)
    });
    if let Some(target) = head_target {
        repository.set_head(&target).map_err(fetch_error)?;
    }
    Ok(stats)
}

/// libgit2 takes local repositories by path; a relative path is made absolute so
/// that it does not depend on where libgit2 resolves it.
fn local_path_as_url(url: &str) -> String {
    let looks_remote = url.contains("://") || (url.contains('@') && url.contains(':'));
    if looks_remote {
        return url.to_string();
    }
    std::path::absolute(url).map(|path| path.display().to_string()).unwrap_or_else(|_| url.to_string())
}
