//! The SWT measurement in one container: the four runs that coverage and grading of
//! test patches need, with the line counter on.
//!
//! ```text
//! base_pre      T^R on R                     (the touched test files as they are at R)
//! tests_patch   apply the test-side patch    (T* for validate, a prediction for evaluate)
//! with_pre      T^R ∪ T on R
//! gold_patch    apply X
//! with_post     T^R ∪ T on R∘X
//! tests_revert  reverse the test-side patch
//! base_post     T^R on R∘X
//! ```
//!
//! T^R is the base files that exist at R; T^R ∪ T is the base files plus the files
//! the test-side patch touches, as they exist once it is applied. Each run writes a
//! JUnit report and the line counts of the files X changes ([`super::TRACER`]).

use std::collections::BTreeMap;
use std::time::Duration;

use super::metrics::{LineCounts, Measurements, merge_counts};
use crate::ecosystem::Ecosystem;
use crate::model::labels::RunResults;
use crate::sandbox::JobOutput;
use crate::sandbox::script::{self, StepOutput, shell_quote};

/// Where the counter goes inside the container, as `sitecustomize`.
pub const TRACER_PATH: &str = "trace/sitecustomize.py";
/// The test-side patch and the gold patch inside the container.
pub const TESTS_PATCH: &str = "tests.patch";
pub const GOLD_PATCH: &str = "gold.patch";
/// The four test runs, in order.
pub const PHASES: [&str; 4] = ["base_pre", "with_pre", "with_post", "base_post"];

/// The files the script needs under `/swe-harvest/`: the line counter, the
/// test-side patch and the gold patch (each ending in a newline, as `git apply` wants).
pub fn payload_files(tests_patch: &str, gold_patch: &str) -> Vec<(String, Vec<u8>, u32)> {
    vec![
        (TRACER_PATH.to_string(), super::TRACER.as_bytes().to_vec(), 0o644),
        (TESTS_PATCH.to_string(), with_newline(tests_patch).into_bytes(), 0o644),
        (GOLD_PATCH.to_string(), with_newline(gold_patch).into_bytes(), 0o644),
    ]
}

/// A patch as `git apply` wants it: ending in a newline.
pub fn with_newline(patch: &str) -> String {
    if patch.ends_with('\n') { patch.to_string() } else { format!("{patch}\n") }
}

/// What the script does.
#[derive(Debug, Clone)]
pub struct FlowScript {
    /// Install `/testbed` first (a bare environment image); instance images are installed.
    pub install: bool,
    /// The files of T^R (kept when they exist at R).
    pub base_files: Vec<String>,
    /// The files of T^R ∪ T (kept when they exist once the test-side patch is applied).
    pub with_files: Vec<String>,
    /// The files whose lines are counted: the Python files X changes.
    pub traced_files: Vec<String>,
    pub test_command: String,
    pub version: String,
    pub phase_timeout: Duration,
}

impl FlowScript {
    /// The script, with the ecosystem's setup and test invocation.
    pub fn render(&self, ecosystem: &dyn Ecosystem) -> String {
        format!(
            r#"{preamble}traced_files={traced}
base_files=({base})
with_files=({with})
existing() {{ for file in "$@"; do [ -f "$file" ] && printf '%s\n' "$file"; done; }}
run_traced() {{
    phase="$1"; shift
    mark "$phase" begin
    if [ "$#" -eq 0 ]; then
        echo "swe-harvest: no test file to run"
        code=0
    else
        SWE_HARVEST_TRACE_FILES="$traced_files" SWE_HARVEST_TRACE_OUT=/swe-harvest/out/"$phase".cov \
        PYTHONPATH="/swe-harvest/trace${{PYTHONPATH:+:$PYTHONPATH}}" \
            timeout -k 5 {timeout} {invocation} 2>&1
        code=$?
    fi
    cleanup
    mark "$phase" "end $code"
}}
step() {{
    name="$1"; shift
    mark "$name" begin
    "$@" 2>&1; code=$?
    mark "$name" "end $code"
    return "$code"
}}
{install}
mapfile -t base < <(existing "${{base_files[@]}}")
run_traced base_pre "${{base[@]}}"
step tests_patch apply_patch /swe-harvest/{tests_patch} || exit 0
mapfile -t with < <(existing "${{with_files[@]}}")
run_traced with_pre "${{with[@]}}"
step gold_patch apply_patch /swe-harvest/{gold_patch} || exit 0
run_traced with_post "${{with[@]}}"
step tests_revert reverse_patch /swe-harvest/{tests_patch} || exit 0
run_traced base_post "${{base[@]}}"
step done true
"#,
            preamble = script::preamble("pipeline/swt/flow.rs", &ecosystem.script_setup(&self.version)),
            traced = shell_quote(&self.traced_files.join("\n")),
            base = script::shell_words(&self.base_files),
            with = script::shell_words(&self.with_files),
            timeout = self.phase_timeout.as_secs().max(1),
            invocation = ecosystem.test_invocation(&self.test_command, r#"/swe-harvest/out/"$phase".xml"#, r#""$@""#),
            install = if self.install { "step install install_repository || exit 0" } else { "" },
            tests_patch = TESTS_PATCH,
            gold_patch = GOLD_PATCH,
        )
    }
}

/// What the line counter writes per process.
#[derive(Debug, Clone, Default, serde::Deserialize)]
pub struct TraceFile {
    pub counts: LineCounts,
    /// The code under test installed its own tracer (pytest-cov, a debugger): the
    /// counts miss whatever ran after that.
    #[serde(default)]
    pub tracer_replaced: bool,
}

/// What one flow container produced.
#[derive(Debug, Clone, Default)]
pub struct FlowOutcome {
    pub steps: BTreeMap<String, StepOutput>,
    /// Test results per phase of [`PHASES`] that ran.
    pub results: BTreeMap<String, RunResults>,
    /// Line counts per phase (all processes of the phase added up).
    pub counts: BTreeMap<String, LineCounts>,
    /// Phases in which some process replaced the line counter.
    pub tracer_replaced: Vec<String>,
}

impl FlowOutcome {
    pub fn parse(output: &JobOutput, token: &str, with_files: &[String], ecosystem: &dyn Ecosystem) -> FlowOutcome {
        let steps = script::split_steps(&output.log, token);
        let mut results = BTreeMap::new();
        let mut counts: BTreeMap<String, LineCounts> = BTreeMap::new();
        let mut tracer_replaced = Vec::new();
        for phase in PHASES {
            let Some(step) = steps.get(phase) else { continue };
            let report = output.reports.get(&format!("{phase}.xml")).map(String::as_str);
            let (parsed, _) = ecosystem.parse_results(report, &step.text, with_files);
            results.insert(phase.to_string(), parsed.tests);
            let into = counts.entry(phase.to_string()).or_default();
            let prefix = format!("{phase}.cov.");
            for (name, text) in &output.reports {
                if !(name.starts_with(&prefix) && name.ends_with(".json")) {
                    continue;
                }
                match serde_json::from_str::<TraceFile>(text) {
                    Ok(file) => {
                        merge_counts(into, &file.counts);
                        if file.tracer_replaced && !tracer_replaced.iter().any(|known| known == phase) {
                            tracer_replaced.push(phase.to_string());
                        }
                    }
                    Err(error) => tracing::warn!(file = %name, %error, "unreadable line counts"),
                }
            }
        }
        FlowOutcome { steps, results, counts, tracer_replaced }
    }

