//! The local Docker engine as a [`Backend`], through bollard: one container per job
//! from its image, the job's archive copied in before it starts (no host mounts), the
//! network off (`none`), every capability dropped, no new privileges, memory + swap,
//! CPU and process limits, the job's user, no environment from the host, and a wall
//! limit after which it is killed. Also: an init process (it reaps what tests leave
//! behind), `/tmp` as a tmpfs no larger than the memory limit, ulimits on file size
//! and open files, and no log on the engine's disk (logging driver `none`): the
//! output is read from the container's own streams (attached before it starts, so
//! nothing is missed and a fast writer waits for the reader instead of losing lines)
//! and kept within bounds ([`super::output`]). Every engine call but the long-lived
//! ones (a build, the wait for a job, reading its output: each has its own limit) has
//! a time limit of its own.
//!
//! Decision: the root filesystem stays writable. The job's archive is copied in
//! before it starts (a read-only root refuses that), and the offline reinstall of the
//! repository writes into the environment's packages; the disk a job can fill is
//! bounded by the file-size ulimit per file, not in total (overlay2 on this engine
//! has no per-container quota).
//!
//! Containers are always removed: on success explicitly, on errors and timeouts by
//! [`ContainerGuard`], on Ctrl-C and SIGTERM by [`Backend::remove_running`] (the stage
//! loop calls it), and after a killed process (SIGKILL) by [`Backend::sweep`] at the
//! next start. Every container is labelled with the data dir and the run (process)
//! that started it, so a sweep removes only containers whose run is gone. An image
//! build runs in a task of its own that removes its network, proxy and steps'
//! containers however it ends, also when it is stopped ([`Builds`]).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Read;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bollard::Docker;
use bollard::models::{ContainerCreateBody, HostConfig, HostConfigLogConfig};
use bollard::query_parameters::{
    AttachContainerOptionsBuilder, BuildImageOptionsBuilder, CreateContainerOptionsBuilder, CreateImageOptionsBuilder,
    DownloadFromContainerOptionsBuilder, ListContainersOptionsBuilder, PushImageOptionsBuilder,
    RemoveContainerOptionsBuilder, RemoveImageOptionsBuilder, TagImageOptionsBuilder, UploadToContainerOptionsBuilder,
};
use futures::StreamExt;
use tokio::sync::watch;

use super::egress;
use super::output::BoundedOutput;
use super::{Backend, BuildFailure, BuildNetwork, DATA_DIR_LABEL, ImageBuild, Job, JobOutput, Limits, RunError};
use super::{SandboxError, archive, job_ulimits, script};

/// The time limit of one ordinary engine call (create, start, inspect, remove, ...).
const CALL_TIMEOUT: Duration = Duration::from_secs(120);
/// The time limit for copying a job's archive in (a large repository).
const UPLOAD_TIMEOUT: Duration = Duration::from_secs(600);
/// Of each step's output, the first and the last bytes kept ([`BoundedOutput`]).
pub const OUTPUT_HEAD_BYTES: usize = 1 << 20;
pub const OUTPUT_TAIL_BYTES: usize = 4 << 20;

/// Runs one engine call with [`CALL_TIMEOUT`] (or `limit`); a call that does not
/// answer in time is an error naming the action.
async fn call<T>(
    limit: Duration,
    action: &'static str,
    instance_id: &str,
    future: impl std::future::Future<Output = Result<T, bollard::errors::Error>>,
) -> Result<T, RunError> {
    match tokio::time::timeout(limit, future).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => {
            Err(RunError::Engine { action, instance_id: instance_id.to_string(), message: error.to_string() })
        }
        Err(_) => Err(RunError::Engine {
            action,
            instance_id: instance_id.to_string(),
            message: format!("the engine did not answer within {}s", limit.as_secs()),
        }),
    }
}

/// The local Docker engine.
pub struct DockerBackend {
    docker: Docker,
    /// Every container this process started and has not removed yet.
    live: Containers,
    /// What the builds' own tasks share with the backend.
    engine: BuildEngine,
    /// The builds under way, each in a task of its own ([`Builds`]).
    builds: Builds,
}

