//! The validate stage: per candidate, an environment image (built once per
//! environment and reused), then `runs` isolated containers that each install the
//! repository at base_commit, apply the test patch, run the touched tests (pre),
//! apply the gold patch and run them again (post). FAIL_TO_PASS, PASS_TO_PASS and
//! flaky tests follow from all runs ([`labels`]); a task without FAIL_TO_PASS, or
//! whose environment, install, patches or runs fail, is dropped with the reason.
//!
//! One file per concern: [`spec`] (the environment spec: per-repository config, else
//! the project's [`crate::ecosystem`] infers it), [`attempt`] (one run's container
//! script and results), [`coverage`] (`--coverage`), [`labels`] (the pure label
//! rules), [`rows`] (`--input` rows read, written back and compared). Containers and images are [`crate::sandbox`]'s; what a language needs is
//! [`crate::ecosystem`]'s. This file is the stage loop: selection, workers, resume,
//! Ctrl-C, and what is written to the store.
//!
//! Resume: each attempt's pre and post runs are stored together in one transaction,
//! keyed by the instance id and the hash of the content they ran
//! ([`validation::run_content_hash`]); a task is finished when its funnel row is
//! written (labelled or dropped), and extract removes that row (with the runs and the
//! task) when it changes or drops the candidate. A killed `validate` skips finished
//! tasks and resumes the others at their first missing attempt of the same content.
//! Tasks named with `--instance` are validated again from scratch. `--input` rows are
//! never "finished": only their runs are reused, and only when the row's content is
//! the one they ran.
//!
//! With `--coverage`, each labelled task also gets one coverage run ([`coverage`]),
//! stored with its labels in the same transaction; labelled tasks that have no
//! coverage outcome yet are picked up again (their stored runs are reused).
//!
//! Inside every test container `SWE_HARVEST_ATTEMPT` holds the attempt number (1..=runs):
//! nothing secret, and useful to tell runs apart in logs.

pub mod attempt;
pub mod coverage;
pub mod labels;
mod ladder;
pub mod learned;
pub mod rows;
pub mod spec;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use serde::Serialize;

use crate::config::{LoadedConfig, ValidateConfig};
use crate::ecosystem::{self, Ecosystem, RepoFiles};
use crate::model::drop_reason::ValidateDropReason;
use crate::model::{Candidate, EnvironmentSpec, Rejection, RunPhase, Stage, Task, ValidationRun};
use crate::progress::Reporter;
use crate::sandbox::images::{ImageSettings, Images};
use crate::sandbox::{Backend, Limits, script};
use crate::store::coverage::GoldenCoverage;
use crate::store::{self, Store, StoreError, candidates, validation};
use attempt::RunRequest;
use labels::Labels;

#[derive(Debug, thiserror::Error)]
pub enum ValidateError {
    #[error(transparent)]
    Sandbox(#[from] crate::sandbox::SandboxError),
    #[error("failed to read the extra CA file `{path}` (validate.extra_ca_file)")]
    ExtraCa {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "the Gradle distribution `{path}` (validate.gradle_distributions.\"{version}\") is not a readable file; \
         download gradle-{version}-bin.zip from services.gradle.org elsewhere and name its path there"
    )]
    GradleDistribution {
        version: String,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Everything the stage needs, resolved (defaults < config < environment < flags).
#[derive(Debug, Clone)]
pub struct ValidateSettings {
    pub data_dir: PathBuf,
    /// Extra place to look for mirrors (`SWE_HARVEST_MIRRORS`).
    pub mirrors_dir: Option<PathBuf>,
    pub workers: usize,
    pub runs: u32,
    /// Also measure the golden tests' change coverage (`--coverage`).
    pub coverage: bool,
    pub limits: Limits,
    /// The ladder's check run's time limit (`validate.check_timeout_secs`, at most the run's).
    pub check_timeout: Duration,
    pub images: ImageSettings,
    pub config: LoadedConfig,
}

/// Validate's command-line values, plain (no clap types): each overrides the config.
#[derive(Debug, Clone, Default)]
pub struct ValidateFlags {
    /// `--workers`; `None` or 0 leaves it to the config (0 there: from the machine).
    pub workers: Option<usize>,
    /// `--runs`; `None` or 0 leaves it to the config.
    pub runs: Option<u32>,
    /// `--coverage`.
    pub coverage: bool,
}

impl ValidateSettings {
    /// Defaults < config file < environment (both in `config`; `SWE_HARVEST_MIRRORS`
    /// names an extra folder of mirrors) < `flags`. Reads `validate.extra_ca_file`.
    pub fn resolve(
        data_dir: PathBuf,
        config: LoadedConfig,
        flags: &ValidateFlags,
    ) -> Result<ValidateSettings, ValidateError> {
        let validate: &ValidateConfig = &config.config.validate;
        let extra_ca = match &validate.extra_ca_file {
            Some(path) => {
                Some(fs_err::read(path).map_err(|source| ValidateError::ExtraCa { path: path.clone(), source })?)
            }
            None => None,
        };
        for (version, path) in &validate.gradle_distributions {
            fs_err::File::open(path).map_err(|source| ValidateError::GradleDistribution {
                version: version.clone(),
                path: path.clone(),
                source,
            })?;
        }
        let workers = flags.workers.filter(|&workers| workers > 0).unwrap_or(match validate.workers {
            0 => default_workers(validate.memory_bytes),
            workers => workers,
        });
        let limits = Limits {
            memory_bytes: validate.memory_bytes as i64,
            nano_cpus: (validate.cpus * 1e9) as i64,
            pids_limit: validate.pids_limit,
            run_timeout: Duration::from_secs(validate.run_timeout_secs),
        };
        Ok(ValidateSettings {
            workers,
            runs: flags.runs.filter(|&runs| runs > 0).unwrap_or(validate.runs),
            coverage: flags.coverage,
            check_timeout: Duration::from_secs(validate.check_timeout_secs).min(limits.run_timeout),
            limits,
            images: ImageSettings {
                base_images: validate.base_images.clone(),
                extra_ca,
                gradle_distributions: validate.gradle_distributions.clone(),
                registries: validate.effective_registries(),
                build_timeout: Duration::from_secs(validate.build_timeout_secs),
                build_limits: crate::sandbox::BuildLimits::of(&limits),
                logs_dir: data_dir.join("logs"),
            },
            mirrors_dir: std::env::var_os(crate::env_vars::SWE_HARVEST_MIRRORS).map(Into::into),
            data_dir,
            config,
        })
    }
}

/// Workers from the machine: one per core, no more than memory allows at the
/// per-container limit, at least one.
pub fn default_workers(memory_bytes: u64) -> usize {
    let cores = std::thread::available_parallelism().map(|cores| cores.get()).unwrap_or(1);
    let memory = fs_err::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|line| line.starts_with("MemTotal:"))
                .and_then(|line| line.split_whitespace().nth(1))
                .and_then(|kib| kib.parse::<u64>().ok())
        })
        .map(|kib| kib * 1024);
    let by_memory = memory.map_or(cores, |total| (total / memory_bytes.max(1)) as usize);
    cores.min(by_memory).max(1)
}

