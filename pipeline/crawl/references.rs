//! Which issue numbers a pull request's title and body mention: `#N`,
//! `owner/name#N` of the same repository, and issue URLs. Used only to decide
//! which issues to fetch one by one; extract has the authoritative parser
//! (closing keywords, commit messages, HTML comments).

use std::collections::BTreeSet;
use std::sync::OnceLock;

use regex::Regex;

use crate::model::RepoSlug;

fn short_reference() -> &'static Regex {
    static REGEX: OnceLock<Regex> = OnceLock::new();
    REGEX.get_or_init(|| {
        Regex::new(r"(?:^|[^A-Za-z0-9_/#])(?:([A-Za-z0-9][A-Za-z0-9-]*)/([A-Za-z0-9._-]+))?#(\d+)\b")
            .expect("valid regex")
    })
}

fn url_reference() -> &'static Regex {
    static REGEX: OnceLock<Regex> = OnceLock::new();
    REGEX.get_or_init(|| {
        Regex::new(r"https?://[^/\s]+/([A-Za-z0-9][A-Za-z0-9-]*)/([A-Za-z0-9._-]+)/issues/(\d+)\b")
            .expect("valid regex")
    })
}

/// Issue numbers of `repo` that `text` mentions.
pub fn referenced_numbers(repo: &RepoSlug, text: &str) -> BTreeSet<u64> {
    let same_repo = |owner: Option<&str>, name: Option<&str>| match (owner, name) {
        (Some(owner), Some(name)) => owner.eq_ignore_ascii_case(repo.owner()) && name.eq_ignore_ascii_case(repo.name()),
        _ => true,
    };
    let mut numbers = BTreeSet::new();
    for regex in [short_reference(), url_reference()] {
        for captures in regex.captures_iter(text) {
            let owner = captures.get(1).map(|m| m.as_str());
            let name = captures.get(2).map(|m| m.as_str());
            if !same_repo(owner, name) {
                continue;
            }
            if let Some(number) = captures.get(3).and_then(|m| m.as_str().parse::<u64>().ok()) {
                if number > 0 {
                    numbers.insert(number);
                }
            }
        }
    }
    numbers
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refs(text: &str) -> Vec<u64> {
        referenced_numbers(&"psf/requests".parse().unwrap(), text).into_iter().collect()
    }

    #[test]
    fn short_references_of_the_same_repository_are_found() {
        assert_eq!(refs("Fixes #12 and closes psf/requests#34."), vec![12, 34]);
        assert_eq!(refs("(#7)"), vec![7]);
        assert_eq!(refs("#1\n#2"), vec![1, 2]);
    }

    #[test]
    fn other_repositories_and_non_references_are_ignored() {
        assert_eq!(refs("see pallets/flask#99"), Vec::<u64>::new());
        assert_eq!(refs("color #fff, issue#5, C# code, ##3"), Vec::<u64>::new());
        assert_eq!(refs("#0"), Vec::<u64>::new());
    }

    #[test]
    fn issue_urls_are_found_on_any_host() {
        assert_eq!(
            refs(
                "https://github.com/psf/requests/issues/5 and https://github.com/other/x/issues/6 and https://ghe.local/PSF/Requests/issues/8"
            ),
            vec![5, 8]
        );
    }
}
