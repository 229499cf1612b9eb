//! The simulator's GraphQL endpoint (`POST /graphql`, and `/api/graphql` as on
//! GitHub Enterprise): a small parser of the query language (operations, selection
//! sets, aliases, arguments with variables, lists and objects, inline fragments,
//! named fragments and their spreads) and an executor of the fields the crawl uses,
//! answered from the same fixtures as the REST endpoints. Not a GraphQL server:
//! unknown fields answer `null`. Whether a query is valid at all is decided first,
//! against GitHub's own schema (`schema.rs`), and by GitHub's pagination rules
//! ([`pagination_errors`]).
//!
//! GitHub's manners that the crawl must handle are reproduced: cursor pagination
//! (`first`/`after`, `pageInfo`), `rateLimit { cost remaining resetAt limit }`, the
//! point cost computed as GitHub documents it (every connection counts the requests
//! needed to fill it, assuming each parent list is full; the sum divided by 100,
//! at least 1), the node limit (`MAX_NODE_LIMIT_EXCEEDED`, 500,000 by default) and
//! `NOT_FOUND` errors beside partial data for numbers that resolve to nothing.
//!
//! `closingIssuesReferences` of a pull request comes from its fixture's
//! `_closing_issues` list (numbers of the same repository) when present, else from
//! the closing keywords of its body, as GitHub links them (existing issues only).
//! Commit messages come from `_commit_messages`, else one commit titled like the PR.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde_json::{Map, Value, json};

use super::data::parse_time;

/// A parsed field of a selection set.
#[derive(Debug, Clone)]
pub(crate) struct Field {
    alias: Option<String>,
    name: String,
    arguments: Vec<(String, Input)>,
    selections: Vec<Selection>,
}

#[derive(Debug, Clone)]
pub(crate) enum Selection {
    Field(Field),
    /// `... on Type { ... }`, and a named fragment's spread once resolved.
    Fragment {
        on: String,
        selections: Vec<Selection>,
    },
    /// `...Name`, before [`parse`] resolves it.
    Spread(String),
}

#[derive(Debug, Clone)]
pub(crate) enum Input {
    Variable(String),
    Literal(Value),
    Enum(String),
    List(Vec<Input>),
    Object(Vec<(String, Input)>),
}

/// A parsed operation.
#[derive(Debug)]
pub(crate) struct Operation {
    pub name: Option<String>,
    selections: Vec<Selection>,
}

struct Parser<'a> {
    text: &'a [u8],
    position: usize,
}

