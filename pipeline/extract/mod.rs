//! The `extract` stage: merged pull requests (from the store, written by crawl) and
//! the repository's mirror (written by `mirror`) become task candidates: the linked
//! issues, `patch` / `test_patch` (the three-dot diff split by test path),
//! `problem_statement`, `hints_text`, `version` and `environment_setup_commit`.
//!
//! Every merged PR either becomes a candidate or is dropped with a reason code:
//! `pull_head_missing` (no `refs/pull/N/head` and the stored head sha is not in the
//! mirror), `base_commit_missing`, `no_merge_base`, `no_linked_issue` (no closing
//! reference, or only references to pull requests), `linked_issue_missing` (the
//! referenced issues are not in the store), `too_many_files`, `too_many_lines`,
//! `no_test_change`, `no_source_change`; `extract_failed` when git failed to read the
//! mirror (that one also makes the run exit 1).
//!
//! Resumability: one store transaction per PR writes the candidate (or deletes a stale
//! one), the funnel row and the fingerprint of the PR's inputs (the stored PR, its
//! head commit and the extract settings).
//!
//! Invalidation: when a re-extract changes a candidate (any field but
//! environment_setup_commit) or drops it, the same transaction removes what validate
//! derived from it (validation runs, the task, its coverage, validate's funnel row;
//! [`store::candidates::forget_validation`]), so `validate` validates it again and
//! `release` no longer publishes it. A candidate whose content did not change keeps
//! all of it. A changed environment_setup_commit (recomputed per version at the end of
//! the run) does not remove a task: the task keeps the candidate it was validated with,
//! its own environment_setup_commit included, so its row stays true to its labels;
//! runs are keyed by their content, so a new validation runs in the new environment. A rerun skips PRs whose fingerprint is
//! unchanged, so finished work is not redone; an edited PR, a moved head or other
//! settings redo it. Issues edited after extraction are not noticed (decision: issue
//! texts are taken as crawled when the PR was first extracted). At the end of each
//! run, environment_setup_commit is recomputed for every (repository, version).
//!
//! Speed: git work (merge-base, commits, diff, version) runs on worker threads, each
//! with its own handle on the mirror; the calling thread reads issues and writes the
//! store. This module does not fetch anything: no network.

pub mod linking;
mod settings;
pub mod split;
pub mod test_paths;
pub mod version;

use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Instant;

use chrono::{DateTime, Utc};
use git2::Oid;
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::ecosystem::repo_config::Compat;
use crate::git::{ChangedFile, GitError, Mirror};
use crate::model::drop_reason::ExtractDropReason;
use crate::model::{Candidate, RawPullRequest, Rejection, RepoSlug, Stage};
use crate::progress::Reporter;
use crate::store::{self, Store, StoreError};

pub use settings::ExtractConfig;
pub use split::{FileRole, SplitDiff, split_files};
pub use test_paths::TestPathRule;

/// At most this many commits of a PR are read (GitHub lists at most 250).
const MAX_COMMITS: usize = 1_000;

