//! [`settle`]: the one loop that settles a task's environment. It starts at the first
//! rung (a complete per-repository config entry, else the ecosystem's inference at the
//! environment commit, with the packages the patches add), then, step by step: build
//! the rung's image, check it (an inferred spec's image must run the touched test
//! files' existing tests at the environment commit: [`super::check`]), run the task in
//! it ([`super::attempt`]) and judge the runs ([`super::judge`]). After a setback (the
//! image did not build, did not pass its check, a run failed, or the runs ran nothing
//! or may have missed a package) it asks the project's ecosystem for the next move
//! ([`crate::ecosystem::Ecosystem::next_move`]): another rung, the same rung with
//! packages added, or stop. The winning spec carries its rung
//! ([`crate::model::Rung`]), which the environment record, the `--input` rows and the
//! release show.
//!
//! The loop's own rules, the same for every language:
//! - an image that serves only this task in the run is checked by the task's own
//!   first run (at its base commit, the test patch applied) instead of a check run of
//!   its own: when that run does not install or runs no test to a verdict, the rung
//!   failed its check, with that run's output; otherwise the other runs follow. The
//!   check run of a shared image costs one container for all its tasks; a lone task
//!   paid it (about 4 s of a warm Python task's 7) for nothing its runs do not show;
//! - a spec from a complete config is built as given: no check, no other rung (the
//!   config is the user's word; `validate --write-config` writes the rung that worked
//!   into it); it may still get packages;
//! - a packages move is undone when its image does not build or its runs run no test:
//!   the runs of the rung it started from stand;
//! - once the task has run somewhere, a later rung that fails leaves those runs'
//!   verdict standing; before that, the task is dropped with the last rung's reason
//!   and each rung's failure;
//! - a validate stopped after a packages move resumes in that environment (its stored
//!   runs say where it was);
//! - the run files of an environment the loop leaves are set aside in a folder of
//!   their own ([`super::rung_logs`]), brought back when its runs give the verdict;
//! - a task lost to its environment while its project needs a runtime that no base
//!   image provides is dropped as `runtime_unavailable`, naming that runtime;
//! - a build that the proxy refused a host (one no registry setting names) climbs to
//!   no other runtime and to no runner pins: neither changes the hosts the project's
//!   own declarations reach (ruff's crates from GitHub: the other Rust toolchain's
//!   build was refused the same host, 19 s later); nor, by the ecosystems' usual move,
//!   to CI's Debian packages (`ci-packages`). A rung that changes how the
//!   dependencies resolve (relaxed packages, npm's peer dependencies) is still tried.

use super::attempt::{self, Attempts};
use super::check;
use super::judge::{self, Judged};
use super::project::Project;
use super::rung_logs;
use super::{Context, Dropped, TaskOutcome, dropped, spec};
use crate::ecosystem::{InferError, Move, RunsSeen, Setback};
use crate::model::drop_reason::ValidateDropReason;
use crate::model::labels::Labels;
use crate::model::{Candidate, EnvironmentSpec, Rung as ModelRung};
use crate::sandbox::images::{BuiltImage, EnvironmentRequest, ImageError, Recipe};
use crate::store::validation;

/// A settled environment: the spec and image the task's labels come from.
pub(super) struct Settled {
    pub spec: EnvironmentSpec,
    pub built: BuiltImage,
    pub test_files: Vec<String>,
    pub labels: Labels,
}

/// A rung whose image is built: what its check needs.
pub(super) struct Rung<'a> {
    pub project: &'a Project<'a>,
    pub spec: &'a EnvironmentSpec,
    pub built: &'a BuiltImage,
    pub test_files: &'a [String],
}

/// The task's runs in one environment, and their judgement.
struct Ran {
    spec: EnvironmentSpec,
    built: BuiltImage,
    attempts: Attempts,
    judged: Judged,
    /// Where its run files were set aside when the ladder left it ([`rung_logs`]).
    logs_set_aside: Option<std::path::PathBuf>,
}

/// The rung a packages move started from, with its runs when it had any.
struct Base {
    spec: EnvironmentSpec,
    built: BuiltImage,
    ran: Option<Ran>,
}

