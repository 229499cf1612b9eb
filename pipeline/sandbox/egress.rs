//! The build network: environment builds run the repository's own code (`setup.py`,
//! build backends, npm `install` scripts, Cargo build scripts, Maven plugins) and
//! reach the package registries of `validate.registries`, and nothing else.
//!
//! How, on a Docker engine (the local backend, and the swarm's builder):
//! - Each build gets a network of its own: `internal` (no gateway, no route out) and
//!   with no address of the host on its bridge (`inhibit_ipv4`). Without the second,
//!   an internal network still reaches every service of the host through the
//!   bridge's gateway address and the host's other addresses (measured on Docker
//!   20.10); with it, a build container reaches only the containers of its network.
//! - On it, and on the engine's default bridge, runs the egress proxy: Debian's
//!   `tinyproxy` in a container of its own (unprivileged, no capabilities, memory and
//!   process limits), whose filter allows exactly the [`Allowlist`]: a tunnel
//!   (`CONNECT host:port`) to each `https` destination, plain requests only to a
//!   destination whose URL is `http` (the Debian archive, whose files apt checks
//!   against its signature). A name that is not listed is refused, and so is every
//!   address by number: the host's, the private ranges, the link-local metadata
//!   address. The proxy resolves names; the build network has no DNS of its own.
//! - The build's `RUN` steps get the proxy in `HTTP_PROXY`/`HTTPS_PROXY` (Docker's
//!   predefined build arguments: in no layer, no history, no content key), which
//!   uv, pip, npm, Yarn, pnpm, cargo, go and apt read; Maven reads it from a proxy
//!   entry that the Java images write for their install step only.
//! - Before the build, a container on the network connects to the proxy's port; a
//!   network where it cannot (a NAT rule of the host covering its subnet) is passed
//!   over for another, and its subnet is held by a network of its own so that no
//!   later build gets it ([`BuildEgress::open`]).
//! - The proxy logs every request and every refusal; its log is read when the build
//!   ends, the destinations it let through and those it refused go into the build log
//!   (what a build needed, for audit), and a failed build's diagnosis names the
//!   refused ones with the config key that would allow them ([`diagnosis`]).
//! - The proxy's container and the network are removed when the build ends, with any
//!   container still on the network; a build stopped by Ctrl-C or SIGTERM too (its
//!   task removes them before the run exits: `docker.rs`'s `Builds`), and a killed
//!   run's (SIGKILL) are the next run's sweep's (by the run's label).
//!
//! The proxy's image is made once per engine from the Debian suite image that
//! `scripts/setup.sh` builds (trusted: our own Dockerfile, on the default network).

use std::collections::HashMap;
use std::time::Duration;

use bollard::Docker;
use bollard::models::{
    ContainerCreateBody, EndpointSettings, HostConfig, Ipam, IpamConfig, NetworkConnectRequest, NetworkCreateRequest,
};
use bollard::query_parameters::{
    CreateContainerOptionsBuilder, ListContainersOptionsBuilder, ListNetworksOptionsBuilder, LogsOptionsBuilder,
};
use futures::StreamExt;

use super::Registries;
use super::tool_image::Tool;

/// The port the proxy listens on.
pub const PROXY_PORT: u16 = 8888;
/// The label of the proxy's containers and of the build networks (value: the build's tag).
pub const EGRESS_LABEL: &str = "swe-harvest.egress";
/// The label of a network that holds a subnet whose build network could not reach its
/// proxy (value: the subnet); see [`BuildEgress::open`].
pub const HELD_SUBNET_LABEL: &str = "swe-harvest.unreachable-subnet";
/// What the proxy may use: it relays bytes and holds no state.
/// tinyproxy serves each client connection on a thread of its own (about 30 KiB each,
/// measured), and the process limit counts threads. Debian's npm 9 (`https-proxy-agent`
/// 5) opens a tunnel per request, all at once, and never reuses one: `npm ci` of
/// axios's lockfile opened 2,049 within a second. At its limit tinyproxy stops
/// accepting, and the clients wait in the listen queue until their own timeouts:
/// at 128 a large lockfile stalled on "Could not allocate memory for child"; at
/// 1,024 axios's `npm ci` stalled for 5 minutes per attempt.
const PROXY_MEMORY_BYTES: i64 = 1 << 30;
const PROXY_MAX_CLIENTS: i64 = 8192;
const PROXY_PIDS: i64 = PROXY_MAX_CLIENTS + 64;
/// The time limit of the proxy's set-up calls.
const CALL_TIMEOUT: Duration = Duration::from_secs(120);
/// How long a new build network's probe waits to connect to the proxy: a container
/// on the same bridge connects within milliseconds, or never.
const PROBE_SECONDS: u32 = 5;
const PROBE_MEMORY_BYTES: i64 = 64 << 20;
/// New build networks made, at most, when a container on one cannot reach its proxy.
const NETWORKS_TRIED: usize = 3;

