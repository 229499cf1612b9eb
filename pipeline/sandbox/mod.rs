//! Running untrusted code: every stage that runs a repository's code (validate, its
//! coverage runs, release's instance images, evaluate) does it through this module
//! and nothing else. It owns the [`Backend`] trait (find, pull, build and push
//! images; run one job with limits, files in and files out; remove what this process
//! or an earlier one left behind), the archives that carry `/testbed` and a job's
//! files in ([`archive`]), the script preamble and the markers that carry a random
//! token per run ([`script`]), and environment images built once per content key
//! ([`images`]).
//!
//! It knows nothing of languages or test frameworks: what goes into a Dockerfile and
//! how results are read is [`crate::ecosystem`]'s. Backends: the local Docker engine
//! ([`docker`]) and Docker Swarm with a registry ([`swarm`]). A new backend is one file implementing [`Backend`] plus one line in
//! [`connect`].
//!
//! Isolation of every job, whatever the backend: no network, all capabilities
//! dropped, no new privileges, memory (and swap) / CPU / process / time limits, the
//! image's unprivileged user unless the job says root, no host mounts, no environment
//! from the host.

pub mod archive;
pub mod docker;
pub mod egress;
pub mod images;
pub mod job_images;
pub mod output;
pub mod registries;
pub mod registry_api;
pub mod script;
pub mod swarm;
pub mod tool_image;

pub use registries::Registries;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// The largest file a job may write unless `validate.file_size_bytes` says otherwise.
pub const DEFAULT_FILE_SIZE_BYTES: u64 = 2 << 30;
/// How many files a job may hold open.
const OPEN_FILES_LIMIT: i64 = 4096;

/// The `ulimit`s of every job's container, whatever the backend: the largest file
/// it may write and how many files it may hold open.
fn job_ulimits(limits: &Limits) -> Vec<bollard::models::ResourcesUlimits> {
    let limit = |name: &str, value: i64| bollard::models::ResourcesUlimits {
        name: Some(name.into()),
        soft: Some(value),
        hard: Some(value),
    };
    vec![limit("fsize", limits.file_size_bytes), limit("nofile", OPEN_FILES_LIMIT)]
}

/// Every job's host name, which its hosts file maps to the loopback address: with no
/// network the engine maps none, and a test that resolves its own host name fails
/// (Surefire 3.0.0-M5 resolves it before it forks: every Maven test of apache/dubbo
/// ended "UnknownHostException: <container id>: Temporary failure in name resolution").
const JOB_HOSTNAME: &str = "swe-harvest";

/// The label every swe-harvest container carries, with the data dir as value.
pub const DATA_DIR_LABEL: &str = "swe-harvest.data-dir";
/// The label naming the task a container runs for.
pub const INSTANCE_LABEL: &str = "swe-harvest.instance";
/// The label naming the run (process) that started a container: a
/// [`crate::process::RunId`]. A sweep removes a container only when its run is gone.
pub const RUN_LABEL: &str = "swe-harvest.run";
/// Time for a container's own start, the offline install and the patches, on top of
/// its test phases' limits.
pub const SETUP_ALLOWANCE: Duration = Duration::from_secs(300);

/// What an archive's entries, and a job's processes, are owned by inside the container.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Owner {
    pub uid: u64,
    pub gid: u64,
}

impl Owner {
    pub const ROOT: Owner = Owner { uid: 0, gid: 0 };
    /// The unprivileged user of environment images (`harvest`).
    pub const UNPRIVILEGED: Owner = Owner { uid: 1000, gid: 1000 };

    /// The capabilities a job of this owner keeps (every other one is dropped): root
    /// jobs (evaluate's, which run as SWE-bench's harness does) keep the right to
    /// write files of other owners, so that an image's tool caches made for the
    /// unprivileged user (Go's build cache and `GOTMPDIR`) stay usable; nothing that
    /// reaches past the container.
    pub fn kept_capabilities(self) -> Vec<String> {
        if self.uid == 0 { vec!["CAP_DAC_OVERRIDE".into(), "CAP_FOWNER".into()] } else { Vec::new() }
    }
}

