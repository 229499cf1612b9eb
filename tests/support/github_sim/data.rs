//! The simulator's data: fixture folders in GitHub's JSON shapes, builders of those
//! shapes, and a generator of synthetic repositories (deterministic per seed).
//!
//! A fixture folder holds one folder per repository, `<owner>__<name>/`, with
//! `pulls.json`, `issues.json` (issues only: the issue-shaped entries of pull
//! requests are derived from `pulls.json`) and `comments.json`, each a JSON list;
//! and optionally `search_repositories.json`, the repositories the search API knows.

use std::collections::BTreeMap;
use std::path::Path;

use chrono::{DateTime, Duration, Utc};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};

/// One simulated repository.
#[derive(Debug, Clone, Default)]
pub struct SimRepo {
    pub pulls: Vec<Value>,
    pub issues: Vec<Value>,
    pub comments: Vec<Value>,
}

/// Everything the simulator serves.
#[derive(Debug, Clone, Default)]
pub struct Fixtures {
    /// By `owner/name`.
    pub repos: BTreeMap<String, SimRepo>,
    pub search_repositories: Vec<Value>,
}

impl Fixtures {
    pub fn load(dir: &Path) -> std::io::Result<Fixtures> {
        let mut fixtures = Fixtures::default();
        let read_list = |path: &Path| -> std::io::Result<Vec<Value>> {
            if !path.exists() {
                return Ok(Vec::new());
            }
            let text = fs_err::read_to_string(path)?;
            serde_json::from_str(&text).map_err(|error| {
                std::io::Error::new(std::io::ErrorKind::InvalidData, format!("{}: {error}", path.display()))
            })
        };
        for entry in fs_err::read_dir(dir)? {
            let entry = entry?;
            let path = entry.path();
            if path.is_dir() {
                let folder = entry.file_name().to_string_lossy().into_owned();
                let Some((owner, name)) = folder.split_once("__") else { continue };
                fixtures.repos.insert(
                    format!("{owner}/{name}"),
                    SimRepo {
                        pulls: read_list(&path.join("pulls.json"))?,
                        issues: read_list(&path.join("issues.json"))?,
                        comments: read_list(&path.join("comments.json"))?,
                    },
                );
            }
        }
        fixtures.search_repositories = read_list(&dir.join("search_repositories.json"))?;
        Ok(fixtures)
    }

    pub fn save(&self, dir: &Path) -> std::io::Result<()> {
        fs_err::create_dir_all(dir)?;
        for (slug, repo) in &self.repos {
            let folder = dir.join(slug.replace('/', "__"));
            fs_err::create_dir_all(&folder)?;
            for (file, list) in
                [("pulls.json", &repo.pulls), ("issues.json", &repo.issues), ("comments.json", &repo.comments)]
            {
                fs_err::write(folder.join(file), serde_json::to_string_pretty(list)?)?;
            }
        }
        if !self.search_repositories.is_empty() {
            fs_err::write(
                dir.join("search_repositories.json"),
                serde_json::to_string_pretty(&self.search_repositories)?,
            )?;
        }
        Ok(())
    }
}

pub fn time(value: DateTime<Utc>) -> String {
    value.format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

const API: &str = "https://api.github.com";

/// A user object as GitHub embeds it.
pub fn user(login: &str) -> Value {
    let id = login.bytes().fold(7u64, |hash, byte| hash.wrapping_mul(31).wrapping_add(byte as u64)) % 10_000_000;
    json!({
        "login": login, "id": id, "node_id": format!("U_{id}"),
        "avatar_url": format!("https://avatars.githubusercontent.com/u/{id}?v=4"), "gravatar_id": "",
        "url": format!("{API}/users/{login}"), "html_url": format!("https://github.com/{login}"),
        "followers_url": format!("{API}/users/{login}/followers"),
        "following_url": format!("{API}/users/{login}/following{{/other_user}}"),
        "gists_url": format!("{API}/users/{login}/gists{{/gist_id}}"),
        "starred_url": format!("{API}/users/{login}/starred{{/owner}}{{/repo}}"),
        "subscriptions_url": format!("{API}/users/{login}/subscriptions"),
        "organizations_url": format!("{API}/users/{login}/orgs"),
        "repos_url": format!("{API}/users/{login}/repos"),
        "events_url": format!("{API}/users/{login}/events{{/privacy}}"),
        "received_events_url": format!("{API}/users/{login}/received_events"),
        "type": "User", "site_admin": false
    })
}

pub fn label(slug: &str, name: &str) -> Value {
    let id = name.len() as u64 * 1000 + 7;
    json!({
        "id": id, "node_id": format!("LA_{id}"), "url": format!("{API}/repos/{slug}/labels/{name}"),
        "name": name, "description": null, "color": "ededed", "default": false
    })
}

/// Fields of a pull request that the generator and tests choose.
#[derive(Debug, Clone)]
pub struct PullSpec {
    pub number: u64,
    pub title: String,
    pub body: Option<String>,
    pub author: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub closed_at: Option<DateTime<Utc>>,
    pub merged_at: Option<DateTime<Utc>>,
    pub labels: Vec<String>,
}

fn sha(seed: &str) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(seed.as_bytes()))[..40].to_string()
}

