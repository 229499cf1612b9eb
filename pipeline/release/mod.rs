//! The release stage: an immutable, self-describing dataset version under
//! `<data-dir>/releases/<name>/<version>/`: `tasks.parquet`, `tasks.jsonl`,
//! `manifest.json` (counts, filters, sha256 of every file, the release it extends)
//! and a dataset card `README.md` in Hugging Face's format. With a split period,
//! `splits/<period>/tasks.{parquet,jsonl}` hold one split each.
//!
//! A release is written into a hidden temporary folder beside its final place and
//! renamed into place at the end, so a crash leaves no half release; an existing
//! release is never modified, only replaced whole with `force`. The store records a
//! release in the same transaction that renames it into place, so a release the
//! store could not record is not published; one that was renamed but whose commit
//! was lost (a kill at that instant) is adopted by the next run of the same request.
//!
//! This module selects and writes; it does not validate tasks or build images.

mod card;
pub mod export;
pub mod filter;
pub mod images;
mod manifest;
pub mod probe;
pub mod review;
pub mod screen;
mod settings;
pub mod swt;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use chrono::Utc;
use serde::{Deserialize, Serialize};

use crate::dataset::{Dataset, DatasetError};
use crate::model::{Task, TaskRow, encode_test_list, format_swebench_time};
use crate::progress::Reporter;
use crate::store::{Store, StoreError};

pub use filter::Filters;
pub use manifest::Manifest;
pub use settings::{ReleaseConfig, ReleaseFlags};

/// The extra columns after SWE-bench's twelve, in order.
/// `environment_rung` says how faithful the task's environment is to its date (the
/// environment ladder's rung: `dated`, `ci-packages`, `relaxed-packages`,
/// `neighbour-runtime`, `runner-pins`, a language's own (`crate::model::Rung`); empty
/// for tasks validated before the ladder).
/// `language` is the ecosystem whose tests the test patch runs
/// ([`crate::ecosystem::language_of_test_patch`]: `python`, `go`).
/// `fail_to_pass_no_result_before` lists the FAIL_TO_PASS tests that gave no result
/// before the gold patch (they did not build or collect, or the run stopped before
/// them: Multi-SWE-bench's `n2p`), as against those that failed there.
pub const EXTRA_COLUMNS: [&str; 8] = [
    "pull_number",
    "issue_numbers",
    "merged_at",
    "flaky_tests",
    "validation_runs",
    "environment_rung",
    "language",
    "fail_to_pass_no_result_before",
];

