//! `manifest.json`: what a release is (name, version, when, by which pipeline), how
//! it was cut (the filters), what it holds (counts per repository and split), the
//! sha256 and size of every file, and the earlier release of the same name that it
//! extends.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::{ReleaseRequest, SplitPeriod};
use crate::dataset::{Dataset, DatasetError};
use crate::model::Task;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub name: String,
    pub version: String,
    pub created_at: String,
    pub pipeline_version: String,
    pub filters: ManifestFilters,
    pub counts: Counts,
    /// Every file of the release but this manifest, by path relative to the release.
    pub files: BTreeMap<String, FileEntry>,
    pub extends: Option<Extends>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ManifestFilters {
    pub created_after: Option<String>,
    pub created_before: Option<String>,
    pub repos: Vec<String>,
    pub exclude_datasets: Vec<ExcludedDataset>,
    pub split_by: Option<SplitPeriod>,
    /// An SWT release: the validation runs its golden tests held in (`--swt`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swt_min_runs: Option<u32>,
    /// A screened split (`--max-quality-score`, `--exclude-flag`, `--only-kept`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screen: Option<super::screen::ScreenFilters>,
    /// Only tasks whose mutation score is at least this (`--min-mutation-score`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_mutation_score: Option<f64>,
    /// Only tasks a person reviewed and kept (`--reviewed-only`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reviewed_only: bool,
    /// Tasks a person rejected left out (`--exclude-rejected`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub exclude_rejected: bool,
}

