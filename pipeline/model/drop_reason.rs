//! Why an item left the funnel: one closed set of reason codes per stage, each code
//! spelled once (its `as_str`, the `snake_case` string that stores, releases and
//! `status` hold), and [`DropReason::is_failure`], the one place that says which
//! codes mean that the machinery failed (the run exits 1) rather than that the item
//! is unfit (a data drop, exit 0).
//!
//! The strings are a stored contract: `stage_items.reason` in existing stores and
//! `left_out_by_filters` in released manifests hold them, so a variant's string is
//! never changed, only added. Reading the funnel back keeps plain strings (a newer
//! writer's code must not break an older reader). Also here: the funnel's one
//! ordering of counted reasons, [`most_frequent_first`].

use std::fmt;
use std::str::FromStr;

use super::Stage;

/// A string that names no reason of the stage.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{code}` is not a {stage} drop reason; known: {known}")]
pub struct UnknownDropReason {
    pub stage: &'static str,
    pub code: String,
    pub known: String,
}

/// One enum per stage, with its codes, `as_str`, `FromStr`, `Display`, serde as the
/// code, and `ALL`.
macro_rules! drop_reasons {
    (
        $(#[$meta:meta])*
        $name:ident ($stage:literal) {
            $($(#[$variant_meta:meta])* $variant:ident => $code:literal,)+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum $name {
            $($(#[$variant_meta])* $variant,)+
        }

        impl $name {
            /// Every reason of the stage, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)+];

            /// The stored code.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $code,)+
                }
            }

            /// Whether the machinery failed (see [`DropReason::is_failure`]).
            pub fn is_failure(self) -> bool {
                DropReason::from(self).is_failure()
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                formatter.write_str(self.as_str())
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                self.as_str()
            }
        }

        impl FromStr for $name {
            type Err = UnknownDropReason;
            fn from_str(code: &str) -> Result<Self, Self::Err> {
                $name::ALL.iter().copied().find(|reason| reason.as_str() == code).ok_or_else(|| UnknownDropReason {
                    stage: $stage,
                    code: code.to_string(),
                    known: $name::ALL.iter().map(|reason| reason.as_str()).collect::<Vec<_>>().join(", "),
                })
            }
        }

        crate::spelled::serde_by_spelling!($name);
    };
}

drop_reasons! {
    /// Why `discover` left a repository out.
    DiscoverDropReason ("discover") {
        /// A dataset given with `--exclude-dataset` has tasks from it.
        InReferenceDataset => "in_reference_dataset",
    }
}

drop_reasons! {
    /// Why `crawl` did not keep a pull request.
    CrawlDropReason ("crawl") {
        /// Closed without being merged.
        NotMerged => "not_merged",
    }
}

drop_reasons! {
    /// Why `mirror` has no mirror of a repository.
    MirrorDropReason ("mirror") {
        /// Cloning or fetching failed (a failure: exit 1).
        FetchFailed => "fetch_failed",
    }
}

drop_reasons! {
    /// Why a merged pull request did not become a candidate.
    ExtractDropReason ("extract") {
        PullHeadMissing => "pull_head_missing",
        BaseCommitMissing => "base_commit_missing",
        NoMergeBase => "no_merge_base",
        NoLinkedIssue => "no_linked_issue",
        LinkedIssueMissing => "linked_issue_missing",
        TooManyFiles => "too_many_files",
        TooManyLines => "too_many_lines",
        NoTestChange => "no_test_change",
        NoSourceChange => "no_source_change",
        /// git failed to read the mirror (a failure: exit 1, retried by the next run).
        ExtractFailed => "extract_failed",
    }
}

drop_reasons! {
    /// Why a candidate did not become a task.
    ValidateDropReason ("validate") {
        /// A placeholder while a task is under way; never stored.
        NotStarted => "not_started",
        NoMirror => "no_mirror",
        InvalidRepoConfig => "invalid_repo_config",
        EnvironmentCommitMissing => "environment_commit_missing",
        /// The row's base_commit is not in the repository's mirror (a data drop: the
        /// row names a commit the repository does not have, or the mirror is old).
        BaseCommitMissing => "base_commit_missing",
        EnvironmentInferenceFailed => "environment_inference_failed",
        BaseImageMissing => "base_image_missing",
        /// The project needs a runtime that no base image provides (its
        /// `requires-python`, or dependencies of its date), and the nearest runtime
        /// there is did not do: the detail names the runtime it needs.
        RuntimeUnavailable => "runtime_unavailable",
        EnvironmentBuildFailed => "environment_build_failed",
        EnvironmentBuildTimeout => "environment_build_timeout",
        /// Every rung of the environment ladder built an image in which the touched
        /// test files' existing tests did not run (none passed).
        EnvironmentUnusable => "environment_unusable",
        NoTestFiles => "no_test_files",
        /// The container could not be run (a failure: exit 1).
        ContainerFailed => "container_failed",
        /// The store could not be read or written (a failure: exit 1).
        StoreError => "store_error",
        InstallFailed => "install_failed",
        TestPatchDoesNotApply => "test_patch_does_not_apply",
        GoldPatchDoesNotApply => "gold_patch_does_not_apply",
        RunFailed => "run_failed",
        Timeout => "timeout",
        OutOfMemory => "out_of_memory",
        Killed => "killed",
        NoTestsCollected => "no_tests_collected",
        NoFailToPass => "no_fail_to_pass",
    }
}

impl ValidateDropReason {
    /// Whether the task was lost to its environment: it could not be inferred, built,
    /// installed, or could not collect the tests, which says more of the environment
    /// than of the task. When a run validates tasks and every one is lost this way,
    /// `validate` exits 1 (docs/commands.md, "Exit codes"): nothing came out, and the cause is
    /// one to fix (a base image, a config, a pin) before running again.
    pub fn is_environment(self) -> bool {
        use ValidateDropReason::*;
        matches!(
            self,
            EnvironmentInferenceFailed
                | BaseImageMissing
                | RuntimeUnavailable
                | EnvironmentBuildFailed
                | EnvironmentBuildTimeout
                | EnvironmentUnusable
                | InstallFailed
                | NoTestsCollected
        )
    }
}

drop_reasons! {
    /// Why probe set a task aside, or could not score it. Not a drop from the dataset:
    /// a release keeps such tasks unless asked not to (`--min-mutation-score`,
    /// `--exclude-flag weak_tests`).
    ProbeDropReason ("probe") {
        /// A mutant of the gold patch passed every listed test (`weak_tests`).
        WeakTests => "weak_tests",
        /// No mutant could be made, or none applied, built and ran: no score.
        NoViableMutant => "no_viable_mutant",
        /// The task's environment image is gone (or was never recorded): run
        /// `validate --instance ID` to build it again.
        EnvironmentMissing => "environment_missing",
        /// No mirror of the task's repository (`mirror`, or `SWE_HARVEST_MIRRORS`).
        NoMirror => "no_mirror",
        /// The gold patch no longer applies to the base commit in the environment.
        GoldPatchDoesNotApply => "gold_patch_does_not_apply",
        /// The install or the test patch failed in the probe's container.
        InstallFailed => "install_failed",
        /// The container engine failed (a failure: exit 1).
        ContainerFailed => "container_failed",
    }
}

drop_reasons! {
    /// Why the screen set a task aside for review. Not a drop from the dataset: a
    /// release keeps flagged tasks unless asked not to (`--only-kept`).
    ScreenDropReason ("screen") {
        /// The screen's verdict is `flag` (a flag of `screen.flag_on`, or a score above
        /// `screen.flag_above`); the record says which flags.
        Flagged => "flagged",
    }
}

drop_reasons! {
    /// Why a release left out a validated task (its filters, decontamination, `--swt`,
    /// people's review decisions with `--reviewed-only` / `--exclude-rejected`).
    ReleaseDropReason ("release") {
        CreatedBeforeWindow => "created_before_window",
        CreatedAfterWindow => "created_after_window",
        RepositoryNotSelected => "repository_not_selected",
        InstanceIdInExcludedDataset => "instance_id_in_excluded_dataset",
        PatchInExcludedDataset => "patch_in_excluded_dataset",
        SwtCoverageNotMeasured => "swt_coverage_not_measured",
        SwtFewerValidationRuns => "swt_fewer_validation_runs",
        SwtGoldenTestsUnstable => "swt_golden_tests_unstable",
        /// `--max-quality-score`, `--exclude-flag` or `--only-kept` was asked for and
        /// the task has no quality record for its content (run `screen`).
        NotScreened => "not_screened",
        QualityScoreAboveMax => "quality_score_above_max",
        ExcludedFlag => "excluded_flag",
        FlaggedByScreen => "flagged_by_screen",
        /// `--only-kept`: the screen's verdict is `uncertain` (weak evidence).
        UncertainInScreen => "uncertain_in_screen",
        RejectedInReview => "rejected_in_review",
        NotReviewed => "not_reviewed",
        NeedsWorkInReview => "needs_work_in_review",
        /// `--min-mutation-score` was asked for and the task has no probe record for
        /// its content, or one without a score (no viable mutant).
        NotProbed => "not_probed",
        MutationScoreBelowMin => "mutation_score_below_min",
    }
}

/// Declares [`DropReason`], one variant per stage named as its [`Stage`], with its
/// `stage`, its `as_str` and the `From` of each stage's reasons, from one list.
macro_rules! drop_reason_of_stages {
    ($($stage:ident($stage_reason:ident),)+) => {
        /// A drop reason of any stage.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum DropReason {
            $($stage($stage_reason),)+
        }

        impl DropReason {
            /// The stage that drops items for this reason.
            pub fn stage(self) -> Stage {
                match self {
                    $(DropReason::$stage(_) => Stage::$stage,)+
                }
            }

            /// The stored code.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(DropReason::$stage(reason) => reason.as_str(),)+
                }
            }
        }

        $(impl From<$stage_reason> for DropReason {
            fn from(reason: $stage_reason) -> DropReason {
                DropReason::$stage(reason)
            }
        })+
    };
}

