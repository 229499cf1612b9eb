//! Identifiers that become file names and image names. Instance ids (`owner__name-N`)
//! and model names come from files that anyone can write (`validate --input` rows,
//! releases, predictions); before one is joined into a path it passes [`check_id`], the
//! one rule used at every such edge, so that `../../x` or `/etc` never leaves the data
//! dir. Image names are made from repository names and instance ids by
//! [`docker_name_component`], which turns any valid GitHub owner/name into a valid
//! Docker reference component.
//!
//! This module only decides; the callers say what a bad id means for them (a bad
//! `--input` row is bad usage, a bad prediction is reported as an error).

use sha2::{Digest, Sha256};

/// The longest id accepted: room for the longest GitHub `owner__name-PR` (39 + 2 + 100
/// + 1 + 20 digits) and well under file systems' 255-byte names.
pub const MAX_ID_LENGTH: usize = 200;

/// What ids may hold, for error messages.
pub const ALLOWED_IDS: &str =
    "1-200 characters of A-Z, a-z, 0-9, `.`, `_` and `-`, not starting with a dot (for example `psf__requests-1234`)";

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {what} `{id}`: {problem}; allowed: {ALLOWED_IDS}")]
pub struct IdError {
    /// What the id names, e.g. `instance_id`.
    pub what: &'static str,
    /// The id as given, with control characters escaped.
    pub id: String,
    pub problem: &'static str,
}

/// Checks that `id` is safe as one path component and one image name part:
/// `[A-Za-z0-9._-]`, no leading dot (so neither `.` nor `..`, nor a hidden file), at
/// most [`MAX_ID_LENGTH`] characters. `what` names the id in the error.
pub fn check_id(what: &'static str, id: &str) -> Result<(), IdError> {
    let error = |problem| IdError { what, id: id.escape_debug().to_string(), problem };
    if id.is_empty() {
        return Err(error("it is empty"));
    }
    if id.len() > MAX_ID_LENGTH {
        return Err(error("it is too long"));
    }
    if id.starts_with('.') {
        return Err(error("it starts with a dot"));
    }
    if !id.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')) {
        return Err(error("it holds a character other than letters, digits, `.`, `_` and `-`"));
    }
    Ok(())
}

/// `text` as one path component of a Docker image name (`[a-z0-9]+` joined by `.`,
/// `_`, `__` or dashes): lower-cased; a run of other separators, or of any other
/// character, becomes one `-`; separators at either end are dropped. When anything but
/// the case had to change, `-` and 8 hex digits of the lower-cased text's sha256 are
/// appended, so that two names that differ only there (`b_` and `b-`) keep apart.
/// Names that were valid already are returned lower-cased and otherwise unchanged, so
/// existing image tags stay as they were.
pub fn docker_name_component(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let mut component = String::with_capacity(lower.len() + 9);
    let mut separator = String::new();
    let mut altered = false;
    for c in lower.chars() {
        if c.is_ascii_alphanumeric() {
            if !separator.is_empty() {
                if component.is_empty() {
                    altered = true;
                } else if valid_separator(&separator) {
                    component.push_str(&separator);
                } else {
                    component.push('-');
                    altered = true;
                }
                separator.clear();
            }
            component.push(c);
        } else {
            // Anything else is a separator; only `.`, `_` and `-` may stay one.
            separator.push(if matches!(c, '.' | '_' | '-') { c } else { '\0' });
        }
    }
    if !separator.is_empty() || component.is_empty() {
        altered = true;
    }
    if component.is_empty() {
        component.push('x');
    }
    if altered {
        let digest = hex::encode(Sha256::digest(lower.as_bytes()));
        component.push('-');
        component.push_str(&digest[..8]);
    }
    component
}