impl Parser<'_> {
    fn skip_blank(&mut self) {
        while self.position < self.text.len() {
            match self.text[self.position] {
                b' ' | b'\t' | b'\n' | b'\r' | b',' => self.position += 1,
                b'#' => {
                    while self.position < self.text.len() && self.text[self.position] != b'\n' {
                        self.position += 1;
                    }
                }
                _ => break,
            }
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_blank();
        self.text.get(self.position).copied()
    }

    fn expect(&mut self, byte: u8) -> Result<(), String> {
        if self.peek() == Some(byte) {
            self.position += 1;
            Ok(())
        } else {
            Err(format!("expected `{}` at offset {}", byte as char, self.position))
        }
    }

    fn name(&mut self) -> Result<String, String> {
        self.skip_blank();
        let start = self.position;
        while self.position < self.text.len()
            && (self.text[self.position].is_ascii_alphanumeric() || self.text[self.position] == b'_')
        {
            self.position += 1;
        }
        if start == self.position {
            return Err(format!("expected a name at offset {start}"));
        }
        Ok(String::from_utf8_lossy(&self.text[start..self.position]).into_owned())
    }

    fn operation(&mut self) -> Result<Operation, String> {
        let mut name = None;
        if self.peek() != Some(b'{') {
            let keyword = self.name()?;
            if keyword != "query" {
                return Err(format!("only queries are supported, not `{keyword}`"));
            }
            if self.peek().is_some_and(|byte| byte.is_ascii_alphabetic()) {
                name = Some(self.name()?);
            }
            if self.peek() == Some(b'(') {
                // Variable definitions: their types do not matter here.
                let mut depth = 0;
                while let Some(byte) = self.text.get(self.position) {
                    self.position += 1;
                    match byte {
                        b'(' => depth += 1,
                        b')' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                }
            }
        }
        let selections = self.selection_set()?;
        Ok(Operation { name, selections })
    }

    fn selection_set(&mut self) -> Result<Vec<Selection>, String> {
        self.expect(b'{')?;
        let mut selections = Vec::new();
        while self.peek() != Some(b'}') {
            if self.peek().is_none() {
                return Err("unterminated selection set".into());
            }
            if self.text[self.position..].starts_with(b"...") {
                self.position += 3;
                let keyword = self.name()?;
                if keyword != "on" {
                    selections.push(Selection::Spread(keyword));
                    continue;
                }
                let on = self.name()?;
                selections.push(Selection::Fragment { on, selections: self.selection_set()? });
                continue;
            }
            let mut name = self.name()?;
            let mut alias = None;
            if self.peek() == Some(b':') {
                self.position += 1;
                alias = Some(name);
                name = self.name()?;
            }
            let mut arguments = Vec::new();
            if self.peek() == Some(b'(') {
                self.position += 1;
                while self.peek() != Some(b')') {
                    let key = self.name()?;
                    self.expect(b':')?;
                    arguments.push((key, self.input()?));
                }
                self.position += 1;
            }
            let children = if self.peek() == Some(b'{') { self.selection_set()? } else { Vec::new() };
            let field = Field { alias, name, arguments, selections: children };
            selections.push(Selection::Field(field));
        }
        self.position += 1;
        Ok(selections)
    }

    fn input(&mut self) -> Result<Input, String> {
        match self.peek() {
            Some(b'$') => {
                self.position += 1;
                Ok(Input::Variable(self.name()?))
            }
            Some(b'"') => {
                self.position += 1;
                let start = self.position;
                while self.position < self.text.len() && self.text[self.position] != b'"' {
                    if self.text[self.position] == b'\\' {
                        self.position += 1;
                    }
                    self.position += 1;
                }
                let raw = String::from_utf8_lossy(&self.text[start..self.position]).into_owned();
                self.position += 1;
                let value: Value = serde_json::from_str(&format!("\"{raw}\"")).map_err(|error| error.to_string())?;
                Ok(Input::Literal(value))
            }
            Some(b'[') => {
                self.position += 1;
                let mut items = Vec::new();
                while self.peek() != Some(b']') {
                    items.push(self.input()?);
                }
                self.position += 1;
                Ok(Input::List(items))
            }
            Some(b'{') => {
                self.position += 1;
                let mut entries = Vec::new();
                while self.peek() != Some(b'}') {
                    let key = self.name()?;
                    self.expect(b':')?;
                    entries.push((key, self.input()?));
                }
                self.position += 1;
                Ok(Input::Object(entries))
            }
            Some(byte) if byte == b'-' || byte.is_ascii_digit() => {
                let start = self.position;
                self.position += 1;
                while self.position < self.text.len()
                    && (self.text[self.position].is_ascii_digit() || self.text[self.position] == b'.')
                {
                    self.position += 1;
                }
                let text = String::from_utf8_lossy(&self.text[start..self.position]).into_owned();
                Ok(Input::Literal(serde_json::from_str(&text).map_err(|error| error.to_string())?))
            }
            _ => {
                let name = self.name()?;
                Ok(match name.as_str() {
                    "true" => Input::Literal(Value::Bool(true)),
                    "false" => Input::Literal(Value::Bool(false)),
                    "null" => Input::Literal(Value::Null),
                    _ => Input::Enum(name),
                })
            }
        }
    }
}

/// Parses a document of one operation and any named fragments, and resolves the
/// fragments' spreads into inline fragments.
pub(crate) fn parse(query: &str) -> Result<Operation, String> {
    let mut parser = Parser { text: query.as_bytes(), position: 0 };
    let mut operation = None;
    let mut fragments: BTreeMap<String, (String, Vec<Selection>)> = BTreeMap::new();
    while parser.peek().is_some() {
        if parser.text[parser.position..].starts_with(b"fragment ") {
            parser.name()?;
            let name = parser.name()?;
            if parser.name()? != "on" {
                return Err(format!("fragment `{name}` lacks `on Type`"));
            }
            let on = parser.name()?;
            fragments.insert(name, (on, parser.selection_set()?));
        } else if operation.is_some() {
            return Err("only one operation per document is supported".into());
        } else {
            operation = Some(parser.operation()?);
        }
    }
    let mut operation = operation.ok_or("the document holds no operation")?;
    operation.selections = resolve_spreads(&operation.selections, &fragments, 0)?;
    Ok(operation)
}

fn resolve_spreads(
    selections: &[Selection],
    fragments: &BTreeMap<String, (String, Vec<Selection>)>,
    depth: usize,
) -> Result<Vec<Selection>, String> {
    if depth > 32 {
        return Err("fragments nest too deep (a cycle?)".into());
    }
    selections
        .iter()
        .map(|selection| {
            Ok(match selection {
                Selection::Field(field) => Selection::Field(Field {
                    selections: resolve_spreads(&field.selections, fragments, depth + 1)?,
                    ..field.clone()
                }),
                Selection::Fragment { on, selections } => Selection::Fragment {
                    on: on.clone(),
                    selections: resolve_spreads(selections, fragments, depth + 1)?,
                },
                Selection::Spread(name) => {
                    let (on, selections) = fragments.get(name).ok_or(format!("unknown fragment `{name}`"))?;
                    Selection::Fragment {
                        on: on.clone(),
                        selections: resolve_spreads(selections, fragments, depth + 1)?,
                    }
                }
            })
        })
        .collect()
}

/// GitHub's pagination rules, which its schema cannot say: a connection whose
/// `nodes` or `edges` are asked for needs `first` or `last`, at most 100.
pub(crate) fn pagination_errors(operation: &Operation, variables: &Value) -> Vec<String> {
    fn walk(selections: &[Selection], variables: &Value, errors: &mut Vec<String>) {
        for selection in selections {
            match selection {
                Selection::Fragment { selections, .. } => walk(selections, variables, errors),
                Selection::Spread(_) => {}
                Selection::Field(field) => {
                    let lists_items = field.selections.iter().any(
                        |child| matches!(child, Selection::Field(child) if child.name == "nodes" || child.name == "edges"),
                    );
                    if lists_items {
                        let bound = field
                            .argument("first", variables)
                            .as_u64()
                            .or_else(|| field.argument("last", variables).as_u64());
                        match bound {
                            None => errors.push(format!(
                                "You must provide a `first` or `last` value to properly paginate the `{}` connection.",
                                field.name
                            )),
                            Some(bound) if bound > 100 => errors.push(format!(
                                "Requesting {bound} records on the `{}` connection exceeds the `first` limit of 100 records.",
                                field.name
                            )),
                            Some(_) => {}
                        }
                    }
                    walk(&field.selections, variables, errors);
                }
            }
        }
    }
    let mut errors = Vec::new();
    walk(&operation.selections, variables, &mut errors);
    errors
}

fn resolve(input: &Input, variables: &Value) -> Value {
    match input {
        Input::Variable(name) => variables.get(name).cloned().unwrap_or(Value::Null),
        Input::Literal(value) => value.clone(),
        Input::Enum(name) => Value::String(name.clone()),
        Input::List(items) => Value::Array(items.iter().map(|item| resolve(item, variables)).collect()),
        Input::Object(entries) => {
            Value::Object(entries.iter().map(|(key, value)| (key.clone(), resolve(value, variables))).collect())
        }
    }
}

impl Field {
    fn argument(&self, name: &str, variables: &Value) -> Value {
        self.arguments
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, input)| resolve(input, variables))
            .unwrap_or(Value::Null)
    }
}

