//! The isolated container runner: one container per run, from the environment
//! image, with the repository at base_commit copied in as an archive (no history,
//! no clone), the network off, memory / CPU / process limits, no host mounts, no
//! environment from the host, as the unprivileged user of the image. Inside, a
//! generated script installs the repository (offline, without dependencies: they
//! are in the image), applies the test patch, runs the touched test files (pre),
//! applies the gold patch and runs them again (post). Each step is wrapped in markers
//! that carry a random token of this run ([`super::parse`]).
//!
//! Containers are always removed: on success explicitly, on errors and timeouts by
//! [`ContainerGuard`], and on Ctrl-C by the stage loop through [`Containers::remove_all`].

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::io::Read;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bollard::Docker;
use bollard::models::{ContainerCreateBody, HostConfig};
use bollard::query_parameters::{
    CreateContainerOptionsBuilder, DownloadFromContainerOptionsBuilder, ListContainersOptionsBuilder,
    LogsOptionsBuilder, RemoveContainerOptionsBuilder, UploadToContainerOptionsBuilder,
};
use futures::StreamExt;
use rand::Rng;

use super::image::{USER, pretend_version};
use super::infer::shell_quote;
use super::parse::{self, ParsedRun, StepOutput};
use super::source::{self, Mirror, Owner};

/// The label every swe-harvest container carries, with the data dir as value.
pub const DATA_DIR_LABEL: &str = "swe-harvest.data-dir";
pub const INSTANCE_LABEL: &str = "swe-harvest.instance";

/// Limits of one container, from `validate.*`.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub memory_bytes: i64,
    pub nano_cpus: i64,
    pub pids_limit: i64,
    /// Per test phase (pre, post), enforced inside the container; the container as
    /// a whole gets twice this plus [`SETUP_ALLOWANCE`].
    pub run_timeout: Duration,
}

/// Time for the container's own start, the offline install and the patches.
pub const SETUP_ALLOWANCE: Duration = Duration::from_secs(300);

/// One run to do.
#[derive(Debug, Clone)]
pub struct RunRequest {
    pub instance_id: String,
    pub attempt: u32,
    pub image: String,
    pub mirror: PathBuf,
    pub base_commit: String,
    pub version: String,
    pub test_patch: String,
    pub gold_patch: String,
    pub test_files: Vec<String>,
    pub test_command: String,
    /// Where this run's log and reports are written.
    pub log_dir: PathBuf,
    /// The value of [`DATA_DIR_LABEL`].
    pub data_dir_label: String,
}

/// What a run produced.
#[derive(Debug, Clone, Default)]
pub struct RunOutcome {
    pub steps: BTreeMap<String, StepOutput>,
    /// Results per phase (`pre`, `post`), from the JUnit report or else the log.
    pub results: BTreeMap<String, (ParsedRun, &'static str)>,
    pub exit_code: Option<i64>,
    /// The container hit the outer wall-time limit and was killed.
    pub timed_out: bool,
    pub oom_killed: bool,
    pub duration_secs: f64,
    /// Seconds per test phase, measured inside the container.
    pub phase_secs: BTreeMap<String, f64>,
    pub log_path: PathBuf,
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("the Docker engine failed to {action} for `{instance_id}`: {source}")]
    Docker {
        action: &'static str,
        instance_id: String,
        #[source]
        source: bollard::errors::Error,
    },
    #[error("failed to prepare the repository for `{instance_id}`: {message}")]
    Source { instance_id: String, message: String },
}

/// Every container this process started and has not removed yet.
#[derive(Debug, Clone, Default)]
pub struct Containers {
    live: Arc<Mutex<HashSet<String>>>,
}

impl Containers {
    fn add(&self, id: &str) {
        self.live.lock().expect("not poisoned").insert(id.to_string());
    }
    fn forget(&self, id: &str) {
        self.live.lock().expect("not poisoned").remove(id);
    }
    /// Removes (with force) every container still alive; for Ctrl-C and shutdown.
    pub async fn remove_all(&self, docker: &Docker) {
        let ids: Vec<String> = self.live.lock().expect("not poisoned").drain().collect();
        for id in ids {
            remove(docker, &id).await;
        }
    }
}