impl DockerBackend {
    /// Connects to the engine (honours `DOCKER_HOST`) and checks that it answers.
    pub async fn connect() -> Result<DockerBackend, SandboxError> {
        let unavailable =
            |error: bollard::errors::Error| SandboxError::EngineUnavailable { message: error.to_string() };
        let docker = Docker::connect_with_local_defaults().map_err(unavailable)?;
        // Builds and test runs are limited by our own timeouts, not the client's default 2 minutes.
        let docker = docker.with_timeout(Duration::from_secs(24 * 3600));
        let docker = docker.negotiate_version().await.map_err(unavailable)?;
        docker.ping().await.map_err(unavailable)?;
        Ok(DockerBackend {
            engine: BuildEngine {
                docker: docker.clone(),
                failed_steps: Default::default(),
                egress_image: Default::default(),
            },
            docker,
            live: Containers::default(),
            builds: Builds::default(),
        })
    }

    /// The engine's client, for a backend built on this one ([`super::swarm`]).
    pub(crate) fn engine(&self) -> &Docker {
        &self.docker
    }

    /// Removes every container labelled with this process's run that is still there:
    /// a container whose creation was under way when its job was cut short (the engine
    /// finishes a creation whose caller has gone, and nobody learnt its id).
    async fn remove_this_runs_containers(&self) {
        let run = format!("{}={}", super::RUN_LABEL, crate::process::RunId::current());
        let filters: HashMap<String, Vec<String>> = [("label".to_string(), vec![run])].into();
        let options = ListContainersOptionsBuilder::default().all(true).filters(&filters).build();
        let Ok(Ok(list)) = tokio::time::timeout(CALL_TIMEOUT, self.docker.list_containers(Some(options))).await else {
            return;
        };
        for id in list.into_iter().filter_map(|container| container.id) {
            tracing::debug!(container = %id, "removing a container of this run that was not yet known");
            remove(&self.docker, &id).await;
        }
    }
}

/// The builds under way. Each runs in a task of its own, which owns what the build
/// makes (its network, its proxy, its steps' containers) and removes it whatever
/// happens: a caller that goes away (Ctrl-C and SIGTERM drop the stage's work) stops
/// its build but cannot cut the task short between an engine call and the record of
/// what the call made. Stopped, a build stops reading the engine's build stream (the
/// engine then cancels the build), removes the container of the step under way, and
/// closes its proxy and network, removing any container still on it.
/// [`Backend::remove_running`] stops every build and waits for those tasks.
///
/// Decision: a build's engine calls are not raced against the stop, only its wait for
/// the build's stream. An abandoned call is still carried out by the engine after its
/// caller has gone: a proxy started after the run had removed what it knew of
/// (reproduced for issue 66: `validate --input` stopped while the build's network was
/// being opened left the proxy up, its network, and the network probe's exited
/// container). So the opening of the network and proxy (a second or two; the proxy's
/// own image, when the engine has none yet, a minute once) runs to its end before a
/// stop is seen.
#[derive(Default)]
struct Builds {
    under_way: Mutex<Vec<(watch::Sender<bool>, tokio::task::JoinHandle<()>)>>,
}

impl Builds {
    fn add(&self, stop: watch::Sender<bool>, task: tokio::task::JoinHandle<()>) {
        let mut under_way = self.under_way.lock().expect("not poisoned");
        under_way.retain(|(_, task)| !task.is_finished());
        under_way.push((stop, task));
    }

    /// Stops every build under way and waits until each has removed what it made.
    async fn stop_all(&self) {
        let under_way: Vec<_> = std::mem::take(&mut *self.under_way.lock().expect("not poisoned"));
        for (stop, _) in &under_way {
            stop.send_replace(true);
        }
        for (_, task) in under_way {
            let _ = task.await;
        }
    }
}