/// GitHub's cost of a query and the nodes it may return: every connection (a field
/// with `first`) counts one request per possible parent, and multiplies the parents
/// of what it holds.
pub(crate) fn cost_and_nodes(operation: &Operation, variables: &Value) -> (u64, u64) {
    fn walk(selections: &[Selection], variables: &Value, multiplier: u64, requests: &mut u64, nodes: &mut u64) {
        for selection in selections {
            match selection {
                Selection::Fragment { selections, .. } => walk(selections, variables, multiplier, requests, nodes),
                Selection::Spread(_) => {}
                Selection::Field(field) => {
                    let first = field
                        .argument("first", variables)
                        .as_u64()
                        .or_else(|| field.argument("last", variables).as_u64());
                    match first {
                        Some(first) => {
                            *requests += multiplier;
                            *nodes += multiplier * first;
                            walk(&field.selections, variables, multiplier * first, requests, nodes);
                        }
                        None => walk(&field.selections, variables, multiplier, requests, nodes),
                    }
                }
            }
        }
    }
    let (mut requests, mut nodes) = (0, 0);
    walk(&operation.selections, variables, 1, &mut requests, &mut nodes);
    (((requests as f64) / 100.0).round().max(1.0) as u64, nodes)
}

/// What a field is resolved on.
#[derive(Clone)]
enum Node<'a> {
    Root,
    Repository(&'a str, &'a SimRepo),
    Pull(&'a str, &'a SimRepo, &'a Value),
    Issue(&'a str, &'a SimRepo, &'a Value),
    Comment(&'a Value),
    Json(Value),
}

use super::Fixtures;
use super::data::SimRepo;

impl Node<'_> {
    fn typename(&self) -> &'static str {
        match self {
            Node::Root => "Query",
            Node::Repository(..) => "Repository",
            Node::Pull(..) => "PullRequest",
            Node::Issue(..) => "Issue",
            Node::Comment(..) => "IssueComment",
            Node::Json(..) => "Object",
        }
    }
}

