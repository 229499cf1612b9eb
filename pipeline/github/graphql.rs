//! Pure pieces of GitHub's GraphQL API: where the endpoint is, the shape of an
//! answer (`data`, `errors`, the `rateLimit` object every query of ours asks for),
//! and what an `errors` array means for the caller. The request itself goes
//! through [`super::GithubClient::graphql`], under the same retry and rate-limit
//! policy as REST.
//!
//! The endpoint is derived from the REST API root (decision):
//! - `https://api.github.com` -> `https://api.github.com/graphql`;
//! - GitHub Enterprise Server, `https://HOST/api/v3` -> `https://HOST/api/graphql`
//!   (GHES serves REST under `/api/v3` and GraphQL under `/api/graphql`);
//! - anything else (the simulator, a proxy) -> the root plus `/graphql`.
//!
//! Errors in a 200 answer are sorted into four kinds: the points are used up
//! (`RATE_LIMITED`: waited out like an exhausted REST limit), the query was too big
//! (`MAX_NODE_LIMIT_EXCEEDED`, or GitHub's timeout message: the caller asks again
//! for fewer nodes), a transient server fault (retried with backoff, as a 5xx), and
//! everything else (not retried). Errors beside non-null `data` are partial answers:
//! the data is used and the errors are logged (typically an issue number that does
//! not resolve, or a linked issue the token may not read).

use serde::Deserialize;
use serde_json::Value;

/// The GraphQL endpoint of a REST API root (see the module docs).
pub fn endpoint(api_url: &str) -> String {
    let root = api_url.trim_end_matches('/');
    match root.strip_suffix("/api/v3") {
        Some(host) => format!("{host}/api/graphql"),
        None => format!("{root}/graphql"),
    }
}

/// One entry of a GraphQL `errors` array.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, serde::Serialize)]
pub struct GraphqlError {
    /// GitHub's error type (`NOT_FOUND`, `RATE_LIMITED`, `MAX_NODE_LIMIT_EXCEEDED`, ...), when given.
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
    #[serde(default)]
    pub message: String,
    /// Where in `data` the error happened (field names and list indexes).
    #[serde(default)]
    pub path: Vec<Value>,
}

impl std::fmt::Display for GraphqlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let path: Vec<String> =
            self.path.iter().map(|part| part.as_str().map_or_else(|| part.to_string(), str::to_string)).collect();
        match (&self.kind, path.is_empty()) {
            (Some(kind), false) => write!(f, "{kind} at {}: {}", path.join("."), self.message),
            (Some(kind), true) => write!(f, "{kind}: {}", self.message),
            (None, false) => write!(f, "at {}: {}", path.join("."), self.message),
            (None, true) => write!(f, "{}", self.message),
        }
    }
}

/// A GraphQL answer body as it comes.
#[derive(Debug, Deserialize)]
pub(crate) struct RawBody {
    #[serde(default)]
    pub data: Option<Value>,
    #[serde(default)]
    pub errors: Vec<GraphqlError>,
}

/// The `rateLimit { cost remaining resetAt }` object of a query.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct PointCost {
    /// Points this query cost.
    pub cost: u64,
    /// Points left in the token's hour.
    pub remaining: Option<i64>,
    /// When the points come back (unix seconds).
    pub reset_epoch: Option<i64>,
}

/// Reads `data.rateLimit` when the query asked for it.
pub(crate) fn point_cost(data: &Value) -> Option<PointCost> {
    let rate_limit = data.get("rateLimit")?;
    Some(PointCost {
        cost: rate_limit.get("cost").and_then(Value::as_u64).unwrap_or(0),
        remaining: rate_limit.get("remaining").and_then(Value::as_i64),
        reset_epoch: rate_limit
            .get("resetAt")
            .and_then(Value::as_str)
            .and_then(|text| chrono::DateTime::parse_from_rfc3339(text).ok())
            .map(|time| time.timestamp()),
    })
}

/// What an `errors` array means for the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ErrorClass {
    /// No errors, or errors beside usable data.
    Usable,
    /// The token's points are used up.
    RateLimited,
    /// The query asked for too many nodes or took too long: ask for fewer.
    TooLarge,
    /// A server fault worth retrying.
    Transient,
    /// The query cannot succeed as asked (a missing repository, a bad query).
    Fatal,
}

