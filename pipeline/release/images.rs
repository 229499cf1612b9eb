//! Runnable tasks (`release --images`): per task, an instance image (its
//! environment image from validate, plus the repository at `base_commit` in
//! `/testbed` as a git repository with that one commit and no later history,
//! installed and ready to test, run as root), and the four columns that SWE-bench
//! 5.x's harness reads: `image`, `eval_script`, `log_parser`, `eval_type`.
//!
//! The instance image is built with the network off: installing runs the
//! repository's own build code, which is untrusted, and the dependencies are in the
//! environment image already.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::ecosystem::Ecosystem;
use crate::git::diff::files_changed_by;
use crate::model::{EnvironmentSpec, Task};
use crate::sandbox::images::{TestbedCopy, write_log};
use crate::sandbox::{Backend, BuildFailure, BuildLimits, ImageBuild, Owner, archive};
/// SWE-bench's grading mode: FAIL_TO_PASS must pass and PASS_TO_PASS keep passing.
pub const EVAL_TYPE: &str = "pass_and_fail";
/// The extra columns of a release with images, in order: the four that SWE-bench's
/// harness reads, then the test command that `evaluate` runs generated tests with and
/// the ecosystem that runs them (its name: `python`, `python-django`, ...; it chooses
/// the test files, the runner's invocation and the parser of its output).
pub const IMAGE_COLUMNS: [&str; 6] = ["image", "eval_script", "log_parser", "eval_type", "test_command", "ecosystem"];

/// Ends the test patch's here-document; a line no diff can hold (every diff line
/// starts with a space, `+`, `-`, `@`, `\` or a header word).
const HEREDOC_END: &str = "EOF_SWE_HARVEST_TEST_PATCH";

#[derive(Debug, thiserror::Error)]
pub enum ImagesError {
    #[error(
        "task `{instance_id}` has no environment image recorded; validate it again (`swe-harvest validate --instance {instance_id}`)"
    )]
    NoEnvironment { instance_id: String },
    #[error(
        "the environment image `{image}` of task `{instance_id}` is not on the Docker engine; rebuild it with \
         `swe-harvest validate --instance {instance_id}`"
    )]
    EnvironmentMissing { instance_id: String, image: String },
    #[error("failed to read the repository of task `{instance_id}` from its mirror: {message}")]
    Source { instance_id: String, message: String },
    #[error("the instance image `{tag}` did not build: {message} (log: {log})")]
    Build { tag: String, message: String, log: PathBuf },
    #[error("failed to push `{tag}`: {message}")]
    Push { tag: String, message: String },
    #[error("`--push` needs a registry: set `release.registry` in the config")]
    NoRegistry,
    #[error("the container engine did not answer: {0}")]
    Engine(String),
}

/// `<prefix>/<instance_id in lower case>:<release version>`; an instance id that is
/// not a valid Docker name component as it is (a repository named `.github` or `b_`)
/// is made one by [`docker_name_component`](crate::model::ids::docker_name_component).
pub fn instance_tag(prefix: &str, instance_id: &str, version: &str) -> String {
    format!("{prefix}/{}:{version}", crate::model::ids::docker_name_component(instance_id))
}

/// The eval script of a task, in SWE-bench's shape: reset the touched test files,
/// apply the test patch, run the touched tests between the harness's markers, reset.
pub fn eval_script(ecosystem: &dyn Ecosystem, task: &Task, spec: &EnvironmentSpec, test_files: &[String]) -> String {
    let candidate = &task.candidate;
    let touched = files_changed_by(&candidate.test_patch);
    let reset: Vec<String> = touched
        .iter()
        .map(|file| {
            let file = crate::sandbox::script::shell_quote(file);
            format!("git checkout HEAD -- {file} 2>/dev/null || rm -f {file}")
        })
        .collect();
    let mut patch = candidate.test_patch.clone();
    if !patch.ends_with('\n') {
        patch.push('\n');
    }
    // One stream: SWE-bench's harness reads stdout and stderr through separate pipes
    // and keeps no order between them, so the markers (`set -x` traces, stderr) could
    // overtake the test output (stdout) written just before them: a Gradle task's last
    // `BUILD SUCCESS`, echoed microseconds before the end marker, fell outside the
    // markers on a loaded machine and its class went ungraded.
    let mut lines = vec!["#!/bin/bash".to_string(), "set -uxo pipefail".to_string(), "exec 2>&1".to_string()];
    let mut setup = ecosystem.harness_setup(&candidate.version).into_iter();
    // The environment is activated before `cd /testbed`, the rest after, as SWE-bench's own scripts do.
    lines.extend(setup.next());
    lines.push("cd /testbed".to_string());
    lines.extend(setup);
    lines.extend(reset.iter().cloned());
    lines.push(format!("git apply -v - <<'{HEREDOC_END}'\n{patch}{HEREDOC_END}"));
    lines.push(": '>>>>> Start Test Output'".to_string());
    lines.push(format!(
        "{} {}",
        ecosystem.harness_test_command(&spec.test_command),
        ecosystem.harness_test_targets(test_files)
    ));
    lines.push(": '>>>>> End Test Output'".to_string());
    lines.extend(reset);
    lines.join("\n") + "\n"
}