struct Executor<'a> {
    fixtures: &'a Fixtures,
    variables: &'a Value,
    rate_limit: Value,
    errors: Vec<Value>,
    /// Comments by repository and issue number, oldest first; built on first use.
    comments_by_issue: &'a CommentIndex,
}

/// Comments by repository and issue number, as indexes into the repository's
/// comments, oldest first. Built once per version of the fixtures.
pub(crate) type CommentIndex = BTreeMap<String, BTreeMap<u64, Vec<usize>>>;

pub(crate) fn comment_index(fixtures: &Fixtures) -> CommentIndex {
    fixtures
        .repos
        .iter()
        .map(|(slug, repo)| {
            let mut index: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
            for (position, comment) in repo.comments.iter().enumerate() {
                if let Some(number) = issue_number_of_comment(comment) {
                    index.entry(number).or_default().push(position);
                }
            }
            for positions in index.values_mut() {
                positions.sort_by_cached_key(|position| {
                    let comment = &repo.comments[*position];
                    (parse_time(&comment["created_at"]).unwrap_or_default(), comment["id"].as_u64())
                });
            }
            (slug.clone(), index)
        })
        .collect()
}

/// Executes a parsed query: `data` and the `errors` beside it.
pub(crate) fn execute(
    fixtures: &Fixtures,
    comments_by_issue: &CommentIndex,
    operation: &Operation,
    variables: &Value,
    rate_limit: Value,
) -> (Value, Vec<Value>) {
    let mut executor = Executor { fixtures, variables, rate_limit, errors: Vec::new(), comments_by_issue };
    let data = executor.object(&Node::Root, &operation.selections, &mut Vec::new());
    (data, executor.errors)
}

fn time_field(item: &Value, rest_name: &str) -> Value {
    item.get(rest_name).cloned().unwrap_or(Value::Null)
}

fn updated(item: &Value) -> DateTime<Utc> {
    parse_time(&item["updated_at"]).or_else(|| parse_time(&item["created_at"])).unwrap_or_default()
}

fn issue_number_of_comment(comment: &Value) -> Option<u64> {
    comment["issue_url"].as_str()?.rsplit('/').next()?.parse().ok()
}

/// Numbers of issues that a PR body closes by keyword, GitHub's way: `#N`,
/// `owner/name#N`, issue URLs; (slug, number) pairs.
fn closing_keywords(slug: &str, body: &str) -> Vec<(String, u64)> {
    use std::sync::OnceLock;
    static PATTERN: OnceLock<regex::Regex> = OnceLock::new();
    let pattern = PATTERN.get_or_init(|| {
        regex::Regex::new(
            r"(?i)\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)[ \t]*:?[ \t]*(?:(?:([a-z0-9-]+)/([a-z0-9._-]+))?#(\d+)|https?://github\.com/([a-z0-9-]+)/([a-z0-9._-]+)/issues/(\d+))\b",
        )
        .expect("a valid pattern")
    });
    static COMMENT: OnceLock<regex::Regex> = OnceLock::new();
    let comment = COMMENT.get_or_init(|| regex::Regex::new(r"(?s)<!--.*?(?:-->|\z)").expect("a valid pattern"));
    let text = comment.replace_all(body, "").into_owned();
    let mut found = Vec::new();
    for captures in pattern.captures_iter(&text) {
        let (owner, name, number) = match (captures.get(3), captures.get(6)) {
            (Some(number), _) => (captures.get(1), captures.get(2), number),
            (None, Some(number)) => (captures.get(4), captures.get(5), number),
            _ => continue,
        };
        let target = match (owner, name) {
            (Some(owner), Some(name)) => format!("{}/{}", owner.as_str(), name.as_str()),
            _ => slug.to_string(),
        };
        if let Ok(number) = number.as_str().parse::<u64>() {
            if !found.contains(&(target.clone(), number)) {
                found.push((target, number));
            }
        }
    }
    found
}