/// One destination that builds may reach.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Destination {
    /// The host as the client names it (lower case).
    pub host: String,
    pub port: u16,
    /// Plain requests (an `http://` URL) rather than a tunnel.
    pub plain_http: bool,
    /// The config key that allows it.
    pub setting: String,
}

/// Every destination that builds may reach: the registries of `validate.registries`,
/// the hosts the public ones send clients on to, and `validate.registries.allow`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allowlist {
    destinations: Vec<Destination>,
}

impl Allowlist {
    /// The allowlist of `registries`; an error names a URL that has no host.
    pub fn of(registries: &Registries) -> Result<Allowlist, String> {
        let mut destinations = Vec::new();
        for (key, _, url) in registries.all() {
            destinations.push(destination(url, &format!("validate.registries.{key}"))?);
        }
        for (key, url) in registries.companions() {
            destinations.push(destination(url, &format!("validate.registries.{key}"))?);
        }
        for url in &registries.allow {
            destinations.push(destination(url, "validate.registries.allow")?);
        }
        destinations.sort();
        destinations.dedup_by(|a, b| a.host == b.host && a.port == b.port && a.plain_http == b.plain_http);
        Ok(Allowlist { destinations })
    }

    pub fn destinations(&self) -> &[Destination] {
        &self.destinations
    }

    /// The proxy's filter: one extended regular expression per destination, matched
    /// against what tinyproxy filters with `FilterURLs On` (a tunnel's `host:port`,
    /// a plain request's whole URL).
    pub fn proxy_filter(&self) -> String {
        let mut lines: Vec<String> = self
            .destinations
            .iter()
            .map(|destination| {
                let host = regex::escape(&destination.host);
                if destination.plain_http {
                    let port =
                        if destination.port == 80 { "(:80)?".to_string() } else { format!(":{}", destination.port) };
                    format!("^http://{host}{port}(/|$)")
                } else {
                    format!("^{host}:{}$", destination.port)
                }
            })
            .collect();
        lines.push(String::new());
        lines.join("\n")
    }
}

/// The allowlist's names, each resolved once here at the proxy's start, as the
/// `name:address` lines of the proxy's `/etc/hosts`. Decision: tinyproxy looks a name
/// up for every tunnel, and npm opens one per request (161 for Mocha's 71 packages);
/// in such a burst 19 to 58 lookups failed ("Temporary failure in name resolution"),
/// and npm's retries after 10 s made its builds 6 times slower than open ones. A name
/// that does not resolve here is left to the proxy to look up.
async fn pinned_hosts(allowlist: &Allowlist) -> Vec<String> {
    let mut entries: Vec<String> = Vec::new();
    for destination in allowlist.destinations() {
        if destination.host.parse::<std::net::IpAddr>().is_ok() {
            continue;
        }
        let lookup = tokio::net::lookup_host((destination.host.as_str(), destination.port));
        let Ok(Ok(mut addresses)) = tokio::time::timeout(CALL_TIMEOUT, lookup).await else { continue };
        if let Some(address) = addresses.find(std::net::SocketAddr::is_ipv4) {
            let entry = format!("{}:{}", destination.host, address.ip());
            if !entries.contains(&entry) {
                entries.push(entry);
            }
        }
    }
    entries
}

/// The destination of a registry's URL (`sparse+` taken off a crates index).
fn destination(url: &str, setting: &str) -> Result<Destination, String> {
    let parsed = url::Url::parse(url.strip_prefix("sparse+").unwrap_or(url))
        .map_err(|error| format!("{setting}: `{url}` is not a URL ({error})"))?;
    let plain_http = match parsed.scheme() {
        "https" => false,
        "http" => true,
        other => return Err(format!("{setting}: `{url}` is a {other} URL; builds reach http(s) only")),
    };
    let host = parsed.host_str().filter(|host| !host.is_empty());
    let host = host.ok_or_else(|| format!("{setting}: `{url}` names no host"))?;
    let port = parsed.port_or_known_default().unwrap_or(if plain_http { 80 } else { 443 });
    Ok(Destination { host: host.trim_matches(['[', ']']).to_lowercase(), port, plain_http, setting: setting.into() })
}

/// tinyproxy's configuration: the filter above, denying what it does not match; no
/// `Via` header; every `CONNECT` port (the filter names the port). `Connect` logs
/// each request line as well as the refusals (`Notice` only the refusals).
fn proxy_config() -> String {
    [
        format!("Port {PROXY_PORT}"),
        // Idle tunnels (a client's kept-alive sockets) go after two minutes.
        "Timeout 120".into(),
        format!("MaxClients {PROXY_MAX_CLIENTS}"),
        "LogLevel Connect".into(),
        "Filter \"/tmp/swe-harvest-egress.filter\"".into(),
        "FilterURLs On".into(),
        "FilterType ere".into(),
        "FilterCaseSensitive No".into(),
        "FilterDefaultDeny Yes".into(),
        "DisableViaHeader Yes".into(),
        String::new(),
    ]
    .join("\n")
}

