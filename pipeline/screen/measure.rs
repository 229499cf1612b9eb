//! Measuring the screen against human judgements: SWE-bench Verified's annotations
//! (`ensembled_annotations_public.csv` and the development set's extract of it), read
//! with the `csv` crate (the annotators' notes hold newlines and quotes), and the
//! figures docs/screen.md reports: ROC AUC of the score against `filter_out`, against
//! `underspecified >= 2` and against `false_negative >= 2`; precision and recall of
//! the `flag` verdict; agreement of the difficulty bucket with the annotators'. And
//! the model's measurement by cross-validation grouped by repository: each fold is
//! fitted on the other repositories' tasks and scores its own, so every task's score
//! comes from a model that never saw its repository.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::difficulty::Difficulty;
use super::model::{self, SignalValues};
use super::record::{QualityRecord, Verdict};

/// One task's annotation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Annotation {
    pub instance_id: String,
    /// 0-3: how much the issue leaves open.
    pub underspecified: f64,
    /// 0-3: how many valid solutions the tests would reject.
    pub false_negative: f64,
    pub other_major_issues: f64,
    pub difficulty: Difficulty,
    /// The annotators would not keep the task.
    pub filter_out: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum AnnotationsError {
    #[error("failed to read the annotations `{path}`")]
    Read {
        path: std::path::PathBuf,
        #[source]
        source: csv::Error,
    },
    #[error("row {row} of `{path}` (`{instance_id}`): column `{column}`: {message}")]
    Value { path: std::path::PathBuf, row: usize, instance_id: String, column: &'static str, message: String },
}

/// The annotations of a CSV file with SWE-bench Verified's columns, by instance id.
pub fn read_annotations(path: &Path) -> Result<BTreeMap<String, Annotation>, AnnotationsError> {
    let read_error = |source| AnnotationsError::Read { path: path.to_path_buf(), source };
    let mut reader = csv::Reader::from_path(path).map_err(read_error)?;
    let headers = reader.headers().map_err(read_error)?.clone();
    let mut out = BTreeMap::new();
    for (index, record) in reader.records().enumerate() {
        let record = record.map_err(read_error)?;
        let field = |name: &str| headers.iter().position(|header| header == name).and_then(|at| record.get(at));
        let instance_id = field("instance_id").unwrap_or_default().to_string();
        let bad = |column: &'static str, message: String| AnnotationsError::Value {
            path: path.to_path_buf(),
            row: index + 1,
            instance_id: instance_id.clone(),
            column,
            message,
        };
        let number = |column: &'static str| -> Result<f64, AnnotationsError> {
            let text = field(column).ok_or_else(|| bad(column, "missing".to_string()))?;
            text.trim().parse::<f64>().map_err(|error| bad(column, format!("`{text}`: {error}")))
        };
        let difficulty = field("difficulty")
            .ok_or_else(|| bad("difficulty", "missing".to_string()))?
            .parse::<Difficulty>()
            .map_err(|message| bad("difficulty", message))?;
        let filter_out = match field("filter_out").map(str::trim) {
            Some("True" | "true" | "1") => true,
            Some("False" | "false" | "0") => false,
            other => return Err(bad("filter_out", format!("`{}` is not True or False", other.unwrap_or("")))),
        };
        let annotation = Annotation {
            underspecified: number("underspecified")?,
            false_negative: number("false_negative")?,
            other_major_issues: number("other_major_issues")?,
            difficulty,
            filter_out,
            instance_id: instance_id.clone(),
        };
        out.insert(instance_id, annotation);
    }
    Ok(out)
}

/// The area under the ROC curve of `scores` for the positives in `labels`: the chance
/// that a positive scores above a negative, ties counting half. `None` without both.
pub fn roc_auc(scores: &[f64], labels: &[bool]) -> Option<f64> {
    let positives: Vec<f64> = scores.iter().zip(labels).filter(|(_, label)| **label).map(|(score, _)| *score).collect();
    let negatives: Vec<f64> =
        scores.iter().zip(labels).filter(|(_, label)| !**label).map(|(score, _)| *score).collect();
    if positives.is_empty() || negatives.is_empty() {
        return None;
    }
    let mut wins = 0.0;
    for positive in &positives {
        for negative in &negatives {
            wins += if positive > negative {
                1.0
            } else if positive == negative {
                0.5
            } else {
                0.0
            };
        }
    }
    Some(wins / (positives.len() * negatives.len()) as f64)
}

