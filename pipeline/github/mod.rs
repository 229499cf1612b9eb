//! The GitHub client, REST and GraphQL: authentication, token rotation, our own rate
//! limiter, GitHub's rate-limit signals, retries with backoff, conditional requests
//! and pagination links. Every GET of the pipeline goes through
//! [`GithubClient::get_json`], every GraphQL query through [`GithubClient::graphql`]
//! (a POST to the endpoint that [`graphql::endpoint`] derives from the API root);
//! both share one retry loop.
//!
//! It is built on octocrab's HTTP stack (hyper) through its raw `_get_with_headers`,
//! so that status codes and headers (ETag, `X-RateLimit-*`, `Retry-After`, `Link`)
//! are ours to read; octocrab's own retry layer is switched off so that it never
//! fights the policy here. Bodies are deserialized into octocrab's models by the
//! callers' type parameter. The client never touches the store: the crawl decides
//! what to cache and where to checkpoint.
//!
//! The policy, per request:
//! - a `governor` limiter per token (config `github.requests_per_hour_per_token`);
//! - `X-RateLimit-Remaining: 0` with `X-RateLimit-Reset`: switch to another token
//!   with requests left, or wait for the reset (a countdown through the reporter);
//!   a token under `github.rotate_below_remaining` is swapped for a fuller one;
//! - secondary limits (403/429 with `Retry-After`, or GitHub's secondary-limit
//!   message): waited out and retried;
//! - 5xx, timeouts, broken connections and invalid JSON in a 2xx answer: retried
//!   with exponential backoff and full jitter, at most `github.max_retries` times;
//! - anything else (404, 401, a plain 403) fails at once with GitHub's message.
//!
//! GraphQL has its own budget per token (5,000 points an hour, `X-RateLimit-Resource:
//! graphql`), tracked apart from REST's: a query's `rateLimit { cost remaining resetAt }`
//! and its headers update it, `RATE_LIMITED` in a 200 answer is waited out like an
//! exhausted REST limit (never a failure), and the points spent are counted in
//! [`ClientStats::points`]. See [`graphql`] for the errors of a 200 answer.
//!
//! Tokens: sent only as the `Authorization` header, marked sensitive, and only to
//! the API root's own host (pagination links to another host are refused). They
//! never appear in an error, a log line or a URL.

pub mod graphql;
pub mod link;
mod settings;

pub use settings::{ClientSettings, GithubConfig};

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use http::header::{HeaderMap, HeaderValue};
use serde::de::DeserializeOwned;

use self::graphql::{ErrorClass, GraphqlError, PointCost};

use crate::progress::Reporter;
use crate::secret::Secret;

/// A request that failed for good. Messages name the URL (never a token).
#[derive(Debug, thiserror::Error)]
pub enum GithubError {
    #[error(
        "the API root `{api_url}` is not a usable URL: {problem}; pass an http(s) URL such as https://api.github.com"
    )]
    BadApiUrl { api_url: String, problem: String },
    #[error("failed to set up the HTTP client: {0}")]
    Setup(String),
    #[error("{url} answered HTTP {status}: {message}")]
    Status { url: String, status: u16, message: String },
    #[error("the GraphQL query {operation} to {url} failed: {message}")]
    Graphql { url: String, operation: String, message: String },
    #[error(
        "the GraphQL query {operation} to {url} asked for too much at once ({message}); ask for fewer items per page"
    )]
    GraphqlTooLarge { url: String, operation: String, message: String },
    #[error(
        "{url} still failed after {attempts} attempts; last error: {last}; run the crawl again later to fetch what is missing"
    )]
    GaveUp { url: String, attempts: u32, last: String },
    #[error("{url} answered 2xx with a body that is not the expected JSON: {detail}")]
    InvalidJson { url: String, detail: String },
    #[error(
        "refusing to follow a link to `{url}`, outside the API root `{api_url}` (the token is only sent to the API root)"
    )]
    ForeignLink { url: String, api_url: String },
}

impl GithubError {
    /// 404 or 410: the object does not exist (any more).
    pub fn is_not_found(&self) -> bool {
        matches!(self, GithubError::Status { status: 404 | 410, .. })
    }