#[derive(Debug, thiserror::Error)]
pub enum ExtractError {
    #[error("the mirror of `{repo}` cannot be used")]
    Mirror {
        repo: RepoSlug,
        // Boxed: git errors are large, and this one is rare.
        #[source]
        source: Box<GitError>,
    },
    #[error(transparent)]
    Pattern(#[from] test_paths::PatternError),
    #[error("invalid version tag pattern `{pattern}` for `{repo}`: {message}")]
    TagPattern { repo: RepoSlug, pattern: String, message: String },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The resolved settings of one repository's extraction.
#[derive(Debug, Clone, PartialEq)]
pub struct ExtractSettings {
    pub compat: Compat,
    /// Native mode's test-path globs.
    pub test_patterns: Vec<String>,
    pub max_files_changed: usize,
    pub max_lines_changed: usize,
    /// Regex with two groups (major, minor); `None` for the default.
    pub version_tag_pattern: Option<String>,
    /// A file holding the version string, read when no tag gives one.
    pub version_file: Option<String>,
    /// Tags first (default) or the version file first.
    pub version_source: crate::ecosystem::repo_config::VersionSource,
    /// Worker threads for git work; 0 = one per core.
    pub workers: usize,
    /// Linked issues also include GitHub's closing references (stored by a GraphQL crawl).
    pub use_api_closing_references: bool,
}

impl ExtractSettings {
    /// What the outputs depend on; part of each PR's fingerprint.
    fn fingerprint_key(&self) -> String {
        format!(
            "v1|{:?}|{:?}|{}|{}|{:?}|{:?}|{:?}{}",
            self.compat,
            self.test_patterns,
            self.max_files_changed,
            self.max_lines_changed,
            self.version_tag_pattern,
            self.version_file,
            self.version_source,
            // Only when set, so that fingerprints of earlier runs stay valid.
            if self.use_api_closing_references { "|api_closing_references" } else { "" }
        )
    }
}

/// What one run did for one repository.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ExtractSummary {
    pub repo: String,
    /// Merged PRs in the store.
    pub pull_requests: usize,
    /// Of those, skipped because their inputs did not change since the last run.
    pub unchanged: usize,
    /// Candidates written by this run.
    pub candidates: usize,
    /// PRs dropped by this run, by reason.
    pub dropped: BTreeMap<ExtractDropReason, usize>,
    /// PRs that failed (git errors); they make the run exit 1.
    pub failed: usize,
    /// Candidates changed or dropped by this run whose validation results (runs, task,
    /// coverage, validate's funnel row) were removed, so that `validate` redoes them.
    pub invalidated: usize,
    /// Candidates whose environment_setup_commit changed at the end of the run.
    pub environment_setup_commits_changed: usize,
    pub seconds: f64,
}

impl ExtractSummary {
    /// PRs processed (not skipped) per second.
    pub fn pull_requests_per_second(&self) -> f64 {
        (self.pull_requests - self.unchanged) as f64 / self.seconds.max(1e-9)
    }
}

/// A PR's outcome from the git side.
enum Outcome {
    Dropped { reason: ExtractDropReason, detail: String },
    Failed(String),
    Ready(Box<Prepared>),
}

struct Prepared {
    head: Oid,
    issues: Vec<u64>,
    first_commit_time: Option<DateTime<Utc>>,
    split: SplitDiff,
    version: String,
}

struct Job<'a> {
    pull_request: &'a RawPullRequest,
    fingerprint: String,
}

/// Extracts every merged PR of `repo` whose inputs changed since the last run.
pub fn run(
    store: &mut Store,
    repo: &RepoSlug,
    mirror_path: PathBuf,
    settings: &ExtractSettings,
    reporter: &dyn Reporter,
) -> Result<ExtractSummary, ExtractError> {
    let started = Instant::now();
    crate::git::tune_for_reading();
    let mirror = Mirror::open(&mirror_path)
        .map_err(|source| ExtractError::Mirror { repo: repo.clone(), source: Box::new(source) })?;
    let rule = TestPathRule::new(settings.compat, &settings.test_patterns)?;
    let tag_pattern_text = settings.version_tag_pattern.clone().unwrap_or_else(|| version::DEFAULT_TAG_PATTERN.into());
    let tag_pattern = regex::Regex::new(&tag_pattern_text).map_err(|error| ExtractError::TagPattern {
        repo: repo.clone(),
        pattern: tag_pattern_text.clone(),
        message: error.to_string(),
    })?;

    let connection = store.connection();
    let pull_requests: Vec<RawPullRequest> =
        store::raw::pull_requests(connection, repo)?.into_iter().filter(|pull| pull.merged_at.is_some()).collect();
    let pull_numbers = store::extract::pull_request_numbers(connection, repo)?;
    let issue_numbers = store::extract::issue_numbers(connection, repo)?;
    let api_closing_references = if settings.use_api_closing_references {
        store::raw::pull_request_references(connection, repo, store::raw::ReferenceSource::Closing)?
    } else {
        BTreeMap::new()
    };
    let settings_key = settings.fingerprint_key();

    let mut summary =
        ExtractSummary { repo: repo.to_string(), pull_requests: pull_requests.len(), ..Default::default() };
    let mut jobs = Vec::new();
    for pull_request in &pull_requests {
        let head = resolve_head(&mirror, pull_request);
        let api_references = api_closing_references.get(&pull_request.number).map(Vec::as_slice).unwrap_or(&[]);
        let fingerprint = fingerprint(pull_request, head, &settings_key, api_references);
        if store::extract::fingerprint(connection, repo, pull_request.number)?.as_deref() == Some(fingerprint.as_str())
        {
            summary.unchanged += 1;
            continue;
        }
        jobs.push(Job { pull_request, fingerprint });
    }
    let workers = match settings.workers {
        0 => std::thread::available_parallelism().map_or(1, usize::from),
        workers => workers,
    }
    .clamp(1, jobs.len().max(1));
    tracing::info!(repo = %repo, merged = pull_requests.len(), to_extract = jobs.len(), unchanged = summary.unchanged, workers, "extracting");
    reporter.start(&format!("extract {repo}"), Some(jobs.len() as u64));
    let context = WorkerContext {
        repo,
        rule: &rule,
        settings,
        pull_numbers: &pull_numbers,
        issue_numbers: &issue_numbers,
        api_closing_references: &api_closing_references,
        mirror_path: &mirror_path,
        tag_pattern: &tag_pattern,
    };

    let result: Result<(), ExtractError> = std::thread::scope(|scope| {
        let (sender, receiver) = mpsc::sync_channel::<(usize, Outcome)>(256);
        for worker in 0..workers {
            let sender = sender.clone();
            let jobs = &jobs;
            let context = &context;
            scope.spawn(move || {
                let mirror = match Mirror::open(context.mirror_path) {
                    Ok(mirror) => mirror,
                    Err(error) => {
                        for index in (worker..jobs.len()).step_by(workers) {
                            let _ = sender.send((index, Outcome::Failed(error.to_string())));
                        }
                        return;
                    }
                };
                let finder = version::VersionFinder::new(
                    &mirror,
                    context.tag_pattern,
                    context.settings.version_file.clone(),
                    context.settings.version_source,
                );
                for index in (worker..jobs.len()).step_by(workers) {
                    let outcome = context.prepare(&mirror, &finder, jobs[index].pull_request);
                    if sender.send((index, outcome)).is_err() {
                        return;
                    }
                }
            });
        }
        drop(sender);
        for (index, outcome) in receiver {
            let job = &jobs[index];
            write_outcome(store, repo, job, outcome, &mut summary)?;
            reporter.advance(1);
        }
        Ok(())
    });
    result?;

    summary.environment_setup_commits_changed =
        store.transaction(|transaction| store::extract::update_environment_setup_commits(transaction, repo))?;
    reporter.finish();
    summary.seconds = started.elapsed().as_secs_f64();
    Ok(summary)
}

