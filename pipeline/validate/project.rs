//! What a task's project is, read before its environment is settled: the mirror, the
//! per-repository config, the ecosystem at the environment commit (its test
//! framework included), the files its inference reads there, the commit's date, the
//! runtimes whose base image is there, and the runtime the project needs when none of
//! those is one it can have. Reads git and the engine's image list (`validate --plan`,
//! without an engine, takes every configured runtime as there); runs nothing.

use std::path::PathBuf;

use chrono::{DateTime, Utc};

use super::{Context, Dropped, ValidateSettings, dropped};
use crate::ecosystem::repo_config::RepoConfig;
use crate::ecosystem::{self, Ecosystem, RepoFiles, RuntimeNeed};
use crate::model::Candidate;
use crate::model::drop_reason::ValidateDropReason;

/// A task's project at its environment commit.
pub(super) struct Project<'a> {
    pub candidate: &'a Candidate,
    pub mirror: PathBuf,
    pub config: RepoConfig,
    pub ecosystem: &'static dyn Ecosystem,
    /// The files inference reads, at the environment commit.
    pub files: RepoFiles,
    /// When no language recognises the project by its root's files, what its
    /// inference failure says ([`ecosystem::unrecognised`]).
    pub unrecognised: Option<String>,
    /// The environment commit's date: dependencies are taken as of it.
    pub date: DateTime<Utc>,
    /// The runtimes inference chooses among ([`available_runtimes`]).
    pub runtimes: Vec<String>,
    /// The runtime the project needs when no base image provides it (the task is
    /// tried on the nearest one there is); `None` when one does, or a config pins it.
    pub runtime_needed: Option<RuntimeNeed>,
    /// With `runtime_needed`: the runtimes of `validate.base_images` that would meet
    /// it but whose image is not on the engine, with that image (to say how to get it).
    pub runtimes_to_make: Vec<(String, String)>,
}

impl<'a> Project<'a> {
    /// Reads the project of `candidate`: no mirror, an invalid config, a base or
    /// environment commit the mirror lacks drop the task.
    pub async fn read(context: &Context<'_>, candidate: &'a Candidate) -> Result<Project<'a>, Dropped> {
        let settings = context.settings;
        let (mirror, config, environment) = read_at_environment_commit(settings, candidate).await?;
        let (runtimes, absent) = available_runtimes(context, environment.ecosystem).await;
        Ok(Project::assemble(settings, candidate, mirror, config, environment, runtimes, absent))
    }

    /// [`Self::read`] without an engine to ask (`validate --plan`): every runtime of
    /// `validate.base_images` counts as there, as when none of their images is.
    pub async fn read_without_engine(
        settings: &ValidateSettings,
        candidate: &'a Candidate,
    ) -> Result<Project<'a>, Dropped> {
        let (mirror, config, environment) = read_at_environment_commit(settings, candidate).await?;
        let runtimes = configured_runtimes(settings, environment.ecosystem);
        Ok(Project::assemble(settings, candidate, mirror, config, environment, runtimes, Vec::new()))
    }

    /// The project with the runtimes inference chooses among (`absent`: configured
    /// ones whose image is not on the engine).
    fn assemble(
        settings: &ValidateSettings,
        candidate: &'a Candidate,
        mirror: PathBuf,
        config: RepoConfig,
        environment: Environment,
        runtimes: Vec<String>,
        absent: Vec<String>,
    ) -> Project<'a> {
        let Environment { ecosystem, files, date, unrecognised } = environment;
        let pinned =
            super::spec::config_entry(&config, &candidate.version).is_some_and(|entry| entry.runtime.is_some());
        let runtime_needed = if pinned { None } else { ecosystem.runtime_needed(&files, date, &runtimes) };
        // An absent runtime meets the need when, with it there too, nothing is needed.
        let runtimes_to_make = match &runtime_needed {
            None => Vec::new(),
            Some(_) => absent
                .into_iter()
                .filter(|runtime| {
                    let with_it: Vec<String> = runtimes.iter().chain([runtime]).cloned().collect();
                    ecosystem.runtime_needed(&files, date, &with_it).is_none()
                })
                .map(|runtime| {
                    let image = settings.images.base_images.get(&runtime).cloned().unwrap_or_default();
                    (runtime, image)
                })
                .collect(),
        };
        Project {
            candidate,
            mirror,
            config,
            ecosystem,
            files,
            unrecognised,
            date,
            runtimes,
            runtime_needed,
            runtimes_to_make,
        }
    }

    /// What the ecosystem's ladder may look at.
    pub fn ladder_context(&self) -> ecosystem::LadderContext<'_> {
        ecosystem::LadderContext { files: &self.files, date: self.date, runtimes: &self.runtimes }
    }

    /// The project's paths at the base commit and those the patches touch: the names
    /// its own modules may have (a module the fix adds is never a dependency).
    pub async fn paths(&self) -> Vec<String> {
        let mirror = self.mirror.clone();
        let base_commit = self.candidate.base_commit.clone();
        let mut paths: Vec<String> = crate::git::diff::files_changed_by(&self.candidate.patch);
        paths.extend(crate::git::diff::files_changed_by(&self.candidate.test_patch));
        tokio::task::spawn_blocking(move || {
            if let Ok(listed) = crate::git::Mirror::open(&mirror).and_then(|mirror| mirror.list_files(&base_commit)) {
                paths.extend(listed);
            }
            paths
        })
        .await
        .unwrap_or_default()
    }
}