/// Precision and recall of `predicted` for `labels` (`None` where undefined).
pub fn precision_recall(predicted: &[bool], labels: &[bool]) -> (Option<f64>, Option<f64>) {
    let true_positives = predicted.iter().zip(labels).filter(|(p, l)| **p && **l).count();
    let predicted_positives = predicted.iter().filter(|p| **p).count();
    let positives = labels.iter().filter(|l| **l).count();
    let ratio = |count: usize, total: usize| (total > 0).then(|| count as f64 / total as f64);
    (ratio(true_positives, predicted_positives), ratio(true_positives, positives))
}

/// Cohen's kappa of two raters' buckets (ranks): agreement beyond what their
/// marginals give by chance. `None` when chance already agrees fully.
pub fn cohen_kappa(first: &[usize], second: &[usize]) -> Option<f64> {
    let count = first.len().min(second.len());
    if count == 0 {
        return None;
    }
    let observed = first.iter().zip(second).filter(|(a, b)| a == b).count() as f64 / count as f64;
    let buckets = first.iter().chain(second).copied().max().unwrap_or(0) + 1;
    let share =
        |ranks: &[usize], bucket: usize| ranks.iter().filter(|rank| **rank == bucket).count() as f64 / count as f64;
    let chance: f64 = (0..buckets).map(|bucket| share(first, bucket) * share(second, bucket)).sum();
    (chance < 1.0).then(|| (observed - chance) / (1.0 - chance))
}

/// How scores rank the tasks the annotators judged bad, and how the `flag` verdict
/// agrees with them: what the figures of a set and of out-of-fold scores share.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RankingFigures {
    pub tasks: usize,
    pub filtered_out: usize,
    pub auc_filter_out: Option<f64>,
    pub auc_underspecified: Option<f64>,
    pub auc_false_negative: Option<f64>,
    /// AUC of the gold patch's changed lines alone, the trivial baseline.
    pub auc_patch_size_baseline: Option<f64>,
    pub flagged: usize,
    pub flag_precision: Option<f64>,
    pub flag_recall: Option<f64>,
}

/// The [`RankingFigures`] of `scores`, one per task, with each task's annotation, gold
/// patch size (`sizes`, in changed lines) and `flag` verdict.
fn ranking_figures(scores: &[f64], annotations: &[&Annotation], sizes: &[f64], flagged: &[bool]) -> RankingFigures {
    let filtered = filtered_out(annotations);
    let under: Vec<bool> = annotations.iter().map(|annotation| annotation.underspecified >= 2.0).collect();
    let negative: Vec<bool> = annotations.iter().map(|annotation| annotation.false_negative >= 2.0).collect();
    let (precision, recall) = precision_recall(flagged, &filtered);
    RankingFigures {
        tasks: scores.len(),
        filtered_out: filtered.iter().filter(|label| **label).count(),
        auc_filter_out: roc_auc(scores, &filtered),
        auc_underspecified: roc_auc(scores, &under),
        auc_false_negative: roc_auc(scores, &negative),
        auc_patch_size_baseline: roc_auc(sizes, &filtered),
        flagged: flagged.iter().filter(|flag| **flag).count(),
        flag_precision: precision,
        flag_recall: recall,
    }
}

/// Whether the annotators filtered each task out.
fn filtered_out(annotations: &[&Annotation]) -> Vec<bool> {
    annotations.iter().map(|annotation| annotation.filter_out).collect()
}

/// The figures of one set.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Figures {
    #[serde(flatten)]
    pub ranking: RankingFigures,
    pub difficulty_exact: f64,
    pub difficulty_within_one: f64,
    pub difficulty_kappa: Option<f64>,
    /// Annotated bucket -> estimated bucket -> tasks.
    pub difficulty_confusion: BTreeMap<String, BTreeMap<String, usize>>,
    /// Per flag: tasks raising it, and how many of those the annotators filtered out.
    pub flags: BTreeMap<String, (usize, usize)>,
}

