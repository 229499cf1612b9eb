//! The probe stage: does a task's tests reject wrong fixes? For each validated task,
//! mutants of its gold patch ([`mutants`]: a hunk left out, a line reverted, a
//! condition negated, ...) run in the task's own environment image, under the same
//! sandbox as validate's runs, against its FAIL_TO_PASS tests and the PASS_TO_PASS
//! tests of the touched test files. A mutant that passes every one of them is a wrong
//! fix the benchmark would score as resolved: it is kept as evidence. Each task gets
//! a [`ProbeRecord`]: its `mutation_score` (killed / (killed + survived)), every
//! mutant's outcome ([`crate::mutation::judge`]) and its survivors; the screen turns
//! survivors into the quality flag `weak_tests`.
//!
//! One container per task runs all its mutants ([`crate::mutation::script`]). Resume: each container's
//! verdicts are stored as soon as it ends, keyed by the task's probe hash (its
//! content, labels, environment image, and probe's settings), and the record with
//! the funnel row once every chosen mutant has one; a killed probe skips recorded
//! tasks and runs only the mutants of a task that have no verdict yet. A task whose
//! environment image or mirror is gone gets that reason and no record (it is probed
//! when they are back); one whose gold patch no longer applies, or none of whose
//! mutants is viable, gets a record without a score and the reason.
//!
//! [`run`] probes the store's tasks ([`Work::Store`]) or given targets
//! ([`Work::Targets`]: `probe --input` rows, validated first by the caller);
//! [`rows`] writes `--input` rows back.

pub mod rows;
mod settings;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;
use sha2::{Digest, Sha256};

pub use settings::{InvalidProbeSetting, ProbeConfig, ProbeFlags, ProbeSettings};

use crate::ecosystem::Ecosystem;
use crate::model::drop_reason::ProbeDropReason;
use crate::model::probe::{Mutant, MutantRun, MutantStatus, ProbeRecord, task_hash};
use crate::model::{Candidate, EnvironmentSpec, Rejection, RunPhase, Stage};
use crate::mutation::{self as mutants, judge, script};
use crate::progress::Reporter;
use crate::sandbox::{self, Backend, Job, Limits, Owner};
use crate::store::{self, Store, StoreError};

/// The version of the operators and of how a run is judged: a change makes every
/// record stale, so tasks are probed again.
pub const PROBE_VERSION: u32 = 7;

/// The time zone of a mutant's run: UTC, as in validate's runs (a test that depends
/// on it was labelled there in UTC).
const TIME_ZONE: &str = "UTC";

#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A validated task to probe: its candidate, labels and environment.
#[derive(Debug, Clone)]
pub struct Target {
    pub candidate: Candidate,
    pub fail_to_pass: Vec<String>,
    pub pass_to_pass: Vec<String>,
    /// The environment image the task was validated in.
    pub image: Option<String>,
    /// That image's spec; read from the store by image when `None`.
    pub spec: Option<EnvironmentSpec>,
}

/// What to probe.
#[derive(Debug, Clone)]
pub enum Work {
    /// The store's validated tasks (of `settings.repos` / `settings.instances`);
    /// records and funnel rows go to the store.
    Store,
    /// Given targets (`--input` rows); mutant runs are stored for resume, records
    /// are returned (and stored too, so a rerun skips them).
    Targets(Vec<Target>),
}

/// Why a task has no record, or no score.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unscored {
    pub reason: ProbeDropReason,
    pub detail: String,
}

/// The outcome of one task.
#[derive(Debug, Clone, Serialize)]
pub struct TaskProbe {
    pub instance_id: String,
    pub repo: String,
    /// The record (also for a task without a score, when that is definitive).
    pub record: Option<ProbeRecord>,
    /// Why the task has no score, or `weak_tests` when a mutant survived; `None` when
    /// every viable mutant was killed.
    pub set_aside: Option<Unscored>,
    /// The record was stored by an earlier run and still holds.
    pub unchanged: bool,
}