    /// The GraphQL query hit GitHub's node limit or timed out: a smaller page may pass.
    pub fn is_too_large(&self) -> bool {
        matches!(self, GithubError::GraphqlTooLarge { .. })
    }
}

/// The answer to a GET.
#[derive(Debug)]
pub enum Fetched<T> {
    /// A 2xx answer: the decoded body, its ETag and the next page's URL.
    Fresh { value: T, etag: Option<String>, next: Option<String> },
    /// 304: the object behind the given ETag has not changed.
    NotModified,
}

/// What the client spent, for the end-of-run summary.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct ClientStats {
    /// HTTP answers received (every status, retries included).
    pub requests: u64,
    /// 304 answers (free of rate limit).
    pub not_modified: u64,
    /// Attempts that were retried (5xx, timeouts, broken connections, invalid JSON, secondary limits).
    pub retries: u64,
    /// Seconds spent waiting for rate limits.
    pub rate_limit_wait_secs: u64,
    /// GraphQL queries answered (a part of `requests`).
    pub graphql_queries: u64,
    /// GraphQL points spent, as the queries' `rateLimit.cost` said.
    pub points: u64,
}

/// Which of a token's rate-limit budgets a request spends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Budget {
    /// REST: 5,000 requests an hour.
    Core,
    /// GraphQL: 5,000 points an hour.
    Graphql,
}

/// A GraphQL answer with usable `data`.
#[derive(Debug)]
pub struct GraphqlAnswer<T> {
    pub data: T,
    /// Errors beside the data (a partial answer): logged by the caller, not fatal.
    pub errors: Vec<GraphqlError>,
    /// The query's `rateLimit` object, when it asked for one.
    pub cost: Option<PointCost>,
}

/// One rate-limit budget of a token, as GitHub last reported it.
struct RateWindow {
    /// Requests (or points) left as GitHub last said; -1 before the first answer.
    remaining: AtomicI64,
    /// When GitHub resets this window (unix seconds); 0 when unknown.
    reset_epoch: AtomicI64,
}

impl RateWindow {
    fn new() -> RateWindow {
        RateWindow { remaining: AtomicI64::new(-1), reset_epoch: AtomicI64::new(0) }
    }

    /// Requests left now: unknown (i64::MAX) before any answer or after the reset.
    fn effective_remaining(&self, now: i64) -> i64 {
        let remaining = self.remaining.load(Ordering::Relaxed);
        let reset = self.reset_epoch.load(Ordering::Relaxed);
        // Without a known reset time a count of zero cannot be waited out: treat it as unknown.
        if remaining < 0 || reset <= now { i64::MAX } else { remaining }
    }
}

struct TokenSlot {
    secret: Option<Secret>,
    limiter: DefaultDirectRateLimiter,
    core: RateWindow,
    graphql: RateWindow,
}

impl TokenSlot {
    fn window(&self, budget: Budget) -> &RateWindow {
        match budget {
            Budget::Core => &self.core,
            Budget::Graphql => &self.graphql,
        }
    }
}

/// One request to send: a GET (REST) or a POST of a GraphQL query.
struct Outgoing<'a> {
    url: &'a str,
    /// `If-None-Match` of a GET.
    etag: Option<&'a str>,
    /// The JSON body of a POST.
    body: Option<&'a str>,
    budget: Budget,
}

/// What one answer means for the retry loop.
enum Step<T> {
    Done(T),
    Retry {
        failure: String,
        wait: Option<Duration>,
        give_up: Option<GithubError>,
    },
    /// The budget is used up: rotate tokens or wait for the reset, then ask again.
    Exhausted {
        reset_epoch: Option<i64>,
    },
    Fail(GithubError),
}

/// The GitHub REST client. Cheap to share behind a reference; all methods take `&self`.
pub struct GithubClient {
    octocrab: octocrab::Octocrab,
    api_url: String,
    origin: String,
    settings: ClientSettings,
    slots: Vec<TokenSlot>,
    current: AtomicUsize,
    reporter: Arc<dyn Reporter>,
    requests: AtomicU64,
    not_modified: AtomicU64,
    retries: AtomicU64,
    waited_secs: AtomicU64,
    graphql_queries: AtomicU64,
    points: AtomicU64,
    warned_low: AtomicBool,
    last_rotation: Mutex<Option<usize>>,
}