    /// The step's exit code, when it finished.
    pub fn exit_code(&self, step: &str) -> Option<i64> {
        self.steps.get(step).and_then(|output| output.exit_code)
    }

    /// Whether the test-side patch applied to R.
    pub fn applied(&self) -> bool {
        self.exit_code("tests_patch") == Some(0)
    }

    /// Every step ran to its end.
    pub fn complete(&self) -> bool {
        self.exit_code("done") == Some(0)
    }

    /// The first step that failed or never ended, with the end of its output.
    pub fn failed_step(&self) -> Option<(String, String)> {
        for step in ["install", "tests_patch", "gold_patch", "tests_revert", "done"] {
            match self.steps.get(step) {
                Some(output) if output.exit_code == Some(0) => {}
                Some(output) => return Some((step.to_string(), script::last_lines(&output.text, 5, " | "))),
                None if step == "install" => {}
                None => return Some((step.to_string(), "(the step never started)".to_string())),
            }
        }
        None
    }

    pub fn measurements(&self) -> Measurements {
        let take = |phase: &str| self.counts.get(phase).cloned().unwrap_or_default();
        Measurements {
            base_pre: take("base_pre"),
            with_tests_pre: take("with_pre"),
            with_tests_post: take("with_post"),
            base_post: take("base_post"),
        }
    }

    pub fn phase_results(&self, phase: &str) -> RunResults {
        self.results.get(phase).cloned().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ecosystem::for_tests::Pytest;

    #[test]
    fn the_script_runs_four_traced_phases_around_the_patches() {
        let script = FlowScript {
            install: true,
            base_files: vec!["tests/test_a.py".into()],
            with_files: vec!["tests/test_a.py".into(), "tests/test new.py".into()],
            traced_files: vec!["pkg/a.py".into(), "pkg/b.py".into()],
            test_command: "pytest -rA".into(),
            version: "1.2".into(),
            phase_timeout: Duration::from_secs(30),
        }
        .render(&Pytest);
        let order: Vec<usize> = [
            "step install",
            "run_traced base_pre",
            "step tests_patch",
            "run_traced with_pre",
            "step gold_patch",
            "run_traced with_post",
            "step tests_revert",
            "run_traced base_post",
            "step done",
        ]
        .iter()
        .map(|needle| script.find(&format!("\n{needle}")).unwrap_or_else(|| panic!("`{needle}` missing:\n{script}")))
        .collect();
        assert!(order.windows(2).all(|pair| pair[0] < pair[1]), "{order:?}");
        assert!(script.contains("with_files=(tests/test_a.py 'tests/test new.py')"), "{script}");
        assert!(script.contains("traced_files='pkg/a.py\npkg/b.py'"), "{script}");
        assert!(script.contains("timeout -k 5 30 pytest -rA --junitxml="), "{script}");
    }

    #[test]
    fn counts_of_every_process_of_a_phase_add_up() {
        let token = "tok";
        let log = "@@swe-harvest tok base_pre begin\n@@swe-harvest tok base_pre end 0\n\
                   @@swe-harvest tok tests_patch begin\n@@swe-harvest tok tests_patch end 1\n";
        let output = JobOutput {
            log: log.into(),
            reports: [
                (
                    "base_pre.cov.10.json".to_string(),
                    r#"{"counts": {"m.py": {"3": 2}}, "tracer_replaced": false}"#.to_string(),
                ),
                (
                    "base_pre.cov.11.json".to_string(),
                    r#"{"counts": {"m.py": {"3": 1, "4": 1}}, "tracer_replaced": true}"#.to_string(),
                ),
            ]
            .into(),
            ..JobOutput::default()
        };
        let outcome = FlowOutcome::parse(&output, token, &[], &Pytest);
        assert_eq!(outcome.counts["base_pre"]["m.py"], [(3, 3), (4, 1)].into());
        assert_eq!(outcome.tracer_replaced, vec!["base_pre".to_string()]);
        assert!(!outcome.applied());
        assert_eq!(outcome.failed_step().map(|(step, _)| step), Some("tests_patch".to_string()));
    }
}