/// Removes a container (with force) and returns once it is gone, also when another
/// task's removal of it is already under way (the engine answers 409 then).
async fn remove(docker: &Docker, id: &str) {
    use bollard::errors::Error::DockerResponseServerError;
    let options = RemoveContainerOptionsBuilder::default().force(true).v(true).build();
    match docker.remove_container(id, Some(options)).await {
        Ok(()) => tracing::debug!(container = %id, "removed the container"),
        Err(DockerResponseServerError { status_code: 404, .. }) => {}
        Err(DockerResponseServerError { status_code: 409, .. }) => {
            for _ in 0..120 {
                if docker.inspect_container(id, None).await.is_err() {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
            tracing::warn!(container = %id, "a container is still being removed after 30s");
        }
        Err(error) => tracing::warn!(container = %id, %error, "could not remove a container"),
    }
}

/// Removes its container when dropped without [`ContainerGuard::removed`] having been
/// called: on errors, timeouts and cancelled tasks.
struct ContainerGuard {
    docker: Docker,
    id: String,
    containers: Containers,
    armed: bool,
}

impl ContainerGuard {
    async fn remove(mut self) {
        remove(&self.docker, &self.id).await;
        self.containers.forget(&self.id);
        self.armed = false;
    }
}

impl Drop for ContainerGuard {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let (docker, id, containers) = (self.docker.clone(), self.id.clone(), self.containers.clone());
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            handle.spawn(async move {
                remove(&docker, &id).await;
                containers.forget(&id);
            });
        }
    }
}

/// A random token for the markers of one run.
pub fn new_token() -> String {
    let mut rng = rand::rng();
    (0..24).map(|_| char::from(b"abcdefghijklmnopqrstuvwxyz0123456789"[rng.random_range(0..36)])).collect()
}

/// The shell function `install_repository`: installs `/testbed` into the
/// environment's venv offline (the dependencies are in the image already). Shared
/// by the run script and by release's instance images.
pub const INSTALL_REPOSITORY_FUNCTION: &str = r#"install_repository() {
    if [ -f setup.py ] || { [ -f pyproject.toml ] && grep -qE '^\[(build-system|project)\]' pyproject.toml; }; then
        uv pip install --offline --no-deps --no-build-isolation -e . && return 0
        # The environment's own editable install points at /testbed too: keep it when the
        # offline reinstall cannot build (e.g. dependencies of the date that today's
        # setuptools cannot build with).
        if ls /opt/venv/lib/python3*/site-packages/ 2>/dev/null | grep -qE '^__editable__|\.egg-link$'; then
            echo "swe-harvest: the offline reinstall failed; keeping the environment's editable install of /testbed"
            return 0
        fi
        return 1
    else
        echo "nothing to install: no setup.py or pyproject.toml"
    fi
}"#;

/// The start of every container script (`source` names the file that generates it):
/// the marker token from the first argument, `mark` (step markers), `cleanup` (kills
/// what a test phase left running), `/testbed`, the version setuptools-scm reports,
/// and the functions of [`PATCH_FUNCTIONS`] and [`INSTALL_REPOSITORY_FUNCTION`].
pub fn script_preamble(source: &str, version: &str) -> String {
    format!(
        r#"#!/bin/bash
# Generated by swe-harvest ({source}). Argument: the run's marker token.
token="$1"
mark() {{ printf '\n@@swe-harvest %s %s %s\n' "$token" "$1" "$2"; }}
cleanup() {{ for _ in 1 2 3; do kill -9 -1 2>/dev/null; done; }}
cd /testbed || exit 1
export SETUPTOOLS_SCM_PRETEND_VERSION={pretend}
{PATCH_FUNCTIONS}
{INSTALL_REPOSITORY_FUNCTION}
"#,
        pretend = pretend_version(version),
    )
}