/// What to validate.
#[derive(Debug, Clone)]
pub enum Work {
    /// Candidates from the store; results go to the store (tasks, funnel).
    Store { repos: Vec<crate::model::RepoSlug>, instances: Vec<String> },
    /// Rows from a file (`--input`); only runs are stored (for resume), results are returned.
    Rows(Vec<Candidate>),
}

/// Why a task was dropped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Dropped {
    pub reason: ValidateDropReason,
    pub detail: String,
}

fn dropped(reason: ValidateDropReason, detail: impl Into<String>) -> Dropped {
    Dropped { reason, detail: detail.into() }
}

/// The outcome of one task.
#[derive(Debug, Clone, Serialize)]
pub struct TaskOutcome {
    pub instance_id: String,
    pub repo: String,
    /// The task's version (the environment entry a learned config writes is by version).
    pub version: String,
    pub result: Result<Labels, Dropped>,
    pub image: Option<String>,
    pub spec: Option<EnvironmentSpec>,
    /// The runtime the project needs when no base image provides it (the task ran on
    /// the nearest one there is): a task lost to its environment is then dropped as
    /// `runtime_unavailable`.
    pub runtime_needed: Option<ecosystem::RuntimeNeed>,
    /// Attempts whose runs are stored.
    pub runs: u32,
    /// What the runs showed of every test, also when the task was dropped for it
    /// (`None` when no runs were compared): explains a published label missed here.
    pub observed: Option<Labels>,
    /// The golden tests' change coverage, with `--coverage`.
    pub coverage: Option<GoldenCoverage>,
    /// Seconds of this session's coverage run (0 when none ran).
    pub coverage_secs: f64,
    /// Seconds spent in test phases (inside containers) and in total, this session.
    pub test_secs: f64,
    pub total_secs: f64,
}

impl TaskOutcome {
    /// Tests that failed because the network is off: never labelled, labelled task or not.
    pub fn needs_network(&self) -> &[String] {
        self.observed.as_ref().map_or(&[], |labels| &labels.needs_network)
    }
}

/// The stage's summary.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Summary {
    pub selected: usize,
    pub skipped_finished: usize,
    pub labelled: usize,
    pub dropped: BTreeMap<ValidateDropReason, usize>,
    pub images_built: usize,
    pub images_reused: usize,
    /// With `--coverage`: tasks whose coverage was measured, or failed, in this run.
    pub coverage_measured: usize,
    pub coverage_failed: usize,
    /// Tests that failed because the network is off (never labelled), and the tasks
    /// that have any.
    pub needs_network_tests: usize,
    pub tasks_needing_network: usize,
    pub image_build_secs: Vec<f64>,
    /// The environments the tasks ran in, by the ladder rung that gave them.
    pub environments_by_rung: BTreeMap<crate::model::Rung, usize>,
    pub elapsed_secs: f64,
    pub interrupted: bool,
    pub outcomes: Vec<TaskOutcome>,
}

impl Summary {
    /// Interrupted, or every task validated in this run lost to its environment.
    pub fn failed(&self) -> bool {
        self.interrupted || self.all_lost_to_environment()
    }

    /// Tasks were validated in this run, none was labelled, and every one was lost to
    /// its environment ([`ValidateDropReason::is_environment`]).
    pub fn all_lost_to_environment(&self) -> bool {
        self.labelled == 0 && !self.dropped.is_empty() && self.dropped.keys().all(|reason| reason.is_environment())
    }
}

struct Context<'a> {
    settings: &'a ValidateSettings,
    backend: Arc<dyn Backend>,
    images: Images,
    store: Mutex<Store>,
    persist: bool,
    data_dir_label: String,
    reporter: &'a dyn Reporter,
    built: Mutex<BTreeSet<String>>,
    reused: Mutex<BTreeSet<String>>,
    build_secs: Mutex<Vec<f64>>,
    checks: ladder::Checks,
}

impl Context<'_> {
    /// Counts an environment image as built or reused by this run.
    fn note_image(&self, built: &crate::sandbox::images::BuiltImage) {
        if built.reused {
            self.reused.lock().expect("not poisoned").insert(built.tag.clone());
        } else if self.built.lock().expect("not poisoned").insert(built.tag.clone()) {
            self.build_secs.lock().expect("not poisoned").push(built.build_secs);
        }
    }
}

