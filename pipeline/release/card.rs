//! The dataset card, `README.md` in Hugging Face's format: a YAML header (configs,
//! splits, features) that the `datasets` library reads, then what a person needs:
//! what the tasks are, how they were made, how each task's tests run (its own command
//! and SWE-bench's log parser, by language), the license situation, and the funnel
//! that produced them.

use std::collections::BTreeMap;
use std::fmt::Write;

use super::{Manifest, ReleaseRequest};
use crate::dataset::Dataset;
use crate::model::Task;
use crate::model::drop_reason::format_counts;
use crate::store::{FunnelReport, Store, StoreError};

/// How a released task's tests run: its language, the command its `eval_script` runs
/// (the touched tests appended) and the log parser of SWE-bench's harness that reads
/// the output. `None` for the command and parser of a task whose environment is not
/// recorded (a store from before environments were kept).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct TestRunner {
    pub language: String,
    pub command: Option<String>,
    pub log_parser: Option<String>,
}

/// The test runners of `tasks`, each with its number of tasks.
pub fn test_runners(store: &Store, tasks: &[Task]) -> Result<BTreeMap<TestRunner, usize>, StoreError> {
    let mut runners: BTreeMap<TestRunner, usize> = BTreeMap::new();
    for task in tasks {
        let spec = match &task.image {
            Some(image) => crate::store::validation::environment_spec_for_image(store.connection(), image)?,
            None => None,
        };
        let ecosystem = spec.as_ref().and_then(|spec| crate::ecosystem::for_spec(spec).ok());
        let runner = TestRunner {
            language: crate::ecosystem::language_of_test_patch(&task.candidate.test_patch).to_string(),
            command: spec
                .as_ref()
                .zip(ecosystem)
                .map(|(spec, ecosystem)| ecosystem.harness_test_command(&spec.test_command)),
            log_parser: ecosystem.map(|ecosystem| ecosystem.harness_log_parser().to_string()),
        };
        *runners.entry(runner).or_default() += 1;
    }
    Ok(runners)
}

/// Hugging Face split names must be word characters: `2024-01` becomes `month_2024_01`.
pub fn split_name(period: &str) -> String {
    format!("month_{}", period.replace('-', "_"))
}

fn size_category(rows: usize) -> &'static str {
    match rows {
        0..1_000 => "n<1K",
        1_000..10_000 => "1K<n<10K",
        10_000..100_000 => "10K<n<100K",
        _ => "100K<n<1M",
    }
}