/// The destinations that the proxy refused, in its log's order, each once: a
/// tunnel's `host:port`, or a plain request's URL.
pub fn refused(proxy_log: &str) -> Vec<String> {
    const REFUSED: &str = "Proxying refused on filtered url \"";
    let mut found: Vec<String> = Vec::new();
    for line in proxy_log.lines() {
        let Some((_, rest)) = line.split_once(REFUSED) else { continue };
        let Some((target, _)) = rest.rsplit_once('"') else { continue };
        if !found.iter().any(|seen| seen == target) {
            found.push(target.to_string());
        }
    }
    found
}

/// The destinations that the proxy let through, in its log's order, each once: a
/// tunnel's `host:port`, or a plain request's `http://host[:port]` (one line per
/// file would be apt's whole download list).
pub fn let_through(proxy_log: &str) -> Vec<String> {
    const REQUEST: &str = "]: Request (file descriptor ";
    let refused = refused(proxy_log);
    let mut found: Vec<String> = Vec::new();
    for line in proxy_log.lines() {
        let Some((_, rest)) = line.split_once(REQUEST) else { continue };
        let Some((_, request)) = rest.split_once("): ") else { continue };
        let mut words = request.split_whitespace();
        let (Some(method), Some(target)) = (words.next(), words.next()) else { continue };
        if refused.iter().any(|refused| refused == target) {
            continue;
        }
        let destination = if method.eq_ignore_ascii_case("CONNECT") {
            target.to_string()
        } else {
            match url::Url::parse(target) {
                Ok(url) => format!("{}://{}", url.scheme(), &url[url::Position::BeforeHost..url::Position::AfterPort]),
                Err(_) => continue,
            }
        };
        if !found.contains(&destination) {
            found.push(destination);
        }
    }
    found
}

/// How many times the proxy's log says it reached its connection limit.
pub fn times_at_limit(proxy_log: &str) -> usize {
    proxy_log.lines().filter(|line| line.contains("Maximum number of connections reached")).count()
}

/// What the proxy's log says of one build.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Traffic {
    /// [`let_through`]
    pub let_through: Vec<String>,
    /// [`refused`]
    pub refused: Vec<String>,
    /// [`times_at_limit`]
    pub times_at_limit: usize,
}

impl Traffic {
    /// Reads the proxy's log.
    pub fn of_log(proxy_log: &str) -> Traffic {
        Traffic {
            let_through: let_through(proxy_log),
            refused: refused(proxy_log),
            times_at_limit: times_at_limit(proxy_log),
        }
    }

    /// The build log's account of it: a section per kind that is not empty.
    pub fn log_sections(&self) -> String {
        let mut text = String::new();
        for (title, destinations) in [("let through", &self.let_through), ("refused", &self.refused)] {
            if !destinations.is_empty() {
                text.push_str(&format!("\n--- {title} by the build proxy ---\n{}\n", destinations.join("\n")));
            }
        }
        if let Some(note) = self.at_limit_note() {
            text.push_str(&format!("\n--- {note} ---\n"));
        }
        text
    }

    /// Said of a build whose client opened more tunnels at once than the proxy takes:
    /// the rest waited, and a failure of the build may be that wait's timeout.
    pub fn at_limit_note(&self) -> Option<String> {
        (self.times_at_limit > 0).then(|| {
            format!(
                "the build proxy reached its {PROXY_MAX_CLIENTS} connections {} time(s): the build's client opened more at once, and those waited to connect",
                self.times_at_limit
            )
        })
    }
}

/// What a user reads when a build was refused destinations: each one, and the entry
/// of `validate.registries.allow` that would allow it.
pub fn diagnosis(refused: &[String]) -> String {
    let entries: Vec<String> = refused
        .iter()
        .map(|target| {
            let entry = match target.strip_prefix("http://") {
                Some(rest) => format!("http://{}", rest.split('/').next().unwrap_or(rest)),
                None => match target.rsplit_once(':') {
                    Some((host, "443")) => format!("https://{host}"),
                    _ => format!("https://{target}"),
                },
            };
            format!("`{target}` (to let builds reach it: \"{entry}\" in validate.registries.allow)")
        })
        .collect();
    format!("{REFUSED}{}{REFUSED_END}", entries.join(", "))
}

const REFUSED: &str = "the build proxy refused ";
const REFUSED_END: &str = ": builds reach only the registries of validate.registries";