/// The separators of Docker's reference grammar: `.`, `_`, `__` or one or more `-`.
fn valid_separator(separator: &str) -> bool {
    matches!(separator, "." | "_" | "__") || separator.chars().all(|c| c == '-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_of_github_repositories_pass() {
        for good in ["psf__requests-1234", "x1__.github-5", "a__b_-1", "a__b..c-2", "Owner__Name-3", "gpt-4o", "a"] {
            assert_eq!(check_id("instance_id", good), Ok(()), "{good}");
        }
        let longest = format!("{}__{}-{}", "o".repeat(39), "n".repeat(100), u64::MAX);
        assert_eq!(check_id("instance_id", &longest), Ok(()));
    }

    #[test]
    fn ids_that_would_leave_a_folder_or_hide_a_file_are_refused_with_the_rule() {
        for (bad, problem) in [
            ("../../../../x", "starts with a dot"),
            ("..", "starts with a dot"),
            (".", "starts with a dot"),
            (".hidden", "starts with a dot"),
            ("/etc/passwd", "character other than"),
            ("a/../../b", "character other than"),
            ("a\\b", "character other than"),
            ("a b", "character other than"),
            ("a\nb", "character other than"),
            ("é", "character other than"),
            ("", "empty"),
        ] {
            let error = check_id("instance_id", bad).unwrap_err();
            let message = error.to_string();
            assert!(message.contains(problem), "{bad:?}: {message}");
            assert!(message.starts_with("invalid instance_id `"), "{message}");
            assert!(message.contains("allowed: 1-200 characters of A-Z"), "{message}");
        }
        assert!(check_id("model", &"a".repeat(MAX_ID_LENGTH + 1)).unwrap_err().to_string().contains("too long"));
        assert!(check_id("x", "a\nb").unwrap_err().to_string().contains("`a\\nb`"), "control characters escaped");
    }

    /// Docker's reference grammar (distribution/reference): a name of path components
    /// `[a-z0-9]+` joined by `.`, `_`, `__` or dashes, separated by `/`, at most 255
    /// characters, then `:` and a tag.
    fn is_docker_reference(reference: &str) -> bool {
        let component = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*";
        let grammar =
            regex::Regex::new(&format!(r"^({component}(?:/{component})*):[A-Za-z0-9_][A-Za-z0-9_.-]{{0,127}}$"))
                .unwrap();
        grammar.captures(reference).is_some_and(|captures| captures[1].len() <= 255)
    }

    #[test]
    fn image_tags_are_docker_references_for_every_valid_repository_name() {
        use crate::model::{Candidate, RepoSlug};
        let long_owner = "o".repeat(39);
        let long_name = format!("{}_", "n".repeat(99));
        let repositories = [
            "psf/requests".to_string(),
            "x1/.github".into(),
            "a/b_".into(),
            "a/b-".into(),
            "a/b.".into(),
            "a/_b".into(),
            "a/-b".into(),
            "a/.b".into(),
            "a/b__c".into(),
            "a/b___c".into(),
            "a/b._c".into(),
            "a/b.-c".into(),
            "a/b--c".into(),
            "a/b..c".into(),
            "a/...".into(),
            "a/_".into(),
            "a/-".into(),
            "a/___".into(),
            "Big/Name".into(),
            "a--b/c".into(),
            format!("{long_owner}/{long_name}"),
        ];
        let mut environment_tags = std::collections::BTreeSet::new();
        let mut instance_tags = std::collections::BTreeSet::new();
        for repository in &repositories {
            let repo: RepoSlug = repository.parse().unwrap_or_else(|error| panic!("{repository}: {error}"));
            let environment = crate::sandbox::images::tag_for(&repo, &"0123456789abcdef".repeat(4));
            assert!(is_docker_reference(&environment), "{repository}: {environment}");
            environment_tags.insert(environment);
            let instance_id = Candidate::instance_id_for(&repo, 12345);
            assert_eq!(check_id("instance_id", &instance_id), Ok(()), "{repository}");
            for prefix in ["swe-harvest", "registry.local:5000/team"] {
                let tag = crate::release::images::instance_tag(prefix, &instance_id, "2026.11");
                let name = tag.strip_prefix("registry.local:5000/").unwrap_or(&tag);
                assert!(is_docker_reference(name), "{repository}: {tag}");
                instance_tags.insert(tag);
            }
        }
        assert_eq!(environment_tags.len(), repositories.len(), "no two repositories share a tag: {environment_tags:?}");
        assert_eq!(instance_tags.len(), 2 * repositories.len(), "{instance_tags:?}");
        // Names that were valid keep the tags they had.
        let requests: RepoSlug = "psf/requests".parse().unwrap();
        assert_eq!(
            crate::sandbox::images::tag_for(&requests, &"0123456789abcdef".repeat(4)),
            "swe-harvest/env.psf__requests:0123456789abcdef"
        );
        assert_eq!(docker_name_component("Acme__Widgets-7"), "acme__widgets-7");
        assert!(!is_docker_reference("swe-harvest/env.x1__.github:0123456789abcdef"), "the grammar check bites");
    }
}
