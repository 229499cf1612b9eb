//! The repository at one commit, read from its bare mirror with git2: as a tar
//! archive to copy into a container or a build context (files only, no history, no
//! `.git`), or file by file for environment inference. No network, no clone.
//!
//! Decision: the container gets no `.git`. Patches are applied with `git apply`
//! outside a repository (it then behaves like a careful `patch`), with `patch` as the
//! fallback, so there is no need to create a repository and a commit in every run.
//!
//! Where mirrors are: `<data-dir>/mirrors/<owner>__<name>.git` (the mirror stage), or
//! in the directory named by `SWE_HARVEST_MIRRORS` as `<owner>__<name>.git` or
//! `<owner>+<name>/repo`.

use std::path::{Path, PathBuf};

use chrono::{DateTime, TimeZone, Utc};
use git2::{ObjectType, Oid, Repository, TreeWalkMode, TreeWalkResult};

use crate::model::RepoSlug;

#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error(
        "there is no mirror of `{repo}` (looked in {looked}); run `swe-harvest mirror --repo {repo}` \
         (with `--clone-url` for a local copy) first"
    )]
    NoMirror { repo: RepoSlug, looked: String },
    #[error("failed to open the mirror `{path}`")]
    Open {
        path: PathBuf,
        #[source]
        source: git2::Error,
    },
    #[error("commit `{commit}` is not in the mirror `{path}`; update the mirror (`swe-harvest mirror`)")]
    MissingCommit {
        commit: String,
        path: PathBuf,
        #[source]
        source: git2::Error,
    },
    #[error("failed to read `{what}` at commit `{commit}` in `{path}`")]
    Read {
        what: String,
        commit: String,
        path: PathBuf,
        #[source]
        source: git2::Error,
    },
    #[error("failed to write the archive of `{commit}`")]
    Archive {
        commit: String,
        #[source]
        source: std::io::Error,
    },
}

/// Where the mirror of `repo` is, trying the data dir first, then `mirrors_dir`.
pub fn find_mirror(data_dir: &Path, mirrors_dir: Option<&Path>, repo: &RepoSlug) -> Result<PathBuf, SourceError> {
    let mut candidates = vec![data_dir.join("mirrors").join(format!("{}.git", repo.double_underscore()))];
    if let Some(dir) = mirrors_dir {
        candidates.push(dir.join(format!("{}.git", repo.double_underscore())));
        candidates.push(dir.join(format!("{}+{}", repo.owner(), repo.name())).join("repo"));
    }
    candidates.iter().find(|path| path.is_dir()).cloned().ok_or_else(|| SourceError::NoMirror {
        repo: repo.clone(),
        looked: candidates.iter().map(|path| format!("`{}`", path.display())).collect::<Vec<_>>().join(", "),
    })
}

/// A mirror opened for reading trees at commits.
pub struct Mirror {
    repository: Repository,
    path: PathBuf,
}

/// What an archive's entries are owned by inside the container.
#[derive(Debug, Clone, Copy)]
pub struct Owner {
    pub uid: u64,
    pub gid: u64,
}

impl Mirror {
    pub fn open(path: &Path) -> Result<Mirror, SourceError> {
        let repository = Repository::open_bare(path)
            .or_else(|_| Repository::open(path))
            .map_err(|source| SourceError::Open { path: path.to_path_buf(), source })?;
        Ok(Mirror { repository, path: path.to_path_buf() })
    }

