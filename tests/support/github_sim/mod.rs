//! A GitHub API simulator: a real HTTP/1.1 server on 127.0.0.1 that serves the REST
//! endpoints the crawl and discover stages use, and the GraphQL endpoint
//! (`POST /graphql`, see `graphql.rs`), from fixtures in GitHub's JSON shapes, with GitHub's manners (Link pagination, `per_page` capped at 100,
//! ETag / If-None-Match -> 304, `X-RateLimit-*` headers per token) and faults chosen
//! per test: secondary limits, primary exhaustion with a reset time, 5xx, slow
//! answers, invalid JSON, dropped connections, and for GraphQL exhausted points
//! (`RATE_LIMITED` in a 200 answer), errors in a 200 body, the node limit and
//! timeouts of big queries. Faults match GraphQL queries by `/graphql#Operation`.
//! GraphQL queries are validated against GitHub's public schema when its file is
//! there (`schema.rs`) and refused as GitHub refuses them.
//! It counts requests per endpoint, per URL (per GraphQL operation and variables)
//! and per status, GraphQL points, and the queries checked against the schema and
//! refused (also served at `GET /_sim/stats`).
//!
//! Used by the integration tests through `mod support`, and runnable on its own as
//! the `github-sim` binary (`main.rs` beside this file) for the demo and benchmark.

pub mod data;
mod graphql;
mod routes;
pub mod schema;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;

pub use data::{Fixtures, GenerateSpec, generate};
pub use schema::GithubSchema;

/// A fault injected into matching requests.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Fault {
    /// Applies to requests whose path and query contain this text (`""`: all).
    #[serde(default)]
    pub path_contains: String,
    pub kind: FaultKind,
    /// Let this many matching requests through first.
    #[serde(default)]
    pub skip: u32,
    /// Apply to this many matching requests, then stop.
    #[serde(default = "one")]
    pub times: u32,
    #[serde(skip)]
    seen: u32,
    #[serde(skip)]
    applied: u32,
}

fn one() -> u32 {
    1
}

impl Fault {
    pub fn new(path_contains: &str, kind: FaultKind) -> Fault {
        Fault { path_contains: path_contains.to_string(), kind, skip: 0, times: 1, seen: 0, applied: 0 }
    }
    pub fn times(mut self, times: u32) -> Fault {
        self.times = times;
        self
    }
    pub fn skip(mut self, skip: u32) -> Fault {
        self.skip = skip;
        self
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "snake_case", tag = "type")]
pub enum FaultKind {
    /// 403 with `Retry-After: secs` and the secondary-limit message.
    SecondaryRetryAfter { secs: u64 },
    /// 403 with the secondary-limit message and no `Retry-After`.
    SecondaryMessage,
    /// 429 with `Retry-After: secs`.
    TooManyRequests { secs: u64 },
    /// The token's primary limit is exhausted until `reset_in_secs` from now:
    /// 403 with `X-RateLimit-Remaining: 0` for every request with that token.
    PrimaryExhausted { reset_in_secs: u64 },
    /// An answer with this status (500, 502, ...).
    Status { status: u16 },
    /// The answer comes this much later (then normally).
    Slow { millis: u64 },
    /// 200 with a truncated JSON body.
    InvalidJson,
    /// The connection is closed without an answer.
    Disconnect,
    /// GraphQL: the token's points are used up until `reset_in_secs` from now:
    /// 200 with a `RATE_LIMITED` error and `X-RateLimit-Remaining: 0`.
    GraphqlRateLimited { reset_in_secs: u64 },
    /// GraphQL: 200 with `data: null` and this error (`type` `kind`).
    GraphqlErrors { kind: String, message: String },
}

/// Request counts.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Stats {
    pub total: u64,
    /// Endpoint name -> status -> count (status 0: connection dropped).
    pub by_endpoint: BTreeMap<String, BTreeMap<u16, u64>>,
    /// Path and query -> status -> count. GraphQL queries are keyed
    /// `/graphql#Operation {variables}`.
    pub by_url: BTreeMap<String, BTreeMap<u16, u64>>,
    /// GraphQL operation name -> queries answered 200 with data.
    pub by_operation: BTreeMap<String, u64>,
    /// GraphQL points charged.
    pub points: u64,
    /// GraphQL queries validated against GitHub's schema (0 without its file).
    pub schema_checked: u64,
    /// GraphQL queries GitHub would refuse: `Operation: why`.
    pub refused: Vec<String>,
}

