//! The simulator's endpoints: what each request is answered with, faults and rate
//! limits included. Pure over the simulator's state; the server does the I/O.

use std::collections::BTreeMap;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use super::data::{parse_time, pull_request_as_issue};
use super::{Action, FaultKind, SimState, TokenState};

const SECONDARY_MESSAGE: &str =
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.";

pub(crate) fn respond(
    state: &mut SimState,
    method: &str,
    target: &str,
    headers: &BTreeMap<String, String>,
    request_body: &str,
) -> (Duration, Action) {
    let (path, query_text) = target.split_once('?').unwrap_or((target, ""));
    let path = if path == "/api/graphql" { "/graphql" } else { path };
    let path = path.strip_prefix("/api/v3").unwrap_or(path).to_string();
    let query = parse_query(query_text);
    let endpoint = classify(&path);
    let mut delay = state.delay;
    // A GraphQL query: its body, operation name, and the keys faults and stats use.
    let graphql_request: Option<Value> =
        (endpoint == "graphql").then(|| serde_json::from_str(request_body).unwrap_or(Value::Null));
    let operation = graphql_request
        .as_ref()
        .and_then(|request| request["operationName"].as_str().map(str::to_string))
        .unwrap_or_default();
    let fault_key = if graphql_request.is_some() { format!("{target}#{operation}") } else { target.to_string() };
    let url_key = match &graphql_request {
        Some(request) => format!("{target}#{operation} {}", request["variables"]),
        None => target.to_string(),
    };

    if endpoint == "sim_stats" {
        let body = serde_json::to_string(&state.stats).unwrap_or_default();
        return (Duration::ZERO, ok_json(body));
    }

    let token = headers
        .get("authorization")
        .map(|value| value.trim_start_matches("Bearer ").trim_start_matches("token ").to_string())
        .unwrap_or_else(|| "anonymous".to_string());
    *state.tokens_seen.entry(token.clone()).or_default() += 1;
    let anonymous = token == "anonymous";
    // GraphQL points are a budget of their own.
    let token = if graphql_request.is_some() { format!("{token}#graphql") } else { token };
    let now = Utc::now().timestamp();
    let limit = state.token_limit.unwrap_or(if anonymous { 60 } else { 5000 });
    let token_state = state.tokens.entry(token.clone()).or_insert(TokenState {
        limit,
        remaining: limit,
        reset: now + 3600,
        exhausted_until: 0,
    });
    if token_state.reset <= now {
        token_state.remaining = token_state.limit;
        token_state.reset = now + 3600;
    }

    let (status, action) = 'answer: {
        if token_state.exhausted_until > now {
            if graphql_request.is_some() {
                break 'answer graphql_rate_limited(token_state);
            }
            break 'answer primary_exhausted(token_state);
        }
        // Faults, in the order they were added.
        let key = fault_key.clone();
        let mut fault_kind = None;
        for fault in state.faults.iter_mut() {
            if !key.contains(&fault.path_contains) {
                continue;
            }
            fault.seen += 1;
            if fault.seen > fault.skip && fault.applied < fault.times {
                fault.applied += 1;
                fault_kind = Some(fault.kind.clone());
                break;
            }
        }
        let token_state = state.tokens.get_mut(&token).expect("inserted above");
        match fault_kind {
            Some(FaultKind::SecondaryRetryAfter { secs }) => {
                let mut headers = rate_headers(token_state);
                headers.push(("Retry-After".into(), secs.to_string()));
                break 'answer (403, error_action(403, headers, SECONDARY_MESSAGE));
            }
            Some(FaultKind::SecondaryMessage) => {
                break 'answer (403, error_action(403, rate_headers(token_state), SECONDARY_MESSAGE));
            }
            Some(FaultKind::TooManyRequests { secs }) => {
                let mut headers = rate_headers(token_state);
                headers.push(("Retry-After".into(), secs.to_string()));
                break 'answer (429, error_action(429, headers, SECONDARY_MESSAGE));
            }
            Some(FaultKind::PrimaryExhausted { reset_in_secs }) => {
                token_state.exhausted_until = now + reset_in_secs as i64;
                token_state.remaining = 0;
                token_state.reset = token_state.exhausted_until;
                break 'answer primary_exhausted(token_state);
            }
            Some(FaultKind::Status { status }) => {
                break 'answer (status, error_action(status, rate_headers(token_state), "Server Error"));
            }
            Some(FaultKind::Slow { millis }) => delay += Duration::from_millis(millis),
            Some(FaultKind::InvalidJson) => {
                let mut headers = rate_headers(token_state);
                headers.push(("Content-Type".into(), "application/json; charset=utf-8".into()));
                break 'answer (200, Action::Respond { status: 200, headers, body: "[{\"id\": 1, \"title\": ".into() });
            }
            Some(FaultKind::Disconnect) => break 'answer (0, Action::Disconnect),
            Some(FaultKind::GraphqlRateLimited { reset_in_secs }) => {
                token_state.exhausted_until = now + reset_in_secs as i64;
                token_state.remaining = 0;
                token_state.reset = token_state.exhausted_until;
                break 'answer graphql_rate_limited(token_state);
            }
            Some(FaultKind::GraphqlErrors { kind, message }) => {
                let body = json!({"data": null, "errors": [{"type": kind, "message": message}]}).to_string();
                break 'answer (200, Action::Respond { status: 200, headers: graphql_headers(token_state), body });
            }
            None => {}
        }
        if let Some(request) = &graphql_request {
            if method != "POST" {
                break 'answer (404, error_action(404, Vec::new(), "Not Found"));
            }
            if anonymous {
                break 'answer (401, error_action(401, Vec::new(), "This endpoint requires you to be authenticated."));
            }
            if state.comment_index_generation != Some(state.generation) {
                state.comment_index = super::graphql::comment_index(&state.fixtures);
                state.comment_index_generation = Some(state.generation);
            }
            let node_limit = state.graphql_node_limit.unwrap_or(500_000);
            let timeout_above = state.graphql_timeout_above_nodes;
            let schema = state.schema.schema();
            let token_state = state.tokens.get_mut(&token).expect("inserted above");
            let limits = Limits { node_limit, timeout_above, schema: schema.as_deref() };
            let answer = graphql_answer(&state.fixtures, &state.comment_index, token_state, request, &limits);
            state.stats.schema_checked += u64::from(schema.is_some());
            state.stats.refused.extend(answer.refused.iter().map(|why| format!("{operation}: {why}")));
            if let Some(points) = answer.charged {
                state.stats.points += points;
                *state.stats.by_operation.entry(operation.clone()).or_default() += 1;
            }
            break 'answer (200, Action::Respond { status: 200, headers: answer.headers, body: answer.body });
        }
        if method != "GET" {
            break 'answer (404, error_action(404, Vec::new(), "Not Found"));
        }
        let host = headers.get("host").cloned().unwrap_or_else(|| "127.0.0.1".into());
        let base = format!("http://{host}");
        if state.pull_entries_generation != Some(state.generation) {
            state.pull_entries = state
                .fixtures
                .repos
                .iter()
                .map(|(slug, repo)| {
                    (slug.clone(), repo.pulls.iter().map(|pull| pull_request_as_issue(slug, pull)).collect())
                })
                .collect();
            state.pull_entries_generation = Some(state.generation);
        }
        let answer = match listing_key(endpoint, &path, &query) {
            Some(key) => {
                if state.listings_generation != Some(state.generation) {
                    state.listings.clear();
                    state.listings_generation = Some(state.generation);
                }
                if !state.listings.contains_key(&key) {
                    let items =
                        route(&state.fixtures, &state.pull_entries, endpoint, &path, &query, &base).map(|routed| {
                            match routed {
                                Routed::Listing(items) => items,
                                Routed::Object(value, _) => vec![value],
                            }
                        });
                    state.listings.insert(key.clone(), items);
                }
                match &state.listings[&key] {
                    Ok(items) => Ok(paginate(items.iter().collect(), &query, &path, &base)),
                    Err(error) => Err(*error),
                }
            }
            None => {
                route(&state.fixtures, &state.pull_entries, endpoint, &path, &query, &base).map(|routed| match routed {
                    Routed::Object(value, link) => (value, link),
                    Routed::Listing(items) => paginate(items.iter().collect(), &query, &path, &base),
                })
            }
        };
        let token_state = state.tokens.get_mut(&token).expect("inserted above");
        match answer {
            Err((status, message)) => (status, error_action(status, rate_headers(token_state), message)),
            Ok((body, link)) => {
                let body = body.to_string();
                let etag = {
                    use sha2::Digest;
                    format!("W/\"{}\"", &hex::encode(sha2::Sha256::digest(body.as_bytes()))[..32])
                };
                if headers.get("if-none-match").is_some_and(|value| value == &etag) {
                    // Conditional requests answered 304 do not count against the limit.
                    let mut headers = rate_headers(token_state);
                    headers.push(("ETag".into(), etag));
                    break 'answer (304, Action::Respond { status: 304, headers, body: String::new() });
                }
                token_state.remaining = token_state.remaining.saturating_sub(1);
                let mut headers = rate_headers(token_state);
                headers.push(("Content-Type".into(), "application/json; charset=utf-8".into()));
                headers.push(("ETag".into(), etag));
                if let Some(link) = link {
                    headers.push(("Link".into(), link));
                }
                (200, Action::Respond { status: 200, headers, body })
            }
        }
    };
    state.stats.total += 1;
    *state.stats.by_endpoint.entry(endpoint.to_string()).or_default().entry(status).or_default() += 1;
    *state.stats.by_url.entry(url_key).or_default().entry(status).or_default() += 1;
    (delay, action)
}