/// Limits of one job, from `validate.*`.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub memory_bytes: i64,
    pub nano_cpus: i64,
    pub pids_limit: i64,
    /// The largest file a job's processes may write (`ulimit -f`, in bytes).
    pub file_size_bytes: i64,
    /// Per test phase, enforced inside the container by the script; the job as a
    /// whole gets this times its phases plus [`SETUP_ALLOWANCE`].
    pub run_timeout: Duration,
}

/// A job container's limits as the config gives them (keys of `[validate]`, which
/// evaluate and release's image builds read too): what [`Limits`] are made from, and
/// the least that a container is given.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LimitSettings {
    pub memory_bytes: u64,
    /// CPUs (fractions allowed).
    pub cpus: f64,
    pub pids_limit: i64,
    pub file_size_bytes: u64,
    pub run_timeout_secs: u64,
}

impl LimitSettings {
    pub fn limits(&self) -> Limits {
        Limits {
            memory_bytes: self.memory_bytes as i64,
            nano_cpus: (self.cpus * 1e9) as i64,
            pids_limit: self.pids_limit,
            file_size_bytes: self.file_size_bytes.min(i64::MAX as u64) as i64,
            run_timeout: Duration::from_secs(self.run_timeout_secs),
        }
    }

    /// A value below what a container needs is refused; `at` is the section that holds
    /// these keys (`validate`).
    pub fn check(&self, origin: &str, at: &str) -> Result<(), crate::settings::ConfigError> {
        let refused = |key: &str, message: &str| Err(crate::settings::invalid(origin, &format!("{at}.{key}"), message));
        if self.memory_bytes < 64 * 1024 * 1024 {
            return refused("memory_bytes", "must be at least 67108864 (64 MiB)");
        }
        // Written so that NaN fails too.
        if self.cpus.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
            return refused("cpus", "must be greater than 0");
        }
        if self.pids_limit < 16 {
            return refused("pids_limit", "must be at least 16");
        }
        if self.file_size_bytes < 1024 * 1024 {
            return refused("file_size_bytes", "must be at least 1048576 (1 MiB)");
        }
        Ok(())
    }
}

impl Limits {
    /// The wall-time limit of a job with `phases` test phases.
    pub fn wall_limit(&self, phases: u32) -> Duration {
        self.run_timeout * phases.max(1) + SETUP_ALLOWANCE
    }
}

/// One container to run: the image, what is copied in, the script and its limits.
#[derive(Debug, Clone)]
pub struct Job {
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
    /// Test phases the script runs (see [`Limits::wall_limit`]).
    pub phases: u32,
    /// Where the log is written; reports go next to it, prefixed with its stem.
    pub log_path: PathBuf,
    /// The value of [`DATA_DIR_LABEL`].
    pub data_dir_label: String,
}

impl Job {
    /// The labels of the job's container (or service): the data dir, the task and the
    /// run, by which sweeps find what a run left behind.
    fn labels(&self) -> std::collections::HashMap<String, String> {
        [
            (DATA_DIR_LABEL.to_string(), self.data_dir_label.clone()),
            (INSTANCE_LABEL.to_string(), self.instance_id.clone()),
            (RUN_LABEL.to_string(), crate::process::RunId::current().to_string()),
        ]
        .into()
    }
}

/// What a job left: its whole output, the files of `/swe-harvest/out`, and how it ended.
#[derive(Debug, Clone, Default)]
pub struct JobOutput {
    pub log: String,
    /// `.xml` and `.json` files of `/swe-harvest/out`, by file name.
    pub reports: BTreeMap<String, String>,
    pub exit_code: Option<i64>,
    /// The job hit its wall-time limit and was killed.
    pub timed_out: bool,
    pub oom_killed: bool,
    pub duration_secs: f64,
    /// Bytes of output cut from the middle of long steps ([`output`]); 0 when none.
    pub output_cut_bytes: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("the container engine failed to {action} for `{instance_id}`: {message}")]
    Engine { action: &'static str, instance_id: String, message: String },
    #[error("failed to prepare the repository for `{instance_id}`: {message}")]
    Source { instance_id: String, message: String },
}