impl Stats {
    pub fn count(&self, endpoint: &str, status: u16) -> u64 {
        self.by_endpoint.get(endpoint).and_then(|statuses| statuses.get(&status)).copied().unwrap_or(0)
    }
    pub fn endpoint_total(&self, endpoint: &str) -> u64 {
        self.by_endpoint.get(endpoint).map(|statuses| statuses.values().sum()).unwrap_or(0)
    }
    pub fn status_total(&self, status: u16) -> u64 {
        self.by_endpoint.values().filter_map(|statuses| statuses.get(&status)).sum()
    }
    /// URLs answered 200 more than once.
    pub fn urls_fetched_twice(&self) -> Vec<String> {
        self.by_url
            .iter()
            .filter(|(_, statuses)| statuses.get(&200).copied().unwrap_or(0) > 1)
            .map(|(url, _)| url.clone())
            .collect()
    }
}

#[derive(Debug, Clone)]
struct TokenState {
    limit: u64,
    remaining: u64,
    reset: i64,
    exhausted_until: i64,
}

#[derive(Debug, Default)]
pub(crate) struct SimState {
    fixtures: Fixtures,
    faults: Vec<Fault>,
    stats: Stats,
    tokens: BTreeMap<String, TokenState>,
    tokens_seen: BTreeMap<String, u64>,
    delay: Duration,
    /// Bumped by every change of the fixtures.
    generation: u64,
    /// The issue-shaped entries of each repository's pull requests, derived once per generation.
    pull_entries: BTreeMap<String, Vec<serde_json::Value>>,
    pull_entries_generation: Option<u64>,
    /// Sorted listings by URL without paging parameters, for one generation.
    listings: BTreeMap<String, Result<Vec<serde_json::Value>, (u16, &'static str)>>,
    listings_generation: Option<u64>,
    /// Requests per hour of every token (GitHub's 5,000, or 60 without a token).
    token_limit: Option<u64>,
    /// GraphQL queries that may return more nodes fail with `MAX_NODE_LIMIT_EXCEEDED`.
    graphql_node_limit: Option<u64>,
    /// GraphQL queries that may return more nodes time out.
    graphql_timeout_above_nodes: Option<u64>,
    /// The schema GraphQL queries are validated against.
    schema: SchemaChoice,
    /// Comments by issue for the GraphQL executor, for one generation.
    comment_index: graphql::CommentIndex,
    comment_index_generation: Option<u64>,
}

/// Which GitHub schema validates the GraphQL queries.
#[derive(Debug, Clone, Default)]
pub(crate) enum SchemaChoice {
    /// The shared copy, when its file is there, read on the first query.
    #[default]
    Shared,
    Given(Arc<GithubSchema>),
}

impl SchemaChoice {
    pub(crate) fn schema(&self) -> Option<Arc<GithubSchema>> {
        match self {
            SchemaChoice::Shared => GithubSchema::shared(),
            SchemaChoice::Given(schema) => Some(schema.clone()),
        }
    }
}

/// A running simulator; stops when dropped.
pub struct GithubSim {
    url: String,
    state: Arc<Mutex<SimState>>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl GithubSim {
    /// Starts on a free port of 127.0.0.1.
    pub fn start(fixtures: Fixtures) -> GithubSim {
        GithubSim::start_on(fixtures, 0).expect("the simulator starts")
    }

    pub fn start_on(fixtures: Fixtures, port: u16) -> std::io::Result<GithubSim> {
        let state = Arc::new(Mutex::new(SimState { fixtures, ..SimState::default() }));
        let listener = std::net::TcpListener::bind(("127.0.0.1", port))?;
        listener.set_nonblocking(true)?;
        let url = format!("http://{}", listener.local_addr()?);
        let (shutdown, stop) = tokio::sync::oneshot::channel();
        let thread_state = state.clone();
        let thread = std::thread::Builder::new().name("github-sim".into()).spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a tokio runtime");
            runtime.block_on(serve(listener, thread_state, stop));
        })?;
        Ok(GithubSim { url, state, shutdown: Some(shutdown), thread: Some(thread) })
    }

    /// The API root, `http://127.0.0.1:PORT`.
    pub fn url(&self) -> &str {
        &self.url
    }

    pub fn add_fault(&self, fault: Fault) {
        self.state.lock().unwrap().faults.push(fault);
    }

