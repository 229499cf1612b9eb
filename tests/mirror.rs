//! `mirror`: bare mirrors cloned from a local path with branches, tags and PR heads,
//! fetched incrementally, and a clear error for an unreachable URL.

use swe_harvest::git::Mirror;
use swe_harvest::model::RepoSlug;
use swe_harvest::store::Store;

use crate::support::synthetic_repo::{Change, SyntheticRepo};
use crate::support::{SweHarvest, stderr, stdout};

fn origin() -> (SyntheticRepo, git2::Oid, git2::Oid) {
    let repo = SyntheticRepo::new();
    let base = repo.commit(&[], "2024-01-01T00:00:00Z", "init", &[Change::write("a.py", "a = 1\n")]);
    let head = repo.commit(&[base], "2024-01-02T00:00:00Z", "PR", &[Change::write("a.py", "a = 2\n")]);
    repo.branch("main", base);
    repo.branch("release-1.x", base);
    repo.tag("v1.0.0", base);
    repo.annotated_tag("v1.1.0", base);
    repo.pull_ref(1, head);
    repo.set_ref("refs/pull/1/merge", head);
    (repo, base, head)
}

#[test]
fn mirror_clones_a_local_path_with_branches_tags_and_pull_heads() {
    let (origin, base, head) = origin();
    let harvest = SweHarvest::new();
    let output = harvest.run(&["mirror", "--repo", "octo/widgets", "--clone-url", origin.path().to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stdout(&output).contains("octo/widgets: cloned into"), "{}", stdout(&output));
    assert!(stdout(&output).contains("1 PR heads"), "{}", stdout(&output));

    let path = harvest.data_dir.join("mirrors/octo__widgets.git");
    let repository = git2::Repository::open_bare(&path).expect("a bare repository");
    assert!(repository.is_bare());
    let mirror = Mirror::open(&path).unwrap();
    assert_eq!(mirror.pull_head(1), Some(head));
    assert_eq!(mirror.resolve_ref("refs/heads/main"), Some(base));
    assert_eq!(mirror.resolve_ref("refs/heads/release-1.x"), Some(base));
    assert_eq!(mirror.resolve_ref("refs/tags/v1.0.0"), Some(base));
    assert_eq!(mirror.resolve_ref("refs/tags/v1.1.0"), Some(base), "annotated tags are fetched and peel to the commit");
    assert!(mirror.resolve_ref("refs/pull/1/merge").is_none(), "only PR heads are mirrored");
    assert_eq!(mirror.head_commit(), Some(base), "HEAD names the default branch");

    let store = Store::open_in(&harvest.data_dir).unwrap();
    let funnel = store.funnel(&[]).unwrap();
    assert_eq!(funnel.total[0].passed, 1);
}

#[test]
fn second_mirror_run_fetches_only_what_is_new() {
    let (origin, base, head) = origin();
    let harvest = SweHarvest::new();
    let url = origin.path().to_str().unwrap().to_string();
    assert!(harvest.run(&["mirror", "--repo", "octo/widgets", "--clone-url", &url]).status.success());
    // Nothing new: nothing received.
    let output = harvest.run(&["mirror", "--repo", "octo/widgets", "--clone-url", &url]);
    assert!(
        stdout(&output).contains("fetched into") && stdout(&output).contains(", 0 objects received"),
        "{}",
        stdout(&output)
    );

    let newer = origin.commit(&[head], "2024-01-03T00:00:00Z", "more", &[Change::write("b.py", "b = 1\n")]);
    origin.pull_ref(2, newer);
    origin.branch("main", newer);
    let output = harvest.run(&["mirror", "--repo", "octo/widgets", "--clone-url", &url]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(text.contains("fetched into") && text.contains("2 PR heads"), "{text}");
    // The new commit, its tree and blob, and (libgit2's local transport is not
    // minimal) some of the old ones: never all 10 objects of the origin.
    let received: usize = text.split(" objects received").next().unwrap().rsplit(' ').next().unwrap().parse().unwrap();
    assert!((3..10).contains(&received), "an incremental fetch receives the new objects, got {received}: {text}");

    let mirror = Mirror::open(&harvest.data_dir.join("mirrors/octo__widgets.git")).unwrap();
    assert_eq!(mirror.pull_head(2), Some(newer));
    assert_eq!(mirror.resolve_ref("refs/heads/main"), Some(newer));
    assert_eq!(mirror.pull_head(1), Some(head));
    let _ = base;
}

#[test]
fn clone_url_placeholders_name_each_repository() {
    let (origin, _, head) = origin();
    let folder = tempfile::tempdir().unwrap();
    let target = folder.path().join("octo__widgets.git");
    fs_err::rename(origin.path(), &target).unwrap();
    let harvest = SweHarvest::new();
    let template = format!("{}/{{owner}}__{{name}}.git", folder.path().display());
    let output = harvest.run(&["mirror", "--repo", "octo/widgets", "--clone-url", &template]);
    assert!(output.status.success(), "{}", stderr(&output));
    let mirror = Mirror::open(&harvest.data_dir.join("mirrors/octo__widgets.git")).unwrap();
    assert_eq!(mirror.pull_head(1), Some(head));
}

#[test]
fn unreachable_clone_url_is_a_clear_error_and_other_repositories_go_on() {
    let (origin, _, _) = origin();
    let harvest = SweHarvest::new();
    let template = format!("{}/{{owner}}", origin.path().parent().unwrap().display());
    fs_err::rename(origin.path(), origin.path().parent().unwrap().join("good")).unwrap();
    let output = harvest.run(&["mirror", "--repo", "missing/x", "good/x", "--clone-url", &template]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let error = stderr(&output);
    assert!(error.contains("failed to mirror `missing/x`"), "{error}");
    assert!(error.contains("/missing"), "names the URL: {error}");
    assert!(error.contains("hint:") && error.contains("--clone-url"), "{error}");
    assert!(stdout(&output).contains("good/x: cloned into"), "{}", stdout(&output));

    let store = Store::open_in(&harvest.data_dir).unwrap();
    let repo: RepoSlug = "missing/x".parse().unwrap();
    let funnel = store.funnel(&[repo]).unwrap();
    assert_eq!(funnel.total[0].reasons.get("fetch_failed"), Some(&1));
}