impl std::fmt::Debug for GithubClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GithubClient").field("api_url", &self.api_url).field("tokens", &self.slots.len()).finish()
    }
}

/// The most answers a 403 "rate limit exhausted" may cause in a row before the
/// request is given up (guards against a server that never resets).
const MAX_EXHAUSTION_WAITS: u32 = 10;

impl GithubClient {
    /// A client for `settings.api_url`. Must be called inside a tokio runtime.
    pub fn new(settings: ClientSettings, reporter: Arc<dyn Reporter>) -> Result<GithubClient, GithubError> {
        let api_url = settings.api_url.trim_end_matches('/').to_string();
        let bad = |problem: &str| GithubError::BadApiUrl {
            api_url: crate::secret::redact_url(&api_url),
            problem: problem.to_string(),
        };
        let uri: http::Uri = api_url.parse().map_err(|_| bad("it does not parse as a URL"))?;
        let (Some(scheme), Some(authority)) = (uri.scheme_str(), uri.authority()) else {
            return Err(bad("it needs a scheme and a host"));
        };
        // A URL with user information would carry it into every log line, error and
        // stored failure that names a URL: refused, with the way that keeps it secret.
        if authority.as_str().contains('@') {
            return Err(bad(
                "it holds credentials; pass the token in GITHUB_TOKEN (sent as a header, never logged or stored)",
            ));
        }
        // A token that is not a valid header value would be dropped, and the requests
        // would go out anonymous without a word: refused instead.
        for (index, token) in settings.tokens.iter().enumerate() {
            if HeaderValue::from_str(&format!("Bearer {}", token.expose())).is_err() {
                return Err(GithubError::Setup(format!(
                    "token {} of GITHUB_TOKEN / GITHUB_TOKENS holds characters an HTTP header cannot carry (a \
                     newline or another control character); copy the token again",
                    index + 1
                )));
            }
        }
        if scheme != "http" && scheme != "https" {
            return Err(bad("the scheme must be http or https"));
        }
        let origin = format!("{scheme}://{authority}");
        // The origin, not the API root: octocrab prefixes the base path to every path
        // that lacks it, which would turn GHES's `/api/graphql` into
        // `/api/v3/api/graphql`. Every URL we send is absolute anyway.
        let octocrab = octocrab::Octocrab::builder()
            .base_uri(origin.as_str())
            .map_err(|error| GithubError::Setup(error.to_string()))?
            .add_retry_config(octocrab::service::middleware::retry::RetryConfig::None)
            .set_connect_timeout(Some(settings.request_timeout))
            .set_read_timeout(Some(settings.request_timeout))
            .build()
            .map_err(|error| GithubError::Setup(error.to_string()))?;
        let per_hour =
            std::num::NonZeroU32::new(settings.requests_per_hour_per_token.max(1)).expect("max(1) is nonzero");
        let secrets: Vec<Option<Secret>> = if settings.tokens.is_empty() {
            tracing::warn!(
                "no GITHUB_TOKEN or GITHUB_TOKENS is set: requests are anonymous, at GitHub's limit of 60 an hour; \
                 set GITHUB_TOKEN to crawl at 5,000 an hour"
            );
            vec![None]
        } else {
            settings.tokens.iter().cloned().map(Some).collect()
        };
        let slots = secrets
            .into_iter()
            .map(|secret| TokenSlot {
                secret,
                limiter: RateLimiter::direct(Quota::per_hour(per_hour)),
                core: RateWindow::new(),
                graphql: RateWindow::new(),
            })
            .collect();
        tracing::debug!(api_url = %api_url, tokens = settings.tokens.len(), "GitHub client ready");
        Ok(GithubClient {
            octocrab,
            api_url,
            origin,
            settings,
            slots,
            current: AtomicUsize::new(0),
            reporter,
            requests: AtomicU64::new(0),
            not_modified: AtomicU64::new(0),
            retries: AtomicU64::new(0),
            waited_secs: AtomicU64::new(0),
            graphql_queries: AtomicU64::new(0),
            points: AtomicU64::new(0),
            warned_low: AtomicBool::new(false),
            last_rotation: Mutex::new(None),
        })
    }