/// Runs the stage over `work`. Ctrl-C or SIGTERM stops it: running containers are
/// removed, and what was stored stays for the next run.
pub async fn run(
    settings: &ValidateSettings,
    backend: Arc<dyn Backend>,
    store: Store,
    work: Work,
    reporter: &dyn Reporter,
) -> Result<Summary, ValidateError> {
    let started = Instant::now();
    // From here on, Ctrl-C and SIGTERM stop the work below cleanly instead of killing the process.
    let mut interruption = crate::interrupt::Interruption::listen();
    let data_dir_label =
        fs_err::canonicalize(&settings.data_dir).unwrap_or_else(|_| settings.data_dir.clone()).display().to_string();
    let removed = backend.sweep(&data_dir_label).await;
    if removed > 0 {
        tracing::info!(removed, "removed containers left by an earlier, interrupted run");
    }
    let (selected, persist, explicit): (Vec<Candidate>, bool, BTreeSet<String>) = match work {
        Work::Store { repos, instances } => {
            let mut all = candidates::candidates(store.connection(), &repos)?;
            if !instances.is_empty() {
                all.retain(|candidate| instances.contains(&candidate.instance_id));
            }
            warn_unmatched(&repos, &instances, &all);
            (all, true, instances.into_iter().collect())
        }
        Work::Rows(rows) => (rows, false, BTreeSet::new()),
    };
    let mut summary = Summary { selected: selected.len(), ..Summary::default() };
    let mut finished = if persist { validation::finished_instances(store.connection())? } else { BTreeSet::new() };
    if persist && settings.coverage {
        for instance_id in store::coverage::labelled_without_coverage(store.connection())? {
            finished.remove(&instance_id);
        }
    }
    let mut todo = Vec::new();
    for candidate in selected {
        if explicit.contains(&candidate.instance_id) {
            validation::delete_runs(store.connection(), &candidate.instance_id)?;
            store::coverage::delete(store.connection(), &candidate.instance_id)?;
            todo.push(candidate);
        } else if finished.contains(&candidate.instance_id) {
            summary.skipped_finished += 1;
        } else {
            todo.push(candidate);
        }
    }

    let context = Context {
        settings,
        images: Images::new(backend.clone(), settings.images.clone()),
        backend: backend.clone(),
        store: Mutex::new(store),
        persist,
        data_dir_label,
        reporter,
        built: Mutex::default(),
        reused: Mutex::default(),
        build_secs: Mutex::default(),
        checks: ladder::Checks::default(),
    };
    reporter.start("validate", Some(todo.len() as u64));
    let outcomes = Arc::new(Mutex::new(Vec::new()));
    let pool = {
        let outcomes = outcomes.clone();
        let context = &context;
        async move {
            let mut stream = futures::stream::iter(todo)
                .map(|candidate| async move { validate_one(context, &candidate).await })
                .buffer_unordered(settings.workers.max(1));
            while let Some(outcome) = stream.next().await {
                context.reporter.advance(1);
                outcomes.lock().expect("not poisoned").push(outcome);
            }
        }
    };
    tokio::select! {
        () = pool => {}
        interrupt = interruption.received() => {
            tracing::warn!(signal = %interrupt, "interrupted: removing running containers; finished runs stay stored for the next run");
            summary.interrupted = true;
        }
    }
    backend.remove_running().await;
    reporter.finish();

    let mut outcomes = std::mem::take(&mut *outcomes.lock().expect("not poisoned"));
    outcomes.sort_by(|a, b| a.instance_id.cmp(&b.instance_id));
    for outcome in &outcomes {
        match &outcome.result {
            Ok(_) => summary.labelled += 1,
            Err(dropped) => *summary.dropped.entry(dropped.reason).or_default() += 1,
        }
        summary.needs_network_tests += outcome.needs_network().len();
        summary.tasks_needing_network += usize::from(!outcome.needs_network().is_empty());
        match &outcome.coverage {
            Some(GoldenCoverage::Measured { .. }) => summary.coverage_measured += 1,
            Some(GoldenCoverage::Failed { .. }) => summary.coverage_failed += 1,
            None => {}
        }
    }
    summary.images_built = context.built.lock().expect("not poisoned").len();
    summary.images_reused = context.reused.lock().expect("not poisoned").len();
    summary.image_build_secs = context.build_secs.lock().expect("not poisoned").clone();
    let mut environments: BTreeMap<&str, crate::model::Rung> = BTreeMap::new();
    for outcome in &outcomes {
        if let (Some(image), Some(spec)) = (&outcome.image, &outcome.spec) {
            environments.insert(image, spec.rung);
        }
    }
    for rung in environments.into_values() {
        *summary.environments_by_rung.entry(rung).or_default() += 1;
    }
    summary.outcomes = outcomes;
    summary.elapsed_secs = started.elapsed().as_secs_f64();
    Ok(summary)
}

/// Warns about each `--repo` and `--instance` that selected no candidate, so that a
/// typo does not pass as "0 selected".
fn warn_unmatched(repos: &[crate::model::RepoSlug], instances: &[String], selected: &[Candidate]) {
    for repo in repos.iter().filter(|repo| !selected.iter().any(|candidate| &candidate.repo == *repo)) {
        tracing::warn!(repo = %repo, "--repo {repo} matches no candidate in the store; run `extract --repo {repo}` first, or check the name");
    }
    for instance in instances.iter().filter(|id| !selected.iter().any(|candidate| &candidate.instance_id == *id)) {
        tracing::warn!(instance_id = %instance, "--instance {instance} matches no candidate{}; check the id (`export --stage candidates` lists them)", if repos.is_empty() { String::new() } else { " of the selected repositories".to_string() });
    }
}

