//! The review page's HTTP side (axum): the embedded page (`page/`), and a small JSON
//! API that the page calls:
//!
//! - `GET /api/session`: where the tasks come from, the reviewer, whether the page is
//!   read-only and why, the funnel's figures, the reject reasons;
//! - `GET /api/tasks`: every task's summary (what the list filters and sorts on, and
//!   its current decision);
//! - `GET /api/tasks/{id}`: one task whole (issue rendered, patches, test lists,
//!   validation runs, environment, quality record, decisions);
//! - `GET /api/tasks/{id}/runs/{attempt}/log`: that validation run's log;
//! - `PUT /api/tasks/{id}/decision`: records a decision; says which one it replaced
//!   when that one was made elsewhere after the page last looked;
//! - `GET /api/changes?since=R`: the decisions written after revision R.
//!
//! Every answer carries a Content-Security-Policy that lets the page run only its own
//! script and load nothing from elsewhere. On loopback, requests must name the
//! server's own host (no DNS rebinding), and writes from another origin are refused.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::net::{IpAddr, TcpListener};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{Path, Query, Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, put};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};

use super::quality::{self, QualityRecord, RejectReason};
use super::source::ReviewTask;
use super::{ReviewError, ReviewSettings, markdown};
use crate::lock::{DataDirLock, LockError};
use crate::model::review::{Decision, ReviewDecision};
use crate::model::{RunPhase, TestStatus};
use crate::store::reviews::{self, NewDecision};
use crate::store::{StageFunnel, Store, validation};

const INDEX_HTML: &str = include_str!("page/index.html");
const REVIEW_JS: &str = include_str!("page/review.js");
const REVIEW_CSS: &str = include_str!("page/review.css");

const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; \
     connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// The longest note accepted, in characters.
const MAX_NOTE_CHARS: usize = 20_000;
/// How long a decision waits for another review process's write before the page is
/// told that the data dir is taken.
const LOCK_PATIENCE: Duration = Duration::from_secs(2);

/// A review server, bound and ready to serve.
pub struct Session {
    shared: Arc<Shared>,
    listener: TcpListener,
    url: String,
}

struct Shared {
    tasks: Vec<ReviewTask>,
    index: HashMap<String, usize>,
    store: Mutex<Store>,
    settings: ReviewSettings,
    funnel: Vec<StageFunnel>,
    /// Why decisions cannot be written now, if they cannot.
    read_only: Mutex<Option<String>>,
    /// The `Host` values accepted; `None` when listening beyond loopback.
    allowed_hosts: Option<Vec<String>>,
}

impl Session {
    pub(super) fn new(
        store: Store,
        settings: ReviewSettings,
        tasks: Vec<ReviewTask>,
        listener: TcpListener,
    ) -> Result<Session, ReviewError> {
        let address = listener.local_addr().map_err(|source| ReviewError::Listen {
            address: std::net::SocketAddr::new(settings.listen, settings.port.unwrap_or(0)),
            source,
        })?;
        let port = address.port();
        let host = match settings.listen {
            IpAddr::V6(ip) => format!("[{ip}]"),
            IpAddr::V4(ip) => ip.to_string(),
        };
        let url = format!("http://{host}:{port}/");
        let allowed_hosts = settings.listen.is_loopback().then(|| {
            vec![
                format!("{host}:{port}"),
                format!("localhost:{port}"),
                format!("127.0.0.1:{port}"),
                format!("[::1]:{port}"),
            ]
        });
        let funnel = store.funnel(&[])?.total;
        let index = tasks.iter().enumerate().map(|(position, task)| (task.row.instance_id.clone(), position)).collect();
        let read_only = super::read_only_reason(&settings.data_dir);
        let shared = Shared {
            tasks,
            index,
            store: Mutex::new(store),
            settings,
            funnel,
            read_only: Mutex::new(read_only),
            allowed_hosts,
        };
        Ok(Session { shared: Arc::new(shared), listener, url })
    }

    /// The page's address, as printed.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// How many tasks the page shows.
    pub fn task_count(&self) -> usize {
        self.shared.tasks.len()
    }

    /// Why the page opens read-only, if it does.
    pub fn read_only_reason(&self) -> Option<String> {
        self.shared.read_only.lock().expect("not poisoned").clone()
    }