/// Where the loop is.
enum Step {
    /// A rung to build and, when inferred, check.
    Rung(EnvironmentSpec),
    /// An environment to run the task in; `base` when it is a packages move.
    Run { spec: EnvironmentSpec, built: BuiltImage, base: Option<Box<Base>> },
    /// The same rung as `base` with `packages` added.
    Packages { base: Box<Base>, packages: Vec<String> },
    /// The runs to ask the ecosystem about.
    Ran(Ran),
    /// The end: the settled environment, or the task's drop.
    Done(Result<Settled, Dropped>),
}

/// Settles the task's environment (see the module's text): its labels, or its drop.
/// Records in `outcome` the spec and image the task last ran in, its runs and what
/// they showed.
pub(super) async fn settle(
    context: &Context<'_>,
    project: &Project<'_>,
    outcome: &mut TaskOutcome,
) -> Result<Settled, Dropped> {
    let mut ladder = Ladder::new(context, project);
    let settled = ladder.walk(outcome).await;
    outcome.build_secs = ladder.build_secs;
    if let Some(observed) = ladder.observed {
        outcome.observed = observed;
    }
    settled.map_err(|lost| runtime_unavailable(project, outcome.spec.as_ref(), lost))
}

/// The loop's state: the rungs tried since the first, and how each failed.
struct Ladder<'a> {
    context: &'a Context<'a>,
    project: &'a Project<'a>,
    tried: Vec<EnvironmentSpec>,
    failures: Vec<String>,
    /// The last environment the task ran in: its verdict stands when no later one runs.
    last_ran: Option<Ran>,
    /// How many times the ecosystem was asked about runs.
    runs_seen: usize,
    /// Whether the store was asked for packages an earlier validate added.
    remembered_looked: bool,
    /// What the runs whose verdict ended the loop showed of every test.
    observed: Option<Option<Labels>>,
    test_files: Vec<String>,
    inferred: bool,
    log_dir: std::path::PathBuf,
    /// Seconds in image builds, failed ones and waits for another task's build included.
    build_secs: f64,
    /// How many folders of run files were set aside ([`rung_logs`]).
    folders_set_aside: usize,
}

