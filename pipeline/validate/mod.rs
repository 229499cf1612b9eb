//! The validate stage: per candidate, the environment the loop of [`ladder`] settles
//! (an image built once per environment and reused, checked, climbed when it fails),
//! then `runs` isolated containers that each install the repository at base_commit,
//! apply the test patch, run the touched tests (pre), apply the gold patch and run
//! them again (post). FAIL_TO_PASS, PASS_TO_PASS and flaky tests follow from all runs
//! ([`crate::model::labels`]); a task without FAIL_TO_PASS, or whose environment,
//! install, patches or runs fail, is dropped with the reason.
//!
//! A task's walk goes down and comes back: [`validate_task`] reads the project
//! ([`project`]: mirror, config, ecosystem, files, runtimes), hands it to
//! [`ladder::settle`], which builds, checks ([`check`]), runs ([`attempt`]) and judges
//! ([`judge`]) each environment and asks the ecosystem for its next move, and gets the
//! settled environment's labels (or the drop) back; with `--coverage` it measures the
//! golden tests' change coverage there ([`crate::swt::coverage`]). Also: [`spec`]
//! (the first rung: per-repository config, else the ecosystem's inference), [`rows`]
//! (`--input` rows read, written back and compared), [`learned`] (`--write-config`),
//! [`plan`] (`--plan`: the first rung of each task, nothing built).
//! Containers and images are [`crate::sandbox`]'s; what a language needs is
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
//! With `--coverage`, each labelled task also gets one coverage run, stored with its
//! labels in the same transaction; labelled tasks that have no coverage outcome yet
//! are picked up again (their stored runs are reused). A task whose language cannot
//! measure coverage gets that said (`unsupported`), never "0 of 0 lines".
//!
//! Inside every test container `SWE_HARVEST_ATTEMPT` holds the attempt number (1..=runs):
//! nothing secret, and useful to tell runs apart in logs.

pub mod attempt;
mod check;
mod grain;
mod judge;
mod ladder;
pub mod learned;
pub mod plan;
mod project;
pub mod rows;
mod rung_logs;
mod settings;
pub mod spec;

/// A project's ecosystem, the files its inference reads and the date, at a commit of
/// its mirror (for a benchmark that renders an environment without validating).
pub use project::{Environment, read_environment};
pub use settings::{ValidateConfig, ValidateFlags, ValidateSettings};

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::Serialize;

use crate::ecosystem;
use crate::model::drop_reason::ValidateDropReason;
use crate::model::labels::Labels;
use crate::model::{Candidate, EnvironmentSpec, Rejection, Stage, Task};
use crate::progress::Reporter;
use crate::sandbox::images::Images;
use crate::sandbox::{self, Backend};
use crate::store::coverage::GoldenCoverage;
use crate::store::{self, Store, StoreError, candidates, validation};
use crate::swt;
use ladder::Settled;

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
    /// Seconds spent building (or awaiting) environment images, in test phases (inside
    /// containers) and in total, this session.
    pub build_secs: f64,
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
    /// With `--coverage`: labelled tasks whose language cannot measure it, by language.
    pub coverage_unsupported: BTreeMap<String, usize>,
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
    checks: check::Checks,
    /// How many of this run's tasks share each environment commit (repository,
    /// `environment_setup_commit`, version): an image checked by its only task's runs
    /// needs no check of its own.
    sharing: HashMap<EnvironmentKey, usize>,
}

/// The tasks that [`Context::sharing`] counts together.
type EnvironmentKey = (String, String, String);

fn environment_key(candidate: &Candidate) -> EnvironmentKey {
    (candidate.repo.to_string(), candidate.environment_setup_commit.clone(), candidate.version.clone())
}

