//! A builder of real git repositories with history, for tests: commits with given
//! author dates and parents, branches, tags (lightweight and annotated), GitHub-style
//! `refs/pull/N/head` refs, and any file change git knows (text, binary, non-UTF-8,
//! executable mode, symlinks, deletions, renames). Written with git2 straight into a
//! bare repository in a temporary folder; no `git` binary is needed.
//!
//! ```ignore
//! let repo = SyntheticRepo::new();
//! let base = repo.commit(&[], "2024-01-01T00:00:00Z", "init", &[Change::write("pkg/a.py", "x = 1\n")]);
//! let head = repo.commit(&[base], "2024-01-02T00:00:00Z", "Fix it\n\nFixes #1", &[Change::delete("pkg/a.py")]);
//! repo.branch("main", base);
//! repo.pull_ref(2, head);
//! // repo.path() is a bare repository: clone it with `mirror --clone-url PATH`.
//! ```

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use git2::{Index, IndexEntry, IndexTime, Oid, Repository, Signature, Time};

/// One change to the tree of a commit, relative to its first parent.
#[derive(Debug, Clone)]
pub enum Change {
    /// Create or overwrite a regular file (mode 100644).
    Write {
        path: String,
        content: Vec<u8>,
    },
    /// Create or overwrite an executable file (mode 100755).
    Executable {
        path: String,
        content: Vec<u8>,
    },
    /// Create a symbolic link (mode 120000) pointing at `target`.
    Symlink {
        path: String,
        target: String,
    },
    /// Change only the mode of an existing file (`true`: 100755).
    SetExecutable {
        path: String,
        executable: bool,
    },
    Delete {
        path: String,
    },
    /// Move a file, keeping its content and mode.
    Rename {
        from: String,
        to: String,
    },
}

impl Change {
    pub fn write(path: &str, content: impl AsRef<[u8]>) -> Change {
        Change::Write { path: path.into(), content: content.as_ref().to_vec() }
    }
    pub fn executable(path: &str, content: impl AsRef<[u8]>) -> Change {
        Change::Executable { path: path.into(), content: content.as_ref().to_vec() }
    }
    pub fn symlink(path: &str, target: &str) -> Change {
        Change::Symlink { path: path.into(), target: target.into() }
    }
    pub fn set_executable(path: &str, executable: bool) -> Change {
        Change::SetExecutable { path: path.into(), executable }
    }
    pub fn delete(path: &str) -> Change {
        Change::Delete { path: path.into() }
    }
    pub fn rename(from: &str, to: &str) -> Change {
        Change::Rename { from: from.into(), to: to.into() }
    }
}

/// A bare repository in a temporary folder that lives as long as this value.
pub struct SyntheticRepo {
    _dir: tempfile::TempDir,
    path: PathBuf,
    repository: Repository,
}

impl SyntheticRepo {
    /// An empty bare repository whose HEAD names `refs/heads/main`.
    pub fn new() -> SyntheticRepo {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("origin.git");
        let repository = Repository::init_bare(&path).expect("init a bare repository");
        repository.set_head("refs/heads/main").expect("set HEAD");
        SyntheticRepo { _dir: dir, path, repository }
    }

    /// The bare repository's folder (usable as a clone URL).
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn repository(&self) -> &Repository {
        &self.repository
    }

