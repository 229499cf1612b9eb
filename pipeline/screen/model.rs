//! The score: a logistic regression over the signals, written down here with its
//! weights. `quality_score = 1 / (1 + e^-(intercept + Σ weight_i × signal_i))`, the
//! estimated probability that careful annotators would filter the task out.
//!
//! How the weights were made (model version 2): [`fit`] (a maximum a posteriori
//! logistic regression, Newton's method, deterministic) on the development set,
//! SWE-bench Verified's annotations (`filter_out`) of the 231 SWE-bench Lite test tasks
//! they cover, with a Gaussian prior on each weight centred on [`PRIOR`] (standard
//! deviation 0.1, [`PRIOR_PRECISION`]). The signals and the prior's width were chosen
//! by cross-validation grouped by repository (docs/screen.md): the signals are weak,
//! and weights pulled far from reasoning by one set of repositories ranked the tasks
//! of the others worse than the reasoned weights do; some signals never occur there
//! (no issue there is in another language), so they keep the weight reasoning gives
//! them. The intercept has no prior. The test
//! `screen::fitted_weights_are_the_fit_of_the_development_set` (tests/screen.rs) fits
//! again and compares with [`FITTED`], so the numbers here are the fit.

use serde::{Deserialize, Serialize};

/// The signals, in the order of the weights. Counts enter as `ln(1 + count)`.
pub const SIGNAL_NAMES: [&str; SIGNALS] = [
    "new_names_in_tests",
    "unnamed_exceptions_in_tests",
    "solution_share_in_issue",
    "issue_words",
    "issue_too_thin",
    "external_resources",
    "several_issues",
    "not_english",
    "changed_expectations",
    "patch_changed_lines",
    "patch_source_files",
    "ride_along_hunks",
    "fail_to_pass_tests",
    "flaky_tests",
];

/// How many signals there are.
pub const SIGNALS: usize = 14;

/// One task's signal values, in [`SIGNAL_NAMES`] order.
pub type SignalValues = [f64; SIGNALS];

/// The prior means of the weights, by reasoning before any data (log-odds per unit of
/// the signal): what each failure mode does to a task's chance of being kept. Names
/// and strings only the gold patch gives make valid solutions fail; a thin, foreign
/// or multi-issue statement is underspecified; a solution in the issue and a longer
/// statement specify more; size, sprawl and flakiness make grading less fair.
pub const PRIOR: SignalValues = [
    0.7,  // new_names_in_tests
    0.4,  // unnamed_exceptions_in_tests
    -0.5, // solution_share_in_issue
    -0.3, // issue_words
    1.0,  // issue_too_thin
    0.5,  // external_resources
    0.7,  // several_issues
    1.5,  // not_english
    0.3,  // changed_expectations
    0.3,  // patch_changed_lines
    0.3,  // patch_source_files
    0.3,  // ride_along_hunks
    0.1,  // fail_to_pass_tests
    0.7,  // flaky_tests
];

/// The precision (1 / variance) of the prior on each weight: standard deviation 0.1,
/// the best of the widths compared by grouped cross-validation (docs/screen.md).
pub const PRIOR_PRECISION: f64 = 100.0;

/// A logistic model.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Model {
    pub intercept: f64,
    pub weights: SignalValues,
}

/// The model in use: [`fit`] on the development set (see the module's documentation).
pub const FITTED: Model = Model {
    intercept: 0.606074,
    weights: [
        0.698492,  // new_names_in_tests
        0.407879,  // unnamed_exceptions_in_tests
        -0.509629, // solution_share_in_issue
        -0.320058, // issue_words
        1.002651,  // issue_too_thin
        0.498527,  // external_resources
        0.692917,  // several_issues
        1.500000,  // not_english (never in the development set: the prior)
        0.291860,  // changed_expectations
        0.339508,  // patch_changed_lines
        0.300000,  // patch_source_files (always one file there: the prior)
        0.298206,  // ride_along_hunks
        0.130166,  // fail_to_pass_tests
        0.700000,  // flaky_tests (no validation runs there: the prior)
    ],
};

/// The version of the signals and the model; stored with each record, so that a
/// changed screen screens every task again. Version 3 keeps version 2's weights, reads
/// four signals as the flags now do (`new_names_in_tests`,
/// `changed_expectations`, `unnamed_exceptions_in_tests`, `issue_too_thin`: see
/// docs/screen.md), and changes the flags and the verdict; the larger part of the
/// development set was not at hand to refit.
pub const MODEL_VERSION: &str = "3";

impl Model {
    /// The linear part, `intercept + Σ weight × signal`.
    pub fn logit(&self, signals: &SignalValues) -> f64 {
        self.intercept + self.weights.iter().zip(signals).map(|(weight, value)| weight * value).sum::<f64>()
    }

    /// The estimated probability that annotators would filter the task out.
    pub fn score(&self, signals: &SignalValues) -> f64 {
        sigmoid(self.logit(signals))
    }
}

pub fn sigmoid(logit: f64) -> f64 {
    1.0 / (1.0 + (-logit).exp())
}

/// One signal's part in a score: what a reader checks the score with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Contribution {
    pub signal: String,
    pub value: f64,
    pub weight: f64,
    /// `value × weight`, in log-odds.
    pub contribution: f64,
}

