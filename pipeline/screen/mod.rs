//! The screen stage: for each validated task, a quality record that needs no LLM and
//! explains itself: flags with their evidence and each flag's measured precision, a
//! score (the estimated probability that careful human annotators would filter the
//! task out), a precision-first verdict (`keep`, `uncertain`, `flag`:
//! [`verdict`]), and a difficulty bucket. Measured against SWE-bench Verified's human
//! annotations (docs/screen.md).
//!
//! [`run`] screens the store's tasks: each record is written with the screen's funnel
//! row in one transaction, keyed by the hash of the task's content and of the screen
//! itself, so a rerun skips what is already screened and screens again what changed.
//! [`rows::run`] screens SWE-bench rows from a file (`screen --input`).
//!
//! The parts: [`signals`] (pure functions, one per concern) read a task through
//! [`text`] and [`code`]; [`record::assess`] turns them into flags and a score with
//! the weights of [`model`]; [`difficulty`] buckets the change; [`measure`] compares
//! scores with annotations. This stage reads the mirror (the code before the fix)
//! when there is one and works without it.

pub mod assertions;
pub mod code;
pub mod difficulty;
pub mod flags;
pub mod measure;
pub mod model;
pub mod precision;
pub mod record;
pub mod rows;
mod settings;
pub mod signals;
pub mod text;
pub mod verdict;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::Instant;

pub use difficulty::Difficulty;
pub use flags::{Flag, FlagCode};
pub use record::{QualityRecord, Verdict};
pub use settings::{
    DEFAULT_FLAG_ABOVE, DEFAULT_FLAG_ON, DEFAULT_UNCERTAIN_ABOVE, ScreenConfig, ScreenFlags, ScreenSettings,
};

use crate::git::Mirror;
use crate::model::drop_reason::ScreenDropReason;
use crate::model::{Rejection, RepoSlug, Stage, Task};
use crate::progress::Reporter;
use crate::store::{self, Store, StoreError};
use signals::TaskText;
use signals::runs::RunEvidence;

#[derive(Debug, thiserror::Error)]
pub enum ScreenError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Rows(#[from] crate::task_rows::RowsError),
    #[error("failed to write the screened rows to `{path}`")]
    Write {
        path: PathBuf,
        #[source]
        source: crate::dataset::DatasetError,
    },
}

/// What a run of the screen did.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Summary {
    /// Tasks (or rows) it looked at.
    pub selected: usize,
    /// Tasks whose record still held (same content, same screen).
    pub skipped_unchanged: usize,
    pub screened: usize,
    pub kept: usize,
    pub uncertain: usize,
    pub flagged: usize,
    /// Screened tasks carrying each flag.
    pub flags: BTreeMap<FlagCode, usize>,
    /// Screened tasks whose code before the fix came from the mirror.
    pub with_mirror: usize,
    /// Rows that could not be screened, each with what is wrong (`--input`).
    pub bad_rows: Vec<String>,
    pub elapsed_secs: f64,
}

impl Summary {
    fn count(&mut self, record: &QualityRecord) {
        self.screened += 1;
        match record.quality_verdict {
            Verdict::Keep => self.kept += 1,
            Verdict::Uncertain => self.uncertain += 1,
            Verdict::Flag => self.flagged += 1,
        }
        for flag in &record.quality_flags {
            *self.flags.entry(flag.code).or_default() += 1;
        }
        if record.code_before == record::CodeSource::Mirror {
            self.with_mirror += 1;
        }
    }
}

/// A task of the store as the screen reads it; `repo` is its `owner/name`.
pub fn task_text<'a>(task: &'a Task, repo: &'a str) -> TaskText<'a> {
    let candidate = &task.candidate;
    TaskText::of_candidate(candidate, repo, &task.fail_to_pass, &task.flaky_tests, &candidate.issue_numbers)
}

/// The code before the fix, from the mirrors at hand: for a task, the files both
/// patches touch as they were at its base commit. Mirrors are opened once per run; a
/// repository without one (or a base commit the mirror lacks) gets no files, and the
/// screen reads the patches alone.
pub struct MirrorFiles {
    data_dir: PathBuf,
    mirrors_dir: Option<PathBuf>,
    open: HashMap<RepoSlug, Option<Mirror>>,
}

impl MirrorFiles {
    pub fn new(data_dir: &Path, mirrors_dir: Option<&Path>) -> MirrorFiles {
        MirrorFiles {
            data_dir: data_dir.to_path_buf(),
            mirrors_dir: mirrors_dir.map(Path::to_path_buf),
            open: HashMap::new(),
        }
    }

    /// The old sides of the files `patch` and `test_patch` touch, at `base_commit`.
    pub fn files_before(&mut self, repo: &RepoSlug, base_commit: &str, patch: &str, test_patch: &str) -> Vec<String> {
        let (data_dir, mirrors_dir) = (&self.data_dir, self.mirrors_dir.as_deref());
        let mirror = self.open.entry(repo.clone()).or_insert_with(|| {
            let path = crate::git::tree::find_mirror(data_dir, mirrors_dir, repo).ok()?;
            match Mirror::open(&path) {
                Ok(mirror) => Some(mirror),
                Err(error) => {
                    tracing::warn!(repo = %repo, error = %crate::error_chain(&error), "the mirror could not be opened; screening from the patches alone");
                    None
                }
            }
        });
        let Some(mirror) = mirror else { return Vec::new() };
        let mut paths: Vec<String> = crate::git::patch_text::parse(patch)
            .into_iter()
            .chain(crate::git::patch_text::parse(test_patch))
            .filter_map(|file| file.old_path)
            .collect();
        paths.sort();
        paths.dedup();
        let mut files = Vec::new();
        for path in paths {
            match mirror.read_text(base_commit, &path) {
                Ok(Some(text)) => files.push(text),
                Ok(None) => {}
                Err(error) => {
                    tracing::debug!(repo = %repo, base_commit, error = %crate::error_chain(&error), "base commit not in the mirror; screening from the patches alone");
                    return Vec::new();
                }
            }
        }
        files
    }
}