    pub fn api_url(&self) -> &str {
        &self.api_url
    }

    /// Whether requests carry a token (GraphQL needs one).
    pub fn has_token(&self) -> bool {
        self.slots.iter().any(|slot| slot.secret.is_some())
    }

    /// The absolute URL of an API path with a query, values percent-encoded.
    /// A URL of this API as checkpoints store it: relative to the API root
    /// (`/repos/...`), so that a crawl resumed with another `--api-url` (host, port)
    /// goes on where it stopped. URLs outside the root are kept whole.
    pub fn relative_url(&self, url: &str) -> String {
        url.strip_prefix(&self.api_url).filter(|rest| rest.starts_with('/')).unwrap_or(url).to_string()
    }

    /// A stored URL made absolute: a relative one is joined to the API root; an absolute
    /// one (stored before checkpoints were relative) gets this root's scheme, host and
    /// port.
    pub fn absolute_url(&self, stored: &str) -> String {
        if stored.starts_with('/') {
            return format!("{}{stored}", self.api_url);
        }
        let path = stored.find("://").and_then(|at| stored[at + 3..].find('/').map(|slash| &stored[at + 3 + slash..]));
        match path {
            Some(path) => format!("{}{path}", self.origin),
            None => stored.to_string(),
        }
    }

    pub fn url(&self, path: &str, query: &[(&str, String)]) -> String {
        let mut url = format!("{}{}", self.api_url, path);
        for (index, (key, value)) in query.iter().enumerate() {
            url.push(if index == 0 { '?' } else { '&' });
            url.push_str(key);
            url.push('=');
            url.push_str(&percent_encode(value));
        }
        url
    }

    pub fn stats(&self) -> ClientStats {
        ClientStats {
            requests: self.requests.load(Ordering::Relaxed),
            not_modified: self.not_modified.load(Ordering::Relaxed),
            retries: self.retries.load(Ordering::Relaxed),
            rate_limit_wait_secs: self.waited_secs.load(Ordering::Relaxed),
            graphql_queries: self.graphql_queries.load(Ordering::Relaxed),
            points: self.points.load(Ordering::Relaxed),
        }
    }

    /// GETs `url` (absolute, under the API root) and decodes the body as `T`.
    /// With `etag`, the request is conditional and a 304 gives [`Fetched::NotModified`].
    pub async fn get_json<T: DeserializeOwned>(
        &self,
        url: &str,
        etag: Option<&str>,
    ) -> Result<Fetched<T>, GithubError> {
        if !url.starts_with(&format!("{}/", self.origin)) {
            return Err(GithubError::ForeignLink { url: url.to_string(), api_url: self.api_url.clone() });
        }
        let outgoing = Outgoing { url, etag, body: None, budget: Budget::Core };
        self.exchange(&outgoing, |status, headers, body, attempts| match status {
            304 => {
                self.not_modified.fetch_add(1, Ordering::Relaxed);
                Step::Done(Fetched::NotModified)
            }
            _ => match serde_json::from_str::<T>(body) {
                Ok(value) => {
                    let etag = header(headers, "etag");
                    let next = header(headers, "link").and_then(|link| link::next_link(&link));
                    if let Some(next) = &next {
                        if !next.starts_with(&format!("{}/", self.origin)) {
                            return Step::Fail(GithubError::ForeignLink {
                                url: next.clone(),
                                api_url: self.api_url.clone(),
                            });
                        }
                    }
                    Step::Done(Fetched::Fresh { value, etag, next })
                }
                Err(error) => Step::Retry {
                    failure: format!("invalid JSON: {error}"),
                    wait: None,
                    give_up: (attempts >= self.settings.max_retries)
                        .then(|| GithubError::InvalidJson { url: url.to_string(), detail: error.to_string() }),
                },
            },
        })
        .await
    }

    /// The GraphQL endpoint of this client's API root.
    pub fn graphql_url(&self) -> String {
        graphql::endpoint(&self.api_url)
    }