/// A pull request as `GET /repos/O/N/pulls` lists it.
pub fn pull_request(slug: &str, spec: &PullSpec) -> Value {
    let n = spec.number;
    let id = 100_000_000 + n;
    let state = if spec.closed_at.is_some() { "closed" } else { "open" };
    json!({
        "url": format!("{API}/repos/{slug}/pulls/{n}"), "id": id, "node_id": format!("PR_{id}"),
        "html_url": format!("https://github.com/{slug}/pull/{n}"),
        "diff_url": format!("https://github.com/{slug}/pull/{n}.diff"),
        "patch_url": format!("https://github.com/{slug}/pull/{n}.patch"),
        "issue_url": format!("{API}/repos/{slug}/issues/{n}"),
        "number": n, "state": state, "locked": false, "title": spec.title,
        "user": user(&spec.author), "body": spec.body,
        "labels": spec.labels.iter().map(|name| label(slug, name)).collect::<Vec<_>>(),
        "milestone": null, "active_lock_reason": null,
        "created_at": time(spec.created_at), "updated_at": time(spec.updated_at),
        "closed_at": spec.closed_at.map(time), "merged_at": spec.merged_at.map(time),
        "merge_commit_sha": spec.merged_at.map(|_| sha(&format!("{slug}#{n}:merge"))),
        "assignee": null, "assignees": [], "requested_reviewers": [], "requested_teams": [],
        "head": {
            "label": format!("{}:fix-{n}", spec.author), "ref": format!("fix-{n}"),
            "sha": sha(&format!("{slug}#{n}:head")), "user": user(&spec.author), "repo": null
        },
        "base": {
            "label": "owner:main", "ref": "main", "sha": sha(&format!("{slug}#{n}:base")), "repo": null
        },
        "author_association": "CONTRIBUTOR", "auto_merge": null, "draft": false
    })
}

/// Fields of an issue that the generator and tests choose.
#[derive(Debug, Clone)]
pub struct IssueSpec {
    pub number: u64,
    pub title: String,
    pub body: Option<String>,
    pub author: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub closed_at: Option<DateTime<Utc>>,
    pub labels: Vec<String>,
    pub comments: u32,
}

/// An issue as `GET /repos/O/N/issues` lists it.
pub fn issue(slug: &str, spec: &IssueSpec) -> Value {
    let n = spec.number;
    let id = 200_000_000 + n;
    json!({
        "url": format!("{API}/repos/{slug}/issues/{n}"),
        "repository_url": format!("{API}/repos/{slug}"),
        "labels_url": format!("{API}/repos/{slug}/issues/{n}/labels{{/name}}"),
        "comments_url": format!("{API}/repos/{slug}/issues/{n}/comments"),
        "events_url": format!("{API}/repos/{slug}/issues/{n}/events"),
        "html_url": format!("https://github.com/{slug}/issues/{n}"),
        "id": id, "node_id": format!("I_{id}"), "number": n, "title": spec.title,
        "user": user(&spec.author),
        "labels": spec.labels.iter().map(|name| label(slug, name)).collect::<Vec<_>>(),
        "state": if spec.closed_at.is_some() { "closed" } else { "open" },
        "state_reason": spec.closed_at.map(|_| "completed"),
        "locked": false, "assignee": null, "assignees": [], "milestone": null,
        "comments": spec.comments,
        "created_at": time(spec.created_at), "updated_at": time(spec.updated_at),
        "closed_at": spec.closed_at.map(time), "author_association": "NONE",
        "active_lock_reason": null, "body": spec.body
    })
}