/// The stage's summary.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Summary {
    pub selected: usize,
    pub skipped_unchanged: usize,
    pub probed: usize,
    pub with_survivors: usize,
    pub all_killed: usize,
    /// Tasks without a score, or set aside for weak tests, by reason.
    pub set_aside: BTreeMap<ProbeDropReason, usize>,
    /// Mutant runs of this session by outcome.
    pub mutants: BTreeMap<MutantStatus, usize>,
    /// Seconds of this session's containers, per task probed.
    pub task_secs: Vec<f64>,
    pub elapsed_secs: f64,
    pub interrupted: bool,
    pub outcomes: Vec<TaskProbe>,
}

impl Summary {
    /// Interrupted, or a task's containers failed (the machinery, not the task).
    pub fn failed(&self) -> bool {
        self.interrupted || self.set_aside.keys().any(|reason| reason.is_failure())
    }
}

/// The hash a task's mutant runs are kept under: what the mutants and their
/// verdicts depend on (the task, [`task_hash`], and probe's settings).
pub fn probe_hash(target: &Target, config: &ProbeConfig) -> String {
    let mut hasher = Sha256::new();
    hasher.update(target_hash(target).as_bytes());
    hasher.update([0]);
    hasher.update(probe_key(config).as_bytes());
    hex::encode(hasher.finalize())
}

/// [`task_hash`] of a target.
fn target_hash(target: &Target) -> String {
    task_hash(&target.candidate, &target.fail_to_pass, &target.pass_to_pass, target.image.as_deref())
}

/// Probe's version and the settings a record depends on, as text.
pub fn probe_key(config: &ProbeConfig) -> String {
    format!(
        "probe {PROBE_VERSION}: mutants={} stop_at_first_failure={} timeout_factor={} min_timeout_secs={}",
        config.mutants, config.stop_at_first_failure, config.timeout_factor, config.min_timeout_secs
    )
}

struct Context<'a> {
    settings: &'a ProbeSettings,
    backend: Arc<dyn Backend>,
    store: Mutex<Store>,
    /// Store targets write funnel rows; `--input` targets do not.
    funnel: bool,
    redo: BTreeSet<String>,
    data_dir_label: String,
    mutant_counts: Mutex<BTreeMap<MutantStatus, usize>>,
}

/// Probes `work`. Ctrl-C or SIGTERM stops it: running containers are removed, and
/// the verdicts already stored stay for the next run.
pub async fn run(
    settings: &ProbeSettings,
    backend: Arc<dyn Backend>,
    store: Store,
    work: Work,
    reporter: &dyn Reporter,
) -> Result<Summary, ProbeError> {
    let started = Instant::now();
    let mut interruption = crate::interrupt::Interruption::listen();
    let data_dir_label =
        fs_err::canonicalize(&settings.data_dir).unwrap_or_else(|_| settings.data_dir.clone()).display().to_string();
    let removed = backend.sweep(&data_dir_label).await;
    if removed > 0 {
        tracing::info!(removed, "removed containers left by an earlier, interrupted run");
    }
    let (targets, funnel) = match work {
        Work::Store => (store_targets(&store, settings)?, true),
        Work::Targets(targets) => (targets, false),
    };
    let context = Context {
        settings,
        backend: backend.clone(),
        store: Mutex::new(store),
        funnel,
        redo: settings.instances.iter().cloned().collect(),
        data_dir_label,
        mutant_counts: Mutex::default(),
    };
    let mut summary = Summary { selected: targets.len(), ..Summary::default() };
    reporter.start("probe", Some(targets.len() as u64));
    let jobs = targets.into_iter().map(|target| {
        let context = &context;
        async move { probe_one(context, &target).await }
    });
    let (mut outcomes, stopped) =
        crate::interrupt::pooled(&mut interruption, jobs, settings.workers, |_| reporter.advance(1)).await;
    if let Some(interrupt) = stopped {
        tracing::warn!(signal = %interrupt, "interrupted: removing running containers; stored verdicts stay for the next run");
        summary.interrupted = true;
    }
    backend.remove_running().await;
    reporter.finish();
    outcomes.sort_by(|a, b| a.0.instance_id.cmp(&b.0.instance_id));
    for (outcome, seconds) in &outcomes {
        if outcome.unchanged {
            summary.skipped_unchanged += 1;
        } else {
            summary.probed += 1;
            summary.task_secs.push(*seconds);
        }
        match &outcome.set_aside {
            None => summary.all_killed += 1,
            Some(unscored) => {
                if unscored.reason == ProbeDropReason::WeakTests {
                    summary.with_survivors += 1;
                }
                *summary.set_aside.entry(unscored.reason).or_default() += 1;
            }
        }
    }
    summary.mutants = context.mutant_counts.lock().expect("not poisoned").clone();
    summary.outcomes = outcomes.into_iter().map(|(outcome, _)| outcome).collect();
    summary.elapsed_secs = started.elapsed().as_secs_f64();
    Ok(summary)
}

