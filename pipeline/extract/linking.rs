//! Which issues a pull request resolves, from the text of its title, body and commit
//! messages: a closing keyword (close, closes, closed, fix, fixes, fixed, resolve,
//! resolves, resolved; any case), optionally followed by a colon, then `#N`,
//! `owner/name#N` of the same repository, or the issue's full URL
//! (`https://github.com/owner/name/issues/N`). HTML comments (PR templates) are
//! stripped first; references to other repositories are ignored.
//!
//! With `extract.use_api_closing_references`, the linked issues are the union of
//! these text references and GitHub's own closing references (`closingIssuesReferences`,
//! stored by a GraphQL crawl: it also knows issues linked by hand in the PR's
//! sidebar), text references first: [`with_api_references`]. A REST crawl stores no
//! API references, so the option changes nothing there.
//!
//! This module only reads text. Telling issues from pull requests (a number that is a
//! PR is not an issue) needs the store and is done by the extract stage.

use std::collections::BTreeSet;
use std::sync::OnceLock;

use regex::Regex;

use crate::model::RepoSlug;

fn reference_pattern() -> &'static Regex {
    static PATTERN: OnceLock<Regex> = OnceLock::new();
    PATTERN.get_or_init(|| {
        Regex::new(
            r"(?xi)
            \b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)
            (?:[\ \t]*:[\ \t]*|[\ \t]+)           # a colon, or blanks
            (?:
                \#(?P<local>\d+)
              | (?P<owner>[a-z0-9][a-z0-9-]*)/(?P<name>[a-z0-9._-]+)\#(?P<qualified>\d+)
              | https?://(?:www\.)?github\.com/(?P<url_owner>[a-z0-9-]+)/(?P<url_name>[a-z0-9._-]+)/issues/(?P<url>\d+)
            )
            (?P<after>[a-z0-9_]?)                # a reference must end here: `#12a` is none
            ",
        )
        .expect("valid pattern")
    })
}

fn html_comment() -> &'static Regex {
    static PATTERN: OnceLock<Regex> = OnceLock::new();
    // An unterminated comment runs to the end, as GitHub renders it.
    PATTERN.get_or_init(|| Regex::new(r"(?s)<!--.*?(?:-->|\z)").expect("valid pattern"))
}

/// Removes HTML comments.
pub fn strip_html_comments(text: &str) -> std::borrow::Cow<'_, str> {
    html_comment().replace_all(text, "")
}

/// Issue (or PR) numbers that `text` says it closes in `repo`, in order of first
/// appearance, without duplicates.
pub fn closing_references(text: &str, repo: &RepoSlug) -> Vec<u64> {
    let text = strip_html_comments(text);
    let same_repo = |owner: &str, name: &str| {
        owner.eq_ignore_ascii_case(repo.owner()) && name.trim_end_matches(".git").eq_ignore_ascii_case(repo.name())
    };
    let mut seen = BTreeSet::new();
    let mut numbers = Vec::new();
    for captures in reference_pattern().captures_iter(&text) {
        if captures.name("after").is_some_and(|after| !after.as_str().is_empty()) {
            continue;
        }
        let number = if let Some(local) = captures.name("local") {
            local.as_str()
        } else if let Some(qualified) = captures.name("qualified") {
            if !same_repo(&captures["owner"], &captures["name"]) {
                continue;
            }
            qualified.as_str()
        } else if let Some(url) = captures.name("url") {
            if !same_repo(&captures["url_owner"], &captures["url_name"]) {
                continue;
            }
            url.as_str()
        } else {
            continue;
        };
        let Ok(number) = number.parse::<u64>() else { continue };
        if number > 0 && seen.insert(number) {
            numbers.push(number);
        }
    }
    numbers
}

/// Closing references in several texts (title, body, commit messages), in order.
pub fn closing_references_in<'a>(texts: impl IntoIterator<Item = &'a str>, repo: &RepoSlug) -> Vec<u64> {
    let mut numbers = Vec::new();
    for text in texts {
        for number in closing_references(text, repo) {
            if !numbers.contains(&number) {
                numbers.push(number);
            }
        }
    }
    numbers
}