/// The PR head: `refs/pull/N/head`, else the stored head sha when the mirror has it.
fn resolve_head(mirror: &Mirror, pull_request: &RawPullRequest) -> Option<Oid> {
    mirror.pull_head(pull_request.number).or_else(|| mirror.commit_id(&pull_request.head_sha))
}

fn fingerprint(pull_request: &RawPullRequest, head: Option<Oid>, settings_key: &str, api_references: &[u64]) -> String {
    let mut hasher = Sha256::new();
    hasher.update(serde_json::to_vec(pull_request).expect("pull requests serialize"));
    hasher.update(head.map(|head| head.to_string()).unwrap_or_default());
    hasher.update(settings_key);
    if !api_references.is_empty() {
        hasher.update(format!("|closing {api_references:?}"));
    }
    hex::encode(hasher.finalize())
}

struct WorkerContext<'a> {
    repo: &'a RepoSlug,
    rule: &'a TestPathRule,
    settings: &'a ExtractSettings,
    pull_numbers: &'a HashSet<u64>,
    issue_numbers: &'a HashSet<u64>,
    /// GitHub's closing references by PR; empty unless `use_api_closing_references`.
    api_closing_references: &'a BTreeMap<u64, Vec<u64>>,
    mirror_path: &'a std::path::Path,
    tag_pattern: &'a regex::Regex,
}

