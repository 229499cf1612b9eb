//! Removing the swarm backend's job images, so that a month of refreshes does not
//! fill the registry or the nodes' disks: those a run used, when the run ends
//! ([`super::swarm::SwarmBackend`]'s `remove_running`), and those older than an age
//! (`swe-harvest gc`), which is also how a killed run's images go.
//!
//! A job image lives in three places: the registry (pushed by the builder), the image
//! cache of every node that ran one of its jobs (pulled), and briefly the builder (its
//! local tag goes after the push). Decisions:
//! - The registry: its own API ([`RegistryApi`]) removes each tag's manifest; the
//!   layers go at the registry's next garbage collection (the operator's).
//! - The nodes: the manager cannot reach a worker's engine, so the clean-up runs on
//!   each node as a one-off **global service** (one task per node, never restarted)
//!   of a small image of ours (`curl` from Debian, pushed to the registry like job
//!   images) that asks the node's own engine, through its socket, to remove the
//!   run's job images by reference (or, by age, to prune images labelled
//!   `swe-harvest.job`). This container is swe-harvest's, not a repository's: it
//!   runs no code under test, and it is the one container given a host mount (the
//!   engine's socket, `/var/run/docker.sock`). It has no capabilities, a read-only
//!   root and a small memory limit, and runs on the nodes that the jobs' placement
//!   constraints allow.
//! - Nothing here fails a run: what could not be removed is a warning that says how
//!   to remove it (`swe-harvest gc`), and a node that is down keeps its images until
//!   the next clean-up.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::{Duration, Instant};

use bollard::Docker;
use bollard::auth::DockerCredentials;
use bollard::models::{
    Mount, MountType, ServiceSpec, ServiceSpecMode, TaskSpec, TaskSpecContainerSpec, TaskSpecContainerSpecPrivileges,
    TaskSpecLogDriver, TaskSpecPlacement, TaskSpecResources, TaskSpecRestartPolicy, TaskSpecRestartPolicyConditionEnum,
    TaskState,
};
use bollard::query_parameters::{
    ListTasksOptionsBuilder, LogsOptionsBuilder, PruneImagesOptionsBuilder, TagImageOptionsBuilder,
};
use futures::StreamExt;

use super::registry_api::{Credentials, RegistryApi, Removal};
use super::tool_image::Tool;
use super::{DATA_DIR_LABEL, RUN_LABEL};

/// The label of job images (`docker image prune -a --filter label=swe-harvest.job`).
pub const JOB_IMAGE_LABEL: &str = "swe-harvest.job";
/// The repository of job images in the registry.
pub const JOB_REPOSITORY: &str = "swe-harvest/job";
/// The engine's socket on every node, as the clean-up mounts it.
pub const NODE_SOCKET: &str = "/var/run/docker.sock";
/// How long the clean-up may take on the nodes (its image's pull included).
const NODE_TIMEOUT: Duration = Duration::from_secs(300);
const CALL_TIMEOUT: Duration = Duration::from_secs(120);
const POLL: Duration = Duration::from_millis(500);
/// References per clean-up service (its arguments stay far below the engine's limits).
const REFERENCES_PER_SERVICE: usize = 500;
/// The first word of the clean-up's output lines.
const LINE_PREFIX: &str = "swh-gc";

/// The clean-up's image.
pub const NODE_CLEANER: Tool = Tool {
    repository: "swe-harvest/node-gc",
    about: "the job-image clean-up of swarm nodes",
    source: "pipeline/sandbox/job_images.rs",
    packages: &["curl"],
    check: "curl --version",
};

/// The clean-up's script: `MODE=remove` removes each reference given as an argument,
/// `prune` prunes by the filters in `FILTERS` (URL-encoded JSON), `list` lists the job
/// images. Each line: `swh-gc <node> <what>`.
const NODE_SCRIPT: &str = r#"set -u
api() { curl -sS --unix-socket /var/run/docker.sock "$@"; }
node=$(hostname)
if ! api -o /dev/null http://localhost/_ping; then echo "swh-gc $node nosocket"; exit 0; fi
case "$MODE" in
remove)
    for ref in "$@"; do
        echo "swh-gc $node removed $(api -o /dev/null -w '%{http_code}' -X DELETE "http://localhost/images/$ref?force=1") $ref"
    done ;;