/// One image build: a tar context with its `Dockerfile`, a tag and labels.
#[derive(Debug, Clone)]
pub struct ImageBuild {
    pub tag: String,
    pub context: Vec<u8>,
    pub labels: BTreeMap<String, String>,
    /// What the build's `RUN` steps reach: nothing (instance images install offline),
    /// or the registries through the egress proxy ([`egress`]).
    pub network: BuildNetwork,
    pub timeout: Duration,
    /// Memory and CPU of the build's `RUN` steps, which run the repository's own build
    /// code: the limits of the jobs ([`BuildLimits::of`]).
    pub limits: BuildLimits,
}

/// The network of a build's `RUN` steps: the code they run is untrusted.
#[derive(Debug, Clone)]
pub enum BuildNetwork {
    /// None at all.
    Off,
    /// The destinations of the allowlist, through the egress proxy, and nothing else.
    Registries(Arc<egress::Allowlist>),
}

/// What a build may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BuildLimits {
    /// Memory (and memory + swap); 0 for no limit.
    pub memory_bytes: i64,
    /// CPUs in billionths; 0 for no limit.
    pub nano_cpus: i64,
}

impl BuildLimits {
    /// A build gets what a job gets.
    pub fn of(limits: &Limits) -> BuildLimits {
        BuildLimits { memory_bytes: limits.memory_bytes, nano_cpus: limits.nano_cpus }
    }
}

/// Why a build did not produce its image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BuildFailure {
    TimedOut {
        /// The output of the step under way when time ran out.
        step_output: String,
    },
    Failed {
        /// The engine's message (for a failed `RUN` step, mostly the step's command
        /// and its exit code).
        message: String,
        /// The failing step's own output (what its command printed), without the
        /// engine's lines; empty when the failure was not in a step's command.
        step_output: String,
        /// The destinations the egress proxy refused during the build.
        refused: Vec<String>,
    },
}

#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error(
        "cannot reach the Docker engine ({message}); start it (scripts/setup.sh installs and starts one) or set DOCKER_HOST"
    )]
    EngineUnavailable { message: String },
    #[error("cannot use the swarm backend: {message}")]
    Swarm { message: String },
}

/// Where jobs run and images live. Implementations must give every job the
/// isolation described in the module doc, and must remove every container they
/// start: on success, on errors and timeouts, and on [`Backend::remove_running`].
#[async_trait::async_trait]
pub trait Backend: Send + Sync {
    /// The backend's name, as `--backend` spells it.
    fn name(&self) -> &'static str;
    /// The id of an image present where jobs run, if it is there.
    async fn image_id(&self, reference: &str) -> Option<String>;
    /// Pulls an image; false when it cannot be had.
    async fn pull(&self, reference: &str) -> bool;
    /// Builds an image, appending the builder's output to `log`.
    async fn build(&self, build: &ImageBuild, log: &mut String) -> Result<(), BuildFailure>;
    /// Tags `tag` into `registry` and pushes it; returns the pushed reference.
    async fn push(&self, tag: &str, registry: &str) -> Result<String, String>;
    /// Runs one job to its end or its wall-time limit and removes its container.
    async fn run(&self, job: &Job, limits: Limits) -> Result<JobOutput, RunError>;
    /// How many jobs of `limits` fit at once where jobs run, when the backend knows
    /// better than this machine (a swarm: its nodes' CPUs and memory); `None` leaves
    /// the count to the machine's cores and memory.
    async fn capacity(&self, _limits: Limits) -> Option<usize> {
        None
    }
    /// Removes every job this process started and that is still running (Ctrl-C),
    /// and what this process's failed image builds left; called when a run ends.
    async fn remove_running(&self);
    /// Removes the containers of this data dir that processes which are gone left
    /// behind (see [`left_behind`]), never those of a live run; returns how many.
    async fn sweep(&self, data_dir_label: &str) -> usize;
}