/// The issue-shaped entry of a pull request, as the issues endpoints return it.
pub fn pull_request_as_issue(slug: &str, pull: &Value) -> Value {
    let n = pull["number"].as_u64().unwrap_or(0);
    let mut value = issue(
        slug,
        &IssueSpec {
            number: n,
            title: pull["title"].as_str().unwrap_or_default().to_string(),
            body: pull["body"].as_str().map(str::to_string),
            author: pull["user"]["login"].as_str().unwrap_or("ghost").to_string(),
            created_at: parse_time(&pull["created_at"]).unwrap_or_default(),
            updated_at: parse_time(&pull["updated_at"]).unwrap_or_default(),
            closed_at: parse_time(&pull["closed_at"]),
            labels: Vec::new(),
            comments: 0,
        },
    );
    value["labels"] = pull["labels"].clone();
    value["pull_request"] = json!({
        "url": format!("{API}/repos/{slug}/pulls/{n}"),
        "html_url": format!("https://github.com/{slug}/pull/{n}"),
        "diff_url": format!("https://github.com/{slug}/pull/{n}.diff"),
        "patch_url": format!("https://github.com/{slug}/pull/{n}.patch"),
        "merged_at": pull["merged_at"].clone()
    });
    value
}

/// A comment as `GET /repos/O/N/issues/comments` lists it.
pub fn comment(
    slug: &str,
    id: u64,
    issue_number: u64,
    author: &str,
    body: &str,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
) -> Value {
    json!({
        "url": format!("{API}/repos/{slug}/issues/comments/{id}"),
        "html_url": format!("https://github.com/{slug}/issues/{issue_number}#issuecomment-{id}"),
        "issue_url": format!("{API}/repos/{slug}/issues/{issue_number}"),
        "id": id, "node_id": format!("IC_{id}"), "user": user(author),
        "created_at": time(created_at), "updated_at": time(updated_at),
        "author_association": "NONE", "body": body
    })
}

/// A repository as the search API returns it.
pub fn repository(
    full_name: &str,
    language: &str,
    stars: u32,
    pushed_at: DateTime<Utc>,
    license: Option<&str>,
) -> Value {
    let (owner, name) = full_name.split_once('/').expect("owner/name");
    let id = full_name.bytes().fold(11u64, |hash, byte| hash.wrapping_mul(31).wrapping_add(byte as u64)) % 100_000_000;
    json!({
        "id": id, "node_id": format!("R_{id}"), "name": name, "full_name": full_name,
        "owner": user(owner), "private": false, "html_url": format!("https://github.com/{full_name}"),
        "description": format!("The {name} project"), "fork": false,
        "url": format!("{API}/repos/{full_name}"),
        "created_at": "2015-01-01T00:00:00Z", "updated_at": time(pushed_at), "pushed_at": time(pushed_at),
        "stargazers_count": stars, "watchers_count": stars, "forks_count": stars / 10,
        "language": language, "default_branch": "main", "archived": false, "open_issues_count": 3,
        "topics": [],
        "license": license.map(|key| json!({
            "key": key, "name": key.to_uppercase(), "spdx_id": key.to_uppercase(),
            "url": format!("{API}/licenses/{key}"), "node_id": format!("L_{key}")
        }))
    })
}

pub fn parse_time(value: &Value) -> Option<DateTime<Utc>> {
    value.as_str().and_then(|text| DateTime::parse_from_rfc3339(text).ok()).map(|time| time.with_timezone(&Utc))
}

/// What [`generate`] makes.
#[derive(Debug, Clone)]
pub struct GenerateSpec {
    pub merged_pulls: usize,
    pub unmerged_pulls: usize,
    pub issues: usize,
    pub comments: usize,
    pub start: DateTime<Utc>,
    pub seed: u64,
    /// How merged PRs refer to issues.
    pub references: References,
}