async fn validate_one(context: &Context<'_>, candidate: &Candidate) -> TaskOutcome {
    let started = Instant::now();
    let mut outcome = TaskOutcome {
        instance_id: candidate.instance_id.clone(),
        repo: candidate.repo.to_string(),
        version: candidate.version.clone(),
        result: Err(dropped(ValidateDropReason::NotStarted, "")),
        image: None,
        spec: None,
        runtime_needed: None,
        runs: 0,
        observed: None,
        coverage: None,
        coverage_secs: 0.0,
        test_secs: 0.0,
        total_secs: 0.0,
    };
    let result = validate_task(context, candidate, &mut outcome)
        .await
        .map_err(|lost| runtime_unavailable(lost, outcome.runtime_needed.as_ref(), outcome.spec.as_ref()));
    outcome.total_secs = started.elapsed().as_secs_f64();
    match &result {
        Ok(labels) => tracing::info!(
            instance_id = %candidate.instance_id,
            fail_to_pass = labels.fail_to_pass.len(),
            pass_to_pass = labels.pass_to_pass.len(),
            flaky = labels.flaky.len(),
            "labelled"
        ),
        Err(dropped) => tracing::info!(
            instance_id = %candidate.instance_id, reason = %dropped.reason, detail = %dropped.detail, "dropped"
        ),
    }
    if context.persist {
        if let Err(error) = record_outcome(context, candidate, &result, &outcome) {
            tracing::error!(instance_id = %candidate.instance_id, %error, "could not store the outcome");
        }
    }
    outcome.result = result;
    outcome
}

/// A task lost to its environment while its project needs a runtime that no base
/// image provides is dropped for that (`runtime_unavailable`), naming the runtime it
/// needs, the one it was tried on, and how that failed.
fn runtime_unavailable(
    lost: Dropped,
    needed: Option<&ecosystem::RuntimeNeed>,
    spec: Option<&EnvironmentSpec>,
) -> Dropped {
    let Some(needed) =
        needed.filter(|_| lost.reason.is_environment() && lost.reason != ValidateDropReason::RuntimeUnavailable)
    else {
        return lost;
    };
    let tried =
        spec.map_or_else(|| "the nearest runtime there is".to_string(), |spec| format!("runtime {}", spec.runtime));
    dropped(
        ValidateDropReason::RuntimeUnavailable,
        format!(
            "the project needs runtime {needed}, which no base image provides; tried on {tried}, it failed ({}): {}\n\
             hint: bring an image of that runtime and name it in validate.base_images.\"{}\" (docs/languages/python.md, \"Runtimes\")",
            lost.reason, lost.detail, needed.runtime
        ),
    )
}

fn record_outcome(
    context: &Context<'_>,
    candidate: &Candidate,
    result: &Result<Labels, Dropped>,
    outcome: &TaskOutcome,
) -> Result<(), StoreError> {
    let mut store = context.store.lock().expect("not poisoned");
    store.transaction(|transaction| -> Result<(), StoreError> {
        match result {
            Ok(labels) => {
                let task = Task {
                    candidate: candidate.clone(),
                    fail_to_pass: labels.fail_to_pass.clone(),
                    pass_to_pass: labels.pass_to_pass.clone(),
                    flaky_tests: labels.flaky.clone(),
                    needs_network: labels.needs_network.clone(),
                    validation_runs: outcome.runs,
                    image: outcome.image.clone(),
                    environment_rung: outcome.spec.as_ref().map(|spec| spec.rung),
                };
                candidates::upsert_task(transaction, &task)?;
                if let Some(coverage) = &outcome.coverage {
                    store::coverage::upsert(transaction, &candidate.instance_id, coverage)?;
                }
                store::record_passed(transaction, Stage::Validate, &candidate.repo, &candidate.instance_id)
            }
            Err(dropped) => {
                candidates::delete_task(transaction, &candidate.instance_id)?;
                store::coverage::delete(transaction, &candidate.instance_id)?;
                store::record_dropped(
                    transaction,
                    &Rejection {
                        stage: Stage::Validate,
                        repo: candidate.repo.clone(),
                        item: candidate.instance_id.clone(),
                        reason: dropped.reason.as_str().to_string(),
                        detail: dropped.detail.clone(),
                    },
                )
            }
        }
    })
}

/// The project's ecosystem at the environment commit (its test framework included:
/// `framework` from its config, else detected from its files), the files its
/// inference reads there, and the commit's date.
fn read_environment(
    mirror: &std::path::Path,
    commit: &str,
    framework: Option<ecosystem::TestFramework>,
) -> Result<(&'static dyn Ecosystem, RepoFiles, chrono::DateTime<chrono::Utc>), crate::git::GitError> {
    let mirror = crate::git::Mirror::open(mirror)?;
    let date = mirror.commit_time(commit)?;
    let paths = mirror.list_files(commit)?;
    let mut read = |path: &str| mirror.read_text(commit, path).ok().flatten();
    let ecosystem = ecosystem::detect_with_framework(&paths, &mut read, framework);
    let mut files = RepoFiles::new();
    for path in paths.into_iter().filter(|path| ecosystem.reads_for_inference(path)) {
        if let Some(text) = mirror.read_text(commit, &path)? {
            files.insert(path, text);
        }
    }
    Ok((ecosystem, files, date))
}