impl<'a> Executor<'a> {
    fn object(&mut self, node: &Node<'a>, selections: &[Selection], path: &mut Vec<Value>) -> Value {
        let mut out = Map::new();
        self.fill(node, selections, path, &mut out);
        Value::Object(out)
    }

    fn fill(&mut self, node: &Node<'a>, selections: &[Selection], path: &mut Vec<Value>, out: &mut Map<String, Value>) {
        for selection in selections {
            match selection {
                Selection::Fragment { on, selections } => {
                    if on == node.typename() {
                        self.fill(node, selections, path, out);
                    }
                }
                Selection::Spread(_) => {}
                Selection::Field(field) => {
                    let key = field.alias.clone().unwrap_or_else(|| field.name.clone());
                    path.push(Value::String(key.clone()));
                    let value = self.field(node, field, path);
                    path.pop();
                    out.insert(key, value);
                }
            }
        }
    }

    fn not_found(&mut self, path: &[Value], message: String) -> Value {
        self.errors.push(json!({"type": "NOT_FOUND", "path": path, "locations": [], "message": message}));
        Value::Null
    }

    fn project(&mut self, value: Value, field: &Field, path: &mut Vec<Value>) -> Value {
        match value {
            Value::Object(_) if !field.selections.is_empty() => {
                self.object(&Node::Json(value), &field.selections, path)
            }
            other => other,
        }
    }

    fn connection(&mut self, items: Vec<Node<'a>>, field: &Field, path: &mut Vec<Value>) -> Value {
        let first = field.argument("first", self.variables).as_u64().unwrap_or(100).min(100) as usize;
        let offset = field
            .argument("after", self.variables)
            .as_str()
            .and_then(|cursor| cursor.strip_prefix("cursor:"))
            .and_then(|offset| offset.parse::<usize>().ok())
            .unwrap_or(0);
        let total = items.len();
        let end = (offset + first).min(total);
        let page: Vec<Node<'a>> = items.into_iter().skip(offset).take(first).collect();
        let mut out = Map::new();
        for selection in &field.selections {
            let Selection::Field(child) = selection else { continue };
            let key = child.alias.clone().unwrap_or_else(|| child.name.clone());
            path.push(Value::String(key.clone()));
            let value = match child.name.as_str() {
                "totalCount" => json!(total),
                "pageInfo" => {
                    let info = json!({
                        "hasNextPage": end < total,
                        "hasPreviousPage": offset > 0,
                        "endCursor": (end > offset).then(|| format!("cursor:{end}")),
                        "startCursor": (end > offset).then(|| format!("cursor:{offset}")),
                    });
                    self.project(info, child, path)
                }
                "nodes" => Value::Array(page.iter().map(|node| self.object(node, &child.selections, path)).collect()),
                _ => Value::Null,
            };
            path.pop();
            out.insert(key, value);
        }
        Value::Object(out)
    }