/// The script that runs inside the container. The token is its first argument.
pub fn script(request: &RunRequest, phase_timeout: Duration) -> String {
    let files: Vec<String> = request.test_files.iter().map(|file| shell_quote(file)).collect();
    format!(
        r#"{preamble}run_tests() {{
    phase="$1"
    mark "$phase" begin
    start=$(date +%s.%N)
    timeout -k 5 {timeout} {command} --junitxml=/swe-harvest/out/"$phase".xml {files} 2>&1
    code=$?
    end=$(date +%s.%N)
    cleanup
    mark "$phase" "end $code"
    echo "@@swe-harvest $token $phase-seconds $start $end"
}}
mark install begin
install_repository 2>&1; code=$?
mark install "end $code"
[ "$code" -eq 0 ] || exit 0
mark test_patch begin
apply_patch /swe-harvest/test.patch 2>&1; code=$?
mark test_patch "end $code"
[ "$code" -eq 0 ] || exit 0
run_tests pre
mark gold_patch begin
apply_patch /swe-harvest/gold.patch 2>&1; code=$?
mark gold_patch "end $code"
[ "$code" -eq 0 ] || exit 0
run_tests post
mark done begin
mark done "end 0"
"#,
        preamble = script_preamble("pipeline/validate/runner.rs", &request.version),
        timeout = phase_timeout.as_secs().max(1),
        command = request.test_command,
        files = files.join(" "),
    )
}

/// Shell functions shared by every container script: apply a patch (strict, then
/// whitespace-tolerant, then `patch` with fuzz) and reverse one.
pub const PATCH_FUNCTIONS: &str = r#"apply_patch() {
    git apply --verbose "$1" && return 0
    git apply --verbose --ignore-whitespace "$1" && return 0
    command -v patch >/dev/null && patch --batch --fuzz=5 -p1 -i "$1" && return 0
    return 1
}
reverse_patch() {
    git apply --verbose -R "$1" && return 0
    command -v patch >/dev/null && patch --batch -R -p1 -i "$1" && return 0
    return 1
}"#;

/// One container to run: the image, what is copied in, the script and its limits.
#[derive(Debug, Clone)]
pub struct ContainerJob {
    pub instance_id: String,
    pub attempt: u32,
    pub image: String,
    /// The user the script runs as (the image's unprivileged user, or root for
    /// instance images whose `/testbed` belongs to root).
    pub user: Owner,
    /// The repository at a commit, copied to `/testbed` from a mirror; `None` when
    /// the image has `/testbed` already (instance images).
    pub testbed: Option<(PathBuf, String)>,
    /// Files under `/swe-harvest/`: relative path, content, mode.
    pub files: Vec<(String, Vec<u8>, u32)>,
    /// The script, run as `bash /swe-harvest/run.sh <token>`.
    pub script: String,
    pub token: String,
    pub env: Vec<String>,
    /// Test phases the script runs: the container's wall limit is this many phase
    /// timeouts plus [`SETUP_ALLOWANCE`].
    pub phases: u32,
    /// Where the log is written; reports go next to it, prefixed with its stem.
    pub log_path: PathBuf,
    pub data_dir_label: String,
}

/// What a container left: its whole output, the files of `/swe-harvest/out`, and how it ended.
#[derive(Debug, Clone, Default)]
pub struct ContainerOutput {
    pub log: String,
    /// `.xml` and `.json` files of `/swe-harvest/out`, by file name.
    pub reports: BTreeMap<String, String>,
    pub exit_code: Option<i64>,
    pub timed_out: bool,
    pub oom_killed: bool,
    pub duration_secs: f64,
}