/// The signals' parts in the score, largest first by magnitude; zero parts left out.
pub fn contributions(model: &Model, signals: &SignalValues) -> Vec<Contribution> {
    let mut parts: Vec<Contribution> = SIGNAL_NAMES
        .iter()
        .zip(signals.iter().zip(&model.weights))
        .filter(|(_, (value, _))| **value != 0.0)
        .map(|(name, (value, weight))| Contribution {
            signal: name.to_string(),
            value: round(*value),
            weight: *weight,
            contribution: round(value * weight),
        })
        .collect();
    parts.sort_by(|a, b| b.contribution.abs().total_cmp(&a.contribution.abs()).then_with(|| a.signal.cmp(&b.signal)));
    parts
}

/// Six decimals: enough to check by hand, stable across platforms' last bits.
pub fn round(value: f64) -> f64 {
    (value * 1e6).round() / 1e6
}

/// Fits the model by maximum a posteriori: the log-likelihood of `samples` minus
/// `precision / 2 × Σ (weight − prior)²` (the intercept unpenalised), maximised by
/// Newton's method from the prior. Deterministic: the same samples give the same
/// weights.
pub fn fit(samples: &[(SignalValues, bool)], prior: &SignalValues, precision: f64) -> Model {
    const PARAMETERS: usize = SIGNALS + 1;
    let mut theta = [0.0; PARAMETERS];
    theta[1..].copy_from_slice(prior);
    for _ in 0..100 {
        let mut gradient = [0.0; PARAMETERS];
        let mut hessian = [[0.0; PARAMETERS]; PARAMETERS];
        for (signals, label) in samples {
            let mut x = [1.0; PARAMETERS];
            x[1..].copy_from_slice(signals);
            let p = sigmoid(theta.iter().zip(&x).map(|(t, v)| t * v).sum());
            let residual = p - if *label { 1.0 } else { 0.0 };
            let curvature = p * (1.0 - p);
            for i in 0..PARAMETERS {
                gradient[i] += residual * x[i];
                for j in 0..PARAMETERS {
                    hessian[i][j] += curvature * x[i] * x[j];
                }
            }
        }
        for i in 1..PARAMETERS {
            gradient[i] += precision * (theta[i] - prior[i - 1]);
            hessian[i][i] += precision;
        }
        // A tiny ridge on the intercept keeps the system solvable on degenerate data.
        hessian[0][0] += 1e-9;
        let step = solve(hessian, gradient);
        let mut largest = 0.0f64;
        for i in 0..PARAMETERS {
            theta[i] -= step[i];
            largest = largest.max(step[i].abs());
        }
        if largest < 1e-12 {
            break;
        }
    }
    let mut weights = [0.0; SIGNALS];
    weights.copy_from_slice(&theta[1..]);
    Model { intercept: theta[0], weights }
}

/// Solves `a x = b` by Gaussian elimination with partial pivoting.
fn solve<const N: usize>(mut a: [[f64; N]; N], mut b: [f64; N]) -> [f64; N] {
    for column in 0..N {
        let pivot = (column..N).max_by(|x, y| a[*x][column].abs().total_cmp(&a[*y][column].abs())).unwrap_or(column);
        a.swap(column, pivot);
        b.swap(column, pivot);
        let diagonal = a[column][column];
        if diagonal.abs() < 1e-300 {
            continue;
        }
        for row in 0..N {
            if row == column {
                continue;
            }
            let factor = a[row][column] / diagonal;
            if factor == 0.0 {
                continue;
            }
            let pivot_row = a[column];
            for (cell, pivot) in a[row].iter_mut().zip(pivot_row).skip(column) {
                *cell -= factor * pivot;
            }
            b[row] -= factor * b[column];
        }
    }
    let mut x = [0.0; N];
    for i in 0..N {
        x[i] = if a[i][i].abs() < 1e-300 { 0.0 } else { b[i] / a[i][i] };
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signals(first: f64, second: f64) -> SignalValues {
        let mut values = [0.0; SIGNALS];
        values[0] = first;
        values[1] = second;
        values
    }

    #[test]
    fn the_score_is_the_logistic_of_the_weighted_sum() {
        let mut model = Model { intercept: -1.0, weights: [0.0; SIGNALS] };
        model.weights[0] = 2.0;
        assert!((model.score(&signals(0.5, 3.0)) - 0.5).abs() < 1e-12);
        assert!((model.score(&signals(1.5, 0.0)) - sigmoid(2.0)).abs() < 1e-12);
        let parts = contributions(&model, &signals(1.5, 3.0));
        assert_eq!(parts.len(), 2);
        assert_eq!((parts[0].signal.as_str(), parts[0].contribution), ("new_names_in_tests", 3.0));
        assert_eq!(parts[1].contribution, 0.0, "a signal with no weight adds nothing");
    }

    #[test]
    fn fitting_separates_what_the_signals_separate_and_is_deterministic() {
        // The first signal raises the chance of being filtered out; the second does nothing.
        let mut samples = Vec::new();
        for index in 0..40 {
            let high = index % 2 == 0;
            let label = if index % 5 == 0 { !high } else { high };
            samples.push((signals(if high { 1.0 } else { 0.0 }, (index % 3) as f64), label));
        }
        let zero = [0.0; SIGNALS];
        let model = fit(&samples, &zero, 1.0);
        assert!(model.weights[0] > 1.0, "{model:?}");
        assert!(model.weights[1].abs() < 0.5, "{model:?}");
        assert_eq!(model, fit(&samples, &zero, 1.0));
        // With no data, the weights are the prior.
        let prior = signals(0.3, -0.2);
        let empty = fit(&[], &prior, 1.0);
        assert!((empty.weights[0] - 0.3).abs() < 1e-9 && (empty.weights[1] + 0.2).abs() < 1e-9);
    }
}
