//! Docker Swarm as a [`Backend`]: every job is a service of one task that is never
//! restarted, placed by Swarm's scheduler on a node by its limits; images come to the
//! nodes through a registry. The engine this process talks to (`DOCKER_HOST`) is the
//! builder and a manager of the swarm.
//!
//! Decision: the service is a `replicated-job` (one completion) on engines from 24 on,
//! and a `replicated` service of one replica with the restart condition `none` on
//! older ones. On 20.10 (Debian 12's `docker.io`), removing a `replicated-job` service
//! leaves its tasks and their stopped containers on the nodes for good (moby#42789,
//! moby#44312, fixed in Moby 24); a one-replica service that is never restarted runs
//! the job exactly once as well, and its removal takes its container with it.
//!
//! What goes where, and why:
//! - Images: environment and instance images are built on the builder (the local
//!   engine, through [`DockerBackend`]). A job's inputs (its `/testbed` and files)
//!   cannot be copied into a service's container, and host mounts are ruled out, so
//!   they become one more layer: a container of the job's image is created (never
//!   started, no network), the job's archive copied in, and the container committed
//!   as `<registry>/swe-harvest/job:<key>`, where the key is the sha256 of the image
//!   id and the archive (content-addressed: a repeated run finds it in the registry
//!   and nothing is committed or pushed again). Pushing it carries the environment's
//!   layers too, once: the registry keeps layers by digest. Nodes pull from the
//!   registry only. The local tag is removed after the push. Jobs of the same key
//!   (the runs of one task) take turns to make it: the first commits and pushes, the
//!   others then find it in the registry (made at once, one job removed the tag that
//!   another was about to push: "tag does not exist").
//! - Isolation: memory, CPU and process limits (`Resources.Limits`), every capability
//!   dropped, no new privileges where the engine knows the setting, an init process,
//!   `/tmp` a tmpfs, the job's user, file-size and open-file ulimits, no host mounts,
//!   no secrets or configs, no environment from the host. A service cannot use the
//!   `none` network, so each job gets an internal overlay network of its own
//!   (`--internal`: no gateway, no way out; own: jobs cannot reach each other), removed
//!   with the job. Endpoint mode `dnsrr`: no virtual IP (and no IPVS) for a job.
//! - Output: the service's logs (the nodes' `json-file` driver), read once the task
//!   has ended, into [`BoundedOutput`]. The script's stderr joins its stdout, so the
//!   order of lines is the order they were written. Reports (`/swe-harvest/out/*.xml`,
//!   `*.json`) come back the same way: an `EXIT` trap added to the script prints each
//!   file hex-encoded on marker lines of the run's token (`report <name> <hex>`), which
//!   are taken out of the log here.
//! - Time: the wall limit counts from the task's start (not from the wait for a node
//!   or an image pull). Past it, the service is removed and the job reported as timed
//!   out. A job that no node takes within [`PLACEMENT_TIMEOUT`] is an error that says
//!   which limits no node could meet.
//! - A node that leaves: a task whose node is down (or gone), or that ended without an
//!   exit code (shut down, orphaned, rejected), is lost: its service is removed and the
//!   job placed again, up to [`PLACEMENTS`] times. Output of a lost task is never read,
//!   so nothing is labelled from partial output.
//! - Clean-up: services and networks carry the data dir's and the run's labels; every
//!   job removes its own (in the background, once its log is read: the node's removal
//!   of the container takes seconds that the next job need not wait for);
//!   [`Backend::remove_running`] waits for those removals and removes the jobs in flight,
//!   then the job images the run used, from the registry and every node
//!   ([`super::job_images`]); [`Backend::sweep`] removes those of runs that are gone.
//!
//! `oom_killed`: a task's status has no such field (Docker 20.10: the state `failed`, the
//! error `task: non-zero exit (137)`; only the container on its node knows, and the
//! manager cannot inspect a worker's containers). So the job reads it itself: its exit
//! trap prints the container's count of OOM kills (cgroup v2's `memory.events`, v1's
//! `memory.oom_control`), which is what Docker's `OOMKilled` reports on the Docker
//! backend (any process of the container killed, whatever the exit code). Only when
//! that line is missing (the script's own shell was killed before its trap ran) is it
//! inferred: 137 and the script did not get to its end.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bollard::Docker;
use bollard::auth::DockerCredentials;
use bollard::models::{
    ContainerCreateBody, EndpointSpec, EndpointSpecModeEnum, HostConfig, Limit, Mount, MountTmpfsOptions, MountType,
    NetworkAttachmentConfig, NetworkCreateRequest, Node, NodeSpecAvailabilityEnum, NodeState, ServiceSpec,
    ServiceSpecMode, ServiceSpecModeReplicatedJob, TaskSpec, TaskSpecContainerSpec, TaskSpecContainerSpecPrivileges,
    TaskSpecLogDriver, TaskSpecPlacement, TaskSpecResources, TaskSpecRestartPolicy, TaskSpecRestartPolicyConditionEnum,
    TaskState,
};
use bollard::query_parameters::{
    CommitContainerOptionsBuilder, CreateContainerOptionsBuilder, ListNetworksOptionsBuilder, ListNodesOptions,
    ListServicesOptionsBuilder, ListTasksOptionsBuilder, LogsOptionsBuilder, PushImageOptionsBuilder,
    RemoveContainerOptionsBuilder, RemoveImageOptionsBuilder, UploadToContainerOptionsBuilder,
};
use futures::StreamExt;
use sha2::{Digest, Sha256};

use super::docker::{DockerBackend, OUTPUT_HEAD_BYTES, OUTPUT_TAIL_BYTES};
use super::job_images::{Collected, JOB_IMAGE_LABEL, JOB_REPOSITORY, JobImages, Selection};
use super::output::BoundedOutput;
use super::script::MARKER_PREFIX;
use super::{
    Backend, BuildFailure, DATA_DIR_LABEL, ImageBuild, Job, JobOutput, Limits, RUN_LABEL, RunError, SandboxError,
    archive, job_ulimits,
};