/// The destinations that the [`diagnosis`] texts within `text` (a drop's detail, which
/// may tell of several rungs) name, each once, in order.
pub fn refused_in(text: &str) -> Vec<String> {
    let mut targets: Vec<String> = Vec::new();
    for (start, _) in text.match_indices(REFUSED) {
        let rest = &text[start + REFUSED.len()..];
        let listed = rest.split_once(REFUSED_END).map_or(rest, |(listed, _)| listed);
        // Each entry is `target` (...): the targets are the odd pieces between backticks.
        for target in listed.split('`').skip(1).step_by(2) {
            if !targets.iter().any(|known| known == target) {
                targets.push(target.to_string());
            }
        }
    }
    targets
}

/// The proxy's image: tinyproxy from the Debian suite, tagged by its recipe.
pub const PROXY: Tool = Tool {
    repository: "swe-harvest/egress",
    about: "the build proxy",
    source: "pipeline/sandbox/egress.rs",
    packages: &["tinyproxy"],
    check: "tinyproxy -v",
};

/// Makes the proxy's image unless the engine has it; returns its tag.
pub async fn proxy_image(docker: &Docker) -> Result<String, String> {
    PROXY.image(docker).await
}

/// A build's own network and the proxy on it, while the build runs.
pub struct BuildEgress {
    network: String,
    container: String,
    proxy_address: String,
    /// The subnets of the networks made before this one and passed over: their
    /// containers could not reach their proxy.
    passed_over: Vec<String>,
}

impl BuildEgress {
    /// Makes the build's network and starts its proxy, and checks that a container on
    /// the network reaches the proxy. `labels` mark all three (the run's, for sweeps);
    /// on an error, what was made is removed again.
    ///
    /// A network whose containers cannot reach each other: a NAT rule of the host that
    /// covers the network's subnet (`iptables -t nat -A POSTROUTING -s <subnet> ... -j
    /// MASQUERADE`) rewrites the packets between them to the bridge's address, which
    /// the build network has none of (`inhibit_ipv4`), and they are dropped. An engine
    /// stopped without its clean-up leaves such rules behind for the subnets its
    /// networks had, and the next network to get one of them inherits it: found here
    /// (2026-11-28) as the cause of builds whose client timed out connecting to the
    /// proxy's address, the proxy's log empty. Such a network is kept while the next is
    /// made, so that the engine gives that one another subnet; then it is replaced by a
    /// network that holds its subnet ([`hold_subnet`]): the engine hands subnets out in
    /// turn, so without it every few builds would pay the probe's wait again.
    pub async fn open(
        docker: &Docker,
        image: &str,
        allowlist: &Allowlist,
        labels: HashMap<String, String>,
    ) -> Result<BuildEgress, String> {
        let mut unreachable: Vec<(BuildEgress, String)> = Vec::new();
        let opened = loop {
            let egress = match BuildEgress::open_one(docker, image, allowlist, labels.clone()).await {
                Ok(egress) => egress,
                Err(message) => break Err(message),
            };
            match egress.probe(docker, image, labels.clone()).await {
                Ok(None) => break Ok(egress),
                Ok(Some(subnet)) => {
                    tracing::warn!(network = %egress.network, %subnet, "a container on the build network could not reach its proxy (a NAT rule of the host covering the subnet?); making another network");
                    unreachable.push((egress, subnet));
                }
                Err(message) => {
                    egress.close(docker).await;
                    break Err(message);
                }
            }
            if unreachable.len() == NETWORKS_TRIED {
                let subnets: Vec<&str> = unreachable.iter().map(|(_, subnet)| subnet.as_str()).collect();
                break Err(format!(
                    "no build network's containers reached its proxy (subnets {}): a NAT rule of this host covers them \
                     (`iptables -t nat -S POSTROUTING`; an engine stopped without its clean-up leaves its rules behind) \
                     and drops the traffic between containers on a bridge without an address; remove the rule",
                    subnets.join(", ")
                ));
            }
        };
        let passed_over = unreachable.iter().map(|(_, subnet)| subnet.clone()).collect();
        for (egress, subnet) in unreachable {
            egress.close(docker).await;
            hold_subnet(docker, &subnet).await;
        }
        opened.map(|egress| BuildEgress { passed_over, ..egress })
    }

    /// The subnets of the networks passed over before this one (see [`BuildEgress::open`]).
    pub fn passed_over(&self) -> &[String] {
        &self.passed_over
    }

    async fn open_one(
        docker: &Docker,
        image: &str,
        allowlist: &Allowlist,
        mut labels: HashMap<String, String>,
    ) -> Result<BuildEgress, String> {
        let name = format!("swe-harvest-build-{}", hex::encode(rand::random::<[u8; 6]>()));
        labels.insert(EGRESS_LABEL.into(), name.clone());
        let network = NetworkCreateRequest {
            name: name.clone(),
            driver: Some("bridge".into()),
            internal: Some(true),
            options: Some([("com.docker.network.bridge.inhibit_ipv4".to_string(), "true".to_string())].into()),
            labels: Some(labels.clone()),
            ..Default::default()
        };
        timed("create the build network", docker.create_network(network)).await?;
        let mut egress = BuildEgress {
            network: name.clone(),
            container: String::new(),
            proxy_address: String::new(),
            passed_over: Vec::new(),
        };
        if let Err(message) = egress.start_proxy(docker, image, allowlist, labels).await {
            egress.close(docker).await;
            return Err(message);
        }
        Ok(egress)
    }