    /// Serves until `shutdown` completes.
    pub async fn serve(self, shutdown: impl Future<Output = ()> + Send + 'static) -> Result<(), ReviewError> {
        self.listener.set_nonblocking(true).map_err(ReviewError::Serve)?;
        let listener = tokio::net::TcpListener::from_std(self.listener).map_err(ReviewError::Serve)?;
        let router = router(self.shared);
        axum::serve(listener, router).with_graceful_shutdown(shutdown).await.map_err(ReviewError::Serve)
    }
}

fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/", get(|| async { asset("text/html; charset=utf-8", INDEX_HTML) }))
        .route("/review.js", get(|| async { asset("text/javascript; charset=utf-8", REVIEW_JS) }))
        .route("/review.css", get(|| async { asset("text/css; charset=utf-8", REVIEW_CSS) }))
        .route("/api/session", get(session))
        .route("/api/tasks", get(task_list))
        .route("/api/tasks/{id}", get(task_detail))
        .route("/api/tasks/{id}/runs/{attempt}/log", get(run_log))
        .route("/api/tasks/{id}/decision", put(decide))
        .route("/api/changes", get(changes))
        .fallback(|| async { ApiError::new(StatusCode::NOT_FOUND, "no such page") })
        .layer(middleware::from_fn_with_state(shared.clone(), guard))
        .with_state(shared)
}

fn asset(content_type: &'static str, body: &'static str) -> Response {
    ([(header::CONTENT_TYPE, content_type), (header::CACHE_CONTROL, "no-cache")], body).into_response()
}

/// Refuses requests for another host (DNS rebinding) and writes from another origin,
/// and sets the security headers of every answer.
async fn guard(State(shared): State<Arc<Shared>>, request: Request, next: Next) -> Response {
    let host = request.headers().get(header::HOST).and_then(|host| host.to_str().ok()).unwrap_or("").to_string();
    if let Some(allowed) = &shared.allowed_hosts {
        if !allowed.contains(&host) {
            return ApiError::new(StatusCode::FORBIDDEN, format!("this server answers for {} only", allowed[0]))
                .into_response();
        }
    }
    if request.method() != Method::GET && request.method() != Method::HEAD {
        let origin = request.headers().get(header::ORIGIN).and_then(|origin| origin.to_str().ok());
        if origin.is_some_and(|origin| origin != format!("http://{host}")) {
            return ApiError::new(StatusCode::FORBIDDEN, "writes come from the review page only").into_response();
        }
    }
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CONTENT_SECURITY_POLICY));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.entry(header::CACHE_CONTROL).or_insert(HeaderValue::from_static("no-store"));
    response
}

/// An error answer: a status and a sentence that the page shows as it is.
#[derive(Debug)]
struct ApiError {
    status: StatusCode,
    message: String,
}

impl ApiError {
    fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError { status, message: message.into() }
    }

    fn unknown_task(id: &str) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, format!("there is no task `{id}` in this review"))
    }

    fn internal(error: &dyn std::error::Error) -> ApiError {
        tracing::error!(error = %crate::error_chain(error), "review request failed");
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, crate::error_chain(error))
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(serde_json::json!({ "error": self.message }))).into_response()
    }
}

/// Runs store work off the async threads.
async fn blocking<T: Send + 'static>(
    shared: &Arc<Shared>,
    work: impl FnOnce(&Shared) -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    let shared = shared.clone();
    tokio::task::spawn_blocking(move || work(&shared))
        .await
        .map_err(|error| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, error.to_string()))?
}

impl Shared {
    fn task(&self, id: &str) -> Result<&ReviewTask, ApiError> {
        self.index.get(id).map(|&position| &self.tasks[position]).ok_or_else(|| ApiError::unknown_task(id))
    }

    fn store(&self) -> std::sync::MutexGuard<'_, Store> {
        self.store.lock().expect("not poisoned")
    }

    /// Looks again at whether another process owns the data dir.
    fn refresh_read_only(&self) -> Option<String> {
        let reason = super::read_only_reason(&self.settings.data_dir);
        *self.read_only.lock().expect("not poisoned") = reason.clone();
        reason
    }
}

#[derive(Serialize)]
struct SessionInfo<'a> {
    source: String,
    reviewer: &'a str,
    read_only: Option<String>,
    revision: i64,
    tasks: usize,
    funnel: &'a [StageFunnel],
    reject_reasons: Vec<RejectReason>,
}