impl ManifestFilters {
    /// The filters of `request` as a manifest records them.
    pub(super) fn of(request: &ReleaseRequest) -> ManifestFilters {
        let filters = &request.filters;
        ManifestFilters {
            created_after: filters.created_after.map(|day| day.to_string()),
            created_before: filters.created_before.map(|day| day.to_string()),
            repos: filters.repos.iter().map(ToString::to_string).collect(),
            exclude_datasets: filters
                .exclude_datasets
                .iter()
                .map(|path| ExcludedDataset { path: path.clone(), sha256: sha256_of(path).ok().map(|(hash, _)| hash) })
                .collect(),
            split_by: request.split_by,
            swt_min_runs: request.swt_min_runs,
            screen: (!filters.screen.is_empty()).then(|| filters.screen.clone()),
            min_mutation_score: filters.min_mutation_score,
            reviewed_only: filters.reviewed_only,
            exclude_rejected: filters.exclude_rejected,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExcludedDataset {
    pub path: PathBuf,
    pub sha256: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Counts {
    pub total: usize,
    pub per_repository: BTreeMap<String, usize>,
    pub per_split: BTreeMap<String, usize>,
    /// Validated tasks in the store that the filters left out, by reason.
    pub left_out_by_filters: BTreeMap<String, u64>,
    /// Tasks a screened split removed, by flag (a task with two flags counts for
    /// both; `none` for a task removed for its score alone).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub removed_by_flag: BTreeMap<String, u64>,
    /// What people decided about the released tasks (`review`).
    #[serde(default)]
    pub review: super::review::ReviewCounts,
    /// What probe found of the released tasks.
    #[serde(default)]
    pub probe: super::probe::ProbeCounts,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileEntry {
    pub sha256: String,
    pub size_bytes: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Extends {
    pub version: String,
    pub created_at: String,
    /// Tasks in this release that the earlier one did not hold.
    pub added: usize,
    /// Tasks of the earlier release that this one no longer holds.
    pub removed: usize,
}

/// The newest other release of the same name, with the instance ids it holds.
pub(super) fn previous_release(data_dir: &Path, request: &ReleaseRequest) -> Option<(Manifest, BTreeSet<String>)> {
    let folder = data_dir.join("releases").join(&request.name);
    let mut best: Option<(Manifest, PathBuf)> = None;
    for entry in fs_err::read_dir(&folder).ok()?.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || name == request.version {
            continue;
        }
        let Ok(text) = fs_err::read_to_string(entry.path().join("manifest.json")) else { continue };
        let Ok(manifest) = serde_json::from_str::<Manifest>(&text) else { continue };
        if best.as_ref().is_none_or(|(current, _)| manifest.created_at > current.created_at) {
            best = Some((manifest, entry.path()));
        }
    }
    let (manifest, path) = best?;
    let ids = crate::dataset::read_records(&path.join("tasks.jsonl"))
        .ok()?
        .into_iter()
        .filter_map(|record| record.get("instance_id").and_then(|id| id.as_str()).map(String::from))
        .collect();
    Some((manifest, ids))
}

impl Manifest {
    pub(super) fn new(
        request: &ReleaseRequest,
        tasks: &[Task],
        splits: &BTreeMap<String, Dataset>,
        left_out: BTreeMap<String, u64>,
        previous: Option<(Manifest, BTreeSet<String>)>,
    ) -> Manifest {
        let mut per_repository = BTreeMap::new();
        for task in tasks {
            *per_repository.entry(task.candidate.repo.to_string()).or_default() += 1;
        }
        let ids: BTreeSet<&str> = tasks.iter().map(|task| task.candidate.instance_id.as_str()).collect();
        let extends = previous.map(|(manifest, previous_ids)| Extends {
            added: ids.iter().filter(|id| !previous_ids.contains(**id)).count(),
            removed: previous_ids.iter().filter(|id| !ids.contains(id.as_str())).count(),
            version: manifest.version,
            created_at: manifest.created_at,
        });
        Manifest {
            name: request.name.clone(),
            version: request.version.clone(),
            created_at: chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string(),
            pipeline_version: crate::PIPELINE_VERSION.to_string(),
            filters: ManifestFilters::of(request),
            counts: Counts {
                total: tasks.len(),
                per_repository,
                per_split: splits.iter().map(|(name, dataset)| (name.clone(), dataset.rows.len())).collect(),
                left_out_by_filters: left_out,
                removed_by_flag: BTreeMap::new(),
                review: super::review::ReviewCounts::default(),
                probe: super::probe::ProbeCounts::default(),
            },
            files: BTreeMap::new(),
            extends,
        }
    }

    /// Whether `folder` holds exactly the files this manifest lists, each with its
    /// recorded sha256 and size.
    pub(super) fn matches_files_of(&self, folder: &Path) -> bool {
        let mut found = Manifest { files: BTreeMap::new(), ..self.clone() };
        found.record_files(folder).is_ok() && found.files == self.files
    }

    /// Hashes every file under `folder` (but the manifest itself) into `files`.
    pub(super) fn record_files(&mut self, folder: &Path) -> Result<(), DatasetError> {
        let mut pending = vec![folder.to_path_buf()];
        while let Some(current) = pending.pop() {
            let entries =
                fs_err::read_dir(&current).map_err(|source| DatasetError::Read { path: current.clone(), source })?;
            for entry in entries {
                let path = entry.map_err(|source| DatasetError::Read { path: current.clone(), source })?.path();
                if path.is_dir() {
                    pending.push(path);
                    continue;
                }
                let relative = path.strip_prefix(folder).expect("below the folder").to_string_lossy().into_owned();
                if relative == "manifest.json" {
                    continue;
                }
                let (sha256, size_bytes) = sha256_of(&path).map_err(|source| DatasetError::Read { path, source })?;
                self.files.insert(relative, FileEntry { sha256, size_bytes });
            }
        }
        Ok(())
    }
}

/// The hex sha256 and the size of a file.
pub fn sha256_of(path: &Path) -> std::io::Result<(String, u64)> {
    let mut file = fs_err::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 16];
    let mut size = 0u64;
    loop {
        let read = file.read(&mut buffer)?;
        if read == 0 {
            break;
        }
        size += read as u64;
        hasher.update(&buffer[..read]);
    }
    Ok((hex::encode(hasher.finalize()), size))
}
