//! The local Docker engine as a [`Backend`], through bollard: one container per job
//! from its image, the job's archive copied in before it starts (no host mounts), the
//! network off (`none`), every capability dropped, no new privileges, memory + swap,
//! CPU and process limits, the job's user, no environment from the host, and a wall
//! limit after which it is killed.
//!
//! Containers are always removed: on success explicitly, on errors and timeouts by
//! [`ContainerGuard`], on Ctrl-C by [`Backend::remove_running`] (the stage loop calls
//! it), and after a killed process by [`Backend::sweep`] at the next start. Every
//! container is labelled with the data dir and the run (process) that started it, so
//! a sweep removes only containers whose run is gone.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Read;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bollard::Docker;
use bollard::models::{ContainerCreateBody, HostConfig};
use bollard::query_parameters::{
    BuildImageOptionsBuilder, CreateContainerOptionsBuilder, CreateImageOptionsBuilder,
    DownloadFromContainerOptionsBuilder, ListContainersOptionsBuilder, LogsOptionsBuilder, PushImageOptionsBuilder,
    RemoveContainerOptionsBuilder, TagImageOptionsBuilder, UploadToContainerOptionsBuilder,
};
use futures::StreamExt;

use super::{
    Backend, BuildFailure, DATA_DIR_LABEL, INSTANCE_LABEL, ImageBuild, Job, JobOutput, Limits, RUN_LABEL, RunError,
};
use super::{SandboxError, archive};

/// The local Docker engine.
pub struct DockerBackend {
    docker: Docker,
    /// Every container this process started and has not removed yet.
    live: Containers,
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
        Ok(DockerBackend { docker, live: Containers::default() })
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
        self.docker.inspect_image(reference).await.ok().map(|image| image.id.unwrap_or_default())
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

    async fn build(&self, build: &ImageBuild, log: &mut String) -> Result<(), BuildFailure> {
        let labels: HashMap<String, String> = build.labels.clone().into_iter().collect();
        let mut options = BuildImageOptionsBuilder::default()
            .dockerfile("Dockerfile")
            .t(&build.tag)
            .rm(true)
            .forcerm(true)
            .labels(&labels);
        if build.network_off {
            options = options.networkmode("none");
        }
        let options = options.build();
        let outcome = tokio::time::timeout(build.timeout, async {
            let context = bollard::body_full(build.context.clone().into());
            let mut stream = self.docker.build_image(options, None, Some(context));
            while let Some(item) = stream.next().await {
                match item {
                    Ok(info) => {
                        if let Some(text) = info.stream {
                            log.push_str(&text);
                        }
                        if let Some(detail) = info.error_detail {
                            let message = detail.message.unwrap_or_else(|| "the build failed".to_string());
                            log.push_str(&message);
                            return Err(BuildFailure::Failed(message));
                        }
                    }
                    Err(error) => {
                        log.push_str(&error.to_string());
                        return Err(BuildFailure::Failed(error.to_string()));
                    }
                }
            }
            Ok(())
        })
        .await;
        outcome.unwrap_or(Err(BuildFailure::TimedOut))
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
        let engine_error = |action: &'static str| {
            let instance_id = instance_id.clone();
            move |error: bollard::errors::Error| RunError::Engine { action, instance_id, message: error.to_string() }
        };
        let payload = {
            let job = job.clone();
            tokio::task::spawn_blocking(move || archive::job_payload(&job))
                .await
                .map_err(|error| RunError::Source { instance_id: instance_id.clone(), message: error.to_string() })?
                .map_err(|message| RunError::Source { instance_id: instance_id.clone(), message })?
        };

        let labels: HashMap<String, String> = [
            (DATA_DIR_LABEL.to_string(), job.data_dir_label.clone()),
            (INSTANCE_LABEL.to_string(), job.instance_id.clone()),
            (RUN_LABEL.to_string(), crate::process::RunId::current().to_string()),
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
        let options = CreateContainerOptionsBuilder::default().name(&container_name(job)).build();
        let created = docker.create_container(Some(options), body).await.map_err(engine_error("create a container"))?;
        self.live.add(&created.id);
        let guard = ContainerGuard {
            docker: docker.clone(),
            id: created.id.clone(),
            containers: self.live.clone(),
            armed: true,
        };

        let upload = UploadToContainerOptionsBuilder::default().path("/").build();
        docker
            .upload_to_container(&created.id, Some(upload), bollard::body_full(payload.into()))
            .await
            .map_err(engine_error("copy the repository into the container"))?;
        let started = Instant::now();
        docker.start_container(&created.id, None).await.map_err(engine_error("start the container"))?;

        let wall_limit = limits.wall_limit(job.phases);
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
        Ok(JobOutput { log, reports, exit_code, timed_out, oom_killed, duration_secs })
    }

    async fn remove_running(&self) {
        for id in self.live.drain() {
            remove(&self.docker, &id).await;
        }
    }

    async fn sweep(&self, data_dir_label: &str) -> usize {
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
