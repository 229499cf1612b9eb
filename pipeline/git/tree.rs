//! The repository at one commit, read from a mirror: a commit's time, one file's
//! text, every file's path, and a walk over the whole tree (what the sandbox turns
//! into `/testbed`). Commits are named by hex ids here, as tasks store them; a
//! commit missing from the mirror is [`GitError::MissingCommit`], which says to update
//! the mirror.
//!
//! Also the one way to find a repository's mirror ([`find_mirror`]): the data dir's
//! own (`<data-dir>/mirrors/<owner>__<name>.git`, the mirror stage's), then a folder
//! of local mirrors (`SWE_HARVEST_MIRRORS`) in the layouts users have ([`mirror_in`]).

use std::path::{Path, PathBuf};

use chrono::{DateTime, TimeZone, Utc};
use git2::{ObjectType, Oid, TreeWalkMode, TreeWalkResult};

use super::{GitError, Mirror};
use crate::model::RepoSlug;

/// One entry of a tree walk, in pre-order (a folder before its content).
#[derive(Debug)]
pub enum TreeItem<'a> {
    Dir,
    File { content: &'a [u8], executable: bool },
    Symlink { target: String },
}

/// Where the mirror of `repo` is: the data dir's first, then `mirrors_dir`'s
/// ([`mirror_in`]).
pub fn find_mirror(data_dir: &Path, mirrors_dir: Option<&Path>, repo: &RepoSlug) -> Result<PathBuf, GitError> {
    let own = super::mirror::mirror_path(data_dir, repo);
    if own.is_dir() {
        return Ok(own);
    }
    if let Some(found) = mirrors_dir.and_then(|dir| mirror_in(dir, repo)) {
        return Ok(found);
    }
    let mut looked = vec![own];
    if let Some(dir) = mirrors_dir {
        looked.extend(mirror_layouts(repo).iter().map(|relative| dir.join(relative)));
    }
    Err(GitError::NoMirror {
        repo: repo.clone(),
        looked: looked.iter().map(|path| format!("`{}`", path.display())).collect::<Vec<_>>().join(", "),
    })
}

/// The places of `owner/name`'s repository in a folder of mirrors, in the order they
/// are tried: the mirror stage's own name, the layout of fetched snapshots, then the
/// layouts users have.
fn mirror_layouts(repo: &RepoSlug) -> [String; 5] {
    let (owner, name) = (repo.owner(), repo.name());
    [
        format!("{owner}__{name}.git"),
        format!("{owner}+{name}/repo"),
        format!("{owner}/{name}.git"),
        format!("{owner}__{name}"),
        format!("{owner}/{name}"),
    ]
}

/// The repository of `repo` in a folder of mirrors (`SWE_HARVEST_MIRRORS`), in any of
/// the layouts `<owner>__<name>.git`, `<owner>+<name>/repo`, `<owner>/<name>.git`,
/// `<owner>__<name>` or `<owner>/<name>`, each a bare repository or a plain clone (a
/// work tree with its `.git`). GitHub's owner and repository names ignore case
/// (Multi-SWE-bench's rows spell FasterXML `fasterxml`): so does the search, when no
/// folder has the exact name. A folder of that name that holds no repository is passed
/// over.
pub fn mirror_in(dir: &Path, repo: &RepoSlug) -> Option<PathBuf> {
    let layouts = mirror_layouts(repo);
    let exact = layouts.iter().map(|relative| dir.join(relative)).find(|path| is_repository(path));
    exact.or_else(|| {
        layouts.iter().filter_map(|relative| path_ignoring_case(dir, relative)).find(|path| is_repository(path))
    })
}

/// Whether `path` holds a git repository: a bare one (`HEAD` and `objects/`) or a
/// plain clone (a `.git` folder, or the `.git` file of a linked work tree).
fn is_repository(path: &Path) -> bool {
    (path.join("HEAD").is_file() && path.join("objects").is_dir()) || path.join(".git").exists()
}