/// The time limit of one ordinary engine call.
const CALL_TIMEOUT: Duration = Duration::from_secs(120);
/// Commit and push of a job's image (a large `/testbed`, the first push of an environment).
const PUSH_TIMEOUT: Duration = Duration::from_secs(1800);
/// How long a job may wait for a node (and its image pull) before it is an error.
pub const PLACEMENT_TIMEOUT: Duration = Duration::from_secs(900);
/// How many times a job is placed when the nodes it ran on are lost.
pub const PLACEMENTS: u32 = 3;
/// How often the task's state is read.
const POLL: Duration = Duration::from_millis(500);
/// Hex characters of a report per marker line (well under the log driver's 16 KiB line).
const REPORT_CHUNK: usize = 8000;

/// Where the swarm backend pushes and what it asks of the nodes.
#[derive(Debug, Clone, Default)]
pub struct SwarmOptions {
    /// `validate.registry`: `host:port[/path]`, reachable under this name by the
    /// builder and by every node.
    pub registry: String,
    /// Swarm placement constraints for every job (`validate.swarm_constraints`), e.g.
    /// `node.role==worker` to keep untrusted code off the managers.
    pub constraints: Vec<String>,
}

/// A swarm reached through a manager, with the local engine as builder.
pub struct SwarmBackend {
    builder: DockerBackend,
    docker: Docker,
    options: SwarmOptions,
    credentials: Option<DockerCredentials>,
    /// Jobs as `replicated-job` services (engines from 24 on, see the module doc).
    job_mode: bool,
    /// Services and networks this process made and has not removed yet.
    live: Arc<Mutex<HashSet<(String, String)>>>,
    /// One turn per job image being made, by reference: its makers go one at a time
    /// (see [`SwarmBackend::job_image`]).
    making: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    /// The removals of finished jobs' services and networks, under way in the
    /// background (a node takes seconds to remove a container; the next job need not
    /// wait for it); [`Backend::remove_running`] waits for them.
    cleanups: Mutex<Vec<tokio::task::JoinHandle<()>>>,
    /// The job images this process's jobs ran on, with their data dir's label: removed
    /// from the registry and the nodes when the run ends ([`job_images`](super::job_images)).
    used: Mutex<BTreeMap<String, String>>,
}

/// What the engine refused (or did not answer) while doing `action` for `job`.
fn engine_error(job: &Job, action: &'static str, message: String) -> RunError {
    RunError::Engine { action, instance_id: job.instance_id.clone(), message }
}

/// The registry's credentials from the environment (never from a file of ours):
/// both of [`crate::env_vars::SWE_HARVEST_REGISTRY_USERNAME`] and `..._PASSWORD`, or none.
fn credentials_from_env(registry: &str) -> Option<DockerCredentials> {
    let username = std::env::var(crate::env_vars::SWE_HARVEST_REGISTRY_USERNAME).ok()?;
    let password = std::env::var(crate::env_vars::SWE_HARVEST_REGISTRY_PASSWORD).ok()?;
    let server = registry.split('/').next().unwrap_or(registry).to_string();
    Some(DockerCredentials {
        username: Some(username),
        password: Some(password),
        serveraddress: Some(server),
        ..Default::default()
    })
}

impl SwarmBackend {
    /// Connects to the local engine and checks that it is a manager of an active swarm.
    pub async fn connect(options: SwarmOptions) -> Result<SwarmBackend, SandboxError> {
        if options.registry.trim().is_empty() {
            return Err(SandboxError::Swarm {
                message: "the swarm backend needs a registry that every node can pull from: set `validate.registry` \
                          (scripts/cluster.sh up N prints a local one)"
                    .into(),
            });
        }
        let builder = DockerBackend::connect().await?;
        let docker = builder.engine().clone();
        let info =
            docker.info().await.map_err(|error| SandboxError::EngineUnavailable { message: error.to_string() })?;
        let manager = info.swarm.as_ref().and_then(|swarm| swarm.control_available).unwrap_or(false);
        if !manager {
            return Err(SandboxError::Swarm {
                message: "the Docker engine is not a manager of a swarm; point DOCKER_HOST at a manager, or make a \
                          test swarm with scripts/cluster.sh up N"
                    .into(),
            });
        }
        let credentials = credentials_from_env(&options.registry);
        let major = info.server_version.as_deref().and_then(|version| version.split('.').next()?.parse::<u32>().ok());
        let job_mode = major.is_some_and(|major| major >= 24);
        Ok(SwarmBackend {
            builder,
            docker,
            options,
            credentials,
            job_mode,
            live: Default::default(),
            making: Default::default(),
            cleanups: Default::default(),
            used: Default::default(),
        })
    }

    /// The reference of a job's image in the registry: content-addressed by the
    /// job's image id and its archive.
    fn job_reference(&self, image_id: &str, payload: &[u8]) -> String {
        let mut hasher = Sha256::new();
        hasher.update(image_id.as_bytes());
        hasher.update([0]);
        hasher.update(payload);
        let key = hex::encode(hasher.finalize());
        format!("{}/{JOB_REPOSITORY}:{}", self.options.registry.trim_end_matches('/'), &key[..40])
    }

    async fn in_registry(&self, reference: &str) -> bool {
        let inspect = self.docker.inspect_registry_image(reference, self.credentials.clone());
        matches!(tokio::time::timeout(CALL_TIMEOUT, inspect).await, Ok(Ok(_)))
    }