/// The runtimes inference chooses among: those of `validate.base_images` whose base
/// image is there (configured, pulled, or scripts/setup.sh's local one), so that an
/// optional runtime nobody built is never chosen; all of them when none is there, so
/// that the build fails naming the missing image.
async fn available_runtimes(context: &Context<'_>, ecosystem: &dyn Ecosystem) -> Vec<String> {
    let configured: Vec<String> =
        context.settings.images.base_images.keys().filter(|runtime| ecosystem.owns_runtime(runtime)).cloned().collect();
    let mut present = Vec::new();
    for runtime in &configured {
        if context.images.base_image(runtime, &ecosystem.local_base_image(runtime)).await.is_ok() {
            present.push(runtime.clone());
        }
    }
    let mut available = if present.is_empty() { configured } else { present };
    // Configured Gradle distributions are tools of the same kind (`gradle8.5`).
    available.extend(
        context
            .settings
            .images
            .gradle_distributions
            .keys()
            .map(|version| format!("gradle{version}"))
            .filter(|runtime| ecosystem.owns_runtime(runtime)),
    );
    available
}

async fn validate_task(
    context: &Context<'_>,
    candidate: &Candidate,
    outcome: &mut TaskOutcome,
) -> Result<Labels, Dropped> {
    let settings = context.settings;
    let mirror = crate::git::find_mirror(&settings.data_dir, settings.mirrors_dir.as_deref(), &candidate.repo)
        .map_err(|error| dropped(ValidateDropReason::NoMirror, error.to_string()))?;

    // The environment spec.
    let repo_config = settings
        .config
        .repo(&candidate.repo)
        .map_err(|error| dropped(ValidateDropReason::InvalidRepoConfig, error.to_string()))?;
    let (ecosystem, files, date) = {
        let mirror = mirror.clone();
        let commit = candidate.environment_setup_commit.clone();
        let base_commit = candidate.base_commit.clone();
        let framework = repo_config.test_framework;
        tokio::task::spawn_blocking(move || {
            // A base commit the mirror lacks is the row's fault, found before any container runs.
            let has_base = crate::git::Mirror::open(&mirror).is_ok_and(|mirror| mirror.commit_id(&base_commit).is_some());
            has_base.then(|| read_environment(&mirror, &commit, framework))
        })
        .await
        .map_err(|error| dropped(ValidateDropReason::EnvironmentInferenceFailed, error.to_string()))?
        .ok_or_else(|| {
            dropped(
                ValidateDropReason::BaseCommitMissing,
                format!(
                    "the base commit `{}` is not in the mirror of {}; check the row's base_commit, or run `mirror` again",
                    candidate.base_commit, candidate.repo
                ),
            )
        })?
        .map_err(|error| dropped(ValidateDropReason::EnvironmentCommitMissing, error.to_string()))?
    };
    let available = available_runtimes(context, ecosystem).await;
    let pinned = spec::config_entry(&repo_config, &candidate.version).is_some_and(|entry| entry.runtime.is_some());
    if !pinned {
        outcome.runtime_needed = ecosystem.runtime_needed(&files, date, &available);
    }
    let mut spec = spec::resolve(ecosystem, &repo_config, &candidate.version, || files.clone(), date, &available)
        .map_err(|error| match error {
            ecosystem::InferError::NoRuntime { .. } => {
                dropped(ValidateDropReason::RuntimeUnavailable, error.to_string())
            }
            _ => dropped(ValidateDropReason::EnvironmentInferenceFailed, error.to_string()),
        })?;
    for package in ecosystem.packages_the_patches_add(&[&candidate.patch, &candidate.test_patch]) {
        if !spec.extra_packages.contains(&package) {
            spec.extra_packages.push(package);
        }
    }
    outcome.spec = Some(spec.clone());
    let test_files = ecosystem.tests_to_run(&candidate.test_patch, &spec);
    if test_files.is_empty() {
        return Err(dropped(
            ValidateDropReason::NoTestFiles,
            format!("the test patch touches no test file that {} runs", ecosystem.name()),
        ));
    }

    // The environment image: the first rung of the ladder that builds and runs.
    let environment = ladder::Environment {
        ecosystem,
        candidate,
        mirror: &mirror,
        files: &files,
        date,
        test_files: &test_files,
        runtimes: &available,
    };
    let first = spec.clone();
    let (mut spec, mut built) = ladder::climb(context, &environment, spec, &[]).await?;

    // A validate that was stopped after it added packages for missing modules resumes
    // in that environment (its first runs would lead there again).
    if let Some(remembered) = remembered_dependencies(context, candidate, &spec) {
        if let Ok(with_image) = ladder::build(context, &environment, &remembered).await {
            spec = remembered;
            built = with_image;
        }
    }
    let (mut runs, mut judged) =
        run_in(context, candidate, ecosystem, &spec, &built, &mirror, &test_files, outcome).await?;
    // Modules the runs could not import and that are not the project's own: the
    // environment commit no longer declares what this commit imports (pytest's `py`),
    // or the gold patch adds a dependency. When that may have cost the task (it would
    // be dropped, or a module missing only before the fix may be what "fails"), the
    // environment is built again with those packages added and the runs are redone.
    let suspicious = judged.verdict.is_err() || runs.missing_pre.difference(&runs.missing_post).next().is_some();
    if suspicious {
        let missing: BTreeSet<String> = runs.missing_pre.union(&runs.missing_post).cloned().collect();
        let own = own_module_names(&mirror, candidate).await;
        let packages = ecosystem.packages_for_missing_modules(&missing, &own);
        let new: Vec<String> = packages.into_iter().filter(|package| !spec.extra_packages.contains(package)).collect();
        if !new.is_empty() {
            let mut with_dependencies = spec.clone();
            with_dependencies.extra_packages.extend(new.iter().cloned());
            tracing::info!(
                instance_id = %candidate.instance_id, packages = %new.join(" "),
                "the runs could not import these packages; building the environment with them"
            );
            match ladder::build(context, &environment, &with_dependencies).await {
                Ok(with_image) => {
                    context.note_image(&with_image);
                    spec = with_dependencies;
                    built = with_image;
                    (runs, judged) =
                        run_in(context, candidate, ecosystem, &spec, &built, &mirror, &test_files, outcome).await?;
                }
                Err(error) => tracing::warn!(
                    instance_id = %candidate.instance_id, %error,
                    "the environment with the missing packages did not build; keeping the runs without them"
                ),
            }
        }
    }
    // No test ran to a verdict in any run, before or after the fix: the environment
    // passed its check at the environment commit but does not run this commit's tests
    // (pytest 2.8 collects there and not here on Python 3.8). The ladder goes on from
    // that rung; the first environment whose runs run something is kept.
    let mut unusable: Vec<(EnvironmentSpec, String)> = Vec::new();
    while first.source == "inferred" && judged.verdict.is_err() && nothing_ran(&runs) {
        let detail = format!(
            "no test of {} ran to a verdict in the task's runs at its base commit (log: {})",
            test_files.join(", "),
            settings.data_dir.join("logs/validate").join(&candidate.instance_id).display()
        );
        unusable.push((spec.clone(), detail));
        let Ok((next, with_image)) = ladder::climb(context, &environment, first.clone(), &unusable).await else {
            break;
        };
        tracing::info!(
            instance_id = %candidate.instance_id, rung = %next.rung, runtime = %next.runtime,
            "no test ran in the task's runs; trying the next rung of the environment ladder"
        );
        spec = next;
        built = with_image;
        (runs, judged) = run_in(context, candidate, ecosystem, &spec, &built, &mirror, &test_files, outcome).await?;
    }
    outcome.observed = judged.labels.clone();
    judged.verdict?;
    let labels = judged.labels.expect("labels come with every verdict but no tests collected");
    // Coverage is stored in the same transaction as the labels, so a task that gets
    // here has none yet (finished tasks with coverage are skipped by `run`).
    if settings.coverage {
        let request = coverage::CoverageRequest {
            candidate,
            spec: &spec,
            image: &built.tag,
            mirror: mirror.clone(),
            test_files: &test_files,
            logs_dir: settings.data_dir.join("logs"),
            data_dir_label: context.data_dir_label.clone(),
        };
        let started = Instant::now();
        let measured = coverage::measure(context.backend.as_ref(), ecosystem, &request, settings.limits).await;
        outcome.coverage_secs = started.elapsed().as_secs_f64();
        match &measured {
            GoldenCoverage::Measured { coverage, .. } => tracing::info!(
                instance_id = %candidate.instance_id, executable_lines = coverage.executable, covered = coverage.covered,
                "measured the golden tests' change coverage"
            ),
            GoldenCoverage::Failed { detail } => {
                tracing::warn!(instance_id = %candidate.instance_id, %detail, "could not measure coverage")
            }
        }
        outcome.coverage = Some(measured);
    }
    Ok(labels)
}

