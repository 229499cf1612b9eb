//! One task's quality record, and the pure function that makes it ([`assess`]): every
//! signal read from the task, the flags they raise (each with its measured
//! precision), the score and its parts, the verdict ([`super::verdict`]), and the
//! difficulty bucket.
//!
//! A record is keyed for a review page and for resuming: `content_hash` is the hash of
//! what the screen read of the task (a changed task is screened again; a review
//! decision can say which content it saw), `screen_key` the hash of the screen itself
//! (model version, settings, whether the mirror was read), so that a changed screen
//! screens again too.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::difficulty::{self, Difficulty};
use super::flags::Flag;
use super::model::{self, Contribution, FITTED, MODEL_VERSION, SIGNALS, SignalValues};
use super::settings::ScreenConfig;
use super::signals::{self, Reading, TaskText, log_count};

pub use super::verdict::Verdict;

/// Where the code before the fix came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CodeSource {
    /// The patches' removed and context lines only.
    Patches,
    /// Also the touched files at the base commit, from the repository's mirror.
    Mirror,
}

/// What the screen says of one task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QualityRecord {
    pub instance_id: String,
    /// The hash of what was screened (see the module's documentation).
    pub content_hash: String,
    pub screen_key: String,
    pub quality_flags: Vec<Flag>,
    /// In [0, 1], six decimals.
    pub quality_score: f64,
    pub quality_verdict: Verdict,
    pub difficulty: Difficulty,
    /// The signals' parts in the score, largest first: `intercept + Σ contribution`
    /// is the score's logit.
    pub score_parts: Vec<Contribution>,
    pub intercept: f64,
    pub code_before: CodeSource,
    pub model_version: String,
    /// What the screen read of the tests: how many FAIL_TO_PASS tests, new or changed,
    /// how they fail before the fix, change coverage, mutation score.
    #[serde(default)]
    pub tests: signals::runs::TestsReading,
}

/// The hash of what the screen reads of a task.
pub fn content_hash(task: &TaskText<'_>) -> String {
    let parts = serde_json::json!([
        task.repo,
        task.problem_statement,
        task.hints_text,
        task.patch,
        task.test_patch,
        task.fail_to_pass,
        task.flaky_tests,
        task.issue_numbers,
        task.probe,
    ]);
    hex::encode(Sha256::digest(parts.to_string().as_bytes()))
}

/// The hash of the screen that reads it, and of what it read besides the task's own
/// content: where the code before the fix came from, and the validation runs' output
/// and coverage (`runs`), so that a task validated again is screened again.
pub fn screen_key(config: &ScreenConfig, code_before: CodeSource, runs: Option<&signals::runs::RunEvidence>) -> String {
    let parts = serde_json::json!([MODEL_VERSION, config, code_before, runs.map(|runs| runs.digest())]);
    hex::encode(Sha256::digest(parts.to_string().as_bytes()))
}

/// Screens one task. `mirror_files` are the files both patches touch at the base
/// commit (empty without a mirror).
pub fn assess(
    instance_id: &str,
    task: TaskText<'_>,
    mirror_files: Vec<String>,
    config: &ScreenConfig,
) -> QualityRecord {
    let reading = Reading::new(task, mirror_files);
    let (mut flags, signals) = read_signals(&reading, config);
    for flag in &mut flags {
        flag.precision = Some(super::precision::of(flag.code));
    }
    let score = model::round(FITTED.score(&signals));
    let verdict = super::verdict::decide(&flags, score, &config.verdict_rule());
    let code_before = if reading.before.from_mirror { CodeSource::Mirror } else { CodeSource::Patches };
    QualityRecord {
        instance_id: instance_id.to_string(),
        content_hash: content_hash(&task),
        screen_key: screen_key(config, code_before, task.runs),
        quality_flags: flags,
        quality_score: score,
        quality_verdict: verdict,
        difficulty: difficulty::estimate(signals::patch::size(&reading)),
        score_parts: model::contributions(&FITTED, &signals),
        intercept: FITTED.intercept,
        code_before,
        model_version: MODEL_VERSION.to_string(),
        tests: signals::runs::tests_reading(&reading),
    }
}

/// Every flag a task raises, in [`super::flags::FlagCode`] order, and its signal values in
/// [`model::SIGNAL_NAMES`] order.
pub fn read_signals(reading: &Reading<'_>, config: &ScreenConfig) -> (Vec<Flag>, SignalValues) {
    use signals::{issue, patch, test_patch};
    let (new_names, new_name_count) = test_patch::new_names(reading);
    // The runs confirm (or find) names the tests fail on before the fix; the score's
    // count stays the patches' reading (the annotated tasks have no runs to weigh it).
    let new_names = signals::runs::confirm_new_names(reading, new_names);
    // The count of unseen strings is left out of the score: across repositories it did
    // not rank tasks (docs/screen.md); the flag stays as an explanation.
    let (unseen, _) = test_patch::unseen_strings(reading);
    let (solution, solution_share) = issue::solution_in_issue(reading);
    let thin = issue::too_thin(reading);
    let (external, external_count) = issue::external_resources(reading);
    let several = issue::several_issues(reading);
    let foreign = issue::not_english(reading);
    let (changed, changed_count) = test_patch::changes_existing_tests(reading);
    let (sprawling, ride_alongs) = patch::sprawling(reading, config.many_files);
    let (unrelated, _) = test_patch::fail_to_pass_unrelated(reading, config.huge_fail_to_pass);
    let flaky = test_patch::flaky(reading);
    let (unnamed, unnamed_count) = test_patch::unnamed_exceptions(reading);
    // Not in the score (its weight would need annotated tasks that were probed):
    // the flag and its evidence.
    let weak = signals::probe::weak_tests(reading);
    let size = patch::size(reading);
    let present = |flag: &Option<_>| if flag.is_some() { 1.0 } else { 0.0 };
    let values: SignalValues = [
        log_count(new_name_count),
        log_count(unnamed_count),
        solution_share,
        log_count(reading.issue.prose_words()),
        present(&thin),
        log_count(external_count),
        present(&several),
        present(&foreign),
        log_count(changed_count),
        log_count(size.changed_lines),
        log_count(size.source_files),
        log_count(ride_alongs),
        log_count(reading.task.fail_to_pass.len()),
        present(&flaky),
    ];
    debug_assert_eq!(values.len(), SIGNALS);
    let flags = [
        new_names, unseen, solution, thin, external, several, foreign, changed, sprawling, unrelated, flaky, weak,
        unnamed,
    ]
    .into_iter()
    .flatten()
    .collect();
    (flags, values)
}