    async fn start_proxy(
        &mut self,
        docker: &Docker,
        image: &str,
        allowlist: &Allowlist,
        labels: HashMap<String, String>,
    ) -> Result<(), String> {
        let script = "printf '%s' \"$SWE_HARVEST_PROXY_CONFIG\" > /tmp/swe-harvest-egress.conf \
                      && printf '%s' \"$SWE_HARVEST_PROXY_FILTER\" > /tmp/swe-harvest-egress.filter \
                      && exec tinyproxy -d -c /tmp/swe-harvest-egress.conf";
        let body = ContainerCreateBody {
            image: Some(image.to_string()),
            cmd: Some(vec!["sh".into(), "-c".into(), script.into()]),
            env: Some(vec![
                format!("SWE_HARVEST_PROXY_CONFIG={}", proxy_config()),
                format!("SWE_HARVEST_PROXY_FILTER={}", allowlist.proxy_filter()),
            ]),
            user: Some("65534:65534".into()),
            labels: Some(labels),
            host_config: Some(HostConfig {
                network_mode: Some("bridge".into()),
                extra_hosts: Some(pinned_hosts(allowlist).await),
                cap_drop: Some(vec!["ALL".into()]),
                security_opt: Some(vec!["no-new-privileges".into()]),
                memory: Some(PROXY_MEMORY_BYTES),
                memory_swap: Some(PROXY_MEMORY_BYTES),
                pids_limit: Some(PROXY_PIDS),
                tmpfs: Some([("/tmp".to_string(), "size=1m".to_string())].into()),
                ..Default::default()
            }),
            ..Default::default()
        };
        let options = CreateContainerOptionsBuilder::default().name(&format!("{}-proxy", self.network)).build();
        let created = timed("create the build proxy", docker.create_container(Some(options), body)).await?;
        self.container = created.id;
        let connect = NetworkConnectRequest {
            container: self.container.clone(),
            endpoint_config: Some(EndpointSettings::default()),
        };
        timed("connect the build proxy", docker.connect_network(&self.network, connect)).await?;
        timed("start the build proxy", docker.start_container(&self.container, None)).await?;
        let inspected = timed("inspect the build proxy", docker.inspect_container(&self.container, None)).await?;
        let address = inspected
            .network_settings
            .and_then(|settings| settings.networks)
            .and_then(|networks| networks.get(&self.network).and_then(|endpoint| endpoint.ip_address.clone()))
            .filter(|address| !address.is_empty())
            .ok_or("the build proxy has no address on the build network")?;
        self.proxy_address = address;
        Ok(())
    }

    /// Connects to the proxy's port from a container on the build network, as a build
    /// step will: `None` when it connected, else the network's subnet. `Err` when the
    /// probe could not be run.
    async fn probe(
        &self,
        docker: &Docker,
        image: &str,
        mut labels: HashMap<String, String>,
    ) -> Result<Option<String>, String> {
        labels.insert(EGRESS_LABEL.into(), self.network.clone());
        let connect = format!("exec 3<>/dev/tcp/{}/{PROXY_PORT}", self.proxy_address);
        let body = ContainerCreateBody {
            image: Some(image.to_string()),
            cmd: Some(vec!["timeout".into(), PROBE_SECONDS.to_string(), "bash".into(), "-c".into(), connect]),
            user: Some("65534:65534".into()),
            labels: Some(labels),
            host_config: Some(HostConfig {
                network_mode: Some(self.network.clone()),
                cap_drop: Some(vec!["ALL".into()]),
                security_opt: Some(vec!["no-new-privileges".into()]),
                memory: Some(PROBE_MEMORY_BYTES),
                memory_swap: Some(PROBE_MEMORY_BYTES),
                pids_limit: Some(16),
                ..Default::default()
            }),
            ..Default::default()
        };
        let created = timed("create the build network's probe", docker.create_container(None, body)).await?;
        let connected = async {
            timed("start the build network's probe", docker.start_container(&created.id, None)).await?;
            let mut wait = docker.wait_container(&created.id, None);
            match tokio::time::timeout(CALL_TIMEOUT, wait.next()).await {
                Ok(Some(Ok(_))) => Ok(true),
                // The engine reports a non-zero exit as an error of the wait.
                Ok(Some(Err(bollard::errors::Error::DockerContainerWaitError { .. }))) => Ok(false),
                Ok(Some(Err(error))) => Err(format!("could not wait for the build network's probe: {error}")),
                Ok(None) | Err(_) => Err("could not wait for the build network's probe: no answer".to_string()),
            }
        }
        .await;
        super::docker::remove(docker, &created.id).await;
        if connected? {
            return Ok(None);
        }
        let inspected = timed("inspect the build network", docker.inspect_network(&self.network, None)).await?;
        let subnet = inspected
            .ipam
            .and_then(|ipam| ipam.config)
            .and_then(|configs| configs.into_iter().find_map(|config| config.subnet))
            .unwrap_or_else(|| format!("of {}", self.network));
        Ok(Some(subnet))
    }