/// Runs the task's attempts in the environment `spec` (image `built`), recorded as the
/// task's environment in `outcome`, and judges them.
#[allow(clippy::too_many_arguments)]
async fn run_in(
    context: &Context<'_>,
    candidate: &Candidate,
    ecosystem: &'static dyn Ecosystem,
    spec: &EnvironmentSpec,
    built: &crate::sandbox::images::BuiltImage,
    mirror: &std::path::Path,
    test_files: &[String],
    outcome: &mut TaskOutcome,
) -> Result<(Attempts, Judged), Dropped> {
    outcome.spec = Some(spec.clone());
    outcome.image = Some(built.tag.clone());
    let runs = run_attempts(context, candidate, ecosystem, spec, built, mirror, test_files, outcome).await?;
    outcome.runs = runs.pre.len() as u32;
    let judged = judge(&runs, test_files, &context.settings.data_dir, &candidate.instance_id);
    Ok((runs, judged))
}

/// Whether no run, before or after the gold patch, ran a test to a verdict (passed,
/// failed, xfail or xpass): only collection errors, skips or nothing at all.
fn nothing_ran(runs: &Attempts) -> bool {
    !runs.pre.iter().chain(&runs.post).flat_map(|run| run.tests.values()).any(|status| status.ran())
}

/// The runs of one environment, and the modules they could not import, before and
/// after the gold patch.
struct Attempts {
    pre: Vec<ValidationRun>,
    post: Vec<ValidationRun>,
    missing_pre: BTreeSet<String>,
    missing_post: BTreeSet<String>,
}

