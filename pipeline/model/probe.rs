//! The value types of probe (wrong fixes derived from a task's gold patch, run
//! against its tests) as they are stored and released: a mutant, what its run gave,
//! and a task's probe record with its `mutation_score` and surviving mutants. Plain
//! data with serde; how mutants are made and run lives in `probe`, how records are
//! stored in `store::probe`.

use std::str::FromStr;

use serde::{Deserialize, Serialize};

crate::spelled::spelled_enum! {
    /// How a mutant differs from the gold patch (docs/probe.md says what each does).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
    pub enum MutationOperator {
        /// One hunk of a patch that has several is left out.
        OmitHunk => "omit_hunk",
        /// One changed line keeps its old text.
        RevertLine => "revert_line",
        /// One added condition is negated.
        NegateCondition => "negate_condition",
        /// One clause of an added `and` / `or` condition is dropped.
        DropCondition => "drop_condition",
        /// One boundary moves: `<` / `<=`, `>` / `>=`, `+ 1` / `- 1`.
        MoveBoundary => "move_boundary",
        /// One added literal (a number, a boolean, a string) becomes another of its type.
        ReplaceLiteral => "replace_literal",
        /// One added statement is dropped.
        DropStatement => "drop_statement",
        /// One added argument or element of a call or literal written over lines is dropped.
        DropArgument => "drop_argument",
        /// One added `return` gives its type's empty or default value.
        ReturnDefault => "return_default",
    }
}

impl FromStr for MutationOperator {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        MutationOperator::ALL.into_iter().find(|operator| operator.as_str() == text).ok_or_else(|| {
            format!(
                "unknown mutation operator `{text}` (known: {})",
                MutationOperator::ALL.map(|o| o.as_str()).join(", ")
            )
        })
    }
}

crate::spelled::serde_by_spelling!(MutationOperator);

/// One wrong fix derived from the gold patch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mutant {
    /// Stable within the task: the operator, the file and line, and a number when one
    /// line gives several mutants of one operator (`move_boundary:src/a.py:12:2`).
    pub id: String,
    pub operator: MutationOperator,
    /// The file it changes, and the line there as the fixed file numbers it.
    pub file: String,
    pub line: u32,
    /// The function the change is in, as the hunk header names it (may be empty).
    pub function: String,
    /// What differs from the gold patch, for a reader (`` `x < n` becomes `x <= n` ``).
    pub change: String,
    /// The mutant as a unified diff against the base commit: the patch a model could
    /// submit.
    pub patch: String,
}

impl Mutant {
    /// Lines the mutant adds or removes against the base commit: the size of the
    /// patch a reader has to read.
    pub fn changed_lines(&self) -> usize {
        self.patch
            .lines()
            .filter(|line| {
                (line.starts_with('+') && !line.starts_with("+++"))
                    || (line.starts_with('-') && !line.starts_with("---"))
            })
            .count()
    }

    /// The sentence of evidence for a survivor: what the tests never check.
    pub fn what_the_tests_miss(&self) -> String {
        SurvivingMutant::from(self).what_the_tests_miss()
    }
}

crate::spelled::spelled_enum! {
    /// What a mutant's run gave.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
    pub enum MutantStatus {
        /// A listed test failed (or gave no result while others ran): the tests reject it.
        Killed => "killed",
        /// Every listed test passed: a wrong fix the benchmark would score as resolved.
        Survived => "survived",
        /// It did not apply, build or collect: not a fix a model could submit.
        Stillborn => "stillborn",
        /// Its tests ran past probe's time limit (a loop the mutant made, mostly).
        Timeout => "timeout",
    }
}

impl FromStr for MutantStatus {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        MutantStatus::ALL
            .into_iter()
            .find(|status| status.as_str() == text)
            .ok_or_else(|| format!("unknown mutant status `{text}`"))
    }
}

crate::spelled::serde_by_spelling!(MutantStatus);

impl AsRef<str> for MutantStatus {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

/// One mutant and what its run gave.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MutantRun {
    pub mutant: Mutant,
    pub status: MutantStatus,
    /// The listed tests that did not pass (for `killed`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub killing_tests: Vec<String>,
    /// Why it is stillborn or timed out, in a line.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub detail: String,
    pub seconds: f64,
}

/// The hash of what a task's probe depends on: its base commit, patches, labels and
/// environment image. A record made for another hash says nothing of the task as it
/// is now (the screen and releases check it; probe runs again).
pub fn task_hash(
    candidate: &super::Candidate,
    fail_to_pass: &[String],
    pass_to_pass: &[String],
    image: Option<&str>,
) -> String {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    for part in [
        candidate.base_commit.as_str(),
        candidate.patch.as_str(),
        candidate.test_patch.as_str(),
        &fail_to_pass.join("\n"),
        &pass_to_pass.join("\n"),
        image.unwrap_or_default(),
    ] {
        hasher.update(part.as_bytes());
        hasher.update([0]);
    }
    hex::encode(hasher.finalize())
}

