//! The extract benchmark (ignored by default; run by `scripts/bench-extract.sh`, in
//! release mode): PRs per second through `swe-harvest extract` and its peak memory,
//! on a real mirror when `$SWE_HARVEST_MIRRORS` holds one, else on a large synthetic
//! repository. Prints figures; asserts nothing about speed.
//!
//! The PR list of a real mirror is synthesized from its `refs/pull/*/head`: the base
//! is where the PR's first-parent line meets the default branch's first-parent line
//! (the fork point), and each PR's body says `Fixes #<10000000 + N>` of an issue put in
//! the store, so that every PR goes the whole way (linking, diff, version) instead of
//! being dropped early for lack of an issue.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use chrono::{TimeZone, Utc};
use git2::{Oid, Repository};

use swe_harvest::model::{RawComment, RawIssue, RawPullRequest, RepoSlug};
use swe_harvest::store::{self, Store};

use crate::conformance::find_mirror;
use crate::support::synthetic_repo::{Change, SyntheticRepo, python_module};
use crate::support::{SweHarvest, stderr, stdout};

const ISSUE_OFFSET: u64 = 10_000_000;

/// (number, base, head) for every PR head of a mirror.
fn synthesize_pull_requests(repository: &Repository) -> Vec<(u64, Oid, Oid)> {
    let main = repository.head().unwrap().peel_to_commit().unwrap();
    let mut main_line = HashSet::new();
    let mut cursor = Some(main);
    while let Some(commit) = cursor {
        main_line.insert(commit.id());
        cursor = commit.parents().next();
    }
    let mut pulls = Vec::new();
    for reference in repository.references_glob("refs/pull/*/head").unwrap().flatten() {
        let Some(number) = reference
            .name()
            .ok()
            .and_then(|name| name.strip_prefix("refs/pull/")?.strip_suffix("/head")?.parse::<u64>().ok())
        else {
            continue;
        };
        let Ok(head) = reference.peel_to_commit() else { continue };
        let mut cursor = Some(head.clone());
        let mut base = None;
        for _ in 0..500 {
            let Some(commit) = cursor.take() else { break };
            if main_line.contains(&commit.id()) && commit.id() != head.id() {
                base = Some(commit.id());
                break;
            }
            cursor = commit.parents().next();
        }
        if let Some(base) = base {
            pulls.push((number, base, head.id()));
        }
    }
    pulls.sort();
    pulls
}

fn fill_store(data_dir: &Path, repo: &RepoSlug, repository: &Repository, pulls: &[(u64, Oid, Oid)]) {
    let mut store = Store::open_in(data_dir).unwrap();
    store
        .transaction(|transaction| -> Result<(), store::StoreError> {
            for (number, base, head) in pulls {
                let when = repository.find_commit(*head).unwrap().author().when().seconds();
                let created = Utc.timestamp_opt(when, 0).unwrap();
                let issue_number = ISSUE_OFFSET + number;
                store::raw::upsert_pull_request(
                    transaction,
                    repo,
                    &RawPullRequest {
                        number: *number,
                        title: format!("PR {number}"),
                        body: Some(format!("Some text.\n\nFixes #{issue_number}\n")),
                        state: "closed".into(),
                        created_at: created,
                        updated_at: created,
                        merged_at: Some(created),
                        closed_at: Some(created),
                        base_ref: "main".into(),
                        base_sha: base.to_string(),
                        head_ref: "branch".into(),
                        head_sha: head.to_string(),
                        merge_commit_sha: None,
                        author: None,
                        labels: vec![],
                    },
                )?;
                store::raw::upsert_issue(
                    transaction,
                    repo,
                    &RawIssue {
                        number: issue_number,
                        title: format!("Issue {issue_number}"),
                        body: Some("Something is wrong.".into()),
                        state: "closed".into(),
                        created_at: created,
                        updated_at: created,
                        closed_at: None,
                        author: None,
                        labels: vec![],
                    },
                )?;
                for index in 0..2 {
                    store::raw::upsert_comment(
                        transaction,
                        repo,
                        &RawComment {
                            id: issue_number * 10 + index,
                            issue_number,
                            body: Some(format!("comment {index}")),
                            created_at: created - chrono::Duration::days(1),
                            updated_at: created,
                            author: None,
                        },
                    )?;
                }
            }
            Ok(())
        })
        .unwrap();
}