#[derive(Debug, thiserror::Error)]
pub enum ReleaseError {
    #[error("the release `{name}/{version}` already exists at `{path}`; a release is never modified")]
    AlreadyExists { name: String, version: String, path: PathBuf },
    /// A release name or version that would not be one safe path component.
    #[error(transparent)]
    BadName(#[from] crate::model::ids::IdError),
    #[error("no task matches the filters of `{name}/{version}` ({total} tasks in the store; dropped: {dropped})")]
    Empty { name: String, version: String, total: usize, dropped: String },
    #[error("failed to read the datasets to exclude")]
    Exclusions(#[source] DatasetError),
    #[error("failed to write the release files")]
    Write(#[source] DatasetError),
    #[error("failed to move the release into place at `{path}`")]
    Rename {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("failed to make the instance images")]
    Images(#[from] images::ImagesError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("`--push` needs a registry to push to")]
    NoRegistry,
    #[error(transparent)]
    Config(#[from] crate::settings::ConfigError),
    #[error("`--max-quality-score {0}` is not a probability between 0 and 1")]
    BadMaxQualityScore(f64),
    #[error("`--min-mutation-score {0}` is not a fraction between 0 and 1")]
    BadMinMutationScore(f64),
}

impl ReleaseError {
    /// Whether the person at the terminal asked for something impossible (exit code 2).
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            ReleaseError::AlreadyExists { .. }
                | ReleaseError::BadName(_)
                | ReleaseError::NoRegistry
                | ReleaseError::Config(_)
                | ReleaseError::BadMaxQualityScore(_)
                | ReleaseError::BadMinMutationScore(_)
        )
    }

    pub fn hint(&self) -> Option<String> {
        match self {
            ReleaseError::AlreadyExists { .. } => {
                Some("choose a new `--version`, or pass `--force` to replace it whole".to_string())
            }
            ReleaseError::Empty { .. } => {
                Some("check the filters, and `swe-harvest status` for how many tasks were validated".to_string())
            }
            ReleaseError::NoRegistry => {
                Some("set `registry` under `[release]` in the config (or SWE_HARVEST_RELEASE__REGISTRY)".to_string())
            }
            ReleaseError::Config(config) => Some(config.hint()),
            ReleaseError::BadMaxQualityScore(_) => {
                Some("quality_score is the estimated probability of being filtered out: pass e.g. 0.5".to_string())
            }
            ReleaseError::BadMinMutationScore(_) => {
                Some("mutation_score is the share of mutants the tests reject: pass e.g. 0.8, or 1 for all".to_string())
            }
            _ => None,
        }
    }
}

/// How splits are cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SplitPeriod {
    Month,
}

/// Everything a release is cut with. `configs/releases/<name>.toml` holds the same
/// settings (all but name and version) so a release can be repeated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReleaseRequest {
    pub name: String,
    pub version: String,
    pub filters: Filters,
    pub split_by: Option<SplitPeriod>,
    pub force: bool,
    /// Build an instance image per task (`--images`).
    pub images: Option<ImageRequest>,
    /// An SWT release (`--swt`): only tasks with measured coverage whose golden
    /// FAIL_TO_PASS held in every one of at least this many validation runs.
    pub swt_min_runs: Option<u32>,
}

/// How instance images are built and published.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImageRequest {
    /// Tags are `<prefix>/<instance_id in lower case>:<release version>`.
    pub prefix: String,
    /// Push every image to this registry (`--push`).
    pub push_to: Option<String>,
    pub build_timeout_secs: u64,
    /// Memory and CPU of each build (`validate.memory_bytes`, `validate.cpus`): the
    /// build installs the repository, whose build code is untrusted. Not a property of
    /// the dataset: left out of the manifest.
    #[serde(skip)]
    pub build_limits: crate::sandbox::BuildLimits,
    /// Where mirrors are found besides `<data-dir>/mirrors`.
    pub mirrors_dir: Option<PathBuf>,
}

/// The settings file `configs/releases/<name>.toml`; also the command line's values of
/// the same settings ([`ReleaseFlags::settings`]).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ReleaseFile {
    pub created_after: Option<chrono::NaiveDate>,
    pub created_before: Option<chrono::NaiveDate>,
    pub repos: Vec<crate::model::RepoSlug>,
    pub exclude_datasets: Vec<PathBuf>,
    pub split_by: Option<SplitPeriod>,
    /// An SWT release: see `release --swt`.
    pub swt: bool,
    /// A screened split: see `release --max-quality-score`, `--exclude-flag`, `--only-kept`.
    pub max_quality_score: Option<f64>,
    pub exclude_flags: Vec<crate::screen::FlagCode>,
    pub only_kept: bool,
    /// Only tasks whose tests reject enough wrong fixes: see `release --min-mutation-score`.
    pub min_mutation_score: Option<f64>,
    /// Only tasks reviewed and kept: see `release --reviewed-only`.
    pub reviewed_only: bool,
    /// Leave out rejected tasks: see `release --exclude-rejected`.
    pub exclude_rejected: bool,
}

/// What a release run produced.
#[derive(Debug, Clone, Serialize)]
pub struct ReleaseSummary {
    pub path: PathBuf,
    pub manifest: Manifest,
}

/// The folder of one release.
pub fn release_dir(data_dir: &Path, name: &str, version: &str) -> PathBuf {
    data_dir.join("releases").join(name).join(version)
}