/// The Dockerfile of an instance image; `setup` is the ecosystem's environment
/// (exported before the install script runs). The one commit leaves out the
/// `node_modules` folders that a Node environment image keeps in `/testbed`: they
/// are installed dependencies, not the repository.
pub fn dockerfile(environment_image: &str, task: &Task, setup: &str) -> String {
    let candidate = &task.candidate;
    format!(
        "# Generated by swe-harvest: an instance image (see pipeline/release/images.rs).\n\
         FROM {environment_image}\n\
         USER root\n\
         COPY testbed/ /testbed/\n\
         WORKDIR /testbed\n\
         RUN chown -R 0:0 /testbed && git config --system --add safe.directory /testbed \\\n \
         && git init --quiet --initial-branch=main \\\n \
         && git add --all --force -- . ':(exclude,glob)**/node_modules/**' \\\n \
         && git -c user.name=swe-harvest -c user.email=swe-harvest@localhost commit --quiet --no-verify \
         -m 'swe-harvest: {instance_id} at {base_commit}'\n\
         COPY install.sh /tmp/install.sh\n\
         RUN {setup}; bash /tmp/install.sh && rm /tmp/install.sh \n\
         LABEL swe-harvest.instance-id={instance_id} swe-harvest.base-commit={base_commit}\n",
        instance_id = candidate.instance_id,
        base_commit = candidate.base_commit,
    )
}

/// The build context: Dockerfile, install script, and the repository at base_commit.
fn context(ecosystem: &dyn Ecosystem, mirror: &Path, environment_image: &str, task: &Task) -> Result<Vec<u8>, String> {
    let (exports, install) = instance_setup(ecosystem, task);
    let dockerfile = dockerfile(environment_image, task, &exports);
    let install = format!("set -e\ncd /testbed\n{install}\ninstall_repository\n");
    let extra: [(&str, &[u8], u32); 1] = [("install.sh", install.as_bytes(), 0o755)];
    archive::build_context(&dockerfile, &extra, mirror, &task.candidate.base_commit, Owner::ROOT, TestbedCopy::Folder)
}

/// The ecosystem's script setup split in two: its `export` lines (joined for a `RUN`)
/// and the rest (the `install_repository` function).
fn instance_setup(ecosystem: &dyn Ecosystem, task: &Task) -> (String, String) {
    let setup = ecosystem.script_setup(&task.candidate.version);
    let (exports, rest): (Vec<&str>, Vec<&str>) = setup.lines().partition(|line| line.starts_with("export "));
    let exports = if exports.is_empty() { "true".to_string() } else { exports.join("; ") };
    (exports, rest.join("\n"))
}

/// What the release needs to build instance images.
pub struct InstanceBuild<'a> {
    pub backend: &'a dyn Backend,
    pub data_dir: &'a Path,
    pub mirrors_dir: Option<&'a Path>,
    pub prefix: &'a str,
    pub version: &'a str,
    pub timeout: Duration,
    pub limits: BuildLimits,
}

/// Builds (or reuses) the instance image of one task; returns its tag.
pub async fn build_instance_image(
    build: &InstanceBuild<'_>,
    ecosystem: &'static dyn Ecosystem,
    task: &Task,
    environment_image: &str,
) -> Result<String, ImagesError> {
    let instance_id = &task.candidate.instance_id;
    let tag = instance_tag(build.prefix, instance_id, build.version);
    if build.backend.image_id(environment_image).await.is_none() {
        return Err(ImagesError::EnvironmentMissing {
            instance_id: instance_id.clone(),
            image: environment_image.into(),
        });
    }
    let mirror = crate::git::find_mirror(build.data_dir, build.mirrors_dir, &task.candidate.repo)
        .map_err(|error| ImagesError::Source { instance_id: instance_id.clone(), message: error.to_string() })?;
    let context = {
        let (mirror, environment_image, task) = (mirror.clone(), environment_image.to_string(), task.clone());
        tokio::task::spawn_blocking(move || context(ecosystem, &mirror, &environment_image, &task))
            .await
            .map_err(|error| ImagesError::Engine(error.to_string()))?
            .map_err(|message| ImagesError::Source { instance_id: instance_id.clone(), message })?
    };
    let mut log = dockerfile(environment_image, task, &instance_setup(ecosystem, task).0);
    log.push_str("\n--- build output ---\n");
    let image = ImageBuild {
        tag: tag.clone(),
        context,
        // In the Dockerfile's `LABEL` line already: the build's own would be one more step.
        labels: Default::default(),
        network: crate::sandbox::BuildNetwork::Off,
        timeout: build.timeout,
        limits: build.limits,
    };
    let outcome = build.backend.build(&image, &mut log).await;
    let log_path = build.data_dir.join("logs/release").join(format!("{}.log", tag.replace(['/', ':'], "_")));
    write_log(&log_path, &log);
    match outcome {
        Ok(()) => Ok(tag),
        Err(BuildFailure::TimedOut { .. }) => Err(ImagesError::Build {
            tag,
            message: format!("timed out after {}s", build.timeout.as_secs()),
            log: log_path,
        }),
        Err(BuildFailure::Failed { message, step_output, .. }) => Err(ImagesError::Build {
            tag,
            message: crate::sandbox::images::build_diagnosis(&step_output, &message),
            log: log_path,
        }),
    }
}