/// The store's validated tasks as targets (of the selected repositories and
/// instances), with a warning for each `--instance` that names none.
fn store_targets(store: &Store, settings: &ProbeSettings) -> Result<Vec<Target>, ProbeError> {
    let mut tasks = store::candidates::tasks(store.connection(), &settings.repos)?;
    if !settings.instances.is_empty() {
        tasks.retain(|task| settings.instances.contains(&task.candidate.instance_id));
        for instance in &settings.instances {
            if !tasks.iter().any(|task| &task.candidate.instance_id == instance) {
                tracing::warn!(instance_id = %instance, "--instance {instance} names no validated task; check the id (`export --stage tasks` lists them)");
            }
        }
    }
    Ok(tasks
        .into_iter()
        .map(|task| Target {
            candidate: task.candidate,
            fail_to_pass: task.fail_to_pass,
            pass_to_pass: task.pass_to_pass,
            image: task.image,
            spec: None,
        })
        .collect())
}

/// One task, with the seconds its containers took this session.
async fn probe_one(context: &Context<'_>, target: &Target) -> (TaskProbe, f64) {
    let started = Instant::now();
    let candidate = &target.candidate;
    let hash = probe_hash(target, &context.settings.config);
    let mut outcome = TaskProbe {
        instance_id: candidate.instance_id.clone(),
        repo: candidate.repo.to_string(),
        record: None,
        set_aside: None,
        unchanged: false,
    };
    let stored = {
        let store = context.store.lock().expect("not poisoned");
        if context.redo.contains(&candidate.instance_id) {
            None
        } else {
            store::probe::record(store.connection(), &candidate.instance_id).ok().flatten()
        }
    };
    let holds = |record: &ProbeRecord| {
        record.content_hash == target_hash(target) && record.probe_key == probe_key(&context.settings.config)
    };
    if let Some(record) = stored.filter(holds) {
        outcome.set_aside = set_aside_of(&record);
        outcome.record = Some(record);
        outcome.unchanged = true;
        return (outcome, 0.0);
    }
    let result = probe_task(context, target, &hash).await;
    let seconds = started.elapsed().as_secs_f64();
    match result {
        Ok(mut record) => {
            record.seconds = seconds;
            outcome.set_aside = set_aside_of(&record);
            if let Err(error) = record_outcome(context, candidate, Some((&hash, &record)), outcome.set_aside.as_ref()) {
                tracing::error!(instance_id = %candidate.instance_id, %error, "could not store the probe record");
            }
            log_outcome(candidate, &record);
            outcome.record = Some(record);
        }
        Err(unscored) => {
            tracing::warn!(instance_id = %candidate.instance_id, reason = %unscored.reason, detail = %unscored.detail, "not probed");
            if let Err(error) = record_outcome(context, candidate, None, Some(&unscored)) {
                tracing::error!(instance_id = %candidate.instance_id, %error, "could not store the funnel row");
            }
            outcome.set_aside = Some(unscored);
        }
    }
    (outcome, seconds)
}