impl<'a> Ladder<'a> {
    fn new(context: &'a Context<'a>, project: &'a Project<'a>) -> Ladder<'a> {
        let log_dir = context.settings.data_dir.join("logs").join("validate").join(&project.candidate.instance_id);
        Ladder {
            context,
            project,
            tried: Vec::new(),
            failures: Vec::new(),
            last_ran: None,
            runs_seen: 0,
            remembered_looked: false,
            observed: None,
            test_files: Vec::new(),
            inferred: false,
            log_dir,
            build_secs: 0.0,
            folders_set_aside: 0,
        }
    }

    async fn walk(&mut self, outcome: &mut TaskOutcome) -> Result<Settled, Dropped> {
        let first = first_rung(self.project)?;
        outcome.spec = Some(first.clone());
        self.test_files = test_files(self.project, &first)?;
        self.inferred = first.source == "inferred";
        rung_logs::clear(&self.log_dir);
        let mut step = Step::Rung(first);
        loop {
            step = match step {
                Step::Rung(spec) => self.reach(spec).await,
                Step::Run { spec, built, base } => self.run(spec, built, base, outcome).await,
                Step::Packages { base, packages } => self.add_packages(base, packages, outcome).await,
                Step::Ran(ran) => self.after_runs(ran).await,
                Step::Done(end) => return end,
            };
        }
    }

    /// Builds a rung's image and, for an inferred spec, checks it: the environment to
    /// run the task in, or the ecosystem's next move after the setback.
    async fn reach(&mut self, spec: EnvironmentSpec) -> Step {
        let built = match self.build(&spec).await {
            Ok(built) => built,
            Err(error) => {
                let ImageError::BuildFailed { log, .. } = &error else {
                    // Nothing a rung can change: a missing base image, the engine, a time limit.
                    self.failures.push(error.to_string());
                    self.tried.push(spec);
                    return self.give_up(error.reason(), None);
                };
                let log = fs_err::read_to_string(log).unwrap_or_default();
                let detail = error.to_string();
                let refused = crate::sandbox::egress::refused_in(&detail);
                let setback = Setback::BuildFailed { log: &log, refused: &refused };
                return self.next_rung(spec, error.reason(), detail, &setback);
            }
        };
        self.context.note_image(&built);
        if !self.inferred {
            return self.ready(spec, built);
        }
        if self.first_run_checks() {
            return self.ready(spec, built);
        }
        let rung = Rung { project: self.project, spec: &spec, built: &built, test_files: &self.test_files };
        let checked = match check::check(self.context, &rung).await {
            Ok(checked) => checked,
            Err(lost) => return self.give_up(lost.reason, Some(lost)),
        };
        match checked {
            Ok(()) => {
                if !self.tried.is_empty() {
                    tracing::info!(
                        instance_id = %self.project.candidate.instance_id, rung = %spec.rung, runtime = %spec.runtime,
                        "the environment ladder found a working rung"
                    );
                }
                self.ready(spec, built)
            }
            Err(unusable) => {
                record(self.context, self.project.candidate, &spec, &Ok(built), Some(&unusable.detail));
                let setback = Setback::Unusable { log: &unusable.output };
                self.next_rung(spec, ValidateDropReason::EnvironmentUnusable, unusable.detail.clone(), &setback)
            }
        }
    }

    /// A rung ready to run the task in; a validate stopped after it added packages on
    /// this rung resumes in that environment (its first runs would lead there again).
    fn ready(&mut self, spec: EnvironmentSpec, built: BuiltImage) -> Step {
        if !self.remembered_looked {
            self.remembered_looked = true;
            if let Some(remembered) = remembered_dependencies(self.context, self.project.candidate, &spec) {
                let packages = remembered.extra_packages[spec.extra_packages.len()..].to_vec();
                return Step::Packages { base: Box::new(Base { spec, built, ran: None }), packages };
            }
        }
        Step::Run { spec, built, base: None }
    }

    /// The ecosystem's next move after the rung `spec` failed as `setback` says
    /// (`reason`, `detail`): the next rung, or the end of the ladder.
    fn next_rung(
        &mut self,
        spec: EnvironmentSpec,
        reason: ValidateDropReason,
        detail: String,
        setback: &Setback<'_>,
    ) -> Step {
        let refused = crate::sandbox::egress::refused_in(&detail);
        self.failures.push(detail);
        self.tried.push(spec);
        match self.ask(setback) {
            Some(next)
                if !refused.is_empty() && matches!(next.rung, ModelRung::NeighbourRuntime | ModelRung::RunnerPins) =>
            {
                tracing::info!(
                    instance_id = %self.project.candidate.instance_id, refused = %refused.join(", "), passed_over = %next.rung,
                    "the build was refused a host that no registry is; another runtime or runner reaches the same hosts, so the ladder stops"
                );
                self.give_up(reason, None)
            }
            Some(next) => {
                self.set_aside_logs();
                let why =
                    self.failures.last().and_then(|detail| detail.lines().rev().find(|line| !line.trim().is_empty()));
                tracing::info!(
                    instance_id = %self.project.candidate.instance_id, failed = %self.tried[self.tried.len() - 1].rung,
                    why = why.unwrap_or_default(), next = %next.rung, runtime = %next.runtime,
                    "the environment failed; trying the next rung of the ladder"
                );
                Step::Rung(next)
            }
            None => self.give_up(reason, None),
        }
    }

    /// The next rung the ecosystem offers after `setback` in the last of `tried`, for
    /// an inferred spec; `None` when it offers none (or only packages: a failed rung
    /// has no runs to add them to).
    fn ask(&self, setback: &Setback<'_>) -> Option<EnvironmentSpec> {
        let project = self.project;
        match project.ecosystem.next_move(&self.tried, setback, &project.ladder_context()) {
            Move::Climb(next) if self.inferred => Some(next),
            _ => None,
        }
    }

    /// Runs the task in an environment; a packages move whose runs run no test is undone.
    async fn run(
        &mut self,
        spec: EnvironmentSpec,
        built: BuiltImage,
        base: Option<Box<Base>>,
        outcome: &mut TaskOutcome,
    ) -> Step {
        let project = self.project;
        outcome.spec = Some(spec.clone());
        outcome.image = Some(built.tag.clone());
        let environment = attempt::Environment {
            candidate: project.candidate,
            ecosystem: project.ecosystem,
            spec: &spec,
            built: &built,
            mirror: &project.mirror,
            test_files: &self.test_files,
            log_dir: &self.log_dir,
        };
        let runs = self.context.settings.runs;
        let all_runs = if base.is_none() && self.first_run_checks() {
            match attempt::run_all(self.context, &environment, 1, &mut outcome.test_secs).await {
                // The first run comes back from the store, with the modules it could not import.
                Ok(first) if first.anything_ran() => {
                    attempt::run_all(self.context, &environment, runs, &mut outcome.test_secs).await
                }
                Ok(_) => return self.failed_its_check(spec, built, None),
                Err(lost) if lost.reason == ValidateDropReason::InstallFailed => {
                    return self.failed_its_check(spec, built, Some(lost));
                }
                Err(lost) => Err(lost),
            }
        } else {
            attempt::run_all(self.context, &environment, runs, &mut outcome.test_secs).await
        };
        let attempts = match all_runs {
            Ok(attempts) => attempts,
            Err(lost) => {
                let setback = Setback::RunFailed { reason: lost.reason, detail: &lost.detail };
                self.failures.push(lost.detail.clone());
                self.tried.push(spec);
                return match self.ask(&setback) {
                    Some(next) => {
                        self.set_aside_logs();
                        Step::Rung(next)
                    }
                    None => Step::Done(Err(lost)),
                };
            }
        };
        outcome.runs = attempts.pre.len() as u32;
        let (ecosystem, gold_patch) = (self.project.ecosystem, &self.project.candidate.patch);
        let defined_by_the_fix = |test: &str| ecosystem.defined_by_the_patch(test, gold_patch);
        let judged = judge::judge(&attempts, &self.test_files, &self.log_dir, &defined_by_the_fix);
        let ran = Ran { spec, built, attempts, judged, logs_set_aside: None };
        match base {
            Some(base) if !ran.attempts.anything_ran() => self.undo(base, &ran.spec, outcome),
            _ => Step::Ran(ran),
        }
    }

    /// Whether an inferred rung's check is the task's first run: its image serves this
    /// task of the run alone.
    fn first_run_checks(&self) -> bool {
        self.inferred && self.context.alone_in_its_environment(self.project.candidate)
    }

    /// The rung whose check was the task's first run, which did not install (`lost`)
    /// or ran no test to a verdict: the next move as after a failed check, from that
    /// run's output.
    fn failed_its_check(&mut self, spec: EnvironmentSpec, built: BuiltImage, lost: Option<Dropped>) -> Step {
        let path = attempt::log_path(&self.log_dir, 1);
        let output = fs_err::read_to_string(&path).unwrap_or_default();
        let ecosystem = self.project.ecosystem;
        let detail = match lost {
            Some(lost) => format!(
                "{}the repository does not install in the environment (the task's first run, which checks an \
                 environment that serves it alone):\n{}",
                check::lacks(ecosystem, &output),
                lost.detail
            ),
            None => format!(
                "{}no test of {} ran to a verdict in the task's first run, which checks an environment that serves \
                 it alone (log: {})",
                check::lacks(ecosystem, &output),
                self.test_files.join(", "),
                path.display()
            ),
        };
        let step = self.next_rung(
            spec.clone(),
            ValidateDropReason::EnvironmentUnusable,
            detail.clone(),
            &Setback::Unusable { log: &output },
        );
        // Recorded as the ladder left it: its log path follows the run files set aside.
        let recorded = match &step {
            Step::Rung(_) => self.failures.last().cloned().unwrap_or(detail),
            _ => detail,
        };
        record(self.context, self.project.candidate, &spec, &Ok(built), Some(&recorded));
        step
    }

    /// The same rung as `base` with `packages` added; undone when its image does not build.
    async fn add_packages(&mut self, mut base: Box<Base>, packages: Vec<String>, outcome: &mut TaskOutcome) -> Step {
        let mut spec = base.spec.clone();
        spec.extra_packages.extend(packages.iter().cloned());
        match self.build(&spec).await {
            Ok(built) => {
                if let Some(ran) = base.ran.as_mut() {
                    ran.logs_set_aside = self.set_aside_logs_of(&ran.spec);
                }
                self.context.note_image(&built);
                Step::Run { spec, built, base: Some(base) }
            }
            Err(error) => {
                tracing::warn!(
                    instance_id = %self.project.candidate.instance_id, %error,
                    "the environment with the added packages did not build; keeping the runs without them"
                );
                self.undo(base, &spec, outcome)
            }
        }
    }

    /// Builds (or finds) a rung's image, counting the time.
    async fn build(&mut self, spec: &EnvironmentSpec) -> Result<BuiltImage, ImageError> {
        let started = std::time::Instant::now();
        let built = build(self.context, self.project, spec).await;
        self.build_secs += started.elapsed().as_secs_f64();
        built
    }

    /// Back to the rung a packages move started from: its runs, or a run there.
    /// (`packaged` is the environment with the packages.)
    fn undo(&mut self, base: Box<Base>, packaged: &EnvironmentSpec, outcome: &mut TaskOutcome) -> Step {
        match base.ran {
            Some(ran) => {
                self.bring_back_logs(&ran, Some(packaged));
                outcome.spec = Some(ran.spec.clone());
                outcome.image = Some(ran.built.tag.clone());
                outcome.runs = ran.attempts.pre.len() as u32;
                Step::Ran(ran)
            }
            None => Step::Run { spec: base.spec, built: base.built, base: None },
        }
    }

    /// The ecosystem's move after the task's runs: packages, another rung, or the
    /// runs' verdict.
    async fn after_runs(&mut self, mut ran: Ran) -> Step {
        let project = self.project;
        let missing_before = ran.attempts.missing_pre();
        let missing_after = ran.attempts.missing_post();
        // Listed only when a module was missing: the project's own are never installed.
        let paths =
            if missing_before.is_empty() && missing_after.is_empty() { Vec::new() } else { project.paths().await };
        self.runs_seen += 1;
        let seen = RunsSeen {
            spec: &ran.spec,
            first: self.runs_seen == 1,
            labelled: ran.judged.labelled(),
            anything_ran: ran.attempts.anything_ran(),
            missing_before: &missing_before,
            missing_after: &missing_after,
            project_paths: &paths,
        };
        let context = project.ladder_context();
        let tried_with_this: Vec<EnvironmentSpec> = self.tried.iter().cloned().chain([ran.spec.clone()]).collect();
        match project.ecosystem.next_move(&tried_with_this, &Setback::Ran(&seen), &context) {
            Move::AddPackages(packages) => {
                tracing::info!(
                    instance_id = %project.candidate.instance_id, packages = %packages.join(" "),
                    "the runs could not import these packages; building the environment with them"
                );
                let base = Box::new(Base { spec: ran.spec.clone(), built: ran.built.clone(), ran: Some(ran) });
                Step::Packages { base, packages }
            }
            Move::Climb(next) if self.inferred => {
                tracing::info!(
                    instance_id = %project.candidate.instance_id, rung = %next.rung, runtime = %next.runtime,
                    "no test ran in the task's runs; trying the next rung of the environment ladder"
                );
                let detail = match &ran.judged.verdict {
                    Err(lost) if ran.attempts.anything_ran() => lost.detail.clone(),
                    _ => format!(
                        "no test of {} ran to a verdict in the task's runs at its base commit (log: {})",
                        self.test_files.join(", "),
                        self.log_dir.display()
                    ),
                };
                self.failures.push(detail);
                self.tried.push(ran.spec.clone());
                ran.logs_set_aside = self.set_aside_logs();
                self.last_ran = Some(ran);
                Step::Rung(next)
            }
            Move::Climb(_) | Move::Stop => self.finish(ran),
        }
    }

    /// Sets the run files of the rung just left (the last tried) aside, the last
    /// failure's paths to them following; where they went.
    fn set_aside_logs(&mut self) -> Option<std::path::PathBuf> {
        let left = self.tried.last()?.clone();
        let folder = self.set_aside_logs_of(&left)?;
        if let Some(detail) = self.failures.last_mut() {
            *detail = rung_logs::pointing_into(detail, &self.log_dir, &folder);
        }
        Some(folder)
    }

    /// Sets the run files in the task's log folder aside as `spec`'s.
    fn set_aside_logs_of(&mut self, spec: &EnvironmentSpec) -> Option<std::path::PathBuf> {
        let folder = rung_logs::set_aside(&self.log_dir, self.folders_set_aside + 1, spec)?;
        self.folders_set_aside += 1;
        Some(folder)
    }

    /// Brings `ran`'s run files back into the task's log folder, whose runs give the
    /// verdict after all, setting those of `current` (the environment that ran last)
    /// aside first.
    fn bring_back_logs(&mut self, ran: &Ran, current: Option<&EnvironmentSpec>) {
        let Some(folder) = &ran.logs_set_aside else { return };
        if let Some(current) = current {
            self.set_aside_logs_of(current);
        }
        rung_logs::bring_back(&self.log_dir, folder);
    }

    /// The runs' verdict: the settled environment, or the task's drop.
    fn finish(&mut self, ran: Ran) -> Step {
        self.observed = Some(ran.judged.labels.clone());
        Step::Done(match (ran.judged.verdict, ran.judged.labels) {
            (Ok(()), Some(labels)) => {
                Ok(Settled { spec: ran.spec, built: ran.built, test_files: self.test_files.clone(), labels })
            }
            (Err(lost), _) => Err(lost),
            (Ok(()), None) => unreachable!("labels come with every verdict but no tests collected"),
        })
    }

    /// The end of the ladder: the verdict of the last runs when the task ran
    /// somewhere; else `lost` when given, else `reason` with each rung's failure in
    /// order.
    fn give_up(&mut self, reason: ValidateDropReason, lost: Option<Dropped>) -> Step {
        if let Some(ran) = self.last_ran.take() {
            let last = self.tried.last().cloned();
            self.bring_back_logs(&ran, last.as_ref());
            return self.finish(ran);
        }
        if let Some(lost) = lost {
            return Step::Done(Err(lost));
        }
        let failures = std::mem::take(&mut self.failures);
        if failures.len() == 1 {
            return Step::Done(Err(dropped(reason, failures.into_iter().next().unwrap_or_default())));
        }
        let ecosystem = self.project.ecosystem;
        let lines: Vec<String> = self
            .tried
            .iter()
            .zip(&failures)
            .map(|(spec, failure)| {
                format!("rung {} ({}): {failure}", spec.rung, ecosystem.runtime_label(&spec.runtime))
            })
            .collect();
        Step::Done(Err(dropped(reason, format!("every rung of the environment ladder failed:\n{}", lines.join("\n")))))
    }
}