    fn field(&mut self, node: &Node<'a>, field: &Field, path: &mut Vec<Value>) -> Value {
        let name = field.name.as_str();
        if name == "__typename" {
            return Value::String(node.typename().into());
        }
        let argument = |key: &str| field.argument(key, self.variables);
        match node {
            Node::Root => match name {
                "rateLimit" => self.project(self.rate_limit.clone(), field, path),
                "search" => {
                    let text = argument("query").as_str().unwrap_or_default().to_string();
                    match search_count(self.fixtures, &text, argument("type").as_str().unwrap_or_default()) {
                        Ok(count) => self.project(json!({"issueCount": count}), field, path),
                        Err(problem) => {
                            self.errors.push(json!({"path": path, "locations": [], "message": problem}));
                            Value::Null
                        }
                    }
                }
                "repository" => {
                    let slug = format!(
                        "{}/{}",
                        argument("owner").as_str().unwrap_or_default(),
                        argument("name").as_str().unwrap_or_default()
                    );
                    match self.fixtures.repos.get_key_value(&slug) {
                        Some((slug, repo)) => self.object(&Node::Repository(slug, repo), &field.selections, path),
                        None => {
                            self.not_found(path, format!("Could not resolve to a Repository with the name '{slug}'."))
                        }
                    }
                }
                _ => Value::Null,
            },
            Node::Repository(slug, repo) => match name {
                "nameWithOwner" => Value::String(slug.to_string()),
                "pullRequests" => {
                    let states: Vec<String> = argument("states")
                        .as_array()
                        .map(|states| states.iter().filter_map(|state| state.as_str().map(str::to_string)).collect())
                        .unwrap_or_default();
                    let mut pulls: Vec<&Value> = repo
                        .pulls
                        .iter()
                        .filter(|pull| {
                            let state = if !pull["merged_at"].is_null() {
                                "MERGED"
                            } else if pull["state"] == "closed" {
                                "CLOSED"
                            } else {
                                "OPEN"
                            };
                            states.is_empty() || states.iter().any(|wanted| wanted == state)
                        })
                        .collect();
                    order(&mut pulls, &argument("orderBy"));
                    let nodes = pulls.into_iter().map(|pull| Node::Pull(slug, repo, pull)).collect();
                    self.connection(nodes, field, path)
                }
                "issues" => {
                    let filter = argument("filterBy");
                    let since = parse_time(&filter["since"]);
                    let mut issues: Vec<&Value> =
                        repo.issues.iter().filter(|issue| since.is_none_or(|since| updated(issue) >= since)).collect();
                    order(&mut issues, &argument("orderBy"));
                    let nodes = issues.into_iter().map(|issue| Node::Issue(slug, repo, issue)).collect();
                    self.connection(nodes, field, path)
                }
                "issue" | "issueOrPullRequest" | "pullRequest" => {
                    let number = argument("number").as_u64().unwrap_or(0);
                    let issue = repo.issues.iter().find(|issue| issue["number"].as_u64() == Some(number));
                    let pull = repo.pulls.iter().find(|pull| pull["number"].as_u64() == Some(number));
                    let found = match (name, issue, pull) {
                        ("issue" | "issueOrPullRequest", Some(issue), _) => Some(Node::Issue(slug, repo, issue)),
                        ("pullRequest" | "issueOrPullRequest", _, Some(pull)) => Some(Node::Pull(slug, repo, pull)),
                        _ => None,
                    };
                    match found {
                        Some(found) => self.object(&found, &field.selections, path),
                        None => {
                            let kind = if name == "pullRequest" { "PullRequest" } else { "Issue" };
                            self.not_found(path, format!("Could not resolve to an {kind} with the number of {number}."))
                        }
                    }
                }
                _ => Value::Null,
            },
            Node::Pull(slug, repo, pull) => match name {
                "number" | "title" | "body" => pull[name].clone(),
                "state" => Value::String(if !pull["merged_at"].is_null() {
                    "MERGED".into()
                } else {
                    pull["state"].as_str().unwrap_or("closed").to_uppercase()
                }),
                "createdAt" => time_field(pull, "created_at"),
                "updatedAt" => time_field(pull, "updated_at"),
                "mergedAt" => time_field(pull, "merged_at"),
                "closedAt" => time_field(pull, "closed_at"),
                "baseRefName" => pull["base"]["ref"].clone(),
                "baseRefOid" => pull["base"]["sha"].clone(),
                "headRefName" => pull["head"]["ref"].clone(),
                "headRefOid" => pull["head"]["sha"].clone(),
                "mergeCommit" => match pull["merge_commit_sha"].as_str() {
                    Some(oid) => self.project(json!({"oid": oid}), field, path),
                    None => Value::Null,
                },
                "author" => self.author(&pull["user"], field, path),
                "labels" => {
                    let labels = pull["labels"].as_array().cloned().unwrap_or_default();
                    let nodes = labels.into_iter().map(|label| Node::Json(json!({"name": label["name"]}))).collect();
                    self.connection(nodes, field, path)
                }
                "commits" => {
                    let messages: Vec<String> = match pull["_commit_messages"].as_array() {
                        Some(messages) => messages.iter().filter_map(|m| m.as_str().map(str::to_string)).collect(),
                        None => vec![pull["title"].as_str().unwrap_or_default().to_string()],
                    };
                    let nodes = messages
                        .into_iter()
                        .map(|message| Node::Json(json!({"commit": {"message": message}})))
                        .collect();
                    self.connection(nodes, field, path)
                }
                "closingIssuesReferences" => {
                    let targets: Vec<(String, u64)> = match pull["_closing_issues"].as_array() {
                        Some(numbers) => {
                            numbers.iter().filter_map(Value::as_u64).map(|number| (slug.to_string(), number)).collect()
                        }
                        None => closing_keywords(slug, pull["body"].as_str().unwrap_or_default()),
                    };
                    let mut nodes = Vec::new();
                    for (target, number) in targets {
                        let Some((target_slug, target_repo)) = self.fixtures.repos.get_key_value(&target) else {
                            continue;
                        };
                        if let Some(issue) =
                            target_repo.issues.iter().find(|issue| issue["number"].as_u64() == Some(number))
                        {
                            nodes.push(Node::Issue(target_slug, target_repo, issue));
                        }
                    }
                    let _ = repo;
                    self.connection(nodes, field, path)
                }
                _ => Value::Null,
            },
            Node::Issue(slug, repo, issue) => match name {
                "number" | "title" | "body" => issue[name].clone(),
                "state" => Value::String(issue["state"].as_str().unwrap_or("open").to_uppercase()),
                "createdAt" => time_field(issue, "created_at"),
                "updatedAt" => time_field(issue, "updated_at"),
                "closedAt" => time_field(issue, "closed_at"),
                "author" => self.author(&issue["user"], field, path),
                "repository" => self.object(&Node::Repository(slug, repo), &field.selections, path),
                "labels" => {
                    let labels = issue["labels"].as_array().cloned().unwrap_or_default();
                    let nodes = labels.into_iter().map(|label| Node::Json(json!({"name": label["name"]}))).collect();
                    self.connection(nodes, field, path)
                }
                "comments" => {
                    let number = issue["number"].as_u64().unwrap_or(0);
                    let positions = self
                        .comments_by_issue
                        .get(*slug)
                        .and_then(|index| index.get(&number))
                        .cloned()
                        .unwrap_or_default();
                    let comments: Vec<&Value> =
                        positions.into_iter().map(|position| &repo.comments[position]).collect();
                    let nodes = comments.into_iter().map(Node::Comment).collect();
                    self.connection(nodes, field, path)
                }
                _ => Value::Null,
            },
            Node::Comment(comment) => match name {
                "databaseId" => comment["id"].clone(),
                "body" => comment["body"].clone(),
                "createdAt" => time_field(comment, "created_at"),
                "updatedAt" => time_field(comment, "updated_at"),
                "author" => self.author(&comment["user"], field, path),
                _ => Value::Null,
            },
            Node::Json(value) => {
                let child = value.get(name).cloned().unwrap_or(Value::Null);
                self.project(child, field, path)
            }
        }
    }