/// The figures of records against their annotations; `patch_lines` is each task's gold
/// patch size for the baseline.
pub fn figures(pairs: &[(&QualityRecord, &Annotation, usize)]) -> Figures {
    let scores: Vec<f64> = pairs.iter().map(|(record, _, _)| record.quality_score).collect();
    let annotations: Vec<&Annotation> = pairs.iter().map(|(_, annotation, _)| *annotation).collect();
    let sizes: Vec<f64> = pairs.iter().map(|(_, _, lines)| *lines as f64).collect();
    let flagged: Vec<bool> = pairs.iter().map(|(record, _, _)| record.quality_verdict == Verdict::Flag).collect();
    let mut confusion: BTreeMap<String, BTreeMap<String, usize>> = BTreeMap::new();
    let (mut exact, mut within_one) = (0, 0);
    let mut flags: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for (record, annotation, _) in pairs {
        let (estimated, annotated) = (record.difficulty.rank(), annotation.difficulty.rank());
        exact += usize::from(estimated == annotated);
        within_one += usize::from(estimated.abs_diff(annotated) <= 1);
        *confusion
            .entry(annotation.difficulty.as_str().to_string())
            .or_default()
            .entry(record.difficulty.as_str().to_string())
            .or_default() += 1;
        for flag in &record.quality_flags {
            let entry = flags.entry(flag.code.as_str().to_string()).or_default();
            entry.0 += 1;
            entry.1 += usize::from(annotation.filter_out);
        }
    }
    let share = |count: usize| if pairs.is_empty() { 0.0 } else { count as f64 / pairs.len() as f64 };
    Figures {
        ranking: ranking_figures(&scores, &annotations, &sizes, &flagged),
        difficulty_exact: share(exact),
        difficulty_within_one: share(within_one),
        difficulty_kappa: cohen_kappa(
            &pairs.iter().map(|(record, _, _)| record.difficulty.rank()).collect::<Vec<_>>(),
            &pairs.iter().map(|(_, annotation, _)| annotation.difficulty.rank()).collect::<Vec<_>>(),
        ),
        difficulty_confusion: confusion,
        flags,
    }
}

/// The fold of each task, from its repository (`groups`): with `folds` `None`, one fold
/// per repository (leave one repository out), in name order; with `Some(k)`, the
/// repositories dealt, largest first (then by name), each to the fold with the fewest
/// tasks so far, so that no repository is split and the folds are as even as whole
/// repositories allow.
pub fn repository_folds(groups: &[&str], folds: Option<usize>) -> Vec<usize> {
    let mut sizes: BTreeMap<&str, usize> = BTreeMap::new();
    for group in groups {
        *sizes.entry(group).or_default() += 1;
    }
    let fold_of_group: BTreeMap<&str, usize> = match folds {
        None => sizes.keys().enumerate().map(|(fold, group)| (*group, fold)).collect(),
        Some(count) => {
            let mut order: Vec<(&str, usize)> = sizes.into_iter().collect();
            order.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
            let mut filled = vec![0usize; count.max(1)];
            let mut assigned = BTreeMap::new();
            for (group, size) in order {
                let fold = (0..filled.len()).min_by_key(|fold| (filled[*fold], *fold)).unwrap_or(0);
                filled[fold] += size;
                assigned.insert(group, fold);
            }
            assigned
        }
    };
    groups.iter().map(|group| fold_of_group[group]).collect()
}

/// Out-of-fold scores: for each fold, [`model::fit`] on the other folds' samples with
/// `prior` and `precision`, and the fold's samples scored by that fit.
pub fn out_of_fold_scores(
    samples: &[(SignalValues, bool)],
    fold_of: &[usize],
    prior: &SignalValues,
    precision: f64,
) -> Vec<f64> {
    let mut scores = vec![0.0; samples.len()];
    let folds: std::collections::BTreeSet<usize> = fold_of.iter().copied().collect();
    for fold in folds {
        let training: Vec<(SignalValues, bool)> =
            samples.iter().zip(fold_of).filter(|(_, of)| **of != fold).map(|(sample, _)| *sample).collect();
        let fitted = model::fit(&training, prior, precision);
        for ((signals, _), (score, of)) in samples.iter().zip(scores.iter_mut().zip(fold_of)) {
            if *of == fold {
                *score = fitted.score(signals);
            }
        }
    }
    scores
}