/// The first rung: the config's spec or the inferred one, with the packages the
/// patches add to the project's dependencies.
pub(super) fn first_rung(project: &Project<'_>) -> Result<EnvironmentSpec, Dropped> {
    let candidate = project.candidate;
    let ecosystem = project.ecosystem;
    let mut spec = spec::resolve(
        ecosystem,
        &project.config,
        &candidate.version,
        || project.files.clone(),
        project.date,
        &project.runtimes,
    )
    .map_err(|error| match (&error, &project.unrecognised) {
        (InferError::NoRuntime { .. }, _) => dropped(ValidateDropReason::RuntimeUnavailable, error.to_string()),
        (InferError::NotRecognised { .. }, Some(unrecognised)) => {
            dropped(ValidateDropReason::EnvironmentInferenceFailed, unrecognised.clone())
        }
        _ => dropped(ValidateDropReason::EnvironmentInferenceFailed, error.to_string()),
    })?;
    for package in ecosystem.packages_the_patches_add(&[&candidate.patch, &candidate.test_patch]) {
        if !spec.extra_packages.contains(&package) {
            spec.extra_packages.push(package);
        }
    }
    Ok(spec)
}

/// The test files the task's runs would run in `spec` (those of the test patch the
/// ecosystem runs); none drops the task.
pub(super) fn test_files(project: &Project<'_>, spec: &EnvironmentSpec) -> Result<Vec<String>, Dropped> {
    let files = project.ecosystem.tests_to_run(&project.candidate.test_patch, spec);
    if files.is_empty() {
        return Err(dropped(
            ValidateDropReason::NoTestFiles,
            format!("the test patch touches no test file that {} runs", project.ecosystem.name()),
        ));
    }
    Ok(files)
}