fn log_outcome(candidate: &Candidate, record: &ProbeRecord) {
    tracing::info!(
        instance_id = %candidate.instance_id,
        mutants = record.runs.len(),
        killed = record.count(MutantStatus::Killed),
        survived = record.count(MutantStatus::Survived),
        stillborn = record.count(MutantStatus::Stillborn),
        timeout = record.count(MutantStatus::Timeout),
        mutation_score = ?record.mutation_score,
        "probed"
    );
}

/// Why a record sets its task aside: its survivors, or why it has no score.
fn set_aside_of(record: &ProbeRecord) -> Option<Unscored> {
    if let Some(survivor) = record.survivors().first() {
        return Some(Unscored { reason: ProbeDropReason::WeakTests, detail: survivor.what_the_tests_miss() });
    }
    if record.mutation_score.is_some() {
        return None;
    }
    let (code, detail) = record.no_score_reason.split_once(": ").unwrap_or(("no_viable_mutant", ""));
    Some(Unscored {
        reason: code.parse().unwrap_or(ProbeDropReason::NoViableMutant),
        detail: if detail.is_empty() { record.no_score_reason.clone() } else { detail.to_string() },
    })
}

/// Stores a task's record (when there is one) and its funnel row in one transaction.
fn record_outcome(
    context: &Context<'_>,
    candidate: &Candidate,
    record: Option<(&str, &ProbeRecord)>,
    set_aside: Option<&Unscored>,
) -> Result<(), StoreError> {
    let mut store = context.store.lock().expect("not poisoned");
    let funnel = context.funnel;
    store.transaction(|transaction| -> Result<(), StoreError> {
        if let Some((hash, record)) = record {
            store::probe::upsert(transaction, &candidate.repo, hash, record)?;
        }
        if !funnel {
            return Ok(());
        }
        match set_aside {
            None => store::record_passed(transaction, Stage::Probe, &candidate.repo, &candidate.instance_id),
            Some(unscored) => store::record_dropped(
                transaction,
                &Rejection {
                    stage: Stage::Probe,
                    repo: candidate.repo.clone(),
                    item: candidate.instance_id.clone(),
                    reason: unscored.reason.as_str().to_string(),
                    detail: unscored.detail.clone(),
                },
            ),
        }
    })
}

fn unscored(reason: ProbeDropReason, detail: impl Into<String>) -> Unscored {
    Unscored { reason, detail: detail.into() }
}

/// A record without a score, whose reason is definitive for this content.
fn without_score(target: &Target, config: &ProbeConfig, candidates: usize, why: Unscored) -> ProbeRecord {
    ProbeRecord {
        instance_id: target.candidate.instance_id.clone(),
        content_hash: target_hash(target),
        probe_key: probe_key(config),
        mutation_score: None,
        no_score_reason: format!("{}: {}", why.reason, why.detail),
        candidates,
        runs: Vec::new(),
        seconds: 0.0,
    }
}

/// What a task's containers need, found before any of them runs.
struct Prepared {
    ecosystem: &'static dyn Ecosystem,
    spec: EnvironmentSpec,
    image: String,
    mirror: PathBuf,
    test_files: Vec<String>,
    timeout: Duration,
}