async fn session(State(shared): State<Arc<Shared>>) -> Result<Response, ApiError> {
    blocking(&shared, |shared| {
        let revision = reviews::latest_revision(shared.store().connection()).map_err(|e| ApiError::internal(&e))?;
        Ok(Json(SessionInfo {
            source: shared.settings.source.describe(),
            reviewer: &shared.settings.reviewer,
            read_only: shared.refresh_read_only(),
            revision,
            tasks: shared.tasks.len(),
            funnel: &shared.funnel,
            reject_reasons: quality::reject_reasons(),
        })
        .into_response())
    })
    .await
}

/// One row of the list.
#[derive(Serialize)]
struct TaskSummary<'a> {
    id: &'a str,
    repo: &'a str,
    language: &'a str,
    month: &'a str,
    created_at: &'a str,
    hash: &'a str,
    fail_to_pass: usize,
    pass_to_pass: usize,
    flaky: usize,
    difficulty: Option<&'a str>,
    score: Option<f64>,
    verdict: Option<&'a str>,
    flags: Vec<&'a str>,
    /// Probe's mutation score (`None`: not probed, or no viable mutant).
    mutation_score: Option<f64>,
    /// The decision on this content of the task.
    decision: Option<ReviewDecision>,
    /// The latest decision on an earlier content, when there is none on this one: the
    /// task needs review again.
    earlier: Option<ReviewDecision>,
}

async fn task_list(State(shared): State<Arc<Shared>>) -> Result<Response, ApiError> {
    blocking(&shared, |shared| {
        let decisions = reviews::all(shared.store().connection()).map_err(|e| ApiError::internal(&e))?;
        let mut by_instance: HashMap<&str, Vec<&ReviewDecision>> = HashMap::new();
        for decision in &decisions {
            by_instance.entry(decision.instance_id.as_str()).or_default().push(decision);
        }
        let summaries: Vec<TaskSummary<'_>> = shared
            .tasks
            .iter()
            .map(|task| {
                let known = by_instance.get(task.row.instance_id.as_str());
                let current = known.and_then(|known| known.iter().find(|d| d.content_hash == task.content_hash));
                let earlier = match current {
                    Some(_) => None,
                    None => known.and_then(|known| known.iter().max_by_key(|d| d.revision)),
                };
                let quality = task.quality.as_ref();
                TaskSummary {
                    id: &task.row.instance_id,
                    repo: &task.row.repo,
                    language: &task.language,
                    month: task.month(),
                    created_at: &task.row.created_at,
                    hash: &task.content_hash,
                    fail_to_pass: task.fail_to_pass.len(),
                    pass_to_pass: task.pass_to_pass.len(),
                    flaky: task.flaky_tests.len(),
                    difficulty: quality.and_then(|quality| quality.difficulty.as_deref()),
                    score: quality.and_then(|quality| quality.score),
                    verdict: quality.and_then(|quality| quality.verdict.as_deref()),
                    flags: {
                        let mut flags: Vec<&str> = quality
                            .map(|quality| quality.flags.iter().map(|flag| flag.code.as_str()).collect())
                            .unwrap_or_default();
                        // Probe's survivors are `weak_tests` whether or not the screen ran since.
                        let weak = crate::screen::FlagCode::WeakTests.as_str();
                        if task.weak_tests() && !flags.contains(&weak) {
                            flags.push(weak);
                        }
                        flags
                    },
                    mutation_score: task.probe.as_ref().and_then(|probe| probe.mutation_score),
                    decision: current.map(|decision| (*decision).clone()),
                    earlier: earlier.map(|decision| (*decision).clone()),
                }
            })
            .collect();
        Ok(Json(summaries).into_response())
    })
    .await
}

/// One validation run as the page shows it.
#[derive(Serialize)]
struct RunView {
    attempt: u32,
    phase: RunPhase,
    exit_code: Option<i64>,
    timed_out: bool,
    duration_secs: f64,
    results_source: String,
    tests: BTreeMap<String, TestStatus>,
    /// The run's log on this server, when the data dir still has it.
    log: Option<String>,
}

#[derive(Serialize, Default)]
struct EnvironmentView {
    image: Option<String>,
    rung: Option<String>,
    runtime: Option<String>,
    ecosystem: Option<String>,
    test_command: Option<String>,
    spec_source: Option<String>,
}