/// Writes one release from the tasks in the store.
pub fn run(
    store: &mut Store,
    data_dir: &Path,
    request: &ReleaseRequest,
    reporter: &dyn Reporter,
) -> Result<ReleaseSummary, ReleaseError> {
    // Both become folders (and the version an image tag): the one rule for ids.
    crate::model::ids::check_id("release name", &request.name)?;
    crate::model::ids::check_id("release version", &request.version)?;
    let target = release_dir(data_dir, &request.name, &request.version);
    if target.exists() && !request.force {
        if let Some(manifest) = adoptable(store, &target, request)? {
            store.transaction(|tx| record(tx, request, &target, &manifest))?;
            tracing::warn!(
                path = %target.display(),
                "the release was written by an earlier run whose record in the store was lost; recorded it now"
            );
            return Ok(ReleaseSummary { path: target, manifest });
        }
        return Err(ReleaseError::AlreadyExists {
            name: request.name.clone(),
            version: request.version.clone(),
            path: target,
        });
    }

    let tasks = crate::store::candidates::tasks(store.connection(), &[])?;
    let total = tasks.len();
    let exclusions = filter::Exclusions::load(&request.filters.exclude_datasets).map_err(ReleaseError::Exclusions)?;
    let (kept, mut dropped) = filter::select(tasks, &request.filters, &exclusions);
    let coverage = crate::store::coverage::all(store.connection())?;
    let kept = match request.swt_min_runs {
        Some(min_runs) => swt::select(store.connection(), kept, &coverage, min_runs, &mut dropped)?,
        None => kept,
    };
    let probes = crate::store::probe::current_outcomes(store.connection(), &kept)?;
    let stored_records = crate::store::screen::all(store.connection())?;
    let records = screen::current_records(&kept, &stored_records, &probes);
    let mut removed_by_flag = BTreeMap::new();
    let kept = screen::select(kept, &request.filters.screen, &records, &mut dropped, &mut removed_by_flag);
    let kept = probe::select(kept, request.filters.min_mutation_score, &probes, &mut dropped);
    let (mut kept, reviews) = review::select(store.connection(), kept, &request.filters, &mut dropped)?;
    if kept.is_empty() {
        let dropped = dropped.iter().map(|(reason, count)| format!("{reason} {count}")).collect::<Vec<_>>().join(", ");
        return Err(ReleaseError::Empty {
            name: request.name.clone(),
            version: request.version.clone(),
            total,
            dropped: if dropped.is_empty() { "none".into() } else { dropped },
        });
    }
    kept.sort_by(|a, b| a.candidate.instance_id.cmp(&b.candidate.instance_id));
    reporter.start(&format!("release {}/{}", request.name, request.version), Some(kept.len() as u64));

    let parent = target.parent().expect("a release dir has a parent").to_path_buf();
    let staging = parent.join(format!(".{}.tmp-{}", request.version, std::process::id()));
    let write_error = |source| ReleaseError::Write(DatasetError::Write { path: staging.clone(), source });
    if staging.exists() {
        fs_err::remove_dir_all(&staging).map_err(write_error)?;
    }
    fs_err::create_dir_all(&staging).map_err(write_error)?;

    let screened = ScreenedTasks { records: &records, removed_by_flag, reviews, probes: &probes };
    let result = write_release(store, data_dir, request, &kept, &coverage, &screened, dropped, &staging, reporter);
    let manifest = match result {
        Ok(manifest) => manifest,
        Err(error) => {
            let _ = fs_err::remove_dir_all(&staging);
            return Err(error);
        }
    };
    // Recorded before it becomes visible: the row is written, the folder renamed into
    // place, then the row committed. A failed insert leaves no release behind (a rerun
    // makes it); a commit that fails after the rename leaves one that a rerun adopts.
    let recorded = store.transaction(|tx| -> Result<(), ReleaseError> {
        record(tx, request, &target, &manifest)?;
        move_into_place(&staging, &target)
    });
    if let Err(error) = recorded {
        let _ = fs_err::remove_dir_all(&staging);
        return Err(error);
    }
    reporter.finish();
    Ok(ReleaseSummary { path: target, manifest })
}