    /// The network the build's steps run on.
    pub fn network(&self) -> &str {
        &self.network
    }

    /// The proxy's container (removed with the run if the build is cut short).
    pub fn container(&self) -> &str {
        &self.container
    }

    /// The build arguments that point every package client at the proxy.
    pub fn build_args(&self) -> HashMap<String, String> {
        let url = format!("http://{}:{PROXY_PORT}", self.proxy_address);
        ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"]
            .into_iter()
            .map(|name| (name.to_string(), url.clone()))
            .chain([("NO_PROXY".to_string(), String::new()), ("no_proxy".to_string(), String::new())])
            .collect()
    }

    /// Stops the proxy and removes it and the network; returns what its log says of
    /// the build.
    pub async fn close(self, docker: &Docker) -> Traffic {
        let mut log = String::new();
        if !self.container.is_empty() {
            let options = LogsOptionsBuilder::default().stdout(true).stderr(true).build();
            let mut stream = docker.logs(&self.container, Some(options));
            let read = tokio::time::timeout(CALL_TIMEOUT, async {
                while let Some(Ok(chunk)) = stream.next().await {
                    log.push_str(&String::from_utf8_lossy(&chunk.into_bytes()));
                }
            });
            if read.await.is_err() {
                tracing::warn!(container = %self.container, "could not read the whole build proxy's log");
            }
            super::docker::remove(docker, &self.container).await;
        }
        remove_network(docker, &self.network).await;
        Traffic::of_log(&log)
    }
}

/// The name of the network that holds `subnet` ([`hold_subnet`]).
pub fn holder_of(subnet: &str) -> String {
    format!("swe-harvest-unreachable-{}", subnet.replace(['/', ':'], "-"))
}

/// Makes a network of `subnet` that no container joins, so that the engine gives the
/// subnet to no other network. It has no run's label, so sweeps leave it, and it stays
/// across runs (the host's NAT rule does too); the warning says how to let it go. One
/// already there (another run's) is kept.
async fn hold_subnet(docker: &Docker, subnet: &str) {
    if !subnet.contains('/') {
        return; // the network's subnet could not be read
    }
    let name = holder_of(subnet);
    let network = NetworkCreateRequest {
        name: name.clone(),
        driver: Some("bridge".into()),
        internal: Some(true),
        options: Some([("com.docker.network.bridge.inhibit_ipv4".to_string(), "true".to_string())].into()),
        ipam: Some(Ipam {
            config: Some(vec![IpamConfig { subnet: Some(subnet.to_string()), ..Default::default() }]),
            ..Default::default()
        }),
        labels: Some([(HELD_SUBNET_LABEL.to_string(), subnet.to_string())].into()),
        ..Default::default()
    };
    match timed("hold the unreachable subnet", docker.create_network(network)).await {
        Ok(_) => tracing::warn!(
            network = %name,
            %subnet,
            "the subnet's containers could not reach each other (a NAT rule of this host); the network now holds it so \
             that no build network gets it. Once `iptables -t nat -S POSTROUTING` shows no rule for it, remove the \
             network (`docker network rm {name}`)"
        ),
        // Another run holds it already; anything else leaves the subnet to be passed
        // over again, which costs a probe's wait and nothing more.
        Err(message) if message.contains("already exists") => {}
        Err(message) => tracing::warn!(%subnet, %message, "could not hold the unreachable subnet"),
    }
}

async fn timed<T>(
    action: &str,
    future: impl std::future::Future<Output = Result<T, bollard::errors::Error>>,
) -> Result<T, String> {
    match tokio::time::timeout(CALL_TIMEOUT, future).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => Err(format!("could not {action}: {error}")),
        Err(_) => Err(format!("could not {action}: the engine did not answer within {}s", CALL_TIMEOUT.as_secs())),
    }
}

/// How long a build network's removal waits for the engine to take down what is on
/// it, at most.
const NETWORK_REMOVAL_ROUNDS: usize = 60;
const NETWORK_REMOVAL_PAUSE: Duration = Duration::from_millis(500);

