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
//!
//! Credentials: the URL is used through an anonymous remote and `FETCH_HEAD` is not
//! written, so it never reaches the mirror's `config` or any file in it; errors carry
//! the URL with its user information redacted ([`redact_url`]). With a token
//! (`GITHUB_TOKEN`), git2's credentials callback answers GitHub's HTTP challenge with
//! it as the password ([`token_for`]): only over `https` to `github.com`, so that a
//! `--clone-url` pointing elsewhere never receives it, and once per connection, so a
//! refused token fails instead of looping.

use std::path::{Path, PathBuf};
use std::time::Instant;

use git2::{AutotagOption, Cred, CredentialType, FetchOptions, FetchPrune, RemoteCallbacks, Repository};

use super::GitError;
use crate::model::RepoSlug;
use crate::progress::Reporter;
use crate::secret::{Secret, redact_url};

/// The user name sent with a token; GitHub reads only the password.
const TOKEN_USER: &str = "x-access-token";

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

/// The token to answer `url`'s authentication challenge with: `token` when the URL
/// is `https://github.com/...` (any case) and holds no credentials of its own; none
/// for other hosts, plain `http`, `ssh` and local paths.
pub fn token_for<'a>(url: &str, token: Option<&'a Secret>) -> Option<&'a Secret> {
    let rest = url.get(..8).filter(|scheme| scheme.eq_ignore_ascii_case("https://")).map(|_| &url[8..])?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if authority.contains('@') {
        return None;
    }
    let host = authority.rsplit_once(':').map_or(authority, |(host, _port)| host);
    host.eq_ignore_ascii_case("github.com").then_some(token).flatten()
}

/// Callbacks that answer one authentication challenge with `token`, if any.
fn credentials<'a>(token: Option<&'a Secret>) -> RemoteCallbacks<'a> {
    let mut callbacks = RemoteCallbacks::new();
    if let Some(token) = token {
        let mut asked = false;
        callbacks.credentials(move |_url, _user, allowed| {
            if asked || !allowed.contains(CredentialType::USER_PASS_PLAINTEXT) {
                return Err(git2::Error::from_str(
                    "GitHub refused the token in GITHUB_TOKEN; check that it is valid and may read the repository",
                ));
            }
            asked = true;
            Cred::userpass_plaintext(TOKEN_USER, token.expose())
        });
    }
    callbacks
}

/// Creates the bare mirror at `path` when missing, then fetches branches, tags and
/// PR heads from `url` into it. A local path is accepted as the URL. `token` answers
/// GitHub's authentication challenge ([`token_for`]).
pub fn sync_mirror(
    path: &Path,
    url: &str,
    token: Option<&Secret>,
    reporter: &dyn Reporter,
) -> Result<FetchStats, GitError> {
    let repository = if path.join("HEAD").exists() {
        Repository::open_bare(path).map_err(|source| GitError::Open { path: path.to_path_buf(), source })?
    } else {
        fs_err::create_dir_all(path).map_err(|error| GitError::Create {
            path: path.to_path_buf(),
            source: git2::Error::from_str(&error.to_string()),
        })?;
        Repository::init_bare(path).map_err(|source| GitError::Create { path: path.to_path_buf(), source })?
    };
    remove_partial_packs(path);
    let url = local_path_as_url(url);
    let token = token_for(&url, token);
    // Neither the URL's credentials nor libgit2's messages about them leave here.
    let fetch_error = |source: git2::Error| GitError::Fetch {
        url: redact_url(&url),
        path: path.to_path_buf(),
        source: git2::Error::new(source.code(), source.class(), redact_url(source.message())),
    };
    // Anonymous: the URL is not written to the mirror's config.
    let mut remote = repository.remote_anonymous(&url).map_err(fetch_error)?;

    // The default branch, so that the mirror's HEAD names it as GitHub's does.
    let default_branch = remote
        .connect_auth(git2::Direction::Fetch, Some(credentials(token)), None)
        .and_then(|connection| connection.default_branch())
        .ok()
        .and_then(|name| name.as_str().ok().map(String::from));
    let _ = remote.disconnect();

    let mut callbacks = credentials(token);
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
    // No FETCH_HEAD: it would name the URL, credentials included.
    options
        .remote_callbacks(callbacks)
        .download_tags(AutotagOption::None)
        .prune(FetchPrune::On)
        .update_fetchhead(false);
    let fetched = remote.fetch(&MIRROR_REFSPECS, Some(&mut options), Some("swe-harvest mirror"));
    let stats = remote.stats();
    let stats = FetchStats { received_objects: stats.received_objects(), received_bytes: stats.received_bytes() };
    drop(remote);
    if let Err(error) = fetched {
        // libgit2 walks every object it packs and refuses a source that lacks some (a
        // partial snapshot); git's own clone of a local path copies the object store
        // and does not. Only for a first clone from a local path.
        let empty = repository.references().map(|mut refs| refs.next().is_none()).unwrap_or(false);
        if !(empty && Path::new(&url).is_dir()) {
            return Err(fetch_error(error));
        }
        tracing::warn!(
            source = %url, error = %error.message(),
            "libgit2 could not fetch from the local repository; cloning it with git's command line instead"
        );
        drop(repository);
        clone_locally_with_git(path, &url).map_err(|message| {
            fetch_error(git2::Error::from_str(&format!(
                "{}; git clone --mirror failed too: {message}",
                error.message()
            )))
        })?;
        let repository =
            Repository::open_bare(path).map_err(|source| GitError::Open { path: path.to_path_buf(), source })?;
        return finish_mirror(&repository, default_branch, stats).map_err(fetch_error);
    }

    finish_mirror(&repository, default_branch, stats).map_err(fetch_error)
}

