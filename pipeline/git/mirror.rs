//! The bare git mirrors that several stages read: where a repository's mirror lives
//! (`<data-dir>/mirrors/<owner>__<name>.git`), which refs it holds (branches, tags and
//! GitHub's PR heads, `refs/pull/*/head`), and the fetch that creates or updates one
//! from a URL or a local path ([`sync_mirror`]).
//!
//! The `mirror` stage (selection, the funnel, outcomes) lives in `crate::mirror`; the
//! fetch stays here because it is git2 machinery like the rest of `git`, and the
//! layout it writes is what extract, validate and the tests read through
//! [`mirror_path`].
//!
//! A clone is `git init --bare` followed by a fetch, so a run killed mid-clone is
//! resumed by the next fetch: refs are only written once the objects are in.

use std::path::{Path, PathBuf};
use std::time::Instant;

use git2::{AutotagOption, FetchOptions, FetchPrune, RemoteCallbacks, Repository};

use super::GitError;
use crate::model::RepoSlug;
use crate::progress::Reporter;

/// The refspecs of a mirror: branches, tags and PR heads, forced.
pub const MIRROR_REFSPECS: [&str; 3] =
    ["+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*", "+refs/pull/*/head:refs/pull/*/head"];

/// The folder of mirrors inside the data dir.
pub const MIRRORS_DIR: &str = "mirrors";

/// Where a repository's mirror lives.
pub fn mirror_path(data_dir: &Path, repo: &RepoSlug) -> PathBuf {
    data_dir.join(MIRRORS_DIR).join(format!("{}.git", repo.double_underscore()))
}

/// The clone URL of one repository.
pub fn clone_url_for(template: &str, repo: &RepoSlug) -> String {
    template.replace("{owner}", repo.owner()).replace("{name}", repo.name())
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
        fs_err::create_dir_all(path).map_err(|error| GitError::Create {
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