/// Removes a build network with every container still on it. The engine refuses a
/// network with an endpoint ("has active endpoints"): a stopped build's step holds one
/// until its container is gone, and the engine may make the next step's container
/// before it has seen the build cancelled. So each round removes the network's
/// containers, then the network, until it is gone or the rounds run out.
async fn remove_network(docker: &Docker, name: &str) {
    let filters: HashMap<String, Vec<String>> = [("network".to_string(), vec![name.to_string()])].into();
    let mut refusal = String::new();
    for _ in 0..NETWORK_REMOVAL_ROUNDS {
        let options = ListContainersOptionsBuilder::default().all(true).filters(&filters).build();
        let on_it = timed("list the build network's containers", docker.list_containers(Some(options))).await;
        for id in on_it.unwrap_or_default().into_iter().filter_map(|container| container.id) {
            super::docker::remove(docker, &id).await;
        }
        match tokio::time::timeout(CALL_TIMEOUT, docker.remove_network(name)).await {
            Ok(Ok(())) | Ok(Err(bollard::errors::Error::DockerResponseServerError { status_code: 404, .. })) => return,
            Ok(Err(error)) => refusal = error.to_string(),
            Err(_) => refusal = format!("the engine did not answer within {}s", CALL_TIMEOUT.as_secs()),
        }
        tokio::time::sleep(NETWORK_REMOVAL_PAUSE).await;
    }
    tracing::warn!(network = %name, %refusal, "a build network is left; the next run's sweep removes it");
}