    /// Makes a commit with `changes` applied to the first parent's tree (or to an
    /// empty tree), authored and committed at `when` (RFC 3339).
    pub fn commit(&self, parents: &[Oid], when: &str, message: &str, changes: &[Change]) -> Oid {
        let repo = &self.repository;
        let mut index = Index::new().expect("in-memory index");
        if let Some(first) = parents.first() {
            let tree = repo.find_commit(*first).expect("parent commit").tree().expect("parent tree");
            index.read_tree(&tree).expect("read the parent tree");
        }
        for change in changes {
            match change {
                Change::Write { path, content } => add(repo, &mut index, path, content, 0o100644),
                Change::Executable { path, content } => add(repo, &mut index, path, content, 0o100755),
                Change::Symlink { path, target } => add(repo, &mut index, path, target.as_bytes(), 0o120000),
                Change::SetExecutable { path, executable } => {
                    let entry = index.get_path(Path::new(path), 0).unwrap_or_else(|| panic!("no file {path} to chmod"));
                    let content = repo.find_blob(entry.id).expect("blob").content().to_vec();
                    add(repo, &mut index, path, &content, if *executable { 0o100755 } else { 0o100644 });
                }
                Change::Delete { path } => index.remove_path(Path::new(path)).expect("remove a path"),
                Change::Rename { from, to } => {
                    let entry =
                        index.get_path(Path::new(from), 0).unwrap_or_else(|| panic!("no file {from} to rename"));
                    let content = repo.find_blob(entry.id).expect("blob").content().to_vec();
                    index.remove_path(Path::new(from)).expect("remove the old path");
                    add(repo, &mut index, to, &content, entry.mode);
                }
            }
        }
        let tree_id = index.write_tree_to(repo).expect("write the tree");
        let tree = repo.find_tree(tree_id).expect("tree");
        let time = chrono::DateTime::parse_from_rfc3339(when).expect("an RFC 3339 time");
        let signature = Signature::new("Synthetic Author", "author@example.com", &Time::new(time.timestamp(), 0))
            .expect("signature");
        let parent_commits: Vec<git2::Commit<'_>> =
            parents.iter().map(|id| repo.find_commit(*id).expect("parent commit")).collect();
        let parent_refs: Vec<&git2::Commit<'_>> = parent_commits.iter().collect();
        repo.commit(None, &signature, &signature, message, &tree, &parent_refs).expect("commit")
    }

    /// Points `refs/heads/NAME` at a commit.
    pub fn branch(&self, name: &str, commit: Oid) {
        self.set_ref(&format!("refs/heads/{name}"), commit);
    }

    /// A lightweight tag.
    pub fn tag(&self, name: &str, commit: Oid) {
        self.set_ref(&format!("refs/tags/{name}"), commit);
    }

    /// An annotated tag object.
    pub fn annotated_tag(&self, name: &str, commit: Oid) {
        let object = self.repository.find_object(commit, None).expect("object");
        let tagger = Signature::new("Tagger", "tagger@example.com", &Time::new(1_600_000_000, 0)).expect("signature");
        self.repository.tag(name, &object, &tagger, name, true).expect("annotated tag");
    }

    /// GitHub's `refs/pull/N/head`.
    pub fn pull_ref(&self, number: u64, commit: Oid) {
        self.set_ref(&format!("refs/pull/{number}/head"), commit);
    }

    pub fn set_ref(&self, name: &str, commit: Oid) {
        self.repository.reference(name, commit, true, "synthetic").expect("set a ref");
    }
}

fn add(repo: &Repository, index: &mut Index, path: &str, content: &[u8], mode: u32) {
    let id = repo.blob(content).expect("write a blob");
    let entry = IndexEntry {
        ctime: IndexTime::new(0, 0),
        mtime: IndexTime::new(0, 0),
        dev: 0,
        ino: 0,
        mode,
        uid: 0,
        gid: 0,
        file_size: content.len() as u32,
        id,
        flags: 0,
        flags_extended: 0,
        path: path.as_bytes().to_vec(),
    };
    index.add(&entry).expect("add to the index");
}

/// A Python module with `functions` functions in a class and at top level, `lines`
/// lines each, so that changes deep inside give hunk headers with function names.
pub fn python_module(name: &str, functions: usize, lines: usize, variant: usize) -> String {
    let mut text = format!("\"\"\"Module {name}.\"\"\"\n\nimport os\n\n\nclass {}Thing:\n", capitalize(name));
    for function in 0..functions {
        text += &format!("    def method_{function}(self, value):\n");
        for line in 0..lines {
            let value = if function == variant % functions.max(1) && line == lines / 2 { variant } else { line };
            text += &format!("        value = value + {value}\n");
        }
        text += "        return value\n\n";
    }
    text += "\nasync def top_level(value):\n    return value\n";
    text
}

fn capitalize(name: &str) -> String {
    let mut chars = name.chars();
    chars.next().map(|first| first.to_uppercase().collect::<String>() + chars.as_str()).unwrap_or_default()
}