pub(super) fn render(
    request: &ReleaseRequest,
    manifest: &Manifest,
    dataset: &Dataset,
    funnel: &FunnelReport,
    licenses: &BTreeMap<String, Option<String>>,
    runners: &BTreeMap<TestRunner, usize>,
    // Sections of other parts of the release (test generation, the quality screen),
    // written in order after the test runners.
    sections: &[&str],
) -> String {
    let mut card = String::new();
    let total = manifest.counts.total;
    // --- YAML header ---
    let _ = writeln!(card, "---");
    let _ = writeln!(card, "license: other");
    let _ = writeln!(card, "pretty_name: {}", yaml_string(&format!("{} {}", request.name, request.version)));
    let _ = writeln!(card, "tags:\n- code\n- software-engineering\n- swe-bench");
    let _ = writeln!(card, "task_categories:\n- text-generation");
    let _ = writeln!(card, "size_categories:\n- {}", size_category(total));
    let _ = writeln!(card, "configs:\n- config_name: default\n  data_files:\n  - split: test\n    path: tasks.parquet");
    if !manifest.counts.per_split.is_empty() {
        let _ = writeln!(card, "- config_name: by_month\n  data_files:");
        for period in manifest.counts.per_split.keys() {
            let _ = writeln!(card, "  - split: {}\n    path: splits/{period}/tasks.parquet", split_name(period));
        }
    }
    let _ = writeln!(card, "dataset_info:\n- config_name: default\n  features:");
    for column in &dataset.columns {
        let _ = writeln!(card, "  - name: {}\n    dtype: string", yaml_string(column));
    }
    let _ = writeln!(card, "  splits:\n  - name: test\n    num_examples: {total}");
    if !manifest.counts.per_split.is_empty() {
        let _ = writeln!(card, "- config_name: by_month\n  features:");
        for column in &dataset.columns {
            let _ = writeln!(card, "  - name: {}\n    dtype: string", yaml_string(column));
        }
        let _ = writeln!(card, "  splits:");
        for (period, count) in &manifest.counts.per_split {
            let _ = writeln!(card, "  - name: {}\n    num_examples: {count}", split_name(period));
        }
    }
    let _ = writeln!(card, "---\n");

    // --- Prose ---
    let _ = writeln!(card, "# {} {}\n", request.name, request.version);
    let _ = writeln!(
        card,
        "{total} software-engineering tasks from {} repositories, in the SWE-bench format: each \
         row is a real GitHub issue, the pull request that resolved it (`patch`, the gold patch), \
         the tests that pull request changed (`test_patch`), and the tests that fail before the \
         gold patch and pass after it (`FAIL_TO_PASS`), plus those that pass throughout \
         (`PASS_TO_PASS`). Made by swe-harvest {} on {}.\n",
        manifest.counts.per_repository.len(),
        manifest.pipeline_version,
        manifest.created_at
    );
    let _ = writeln!(card, "## Contents\n");
    let _ = writeln!(card, "| repository | tasks |\n| --- | ---: |");
    for (repo, count) in &manifest.counts.per_repository {
        let _ = writeln!(card, "| {repo} | {count} |");
    }
    if !manifest.counts.per_split.is_empty() {
        let _ = writeln!(card, "\nSplits by month of the pull request's creation (config `by_month`):\n");
        let _ = writeln!(card, "| split | month | tasks |\n| --- | --- | ---: |");
        for (period, count) in &manifest.counts.per_split {
            let _ = writeln!(card, "| {} | {period} | {count} |", split_name(period));
        }
    }
    let _ = writeln!(card, "\n## Selection\n");
    let filters = &manifest.filters;
    let _ = writeln!(
        card,
        "- created on or after: {}\n- created before: {}\n- repositories: {}\n- excluded datasets: {}",
        filters.created_after.as_deref().unwrap_or("any date"),
        filters.created_before.as_deref().unwrap_or("any date"),
        if filters.repos.is_empty() { "all validated".to_string() } else { filters.repos.join(", ") },
        if filters.exclude_datasets.is_empty() {
            "none".to_string()
        } else {
            filters.exclude_datasets.iter().map(|d| format!("`{}`", d.path.display())).collect::<Vec<_>>().join(", ")
        }
    );
    if !manifest.counts.left_out_by_filters.is_empty() {
        let left_out: Vec<String> =
            manifest.counts.left_out_by_filters.iter().map(|(reason, count)| format!("{reason} {count}")).collect();
        let _ = writeln!(card, "- validated tasks left out by this selection: {}", left_out.join(", "));
    }
    if filters.reviewed_only {
        let _ = writeln!(card, "- only tasks a person reviewed and kept (`--reviewed-only`)");
    } else if filters.exclude_rejected {
        let _ = writeln!(card, "- tasks a person rejected left out (`--exclude-rejected`)");
    }
    if let Some(extends) = &manifest.extends {
        let _ = writeln!(
            card,
            "- extends version {} ({}): {} tasks added, {} removed",
            extends.version, extends.created_at, extends.added, extends.removed
        );
    }
    let _ = writeln!(card, "\n## Human review\n");
    let review = &manifest.counts.review;
    let _ = writeln!(
        card,
        "{} of the {total} tasks were reviewed by a person on swe-harvest's review page (the issue, the \
         patches, the tests and the validation runs read, the task judged fair or not): {} kept, {} \
         rejected, {} needing work; {} not reviewed.",
        review.reviewed(),
        review.kept,
        review.rejected,
        review.needs_work,
        review.not_reviewed
    );
    if !review.by_reviewer.is_empty() {
        let reviewers: Vec<String> =
            review.by_reviewer.iter().map(|(reviewer, count)| format!("{reviewer} {count}")).collect();
        let _ = writeln!(card, "Decisions by reviewer: {}.", reviewers.join(", "));
    }
    let _ = writeln!(card, "\n## How the tasks were made\n");
    let _ = writeln!(
        card,
        "1. **crawl**: merged pull requests, the issues they reference and the issues' comments, \
         from the GitHub REST API.\n\
         2. **extract**: a pull request becomes a candidate when its title, body or commits close \
         an issue of the same repository with a closing keyword, and it changes at least one test \
         file and one non-test file. `patch` and `test_patch` are the diff from the merge-base of \
         `base_commit` and the pull request's head to that head, split by test files. \
         `problem_statement` is each resolved issue's title and body; `hints_text` the issue \
         comments made before the pull request's first commit.\n\
         3. **validate**: in a network-less container built for the repository at \
         `environment_setup_commit` (dependencies as of the task's date), the tests touched by \
         `test_patch` run before and after the gold patch, several times each \
         (`validation_runs`). When the environment of the task's date does not build or does not \
         run the touched tests, a less faithful one is tried (`environment_rung`: `dated`, then \
         `ci-packages`, `relaxed-packages`, `neighbour-runtime`, `runner-pins`, and a language's own). `FAIL_TO_PASS` failed in every run before and passed in every run \
         after (a test with no result counts as failing: \
         `fail_to_pass_no_result_before` lists those, which did not build or collect, or whose run \
         stopped before them); `PASS_TO_PASS` passed in every run. Tests whose results differed between runs \
         are listed in `flaky_tests` and never labelled.\n"
    );
    let _ = writeln!(card, "## How the tests run\n");
    let _ = writeln!(
        card,
        "Each task runs the tests its `test_patch` touches with the command of its own \
         environment (the test files or packages appended), and SWE-bench's harness reads the \
         output with the log parser named here:\n"
    );
    let _ = writeln!(card, "| language | test command | log parser | tasks |\n| --- | --- | --- | ---: |");
    let unknown = "not recorded".to_string();
    for (runner, count) in runners {
        let command = runner.command.as_ref().map_or(unknown.clone(), |command| format!("`{command}`"));
        let parser = runner.log_parser.as_ref().map_or(unknown.clone(), |parser| format!("`{parser}`"));
        let _ = writeln!(card, "| {} | {command} | {parser} | {count} |", runner.language);
    }
    let _ = writeln!(card);
    let _ = writeln!(card, "## Columns\n");
    let _ = writeln!(
        card,
        "Every column is a string. The first twelve are SWE-bench's, in its order; \
         `FAIL_TO_PASS`, `PASS_TO_PASS`, `flaky_tests`, `issue_numbers` and \
         `fail_to_pass_no_result_before` are JSON-encoded lists. Extra columns: `pull_number`, \
         `issue_numbers`, `merged_at`, `flaky_tests`, `validation_runs`, `environment_rung`, `language`, \
         `fail_to_pass_no_result_before`.\n"
    );
    if dataset.columns.iter().any(|column| column == "eval_script") {
        let _ = writeln!(
            card,
            "With instance images: `image` names each task's image (its environment plus the \
             repository at `base_commit` in `/testbed`, one commit, installed; user root), \
             `eval_script` applies the test patch and runs the touched tests with the task's own \
             command (`test_command`, see \"How the tests run\") between SWE-bench's output \
             markers, `log_parser` names the harness's parser of that output and `eval_type` is \
             `pass_and_fail`: SWE-bench's harness (`swebench` 5.x) runs the tasks unchanged:\n\n\
             ```sh\npython -m swebench.harness.run_evaluation --dataset_name tasks.jsonl \\\n    \
             --predictions_path predictions.jsonl --run_id my-run\n```\n"
        );
    }
    for section in sections {
        card.push_str(section);
    }
    let _ = writeln!(card, "## Use\n");
    let _ = writeln!(
        card,
        "```python\nfrom datasets import load_dataset\nrows = load_dataset(\"parquet\", data_files=\"tasks.parquet\", split=\"train\")\n```\n\n\
         `tasks.jsonl` holds the same rows. `manifest.json` lists the sha256 of every file.\n"
    );
    let _ = writeln!(card, "## License\n");
    let _ = writeln!(
        card,
        "The rows quote code, issues and comments from their repositories, which remain under \
         those repositories' licenses; check them before redistributing. Known licenses:\n"
    );
    let _ = writeln!(card, "| repository | license |\n| --- | --- |");
    for (repo, license) in licenses {
        let _ = writeln!(card, "| {repo} | {} |", license.as_deref().unwrap_or("unknown: check the repository"));
    }
    let _ = writeln!(card, "\n## Funnel\n");
    let _ =
        writeln!(card, "How the items of these repositories fared at each stage (all time, not only this release):\n");
    let _ = writeln!(card, "| stage | entered | passed | dropped | drop reasons |\n| --- | ---: | ---: | ---: | --- |");
    for stage in &funnel.total {
        let _ = writeln!(
            card,
            "| {} | {} | {} | {} | {} |",
            stage.stage,
            stage.entered,
            stage.passed,
            stage.dropped,
            format_counts(&stage.reasons)
        );
    }
    card
}

/// A YAML double-quoted scalar.
fn yaml_string(text: &str) -> String {
    serde_json::to_string(text).expect("strings serialize")
}
