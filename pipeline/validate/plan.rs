//! `validate --plan`: what validate would do with each task, up to and including its
//! environment's first rung, and no further. Per task it reads the project as
//! validate does ([`super::project`]: mirror, config, ecosystem and test framework,
//! the files inference reads at the environment commit), resolves the first rung
//! ([`super::ladder::first_rung`]: the per-repository config, else inference, CI
//! evidence included) and the test files the runs would run; then it stops. No image
//! is built and no container started, so no engine is needed: the runtimes inference
//! chooses among are every runtime `validate.base_images` names, as when none of their
//! images is on the engine (a real validate leaves out those whose image is absent).
//!
//! Nothing is written to the store: the tasks a plan saw are validated by the next
//! real `validate` as if the plan had never run. A task whose project cannot be read
//! or whose inference fails gets the reason validate would drop it for, not a crash.
//! The plan of a task depends only on the mirror, the config and the task, so two
//! plans of the same data are the same bytes.

use serde::Serialize;

use super::project::Project;
use super::{Dropped, ValidateSettings, ladder};
use crate::ecosystem::RuntimeNeed;
use crate::model::{Candidate, Rung};

/// What validate would do with one task, up to its first environment rung.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TaskPlan {
    pub instance_id: String,
    pub repo: String,
    pub version: String,
    /// The ecosystem, its test framework included (`python-django`); `None` when the
    /// project could not be read.
    pub ecosystem: Option<String>,
    /// The language (`python` for `python-django`).
    pub language: Option<String>,
    pub runtime: Option<String>,
    /// The runtime the project needs when no configured base image provides it.
    pub runtime_needed: Option<String>,
    pub system_packages: Vec<String>,
    pub pre_install: Vec<String>,
    pub install: Vec<String>,
    /// Packages added to the install: the config's, and those the patches add.
    pub extra_packages: Vec<String>,
    pub test_command: Option<String>,
    /// `config`, `config+inferred` or `inferred` ([`super::spec::resolve`]).
    pub source: Option<String>,
    pub rung: Option<Rung>,
    /// What inference took from the project's CI files, and what it could not use.
    pub ci: Vec<String>,
    /// The test files of the test patch the runs would run.
    pub test_files: Vec<String>,
    /// Why validate would drop the task before building anything.
    pub error: Option<Dropped>,
    /// Store tasks only: a finished task, which a real `validate` skips unless it is
    /// named with `--instance`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finished: Option<bool>,
}

impl TaskPlan {
    fn empty(candidate: &Candidate) -> TaskPlan {
        TaskPlan {
            instance_id: candidate.instance_id.clone(),
            repo: candidate.repo.to_string(),
            version: candidate.version.clone(),
            ..TaskPlan::default()
        }
    }
}

/// The plan of `candidate`: what validate's first rung would be, or why validate
/// would drop it before building anything. Reads the mirror; asks no engine.
pub async fn plan(settings: &ValidateSettings, candidate: &Candidate) -> TaskPlan {
    let mut plan = TaskPlan::empty(candidate);
    let project = match Project::read_without_engine(settings, candidate).await {
        Ok(project) => project,
        Err(error) => {
            plan.error = Some(error);
            return plan;
        }
    };
    plan.ecosystem = Some(project.ecosystem.name().to_string());
    plan.language = Some(project.ecosystem.language().to_string());
    plan.runtime_needed = project.runtime_needed.as_ref().map(RuntimeNeed::to_string);
    let spec = match ladder::first_rung(&project) {
        Ok(spec) => spec,
        Err(error) => {
            plan.error = Some(error);
            return plan;
        }
    };
    match ladder::test_files(&project, &spec) {
        Ok(files) => plan.test_files = files,
        Err(error) => plan.error = Some(error),
    }
    plan.runtime = Some(spec.runtime);
    plan.system_packages = spec.system_packages;
    plan.pre_install = spec.pre_install;
    plan.install = spec.install;
    plan.extra_packages = spec.extra_packages;
    plan.test_command = Some(spec.test_command);
    plan.source = Some(spec.source);
    plan.rung = Some(spec.rung);
    plan.ci = spec.ci;
    plan
}