pub(crate) fn classify(data_present: bool, errors: &[GraphqlError]) -> ErrorClass {
    let has_kind = |wanted: &str| errors.iter().any(|error| error.kind.as_deref() == Some(wanted));
    let message_has = |wanted: &str| errors.iter().any(|error| error.message.to_ascii_lowercase().contains(wanted));
    if has_kind("RATE_LIMITED") || message_has("api rate limit exceeded") {
        return ErrorClass::RateLimited;
    }
    if data_present {
        return ErrorClass::Usable;
    }
    if has_kind("MAX_NODE_LIMIT_EXCEEDED") || message_has("timeout") || message_has("timed out") {
        return ErrorClass::TooLarge;
    }
    if errors.is_empty()
        || has_kind("INTERNAL")
        || has_kind("SERVICE_UNAVAILABLE")
        || message_has("something went wrong")
    {
        return ErrorClass::Transient;
    }
    ErrorClass::Fatal
}

/// The errors as one line for a message or a log.
pub(crate) fn summarize(errors: &[GraphqlError]) -> String {
    let mut text = errors.iter().take(3).map(ToString::to_string).collect::<Vec<_>>().join("; ");
    if errors.len() > 3 {
        text.push_str(&format!("; and {} more", errors.len() - 3));
    }
    if text.is_empty() {
        text = "`data` is null and no error says why".into();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_endpoint_follows_the_rest_root() {
        for (rest_root, graphql) in [
            ("https://api.github.com", "https://api.github.com/graphql"),
            ("https://api.github.com/", "https://api.github.com/graphql"),
            ("https://ghe.example.com/api/v3", "https://ghe.example.com/api/graphql"),
            ("https://ghe.example.com/api/v3/", "https://ghe.example.com/api/graphql"),
            ("http://127.0.0.1:4000", "http://127.0.0.1:4000/graphql"),
        ] {
            assert_eq!(endpoint(rest_root), graphql);
        }
    }

    fn error(kind: Option<&str>, message: &str) -> GraphqlError {
        GraphqlError { kind: kind.map(str::to_string), message: message.into(), path: vec![] }
    }

    #[test]
    fn errors_are_classified_by_type_then_message() {
        use ErrorClass::*;
        assert_eq!(classify(true, &[]), Usable);
        assert_eq!(classify(true, &[error(Some("NOT_FOUND"), "Could not resolve to an Issue")]), Usable);
        assert_eq!(
            classify(false, &[error(Some("RATE_LIMITED"), "API rate limit exceeded for user ID 1.")]),
            RateLimited
        );
        assert_eq!(classify(true, &[error(Some("RATE_LIMITED"), "x")]), RateLimited);
        assert_eq!(classify(false, &[error(Some("MAX_NODE_LIMIT_EXCEEDED"), "too many")]), TooLarge);
        assert_eq!(
            classify(
                false,
                &[error(None, "Something went wrong while executing your query. This may be the result of a timeout")]
            ),
            TooLarge
        );
        assert_eq!(classify(false, &[error(None, "Something went wrong while executing your query.")]), Transient);
        assert_eq!(classify(false, &[error(Some("INTERNAL"), "oops")]), Transient);
        assert_eq!(classify(false, &[]), Transient);
        assert_eq!(classify(false, &[error(Some("NOT_FOUND"), "Could not resolve to a Repository")]), Fatal);
    }

    #[test]
    fn the_rate_limit_object_is_read() {
        let data = json!({"rateLimit": {"cost": 3, "remaining": 4990, "resetAt": "2026-01-01T00:00:00Z"}});
        assert_eq!(
            point_cost(&data),
            Some(PointCost { cost: 3, remaining: Some(4990), reset_epoch: Some(1_767_225_600) })
        );
        assert_eq!(point_cost(&json!({})), None);
    }

    #[test]
    fn error_summaries_name_type_path_and_message() {
        let errors = vec![GraphqlError {
            kind: Some("NOT_FOUND".into()),
            message: "Could not resolve".into(),
            path: vec![json!("repository"), json!("i7")],
        }];
        assert_eq!(summarize(&errors), "NOT_FOUND at repository.i7: Could not resolve");
    }
}