/// The ROC AUC counting only pairs of tasks of the same group (repository): how well
/// the scores rank tasks within a repository, whatever each fold's intercept.
pub fn roc_auc_within(scores: &[f64], labels: &[bool], groups: &[&str]) -> Option<f64> {
    let (mut wins, mut pairs) = (0.0, 0usize);
    for (index, (score, label)) in scores.iter().zip(labels).enumerate() {
        if !*label {
            continue;
        }
        for ((other, other_label), group) in scores.iter().zip(labels).zip(groups) {
            if !*other_label && *group == groups[index] {
                pairs += 1;
                wins += if score > other {
                    1.0
                } else if score == other {
                    0.5
                } else {
                    0.0
                };
            }
        }
    }
    (pairs > 0).then(|| wins / pairs as f64)
}

/// The figures of scores (for example out-of-fold scores) against annotations.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScoreFigures {
    #[serde(flatten)]
    pub ranking: RankingFigures,
    /// `auc_filter_out` counting pairs within one repository only.
    pub auc_filter_out_within_repository: Option<f64>,
    /// `auc_patch_size_baseline` within repositories.
    pub auc_patch_size_baseline_within_repository: Option<f64>,
}

/// The figures of `scores`, one per task, with each task's annotation, repository and
/// gold patch size; `flag_above` is the verdict's threshold.
pub fn score_figures(
    scores: &[f64],
    annotations: &[&Annotation],
    groups: &[&str],
    patch_lines: &[usize],
    flag_above: f64,
) -> ScoreFigures {
    let filtered = filtered_out(annotations);
    let sizes: Vec<f64> = patch_lines.iter().map(|lines| *lines as f64).collect();
    let flagged: Vec<bool> = scores.iter().map(|score| *score > flag_above).collect();
    ScoreFigures {
        ranking: ranking_figures(scores, annotations, &sizes, &flagged),
        auc_filter_out_within_repository: roc_auc_within(scores, &filtered, groups),
        auc_patch_size_baseline_within_repository: roc_auc_within(&sizes, &filtered, groups),
    }
}

/// One annotated task as the verdict's measurement needs it: the flags it raises, its
/// signal values (for refitting the score per fold), and the annotators' judgement.
#[derive(Debug, Clone)]
pub struct VerdictSample {
    pub codes: Vec<super::flags::FlagCode>,
    pub signals: SignalValues,
    pub filter_out: bool,
}

/// Tasks with one verdict, and how many of them the annotators filtered out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct VerdictCount {
    pub tasks: usize,
    pub filtered_out: usize,
}

/// The figures of verdicts against `filter_out`: for `flag`, precision and recall; for
/// `keep`, the share of the filtered-out tasks it keeps (the smaller the better).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VerdictFigures {
    /// All tasks, and the filtered-out ones.
    pub all: VerdictCount,
    pub flag: VerdictCount,
    pub uncertain: VerdictCount,
    pub keep: VerdictCount,
}

impl VerdictFigures {
    /// The share of `flag` tasks that were filtered out.
    pub fn flag_precision(&self) -> Option<f64> {
        (self.flag.tasks > 0).then(|| self.flag.filtered_out as f64 / self.flag.tasks as f64)
    }

    /// The share of filtered-out tasks that are `flag`.
    pub fn flag_recall(&self) -> Option<f64> {
        (self.all.filtered_out > 0).then(|| self.flag.filtered_out as f64 / self.all.filtered_out as f64)
    }

    /// The share of filtered-out tasks that are `keep`.
    pub fn keep_share_of_filtered_out(&self) -> Option<f64> {
        (self.all.filtered_out > 0).then(|| self.keep.filtered_out as f64 / self.all.filtered_out as f64)
    }
}