    fn commit(&self, commit: &str) -> Result<git2::Commit<'_>, SourceError> {
        let missing =
            |source| SourceError::MissingCommit { commit: commit.to_string(), path: self.path.clone(), source };
        let oid = Oid::from_str(commit).map_err(missing)?;
        self.repository.find_commit(oid).map_err(missing)
    }

    fn read_error(&self, what: &str, commit: &str) -> impl FnOnce(git2::Error) -> SourceError {
        let (what, commit, path) = (what.to_string(), commit.to_string(), self.path.clone());
        move |source| SourceError::Read { what, commit, path, source }
    }

    /// When the commit was made (the committer's time).
    pub fn commit_time(&self, commit: &str) -> Result<DateTime<Utc>, SourceError> {
        let time = self.commit(commit)?.time();
        Ok(Utc.timestamp_opt(time.seconds(), 0).single().unwrap_or_default())
    }

    /// The text of `path` at `commit`; `None` when there is no such file.
    pub fn read_file(&self, commit: &str, path: &str) -> Result<Option<String>, SourceError> {
        let tree = self.commit(commit)?.tree().map_err(self.read_error("the tree", commit))?;
        let Ok(entry) = tree.get_path(Path::new(path)) else { return Ok(None) };
        if entry.kind() != Some(ObjectType::Blob) {
            return Ok(None);
        }
        let blob = self.repository.find_blob(entry.id()).map_err(self.read_error(path, commit))?;
        Ok(Some(String::from_utf8_lossy(blob.content()).into_owned()))
    }

    /// Every file path at `commit`, in tree order.
    pub fn list_files(&self, commit: &str) -> Result<Vec<String>, SourceError> {
        let tree = self.commit(commit)?.tree().map_err(self.read_error("the tree", commit))?;
        let mut paths = Vec::new();
        tree.walk(TreeWalkMode::PreOrder, |root, entry| {
            if entry.kind() == Some(ObjectType::Blob) {
                paths.push(format!("{root}{}", entry.name().unwrap_or_default()));
            }
            TreeWalkResult::Ok
        })
        .map_err(self.read_error("the tree", commit))?;
        Ok(paths)
    }

    /// Appends the tree of `commit` to `builder` under `prefix` (e.g. `testbed`):
    /// directories, files with their executable bit, symbolic links. Submodules are
    /// left out (their content is not in the mirror).
    pub fn append_tree<W: std::io::Write>(
        &self,
        builder: &mut tar::Builder<W>,
        commit: &str,
        prefix: &str,
        owner: Owner,
    ) -> Result<(), SourceError> {
        let tree = self.commit(commit)?.tree().map_err(self.read_error("the tree", commit))?;
        let mut failure: Option<SourceError> = None;
        let mut missing = 0usize;
        let archive_error = |source| SourceError::Archive { commit: commit.to_string(), source };
        tree.walk(TreeWalkMode::PreOrder, |root, entry| {
            let path = format!("{prefix}/{root}{}", entry.name().unwrap_or_default());
            let mut header = tar::Header::new_gnu();
            header.set_uid(owner.uid);
            header.set_gid(owner.gid);
            header.set_mtime(0);
            let result = match (entry.kind(), entry.filemode()) {
                (Some(ObjectType::Tree), _) => {
                    header.set_entry_type(tar::EntryType::Directory);
                    header.set_mode(0o755);
                    header.set_size(0);
                    builder.append_data(&mut header, &path, std::io::empty()).map_err(archive_error)
                }
                (Some(ObjectType::Blob), mode) => match self.repository.find_blob(entry.id()) {
                    Ok(blob) if mode == 0o120000 => {
                        header.set_entry_type(tar::EntryType::Symlink);
                        header.set_mode(0o777);
                        header.set_size(0);
                        let target = String::from_utf8_lossy(blob.content()).into_owned();
                        builder.append_link(&mut header, &path, target).map_err(archive_error)
                    }
                    Ok(blob) => {
                        header.set_entry_type(tar::EntryType::Regular);
                        header.set_mode(if mode == 0o100755 { 0o755 } else { 0o644 });
                        header.set_size(blob.content().len() as u64);
                        builder.append_data(&mut header, &path, blob.content()).map_err(archive_error)
                    }
                    // A partial mirror (a shallow or size-limited snapshot) may lack some
                    // large blobs: the file is left out, so only tests that need it fail.
                    Err(source) if source.code() == git2::ErrorCode::NotFound => {
                        missing += 1;
                        tracing::debug!(path = %path, "a blob is missing from the mirror; left out");
                        Ok(())
                    }
                    Err(source) => Err(SourceError::Read {
                        what: path.clone(),
                        commit: commit.to_string(),
                        path: self.path.clone(),
                        source,
                    }),
                },
                _ => Ok(()),
            };
            match result {
                Ok(()) => TreeWalkResult::Ok,
                Err(error) => {
                    failure = Some(error);
                    TreeWalkResult::Abort
                }
            }
        })
        .or_else(|error| if failure.is_some() { Ok(()) } else { Err(error) })
        .map_err(self.read_error("the tree", commit))?;
        if missing > 0 {
            tracing::warn!(
                mirror = %self.path.display(), commit, missing,
                "files whose content is missing from the mirror were left out of the archive"
            );
        }
        match failure {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }
}

/// Adds one in-memory file to an archive.
pub fn append_bytes<W: std::io::Write>(
    builder: &mut tar::Builder<W>,
    path: &str,
    bytes: &[u8],
    mode: u32,
    owner: Owner,
) -> std::io::Result<()> {
    let mut header = tar::Header::new_gnu();
    header.set_entry_type(tar::EntryType::Regular);
    header.set_mode(mode);
    header.set_uid(owner.uid);
    header.set_gid(owner.gid);
    header.set_mtime(0);
    header.set_size(bytes.len() as u64);
    builder.append_data(&mut header, path, bytes)
}

/// Adds one directory entry to an archive.
pub fn append_dir<W: std::io::Write>(builder: &mut tar::Builder<W>, path: &str, owner: Owner) -> std::io::Result<()> {
    let mut header = tar::Header::new_gnu();
    header.set_entry_type(tar::EntryType::Directory);
    header.set_mode(0o755);
    header.set_uid(owner.uid);
    header.set_gid(owner.gid);
    header.set_mtime(0);
    header.set_size(0);
    builder.append_data(&mut header, path, std::io::empty())
}

/// The files that a unified diff creates or changes (its `+++ b/...` lines), in diff
/// order; deleted files are left out.
pub fn files_changed_by(diff: &str) -> Vec<String> {
    let mut files = Vec::new();
    for line in diff.lines() {
        if let Some(path) = line.strip_prefix("+++ ") {
            let path = path.split('\t').next().unwrap_or(path).trim();
            if path == "/dev/null" {
                continue;
            }
            let path = path.strip_prefix("b/").unwrap_or(path).to_string();
            if !files.contains(&path) {
                files.push(path);
            }
        }
    }
    files
}

/// The Python files a diff creates or changes that can be run as tests: all but
/// `conftest.py` and `__init__.py`.
pub fn python_test_files(diff: &str) -> Vec<String> {
    files_changed_by(diff)
        .into_iter()
        .filter(|file| file.ends_with(".py"))
        .filter(|file| {
            let name = file.rsplit('/').next().unwrap_or(file);
            name != "conftest.py" && name != "__init__.py"
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_changed_by_a_diff_skip_deletions() {
        let diff = "\
diff --git a/tests/test_a.py b/tests/test_a.py
--- a/tests/test_a.py
+++ b/tests/test_a.py
@@ -1 +1 @@
-x
+y
diff --git a/tests/old.py b/tests/old.py
deleted file mode 100644
--- a/tests/old.py
+++ /dev/null
diff --git a/tests/new.py b/tests/new.py
new file mode 100644
--- /dev/null
+++ b/tests/new.py\t
";
        assert_eq!(files_changed_by(diff), vec!["tests/test_a.py".to_string(), "tests/new.py".to_string()]);
    }
}