drop_reason_of_stages! {
    Discover(DiscoverDropReason),
    Crawl(CrawlDropReason),
    Mirror(MirrorDropReason),
    Extract(ExtractDropReason),
    Validate(ValidateDropReason),
    Probe(ProbeDropReason),
    Screen(ScreenDropReason),
    Release(ReleaseDropReason),
}

impl DropReason {
    /// The one list of failures: the machinery (network, git, Docker, the store)
    /// failed, so the item says nothing about the data and the command exits 1. Every
    /// other reason is a data drop: the item is unfit, and the command exits 0.
    /// `install_failed` is a data drop: the task's own environment does not install.
    pub fn is_failure(self) -> bool {
        matches!(
            self,
            DropReason::Mirror(MirrorDropReason::FetchFailed)
                | DropReason::Extract(ExtractDropReason::ExtractFailed)
                | DropReason::Validate(ValidateDropReason::ContainerFailed | ValidateDropReason::StoreError)
                | DropReason::Probe(ProbeDropReason::ContainerFailed)
        )
    }
}

impl fmt::Display for DropReason {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.as_str())
    }
}

/// Counted reasons, most frequent first, ties by code: the one order in which the
/// funnel, the stage summaries, the report and the card list drop reasons.
pub fn most_frequent_first<Reason: AsRef<str>, Count: Ord + Copy>(
    counts: impl IntoIterator<Item = (Reason, Count)>,
) -> Vec<(Reason, Count)> {
    let mut counts: Vec<(Reason, Count)> = counts.into_iter().collect();
    counts.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.as_ref().cmp(b.0.as_ref())));
    counts
}

