//! Each flag's measured precision on the development data: of the annotated tasks
//! that raise it, how many SWE-bench Verified's annotators filtered out. Every flag
//! the screen raises carries its figure ([`FlagPrecision`]), so that a reader weighs a
//! flag by what it was worth on tasks people judged, and the verdict's strong flags
//! are the ones whose figure is well above the base rate (docs/screen.md).
//!
//! The figures are data, written here: the test
//! `screen::flag_precisions_are_the_development_sets` (tests/screen.rs) screens the
//! development set again and fails, printing the table to write, when they differ.

use super::flags::{FlagCode, FlagPrecision};

/// What the figures were measured on, as a flag's `set` says it.
pub const SET: &str = "development";

/// The development set the figures come from (docs/screen.md, "Where the sets come
/// from"): the annotated tasks that are always at hand.
pub const SET_DESCRIPTION: &str = "the 68 annotated SWE-bench Lite test tasks of the shared development set";

/// Tasks in that set, and how many of them the annotators filtered out (the base rate).
pub const SET_TASKS: usize = 68;
pub const SET_FILTERED_OUT: usize = 37;

/// Per flag: development tasks raising it, and of them filtered out. A flag that no
/// development task raises is absent.
pub const MEASURED: [(FlagCode, usize, usize); 6] = [
    (FlagCode::TestsUseNewNames, 2, 2),
    (FlagCode::TestsAssertUnseenStrings, 7, 7),
    (FlagCode::SolutionInIssue, 2, 1),
    (FlagCode::ChangesExistingTests, 2, 1),
    (FlagCode::FailToPassUnrelated, 1, 1),
    (FlagCode::TestsExpectUnnamedExceptions, 2, 2),
];

/// The base rate: the share of the development set's tasks filtered out.
pub fn base_rate() -> f64 {
    SET_FILTERED_OUT as f64 / SET_TASKS as f64
}

/// A precision figure from counts.
pub fn of_counts(tasks: usize, filtered_out: usize) -> FlagPrecision {
    FlagPrecision {
        precision: (tasks > 0).then(|| super::model::round(filtered_out as f64 / tasks as f64)),
        filtered_out,
        tasks,
        set: SET.to_string(),
    }
}

/// The measured precision of a flag.
pub fn of(code: FlagCode) -> FlagPrecision {
    let (tasks, filtered_out) = MEASURED
        .iter()
        .find(|(measured, _, _)| *measured == code)
        .map(|(_, tasks, filtered_out)| (*tasks, *filtered_out))
        .unwrap_or((0, 0));
    of_counts(tasks, filtered_out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_flag_has_a_figure_and_unmeasured_ones_say_so() {
        let measured = of(FlagCode::TestsAssertUnseenStrings);
        assert_eq!((measured.tasks, measured.filtered_out, measured.precision), (7, 7, Some(1.0)));
        assert!(measured.describe().starts_with("precision 1.00 (7 of 7 development tasks"), "{}", measured.describe());
        let unmeasured = of(FlagCode::FlakyTests);
        assert_eq!((unmeasured.tasks, unmeasured.precision), (0, None));
        assert_eq!(unmeasured.describe(), "precision not measured (no development task raises it)");
        assert!((base_rate() - 37.0 / 68.0).abs() < 1e-12);
        for (code, tasks, filtered_out) in MEASURED {
            assert!(filtered_out <= tasks && tasks <= SET_TASKS, "{code}");
        }
    }
}