    /// Makes the job's image (its image + its archive as one more layer) and pushes
    /// it, unless the registry has it already; returns its reference. Jobs of the
    /// same reference take turns: the local tag they would commit, push and remove
    /// is one tag, so one job's removal after its push must not come between
    /// another's commit and push.
    async fn job_image(&self, job: &Job, payload: Vec<u8>) -> Result<String, RunError> {
        let image = tokio::time::timeout(CALL_TIMEOUT, self.docker.inspect_image(&job.image))
            .await
            .map_err(|_| engine_error(job, "inspect the job's image", "no answer".into()))?
            .map_err(|error| engine_error(job, "inspect the job's image", error.to_string()))?;
        let reference = self.job_reference(image.id.as_deref().unwrap_or(&job.image), &payload);
        let turn = self.making.lock().expect("not poisoned").entry(reference.clone()).or_default().clone();
        let made = {
            let _turn = turn.lock().await;
            self.make_job_image(job, &reference, payload).await
        };
        let mut making = self.making.lock().expect("not poisoned");
        // Nobody else waits for this reference (the map's and this job's handles only).
        if Arc::strong_count(&turn) <= 2 {
            making.remove(&reference);
        }
        made?;
        self.used.lock().expect("not poisoned").insert(reference.clone(), job.data_dir_label.clone());
        Ok(reference)
    }

    /// Removes the selected job images from the registry, the nodes and the builder
    /// (`dry_run`: says which it would); the clean-up's service carries `data_dir_label`.
    pub async fn remove_job_images(&self, selection: &Selection, dry_run: bool, data_dir_label: &str) -> Collected {
        let images = JobImages {
            docker: &self.docker,
            registry: &self.options.registry,
            constraints: &self.options.constraints,
            credentials: self.credentials.clone(),
            labels: super::job_images::cleaner_labels(data_dir_label),
        };
        images.remove(selection, dry_run).await
    }

    /// [`SwarmBackend::job_image`]'s work on its turn: nothing when the registry has
    /// `reference`, else commit and push.
    async fn make_job_image(&self, job: &Job, reference: &str, payload: Vec<u8>) -> Result<(), RunError> {
        let engine_error = |action: &'static str, message: String| engine_error(job, action, message);
        if self.in_registry(reference).await {
            tracing::debug!(instance_id = %job.instance_id, image = %reference, "the job's image is in the registry");
            return Ok(());
        }
        let (repository, tag) = reference.rsplit_once(':').expect("the reference has a tag");
        let labels: HashMap<String, String> = [
            (DATA_DIR_LABEL.to_string(), job.data_dir_label.clone()),
            (RUN_LABEL.to_string(), crate::process::RunId::current().to_string()),
        ]
        .into();
        let body = ContainerCreateBody {
            image: Some(job.image.clone()),
            cmd: Some(vec!["true".into()]),
            network_disabled: Some(true),
            labels: Some(labels),
            host_config: Some(HostConfig { network_mode: Some("none".into()), ..Default::default() }),
            ..Default::default()
        };
        let name = format!("swh-commit-{}", &tag[..16]);
        let options = CreateContainerOptionsBuilder::default().name(&format!("{name}-{}", super::script::new_token()));
        let created = tokio::time::timeout(CALL_TIMEOUT, self.docker.create_container(Some(options.build()), body))
            .await
            .map_err(|_| engine_error("create the job's image", "no answer".into()))?
            .map_err(|error| engine_error("create the job's image", error.to_string()))?;
        let committed = async {
            let upload = UploadToContainerOptionsBuilder::default().path("/").build();
            self.docker
                .upload_to_container(&created.id, Some(upload), bollard::body_full(payload.into()))
                .await
                .map_err(|error| engine_error("copy the job's files into its image", error.to_string()))?;
            // Labelled, so that the nodes' caches of job images can be pruned by label.
            let commit = CommitContainerOptionsBuilder::default()
                .container(&created.id)
                .repo(repository)
                .tag(tag)
                .changes(&format!("LABEL {JOB_IMAGE_LABEL}=true"));
            self.docker
                .commit_container(commit.build(), bollard::models::ContainerConfig::default())
                .await
                .map_err(|error| engine_error("commit the job's image", error.to_string()))?;
            Ok::<(), RunError>(())
        };
        let committed = tokio::time::timeout(PUSH_TIMEOUT, committed).await;
        let remove = RemoveContainerOptionsBuilder::default().force(true).build();
        let _ = tokio::time::timeout(CALL_TIMEOUT, self.docker.remove_container(&created.id, Some(remove))).await;
        committed.map_err(|_| engine_error("commit the job's image", "no answer".into()))??;
        let pushed = tokio::time::timeout(PUSH_TIMEOUT, push(&self.docker, repository, tag, self.credentials.clone()))
            .await
            .unwrap_or_else(|_| Err("the push did not end in time".into()));
        // The builder keeps no job images: the registry has them.
        let options = RemoveImageOptionsBuilder::default().noprune(false).build();
        let _ = tokio::time::timeout(CALL_TIMEOUT, self.docker.remove_image(reference, Some(options), None)).await;
        pushed.map_err(|message| engine_error("push the job's image to the registry", message))
    }

