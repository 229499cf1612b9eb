//! The tasks a review session shows: a release's rows (`--release NAME/VERSION`, read
//! from its `tasks.jsonl`) or the store's validated tasks (`--stage validated`), each
//! with what the list filters on (repository, language, month, difficulty, score,
//! flags) and the hash its decisions are keyed by. Loaded once when the page starts:
//! a release never changes, and the page is about what was there when it opened.
//!
//! What a release row does not hold (the environment image, the validation runs) is
//! looked up in the store when a task is opened, by instance id.

use std::collections::HashMap;
use std::path::Path;

use crate::model::probe::ProbeOutcome;
use crate::model::{Task, TaskRow};
use crate::review::quality::{self, QualityRecord};
use crate::review::{ReviewError, ReviewSource};
use crate::store::{self, Store};

/// One task as the page shows it.
#[derive(Debug, Clone)]
pub struct ReviewTask {
    pub row: TaskRow,
    pub language: String,
    pub fail_to_pass: Vec<String>,
    pub pass_to_pass: Vec<String>,
    pub flaky_tests: Vec<String>,
    /// The environment ladder's rung, when known.
    pub environment_rung: Option<String>,
    /// The environment image the task was validated in, when the store knows the task.
    pub image: Option<String>,
    pub validation_runs: u32,
    pub content_hash: String,
    pub quality: Option<QualityRecord>,
    /// What probe found: the mutation score and the wrong fixes that pass every test.
    pub probe: Option<ProbeOutcome>,
}

impl ReviewTask {
    /// `YYYY-MM` of the pull request's creation.
    pub fn month(&self) -> &str {
        self.row.created_at.get(..7).unwrap_or("")
    }

    fn of_stored(task: &Task, quality: Option<QualityRecord>, probe: Option<ProbeOutcome>) -> ReviewTask {
        let (row, _) = crate::release::task_row(task);
        ReviewTask {
            content_hash: store::reviews::content_hash(&row),
            language: crate::ecosystem::language_of_test_patch(&task.candidate.test_patch).to_string(),
            fail_to_pass: task.fail_to_pass.clone(),
            pass_to_pass: task.pass_to_pass.clone(),
            flaky_tests: task.flaky_tests.clone(),
            environment_rung: task.environment_rung.map(|rung| rung.as_str().to_string()),
            image: task.image.clone(),
            validation_runs: task.validation_runs,
            quality,
            probe,
            row,
        }
    }

    /// Whether probe kept a wrong fix that passes every test (`weak_tests`).
    pub fn weak_tests(&self) -> bool {
        self.probe.as_ref().is_some_and(|probe| !probe.surviving_mutants.is_empty())
    }
}

/// The tasks of `source`, by instance id.
pub fn load(store: &Store, data_dir: &Path, source: &ReviewSource) -> Result<Vec<ReviewTask>, ReviewError> {
    let stored = store::candidates::tasks(store.connection(), &[])?;
    let mut tasks = match source {
        ReviewSource::Validated => {
            if stored.is_empty() {
                return Err(ReviewError::NoValidatedTasks { store: store.path().to_path_buf() });
            }
            let mut qualities = quality::of_stored_tasks(store.connection(), &stored)?;
            let mut probes = store::probe::current_outcomes(store.connection(), &stored)?;
            stored
                .iter()
                .map(|task| {
                    let id = &task.candidate.instance_id;
                    ReviewTask::of_stored(task, qualities.remove(id), probes.remove(id))
                })
                .collect()
        }
        ReviewSource::Release { name, version } => {
            let images: HashMap<&str, &Task> =
                stored.iter().map(|task| (task.candidate.instance_id.as_str(), task)).collect();
            release_tasks(data_dir, name, version, &images)?
        }
    };
    tasks.sort_by(|a, b| a.row.instance_id.cmp(&b.row.instance_id));
    Ok(tasks)
}

/// The rows of a release, with what the store knows of each task.
fn release_tasks(
    data_dir: &Path,
    name: &str,
    version: &str,
    stored: &HashMap<&str, &Task>,
) -> Result<Vec<ReviewTask>, ReviewError> {
    let folder = crate::release::release_dir(data_dir, name, version);
    let file = folder.join("tasks.jsonl");
    if !file.exists() {
        return Err(ReviewError::UnknownRelease {
            release: format!("{name}/{version}"),
            known: known_releases(data_dir),
        });
    }
    let records = crate::dataset::read_records(&file).map_err(ReviewError::Release)?;
    if records.is_empty() {
        return Err(ReviewError::EmptyRelease { release: format!("{name}/{version}"), path: file });
    }
    let mut tasks = Vec::with_capacity(records.len());
    for (index, record) in records.into_iter().enumerate() {
        let row: TaskRow = serde_json::from_value(serde_json::Value::Object(record.clone())).map_err(|error| {
            ReviewError::Release(crate::dataset::DatasetError::NotATaskRow {
                path: file.clone(),
                row: index + 1,
                message: error.to_string(),
            })
        })?;
        crate::model::ids::check_id("instance_id", &row.instance_id).map_err(ReviewError::BadInstanceId)?;
        let text = |column: &str| record.get(column).and_then(|value| value.as_str()).unwrap_or("").to_string();
        let stored = stored.get(row.instance_id.as_str());
        let language = match text("language") {
            language if !language.is_empty() => language,
            _ => crate::ecosystem::language_of_test_patch(&row.test_patch).to_string(),
        };
        tasks.push(ReviewTask {
            content_hash: store::reviews::content_hash(&row),
            language,
            fail_to_pass: row.fail_to_pass_list().unwrap_or_default(),
            pass_to_pass: row.pass_to_pass_list().unwrap_or_default(),
            flaky_tests: serde_json::from_str(&text("flaky_tests")).unwrap_or_default(),
            environment_rung: Some(text("environment_rung")).filter(|rung| !rung.is_empty()),
            image: stored.and_then(|task| task.image.clone()),
            validation_runs: text("validation_runs").parse().unwrap_or_default(),
            quality: quality::of_release_row(&record),
            probe: probe_of_release_row(&record),
            row,
        });
    }
    Ok(tasks)
}

/// Probe's columns of a release row (`mutation_score`, `surviving_mutants` as JSON),
/// when the release carries them for the task.
fn probe_of_release_row(row: &serde_json::Map<String, serde_json::Value>) -> Option<ProbeOutcome> {
    let text = |column: &str| row.get(column).and_then(|value| value.as_str()).filter(|text| !text.is_empty());
    let survivors = text("surviving_mutants")?;
    Some(ProbeOutcome {
        mutation_score: text("mutation_score").and_then(|score| score.parse().ok()),
        surviving_mutants: serde_json::from_str(survivors).ok()?,
        viable: 0,
    })
}

/// `name/version` of every release in the data dir, sorted.
pub fn known_releases(data_dir: &Path) -> Vec<String> {
    let mut known = Vec::new();
    let Ok(names) = fs_err::read_dir(data_dir.join("releases")) else { return known };
    for name in names.flatten() {
        let Ok(versions) = fs_err::read_dir(name.path()) else { continue };
        for version in versions.flatten() {
            let version_name = version.file_name().to_string_lossy().into_owned();
            if !version_name.starts_with('.') && version.path().join("tasks.jsonl").exists() {
                known.push(format!("{}/{version_name}", name.file_name().to_string_lossy()));
            }
        }
    }
    known.sort();
    known
}