    fn author(&mut self, user: &Value, field: &Field, path: &mut Vec<Value>) -> Value {
        match user["login"].as_str() {
            Some(login) => self.project(json!({"login": login}), field, path),
            None => Value::Null,
        }
    }
}

/// How many pull requests or issues a `search(type: ISSUE)` query string matches;
/// the qualifiers the crawl uses: `repo:`, `is:pr|issue`, `is:open|closed`,
/// `is:merged|unmerged`, `created:` with `>=`, `>`, `<=`, `<`, `A..B` or a day.
fn search_count(fixtures: &Fixtures, query: &str, kind: &str) -> Result<u64, String> {
    if kind != "ISSUE" {
        return Err(format!("the simulator searches issues and pull requests only, not `{kind}`"));
    }
    let day = |text: &str| {
        chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d").map_err(|_| format!("`{text}` is not a day (YYYY-MM-DD)"))
    };
    let mut repo = None;
    let mut wants: Vec<&str> = Vec::new();
    let (mut from, mut to) = (chrono::NaiveDate::MIN, chrono::NaiveDate::MAX);
    for term in query.split_whitespace() {
        match term.split_once(':') {
            Some(("repo", slug)) => repo = Some(slug),
            Some(("is", what)) => wants.push(what),
            Some(("created", range)) => {
                if let Some((start, end)) = range.split_once("..") {
                    (from, to) = (day(start)?, day(end)?);
                } else if let Some(start) = range.strip_prefix(">=") {
                    from = day(start)?;
                } else if let Some(end) = range.strip_prefix("<=") {
                    to = day(end)?;
                } else if let Some(start) = range.strip_prefix('>') {
                    from = day(start)?.succ_opt().unwrap_or(chrono::NaiveDate::MAX);
                } else if let Some(end) = range.strip_prefix('<') {
                    to = day(end)?.pred_opt().unwrap_or(chrono::NaiveDate::MIN);
                } else {
                    (from, to) = (day(range)?, day(range)?);
                }
            }
            _ => return Err(format!("the simulator's search does not know `{term}`")),
        }
    }
    let Some(repo) = repo.and_then(|slug| fixtures.repos.get(slug)) else { return Ok(0) };
    let created = |item: &Value| parse_time(&item["created_at"]).map(|time| time.date_naive());
    let pulls = repo.pulls.iter().map(|pull| {
        let state = if !pull["merged_at"].is_null() { "merged" } else { pull["state"].as_str().unwrap_or("open") };
        (["pr", state, if state == "merged" { "closed" } else { "unmerged" }], created(pull))
    });
    let issues =
        repo.issues.iter().map(|issue| (["issue", issue["state"].as_str().unwrap_or("open"), ""], created(issue)));
    let count = pulls
        .chain(issues)
        .filter(|(traits, created)| {
            wants.iter().all(|want| traits.contains(want)) && created.is_some_and(|day| from <= day && day <= to)
        })
        .count();
    Ok(count as u64)
}