    /// Places the job once: a network and a service, then waits for the task's end.
    async fn place(&self, job: &Job, image: &str, limits: Limits) -> Result<Placement, RunError> {
        let engine_error = |action: &'static str, message: String| engine_error(job, action, message);
        let suffix = super::script::new_token();
        let name = service_name(&job.instance_id, &suffix[..8]);
        let labels = job.labels();
        let network = NetworkCreateRequest {
            name: name.clone(),
            driver: Some("overlay".into()),
            internal: Some(true),
            attachable: Some(false),
            labels: Some(labels.clone()),
            ..Default::default()
        };
        let network = tokio::time::timeout(CALL_TIMEOUT, self.docker.create_network(network))
            .await
            .map_err(|_| engine_error("create the job's network", "no answer".into()))?
            .map_err(|error| engine_error("create the job's network", error.to_string()))?;
        let mut spec = service_spec(job, image, limits, &name, &network.id, labels, &self.options.constraints);
        if !self.job_mode {
            spec.mode = Some(ServiceSpecMode {
                replicated: Some(bollard::models::ServiceSpecModeReplicated { replicas: Some(1) }),
                ..Default::default()
            });
        }
        let created = tokio::time::timeout(CALL_TIMEOUT, self.docker.create_service(spec, self.credentials.clone()))
            .await
            .map_err(|_| "no answer".to_string())
            .and_then(|created| created.map_err(|error| error.to_string()));
        let service = match created {
            Ok(created) => created.id.unwrap_or_else(|| name.clone()),
            Err(message) => {
                remove_network(&self.docker, &network.id).await;
                return Err(engine_error("create the job's service", message));
            }
        };
        self.live.lock().expect("not poisoned").insert((service.clone(), network.id.clone()));
        let outcome = self.watch(job, &service, limits).await;
        let outcome = match outcome {
            Ok(Watched::Ended { exit_code, duration_secs }) => {
                let (log, cut) = self.read_logs(&service, &job.token).await;
                Ok(Placement::Ended { log, cut, exit_code, timed_out: false, duration_secs })
            }
            Ok(Watched::TimedOut { duration_secs }) => {
                let (log, cut) = self.read_logs(&service, &job.token).await;
                Ok(Placement::Ended { log, cut, exit_code: None, timed_out: true, duration_secs })
            }
            Ok(Watched::Lost { why }) => Ok(Placement::Lost { why }),
            Err(error) => Err(error),
        };
        let (docker, live) = (self.docker.clone(), self.live.clone());
        let cleanup = tokio::spawn(async move {
            remove_service(&docker, &service).await;
            remove_network(&docker, &network.id).await;
            live.lock().expect("not poisoned").remove(&(service, network.id));
        });
        let mut cleanups = self.cleanups.lock().expect("not poisoned");
        cleanups.retain(|cleanup| !cleanup.is_finished());
        cleanups.push(cleanup);
        outcome
    }

    /// Waits for the service's task to end, to run out of time, or to be lost.
    async fn watch(&self, job: &Job, service: &str, limits: Limits) -> Result<Watched, RunError> {
        let wall_limit = limits.wall_limit(job.phases);
        let created = Instant::now();
        let mut started: Option<Instant> = None;
        let filters: HashMap<String, Vec<String>> = [("service".to_string(), vec![service.to_string()])].into();
        loop {
            tokio::time::sleep(POLL).await;
            let options = ListTasksOptionsBuilder::default().filters(&filters).build();
            let tasks = match tokio::time::timeout(CALL_TIMEOUT, self.docker.list_tasks(Some(options))).await {
                Ok(Ok(tasks)) => tasks,
                Ok(Err(error)) => {
                    tracing::debug!(%service, %error, "could not list the job's tasks; trying again");
                    continue;
                }
                Err(_) => continue,
            };
            // One task per service (one completion, no restarts); the newest if more.
            let Some(task) = tasks.into_iter().max_by_key(|task| task.created_at.clone().map(|at| at.to_string()))
            else {
                if created.elapsed() > PLACEMENT_TIMEOUT {
                    return Ok(Watched::Lost { why: "the swarm made no task for the job".into() });
                }
                continue;
            };
            let status = task.status.clone().unwrap_or_default();
            let state = status.state.unwrap_or(TaskState::NEW);
            let exit_code = status.container_status.as_ref().and_then(|container| container.exit_code);
            match state {
                TaskState::RUNNING => {
                    started.get_or_insert_with(Instant::now);
                }
                TaskState::COMPLETE | TaskState::FAILED if exit_code.is_some() || state == TaskState::COMPLETE => {
                    let duration_secs = started.map(|at| at.elapsed().as_secs_f64()).unwrap_or_default();
                    return Ok(Watched::Ended { exit_code: Some(exit_code.unwrap_or(0)), duration_secs });
                }
                TaskState::FAILED
                | TaskState::REJECTED
                | TaskState::SHUTDOWN
                | TaskState::ORPHANED
                | TaskState::REMOVE => {
                    let why = status.err.or(status.message).unwrap_or_else(|| state.to_string());
                    return Ok(Watched::Lost { why: format!("the task ended as {state} without an exit code: {why}") });
                }
                _ => {}
            }
            if let Some(node) = &task.node_id {
                if let Some(why) = self.node_lost(node).await {
                    return Ok(Watched::Lost { why });
                }
            }
            match started {
                Some(at) if at.elapsed() > wall_limit => {
                    tracing::warn!(instance_id = %job.instance_id, seconds = wall_limit.as_secs(), "the job hit its time limit; removing its service");
                    return Ok(Watched::TimedOut { duration_secs: at.elapsed().as_secs_f64() });
                }
                None if created.elapsed() > PLACEMENT_TIMEOUT => {
                    return Err(RunError::Engine {
                        action: "place the job on a node",
                        instance_id: job.instance_id.clone(),
                        message: format!(
                            "no node started it within {}s (state {state}: {}); check that a node has {} bytes of memory and {} CPUs free and can pull from {}",
                            PLACEMENT_TIMEOUT.as_secs(),
                            status.err.or(status.message).unwrap_or_default(),
                            limits.memory_bytes,
                            limits.nano_cpus as f64 / 1e9,
                            self.options.registry
                        ),
                    });
                }
                _ => {}
            }
        }
    }

    /// Why the node is lost (down, gone), or `None` while it is there.
    async fn node_lost(&self, node: &str) -> Option<String> {
        match tokio::time::timeout(CALL_TIMEOUT, self.docker.inspect_node(node)).await {
            Ok(Ok(inspected)) => {
                let state = inspected.status.and_then(|status| status.state);
                match state {
                    Some(NodeState::DOWN) | Some(NodeState::DISCONNECTED) => {
                        Some(format!("node {node} is {}", state.map(|state| state.to_string()).unwrap_or_default()))
                    }
                    _ => None,
                }
            }
            Ok(Err(bollard::errors::Error::DockerResponseServerError { status_code: 404, .. })) => {
                Some(format!("node {node} left the swarm"))
            }
            _ => None,
        }
    }