/// Points the mirror's HEAD at the default branch (or `main`, `master`).
fn finish_mirror(
    repository: &Repository,
    default_branch: Option<String>,
    stats: FetchStats,
) -> Result<FetchStats, git2::Error> {
    let head_target = default_branch.filter(|name| repository.find_reference(name).is_ok()).or_else(|| {
        ["refs/heads/main", "refs/heads/master"]
            .into_iter()
            .find(|name| repository.find_reference(name).is_ok())
            .map(String::from)
    });
    if let Some(target) = head_target {
        repository.set_head(&target)?;
    }
    Ok(stats)
}

/// Removes the temporary packs (`objects/pack/pack_git2_*`) that a fetch killed
/// mid-transfer leaves behind: nothing refers to them, and they can be large.
fn remove_partial_packs(path: &Path) {
    let Ok(entries) = fs_err::read_dir(path.join("objects").join("pack")) else { return };
    for entry in entries.flatten() {
        if entry.file_name().to_string_lossy().starts_with("pack_git2_") {
            match fs_err::remove_file(entry.path()) {
                Ok(()) => tracing::info!(file = %entry.path().display(), "removed a partial pack of a killed fetch"),
                Err(error) => tracing::warn!(%error, "could not remove a partial pack of a killed fetch"),
            }
        }
    }
}

/// A first clone of a local repository with git's command line (`git clone --mirror`
/// copies its object store), keeping only the refs of [`MIRROR_REFSPECS`].
fn clone_locally_with_git(path: &Path, source: &str) -> Result<(), String> {
    let staging = path.with_extension("git-clone");
    let _ = fs_err::remove_dir_all(&staging);
    let output = std::process::Command::new("git")
        .args(["clone", "--mirror", "--quiet", "--", source])
        .arg(&staging)
        .env("GIT_TERMINAL_PROMPT", "0")
        .output()
        .map_err(|error| format!("could not run git: {error}"))?;
    if !output.status.success() {
        let _ = fs_err::remove_dir_all(&staging);
        return Err(String::from_utf8_lossy(&output.stderr).trim().to_string());
    }
    let repository = Repository::open_bare(&staging).map_err(|error| error.to_string())?;
    // No remote in the config (as with libgit2's anonymous fetch), and no refs
    // outside the mirror's refspecs (e.g. `refs/pull/*/merge`).
    // (Not `remote_delete`: with a mirror's `+refs/*:refs/*` it deletes every ref.)
    if let Ok(mut config) = repository.config() {
        let _ = config.remove("remote.origin.url");
        let _ = config.remove("remote.origin.mirror");
        let _ = config.remove_multivar("remote.origin.fetch", ".*");
    }
    let names: Vec<String> = repository
        .references()
        .map_err(|error| error.to_string())?
        .flatten()
        .filter_map(|reference| reference.name().ok().map(String::from))
        .collect();
    for name in names {
        let kept = name.starts_with("refs/heads/")
            || name.starts_with("refs/tags/")
            || (name.starts_with("refs/pull/") && name.ends_with("/head"));
        if !kept {
            if let Ok(mut reference) = repository.find_reference(&name) {
                let _ = reference.delete();
            }
        }
    }
    drop(repository);
    fs_err::remove_dir_all(path).map_err(|error| error.to_string())?;
    fs_err::rename(&staging, path).map_err(|error| error.to_string())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_goes_only_to_github_over_https() {
        let token = Secret::new("ghp_abc");
        for url in ["https://github.com/a/b.git", "HTTPS://GitHub.com/a/b", "https://github.com:443/a/b"] {
            assert_eq!(token_for(url, Some(&token)), Some(&token), "{url}");
        }
        for url in [
            "http://github.com/a/b",
            "https://github.com.evil.example/a/b",
            "https://evil.example/github.com/a/b",
            "https://user:pass@github.com/a/b",
            "git@github.com:a/b.git",
            "ssh://git@github.com/a/b",
            "/srv/mirrors/a/b.git",
            "https://127.0.0.1:9/a/b",
        ] {
            assert_eq!(token_for(url, Some(&token)), None, "{url}");
        }
        assert_eq!(token_for("https://github.com/a/b", None), None);
    }
}
