//! The tar archives that go into containers and image builds: the repository at one
//! commit (files only, no history, no `.git`), a job's files under `/swe-harvest/`,
//! and build contexts. Every backend copies the same archive in, so what a job sees
//! does not depend on where it runs.
//!
//! Decision: the container gets no `.git`. Patches are applied with `git apply`
//! outside a repository (it then behaves like a careful `patch`), with `patch` as the
//! fallback, so there is no need to create a repository and a commit in every run.

use std::collections::BTreeSet;
use std::path::Path;

use super::images::{TESTBED_TARBALL, TestbedCopy};
use super::{Job, Owner};
use crate::git::{GitError, Mirror, TreeItem};

/// The modification time of the files swe-harvest writes itself (scripts, patches).
const MTIME: u64 = 0;

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
    header.set_mtime(MTIME);
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
    header.set_mtime(MTIME);
    header.set_size(0);
    builder.append_data(&mut header, path, std::io::empty())
}

/// Appends the tree of `commit` to `builder` under `prefix` (e.g. `testbed`), owned by
/// `owner`: folders, files with their executable bit, symbolic links. Every entry
/// carries the commit's time, as a checkout would carry a recent one: build backends
/// that zip the sources (flit) refuse times before 1980.
pub fn append_tree<W: std::io::Write>(
    builder: &mut tar::Builder<W>,
    mirror: &Mirror,
    commit: &str,
    prefix: &str,
    owner: Owner,
) -> Result<(), GitError> {
    let mtime = mirror.commit_time(commit)?.timestamp().max(0) as u64;
    mirror.walk_tree(commit, |path, item| {
        let path = format!("{prefix}/{path}");
        let mut header = tar::Header::new_gnu();
        header.set_uid(owner.uid);
        header.set_gid(owner.gid);
        header.set_mtime(mtime);
        match item {
            TreeItem::Dir => {
                header.set_entry_type(tar::EntryType::Directory);
                header.set_mode(0o755);
                header.set_size(0);
                builder.append_data(&mut header, &path, std::io::empty())
            }
            TreeItem::Symlink { target } => {
                header.set_entry_type(tar::EntryType::Symlink);
                header.set_mode(0o777);
                header.set_size(0);
                builder.append_link(&mut header, &path, target)
            }
            TreeItem::File { content, executable } => {
                header.set_entry_type(tar::EntryType::Regular);
                header.set_mode(if executable { 0o755 } else { 0o644 });
                header.set_size(content.len() as u64);
                builder.append_data(&mut header, &path, content)
            }
        }
    })?;
    Ok(())
}

/// The archive copied to `/` in a job's container: the repository under `testbed/`
/// (when the job carries one) and the job's files and script under `swe-harvest/`.
pub fn job_payload(job: &Job) -> Result<Vec<u8>, String> {
    let text = |error: std::io::Error| error.to_string();
    let mut builder = tar::Builder::new(Vec::new());
    if let Some((mirror, commit)) = &job.testbed {
        let mirror = Mirror::open(mirror).map_err(|error| error.to_string())?;
        append_dir(&mut builder, "testbed", job.user).map_err(text)?;
        append_tree(&mut builder, &mirror, commit, "testbed", job.user).map_err(|error| error.to_string())?;
    }
    append_dir(&mut builder, "swe-harvest", job.user).map_err(text)?;
    append_dir(&mut builder, "swe-harvest/out", job.user).map_err(text)?;
    let mut dirs = BTreeSet::new();
    for (path, bytes, mode) in &job.files {
        // Parent folders first, so that they belong to the job's user.
        let mut parent = Path::new(path).parent();
        let mut missing = Vec::new();
        while let Some(dir) = parent.filter(|dir| !dir.as_os_str().is_empty()) {
            missing.push(dir.to_string_lossy().into_owned());
            parent = dir.parent();
        }
        for dir in missing.into_iter().rev() {
            if dirs.insert(dir.clone()) {
                append_dir(&mut builder, &format!("swe-harvest/{dir}"), job.user).map_err(text)?;
            }
        }
        append_bytes(&mut builder, &format!("swe-harvest/{path}"), bytes, *mode, job.user).map_err(text)?;
    }
    append_bytes(&mut builder, "swe-harvest/run.sh", job.script.as_bytes(), 0o755, job.user).map_err(text)?;
    builder.into_inner().map_err(text)
}