/// Probes one task: the record (with a score, or without one and why), or why it
/// could not be probed now.
async fn probe_task(context: &Context<'_>, target: &Target, hash: &str) -> Result<ProbeRecord, Unscored> {
    let config = &context.settings.config;
    let candidate = &target.candidate;
    let settings = context.settings;
    let mirror = crate::git::find_mirror(&settings.data_dir, settings.mirrors_dir.as_deref(), &candidate.repo)
        .map_err(|error| unscored(ProbeDropReason::NoMirror, crate::error_chain(&error)))?;
    let before = {
        let (mirror, base_commit, patch) = (mirror.clone(), candidate.base_commit.clone(), candidate.patch.clone());
        tokio::task::spawn_blocking(move || mutants::files_before(&mirror, &base_commit, &patch))
            .await
            .unwrap_or_default()
    };
    let made = mutants::make(&candidate.patch, &candidate.test_patch, config.mutants, &before);
    if made.mutants.is_empty() {
        return Ok(without_score(
            target,
            config,
            made.candidates,
            unscored(
                ProbeDropReason::NoViableMutant,
                "no mutant could be made: the gold patch changes no line of code the operators edit (only comments, docs, data or configuration)",
            ),
        ));
    }
    let prepared = prepare(context, target, mirror).await?;
    let listed = judge::listed_tests(&target.fail_to_pass, &target.pass_to_pass);
    let mut verdicts: BTreeMap<String, MutantRun> = {
        let store = context.store.lock().expect("not poisoned");
        store::probe::mutant_runs(store.connection(), &candidate.instance_id, hash)
            .map_err(|error| unscored(ProbeDropReason::ContainerFailed, error.to_string()))?
    };
    verdicts.retain(|id, _| made.mutants.iter().any(|mutant| &mutant.id == id));
    let mut container = 0;
    loop {
        let pending: Vec<usize> =
            (0..made.mutants.len()).filter(|&index| !verdicts.contains_key(&made.mutants[index].id)).collect();
        if pending.is_empty() {
            break;
        }
        container += 1;
        let ran = run_container(context, target, &prepared, &made.mutants, &pending, &listed, container).await?;
        if let ContainerEnd::Definitive(why) = ran.end {
            return Ok(without_score(target, config, made.candidates, why));
        }
        let mut new_runs = ran.verdicts;
        if new_runs.is_empty() {
            // The container ended before the first pending mutant had a verdict (its
            // own memory or time): that mutant gets it, so the next container moves on.
            let mutant = made.mutants[pending[0]].clone();
            let (status, detail) = if ran.timed_out {
                (MutantStatus::Timeout, "the container ran past its time limit during its tests".to_string())
            } else {
                (MutantStatus::Stillborn, format!("the container ended during its tests ({})", ran.ended_how))
            };
            new_runs.push(MutantRun { mutant, status, killing_tests: Vec::new(), detail, seconds: 0.0 });
        }
        {
            let mut store = context.store.lock().expect("not poisoned");
            store
                .transaction(|transaction| {
                    store::probe::insert_mutant_runs(transaction, &candidate.instance_id, hash, &new_runs)
                })
                .map_err(|error| unscored(ProbeDropReason::ContainerFailed, error.to_string()))?;
        }
        let mut counts = context.mutant_counts.lock().expect("not poisoned");
        for run in new_runs {
            *counts.entry(run.status).or_default() += 1;
            verdicts.insert(run.mutant.id.clone(), run);
        }
    }
    let runs: Vec<MutantRun> = made.mutants.iter().filter_map(|mutant| verdicts.get(&mutant.id).cloned()).collect();
    let mutation_score = ProbeRecord::score_of(&runs);
    let no_score_reason = if mutation_score.is_some() {
        String::new()
    } else {
        format!(
            "{}: none of the {} mutants applied, built and ran to a verdict ({} stillborn, {} timed out)",
            ProbeDropReason::NoViableMutant,
            runs.len(),
            runs.iter().filter(|run| run.status == MutantStatus::Stillborn).count(),
            runs.iter().filter(|run| run.status == MutantStatus::Timeout).count()
        )
    };
    Ok(ProbeRecord {
        instance_id: candidate.instance_id.clone(),
        content_hash: target_hash(target),
        probe_key: probe_key(config),
        mutation_score,
        no_score_reason,
        candidates: made.candidates,
        runs,
        seconds: 0.0,
    })
}

