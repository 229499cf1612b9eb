//! The diff printer against the real `git diff` (with `*.py diff=python`, without
//! `index` lines) on a synthetic repository holding every kind of change.

use std::process::Command;

use swe_harvest::git::{FileStatus, Mirror};

use crate::support::synthetic_repo::{Change, SyntheticRepo, python_module};

/// `git diff OLD NEW` as SWE-bench's rows hold it, or `None` when no git binary runs.
fn git_cli_diff(repo: &SyntheticRepo, old: git2::Oid, new: git2::Oid) -> Option<String> {
    let home = tempfile::tempdir().unwrap();
    let attributes = home.path().join("attributes");
    fs_err::write(&attributes, "*.py diff=python\n").unwrap();
    let output = Command::new("git")
        .env("HOME", home.path())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .arg("-c")
        .arg(format!("core.attributesFile={}", attributes.display()))
        .arg("-C")
        .arg(repo.path())
        .args(["diff", "--no-color", "--no-ext-diff"])
        .arg(old.to_string())
        .arg(new.to_string())
        .output()
        .ok()?;
    assert!(output.status.success(), "git diff failed: {}", String::from_utf8_lossy(&output.stderr));
    let text = String::from_utf8(output.stdout).expect("git's output is UTF-8 here");
    Some(text.split_inclusive('\n').filter(|line| !line.starts_with("index ")).collect())
}

fn print_all(mirror: &Mirror, old: git2::Oid, new: git2::Oid) -> String {
    mirror.three_dot_diff(old, new).unwrap().iter().map(|file| file.text.as_str()).collect()
}

#[test]
fn diffs_equal_git_cli_output_for_every_kind_of_change() {
    let repo = SyntheticRepo::new();
    let long_text: String = (0..60).map(|line| format!("line {line}\n")).collect();
    let base = repo.commit(
        &[],
        "2024-01-01T00:00:00Z",
        "init",
        &[
            Change::write("pkg/core.py", python_module("core", 6, 12, 0)),
            Change::write("pkg/util.py", python_module("util", 3, 5, 0)),
            Change::write("pkg/moved_away.py", python_module("moved", 4, 8, 0)),
            Change::write("pkg/renamed_and_edited.py", python_module("edited", 4, 8, 0)),
            Change::write("pkg/old.py", "x = 1\n"),
            Change::write("pkg/no_newline.py", "a = 1\nb = 2"),
            Change::write("data/blob.bin", [0u8, 1, 2, 3, 255, 0, 7]),
            Change::write("scripts/run.sh", "#!/bin/sh\necho hi\n"),
            Change::write("docs/notes with space.txt", &long_text),
            Change::write("docs/café.txt", "bonjour\n"),
            Change::write("queries/q.sql", "SELECT a\nFROM t\nWHERE x = 1\n\n\n\n\n\n\nSELECT b\nFROM u\n"),
            Change::write("tests/test_core.py", python_module("tests", 2, 4, 0)),
        ],
    );
    let head = repo.commit(
        &[base],
        "2024-01-02T00:00:00Z",
        "change everything",
        &[
            Change::write("pkg/core.py", python_module("core", 6, 12, 4)),
            Change::write(
                "pkg/util.py",
                python_module("util", 3, 5, 2).replace("import os\n", "import os\nimport sys\n"),
            ),
            Change::rename("pkg/moved_away.py", "pkg/moved_here.py"),
            Change::rename("pkg/renamed_and_edited.py", "pkg/edited_now.py"),
            Change::write("pkg/edited_now.py", python_module("edited", 4, 8, 2)),
            Change::delete("pkg/old.py"),
            Change::write("pkg/no_newline.py", "a = 1\nb = 3"),
            Change::write("pkg/new_empty.py", ""),
            Change::write("data/blob.bin", [0u8, 1, 2, 3, 254, 0, 7, 8]),
            Change::write("data/new.bin", [0u8; 16]),
            Change::set_executable("scripts/run.sh", true),
            Change::symlink("scripts/link", "run.sh"),
            Change::write("docs/notes with space.txt", long_text.replace("line 30\n", "line thirty\n")),
            Change::write("docs/café.txt", "bonjour!\n"),
            Change::write("queries/q.sql", "SELECT a\nFROM t\nWHERE x = 1\n\n\n\n\n\n\nSELECT b\nFROM v\n"),
            Change::write(
                "tests/test_core.py",
                python_module("tests", 2, 4, 1) + "\n\ndef test_new():\n    assert True\n",
            ),
        ],
    );
    let Some(expected) = git_cli_diff(&repo, base, head) else {
        eprintln!("SKIPPED: no `git` binary to compare with");
        return;
    };
    let mirror = Mirror::open(repo.path()).unwrap();
    let ours = print_all(&mirror, base, head);
    assert_eq!(ours, expected);
    // The comparison covers what it claims to cover.
    for needle in [
        "rename from pkg/moved_away.py",
        "similarity index 100%",
        "deleted file mode 100644",
        "new file mode 120000",
        "old mode 100644\nnew mode 100755",
        "Binary files a/data/blob.bin and b/data/blob.bin differ",
        "Binary files /dev/null and b/data/new.bin differ",
        "\\ No newline at end of file",
        "@@ def method_4(self, value):",
        "--- a/docs/notes with space.txt\t",
        "\"a/docs/caf\\303\\251.txt\"",
        "@@ WHERE x = 1",
        "diff --git a/pkg/new_empty.py b/pkg/new_empty.py\nnew file mode 100644\ndiff",
    ] {
        assert!(ours.contains(needle), "the fixture should exercise {needle:?}:\n{ours}");
    }
}

#[test]
fn three_dot_diff_leaves_out_what_the_base_branch_did_since_the_fork() {
    let repo = SyntheticRepo::new();
    let fork = repo.commit(
        &[],
        "2024-01-01T00:00:00Z",
        "init",
        &[Change::write("a.py", "a = 1\n"), Change::write("b.py", "b = 1\n")],
    );
    let main = repo.commit(&[fork], "2024-01-03T00:00:00Z", "main moves on", &[Change::write("b.py", "b = 2\n")]);
    let head = repo.commit(&[fork], "2024-01-02T00:00:00Z", "the PR", &[Change::write("a.py", "a = 2\n")]);
    let mirror = Mirror::open(repo.path()).unwrap();
    let merge_base = mirror.merge_base(main, head).unwrap();
    assert_eq!(merge_base, fork);
    let files = mirror.three_dot_diff(merge_base, head).unwrap();
    assert_eq!(files.len(), 1);
    assert_eq!(files[0].path(), "a.py");
    assert_eq!(files[0].status, FileStatus::Modified);
    assert_eq!((files[0].lines_added, files[0].lines_removed), (1, 1));
}

#[test]
fn non_utf8_content_is_printed_as_a_binary_change() {
    let repo = SyntheticRepo::new();
    let base = repo.commit(&[], "2024-01-01T00:00:00Z", "init", &[Change::write("tests/latin1.txt", b"caf\xe9\n")]);
    let head = repo.commit(
        &[base],
        "2024-01-02T00:00:00Z",
        "edit",
        &[Change::write("tests/latin1.txt", b"caf\xe9 au lait\n")],
    );
    let mirror = Mirror::open(repo.path()).unwrap();
    let files = mirror.three_dot_diff(base, head).unwrap();
    assert_eq!(files.len(), 1);
    assert!(files[0].binary);
    assert_eq!(
        files[0].text,
        "diff --git a/tests/latin1.txt b/tests/latin1.txt\nBinary files a/tests/latin1.txt and b/tests/latin1.txt differ\n"
    );
}