/// How the merged PRs of a generated repository refer to issues.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum References {
    /// 80% of merged PRs say `Fixes #N` of a random earlier issue.
    Simple,
    /// As measured on the histories of pallets/flask and psf/requests: most issues
    /// are referenced by no merged PR. About 45% of merged PRs fix a recent issue no
    /// PR fixed yet (one in ten of them says so in a commit message only), 5% fix one
    /// fixed before, 10% continue an earlier closed-unmerged PR (`Continues #M`), 10%
    /// point at any earlier issue (`See #K`); the rest name nothing. 40% of
    /// closed-unmerged PRs say `Fixes #N` too.
    RealShape,
}

impl GenerateSpec {
    pub fn new(merged_pulls: usize, issues: usize, comments: usize) -> GenerateSpec {
        GenerateSpec {
            merged_pulls,
            unmerged_pulls: merged_pulls / 10,
            issues,
            comments,
            start: DateTime::parse_from_rfc3339("2020-01-01T00:00:00Z").unwrap().with_timezone(&Utc),
            seed: 42,
            references: References::Simple,
        }
    }

    /// The shape of real histories (pallets/flask and psf/requests: 3,166 merged PRs,
    /// 5,541 closed PRs, 4,928 issues, 5,622 issue comments): 0.75 closed-unmerged PRs,
    /// 1.5 issues and 1.65 issue comments (1.1 per issue) per merged PR, and
    /// [`References::RealShape`].
    pub fn real_shape(merged_pulls: usize) -> GenerateSpec {
        let issues = merged_pulls * 3 / 2;
        GenerateSpec {
            unmerged_pulls: merged_pulls * 3 / 4,
            references: References::RealShape,
            ..GenerateSpec::new(merged_pulls, issues, issues * 11 / 10)
        }
    }
}

/// What a PR body (and maybe a commit message) says, as [`References::RealShape`] draws it.
struct RealShapeRefs {
    /// Earlier issues no merged PR referred to yet, oldest first.
    unreferenced: Vec<u64>,
    referenced: Vec<u64>,
    /// Earlier closed-unmerged PRs.
    unmerged: Vec<u64>,
}

impl RealShapeRefs {
    /// The body of a merged PR and, when the reference is in a commit message only, that message.
    fn merged_body(&mut self, rng: &mut StdRng, all_issues: &[(u64, DateTime<Utc>)]) -> (String, Option<String>) {
        let draw: f64 = rng.random();
        let recent = self.unreferenced.len().saturating_sub(30);
        if draw < 0.45 && !self.unreferenced.is_empty() {
            let issue = self.unreferenced.remove(rng.random_range(recent..self.unreferenced.len()));
            self.referenced.push(issue);
            if rng.random_bool(0.1) {
                return ("Adds a regression test.".into(), Some(format!("Fix the crash\n\nfixes #{issue}")));
            }
            return (format!("Fixes #{issue}.\n\nAdds a regression test."), None);
        }
        if draw < 0.50 && !self.referenced.is_empty() {
            let issue = self.referenced[rng.random_range(0..self.referenced.len())];
            return (format!("Fixes #{issue} for good."), None);
        }
        if draw < 0.60 && !self.unmerged.is_empty() {
            let pull = self.unmerged[rng.random_range(0..self.unmerged.len())];
            return (format!("Continues #{pull}."), None);
        }
        if draw < 0.70 && !all_issues.is_empty() {
            let (issue, _) = all_issues[rng.random_range(0..all_issues.len())];
            if let Some(position) = self.unreferenced.iter().position(|number| *number == issue) {
                self.referenced.push(self.unreferenced.remove(position));
            }
            return (format!("See #{issue} for the discussion."), None);
        }
        ("Refactoring.".into(), None)
    }
}