/// How to get a configured runtime's missing image: the catalogue's own is
/// scripts/setup.sh's to make; another is the user's.
fn how_to_make(runtime: &str, image: &str) -> String {
    match image.split_once(':') {
        Some((_, tag))
            if crate::ecosystem::runtimes::default_base_images().get(runtime).map(String::as_str) == Some(image) =>
        {
            format!("`SWE_HARVEST_BASE_IMAGES={tag} scripts/setup.sh` makes it")
        }
        _ => "pull or build it".to_string(),
    }
}

/// Builds (or finds) the environment image of `spec` and records the attempt.
async fn build(context: &Context<'_>, project: &Project<'_>, spec: &EnvironmentSpec) -> Result<BuiltImage, ImageError> {
    let ecosystem = project.ecosystem;
    let candidate = project.candidate;
    let request = EnvironmentRequest {
        repo: candidate.repo.clone(),
        mirror: project.mirror.clone(),
        environment_setup_commit: candidate.environment_setup_commit.clone(),
        spec: spec.clone(),
        date: project.date,
        version: candidate.version.clone(),
    };
    let dockerfile = |base: &str| ecosystem.environment_dockerfile(&request, base, &context.settings.images);
    let recipe = Recipe {
        request: &request,
        fallback_base: ecosystem.local_base_image(&spec.runtime),
        dockerfile: &dockerfile,
        files: ecosystem.environment_context_files(&request, &context.settings.images),
        testbed: ecosystem.testbed_copy(),
    };
    let built = context.images.ensure(&recipe).await;
    record(context, candidate, spec, &built, None);
    built
}

