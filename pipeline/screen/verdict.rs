//! The verdict, precision-first: `flag` only on strong evidence, `keep` where there is
//! none, `uncertain` between, so that a reviewer knows where to look first and a
//! screened split (`release --only-kept`) drops what the evidence condemns.
//!
//! - `flag`: the task raises a flag of `screen.flag_on` (the flags whose measured
//!   precision on the development data is well above its base rate, and the flags that
//!   observe a defect in the task's own runs: `flaky_tests`, `weak_tests`), or its
//!   score is above `screen.flag_above`;
//! - `uncertain`: any other flag, or a score above `screen.uncertain_above`;
//! - `keep`: no flag, and a score at or below `screen.uncertain_above`.
//!
//! How the thresholds were chosen, with the figures, is in docs/screen.md; the rules
//! that choose them ([`strong_flags`], [`score_threshold`]) are here so that the
//! measurement (cross-validation grouped by repository) applies the same rules to
//! each fold.

use serde::{Deserialize, Serialize};

use super::flags::{Flag, FlagCode};

crate::spelled::spelled_enum! {
    /// What the screen advises: keep, look first (uncertain), or flag.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum Verdict {
        Keep => "keep",
        Uncertain => "uncertain",
        Flag => "flag",
    }
}

impl std::str::FromStr for Verdict {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Verdict::ALL.into_iter().find(|verdict| verdict.as_str() == text).ok_or_else(|| {
            format!("`{text}` is not a verdict; known: {}", Verdict::ALL.map(Verdict::as_str).join(", "))
        })
    }
}

crate::spelled::serde_by_spelling!(Verdict);

/// The verdict's settings (part of `[screen]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VerdictRule {
    /// Flags that are strong evidence: a task raising one is `flag`.
    pub flag_on: Vec<FlagCode>,
    /// A score above this is `flag` on its own.
    pub flag_above: f64,
    /// A score above this makes a task with no flag `uncertain`.
    pub uncertain_above: f64,
}

/// The verdict of a task with these flags and this score.
pub fn decide(flags: &[Flag], score: f64, rule: &VerdictRule) -> Verdict {
    decide_codes(flags.iter().map(|flag| flag.code), score, rule)
}

/// [`decide`] over the flags' codes alone (what the measurement has of each task).
pub fn decide_codes(codes: impl IntoIterator<Item = FlagCode>, score: f64, rule: &VerdictRule) -> Verdict {
    let codes: Vec<FlagCode> = codes.into_iter().collect();
    if codes.iter().any(|code| rule.flag_on.contains(code)) || score > rule.flag_above {
        Verdict::Flag
    } else if !codes.is_empty() || score > rule.uncertain_above {
        Verdict::Uncertain
    } else {
        Verdict::Keep
    }
}

/// Flags that observe a defect of the task in its own runs rather than predict a
/// reader's judgement: the runs disagreed (`flaky_tests`), or a wrong fix passed
/// (`weak_tests`). Annotators saw no runs, so the annotations cannot measure them;
/// they are strong by decision (docs/screen.md).
pub const OBSERVED: [FlagCode; 2] = [FlagCode::FlakyTests, FlagCode::WeakTests];

/// The rule that makes a measured flag strong evidence: its precision is at least
/// `min_precision` on at least `min_tasks` tasks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Strength {
    pub min_precision: f64,
    pub min_tasks: usize,
}

/// The strong flags of measured `(code, tasks, filtered_out)` figures, then the
/// observed ones, in [`FlagCode::ALL`] order.
pub fn strong_flags(measured: &[(FlagCode, usize, usize)], strength: Strength) -> Vec<FlagCode> {
    FlagCode::ALL
        .into_iter()
        .filter(|code| {
            OBSERVED.contains(code)
                || measured.iter().any(|(measured, tasks, filtered_out)| {
                    measured == code
                        && *tasks >= strength.min_tasks
                        && *filtered_out as f64 >= strength.min_precision * *tasks as f64 - 1e-12
                })
        })
        .collect()
}