/// A synthetic repository: issues and PRs share one number sequence, one object
/// created every hour from `spec.start`; merged PRs refer to earlier issues as
/// `spec.references` says; comments fall on random issues after their creation.
pub fn generate(slug: &str, spec: &GenerateSpec) -> SimRepo {
    let mut rng = StdRng::seed_from_u64(spec.seed);
    let total = spec.merged_pulls + spec.unmerged_pulls + spec.issues;
    let mut kinds: Vec<u8> = std::iter::repeat_n(0u8, spec.merged_pulls)
        .chain(std::iter::repeat_n(1u8, spec.unmerged_pulls))
        .chain(std::iter::repeat_n(2u8, spec.issues))
        .collect();
    // Deterministic shuffle (Fisher-Yates with the seeded generator).
    for index in (1..kinds.len()).rev() {
        let other = rng.random_range(0..=index);
        kinds.swap(index, other);
    }
    let mut repo = SimRepo::default();
    let mut issue_numbers: Vec<(u64, DateTime<Utc>)> = Vec::new();
    let mut issue_specs: Vec<IssueSpec> = Vec::new();
    let mut real = RealShapeRefs { unreferenced: Vec::new(), referenced: Vec::new(), unmerged: Vec::new() };
    for (index, kind) in kinds.into_iter().enumerate() {
        let number = index as u64 + 1;
        let created_at = spec.start + Duration::hours(index as i64);
        match kind {
            2 => {
                let closed = rng.random_bool(0.7);
                let closed_at = closed.then(|| created_at + Duration::hours(rng.random_range(1..500)));
                let updated_at = closed_at.unwrap_or(created_at) + Duration::minutes(rng.random_range(0..600));
                issue_numbers.push((number, created_at));
                real.unreferenced.push(number);
                issue_specs.push(IssueSpec {
                    number,
                    title: format!("Bug {number}: something breaks"),
                    body: Some(format!("Steps to reproduce bug {number}.\n\nExpected it to work.")),
                    author: format!("reporter{}", number % 97),
                    created_at,
                    updated_at,
                    closed_at,
                    labels: if number % 3 == 0 { vec!["bug".into()] } else { Vec::new() },
                    comments: 0,
                });
            }
            merged_or_not => {
                let merged = merged_or_not == 0;
                let closed_at = created_at + Duration::hours(rng.random_range(1..200));
                let updated_at = closed_at + Duration::minutes(rng.random_range(0..600));
                let mut commit_message = None;
                let body = match spec.references {
                    References::Simple if merged && !issue_numbers.is_empty() && rng.random_bool(0.8) => {
                        let (issue, _) = issue_numbers[rng.random_range(0..issue_numbers.len())];
                        Some(format!("Fixes #{issue}.\n\nAdds a regression test."))
                    }
                    References::Simple => Some("Refactoring.".to_string()),
                    References::RealShape if merged => {
                        let (body, message) = real.merged_body(&mut rng, &issue_numbers);
                        commit_message = message;
                        Some(body)
                    }
                    References::RealShape => {
                        real.unmerged.push(number);
                        if !issue_numbers.is_empty() && rng.random_bool(0.4) {
                            let (issue, _) = issue_numbers[rng.random_range(0..issue_numbers.len())];
                            Some(format!("Fixes #{issue}, I hope."))
                        } else {
                            Some("An idea.".to_string())
                        }
                    }
                };
                let title = format!("Change {number}");
                let mut pull = pull_request(
                    slug,
                    &PullSpec {
                        number,
                        title: title.clone(),
                        body,
                        author: format!("dev{}", number % 53),
                        created_at,
                        updated_at,
                        closed_at: Some(closed_at),
                        merged_at: merged.then_some(closed_at),
                        labels: Vec::new(),
                    },
                );
                if let Some(message) = commit_message {
                    pull["_commit_messages"] = json!([title, message]);
                }
                repo.pulls.push(pull);
            }
        }
    }
    let end = spec.start + Duration::hours(total as i64);
    for index in 0..spec.comments {
        if issue_specs.is_empty() {
            break;
        }
        let which = rng.random_range(0..issue_specs.len());
        let issue_spec = &mut issue_specs[which];
        let span = (end - issue_spec.created_at).num_minutes().max(2);
        let created_at = issue_spec.created_at + Duration::minutes(rng.random_range(1..span));
        issue_spec.comments += 1;
        let id = 300_000_000 + index as u64;
        repo.comments.push(comment(
            slug,
            id,
            issue_spec.number,
            &format!("helper{}", index % 41),
            &format!("Comment {index}: have you tried turning it off and on again?"),
            created_at,
            created_at,
        ));
    }
    repo.issues = issue_specs.iter().map(|spec| issue(slug, spec)).collect();
    repo
}