    /// POSTs one GraphQL query (named `operation`, for logs and errors) with its
    /// variables and decodes `data` as `T`. Rate limits, secondary limits, 5xx and
    /// transient errors are handled as for REST; `RATE_LIMITED` is waited out;
    /// errors beside usable data come back in [`GraphqlAnswer::errors`]; a query
    /// that is too large gives [`GithubError::GraphqlTooLarge`].
    pub async fn graphql<T: DeserializeOwned>(
        &self,
        operation: &str,
        query: &str,
        variables: &serde_json::Value,
    ) -> Result<GraphqlAnswer<T>, GithubError> {
        let url = self.graphql_url();
        let payload = serde_json::json!({"query": query, "variables": variables, "operationName": operation});
        let payload = payload.to_string();
        let outgoing = Outgoing { url: &url, etag: None, body: Some(&payload), budget: Budget::Graphql };
        let url = url.as_str();
        self.exchange(&outgoing, |_status, _headers, body, attempts| {
            let parsed = match serde_json::from_str::<graphql::RawBody>(body) {
                Ok(parsed) => parsed,
                Err(error) => {
                    return Step::Retry {
                        failure: format!("invalid JSON: {error}"),
                        wait: None,
                        give_up: (attempts >= self.settings.max_retries)
                            .then(|| GithubError::InvalidJson { url: url.to_string(), detail: error.to_string() }),
                    };
                }
            };
            let data = parsed.data.filter(|data| !data.is_null());
            let cost = data.as_ref().and_then(graphql::point_cost);
            let message = || graphql::summarize(&parsed.errors);
            match graphql::classify(data.is_some(), &parsed.errors) {
                ErrorClass::RateLimited => Step::Exhausted { reset_epoch: cost.and_then(|cost| cost.reset_epoch) },
                ErrorClass::TooLarge => Step::Fail(GithubError::GraphqlTooLarge {
                    url: url.to_string(),
                    operation: operation.to_string(),
                    message: message(),
                }),
                ErrorClass::Transient => Step::Retry { failure: message(), wait: None, give_up: None },
                ErrorClass::Fatal => Step::Fail(GithubError::Graphql {
                    url: url.to_string(),
                    operation: operation.to_string(),
                    message: message(),
                }),
                ErrorClass::Usable => {
                    let data = data.expect("usable answers have data");
                    match serde_json::from_value::<T>(data) {
                        Ok(data) => {
                            self.graphql_queries.fetch_add(1, Ordering::Relaxed);
                            if let Some(cost) = cost {
                                self.points.fetch_add(cost.cost, Ordering::Relaxed);
                            }
                            Step::Done(GraphqlAnswer { data, errors: parsed.errors, cost })
                        }
                        Err(error) => Step::Fail(GithubError::Graphql {
                            url: url.to_string(),
                            operation: operation.to_string(),
                            message: format!("`data` does not have the expected shape: {error}"),
                        }),
                    }
                }
            }
        })
        .await
    }

