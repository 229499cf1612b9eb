//! Splitting a PR's printed diff into `patch` (non-test files) and `test_patch` (test
//! files), with the counts the stage's rules need (files and lines changed, source
//! files changed). Pure: file diffs in, strings and counts out.

use super::test_paths::{TestPathRule, is_source_path};
use crate::git::FileDiff;

/// A PR's diff, split.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SplitDiff {
    /// Non-test files (in compatibility mode only the `.py` ones), in diff order.
    pub patch: String,
    /// Test files, in diff order.
    pub test_patch: String,
    /// Paths of the test files, in diff order.
    pub test_files: Vec<String>,
    /// Non-test files kept in `patch` that count as source (not documentation).
    pub source_files: usize,
    /// Every changed file of the PR, whatever its side.
    pub files_changed: usize,
    /// Added plus removed lines of the files in `patch` and `test_patch` (binary
    /// files count 0; files that neither keeps are not printed, so not counted).
    pub lines_changed: usize,
}

/// What a changed file is to a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileRole {
    /// Goes to `test_patch`.
    Test,
    /// Goes to `patch` and counts as a source change.
    Source,
    /// Goes to `patch` but is not source (documentation, changelog).
    Other,
    /// Goes nowhere (compatibility mode: non-test files that are not `.py`).
    Excluded,
}

/// A file is a test file when its path (new path; old path for deletions; either
/// path for renames) is a test path under `rule`.
pub fn classify(old_path: Option<&str>, new_path: Option<&str>, rule: &TestPathRule) -> FileRole {
    let path = new_path.or(old_path).unwrap_or_default();
    if old_path.into_iter().chain(new_path).any(|path| rule.is_test(path)) {
        FileRole::Test
    } else if !rule.keeps_in_patch(path) {
        FileRole::Excluded
    } else if is_source_path(path) {
        FileRole::Source
    } else {
        FileRole::Other
    }
}

impl SplitDiff {
    /// Adds a printed file in the role [`classify`] gave it.
    pub fn add(&mut self, file: &FileDiff, role: FileRole) {
        if role == FileRole::Excluded {
            return;
        }
        self.lines_changed += file.lines_changed();
        match role {
            FileRole::Test => {
                self.test_patch.push_str(&file.text);
                self.test_files.push(file.path().to_string());
            }
            FileRole::Source | FileRole::Other => {
                self.patch.push_str(&file.text);
                self.source_files += usize::from(role == FileRole::Source);
            }
            FileRole::Excluded => {}
        }
    }
}

/// Splits printed files into `patch` and `test_patch`.
pub fn split_files(files: &[FileDiff], rule: &TestPathRule) -> SplitDiff {
    let mut split = SplitDiff { files_changed: files.len(), ..SplitDiff::default() };
    for file in files {
        split.add(file, classify(file.old_path.as_deref(), file.new_path.as_deref(), rule));
    }
    split
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ecosystem::repo_config::{Compat, default_test_patterns};
    use crate::git::FileStatus;

    fn file(old: Option<&str>, new: Option<&str>, status: FileStatus, added: usize, removed: usize) -> FileDiff {
        let name = new.or(old).unwrap();
        FileDiff {
            old_path: old.map(String::from),
            new_path: new.map(String::from),
            status,
            binary: false,
            lines_added: added,
            lines_removed: removed,
            text: format!("diff --git a/{name} b/{name}\n"),
        }
    }

    #[test]
    fn files_go_to_patch_or_test_patch_in_diff_order() {
        let files = vec![
            file(Some("CHANGES.md"), Some("CHANGES.md"), FileStatus::Modified, 2, 0),
            file(Some("src/a.py"), Some("src/a.py"), FileStatus::Modified, 3, 1),
            file(None, Some("tests/test_a.py"), FileStatus::Added, 10, 0),
            file(Some("src/contest.py"), None, FileStatus::Deleted, 0, 4),
            file(Some("test/old.py"), Some("src/moved.py"), FileStatus::Renamed, 0, 0),
        ];
        let native = TestPathRule::new(Compat::Native, &default_test_patterns()).unwrap();
        let split = split_files(&files, &native);
        assert_eq!(
            split.patch,
            "diff --git a/CHANGES.md b/CHANGES.md\ndiff --git a/src/a.py b/src/a.py\ndiff --git a/src/contest.py b/src/contest.py\n"
        );
        assert_eq!(
            split.test_patch,
            "diff --git a/tests/test_a.py b/tests/test_a.py\ndiff --git a/src/moved.py b/src/moved.py\n"
        );
        assert_eq!(split.test_files, vec!["tests/test_a.py", "src/moved.py"]);
        assert_eq!(split.source_files, 2, "the changelog is not source");
        assert_eq!(split.files_changed, 5);
        assert_eq!(split.lines_changed, 20);

        let swebench = TestPathRule::new(Compat::Swebench, &[]).unwrap();
        let split = split_files(&files, &swebench);
        assert_eq!(split.patch, "diff --git a/src/a.py b/src/a.py\n", "only non-test .py files; contest.py is a test");
        assert_eq!(split.test_files, vec!["tests/test_a.py", "src/contest.py", "src/moved.py"]);
        assert_eq!(split.source_files, 1);
    }
}