/// Records an environment: built, failed, or (with `unusable`) built but unusable.
fn record(
    context: &Context<'_>,
    candidate: &Candidate,
    spec: &EnvironmentSpec,
    built: &Result<BuiltImage, ImageError>,
    unusable: Option<&str>,
) {
    // Which rung failed how, so that `status` shows it in one look.
    let label = crate::ecosystem::for_spec(spec)
        .map_or_else(|_| spec.runtime.clone(), |ecosystem| ecosystem.runtime_label(&spec.runtime));
    let rung = |detail: &str| format!("rung {} ({label}): {detail}", spec.rung);
    let (key, image, status, detail) = match (built, unusable) {
        (Ok(built), None) => (built.key.clone(), Some(built.tag.clone()), "built", None),
        (Ok(built), Some(detail)) => (built.key.clone(), Some(built.tag.clone()), "unusable", Some(rung(detail))),
        (Err(error), _) => (
            format!("failed:{}:{}:{}", candidate.repo, candidate.environment_setup_commit, spec.rung),
            None,
            "failed",
            Some(rung(&error.to_string())),
        ),
    };
    let mut store = context.store.lock().expect("not poisoned");
    let written = store.transaction(|transaction| {
        validation::record_environment(
            transaction,
            &key,
            &candidate.repo,
            &candidate.environment_setup_commit,
            spec,
            image.as_deref(),
            status,
            detail.as_deref(),
        )
    });
    if let Err(error) = written {
        tracing::warn!(%error, "could not record the environment");
    }
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
    let images: std::collections::BTreeSet<&str> = runs.iter().map(|run| run.image.as_str()).collect();
    images.into_iter().find_map(|image| {
        let stored = validation::environment_spec_for_image(store.connection(), image).ok().flatten()?;
        adds_packages(&stored, spec).then_some(stored)
    })
}