/// A synthetic repository with `count` PRs, each changing a module and its test.
fn synthetic(count: u64) -> (SyntheticRepo, Vec<(u64, Oid, Oid)>) {
    let repo = SyntheticRepo::new();
    let mut changes = vec![Change::write("pkg/__init__.py", "__version__ = \"1.0.0\"\n")];
    for module in 0..50 {
        changes
            .push(Change::write(&format!("pkg/module_{module}.py"), python_module(&format!("m{module}"), 10, 20, 0)));
        changes.push(Change::write(
            &format!("tests/test_module_{module}.py"),
            python_module(&format!("t{module}"), 5, 10, 0),
        ));
    }
    let mut main = repo.commit(&[], "2020-01-01T00:00:00Z", "init", &changes);
    repo.tag("v1.0.0", main);
    let mut pulls = Vec::new();
    for number in 1..=count {
        let module = number % 50;
        let when = format!("2021-01-01T00:00:{:02}Z", number % 60);
        let head = repo.commit(
            &[main],
            &when,
            "change",
            &[
                Change::write(
                    &format!("pkg/module_{module}.py"),
                    python_module(&format!("m{module}"), 10, 20, number as usize),
                ),
                Change::write(
                    &format!("tests/test_module_{module}.py"),
                    python_module(&format!("t{module}"), 5, 10, number as usize),
                ),
            ],
        );
        repo.pull_ref(number, head);
        pulls.push((number, main, head));
        if number % 10 == 0 {
            main = repo.commit(
                &[main],
                &when,
                "main moves",
                &[Change::write("pkg/counter.py", format!("n = {number}\n"))],
            );
        }
    }
    repo.branch("main", main);
    (repo, pulls)
}

/// Runs `extract` under `/usr/bin/time -v` (when present) and prints the figures.
fn measure(harvest: &SweHarvest, repo: &RepoSlug, label: &str, pulls: usize, compat: &str) {
    let time_binary = Path::new("/usr/bin/time");
    let mut command = if time_binary.exists() {
        let mut command = Command::new(time_binary);
        command.arg("-v").arg(env!("CARGO_BIN_EXE_swe-harvest"));
        command
    } else {
        Command::new(env!("CARGO_BIN_EXE_swe-harvest"))
    };
    command
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .current_dir(harvest.work_dir.path())
        .args([
            "--data-dir",
            harvest.data_dir.to_str().unwrap(),
            "extract",
            "--repo",
            &repo.to_string(),
            "--compat",
            compat,
        ]);
    let started = Instant::now();
    let output = command.output().unwrap();
    let wall = started.elapsed().as_secs_f64();
    // Exit 1 when some PRs failed (a mirror missing objects); the figures still count.
    assert!(matches!(output.status.code(), Some(0 | 1)), "{}", stderr(&output));
    let peak_kib = stderr(&output)
        .lines()
        .find_map(|line| {
            line.trim().strip_prefix("Maximum resident set size (kbytes): ").map(|value| value.trim().to_string())
        })
        .unwrap_or_else(|| "n/a".into());
    let field = |name: &str| {
        stderr(&output)
            .lines()
            .find_map(|line| line.trim().strip_prefix(name).map(|value| value.trim().to_string()))
            .unwrap_or_else(|| "n/a".into())
    };
    println!(
        "BENCH {label}: {pulls} PRs, whole process {wall:.2}s = {:.0} PRs/s, peak RSS {peak_kib} KiB, CPU {} (user {}s, system {}s)",
        pulls as f64 / wall,
        field("Percent of CPU this job got:"),
        field("User time (seconds):"),
        field("System time (seconds):"),
    );
    println!("BENCH {label}: extract says: {}", stdout(&output).trim());
    if let Some(line) = stderr(&output).lines().find(|line| line.contains("extracting")) {
        println!("BENCH {label}: {}", line.trim());
    }
}