fn graphql_headers(token_state: &TokenState) -> Vec<(String, String)> {
    let mut headers = rate_headers(token_state);
    headers.retain(|(name, _)| name != "X-RateLimit-Resource");
    headers.push(("X-RateLimit-Resource".into(), "graphql".into()));
    headers.push(("Content-Type".into(), "application/json; charset=utf-8".into()));
    headers
}

fn graphql_rate_limited(token_state: &TokenState) -> (u16, Action) {
    let mut headers = graphql_headers(token_state);
    headers.retain(|(name, _)| name != "X-RateLimit-Remaining");
    headers.push(("X-RateLimit-Remaining".into(), "0".into()));
    let body = json!({"errors": [{"type": "RATE_LIMITED", "message": "API rate limit exceeded for user ID 1."}]});
    (200, Action::Respond { status: 200, headers, body: body.to_string() })
}

struct GraphqlAnswer {
    headers: Vec<(String, String)>,
    body: String,
    /// Points charged, when the query ran.
    charged: Option<u64>,
    /// Why the query was refused as invalid, if it was.
    refused: Vec<String>,
}

/// What a query is checked against before it runs.
struct Limits<'a> {
    node_limit: u64,
    timeout_above: Option<u64>,
    schema: Option<&'a super::GithubSchema>,
}