/// Finds the task's environment (its image and spec) and test files, and its
/// mutants' time limit.
async fn prepare(context: &Context<'_>, target: &Target, mirror: PathBuf) -> Result<Prepared, Unscored> {
    let settings = context.settings;
    let candidate = &target.candidate;
    let revalidate = |what: &str| {
        format!(
            "{what}; run `swe-harvest validate --instance {}` (or `validate --input` for rows) to build it again",
            candidate.instance_id
        )
    };
    let Some(image) = target.image.clone() else {
        return Err(unscored(ProbeDropReason::EnvironmentMissing, revalidate("the task records no environment image")));
    };
    let (spec, slowest_post) = {
        let store = context.store.lock().expect("not poisoned");
        let spec = match &target.spec {
            Some(spec) => Some(spec.clone()),
            None => store::validation::environment_spec_for_image(store.connection(), &image)
                .map_err(|error| unscored(ProbeDropReason::ContainerFailed, error.to_string()))?,
        };
        let runs = store::validation::runs(store.connection(), &candidate.instance_id).unwrap_or_default();
        let slowest = runs
            .iter()
            .filter(|run| run.phase == RunPhase::Post && run.image == image)
            .map(|run| run.duration_secs)
            .fold(None, |slowest: Option<f64>, seconds| Some(slowest.map_or(seconds, |s| s.max(seconds))));
        (spec, slowest)
    };
    let Some(spec) = spec else {
        return Err(unscored(
            ProbeDropReason::EnvironmentMissing,
            revalidate(&format!("the store has no environment spec of the image `{image}`")),
        ));
    };
    if context.backend.image_id(&image).await.is_none() && !context.backend.pull(&image).await {
        return Err(unscored(
            ProbeDropReason::EnvironmentMissing,
            revalidate(&format!("the environment image `{image}` is gone (removed by `gc` or by hand?)")),
        ));
    }
    let ecosystem = crate::ecosystem::for_spec(&spec)
        .map_err(|error| unscored(ProbeDropReason::EnvironmentMissing, error.to_string()))?;
    let test_files = ecosystem.tests_to_run(&candidate.test_patch, &spec);
    let timeout = settings.config.mutant_timeout(slowest_post, settings.limits.run_timeout);
    Ok(Prepared { ecosystem, spec, image, mirror, test_files, timeout })
}

/// How a container ended.
enum ContainerEnd {
    /// Its mutants ran (all, or until it stopped).
    Ran,
    /// The task cannot be probed in this environment: the install, the test patch or
    /// the gold patch failed.
    Definitive(Unscored),
}

struct ContainerRun {
    end: ContainerEnd,
    verdicts: Vec<MutantRun>,
    timed_out: bool,
    ended_how: String,
}