/// `reason count, reason count`, most frequent first.
pub fn format_counts<Reason: AsRef<str>, Count: Ord + Copy + fmt::Display>(
    counts: impl IntoIterator<Item = (Reason, Count)>,
) -> String {
    most_frequent_first(counts)
        .iter()
        .map(|(reason, count)| format!("{} {count}", reason.as_ref()))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde::{Deserialize, Serialize};

    use super::*;

    /// Every code of every stage, as stores and releases hold them today (docs,
    /// module docs); a changed or lost string would change the meaning of stored data.
    const STORED_CODES: [(&str, &[&str]); 8] = [
        ("discover", &["in_reference_dataset"]),
        ("crawl", &["not_merged"]),
        ("mirror", &["fetch_failed"]),
        (
            "extract",
            &[
                "pull_head_missing",
                "base_commit_missing",
                "no_merge_base",
                "no_linked_issue",
                "linked_issue_missing",
                "too_many_files",
                "too_many_lines",
                "no_test_change",
                "no_source_change",
                "extract_failed",
            ],
        ),
        (
            "validate",
            &[
                "not_started",
                "no_mirror",
                "invalid_repo_config",
                "environment_commit_missing",
                "base_commit_missing",
                "environment_inference_failed",
                "base_image_missing",
                "runtime_unavailable",
                "environment_build_failed",
                "environment_build_timeout",
                "environment_unusable",
                "no_test_files",
                "container_failed",
                "store_error",
                "install_failed",
                "test_patch_does_not_apply",
                "gold_patch_does_not_apply",
                "run_failed",
                "timeout",
                "out_of_memory",
                "killed",
                "no_tests_collected",
                "no_fail_to_pass",
            ],
        ),
        (
            "probe",
            &[
                "weak_tests",
                "no_viable_mutant",
                "environment_missing",
                "no_mirror",
                "gold_patch_does_not_apply",
                "install_failed",
                "container_failed",
            ],
        ),
        ("screen", &["flagged"]),
        (
            "release",
            &[
                "created_before_window",
                "created_after_window",
                "repository_not_selected",
                "instance_id_in_excluded_dataset",
                "patch_in_excluded_dataset",
                "swt_coverage_not_measured",
                "swt_fewer_validation_runs",
                "swt_golden_tests_unstable",
                "not_screened",
                "quality_score_above_max",
                "excluded_flag",
                "flagged_by_screen",
                "uncertain_in_screen",
                "rejected_in_review",
                "not_reviewed",
                "needs_work_in_review",
                "not_probed",
                "mutation_score_below_min",
            ],
        ),
    ];

    fn codes<Reason: Copy + Into<DropReason>>(all: &[Reason]) -> Vec<&'static str> {
        all.iter().map(|reason| (*reason).into().as_str()).collect()
    }

    fn round_trips<Reason>(all: &[Reason])
    where
        Reason: Copy + fmt::Debug + PartialEq + FromStr + Serialize + for<'de> Deserialize<'de> + Into<DropReason>,
        <Reason as FromStr>::Err: fmt::Debug,
    {
        for reason in all {
            let code = (*reason).into().as_str();
            assert_eq!(code.parse::<Reason>().unwrap(), *reason, "{code}");
            let json = serde_json::to_string(reason).unwrap();
            assert_eq!(json, format!("\"{code}\""));
            assert_eq!(serde_json::from_str::<Reason>(&json).unwrap(), *reason);
        }
    }

    #[test]
    fn every_stage_reason_round_trips_and_keeps_its_stored_string() {
        round_trips(DiscoverDropReason::ALL);
        round_trips(CrawlDropReason::ALL);
        round_trips(MirrorDropReason::ALL);
        round_trips(ExtractDropReason::ALL);
        round_trips(ValidateDropReason::ALL);
        round_trips(ProbeDropReason::ALL);
        round_trips(ScreenDropReason::ALL);
        round_trips(ReleaseDropReason::ALL);
        let today: BTreeMap<&str, Vec<&'static str>> = BTreeMap::from([
            ("discover", codes(DiscoverDropReason::ALL)),
            ("crawl", codes(CrawlDropReason::ALL)),
            ("mirror", codes(MirrorDropReason::ALL)),
            ("extract", codes(ExtractDropReason::ALL)),
            ("validate", codes(ValidateDropReason::ALL)),
            ("probe", codes(ProbeDropReason::ALL)),
            ("screen", codes(ScreenDropReason::ALL)),
            ("release", codes(ReleaseDropReason::ALL)),
        ]);
        for (stage, stored) in STORED_CODES {
            assert_eq!(today[stage], stored, "the {stage} codes changed");
            for code in stored {
                assert_eq!(code.to_string(), code.to_lowercase().replace(['-', ' '], "_"), "{code} is snake_case");
            }
        }
    }

    #[test]
    fn the_codes_of_failed_environment_images_are_validate_reasons() {
        // Stores written before the enums hold these codes for failed environment images.
        for (code, reason) in [
            ("base_image_missing", ValidateDropReason::BaseImageMissing),
            ("environment_build_timeout", ValidateDropReason::EnvironmentBuildTimeout),
            ("environment_build_failed", ValidateDropReason::EnvironmentBuildFailed),
        ] {
            assert_eq!(code.parse::<ValidateDropReason>().unwrap(), reason);
        }
    }

    #[test]
    fn an_unknown_code_names_the_stage_and_the_known_codes() {
        let error = "no_such_reason".parse::<MirrorDropReason>().unwrap_err();
        assert_eq!(error.to_string(), "`no_such_reason` is not a mirror drop reason; known: fetch_failed");
    }

    #[test]
    fn failures_are_exactly_the_machinery_reasons() {
        let all: Vec<DropReason> = [
            codes_of(DiscoverDropReason::ALL),
            codes_of(CrawlDropReason::ALL),
            codes_of(MirrorDropReason::ALL),
            codes_of(ExtractDropReason::ALL),
            codes_of(ValidateDropReason::ALL),
            codes_of(ScreenDropReason::ALL),
            codes_of(ReleaseDropReason::ALL),
        ]
        .concat();
        let failures: Vec<String> = all
            .iter()
            .filter(|reason| reason.is_failure())
            .map(|reason| format!("{} {reason}", reason.stage()))
            .collect();
        assert_eq!(
            failures,
            ["mirror fetch_failed", "extract extract_failed", "validate container_failed", "validate store_error"]
        );
        assert!(ValidateDropReason::ContainerFailed.is_failure());
        assert!(!ValidateDropReason::InstallFailed.is_failure());
    }

    fn codes_of<Reason: Copy + Into<DropReason>>(all: &[Reason]) -> Vec<DropReason> {
        all.iter().map(|reason| (*reason).into()).collect()
    }

    #[test]
    fn reasons_are_listed_most_frequent_first_then_by_code() {
        let counts = BTreeMap::from([("b".to_string(), 2u64), ("a".to_string(), 2), ("c".to_string(), 5)]);
        assert_eq!(format_counts(&counts), "c 5, a 2, b 2");
        let typed = BTreeMap::from([
            (ExtractDropReason::NoTestChange, 1usize),
            (ExtractDropReason::NoLinkedIssue, 1),
            (ExtractDropReason::TooManyFiles, 3),
        ]);
        assert_eq!(format_counts(&typed), "too_many_files 3, no_linked_issue 1, no_test_change 1");
        assert_eq!(format_counts(BTreeMap::<String, u64>::new()), "");
    }
}