/// The mirror, the per-repository config and the environment of `candidate`'s
/// project: no mirror, an invalid config, a base or environment commit the mirror
/// lacks drop the task. Reads git and files; asks no engine.
async fn read_at_environment_commit(
    settings: &ValidateSettings,
    candidate: &Candidate,
) -> Result<(PathBuf, RepoConfig, Environment), Dropped> {
    let mirror = crate::git::find_mirror(&settings.data_dir, settings.mirrors_dir.as_deref(), &candidate.repo)
        .map_err(|error| dropped(ValidateDropReason::NoMirror, error.to_string()))?;
    let config = RepoConfig::read(&settings.repos_dir, &candidate.repo)
        .map_err(|error| dropped(ValidateDropReason::InvalidRepoConfig, error.to_string()))?;
    let environment = {
        let mirror = mirror.clone();
        let commit = candidate.environment_setup_commit.clone();
        let base_commit = candidate.base_commit.clone();
        let framework = config.test_framework;
        tokio::task::spawn_blocking(move || {
            // A base commit the mirror lacks is the row's fault, found before any container runs.
            let has_base =
                crate::git::Mirror::open(&mirror).is_ok_and(|mirror| mirror.commit_id(&base_commit).is_some());
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
    Ok((mirror, config, environment))
}

/// What a project is at its environment commit ([`read_environment`]).
pub struct Environment {
    /// Its test framework included: `framework` from its config, else detected.
    pub ecosystem: &'static dyn Ecosystem,
    /// The files its inference reads there.
    pub files: RepoFiles,
    /// The commit's date.
    pub date: DateTime<Utc>,
    /// When no language recognises it, what to say ([`ecosystem::unrecognised`]).
    pub unrecognised: Option<String>,
}

/// The project's ecosystem at the environment commit, the files its inference reads
/// there, and the commit's date.
pub fn read_environment(
    mirror: &std::path::Path,
    commit: &str,
    framework: Option<ecosystem::TestFramework>,
) -> Result<Environment, crate::git::GitError> {
    let mirror = crate::git::Mirror::open(mirror)?;
    let date = mirror.commit_time(commit)?;
    let paths = mirror.list_files(commit)?;
    let mut read = |path: &str| mirror.read_text(commit, path).ok().flatten();
    let ecosystem = ecosystem::detect_with_framework(&paths, &mut read, framework);
    let unrecognised = ecosystem::unrecognised(&paths);
    let mut files = RepoFiles::new();
    for path in paths.into_iter().filter(|path| ecosystem.reads_for_inference(path)) {
        if let Some(text) = mirror.read_text(commit, &path)? {
            files.insert(path, text);
        }
    }
    Ok(Environment { ecosystem, files, date, unrecognised })
}

/// The runtimes inference chooses among: those of `validate.base_images` whose base
/// image is there (configured, pulled, or scripts/setup.sh's local one), so that an
/// optional runtime nobody built is never chosen; all of them when none is there, so
/// that the build fails naming the missing image. Second, the configured runtimes
/// left out for want of their image.
async fn available_runtimes(context: &Context<'_>, ecosystem: &dyn Ecosystem) -> (Vec<String>, Vec<String>) {
    let configured: Vec<String> = base_image_runtimes(context.settings, ecosystem);
    let mut present = Vec::new();
    let mut absent = Vec::new();
    for runtime in &configured {
        if context.images.base_image(runtime, &ecosystem.local_base_image(runtime)).await.is_ok() {
            present.push(runtime.clone());
        } else {
            absent.push(runtime.clone());
        }
    }
    if present.is_empty() {
        absent.clear();
    }
    let mut available = if present.is_empty() { configured } else { present };
    available.extend(gradle_runtimes(context.settings, ecosystem));
    (available, absent)
}

/// Every runtime `ecosystem` may be given here, whether its image is on an engine or
/// not: those of `validate.base_images` and the configured Gradle distributions.
fn configured_runtimes(settings: &ValidateSettings, ecosystem: &dyn Ecosystem) -> Vec<String> {
    let mut runtimes = base_image_runtimes(settings, ecosystem);
    runtimes.extend(gradle_runtimes(settings, ecosystem));
    runtimes
}

/// The runtimes of `validate.base_images` that `ecosystem` owns.
fn base_image_runtimes(settings: &ValidateSettings, ecosystem: &dyn Ecosystem) -> Vec<String> {
    settings.images.base_images.keys().filter(|runtime| ecosystem.owns_runtime(runtime)).cloned().collect()
}

/// Configured Gradle distributions are tools of the same kind (`gradle8.5`).
fn gradle_runtimes(settings: &ValidateSettings, ecosystem: &dyn Ecosystem) -> Vec<String> {
    settings
        .images
        .gradle_distributions
        .keys()
        .map(|version| format!("gradle{version}"))
        .filter(|runtime| ecosystem.owns_runtime(runtime))
        .collect()
}