    /// The service's whole log, within bounds.
    async fn read_logs(&self, service: &str, token: &str) -> (String, u64) {
        let options = LogsOptionsBuilder::default().stdout(true).stderr(true).follow(false).build();
        let mut output = BoundedOutput::new(token, OUTPUT_HEAD_BYTES, OUTPUT_TAIL_BYTES);
        let read = async {
            let mut stream = self.docker.service_logs(service, Some(options));
            while let Some(item) = stream.next().await {
                match item {
                    Ok(chunk) => output.push(&chunk.into_bytes()),
                    Err(error) => {
                        tracing::warn!(%service, %error, "could not read the whole log of the job");
                        break;
                    }
                }
            }
        };
        if tokio::time::timeout(PUSH_TIMEOUT, read).await.is_err() {
            tracing::warn!(%service, "the job's log did not end in time");
        }
        output.finish()
    }
}

enum Watched {
    Ended { exit_code: Option<i64>, duration_secs: f64 },
    TimedOut { duration_secs: f64 },
    Lost { why: String },
}

enum Placement {
    Ended { log: String, cut: u64, exit_code: Option<i64>, timed_out: bool, duration_secs: f64 },
    Lost { why: String },
}

/// Whether the swarm places jobs on `node`: ready, active, and allowed by every
/// constraint of the forms `node.role`, `node.hostname`, `node.id` and
/// `node.labels.<key>` with `==` or `!=`. A constraint of another form (engine labels,
/// platform) is not judged here, and the node counts: at worst one job more waits.
fn takes_jobs(node: &Node, constraints: &[String]) -> bool {
    let ready = node.status.as_ref().and_then(|status| status.state) == Some(NodeState::READY);
    let spec = node.spec.clone().unwrap_or_default();
    let active = spec.availability.is_none_or(|availability| availability == NodeSpecAvailabilityEnum::ACTIVE);
    let value_of = |key: &str| -> Option<String> {
        match key {
            "node.role" => spec.role.map(|role| role.to_string()),
            "node.hostname" => node.description.as_ref().and_then(|description| description.hostname.clone()),
            "node.id" => node.id.clone(),
            _ => key
                .strip_prefix("node.labels.")
                .map(|label| spec.labels.as_ref().and_then(|labels| labels.get(label)).cloned().unwrap_or_default()),
        }
    };
    let allowed = constraints.iter().all(|constraint| {
        let (key, wanted, equal) = match constraint.split_once("!=") {
            Some((key, value)) => (key.trim(), value.trim(), false),
            None => match constraint.split_once("==") {
                Some((key, value)) => (key.trim(), value.trim(), true),
                None => return true,
            },
        };
        value_of(key).is_none_or(|value| (value == wanted) == equal)
    });
    ready && active && allowed
}

/// How many jobs of `limits` a node holds at once: by its CPUs and by its memory.
fn jobs_that_fit(node: &Node, limits: Limits) -> usize {
    let resources = node.description.as_ref().and_then(|description| description.resources.clone()).unwrap_or_default();
    let by_cpus = resources.nano_cpus.unwrap_or(0) / limits.nano_cpus.max(1);
    let by_memory = resources.memory_bytes.unwrap_or(0) / limits.memory_bytes.max(1);
    usize::try_from(by_cpus.min(by_memory)).unwrap_or(0)
}

/// A service name: `swh-<instance, lower-case, [a-z0-9-]>-<suffix>`, at most 63 characters.
fn service_name(instance_id: &str, suffix: &str) -> String {
    let plain: String =
        instance_id.to_lowercase().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
    let plain = plain.trim_matches('-');
    let keep = 63 - "swh--".len() - suffix.len();
    let plain: String = plain.chars().take(keep).collect();
    format!("swh-{}-{suffix}", plain.trim_end_matches('-'))
}

/// The service of one job: see the module doc for each setting.
fn service_spec(
    job: &Job,
    image: &str,
    limits: Limits,
    name: &str,
    network: &str,
    labels: HashMap<String, String>,
    constraints: &[String],
) -> ServiceSpec {
    let container = TaskSpecContainerSpec {
        image: Some(image.to_string()),
        labels: Some(labels.clone()),
        command: Some(vec!["bash".into(), "/swe-harvest/run.sh".into(), job.token.clone()]),
        env: Some(job.env.clone()),
        dir: Some("/testbed".into()),
        hostname: Some(super::JOB_HOSTNAME.into()),
        hosts: Some(vec![format!("127.0.0.1 {}", super::JOB_HOSTNAME)]),
        user: Some(format!("{}:{}", job.user.uid, job.user.gid)),
        privileges: Some(TaskSpecContainerSpecPrivileges { no_new_privileges: Some(true), ..Default::default() }),
        mounts: Some(vec![Mount {
            target: Some("/tmp".into()),
            typ: Some(MountType::TMPFS),
            tmpfs_options: Some(MountTmpfsOptions { size_bytes: Some(limits.memory_bytes), ..Default::default() }),
            ..Default::default()
        }]),
        init: Some(true),
        capability_drop: Some(vec!["ALL".into()]),
        capability_add: Some(job.user.kept_capabilities()),
        ulimits: Some(job_ulimits(&limits)),
        secrets: None,
        configs: None,
        ..Default::default()
    };
    let task = TaskSpec {
        container_spec: Some(container),
        resources: Some(TaskSpecResources {
            limits: Some(Limit {
                nano_cpus: Some(limits.nano_cpus),
                memory_bytes: Some(limits.memory_bytes),
                pids: Some(limits.pids_limit),
            }),
            // Reserved as much as limited: Swarm places a job only where it fits.
            reservations: Some(bollard::models::ResourceObject {
                nano_cpus: Some(limits.nano_cpus),
                memory_bytes: Some(limits.memory_bytes),
                ..Default::default()
            }),
            swap_bytes: Some(0),
            ..Default::default()
        }),
        restart_policy: Some(TaskSpecRestartPolicy {
            condition: Some(TaskSpecRestartPolicyConditionEnum::NONE),
            max_attempts: Some(0),
            ..Default::default()
        }),
        placement: (!constraints.is_empty())
            .then(|| TaskSpecPlacement { constraints: Some(constraints.to_vec()), ..Default::default() }),
        networks: Some(vec![NetworkAttachmentConfig { target: Some(network.to_string()), ..Default::default() }]),
        log_driver: Some(TaskSpecLogDriver {
            name: Some("json-file".into()),
            options: Some(
                [("max-size".to_string(), "64m".to_string()), ("max-file".to_string(), "2".to_string())].into(),
            ),
        }),
        ..Default::default()
    };
    ServiceSpec {
        name: Some(name.to_string()),
        labels: Some(labels),
        task_template: Some(task),
        mode: Some(ServiceSpecMode {
            replicated_job: Some(ServiceSpecModeReplicatedJob { max_concurrent: Some(1), total_completions: Some(1) }),
            ..Default::default()
        }),
        endpoint_spec: Some(EndpointSpec { mode: Some(EndpointSpecModeEnum::DNSRR), ..Default::default() }),
        ..Default::default()
    }
}