/// Whether `stored` is `spec` with more `extra_packages` after its own. The CI record
/// is why, not what runs: a spec stored before it had one still counts.
fn adds_packages(stored: &EnvironmentSpec, spec: &EnvironmentSpec) -> bool {
    stored.extra_packages.len() > spec.extra_packages.len()
        && stored.extra_packages.starts_with(&spec.extra_packages)
        && EnvironmentSpec { extra_packages: spec.extra_packages.clone(), ci: spec.ci.clone(), ..stored.clone() }
            == *spec
}

/// A task lost to its environment while its project needs a runtime that no base
/// image provides is dropped for that (`runtime_unavailable`), naming the runtime it
/// needs, the one it was tried on (`tried`: the spec it last ran in, else the first),
/// and how that failed.
fn runtime_unavailable(project: &Project<'_>, tried: Option<&EnvironmentSpec>, lost: Dropped) -> Dropped {
    let Some(needed) = project
        .runtime_needed
        .as_ref()
        .filter(|_| lost.reason.is_environment() && lost.reason != ValidateDropReason::RuntimeUnavailable)
        // A build refused a host that no registry is needs the network, which no
        // runtime changes (simdjson's configure cloning from a git host).
        .filter(|_| crate::sandbox::egress::refused_in(&lost.detail).is_empty())
    else {
        return lost;
    };
    let tried =
        tried.map_or_else(|| "the nearest runtime there is".to_string(), |spec| format!("runtime {}", spec.runtime));
    let hint = match project.runtimes_to_make.as_slice() {
        [] => format!(
            "bring an image of that runtime and name it in validate.base_images.\"{}\" ({}, \"Runtimes\")",
            needed.runtime,
            project.ecosystem.runtimes_page()
        ),
        to_make => to_make
            .iter()
            .map(|(runtime, image)| {
                format!(
                    "validate.base_images.\"{runtime}\" meets it, but its image `{image}` is not on the engine: {}",
                    how_to_make(runtime, image)
                )
            })
            .collect::<Vec<_>>()
            .join("; "),
    };
    dropped(
        ValidateDropReason::RuntimeUnavailable,
        format!(
            "the project needs runtime {needed}, which no base image here provides; tried on {tried}, it failed ({}): {}\n\
             hint: {hint}",
            lost.reason, lost.detail,
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::{EnvironmentSpec, adds_packages, how_to_make};

    /// Packages an earlier validate added are remembered from its stored spec, also
    /// when that spec was stored before specs had a CI record.
    #[test]
    fn a_stored_spec_that_adds_packages_is_remembered_whatever_its_ci_record() {
        let spec = EnvironmentSpec { test_command: "pytest".into(), ci: vec!["from CI".into()], ..Default::default() };
        let stored = EnvironmentSpec { extra_packages: vec!["toolz".into()], ci: Vec::new(), ..spec.clone() };
        assert!(adds_packages(&stored, &spec));
        assert!(!adds_packages(&spec, &spec), "nothing added");
        let other = EnvironmentSpec { test_command: "pytest -x".into(), ..stored.clone() };
        assert!(!adds_packages(&other, &spec), "another command is another environment");
    }

    #[test]
    fn a_missing_catalogue_image_is_made_by_setup_and_another_is_the_users_to_get() {
        assert_eq!(
            how_to_make("go1.27", "swe-harvest/base:go1.27"),
            "`SWE_HARVEST_BASE_IMAGES=go1.27 scripts/setup.sh` makes it"
        );
        assert_eq!(how_to_make("go1.27", "registry.example/go:1.27"), "pull or build it");
        // A catalogue tag under another runtime's key is not the catalogue's image of that key.
        assert_eq!(how_to_make("go1.26", "swe-harvest/base:go1.27"), "pull or build it");
    }
}