/// A build context: the `Dockerfile`, extra files at the root (e.g. `ca.crt`,
/// `install.sh`, owned by root), and the repository at `commit` owned by
/// `testbed_owner`: under `testbed/`, or as `testbed.tar` holding it under `testbed/`.
pub fn build_context(
    dockerfile: &str,
    extra_files: &[(&str, &[u8], u32)],
    mirror: &Path,
    commit: &str,
    testbed_owner: Owner,
    testbed: TestbedCopy,
) -> Result<Vec<u8>, String> {
    let text = |error: std::io::Error| error.to_string();
    let mirror = Mirror::open(mirror).map_err(|error| error.to_string())?;
    let repository = |builder: &mut tar::Builder<Vec<u8>>| -> Result<(), String> {
        append_dir(builder, "testbed", testbed_owner).map_err(text)?;
        append_tree(builder, &mirror, commit, "testbed", testbed_owner).map_err(|error| error.to_string())
    };
    let mut builder = tar::Builder::new(Vec::new());
    append_bytes(&mut builder, "Dockerfile", dockerfile.as_bytes(), 0o644, Owner::ROOT).map_err(text)?;
    for (name, bytes, mode) in extra_files {
        append_bytes(&mut builder, name, bytes, *mode, Owner::ROOT).map_err(text)?;
    }
    match testbed {
        TestbedCopy::Folder => repository(&mut builder)?,
        TestbedCopy::Tarball => {
            let mut inner = tar::Builder::new(Vec::new());
            repository(&mut inner)?;
            let inner = inner.into_inner().map_err(text)?;
            append_bytes(&mut builder, TESTBED_TARBALL, &inner, 0o644, testbed_owner).map_err(text)?;
        }
    }
    builder.into_inner().map_err(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names and owners of an archive's entries.
    fn entries(bytes: &[u8]) -> Vec<(String, u64)> {
        let mut archive = tar::Archive::new(bytes);
        archive
            .entries()
            .unwrap()
            .map(|entry| {
                let entry = entry.unwrap();
                (entry.path().unwrap().display().to_string(), entry.header().uid().unwrap())
            })
            .collect()
    }

    /// A repository of one commit (2021-05-04) holding `path`; its folder and the commit.
    fn one_commit(path: &str, content: &str) -> (tempfile::TempDir, String) {
        let dir = tempfile::tempdir().unwrap();
        let repository = git2::Repository::init(dir.path()).unwrap();
        if let Some(parent) = Path::new(path).parent() {
            fs_err::create_dir_all(dir.path().join(parent)).unwrap();
        }
        fs_err::write(dir.path().join(path), content).unwrap();
        let mut index = repository.index().unwrap();
        index.add_path(Path::new(path)).unwrap();
        let tree = repository.find_tree(index.write_tree().unwrap()).unwrap();
        let when = git2::Signature::new("t", "t@example.com", &git2::Time::new(1_620_097_321, 0)).unwrap();
        let commit = repository.commit(Some("HEAD"), &when, &when, "one", &tree, &[]).unwrap().to_string();
        (dir, commit)
    }

    #[test]
    fn a_context_carries_the_repository_as_a_folder_or_as_one_tarball_of_that_folder() {
        let (dir, commit) = one_commit("setup.py", "setup()\n");
        let owner = Owner::UNPRIVILEGED;
        let context = |testbed| build_context("FROM x\n", &[], dir.path(), &commit, owner, testbed).unwrap();
        let uid = owner.uid;
        let folder = vec![("testbed".to_string(), uid), ("testbed/setup.py".to_string(), uid)];
        let as_folder = context(TestbedCopy::Folder);
        assert_eq!(entries(&as_folder), [vec![("Dockerfile".to_string(), 0)], folder.clone()].concat());
        let as_tarball = context(TestbedCopy::Tarball);
        assert_eq!(entries(&as_tarball), [("Dockerfile".to_string(), 0), (TESTBED_TARBALL.to_string(), uid)]);
        let mut outer = tar::Archive::new(as_tarball.as_slice());
        let mut inner = Vec::new();
        for entry in outer.entries().unwrap() {
            let mut entry = entry.unwrap();
            if entry.path().unwrap().to_str() == Some(TESTBED_TARBALL) {
                std::io::Read::read_to_end(&mut entry, &mut inner).unwrap();
            }
        }
        assert_eq!(entries(&inner), folder, "the tarball holds what the folder would");
    }

    #[test]
    fn the_repository_carries_its_commit_time_not_the_epoch() {
        // 2021-05-04: flit zips sources with their times, and ZIP has none before 1980.
        let (dir, commit) = one_commit("pkg/__init__.py", "x = 1\n");
        let mirror = Mirror::open(dir.path()).unwrap();
        let mut builder = tar::Builder::new(Vec::new());
        append_tree(&mut builder, &mirror, &commit, "testbed", Owner::UNPRIVILEGED).unwrap();
        let bytes = builder.into_inner().unwrap();
        let mut archive = tar::Archive::new(bytes.as_slice());
        let mut seen = Vec::new();
        for entry in archive.entries().unwrap() {
            let entry = entry.unwrap();
            seen.push((entry.path().unwrap().display().to_string(), entry.header().mtime().unwrap()));
        }
        assert_eq!(
            seen,
            vec![("testbed/pkg".to_string(), 1_620_097_321), ("testbed/pkg/__init__.py".to_string(), 1_620_097_321)]
        );
    }
}