prune)
    echo "swh-gc $node pruned $(api -X POST "http://localhost/images/prune?filters=$FILTERS" | tr -d '\n')" ;;
list)
    echo "swh-gc $node listed $(api "http://localhost/images/json?filters=$FILTERS" | tr -d '\n')" ;;
esac
"#;

/// Which job images to remove.
#[derive(Debug, Clone)]
pub enum Selection {
    /// These references (`<registry>/swe-harvest/job:<key>`): a run's.
    References(BTreeSet<String>),
    /// Those made longer ago than this.
    OlderThan(Duration),
}

/// What one node removed (or would), or why it could not.
type NodeOutcome = Result<Vec<String>, String>;

/// What a clean-up removed (or, dry, would remove), and what it could not do.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Collected {
    /// Tags removed from the registry.
    pub registry: Vec<String>,
    /// Images removed from each node's cache, by node name.
    pub nodes: BTreeMap<String, Vec<String>>,
    /// Images removed from the builder (when it is not one of the nodes).
    pub builder: Vec<String>,
    /// What could not be removed, and why.
    pub problems: Vec<String>,
}

impl Collected {
    /// Images removed from nodes, all nodes together.
    pub fn removed_from_nodes(&self) -> usize {
        self.nodes.values().map(Vec::len).sum()
    }
}

/// The swarm's job images: the manager (also the builder), the registry and the nodes
/// that the jobs' constraints allow.
pub struct JobImages<'a> {
    pub docker: &'a Docker,
    /// `validate.registry`.
    pub registry: &'a str,
    pub constraints: &'a [String],
    pub credentials: Option<DockerCredentials>,
    /// The labels of the clean-up's service (data dir and run, for the sweep).
    pub labels: HashMap<String, String>,
}