/// Records a release in the store (replacing the record of the same name and version).
fn record(
    tx: &rusqlite::Transaction<'_>,
    request: &ReleaseRequest,
    target: &Path,
    manifest: &Manifest,
) -> Result<(), StoreError> {
    tx.execute(
        "INSERT INTO releases (name, version, path, manifest, created_at) VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (name, version) DO UPDATE SET path = excluded.path, manifest = excluded.manifest,
            created_at = excluded.created_at",
        rusqlite::params![
            request.name,
            request.version,
            target.display().to_string(),
            serde_json::to_string(manifest).expect("manifests serialize"),
            manifest.created_at
        ],
    )?;
    Ok(())
}

/// The manifest of the release folder `target` when an earlier run of this same
/// request put it in place but its record in the store was lost (killed, or the
/// commit failed, after the rename): the store does not know that manifest, the
/// manifest names this release and these filters, and the folder holds exactly the
/// files it lists, unchanged. Anything else is not ours to adopt.
fn adoptable(store: &Store, target: &Path, request: &ReleaseRequest) -> Result<Option<Manifest>, StoreError> {
    let Ok(text) = fs_err::read_to_string(target.join("manifest.json")) else { return Ok(None) };
    let Ok(manifest) = serde_json::from_str::<Manifest>(&text) else { return Ok(None) };
    let stored: Option<String> = rusqlite::OptionalExtension::optional(store.connection().query_row(
        "SELECT manifest FROM releases WHERE name = ?1 AND version = ?2",
        [&request.name, &request.version],
        |row| row.get(0),
    ))?;
    let known = stored.and_then(|stored| serde_json::from_str::<Manifest>(&stored).ok()).as_ref() == Some(&manifest);
    let ours = manifest.name == request.name
        && manifest.version == request.version
        && manifest.filters == manifest::ManifestFilters::of(request);
    Ok((!known && ours && manifest.matches_files_of(target)).then_some(manifest))
}

/// What the screen and the reviewers say of the released tasks.
struct ScreenedTasks<'a> {
    /// The current quality record of each task that has one.
    records: &'a BTreeMap<String, &'a crate::screen::QualityRecord>,
    /// Tasks the screened split removed, by flag.
    removed_by_flag: BTreeMap<String, u64>,
    /// People's review decisions on the released tasks.
    reviews: review::ReviewCounts,
    /// Probe's current outcome of each task that has one.
    probes: &'a BTreeMap<String, crate::model::probe::ProbeOutcome>,
}