impl Context<'_> {
    /// Whether `candidate` is the only task of this run at its environment commit: its
    /// own first run checks the image instead of a check run ([`ladder`]).
    fn alone_in_its_environment(&self, candidate: &Candidate) -> bool {
        self.sharing.get(&environment_key(candidate)).copied().unwrap_or(0) <= 1
    }

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
    let data_dir_label = sandbox::swept_label(backend.as_ref(), &settings.data_dir).await;
    let (selected, persist, explicit): (Vec<Candidate>, bool, BTreeSet<String>) = match work {
        Work::Store { repos, instances } => {
            let all = store_selection(&store, &repos, &instances)?;
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
        checks: check::Checks::default(),
        sharing: todo.iter().map(environment_key).fold(HashMap::new(), |mut counts, key| {
            *counts.entry(key).or_default() += 1;
            counts
        }),
    };
    reporter.start("validate", Some(todo.len() as u64));
    let jobs = todo.into_iter().map(|candidate| {
        let context = &context;
        async move { validate_one(context, &candidate).await }
    });
    let (mut outcomes, stopped) =
        crate::interrupt::pooled(&mut interruption, jobs, settings.workers, |_| context.reporter.advance(1)).await;
    if let Some(interrupt) = stopped {
        tracing::warn!(signal = %interrupt, "interrupted: removing running containers; finished runs stay stored for the next run");
        summary.interrupted = true;
    }
    backend.remove_running().await;
    reporter.finish();

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
            Some(GoldenCoverage::Unsupported { language }) => {
                *summary.coverage_unsupported.entry(language.clone()).or_default() += 1
            }
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

/// The store's candidates of `repos` (all when empty), only `instances` when some are
/// named; warns about each name that selects nothing.
pub fn store_selection(
    store: &Store,
    repos: &[crate::model::RepoSlug],
    instances: &[String],
) -> Result<Vec<Candidate>, StoreError> {
    let mut all = candidates::candidates(store.connection(), repos)?;
    if !instances.is_empty() {
        all.retain(|candidate| instances.contains(&candidate.instance_id));
    }
    warn_unmatched(repos, instances, &all);
    Ok(all)
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
        build_secs: 0.0,
        test_secs: 0.0,
        total_secs: 0.0,
    };
    let result = validate_task(context, candidate, &mut outcome).await;
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
                    fail_to_pass_no_result_before: labels.no_result_before.clone(),
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

/// One task: its project, the environment the loop settles for it, and with
/// `--coverage` the golden tests' change coverage there.
async fn validate_task(
    context: &Context<'_>,
    candidate: &Candidate,
    outcome: &mut TaskOutcome,
) -> Result<Labels, Dropped> {
    let project = project::Project::read(context, candidate).await?;
    outcome.runtime_needed = project.runtime_needed.clone();
    let settled = ladder::settle(context, &project, outcome).await?;
    // Coverage is stored in the same transaction as the labels, so a task that gets
    // here has none yet (finished tasks with coverage are skipped by `run`).
    if context.settings.coverage {
        let started = Instant::now();
        outcome.coverage = Some(measure_coverage(context, &project, &settled).await);
        outcome.coverage_secs = started.elapsed().as_secs_f64();
    }
    Ok(settled.labels)
}

/// The golden tests' change coverage in the settled environment, or why the language
/// cannot measure it.
async fn measure_coverage(context: &Context<'_>, project: &project::Project<'_>, settled: &Settled) -> GoldenCoverage {
    let instance_id = &project.candidate.instance_id;
    let ecosystem = project.ecosystem;
    if !ecosystem.measures_change_coverage() {
        return GoldenCoverage::Unsupported { language: ecosystem.language().to_string() };
    }
    let request = swt::coverage::CoverageRequest {
        candidate: project.candidate,
        spec: &settled.spec,
        image: &settled.built.tag,
        mirror: project.mirror.clone(),
        test_files: &settled.test_files,
        logs_dir: context.settings.data_dir.join("logs"),
        data_dir_label: context.data_dir_label.clone(),
    };
    let measured = swt::coverage::measure(context.backend.as_ref(), ecosystem, &request, context.settings.limits).await;
    match &measured {
        GoldenCoverage::Measured { coverage, .. } => tracing::info!(
            %instance_id, executable_lines = coverage.executable, covered = coverage.covered,
            "measured the golden tests' change coverage"
        ),
        GoldenCoverage::Failed { detail } => tracing::warn!(%instance_id, %detail, "could not measure coverage"),
        GoldenCoverage::Unsupported { .. } => {}
    }
    measured
}