/// One GraphQL query: parsed, costed, checked against the limits, executed.
fn graphql_answer(
    fixtures: &super::Fixtures,
    comment_index: &super::graphql::CommentIndex,
    token_state: &mut TokenState,
    request: &Value,
    limits: &Limits<'_>,
) -> GraphqlAnswer {
    let (node_limit, timeout_above) = (limits.node_limit, limits.timeout_above);
    let errors_only = |token_state: &TokenState, errors: Value| GraphqlAnswer {
        headers: graphql_headers(token_state),
        body: json!({"data": null, "errors": errors}).to_string(),
        charged: None,
        refused: Vec::new(),
    };
    // An invalid query: `errors` only, no `data`, as GitHub answers it.
    let refused = |token_state: &TokenState, refusals: Vec<String>| GraphqlAnswer {
        headers: graphql_headers(token_state),
        body: json!({"errors": refusals.iter().map(|message| json!({"message": message})).collect::<Vec<_>>()})
            .to_string(),
        charged: None,
        refused: refusals,
    };
    let query = request["query"].as_str().unwrap_or_default();
    let variables = if request["variables"].is_object() { request["variables"].clone() } else { json!({}) };
    if let Some(schema) = limits.schema {
        let refusals = schema.refusals(query, request["operationName"].as_str(), &variables);
        if !refusals.is_empty() {
            return refused(token_state, refusals);
        }
    }
    let operation = match super::graphql::parse(query) {
        Ok(operation) => operation,
        Err(problem) => {
            return errors_only(token_state, json!([{"message": format!("Parse error: {problem}")}]));
        }
    };
    let pagination = super::graphql::pagination_errors(&operation, &variables);
    if !pagination.is_empty() {
        return refused(token_state, pagination);
    }
    let (cost, nodes) = super::graphql::cost_and_nodes(&operation, &variables);
    if nodes > node_limit {
        return errors_only(
            token_state,
            json!([{"type": "MAX_NODE_LIMIT_EXCEEDED", "message": format!("This query requests up to {nodes} possible nodes which exceeds the maximum limit of {node_limit}.")}]),
        );
    }
    if timeout_above.is_some_and(|limit| nodes > limit) {
        return errors_only(
            token_state,
            json!([{"message": "Something went wrong while executing your query. This may be the result of a timeout, or it could be a GitHub bug. Please include `0000:0000` when reporting this issue."}]),
        );
    }
    if token_state.remaining < cost {
        token_state.exhausted_until = token_state.reset;
        return match graphql_rate_limited(token_state) {
            (_, Action::Respond { headers, body, .. }) => {
                GraphqlAnswer { headers, body, charged: None, refused: Vec::new() }
            }
            (_, Action::Disconnect) => unreachable!("a rate-limit answer is an answer"),
        };
    }
    token_state.remaining -= cost;
    let reset_at = chrono::DateTime::from_timestamp(token_state.reset, 0).unwrap_or_default();
    let rate_limit = json!({
        "cost": cost, "limit": token_state.limit, "remaining": token_state.remaining,
        "used": token_state.limit - token_state.remaining, "nodeCount": nodes,
        "resetAt": reset_at.format("%Y-%m-%dT%H:%M:%SZ").to_string(),
    });
    let (data, errors) = super::graphql::execute(fixtures, comment_index, &operation, &variables, rate_limit);
    let body = if errors.is_empty() { json!({"data": data}) } else { json!({"data": data, "errors": errors}) };
    GraphqlAnswer {
        headers: graphql_headers(token_state),
        body: body.to_string(),
        charged: Some(cost),
        refused: Vec::new(),
    }
}