#[allow(clippy::too_many_arguments)] // the release's inputs, each used once
fn write_release(
    store: &Store,
    data_dir: &Path,
    request: &ReleaseRequest,
    tasks: &[Task],
    coverage: &BTreeMap<String, crate::store::coverage::GoldenCoverage>,
    screened: &ScreenedTasks<'_>,
    dropped: BTreeMap<String, u64>,
    staging: &Path,
    reporter: &dyn Reporter,
) -> Result<Manifest, ReleaseError> {
    let image_columns = match &request.images {
        Some(image_request) => Some(instance_images(store, data_dir, request, image_request, tasks, reporter)?),
        None => None,
    };
    let mut columns: Vec<&str> = EXTRA_COLUMNS
        .iter()
        .chain(crate::swt::COVERAGE_COLUMNS.iter())
        .chain(screen::QUALITY_COLUMNS.iter())
        .chain(probe::PROBE_COLUMNS.iter())
        .copied()
        .collect();
    if image_columns.is_some() {
        columns.extend(images::IMAGE_COLUMNS);
    }
    let mut splits: BTreeMap<String, Dataset> = BTreeMap::new();
    let mut all = Dataset::with_extra_columns(&columns);
    for (index, task) in tasks.iter().enumerate() {
        let (row, mut extra) = task_row(task);
        extra.extend(crate::swt::coverage_columns(coverage.get(&task.candidate.instance_id)));
        extra.extend(screen::quality_columns(screened.records.get(&task.candidate.instance_id)));
        extra.extend(probe::probe_columns(screened.probes.get(&task.candidate.instance_id)));
        if let Some(image_columns) = &image_columns {
            extra.extend(image_columns[index].iter().cloned());
        }
        all.push_task(&row, extra.clone()).map_err(ReleaseError::Write)?;
        if let Some(SplitPeriod::Month) = request.split_by {
            let month = row.created_at[..7].to_string();
            splits
                .entry(month)
                .or_insert_with(|| Dataset::with_extra_columns(&columns))
                .push_task(&row, extra)
                .map_err(ReleaseError::Write)?;
        }
        reporter.advance(1);
    }
    all.write_parquet(&staging.join("tasks.parquet")).map_err(ReleaseError::Write)?;
    all.write_jsonl(&staging.join("tasks.jsonl")).map_err(ReleaseError::Write)?;
    for (period, dataset) in &splits {
        let folder = staging.join("splits").join(period);
        dataset.write_parquet(&folder.join("tasks.parquet")).map_err(ReleaseError::Write)?;
        dataset.write_jsonl(&folder.join("tasks.jsonl")).map_err(ReleaseError::Write)?;
    }

    let repos: Vec<crate::model::RepoSlug> = {
        let mut repos: Vec<_> = tasks.iter().map(|task| task.candidate.repo.clone()).collect();
        repos.dedup();
        repos.sort();
        repos.dedup();
        repos
    };
    let funnel = store.funnel(&repos)?;
    let mut manifest = Manifest::new(request, tasks, &splits, dropped, manifest::previous_release(data_dir, request));
    manifest.counts.removed_by_flag = screened.removed_by_flag.clone();
    manifest.counts.review = screened.reviews.clone();
    manifest.counts.probe = probe::counts(tasks, screened.probes);
    let swt_section = swt::card_section(tasks, coverage, request.swt_min_runs);
    let runners = card::test_runners(store, tasks)?;
    let screen_section =
        screen::card_section(tasks, screened.records, &request.filters.screen, &screened.removed_by_flag);
    let probe_section = probe::card_section(&manifest.counts.probe, tasks.len(), request.filters.min_mutation_score);
    let card = card::render(
        request,
        &manifest,
        &all,
        &funnel,
        &licenses(store, &repos)?,
        &runners,
        &[&swt_section, &screen_section, &probe_section],
    );
    crate::dataset::write_durably(&staging.join("README.md"), |file| std::io::Write::write_all(file, card.as_bytes()))
        .map_err(ReleaseError::Write)?;
    manifest.record_files(staging).map_err(ReleaseError::Write)?;
    let text = serde_json::to_string_pretty(&manifest).expect("manifests serialize") + "\n";
    crate::dataset::write_durably(&staging.join("manifest.json"), |file| {
        std::io::Write::write_all(file, text.as_bytes())
    })
    .map_err(ReleaseError::Write)?;
    Ok(manifest)
}

/// Builds (and pushes) every task's instance image; returns, per task, the values of
/// [`images::IMAGE_COLUMNS`].
fn instance_images(
    store: &Store,
    data_dir: &Path,
    request: &ReleaseRequest,
    image_request: &ImageRequest,
    tasks: &[Task],
    reporter: &dyn Reporter,
) -> Result<Vec<[String; 6]>, ReleaseError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|error| images::ImagesError::Engine(error.to_string()))?;
    let columns = runtime.block_on(async {
        let backend = crate::sandbox::connect(crate::sandbox::BackendKind::Local)
            .await
            .map_err(|error| images::ImagesError::Engine(error.to_string()))?;
        let build = images::InstanceBuild {
            backend: backend.as_ref(),
            data_dir,
            mirrors_dir: image_request.mirrors_dir.as_deref(),
            prefix: &image_request.prefix,
            version: &request.version,
            timeout: std::time::Duration::from_secs(image_request.build_timeout_secs),
            limits: image_request.build_limits,
        };
        let mut columns = Vec::with_capacity(tasks.len());
        for task in tasks {
            let instance_id = &task.candidate.instance_id;
            let environment_image = task
                .image
                .clone()
                .ok_or_else(|| images::ImagesError::NoEnvironment { instance_id: instance_id.clone() })?;
            let spec = crate::store::validation::environment_spec_for_image(store.connection(), &environment_image)?
                .ok_or_else(|| images::ImagesError::NoEnvironment { instance_id: instance_id.clone() })?;
            let ecosystem =
                crate::ecosystem::for_spec(&spec).map_err(|error| images::ImagesError::Engine(error.to_string()))?;
            let mut tag = images::build_instance_image(&build, ecosystem, task, &environment_image).await?;
            if let Some(registry) = &image_request.push_to {
                tag = images::push(backend.as_ref(), &tag, registry).await?;
            }
            let test_files = ecosystem.tests_to_run(&task.candidate.test_patch, &spec);
            columns.push([
                tag,
                images::eval_script(ecosystem, task, &spec, &test_files),
                ecosystem.harness_log_parser().to_string(),
                images::EVAL_TYPE.to_string(),
                spec.test_command.clone(),
                ecosystem.name().to_string(),
            ]);
            reporter.message(&format!(
                "instance image {} of {}: {}",
                columns.len(),
                tasks.len(),
                columns[columns.len() - 1][0]
            ));
        }
        Ok::<_, ReleaseError>(columns)
    })?;
    Ok(columns)
}

