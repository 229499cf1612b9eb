//! Git mirrors through libgit2 (git2): cloning and fetching bare mirrors with PR
//! heads ([`mirror`]), and reading them: PR refs, merge-bases, commits between two
//! points, tags, file contents at a commit, and three-dot diffs printed as `git diff`
//! prints them ([`diff`]); and unified diffs read as text, whatever made them
//! ([`patch_text`]).
//!
//! The `mirror` stage itself is [`crate::mirror`]: this module's clone-or-fetch
//! applied to each repository.
//!
//! The repository at one commit ([`tree`]): file contents, the file list, a walk
//! over the whole tree, and the one way to find a repository's mirror.
//!
//! Everything here is blocking; callers on an async runtime use `spawn_blocking`.
//! This module knows nothing of the store, of test files or of tasks.

pub mod diff;
pub mod mirror;
pub mod patch_text;
pub mod tree;

use std::path::{Path, PathBuf};

use chrono::{DateTime, TimeZone, Utc};
use git2::{Oid, Repository, Sort};

pub use diff::{ChangedFile, FileDiff, FileStatus, TreeDiff};
pub use tree::{TreeItem, find_mirror, mirror_in};

#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error(
        "there is no mirror of `{repo}` (looked in {looked}); run `swe-harvest mirror --repo {repo}` \
         (with `--clone-url` for a local copy) first"
    )]
    NoMirror { repo: crate::model::RepoSlug, looked: String },
    #[error("commit `{commit}` is not in the mirror `{path}`; update the mirror (`swe-harvest mirror`)")]
    MissingCommit {
        commit: String,
        path: PathBuf,
        #[source]
        source: git2::Error,
    },
    #[error("failed to copy `{path}` of commit `{commit}` out of the mirror")]
    Walk {
        commit: String,
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("failed to open the git mirror `{path}`; run `swe-harvest mirror --repo OWNER/NAME` first")]
    Open {
        path: PathBuf,
        #[source]
        source: git2::Error,
    },
    #[error("failed to create the git mirror `{path}`; check that the data dir is writable")]
    Create {
        path: PathBuf,
        #[source]
        source: git2::Error,
    },
    #[error(
        "failed to fetch `{url}` into `{path}`; check that the URL (or local path) is right and reachable, \
         or pass another with `--clone-url`"
    )]
    Fetch {
        url: String,
        path: PathBuf,
        #[source]
        source: git2::Error,
    },
    #[error("failed to read {what} from the mirror")]
    Object {
        what: String,
        #[source]
        source: git2::Error,
    },
    #[error("failed to diff {} against {new}", old.map(|oid| oid.to_string()).unwrap_or_else(|| "the empty tree".into()))]
    Diff {
        old: Option<Oid>,
        new: Oid,
        #[source]
        source: git2::Error,
    },
}

/// What extract needs of one commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitInfo {
    pub id: Oid,
    pub author_time: DateTime<Utc>,
    pub message: String,
}

/// An open bare mirror. Not `Sync`: open one per thread.
pub struct Mirror {
    repository: Repository,
    path: PathBuf,
}

impl std::fmt::Debug for Mirror {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mirror").field("path", &self.path).finish()
    }
}