impl JobImages<'_> {
    /// Removes the selected job images everywhere (`dry_run`: only says which).
    pub async fn remove(&self, selection: &Selection, dry_run: bool) -> Collected {
        let mut collected = Collected::default();
        match self.on_each_node(selection, dry_run).await {
            Ok(nodes) => {
                for (node, outcome) in nodes {
                    match outcome {
                        Ok(images) => {
                            collected.nodes.insert(node, images);
                        }
                        Err(problem) => collected.problems.push(format!("node {node}: {problem}")),
                    }
                }
            }
            Err(problem) => collected.problems.push(format!("the nodes: {problem}")),
        }
        // The builder is the manager's engine: when that is a node that took the clean-up, done.
        let builder_is_a_node = match tokio::time::timeout(CALL_TIMEOUT, self.docker.info()).await {
            Ok(Ok(info)) => info.name.is_some_and(|name| collected.nodes.contains_key(&name)),
            _ => false,
        };
        if let (Selection::OlderThan(age), false) = (selection, builder_is_a_node) {
            match self.on_builder(*age, dry_run).await {
                Ok(images) => collected.builder = images,
                Err(problem) => collected.problems.push(format!("the builder: {problem}")),
            }
        }
        match self.in_registry(selection, dry_run).await {
            Ok((removed, problems)) => {
                collected.registry = removed;
                collected.problems.extend(problems);
            }
            Err(problem) => collected.problems.push(format!("the registry {}: {problem}", self.registry)),
        }
        collected
    }

    fn credentials(&self) -> Option<Credentials> {
        let credentials = self.credentials.as_ref()?;
        Some(Credentials {
            username: credentials.username.clone().unwrap_or_default(),
            password: credentials.password.clone().unwrap_or_default(),
        })
    }

    /// The registry's part: the selected tags of [`JOB_REPOSITORY`]; the tags removed,
    /// and a problem per tag that could not be.
    async fn in_registry(&self, selection: &Selection, dry_run: bool) -> Result<(Vec<String>, Vec<String>), String> {
        let api = RegistryApi::connect(self.registry, self.credentials()).await?;
        let tags: Vec<String> = match selection {
            Selection::References(references) => references.iter().filter_map(|reference| tag_of(reference)).collect(),
            Selection::OlderThan(age) => {
                let cutoff = cutoff(*age);
                let mut old = Vec::new();
                for tag in api.tags(JOB_REPOSITORY).await? {
                    if api.created(JOB_REPOSITORY, &tag).await?.is_some_and(|created| created < cutoff) {
                        old.push(tag);
                    }
                }
                old
            }
        };
        if dry_run {
            return Ok((tags, Vec::new()));
        }
        let (mut removed, mut problems) = (Vec::new(), Vec::new());
        for tag in tags {
            match api.remove(JOB_REPOSITORY, &tag).await {
                Ok(Removal::Removed) => removed.push(tag),
                Ok(Removal::Absent) => {}
                // Deletes turned off: every tag would say the same.
                Err(problem) if problem.contains("does not allow deletes") => return Err(problem),
                Err(problem) => problems.push(problem),
            }
        }
        Ok((removed, problems))
    }

    /// The builder's part (by age only: a run removes its local tags as it pushes).
    async fn on_builder(&self, age: Duration, dry_run: bool) -> Result<Vec<String>, String> {
        let cutoff = cutoff(age).timestamp();
        let filters: HashMap<String, Vec<String>> = [("label".to_string(), vec![JOB_IMAGE_LABEL.to_string()])].into();
        let options = bollard::query_parameters::ListImagesOptionsBuilder::default().filters(&filters).build();
        let images = tokio::time::timeout(CALL_TIMEOUT, self.docker.list_images(Some(options)))
            .await
            .map_err(|_| "no answer".to_string())?
            .map_err(|error| error.to_string())?;
        let old: Vec<String> = images
            .into_iter()
            .filter(|image| image.created < cutoff)
            .map(|image| image.repo_tags.first().cloned().unwrap_or(image.id))
            .collect();
        if dry_run || old.is_empty() {
            return Ok(old);
        }
        let filters = prune_filters(age);
        let options = PruneImagesOptionsBuilder::default().filters(&filters).build();
        tokio::time::timeout(CALL_TIMEOUT, self.docker.prune_images(Some(options)))
            .await
            .map_err(|_| "no answer".to_string())?
            .map_err(|error| error.to_string())?;
        Ok(old)
    }

    /// The nodes' part: one clean-up service per batch of references (one for a prune
    /// or a listing); by node, the images removed or what went wrong there.
    async fn on_each_node(
        &self,
        selection: &Selection,
        dry_run: bool,
    ) -> Result<BTreeMap<String, NodeOutcome>, String> {
        let image = self.cleaner_image().await?;
        let mut by_node: BTreeMap<String, NodeOutcome> = BTreeMap::new();
        if dry_run {
            let filters = serde_json::json!({ "label": [JOB_IMAGE_LABEL] }).to_string();
            let selected = |name: &str, created: i64| match selection {
                Selection::References(references) => references.contains(name),
                Selection::OlderThan(age) => created < cutoff(*age).timestamp(),
            };
            for (node, lines) in self.on_nodes(&image, "list", &filters, &[]).await? {
                let images = lines.and_then(|lines| listed_images(&lines)).map(|images| {
                    images
                        .into_iter()
                        .filter(|(name, created)| selected(name, *created))
                        .map(|(name, _)| name)
                        .collect()
                });
                by_node.insert(node, images);
            }
            return Ok(by_node);
        }
        let runs: Vec<(&str, String, Vec<String>)> = match selection {
            Selection::References(references) => references
                .iter()
                .cloned()
                .collect::<Vec<_>>()
                .chunks(REFERENCES_PER_SERVICE)
                .map(|chunk| ("remove", String::new(), chunk.to_vec()))
                .collect(),
            Selection::OlderThan(age) => {
                vec![("prune", serde_json::to_string(&prune_filters(*age)).expect("plain JSON"), Vec::new())]
            }
        };
        for (mode, filters, references) in runs {
            for (node, lines) in self.on_nodes(&image, mode, &filters, &references).await? {
                let images = lines
                    .and_then(|lines| if mode == "prune" { pruned_images(&lines) } else { removed_references(&lines) });
                match (by_node.entry(node).or_insert_with(|| Ok(Vec::new())), images) {
                    (Ok(all), Ok(images)) => all.extend(images),
                    (slot @ Ok(_), Err(problem)) => *slot = Err(problem),
                    (Err(_), _) => {}
                }
            }
        }
        Ok(by_node)
    }

    /// The clean-up's image in the registry (made on the builder and pushed once).
    async fn cleaner_image(&self) -> Result<String, String> {
        let local = NODE_CLEANER.image(self.docker).await?;
        let (repository, tag) = local.rsplit_once(':').expect("a tool's tag has a version");
        let remote = format!("{}/{repository}", self.registry.trim_end_matches('/'));
        let options = TagImageOptionsBuilder::default().repo(&remote).tag(tag).build();
        tokio::time::timeout(CALL_TIMEOUT, self.docker.tag_image(&local, Some(options)))
            .await
            .map_err(|_| "no answer".to_string())?
            .map_err(|error| format!("tagging {local} for the registry: {error}"))?;
        let pushed =
            tokio::time::timeout(CALL_TIMEOUT, super::swarm::push(self.docker, &remote, tag, self.credentials.clone()))
                .await
                .unwrap_or_else(|_| Err("the push did not end in time".into()));
        pushed.map_err(|error| format!("pushing {}'s image to the registry: {error}", NODE_CLEANER.about))?;
        Ok(format!("{remote}:{tag}"))
    }

    /// Runs [`NODE_SCRIPT`] once on every node the constraints allow; its lines by node
    /// (or why the node gave none).
    async fn on_nodes(
        &self,
        image: &str,
        mode: &str,
        filters: &str,
        references: &[String],
    ) -> Result<BTreeMap<String, NodeOutcome>, String> {
        let name = format!("swh-gc-{}", &super::script::new_token()[..12]);
        let encoded = percent_encoding::utf8_percent_encode(filters, percent_encoding::NON_ALPHANUMERIC).to_string();
        let spec = cleaner_spec(&name, image, mode, &encoded, references, self.constraints, self.labels.clone());
        let created = tokio::time::timeout(CALL_TIMEOUT, self.docker.create_service(spec, self.credentials.clone()))
            .await
            .map_err(|_| "the engine did not create the clean-up's service in time".to_string())?
            .map_err(|error| format!("creating the clean-up's service: {error}"))?;
        let service = created.id.unwrap_or(name);
        let outcome = self.wait_and_read(&service).await;
        super::swarm::remove_service(self.docker, &service).await;
        outcome
    }

    /// Waits until the clean-up ended on every node that took it (or for
    /// [`NODE_TIMEOUT`]); its lines by node, and why a node has none.
    async fn wait_and_read(&self, service: &str) -> Result<BTreeMap<String, NodeOutcome>, String> {
        let filters: HashMap<String, Vec<String>> = [("service".to_string(), vec![service.to_string()])].into();
        let started = Instant::now();
        let state_of = |task: &bollard::models::Task| {
            task.status.as_ref().and_then(|status| status.state).unwrap_or(TaskState::NEW)
        };
        let tasks = loop {
            tokio::time::sleep(POLL).await;
            let options = ListTasksOptionsBuilder::default().filters(&filters).build();
            let Ok(Ok(tasks)) = tokio::time::timeout(CALL_TIMEOUT, self.docker.list_tasks(Some(options))).await else {
                continue;
            };
            let ended = !tasks.is_empty() && tasks.iter().all(|task| ended(state_of(task)));
            if ended || started.elapsed() >= NODE_TIMEOUT {
                break tasks;
            }
        };
        if tasks.is_empty() {
            return Err("no node took the clean-up (do the jobs' placement constraints match a node?)".into());
        }
        let names = self.node_names().await;
        let mut by_node: BTreeMap<String, NodeOutcome> = BTreeMap::new();
        for (node, line) in self.log_lines(service).await {
            if let Ok(lines) = by_node.entry(node).or_insert_with(|| Ok(Vec::new())) {
                lines.push(line);
            }
        }
        for task in tasks.iter().filter(|task| state_of(task) != TaskState::COMPLETE) {
            let id = task.node_id.clone().unwrap_or_default();
            let node = names.get(&id).cloned().unwrap_or(id);
            let status = task.status.clone().unwrap_or_default();
            let why = status.err.or(status.message).unwrap_or_default();
            let state = state_of(task);
            let problem = if ended(state) {
                format!("the clean-up ended as {state}: {why}")
            } else {
                format!("the clean-up did not end within {}s (it is {state})", NODE_TIMEOUT.as_secs())
            };
            by_node.entry(node).or_insert(Err(problem));
        }
        Ok(by_node)
    }

    /// Node ids to host names.
    async fn node_names(&self) -> HashMap<String, String> {
        let nodes = tokio::time::timeout(CALL_TIMEOUT, self.docker.list_nodes(None)).await;
        let Ok(Ok(nodes)) = nodes else { return HashMap::new() };
        nodes.into_iter().filter_map(|node| Some((node.id?, node.description?.hostname?))).collect()
    }

    /// The clean-up's output lines, as (node, the rest of the line).
    async fn log_lines(&self, service: &str) -> Vec<(String, String)> {
        let options = LogsOptionsBuilder::default().stdout(true).stderr(true).follow(false).build();
        let mut text = String::new();
        let read = async {
            let mut stream = self.docker.service_logs(service, Some(options));
            while let Some(Ok(chunk)) = stream.next().await {
                text.push_str(&String::from_utf8_lossy(&chunk.into_bytes()));
            }
        };
        let _ = tokio::time::timeout(CALL_TIMEOUT, read).await;
        text.lines()
            .filter_map(|line| {
                let rest = line.trim().strip_prefix(LINE_PREFIX)?.trim_start();
                let (node, what) = rest.split_once(' ')?;
                Some((node.to_string(), what.to_string()))
            })
            .collect()
    }
}