pub fn verdict_figures(verdicts: &[Verdict], filter_out: &[bool]) -> VerdictFigures {
    let count = |wanted: Option<Verdict>| {
        let mut count = VerdictCount::default();
        for (verdict, filtered) in verdicts.iter().zip(filter_out) {
            if wanted.is_none_or(|wanted| wanted == *verdict) {
                count.tasks += 1;
                count.filtered_out += usize::from(*filtered);
            }
        }
        count
    };
    VerdictFigures {
        all: count(None),
        flag: count(Some(Verdict::Flag)),
        uncertain: count(Some(Verdict::Uncertain)),
        keep: count(Some(Verdict::Keep)),
    }
}

/// How the verdict's thresholds are chosen from annotated tasks (docs/screen.md): the
/// strong flags by [`super::verdict::strong_flags`], `flag_above` as the largest top
/// slice of scores at least `flag_precision` precise (off when none is, or when
/// `score_flags` is false), `uncertain_above` as the largest top slice whose precision
/// is at least the base rate plus `uncertain_margin`; each slice holding at least
/// `min_slice` tasks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VerdictChoice {
    pub strength: super::verdict::Strength,
    pub score_flags: bool,
    pub flag_precision: f64,
    pub uncertain_margin: f64,
    pub min_slice: usize,
}

/// The choice in use (docs/screen.md, "The verdict"): a flag is strong at a measured
/// precision of 0.75 (the base rate, 0.54, plus 0.2) on at least three tasks (fewer
/// is an anecdote); no flag by score alone (a score is not evidence a reader can
/// check); `uncertain` above the largest top slice of scores at least 0.2 above
/// the base rate; slices of at least five tasks.
pub const CHOICE: VerdictChoice = VerdictChoice {
    strength: super::verdict::Strength { min_precision: 0.75, min_tasks: 3 },
    score_flags: false,
    flag_precision: 0.8,
    uncertain_margin: 0.2,
    min_slice: 5,
};

/// Per flag: tasks raising it, and of them filtered out.
pub fn flag_counts(samples: &[&VerdictSample]) -> Vec<(super::flags::FlagCode, usize, usize)> {
    super::flags::FlagCode::ALL
        .into_iter()
        .filter_map(|code| {
            let raising: Vec<&&VerdictSample> = samples.iter().filter(|sample| sample.codes.contains(&code)).collect();
            (!raising.is_empty())
                .then(|| (code, raising.len(), raising.iter().filter(|sample| sample.filter_out).count()))
        })
        .collect()
}

/// The verdict rule that `choice` makes of `samples` scored by `scores`.
pub fn choose_rule(samples: &[&VerdictSample], scores: &[f64], choice: &VerdictChoice) -> super::verdict::VerdictRule {
    let labelled: Vec<(f64, bool)> =
        scores.iter().zip(samples).map(|(score, sample)| (*score, sample.filter_out)).collect();
    let base = samples.iter().filter(|sample| sample.filter_out).count() as f64 / samples.len().max(1) as f64;
    let flag_above = if choice.score_flags {
        super::verdict::score_threshold(&labelled, choice.flag_precision, choice.min_slice).unwrap_or(1.0)
    } else {
        1.0
    };
    let uncertain_above =
        super::verdict::score_threshold(&labelled, base + choice.uncertain_margin, choice.min_slice).unwrap_or(1.0);
    super::verdict::VerdictRule {
        flag_on: super::verdict::strong_flags(&flag_counts(samples), choice.strength),
        flag_above,
        uncertain_above,
    }
}