#[derive(Serialize)]
struct TaskDetail<'a> {
    id: &'a str,
    repo: &'a str,
    base_commit: &'a str,
    created_at: &'a str,
    version: &'a str,
    environment_setup_commit: &'a str,
    language: &'a str,
    hash: &'a str,
    issue_html: String,
    hints_html: String,
    patch: &'a str,
    test_patch: &'a str,
    fail_to_pass: &'a [String],
    pass_to_pass: &'a [String],
    flaky_tests: &'a [String],
    validation_runs: u32,
    runs: Vec<RunView>,
    environment: EnvironmentView,
    quality: Option<&'a QualityRecord>,
    probe: Option<&'a crate::model::probe::ProbeOutcome>,
    decision: Option<ReviewDecision>,
    /// Every decision on the task, newest first, this content's included.
    history: Vec<ReviewDecision>,
}

async fn task_detail(State(shared): State<Arc<Shared>>, Path(id): Path<String>) -> Result<Response, ApiError> {
    blocking(&shared, move |shared| {
        let task = shared.task(&id)?;
        let (runs, spec, history) = {
            let store = shared.store();
            let connection = store.connection();
            let runs = validation::runs(connection, &id).map_err(|e| ApiError::internal(&e))?;
            let spec = match &task.image {
                Some(image) => {
                    validation::environment_spec_for_image(connection, image).map_err(|e| ApiError::internal(&e))?
                }
                None => None,
            };
            let history = reviews::of_instance(connection, &id).map_err(|e| ApiError::internal(&e))?;
            (runs, spec, history)
        };
        let log_dir = shared.settings.data_dir.join("logs").join("validate").join(&id);
        let runs = runs
            .into_iter()
            .map(|run| RunView {
                log: log_dir
                    .join(format!("run-{}.log", run.attempt))
                    .exists()
                    .then(|| format!("/api/tasks/{id}/runs/{}/log", run.attempt)),
                attempt: run.attempt,
                phase: run.phase,
                exit_code: run.exit_code,
                timed_out: run.timed_out,
                duration_secs: run.duration_secs,
                results_source: run.results_source,
                tests: run.tests,
            })
            .collect();
        let environment = EnvironmentView {
            image: task.image.clone(),
            rung: task.environment_rung.clone().or_else(|| spec.as_ref().map(|spec| spec.rung.as_str().to_string())),
            runtime: spec.as_ref().map(|spec| spec.runtime.clone()),
            ecosystem: spec.as_ref().map(|spec| spec.ecosystem.clone()).filter(|name| !name.is_empty()),
            test_command: spec.as_ref().map(|spec| spec.test_command.clone()),
            spec_source: spec.as_ref().map(|spec| spec.source.clone()).filter(|source| !source.is_empty()),
        };
        let decision = history.iter().find(|decision| decision.content_hash == task.content_hash).cloned();
        Ok(Json(TaskDetail {
            id: &task.row.instance_id,
            repo: &task.row.repo,
            base_commit: &task.row.base_commit,
            created_at: &task.row.created_at,
            version: &task.row.version,
            environment_setup_commit: &task.row.environment_setup_commit,
            language: &task.language,
            hash: &task.content_hash,
            issue_html: markdown::render(&task.row.problem_statement),
            hints_html: markdown::render(&task.row.hints_text),
            patch: &task.row.patch,
            test_patch: &task.row.test_patch,
            fail_to_pass: &task.fail_to_pass,
            pass_to_pass: &task.pass_to_pass,
            flaky_tests: &task.flaky_tests,
            validation_runs: task.validation_runs,
            runs,
            environment,
            quality: task.quality.as_ref(),
            probe: task.probe.as_ref(),
            decision,
            history,
        })
        .into_response())
    })
    .await
}

async fn run_log(
    State(shared): State<Arc<Shared>>,
    Path((id, attempt)): Path<(String, u32)>,
) -> Result<Response, ApiError> {
    blocking(&shared, move |shared| {
        // Only ids of the session's tasks reach the path, and they passed `check_id`.
        let task = shared.task(&id)?;
        crate::model::ids::check_id("instance_id", &task.row.instance_id)
            .map_err(|error| ApiError::new(StatusCode::BAD_REQUEST, error.to_string()))?;
        let relative = format!("logs/validate/{id}/run-{attempt}.log");
        let text = fs_err::read(shared.settings.data_dir.join(&relative)).map_err(|_| {
            ApiError::new(StatusCode::NOT_FOUND, format!("the data dir has no `{relative}` (run {attempt} of {id})"))
        })?;
        Ok(([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], text).into_response())
    })
    .await
}