impl Mirror {
    /// Opens an existing bare (or non-bare) repository.
    pub fn open(path: &Path) -> Result<Mirror, GitError> {
        let repository = Repository::open_bare(path)
            .or_else(|_| Repository::open(path))
            .map_err(|source| GitError::Open { path: path.to_path_buf(), source })?;
        Ok(Mirror { repository, path: path.to_path_buf() })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn repository(&self) -> &Repository {
        &self.repository
    }

    /// The commit a ref points at (peeled), if the ref exists.
    pub fn resolve_ref(&self, name: &str) -> Option<Oid> {
        let reference = self.repository.find_reference(name).ok()?;
        reference.peel_to_commit().ok().map(|commit| commit.id())
    }

    /// `refs/pull/N/head`, peeled to a commit.
    pub fn pull_head(&self, number: u64) -> Option<Oid> {
        self.resolve_ref(&format!("refs/pull/{number}/head"))
    }

    /// Whether a commit with this id (hex) is in the mirror.
    pub fn commit_id(&self, hex: &str) -> Option<Oid> {
        let oid = Oid::from_str(hex).ok()?;
        self.repository.find_commit(oid).ok().map(|commit| commit.id())
    }

    pub fn merge_base(&self, one: Oid, two: Oid) -> Option<Oid> {
        self.repository.merge_base(one, two).ok()
    }

    /// Every `refs/pull/N/head` of the mirror, by number.
    pub fn pull_heads(&self) -> Result<Vec<(u64, Oid)>, GitError> {
        let error = |source| GitError::Object { what: "the refs `refs/pull/*/head`".into(), source };
        let mut heads = Vec::new();
        for reference in self.repository.references_glob("refs/pull/*/head").map_err(error)? {
            let reference = reference.map_err(error)?;
            let Some(number) = reference
                .name()
                .ok()
                .and_then(|name| name.strip_prefix("refs/pull/"))
                .and_then(|rest| rest.strip_suffix("/head"))
                .and_then(|number| number.parse::<u64>().ok())
            else {
                continue;
            };
            if let Ok(commit) = reference.peel_to_commit() {
                heads.push((number, commit.id()));
            }
        }
        heads.sort();
        Ok(heads)
    }

    /// The commit HEAD points at (the default branch of the mirror), if any.
    pub fn head_commit(&self) -> Option<Oid> {
        self.repository.head().ok()?.peel_to_commit().ok().map(|commit| commit.id())
    }

    pub fn commit_info(&self, id: Oid) -> Result<CommitInfo, GitError> {
        let commit = self
            .repository
            .find_commit(id)
            .map_err(|source| GitError::Object { what: format!("commit {id}"), source })?;
        Ok(commit_info(&commit))
    }

    /// Commits reachable from `head` but not from `base`, oldest first (topological
    /// order), at most `limit` of them (the newest `limit` when there are more).
    pub fn commits_between(&self, base: Oid, head: Oid, limit: usize) -> Result<Vec<CommitInfo>, GitError> {
        let error = |source| GitError::Object { what: format!("the commits {base}..{head}"), source };
        let mut walk = self.repository.revwalk().map_err(error)?;
        walk.set_sorting(Sort::TOPOLOGICAL).map_err(error)?;
        walk.push(head).map_err(error)?;
        walk.hide(base).map_err(error)?;
        let mut commits = Vec::new();
        for id in walk.take(limit) {
            let id = id.map_err(error)?;
            let commit = self.repository.find_commit(id).map_err(error)?;
            commits.push(commit_info(&commit));
        }
        commits.reverse();
        Ok(commits)
    }

    /// A file's content at a commit, if the path names a blob there.
    pub fn file_at(&self, commit: Oid, path: &str) -> Option<Vec<u8>> {
        let tree = self.repository.find_commit(commit).ok()?.tree().ok()?;
        let entry = tree.get_path(Path::new(path)).ok()?;
        let blob = entry.to_object(&self.repository).ok()?.into_blob().ok()?;
        Some(blob.content().to_vec())
    }

    /// Names of the entries (files and folders) of a folder at a commit; `""` is the
    /// root. Empty when the folder does not exist.
    pub fn entries_under(&self, commit: Oid, folder: &str) -> Vec<String> {
        let Some(root) = self.repository.find_commit(commit).ok().and_then(|commit| commit.tree().ok()) else {
            return Vec::new();
        };
        let tree = if folder.is_empty() {
            root
        } else {
            match root.get_path(Path::new(folder)).ok().and_then(|entry| entry.to_object(&self.repository).ok()) {
                Some(object) => match object.into_tree() {
                    Ok(tree) => tree,
                    Err(_) => return Vec::new(),
                },
                None => return Vec::new(),
            }
        };
        tree.iter().filter_map(|entry| entry.name().ok().map(String::from)).collect()
    }

    /// Tags peeled to commits: (tag name, commit).
    pub fn tags(&self) -> Result<Vec<(String, Oid)>, GitError> {
        let error = |source| GitError::Object { what: "the tags".into(), source };
        let mut tags = Vec::new();
        for reference in self.repository.references_glob("refs/tags/*").map_err(error)? {
            let reference = reference.map_err(error)?;
            let Some(name) = reference.name().ok().and_then(|name| name.strip_prefix("refs/tags/")) else { continue };
            let name = name.to_string();
            if let Ok(commit) = reference.peel_to_commit() {
                tags.push((name, commit.id()));
            }
        }
        Ok(tags)
    }

    /// The three-dot diff: from the merge-base of `base` and `head` to `head`.
    pub fn three_dot_diff(&self, merge_base: Oid, head: Oid) -> Result<Vec<FileDiff>, GitError> {
        diff::diff_trees(&self.repository, Some(merge_base), head)
    }

    /// The changed files of the three-dot diff, to be printed one by one; or
    /// `Ok(Err(count))` when more than `max_files` files changed.
    pub fn three_dot_tree_diff(
        &self,
        merge_base: Oid,
        head: Oid,
        max_files: usize,
    ) -> Result<Result<diff::TreeDiff<'_>, usize>, GitError> {
        diff::TreeDiff::new(&self.repository, Some(merge_base), head, max_files)
    }
}

/// Process-wide libgit2 settings for reading mirrors fast, applied once: no SHA-1
/// re-verification of every object read (the packs were verified when fetched).
/// (Caching blobs in libgit2's object cache was measured too: it cost more CPU and
/// 150 MB more memory than it saved, so blobs are not cached.)
pub fn tune_for_reading() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| git2::opts::strict_hash_verification(false));
}

fn commit_info(commit: &git2::Commit<'_>) -> CommitInfo {
    let seconds = commit.author().when().seconds();
    CommitInfo {
        id: commit.id(),
        author_time: Utc.timestamp_opt(seconds, 0).single().unwrap_or_default(),
        message: String::from_utf8_lossy(commit.message_bytes()).into_owned(),
    }
}