fn primary_exhausted(token_state: &TokenState) -> (u16, Action) {
    let mut headers = rate_headers(token_state);
    headers.retain(|(name, _)| name != "X-RateLimit-Remaining");
    headers.push(("X-RateLimit-Remaining".into(), "0".into()));
    (403, error_action(403, headers, "API rate limit exceeded for user ID 1."))
}

fn rate_headers(token_state: &TokenState) -> Vec<(String, String)> {
    vec![
        ("X-RateLimit-Limit".into(), token_state.limit.to_string()),
        ("X-RateLimit-Remaining".into(), token_state.remaining.to_string()),
        ("X-RateLimit-Reset".into(), token_state.reset.to_string()),
        ("X-RateLimit-Used".into(), (token_state.limit - token_state.remaining).to_string()),
        ("X-RateLimit-Resource".into(), "core".into()),
    ]
}

fn error_action(status: u16, mut headers: Vec<(String, String)>, message: &str) -> Action {
    headers.push(("Content-Type".into(), "application/json; charset=utf-8".into()));
    let body = json!({"message": message, "documentation_url": "https://docs.github.com/rest"}).to_string();
    Action::Respond { status, headers, body }
}

fn ok_json(body: String) -> Action {
    Action::Respond { status: 200, headers: vec![("Content-Type".into(), "application/json".into())], body }
}