/// The archive copied to `/` in the container: the repository under `testbed/` (when
/// the job carries one) and the job's files under `swe-harvest/`.
fn payload(job: &ContainerJob) -> Result<Vec<u8>, String> {
    let mut builder = tar::Builder::new(Vec::new());
    if let Some((mirror, commit)) = &job.testbed {
        let mirror = Mirror::open(mirror).map_err(|error| error.to_string())?;
        source::append_dir(&mut builder, "testbed", job.user).map_err(|error| error.to_string())?;
        mirror.append_tree(&mut builder, commit, "testbed", job.user).map_err(|error| error.to_string())?;
    }
    source::append_dir(&mut builder, "swe-harvest", job.user).map_err(|error| error.to_string())?;
    source::append_dir(&mut builder, "swe-harvest/out", job.user).map_err(|error| error.to_string())?;
    let mut dirs = BTreeSet::new();
    for (path, bytes, mode) in &job.files {
        // Parent folders first, so that they belong to the job's user.
        let mut parent = std::path::Path::new(path).parent();
        let mut missing = Vec::new();
        while let Some(dir) = parent.filter(|dir| !dir.as_os_str().is_empty()) {
            missing.push(dir.to_string_lossy().into_owned());
            parent = dir.parent();
        }
        for dir in missing.into_iter().rev() {
            if dirs.insert(dir.clone()) {
                source::append_dir(&mut builder, &format!("swe-harvest/{dir}"), job.user)
                    .map_err(|error| error.to_string())?;
            }
        }
        source::append_bytes(&mut builder, &format!("swe-harvest/{path}"), bytes, *mode, job.user)
            .map_err(|error| error.to_string())?;
    }
    source::append_bytes(&mut builder, "swe-harvest/run.sh", job.script.as_bytes(), 0o755, job.user)
        .map_err(|error| error.to_string())?;
    builder.into_inner().map_err(|error| error.to_string())
}

/// Runs one validation attempt: install, test patch, pre, gold patch, post.
pub async fn run(
    docker: &Docker,
    containers: &Containers,
    request: &RunRequest,
    limits: Limits,
) -> Result<RunOutcome, RunError> {
    let token = new_token();
    let job = ContainerJob {
        instance_id: request.instance_id.clone(),
        attempt: request.attempt,
        image: request.image.clone(),
        user: USER,
        testbed: Some((request.mirror.clone(), request.base_commit.clone())),
        files: vec![
            ("test.patch".into(), request.test_patch.clone().into_bytes(), 0o644),
            ("gold.patch".into(), request.gold_patch.clone().into_bytes(), 0o644),
        ],
        script: script(request, limits.run_timeout),
        token: token.clone(),
        env: vec![format!("SWE_HARVEST_ATTEMPT={}", request.attempt)],
        phases: 2,
        log_path: request.log_dir.join(format!("run-{}.log", request.attempt)),
        data_dir_label: request.data_dir_label.clone(),
    };
    let output = run_job(docker, containers, &job, limits).await?;
    let steps = parse::split_steps(&output.log, &token);
    let mut results = BTreeMap::new();
    let mut phase_secs = BTreeMap::new();
    for phase in ["pre", "post"] {
        let Some(step) = steps.get(phase) else { continue };
        results.insert(phase.to_string(), parse_phase(&output.reports, phase, step, &request.test_files));
        if let Some(seconds) = phase_seconds(&output.log, &token, phase) {
            phase_secs.insert(phase.to_string(), seconds);
        }
    }
    Ok(RunOutcome {
        steps,
        results,
        exit_code: output.exit_code,
        timed_out: output.timed_out,
        oom_killed: output.oom_killed,
        duration_secs: output.duration_secs,
        phase_secs,
        log_path: job.log_path,
    })
}

/// A test phase's results: from its JUnit report `<phase>.xml` when it has tests,
/// else from the `-rA` summary in the phase's output.
pub fn parse_phase(
    reports: &BTreeMap<String, String>,
    phase: &str,
    step: &StepOutput,
    test_files: &[String],
) -> (ParsedRun, &'static str) {
    let from_junit = reports
        .get(&format!("{phase}.xml"))
        .and_then(|xml| parse::parse_junit(xml, test_files).ok())
        .filter(|run| !run.tests.is_empty());
    match from_junit {
        Some(run) => (run, "junit"),
        None => (parse::parse_pytest_log(&step.text), "log"),
    }
}