/// Verdicts by cross-validation grouped by repository: for each fold, the score is
/// fitted ([`model::fit`] with `prior` and `precision`) and the rule chosen on the other
/// folds' tasks, and the fold's tasks are scored and judged by them. Returns each
/// task's verdict and out-of-fold score.
pub fn cross_validated_verdicts(
    samples: &[VerdictSample],
    fold_of: &[usize],
    prior: &SignalValues,
    precision: f64,
    choice: &VerdictChoice,
) -> (Vec<Verdict>, Vec<f64>) {
    let mut verdicts = vec![Verdict::Keep; samples.len()];
    let mut scores = vec![0.0; samples.len()];
    let folds: std::collections::BTreeSet<usize> = fold_of.iter().copied().collect();
    for fold in folds {
        let training: Vec<&VerdictSample> =
            samples.iter().zip(fold_of).filter(|(_, of)| **of != fold).map(|(sample, _)| sample).collect();
        let fitted = model::fit(
            &training.iter().map(|sample| (sample.signals, sample.filter_out)).collect::<Vec<_>>(),
            prior,
            precision,
        );
        let training_scores: Vec<f64> = training.iter().map(|sample| fitted.score(&sample.signals)).collect();
        let rule = choose_rule(&training, &training_scores, choice);
        for (index, sample) in samples.iter().enumerate() {
            if fold_of[index] == fold {
                scores[index] = fitted.score(&sample.signals);
                verdicts[index] = super::verdict::decide_codes(sample.codes.iter().copied(), scores[index], &rule);
            }
        }
    }
    (verdicts, scores)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auc_is_the_chance_a_positive_outscores_a_negative() {
        assert_eq!(roc_auc(&[0.9, 0.8, 0.1, 0.2], &[true, true, false, false]), Some(1.0));
        assert_eq!(roc_auc(&[0.1, 0.2, 0.9, 0.8], &[true, true, false, false]), Some(0.0));
        assert_eq!(roc_auc(&[0.5, 0.5], &[true, false]), Some(0.5));
        assert_eq!(roc_auc(&[0.7, 0.3, 0.5, 0.6], &[true, false, true, false]), Some(0.75));
        assert_eq!(roc_auc(&[0.7], &[true]), None);
    }

    #[test]
    fn folds_keep_each_repository_whole_and_deal_the_largest_first() {
        let groups = ["b", "a", "c", "a", "c", "c", "d"];
        assert_eq!(repository_folds(&groups, None), [1, 0, 2, 0, 2, 2, 3]);
        // c (3 tasks) to fold 0, a (2) to fold 1, then b and d (1 each) to the emptier folds.
        assert_eq!(repository_folds(&groups, Some(2)), [1, 1, 0, 1, 0, 0, 0]);
    }

    #[test]
    fn out_of_fold_scores_come_from_fits_that_never_saw_the_fold() {
        let mut high = [0.0; model::SIGNALS];
        high[0] = 1.0;
        let low = [0.0; model::SIGNALS];
        // Fold 0 alone says the signal means keep; folds 1 and 2 say it means filter out.
        let samples = [(high, false), (low, true), (high, true), (low, false), (high, true), (low, false)];
        let scores = out_of_fold_scores(&samples, &[0, 0, 1, 1, 2, 2], &low, 1.0);
        assert!(scores[0] > scores[1], "fold 0 is scored by the fit of folds 1 and 2: {scores:?}");
        let fitted_without_fold_zero = model::fit(&samples[2..], &low, 1.0);
        assert_eq!(scores[0], fitted_without_fold_zero.score(&high));
    }

    #[test]
    fn within_repository_auc_counts_only_pairs_of_one_repository() {
        // Across repositories the ranking is wrong; within each it is right.
        let scores = [0.9, 0.8, 0.3, 0.2];
        let labels = [true, false, true, false];
        assert_eq!(roc_auc_within(&scores, &labels, &["a", "a", "b", "b"]), Some(1.0));
        assert_eq!(roc_auc(&scores, &labels), Some(0.75));
        assert_eq!(roc_auc_within(&scores, &labels, &["a", "b", "c", "d"]), None);
    }

    #[test]
    fn verdict_figures_count_flag_precision_and_what_keep_lets_through() {
        use Verdict::*;
        let verdicts = [Flag, Flag, Uncertain, Keep, Keep, Keep];
        let labels = [true, false, true, true, false, false];
        let figures = verdict_figures(&verdicts, &labels);
        assert_eq!(
            (figures.flag.tasks, figures.flag_precision(), figures.flag_recall()),
            (2, Some(0.5), Some(1.0 / 3.0))
        );
        assert_eq!(figures.uncertain, VerdictCount { tasks: 1, filtered_out: 1 });
        assert_eq!(figures.keep, VerdictCount { tasks: 3, filtered_out: 1 });
        assert_eq!(figures.all, VerdictCount { tasks: 6, filtered_out: 3 });
        assert_eq!(figures.keep_share_of_filtered_out(), Some(1.0 / 3.0));
    }

    #[test]
    fn cross_validated_verdicts_choose_the_strong_flags_on_the_other_repositories() {
        use super::super::flags::FlagCode;
        let sample =
            |codes: Vec<FlagCode>, filter_out| VerdictSample { codes, signals: [0.0; model::SIGNALS], filter_out };
        // Repositories 0 and 1 say the flag means filter out; repository 2 alone raises
        // the other flag, so no fold but its own could learn it.
        let samples = vec![
            sample(vec![FlagCode::TestsUseNewNames], true),
            sample(vec![FlagCode::TestsUseNewNames], true),
            sample(vec![], false),
            sample(vec![FlagCode::TestsUseNewNames], true),
            sample(vec![FlagCode::TestsUseNewNames], true),
            sample(vec![], false),
            sample(vec![FlagCode::TestsUseNewNames, FlagCode::SolutionInIssue], true),
            sample(vec![FlagCode::SolutionInIssue], true),
            sample(vec![], false),
        ];
        let choice = VerdictChoice {
            strength: super::super::verdict::Strength { min_precision: 0.75, min_tasks: 2 },
            score_flags: false,
            flag_precision: 0.8,
            uncertain_margin: 0.2,
            min_slice: 5,
        };
        let folds = [0, 0, 0, 1, 1, 1, 2, 2, 2];
        let (verdicts, _) = cross_validated_verdicts(&samples, &folds, &[0.0; model::SIGNALS], 1.0, &choice);
        assert_eq!(verdicts[6], Verdict::Flag, "learnt from folds 0 and 1");
        assert_eq!(verdicts[7], Verdict::Uncertain, "solution_in_issue never raised elsewhere: not strong");
        assert_eq!(verdicts[8], Verdict::Keep);
    }

    #[test]
    fn kappa_is_agreement_beyond_chance() {
        assert_eq!(cohen_kappa(&[0, 1, 0, 1], &[0, 1, 0, 1]), Some(1.0));
        // Half agree, and chance agrees half the time: nothing beyond chance.
        assert_eq!(cohen_kappa(&[0, 0, 1, 1], &[0, 1, 0, 1]), Some(0.0));
        assert_eq!(cohen_kappa(&[1, 1], &[1, 1]), None);
    }

    #[test]
    fn precision_and_recall_count_true_positives() {
        let (precision, recall) = precision_recall(&[true, true, false, false], &[true, false, true, false]);
        assert_eq!((precision, recall), (Some(0.5), Some(0.5)));
        assert_eq!(precision_recall(&[false], &[false]), (None, None));
    }

    #[test]
    fn annotations_are_read_with_their_multiline_notes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("annotations.csv");
        fs_err::write(
            &path,
            "instance_id,underspecified,underspecified_notes,false_negative,false_negative_notes,other_major_issues,other_notes,difficulty,filter_out\n\
             a__b-1,2.0,\"line one\nline \"\"two\"\"\",0.0,,0.0,,15 min - 1 hour,True\n\
             a__b-2,0.0,,1.0,,0.0,,<15 min fix,False\n",
        )
        .unwrap();
        let annotations = read_annotations(&path).unwrap();
        assert_eq!(annotations.len(), 2);
        assert_eq!(annotations["a__b-1"].underspecified, 2.0);
        assert!(annotations["a__b-1"].filter_out);
        assert_eq!(annotations["a__b-2"].difficulty, Difficulty::UnderFifteenMinutes);
        fs_err::write(&path, "instance_id,underspecified,false_negative,other_major_issues,difficulty,filter_out\nx,1,1,0,2 days,False\n").unwrap();
        let error = read_annotations(&path).unwrap_err().to_string();
        assert!(error.contains("`x`") && error.contains("difficulty"), "{error}");
    }
}