    /// The retry loop shared by REST and GraphQL: picks a token, waits for the
    /// limiter, sends, and handles what every answer can mean (rate limits,
    /// secondary limits, 5xx, broken connections); `interpret` decides about a 2xx
    /// or 304 answer.
    async fn exchange<T>(
        &self,
        outgoing: &Outgoing<'_>,
        interpret: impl Fn(u16, &HeaderMap, &str, u32) -> Step<T>,
    ) -> Result<T, GithubError> {
        let url = outgoing.url;
        let mut attempts: u32 = 0;
        let mut exhaustion_waits: u32 = 0;
        loop {
            let slot_index = self.pick_token(outgoing.budget).await;
            let slot = &self.slots[slot_index];
            let window = slot.window(outgoing.budget);
            slot.limiter.until_ready().await;
            let step: Step<T> = match tokio::time::timeout(self.settings.request_timeout, self.send(outgoing, slot))
                .await
            {
                Err(_) => Step::Retry {
                    failure: format!("no complete answer within {}s", self.settings.request_timeout.as_secs()),
                    wait: None,
                    give_up: None,
                },
                Ok(Err(transport)) => {
                    Step::Retry { failure: format!("the connection failed: {transport}"), wait: None, give_up: None }
                }
                Ok(Ok((status, headers, body))) => {
                    self.requests.fetch_add(1, Ordering::Relaxed);
                    self.note_rate_limit(slot_index, outgoing.budget, &headers);
                    tracing::trace!(url, status, "GitHub answered");
                    match status {
                        200..=299 | 304 => interpret(status, &headers, &body, attempts),
                        403 | 429 => {
                            // Capped: a broken proxy's day-long Retry-After must not stall the
                            // crawl for a day (GitHub's own windows are an hour at most).
                            let retry_after = header(&headers, "retry-after")
                                .and_then(|v| v.trim().parse::<u64>().ok())
                                .map(|secs| secs.min(self.settings.max_retry_after.as_secs()));
                            let remaining =
                                header(&headers, "x-ratelimit-remaining").and_then(|v| v.trim().parse::<i64>().ok());
                            if let Some(secs) = retry_after {
                                Step::Retry {
                                    failure: format!("secondary rate limit (HTTP {status}, Retry-After {secs}s)"),
                                    wait: Some(Duration::from_secs(secs)),
                                    give_up: None,
                                }
                            } else if remaining == Some(0) || link::is_primary_limit_message(&body) {
                                Step::Exhausted { reset_epoch: None }
                            } else if link::is_secondary_limit_message(&body) || status == 429 {
                                Step::Retry {
                                    failure: format!("secondary rate limit (HTTP {status})"),
                                    wait: Some(self.settings.secondary_limit_wait.max(self.backoff(attempts + 1))),
                                    give_up: None,
                                }
                            } else {
                                Step::Fail(GithubError::Status {
                                    url: url.to_string(),
                                    status,
                                    message: link::error_message(&body),
                                })
                            }
                        }
                        500..=599 => Step::Retry {
                            failure: format!("HTTP {status}: {}", link::error_message(&body)),
                            wait: None,
                            give_up: None,
                        },
                        _ => {
                            let mut message = link::error_message(&body);
                            if status == 401 {
                                message.push_str("; check the token in GITHUB_TOKEN or GITHUB_TOKENS");
                            }
                            Step::Fail(GithubError::Status { url: url.to_string(), status, message })
                        }
                    }
                }
            };
            let (failure, wait_hint) = match step {
                Step::Done(value) => return Ok(value),
                Step::Fail(error) => return Err(error),
                Step::Exhausted { reset_epoch } => {
                    // Not a failure: rotate or wait for the reset.
                    exhaustion_waits += 1;
                    if exhaustion_waits > MAX_EXHAUSTION_WAITS {
                        return Err(GithubError::GaveUp {
                            url: url.to_string(),
                            attempts: attempts + exhaustion_waits,
                            last: "the rate limit stayed exhausted after its reset time".into(),
                        });
                    }
                    window.remaining.store(0, Ordering::Relaxed);
                    if let Some(reset) = reset_epoch {
                        window.reset_epoch.store(reset, Ordering::Relaxed);
                    }
                    if window.reset_epoch.load(Ordering::Relaxed) <= now_epoch() {
                        // No usable reset time: wait one backoff step.
                        window.reset_epoch.store(
                            now_epoch() + self.backoff(exhaustion_waits).as_secs().max(1) as i64,
                            Ordering::Relaxed,
                        );
                    }
                    tracing::debug!(url, token = slot_index, "rate limit exhausted for this token");
                    continue;
                }
                Step::Retry { failure, wait, give_up } => {
                    if let Some(error) = give_up {
                        return Err(error);
                    }
                    (failure, wait)
                }
            };
            attempts += 1;
            if attempts > self.settings.max_retries {
                return Err(GithubError::GaveUp { url: url.to_string(), attempts, last: failure });
            }
            self.retries.fetch_add(1, Ordering::Relaxed);
            let delay = wait_hint.unwrap_or_else(|| self.backoff(attempts));
            tracing::debug!(url, attempt = attempts, delay_ms = delay.as_millis() as u64, "retrying: {failure}");
            if wait_hint.is_some() {
                self.wait_with_countdown(delay, "secondary rate limit").await;
            } else {
                tokio::time::sleep(delay).await;
            }
        }
    }