/// Runs every attempt of `settings.runs` in the image `built`, resuming after the
/// attempts already stored for this very content (patches, commits, environment): the
/// same id with other content runs afresh.
#[allow(clippy::too_many_arguments)]
async fn run_attempts(
    context: &Context<'_>,
    candidate: &Candidate,
    ecosystem: &'static dyn Ecosystem,
    spec: &EnvironmentSpec,
    built: &crate::sandbox::images::BuiltImage,
    mirror: &std::path::Path,
    test_files: &[String],
    outcome: &mut TaskOutcome,
) -> Result<Attempts, Dropped> {
    let settings = context.settings;
    let content_hash = validation::run_content_hash(candidate, spec, &built.tag);
    let stored = {
        let store = context.store.lock().expect("not poisoned");
        validation::runs_for_content(store.connection(), &candidate.instance_id, &content_hash)
            .map_err(|error| dropped(ValidateDropReason::StoreError, error.to_string()))?
    };
    let complete = |attempt: u32| {
        stored.iter().any(|run| run.attempt == attempt && run.phase == RunPhase::Pre)
            && stored.iter().any(|run| run.attempt == attempt && run.phase == RunPhase::Post)
    };
    let log_dir = settings.data_dir.join("logs").join("validate").join(&candidate.instance_id);
    let mut attempts =
        Attempts { pre: Vec::new(), post: Vec::new(), missing_pre: BTreeSet::new(), missing_post: BTreeSet::new() };
    for attempt in 1..=settings.runs {
        if complete(attempt) {
            let phase = |phase: RunPhase| stored.iter().filter(move |run| run.attempt == attempt && run.phase == phase);
            attempts.pre.extend(phase(RunPhase::Pre).cloned());
            attempts.post.extend(phase(RunPhase::Post).cloned());
            continue;
        }
        let request = RunRequest {
            instance_id: candidate.instance_id.clone(),
            attempt,
            image: built.tag.clone(),
            mirror: mirror.to_path_buf(),
            base_commit: candidate.base_commit.clone(),
            version: candidate.version.clone(),
            test_patch: candidate.test_patch.clone(),
            gold_patch: candidate.patch.clone(),
            test_files: test_files.to_vec(),
            test_command: spec.test_command.clone(),
            log_dir: log_dir.clone(),
            data_dir_label: context.data_dir_label.clone(),
        };
        let run = attempt::run(context.backend.as_ref(), ecosystem, &request, settings.limits)
            .await
            .map_err(|error| dropped(ValidateDropReason::ContainerFailed, error.to_string()))?;
        outcome.test_secs += run.phase_secs.values().sum::<f64>();
        check_run(&run, settings.limits.run_timeout)?;
        let missing = |name: &str| run.steps.get(name).map(|step| modules_not_found(&step.text)).unwrap_or_default();
        attempts.missing_pre.extend(missing("pre"));
        attempts.missing_post.extend(missing("post"));
        let runs: Vec<ValidationRun> = [(RunPhase::Pre, "pre"), (RunPhase::Post, "post")]
            .into_iter()
            .map(|(phase, name)| {
                let (parsed, source) =
                    run.results.get(name).map(|(parsed, source)| (parsed.clone(), source.as_str())).unwrap_or_default();
                ValidationRun {
                    instance_id: candidate.instance_id.clone(),
                    phase,
                    attempt,
                    image: built.tag.clone(),
                    exit_code: run.steps.get(name).and_then(|step| step.exit_code),
                    timed_out: false,
                    duration_secs: run.phase_secs.get(name).copied().unwrap_or_default(),
                    tests: parsed.tests,
                    test_durations: parsed.durations,
                    results_source: source.to_string(),
                    network_failures: parsed.network_failures,
                }
            })
            .collect();
        {
            let mut store = context.store.lock().expect("not poisoned");
            store
                .transaction(|transaction| validation::insert_runs(transaction, &content_hash, &runs))
                .map_err(|error| dropped(ValidateDropReason::StoreError, error.to_string()))?;
        }
        let mut runs = runs.into_iter();
        attempts.pre.extend(runs.next());
        attempts.post.extend(runs.next());
    }
    Ok(attempts)
}

/// The spec with packages added for missing modules that an earlier validate of this
/// task ran in: `spec` but for more `extra_packages`, found through the images of the
/// task's stored runs.
fn remembered_dependencies(
    context: &Context<'_>,
    candidate: &Candidate,
    spec: &EnvironmentSpec,
) -> Option<EnvironmentSpec> {
    let store = context.store.lock().expect("not poisoned");
    let runs = validation::runs(store.connection(), &candidate.instance_id).ok()?;
    let images: BTreeSet<&str> = runs.iter().map(|run| run.image.as_str()).collect();
    images.into_iter().find_map(|image| {
        let stored = validation::environment_spec_for_image(store.connection(), image).ok().flatten()?;
        let adds = stored.extra_packages.len() > spec.extra_packages.len()
            && stored.extra_packages.starts_with(&spec.extra_packages)
            && EnvironmentSpec { extra_packages: spec.extra_packages.clone(), ..stored.clone() } == *spec;
        adds.then_some(stored)
    })
}

/// The labels of an environment's runs, and whether they make a task.
struct Judged {
    /// `None` when no run collected a test.
    labels: Option<Labels>,
    verdict: Result<(), Dropped>,
}

fn judge(attempts: &Attempts, test_files: &[String], data_dir: &std::path::Path, instance_id: &str) -> Judged {
    let missing: BTreeSet<String> = attempts.missing_pre.union(&attempts.missing_post).cloned().collect();
    let (pre, post) = (&attempts.pre, &attempts.post);
    if pre.iter().chain(post).all(|run| run.tests.is_empty()) {
        let log = data_dir.join("logs").join("validate").join(instance_id);
        let detail = format!(
            "no test results in any run of {}{}; see the logs in `{}`",
            test_files.join(", "),
            not_importable(&missing),
            log.display()
        );
        return Judged { labels: None, verdict: Err(dropped(ValidateDropReason::NoTestsCollected, detail)) };
    }
    let pre_results: Vec<labels::RunResults> = pre.iter().map(|run| run.tests.clone()).collect();
    let post_results: Vec<labels::RunResults> = post.iter().map(|run| run.tests.clone()).collect();
    let network: BTreeSet<String> = pre.iter().chain(post).flat_map(|run| run.network_failures.clone()).collect();
    let labels = labels::compute(&pre_results, &post_results).set_aside_network(&network);
    let verdict = if labels.fail_to_pass.is_empty() {
        Err(dropped(
            ValidateDropReason::NoFailToPass,
            format!(
                "no test failed before the gold patch and passed after it in every run ({} pass to pass, {} flaky, {} broken by the patch, {} need the network){}",
                labels.pass_to_pass.len(),
                labels.flaky.len(),
                labels.pass_to_fail.len(),
                labels.needs_network.len(),
                not_importable(&missing)
            ),
        ))
    } else {
        Ok(())
    };
    Judged { labels: Some(labels), verdict }
}