fn classify(path: &str) -> &'static str {
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    match segments.as_slice() {
        ["_sim", "stats"] => "sim_stats",
        ["graphql"] => "graphql",
        ["search", "repositories"] => "search_repositories",
        ["repos", _, _, "pulls"] => "pulls",
        ["repos", _, _, "issues"] => "issues",
        ["repos", _, _, "issues", "comments"] => "issue_comments",
        ["repos", _, _, "issues", _] => "issue",
        ["repos", _, _, "issues", _, "comments"] => "comments_of_issue",
        _ => "other",
    }
}

type Answer = Result<(Value, Option<String>), (u16, &'static str)>;

/// What a route produced: one object (with its Link header), or a whole sorted
/// listing that the caller caches and pages.
enum Routed {
    Object(Value, Option<String>),
    Listing(Vec<Value>),
}

/// Listings are cached per URL (without `page`/`per_page`) until the fixtures
/// change, so that paging a large repository does not re-sort it per request.
fn listing_key(endpoint: &str, path: &str, query: &[(String, String)]) -> Option<String> {
    if !matches!(endpoint, "pulls" | "issues" | "issue_comments" | "comments_of_issue") {
        return None;
    }
    let mut pairs: Vec<String> = query
        .iter()
        .filter(|(key, _)| key != "page" && key != "per_page")
        .map(|(key, value)| format!("{key}={value}"))
        .collect();
    pairs.sort();
    Some(format!("{path}?{}", pairs.join("&")))
}

fn route(
    fixtures: &super::Fixtures,
    pull_entries: &BTreeMap<String, Vec<Value>>,
    endpoint: &str,
    path: &str,
    query: &[(String, String)],
    base: &str,
) -> Result<Routed, (u16, &'static str)> {
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    let param = |name: &str| query.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str());
    let since = param("since").and_then(|text| parse_time(&Value::String(text.to_string())));
    if endpoint == "search_repositories" {
        return search(fixtures, query, path, base).map(|(value, link)| Routed::Object(value, link));
    }
    if segments.len() < 3 {
        return Err((404, "Not Found"));
    }
    let slug = format!("{}/{}", segments[1], segments[2]);
    let Some(repo) = fixtures.repos.get(&slug) else { return Err((404, "Not Found")) };
    match endpoint {
        "pulls" => {
            let state = param("state").unwrap_or("open");
            let items: Vec<&Value> = repo.pulls.iter().filter(|pull| state_matches(pull, state)).collect();
            let items = sorted(items, param("sort").unwrap_or("created"), param("direction").unwrap_or("desc"));
            Ok(Routed::Listing(items.into_iter().cloned().collect()))
        }
        "issues" => {
            let state = param("state").unwrap_or("open");
            let entries = pull_entries.get(&slug).map(Vec::as_slice).unwrap_or(&[]);
            let items: Vec<&Value> = repo
                .issues
                .iter()
                .chain(entries.iter())
                .filter(|issue| state_matches(issue, state))
                .filter(|issue| since.is_none_or(|since| updated(issue) >= since))
                .collect();
            let items = sorted(items, param("sort").unwrap_or("created"), param("direction").unwrap_or("desc"));
            Ok(Routed::Listing(items.into_iter().cloned().collect()))
        }
        "issue_comments" => {
            let items: Vec<&Value> =
                repo.comments.iter().filter(|comment| since.is_none_or(|since| updated(comment) >= since)).collect();
            let direction = param("direction").unwrap_or(if param("sort").is_some() { "desc" } else { "asc" });
            let items = sorted(items, param("sort").unwrap_or("created"), direction);
            Ok(Routed::Listing(items.into_iter().cloned().collect()))
        }
        "issue" => {
            let number: u64 = segments[4].parse().map_err(|_| (404, "Not Found"))?;
            if let Some(issue) = repo.issues.iter().find(|issue| issue["number"].as_u64() == Some(number)) {
                return Ok(Routed::Object(issue.clone(), None));
            }
            if let Some(pull) = repo.pulls.iter().find(|pull| pull["number"].as_u64() == Some(number)) {
                return Ok(Routed::Object(pull_request_as_issue(&slug, pull), None));
            }
            Err((404, "Not Found"))
        }
        "comments_of_issue" => {
            let number: u64 = segments[4].parse().map_err(|_| (404, "Not Found"))?;
            let exists =
                repo.issues.iter().chain(repo.pulls.iter()).any(|item| item["number"].as_u64() == Some(number));
            if !exists {
                return Err((404, "Not Found"));
            }
            let suffix = format!("/issues/{number}");
            let items: Vec<&Value> = repo
                .comments
                .iter()
                .filter(|comment| comment["issue_url"].as_str().is_some_and(|url| url.ends_with(&suffix)))
                .filter(|comment| since.is_none_or(|since| updated(comment) >= since))
                .collect();
            Ok(Routed::Listing(sorted(items, "created", "asc").into_iter().cloned().collect()))
        }
        _ => Err((404, "Not Found")),
    }
}