#[test]
#[ignore = "a benchmark: run scripts/bench-extract.sh"]
fn bench_extract() {
    let mirrors = std::env::var_os(swe_harvest::env_vars::SWE_HARVEST_MIRRORS).map(PathBuf::from);
    let slug = std::env::var("SWE_HARVEST_BENCH_REPO").unwrap_or_else(|_| "sqlfluff/sqlfluff".into());
    let repo: RepoSlug = slug.parse().unwrap();
    let real = mirrors.as_deref().and_then(|root| find_mirror(root, repo.owner(), repo.name()));
    match real {
        Some(path) => {
            let harvest = SweHarvest::new();
            let repository = Repository::open_bare(&path).unwrap();
            let pulls = synthesize_pull_requests(&repository);
            fill_store(&harvest.data_dir, &repo, &repository, &pulls);
            let link = swe_harvest::git::mirror::mirror_path(&harvest.data_dir, &repo);
            fs_err::create_dir_all(link.parent().unwrap()).unwrap();
            std::os::unix::fs::symlink(&path, &link).unwrap();
            measure(&harvest, &repo, &format!("{repo} (real mirror, swebench mode)"), pulls.len(), "swebench");
            // Same store, other settings: every PR is redone in native mode.
            measure(&harvest, &repo, &format!("{repo} (real mirror, native mode)"), pulls.len(), "native");
        }
        None => eprintln!("no mirror of {repo} under $SWE_HARVEST_MIRRORS: benchmarking a synthetic repository only"),
    }
    let count: u64 =
        std::env::var("SWE_HARVEST_BENCH_SYNTHETIC_PRS").ok().and_then(|value| value.parse().ok()).unwrap_or(3000);
    let (origin, pulls) = synthetic(count);
    let repo: RepoSlug = "synthetic/bench".parse().unwrap();
    let harvest = SweHarvest::new();
    fill_store(&harvest.data_dir, &repo, origin.repository(), &pulls);
    let link = swe_harvest::git::mirror::mirror_path(&harvest.data_dir, &repo);
    fs_err::create_dir_all(link.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(origin.path(), &link).unwrap();
    measure(&harvest, &repo, "synthetic (native mode)", pulls.len(), "native");
}

/// Where extract's time goes on a real mirror, phase by phase (no store involved).
#[test]
#[ignore = "a benchmark: run scripts/bench-extract.sh"]
fn bench_extract_phases() {
    let Some(root) = std::env::var_os(swe_harvest::env_vars::SWE_HARVEST_MIRRORS).map(PathBuf::from) else { return };
    let slug = std::env::var("SWE_HARVEST_BENCH_REPO").unwrap_or_else(|_| "sqlfluff/sqlfluff".into());
    let repo: RepoSlug = slug.parse().unwrap();
    let Some(path) = find_mirror(&root, repo.owner(), repo.name()) else { return };
    let repository = Repository::open_bare(&path).unwrap();
    let pulls = synthesize_pull_requests(&repository);
    if std::env::var_os("SWE_HARVEST_BENCH_UNTUNED").is_none() {
        swe_harvest::git::tune_for_reading();
    }
    let mirror = swe_harvest::git::Mirror::open(&path).unwrap();
    let pattern = regex::Regex::new(swe_harvest::extract::version::DEFAULT_TAG_PATTERN).unwrap();
    let finder = swe_harvest::extract::version::VersionFinder::new(&mirror, &pattern, None, Default::default());
    let (mut merge_base_s, mut commits_s, mut diff_s, mut version_s) = (0.0, 0.0, 0.0, 0.0);
    let (mut files, mut slowest) = (0usize, (0.0f64, 0u64, 0usize));
    for (number, base, head) in pulls.iter().step_by(4) {
        let started = Instant::now();
        let merge_base = mirror.merge_base(*base, *head).unwrap();
        merge_base_s += started.elapsed().as_secs_f64();
        let started = Instant::now();
        let _ = mirror.commits_between(merge_base, *head, 1000).unwrap();
        commits_s += started.elapsed().as_secs_f64();
        let started = Instant::now();
        let changed = match mirror.three_dot_tree_diff(merge_base, *head, 100) {
            Ok(Ok(mut tree_diff)) => (0..tree_diff.len()).filter(|index| tree_diff.print(*index).is_ok()).count(),
            Ok(Err(count)) => count,
            Err(_) => 0,
        };
        let elapsed = started.elapsed().as_secs_f64();
        diff_s += elapsed;
        files += changed;
        if elapsed > slowest.0 {
            slowest = (elapsed, *number, changed);
        }
        let started = Instant::now();
        let _ = finder.version_at(&mirror, *base);
        version_s += started.elapsed().as_secs_f64();
    }
    let count = pulls.len().div_ceil(4);
    println!(
        "BENCH phases over {count} PRs of {repo}: merge-base {merge_base_s:.2}s, commits {commits_s:.2}s, diff {diff_s:.2}s ({files} files), version {version_s:.2}s; slowest diff {:.3}s (PR {}, {} files)",
        slowest.0, slowest.1, slowest.2
    );
}