/// Removes the build proxies and networks of runs that are gone
/// ([`super::left_behind`], by their labels); returns how many of each.
pub async fn sweep(docker: &Docker) -> (usize, usize) {
    let is_left = super::left_behind;
    let filters: HashMap<String, Vec<String>> = [("label".to_string(), vec![EGRESS_LABEL.to_string()])].into();
    let mut containers = 0;
    let options = ListContainersOptionsBuilder::default().all(true).filters(&filters).build();
    for container in docker.list_containers(Some(options)).await.unwrap_or_default() {
        if let Some(id) = container.id.filter(|_| is_left(&container.labels.clone().unwrap_or_default())) {
            super::docker::remove(docker, &id).await;
            containers += 1;
        }
    }
    let mut networks = 0;
    let options = ListNetworksOptionsBuilder::default().filters(&filters).build();
    for network in docker.list_networks(Some(options)).await.unwrap_or_default() {
        if let Some(name) = network.name.filter(|_| is_left(&network.labels.clone().unwrap_or_default())) {
            remove_network(docker, &name).await;
            networks += 1;
        }
    }
    (containers, networks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_allowlist_holds_each_registry_its_companions_and_the_allowed_entries_once() {
        let mut registries = Registries {
            allow: vec!["https://npm.pkg.example.com:8443/".into(), "https://pypi.org".into()],
            ..Registries::default()
        };
        let allowlist = Allowlist::of(&registries).unwrap();
        let hosts: Vec<(&str, u16, bool)> =
            allowlist.destinations().iter().map(|d| (d.host.as_str(), d.port, d.plain_http)).collect();
        for expected in [
            ("pypi.org", 443, false),
            ("files.pythonhosted.org", 443, false),
            ("index.crates.io", 443, false),
            ("static.crates.io", 443, false),
            ("deb.debian.org", 80, true),
            ("npm.pkg.example.com", 8443, false),
        ] {
            assert!(hosts.contains(&expected), "{expected:?} in {hosts:?}");
        }
        assert_eq!(hosts.iter().filter(|(host, ..)| *host == "pypi.org").count(), 1, "{hosts:?}");

        // A mirror in place of PyPI serves its own files: the public files host goes.
        registries.pypi_index = "https://pypi.example.com/simple".into();
        let allowlist = Allowlist::of(&registries).unwrap();
        assert!(!allowlist.destinations().iter().any(|d| d.host == "files.pythonhosted.org"));
    }

    #[test]
    fn the_filter_allows_tunnels_to_listed_hosts_and_plain_http_only_where_the_url_says_http() {
        let registries = Registries { allow: vec!["https://a.example".into()], ..Registries::default() };
        let filter = Allowlist::of(&registries).unwrap().proxy_filter();
        let patterns: Vec<regex::Regex> = filter
            .lines()
            .filter(|line| !line.is_empty())
            .map(|line| regex::RegexBuilder::new(line).case_insensitive(true).build().unwrap())
            .collect();
        let allowed = |target: &str| patterns.iter().any(|pattern| pattern.is_match(target));
        assert!(allowed("pypi.org:443"));
        assert!(allowed("a.example:443"));
        assert!(allowed("http://deb.debian.org/debian/dists/bookworm/Release"));
        assert!(!allowed("http://pypi.org/simple/six/"), "no plain-HTTP downgrade");
        assert!(!allowed("pypi.org:80"));
        assert!(!allowed("evilpypi.org:443") && !allowed("pypi.org.evil.example:443"));
        assert!(!allowed("169.254.169.254:443") && !allowed("http://169.254.169.254/latest/meta-data/"));
        assert!(!allowed("http://deb.debian.org.evil.example/"));
    }

    #[test]
    fn refusals_are_read_from_the_proxy_log_once_each_and_diagnosed_with_the_key_that_allows_them() {
        let log = "NOTICE    Nov 26 17:09:43.777 [1]: Proxying refused on filtered url \"github.com:443\"\n\
                   NOTICE    Nov 26 17:09:43.815 [1]: Proxying refused on filtered url \"169.254.169.254:443\"\n\
                   CONNECT   Nov 26 17:09:43.816 [1]: Connect (file descriptor 5): 172.19.0.3\n\
                   NOTICE    Nov 26 17:09:43.821 [1]: Proxying refused on filtered url \"http://pypi.org/simple/six/\"\n\
                   NOTICE    Nov 26 17:09:44.000 [1]: Proxying refused on filtered url \"github.com:443\"\n";
        let refused = refused(log);
        assert_eq!(refused, ["github.com:443", "169.254.169.254:443", "http://pypi.org/simple/six/"]);
        let text = diagnosis(&refused);
        assert!(
            text.contains(
                "`github.com:443` (to let builds reach it: \"https://github.com\" in validate.registries.allow)"
            ),
            "{text}"
        );
        assert!(text.contains("\"http://pypi.org\" in validate.registries.allow"), "{text}");
        // A drop's detail tells of each rung: the destinations come back once each.
        let detail = format!("rung dated: {text}; more\nrung relaxed: {}", diagnosis(&refused[..1]));
        assert_eq!(refused_in(&detail), refused);
        assert!(refused_in("the build failed: no space left").is_empty());
    }

    #[test]
    fn what_the_proxy_let_through_is_read_from_its_request_lines_once_per_destination_without_the_refused() {
        let log = "CONNECT   Nov 26 21:44:50.235 [1]: Request (file descriptor 5): CONNECT pypi.org:443 HTTP/1.1\n\
                   CONNECT   Nov 26 21:44:50.238 [1]: Request (file descriptor 6): CONNECT github.com:443 HTTP/1.1\n\
                   NOTICE    Nov 26 21:44:50.238 [1]: Proxying refused on filtered url \"github.com:443\"\n\
                   CONNECT   Nov 26 21:44:51.000 [1]: Request (file descriptor 5): GET http://deb.debian.org/debian/dists/bookworm/InRelease HTTP/1.1\n\
                   CONNECT   Nov 26 21:44:51.100 [1]: Request (file descriptor 5): GET http://deb.debian.org/debian/pool/main/m/make.deb HTTP/1.1\n\
                   CONNECT   Nov 26 21:44:51.200 [1]: Request (file descriptor 7): CONNECT pypi.org:443 HTTP/1.1\n\
                   CONNECT   Nov 26 21:44:51.300 [1]: Request (file descriptor 8): CONNECT files.pythonhosted.org:443 HTTP/1.1\n";
        assert_eq!(let_through(log), ["pypi.org:443", "http://deb.debian.org", "files.pythonhosted.org:443"]);
        let traffic = Traffic::of_log(log);
        let sections = traffic.log_sections();
        assert!(sections.contains("--- let through by the build proxy ---\npypi.org:443\n"), "{sections}");
        assert!(sections.ends_with("--- refused by the build proxy ---\ngithub.com:443\n"), "{sections}");
        assert_eq!(traffic.at_limit_note(), None);
        assert_eq!(Traffic::default().log_sections(), "");
    }

    #[test]
    fn a_proxy_at_its_connection_limit_is_said_in_the_build_log() {
        // tinyproxy 1.11's words, as a build of axios's lockfile logged them.
        let log = "CONNECT   Nov 27 18:17:19.700 [1]: Request (file descriptor 1058): CONNECT registry.npmjs.org:443 HTTP/1.1\n\
                   WARNING   Nov 27 18:17:19.766 [1]: Maximum number of connections reached. Refusing new connections.\n\
                   WARNING   Nov 27 18:17:29.218 [1]: Maximum number of connections reached. Refusing new connections.\n";
        let traffic = Traffic::of_log(log);
        assert_eq!(traffic.times_at_limit, 2);
        let sections = traffic.log_sections();
        assert!(sections.contains(&format!("reached its {PROXY_MAX_CLIENTS} connections 2 time(s)")), "{sections}");
    }

    #[test]
    fn a_url_without_a_host_or_of_another_scheme_is_refused_with_its_key() {
        let registries = Registries { allow: vec!["https://".into()], ..Registries::default() };
        let error = Allowlist::of(&registries).unwrap_err();
        assert!(error.contains("validate.registries.allow"), "{error}");
        let registries = Registries { allow: vec!["ftp://files.example".into()], ..Registries::default() };
        assert!(Allowlist::of(&registries).unwrap_err().contains("http(s) only"));
    }
}