/// What the validation runs of a task left in the data dir: the phase before the fix
/// of each `logs/validate/<instance>/run-N.log`, in run order, with the change coverage
/// (`change_coverage`, from the store or a row). `None` when there is neither.
pub fn run_evidence(data_dir: &Path, instance_id: &str, change_coverage: Option<f64>) -> Option<RunEvidence> {
    let folder = data_dir.join("logs").join("validate").join(instance_id);
    let mut logs: Vec<(u32, PathBuf)> = fs_err::read_dir(&folder)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter_map(|entry| {
                    let name = entry.file_name().to_string_lossy().into_owned();
                    let number = name.strip_prefix("run-")?.strip_suffix(".log")?.parse().ok()?;
                    Some((number, entry.path()))
                })
                .collect()
        })
        .unwrap_or_default();
    logs.sort();
    let before_fix: Vec<String> = logs
        .iter()
        .filter_map(|(_, path)| match fs_err::read(path) {
            Ok(bytes) => RunEvidence::before_fix_of_log(&String::from_utf8_lossy(&bytes)).map(str::to_string),
            Err(error) => {
                tracing::debug!(path = %path.display(), %error, "a run log could not be read; screening without it");
                None
            }
        })
        .collect();
    (!before_fix.is_empty() || change_coverage.is_some()).then_some(RunEvidence { before_fix, change_coverage })
}

/// Screens the store's validated tasks (of `settings.repos`, all when empty).
pub fn run(settings: &ScreenSettings, store: &mut Store, reporter: &dyn Reporter) -> Result<Summary, ScreenError> {
    let started = Instant::now();
    let tasks = store::candidates::tasks(store.connection(), &settings.repos)?;
    let probes = store::probe::current_outcomes(store.connection(), &tasks)?;
    let coverage = store::coverage::all(store.connection())?;
    let mut summary = Summary { selected: tasks.len(), ..Summary::default() };
    let mut mirrors = MirrorFiles::new(&settings.data_dir, settings.mirrors_dir.as_deref());
    reporter.start("screen", Some(tasks.len() as u64));
    for task in &tasks {
        let candidate = &task.candidate;
        let repo = candidate.repo.to_string();
        let mut text = task_text(task, &repo);
        text.probe = probes.get(&candidate.instance_id);
        let change_coverage = coverage.get(&candidate.instance_id).and_then(|coverage| match coverage {
            crate::model::GoldenCoverage::Measured { coverage, .. } => coverage.share(),
            _ => None,
        });
        let runs = run_evidence(&settings.data_dir, &candidate.instance_id, change_coverage);
        text.runs = runs.as_ref();
        let files =
            mirrors.files_before(&candidate.repo, &candidate.base_commit, &candidate.patch, &candidate.test_patch);
        let source = if files.is_empty() { record::CodeSource::Patches } else { record::CodeSource::Mirror };
        let keys = (record::content_hash(&text), record::screen_key(&settings.config, source, text.runs));
        if store::screen::keys(store.connection(), &candidate.instance_id)?.as_ref() == Some(&keys)
            && screened_in_funnel(store, &candidate.repo, &candidate.instance_id)?
        {
            summary.skipped_unchanged += 1;
            reporter.advance(1);
            continue;
        }
        let record = record::assess(&candidate.instance_id, text, files, &settings.config);
        store.transaction(|transaction| -> Result<(), StoreError> {
            store::screen::upsert(transaction, &candidate.repo, &record)?;
            match record.quality_verdict {
                // An uncertain task passes: the screen found no strong evidence against it.
                Verdict::Keep | Verdict::Uncertain => {
                    store::record_passed(transaction, Stage::Screen, &candidate.repo, &candidate.instance_id)
                }
                Verdict::Flag => store::record_dropped(
                    transaction,
                    &Rejection::new(
                        ScreenDropReason::Flagged,
                        candidate.repo.clone(),
                        candidate.instance_id.clone(),
                        flag_detail(&record),
                    ),
                ),
            }
        })?;
        summary.count(&record);
        reporter.advance(1);
    }
    reporter.finish();
    summary.elapsed_secs = started.elapsed().as_secs_f64();
    Ok(summary)
}

/// Whether the funnel holds the screen's row of a task (a record written by a version
/// before the funnel row, or a row forgotten since, makes the task screened again).
fn screened_in_funnel(store: &Store, repo: &RepoSlug, instance_id: &str) -> Result<bool, StoreError> {
    let found: Option<i64> = rusqlite::OptionalExtension::optional(store.connection().query_row(
        "SELECT 1 FROM stage_items WHERE stage = 'screen' AND repo = ?1 AND item = ?2",
        [repo.to_string(), instance_id.to_string()],
        |row| row.get(0),
    ))?;
    Ok(found.is_some())
}

/// The funnel's detail of a flagged task: its score and its flags.
fn flag_detail(record: &QualityRecord) -> String {
    let codes: Vec<&str> = record.quality_flags.iter().map(|flag| flag.code.as_str()).collect();
    format!(
        "quality_score {:.3}; flags: {}",
        record.quality_score,
        if codes.is_empty() { "none (the score's other signals)".to_string() } else { codes.join(", ") }
    )
}