/// The names a module of the project itself may have, at the base commit with the
/// files the patches add: every folder and every module file's stem. A missing module
/// of these names is the task's own business (a module the fix adds), never a
/// dependency to install.
async fn own_module_names(mirror: &std::path::Path, candidate: &Candidate) -> BTreeSet<String> {
    let mirror = mirror.to_path_buf();
    let base_commit = candidate.base_commit.clone();
    let mut paths: Vec<String> = crate::git::diff::files_changed_by(&candidate.patch);
    paths.extend(crate::git::diff::files_changed_by(&candidate.test_patch));
    tokio::task::spawn_blocking(move || {
        if let Ok(listed) = crate::git::Mirror::open(&mirror).and_then(|mirror| mirror.list_files(&base_commit)) {
            paths.extend(listed);
        }
        module_names(&paths)
    })
    .await
    .unwrap_or_default()
}

/// Every folder name and module file stem of `paths`.
fn module_names(paths: &[String]) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for path in paths {
        let mut components: Vec<&str> = path.split('/').collect();
        let file = components.pop().unwrap_or_default();
        names.extend(components.iter().map(|component| component.to_string()));
        // Modules only: `py.typed` is no module `py` (pytest's own marker file)
        // (`name.cpython-311-x86_64-linux-gnu.so` is the module `name`).
        if let (Some((stem, _)), Some((_, "py" | "pyi" | "pyx" | "so" | "pyd"))) =
            (file.split_once('.'), file.rsplit_once('.'))
        {
            names.insert(stem.to_string());
        }
    }
    names
}

/// Turns a failed step of a run into the task's drop reason.
fn check_run(run: &attempt::RunOutcome, phase_timeout: Duration) -> Result<(), Dropped> {
    let log = run.log_path.display();
    let phase_timed_out =
        ["pre", "post"].iter().any(|phase| run.steps.get(*phase).and_then(|step| step.exit_code) == Some(124));
    if run.timed_out || phase_timed_out {
        return Err(dropped(
            ValidateDropReason::Timeout,
            format!("the tests ran longer than {}s (validate.run_timeout_secs); log: {log}", phase_timeout.as_secs()),
        ));
    }
    if run.oom_killed {
        return Err(dropped(
            ValidateDropReason::OutOfMemory,
            format!("the container ran out of memory (validate.memory_bytes); log: {log}"),
        ));
    }
    let failed = |step: &str| match run.steps.get(step) {
        Some(output) if output.exit_code == Some(0) => None,
        Some(output) => Some(script::last_lines(&output.text, 5, "\n")),
        None => Some("(the step never started)".to_string()),
    };
    for (step, reason) in [
        ("install", ValidateDropReason::InstallFailed),
        ("test_patch", ValidateDropReason::TestPatchDoesNotApply),
        ("pre", ValidateDropReason::RunFailed),
        ("gold_patch", ValidateDropReason::GoldPatchDoesNotApply),
        ("post", ValidateDropReason::RunFailed),
    ] {
        let finished = run.steps.get(step).is_some_and(|output| output.exit_code.is_some());
        // Test phases may exit non-zero (failing tests); they must only finish.
        if step == "pre" || step == "post" {
            if !finished {
                return Err(dropped(
                    reason,
                    format!("the {step} tests did not finish (exit code {:?}); log: {log}", run.exit_code),
                ));
            }
            let killed = run.steps.get(step).and_then(|output| output.exit_code) == Some(137);
            if killed {
                return Err(dropped(
                    ValidateDropReason::Killed,
                    format!("the {step} tests were killed (memory or process limits); log: {log}"),
                ));
            }
            continue;
        }
        if let Some(detail) = failed(step) {
            return Err(dropped(reason, format!("{detail}\n(log: {log})")));
        }
    }
    Ok(())
}

/// The modules a run's output says it could not import (`No module named 'py'`).
fn modules_not_found(text: &str) -> Vec<String> {
    let pattern = regex::Regex::new(r"No module named '([A-Za-z0-9_.]+)'").expect("valid regex");
    pattern.captures_iter(text).map(|capture| capture[1].to_string()).collect()
}

/// `; the runs could not import py, appdirs (not in the environment)`, or nothing.
fn not_importable(modules: &BTreeSet<String>) -> String {
    if modules.is_empty() {
        return String::new();
    }
    let names: Vec<&str> = modules.iter().map(String::as_str).collect();
    format!(
        "; the runs could not import {} (not in the environment: the environment commit's dependencies may lack what this commit imports)",
        names.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_drop_names_the_modules_its_runs_could_not_import() {
        let log = "  File \"/testbed/src/_pytest/compat.py\", line 21, in <module>\n    import py\n\
                   ModuleNotFoundError: No module named 'py'\nE   ModuleNotFoundError: No module named 'appdirs.x'\n";
        let modules: BTreeSet<String> = modules_not_found(log).into_iter().collect();
        assert_eq!(modules.iter().map(String::as_str).collect::<Vec<_>>(), ["appdirs.x", "py"]);
        assert!(
            not_importable(&modules).starts_with("; the runs could not import appdirs.x, py (not in the environment")
        );
        assert_eq!(not_importable(&BTreeSet::new()), "");
    }

    #[test]
    fn the_projects_own_module_names_are_its_folders_and_module_files_only() {
        let paths: Vec<String> =
            ["src/pytest/py.typed", "src/_pytest/compat.py", "ext/fast.cpython-311-x86_64-linux-gnu.so", "README.rst"]
                .iter()
                .map(|path| path.to_string())
                .collect();
        let names = module_names(&paths);
        assert_eq!(
            names.iter().map(String::as_str).collect::<Vec<_>>(),
            ["_pytest", "compat", "ext", "fast", "pytest", "src"]
        );
    }
}