/// Runs one container to its end (or its time limit), keeps its log and reports, and
/// removes it.
pub async fn run_job(
    docker: &Docker,
    containers: &Containers,
    job: &ContainerJob,
    limits: Limits,
) -> Result<ContainerOutput, RunError> {
    let instance_id = job.instance_id.clone();
    let docker_error = |action: &'static str| {
        let instance_id = instance_id.clone();
        move |source| RunError::Docker { action, instance_id, source }
    };
    let payload = {
        let job = job.clone();
        tokio::task::spawn_blocking(move || payload(&job))
            .await
            .map_err(|error| RunError::Source { instance_id: instance_id.clone(), message: error.to_string() })?
            .map_err(|message| RunError::Source { instance_id: instance_id.clone(), message })?
    };

    let name = format!("swe-harvest-{}-{}-{}", sanitize(&job.instance_id), job.attempt, &job.token[..8]);
    let labels: HashMap<String, String> = [
        (DATA_DIR_LABEL.to_string(), job.data_dir_label.clone()),
        (INSTANCE_LABEL.to_string(), job.instance_id.clone()),
    ]
    .into();
    let body = ContainerCreateBody {
        image: Some(job.image.clone()),
        cmd: Some(vec!["bash".into(), "/swe-harvest/run.sh".into(), job.token.clone()]),
        user: Some(format!("{}:{}", job.user.uid, job.user.gid)),
        working_dir: Some("/testbed".into()),
        env: Some(job.env.clone()),
        network_disabled: Some(true),
        labels: Some(labels),
        host_config: Some(HostConfig {
            network_mode: Some("none".into()),
            memory: Some(limits.memory_bytes),
            memory_swap: Some(limits.memory_bytes),
            nano_cpus: Some(limits.nano_cpus),
            pids_limit: Some(limits.pids_limit),
            cap_drop: Some(vec!["ALL".into()]),
            security_opt: Some(vec!["no-new-privileges".into()]),
            binds: None,
            mounts: None,
            auto_remove: Some(false),
            ..Default::default()
        }),
        ..Default::default()
    };
    let options = CreateContainerOptionsBuilder::default().name(&name).build();
    let created = docker.create_container(Some(options), body).await.map_err(docker_error("create a container"))?;
    containers.add(&created.id);
    let guard =
        ContainerGuard { docker: docker.clone(), id: created.id.clone(), containers: containers.clone(), armed: true };

    let upload = UploadToContainerOptionsBuilder::default().path("/").build();
    docker
        .upload_to_container(&created.id, Some(upload), bollard::body_full(payload.into()))
        .await
        .map_err(docker_error("copy the repository into the container"))?;
    let started = Instant::now();
    docker.start_container(&created.id, None).await.map_err(docker_error("start the container"))?;

    let wall_limit = limits.run_timeout * job.phases.max(1) + SETUP_ALLOWANCE;
    let mut wait = docker.wait_container(&created.id, None);
    let waited = tokio::time::timeout(wall_limit, wait.next()).await;
    let timed_out = waited.is_err();
    if timed_out {
        tracing::warn!(instance_id = %job.instance_id, seconds = wall_limit.as_secs(), "the container hit its time limit; killing it");
        let _ = docker.kill_container(&created.id, None::<bollard::query_parameters::KillContainerOptions>).await;
    }
    let duration_secs = started.elapsed().as_secs_f64();

    let inspected = docker.inspect_container(&created.id, None).await.ok();
    let state = inspected.and_then(|inspected| inspected.state);
    let exit_code = state.as_ref().and_then(|state| state.exit_code);
    let oom_killed = state.as_ref().and_then(|state| state.oom_killed).unwrap_or(false);

    let log = collect_logs(docker, &created.id).await;
    let reports = download_reports(docker, &created.id).await;
    guard.remove().await;

    if let Some(dir) = job.log_path.parent() {
        let _ = fs_err::create_dir_all(dir);
    }
    if let Err(error) = fs_err::write(&job.log_path, &log) {
        tracing::warn!(%error, "could not write the run log");
    }
    let stem = job.log_path.file_stem().map(|stem| stem.to_string_lossy().into_owned()).unwrap_or_default();
    for (name, text) in &reports {
        let _ = fs_err::write(job.log_path.with_file_name(format!("{stem}-{name}")), text);
    }
    Ok(ContainerOutput { log, reports, exit_code, timed_out, oom_killed, duration_secs })
}

/// The seconds a phase took, from the line `@@swe-harvest <token> <phase>-seconds <start> <end>`.
fn phase_seconds(log: &str, token: &str, phase: &str) -> Option<f64> {
    let prefix = format!("{} {token} {phase}-seconds ", parse::MARKER_PREFIX);
    let line = log.lines().find(|line| line.starts_with(&prefix))?;
    let mut numbers = line[prefix.len()..].split(' ').filter_map(|word| word.parse::<f64>().ok());
    let (start, end) = (numbers.next()?, numbers.next()?);
    Some(end - start)
}