impl WorkerContext<'_> {
    fn prepare(&self, mirror: &Mirror, finder: &version::VersionFinder, pull_request: &RawPullRequest) -> Outcome {
        let dropped = |reason, detail: String| Outcome::Dropped { reason, detail };
        let Some(head) = resolve_head(mirror, pull_request) else {
            return dropped(
                ExtractDropReason::PullHeadMissing,
                format!(
                    "neither refs/pull/{}/head nor the head commit {} is in the mirror; run `mirror` again",
                    pull_request.number, pull_request.head_sha
                ),
            );
        };
        let Some(base) = mirror.commit_id(&pull_request.base_sha) else {
            return dropped(
                ExtractDropReason::BaseCommitMissing,
                format!("the base commit {} is not in the mirror", pull_request.base_sha),
            );
        };
        let Some(merge_base) = mirror.merge_base(base, head) else {
            return dropped(
                ExtractDropReason::NoMergeBase,
                format!("{base} and the PR head {head} have no common ancestor"),
            );
        };
        let commits = match mirror.commits_between(merge_base, head, MAX_COMMITS) {
            Ok(commits) => commits,
            Err(error) => return Outcome::Failed(crate::error_chain(&error)),
        };

        // Linking: closing keywords in title, body and commit messages, then
        // GitHub's own closing references when enabled.
        let mut texts: Vec<&str> = vec![&pull_request.title];
        texts.extend(pull_request.body.as_deref());
        texts.extend(commits.iter().map(|commit| commit.message.as_str()));
        let references = linking::with_api_references(
            linking::closing_references_in(texts, self.repo),
            self.api_closing_references.get(&pull_request.number).map(Vec::as_slice).unwrap_or(&[]),
        );
        let (pulls, issues): (Vec<u64>, Vec<u64>) =
            references.iter().partition(|number| self.pull_numbers.contains(number) || **number == pull_request.number);
        if issues.is_empty() {
            let detail = if pulls.is_empty() {
                let api = if self.settings.use_api_closing_references { ", and GitHub links none" } else { "" };
                format!(
                    "no closing keyword followed by an issue of this repository in the title, body or commit messages{api}"
                )
            } else {
                format!("the closing references {} are pull requests, not issues", list(&pulls))
            };
            return dropped(ExtractDropReason::NoLinkedIssue, detail);
        }
        let present: Vec<u64> = issues.iter().copied().filter(|number| self.issue_numbers.contains(number)).collect();
        if present.is_empty() {
            return dropped(
                ExtractDropReason::LinkedIssueMissing,
                format!("the linked issues {} are not in the store; crawl them first", list(&issues)),
            );
        }

        let too_many_files = |count: usize| {
            dropped(
                ExtractDropReason::TooManyFiles,
                format!(
                    "{count} files changed, more than extract.max_files_changed = {}",
                    self.settings.max_files_changed
                ),
            )
        };
        let mut tree_diff = match mirror.three_dot_tree_diff(merge_base, head, self.settings.max_files_changed) {
            Ok(Ok(tree_diff)) => tree_diff,
            Ok(Err(count)) => return too_many_files(count),
            Err(error) => return Outcome::Failed(crate::error_chain(&error)),
        };
        // Test and source changes are decided from the paths, before printing.
        let files: Vec<ChangedFile> = (0..tree_diff.len()).map(|index| tree_diff.file(index)).collect();
        let roles: Vec<FileRole> = files
            .iter()
            .map(|file| split::classify(file.old_path.as_deref(), file.new_path.as_deref(), self.rule))
            .collect();
        if !roles.contains(&FileRole::Test) {
            return dropped(
                ExtractDropReason::NoTestChange,
                format!("none of the {} changed files is a test file", files.len()),
            );
        }
        if !roles.contains(&FileRole::Source) {
            let tests: Vec<&str> = files
                .iter()
                .zip(&roles)
                .filter(|(_, role)| **role == FileRole::Test)
                .map(|(file, _)| file.path())
                .collect();
            return dropped(
                ExtractDropReason::NoSourceChange,
                format!("no changed non-test source file (test files: {})", tests.join(", ")),
            );
        }
        let mut split = SplitDiff { files_changed: files.len(), ..SplitDiff::default() };
        for (index, role) in roles.iter().enumerate() {
            if *role == FileRole::Excluded {
                continue;
            }
            let file = match tree_diff.print(index) {
                Ok(file) => file,
                Err(error) => return Outcome::Failed(crate::error_chain(&error)),
            };
            split.add(&file, *role);
            // Printing stops as soon as the PR is known to be too large.
            if split.lines_changed > self.settings.max_lines_changed {
                return dropped(
                    ExtractDropReason::TooManyLines,
                    format!(
                        "more than {} lines changed (extract.max_lines_changed), {} after {} of {} files",
                        self.settings.max_lines_changed,
                        split.lines_changed,
                        index + 1,
                        files.len()
                    ),
                );
            }
        }
        let (version, _source) = finder.version_at(mirror, base);
        Outcome::Ready(Box::new(Prepared {
            head,
            issues: present,
            first_commit_time: commits.first().map(|commit| commit.author_time),
            split,
            version,
        }))
    }
}

fn list(numbers: &[u64]) -> String {
    numbers.iter().map(|number| format!("#{number}")).collect::<Vec<_>>().join(", ")
}