/// Whether a container with these labels was left behind by a run that is gone: its
/// [`RUN_LABEL`] names a run of this host that no longer exists, or it has none (made
/// before containers were labelled with their run). Containers of live runs, this
/// one's included, and of runs on other hosts are not left behind.
pub fn left_behind(labels: &std::collections::HashMap<String, String>) -> bool {
    match labels.get(RUN_LABEL) {
        None => true,
        Some(run) => crate::process::RunId::parse(run).is_none_or(|run| run.is_gone()),
    }
}

crate::spelled::spelled_enum! {
    /// The backends swe-harvest can run jobs on.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    pub enum BackendKind {
        /// The local Docker engine (`DOCKER_HOST` or the default socket).
        #[default]
        Local => "local",
        /// A Docker Swarm whose manager is the local engine, images through a registry.
        Swarm => "swarm",
    }
}

impl BackendKind {
    /// The kind that `--backend` / `validate.backend` names.
    pub fn parse(name: &str) -> Option<BackendKind> {
        BackendKind::ALL.into_iter().find(|kind| kind.as_str() == name)
    }
}

impl serde::Serialize for BackendKind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for BackendKind {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        BackendKind::parse(&name)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown backend `{name}`: use `local` or `swarm`")))
    }
}

/// What a backend other than the local one needs (from `validate.*`).
#[derive(Debug, Clone, Default)]
pub struct BackendOptions {
    /// `validate.registry`: where the swarm backend pushes job images.
    pub registry: Option<String>,
    /// `validate.swarm_constraints`: placement constraints of every swarm job.
    pub swarm_constraints: Vec<String>,
}

/// Connects to a backend with default options and checks that it answers.
pub async fn connect(kind: BackendKind) -> Result<Arc<dyn Backend>, SandboxError> {
    connect_with(kind, &BackendOptions::default()).await
}

/// Connects to a backend and checks that it answers.
pub async fn connect_with(kind: BackendKind, options: &BackendOptions) -> Result<Arc<dyn Backend>, SandboxError> {
    match kind {
        BackendKind::Local => Ok(Arc::new(docker::DockerBackend::connect().await?)),
        BackendKind::Swarm => {
            let options = swarm::SwarmOptions {
                registry: options.registry.clone().unwrap_or_default(),
                constraints: options.swarm_constraints.clone(),
            };
            Ok(Arc::new(swarm::SwarmBackend::connect(options).await?))
        }
    }
}

/// Runs one job on `backend` and keeps what it left: its log at `job.log_path` and its
/// reports next to it (`<log stem>-<report name>`).
pub async fn run_job(backend: &dyn Backend, job: &Job, limits: Limits) -> Result<JobOutput, RunError> {
    let output = backend.run(job, limits).await?;
    if let Some(dir) = job.log_path.parent() {
        let _ = fs_err::create_dir_all(dir);
    }
    if let Err(error) = fs_err::write(&job.log_path, &output.log) {
        tracing::warn!(%error, "could not write the run log");
    }
    let stem = job.log_path.file_stem().map(|stem| stem.to_string_lossy().into_owned()).unwrap_or_default();
    for (name, text) in &output.reports {
        let _ = fs_err::write(job.log_path.with_file_name(format!("{stem}-{name}")), text);
    }
    Ok(output)
}

#[cfg(test)]
mod tests {
    use super::Owner;

    #[test]
    fn only_root_jobs_keep_the_right_to_write_other_owners_files() {
        assert_eq!(Owner::ROOT.kept_capabilities(), ["CAP_DAC_OVERRIDE", "CAP_FOWNER"]);
        assert!(Owner::UNPRIVILEGED.kept_capabilities().is_empty());
    }
}
