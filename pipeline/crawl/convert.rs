//! GitHub's objects (octocrab's models) turned into the pipeline's raw model
//! types. Pure functions; an object missing a field we cannot do without gives
//! `None` and is skipped by the caller with a log line.

use octocrab::models::IssueState;
use octocrab::models::issues::{Comment, Issue};
use octocrab::models::pulls::PullRequest;

use crate::model::{RawComment, RawIssue, RawPullRequest};

fn state_name(state: Option<&IssueState>) -> String {
    match state {
        Some(IssueState::Open) => "open".into(),
        Some(IssueState::Closed) => "closed".into(),
        Some(_) => "unknown".into(),
        None => "closed".into(),
    }
}

/// A pull request of the pulls listing; `None` without creation or update time.
pub fn pull_request(pull: PullRequest) -> Option<RawPullRequest> {
    let created_at = pull.created_at?;
    let updated_at = pull.updated_at.unwrap_or(created_at);
    Some(RawPullRequest {
        number: pull.number,
        title: pull.title.unwrap_or_default(),
        body: pull.body,
        state: state_name(pull.state.as_ref()),
        created_at,
        updated_at,
        merged_at: pull.merged_at,
        closed_at: pull.closed_at,
        base_ref: pull.base.ref_field,
        base_sha: pull.base.sha,
        head_ref: pull.head.ref_field,
        head_sha: pull.head.sha,
        merge_commit_sha: pull.merge_commit_sha,
        author: pull.user.map(|user| user.login),
        labels: pull.labels.unwrap_or_default().into_iter().map(|label| label.name).collect(),
    })
}

/// An issue; `None` when the entry is a pull request (the issues endpoint lists both).
pub fn issue(issue: Issue) -> Option<RawIssue> {
    if issue.pull_request.is_some() {
        return None;
    }
    Some(RawIssue {
        number: issue.number,
        title: issue.title,
        body: issue.body,
        state: state_name(Some(&issue.state)),
        created_at: issue.created_at,
        updated_at: issue.updated_at,
        closed_at: issue.closed_at,
        author: Some(issue.user.login),
        labels: issue.labels.into_iter().map(|label| label.name).collect(),
    })
}

/// A comment; its issue number comes from `issue_url` (`.../issues/N`), or from
/// `issue_number` when the caller knows it.
pub fn comment(comment: Comment, issue_number: Option<u64>) -> Option<RawComment> {
    let issue_number =
        issue_number.or_else(|| comment.issue_url.as_ref()?.path_segments()?.next_back()?.parse::<u64>().ok())?;
    Some(RawComment {
        id: comment.id.into_inner(),
        issue_number,
        body: comment.body,
        created_at: comment.created_at,
        updated_at: comment.updated_at.unwrap_or(comment.created_at),
        author: Some(comment.user.login),
    })
}