fn sanitize(text: &str) -> String {
    text.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '-' }).take(80).collect()
}

async fn collect_logs(docker: &Docker, id: &str) -> String {
    let options = LogsOptionsBuilder::default().stdout(true).stderr(true).build();
    let mut stream = docker.logs(id, Some(options));
    let mut bytes = Vec::new();
    while let Some(item) = stream.next().await {
        match item {
            Ok(output) => bytes.extend_from_slice(&output.into_bytes()),
            Err(error) => {
                tracing::warn!(container = %id, %error, "could not read the whole container log");
                break;
            }
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The files of `/swe-harvest/out` (JUnit reports, line counts), by file name.
async fn download_reports(docker: &Docker, id: &str) -> BTreeMap<String, String> {
    let options = DownloadFromContainerOptionsBuilder::default().path("/swe-harvest/out").build();
    let mut stream = docker.download_from_container(id, Some(options));
    let mut bytes = Vec::new();
    while let Some(item) = stream.next().await {
        match item {
            Ok(chunk) => bytes.extend_from_slice(&chunk),
            Err(error) => {
                tracing::debug!(container = %id, %error, "no reports to copy out");
                return BTreeMap::new();
            }
        }
    }
    let mut files = BTreeMap::new();
    let mut archive = tar::Archive::new(bytes.as_slice());
    let Ok(entries) = archive.entries() else { return files };
    for mut entry in entries.flatten() {
        let Ok(path) = entry.path().map(|path| path.into_owned()) else { continue };
        let Some(name) = path.file_name().and_then(|name| name.to_str()).map(String::from) else { continue };
        if !(name.ends_with(".xml") || name.ends_with(".json")) {
            continue;
        }
        let mut text = String::new();
        if entry.read_to_string(&mut text).is_ok() {
            files.insert(name, text);
        }
    }
    files
}

/// Containers left by a data dir's earlier runs (killed processes): removed at start.
pub async fn remove_leftovers(docker: &Docker, data_dir_label: &str) -> usize {
    let filters: HashMap<String, Vec<String>> =
        [("label".to_string(), vec![format!("{DATA_DIR_LABEL}={data_dir_label}")])].into();
    let options = ListContainersOptionsBuilder::default().all(true).filters(&filters).build();
    let Ok(list) = docker.list_containers(Some(options)).await else { return 0 };
    let mut removed = 0;
    for container in list {
        if let Some(id) = container.id {
            remove(docker, &id).await;
            removed += 1;
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_random_and_marker_safe() {
        let (a, b) = (new_token(), new_token());
        assert_ne!(a, b);
        assert_eq!(a.len(), 24);
        assert!(a.chars().all(|c| c.is_ascii_alphanumeric()));
    }

    #[test]
    fn phase_seconds_are_read_from_the_tokened_line_only() {
        let log = "@@swe-harvest other pre-seconds 1 100\n@@swe-harvest tok pre-seconds 10.5 12.0\n";
        assert_eq!(phase_seconds(log, "tok", "pre"), Some(1.5));
        assert_eq!(phase_seconds(log, "tok", "post"), None);
    }

    #[test]
    fn script_quotes_test_files_and_applies_the_timeout() {
        let request = RunRequest {
            instance_id: "a__b-1".into(),
            attempt: 1,
            image: "img".into(),
            mirror: PathBuf::new(),
            base_commit: String::new(),
            version: "1.2".into(),
            test_patch: String::new(),
            gold_patch: String::new(),
            test_files: vec!["tests/test a.py".into(), "tests/test_b.py".into()],
            test_command: "pytest -rA".into(),
            log_dir: PathBuf::new(),
            data_dir_label: String::new(),
        };
        let text = script(&request, Duration::from_secs(42));
        assert!(text.contains("timeout -k 5 42 pytest -rA --junitxml=/swe-harvest/out/\"$phase\".xml 'tests/test a.py' tests/test_b.py"), "{text}");
        assert!(text.contains("SETUPTOOLS_SCM_PRETEND_VERSION=1.2.0"));
    }
}