    /// Exponential backoff with full jitter: uniform in [initial, min(max, initial * 2^(n-1))].
    fn backoff(&self, attempt: u32) -> Duration {
        let initial = self.settings.backoff_initial.as_millis() as u64;
        let cap = (self.settings.backoff_max.as_millis() as u64).max(initial);
        let ceiling = initial.saturating_mul(1u64 << (attempt.saturating_sub(1)).min(30)).min(cap);
        let millis = if ceiling > initial { rand::random_range(initial..=ceiling) } else { initial };
        Duration::from_millis(millis)
    }

    /// One HTTP exchange: status, headers and the body as text.
    async fn send(
        &self,
        outgoing: &Outgoing<'_>,
        slot: &TokenSlot,
    ) -> Result<(u16, HeaderMap, String), octocrab::Error> {
        let mut builder = http::Request::builder()
            .method(if outgoing.body.is_some() { http::Method::POST } else { http::Method::GET })
            .uri(outgoing.url)
            .header(http::header::ACCEPT, HeaderValue::from_static("application/vnd.github+json"))
            .header(
                http::header::USER_AGENT,
                HeaderValue::from_static(concat!("swe-harvest/", env!("CARGO_PKG_VERSION"))),
            );
        if let Some(secret) = &slot.secret {
            if let Ok(mut value) = HeaderValue::from_str(&format!("Bearer {}", secret.expose())) {
                value.set_sensitive(true);
                builder = builder.header(http::header::AUTHORIZATION, value);
            }
        }
        if let Some(etag) = outgoing.etag.and_then(|etag| HeaderValue::from_str(etag).ok()) {
            builder = builder.header(http::header::IF_NONE_MATCH, etag);
        }
        let response = match outgoing.body {
            Some(body) => {
                builder = builder.header(http::header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
                let body: serde_json::Value = serde_json::from_str(body).expect("the client wrote this JSON");
                let request = self.octocrab.build_request(builder, Some(&body))?;
                self.octocrab.execute(request).await?
            }
            None => {
                let request = self.octocrab.build_request::<()>(builder, None)?;
                self.octocrab.execute(request).await?
            }
        };
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let body = self.octocrab.body_to_string(response).await?;
        Ok((status, headers, body))
    }

    fn note_rate_limit(&self, slot_index: usize, budget: Budget, headers: &HeaderMap) {
        let window = self.slots[slot_index].window(budget);
        if let Some(remaining) = header(headers, "x-ratelimit-remaining").and_then(|v| v.trim().parse::<i64>().ok()) {
            window.remaining.store(remaining, Ordering::Relaxed);
            if remaining < self.settings.rotate_below_remaining as i64
                && self.slots.len() == 1
                && !self.warned_low.swap(true, Ordering::Relaxed)
            {
                tracing::warn!(remaining, "the token is close to its rate limit; the crawl will wait for the reset");
            }
        }
        if let Some(reset) = header(headers, "x-ratelimit-reset").and_then(|v| v.trim().parse::<i64>().ok()) {
            window.reset_epoch.store(reset, Ordering::Relaxed);
        }
    }

    /// The token to use next: the current one while it has requests left above the
    /// rotation threshold, else the one with the most left; when all are exhausted,
    /// waits (with a countdown) for the earliest reset.
    async fn pick_token(&self, budget: Budget) -> usize {
        loop {
            let now = now_epoch();
            let current = self.current.load(Ordering::Relaxed);
            let threshold = self.settings.rotate_below_remaining as i64;
            let current_left = self.slots[current].window(budget).effective_remaining(now);
            if current_left >= threshold {
                return current;
            }
            let (best, best_left) = self
                .slots
                .iter()
                .enumerate()
                .map(|(index, slot)| (index, slot.window(budget).effective_remaining(now)))
                .max_by_key(|(index, left)| (*left, *index == current))
                .expect("there is always one slot");
            if best_left > 0 {
                if best != current {
                    self.current.store(best, Ordering::Relaxed);
                    let mut last = self.last_rotation.lock().expect("not poisoned");
                    if *last != Some(best) {
                        tracing::info!(
                            from = current + 1,
                            to = best + 1,
                            "switching to token #{} of {}",
                            best + 1,
                            self.slots.len()
                        );
                        *last = Some(best);
                    }
                }
                return best;
            }
            let reset = self
                .slots
                .iter()
                .map(|slot| slot.window(budget).reset_epoch.load(Ordering::Relaxed))
                .filter(|reset| *reset > now)
                .min()
                .unwrap_or(now + 1);
            let wait = Duration::from_secs((reset - now).max(1) as u64);
            tracing::warn!(wait_secs = wait.as_secs(), "every token has reached its rate limit; waiting for the reset");
            self.wait_with_countdown(wait, "rate limit reached").await;
            // After the reset the slots count as fresh (effective_remaining sees reset <= now).
        }
    }

    async fn wait_with_countdown(&self, wait: Duration, reason: &str) {
        let mut left = wait;
        while !left.is_zero() {
            // Every second near the end; every ten seconds before, so that a long
            // wait logged without a terminal stays a few lines.
            let tick = if left > Duration::from_secs(60) { Duration::from_secs(10) } else { Duration::from_secs(1) };
            let step = left.min(tick);
            self.reporter.message(&format!("{reason}: resuming in {}s", left.as_secs_f64().ceil() as u64));
            tokio::time::sleep(step).await;
            left -= step;
        }
        self.waited_secs.fetch_add(wait.as_secs(), Ordering::Relaxed);
        self.reporter.message(&format!("{reason}: waited {}s, resumed", wait.as_secs()));
    }
}

fn header(headers: &HeaderMap, name: &str) -> Option<String> {
    headers.get(name).and_then(|value| value.to_str().ok()).map(str::to_string)
}

fn now_epoch() -> i64 {
    chrono::Utc::now().timestamp()
}

/// What a query value keeps as it is: RFC 3986's unreserved characters.
const QUERY_VALUE: &percent_encoding::AsciiSet =
    &percent_encoding::NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.').remove(b'~');

/// Percent-encodes a query value (RFC 3986 unreserved characters stay as they are).
pub fn percent_encode(value: &str) -> String {
    percent_encoding::utf8_percent_encode(value, QUERY_VALUE).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_values_are_percent_encoded() {
        assert_eq!(percent_encode("language:Python stars:>=100"), "language%3APython%20stars%3A%3E%3D100");
        assert_eq!(percent_encode("2024-01-01T00:00:00Z"), "2024-01-01T00%3A00%3A00Z");
    }

    #[tokio::test]
    async fn backoff_grows_and_stays_within_its_bounds() {
        let mut settings = ClientSettings::from_config(&GithubConfig::default(), vec![]);
        settings.api_url = "http://127.0.0.1:1".into();
        settings.backoff_initial = Duration::from_millis(100);
        settings.backoff_max = Duration::from_secs(1);
        let client = GithubClient::new(settings, Arc::new(crate::progress::NoReporter)).unwrap();
        for attempt in 1..20 {
            let delay = client.backoff(attempt);
            assert!(delay >= Duration::from_millis(100) && delay <= Duration::from_secs(1), "{attempt}: {delay:?}");
        }
        assert_eq!(client.backoff(1), Duration::from_millis(100));
    }

    #[tokio::test]
    async fn api_url_must_be_http() {
        let mut settings = ClientSettings::from_config(&GithubConfig::default(), vec![]);
        settings.api_url = "ftp://example.com".into();
        let error = GithubClient::new(settings, Arc::new(crate::progress::NoReporter)).unwrap_err();
        assert!(error.to_string().contains("ftp://example.com"), "{error}");
    }

    #[tokio::test]
    async fn url_joins_the_root_path_and_query() {
        let mut settings = ClientSettings::from_config(&GithubConfig::default(), vec![]);
        settings.api_url = "https://ghe.example.com/api/v3/".into();
        let client = GithubClient::new(settings, Arc::new(crate::progress::NoReporter)).unwrap();
        assert_eq!(
            client.url("/repos/a/b/pulls", &[("state", "closed".into()), ("page", "2".into())]),
            "https://ghe.example.com/api/v3/repos/a/b/pulls?state=closed&page=2"
        );
    }
}