/// The released row of a task and its extra values, in [`EXTRA_COLUMNS`] order.
pub fn task_row(task: &Task) -> (TaskRow, Vec<String>) {
    let candidate = &task.candidate;
    let row = TaskRow::from_candidate(candidate, &task.fail_to_pass, &task.pass_to_pass);
    let issue_numbers: Vec<String> = candidate.issue_numbers.iter().map(ToString::to_string).collect();
    let extra = vec![
        candidate.pull_number.to_string(),
        encode_test_list(&issue_numbers),
        candidate.merged_at.as_ref().map(format_swebench_time).unwrap_or_default(),
        encode_test_list(&task.flaky_tests),
        task.validation_runs.to_string(),
        task.environment_rung.map(|rung| rung.as_str().to_string()).unwrap_or_default(),
        crate::ecosystem::language_of_test_patch(&candidate.test_patch).to_string(),
        encode_test_list(&task.fail_to_pass_no_result_before),
    ];
    (row, extra)
}

/// Each repository's license as the store knows it (from discover), if at all.
fn licenses(store: &Store, repos: &[crate::model::RepoSlug]) -> Result<BTreeMap<String, Option<String>>, StoreError> {
    let mut out = BTreeMap::new();
    for repo in repos {
        let data: Option<String> = rusqlite::OptionalExtension::optional(store.connection().query_row(
            "SELECT data FROM repositories WHERE repo = ?1",
            [repo.to_string()],
            |row| row.get(0),
        ))?;
        let license = data
            .and_then(|data| serde_json::from_str::<serde_json::Value>(&data).ok())
            .and_then(|data| data.get("license").and_then(|license| license.as_str()).map(String::from));
        out.insert(repo.to_string(), license);
    }
    Ok(out)
}

/// Renames the staging folder to the target; with an existing target (`--force`),
/// the old release is moved aside first and removed only after the new one is in.
fn move_into_place(staging: &Path, target: &Path) -> Result<(), ReleaseError> {
    let rename_error = |source| ReleaseError::Rename { path: target.to_path_buf(), source };
    if target.exists() {
        let parent = target.parent().expect("a release dir has a parent");
        let name = target.file_name().expect("a release dir has a name").to_string_lossy();
        let aside = parent.join(format!(".{name}.replaced-{}", Utc::now().timestamp()));
        fs_err::rename(target, &aside).map_err(rename_error)?;
        fs_err::rename(staging, target).map_err(rename_error)?;
        fs_err::remove_dir_all(&aside).map_err(rename_error)?;
    } else {
        fs_err::rename(staging, target).map_err(rename_error)?;
    }
    // The rename is durable only once the parent folder's entry is on disk.
    if let Some(parent) = target.parent() {
        if let Ok(folder) = fs_err::File::open(parent) {
            let _ = folder.sync_all();
        }
    }
    Ok(())
}
