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

/// Every file under `dir` (the store, its journal, logs, mirrors) that contains `secret`.
fn files_holding(dir: &std::path::Path, secret: &str) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in fs_err::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else if fs_err::read(&path).unwrap().windows(secret.len()).any(|window| window == secret.as_bytes()) {
                found.push(path);
            }
        }
    }
    found
}

#[test]
fn credentials_in_the_clone_url_are_redacted_in_messages_logs_and_the_funnel() {
    let harvest = SweHarvest::new();
    let secret = "s3cr3t-in-the-url";
    let url = format!("https://someone:{secret}@127.0.0.1:9/{{owner}}/{{name}}.git");
    let output = harvest.run(&["-v", "mirror", "--repo", "octo/widgets", "--clone-url", &url]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let printed = format!("{}{}", stdout(&output), stderr(&output));
    assert!(!printed.contains(secret), "{printed}");
    assert!(printed.contains("https://****@127.0.0.1:9/octo/widgets.git"), "the URL is named, redacted: {printed}");

    let store = Store::open_in(&harvest.data_dir).unwrap();
    let detail: String = store
        .connection()
        .query_row("SELECT detail FROM stage_items WHERE stage = 'mirror'", [], |row| row.get(0))
        .unwrap();
    assert!(detail.contains("https://****@127.0.0.1:9/") && !detail.contains(secret), "{detail}");
    drop(store);
    assert_eq!(files_holding(&harvest.data_dir, secret), Vec::<std::path::PathBuf>::new());
}

#[test]
fn a_mirror_made_with_a_github_token_keeps_no_trace_of_it() {
    let (origin, _, head) = origin();
    let harvest = SweHarvest::new();
    let token = "ghp_mirror_token_never_stored";
    let output = harvest
        .command()
        .env("GITHUB_TOKEN", token)
        .args(["-v", "mirror", "--repo", "octo/widgets", "--clone-url", origin.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let printed = format!("{}{}", stdout(&output), stderr(&output));
    assert!(!printed.contains(token), "{printed}");
    let path = harvest.data_dir.join("mirrors/octo__widgets.git");
    assert_eq!(Mirror::open(&path).unwrap().pull_head(1), Some(head));
    let config = fs_err::read_to_string(path.join("config")).unwrap();
    assert!(!config.contains(token) && !config.contains("remote"), "no remote, no token: {config}");
    let fetch_head = fs_err::read_to_string(path.join("FETCH_HEAD")).unwrap_or_default();
    assert!(!fetch_head.contains(origin.path().to_str().unwrap()), "FETCH_HEAD names no URL: {fetch_head}");
    assert_eq!(files_holding(&harvest.data_dir, token), Vec::<std::path::PathBuf>::new());
}

#[test]
fn a_killed_fetchs_partial_pack_is_removed_and_the_next_fetch_goes_on() {
    let (origin, _base, head) = origin();
    let harvest = SweHarvest::new();
    let url = origin.path().to_str().unwrap();
    assert!(harvest.run(&["mirror", "--repo", "octo/widgets", "--clone-url", url]).status.success());
    // What libgit2 leaves in the pack folder when its process is killed mid-transfer.
    let partial = harvest.data_dir.join("mirrors/octo__widgets.git/objects/pack/pack_git2_0123456789abcdef");
    fs_err::write(&partial, vec![0u8; 4096]).unwrap();
    let output = harvest.run(&["mirror", "--repo", "octo/widgets", "--clone-url", url]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(!partial.exists(), "the partial pack is gone");
    let mirror = Mirror::open(&harvest.data_dir.join("mirrors/octo__widgets.git")).unwrap();
    assert_eq!(mirror.pull_head(1), Some(head));
}

#[test]
fn a_local_source_that_lacks_an_object_is_still_mirrored() {
    let (origin, base, head) = origin();
    // Take one blob out of the source, as some partial snapshots are.
    let source = git2::Repository::open(origin.path()).unwrap();
    let blob = source.find_commit(base).unwrap().tree().unwrap().get_name("a.py").unwrap().id().to_string();
    let objects = source.path().join("objects");
    fs_err::remove_file(objects.join(&blob[..2]).join(&blob[2..])).unwrap();
    drop(source);

    let harvest = SweHarvest::new();
    let output = harvest.run(&["mirror", "--repo", "octo/widgets", "--clone-url", origin.path().to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    let path = harvest.data_dir.join("mirrors/octo__widgets.git");
    let mirror = Mirror::open(&path).unwrap();
    assert_eq!(mirror.resolve_ref("refs/heads/main"), Some(base));
    assert_eq!(mirror.pull_head(1), Some(head));
    assert_eq!(mirror.resolve_ref("refs/pull/1/merge"), None, "only the mirror's refspecs");
    let config = fs_err::read_to_string(path.join("config")).unwrap();
    assert!(!config.contains("url ="), "no source URL in the mirror's config: {config}");
}