fn state_matches(item: &Value, state: &str) -> bool {
    state == "all" || item["state"].as_str() == Some(state)
}

fn updated(item: &Value) -> DateTime<Utc> {
    parse_time(&item["updated_at"]).or_else(|| parse_time(&item["created_at"])).unwrap_or_default()
}

fn sorted<'a>(mut items: Vec<&'a Value>, sort: &str, direction: &str) -> Vec<&'a Value> {
    let field = if sort == "updated" { "updated_at" } else { "created_at" };
    // Ties broken by id, as a database would, so pages are stable.
    items.sort_by_cached_key(|item| (parse_time(&item[field]).unwrap_or_default(), item["id"].as_u64().unwrap_or(0)));
    if direction != "asc" {
        items.reverse();
    }
    items
}

fn per_page_and_page(query: &[(String, String)]) -> (usize, usize) {
    let get = |name: &str| query.iter().find(|(key, _)| key == name).and_then(|(_, value)| value.parse::<usize>().ok());
    (get("per_page").unwrap_or(30).clamp(1, 100), get("page").unwrap_or(1).max(1))
}

fn page_url(base: &str, path: &str, query: &[(String, String)], page: usize) -> String {
    let mut pairs: Vec<String> =
        query.iter().filter(|(key, _)| key != "page").map(|(key, value)| format!("{key}={}", encode(value))).collect();
    pairs.push(format!("page={page}"));
    format!("{base}{path}?{}", pairs.join("&"))
}

fn link_header(base: &str, path: &str, query: &[(String, String)], page: usize, pages: usize) -> Option<String> {
    let mut links = Vec::new();
    if page < pages {
        links.push(format!("<{}>; rel=\"next\"", page_url(base, path, query, page + 1)));
        links.push(format!("<{}>; rel=\"last\"", page_url(base, path, query, pages)));
    }
    if page > 1 {
        links.push(format!("<{}>; rel=\"first\"", page_url(base, path, query, 1)));
        links.push(format!("<{}>; rel=\"prev\"", page_url(base, path, query, page - 1)));
    }
    (!links.is_empty()).then(|| links.join(", "))
}

fn paginate(items: Vec<&Value>, query: &[(String, String)], path: &str, base: &str) -> (Value, Option<String>) {
    let (per_page, page) = per_page_and_page(query);
    let pages = items.len().div_ceil(per_page).max(1);
    let slice: Vec<Value> = items.into_iter().skip((page - 1) * per_page).take(per_page).cloned().collect();
    (Value::Array(slice), link_header(base, path, query, page, pages))
}