    pub fn clear_faults(&self) {
        self.state.lock().unwrap().faults.clear();
    }

    /// Every answer comes this much later.
    pub fn set_delay(&self, delay: Duration) {
        self.state.lock().unwrap().delay = delay;
    }

    pub fn update(&self, change: impl FnOnce(&mut Fixtures)) {
        let mut state = self.state.lock().unwrap();
        change(&mut state.fixtures);
        state.generation += 1;
    }

    /// Every token (seen from now on) gets this many requests an hour.
    pub fn set_token_limit(&self, limit: u64) {
        self.state.lock().unwrap().token_limit = Some(limit);
    }

    /// GitHub's node limit (500,000) lowered, so that big queries fail with it.
    pub fn set_graphql_node_limit(&self, nodes: u64) {
        self.state.lock().unwrap().graphql_node_limit = Some(nodes);
    }

    /// Validates GraphQL queries against this schema instead of the shared one.
    pub fn set_schema(&self, schema: Arc<GithubSchema>) {
        self.state.lock().unwrap().schema = SchemaChoice::Given(schema);
    }

    /// GraphQL queries that may return more than `nodes` nodes time out.
    pub fn set_graphql_timeout_above_nodes(&self, nodes: u64) {
        self.state.lock().unwrap().graphql_timeout_above_nodes = Some(nodes);
    }

    pub fn stats(&self) -> Stats {
        self.state.lock().unwrap().stats.clone()
    }

    pub fn reset_stats(&self) {
        self.state.lock().unwrap().stats = Stats::default();
    }

    /// Requests per bearer token (`anonymous` without one).
    pub fn tokens_seen(&self) -> BTreeMap<String, u64> {
        self.state.lock().unwrap().tokens_seen.clone()
    }
}

impl Drop for GithubSim {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

async fn serve(
    listener: std::net::TcpListener,
    state: Arc<Mutex<SimState>>,
    mut stop: tokio::sync::oneshot::Receiver<()>,
) {
    let listener = TcpListener::from_std(listener).expect("a tokio listener");
    loop {
        tokio::select! {
            _ = &mut stop => break,
            accepted = listener.accept() => {
                if let Ok((stream, _)) = accepted {
                    tokio::spawn(connection(stream, state.clone()));
                }
            }
        }
    }
}

/// What to do with one request.
pub(crate) enum Action {
    Respond { status: u16, headers: Vec<(String, String)>, body: String },
    Disconnect,
}

/// One keep-alive connection: requests in turn until the client closes it.
async fn connection(stream: tokio::net::TcpStream, state: Arc<Mutex<SimState>>) {
    let (reader, mut writer) = stream.into_split();
    let mut reader = BufReader::new(reader);
    loop {
        let mut request_line = String::new();
        match reader.read_line(&mut request_line).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let mut headers: BTreeMap<String, String> = BTreeMap::new();
        loop {
            let mut line = String::new();
            match reader.read_line(&mut line).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':') {
                headers.insert(name.trim().to_ascii_lowercase(), value.trim().to_string());
            }
        }
        let length: usize = headers.get("content-length").and_then(|v| v.parse().ok()).unwrap_or(0);
        let mut body = vec![0; length];
        if length > 0 && reader.read_exact(&mut body).await.is_err() {
            return;
        }
        let body = String::from_utf8_lossy(&body).into_owned();
        let mut parts = request_line.split_whitespace();
        let method = parts.next().unwrap_or("").to_string();
        let target = parts.next().unwrap_or("/").to_string();
        let (delay, action) = {
            let mut state = state.lock().unwrap();
            routes::respond(&mut state, &method, &target, &headers, &body)
        };
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
        match action {
            Action::Disconnect => return,
            Action::Respond { status, headers: response_headers, body } => {
                let mut head = format!("HTTP/1.1 {status} {}\r\n", reason(status));
                for (name, value) in &response_headers {
                    head.push_str(&format!("{name}: {value}\r\n"));
                }
                head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
                if writer.write_all(head.as_bytes()).await.is_err() || writer.write_all(body.as_bytes()).await.is_err()
                {
                    return;
                }
                let _ = writer.flush().await;
            }
        }
        if headers.get("connection").is_some_and(|value| value.eq_ignore_ascii_case("close")) {
            return;
        }
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        401 => "Unauthorized",
        304 => "Not Modified",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        _ => "Status",
    }
}