/// Stops a build when its caller goes away (the future that awaits it is dropped).
struct StopOnDrop(watch::Sender<bool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.send_replace(true);
    }
}

/// Completes when the build is told to stop (never, once nobody can tell it).
async fn stop_requested(stop: &mut watch::Receiver<bool>) {
    if stop.wait_for(|stopped| *stopped).await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// What a stopped build says, should anyone still wait for it.
fn stopped_failure(step_output: String) -> BuildFailure {
    BuildFailure::Failed {
        message: "the build was stopped before it ended: the run is being interrupted".into(),
        step_output,
        refused: Vec::new(),
    }
}

/// What a build's task needs of the backend.
#[derive(Clone)]
struct BuildEngine {
    docker: Docker,
    /// The last step images of failed builds, removed by `remove_running` at the end
    /// of a run: removing them at once could take a cached step from under a
    /// concurrent build that shares it (another environment commit of the repository).
    failed_steps: Arc<Mutex<Vec<String>>>,
    /// The build proxy's image, once made.
    egress_image: Arc<tokio::sync::Mutex<Option<String>>>,
}

impl BuildEngine {
    /// Builds `build`'s image, on its network, until it ends or `stop` says so.
    async fn build(
        &self,
        build: &ImageBuild,
        log: &mut String,
        stop: watch::Receiver<bool>,
    ) -> Result<(), BuildFailure> {
        let BuildNetwork::Registries(allowlist) = &build.network else {
            return self.build_on(build, None, log, stop).await;
        };
        let (outcome, traffic) = self.build_through_proxy(build, allowlist, log, stop).await?;
        outcome.map_err(|failure| match failure {
            BuildFailure::Failed { message, step_output, .. } => {
                let message = match traffic.at_limit_note() {
                    Some(note) => format!("{message} ({note})"),
                    None => message,
                };
                BuildFailure::Failed { message, step_output, refused: traffic.refused }
            }
            timed_out => timed_out,
        })
    }

    /// Makes a build's network and starts its proxy (the proxy's image first, once).
    async fn open_egress(&self, allowlist: &egress::Allowlist) -> Result<egress::BuildEgress, String> {
        let image = {
            let mut image = self.egress_image.lock().await;
            if image.is_none() {
                *image = Some(egress::proxy_image(&self.docker).await?);
            }
            image.clone().unwrap_or_default()
        };
        let labels = [(super::RUN_LABEL.to_string(), crate::process::RunId::current().to_string())].into();
        egress::BuildEgress::open(&self.docker, &image, allowlist, labels).await
    }

    /// Builds on a network and proxy of its own, removed afterwards (also when the
    /// build is stopped): the build's outcome and what the proxy's log says (added to
    /// the build log). `Err` when the network or proxy could not be made.
    async fn build_through_proxy(
        &self,
        build: &ImageBuild,
        allowlist: &egress::Allowlist,
        log: &mut String,
        stop: watch::Receiver<bool>,
    ) -> Result<(Result<(), BuildFailure>, egress::Traffic), BuildFailure> {
        let egress = self.open_egress(allowlist).await.map_err(|message| BuildFailure::Failed {
            message,
            step_output: String::new(),
            refused: Vec::new(),
        })?;
        for subnet in egress.passed_over() {
            log.push_str(&format!(
                "--- a build network of subnet {subnet} passed over: a container on it could not reach its proxy (a NAT rule of this host covering the subnet?); the network {} holds the subnet from now on ---\n",
                egress::holder_of(subnet)
            ));
        }
        // Stopped while the network was being opened: nothing to build.
        let outcome = if *stop.borrow() {
            Err(stopped_failure(String::new()))
        } else {
            self.build_on(build, Some(&egress), log, stop).await
        };
        let traffic = egress.close(&self.docker).await;
        log.push_str(&traffic.log_sections());
        Ok((outcome, traffic))
    }

    /// Builds on the build's network: none, or the egress's (with its proxy in the
    /// build arguments). Stopped, it removes the container of the step under way.
    async fn build_on(
        &self,
        build: &ImageBuild,
        egress: Option<&egress::BuildEgress>,
        log: &mut String,
        mut stop: watch::Receiver<bool>,
    ) -> Result<(), BuildFailure> {
        let labels: HashMap<String, String> = build.labels.clone().into_iter().collect();
        let mut options = BuildImageOptionsBuilder::default()
            .dockerfile("Dockerfile")
            .t(&build.tag)
            .rm(true)
            .forcerm(true)
            .labels(&labels);
        let proxy_args = egress.map(egress::BuildEgress::build_args).unwrap_or_default();
        match egress {
            None => options = options.networkmode("none"),
            Some(egress) => options = options.networkmode(egress.network()).buildargs(&proxy_args),
        }
        if build.limits.memory_bytes > 0 {
            // The engine's API takes 64 bits; bollard's builder 32: builds get at most 2 GiB.
            let memory = i32::try_from(build.limits.memory_bytes).unwrap_or(i32::MAX);
            options = options.memory(memory).memswap(memory);
        }
        if build.limits.nano_cpus > 0 {
            const PERIOD: i64 = 100_000;
            let quota = (build.limits.nano_cpus * PERIOD / 1_000_000_000).max(1000);
            options = options.cpuperiod(PERIOD as i32).cpuquota(i32::try_from(quota).unwrap_or(i32::MAX));
        }
        let options = options.build();
        // What the build went through, for the diagnosis and the clean-up of a failure.
        let mut progress = BuildProgress::default();
        let mut stopped = false;
        let outcome = tokio::time::timeout(build.timeout, async {
            let context = bollard::body_full(build.context.clone().into());
            let mut stream = self.docker.build_image(options, None, Some(context));
            loop {
                let item = tokio::select! {
                    biased;
                    () = stop_requested(&mut stop) => {
                        stopped = true;
                        return Err(stopped_failure(progress.step_output.clone()));
                    }
                    item = stream.next() => item,
                };
                let Some(item) = item else { break };
                match item {
                    Ok(info) => {
                        if let Some(text) = info.stream {
                            log.push_str(&text);
                            progress.read(&text);
                        }
                        if let Some(detail) = info.error_detail {
                            let message = detail.message.unwrap_or_else(|| "the build failed".to_string());
                            log.push_str(&message);
                            return Err(BuildFailure::Failed {
                                message,
                                step_output: progress.step_output.clone(),
                                refused: Vec::new(),
                            });
                        }
                    }
                    Err(error) => {
                        log.push_str(&error.to_string());
                        return Err(BuildFailure::Failed {
                            message: error.to_string(),
                            step_output: progress.step_output.clone(),
                            refused: Vec::new(),
                        });
                    }
                }
            }
            Ok(())
        })
        .await;
        let outcome =
            outcome.unwrap_or_else(|_| Err(BuildFailure::TimedOut { step_output: progress.step_output.clone() }));
        if stopped {
            // The build stream is closed: the engine cancels the build and takes its
            // step down itself, but the network cannot go while the step's container
            // holds an endpoint on it ("has active endpoints"), so it is removed now.
            // The steps committed so far stay as the engine's build cache, from which
            // the next run's build resumes.
            log.push_str("\n--- the build was stopped: the run is being interrupted ---\n");
            if let Some(container) = &progress.running {
                remove(&self.docker, container).await;
            }
        } else if outcome.is_err() {
            self.remove_leftovers(&progress).await;
        }
        outcome
    }

    /// After a failed or timed-out build: removes the untagged image of its last
    /// finished step, and with it the untagged steps below it that nothing else uses
    /// (the engine's own pruning of parents), so that a failure leaves no dangling
    /// image. Images with a tag (the base) or with children (steps that a finished
    /// image, or another build, shares as its cache) are left alone: the engine refuses
    /// to remove them without force, and none is asked. The intermediate containers are
    /// removed by the engine (`forcerm`), but for the one of a step still running when
    /// the build ran out of time, removed here first.
    /// After a failed build: its step still running (a timeout) is removed now, its
    /// last step image is kept for [`BuildEngine::remove_failed_steps`].
    async fn remove_leftovers(&self, progress: &BuildProgress) {
        // A build that ran out of time was left with its step still running: its
        // container holds the last image, and nobody else will use it.
        if let Some(container) = &progress.running {
            remove(&self.docker, container).await;
        }
        if let Some(last) = progress.step_images.last() {
            self.failed_steps.lock().expect("not poisoned").push(last.clone());
        }
    }

    /// Removes the last step images of this process's failed builds, with their
    /// untagged parents that nothing else uses; tagged images and steps that other
    /// images stand on are refused by the engine (no force), so they stay.
    async fn remove_failed_steps(&self) {
        let steps: Vec<String> = std::mem::take(&mut *self.failed_steps.lock().expect("not poisoned"));
        for last in steps {
            let Ok(Ok(image)) = tokio::time::timeout(CALL_TIMEOUT, self.docker.inspect_image(&last)).await else {
                continue;
            };
            if image.repo_tags.as_ref().is_some_and(|tags| !tags.is_empty()) {
                continue;
            }
            let options = RemoveImageOptionsBuilder::default().force(false).noprune(false).build();
            match tokio::time::timeout(CALL_TIMEOUT, self.docker.remove_image(&last, Some(options), None)).await {
                Ok(Ok(removed)) => {
                    tracing::debug!(image = %last, removed = removed.len(), "removed what a failed build left")
                }
                Ok(Err(error)) => tracing::debug!(image = %last, %error, "kept a failed build's last step (in use)"),
                Err(_) => tracing::warn!(image = %last, "the engine did not remove a failed build's image in time"),
            }
        }
    }
}

/// What a build's output says so far: the images of its finished steps (` ---> id`)
/// and the output of the step under way (reset at each `Step N/M :`), without the
/// engine's own lines and colours.
#[derive(Debug, Default)]
struct BuildProgress {
    step_images: Vec<String>,
    step_output: String,
    /// The intermediate container of the step under way, until the engine removes it.
    running: Option<String>,
}

impl BuildProgress {
    fn read(&mut self, text: &str) {
        for line in text.split_inclusive('\n') {
            let plain = script::strip_ansi(line);
            let trimmed = plain.trim();
            if trimmed.starts_with("Step ") && trimmed.contains(" : ") {
                self.step_output.clear();
            } else if let Some(id) = trimmed.strip_prefix("---> Running in ") {
                self.running = Some(id.to_string());
            } else if trimmed.starts_with("Removing intermediate container ") {
                self.running = None;
            } else if let Some(id) = trimmed.strip_prefix("---> ") {
                if !id.is_empty() && id.chars().all(|c| c.is_ascii_hexdigit()) {
                    self.step_images.push(id.to_string());
                }
            } else if !trimmed.starts_with("---> ") {
                self.step_output.push_str(&plain);
            }
        }
    }
}

#[derive(Debug, Clone, Default)]
struct Containers {
    live: Arc<Mutex<HashSet<String>>>,
}

impl Containers {
    fn add(&self, id: &str) {
        self.live.lock().expect("not poisoned").insert(id.to_string());
    }
    fn forget(&self, id: &str) {
        self.live.lock().expect("not poisoned").remove(id);
    }
    fn drain(&self) -> Vec<String> {
        self.live.lock().expect("not poisoned").drain().collect()
    }
}

/// Removes a container (with force) and returns once it is gone, also when another
/// task's removal of it is already under way (the engine answers 409 then).
pub(super) async fn remove(docker: &Docker, id: &str) {
    use bollard::errors::Error::DockerResponseServerError;
    let options = RemoveContainerOptionsBuilder::default().force(true).v(true).build();
    let Ok(removed) = tokio::time::timeout(CALL_TIMEOUT, docker.remove_container(id, Some(options))).await else {
        tracing::warn!(container = %id, "the engine did not remove a container within {}s", CALL_TIMEOUT.as_secs());
        return;
    };
    match removed {
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

/// Removes its container when dropped without [`ContainerGuard::remove`] having been
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

/// A container name: readable, unique per job and run.
fn container_name(job: &Job) -> String {
    let readable: String = job
        .instance_id
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '-' })
        .take(80)
        .collect();
    format!("swe-harvest-{readable}-{}-{}", job.attempt, &job.token[..8])
}

#[async_trait::async_trait]
impl Backend for DockerBackend {
    fn name(&self) -> &'static str {
        "local"
    }

    async fn image_id(&self, reference: &str) -> Option<String> {
        let inspected = tokio::time::timeout(CALL_TIMEOUT, self.docker.inspect_image(reference)).await.ok()?;
        inspected.ok().map(|image| image.id.unwrap_or_default())
    }

    async fn pull(&self, reference: &str) -> bool {
        let options = CreateImageOptionsBuilder::default().from_image(reference).build();
        let mut pull = self.docker.create_image(Some(options), None, None);
        while let Some(item) = pull.next().await {
            if let Err(error) = item {
                tracing::debug!(image = %reference, %error, "could not pull the image");
                return false;
            }
        }
        true
    }

    /// The build runs in a task of its own ([`Builds`]): dropping this future stops it,
    /// and the task still removes what it made.
    async fn build(&self, build: &ImageBuild, log: &mut String) -> Result<(), BuildFailure> {
        let (stop, stopped) = watch::channel(false);
        let (outcome_sender, outcome) = tokio::sync::oneshot::channel();
        let (engine, build) = (self.engine.clone(), build.clone());
        let task = tokio::spawn(async move {
            let mut log = String::new();
            let outcome = engine.build(&build, &mut log, stopped).await;
            let _ = outcome_sender.send((outcome, log));
        });
        self.builds.add(stop.clone(), task);
        let _stop_when_dropped = StopOnDrop(stop);
        match outcome.await {
            Ok((outcome, text)) => {
                log.push_str(&text);
                outcome
            }
            Err(_) => Err(BuildFailure::Failed {
                message: "the build's task ended without an outcome".into(),
                step_output: String::new(),
                refused: Vec::new(),
            }),
        }
    }

    async fn push(&self, tag: &str, registry: &str) -> Result<String, String> {
        let (repository, version) = tag.rsplit_once(':').unwrap_or((tag, "latest"));
        let remote = format!("{}/{repository}", registry.trim_end_matches('/'));
        let options = TagImageOptionsBuilder::default().repo(&remote).tag(version).build();
        self.docker.tag_image(tag, Some(options)).await.map_err(|error| error.to_string())?;
        let options = PushImageOptionsBuilder::default().tag(version).build();
        let mut stream = self.docker.push_image(&remote, Some(options), None);
        while let Some(item) = stream.next().await {
            let info = item.map_err(|error| error.to_string())?;
            if let Some(detail) = info.error_detail {
                return Err(detail.message.unwrap_or_default());
            }
        }
        Ok(format!("{remote}:{version}"))
    }

    async fn run(&self, job: &Job, limits: Limits) -> Result<JobOutput, RunError> {
        let docker = &self.docker;
        let instance_id = job.instance_id.clone();
        let payload = {
            let job = job.clone();
            tokio::task::spawn_blocking(move || archive::job_payload(&job))
                .await
                .map_err(|error| RunError::Source { instance_id: instance_id.clone(), message: error.to_string() })?
                .map_err(|message| RunError::Source { instance_id: instance_id.clone(), message })?
        };

        let labels = job.labels();
        let body = ContainerCreateBody {
            image: Some(job.image.clone()),
            cmd: Some(vec!["bash".into(), "/swe-harvest/run.sh".into(), job.token.clone()]),
            user: Some(format!("{}:{}", job.user.uid, job.user.gid)),
            working_dir: Some("/testbed".into()),
            hostname: Some(super::JOB_HOSTNAME.into()),
            env: Some(job.env.clone()),
            // No network: the `none` network mode (loopback only). Not `network_disabled`
            // as well: with it the engine writes no /etc/hosts, so `localhost` does not
            // resolve (`getaddrinfo EAI_AGAIN localhost`: axios's tests of its HTTP
            // adapter against a local server all failed).
            labels: Some(labels),
            host_config: Some(HostConfig {
                network_mode: Some("none".into()),
                extra_hosts: Some(vec![format!("{}:127.0.0.1", super::JOB_HOSTNAME)]),
                memory: Some(limits.memory_bytes),
                memory_swap: Some(limits.memory_bytes),
                nano_cpus: Some(limits.nano_cpus),
                pids_limit: Some(limits.pids_limit),
                cap_drop: Some(vec!["ALL".into()]),
                cap_add: Some(job.user.kept_capabilities()),
                security_opt: Some(vec!["no-new-privileges".into()]),
                init: Some(true),
                tmpfs: Some([("/tmp".to_string(), format!("rw,nosuid,nodev,size={}", limits.memory_bytes))].into()),
                ulimits: Some(job_ulimits(&limits)),
                // The output is read through the attached streams; the engine keeps none of it.
                log_config: Some(HostConfigLogConfig { typ: Some("none".into()), config: None }),
                binds: None,
                mounts: None,
                auto_remove: Some(false),
                ..Default::default()
            }),
            ..Default::default()
        };
        let options = CreateContainerOptionsBuilder::default().name(&container_name(job)).build();
        let created =
            call(CALL_TIMEOUT, "create a container", &instance_id, docker.create_container(Some(options), body))
                .await?;
        self.live.add(&created.id);
        let guard = ContainerGuard {
            docker: docker.clone(),
            id: created.id.clone(),
            containers: self.live.clone(),
            armed: true,
        };

        let upload = UploadToContainerOptionsBuilder::default().path("/").build();
        let copy = docker.upload_to_container(&created.id, Some(upload), bollard::body_full(payload.into()));
        call(UPLOAD_TIMEOUT, "copy the repository into the container", &instance_id, copy).await?;
        // Attached before the start, so that no output is missed; read while the job
        // runs, within bounds, so that a flood never sits in memory whole.
        let attach = AttachContainerOptionsBuilder::default().stdout(true).stderr(true).stream(true).build();
        let attached = call(
            CALL_TIMEOUT,
            "attach to the container",
            &instance_id,
            docker.attach_container(&created.id, Some(attach)),
        )
        .await?;
        let follower = tokio::spawn(read_output(attached.output, created.id.clone(), job.token.clone()));
        let started = Instant::now();
        call(CALL_TIMEOUT, "start the container", &instance_id, docker.start_container(&created.id, None)).await?;

        let wall_limit = limits.wall_limit(job.phases);
        let mut wait = docker.wait_container(&created.id, None);
        let waited = tokio::time::timeout(wall_limit, wait.next()).await;
        let timed_out = waited.is_err();
        if timed_out {
            tracing::warn!(instance_id = %job.instance_id, seconds = wall_limit.as_secs(), "the container hit its time limit; killing it");
            let kill = docker.kill_container(&created.id, None::<bollard::query_parameters::KillContainerOptions>);
            let _ = tokio::time::timeout(CALL_TIMEOUT, kill).await;
        }
        let duration_secs = started.elapsed().as_secs_f64();

        let inspected = tokio::time::timeout(CALL_TIMEOUT, docker.inspect_container(&created.id, None)).await.ok();
        let inspected = inspected.and_then(Result::ok);
        let state = inspected.and_then(|inspected| inspected.state);
        let exit_code = state.as_ref().and_then(|state| state.exit_code);
        let oom_killed = state.as_ref().and_then(|state| state.oom_killed).unwrap_or(false);

        // The stopped container's streams end the reader's; give it a moment.
        let (log, output_cut_bytes) = match tokio::time::timeout(CALL_TIMEOUT, follower).await {
            Ok(Ok(collected)) => collected,
            _ => (String::new(), 0),
        };
        if output_cut_bytes > 0 {
            tracing::warn!(
                instance_id = %job.instance_id, cut_bytes = output_cut_bytes,
                "the job printed more than is kept of each step; the middle of the longest steps was cut"
            );
        }
        let reports =
            tokio::time::timeout(UPLOAD_TIMEOUT, download_reports(docker, &created.id)).await.unwrap_or_default();
        guard.remove().await;
        Ok(JobOutput { log, reports, exit_code, timed_out, oom_killed, duration_secs, output_cut_bytes })
    }

    /// Stops the builds under way and waits until each has removed its steps'
    /// containers, its proxy and its network ([`Builds`]); then removes the jobs'
    /// containers, and any container of this run that nobody learnt of.
    async fn remove_running(&self) {
        self.builds.stop_all().await;
        for id in self.live.drain() {
            remove(&self.docker, &id).await;
        }
        self.remove_this_runs_containers().await;
        self.engine.remove_failed_steps().await;
    }

    async fn sweep(&self, data_dir_label: &str) -> usize {
        let (proxies, networks) = egress::sweep(&self.docker).await;
        if proxies + networks > 0 {
            tracing::info!(proxies, networks, "removed the build proxies and networks of runs that are gone");
        }
        let filters: HashMap<String, Vec<String>> =
            [("label".to_string(), vec![format!("{DATA_DIR_LABEL}={data_dir_label}")])].into();
        let options = ListContainersOptionsBuilder::default().all(true).filters(&filters).build();
        let Ok(list) = self.docker.list_containers(Some(options)).await else { return 0 };
        let mut removed = 0;
        for container in list {
            let Some(id) = container.id else { continue };
            if !super::left_behind(&container.labels.unwrap_or_default()) {
                tracing::debug!(container = %id, "left alone: its run is alive (or on another host)");
                continue;
            }
            remove(&self.docker, &id).await;
            removed += 1;
        }
        removed
    }
}