/// `GET /search/repositories?q=language:L stars:>=N pushed:>=DATE license:KEY`.
fn search(fixtures: &super::Fixtures, query: &[(String, String)], path: &str, base: &str) -> Answer {
    let q =
        query.iter().find(|(key, _)| key == "q").map(|(_, value)| value.clone()).ok_or((422, "Validation Failed"))?;
    let mut items: Vec<Value> = fixtures.search_repositories.clone();
    for term in q.split_whitespace() {
        let Some((qualifier, value)) = term.split_once(':') else { continue };
        items.retain(|repo| match qualifier {
            "language" => repo["language"].as_str().is_some_and(|language| language.eq_ignore_ascii_case(value)),
            "stars" => {
                let stars = repo["stargazers_count"].as_f64().unwrap_or(0.0);
                match value.split_once("..") {
                    // GitHub's range `LOW..HIGH`, both ends included.
                    Some((low, high)) => {
                        compare(stars, &format!(">={low}"), |text| text.parse().ok())
                            && compare(stars, &format!("<={high}"), |text| text.parse().ok())
                    }
                    None => compare(stars, value, |text| text.parse().ok()),
                }
            }
            "pushed" => {
                let pushed = parse_time(&repo["pushed_at"]).map(|time| time.timestamp() as f64).unwrap_or(0.0);
                compare(pushed, value, |text| {
                    chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d")
                        .ok()
                        .map(|day| day.and_hms_opt(0, 0, 0).unwrap().and_utc().timestamp() as f64)
                })
            }
            "license" => repo["license"]["key"].as_str() == Some(value),
            "archived" => repo["archived"].as_bool().map(|archived| archived.to_string()).as_deref() == Some(value),
            "fork" | "is" => true,
            _ => true,
        });
    }
    items.sort_by(|a, b| {
        let stars = |repo: &Value| repo["stargazers_count"].as_u64().unwrap_or(0);
        stars(b).cmp(&stars(a)).then_with(|| a["full_name"].as_str().cmp(&b["full_name"].as_str()))
    });
    let total = items.len();
    items.truncate(1000);
    let (page_items, link) = paginate(items.iter().collect(), query, path, base);
    Ok((json!({"total_count": total, "incomplete_results": false, "items": page_items}), link))
}

fn compare(actual: f64, condition: &str, parse: impl Fn(&str) -> Option<f64>) -> bool {
    let (operator, text) = if let Some(rest) = condition.strip_prefix(">=") {
        (">=", rest)
    } else if let Some(rest) = condition.strip_prefix("<=") {
        ("<=", rest)
    } else if let Some(rest) = condition.strip_prefix('>') {
        (">", rest)
    } else if let Some(rest) = condition.strip_prefix('<') {
        ("<", rest)
    } else {
        ("=", condition)
    };
    let Some(expected) = parse(text) else { return false };
    match operator {
        ">=" => actual >= expected,
        "<=" => actual <= expected,
        ">" => actual > expected,
        "<" => actual < expected,
        _ => actual == expected,
    }
}

fn parse_query(text: &str) -> Vec<(String, String)> {
    text.split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            (decode(key), decode(value))
        })
        .collect()
}

/// A query string's key or value: `+` is a space, `%XX` a byte.
fn decode(text: &str) -> String {
    percent_encoding::percent_decode_str(&text.replace('+', " ")).decode_utf8_lossy().into_owned()
}

/// A query value in a link: RFC 3986's unreserved characters stay as they are (the
/// simulator encodes by itself, not with the client's code it serves).
fn encode(text: &str) -> String {
    const UNRESERVED: &percent_encoding::AsciiSet =
        &percent_encoding::NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.').remove(b'~');
    percent_encoding::utf8_percent_encode(text, UNRESERVED).to_string()
}
