//! The value types of change coverage (SWT-Bench's ΔC) as they are stored and
//! released: the executable lines of a gold patch, the change coverage of a set of
//! tests, and one task's measured (or failed) golden coverage. Plain data with serde;
//! how they are measured lives in `swt` (`swt::metrics`), how they are stored in
//! `store::coverage`.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

/// Line numbers per repository-relative path (the same shape as `swt::lines::FileLines`).
pub type FileLines = BTreeMap<String, BTreeSet<u32>>;

/// The lines of X that some test runs: removed lines run on R, added lines run on R∘X.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecutableLines {
    pub removed: FileLines,
    pub added: FileLines,
}

impl ExecutableLines {
    pub fn count(&self) -> usize {
        self.removed.values().chain(self.added.values()).map(BTreeSet::len).sum()
    }
}

/// The change coverage of a set of tests.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ChangeCoverage {
    /// Executable lines that T^R ∪ T runs more often than T^R.
    pub covered: usize,
    pub executable: usize,
}

impl ChangeCoverage {
    /// ΔC: the share of executable lines covered; `None` without executable lines
    /// (such a task is left out of coverage figures).
    pub fn share(&self) -> Option<f64> {
        (self.executable > 0).then(|| self.covered as f64 / self.executable as f64)
    }
}

/// The outcome of one task's coverage measurement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum GoldenCoverage {
    Measured {
        /// The lines of the gold patch that T^R or the golden tests run.
        executable: ExecutableLines,
        /// ΔC of the golden tests.
        coverage: ChangeCoverage,
    },
    Failed {
        detail: String,
    },
    /// The task's language cannot measure change coverage (only Python's can): said
    /// instead of "0 of 0 lines".
    Unsupported {
        language: String,
    },
}

impl GoldenCoverage {
    /// The status as stored beside the data (`measured`, `failed` or `unsupported`).
    pub fn status(&self) -> &'static str {
        match self {
            GoldenCoverage::Measured { .. } => "measured",
            GoldenCoverage::Failed { .. } => "failed",
            GoldenCoverage::Unsupported { .. } => "unsupported",
        }
    }

    /// Why a task has no coverage figure (`None` when it was measured).
    pub fn why_not_measured(&self) -> Option<String> {
        match self {
            GoldenCoverage::Measured { .. } => None,
            GoldenCoverage::Failed { detail } => Some(format!("the coverage run failed: {detail}")),
            GoldenCoverage::Unsupported { language } => {
                Some(format!("{language} cannot measure change coverage (only Python can)"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn golden_coverage_round_trips_with_its_stored_status_tag() {
        let measured = GoldenCoverage::Measured {
            executable: ExecutableLines {
                removed: BTreeMap::from([("a.py".to_string(), BTreeSet::from([3]))]),
                added: BTreeMap::from([("a.py".to_string(), BTreeSet::from([4, 5]))]),
            },
            coverage: ChangeCoverage { covered: 2, executable: 3 },
        };
        let text = serde_json::to_string(&measured).unwrap();
        assert!(text.starts_with(r#"{"status":"measured""#), "{text}");
        assert_eq!(serde_json::from_str::<GoldenCoverage>(&text).unwrap(), measured);
        assert_eq!(measured.status(), "measured");
        let failed = GoldenCoverage::Failed { detail: "no tracer".into() };
        assert_eq!(serde_json::to_string(&failed).unwrap(), r#"{"status":"failed","detail":"no tracer"}"#);
        assert_eq!(failed.status(), "failed");
    }
}
