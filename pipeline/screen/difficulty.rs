//! The difficulty estimate: one of SWE-bench Verified's buckets (how long an
//! experienced engineer would take), from the size of the change. Effort points =
//! changed lines + [`POINTS_PER_EXTRA_FILE`] per source file past the first +
//! [`POINTS_PER_EXTRA_HUNK`] per hunk past the first; the bucket is the first whose
//! bound the points do not pass. The first two bounds were chosen on the development
//! set: the best Cohen's kappa with the annotators' buckets (agreement beyond chance,
//! so that guessing the commonest bucket does not win), then the best exact agreement,
//! then the smallest bounds; the third is set by reasoning, as the development set has
//! two tasks above an hour (docs/screen.md).

use std::str::FromStr;

use super::signals::patch::PatchSize;

crate::spelled::spelled_enum! {
    /// SWE-bench Verified's difficulty buckets, in its own spelling.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum Difficulty {
        UnderFifteenMinutes => "<15 min fix",
        UpToAnHour => "15 min - 1 hour",
        UpToFourHours => "1-4 hours",
        OverFourHours => ">4 hours",
    }
}

impl Difficulty {
    /// The bucket's position, from 0.
    pub fn rank(self) -> usize {
        self as usize
    }
}

impl FromStr for Difficulty {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Difficulty::ALL.into_iter().find(|bucket| bucket.as_str() == text.trim()).ok_or_else(|| {
            format!(
                "`{text}` is not a difficulty bucket; known: {}",
                Difficulty::ALL.map(Difficulty::as_str).map(|bucket| format!("`{bucket}`")).join(", ")
            )
        })
    }
}

crate::spelled::serde_by_spelling!(Difficulty);

pub const POINTS_PER_EXTRA_FILE: usize = 10;
pub const POINTS_PER_EXTRA_HUNK: usize = 3;

/// The upper bounds (inclusive) of the first three buckets, in effort points.
pub const BOUNDS: [usize; 3] = [4, 36, 250];

/// How well the estimate agrees with annotators, as the dataset card says it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Agreement {
    pub set: &'static str,
    /// The share of tasks whose bucket is the annotators'.
    pub exact: f64,
    /// The share at most one bucket away.
    pub within_one: f64,
    pub kappa: f64,
}

/// The estimate's agreement with SWE-bench Verified's annotators on the whole
/// development set (231 tasks; docs/screen.md, measured 2026-11-26, bounds as they are).
pub const AGREEMENT: Agreement = Agreement {
    set: "231 annotated SWE-bench Lite test tasks (development set)",
    exact: 0.649,
    within_one: 0.996,
    kappa: 0.333,
};

/// Effort points of a change.
pub fn effort_points(size: PatchSize) -> usize {
    size.changed_lines
        + POINTS_PER_EXTRA_FILE * size.source_files.saturating_sub(1)
        + POINTS_PER_EXTRA_HUNK * size.hunks.saturating_sub(1)
}

/// The bucket of a change, with `bounds` (normally [`BOUNDS`]).
pub fn estimate_with(size: PatchSize, bounds: [usize; 3]) -> Difficulty {
    let points = effort_points(size);
    match bounds.iter().position(|bound| points <= *bound) {
        Some(0) => Difficulty::UnderFifteenMinutes,
        Some(1) => Difficulty::UpToAnHour,
        Some(_) => Difficulty::UpToFourHours,
        None => Difficulty::OverFourHours,
    }
}

pub fn estimate(size: PatchSize) -> Difficulty {
    estimate_with(size, BOUNDS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_follow_the_effort_points_and_keep_swe_bench_verifieds_spelling() {
        let size = |changed_lines, source_files, hunks| PatchSize { changed_lines, source_files, hunks };
        assert_eq!(estimate(size(2, 1, 1)), Difficulty::UnderFifteenMinutes);
        assert_eq!(effort_points(size(20, 2, 3)), 36);
        assert_eq!(estimate(size(20, 2, 3)), Difficulty::UpToAnHour);
        assert_eq!(estimate(size(21, 2, 3)), Difficulty::UpToFourHours);
        assert_eq!(estimate(size(150, 4, 10)), Difficulty::UpToFourHours);
        assert_eq!(estimate(size(900, 9, 30)), Difficulty::OverFourHours);
        for bucket in Difficulty::ALL {
            assert_eq!(bucket.as_str().parse::<Difficulty>().unwrap(), bucket);
            assert_eq!(serde_json::from_str::<Difficulty>(&serde_json::to_string(&bucket).unwrap()).unwrap(), bucket);
        }
        assert!("2 hours".parse::<Difficulty>().unwrap_err().contains("`1-4 hours`"));
    }
}