/// The clean-up's service: one task per allowed node, never restarted.
fn cleaner_spec(
    name: &str,
    image: &str,
    mode: &str,
    filters: &str,
    references: &[String],
    constraints: &[String],
    labels: HashMap<String, String>,
) -> ServiceSpec {
    let mut args = vec![NODE_SCRIPT.to_string(), LINE_PREFIX.to_string()];
    args.extend(references.iter().cloned());
    let container = TaskSpecContainerSpec {
        image: Some(image.to_string()),
        labels: Some(labels.clone()),
        command: Some(vec!["sh".into(), "-c".into()]),
        args: Some(args),
        env: Some(vec![format!("MODE={mode}"), format!("FILTERS={filters}")]),
        hostname: Some("{{.Node.Hostname}}".into()),
        read_only: Some(true),
        privileges: Some(TaskSpecContainerSpecPrivileges { no_new_privileges: Some(true), ..Default::default() }),
        capability_drop: Some(vec!["ALL".into()]),
        mounts: Some(vec![Mount {
            source: Some(NODE_SOCKET.into()),
            target: Some(NODE_SOCKET.into()),
            typ: Some(MountType::BIND),
            ..Default::default()
        }]),
        ..Default::default()
    };
    ServiceSpec {
        name: Some(name.to_string()),
        labels: Some(labels),
        task_template: Some(TaskSpec {
            container_spec: Some(container),
            resources: Some(TaskSpecResources {
                limits: Some(bollard::models::Limit {
                    memory_bytes: Some(64 << 20),
                    pids: Some(64),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            restart_policy: Some(TaskSpecRestartPolicy {
                condition: Some(TaskSpecRestartPolicyConditionEnum::NONE),
                ..Default::default()
            }),
            placement: Some(TaskSpecPlacement { constraints: Some(constraints.to_vec()), ..Default::default() }),
            log_driver: Some(TaskSpecLogDriver { name: Some("json-file".into()), options: None }),
            ..Default::default()
        }),
        mode: Some(ServiceSpecMode { global: Some(Default::default()), ..Default::default() }),
        ..Default::default()
    }
}

/// A task state from which nothing more happens.
fn ended(state: TaskState) -> bool {
    matches!(
        state,
        TaskState::COMPLETE
            | TaskState::FAILED
            | TaskState::REJECTED
            | TaskState::SHUTDOWN
            | TaskState::ORPHANED
            | TaskState::REMOVE
    )
}

/// The labels of a clean-up's service: the data dir's and this run's.
pub fn cleaner_labels(data_dir_label: &str) -> HashMap<String, String> {
    [
        (DATA_DIR_LABEL.to_string(), data_dir_label.to_string()),
        (RUN_LABEL.to_string(), crate::process::RunId::current().to_string()),
    ]
    .into()
}

/// The tag of a job image's reference (`<registry>/swe-harvest/job:<tag>`).
fn tag_of(reference: &str) -> Option<String> {
    let (repository, tag) = reference.rsplit_once(':')?;
    repository.ends_with(JOB_REPOSITORY).then(|| tag.to_string())
}

/// The moment `age` ago.
fn cutoff(age: Duration) -> chrono::DateTime<chrono::Utc> {
    chrono::Utc::now() - chrono::Duration::from_std(age).unwrap_or(chrono::Duration::MAX)
}

/// A prune of job images made `age` ago or earlier, tagged or not.
fn prune_filters(age: Duration) -> HashMap<String, Vec<String>> {
    [
        ("label".to_string(), vec![JOB_IMAGE_LABEL.to_string()]),
        ("dangling".to_string(), vec!["false".to_string()]),
        ("until".to_string(), vec![format!("{}s", age.as_secs())]),
    ]
    .into()
}

/// Problems the script reports instead of its work.
fn node_problem(lines: &[String]) -> Option<String> {
    lines.iter().any(|line| line == "nosocket").then(|| {
        format!("the clean-up could not reach the node's engine at {NODE_SOCKET} (is the engine's socket elsewhere?)")
    })
}

/// `removed <status> <reference>` lines: the references the engine removed (200).
fn removed_references(lines: &[String]) -> Result<Vec<String>, String> {
    if let Some(problem) = node_problem(lines) {
        return Err(problem);
    }
    Ok(lines
        .iter()
        .filter_map(|line| {
            let rest = line.strip_prefix("removed ")?;
            let (status, reference) = rest.split_once(' ')?;
            (status == "200").then(|| reference.to_string())
        })
        .collect())
}

/// The engine's answer on the `<word> <json>` line of a node's clean-up.
fn answer(lines: &[String], word: &str) -> Result<serde_json::Value, String> {
    if let Some(problem) = node_problem(lines) {
        return Err(problem);
    }
    let prefix = format!("{word} ");
    let json = lines
        .iter()
        .find_map(|line| line.strip_prefix(&prefix))
        .ok_or_else(|| "the clean-up printed no result".to_string())?;
    serde_json::from_str(json).map_err(|error| format!("the engine's answer is not JSON ({error}): {json}"))
}

/// A `pruned <json>` line: the references untagged.
fn pruned_images(lines: &[String]) -> Result<Vec<String>, String> {
    let pruned = answer(lines, "pruned")?;
    if let Some(message) = pruned["message"].as_str() {
        return Err(format!("the engine refused the prune: {message}"));
    }
    Ok(pruned["ImagesDeleted"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|entry| entry["Untagged"].as_str())
        // An image is untagged by name and by its registry digest (`name@sha256:...`).
        .filter(|untagged| !untagged.contains('@'))
        .map(str::to_string)
        .collect())
}

/// A `listed <json>` line: each job image's first name and when it was made.
fn listed_images(lines: &[String]) -> Result<Vec<(String, i64)>, String> {
    Ok(answer(lines, "listed")?
        .as_array()
        .into_iter()
        .flatten()
        .map(|image| {
            let name = image["RepoTags"][0].as_str().or(image["Id"].as_str()).unwrap_or_default().to_string();
            (name, image["Created"].as_i64().unwrap_or_default())
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_references_of_the_job_repository_give_tags() {
        assert_eq!(tag_of("127.0.0.1:5000/swe-harvest/job:abc").as_deref(), Some("abc"));
        assert_eq!(tag_of("reg.example/team/swe-harvest/job:abc").as_deref(), Some("abc"));
        assert_eq!(tag_of("127.0.0.1:5000/swe-harvest/node-gc:abc"), None);
    }

    #[test]
    fn the_clean_ups_lines_are_read_into_what_each_node_removed() {
        let lines: Vec<String> = [
            "removed 200 127.0.0.1:5000/swe-harvest/job:a",
            "removed 404 127.0.0.1:5000/swe-harvest/job:b",
            "removed 409 127.0.0.1:5000/swe-harvest/job:c",
        ]
        .map(String::from)
        .into();
        assert_eq!(removed_references(&lines).unwrap(), ["127.0.0.1:5000/swe-harvest/job:a"]);
        let pruned = vec![
            r#"pruned {"ImagesDeleted":[{"Untagged":"r/swe-harvest/job:x"},{"Untagged":"r/swe-harvest/job@sha256:2"},{"Deleted":"sha256:1"}],"SpaceReclaimed":5}"#
                .to_string(),
        ];
        assert_eq!(pruned_images(&pruned).unwrap(), ["r/swe-harvest/job:x"]);
        let refused = vec![r#"pruned {"message":"a prune operation is already running"}"#.to_string()];
        assert!(pruned_images(&refused).unwrap_err().contains("already running"));
        assert!(pruned_images(&["nosocket".to_string()]).unwrap_err().contains(NODE_SOCKET));
    }
}