/// The lowest score threshold above which at least `min_tasks` of `samples` (score,
/// filtered out) lie and at least `min_precision` of those were filtered out: the
/// largest top slice of the scores that is that precise. Halfway between the slice's
/// lowest score and the next one, rounded to three decimals; `None` when no slice is.
pub fn score_threshold(samples: &[(f64, bool)], min_precision: f64, min_tasks: usize) -> Option<f64> {
    let mut sorted: Vec<(f64, bool)> = samples.to_vec();
    sorted.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut best = None;
    let mut filtered = 0;
    for (index, (score, filtered_out)) in sorted.iter().enumerate() {
        filtered += usize::from(*filtered_out);
        let above = index + 1;
        // A slice ends between two different scores.
        let next = sorted.get(index + 1).map(|(next, _)| *next);
        if next == Some(*score) {
            continue;
        }
        if above >= min_tasks && filtered as f64 >= min_precision * above as f64 - 1e-12 {
            let threshold = match next {
                Some(next) => (score + next) / 2.0,
                None => score - 1e-3,
            };
            best = Some((threshold * 1000.0).round() / 1000.0);
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::screen::flags::Flag;

    fn flag(code: FlagCode) -> Flag {
        Flag { code, reason: String::new(), evidence: Vec::new(), precision: None }
    }

    fn rule() -> VerdictRule {
        VerdictRule {
            flag_on: vec![FlagCode::TestsAssertUnseenStrings, FlagCode::FlakyTests],
            flag_above: 0.9,
            uncertain_above: 0.7,
        }
    }

    #[test]
    fn strong_evidence_flags_other_evidence_is_uncertain_and_none_keeps() {
        let rule = rule();
        assert_eq!(decide(&[flag(FlagCode::TestsAssertUnseenStrings)], 0.1, &rule), Verdict::Flag);
        assert_eq!(decide(&[flag(FlagCode::SolutionInIssue), flag(FlagCode::FlakyTests)], 0.1, &rule), Verdict::Flag);
        assert_eq!(decide(&[], 0.95, &rule), Verdict::Flag, "a score above flag_above");
        assert_eq!(decide(&[flag(FlagCode::SolutionInIssue)], 0.1, &rule), Verdict::Uncertain);
        assert_eq!(decide(&[], 0.75, &rule), Verdict::Uncertain, "a score above uncertain_above");
        assert_eq!(decide(&[], 0.7, &rule), Verdict::Keep, "at the threshold: keep");
        assert_eq!(decide(&[], 0.2, &rule), Verdict::Keep);
    }

    #[test]
    fn verdicts_keep_their_spelling_and_order() {
        assert_eq!(Verdict::ALL.map(Verdict::as_str), ["keep", "uncertain", "flag"]);
        for verdict in Verdict::ALL {
            assert_eq!(verdict.as_str().parse::<Verdict>().unwrap(), verdict);
            assert_eq!(serde_json::to_string(&verdict).unwrap(), format!("\"{verdict}\""));
        }
        assert!("flagged".parse::<Verdict>().unwrap_err().contains("keep, uncertain, flag"));
    }

    #[test]
    fn strong_flags_are_precise_on_enough_tasks_and_observed_ones_always() {
        let measured = [
            (FlagCode::TestsAssertUnseenStrings, 8, 7),
            (FlagCode::TestsUseNewNames, 2, 2),
            (FlagCode::SolutionInIssue, 10, 4),
        ];
        let strong = strong_flags(&measured, Strength { min_precision: 0.75, min_tasks: 3 });
        assert_eq!(strong, [FlagCode::TestsAssertUnseenStrings, FlagCode::FlakyTests, FlagCode::WeakTests]);
        let strong = strong_flags(&measured, Strength { min_precision: 0.75, min_tasks: 2 });
        assert!(strong.contains(&FlagCode::TestsUseNewNames));
    }

    #[test]
    fn the_score_threshold_is_the_largest_precise_top_slice() {
        let samples =
            [(0.9, true), (0.8, true), (0.7, false), (0.6, true), (0.5, true), (0.4, false), (0.3, false), (0.2, true)];
        // Top 2: 2/2; top 5: 4/5 = 0.8; top 8: 5/8.
        assert_eq!(score_threshold(&samples, 0.8, 2), Some(0.45));
        assert_eq!(score_threshold(&samples, 0.8, 6), None);
        assert_eq!(score_threshold(&samples, 1.0, 1), Some(0.75));
        // Ties stay together: a threshold never splits equal scores.
        assert_eq!(score_threshold(&[(0.5, true), (0.5, false), (0.4, true)], 1.0, 1), None);
    }
}