#[derive(Debug, Deserialize)]
struct DecisionRequest {
    decision: String,
    #[serde(default)]
    reason: Option<String>,
    #[serde(default)]
    note: String,
    #[serde(default)]
    seconds_spent: f64,
    /// The revision of the decision the page showed when the reviewer decided (none
    /// when it showed none): another one found there was made elsewhere.
    #[serde(default)]
    seen_revision: Option<i64>,
}

#[derive(Serialize)]
struct DecisionAnswer {
    decision: ReviewDecision,
    /// The decision this one replaced, when it was made elsewhere after the page looked.
    changed_elsewhere: Option<ReviewDecision>,
}

async fn decide(
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
    Json(request): Json<DecisionRequest>,
) -> Result<Response, ApiError> {
    let bad = |message: String| ApiError::new(StatusCode::BAD_REQUEST, message);
    let decision: Decision =
        request.decision.parse().map_err(|error: crate::model::review::DecisionError| bad(error.to_string()))?;
    let reason = match decision {
        Decision::Reject => match request.reason.as_deref().filter(|reason| !reason.is_empty()) {
            Some(reason) if quality::is_reject_reason(reason) => Some(reason.to_string()),
            Some(reason) => return Err(bad(format!("`{reason}` is not a reject reason"))),
            None => return Err(bad("a reject needs a reason".to_string())),
        },
        Decision::Keep | Decision::NeedsWork => None,
    };
    if request.note.chars().count() > MAX_NOTE_CHARS {
        return Err(bad(format!("the note is longer than {MAX_NOTE_CHARS} characters")));
    }
    let seconds_spent =
        if request.seconds_spent.is_finite() { request.seconds_spent.clamp(0.0, 86_400.0) } else { 0.0 };
    blocking(&shared, move |shared| {
        let task = shared.task(&id)?;
        let _lock = take_lock(shared)?;
        let new = NewDecision {
            instance_id: &task.row.instance_id,
            content_hash: &task.content_hash,
            decision,
            reason: reason.as_deref(),
            note: &request.note,
            reviewer: &shared.settings.reviewer,
            seconds_spent,
        };
        let saved = shared.store().transaction(|tx| reviews::save(tx, &new)).map_err(|e| ApiError::internal(&e))?;
        let changed_elsewhere = saved.previous.filter(|previous| Some(previous.revision) != request.seen_revision);
        tracing::info!(instance_id = %id, decision = %decision, "review decision recorded");
        Ok(Json(DecisionAnswer { decision: saved.decision, changed_elsewhere }).into_response())
    })
    .await
}

/// The data dir's lock for one write; another review process's write is waited for a
/// moment, a stage that owns the data dir makes the page read-only.
fn take_lock(shared: &Shared) -> Result<DataDirLock, ApiError> {
    let deadline = Instant::now() + LOCK_PATIENCE;
    loop {
        match DataDirLock::acquire(&shared.settings.data_dir, &shared.settings.command_line) {
            Ok(lock) => {
                *shared.read_only.lock().expect("not poisoned") = None;
                return Ok(lock);
            }
            Err(LockError::Held { .. }) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(25)),
            Err(error) => {
                let reason = format!("read-only: {error}; the decision was not saved");
                *shared.read_only.lock().expect("not poisoned") = Some(reason.clone());
                return Err(ApiError::new(StatusCode::CONFLICT, reason));
            }
        }
    }
}

#[derive(Deserialize)]
struct ChangesQuery {
    since: i64,
}

#[derive(Serialize)]
struct Changes {
    revision: i64,
    decisions: Vec<ReviewDecision>,
    read_only: Option<String>,
}

async fn changes(State(shared): State<Arc<Shared>>, Query(query): Query<ChangesQuery>) -> Result<Response, ApiError> {
    blocking(&shared, move |shared| {
        let decisions = {
            let store = shared.store();
            reviews::since(store.connection(), query.since).map_err(|e| ApiError::internal(&e))?
        };
        let revision = decisions.iter().map(|decision| decision.revision).max().unwrap_or(query.since);
        Ok(Json(Changes { revision, decisions, read_only: shared.refresh_read_only() }).into_response())
    })
    .await
}
