//! The client's settings: `[github]` in the config ([`GithubConfig`], with its checks)
//! and what one client is made with ([`ClientSettings`]: those values and the tokens).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::secret::Secret;
use crate::settings::{ConfigError, invalid};

/// `[github]` in `configs/pipeline.toml`: the API client.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GithubConfig {
    /// The API root: github.com, a GitHub Enterprise server, or the simulator.
    pub api_url: String,
    /// Our own ceiling per token, below GitHub's 5,000 an hour.
    pub requests_per_hour_per_token: u32,
    /// Page size of list endpoints (GitHub's maximum is 100).
    pub per_page: u32,
    /// Timeout of one request.
    pub request_timeout_secs: u64,
    /// Retries of one request after 5xx, timeouts, broken connections and secondary limits.
    pub max_retries: u32,
    /// First backoff delay; doubles per retry, with jitter, up to `backoff_max_secs`.
    pub backoff_initial_ms: u64,
    pub backoff_max_secs: u64,
    /// Rotate to another token when this one has fewer requests left than this.
    pub rotate_below_remaining: u32,
    /// Wait after a secondary rate limit that names no `Retry-After` (GitHub asks for a minute).
    pub secondary_limit_wait_secs: u64,
    /// The longest `Retry-After` obeyed: a longer one (a broken proxy's) is waited this
    /// long, not a day. GitHub's own windows are an hour at most.
    pub max_retry_after_secs: u64,
}

impl GithubConfig {
    /// This config with `api_url` (the `--api-url` flag) over the file's and
    /// `SWE_HARVEST_API_URL`'s value, which the loaded config already holds.
    pub fn with_api_url(mut self, api_url: Option<&str>) -> GithubConfig {
        if let Some(api_url) = api_url {
            self.api_url = api_url.to_string();
        }
        self
    }
}

impl Default for GithubConfig {
    fn default() -> Self {
        GithubConfig {
            api_url: "https://api.github.com".into(),
            requests_per_hour_per_token: 4_800,
            per_page: 100,
            request_timeout_secs: 30,
            max_retries: 6,
            backoff_initial_ms: 500,
            backoff_max_secs: 60,
            rotate_below_remaining: 50,
            secondary_limit_wait_secs: 60,
            max_retry_after_secs: 3600,
        }
    }
}

impl GithubConfig {
    /// The values serde cannot check: the URL's scheme and the ranges.
    pub fn check(&self, origin: &str) -> Result<(), ConfigError> {
        if !(self.api_url.starts_with("http://") || self.api_url.starts_with("https://")) {
            return Err(invalid(origin, "github.api_url", format!("`{}` is not an http(s) URL", self.api_url)));
        }
        if !(1..=100).contains(&self.per_page) {
            return Err(invalid(origin, "github.per_page", "must be between 1 and 100 (GitHub's maximum)"));
        }
        if self.requests_per_hour_per_token == 0 {
            return Err(invalid(origin, "github.requests_per_hour_per_token", "must be at least 1"));
        }
        Ok(())
    }
}

/// Resolved client settings.
#[derive(Debug, Clone)]
pub struct ClientSettings {
    pub api_url: String,
    pub tokens: Vec<Secret>,
    pub requests_per_hour_per_token: u32,
    pub request_timeout: Duration,
    pub max_retries: u32,
    pub backoff_initial: Duration,
    pub backoff_max: Duration,
    pub rotate_below_remaining: u32,
    pub secondary_limit_wait: Duration,
    /// The longest `Retry-After` obeyed; longer ones are waited this long.
    pub max_retry_after: Duration,
}

impl ClientSettings {
    pub fn from_config(config: &GithubConfig, tokens: Vec<Secret>) -> ClientSettings {
        ClientSettings {
            api_url: config.api_url.clone(),
            tokens,
            requests_per_hour_per_token: config.requests_per_hour_per_token,
            request_timeout: Duration::from_secs(config.request_timeout_secs.max(1)),
            max_retries: config.max_retries,
            backoff_initial: Duration::from_millis(config.backoff_initial_ms),
            backoff_max: Duration::from_secs(config.backoff_max_secs),
            rotate_below_remaining: config.rotate_below_remaining,
            secondary_limit_wait: Duration::from_secs(config.secondary_limit_wait_secs),
            max_retry_after: Duration::from_secs(config.max_retry_after_secs),
        }
    }
}