/// The job's script with an `EXIT` trap that prints its reports on marker lines.
fn with_report_trap(script: &str) -> String {
    let trap = format!(
        r#"swh_reports() {{ for f in /swe-harvest/out/*.xml /swe-harvest/out/*.json; do [ -f "$f" ] || continue; od -An -v -tx1 "$f" | tr -d ' \n' | fold -w {REPORT_CHUNK} | while read -r chunk; do printf '\n{MARKER_PREFIX} %s report %s %s\n' "$token" "${{f##*/}}" "$chunk"; done; done; }}
swh_oom_kills() {{ n=$(sed -n 's/^oom_kill //p' /sys/fs/cgroup/memory.events /sys/fs/cgroup/memory/memory.oom_control 2>/dev/null | head -n 1); printf '\n{MARKER_PREFIX} %s oom_kill %s\n' "$token" "${{n:-unknown}}"; }}
exec 2>&1
trap 'swh_reports; swh_oom_kills' EXIT
"#
    );
    // After the preamble's `token="$1"`, so that the trap knows it.
    match script.find("token=\"$1\"\n") {
        Some(at) => {
            let end = at + "token=\"$1\"\n".len();
            format!("{}{trap}{}", &script[..end], &script[end..])
        }
        None => format!("token=\"$1\"\n{trap}{script}"),
    }
}

/// Takes the OOM-kill count line (of the exit trap) out of a log: the log without it,
/// and the count when the trap printed one it could read.
fn take_oom_kills(log: &str, token: &str) -> (String, Option<u64>) {
    let prefix = format!("{MARKER_PREFIX} {token} oom_kill ");
    let mut kills = None;
    let mut kept = String::with_capacity(log.len());
    for line in log.split_inclusive('\n') {
        match line.trim_end().strip_prefix(&prefix) {
            Some(count) => kills = count.parse().ok().or(kills),
            None => kept.push_str(line),
        }
    }
    (kept, kills)
}

/// Takes the report lines out of a log: the log without them, and the reports by name.
fn take_reports(log: &str, token: &str) -> (String, BTreeMap<String, String>) {
    let prefix = format!("{MARKER_PREFIX} {token} report ");
    let mut kept = String::with_capacity(log.len());
    let mut hex_by_name: BTreeMap<String, String> = BTreeMap::new();
    for line in log.split_inclusive('\n') {
        if let Some(rest) = line.trim_end().strip_prefix(&prefix) {
            if let Some((name, chunk)) = rest.split_once(' ') {
                hex_by_name.entry(name.to_string()).or_default().push_str(chunk);
                continue;
            }
        }
        kept.push_str(line);
    }
    // Each report line is printed after a newline (as markers are: output without a
    // final newline cannot swallow it); those blank lines stay at the log's end.
    let reports = hex_by_name
        .into_iter()
        .filter_map(|(name, hex)| {
            let bytes = hex::decode(hex).ok()?;
            Some((name, String::from_utf8_lossy(&bytes).into_owned()))
        })
        .collect();
    (kept, reports)
}

pub(super) async fn push(
    docker: &Docker,
    repository: &str,
    tag: &str,
    credentials: Option<DockerCredentials>,
) -> Result<(), String> {
    let options = PushImageOptionsBuilder::default().tag(tag).build();
    let mut stream = docker.push_image(repository, Some(options), credentials);
    while let Some(item) = stream.next().await {
        let info = item.map_err(|error| error.to_string())?;
        if let Some(detail) = info.error_detail {
            return Err(detail.message.unwrap_or_default());
        }
    }
    Ok(())
}

/// Removes a job's service and waits (a while) until its task is gone, that is until
/// the node removed its container; a node that is down keeps it until it comes back
/// (its engine then removes it) or leaves.
pub(super) async fn remove_service(docker: &Docker, service: &str) {
    match tokio::time::timeout(CALL_TIMEOUT, docker.delete_service(service)).await {
        Ok(Ok(())) | Ok(Err(bollard::errors::Error::DockerResponseServerError { status_code: 404, .. })) => {}
        Ok(Err(error)) => {
            tracing::warn!(%service, %error, "could not remove a job's service");
            return;
        }
        Err(_) => {
            tracing::warn!(%service, "the engine did not remove a job's service in time");
            return;
        }
    }
    // The engine refuses a `service` filter naming a removed service: all tasks, then.
    for _ in 0..60 {
        match tokio::time::timeout(CALL_TIMEOUT, docker.list_tasks(None)).await {
            Ok(Ok(tasks)) if !tasks.iter().any(|task| task.service_id.as_deref() == Some(service)) => return,
            _ => tokio::time::sleep(POLL).await,
        }
    }
    tracing::debug!(%service, "a removed job's task is still there after 30s (its node is away)");
}

/// Removes a job's network; the engine refuses while the task's endpoint is still
/// being taken down, so it is asked again for a while.
async fn remove_network(docker: &Docker, network: &str) {
    for _ in 0..60 {
        match tokio::time::timeout(CALL_TIMEOUT, docker.remove_network(network)).await {
            Ok(Ok(())) | Ok(Err(bollard::errors::Error::DockerResponseServerError { status_code: 404, .. })) => {
                return;
            }
            _ => tokio::time::sleep(Duration::from_millis(500)).await,
        }
    }
    tracing::warn!(%network, "a job's network is still in use after 30s; the next sweep removes it");
}