/// A task's probe: every mutant run, the score and why there is none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeRecord {
    pub instance_id: String,
    /// [`task_hash`] of the task it was made for.
    pub content_hash: String,
    /// Probe's version and settings it was made with.
    pub probe_key: String,
    /// killed / (killed + survived); `None` when no mutant was viable.
    pub mutation_score: Option<f64>,
    /// Why there is no score (no mutant could be made, none was viable, the task
    /// could not be probed); empty when there is one.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub no_score_reason: String,
    /// Mutants the operators could make before `probe.mutants` chose among them.
    pub candidates: usize,
    pub runs: Vec<MutantRun>,
    pub seconds: f64,
}

impl ProbeRecord {
    pub fn count(&self, status: MutantStatus) -> usize {
        self.runs.iter().filter(|run| run.status == status).count()
    }

    /// The surviving mutants, smallest diff first (ties by id).
    pub fn survivors(&self) -> Vec<&Mutant> {
        let mut survivors: Vec<&Mutant> =
            self.runs.iter().filter(|run| run.status == MutantStatus::Survived).map(|run| &run.mutant).collect();
        survivors.sort_by(|a, b| a.changed_lines().cmp(&b.changed_lines()).then_with(|| a.id.cmp(&b.id)));
        survivors
    }

    /// killed / (killed + survived), or `None` when neither happened.
    pub fn score_of(runs: &[MutantRun]) -> Option<f64> {
        let killed = runs.iter().filter(|run| run.status == MutantStatus::Killed).count();
        let survived = runs.iter().filter(|run| run.status == MutantStatus::Survived).count();
        (killed + survived > 0).then(|| killed as f64 / (killed + survived) as f64)
    }
}

/// What the screen, a release and the review page read of a probe: the score, the
/// survivors (smallest first) and how many mutants ran.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ProbeOutcome {
    pub mutation_score: Option<f64>,
    pub surviving_mutants: Vec<SurvivingMutant>,
    /// Mutants that ran to a verdict (killed or survived).
    pub viable: usize,
}

impl From<&ProbeRecord> for ProbeOutcome {
    fn from(record: &ProbeRecord) -> Self {
        ProbeOutcome {
            mutation_score: record.mutation_score,
            surviving_mutants: record.survivors().into_iter().map(SurvivingMutant::from).collect(),
            viable: record.count(MutantStatus::Killed) + record.count(MutantStatus::Survived),
        }
    }
}

/// A survivor as releases and `--input` rows carry it (`surviving_mutants`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SurvivingMutant {
    pub operator: MutationOperator,
    pub file: String,
    pub line: u32,
    #[serde(default)]
    pub function: String,
    pub change: String,
    pub patch: String,
}

impl SurvivingMutant {
    /// The sentence of evidence: what the tests never check.
    pub fn what_the_tests_miss(&self) -> String {
        let place = if self.function.is_empty() {
            format!("{}:{}", self.file, self.line)
        } else {
            format!("{}:{}, in `{}`", self.file, self.line, self.function)
        };
        format!("the tests pass when {} ({place})", self.change)
    }
}

impl From<&Mutant> for SurvivingMutant {
    fn from(mutant: &Mutant) -> Self {
        SurvivingMutant {
            operator: mutant.operator,
            file: mutant.file.clone(),
            line: mutant.line,
            function: mutant.function.clone(),
            change: mutant.change.clone(),
            patch: mutant.patch.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(id: &str, status: MutantStatus, patch: &str) -> MutantRun {
        MutantRun {
            mutant: Mutant {
                id: id.into(),
                operator: MutationOperator::MoveBoundary,
                file: "a.py".into(),
                line: 3,
                function: "f".into(),
                change: "`<` becomes `<=`".into(),
                patch: patch.into(),
            },
            status,
            killing_tests: Vec::new(),
            detail: String::new(),
            seconds: 1.0,
        }
    }

    #[test]
    fn the_score_counts_only_killed_and_survived_and_survivors_come_smallest_first() {
        let runs = vec![
            run("b", MutantStatus::Survived, "--- a\n+++ b\n+x\n+y\n"),
            run("a", MutantStatus::Survived, "--- a\n+++ b\n+x\n"),
            run("c", MutantStatus::Killed, ""),
            run("d", MutantStatus::Stillborn, ""),
            run("e", MutantStatus::Timeout, ""),
        ];
        assert_eq!(ProbeRecord::score_of(&runs), Some(1.0 / 3.0));
        assert_eq!(ProbeRecord::score_of(&runs[3..]), None);
        let record = ProbeRecord {
            instance_id: "x".into(),
            content_hash: String::new(),
            probe_key: String::new(),
            mutation_score: ProbeRecord::score_of(&runs),
            no_score_reason: String::new(),
            candidates: 5,
            runs,
            seconds: 0.0,
        };
        let ids: Vec<&str> = record.survivors().iter().map(|mutant| mutant.id.as_str()).collect();
        assert_eq!(ids, ["a", "b"]);
        assert_eq!(
            record.survivors()[0].what_the_tests_miss(),
            "the tests pass when `<` becomes `<=` (a.py:3, in `f`)"
        );
    }

    #[test]
    fn operators_and_statuses_are_stored_by_their_spelling() {
        for operator in MutationOperator::ALL {
            assert_eq!(operator.as_str().parse::<MutationOperator>(), Ok(operator));
        }
        assert_eq!(serde_json::to_string(&MutantStatus::Stillborn).unwrap(), "\"stillborn\"");
        assert!("negate".parse::<MutationOperator>().unwrap_err().contains("negate_condition"));
    }
}