/// Runs the `pending` mutants of a task in one container and judges each that ran.
async fn run_container(
    context: &Context<'_>,
    target: &Target,
    prepared: &Prepared,
    mutants: &[Mutant],
    pending: &[usize],
    listed: &BTreeSet<String>,
    container: u32,
) -> Result<ContainerRun, Unscored> {
    let settings = context.settings;
    let candidate = &target.candidate;
    let ecosystem = prepared.ecosystem;
    let gold_files = mutants::patch::Patch::parse(&candidate.patch);
    let (mut existing, mut created) = (Vec::new(), Vec::new());
    for file in &gold_files.files {
        if file.created { created.push(file.path.clone()) } else { existing.push(file.path.clone()) }
    }
    let test_command = if settings.config.stop_at_first_failure {
        ecosystem.stop_at_first_failure(&prepared.spec.test_command)
    } else {
        prepared.spec.test_command.clone()
    };
    let script = script::ProbeScript {
        install: true,
        version: &candidate.version,
        test_command: &test_command,
        test_files: &prepared.test_files,
        existing_files: &existing,
        created_files: &created,
        mutants: pending,
        timeout: prepared.timeout,
    }
    .render(ecosystem);
    let mut files = vec![
        ("test.patch".to_string(), candidate.test_patch.clone().into_bytes(), 0o644),
        ("gold.patch".to_string(), candidate.patch.clone().into_bytes(), 0o644),
    ];
    for &index in pending {
        files.push((script::patch_file(index), mutants[index].patch.clone().into_bytes(), 0o644));
    }
    let token = sandbox::script::new_token();
    let log_path = settings
        .data_dir
        .join("logs")
        .join("probe")
        .join(&candidate.instance_id)
        .join(format!("container-{container}.log"));
    let job = Job {
        instance_id: candidate.instance_id.clone(),
        attempt: 0,
        image: prepared.image.clone(),
        user: Owner::UNPRIVILEGED,
        testbed: Some((prepared.mirror.clone(), candidate.base_commit.clone())),
        files,
        script,
        token: token.clone(),
        env: vec![format!("TZ={TIME_ZONE}")],
        phases: pending.len() as u32,
        log_path: log_path.clone(),
        data_dir_label: context.data_dir_label.clone(),
    };
    let limits = Limits { run_timeout: prepared.timeout, ..settings.limits };
    let output = sandbox::run_job(context.backend.as_ref(), &job, limits)
        .await
        .map_err(|error| unscored(ProbeDropReason::ContainerFailed, error.to_string()))?;
    let steps = sandbox::script::split_steps(&output.log, &token);
    let log = log_path.display();
    for (step, reason) in [
        ("install", ProbeDropReason::InstallFailed),
        ("test_patch", ProbeDropReason::InstallFailed),
        (script::GOLD_CHECK, ProbeDropReason::GoldPatchDoesNotApply),
    ] {
        match steps.get(step) {
            Some(output) if output.exit_code == Some(0) => {}
            Some(output) if output.exit_code.is_some() => {
                let text = sandbox::script::last_lines(&output.text, 3, " | ");
                let what = match step {
                    "install" => "the offline install failed in the task's environment",
                    "test_patch" => "the test patch did not apply",
                    _ => "the gold patch no longer applies to the base commit",
                };
                return Ok(ContainerRun {
                    end: ContainerEnd::Definitive(unscored(reason, format!("{what}: {text} (log: {log})"))),
                    verdicts: Vec::new(),
                    timed_out: output.exit_code.is_none(),
                    ended_how: String::new(),
                });
            }
            _ => {
                // The container ended before the step did: the engine, limits or time.
                return Err(unscored(
                    ProbeDropReason::ContainerFailed,
                    format!(
                        "the container ended during `{step}` (exit {:?}{}); log: {log}",
                        output.exit_code,
                        if output.oom_killed { ", out of memory" } else { "" }
                    ),
                ));
            }
        }
    }
    let mut verdicts = Vec::new();
    for &index in pending {
        let apply = steps.get(&script::apply_step(index));
        let phase_name = script::test_phase(index);
        let tests = steps.get(&phase_name);
        let results = tests.map(|step| {
            let report = output.reports.get(&format!("{phase_name}.xml")).map(String::as_str);
            ecosystem.parse_results(report, &step.text, &prepared.test_files).0
        });
        let phase = judge::MutantPhase {
            apply_exit: apply.and_then(|step| step.exit_code),
            apply_text: apply.map_or("", |step| step.text.as_str()),
            tests_exit: tests.and_then(|step| step.exit_code),
            results: results.as_ref(),
        };
        let Some(verdict) = judge::judge(&phase, listed, prepared.timeout.as_secs()) else { continue };
        let seconds = sandbox::script::phase_seconds(&output.log, &token, &phase_name).unwrap_or_default();
        verdicts.push(MutantRun {
            mutant: mutants[index].clone(),
            status: verdict.status,
            killing_tests: verdict.killing_tests,
            detail: verdict.detail,
            seconds,
        });
    }
    Ok(ContainerRun {
        end: ContainerEnd::Ran,
        verdicts,
        timed_out: output.timed_out,
        ended_how: if output.oom_killed {
            "out of memory".to_string()
        } else {
            format!("exit {:?}; log: {log}", output.exit_code)
        },
    })
}