/// Sorts by `orderBy: {field: UPDATED_AT|CREATED_AT, direction: ASC|DESC}` (GitHub's
/// default: created, descending), ties broken by id as the REST endpoints do.
fn order(items: &mut Vec<&Value>, order_by: &Value) {
    let field = if order_by["field"] == "UPDATED_AT" { "updated_at" } else { "created_at" };
    items.sort_by_cached_key(|item| (parse_time(&item[field]).unwrap_or_default(), item["id"].as_u64().unwrap_or(0)));
    if order_by["direction"] != "ASC" {
        items.reverse();
    }
}

/// Requests per operation name, for the stats.
pub(crate) type ByOperation = BTreeMap<String, u64>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_parse_with_aliases_arguments_and_fragments() {
        let operation = parse(
            "query Q($owner: String!, $n: Int = 3) { rateLimit { cost } repository(owner: $owner, name: \"x\") { \
             a: issueOrPullRequest(number: 4) { __typename ... on Issue { number } } \
             issues(first: 10, orderBy: {field: UPDATED_AT, direction: DESC}, filterBy: {since: null}) { nodes { number } } } }",
        )
        .unwrap();
        assert_eq!(operation.name.as_deref(), Some("Q"));
        let (cost, nodes) = cost_and_nodes(&operation, &json!({}));
        assert_eq!((cost, nodes), (1, 10));
    }

    #[test]
    fn named_fragments_are_resolved_and_unbounded_connections_refused() {
        let operation = parse(
            "query Q { repository(owner: \"a\", name: \"b\") { x: issueOrPullRequest(number: 1) { ...F } \
             issues { totalCount } } } fragment F on Issue { labels(first: 20) { nodes { name } } }",
        )
        .unwrap();
        assert_eq!(cost_and_nodes(&operation, &json!({})), (1, 20), "the spread counts like its fragment");
        assert!(pagination_errors(&operation, &json!({})).is_empty(), "a bare totalCount needs no bound");
        let unbounded =
            parse("query { repository(owner: \"a\", name: \"b\") { issues { nodes { number } } } }").unwrap();
        assert_eq!(pagination_errors(&unbounded, &json!({})).len(), 1);
        let too_many = parse(
            "query($n: Int) { repository(owner: \"a\", name: \"b\") { issues(first: $n) { nodes { number } } } }",
        )
        .unwrap();
        assert!(pagination_errors(&too_many, &json!({"n": 101}))[0].contains("exceeds the `first` limit of 100"));
        assert!(parse("query { a { ...Missing } }").unwrap_err().contains("unknown fragment `Missing`"));
    }
}