/// The text references followed by the API's closing references that the text
/// does not already name.
pub fn with_api_references(mut text_references: Vec<u64>, api_references: &[u64]) -> Vec<u64> {
    for number in api_references {
        if !text_references.contains(number) {
            text_references.push(*number);
        }
    }
    text_references
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refs(text: &str) -> Vec<u64> {
        closing_references(text, &"sqlfluff/sqlfluff".parse().unwrap())
    }

    #[test]
    fn real_world_phrasings_that_link() {
        let cases: &[(&str, &[u64])] = &[
            ("Fixes #1234", &[1234]),
            ("fixes #1234", &[1234]),
            ("FIXES #1234", &[1234]),
            ("Fix #12", &[12]),
            ("fixed #12", &[12]),
            ("Closes #7", &[7]),
            ("close #7", &[7]),
            ("closed #7", &[7]),
            ("Resolves #99", &[99]),
            ("resolve #99", &[99]),
            ("Resolved #99", &[99]),
            ("Fixes: #1520", &[1520]),
            ("Closes : #1520", &[1520]),
            ("Fixes:#1520", &[1520]),
            ("This PR fixes #3 and closes #4.", &[3, 4]),
            ("fixes #3, fixes #4", &[3, 4]),
            ("Brief summary of the change made\n\nFixes #1405\n", &[1405]),
            ("- [x] Closes #2402\n- [x] Tests added", &[2402]),
            ("Fixes sqlfluff/sqlfluff#881", &[881]),
            ("fixes SQLFluff/SQLFluff#881", &[881]),
            ("Fixes https://github.com/sqlfluff/sqlfluff/issues/1625", &[1625]),
            ("closes http://github.com/sqlfluff/sqlfluff/issues/1625.", &[1625]),
            ("(fixes #55)", &[55]),
            ("Resolves #10\nResolves #10 again", &[10]),
            ("Fix #8: handle empty files", &[8]),
            ("fix\t#8", &[8]),
            ("Fixes #1 #2", &[1]),
            ("[fix #77]", &[77]),
            ("Closes #200\r\n", &[200]),
            ("<!-- template --> Fixes #31", &[31]),
            ("Merge branch 'main' into fix\n\nFixes #2419", &[2419]),
        ];
        for (text, expected) in cases {
            assert_eq!(refs(text), expected.to_vec(), "{text:?}");
        }
    }

    #[test]
    fn phrasings_that_do_not_link() {
        let cases = [
            "See #1234",
            "Related to #1234",
            "Refs #12",
            "prefixes #12",
            "hotfix #12",
            "Fixes other/repo#12",
            "fixes https://github.com/other/repo/issues/12",
            "Fixes https://github.com/sqlfluff/sqlfluff/pull/12",
            "Fixes #12abc",
            "fixing #12",
            "fixes issue #12",
            "<!-- Fixes #12 -->",
            "<!-- Please write: Fixes #XXXX\nFixes #12 (still inside the comment)",
            "Fix the bug in #12",
            "fixes #",
            "Fixes sqlfluff#12",
            "fixes #0",
            "Closes sqlfluff/sqlfluff-docs#3",
            "unresolved #4",
        ];
        for text in cases {
            assert_eq!(refs(text), Vec::<u64>::new(), "{text:?}");
        }
    }

    #[test]
    fn references_across_texts_keep_first_order_without_duplicates() {
        let repo: RepoSlug = "a/b".parse().unwrap();
        let numbers = closing_references_in(["Fix bug", "Fixes #5", "Commit msg\n\ncloses #3, fixes #5"], &repo);
        assert_eq!(numbers, vec![5, 3]);
    }

    #[test]
    fn api_references_are_added_after_the_text_ones_without_duplicates() {
        assert_eq!(with_api_references(vec![5, 3], &[3, 9]), vec![5, 3, 9]);
        assert_eq!(with_api_references(vec![], &[4]), vec![4]);
        assert_eq!(with_api_references(vec![2], &[]), vec![2]);
    }

    #[test]
    fn html_comments_are_stripped_even_unterminated() {
        assert_eq!(strip_html_comments("a<!-- b -->c<!-- d"), "ac");
        assert_eq!(strip_html_comments("a<!--\nmulti\nline-->c"), "ac");
    }
}