#[async_trait::async_trait]
impl Backend for SwarmBackend {
    fn name(&self) -> &'static str {
        "swarm"
    }

    async fn image_id(&self, reference: &str) -> Option<String> {
        self.builder.image_id(reference).await
    }

    async fn pull(&self, reference: &str) -> bool {
        self.builder.pull(reference).await
    }

    async fn build(&self, build: &ImageBuild, log: &mut String) -> Result<(), BuildFailure> {
        self.builder.build(build, log).await
    }

    async fn push(&self, tag: &str, registry: &str) -> Result<String, String> {
        self.builder.push(tag, registry).await
    }

    /// The jobs that fit on the ready, active nodes that the placement constraints
    /// allow, each node by its CPUs and its memory; at least one.
    async fn capacity(&self, limits: Limits) -> Option<usize> {
        let nodes =
            tokio::time::timeout(CALL_TIMEOUT, self.docker.list_nodes(None::<ListNodesOptions>)).await.ok()?.ok()?;
        let jobs: usize = nodes
            .iter()
            .filter(|node| takes_jobs(node, &self.options.constraints))
            .map(|node| jobs_that_fit(node, limits))
            .sum();
        Some(jobs.max(1))
    }

    async fn run(&self, job: &Job, limits: Limits) -> Result<JobOutput, RunError> {
        let instance_id = job.instance_id.clone();
        let mut traced = job.clone();
        traced.script = with_report_trap(&job.script);
        let payload = tokio::task::spawn_blocking(move || archive::job_payload(&traced))
            .await
            .map_err(|error| RunError::Source { instance_id: instance_id.clone(), message: error.to_string() })?
            .map_err(|message| RunError::Source { instance_id: instance_id.clone(), message })?;
        let image = self.job_image(job, payload).await?;
        let mut lost = Vec::new();
        for placement in 1..=PLACEMENTS {
            match self.place(job, &image, limits).await? {
                Placement::Ended { log, cut, exit_code, timed_out, duration_secs } => {
                    let (log, reports) = take_reports(&log, &job.token);
                    let (log, oom_kills) = take_oom_kills(&log, &job.token);
                    if cut > 0 {
                        tracing::warn!(instance_id = %job.instance_id, cut_bytes = cut, "the job printed more than is kept of each step; the middle of the longest steps was cut");
                    }
                    let finished = log.contains(&format!("{MARKER_PREFIX} {} ", job.token));
                    let oom_killed = !timed_out
                        && match oom_kills {
                            Some(kills) => kills > 0,
                            None => exit_code == Some(137) && !finished,
                        };
                    return Ok(JobOutput {
                        log,
                        reports,
                        exit_code,
                        timed_out,
                        oom_killed,
                        duration_secs,
                        output_cut_bytes: cut,
                    });
                }
                Placement::Lost { why } => {
                    tracing::warn!(instance_id = %job.instance_id, placement, %why, "the job's node was lost; placing it again");
                    lost.push(why);
                }
            }
        }
        Err(RunError::Engine {
            action: "run the job on the swarm",
            instance_id: job.instance_id.clone(),
            message: format!("lost {PLACEMENTS} times: {}", lost.join("; ")),
        })
    }

    async fn remove_running(&self) {
        let cleanups: Vec<_> = std::mem::take(&mut *self.cleanups.lock().expect("not poisoned"));
        for cleanup in cleanups {
            let _ = cleanup.await;
        }
        let live: Vec<(String, String)> = self.live.lock().expect("not poisoned").drain().collect();
        for (service, network) in live {
            remove_service(&self.docker, &service).await;
            remove_network(&self.docker, &network).await;
        }
        self.builder.remove_running().await;
        let used = std::mem::take(&mut *self.used.lock().expect("not poisoned"));
        let Some(data_dir_label) = used.values().next().cloned() else { return };
        let references = used.into_keys().collect();
        let collected = self.remove_job_images(&Selection::References(references), false, &data_dir_label).await;
        tracing::info!(
            registry = collected.registry.len(),
            nodes = collected.removed_from_nodes(),
            "removed the run's job images from the registry and the nodes"
        );
        for problem in &collected.problems {
            tracing::warn!(%problem, "a job image of this run stays (`swe-harvest gc` removes it later)");
        }
    }

    async fn sweep(&self, data_dir_label: &str) -> usize {
        let mut removed = self.builder.sweep(data_dir_label).await;
        let filters: HashMap<String, Vec<String>> =
            [("label".to_string(), vec![format!("{DATA_DIR_LABEL}={data_dir_label}")])].into();
        let options = ListServicesOptionsBuilder::default().filters(&filters).build();
        if let Ok(Ok(services)) = tokio::time::timeout(CALL_TIMEOUT, self.docker.list_services(Some(options))).await {
            for service in services {
                let labels = service.spec.and_then(|spec| spec.labels).unwrap_or_default();
                let Some(id) = service.id else { continue };
                if super::left_behind(&labels) {
                    remove_service(&self.docker, &id).await;
                    removed += 1;
                }
            }
        }
        let options = ListNetworksOptionsBuilder::default().filters(&filters).build();
        if let Ok(Ok(networks)) = tokio::time::timeout(CALL_TIMEOUT, self.docker.list_networks(Some(options))).await {
            for network in networks {
                let Some(id) = network.id else { continue };
                if super::left_behind(&network.labels.unwrap_or_default()) {
                    remove_network(&self.docker, &id).await;
                }
            }
        }
        removed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_names_are_valid_swarm_names_whatever_the_instance() {
        let name = service_name("Owner__Some.Very_Long-Repository-Name-That-Goes-On-And-On-1234", "abcdefgh");
        assert!(name.len() <= 63, "{name}");
        assert!(name.starts_with("swh-owner--some-very-long"), "{name}");
        assert!(name.ends_with("-abcdefgh"), "{name}");
        assert!(name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'), "{name}");
    }

    #[test]
    fn report_lines_come_out_of_the_log_whole_and_forged_ones_stay_in() {
        let token = "tok123";
        let xml = "<testsuite name=\"x\">é</testsuite>";
        let hex = hex::encode(xml);
        let (first, second) = hex.split_at(10);
        let log = format!(
            "@@swe-harvest tok123 run begin\nok\n@@swe-harvest tok123 run end 0\n\n@@swe-harvest tok123 report junit.xml {first}\n\n@@swe-harvest tok123 report junit.xml {second}\n@@swe-harvest other report fake.xml 41\n"
        );
        let (kept, reports) = take_reports(&log, token);
        assert_eq!(reports.get("junit.xml").map(String::as_str), Some(xml));
        assert_eq!(reports.len(), 1, "a line with another token is not a report: {reports:?}");
        assert!(kept.contains("@@swe-harvest other report fake.xml 41"), "{kept}");
        assert!(!kept.contains("report junit.xml"), "{kept}");
    }

    #[test]
    fn a_job_service_has_the_isolation_of_a_local_run() {
        let job = Job {
            instance_id: "o__n-1".into(),
            attempt: 1,
            image: "env".into(),
            user: super::super::Owner::UNPRIVILEGED,
            testbed: None,
            files: Vec::new(),
            script: String::new(),
            token: "tok".into(),
            env: vec!["A=1".into()],
            phases: 2,
            log_path: "/tmp/x.log".into(),
            data_dir_label: "/data".into(),
        };
        let limits = Limits {
            memory_bytes: 1 << 30,
            nano_cpus: 1_000_000_000,
            pids_limit: 100,
            file_size_bytes: 3 << 20,
            run_timeout: Duration::from_secs(60),
        };
        let spec = service_spec(&job, "reg/job:1", limits, "swh-x", "net1", HashMap::new(), &[]);
        let task = spec.task_template.unwrap();
        let container = task.container_spec.unwrap();
        assert_eq!(container.capability_drop, Some(vec!["ALL".to_string()]));
        assert_eq!(container.capability_add, Some(Vec::new()), "an unprivileged job keeps no capability");
        let ulimits: Vec<(Option<String>, Option<i64>)> =
            container.ulimits.unwrap().into_iter().map(|ulimit| (ulimit.name, ulimit.hard)).collect();
        assert!(ulimits.contains(&(Some("fsize".into()), Some(3 << 20))), "the configured file size: {ulimits:?}");
        assert_eq!(container.user.as_deref(), Some("1000:1000"));
        assert_eq!(container.env, Some(vec!["A=1".to_string()]), "only the job's environment");
        let mounts = container.mounts.unwrap();
        assert!(mounts.iter().all(|mount| mount.typ == Some(MountType::TMPFS)), "no host mounts: {mounts:?}");
        assert!(container.secrets.is_none() && container.configs.is_none());
        let limit = task.resources.unwrap().limits.unwrap();
        assert_eq!((limit.memory_bytes, limit.nano_cpus, limit.pids), (Some(1 << 30), Some(1_000_000_000), Some(100)));
        assert_eq!(task.restart_policy.unwrap().condition, Some(TaskSpecRestartPolicyConditionEnum::NONE));
        let networks = task.networks.unwrap();
        assert_eq!(networks.len(), 1);
        assert_eq!(networks[0].target.as_deref(), Some("net1"), "only the job's own internal network");
        let job_mode = spec.mode.unwrap().replicated_job.unwrap();
        assert_eq!((job_mode.max_concurrent, job_mode.total_completions), (Some(1), Some(1)));
    }

    #[test]
    fn the_report_trap_comes_after_the_token_is_read() {
        let script = super::super::script::preamble("test", "") + "echo hi\nexit 3\n";
        let traced = with_report_trap(&script);
        let token_at = traced.find("token=\"$1\"").unwrap();
        let trap_at = traced.find("trap 'swh_reports; swh_oom_kills' EXIT").unwrap();
        assert!(token_at < trap_at, "{traced}");
        assert!(traced.ends_with("echo hi\nexit 3\n"));
        assert!(traced.starts_with("#!/bin/bash"));
    }

    #[test]
    fn the_exit_trap_prints_the_oom_kill_count_and_the_log_is_read_without_it() {
        let script = "#!/bin/bash\ntoken=\"$1\"\necho hi\nexit 3\n";
        let output = std::process::Command::new("bash")
            .arg("-c")
            .arg(with_report_trap(script))
            .arg("bash")
            .arg("tok123")
            .output()
            .expect("bash runs");
        assert_eq!(output.status.code(), Some(3));
        let log = String::from_utf8_lossy(&output.stdout);
        let (kept, kills) = take_oom_kills(&log, "tok123");
        assert!(kept.contains("hi") && !kept.contains("oom_kill"), "{log}");
        // Read from the cgroup where there is one (as in every container), else unknown.
        let cgroup = ["/sys/fs/cgroup/memory.events", "/sys/fs/cgroup/memory/memory.oom_control"]
            .iter()
            .any(|path| fs_err::read_to_string(path).is_ok_and(|text| text.contains("oom_kill ")));
        assert_eq!(kills.is_some(), cgroup, "{log}");
        assert!(log.contains(if cgroup { "tok123 oom_kill " } else { "tok123 oom_kill unknown" }), "{log}");

        let (kept, kills) = take_oom_kills("a\n@@swe-harvest t oom_kill 2\nb\n", "t");
        assert_eq!((kept.as_str(), kills), ("a\nb\n", Some(2)));
        assert_eq!(take_oom_kills("@@swe-harvest t oom_kill unknown\n", "t").1, None);
        assert_eq!(take_oom_kills("@@swe-harvest other oom_kill 2\n", "t").1, None, "another job's line");
    }
}