/// Reads a running container's attached output to its end, keeping it within
/// bounds; returns what was kept and how many bytes were cut.
async fn read_output(
    mut stream: std::pin::Pin<
        Box<dyn futures::Stream<Item = Result<bollard::container::LogOutput, bollard::errors::Error>> + Send>,
    >,
    id: String,
    token: String,
) -> (String, u64) {
    let mut output = BoundedOutput::new(&token, OUTPUT_HEAD_BYTES, OUTPUT_TAIL_BYTES);
    while let Some(item) = stream.next().await {
        match item {
            Ok(chunk) => output.push(&chunk.into_bytes()),
            Err(error) => {
                tracing::warn!(container = %id, %error, "could not read the whole container output");
                break;
            }
        }
    }
    output.finish()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn build_progress_keeps_the_failing_steps_own_output_and_the_step_images() {
        let mut progress = BuildProgress::default();
        for chunk in [
            "Step 1/4 : FROM base\n",
            " ---> 8d92f636a46f\n",
            "Step 2/4 : RUN echo one\n",
            " ---> Running in 37234afebe80\n",
            "one\n",
            "Removing intermediate container 37234afebe80\n",
            " ---> bc5b1d86ce71\n",
            "Step 3/4 : RUN make\n",
            " ---> Running in d43698f19506\n",
            "building\n\u{1b}[91merror: the real cause\n\u{1b}[0m",
        ] {
            progress.read(chunk);
        }
        assert_eq!(progress.step_images, ["8d92f636a46f", "bc5b1d86ce71"]);
        assert_eq!(progress.running.as_deref(), Some("d43698f19506"), "the failing step's container");
        assert_eq!(progress.step_output, "building\nerror: the real cause\n");
        // A cached step names its image after `Using cache`.
        progress.read("Step 4/4 : RUN true\n ---> Using cache\n ---> 2e77d6ca7be2\n");
        assert_eq!(progress.step_images.last().map(String::as_str), Some("2e77d6ca7be2"));
        assert_eq!(progress.step_output, "");
    }
}