/// `dir` joined with `relative`, each component matched without regard to case when
/// no entry has its exact name.
fn path_ignoring_case(dir: &Path, relative: &str) -> Option<PathBuf> {
    let mut path = dir.to_path_buf();
    for component in relative.split('/') {
        let exact = path.join(component);
        path = if exact.exists() {
            exact
        } else {
            fs_err::read_dir(&path)
                .ok()?
                .flatten()
                .find(|entry| entry.file_name().to_string_lossy().eq_ignore_ascii_case(component))?
                .path()
        };
    }
    Some(path)
}

impl Mirror {
    /// The commit with this hex id, or [`GitError::MissingCommit`].
    fn commit_by_hex(&self, commit: &str) -> Result<git2::Commit<'_>, GitError> {
        let missing = |source| GitError::MissingCommit { commit: commit.to_string(), path: self.path.clone(), source };
        let oid = Oid::from_str(commit).map_err(missing)?;
        self.repository.find_commit(oid).map_err(missing)
    }

    fn tree_at(&self, commit: &str) -> Result<git2::Tree<'_>, GitError> {
        self.commit_by_hex(commit)?
            .tree()
            .map_err(|source| GitError::Object { what: format!("the tree of {commit}"), source })
    }

    /// When the commit was made (the committer's time).
    pub fn commit_time(&self, commit: &str) -> Result<DateTime<Utc>, GitError> {
        let time = self.commit_by_hex(commit)?.time();
        Ok(Utc.timestamp_opt(time.seconds(), 0).single().unwrap_or_default())
    }

    /// The text of `path` at `commit` (lossy UTF-8); `None` when there is no such file.
    pub fn read_text(&self, commit: &str, path: &str) -> Result<Option<String>, GitError> {
        let tree = self.tree_at(commit)?;
        let Ok(entry) = tree.get_path(Path::new(path)) else { return Ok(None) };
        if entry.kind() != Some(ObjectType::Blob) {
            return Ok(None);
        }
        let blob = self
            .repository
            .find_blob(entry.id())
            .map_err(|source| GitError::Object { what: format!("`{path}` at {commit}"), source })?;
        Ok(Some(String::from_utf8_lossy(blob.content()).into_owned()))
    }

    /// Every file path at `commit`, in tree order.
    pub fn list_files(&self, commit: &str) -> Result<Vec<String>, GitError> {
        let tree = self.tree_at(commit)?;
        let mut paths = Vec::new();
        tree.walk(TreeWalkMode::PreOrder, |root, entry| {
            if entry.kind() == Some(ObjectType::Blob) {
                paths.push(format!("{root}{}", entry.name().unwrap_or_default()));
            }
            TreeWalkResult::Ok
        })
        .map_err(|source| GitError::Object { what: format!("the tree of {commit}"), source })?;
        Ok(paths)
    }

    /// Walks the tree of `commit` in pre-order: folders, files with their executable
    /// bit, symbolic links, each with its path relative to the root. Submodules are
    /// left out (their content is not in the mirror), and so are files whose content
    /// a partial mirror (a size-limited snapshot) lacks: only tests that need them
    /// fail. Returns how many were left out that way; the first error of `visit` stops
    /// the walk and is returned.
    pub fn walk_tree(
        &self,
        commit: &str,
        mut visit: impl FnMut(&str, TreeItem<'_>) -> std::io::Result<()>,
    ) -> Result<usize, GitError> {
        let tree = self.tree_at(commit)?;
        let mut failure: Option<GitError> = None;
        let mut missing = 0usize;
        tree.walk(TreeWalkMode::PreOrder, |root, entry| {
            let path = format!("{root}{}", entry.name().unwrap_or_default());
            let result = match (entry.kind(), entry.filemode()) {
                (Some(ObjectType::Tree), _) => visit(&path, TreeItem::Dir).map_err(|source| (path.clone(), source)),
                (Some(ObjectType::Blob), mode) => match self.repository.find_blob(entry.id()) {
                    Ok(blob) if mode == 0o120000 => {
                        let target = String::from_utf8_lossy(blob.content()).into_owned();
                        visit(&path, TreeItem::Symlink { target }).map_err(|source| (path.clone(), source))
                    }
                    Ok(blob) => {
                        let item = TreeItem::File { content: blob.content(), executable: mode == 0o100755 };
                        visit(&path, item).map_err(|source| (path.clone(), source))
                    }
                    Err(source) if source.code() == git2::ErrorCode::NotFound => {
                        missing += 1;
                        tracing::debug!(path = %path, "a blob is missing from the mirror; left out");
                        Ok(())
                    }
                    Err(source) => {
                        failure = Some(GitError::Object { what: format!("`{path}` at {commit}"), source });
                        return TreeWalkResult::Abort;
                    }
                },
                _ => Ok(()),
            };
            match result {
                Ok(()) => TreeWalkResult::Ok,
                Err((path, source)) => {
                    failure = Some(GitError::Walk { commit: commit.to_string(), path, source });
                    TreeWalkResult::Abort
                }
            }
        })
        .or_else(|error| if failure.is_some() { Ok(()) } else { Err(error) })
        .map_err(|source| GitError::Object { what: format!("the tree of {commit}"), source })?;
        if missing > 0 {
            tracing::warn!(
                mirror = %self.path.display(), commit, missing,
                "files whose content is missing from the mirror were left out"
            );
        }
        match failure {
            Some(error) => Err(error),
            None => Ok(missing),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real repository at `path` with one commit: bare, or a plain clone's work tree.
    fn repository(path: &Path, bare: bool) {
        fs_err::create_dir_all(path).unwrap();
        let repository =
            if bare { git2::Repository::init_bare(path).unwrap() } else { git2::Repository::init(path).unwrap() };
        let tree = repository.find_tree(repository.treebuilder(None).unwrap().write().unwrap()).unwrap();
        let signature = git2::Signature::now("t", "t@example.com").unwrap();
        repository.commit(Some("HEAD"), &signature, &signature, "one", &tree, &[]).unwrap();
    }

    #[test]
    fn local_mirrors_are_found_whatever_the_case_of_the_names() {
        let data = tempfile::tempdir().unwrap();
        let mirrors = tempfile::tempdir().unwrap();
        let repo_dir = mirrors.path().join("FasterXML+jackson-dataformat-xml/repo");
        repository(&repo_dir, true);
        let lower: RepoSlug = "fasterxml/jackson-dataformat-xml".parse().unwrap();
        assert_eq!(find_mirror(data.path(), Some(mirrors.path()), &lower).unwrap(), repo_dir);
        let other: RepoSlug = "fasterxml/jackson-core".parse().unwrap();
        let error = find_mirror(data.path(), Some(mirrors.path()), &other).unwrap_err().to_string();
        assert!(error.contains("there is no mirror of `fasterxml/jackson-core`"), "{error}");
        assert!(error.contains("fasterxml/jackson-core.git"), "the layouts looked at are named: {error}");
    }

    #[test]
    fn every_layout_of_a_folder_of_mirrors_is_found_bare_or_a_plain_clone() {
        let repo: RepoSlug = "acme/widgets".parse().unwrap();
        for (relative, bare) in [
            ("acme__widgets.git", true),
            ("acme+widgets/repo", true),
            ("acme/widgets.git", true),
            ("acme__widgets", true),
            ("acme__widgets", false),
            ("acme/widgets", false),
            ("Acme/Widgets", false),
        ] {
            let mirrors = tempfile::tempdir().unwrap();
            let path = mirrors.path().join(relative);
            repository(&path, bare);
            let found = mirror_in(mirrors.path(), &repo).unwrap_or_else(|| panic!("{relative} (bare: {bare})"));
            assert_eq!(found, path, "{relative}");
            let mirror = Mirror::open(&found).unwrap();
            assert!(mirror.repository().head().is_ok(), "{relative}: the repository opens");
        }
        // A folder of the name that holds no repository is passed over for one that does.
        let mirrors = tempfile::tempdir().unwrap();
        fs_err::create_dir_all(mirrors.path().join("acme__widgets.git")).unwrap();
        assert_eq!(mirror_in(mirrors.path(), &repo), None);
        repository(&mirrors.path().join("acme/widgets"), false);
        assert_eq!(mirror_in(mirrors.path(), &repo), Some(mirrors.path().join("acme/widgets")));
    }
}