/// Pushes `tag` to `registry` (tagged `<registry>/<tag>`); returns the pushed name.
pub async fn push(backend: &dyn Backend, tag: &str, registry: &str) -> Result<String, ImagesError> {
    backend.push(tag, registry).await.map_err(|message| ImagesError::Push { tag: tag.to_string(), message })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Candidate;

    fn task() -> Task {
        let repo = "Acme/Widgets".parse().unwrap();
        Task {
            candidate: Candidate {
                instance_id: "Acme__Widgets-7".into(),
                repo,
                pull_number: 7,
                issue_numbers: vec![6],
                base_commit: "b".repeat(40),
                head_commit: "c".repeat(40),
                patch: String::new(),
                test_patch: "diff --git a/tests/test_a.py b/tests/test_a.py\n--- a/tests/test_a.py\n+++ b/tests/test_a.py\n@@ -1 +1,2 @@\n x = 1\n+y = 2\ndiff --git a/tests/test_new.py b/tests/test_new.py\nnew file mode 100644\n--- /dev/null\n+++ b/tests/test_new.py\n@@ -0,0 +1 @@\n+def test_new(): pass".into(),
                problem_statement: String::new(),
                hints_text: String::new(),
                created_at: chrono::Utc::now(),
                merged_at: None,
                version: "1.2".into(),
                environment_setup_commit: "d".repeat(40),
                test_files: vec![],
            },
            fail_to_pass: vec![],
            pass_to_pass: vec![],
            flaky_tests: vec![],
            needs_network: vec![],
            fail_to_pass_no_result_before: Vec::new(),
            validation_runs: 3,
            image: Some("swe-harvest/env.acme__widgets:abc".into()),
            environment_rung: None,
        }
    }

    #[test]
    fn tags_are_lower_case_and_carry_the_release_version() {
        assert_eq!(instance_tag("swe-harvest", "Acme__Widgets-7", "2026.11"), "swe-harvest/acme__widgets-7:2026.11");
    }

    /// Run with stdout and stderr on separate pipes, as SWE-bench's harness runs it,
    /// the script writes its markers and its tests' output to one of them only: their
    /// order is then the order they were written.
    #[test]
    fn eval_script_writes_markers_and_output_to_one_stream() {
        let spec = EnvironmentSpec { test_command: "echo BUILD".into(), ..Default::default() };
        let script =
            eval_script(&crate::ecosystem::for_tests::Pytest, &task(), &spec, &["tests/test_a.py".to_string()]);
        let dir = tempfile::tempdir().unwrap();
        let output = crate::sandbox::script::run_bash_in(dir.path(), &script);
        let (stdout, stderr) = (String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
        assert_eq!(stderr, "+ exec\n", "only the redirection's own trace goes to stderr");
        let start = stdout.find(">>>>> Start Test Output").expect("the start marker is on stdout");
        let output_at = stdout.find("BUILD -rA tests/test_a.py\n").expect("the test output is on stdout");
        let end = stdout.find(">>>>> End Test Output").expect("the end marker is on stdout");
        assert!(start < output_at && output_at < end, "{stdout}");
    }

    #[test]
    fn eval_script_has_swebenchs_shape() {
        let spec =
            EnvironmentSpec { test_command: "python -m pytest -p no:cacheprovider".into(), ..Default::default() };
        let files = vec!["tests/test_a.py".to_string(), "tests/test_new.py".to_string()];
        let script = eval_script(&crate::ecosystem::for_tests::Pytest, &task(), &spec, &files);
        let lines: Vec<&str> = script.lines().collect();
        assert_eq!(&lines[..3], ["#!/bin/bash", "set -uxo pipefail", "exec 2>&1"], "traces and output in one stream");
        let start = lines.iter().position(|line| *line == ": '>>>>> Start Test Output'").unwrap();
        let end = lines.iter().position(|line| *line == ": '>>>>> End Test Output'").unwrap();
        assert_eq!(end, start + 2, "only the test command runs between the markers");
        assert_eq!(lines[start + 1], "python -m pytest -p no:cacheprovider -rA tests/test_a.py tests/test_new.py");
        let apply = lines.iter().position(|line| line.starts_with("git apply -v - <<'")).unwrap();
        assert!(apply < start);
        assert!(
            script.contains("+def test_new(): pass\nEOF_SWE_HARVEST_TEST_PATCH\n"),
            "the patch ends with a newline before the delimiter"
        );
        let resets = lines
            .iter()
            .filter(|line| line.starts_with("git checkout HEAD -- tests/test_new.py 2>/dev/null || rm -f"))
            .count();
        assert_eq!(resets, 2, "test files are reset before applying and after running");
        assert!(lines.last().unwrap().starts_with("git checkout HEAD -- "));
    }
}