/// Writes one PR's outcome in one transaction.
fn write_outcome(
    store: &mut Store,
    repo: &RepoSlug,
    job: &Job<'_>,
    outcome: Outcome,
    summary: &mut ExtractSummary,
) -> Result<(), ExtractError> {
    let pull_request = job.pull_request;
    let number = pull_request.number;
    let instance_id = Candidate::instance_id_for(repo, number);
    let result: Result<Candidate, (ExtractDropReason, String)> = match outcome {
        Outcome::Dropped { reason, detail } => Err((reason, detail)),
        Outcome::Failed(detail) => {
            tracing::error!(repo = %repo, pull_request = number, "extract failed: {detail}");
            Err((ExtractDropReason::ExtractFailed, detail))
        }
        Outcome::Ready(prepared) => Ok(build_candidate(store, repo, pull_request, *prepared)?),
    };
    let mut result = result;
    let invalidated = store.transaction(|transaction| -> Result<bool, StoreError> {
        let stored = store::candidates::candidate(transaction, &instance_id)?;
        let invalidated = match &mut result {
            Ok(candidate) => {
                // environment_setup_commit is set per version at the end of the run;
                // until then the candidate keeps the one it had.
                if let Some(stored) = &stored {
                    candidate.environment_setup_commit = stored.environment_setup_commit.clone();
                }
                store::candidates::upsert_candidate(transaction, candidate)?;
                store::record_passed(transaction, Stage::Extract, repo, &number.to_string())?;
                // A changed candidate loses what validate derived from the old one;
                // an unchanged one keeps it.
                let changed = stored.as_ref().is_some_and(|stored| stored != candidate);
                changed && store::candidates::forget_validation(transaction, repo, &instance_id)?
            }
            Err((reason, detail)) => {
                store::candidates::delete_candidate(transaction, &instance_id)?;
                let invalidated = store::candidates::forget_validation(transaction, repo, &instance_id)?;
                store::record_dropped(
                    transaction,
                    &Rejection::new(*reason, repo.clone(), number.to_string(), detail.clone()),
                )?;
                invalidated
            }
        };
        // A failed PR keeps no fingerprint, so the next run tries it again.
        if !result.as_ref().is_err_and(|(reason, _)| reason.is_failure()) {
            store::extract::save_fingerprint(transaction, repo, number, &job.fingerprint)?;
        }
        Ok(invalidated)
    })?;
    if invalidated {
        tracing::info!(repo = %repo, pull_request = number, %instance_id, "the candidate changed or was dropped: its validation results were removed");
        summary.invalidated += 1;
    }
    match result {
        Ok(_) => summary.candidates += 1,
        Err((reason, _)) if reason.is_failure() => summary.failed += 1,
        Err((reason, _)) => *summary.dropped.entry(reason).or_default() += 1,
    }
    Ok(())
}

fn build_candidate(
    store: &Store,
    repo: &RepoSlug,
    pull_request: &RawPullRequest,
    prepared: Prepared,
) -> Result<Candidate, StoreError> {
    let connection = store.connection();
    let mut problem_statement = String::new();
    let mut hints = Vec::new();
    for number in &prepared.issues {
        let Some(issue) = store::raw::issue(connection, repo, *number)? else { continue };
        problem_statement.push_str(&issue.title);
        problem_statement.push('\n');
        problem_statement.push_str(issue.body.as_deref().unwrap_or_default());
        problem_statement.push('\n');
        let comments = store::raw::comments(connection, repo, *number)?;
        let before: Vec<&str> = comments
            .iter()
            .filter(|comment| prepared.first_commit_time.is_some_and(|first| comment.created_at < first))
            .map(|comment| comment.body.as_deref().unwrap_or_default())
            .collect();
        hints.push(before.join("\n"));
    }
    Ok(Candidate {
        instance_id: Candidate::instance_id_for(repo, pull_request.number),
        repo: repo.clone(),
        pull_number: pull_request.number,
        issue_numbers: prepared.issues,
        base_commit: pull_request.base_sha.clone(),
        head_commit: prepared.head.to_string(),
        patch: prepared.split.patch,
        test_patch: prepared.split.test_patch,
        problem_statement,
        hints_text: hints.join("\n"),
        created_at: pull_request.created_at,
        merged_at: pull_request.merged_at,
        version: prepared.version,
        // Set for real at the end of the run, per (repository, version).
        environment_setup_commit: pull_request.base_sha.clone(),
        test_files: prepared.split.test_files,
    })
}
